//! Yosys flows on Verilog text: technology-independent `synth` (gate counts, flip-flops, latches,
//! logic depth) and `synth_ice40` (LUT4, carry and flip-flop counts).
//!
//! Counts come from `stat -json` (supported by Yosys 0.23), logic depth from `ltp -noff` (the
//! longest topological path, in cells, ignoring flip-flops); both are written with `tee -o`.
//! The generic flow also records the coarse cells right after `proc`, before any optimization:
//! the register bits as written in the RTL, which synthesis may then merge (with P = 1 the
//! detector's `cycles_q` equals `degree_q`, and Yosys keeps one of them).

use crate::stage;
use serde::{Deserialize, Serialize};
use smrtl_hdl::tools::{require, run, ToolError};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const TOOL: &str = "yosys";

/// Result of `synth -top <top>` (Yosys's internal gate library).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GenericReport {
    /// All cells after synthesis.
    pub cells: u64,
    /// Flip-flop bits after synthesis (`$_DFF*`, `$_SDFF*`, …; equal registers merged).
    pub flip_flops: u64,
    /// Register bits as written in the RTL (coarse flip-flop cells after `proc`, by width).
    pub rtl_flip_flops: u64,
    /// Latch cells by type (`$_DLATCH*`, `$dlatch`, `$_SR_*`, …); empty for a clean design.
    pub latches: BTreeMap<String, u64>,
    /// Longest topological path in cells (`ltp -noff`), if Yosys reported it.
    pub logic_depth: Option<u64>,
    /// Cell counts by type.
    pub cells_by_type: BTreeMap<String, u64>,
    /// Coarse cells after `proc`, by type and width (`$eq_13`: 13-bit equality compares).
    pub rtl_cells_by_type: BTreeMap<String, u64>,
    /// Wall-clock seconds Yosys took.
    pub seconds: f64,
}

/// Result of `synth_ice40 -top <top>`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ice40Report {
    /// `SB_LUT4` cells.
    pub lut4: u64,
    /// `SB_CARRY` cells.
    pub carry: u64,
    /// `SB_DFF*` cells.
    pub flip_flops: u64,
    /// All cells.
    pub cells: u64,
    /// Longest topological path in cells (LUTs and carries, `ltp -noff`), if reported.
    pub logic_depth: Option<u64>,
    /// Cell counts by type.
    pub cells_by_type: BTreeMap<String, u64>,
    /// Wall-clock seconds Yosys took.
    pub seconds: f64,
}

/// Runs `synth -top <top>` on `verilog` and reports gates, flip-flops, latches and depth.
pub fn generic(verilog: &str, top: &str) -> Result<GenericReport, ToolError> {
    let out = synthesize(verilog, top, true, &format!("synth -top {top}"))?;
    let by_type = out.stat.cells_by_type;
    let rtl = out.rtl.unwrap_or_default().cells_by_type;
    Ok(GenericReport {
        cells: out.stat.cells,
        flip_flops: by_type
            .iter()
            .filter(|(t, _)| is_generic_ff(t))
            .map(|(_, n)| n)
            .sum(),
        rtl_flip_flops: rtl
            .iter()
            .filter(|(t, _)| is_generic_ff(t))
            .map(|(t, n)| n * width_suffix(t).unwrap_or(1))
            .sum(),
        latches: by_type
            .iter()
            .filter(|(t, _)| is_latch(t))
            .map(|(t, n)| (t.clone(), *n))
            .collect(),
        logic_depth: out.depth,
        cells_by_type: by_type,
        rtl_cells_by_type: rtl,
        seconds: out.seconds,
    })
}

/// Runs `synth_ice40 -top <top>` on `verilog` and reports LUT4, carry and flip-flop counts.
pub fn ice40(verilog: &str, top: &str) -> Result<Ice40Report, ToolError> {
    let out = synthesize(verilog, top, false, &format!("synth_ice40 -top {top}"))?;
    let by_type = out.stat.cells_by_type;
    let get = |t: &str| by_type.get(t).copied().unwrap_or(0);
    Ok(Ice40Report {
        lut4: get("SB_LUT4"),
        carry: get("SB_CARRY"),
        flip_flops: by_type
            .iter()
            .filter(|(t, _)| t.starts_with("SB_DFF"))
            .map(|(_, n)| n)
            .sum(),
        cells: out.stat.cells,
        logic_depth: out.depth,
        cells_by_type: by_type,
        seconds: out.seconds,
    })
}

/// Whether a generic cell type is a flip-flop (fine-grained `$_DFF_P_`, `$_SDFFE_PP0P_`, … or
/// coarse `$dff`, `$adff`, `$sdff`, …).
fn is_generic_ff(cell: &str) -> bool {
    cell.to_ascii_lowercase().contains("dff")
}

/// The width in a `stat -width` type name (`$dff_4` → 4).
fn width_suffix(cell: &str) -> Option<u64> {
    cell.rsplit_once('_')?.1.parse().ok()
}

/// Whether a generic cell type is a latch or set/reset latch.
fn is_latch(cell: &str) -> bool {
    let lower = cell.to_ascii_lowercase();
    lower.contains("dlatch") || lower == "$sr" || lower.starts_with("$_sr_")
}

/// Cell totals of a design.
#[derive(Debug, Default, PartialEq)]
struct Stat {
    cells: u64,
    cells_by_type: BTreeMap<String, u64>,
}

/// What one Yosys run yields.
struct Synthesized {
    stat: Stat,
    /// Coarse cells after `proc`, when asked for.
    rtl: Option<Stat>,
    depth: Option<u64>,
    seconds: f64,
}

/// Reads the Verilog (with `rtl_stat`, elaborates it and writes `stat -width -json`), runs
/// `synth_cmd`, then writes `stat -json` and `ltp -noff`.
fn synthesize(
    verilog: &str,
    top: &str,
    rtl_stat: bool,
    synth_cmd: &str,
) -> Result<Synthesized, ToolError> {
    let yosys = require(TOOL)?;
    let staged = stage(TOOL, verilog, top)?;
    let dir = staged.path();
    let mut script = format!("read_verilog {top}.v\n");
    if rtl_stat {
        script += &format!("hierarchy -top {top}\nproc\ntee -q -o rtl.json stat -width -json\n");
    }
    script +=
        &format!("{synth_cmd}\ntee -q -o stat.json stat -json\ntee -q -o ltp.txt ltp -noff\n");
    std::fs::write(dir.join("flow.ys"), script).map_err(|e| io_error(&e))?;
    let start = Instant::now();
    run(
        TOOL,
        Command::new(yosys)
            .current_dir(dir)
            .args(["-q", "-l", "yosys.log", "-s", "flow.ys"]),
    )?;
    let seconds = start.elapsed().as_secs_f64();
    let stat = parse_stat_json(&read(dir, "stat.json")?)?;
    let rtl = if rtl_stat {
        Some(parse_stat_json(&read(dir, "rtl.json")?)?)
    } else {
        None
    };
    let depth = parse_ltp(&read(dir, "ltp.txt")?);
    Ok(Synthesized {
        stat,
        rtl,
        depth,
        seconds,
    })
}

fn read(dir: &Path, name: &str) -> Result<String, ToolError> {
    std::fs::read_to_string(dir.join(name)).map_err(|e| io_error(&e))
}

fn io_error(e: &std::io::Error) -> ToolError {
    ToolError::Io {
        tool: TOOL.into(),
        message: e.to_string(),
    }
}

/// Parses `stat -json`: the `design` totals (whole hierarchy) when present, else the sum over
/// modules.
fn parse_stat_json(text: &str) -> Result<Stat, ToolError> {
    #[derive(Deserialize)]
    struct Counts {
        num_cells: u64,
        #[serde(default)]
        num_cells_by_type: BTreeMap<String, u64>,
    }
    #[derive(Deserialize)]
    struct StatJson {
        #[serde(default)]
        modules: BTreeMap<String, Counts>,
        design: Option<Counts>,
    }
    let json: StatJson = serde_json::from_str(text).map_err(|e| ToolError::Failed {
        tool: TOOL.into(),
        message: format!("unreadable `stat -json` output: {e}"),
    })?;
    let to_stat = |c: Counts| Stat {
        cells: c.num_cells,
        cells_by_type: c.num_cells_by_type,
    };
    Ok(match json.design {
        Some(design) => to_stat(design),
        None => json
            .modules
            .into_values()
            .fold(Stat::default(), |mut acc, c| {
                acc.cells += c.num_cells;
                for (t, n) in c.num_cells_by_type {
                    *acc.cells_by_type.entry(t).or_default() += n;
                }
                acc
            }),
    })
}

/// The largest `(length=N)` in `ltp` output (one line per module).
fn parse_ltp(text: &str) -> Option<u64> {
    text.lines()
        .filter_map(|line| {
            let rest = &line[line.find("(length=")? + "(length=".len()..];
            rest[..rest.find(')')?].trim().parse().ok()
        })
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_json_design_totals() {
        let text = r#"{
           "creator": "Yosys 0.23",
           "modules": { "\\top": { "num_cells": 3, "num_cells_by_type": { "$_AND_": 2, "$_DFF_P_": 1 } } },
              "design": { "num_cells": 3, "num_cells_by_type": { "$_AND_": 2, "$_DFF_P_": 1 } }
        }"#;
        let stat = parse_stat_json(text).unwrap();
        assert_eq!(stat.cells, 3);
        assert_eq!(stat.cells_by_type["$_DFF_P_"], 1);
    }

    #[test]
    fn sums_modules_without_design_section() {
        let text = r#"{ "modules": {
            "\\a": { "num_cells": 2, "num_cells_by_type": { "SB_LUT4": 2 } },
            "\\b": { "num_cells": 1, "num_cells_by_type": { "SB_LUT4": 1 } } } }"#;
        let stat = parse_stat_json(text).unwrap();
        assert_eq!(stat.cells, 3);
        assert_eq!(stat.cells_by_type["SB_LUT4"], 3);
    }

    #[test]
    fn parses_ltp_length() {
        let text = "\n3. Executing LTP pass (find longest path).\n\nLongest topological path in top (length=46):\n    0: \\addr [110]\n";
        assert_eq!(parse_ltp(text), Some(46));
        assert_eq!(parse_ltp("nothing"), None);
    }

    #[test]
    fn classifies_cells() {
        for ff in [
            "$_DFF_P_",
            "$_SDFF_PP0_",
            "$_DFFE_PN0P_",
            "$dff",
            "$adff",
            "$sdffe",
        ] {
            assert!(is_generic_ff(ff), "{ff}");
            assert!(!is_latch(ff), "{ff}");
        }
        for latch in [
            "$_DLATCH_P_",
            "$dlatch",
            "$adlatch",
            "$_DLATCHSR_PPP_",
            "$sr",
            "$_SR_PP_",
        ] {
            assert!(is_latch(latch), "{latch}");
            assert!(!is_generic_ff(latch), "{latch}");
        }
        assert!(!is_latch("$_XOR_") && !is_generic_ff("$_XOR_"));
        assert_eq!(width_suffix("$sdff_13"), Some(13));
        assert_eq!(width_suffix("$_DFF_P_"), None);
    }
}
