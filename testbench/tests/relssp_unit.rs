//! The `RelsspUnit` (docs/scratchpad-sharing.md §3): directed spec scenarios (A8, A9, A10's
//! relssp side, warp launch, idempotence, several ports in one cycle, same-cycle `done`, the
//! out-of-range rules), each checked on the model and on rusthdl; random co-simulation on
//! rusthdl (small, medium and paper shapes, and edge shapes), Verilator and Icarus; a planted
//! RTL bug that the random run must catch; the storage figure against Yosys.

use smrtl_cosim::blocks::relssp_unit::{Event, WarpIn};
use smrtl_cosim::harness::backend::icarus::run_batch;
use smrtl_cosim::harness::backend::{rusthdl::RustHdl, verilator::VerilatorLib};
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::relssp_unit::{build_with, port, Fault, Params};
use smrtl_hdl::{BlockParams, Module};
use smrtl_testbench::blocks::relssp_unit::{encode, Cycle, RelsspBench};
use smrtl_testbench::check;
use smrtl_testbench::{external, Case, Design, OldBench};
use std::sync::Arc;

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).unwrap()
}

fn rusthdl(m: &Arc<Module>) -> impl Fn() -> Box<dyn smrtl_cosim::Rtl> + '_ {
    move || Box::new(RustHdl::new(m.clone()))
}

/// Each simulator's outputs, cycle by cycle.
struct Runs {
    layout: Layout,
    /// (simulator name, outputs of each cycle).
    runs: Vec<(String, Vec<Vec<u64>>)>,
}

impl Runs {
    /// `cycles` on the model and on rusthdl, from reset.
    fn of(p: &Params, cycles: &[Cycle]) -> Runs {
        let d = Design::old::<RelsspBench>(p);
        let case: Case = cycles.iter().map(|c| encode(p, &d.layout, c)).collect();
        let sims: Vec<Box<dyn Simulator>> =
            vec![d.model(), Box::new(RustHdl::new(d.module.clone()))];
        let runs = sims
            .into_iter()
            .map(|mut sim| {
                let outs = case
                    .iter()
                    .map(|inputs| {
                        let mut out = vec![0; d.layout.out_words];
                        sim.step(inputs, &mut out);
                        out
                    })
                    .collect();
                (sim.name().to_string(), outs)
            })
            .collect();
        Runs {
            layout: d.layout.clone(),
            runs,
        }
    }

    /// Asserts output `port` (≤ 64 bits) of every cycle on every simulator.
    fn expect(&self, port: &str, want: &[u64]) {
        let slot = self.layout.out_slot(port);
        for (name, outs) in &self.runs {
            let got: Vec<u64> = outs.iter().map(|o| slot.get(o)).collect();
            assert_eq!(got, want, "{port} on {name}");
        }
    }

    /// Asserts warp `w`'s release bits (`rbits`) of every cycle on every simulator.
    fn expect_rbits(&self, w: usize, lanes: usize, want: &[u64]) {
        let slot = self.layout.out_slot(port::RBITS);
        for (name, outs) in &self.runs {
            let got: Vec<u64> = outs
                .iter()
                .map(|o| slot.field(o, w * lanes, lanes))
                .collect();
            assert_eq!(got, want, "rbits of warp {w} on {name}");
        }
    }
}

/// Builds cycles on top of a fixed warp map.
struct Script {
    p: Params,
    base: Cycle,
    cycles: Vec<Cycle>,
}

impl Script {
    /// Warps `(w, slot, live)`, valid, on an otherwise idle unit.
    fn new(p: &Params, warps: &[(usize, usize, u64)]) -> Script {
        let mut base = Cycle::idle(p);
        for &(w, slot, live) in warps {
            base.warps[w] = WarpIn {
                valid: true,
                slot,
                live,
                launch: false,
            };
        }
        Script {
            p: p.clone(),
            base,
            cycles: vec![],
        }
    }

    /// One cycle with `events` (port, rel, exit, warp, mask), after `edit` on the warp map.
    fn cycle(
        &mut self,
        events: &[(usize, bool, bool, usize, u64)],
        edit: impl FnOnce(&mut Cycle),
    ) -> &mut Self {
        let mut c = self.base.clone();
        c.events = vec![Event::default(); self.p.nsched as usize];
        for &(q, rel, exit, warp, mask) in events {
            c.events[q] = Event {
                valid: true,
                rel,
                exit,
                warp,
                mask,
            };
        }
        edit(&mut c);
        self.cycles.push(c);
        self
    }

    /// A cycle with events and the warp map unchanged.
    fn events(&mut self, events: &[(usize, bool, bool, usize, u64)]) -> &mut Self {
        self.cycle(events, |_| {})
    }

    /// Changes the warp map from now on.
    fn set_live(&mut self, w: usize, live: u64) -> &mut Self {
        self.base.warps[w].live = live;
        self
    }

    fn run(&self) -> Runs {
        Runs::of(&self.p, &self.cycles)
    }
}

const REL: bool = true;
const NO: bool = false;
const EXIT: bool = true;

/// The small shape: T 4, W 8, LANES 4, NSCHED 2; done/tb_empty of slots without warps read 1.
fn small() -> Params {
    params("small", &[])
}

/// A8: relssp by part of a TB's live threads keeps done at 0; the rest later sets it in that
/// very cycle, and it stays (the bits are held).
#[test]
fn a8_partial_relssp_then_the_rest() {
    let p = small();
    let mut s = Script::new(&p, &[(0, 0, 0b1111), (1, 0, 0b1111)]);
    s.events(&[(0, REL, NO, 0, 0b1111), (1, REL, NO, 1, 0b0011)])
        .events(&[])
        .events(&[(1, REL, NO, 1, 0b1100)])
        .events(&[]);
    let r = s.run();
    r.expect(port::DONE, &[0b1110, 0b1110, 0b1111, 0b1111]);
    r.expect(port::TB_EMPTY, &[0b1110; 4]);
    r.expect_rbits(0, 4, &[0, 0b1111, 0b1111, 0b1111]);
    r.expect_rbits(1, 4, &[0, 0b0011, 0b0011, 0b1111]);
}

/// A9: threads exit without relssp; unlaunched lanes never block; done and tb_empty rise in the
/// cycle the last live thread exits.
#[test]
fn a9_exits_without_relssp_finish_the_tb() {
    let p = small();
    // Warp 3 launched only lanes 0-1.
    let mut s = Script::new(&p, &[(2, 1, 0b1111), (3, 1, 0b0011)]);
    s.events(&[(0, NO, EXIT, 2, 0b0101)]);
    s.set_live(2, 0b1010)
        .events(&[(0, NO, EXIT, 2, 0b1010), (1, NO, EXIT, 3, 0b0011)]);
    s.set_live(2, 0).set_live(3, 0).events(&[]);
    let r = s.run();
    r.expect(port::DONE, &[0b1101, 0b1111, 0b1111]);
    r.expect(port::TB_EMPTY, &[0b1101, 0b1111, 0b1111]);
    r.expect_rbits(2, 4, &[0, 0, 0]);
}

/// A partly exited TB: the exited lanes no longer need relssp, the remaining ones do.
#[test]
fn exited_lanes_do_not_block_the_rest() {
    let p = small();
    let mut s = Script::new(&p, &[(0, 2, 0b1111)]);
    s.events(&[(0, NO, EXIT, 0, 0b0011)]);
    s.set_live(0, 0b1100).events(&[(1, REL, NO, 0, 0b1100)]);
    let r = s.run();
    r.expect(port::DONE, &[0b1011, 0b1111]);
    r.expect(port::TB_EMPTY, &[0b1011, 0b1011]);
}

/// A10, relssp side: relssp by a warp of another slot changes only that slot's done.
#[test]
fn a10_relssp_changes_only_its_own_slot() {
    let p = small();
    let mut s = Script::new(&p, &[(0, 0, 0b1111), (5, 2, 0b1111)]);
    s.events(&[]).events(&[(1, REL, NO, 5, 0b1111)]).events(&[]);
    let r = s.run();
    r.expect(port::DONE, &[0b1010, 0b1110, 0b1110]);
    r.expect_rbits(0, 4, &[0, 0, 0]);
    r.expect_rbits(5, 4, &[0, 0, 0b1111]);
}

/// warp_launch clears the warp's release bits, and wins over a relssp of the same cycle.
#[test]
fn warp_launch_clears_r_and_wins_over_relssp() {
    let p = small();
    let mut s = Script::new(&p, &[(4, 3, 0b1111)]);
    s.events(&[(0, REL, NO, 4, 0b1111)])
        .events(&[])
        .cycle(&[(1, REL, NO, 4, 0b0001)], |c| c.warps[4].launch = true)
        .events(&[])
        .cycle(&[], |c| c.warps[4].launch = true);
    let r = s.run();
    r.expect(port::DONE, &[0b1111, 0b1111, 0b0111, 0b0111, 0b0111]);
    r.expect_rbits(4, 4, &[0, 0b1111, 0b1111, 0, 0]);
}

/// Idempotence: a repeated relssp sets the same bits again (a counter would count 2 + 2 = 4
/// lanes and release).
#[test]
fn repeated_relssp_is_idempotent() {
    let p = small();
    let mut s = Script::new(&p, &[(0, 0, 0b1111)]);
    s.events(&[(0, REL, NO, 0, 0b0011)])
        .events(&[(0, REL, NO, 0, 0b0011)])
        .events(&[(0, REL, NO, 0, 0b0011), (1, REL, NO, 0, 0b0011)])
        .events(&[(1, REL, NO, 0, 0b1000)])
        .events(&[(1, REL, NO, 0, 0b0100)]);
    let r = s.run();
    r.expect(port::DONE, &[0b1110, 0b1110, 0b1110, 0b1110, 0b1111]);
    r.expect_rbits(0, 4, &[0, 0b0011, 0b0011, 0b0011, 0b1011]);
}

/// Several ports in one cycle: their masks OR per warp (relssp on two ports, relssp and exit of
/// the same warp, one instruction carrying both), all counted in done in that cycle.
#[test]
fn events_of_several_ports_in_one_cycle() {
    let p = params("small", &[("NSCHED", "4")]);
    let mut s = Script::new(&p, &[(0, 0, 0b1111), (1, 1, 0b1111), (2, 2, 0b1111)]);
    s.events(&[
        (0, REL, NO, 0, 0b0011),
        (1, REL, NO, 0, 0b1100),
        (2, REL, NO, 1, 0b0110),
        (3, NO, EXIT, 1, 0b1001),
    ]);
    // Next cycle the SM has cleared warp 1's exited lanes; warp 2's one instruction both
    // releases and exits.
    s.set_live(1, 0b0110).events(&[(0, REL, EXIT, 2, 0b1111)]);
    let r = s.run();
    r.expect(port::DONE, &[0b1011, 0b1111]);
    r.expect(port::TB_EMPTY, &[0b1000, 0b1100]);
}

/// "A relssp or exit issued in cycle c counts in done in c": done follows the event in the
/// same cycle, not the next.
#[test]
fn done_in_the_cycle_of_the_event() {
    let p = small();
    let mut s = Script::new(&p, &[(6, 1, 0b0110)]);
    s.events(&[])
        .events(&[(0, REL, NO, 6, 0b0110)])
        .cycle(&[], |c| c.warps[6].launch = true)
        .events(&[(1, NO, EXIT, 6, 0b0110)]);
    let r = s.run();
    r.expect(port::DONE, &[0b1101, 0b1111, 0b1101, 0b1111]);
    r.expect(port::TB_EMPTY, &[0b1101, 0b1101, 0b1101, 0b1111]);
}

/// Out-of-range rules: a warp whose slot id is ≥ T belongs to no slot; an event on a warp id ≥ W
/// is ignored; ev_valid = 0 ignores rel and exit; invalid warps do not count.
#[test]
fn out_of_range_ids_and_invalid_inputs_are_ignored() {
    // T = 3 (slot ids 0..3 in 2 bits), W = 6 (warp ids 0..7 in 3 bits).
    let p = params("small", &[("T", "3"), ("W", "6")]);
    let mut s = Script::new(&p, &[(0, 3, 0b1111), (1, 1, 0b1111), (5, 2, 0b1111)]);
    s.events(&[(0, REL, NO, 7, 0b1111), (1, REL, NO, 6, 0b1111)])
        .cycle(&[(0, REL, EXIT, 1, 0b1111)], |c| c.events[0].valid = false)
        .cycle(&[], |c| c.warps[5].valid = false)
        .events(&[(0, REL, NO, 1, 0b1111)]);
    let r = s.run();
    r.expect(port::DONE, &[0b001, 0b001, 0b101, 0b011]);
    r.expect(port::TB_EMPTY, &[0b001, 0b001, 0b101, 0b001]);
    r.expect_rbits(1, 4, &[0, 0, 0, 0]);
}

/// The paper's shape: a TB of four 32-lane warps releases when its last live thread runs
/// relssp; reset clears R.
#[test]
fn paper_shape_tb_of_four_warps() {
    let p = Params::default();
    let full = u64::from(u32::MAX);
    let warps: Vec<(usize, usize, u64)> = (0..4).map(|w| (40 + w, 9, full)).collect();
    let mut s = Script::new(&p, &warps);
    let all: Vec<(usize, bool, bool, usize, u64)> =
        (0..4).map(|q| (q, REL, NO, 40 + q, full)).collect();
    let slot9 = 1u64 << 9;
    let others = u64::from(u16::MAX) & !slot9;
    s.events(&all[..3])
        .events(&[(0, REL, NO, 43, full >> 1)])
        .events(&[(2, REL, NO, 43, 1 << 31)])
        .cycle(&[], |c| c.reset = true)
        .events(&[]);
    let r = s.run();
    r.expect(
        port::DONE,
        &[others, others, others | slot9, others | slot9, others],
    );
    r.expect_rbits(43, 32, &[0, 0, full >> 1, full, 0]);
}

/// ≥ 100k random cycles on rusthdl for `p`.
fn random(p: &Params, cycles: u64, seed: u64) {
    let d = Design::old::<RelsspBench>(p);
    let r = check::random(&d, &rusthdl(&d.module), cycles, seed);
    assert!(
        r.failure.is_none(),
        "{p:?}: {:?}",
        r.failure.map(|f| f.mismatch)
    );
    assert!(r.cycles >= cycles);
}

#[test]
fn random_rusthdl_small() {
    random(&small(), 100_000, 1);
}

/// T = 6 (slot ids 6 and 7 exist and match no slot), W = 12 (warp ids 12..15 are ignored),
/// 8 lanes, 4 ports.
#[test]
fn random_rusthdl_medium() {
    random(
        &params(
            "small",
            &[("T", "6"), ("W", "12"), ("LANES", "8"), ("NSCHED", "4")],
        ),
        100_000,
        2,
    );
}

#[test]
fn random_rusthdl_paper() {
    random(&Params::default(), 100_000, 3);
}

/// Edge shapes: one lane, one port, T = 2; and 128 warps (buses wider than two words).
#[test]
fn random_rusthdl_edge_shapes() {
    let tiny = params(
        "small",
        &[("T", "2"), ("W", "3"), ("LANES", "1"), ("NSCHED", "1")],
    );
    random(&tiny, 20_000, 4);
    let wide = params(
        "small",
        &[("T", "32"), ("W", "128"), ("LANES", "2"), ("NSCHED", "4")],
    );
    random(&wide, 20_000, 5);
}

#[test]
fn random_verilator_small() {
    if !external("verilator") {
        return;
    }
    let d = Design::old::<RelsspBench>(&small());
    let lib = VerilatorLib::load(&d.module, &d.verilog()).unwrap();
    let factory = || Box::new(lib.instance().unwrap()) as Box<dyn smrtl_cosim::Rtl>;
    let r = check::random(&d, &factory, 5_000, 6);
    assert!(r.failure.is_none(), "{:?}", r.failure.map(|f| f.mismatch));
    assert!(r.cycles >= 5_000);
}

/// The emitted Verilog passes `verilator --lint-only -Wall` (the project's waivers) and
/// simulates on Icarus exactly as the model does.
#[test]
fn verilog_lints_and_runs_on_icarus() {
    for p in [small(), Params::default()] {
        let d = Design::old::<RelsspBench>(&p);
        let v = d.verilog();
        if external("verilator") {
            smrtl_synth::lint_verilator(&v, &d.module.name).unwrap();
        }
        if external("iverilog") {
            let case = check::first_cycles(&d, 8, 300);
            let want = check::run_vectors(&d, None, &case, None).outputs;
            let got = run_batch(&d.module, &v, &case).unwrap().outputs;
            assert!(got == want, "Icarus differs from the model on {p:?}");
        }
    }
}

/// The unit with a planted bug: warp_launch keeps R.
struct Broken;

impl OldBench for Broken {
    type Params = Params;
    const SUMMARY: &'static str = "relssp_unit with a deliberate bug";
    fn module(p: &Params) -> Module {
        build_with(p, Fault::LaunchKeepsR)
    }
    fn model(p: &Params, layout: &Layout) -> Box<dyn Simulator + Send> {
        RelsspBench::model(p, layout)
    }
    fn cases(p: &Params, layout: &Layout) -> proptest::strategy::BoxedStrategy<Case> {
        RelsspBench::cases(p, layout)
    }
}

#[test]
fn broken_rtl_is_caught_and_shrunk() {
    let d = Design::old::<Broken>(&small());
    let r = check::random(&d, &rusthdl(&d.module), 100_000, 7);
    let f = r.failure.expect("the broken RTL must be caught");
    assert!(
        [port::DONE, port::RBITS].contains(&f.mismatch.port.as_str()),
        "{}",
        f.mismatch
    );
    assert!(f.minimal.len() <= f.original_cycles);
    let again = check::run_case(&d, &rusthdl(&d.module), &f.minimal, None);
    assert_eq!(again.mismatch, Some(f.mismatch));
}

/// Spec §7: W·LANES release bits, as Yosys reads them from the Verilog.
#[test]
fn storage_is_w_times_lanes_in_yosys() {
    if !external("yosys") {
        return;
    }
    let p = small();
    let (s, _) = smrtl_synth::blocks::relssp_unit::cost(&p).unwrap();
    assert_eq!(
        (s.formula_bits, s.netlist_bits, s.yosys_rtl_bits),
        (32, 32, 32)
    );
    let n = RelsspBench::cost_notes(&p).unwrap();
    assert!(
        n.lines[0].contains("W x LANES = 8 x 4 = 32"),
        "{}",
        n.lines[0]
    );
}
