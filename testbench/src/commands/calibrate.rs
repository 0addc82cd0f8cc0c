//! `smrtl calibrate mem-kernels`: the 13 Table-2 kernels alone at isolated occupancy beside
//! Table 2, with the §8.3 calibration checks (docs/memory-issue-control.md §8.1; spec §8.3;
//! Dai et al., HPCA 2018, §2.4).

use crate::studies::mem_eval::calibrate::{checks, measure_all, text};
use crate::studies::mem_eval::EvalParams;
use serde_json::json;
use smrtl_cosim::sm::mem_sm::params::PipeParams;
use smrtl_cosim::sm::mem_sm::workload::MAX_CYCLES;
use smrtl_hdl::BlockParams;
use std::process::ExitCode;

type Result<T> = std::result::Result<T, String>;

/// What `smrtl calibrate` calibrates.
pub const TARGETS: [&str; 1] = ["mem-kernels"];

/// Runs each Table-2 kernel of the memory pipeline (seed 004) alone at isolated occupancy and
/// prints what it measures beside Table 2, with the §8.3 checks (a FAIL line exits 1).
#[derive(clap::Parser)]
#[command(name = "calibrate")]
pub struct CalibrateArgs {
    /// What to calibrate: mem-kernels.
    pub target: String,
    /// Cycles of each run [default: the study's run_cycles, 2000000].
    #[arg(long, value_name = "N")]
    pub cycles: Option<u64>,
    /// Seed of the generators [default: the study's seed, 1].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Override one pipeline parameter (mem_pipeline), e.g. `--set lm_interval=4`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Print one JSON object: cycles, seed, kernels (measured and table2), checks.
    #[arg(long)]
    pub json: bool,
}

/// `KEY=VALUE` pairs; the error names the form.
pub fn pairs(sets: &[String]) -> Result<Vec<(String, String)>> {
    sets.iter()
        .map(|s| {
            s.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| format!("--set `{}`: expected KEY=VALUE", smrtl_hdl::shown(s)))
        })
        .collect()
}

pub fn run(a: CalibrateArgs) -> Result<ExitCode> {
    if !TARGETS.contains(&a.target.as_str()) {
        return Err(format!(
            "unknown calibration `{}`; allowed: {}",
            smrtl_hdl::shown(&a.target),
            TARGETS.join(", ")
        ));
    }
    let e = EvalParams::default();
    let cycles = a.cycles.unwrap_or(e.run_cycles);
    if !(1..=MAX_CYCLES).contains(&cycles) {
        return Err(format!(
            "--cycles {cycles} is out of range; allowed: 1..={MAX_CYCLES}"
        ));
    }
    let seed = a.seed.unwrap_or(e.seed);
    let p = PipeParams::resolve(None, &pairs(&a.sets)?).map_err(|e| e.to_string())?;
    let rows = measure_all(&p, cycles, seed)?;
    let checks = checks(&rows);
    if a.json {
        let v = json!({"cycles": cycles, "seed": seed, "kernels": rows, "checks": checks});
        println!("{v}");
    } else {
        print!("{}", text(&rows, &checks, cycles, seed));
    }
    Ok(if checks.iter().all(|c| c.pass) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
