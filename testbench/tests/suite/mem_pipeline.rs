//! The SM memory pipeline model (docs/memory-issue-control.md §1–§2, §8.3): the L1D outcomes
//! of §1.4 and the examples of §1.8 as directed tests, the §2 issue-slot acceptance checked
//! every cycle of two-kernel runs, exact timing of a hand-computed load, determinism and the
//! §8.3 calibration checks that are exact.

use smrtl_cosim::sm::mem_sm::l1d::{L1d, Outcome};
use smrtl_cosim::sm::mem_sm::params::{PipeParams, SetIndex};
use smrtl_cosim::sm::mem_sm::workload::{self, Body};
use smrtl_cosim::sm::mem_sm::{self as mp, MemPipeline};
use std::collections::VecDeque;

fn linear() -> PipeParams {
    PipeParams {
        set_index: SetIndex::Linear,
        ..PipeParams::default()
    }
}

fn wl(text: &str) -> workload::Workload {
    workload::parse(text, &[]).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn xor_set_index_is_the_spec_hash() {
    let c = L1d::new(&PipeParams::default());
    for l in [0u64, 1, 31, 32, 33, 1024, 1057, 0xdead_beef, u64::MAX >> 7] {
        assert_eq!(
            c.set_of(l),
            ((l ^ l >> 5 ^ l >> 10) & 31) as usize,
            "line {l}"
        );
    }
    let c = L1d::new(&linear());
    assert_eq!((c.set_of(33), c.set_of(64)), (1, 0));
}

/// §1.8 example 2: a read miss to a set whose 6 ways are all reserved fails (line
/// allocation) and allocates nothing.
#[test]
fn line_allocation_failure_allocates_nothing() {
    let mut c = L1d::new(&linear());
    for i in 0..6u64 {
        assert_eq!(c.read(i * 32, i as u32), Outcome::Miss);
        c.drain().expect("the miss went to the miss queue");
    }
    assert_eq!(c.reserved_in(0), 6);
    assert_eq!(c.read(6 * 32, 9), Outcome::FailLineAlloc);
    assert_eq!((c.mshrs_used(), c.mq_len(), c.reserved_in(0)), (6, 0, 6));
    // A block already pending in that set still merges.
    assert_eq!(c.read(32, 10), Outcome::HitReserved);
    // The failure precedes the miss-queue check (§1.4 order).
    for i in 0..7u64 {
        assert_eq!(
            c.read(1 + 32 * i, 20),
            if i < 6 {
                Outcome::Miss
            } else {
                Outcome::FailLineAlloc
            }
        );
    }
}

/// §1.8 example 3: with every MSHR in use a new block fails (MSHR entry); a pending block
/// merges while its entry holds fewer than `max_merge` accesses, then fails (MSHR merge).
#[test]
fn mshr_entry_and_merge_failures() {
    let mut c = L1d::new(&linear());
    for i in 0..128u64 {
        assert_eq!(c.read(i, 0), Outcome::Miss, "line {i}");
        c.drain();
    }
    assert_eq!(c.mshrs_used(), 128);
    assert_eq!(c.read(128, 1), Outcome::FailMshrEntry);
    assert_eq!(c.mshrs_used(), 128);
    for m in 1..8 {
        assert_eq!(c.read(5, m), Outcome::HitReserved, "merge {m}");
    }
    assert_eq!(c.pending(5), Some(8));
    assert_eq!(c.read(5, 99), Outcome::FailMshrMerge);
    assert_eq!(c.pending(5), Some(8));
}

/// §1.4 check 3: reads need two free miss-queue slots (`mq_reserve = 1`), merges included;
/// writes need one.
#[test]
fn miss_queue_reserve() {
    let mut c = L1d::new(&linear());
    for i in 0..7u64 {
        assert_eq!(c.read(i, 0), Outcome::Miss);
    }
    assert_eq!(c.mq_len(), 7);
    assert_eq!(c.read(100, 0), Outcome::FailMissQueue);
    assert_eq!(
        c.read(3, 0),
        Outcome::FailMissQueue,
        "a merge also needs the reserve"
    );
    assert_eq!(c.write(200), Outcome::Write);
    assert_eq!(c.write(201), Outcome::FailMissQueue);
    assert_eq!(c.mq_len(), 8);
}

/// §1.8 example 4: a read miss holds its MSHR entry until its fill; its miss-queue slot is
/// freed when sent down. The fill makes the line valid and queues its accesses in order, the
/// merged ones marked (the stall inspector's L1_COAL, docs/stall-inspector.md §7.1).
#[test]
fn mshr_held_until_fill() {
    let mut c = L1d::new(&linear());
    assert_eq!(c.read(7, 11), Outcome::Miss);
    assert_eq!(c.read(7, 12), Outcome::HitReserved);
    assert_eq!((c.mshrs_used(), c.mq_len()), (1, 1));
    let r = c.drain().unwrap();
    assert_eq!((r.line, r.write), (7, false));
    assert_eq!((c.mshrs_used(), c.mq_len()), (1, 0));
    let mut rq = VecDeque::new();
    c.fill(r.mshr, &mut rq);
    assert_eq!(c.mshrs_used(), 0);
    assert_eq!(rq, [11, 12 | smrtl_cosim::sm::mem_sm::l1d::MERGED]);
    assert!(c.is_valid(7));
    assert_eq!(c.read(7, 13), Outcome::Hit);
}

/// §1.8 example 5: a write to a valid line invalidates it; a write miss allocates nothing.
#[test]
fn write_evict_write_no_allocate() {
    let mut c = L1d::new(&linear());
    c.read(3, 0);
    let r = c.drain().unwrap();
    c.fill(r.mshr, &mut VecDeque::new());
    assert!(c.is_valid(3));
    assert_eq!(c.write(3), Outcome::Write);
    assert!(!c.is_valid(3));
    assert_eq!(c.write(40), Outcome::Write);
    assert_eq!(
        (c.mshrs_used(), c.pending(40), c.is_valid(40)),
        (0, None, false)
    );
    let w = c.drain().unwrap();
    assert_eq!((w.line, w.write), (3, true));
}

/// LRU: the victim is the first invalid way, else the least recently used valid one.
#[test]
fn lru_victim() {
    let mut c = L1d::new(&linear());
    let mut rq = VecDeque::new();
    for i in 0..6u64 {
        c.read(i * 32, 0);
        let r = c.drain().unwrap();
        c.fill(r.mshr, &mut rq);
    }
    assert_eq!(c.read(0, 0), Outcome::Hit); // line 32 is now the LRU one
    c.read(6 * 32, 0);
    assert!(!c.is_valid(32) && c.is_valid(0) && c.is_valid(64));
}

/// One warp's load of three lines to an idle SM, timed by hand from §1.3 and §1.6: issue in
/// cycle 0, dispatch in 1, accesses in 2, 3, 4 (three misses), sent down in 3, 4, 5, served
/// from 3, 11, 19, fills due 303, 311, 319, each resolved in its fill cycle; the load
/// completes in 319 and its dependent compute issues in 320, which ends the TB; its
/// replacement launches in 321 and issues the same load, now three hits (resolved at
/// acceptance: the load completes with its last access in 325).
#[test]
fn a_load_timed_by_hand() {
    let w = wl(
        r#"{"kernels": [{"name": "one", "threads": 32, "regs": 1, "smem": 0,
        "warps": [[{"op": "load", "addr": [0, 4096, 8192]}, {"op": "compute", "dep": true}]]}],
        "tbs": [1], "cycles": 400}"#,
    );
    let mut m = MemPipeline::new(&w).unwrap();
    let mut log = vec![];
    for _ in 0..330 {
        m.step();
        let t = m.cycle() - 1;
        let ev = m.record();
        if ev.issue != 0 || ev.acc != 0 || ev.done[0] != 0 || m.issued()[0] != 0 {
            log.push((
                t,
                ev.issue,
                ev.acc,
                ev.first,
                ev.done[0],
                m.issued()[0],
                m.outcome(),
            ));
        }
    }
    use Outcome::*;
    assert_eq!(
        log,
        [
            (0, 1, 0, 0, 0, 1, Idle),
            (2, 0, 1, 1, 0, 0, Miss),
            (3, 0, 1, 0, 0, 0, Miss),
            (4, 0, 1, 0, 0, 0, Miss),
            (319, 0, 0, 0, 1, 0, Idle),
            (320, 0, 0, 0, 0, 1, Idle),
            (321, 1, 0, 0, 0, 1, Idle),
            (323, 0, 1, 1, 0, 0, Hit),
            (324, 0, 1, 0, 0, 0, Hit),
            (325, 0, 1, 0, 1, 0, Hit),
            (326, 0, 0, 0, 0, 1, Idle),
            (327, 1, 0, 0, 0, 1, Idle),
            (329, 0, 1, 1, 0, 0, Hit),
        ]
    );
    let c = m.counters(0);
    assert_eq!((c.misses, c.hits, c.mem_completed, c.compute), (3, 4, 2, 2));
    assert_eq!(c.tbs_completed, 2);
}

/// Per-cycle checks over a run: §1.8 examples 1 and 6, §2 acceptance, §1.5 in-flight count.
fn check_run(text: &str, expect_fails: bool) -> mp::PipeStats {
    let w = wl(text);
    let n = w.kernels.len();
    let mut m = MemPipeline::new(&w).unwrap();
    let mut prev_disp = m.dispatch_view();
    let mut prev = [mp::Counters::default(); 3];
    let (mut fails, mut conserved) = (0u64, 0u64);
    for _ in 0..w.cycles {
        let mem_reg_was_busy = m.mem_reg_busy();
        m.step();
        // The control's events and outputs as masks (bit k = kernel k).
        let ev = m.record();
        let out = &ev;
        let t = m.cycle() - 1;
        // §2: at most one memory instruction per cycle, only into a free slot.
        assert!(ev.issue.count_ones() <= 1, "cycle {t}");
        assert!(
            ev.issue == 0 || ev.slot_free,
            "cycle {t}: issue into a busy slot"
        );
        // The slot frees only by a dispatch, into an empty dispatch register.
        if mem_reg_was_busy && ev.slot_free {
            let d = m.dispatch_view().expect("the MEM instruction moved on");
            assert_eq!(d.next, 0, "cycle {t}");
        }
        if mem_reg_was_busy && !ev.slot_free {
            assert!(
                m.lsu_busy(),
                "cycle {t}: MEM held while the dispatch register is empty"
            );
        }
        // Work conservation: an eligible kernel and a free slot ⇒ exactly one issues.
        let elig = ev.mem_req & out.mem_ok & if ev.slot_free { 0xff } else { 0 };
        if elig != 0 {
            assert_eq!(
                ev.issue.count_ones(),
                1,
                "cycle {t}: eligible {elig:b} but no issue"
            );
            assert_ne!(ev.issue & elig, 0, "cycle {t}");
            conserved += 1;
        }
        // §2, §5: a BMI grant is one-hot and the issue stage issues exactly the granted
        // kernel; without an arbiter the control's grant is the eligible mask.
        if m.params().scheme.has_arbiter() {
            assert_eq!(ev.issue, out.grant, "cycle {t}: issue follows the grant");
        } else {
            assert_eq!(out.grant, elig, "cycle {t}");
        }
        // Compute is never blocked: a scheduler with a ready compute warp issues.
        for (s, v) in m.sched_view().iter().enumerate() {
            assert!(
                !v.compute_ready || v.issued.is_some(),
                "cycle {t}: scheduler {s} idle"
            );
        }
        // §1.8 example 1: one access per cycle; a failed head stays, unadvanced.
        assert!((ev.acc | ev.fail).count_ones() <= 1, "cycle {t}");
        let disp = m.dispatch_view();
        if ev.fail != 0 {
            fails += 1;
            assert_eq!(disp, prev_disp, "cycle {t}: a failed head must stay");
        }
        if let Some(a) = prev_disp {
            let same = disp.is_some_and(|b| (a.kernel, a.warp, a.seq) == (b.kernel, b.warp, b.seq));
            if !same {
                // It left only with its last access accepted this cycle.
                assert!(
                    ev.acc >> a.kernel & 1 == 1 && a.next + 1 == a.n,
                    "cycle {t}: the head left the dispatch register before all its accesses were accepted"
                );
            } else if ev.acc != 0 {
                assert_eq!(disp.unwrap().next, a.next + 1, "cycle {t}");
            }
        }
        // §1.8 example 6 and §1.5: counters move by exactly the cycle's events.
        for (k, p) in prev.iter_mut().enumerate().take(n) {
            let c = *m.counters(k);
            let bit = |v: u8| u64::from(v >> k & 1);
            assert_eq!(
                c.causes.total() - p.causes.total(),
                bit(ev.fail),
                "cycle {t} k{k}"
            );
            assert_eq!(c.accesses() - p.accesses(), bit(ev.acc), "cycle {t} k{k}");
            assert_eq!(c.mem_issued - p.mem_issued, bit(ev.issue));
            assert_eq!(c.mem_completed - p.mem_completed, u64::from(ev.done[k]));
            assert!(ev.done[k] <= 2);
            assert_eq!(
                u64::from(m.ctl().inflight(k)),
                c.mem_issued - c.mem_completed,
                "cycle {t} k{k}: in flight"
            );
            *p = c;
        }
        prev_disp = disp;
    }
    assert!(conserved > 0, "the run issued memory instructions");
    assert_eq!(fails > 0, expect_fails, "failures seen: {fails}");
    m.stats()
}

#[test]
fn issue_slot_and_lsu_invariants_bp_sv() {
    let s = check_run(
        r#"{"kernels": ["bp", "sv"], "tbs": [9, 4], "cycles": 30000, "seed": 3}"#,
        true,
    );
    assert!(s
        .kernels
        .iter()
        .all(|k| k.mem_instructions > 0 && k.compute_instructions > 0));
}

/// The same checks under every scheme with the real control (SMIL limits (3, 1), which
/// leave the LSU without failures).
#[test]
fn issue_slot_and_lsu_invariants_every_scheme() {
    for scheme in ["rbmi", "qbmi", "smil", "dmil", "qbmi_dmil"] {
        let text = format!(
            r#"{{"kernels": ["bp", "sv"], "tbs": [9, 4], "cycles": 30000, "seed": 3, "params": {{"scheme": "{scheme}", "smil_limit": [3, 1]}}}}"#
        );
        let s = check_run(&text, scheme != "smil");
        assert!(s.kernels.iter().all(|k| k.mem_instructions > 0), "{scheme}");
    }
}

#[test]
fn issue_slot_and_lsu_invariants_three_kernels_lrr() {
    let s = check_run(
        r#"{"kernels": ["cp", "ks", "ax"], "cycles": 20000, "seed": 5, "params": {"sched": "lrr"}}"#,
        true,
    );
    assert_eq!(s.kernels.len(), 3);
    // Every cause of §1.4 the run hit is attributed to some kernel's count.
    let total: u64 = s.kernels.iter().map(|k| k.rsfail).sum();
    assert_eq!(total, s.lsu_stall_cycles);
}

#[test]
fn explicit_streams_with_stores() {
    let text = include_str!("../../../examples/mem/explicit.json");
    let s = check_run(text, false);
    assert!(s.kernels[0].writes > 0 && s.kernels[0].tbs_completed > 0);
}

#[test]
fn same_seed_same_run_other_seed_other_run() {
    let text = |seed: u64| {
        format!(r#"{{"kernels": ["bp", "sv"], "tbs": [9, 4], "cycles": 20000, "seed": {seed}}}"#)
    };
    let run = |seed| {
        let mut lines = Vec::new();
        let mut each = |r: &mp::CycleRecord| lines.push(serde_json::to_string(r).unwrap());
        let s = mp::run(&wl(&text(seed)), Some(&mut each), None).unwrap();
        (serde_json::to_string(&s).unwrap(), lines)
    };
    let (a, b) = (run(1), run(1));
    assert_eq!(a, b);
    assert_ne!(a.0, run(2).0);
}

/// §8.3: Cinst/Minst and Req/Minst are exact in the generated streams (up to the
/// instructions a run cuts off).
#[test]
fn generator_mix_is_exact() {
    for b in &workload::BENCHES {
        let w = wl(&format!(
            r#"{{"kernels": ["{}"], "cycles": 20000, "seed": 9}}"#,
            b.name
        ));
        let Body::Synth(g) = &w.kernels[0].body else {
            unreachable!()
        };
        assert_eq!((g.cinst, g.req), (b.cinst, b.req));
        let mut m = MemPipeline::new(&w).unwrap();
        for _ in 0..w.cycles {
            m.step();
        }
        let c = m.counters(0);
        let warps = u64::from(w.kernels[0].warps() * w.tbs[0]);
        let (ci, r) = (u64::from(b.cinst), u64::from(b.req));
        // Each warp: cinst computes, then its memory instruction.
        assert!(c.compute >= ci * c.mem_issued, "{}", b.name);
        assert!(c.compute <= ci * (c.mem_issued + warps), "{}", b.name);
        // Each started instruction has exactly req accesses (the head may be mid-way).
        assert!(c.accesses() <= r * c.first_accesses, "{}", b.name);
        assert!(c.accesses() + r > r * c.first_accesses, "{}", b.name);
    }
}

/// Isolated occupancies of Table 2 come out of the §1.1 limits (SMK-P filling, alone).
#[test]
fn isolated_occupancy_matches_table2() {
    let want = [16, 7, 16, 12, 12, 6, 6, 12, 16, 16, 16, 12, 12];
    for (b, want) in workload::BENCHES.iter().zip(want) {
        let w = wl(&format!(r#"{{"kernels": ["{}"], "cycles": 1}}"#, b.name));
        assert_eq!(w.tbs, [want], "{}", b.name);
    }
}

#[test]
fn bad_workloads_are_one_line_errors() {
    let bad = [
        (
            r#"{"kernels": [], "cycles": 10}"#,
            "`kernels` has 0 entries",
        ),
        (
            r#"{"kernels": ["fft"], "cycles": 10}"#,
            "unknown benchmark `fft`",
        ),
        (r#"{"kernels": ["bp"], "cycles": 0}"#, "`cycles` = 0"),
        (
            r#"{"kernels": ["bp", "sv"], "tbs": [12, 16], "cycles": 9}"#,
            "does not fit",
        ),
        (
            r#"{"kernels": ["bp"], "cycles": 9, "params": {"mq_depth": 0}}"#,
            "mq_depth",
        ),
        (
            r#"{"kernels": ["bp"], "cycles": 9, "params": {"sched": "fifo"}}"#,
            "sched",
        ),
        (
            r#"{"kernels": [{"bench": "bp", "req": 40}], "cycles": 9}"#,
            "`req` = 40",
        ),
        (
            r#"{"kernels": [{"threads": 32, "regs": 1, "smem": 0, "warps": [[{"op": "load"}]]}], "cycles": 9}"#,
            "needs `addr`",
        ),
        (
            r#"{"kernels": ["bp"], "cycles": 9, "extra": 1}"#,
            "unknown field",
        ),
        (
            r#"{"kernels": [{"threads": 64, "regs": 1, "smem": 0, "warps": [[{"op": "compute"}], []]}], "cycles": 9}"#,
            "warps[1] is empty",
        ),
        ("[1", "malformed workload"),
    ];
    for (text, needle) in bad {
        let e = workload::parse(text, &[])
            .err()
            .unwrap_or_else(|| panic!("accepted {text}"));
        assert!(e.contains(needle), "{e} lacks {needle}");
        assert!(!e.contains('\n'), "{e}");
    }
    let sets = [("scheme".to_string(), "warp".to_string())];
    let e = workload::parse(r#"{"kernels": ["bp"], "cycles": 9}"#, &sets).unwrap_err();
    assert!(e.contains("scheme"), "{e}");
}

/// The control is reached only through its typed interface: a second control stepped from
/// each cycle's `CtlIn` (as an RTL `mem_issue_ctl` would be) gives the same `comb` outputs
/// before the edge and the same registers after it, every cycle.
#[test]
fn a_control_stepped_beside_from_the_events_agrees() {
    use smrtl_cosim::blocks::mem_issue_ctl::MemIssueCtl;
    let w = wl(r#"{"kernels": ["bp", "sv"], "tbs": [9, 4], "cycles": 20000, "seed": 4}"#);
    let mut m = MemPipeline::new(&w).unwrap();
    let mut beside = MemIssueCtl::new(&w.params.ctl(2));
    let mut out = smrtl_cosim::blocks::mem_issue_ctl::CtlOut::new(&w.params.ctl(2));
    for _ in 0..w.cycles {
        m.step();
        let ev = m.events();
        beside.comb(ev, &mut out);
        let model = m.ctl_out();
        assert_eq!((&out.grant, &out.mem_ok), (&model.grant, &model.mem_ok));
        beside.tick(ev);
        for k in 0..2 {
            let regs = |c: &MemIssueCtl| {
                (
                    c.inflight(k),
                    c.peak(k),
                    c.rsfail(k),
                    c.reqcnt(k),
                    c.mil(k),
                    c.unl(k),
                )
            };
            assert_eq!(
                regs(&beside),
                regs(m.ctl()),
                "cycle {} kernel {k}",
                m.cycle() - 1
            );
        }
    }
    assert!(m.ctl().reqcnt(0) > 0 || m.counters(0).accesses() >= 1024);
}
