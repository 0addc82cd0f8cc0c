//! One warp scheduler (docs/scratchpad-sharing.md §4): directed sequences worked out by hand
//! (A16's OWF order, OWF2, UWF, GREEDY, LRR with wrap-around and reset, GTO, TWO_LEVEL group
//! moves and a partial last group, TWO_LEVEL_ACTIVE demotion, SRR promotion, LRR rotation, fewer
//! warps than N and a hand-worked GPGPU-Sim run), each checked on the model and on rusthdl. Random
//! co-simulation on every backend (the presets cover every SCHED, RANK and GREEDY), lint,
//! Icarus, synthesis, the state bits and the planted tie-break fault are the conformance
//! suite's (`tests/conformance.rs`).

use smrtl_hdl::blocks::sharing::Class;
use smrtl_hdl::blocks::warp_scheduler::port::Inputs;
use smrtl_hdl::blocks::warp_scheduler::Params;
use smrtl_hdl::BlockParams;
use smrtl_testbench::check;

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).unwrap()
}

/// One scheduler of `ws` warps (NSCHED = 1) with `sets`.
fn one(ws: u32, sets: &[(&str, &str)]) -> Params {
    let w = ws.to_string();
    let mut all = vec![("W", w.as_str()), ("NSCHED", "1")];
    all.extend_from_slice(sets);
    params("paper", &all)
}

const O: u64 = Class::Owner as u64;
const U: u64 = Class::Unshared as u64;
const N: u64 = Class::Nonowner as u64;
/// The unused class code, which reads as NONOWNER.
const CODE3: u64 = 3;

/// A cycle: the listed warps `(index, class, age)` ready, every other warp not ready.
fn ready(p: &Params, warps: &[(usize, u64, u64)]) -> Inputs {
    let mut c = Inputs::new(p);
    for &(j, cls, age) in warps {
        (c.ready[j], c.cls[j], c.age[j]) = (true, cls, age);
    }
    c
}

/// The listed indices ready (class OWNER, age = index).
fn idx(p: &Params, js: &[usize]) -> Inputs {
    let warps: Vec<(usize, u64, u64)> = js.iter().map(|&j| (j, O, j as u64)).collect();
    ready(p, &warps)
}

/// Runs `cycles` on the model and on rusthdl (every output equal) and asserts each cycle's
/// pick (`None` = `iss_valid` 0, with `iss_idx` 0) and the `last` state shown in that cycle.
fn expect(p: &Params, cycles: &[Inputs], picks: &[Option<u64>]) {
    assert_eq!(cycles.len(), picks.len());
    // last as the state shows it: cleared by reset, else the previous cycle's pick.
    let mut lasts = vec![];
    let mut last = None;
    for (c, pick) in cycles.iter().zip(picks) {
        lasts.push(last);
        last = if c.reset { None } else { pick.or(last) };
    }
    for (c, o) in check::directed(p, cycles).iter().enumerate() {
        assert_eq!(
            o.iss_valid.then_some(o.iss_idx),
            picks[c],
            "pick in cycle {c}"
        );
        assert_eq!(o.iss_idx, picks[c].unwrap_or(0));
        assert_eq!(
            o.last_valid.then_some(o.last_idx),
            lasts[c],
            "last in cycle {c}"
        );
    }
}

/// `cycles` where each picked warp stops being ready: the order in which `warps` issue.
fn drain(p: &Params, warps: &[(usize, u64, u64)], order: &[u64]) {
    let mut left = warps.to_vec();
    let mut cycles = vec![];
    for &j in order {
        cycles.push(ready(p, &left));
        left.retain(|w| w.0 as u64 != j);
    }
    cycles.push(ready(p, &left));
    let mut picks: Vec<Option<u64>> = order.iter().map(|&j| Some(j)).collect();
    picks.push(None);
    expect(p, &cycles, &picks);
}

/// Ready warps of all three classes (and class code 3), index 7 never ready.
const MIXED: [(usize, u64, u64); 7] = [
    (0, N, 1),
    (1, U, 5),
    (2, O, 9),
    (3, O, 3),
    (4, U, 4),
    (5, N, 0),
    (6, CODE3, 2),
];

/// A16: OWF3 issues owner warps, then unshared, then non-owner ones, oldest first in a class.
#[test]
fn a16_owf_owner_then_unshared_then_nonowner() {
    drain(&one(8, &[]), &MIXED, &[3, 2, 4, 1, 5, 0, 6]);
}

/// OWF2: owner and unshared warps share the first rank, by age.
#[test]
fn owf2_two_classes_by_age() {
    drain(&one(8, &[("RANK", "OWF2")]), &MIXED, &[3, 4, 1, 2, 5, 0, 6]);
}

/// UWF (Fig. 5's comparison): unshared, then owner, then non-owner.
#[test]
fn uwf_unshared_first() {
    drain(&one(8, &[("RANK", "UWF")]), &MIXED, &[4, 1, 3, 2, 5, 0, 6]);
}

/// Equal class and age: the lower index issues first.
#[test]
fn owf_ties_break_by_index() {
    let warps = [(6, O, 2), (2, O, 2), (5, U, 1), (1, U, 1)];
    drain(&one(8, &[]), &warps, &[2, 6, 1, 5]);
}

/// GREEDY keeps the last warp while it is ready and in the best ready class; without GREEDY
/// the oldest of the best class issues every cycle.
#[test]
fn greedy_keeps_the_last_warp_within_the_best_class() {
    let p = one(8, &[("GREEDY", "true")]);
    let all = [(2, O, 9), (3, O, 3), (4, U, 4)];
    let cycles = [
        ready(&p, &all),                                // 3: oldest owner
        ready(&p, &[(2, O, 9), (4, U, 4)]),             // 2: 3 not ready
        ready(&p, &all),                                // greedy: keep 2 (still best class)
        ready(&p, &[(2, U, 9), (3, O, 3), (4, U, 4)]),  // 2 lost the lock: 3
        ready(&p, &[(2, U, 9), (4, U, 4)]),             // 3 not ready: oldest unshared, 4
        ready(&p, &[(2, U, 1), (4, U, 4)]),             // greedy: keep 4 though 2 is older
        ready(&p, &[(2, U, 1), (4, U, 4), (5, O, 20)]), // an owner is ready: 5
    ];
    let greedy = [3, 2, 2, 3, 4, 4, 5].map(Some);
    expect(&p, &cycles, &greedy);
    let plain = [3, 2, 3, 3, 4, 2, 5].map(Some);
    expect(&one(8, &[]), &cycles, &plain);
}

/// LRR: the first ready warp after the last one, circularly; from 0 after reset. Reset acts at
/// the edge: its cycle still picks from the old state.
#[test]
fn lrr_circular_with_wrap_around_and_reset() {
    let p = one(8, &[("SCHED", "LRR")]);
    let mut cycles = vec![
        idx(&p, &[2, 5]),
        idx(&p, &[2, 5]),
        idx(&p, &[2, 5]),
        idx(&p, &[7]),
        idx(&p, &[7, 0]),
        idx(&p, &[]),
        idx(&p, &[0]),
        idx(&p, &[3, 6]),
        idx(&p, &[3, 6]),
    ];
    cycles[7].reset = true;
    let picks = [
        Some(2),
        Some(5),
        Some(2),
        Some(7),
        Some(0),
        None,
        Some(0),
        Some(3),
        Some(3),
    ];
    expect(&p, &cycles, &picks);
}

/// LRR ignores classes and ages: with every warp ready it walks 0, 1, 2, ... and wraps.
#[test]
fn lrr_ignores_class_and_age() {
    let p = one(3, &[("SCHED", "LRR")]);
    let c = ready(&p, &[(0, N, 9), (1, O, 5), (2, U, 0)]);
    let cycles = vec![c; 5];
    expect(&p, &cycles, &[0, 1, 2, 0, 1].map(Some));
}

/// GTO: keep the last warp while it is ready, else the oldest (lower index on equal ages);
/// classes are ignored.
#[test]
fn gto_greedy_then_oldest() {
    let p = one(8, &[("SCHED", "GTO")]);
    let w = |j: usize, age: u64| (j, if j.is_multiple_of(2) { N } else { O }, age);
    let cycles = [
        ready(&p, &[w(0, 40), w(1, 30), w(2, 20)]),
        ready(&p, &[w(0, 40), w(1, 30), w(2, 20), w(3, 10)]),
        ready(&p, &[w(0, 40), w(1, 30), w(3, 10)]),
        ready(&p, &[w(0, 40), w(1, 30), w(3, 10)]),
        ready(&p, &[]),
        ready(&p, &[w(0, 40), w(1, 30)]),
        ready(&p, &[w(0, 40), w(4, 40)]),
    ];
    let picks = [Some(2), Some(2), Some(3), Some(3), None, Some(1), Some(0)];
    expect(&p, &cycles, &picks);
}

/// TWO_LEVEL, 24 warps in groups 0-7, 8-15, 16-23: LRR inside the current group (wrapping
/// inside it), moving to the next group with a ready warp (its lowest) only when the current
/// one has none, circularly over the groups.
#[test]
fn two_level_groups_of_eight() {
    let p = one(24, &[("SCHED", "TWO_LEVEL")]);
    let cycles = [
        idx(&p, &[3, 5, 10]),
        idx(&p, &[3, 5, 10]),
        idx(&p, &[3, 5, 10]), // wraps inside group 0, not to 10
        idx(&p, &[10, 20]),   // group 0 empty: group 1
        idx(&p, &[9, 10, 20]),
        idx(&p, &[2, 20]),  // group 1 empty: group 2 comes first after it
        idx(&p, &[2, 17]),  // inside group 2, wrapping from 20
        idx(&p, &[2]),      // group 2 empty: circularly to group 0
        idx(&p, &[1, 23]),  // stays in group 0: wraps to 1
        idx(&p, &[]),       // nothing ready: last stays
        idx(&p, &[12, 15]), // group 0 empty: 12 is group 1's lowest
    ];
    let picks = [3, 5, 3, 10, 9, 20, 17, 2, 1, 0, 12].map(Some);
    let mut picks = picks.to_vec();
    picks[9] = None;
    expect(&p, &cycles, &picks);
}

/// TWO_LEVEL with a partial last group (20 warps: 0-7, 8-15, 16-19) and after reset.
#[test]
fn two_level_partial_last_group() {
    let p = one(20, &[("SCHED", "TWO_LEVEL")]);
    let mut cycles = vec![
        idx(&p, &[18]), // group 0 (after reset) empty; group 1 empty; group 2
        idx(&p, &[16, 19, 3]),
        idx(&p, &[16, 19, 3]), // wraps inside the 4-warp group
        idx(&p, &[3]),
        idx(&p, &[9, 17]),
        idx(&p, &[9, 17]),
    ];
    cycles[4].reset = true;
    let picks = [18, 19, 16, 3, 9, 9].map(Some);
    expect(&p, &cycles, &picks);
}

/// A scheduler with one warp, and the paper's 24 under OWF.
#[test]
fn one_warp_and_the_paper_shape() {
    let p = one(1, &[("SCHED", "LRR")]);
    expect(
        &p,
        &[idx(&p, &[0]), idx(&p, &[]), idx(&p, &[0])],
        &[Some(0), None, Some(0)],
    );
    let p = Params::default();
    assert_eq!(p.ws(), 24);
    let warps = [(23, N, 0), (17, U, 9), (12, O, 30), (8, O, 30)];
    drain(&p, &warps, &[8, 12, 17, 23]);
}

/// TWO_LEVEL_ACTIVE (docs §4.1, GPGPU-Sim `two_level_active:N:0:1`) on `ws` warps, N = `n`.
fn tla(ws: u32, n: u32) -> Params {
    let n = n.to_string();
    one(
        ws,
        &[("SCHED", "TWO_LEVEL_ACTIVE"), ("TL_ACTIVE", n.as_str())],
    )
}

/// A cycle with the listed warps ready and the listed warps waiting.
fn rw(p: &Params, ready_js: &[usize], wait: &[usize]) -> Inputs {
    let mut c = idx(p, ready_js);
    for &j in wait {
        c.waiting[j] = true;
    }
    c
}

/// After each issue the active list restarts after the issued warp (`order_lrr`); pending
/// warps never issue, ready or not.
#[test]
fn two_level_active_rotates_lrr_after_an_issue() {
    let p = tla(8, 4);
    let all: Vec<usize> = (0..8).collect();
    let cycles = vec![rw(&p, &all, &[]); 6];
    expect(&p, &cycles, &[0, 1, 2, 3, 0, 1].map(Some));
}

/// A long-op warp leaves the active list for the pending FIFO's back; the FIFO's front takes
/// its place at the list's end.
#[test]
fn two_level_active_demotes_a_waiting_warp() {
    let p = tla(8, 4);
    let all: Vec<usize> = (0..8).collect();
    let mut cycles = vec![rw(&p, &all, &[]); 5];
    // Active [0 1 2 3]: 0 waits → [1 2 3 4], pending [5 6 7 0]; 1 issues → [2 3 4 1].
    cycles[0] = rw(&p, &all, &[0]);
    expect(&p, &cycles, &[1, 2, 3, 4, 1].map(Some));
}

/// Promotion is SRR: the pending FIFO's front first, the demoted in list order at its back.
#[test]
fn two_level_active_promotes_in_fifo_order() {
    let p = tla(8, 2);
    let cycles = [
        // [0 1] | [2 3 4 5 6 7] → both wait: [2 3] | [4 5 6 7 0 1]; 5 is pending.
        rw(&p, &[5], &[0, 1]),
        // 2 waits: [3 4] | [5 6 7 0 1 2].
        rw(&p, &[5], &[2]),
        // 3, 4 wait: [5 6] | [7 0 1 2 3 4]; 5 issues → [6 5].
        rw(&p, &[5], &[3, 4]),
        // 6, 5 wait: [7 0] | [1 2 3 4 6 5]; 7 issues → [0 7].
        rw(&p, &[0, 7], &[6, 5]),
        rw(&p, &[0, 7], &[]),
    ];
    expect(&p, &cycles, &[None, None, Some(5), Some(7), Some(0)]);
}

/// Fewer warps than N: all are active, pending stays empty, a waiting warp moves to the list's
/// back (GPGPU-Sim would read the empty FIFO's front; docs §4.1).
#[test]
fn two_level_active_with_fewer_warps_than_n() {
    let p = tla(3, 6);
    let cycles = [
        rw(&p, &[0, 1, 2], &[]),  // [0 1 2]: 0 → [1 2 0]
        rw(&p, &[0, 1, 2], &[1]), // 1 waits: [2 0 1]; 2 → [0 1 2]
        rw(&p, &[1], &[]),        // 1 → [2 0 1]
        rw(&p, &[0, 1, 2], &[]),  // 2
    ];
    expect(&p, &cycles, &[0, 2, 1, 2].map(Some));
}

/// GPGPU-Sim's algorithm by hand at the paper's N = 6, with a reset (`add_supervised_warp_id`
/// order again); active | pending shown before each issue.
#[test]
fn two_level_active_matches_gpgpu_sim_by_hand() {
    let p = tla(8, 6);
    let all: Vec<usize> = (0..8).collect();
    let mut cycles = vec![
        // [0 1 2 3 4 5] | [6 7]: 0 → [1 2 3 4 5 0]
        rw(&p, &all, &[]),
        // 1, 3 wait: [2 4 5 0 6 7] | [1 3]: 2 → [4 5 0 6 7 2]
        rw(&p, &[2, 4, 5, 0, 6, 7], &[1, 3]),
        // 0 → [6 7 2 4 5 0]
        rw(&p, &[7, 0], &[]),
        // 2 waits: [6 7 4 5 0 1] | [3 2]: 5 → [0 1 6 7 4 5]
        rw(&p, &[1, 3, 5], &[2]),
        // reset in this cycle: 0 issues from the old list, then [0 1 2 3 4 5] | [6 7]
        rw(&p, &all, &[]),
        // 3 → [4 5 0 1 2 3]
        rw(&p, &[3], &[]),
    ];
    cycles[4].reset = true;
    expect(&p, &cycles, &[0, 2, 0, 5, 0, 3].map(Some));
}

/// The other policies ignore `waiting`.
#[test]
fn wait_changes_no_other_policy() {
    for sched in ["LRR", "GTO", "OWF", "TWO_LEVEL"] {
        let p = one(4, &[("SCHED", sched)]);
        let cycles = vec![rw(&p, &[0, 1, 2, 3], &[0, 1, 2, 3]); 4];
        let quiet = vec![idx(&p, &[0, 1, 2, 3]); 4];
        let (a, b) = (check::directed(&p, &cycles), check::directed(&p, &quiet));
        let picks = |o: &[smrtl_hdl::blocks::warp_scheduler::port::Outputs]| {
            o.iter().map(|o| o.iss_idx).collect::<Vec<_>>()
        };
        assert_eq!(picks(&a), picks(&b), "{sched}");
    }
}
