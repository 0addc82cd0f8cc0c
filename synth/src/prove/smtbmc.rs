//! The `smtbmc` engine (docs/prove.md §3): the wrapper [`super::prove`] proves with Yosys's
//! `sat`, written as SMT2 (`write_smt2 -wires`) and checked by `yosys-smtbmc -s z3`, the flow of
//! SymbiYosys's `smtbmc` engine: BMC from reset `-t <bmc_depth>`, then k-induction
//! `-i -t <induction_depth>`. The registered-only properties are structural and checked the
//! same way under both engines. z3 is taken from the project's virtual environment first
//! (`smrtl_hdl::tools::venv_bin`), and yosys-smtbmc runs with that directory first on its PATH,
//! so it runs the same z3.

use super::{input_cones, read, read_design, verdicts, write, yosys, Counterexample, Ends};
use super::{Engine, Kind, Proof, Report, Run};
use crate::TMP_REMEDY;
use smrtl_hdl::tools::{child_path, require, ToolError};
use smrtl_hdl::Port;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// The tools of the `smtbmc` engine.
pub const SMTBMC_TOOLS: [&str; 3] = ["yosys", "yosys-smtbmc", "z3"];

/// The oldest z3 taken as current: Debian's 4.8.12 does not finish several proofs that PyPI's
/// 5.4.1 proves in seconds (docs/prove.md §3–§4).
pub const Z3_MIN: (u32, u32) = (5, 0);

/// The version of the z3 [`smrtl_hdl::tools::find`] finds (`z3 --version`: "Z3 version
/// 5.4.1 - 64 bit"), as (major, minor, patch); `None` without a z3 or on an unreadable answer.
pub fn z3_version() -> Option<(u32, u32, u32)> {
    let mut cmd = Command::new(smrtl_hdl::tools::find("z3")?);
    let out = smrtl_hdl::cleanup::output(cmd.arg("--version")).ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let v = text.split_whitespace().nth(2)?;
    let mut n = v.split('.').map(|x| x.parse::<u32>().ok());
    Some((n.next()??, n.next()??, n.next().flatten().unwrap_or(0)))
}

/// What one `yosys-smtbmc` run printed: passed or not, the assertions it names as failed,
/// the failing BMC step, and the step at which the induction closed.
struct Outcome {
    passed: bool,
    failed: Vec<String>,
    step: Option<u32>,
    induction_step: Option<u32>,
    seconds: f64,
}

/// [`super::prove`] with `yosys-smtbmc` + z3 instead of Yosys's `sat`: the same wrapper,
/// depths and verdicts; a BMC failure's trace is the VCD `yosys-smtbmc --dump-vcd` writes.
pub fn smtbmc(
    verilog: &str,
    top: &str,
    ports: &[Port],
    proof: &Proof,
) -> Result<Report, ToolError> {
    for tool in SMTBMC_TOOLS {
        require(tool)?;
    }
    let dir = crate::stage("yosys", verilog, top)?;
    write(dir.path(), "prove.sv", &super::wrapper(top, ports, proof))?;
    let registered: Vec<&super::Property> = proof
        .properties
        .iter()
        .filter(|p| p.kind == Kind::Registered)
        .collect();
    let status = |step: &str| {
        smrtl_hdl::progress::status(&format!(
            "prove {top}: {} properties: {step} (yosys-smtbmc + z3)",
            proof.properties.len()
        ))
    };
    let start = Instant::now();
    status("input cones and SMT2");
    let cones = input_cones(dir.path(), top, &registered)?;
    let smt2 = format!("{}write_smt2 -wires design.smt2\n", read_design(top, proof));
    yosys(dir.path(), "smt2", &smt2)?;
    let yosys_seconds = start.elapsed().as_secs_f64();
    let (d, k) = (proof.bmc_depth, proof.induction_depth);
    status(&format!("BMC to depth {d}"));
    let bmc = check(dir.path(), &["--dump-vcd", "bmc.vcd"], d)?;
    let (mut induction_seconds, mut counterexample, mut failed) = (0.0, None, vec![]);
    let mut closed_at = None;
    if !bmc.passed {
        let step = bmc.step.unwrap_or(d);
        failed.clone_from(&bmc.failed);
        counterexample = Some(Counterexample {
            run: Run::Bmc,
            step,
            properties: bmc.failed.clone(),
            vcd: read(&dir.path().join("bmc.vcd")).unwrap_or_default(),
        });
    } else {
        status(&format!("k-induction, k up to {k}"));
        let ind = check(dir.path(), &["-i", "--dump-vcd", "induction.vcd"], k)?;
        induction_seconds = ind.seconds;
        if ind.passed {
            // Induction at step s assumes the assertions in steps s..k-1: it closed at k - s.
            closed_at = ind.induction_step.map(|s| (k - s.min(k)).max(1));
        } else {
            failed.clone_from(&ind.failed);
            counterexample = Some(Counterexample {
                run: Run::Induction,
                step: k,
                properties: ind.failed,
                vcd: read(&dir.path().join("induction.vcd")).unwrap_or_default(),
            });
        }
    }
    let ends = Ends {
        counterexample: counterexample.as_ref(),
        failed: &failed,
        bmc_step: bmc.step.filter(|_| !bmc.passed),
        closed_at,
    };
    Ok(Report {
        engine: Engine::Smtbmc,
        outcomes: verdicts(proof, &cones, &ends),
        assumptions: proof.count(Kind::Assume),
        bmc_depth: d,
        induction_depth: k,
        yosys_seconds,
        bmc_seconds: bmc.seconds,
        induction_seconds,
        counterexample,
    })
}

/// One `yosys-smtbmc -s z3 <extra> -t <depth> design.smt2` run in `dir`, with the virtual
/// environment first on its PATH (its `-s z3` runs the z3 smrtl found).
fn check(dir: &Path, extra: &[&str], depth: u32) -> Result<Outcome, ToolError> {
    let start = Instant::now();
    let mut cmd = Command::new(require("yosys-smtbmc")?);
    cmd.current_dir(dir)
        .env("PATH", child_path())
        .args(["-s", "z3"])
        .args(extra)
        .args(["-t", &depth.to_string(), "design.smt2"]);
    let out = smrtl_hdl::cleanup::output(&mut cmd)
        .map_err(|e| ToolError::path("run", Path::new("yosys-smtbmc"), &e, TMP_REMEDY))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let tail = || {
        let all = format!("{text}{}", String::from_utf8_lossy(&out.stderr));
        let lines: Vec<&str> = all.lines().collect();
        lines[lines.len().saturating_sub(6)..].join("\n")
    };
    if text.contains("Status: PREUNSAT") || text.contains("Assumptions are unsatisfiable") {
        return Err(ToolError::Failed {
            tool: "yosys-smtbmc".into(),
            message: format!(
                "the assumptions admit no {depth}-cycle trace from reset: they contradict each \
                 other, so nothing would be proven"
            ),
        });
    }
    let passed = text.contains("Status: PASSED");
    if !passed && !text.contains("Status: FAILED") {
        return Err(ToolError::Failed {
            tool: "yosys-smtbmc".into(),
            message: tail(),
        });
    }
    Ok(Outcome {
        passed,
        failed: failed_asserts(&text),
        step: last_step(&text, "Checking assertions in step "),
        induction_step: last_step(&text, "Trying induction in step "),
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The number after the last `marker` in `text` ("... step 7..").
fn last_step(text: &str, marker: &str) -> Option<u32> {
    text.lines()
        .filter_map(|l| l.split(marker).nth(1))
        .filter_map(|r| r.trim_end_matches('.').trim().parse().ok())
        .next_back()
}

/// The assertion labels in `Assert failed in smrtl_prove: <label>` lines (the label may carry
/// a source location before it: `prove.sv:12.3-12.30 (name)` or `name`), in order, once each.
fn failed_asserts(text: &str) -> Vec<String> {
    let mut names: Vec<String> = vec![];
    for l in text.lines() {
        let Some(info) = l.split("Assert failed in ").nth(1) else {
            continue;
        };
        let info = info.split_once(": ").map_or(info, |(_, i)| i).trim();
        let name = match info.rsplit_once('(') {
            Some((_, n)) => n.trim_end_matches(')'),
            None => info,
        };
        let name = name.trim().trim_start_matches('\\').to_string();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smtbmc_output_is_read() {
        let text = "## 0:00:00 Checking assertions in step 8..\n\
                    ## 0:00:00 BMC failed!\n\
                    ## 0:00:00 Assert failed in smrtl_prove: prove.sv:40.5-40.40 (a_b)\n\
                    ## 0:00:00 Assert failed in smrtl_prove: c\n\
                    ## 0:00:00 Assert failed in smrtl_prove: c\n";
        assert_eq!(failed_asserts(text), ["a_b", "c"]);
        assert_eq!(last_step(text, "Checking assertions in step "), Some(8));
    }
}
