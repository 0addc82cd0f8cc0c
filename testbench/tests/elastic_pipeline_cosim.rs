//! Random closed-loop co-simulation of the pipeline (issue scope: A / G / GST / S(d) and
//! address-carrying SMEM entries, ICNT activity, all three modes, M ∈ {1, 2, 4}, N ∈ 0..=4,
//! Q ∈ 0..=M+1): model and RTL agree on every record. A failure is shrunk to a minimal trace
//! file, saved, and named in the panic message (replay it with `smrtl sim --trace FILE`).

use proptest::strategy::Just;
use smrtl_cosim::harness::backend::{rusthdl::RustHdl, verilator::VerilatorLib};
use smrtl_cosim::Simulator;
use smrtl_hdl::blocks::elastic_pipeline::{build, Params, PipeMode};
use smrtl_testbench::external;
use smrtl_testbench::studies::trace::{random_params, random_traces, trace_files, TraceReport};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Lanes of every random configuration (the `Params` default).
const LANES: usize = 8;

fn rusthdl(p: &Params) -> Box<dyn Simulator> {
    Box::new(RustHdl::new(Arc::new(build(p))))
}

fn check(name: &str, report: TraceReport, at_least: u64) {
    if let Some((file, why, steps)) = report.failure {
        let path =
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-failure.json"));
        std::fs::write(&path, serde_json::to_string_pretty(&file).unwrap()).unwrap();
        panic!(
            "{name}: {why}\nshrunk in {steps} steps to {} entries; trace saved to {}",
            file.stream.len(),
            path.display()
        );
    }
    assert!(
        report.cycles >= at_least,
        "{name}: only {} cycles",
        report.cycles
    );
}

fn rusthdl_mode(mode: PipeMode, seed: u64) {
    let files = trace_files(random_params(mode), LANES);
    let report = random_traces(files, &rusthdl, 100_000, seed);
    check(&format!("rusthdl-{mode:?}"), report, 100_000);
}

#[test]
fn random_traces_rusthdl_unified() {
    rusthdl_mode(PipeMode::Unified, 1);
}

#[test]
fn random_traces_rusthdl_split() {
    rusthdl_mode(PipeMode::Split, 2);
}

#[test]
fn random_traces_rusthdl_elastic() {
    rusthdl_mode(PipeMode::Elastic, 3);
}

/// A few thousand cycles per mode on Verilator, on one fixed configuration per mode (one build
/// each): the stream and the ICNT activity vary.
#[test]
fn random_traces_verilator() {
    if !external("verilator") {
        return;
    }
    let libs: Mutex<HashMap<String, Arc<VerilatorLib>>> = Mutex::new(HashMap::new());
    let verilator = |p: &Params| -> Box<dyn Simulator> {
        let key = serde_json::to_string(p).unwrap();
        let lib = libs
            .lock()
            .unwrap()
            .entry(key)
            .or_insert_with(|| {
                let m = build(p);
                VerilatorLib::load(&m, &smrtl_hdl::rusthdl::emit_verilog(&Arc::new(m.clone())))
                    .unwrap()
            })
            .clone();
        Box::new(lib.instance().unwrap())
    };
    for (i, mode) in ["unified", "split", "elastic"].into_iter().enumerate() {
        let params = serde_json::json!({"pipe_mode": mode, "M": 2, "N": 2, "Q": 3, "fe_depth": 2, "broadcast": "gpgpusim-limited"});
        let files = trace_files(Just(params.as_object().cloned().unwrap()), LANES);
        let report = random_traces(files, &verilator, 4_000, 10 + i as u64);
        check(&format!("verilator-{mode}"), report, 4_000);
    }
}
