//! The `sm_core` RTL in the loop (docs/elastic-pipeline.md §3.5, §5, §6): random scheduler-mode
//! workloads (random warps, kinds, degrees, lane addresses, PCs that hit, miss and evict, several
//! kernel launches per case) co-simulated against the behavioral SM model, every output port
//! compared every cycle, on `rusthdl` (wide) and `verilator` (a few configurations), plus a
//! full-size Table 4 core on a synthetic profile (the port-level model in the loop too), and
//! the block-level stimulus and port model of the `table4` preset against the RTL. The G17–G22
//! / G28 workloads run with the RTL in the loop in `sm_core_model.rs`.

use smrtl_cosim::blocks::sm_core::PortModel;
use smrtl_cosim::harness::vcd_out;
use smrtl_cosim::harness::Trace as WaveRows;
use smrtl_cosim::sm::elastic_sm::SmParams;
use smrtl_cosim::Rtl;
use smrtl_hdl::blocks::sm_core::Sched;
use smrtl_testbench::blocks::sm_core::{
    cases, cosim, layout, port_model, random, random_configs, rusthdl, verilator,
    workload_from_value,
};

/// Random co-simulation on rusthdl: ≥ 100k compared cycles over every random configuration.
#[test]
fn random_rusthdl_150k_cycles() {
    let r = random(random_configs(), &|p: &SmParams| rusthdl(p), 150_000, 1);
    if let Some(f) = &r.failure {
        panic!("{}\nminimal case: {:?}", f.divergence, f.minimal);
    }
    assert!(r.cycles >= 150_000 && r.cases > 100, "{r:?}");
}

/// Random co-simulation on Verilator: a few thousand cycles on two configurations.
#[test]
fn random_verilator() {
    if !smrtl_testbench::external("verilator") {
        return;
    }
    let configs = random_configs();
    let picked = vec![configs[1].clone(), configs[4].clone()];
    let r = random(
        picked,
        &|p: &SmParams| verilator(p).expect("verilator build"),
        5_000,
        2,
    );
    if let Some(f) = &r.failure {
        panic!("{}\nminimal case: {:?}", f.divergence, f.minimal);
    }
    assert!(r.cycles >= 5_000);
}

/// The full-size Table 4 core (W = 32 warps as the profile sets it, 256 × 2 cache,
/// fe_depth 17, Icnt{400}) on the Transpose profile: every cycle agrees, on the RTL and on the
/// port-level model.
#[test]
fn table4_core_on_a_profile() {
    let p = smrtl_testbench::studies::profiles::profile("transpose").unwrap();
    let w = workload_from_value(&p.workload(1, 1, 8, 4)).unwrap();
    let mut duts: Vec<Box<dyn Rtl>> = vec![
        rusthdl(&w.params),
        Box::new(PortModel::new(&w.params, &layout(&w.params)).unwrap()),
    ];
    if smrtl_testbench::external("verilator") {
        duts.push(verilator(&w.params).expect("verilator build"));
    }
    let model = smrtl_cosim::sm::elastic_sm::run(&w).unwrap();
    for mut dut in duts {
        let runs = cosim(
            &w.params,
            std::slice::from_ref(&w.warps),
            dut.as_mut(),
            None,
        )
        .unwrap_or_else(|d| panic!("{}: {d}", dut.name()));
        assert_eq!(runs[0].records, model.records);
    }
    assert!(model.stats.hc_hits > 0 && model.stats.outcomes.bank_conflict > 0);
}

/// A wrong RTL is caught: the model runs BCAWS, the RTL was built for RR. The failure names
/// cycle, port, expected and actual, shrinks, and its VCD flags the mismatch.
#[test]
fn a_wrong_rtl_is_caught_shrunk_and_shown() {
    let rr = |p: &SmParams| SmParams {
        sched: Sched::Rr,
        ..p.clone()
    };
    let configs = vec![random_configs()[0].clone()];
    let r = random(configs, &|p: &SmParams| rusthdl(&rr(p)), 200_000, 3);
    let f = r.failure.expect("the RR RTL diverges from the BCAWS model");
    let m = &f.divergence.mismatch;
    assert_eq!(m.port, "mask", "{}", f.divergence);
    assert_eq!((m.expected.clone(), m.actual.clone()), (vec![1], vec![0]));
    assert!(f.shrink_steps > 0);
    let text = f.divergence.to_string();
    assert!(text.contains(&format!("cycle {}", m.cycle)) && text.contains("port mask"));
    // Shrunk: one kernel, at most two warps with an instruction.
    assert_eq!(f.minimal.kernels.len(), 1, "{:?}", f.minimal);
    let busy = f.minimal.kernels[0]
        .iter()
        .filter(|w| !w.is_empty())
        .count();
    assert!(busy <= 2, "{:?}", f.minimal);

    let p = &f.minimal.params;
    let mut rows = WaveRows::new(1000);
    let mut dut = rusthdl(&rr(p));
    assert!(cosim(p, &f.minimal.kernels, dut.as_mut(), Some(&mut rows)).is_err());
    let mut buf = vec![];
    vcd_out::write(&mut buf, "sm_core", &layout(p), &rows).unwrap();
    let text = String::from_utf8(buf).unwrap();
    assert!(text.contains("$scope module rtl") && text.contains(" mask "));
    let flagged = rows.rows.iter().filter(|r| r.mismatch).count();
    assert_eq!(flagged, 1, "exactly the last row is flagged");
    assert!(rows.rows.back().unwrap().mismatch);
}

/// The block-level pair at the `table4` preset (the full-size core): per-cycle stimulus from
/// random workloads ([`cases`]) drives the port model and the rusthdl RTL through the block
/// harness; every output agrees every cycle.
#[test]
fn block_level_table4_preset() {
    use proptest::strategy::{Strategy, ValueTree};
    let p = SmParams::default();
    let lay = layout(&p);
    let strategy = cases(&p, &lay);
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for _ in 0..3 {
        let case = strategy.new_tree(&mut runner).unwrap().current();
        let out = smrtl_cosim::harness::run(
            &lay,
            port_model(&p).as_mut(),
            rusthdl(&p).as_mut(),
            case.iter().map(|v| v.as_slice()),
            None,
        );
        assert!(out.mismatch.is_none(), "{}", out.mismatch.unwrap());
        assert_eq!(out.cycles, case.len() as u64);
    }
}
