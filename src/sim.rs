//! `smrtl sim`: a trace or a scheduler-mode workload on the behavioral SM model, alone or with
//! the RTL in the loop (lock-step, every cycle compared).

use crate::output::{write_json_lines, write_waveform};
use crate::{parse_sets, Result, UsageError};
use smrtl_testbench::sim::{self, Report, Run, Workload};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `--backend`, with the library's help for each value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    #[value(help = sim::Backend::Model.help())]
    Model,
    #[value(help = sim::Backend::Rusthdl.help())]
    Rusthdl,
    #[value(help = sim::Backend::Verilator.help())]
    Verilator,
}

impl From<Backend> for sim::Backend {
    fn from(b: Backend) -> Self {
        match b {
            Backend::Model => sim::Backend::Model,
            Backend::Rusthdl => sim::Backend::Rusthdl,
            Backend::Verilator => sim::Backend::Verilator,
        }
    }
}

pub struct Options {
    pub trace: Option<PathBuf>,
    pub workload: Option<PathBuf>,
    pub profile: Option<String>,
    pub seed: u64,
    pub waves: u32,
    pub backend: Backend,
    pub json: bool,
    pub records: Option<PathBuf>,
    pub vcd: Option<PathBuf>,
    pub sets: Vec<String>,
}

impl Options {
    /// The library's options, with the parsed `--set` overrides.
    fn sim<'a>(&self, sets: &'a [(String, String)]) -> sim::Options<'a> {
        sim::Options {
            backend: self.backend.into(),
            sets,
            waveform: self.vcd.is_some(),
        }
    }
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| UsageError(format!("cannot read {}: {e}", path.display())))
}

pub fn run(o: Options) -> Result<ExitCode> {
    if let Some(path) = &o.trace {
        let sets = parse_sets(&o.sets)?;
        let text = read(path)?;
        let run = sim::run_trace(&path.display().to_string(), &text, &o.sim(&sets));
        return finish(&o, run.map_err(UsageError)?);
    }
    let workload = match (&o.workload, &o.profile) {
        (Some(path), _) => Workload::parse(&path.display().to_string(), &read(path)?),
        (None, Some(name)) => Workload::profile(name, o.seed, o.waves),
        (None, None) => unreachable!("clap requires a source"),
    }
    .map_err(UsageError)?;
    let sets = parse_sets(&o.sets)?;
    let run = sim::run_workload(workload, &o.sim(&sets));
    finish(&o, run.map_err(UsageError)?)
}

/// Writes a run's waveform and records and prints its report or failure.
fn finish<R: Report>(o: &Options, run: Run<R>) -> Result<ExitCode> {
    if let (Some(path), Some(w)) = (&o.vcd, &run.waveform) {
        write_waveform(path, w.top, &w.layout, &w.rows)?;
    }
    let report = match run.result {
        Ok(report) => report,
        Err(failure) => {
            println!("{failure}");
            if let (true, Some(v)) = (failure.diverged(), &o.vcd) {
                println!("vcd: {}", v.display());
            }
            return Ok(ExitCode::from(1));
        }
    };
    if let Some(path) = &o.records {
        write_json_lines(path, report.records())?;
    }
    if o.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{report}");
    }
    Ok(ExitCode::SUCCESS)
}
