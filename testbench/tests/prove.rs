//! `smrtl prove` machinery on a real block (docs/prove.md): the lock table's invariants
//! (docs/scratchpad-sharing.md §2.4) proven by BMC and k-induction on its emitted Verilog for
//! every configuration `smrtl prove --all-configs` covers; the planted drain fault found with a
//! counterexample VCD that names the failing property; the structural registered-only check
//! failing on a Mealy output; contradictory assumptions refused.

use smrtl_hdl::lock_table::{build_with, Fault, Params};
use smrtl_hdl::BlockParams;
use smrtl_synth::prove::{self, Kind, Property, Run, Verdict};
use smrtl_testbench::lock_table::{proof, LockTableBench};
use smrtl_testbench::milg::{proof as milg_proof, MilgBench};
use smrtl_testbench::qbmi_arb::QbmiArbBench;
use smrtl_testbench::rbmi_arb::{proof as rbmi_proof, RbmiArbBench};
use smrtl_testbench::{external, Bench, Design};

fn small() -> Params {
    Params::resolve(Some("small"), &[]).unwrap()
}

#[test]
fn lock_table_invariants_are_proven_on_every_proof_config() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    let configs = LockTableBench::proof_configs();
    assert!(configs.len() >= 5);
    for p in configs {
        let d = Design::new::<LockTableBench>(&p);
        let proof = d.proof.as_ref().expect("lock_table declares properties");
        assert!(proof.count(Kind::Assume) >= 10 && proof.count(Kind::Assert) >= 10);
        let r = prove::prove(&d.verilog(), &d.module.name, &d.module.ports(), proof).unwrap();
        eprintln!(
            "lock_table {}: BMC depth {} {:.1} s, induction {:.1} s",
            d.params, r.bmc_depth, r.bmc_seconds, r.induction_seconds
        );
        for o in &r.outcomes {
            assert!(
                o.verdict.is_proven(),
                "{}: {} {}",
                d.params,
                o.name,
                o.verdict
            );
        }
        assert!(r.counterexample.is_none());
        assert_eq!(r.outcomes.len(), proof.properties.len() - r.assumptions);
    }
}

#[test]
fn planted_drain_fault_fails_with_a_counterexample_vcd() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    let p = small();
    let m = build_with(&p, Fault::ReleaseIgnoresDrain);
    let verilog = smrtl_hdl::verilog::emit(&m, &[]);
    let r = prove::prove(&verilog, &m.name, &m.ports(), &proof(&p)).unwrap();
    assert!(!r.proven());
    let cex = r.counterexample.as_ref().expect("a counterexample");
    assert_eq!(cex.run, Run::Bmc);
    // Reset, acquire with one access in flight, done: released with the access in flight.
    assert!(cex.step <= 3, "step {}", cex.step);
    let drained: Vec<&String> = cex
        .properties
        .iter()
        .filter(|n| n.starts_with("drained_on_release_"))
        .collect();
    assert!(!drained.is_empty(), "{:?}", cex.properties);
    let failed = r
        .outcomes
        .iter()
        .find(|o| &&o.name == drained.first().unwrap())
        .unwrap();
    assert_eq!(failed.verdict, Verdict::Failed { step: cex.step });
    // Properties that did not fail are not claimed proven.
    assert!(r
        .outcomes
        .iter()
        .filter(|o| o.kind == Kind::Assert)
        .all(|o| !o.verdict.is_proven()));
    // The VCD names the failing property's wire, the DUT's registers and the ports.
    let vcd = String::from_utf8_lossy(&cex.vcd);
    for needle in [
        format!("ok_{}", drained[0]),
        "dut.pend_0_q".to_string(),
        "rel_fire".to_string(),
    ] {
        assert!(vcd.contains(&needle), "{needle} not in the VCD");
    }
}

#[test]
fn a_mealy_output_is_not_registered_only() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    let p = small();
    let d = Design::new::<LockTableBench>(&p);
    let mut pr = proof(&p);
    pr.properties.push(Property::registered("gnt"));
    let r = prove::prove(&d.verilog(), &d.module.name, &d.module.ports(), &pr).unwrap();
    let gnt = r
        .outcomes
        .iter()
        .find(|o| o.name == "gnt_registered")
        .unwrap();
    match &gnt.verdict {
        Verdict::DependsOnInputs { inputs } => {
            for i in ["rq_valid", "rq_slot", "needs_lock", "shtb"] {
                assert!(inputs.iter().any(|x| x == i), "{i} in {inputs:?}");
            }
            assert!(!inputs.iter().any(|x| x == "clock"));
        }
        v => panic!("gnt: {v}"),
    }
    assert!(!r.proven());
}

#[test]
fn contradictory_assumptions_are_an_error() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    let p = small();
    let d = Design::new::<LockTableBench>(&p);
    let mut pr = proof(&p);
    pr.properties
        .push(Property::assume("never", "rq_valid[0] && !rq_valid[0]"));
    let e = prove::prove(&d.verilog(), &d.module.name, &d.module.ports(), &pr).unwrap_err();
    assert!(e.to_string().contains("contradict"), "{e}");
}

#[test]
fn a_weak_invariant_is_not_inductive_until_strengthened() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    // "Slot 0 has accesses in flight only while someone holds its pair's lock" holds from
    // reset, but alone it is not inductive: a state where the partner holds the lock while
    // slot 0 has accesses in flight satisfies it forever, until the partner releases. The
    // strengthening `in_flight_holds_lock_*` (the holder is the slot itself) closes it.
    let p = small();
    let d = Design::new::<LockTableBench>(&p);
    let full = proof(&p);
    let mut weak = full.clone();
    weak.properties.retain(|x| x.kind == Kind::Assume);
    weak.properties.push(Property::assert(
        "someone_holds_0",
        "pend_0 == 6'd0 || lock_valid[pair_0]",
    ));
    let r = prove::prove(&d.verilog(), &d.module.name, &d.module.ports(), &weak).unwrap();
    let cex = r.counterexample.as_ref().expect("induction fails");
    assert_eq!(cex.run, Run::Induction);
    assert_eq!(cex.properties, ["someone_holds_0"]);
    assert_eq!(
        r.outcomes[0].verdict,
        Verdict::NotInductive {
            bmc_depth: weak.bmc_depth,
            k: weak.induction_depth
        }
    );
    let mut strong = weak.clone();
    strong.properties.extend(
        full.properties
            .iter()
            .filter(|x| x.name.starts_with("in_flight_holds_lock_"))
            .cloned(),
    );
    let r = prove::prove(&d.verilog(), &d.module.name, &d.module.ports(), &strong).unwrap();
    assert!(r.proven(), "{:?}", r.outcomes);
}

#[test]
fn milg_invariants_are_proven_in_every_mode() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    let configs = MilgBench::proof_configs();
    assert_eq!(configs.len(), 8);
    for p in configs {
        let d = Design::new::<MilgBench>(&p);
        let proof = d.proof.as_ref().unwrap();
        let r = prove::prove(&d.verilog(), &d.module.name, &d.module.ports(), proof).unwrap();
        eprintln!(
            "milg {}: BMC depth {} {:.1} s, induction {:.1} s",
            d.params, r.bmc_depth, r.bmc_seconds, r.induction_seconds
        );
        for o in &r.outcomes {
            assert!(
                o.verdict.is_proven(),
                "{}: {} {}",
                d.params,
                o.name,
                o.verdict
            );
        }
    }
}

#[test]
fn milg_planted_peak_fault_fails_at_a_boundary() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    let p = smrtl_hdl::milg::Params::resolve(Some("small"), &[]).unwrap();
    let m = smrtl_hdl::milg::build_with(&p, smrtl_hdl::milg::Fault::PeakNotRestarted);
    let verilog = smrtl_hdl::verilog::emit(&m, &[]);
    let r = prove::prove(&verilog, &m.name, &m.ports(), &milg_proof(&p)).unwrap();
    let cex = r.counterexample.as_ref().expect("a counterexample");
    assert_eq!(cex.run, Run::Bmc);
    assert_eq!(cex.properties, ["peak_restarts_at_boundary"]);
    // Eight accepted requests end the first interval (3-bit reqcnt).
    assert!(cex.step >= 9, "step {}", cex.step);
    assert!(String::from_utf8_lossy(&cex.vcd).contains("ok_peak_restarts_at_boundary"));
}

#[test]
fn rbmi_invariants_are_proven_for_every_n_and_the_pointer_fault_fails() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    for p in RbmiArbBench::proof_configs() {
        let d = Design::new::<RbmiArbBench>(&p);
        let proof = d.proof.as_ref().unwrap();
        let r = prove::prove(&d.verilog(), &d.module.name, &d.module.ports(), proof).unwrap();
        for o in &r.outcomes {
            assert!(
                o.verdict.is_proven(),
                "{}: {} {}",
                d.params,
                o.name,
                o.verdict
            );
        }
    }
    let p = smrtl_hdl::rbmi_arb::Params { n: 3 };
    let m = smrtl_hdl::rbmi_arb::build_with(&p, smrtl_hdl::rbmi_arb::Fault::PointerSteps);
    let verilog = smrtl_hdl::verilog::emit(&m, &[]);
    let r = prove::prove(&verilog, &m.name, &m.ports(), &rbmi_proof(&p)).unwrap();
    let cex = r.counterexample.as_ref().expect("a counterexample");
    assert_eq!(cex.run, Run::Bmc);
    assert!(
        cex.properties.iter().any(|n| n == "last_follows_grant"),
        "{:?}",
        cex.properties
    );
}

#[test]
fn qbmi_invariants_are_proven_for_every_n() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    let configs = QbmiArbBench::proof_configs();
    for n in 1..=3 {
        assert!(configs.iter().any(|p| p.n == n), "N = {n} proven");
    }
    for p in configs {
        let d = Design::new::<QbmiArbBench>(&p);
        let proof = d.proof.as_ref().unwrap();
        let r = prove::prove(&d.verilog(), &d.module.name, &d.module.ports(), proof).unwrap();
        eprintln!(
            "qbmi_arb {}: BMC depth {} {:.1} s, induction {:.1} s",
            d.params, r.bmc_depth, r.bmc_seconds, r.induction_seconds
        );
        for o in &r.outcomes {
            assert!(
                o.verdict.is_proven(),
                "{}: {} {}",
                d.params,
                o.name,
                o.verdict
            );
        }
    }
}
