//! One warp scheduler (docs/scratchpad-sharing.md §4): directed sequences worked out by hand
//! (A16's OWF order, OWF2, UWF, GREEDY, LRR with wrap-around and reset, GTO, TWO_LEVEL group
//! moves and a partial last group), each checked on the model and on rusthdl; random
//! co-simulation of every SCHED × RANK × GREEDY setting over several shapes on rusthdl, a few on
//! Verilator, each setting's Verilog linted and run on Icarus; a planted tie-break bug that the
//! random run must catch; the state bits in Yosys.

use smrtl_cosim::blocks::warp_scheduler::Warp;
use smrtl_cosim::harness::backend::icarus::run_batch;
use smrtl_cosim::harness::backend::{rusthdl::RustHdl, verilator::VerilatorLib};
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::sharing::Class;
use smrtl_hdl::blocks::warp_scheduler::{build_with, port, Fault, Params};
use smrtl_hdl::{BlockParams, Module};
use smrtl_testbench::blocks::warp_scheduler::{encode, Cycle, WarpSchedulerBench};
use smrtl_testbench::check;
use smrtl_testbench::{external, Case, Design, OldBench};
use std::sync::Arc;

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

fn rusthdl(m: &Arc<Module>) -> impl Fn() -> Box<dyn smrtl_cosim::Rtl> + '_ {
    move || Box::new(RustHdl::new(m.clone()))
}

const O: u64 = Class::Owner as u64;
const U: u64 = Class::Unshared as u64;
const N: u64 = Class::Nonowner as u64;
/// The unused class code, which reads as NONOWNER.
const CODE3: u64 = 3;

/// A cycle: the listed warps `(index, class, age)` ready, every other warp not ready.
fn ready(p: &Params, warps: &[(usize, u64, u64)]) -> Cycle {
    let mut c = Cycle {
        reset: false,
        warps: vec![Warp::default(); p.ws()],
    };
    for &(j, cls, age) in warps {
        c.warps[j] = Warp {
            ready: true,
            cls,
            age,
        };
    }
    c
}

/// The listed indices ready (class OWNER, age = index).
fn idx(p: &Params, js: &[usize]) -> Cycle {
    let warps: Vec<(usize, u64, u64)> = js.iter().map(|&j| (j, O, j as u64)).collect();
    ready(p, &warps)
}

/// Runs `cycles` on the model and on rusthdl and asserts, on both, each cycle's pick
/// (`None` = `iss_valid` 0, with `iss_idx` 0) and the `last` state shown in that cycle.
fn expect(p: &Params, cycles: &[Cycle], picks: &[Option<u64>]) {
    assert_eq!(cycles.len(), picks.len());
    let d = Design::old::<WarpSchedulerBench>(p);
    let case: Case = cycles.iter().map(|c| encode(p, &d.layout, c)).collect();
    // last as the state shows it: cleared by reset, else the previous cycle's pick.
    let mut lasts = vec![];
    let mut last = None;
    for (c, pick) in cycles.iter().zip(picks) {
        lasts.push(last);
        last = if c.reset { None } else { pick.or(last) };
    }
    let sims: Vec<Box<dyn Simulator>> = vec![d.model(), Box::new(RustHdl::new(d.module.clone()))];
    for mut sim in sims {
        let get = |out: &[u64], name: &str| d.layout.read_out(out, name);
        for (c, inputs) in case.iter().enumerate() {
            let mut out = vec![0; d.layout.out_words];
            sim.step(inputs, &mut out);
            let got = (get(&out, port::ISS_VALID) == 1).then(|| get(&out, port::ISS_IDX));
            assert_eq!(got, picks[c], "pick in cycle {c} on {}", sim.name());
            assert_eq!(get(&out, port::ISS_IDX), picks[c].unwrap_or(0));
            let state = (get(&out, port::LAST_VALID) == 1).then(|| get(&out, port::LAST_IDX));
            assert_eq!(state, lasts[c], "last in cycle {c} on {}", sim.name());
        }
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

/// Every SCHED × RANK × GREEDY setting that changes the RTL.
fn settings() -> Vec<Vec<(&'static str, &'static str)>> {
    let mut v = vec![];
    for rank in ["OWF3", "OWF2", "UWF"] {
        for greedy in ["false", "true"] {
            v.push(vec![("SCHED", "OWF"), ("RANK", rank), ("GREEDY", greedy)]);
        }
    }
    for sched in ["LRR", "GTO", "TWO_LEVEL"] {
        v.push(vec![("SCHED", sched)]);
    }
    v
}

/// (W, NSCHED) giving WS = 1, 2, 3, 8, 24, 32 and 128, and a small AGE_W (equal ages are
/// common), except the paper's shape at AGE_W 16.
const SHAPES: [(&str, &str, &str); 8] = [
    ("4", "4", "3"),
    ("4", "2", "3"),
    ("3", "1", "3"),
    ("8", "1", "3"),
    ("96", "4", "3"),
    ("128", "4", "3"),
    ("128", "1", "3"),
    ("96", "4", "16"),
];

/// ≥ 100k random cycles on rusthdl per setting, spread over the shapes.
#[test]
fn random_rusthdl_every_setting_and_shape() {
    let per_shape = 100_000 / SHAPES.len() as u64 + 1;
    for (k, setting) in settings().into_iter().enumerate() {
        let mut total = 0;
        for (s, &(w, nsched, age_w)) in SHAPES.iter().enumerate() {
            let mut sets = setting.clone();
            sets.extend([("W", w), ("NSCHED", nsched), ("AGE_W", age_w)]);
            let d = Design::old::<WarpSchedulerBench>(&params("paper", &sets));
            let r = check::random(&d, &rusthdl(&d.module), per_shape, (k * 16 + s) as u64);
            assert!(
                r.failure.is_none(),
                "{sets:?}: {:?}",
                r.failure.map(|f| f.mismatch)
            );
            total += r.cycles;
        }
        assert!(total >= 100_000, "{setting:?}: {total} cycles");
    }
}

/// A few thousand cycles on Verilator: the small preset under three policies.
#[test]
fn random_verilator_small() {
    if !external("verilator") {
        return;
    }
    let runs: [&[(&str, &str)]; 3] = [
        &[("SCHED", "OWF"), ("GREEDY", "true"), ("AGE_W", "3")],
        &[("SCHED", "TWO_LEVEL"), ("W", "24"), ("NSCHED", "1")],
        &[("SCHED", "GTO"), ("AGE_W", "3")],
    ];
    for (k, sets) in runs.into_iter().enumerate() {
        let d = Design::old::<WarpSchedulerBench>(&params("small", sets));
        let lib = VerilatorLib::load(&d.module, &d.verilog()).unwrap();
        let factory = || Box::new(lib.instance().unwrap()) as Box<dyn smrtl_cosim::Rtl>;
        let r = check::random(&d, &factory, 3_000, 40 + k as u64);
        assert!(
            r.failure.is_none(),
            "{sets:?}: {:?}",
            r.failure.map(|f| f.mismatch)
        );
        assert!(r.cycles >= 3_000);
    }
}

/// The emitted Verilog of every policy passes `verilator --lint-only -Wall` (the project's
/// waivers) and simulates on Icarus exactly as the model does.
#[test]
fn verilog_lints_and_runs_on_icarus() {
    for setting in settings() {
        let mut sets = setting.clone();
        sets.extend([("W", "24"), ("NSCHED", "1"), ("AGE_W", "3")]);
        let d = Design::old::<WarpSchedulerBench>(&params("paper", &sets));
        let v = d.verilog();
        if external("verilator") {
            smrtl_synth::lint_verilator(&v, &d.module.name).unwrap();
        }
        if external("iverilog") {
            let case = check::first_cycles(&d, 8, 300);
            let want = check::run_vectors(&d, None, &case, None).outputs;
            let got = run_batch(&d.module, &v, &case).unwrap().outputs;
            assert!(got == want, "Icarus differs from the model on {sets:?}");
        }
    }
}

/// The scheduler with a planted bug: key ties go to the higher index.
struct Broken;

impl OldBench for Broken {
    type Params = Params;
    const SUMMARY: &'static str = "warp_scheduler with a deliberate bug";
    fn module(p: &Params) -> Module {
        build_with(p, Fault::TieTakesHigherIndex)
    }
    fn model(p: &Params, layout: &Layout) -> Box<dyn Simulator + Send> {
        WarpSchedulerBench::model(p, layout)
    }
    fn cases(p: &Params, layout: &Layout) -> proptest::strategy::BoxedStrategy<Case> {
        WarpSchedulerBench::cases(p, layout)
    }
}

#[test]
fn broken_tie_break_is_caught_and_shrunk() {
    let d = Design::old::<Broken>(&params("small", &[("AGE_W", "3")]));
    let r = check::random(&d, &rusthdl(&d.module), 100_000, 9);
    let f = r.failure.expect("the broken RTL must be caught");
    assert_eq!(f.mismatch.port, port::ISS_IDX, "{}", f.mismatch);
    let again = check::run_case(&d, &rusthdl(&d.module), &f.minimal, None);
    assert_eq!(again.mismatch, Some(f.mismatch));
}

/// Spec §7: 1 + ⌈log2 WS⌉ state bits per scheduler as Yosys reads them; the SM row is 26.
#[test]
fn state_bits_in_yosys() {
    if !external("yosys") {
        return;
    }
    let (s, _) = smrtl_synth::blocks::warp_scheduler::cost(&Params::default()).unwrap();
    assert_eq!(
        (
            s.formula_bits,
            s.netlist_bits,
            s.yosys_rtl_bits,
            s.sm_row_bits
        ),
        (6, 6, 6, 26)
    );
    let n = WarpSchedulerBench::cost_notes(&params("small", &[])).unwrap();
    assert!(
        n.lines[0].contains("1 + 2 = 3 flip-flops"),
        "{}",
        n.lines[0]
    );
}
