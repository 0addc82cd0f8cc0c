//! `smrtl conflict --batch FILE.jsonl`: the bank-conflict degree of many accesses, on the model
//! or on an RTL backend (spec bank-conflicts.md §1.4). One JSON object in, one out, per line.

use crate::{Result, UsageError};
use serde::Deserialize;
use smrtl_cosim::backend::{rusthdl::RustHdl, verilator::Verilator};
use smrtl_cosim::bank_conflict_detector::{degree_of, Cfg};
use smrtl_cosim::Simulator;
use smrtl_hdl::bank_conflict_detector::{port, Mode, Params};
use smrtl_hdl::BlockParams;
use smrtl_testbench::bank_conflict_detector::{encode, Access};
use smrtl_testbench::Design;
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// The behavioral model (any W, N, M the spec allows).
    Model,
    /// The detector RTL in rust-hdl's simulator.
    Rusthdl,
    /// The detector's Verilog, verilated.
    Verilator,
}

/// One batch line.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    lanes: u32,
    banks: u32,
    layer_bytes: u32,
    mode_bytes: u32,
    elem_bytes: u32,
    ports: u32,
    mode: Mode,
    addrs: Vec<u64>,
    active: Option<Vec<u8>>,
}

/// Address bits of the RTL used for batch lines: full 32-bit byte addresses.
const BATCH_ADDR_BITS: u32 = 32;

struct Rtl {
    design: Design,
    sim: Box<dyn Simulator>,
}

fn evaluate(
    line: &Line,
    backend: Backend,
    rtls: &mut HashMap<String, Rtl>,
) -> std::result::Result<(u32, u32), String> {
    let cfg = Cfg {
        lanes: line.lanes,
        banks: line.banks,
        layer_bytes: line.layer_bytes,
        mode_bytes: line.mode_bytes,
        elem_bytes: line.elem_bytes,
        ports: line.ports,
        mode: line.mode,
    };
    cfg.validate().map_err(|e| e.to_string())?;
    let n = line.lanes as usize;
    if line.addrs.len() != n {
        return Err(format!(
            "addrs has {} entries; expected {n} (one per lane)",
            line.addrs.len()
        ));
    }
    let active: Vec<bool> = match &line.active {
        None => vec![true; n],
        Some(a) if a.len() != n => {
            return Err(format!(
                "active has {} entries; expected {n} (one per lane)",
                a.len()
            ))
        }
        Some(a) => a
            .iter()
            .map(|&x| match x {
                0 => Ok(false),
                1 => Ok(true),
                _ => Err(format!("active entries must be 0 or 1, got {x}")),
            })
            .collect::<std::result::Result<_, _>>()?,
    };
    if backend == Backend::Model {
        let d = degree_of(&cfg, &active, &line.addrs);
        return Ok((d.degree, d.cycles));
    }
    // RTL: W ∈ {4, 8}; with W = 8, N and M are the mode8 / size8 inputs; addresses ≤ 32 bits.
    let (mode8, size8) = match (line.layer_bytes, line.mode_bytes, line.elem_bytes) {
        (4, 4, 4) => (false, false),
        (8, n, m) => (n == 8, m == 8),
        _ => return Err("the RTL supports layer_bytes 4 (mode_bytes = elem_bytes = 4) or 8; use --backend model for other widths".into()),
    };
    if let Some(a) = line.addrs.iter().find(|&&a| a >> BATCH_ADDR_BITS != 0) {
        return Err(format!(
            "address {a} does not fit {BATCH_ADDR_BITS} bits (RTL backends)"
        ));
    }
    let sets = vec![
        ("L".to_string(), line.lanes.to_string()),
        ("B".into(), line.banks.to_string()),
        ("W".into(), line.layer_bytes.to_string()),
        ("A".into(), BATCH_ADDR_BITS.to_string()),
        ("P".into(), line.ports.to_string()),
        ("MODE".into(), line.mode.to_string()),
        ("REG_OUT".into(), "false".into()),
    ];
    let key = format!("{sets:?}");
    if !rtls.contains_key(&key) {
        let p = Params::resolve(None, &sets).map_err(|e| e.to_string())?;
        let design = Design::new::<smrtl_testbench::bank_conflict_detector::Detector>(&p);
        let sim: Box<dyn Simulator> = match backend {
            Backend::Rusthdl => Box::new(RustHdl::new(design.module.clone())),
            _ => Box::new(
                Verilator::new(&design.module, &design.verilog()).map_err(|e| e.to_string())?,
            ),
        };
        rtls.insert(key.clone(), Rtl { design, sim });
    }
    let rtl = rtls.get_mut(&key).expect("inserted");
    let p: Params = serde_json::from_value(rtl.design.params.clone()).expect("params");
    let access = Access {
        valid: true,
        lane_mask: active
            .iter()
            .enumerate()
            .fold(0, |m, (l, &on)| m | (on as u64) << l),
        addrs: line.addrs.clone(),
        mode8,
        size8,
        reset: false,
    };
    let inputs = encode(&p, &rtl.design.layout, &access);
    let mut outputs = vec![0; rtl.design.layout.out_words];
    rtl.sim.step(&inputs, &mut outputs);
    let get = |name: &str| rtl.design.layout.output(name).expect("port").of(&outputs)[0] as u32;
    Ok((get(port::DEGREE), get(port::CYCLES)))
}

pub fn run(batch: &Path, backend: Backend) -> Result<ExitCode> {
    let file = std::fs::File::open(batch)
        .map_err(|e| UsageError(format!("cannot read {}: {e}", batch.display())))?;
    if backend == Backend::Verilator {
        smrtl_hdl::tools::require("verilator")?;
    }
    let mut rtls = HashMap::new();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let (mut lines, mut bad) = (0, 0);
    for (i, text) in std::io::BufReader::new(file).lines().enumerate() {
        let text = text.map_err(|e| UsageError(format!("{}: {e}", batch.display())))?;
        if text.trim().is_empty() {
            continue;
        }
        lines += 1;
        let result = serde_json::from_str::<Line>(&text)
            .map_err(|e| format!("line {}: malformed: {e}", i + 1))
            .and_then(|line| {
                evaluate(&line, backend, &mut rtls).map_err(|e| format!("line {}: {e}", i + 1))
            });
        let v = match result {
            Ok((degree, cycles)) => serde_json::json!({"degree": degree, "cycles": cycles}),
            Err(e) => {
                bad += 1;
                serde_json::json!({"error": e})
            }
        };
        writeln!(out, "{v}")?;
    }
    if bad > 0 {
        eprintln!(
            "error: {bad} of {lines} lines in {} were rejected (see their `error` fields)",
            batch.display()
        );
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}
