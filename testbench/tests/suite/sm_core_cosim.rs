//! The `sm_core` RTL in the loop at full size (docs/elastic-pipeline.md §3.5, §5, §6): the
//! Table 4 core on a synthetic profile, every output port compared every cycle, on the RTL and on
//! the port-level model. The G17–G22 / G28 workloads run with the RTL in the loop in
//! `sm_core_model.rs`; random co-simulation of the block on every backend and its planted fault
//! are the conformance suite's.

use smrtl_cosim::blocks::sm_core::PortModel;
use smrtl_cosim::{BlockModel, Rtl};
use smrtl_testbench::blocks::sm_core::{cosim, layout, rusthdl, verilator, workload_from_value};

/// The full-size Table 4 core (W = 32 warps as the profile sets it, 256 × 2 cache,
/// fe_depth 17, Icnt{400}) on the Transpose profile: every cycle agrees, on the RTL and on the
/// port-level model.
#[test]
fn table4_core_on_a_profile() {
    table4_core(None);
}

/// The same with the DRAM latency model (docs/elastic-pipeline.md §8.2): the model and the
/// RTL-in-the-loop run share the return path, so every cycle still agrees; returns reorder.
#[test]
fn table4_core_with_dram_returns() {
    table4_core(Some(serde_json::json!({"dram": {"seed": 2}})));
}

fn table4_core(gmem: Option<serde_json::Value>) {
    let p = smrtl_testbench::studies::profiles::profile("transpose").unwrap();
    let mut v = p.workload(1, 1, 8, 4);
    if let Some(g) = gmem {
        v["params"]["gmem_return"] = g;
    }
    let w = workload_from_value(&v).unwrap();
    let mut duts: Vec<Box<dyn Rtl>> = vec![
        rusthdl(&w.params),
        Box::new(PortModel::new(&w.params, &layout(&w.params))),
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
