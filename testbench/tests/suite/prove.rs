//! `smrtl prove` machinery on a real block (docs/prove.md): the lock table's invariants
//! (docs/scratchpad-sharing.md §2.4) proven by BMC and k-induction on its emitted Verilog for
//! every configuration `smrtl prove --all-configs` covers; the planted drain fault found with a
//! counterexample VCD that names the failing property; the structural registered-only check
//! failing on a Mealy output; contradictory assumptions refused. The seed-004 blocks: `milg`
//! in every mode, `rbmi_arb` and `qbmi_arb` for N = 1..3, and the composed `mem_issue_ctl`
//! for every scheme and N, each with a planted fault found. The `stall_inspector`'s two planted
//! faults (its NW = 4 proof is `tests/suite/prove.rs`'s, through the command). Every configuration is
//! proven by both engines, Yosys's `sat` and `yosys-smtbmc` + z3 (docs/prove.md §3), which must
//! agree; the `smtbmc` proofs that take z3 minutes (QBMI at N = 3, the top's QBMI at N = 2, 3,
//! the stall inspector) are slow-tier tests (`--ignored`, docs/prove.md §4).

use smrtl_hdl::blocks::lock_table::faults::RELEASE_IGNORES_DRAIN;
use smrtl_hdl::blocks::lock_table::{build, Params};
use smrtl_hdl::blocks::mem_issue_ctl::Params as CtlParams;
use smrtl_hdl::blocks::milg::Params as MilgParams;
use smrtl_hdl::BlockParams;
use smrtl_synth::prove::{self, Engine, Kind, Property, Run, Verdict};
use smrtl_testbench::blocks::lock_table::proof;
use smrtl_testbench::blocks::mem_issue_ctl::proof as mem_issue_ctl_proof;
use smrtl_testbench::blocks::milg::proof as milg_proof;
use smrtl_testbench::blocks::rbmi_arb::proof as rbmi_proof;
use smrtl_testbench::{external, Bench, Design};

fn small() -> Params {
    Params::resolve(Some("small"), &[]).unwrap()
}

/// Whether the `smtbmc` engine can run here: yosys-smtbmc and a z3 of at least
/// [`prove::Z3_MIN`] (an older one, Debian's 4.8.12, counts as missing: it does not finish
/// several proofs). Missing under `SMRTL_REQUIRE_TOOLS=1` (CI) is a failure, else a skip.
fn smtbmc_available() -> bool {
    if !smrtl_hdl::tools::external(&prove::SMTBMC_TOOLS) {
        return false;
    }
    match prove::z3_version() {
        Some((major, minor, _)) if (major, minor) >= prove::Z3_MIN => true,
        v => {
            assert!(
                !smrtl_hdl::tools::tools_required(),
                "z3 {v:?} is older than {:?} but SMRTL_REQUIRE_TOOLS=1: the smtbmc engine must run",
                prove::Z3_MIN
            );
            eprintln!("smtbmc skipped: z3 {v:?} is older than {:?}", prove::Z3_MIN);
            false
        }
    }
}

/// Proves every configuration of `designs` with Yosys's `sat` and, where it can run
/// ([`smtbmc_available`]), with `yosys-smtbmc` + z3: both must prove every property; panics
/// naming the first property that is not proven. Returns how many configurations ran.
fn assert_proven(designs: Vec<Design>) -> usize {
    let engines: &[Engine] = if smtbmc_available() {
        &[Engine::Sat, Engine::Smtbmc]
    } else {
        &[Engine::Sat]
    };
    assert_proven_by(designs, engines)
}

/// [`assert_proven`] with these engines.
fn assert_proven_by(designs: Vec<Design>, engines: &[Engine]) -> usize {
    let count = designs.len();
    for d in designs {
        let proof = d.proof.as_ref().expect("the block declares properties");
        let verilog = d.verilog();
        for &engine in engines {
            let ports = d.module.ports();
            let r = prove::prove_with(engine, &verilog, &d.module.name, &ports, proof).unwrap();
            eprintln!(
                "{engine:?} {} {}: BMC depth {} {:.1} s, induction {:.1} s",
                d.module.name, d.params, r.bmc_depth, r.bmc_seconds, r.induction_seconds
            );
            for o in &r.outcomes {
                assert!(
                    o.verdict.is_proven(),
                    "{engine:?} {}: {} {}",
                    d.params,
                    o.name,
                    o.verdict
                );
            }
            assert!(r.counterexample.is_none());
            assert_eq!(r.outcomes.len(), proof.properties.len() - r.assumptions);
        }
    }
    count
}

/// The heavy proofs (the largest configuration of a block: tens of seconds of induction each),
/// numbered across the tests; under `SMRTL_CONFORMANCE_TOOLS_PART=K/M` (CI) heavy proof `j` runs
/// when `j % M == K`, so CI proves each of them every `M` commits and every other configuration
/// on every run (docs/prove.md §4). Unset, every configuration is proven.
mod heavy {
    pub const LOCK_TABLE_T6: usize = 0;
    pub const QBMI_N3: [usize; 2] = [1, 2];
    pub const CTL_QBMI_N3: [usize; 2] = [3, 4];
}

/// `configs` without the heavy ones (`heavy(p)` true) whose slot (`slots`, in order) is not this
/// run's part; the heavy configurations must number `slots.len()`.
fn rotated<P>(configs: Vec<P>, heavy: impl Fn(&P) -> bool, slots: &[usize]) -> Vec<P> {
    let part = smrtl_testbench::soak::tools_part();
    assert_eq!(
        configs.iter().filter(|p| heavy(p)).count(),
        slots.len(),
        "one slot per heavy configuration"
    );
    let mut slot = slots.iter();
    let kept: Vec<P> = configs
        .into_iter()
        .filter(|p| !heavy(p) || part.is_none_or(|(k, m)| slot.next().is_some_and(|j| j % m == k)))
        .collect();
    eprintln!("{} configurations this run", kept.len());
    kept
}

#[test]
fn lock_table_invariants_are_proven_on_every_proof_config() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    let configs = Params::proof_configs();
    assert!(configs.len() >= 5);
    for p in &configs {
        let proof = Design::new(p).proof.expect("declared");
        assert!(proof.count(Kind::Assume) >= 10 && proof.count(Kind::Assert) >= 10);
    }
    let configs = rotated(configs, |p| p.slots == 6, &[heavy::LOCK_TABLE_T6]);
    assert_proven(configs.iter().map(Design::new).collect());
}

#[test]
fn planted_drain_fault_fails_with_a_counterexample_vcd() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    let p = small();
    let m = smrtl_hdl::faults::plant_module(&RELEASE_IGNORES_DRAIN, || build(&p));
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
    smtbmc_fails_too(&verilog, &m, &proof(&p), "drained_on_release_", cex.step);
}

#[test]
fn a_mealy_output_is_not_registered_only() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    let p = small();
    let d = Design::new(&p);
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
    let d = Design::new(&p);
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
    let d = Design::new(&p);
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
    // The same under smtbmc: its induction fails on the weak invariant alone, naming it.
    if smtbmc_available() {
        let (v, ports) = (d.verilog(), d.module.ports());
        let r = prove::smtbmc(&v, &d.module.name, &ports, &weak).unwrap();
        let cex = r
            .counterexample
            .as_ref()
            .expect("induction fails under smtbmc");
        assert_eq!(
            (cex.run, &cex.properties[..]),
            (Run::Induction, &["someone_holds_0".to_string()][..])
        );
        assert_eq!(
            r.outcomes[0].verdict,
            Verdict::NotInductive {
                bmc_depth: weak.bmc_depth,
                k: weak.induction_depth
            }
        );
        let r = prove::smtbmc(&v, &d.module.name, &ports, &strong).unwrap();
        assert!(r.proven(), "{:?}", r.outcomes);
    }
}

#[test]
fn milg_invariants_are_proven_in_every_mode() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    assert_eq!(
        assert_proven(
            MilgParams::proof_configs()
                .iter()
                .map(Design::new)
                .collect()
        ),
        8
    );
}

#[test]
fn milg_planted_peak_fault_fails_at_a_boundary() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    let p = smrtl_hdl::blocks::milg::Params::resolve(Some("small"), &[]).unwrap();
    let m = smrtl_hdl::faults::plant_module(
        &smrtl_hdl::blocks::milg::faults::PEAK_NOT_RESTARTED,
        || smrtl_hdl::blocks::milg::build(&p),
    );
    let verilog = smrtl_hdl::verilog::emit(&m, &[]);
    let r = prove::prove(&verilog, &m.name, &m.ports(), &milg_proof(&p)).unwrap();
    let cex = r.counterexample.as_ref().expect("a counterexample");
    assert_eq!(cex.run, Run::Bmc);
    assert_eq!(cex.properties, ["peak_restarts_at_boundary"]);
    // Eight accepted requests end the first interval (3-bit reqcnt).
    assert!(cex.step >= 9, "step {}", cex.step);
    assert!(String::from_utf8_lossy(&cex.vcd).contains("ok_peak_restarts_at_boundary"));
    smtbmc_fails_too(
        &verilog,
        &m,
        &milg_proof(&p),
        "peak_restarts_at_boundary",
        cex.step,
    );
}

/// Under the `smtbmc` engine (where it can run) the planted fault fails BMC too: an assertion
/// whose name starts with `prefix` among the failing ones, at a step within the BMC depth (z3 may find another trace
/// than `sat`'s step `sat_step`, not a shorter one than the shortest), with a VCD naming it.
fn smtbmc_fails_too(
    verilog: &str,
    m: &smrtl_hdl::Module,
    proof: &prove::Proof,
    prefix: &str,
    sat_step: u32,
) {
    if !smtbmc_available() {
        return;
    }
    let r = prove::smtbmc(verilog, &m.name, &m.ports(), proof).unwrap();
    assert!(!r.proven());
    let cex = r
        .counterexample
        .as_ref()
        .expect("a counterexample under smtbmc");
    eprintln!(
        "smtbmc: {:?} fail at step {} (sat: step {sat_step}); BMC {:.1} s",
        cex.properties, cex.step, r.bmc_seconds
    );
    assert_eq!(cex.run, Run::Bmc);
    let name = cex
        .properties
        .iter()
        .find(|n| n.starts_with(prefix))
        .unwrap_or_else(|| panic!("{prefix}* in {:?}", cex.properties));
    assert!(
        (1..=proof.bmc_depth).contains(&cex.step),
        "step {}",
        cex.step
    );
    let failed = r.outcomes.iter().find(|o| &o.name == name).unwrap();
    assert_eq!(failed.verdict, Verdict::Failed { step: cex.step });
    assert!(
        String::from_utf8_lossy(&cex.vcd).contains(&format!("ok_{name}")),
        "the VCD names ok_{name}"
    );
}

#[test]
fn rbmi_invariants_are_proven_for_every_n_and_the_pointer_fault_fails() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    use smrtl_hdl::blocks::rbmi_arb::{build, faults, Params as RbmiParams};
    assert_eq!(
        assert_proven(
            RbmiParams::proof_configs()
                .iter()
                .map(Design::new)
                .collect()
        ),
        3
    );
    let p = RbmiParams { n: 3 };
    let m = smrtl_hdl::faults::plant_module(&faults::POINTER_STEPS, || build(&p));
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
    let configs = smrtl_hdl::blocks::qbmi_arb::Params::proof_configs();
    for n in 1..=3 {
        assert!(configs.iter().any(|p| p.n == n), "N = {n} proven");
    }
    let configs = rotated(configs, |p| p.n == 3, &heavy::QBMI_N3);
    let (n3, rest): (Vec<_>, Vec<_>) = configs.into_iter().partition(|p| p.n == 3);
    assert_proven(rest.iter().map(Design::new).collect());
    // N = 3 under smtbmc: the slow tier (`smtbmc_proves_the_qbmi_configurations_slow_under_z3`).
    assert_proven_by(n3.iter().map(Design::new).collect(), &[Engine::Sat]);
}

/// `mem_issue_ctl` without QBMI: every MILG mode (Baseline / Rbmi Off, Smil, Dmil) × N = 1..3,
/// `grant = elig` or the RBMI invariants, and the legal SM cycle (docs/prove.md §5.5).
#[test]
fn mem_issue_ctl_is_proven_for_every_scheme_without_qbmi_and_n() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    let (qbmi, rest): (Vec<_>, Vec<_>) = CtlParams::proof_configs()
        .into_iter()
        .partition(|p| p.has_qbmi());
    assert_eq!((qbmi.len(), rest.len()), (6, 12));
    assert_eq!(assert_proven(rest.iter().map(Design::new).collect()), 12);
}

/// `mem_issue_ctl` with QBMI (Qbmi, QbmiDmil) × N = 1..3: the QBMI invariants with the MILGs'
/// boundaries as the sample (the slowest proofs: N = 3's induction, about a minute each).
#[test]
fn mem_issue_ctl_is_proven_for_every_qbmi_scheme_and_n() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    let qbmi: Vec<_> = CtlParams::proof_configs()
        .into_iter()
        .filter(|p| p.has_qbmi())
        .collect();
    assert_eq!(qbmi.len(), 6);
    let qbmi = rotated(qbmi, |p| p.n == 3, &heavy::CTL_QBMI_N3);
    let (n23, n1): (Vec<_>, Vec<_>) = qbmi.into_iter().partition(|p| p.n >= 2);
    assert_proven(n1.iter().map(Design::new).collect());
    // N = 2, 3 under smtbmc: the slow tier (`smtbmc_proves_the_qbmi_configurations_slow_under_z3`).
    assert_proven_by(n23.iter().map(Design::new).collect(), &[Engine::Sat]);
}

/// The configurations whose `smtbmc` proof is too slow for every CI run (docs/prove.md §4):
/// the arbiter's two QBMI N = 3 ones and the top's four QBMI N = 2, 3 ones (minutes of z3 each,
/// several times `sat`'s) under `yosys-smtbmc` + z3; their `sat` proofs are the tests above.
/// The slow tier: `cargo test --release -p smrtl-testbench --test suite prove:: -- --ignored`.
#[test]
#[ignore = "slow tier: cargo test --release -p smrtl-testbench --test suite prove:: -- --ignored"]
fn smtbmc_proves_the_qbmi_configurations_slow_under_z3() {
    if !prove::TOOLS.iter().all(|t| external(t)) || !smtbmc_available() {
        return;
    }
    use smrtl_hdl::blocks::qbmi_arb::Params as QbmiParams;
    let mut slow: Vec<Design> = QbmiParams::proof_configs()
        .iter()
        .filter(|p| p.n == 3)
        .map(Design::new)
        .collect();
    slow.extend(
        CtlParams::proof_configs()
            .iter()
            .filter(|p| p.has_qbmi() && p.n >= 2)
            .map(Design::new),
    );
    assert_eq!(assert_proven_by(slow, &[Engine::Smtbmc]), 6);
}

/// The stall inspector at NW = 8, 1, 4 under both engines (docs/prove.md §4: z3 5.4.1 proves
/// NW = 1 in 56 s but did not finish the NW = 4 or 8 induction in 13 minutes; `sat`: 30 s).
/// The slow tier, as above.
#[test]
#[ignore = "slow tier: cargo test --release -p smrtl-testbench --test suite prove:: -- --ignored"]
fn smtbmc_proves_the_stall_inspector() {
    if !prove::TOOLS.iter().all(|t| external(t)) || !smtbmc_available() {
        return;
    }
    use smrtl_hdl::blocks::stall_inspector::Params as GsiParams;
    let gsi = GsiParams::proof_configs().iter().map(Design::new).collect();
    assert_eq!(assert_proven_by(gsi, &[Engine::Sat, Engine::Smtbmc]), 3);
}

/// The planted wiring bug (kernel 1's MILG counts kernel 0's accesses) breaks kernel 1's
/// request count, with a counterexample VCD.
#[test]
fn mem_issue_ctl_planted_shared_acc_fails_with_a_counterexample() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    use smrtl_hdl::blocks::mem_issue_ctl as top;
    let p = top::Params::resolve(Some("small"), &[]).unwrap();
    let m = smrtl_hdl::faults::plant_module(&top::faults::SHARED_ACC, || top::build(&p));
    let verilog = smrtl_hdl::verilog::emit(&m, &[]);
    let r = prove::prove(&verilog, &m.name, &m.ports(), &mem_issue_ctl_proof(&p)).unwrap();
    let cex = r.counterexample.as_ref().expect("a counterexample");
    assert_eq!(cex.run, Run::Bmc);
    assert!(
        cex.properties
            .iter()
            .any(|n| n == "reqcnt_counts_accesses_1"),
        "{:?}",
        cex.properties
    );
    // The solver returns some failing trace within the depth, not necessarily the shortest.
    assert!((1..=12).contains(&cex.step), "step {}", cex.step);
    assert!(String::from_utf8_lossy(&cex.vcd).contains("ok_reqcnt_counts_accesses_1"));
}

/// Both planted faults of `stall_inspector` fail in BMC with a counterexample VCD naming the
/// property they break: `flush_misses_same_cycle` (the flush forgets this cycle's charge)
/// breaks the flush amount at once and I5 (the sum, proven alone) a cycle later;
/// `ms_reason_unnormalised` (reason 7 passes through) breaks `i4_reason_counted` at once and
/// I4 (the count is lost: no ms_sub[7]) a cycle later.
#[test]
fn stall_inspector_planted_faults_fail_with_counterexamples() {
    if !prove::TOOLS.iter().all(|t| external(t)) {
        return;
    }
    use smrtl_hdl::blocks::stall_inspector::{build, faults, Params as GsiParams};
    use smrtl_testbench::blocks::stall_inspector::proof as gsi_proof;
    let p = GsiParams::resolve(Some("nw4"), &[]).unwrap();
    for (fault, expect) in [
        (
            faults::FLUSH_MISSES_SAME_CYCLE,
            &["i5_md_conservation", "flush_amount"][..],
        ),
        (
            faults::MS_REASON_UNNORMALISED,
            &["i4_ms_sum", "i4_reason_counted"][..],
        ),
    ] {
        let m = smrtl_hdl::faults::plant_module(&fault, || build(&p));
        let verilog = smrtl_hdl::verilog::emit(&m, &[]);
        let r = prove::prove(&verilog, &m.name, &m.ports(), &gsi_proof(&p)).unwrap();
        assert!(!r.proven(), "{}", fault.name);
        let cex = r.counterexample.as_ref().expect("a counterexample");
        eprintln!(
            "{}: {:?} fail at step {}",
            fault.name, cex.properties, cex.step
        );
        assert_eq!(cex.run, Run::Bmc, "{}", fault.name);
        assert!(
            cex.properties.iter().any(|n| expect.contains(&n.as_str())),
            "{}: {:?}",
            fault.name,
            cex.properties
        );
        // `sat -seq 4` asks for any trace of 4 cycles (step 0 the reset, steps 1..=3 checked)
        // with a failing assertion, not for the shortest one: the step MiniSAT's model fails
        // at follows the shape of the CNF, not the design's behaviour. With `mux_tree` as 2:1
        // muxes `flush_misses_same_cycle` failed at step 2; with its indexed select
        // (`blame_fw = blame_at_fw_tbl[ldwb_warp*16 +: 16]`; Yosys `equiv_induct` proves the
        // two faulty NW = 4 designs equivalent) at step 3: reset, a counted cycle of cls 5
        // without writeback, an idle one (en = 0), then a MEM_DATA cycle (cls 4) charged to
        // md_sel = 1 with warp 1's final writeback, where flush_amt is 0 instead of 1. Steps 1
        // and 2 are padding the solver chose (`ms_reason_unnormalised` too now fails at 3);
        // the shortest trace is asserted below.
        assert!(
            (1..gsi_proof(&p).bmc_depth).contains(&cex.step),
            "{}: step {}",
            fault.name,
            cex.step
        );
        let vcd = String::from_utf8_lossy(&cex.vcd);
        for needle in [format!("ok_{}", cex.properties[0]), "cls".to_string()] {
            assert!(vcd.contains(&needle), "{needle} not in the VCD");
        }
        // The shortest counterexample: reset, then a charged cycle with its flush (or a
        // MEM_STRUCT cycle of reason 7). BMC of depth 2 has step 1 as its only checked cycle.
        let mut short = gsi_proof(&p);
        short.bmc_depth = 2;
        let r = prove::prove(&verilog, &m.name, &m.ports(), &short).unwrap();
        let cex = r
            .counterexample
            .as_ref()
            .expect("a counterexample at depth 2");
        eprintln!(
            "{} at depth 2: {:?} fail at step {}",
            fault.name, cex.properties, cex.step
        );
        assert_eq!(cex.run, Run::Bmc, "{}", fault.name);
        assert_eq!(cex.step, 1, "{}", fault.name);
        assert!(
            cex.properties.iter().any(|n| expect.contains(&n.as_str())),
            "{}: {:?}",
            fault.name,
            cex.properties
        );
        // The sum alone (without the exact updates, which fail first) fails one cycle later.
        let sum = expect[0];
        let mut only = gsi_proof(&p);
        only.properties.retain(|x| x.name == sum);
        let r = prove::prove(&verilog, &m.name, &m.ports(), &only).unwrap();
        let cex = r.counterexample.as_ref().expect("the sum fails");
        eprintln!("{} alone: {sum} fails at step {}", fault.name, cex.step);
        assert_eq!(
            (cex.run, &cex.properties[..]),
            (Run::Bmc, &[sum.to_string()][..])
        );
    }
}
