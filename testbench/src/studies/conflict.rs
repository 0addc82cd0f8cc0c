//! Bank-conflict degrees of a batch of accesses, one JSON object per line (spec
//! docs/bank-conflicts.md §1.4), on the behavioral model or on the detector RTL.

use crate::blocks::bank_conflict_detector::{all, with_modes};
use crate::Design;
use serde::Deserialize;
use serde_json::Value;
use smrtl_cosim::blocks::bank_conflict_detector::{degree_of, Cfg};
use smrtl_cosim::harness::backend::{rusthdl::RustHdl, verilator::Verilator};
use smrtl_cosim::Simulator;
use smrtl_hdl::blocks::bank_conflict_detector::port::{Io, Outputs};
use smrtl_hdl::blocks::bank_conflict_detector::{Mode, Params};
use smrtl_hdl::tools::ToolError;
use smrtl_hdl::BlockParams;
use std::collections::HashMap;

pub use crate::systems::Backend;

/// One line of help on what `backend` runs for a batch.
pub fn help(backend: Backend) -> &'static str {
    match backend {
        Backend::Model => "The behavioral model (any W, N, M of docs/bank-conflicts.md)",
        Backend::Rusthdl => "The detector RTL in rust-hdl's simulator",
        Backend::Verilator => "The detector's Verilog, verilated",
    }
}

/// One batch line.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "one JSON object per line (lanes, banks, layer_bytes, mode_bytes, elem_bytes, ports, mode, addrs)"
)]
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

/// A detector instance with the design it was built from.
struct Rtl {
    params: Params,
    design: Design,
    sim: Box<dyn Simulator>,
}

/// Evaluates batch lines on one backend, building (and keeping) a detector per configuration
/// the lines ask for.
pub struct Batch {
    backend: Backend,
    rtls: HashMap<String, Rtl>,
}

impl Batch {
    /// An evaluator on `backend`; the Verilator backend needs `verilator` installed.
    pub fn new(backend: Backend) -> Result<Batch, ToolError> {
        if backend == Backend::Verilator {
            smrtl_hdl::tools::require("verilator")?;
        }
        Ok(Batch {
            backend,
            rtls: HashMap::new(),
        })
    }

    /// One batch line in, `{"degree": d, "cycles": c}` out, or why the line is rejected.
    pub fn eval_line(&mut self, text: &str) -> Result<Value, String> {
        self.eval_line_raw(text).map_err(|e| smrtl_hdl::shown(&e))
    }

    /// [`Self::eval_line`] before control characters in echoed text are escaped.
    fn eval_line_raw(&mut self, text: &str) -> Result<Value, String> {
        smrtl_cosim::json::repeated_key(text)?;
        let line: Line = serde_json::from_str(text).map_err(|e| format!("malformed: {e}"))?;
        let (degree, cycles) = self.evaluate(&line)?;
        Ok(serde_json::json!({"degree": degree, "cycles": cycles}))
    }

    fn evaluate(&mut self, line: &Line) -> Result<(u32, u32), String> {
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
        let active = active_lanes(line.active.as_deref(), n)?;
        self.eval(&cfg, &active, &line.addrs)
    }

    /// Degree and service cycles of one access of a valid configuration `cfg` (one entry of
    /// `active` and `addrs` per lane) on this evaluator's backend.
    pub fn eval(
        &mut self,
        cfg: &Cfg,
        active: &[bool],
        addrs: &[u64],
    ) -> Result<(u32, u32), String> {
        if self.backend == Backend::Model {
            let d = degree_of(cfg, active, addrs);
            return Ok((d.degree, d.cycles));
        }
        // RTL: W ∈ {4, 8}; with W = 8, N and M are the mode8 / size8 inputs; addresses ≤ 32 bits.
        let (mode8, size8) = match (cfg.layer_bytes, cfg.mode_bytes, cfg.elem_bytes) {
            (4, 4, 4) => (false, false),
            (8, n, m) => (n == 8, m == 8),
            _ => return Err("the RTL supports layer_bytes 4 (mode_bytes = elem_bytes = 4) or 8; use --backend model for other widths".into()),
        };
        if let Some(a) = addrs.iter().find(|&&a| a >> BATCH_ADDR_BITS != 0) {
            return Err(format!(
                "address {a} does not fit {BATCH_ADDR_BITS} bits (RTL backends)"
            ));
        }
        let rtl = self.rtl(cfg)?;
        let mut access = with_modes(all(addrs), mode8, size8);
        access.lane_mask = active.to_vec();
        let layout = &rtl.design.layout;
        let io = Io::new(&rtl.params, layout);
        let mut inputs = vec![0; layout.in_words];
        io.write_inputs(&access, &mut inputs);
        let mut outputs = vec![0; layout.out_words];
        rtl.sim.step(&inputs, &mut outputs);
        let mut o = Outputs::new(&rtl.params);
        io.read_outputs(&outputs, &mut o);
        Ok((o.degree as u32, o.cycles as u32))
    }

    /// The detector RTL for configuration `line`, built on first use.
    fn rtl(&mut self, line: &Cfg) -> Result<&mut Rtl, String> {
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
        if !self.rtls.contains_key(&key) {
            let params = Params::resolve(None, &sets).map_err(|e| e.to_string())?;
            let design = Design::new(&params);
            let sim: Box<dyn Simulator> = match self.backend {
                Backend::Rusthdl => Box::new(RustHdl::new(design.module.clone())),
                _ => Box::new(
                    Verilator::new(&design.module, &design.verilog()).map_err(|e| e.to_string())?,
                ),
            };
            self.rtls.insert(
                key.clone(),
                Rtl {
                    params,
                    design,
                    sim,
                },
            );
        }
        Ok(self.rtls.get_mut(&key).expect("inserted"))
    }
}

/// The lanes a line turns on: all of them without an `active` field, else its 0/1 entries.
fn active_lanes(active: Option<&[u8]>, lanes: usize) -> Result<Vec<bool>, String> {
    match active {
        None => Ok(vec![true; lanes]),
        Some(a) if a.len() != lanes => Err(format!(
            "active has {} entries; expected {lanes} (one per lane)",
            a.len()
        )),
        Some(a) => a
            .iter()
            .map(|&x| match x {
                0 => Ok(false),
                1 => Ok(true),
                _ => Err(format!("active entries must be 0 or 1, got {x}")),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"lanes": 8, "banks": 8, "layer_bytes": 4, "mode_bytes": 4, "elem_bytes": 4, "ports": 1, "mode": "literal", "addrs": [20, 20, 20, 20, 20, 20, 20, 20]}"#;

    #[test]
    fn lines_give_degrees_or_why_they_are_rejected() {
        for backend in [Backend::Model, Backend::Rusthdl] {
            let mut batch = Batch::new(backend).unwrap();
            let degree = batch.eval_line(LINE).unwrap();
            assert_eq!(degree, serde_json::json!({"degree": 8, "cycles": 8}));
            let e = batch.eval_line(r#"{"lanes": 8}"#).unwrap_err();
            assert!(e.starts_with("malformed: missing field `banks`"), "{e}");
            let e = batch
                .eval_line(&LINE.replace("[20,", "[20, 20,"))
                .unwrap_err();
            assert_eq!(e, "addrs has 9 entries; expected 8 (one per lane)");
        }
        let mut rtl = Batch::new(Backend::Rusthdl).unwrap();
        let e = rtl
            .eval_line(&LINE.replace("[20,", "[4294967296,"))
            .unwrap_err();
        assert_eq!(e, "address 4294967296 does not fit 32 bits (RTL backends)");
    }
}
