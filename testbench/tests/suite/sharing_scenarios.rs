//! Spec §9 A7–A15 at SM level (docs/scratchpad-sharing.md §2.4, §3, §5): small kernels of two
//! paired TBs X (slot 0) and Y (slot 1) on the SM model, each run also with `sharing_core` in
//! the loop on rusthdl and on Verilator (every port, every cycle). Shape: T 4, W 8, LANES 4,
//! NSCHED 2, R 1024; a TB of 4 threads and 600 bytes gives 1 pair (u = 60), X's warp on
//! scheduler 0 and Y's on scheduler 1.

use smrtl_cosim::kernel::program::{Instr, Kernel, Offsets, Op};
use smrtl_cosim::sm::sharing_sm::{params_for, CycleRecord, Outcome, SmStats};
use smrtl_testbench::blocks::sharing_core::{cosim_kernel, rusthdl, verilator};
use smrtl_testbench::external;

const SHARED: u32 = 100;

fn op(op: Op) -> Instr {
    Instr::of(op)
}

fn ld(off: u32, dst: u8) -> Instr {
    Instr {
        off: Some(Offsets::All(off)),
        dst: Some(dst),
        ..op(Op::LdShared)
    }
}

fn uses(src: u8) -> Instr {
    Instr {
        src: vec![src],
        ..op(Op::Mov)
    }
}

/// A kernel of `grid` TBs of `threads` threads whose warps run `warps`.
fn kernel(threads: u32, grid: u32, warps: Vec<Vec<Instr>>, sets: &[(&str, &str)]) -> Kernel {
    let mut params = serde_json::Map::new();
    for (k, v) in [
        ("T", "4"),
        ("W", "8"),
        ("LANES", "4"),
        ("NSCHED", "2"),
        ("R", "1024"),
    ]
    .iter()
    .chain(sets)
    {
        params.insert(k.to_string(), serde_json::Value::from(*v));
    }
    Kernel {
        name: "scenario".into(),
        threads,
        smem: 600,
        grid,
        warps,
        locks: vec![],
        params,
        seed: 0,
    }
}

/// Runs `k` on the model, then with the RTL in the loop on rusthdl and Verilator (same
/// statistics); the model's records.
fn run(k: &Kernel) -> (Vec<CycleRecord>, SmStats) {
    let p = params_for(k, &[]).unwrap();
    let mut recs = vec![];
    let mut each = |r: &CycleRecord| recs.push(r.clone());
    let stats = cosim_kernel(&p, k, None, None, Some(&mut each)).unwrap();
    let mut dut = rusthdl(&p.core());
    let on_rusthdl = cosim_kernel(&p, k, Some(dut.as_mut()), None, None).unwrap();
    assert_eq!(on_rusthdl, stats);
    if external("verilator") {
        let mut dut = verilator(&p.core()).unwrap();
        let on_verilator = cosim_kernel(&p, k, Some(dut.as_mut()), None, None).unwrap();
        assert_eq!(on_verilator, stats);
    }
    (recs, stats)
}

/// `(cycle, slot, outcome)` of every pick of a shared access.
fn shared_picks(recs: &[CycleRecord]) -> Vec<(u64, u32, Outcome)> {
    recs.iter()
        .flat_map(|r| {
            r.picks
                .iter()
                .filter(|p| p.op.is_shared())
                .map(move |p| (r.cycle, p.slot, p.outcome))
        })
        .collect()
}

/// `(cycle, slot, cause)` of every lock event.
fn lock_events(recs: &[CycleRecord]) -> Vec<(u64, u32, &'static str)> {
    recs.iter()
        .flat_map(|r| r.locks.iter().map(move |l| (r.cycle, l.slot, l.cause)))
        .collect()
}

/// The cycles Y's shared access was NACKed, and the cycle it issued.
fn y_waits(recs: &[CycleRecord]) -> (Vec<u64>, u64) {
    let y: Vec<_> = shared_picks(recs)
        .into_iter()
        .filter(|p| p.1 == 1)
        .collect();
    let nacks = y
        .iter()
        .filter(|p| p.2 == Outcome::Nack)
        .map(|p| p.0)
        .collect();
    let issue = y
        .iter()
        .find(|p| p.2 == Outcome::Issue)
        .expect("Y issues")
        .0;
    (nacks, issue)
}

/// A13: both partners want the free lock in cycle 1: the lower slot (X) wins, Y is NACKed.
/// A12: X's relssp in cycle 2 meets the release condition with its access in flight; the lock
/// is released in cycle 5, when that access's `cpl` arrives (issue 1 + latency 5 − 1).
#[test]
fn a13_race_and_a12_drain() {
    let mut x = vec![ld(SHARED, 1), op(Op::Relssp)];
    x.extend(vec![op(Op::Alu); 6]); // X stays live past its release
    let k = kernel(4, 2, vec![x], &[]);
    let (recs, s) = run(&k);
    let picks = shared_picks(&recs);
    assert_eq!(picks[0..2], [(1, 0, Outcome::Issue), (1, 1, Outcome::Nack)]);
    let ev = lock_events(&recs);
    assert_eq!(ev[0], (1, 0, "acquire"));
    assert_eq!(ev[1], (5, 0, "relssp"));
    assert_eq!(ev[2], (6, 1, "acquire"));
    let (nacks, issue) = y_waits(&recs);
    assert_eq!((nacks, issue), ((1..=5).collect(), 6));
    assert_eq!(s.lock_releases.relssp, 2);
}

/// A7: X's threads all run relssp in cycle c with nothing in flight: the lock is free at the
/// end of c and Y's retry in c + 1 acquires. A6: Y is NACKed on every pick meanwhile.
#[test]
fn a7_relssp_releases_and_the_partner_acquires_next() {
    // X waits for its load (issued in 1, ready in 6) before relssp in 7.
    let x = vec![ld(SHARED, 1), uses(1), op(Op::Relssp), op(Op::Alu)];
    let (recs, _) = run(&kernel(4, 2, vec![x], &[]));
    let ev = lock_events(&recs);
    assert_eq!(
        ev[..3],
        [(1, 0, "acquire"), (7, 0, "relssp"), (8, 1, "acquire")]
    );
    let (nacks, issue) = y_waits(&recs);
    assert_eq!((nacks, issue), ((1..=7).collect(), 8));
}

/// A9 and A11: X's threads exit without relssp: the lock is released at X's finish. TRANSFER
/// hands it to Y, whose retry then issues as the owner (no acquisition); FREE frees it and Y
/// acquires.
#[test]
fn a9_a11_finish_transfers_or_frees() {
    let x = vec![
        ld(SHARED, 1),
        Instr {
            exit: true,
            ..uses(1)
        },
    ];
    for (policy, events) in [
        // Y's access issues in 7 as the owner; its exit in 12 frees the lock.
        (
            "TRANSFER",
            vec![(1, 0, "acquire"), (6, 0, "transfer"), (12, 1, "finish")],
        ),
        (
            "FREE",
            vec![(1, 0, "acquire"), (6, 0, "finish"), (7, 1, "acquire")],
        ),
    ] {
        let (recs, s) = run(&kernel(4, 2, vec![x.clone()], &[("POLICY", policy)]));
        let ev = lock_events(&recs);
        assert_eq!(ev[..3], events, "{policy}");
        assert_eq!(y_waits(&recs).1, 7, "{policy}");
        assert_eq!(s.tbs[0].finish, 6, "{policy}");
    }
}

/// A10: a relssp by a TB that never acquires (Y never touches the shared region) changes no
/// lock; X keeps it until X's own finish.
#[test]
fn a10_relssp_of_a_non_owner_changes_nothing() {
    let x = vec![ld(SHARED, 1), uses(1), op(Op::Alu), op(Op::Alu)];
    let y = vec![op(Op::Alu), op(Op::Relssp), op(Op::Alu)];
    // Two warps per TB: warp 0 runs `x`, warp 1 runs `y`; only slot 0's warp 0 touches the
    // shared region first, so slot 1's relssp (its warp 1) is a non-owner's.
    let k = kernel(8, 2, vec![x, y], &[]);
    let (recs, _) = run(&k);
    let ev = lock_events(&recs);
    // Slot 0 acquires in cycle 1 and keeps the lock until its threads are done.
    assert_eq!(ev[0], (1, 0, "acquire"));
    let released = ev.iter().find(|e| e.1 == 0 && e.2 != "acquire").unwrap().0;
    let x_done = recs
        .iter()
        .filter(|r| r.picks.iter().any(|p| p.slot == 0))
        .map(|r| r.cycle)
        .max()
        .unwrap();
    assert_eq!(released, x_done);
}

/// A14: Y's warp 0 is blocked on the lock while its warp 1 waits at a barrier that warp 0
/// reaches only after its access: no deadlock, Y finishes after X's release (at X's finish:
/// X's warp 1 never runs relssp).
#[test]
fn a14_lock_and_barrier_do_not_deadlock() {
    let w1 = vec![op(Op::Alu), op(Op::Bar), op(Op::Alu)];
    let x_first = vec![
        ld(SHARED, 1),
        uses(1),
        op(Op::Relssp),
        op(Op::Bar),
        op(Op::Alu),
    ];
    let k = kernel(8, 2, vec![x_first, w1], &[]);
    let (recs, s) = run(&k);
    assert_eq!(s.tbs_completed, 2);
    let released = lock_events(&recs)
        .into_iter()
        .find(|e| e.1 == 0 && e.2 != "acquire")
        .unwrap()
        .0;
    assert!(s.tbs[1].finish > released);
    // Y's warp 0 was NACKed while X held the lock, and its warp 1 reached the barrier first.
    let (nacks, issue) = y_waits(&recs);
    assert!(!nacks.is_empty() && issue > released);
}

/// A15: more TBs than slots: later TBs take freed slots and keep the slot's status, so every
/// lock event is on pair 0 (slots 0 and 1) and every TB's shared access is checked.
#[test]
fn a15_relaunched_slots_keep_their_status() {
    let x = vec![ld(SHARED, 1), uses(1), op(Op::Relssp), op(Op::Alu)];
    let (recs, s) = run(&kernel(4, 6, vec![x], &[]));
    assert_eq!(s.tbs_completed, 6);
    assert!(s.tbs.iter().all(|t| t.slot < 2));
    let acquirers: Vec<u32> = recs
        .iter()
        .flat_map(|r| {
            r.locks
                .iter()
                .filter(|l| l.cause == "acquire")
                .map(|l| l.slot)
        })
        .collect();
    assert_eq!(acquirers.len(), 6);
    assert!(recs.iter().all(|r| r.locks.iter().all(|l| l.pair == 0)));
}

/// The cycles TB slot `slot`'s warp `warp_in_tb` (2 warps per TB) issued `op`.
fn issued(recs: &[CycleRecord], slot: u32, warp: u32, op: Op) -> Vec<u64> {
    recs.iter()
        .filter(|r| {
            r.picks.iter().any(|p| {
                p.slot == slot
                    && p.warp == slot * 2 + warp
                    && p.op == op
                    && p.outcome == Outcome::Issue
            })
        })
        .map(|r| r.cycle)
        .collect()
}

/// A4 and A6: while X owns the lock, Y's private access (offset below u) and its ALU
/// instructions issue, and the lock does not change; Y's shared-region access is NACKed on every
/// pick until X releases.
#[test]
fn a4_a6_private_accesses_and_alu_issue_while_the_partner_owns() {
    // X's warp 1 runs first on scheduler 1 (an owner outranks a non-owner); X's warp 0 keeps
    // the lock long enough for Y's warp 1 to get its turns.
    // While X's warp 0 waits for its load, scheduler 0 picks Y's warp 0.
    let mut w0 = vec![ld(SHARED, 1), uses(1)];
    w0.extend(vec![op(Op::Alu); 12]);
    w0.push(op(Op::Relssp));
    let w1 = vec![
        op(Op::Alu),
        op(Op::Alu),
        ld(10, 2),
        op(Op::Relssp),
        op(Op::Alu),
    ];
    let (recs, _) = run(&kernel(8, 2, vec![w0, w1], &[]));
    let ev = lock_events(&recs);
    assert_eq!(ev[0], (1, 0, "acquire"));
    let x_release = ev.iter().find(|e| e.1 == 0 && e.2 != "acquire").unwrap().0;
    let y_private = issued(&recs, 1, 1, Op::LdShared);
    assert_eq!(y_private.len(), 1);
    assert!(
        y_private[0] < x_release,
        "Y's private access waits for nobody"
    );
    assert!(
        ev.iter().all(|e| e.0 != y_private[0]),
        "the lock does not change"
    );
    let y_alu = issued(&recs, 1, 1, Op::Alu);
    assert!(y_alu.iter().filter(|&&c| c < x_release).count() >= 2);
    // Y's warp 0 (its shared access) is NACKed on every pick while X owns.
    let y_shared: Vec<Outcome> = recs
        .iter()
        .filter(|r| r.cycle <= x_release)
        .flat_map(|r| r.picks.iter().filter(|p| p.warp == 2).map(|p| p.outcome))
        .collect();
    assert!(!y_shared.is_empty() && y_shared.iter().all(|&o| o == Outcome::Nack));
}

/// A8: relssp by some of X's threads (its warp 0) does not release; the rest (warp 1) later
/// does, in the cycle the last of them runs relssp.
#[test]
fn a8_relssp_by_a_subset_then_the_rest() {
    let mut w0 = vec![ld(SHARED, 1), uses(1), op(Op::Relssp)];
    w0.extend(vec![op(Op::Alu); 10]);
    let mut w1 = vec![op(Op::Alu); 9];
    w1.push(op(Op::Relssp));
    w1.extend(vec![op(Op::Alu); 4]);
    let (recs, _) = run(&kernel(8, 2, vec![w0, w1], &[]));
    let first = issued(&recs, 0, 0, Op::Relssp)[0];
    let last = issued(&recs, 0, 1, Op::Relssp)[0];
    assert!(first < last);
    let released = lock_events(&recs)
        .into_iter()
        .find(|e| e.1 == 0 && e.2 == "relssp")
        .unwrap()
        .0;
    assert_eq!(released, last);
}
