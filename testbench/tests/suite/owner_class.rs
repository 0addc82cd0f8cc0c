//! `OwnerClass` (docs/scratchpad-sharing.md §2.5): directed spec tests on the model and rusthdl
//! (A5's owner side, A16's three classes at once, the `FREE_CLASS` switch, ShSM = 0, the §0
//! out-of-range rules) and the reach of the random stimulus. Random co-simulation on every
//! backend (the presets cover both FREE_CLASS settings and T = 6), lint, Icarus and synthesis
//! are the conformance suite's (`tests/conformance.rs`).

use proptest::strategy::{Strategy, ValueTree};
use smrtl_cosim::blocks::owner_class::classify;
use smrtl_cosim::blocks::share_cfg::Table;
use smrtl_cosim::kernel::launch::{launch, Inputs as LaunchInputs};
use smrtl_hdl::blocks::owner_class::port::Inputs;
use smrtl_hdl::blocks::owner_class::Params;
use smrtl_hdl::blocks::sharing::Class;
use smrtl_hdl::BlockParams;
use smrtl_testbench::blocks::owner_class::{cycles, inputs};
use smrtl_testbench::check;

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).unwrap()
}

/// One cycle: a table, the locks and the warps.
struct Cycle {
    table: Table,
    locks: Vec<(bool, u64)>,
    warps: Vec<(bool, u64)>,
}

/// Per cycle, each warp's (owner_bit, class), on the model and on rusthdl (every output
/// asserted equal).
fn run(p: &Params, cycles: &[Cycle]) -> Vec<Vec<(bool, Class)>> {
    let ins: Vec<Inputs> = cycles
        .iter()
        .map(|c| inputs(p, &c.table, &c.locks, &c.warps))
        .collect();
    check::directed(p, &ins)
        .into_iter()
        .map(|o| {
            (0..p.warps as usize)
                .map(|w| (o.owner_bit[w], Class::of_code(o.warp_class[w])))
                .collect()
        })
        .collect()
}

/// Example 3.3's table (DCT3 on the paper's SM): slot k pairs with slot 7 + k for k < 5;
/// slots 5 and 6 are unshared.
fn dct3() -> Table {
    let l = launch(&LaunchInputs {
        smem: 16384,
        tb_smem: 2176,
        tb_threads: 128,
        max_tbs: 16,
        max_threads: 3072,
        t: "1/10".parse().unwrap(),
        reg_limit: None,
        align: 4,
    });
    Table::launched(&Params::default().shape(), &l, 2176)
}

/// Locks of `kp` pairs: `held[k] = Some(owner)` or free.
fn locks(held: &[Option<u64>]) -> Vec<(bool, u64)> {
    held.iter().map(|h| (h.is_some(), h.unwrap_or(0))).collect()
}

/// Warp `w` of the paper's 96 sits in slot `slots[w % len]`, all valid.
fn warps(slots: &[u64]) -> Vec<(bool, u64)> {
    (0..Params::default().warps as usize)
        .map(|w| (true, slots[w % slots.len()]))
        .collect()
}

fn one(table: &Table, locks: Vec<(bool, u64)>, warps: Vec<(bool, u64)>) -> Cycle {
    Cycle {
        table: table.clone(),
        locks,
        warps,
    }
}

use Class::{Nonowner, Owner, Unshared};

#[test]
fn a5_owner_side_and_transfer() {
    let t = dct3();
    // Pair 0 = slots 0 (X) and 7 (Y). X holds the lock, then Y does (a transfer).
    let ws = warps(&[0, 7, 5]);
    let cycles = [
        one(
            &t,
            locks(&[Some(0), None, None, None, None, None, None, None]),
            ws.clone(),
        ),
        one(
            &t,
            locks(&[Some(7), None, None, None, None, None, None, None]),
            ws,
        ),
    ];
    let got = run(&Params::default(), &cycles);
    for (w, &(bit, class)) in got[0].iter().enumerate() {
        let want = [(true, Owner), (false, Nonowner), (false, Unshared)][w % 3];
        assert_eq!((bit, class), want, "X owns: warp {w}");
    }
    for (w, &(bit, class)) in got[1].iter().enumerate() {
        let want = [(false, Nonowner), (true, Owner), (false, Unshared)][w % 3];
        assert_eq!((bit, class), want, "Y owns: warp {w}");
    }
}

#[test]
fn a16_three_classes_at_once_and_free_class() {
    let t = dct3();
    // Slot 1 owns pair 1; pair 2 (slots 2, 9) is free; slot 6 is unshared; slot 8 is 1's
    // partner; an invalid warp of owner slot 1 has no owner bit.
    let held = locks(&[None, Some(1), None, None, Some(11), None, None, None]);
    let mut ws = warps(&[1, 8, 6, 2, 9, 4, 11]);
    ws[95] = (false, 1);
    let cycles = [one(&t, held, ws)];
    for (free_class, free) in [("NONOWNER", Nonowner), ("UNSHARED", Unshared)] {
        let got = &run(&params("paper", &[("FREE_CLASS", free_class)]), &cycles)[0];
        for (w, &got) in got.iter().enumerate().take(95) {
            let want = [
                (true, Owner),
                (false, Nonowner),
                (false, Unshared),
                (false, free),
                (false, free),
                (false, Nonowner),
                (true, Owner),
            ][w % 7];
            assert_eq!(got, want, "FREE_CLASS={free_class}: warp {w}");
        }
        assert_eq!(got[95], (false, Nonowner), "invalid warp of the owner slot");
        let classes: Vec<Class> = got.iter().map(|g| g.1).collect();
        for c in [Owner, Unshared, Nonowner] {
            assert!(classes.contains(&c), "{c:?} present");
        }
    }
}

#[test]
fn shsm_off_makes_every_warp_unshared() {
    let mut t = dct3();
    t.shsm = false;
    let got = run(
        &Params::default(),
        &[one(&t, locks(&[Some(0); 8]), warps(&[0, 7, 5, 13]))],
    );
    assert!(got[0].iter().all(|&g| g == (false, Unshared)));
}

#[test]
fn out_of_range_slots_partners_and_pairs() {
    // T = 6: SW = 3, TW = 3 (NONE = 7), KP = 3, KW = 2.
    let p = params("small", &[("T", "6"), ("W", "8")]);
    let mut t = Table::new(&p.shape());
    t.shsm = true;
    // 3 <-> 4: pair index min(3, 4) = 3 >= KP reads as a free lock; 1 -> 6: no such slot, still
    // shared (ShTB != NONE), pair 1.
    t.shtb[3] = 4;
    t.shtb[4] = 3;
    t.shtb[1] = 6;
    let held = locks(&[None, Some(1), Some(3)]);
    // Slots 6 and 7 do not exist: unshared.
    let ws = vec![
        (true, 3),
        (true, 4),
        (true, 1),
        (true, 6),
        (true, 7),
        (true, 0),
        (false, 3),
        (true, 1),
    ];
    let got = run(&p, &[one(&t, held, ws)]);
    let want = [
        (false, Nonowner), // FREE_CLASS of the out-of-range pair 3
        (false, Nonowner),
        (true, Owner),
        (false, Unshared),
        (false, Unshared),
        (false, Unshared),
        (false, Nonowner),
        (true, Owner),
    ];
    assert_eq!(got[0], want);
    let p = params(
        "small",
        &[("T", "6"), ("W", "8"), ("FREE_CLASS", "UNSHARED")],
    );
    let got = run(
        &p,
        &[one(
            &t,
            locks(&[None, Some(1), Some(3)]),
            vec![(true, 3); 8],
        )],
    );
    assert!(
        got[0].iter().all(|&g| g == (false, Unshared)),
        "pair 3 reads free"
    );
}

/// The random cases give every class (and owner bits) a fair share of warp-cycles.
#[test]
fn random_stimulus_reaches_every_class() {
    for preset in ["paper", "small"] {
        let p = params(preset, &[]);
        let mut runner = check::runner(9);
        let strategy = cycles(&p);
        let mut table = Table::new(&p.shape());
        let (mut count, mut n) = ([0usize; 3], 0);
        while n < 2_000 {
            for c in strategy.new_tree(&mut runner).unwrap().current() {
                table.shsm = c.shsm;
                table.shtb.copy_from_slice(&c.shtb);
                let locks = (&c.lock_valid[..], &c.lock_owner[..]);
                for w in 0..p.warps as usize {
                    let (_, class) =
                        classify(&table, locks, p.free_class, c.warp_valid[w], c.warp_slot[w]);
                    count[class.code() as usize] += 1;
                }
                n += 1;
            }
        }
        let total: usize = count.iter().sum();
        println!("{preset}: OWNER, UNSHARED, NONOWNER warp-cycles {count:?}");
        assert!(count.iter().all(|&c| c > total / 20), "{preset}: {count:?}");
    }
}
