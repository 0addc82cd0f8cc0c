//! `smrtl bench`: one stimulus through the model, rust-hdl, Verilator (in the harness and in a
//! plain C++ loop) and Icarus, with vectors per second and the ratios, in one run.

use crate::cosim::{rtl_factory, VCD_WINDOW};
use crate::{design, BlockArgs, Result, RtlBackend, UsageError};
use smrtl_cosim::backend::{icarus, verilator};
use smrtl_cosim::{harness, Simulator};
use smrtl_hdl::tools;
use std::process::ExitCode;
use std::time::Instant;

/// Shortest timed run of one measurement, in seconds.
const MIN_SECONDS: f64 = 0.3;

/// Steps `sim` over `stim` repeatedly for at least `MIN_SECONDS`; returns vectors per second and
/// the outputs of the first pass.
fn rate(sim: &mut dyn Simulator, stim: &[Vec<u64>], out_words: usize) -> (f64, Vec<Vec<u64>>) {
    let mut outputs = vec![vec![0u64; out_words]; stim.len()];
    let mut scratch = vec![0u64; out_words];
    let start = Instant::now();
    let mut done = 0usize;
    loop {
        for (i, v) in stim.iter().enumerate() {
            // A stateful block continues from where the previous pass ended, so only the first
            // pass (from reset) is the reference the backends are checked against.
            let out = if done == 0 {
                &mut outputs[i]
            } else {
                &mut scratch
            };
            sim.step(v, out);
        }
        done += stim.len();
        if start.elapsed().as_secs_f64() >= MIN_SECONDS {
            break;
        }
    }
    (done as f64 / start.elapsed().as_secs_f64(), outputs)
}

pub fn run(args: &BlockArgs, vectors: usize, seed: u64, json: bool) -> Result<ExitCode> {
    if vectors == 0 {
        return Err(UsageError("--vectors must be at least 1".into()));
    }
    let d = design(args)?;
    if !d.has_bench() {
        return Err(UsageError(format!(
            "bench: {} has no block-level stimulus; allowed: bank_conflict_detector, elastic_pipeline, history_cache",
            d.name
        )));
    }
    let stim = crate::cosim::first_cycles(&d, seed, vectors);
    let ow = d.layout.out_words;
    let mut rows: Vec<(String, f64, String)> = vec![];

    let (model_rate, reference) = rate(d.model().as_mut(), &stim, ow);
    rows.push(("model".into(), model_rate, "behavioral model alone".into()));
    let rusthdl = rtl_factory(&d, RtlBackend::Rusthdl)?;
    let (r, out) = rate(rusthdl().as_mut(), &stim, ow);
    check_same("rusthdl", &reference, &out)?;
    rows.push(("rusthdl".into(), r, "rust-hdl simulator alone".into()));

    let mut notes = vec![];
    match rtl_factory(&d, RtlBackend::Verilator) {
        Ok(vf) => {
            let (r, out) = rate(vf().as_mut(), &stim, ow);
            check_same("verilator", &reference, &out)?;
            rows.push((
                "verilator".into(),
                r,
                "Verilator backend alone (one FFI call per cycle)".into(),
            ));
            let start = Instant::now();
            let mut done = 0usize;
            while start.elapsed().as_secs_f64() < MIN_SECONDS {
                let (mut m, mut v) = (d.model(), vf());
                let out = harness::run(
                    &d.layout,
                    m.as_mut(),
                    v.as_mut(),
                    stim.iter().map(|x| x.as_slice()),
                    None,
                );
                if let Some(mm) = out.mismatch {
                    return Err(UsageError(format!(
                        "bench stimulus does not co-simulate: {mm}"
                    )));
                }
                done += stim.len();
            }
            let cosim_rate = done as f64 / start.elapsed().as_secs_f64();
            rows.push((
                "cosim:verilator".into(),
                cosim_rate,
                "harness: model + Verilator + compare".into(),
            ));
            let plain = verilator::plain_loop_rate(&d.module, &d.verilog(), &stim)?;
            rows.push((
                "verilator:plain-c++".into(),
                plain,
                "Verilated model in a plain C++ loop".into(),
            ));
            // The harness steps the model too, so the slower of the two bounds it.
            let bound = plain.min(model_rate);
            notes.push(format!(
                "cosim:verilator reaches {:.2} of the plain C++ loop and {:.2} of its bound min(model, plain C++) = {bound:.0}/s",
                cosim_rate / plain,
                cosim_rate / bound
            ));
        }
        Err(e) => notes.push(format!("verilator skipped: {}", e.0)),
    }
    match tools::require("iverilog") {
        Ok(_) => {
            let n = stim.len().min(VCD_WINDOW);
            let run = icarus::run_batch(&d.module, &d.verilog(), &stim[..n])?;
            check_same("icarus", &reference[..n], &run.outputs)?;
            rows.push((
                "icarus".into(),
                n as f64 / run.sim_seconds,
                "vvp batch replay (simulation time only)".into(),
            ));
        }
        Err(e) => notes.push(format!("icarus skipped: {e}")),
    }

    let base = rows
        .iter()
        .find(|r| r.0 == "rusthdl")
        .map(|r| r.1)
        .unwrap_or(1.0);
    if json {
        let v = serde_json::json!({
            "block": d.name,
            "params": d.params,
            "vectors": stim.len(),
            "seed": seed,
            "rates": rows.iter().map(|(n, r, what)| serde_json::json!({"backend": n, "vectors_per_second": r, "vs_rusthdl": r / base, "what": what})).collect::<Vec<_>>(),
            "notes": notes,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "bench {} ({} vectors, seed {seed}); all backends produced identical outputs",
            d.name,
            stim.len()
        );
        println!(
            "{:<22} {:>14} {:>12}  what",
            "backend", "vectors/s", "x rusthdl"
        );
        for (n, r, what) in &rows {
            println!("{n:<22} {r:>14.0} {:>12.2}  {what}", r / base);
        }
        for n in notes {
            println!("{n}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn check_same(name: &str, reference: &[Vec<u64>], got: &[Vec<u64>]) -> Result<()> {
    match reference.iter().zip(got).position(|(a, b)| a != b) {
        None => Ok(()),
        Some(c) => Err(UsageError(format!(
            "{name} output differs from the model at vector {c}"
        ))),
    }
}
