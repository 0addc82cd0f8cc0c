//! Random block-level co-simulation of the detector (docs/bank-conflicts.md §2.4 (3)): ≥ 10^5
//! cycles per configuration on rusthdl across L, modes and P; the `kepler` and `ep8` presets on
//! Verilator; and a deliberately broken RTL that must be caught, shrunk and shown in a VCD.

mod common;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use smrtl_cosim::blocks::bank_conflict_detector::Model;
use smrtl_cosim::harness::backend::{rusthdl::RustHdl, verilator::VerilatorLib};
use smrtl_cosim::harness::vcd_out;
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::bank_conflict_detector::{build_with, Fault, Params};
use smrtl_hdl::{BlockParams, Module};
use smrtl_testbench::blocks::bank_conflict_detector::{access, encode, Detector, CASE_CYCLES};
use smrtl_testbench::check::{self, run_case};
use smrtl_testbench::{external, Case, Design, OldBench};
use std::sync::Arc;

const CYCLES: u64 = 100_000;

fn design(preset: &str, sets: &[(&str, String)]) -> Design {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    Design::old::<Detector>(&Params::resolve(Some(preset), &sets).unwrap())
}

fn rusthdl(m: &Arc<Module>) -> impl Fn() -> Box<dyn smrtl_cosim::Rtl> + '_ {
    move || Box::new(RustHdl::new(m.clone()))
}

fn sweep_lanes(lanes: u32) {
    for mode in ["literal", "multicast", "gpgpusim-limited"] {
        for ports in [1, 2, 4] {
            let d = design(
                "kepler",
                &[
                    ("L", lanes.to_string()),
                    ("B", lanes.to_string()),
                    ("MODE", mode.into()),
                    ("P", ports.to_string()),
                ],
            );
            let r = check::random(&d, &rusthdl(&d.module), CYCLES, 7);
            assert!(
                r.failure.is_none(),
                "L={lanes} {mode} P={ports}: {:?}",
                r.failure.map(|f| f.mismatch)
            );
            assert!(r.cycles >= CYCLES);
        }
    }
}

#[test]
fn random_rusthdl_l8() {
    sweep_lanes(8);
}

#[test]
fn random_rusthdl_l16() {
    sweep_lanes(16);
}

#[test]
fn random_rusthdl_l32() {
    sweep_lanes(32);
}

/// W = 4 and registered outputs, which the kepler-based sweep does not cover.
#[test]
fn random_rusthdl_w4_and_reg_out() {
    for (preset, reg) in [
        ("fermi", "0"),
        ("tesla", "1"),
        ("ep8", "1"),
        ("kepler", "1"),
    ] {
        let d = design(
            preset,
            &[("REG_OUT", reg.into()), ("MODE", "gpgpusim-limited".into())],
        );
        let r = check::random(&d, &rusthdl(&d.module), CYCLES / 4, 11);
        assert!(
            r.failure.is_none(),
            "{preset} REG_OUT={reg}: {:?}",
            r.failure.map(|f| f.mismatch)
        );
    }
}

#[test]
fn random_verilator_presets() {
    if !external("verilator") {
        return;
    }
    for preset in ["kepler", "ep8"] {
        let d = design(preset, &[]);
        let lib = VerilatorLib::load(&d.module, &d.verilog()).unwrap();
        let factory = || Box::new(lib.instance().unwrap()) as Box<dyn smrtl_cosim::Rtl>;
        let r = check::random(&d, &factory, CYCLES, 3);
        assert!(
            r.failure.is_none(),
            "{preset}: {:?}",
            r.failure.map(|f| f.mismatch)
        );
    }
}

/// The detector with a planted bug, for the harness to find.
struct Broken;

impl OldBench for Broken {
    type Params = Params;
    const SUMMARY: &'static str = "the detector with a deliberate bug";
    fn module(p: &Params) -> Module {
        build_with(p, Fault::Lane1IgnoresLayer)
    }
    fn model(p: &Params, layout: &Layout) -> Box<dyn Simulator + Send> {
        Box::new(Model::new(p, layout))
    }
    fn cases(p: &Params, layout: &Layout) -> BoxedStrategy<Case> {
        Detector::cases(p, layout)
    }
}

fn broken_design() -> Design {
    Design::old::<Broken>(&Params::resolve(Some("ep8"), &[]).unwrap())
}

/// Lane 1 in lane 0's bank but another layer: the broken RTL merges them, degree 1 instead of 2.
fn check_caught(d: &Design, factory: &dyn Fn() -> Box<dyn smrtl_cosim::Rtl>, internals: bool) {
    let r = check::random(d, factory, CYCLES, 1);
    let f = r.failure.expect("the broken RTL must be caught");
    println!(
        "FAIL {}: {}\nshrunk from {} to {} cycle(s) in {} steps",
        d.name,
        f.mismatch,
        f.original_cycles,
        f.minimal.len(),
        f.shrink_steps
    );
    assert_eq!(f.mismatch.port, "degree");
    assert_eq!(
        f.minimal.len(),
        1,
        "a combinational bug shrinks to one cycle"
    );
    assert!(f.original_cycles <= CASE_CYCLES);
    // The minimal case still fails on replay, and it fails for the planted reason.
    let again = run_case(d, factory, &f.minimal, Some(16));
    let m = again.mismatch.expect("minimal case fails");
    assert_eq!(m, f.mismatch);
    assert!(
        m.expected[0] > m.actual[0],
        "the fault merges accesses: fewer cycles than the model"
    );

    // The VCD shows it: parse it back and check the values of the mismatching cycle.
    let mut text = vec![];
    vcd_out::write(&mut text, d.name, &d.layout, again.trace.as_ref().unwrap()).unwrap();
    let seen = common::parse_vcd(&text, 0);
    let at = |scope: &str, name: &str| {
        seen.iter()
            .find(|(s, n, _)| s == scope && n == name)
            .map(|x| x.2)
            .unwrap_or_else(|| panic!("{scope}.{name} in VCD"))
    };
    assert_eq!(at("model", "degree"), m.expected[0]);
    assert_eq!(at("rtl", "degree"), m.actual[0]);
    assert_eq!(at("top", "mismatch"), 1);
    let lane_mask = d.layout.input("lane_mask").unwrap().of(&f.minimal[0])[0];
    assert_eq!(at("stim", "lane_mask"), lane_mask);
    let shows_internals = seen
        .iter()
        .any(|(s, n, _)| s == "rtl" && n.starts_with("lead_"));
    assert_eq!(shows_internals, internals, "RTL internals in the VCD");
}

#[test]
fn broken_rtl_is_caught_on_rusthdl() {
    let d = broken_design();
    check_caught(&d, &rusthdl(&d.module), true);
}

#[test]
fn broken_rtl_is_caught_on_verilator() {
    if !external("verilator") {
        return;
    }
    let d = broken_design();
    let lib = VerilatorLib::load(&d.module, &d.verilog()).unwrap();
    check_caught(&d, &|| Box::new(lib.instance().unwrap()), false);
}

/// A seed reproduces a run bit for bit: the same cases, the same outcome.
#[test]
fn seeds_are_deterministic() {
    let d = design("ep8", &[]);
    let p = Params::resolve(Some("ep8"), &[]).unwrap();
    let strategy = access(&p);
    let draw = |seed| {
        let mut runner = check::runner(seed);
        (0..50)
            .map(|_| {
                encode(
                    &p,
                    &d.layout,
                    &strategy.new_tree(&mut runner).unwrap().current(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(draw(5), draw(5));
    assert_ne!(draw(5), draw(6));
}
