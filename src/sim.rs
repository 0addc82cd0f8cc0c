//! `smrtl sim`: a trace or a scheduler-mode workload on the behavioral SM model, alone or with
//! the RTL in the loop (lock-step, every cycle compared).

use crate::output::{self, read_text, Output, Outputs};
use crate::{parse_sets, Result, UsageError};
use smrtl_testbench::studies::sim::{self, Report, Run, Workload};
use std::path::PathBuf;
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
    pub kernel: Option<PathBuf>,
    pub mem_workload: Option<PathBuf>,
    pub profile: Option<String>,
    pub kernel_profile: Option<String>,
    pub seed: u64,
    pub waves: u32,
    pub backend: Backend,
    pub json: bool,
    pub records: Option<PathBuf>,
    pub vcd: Option<PathBuf>,
    pub sets: Vec<String>,
}

/// Most bytes of a trace file, and of a workload file (README "Limits"): a trace is read in
/// two passes into 8 bytes per entry; a workload's JSON tree takes about ten times its text.
pub const MAX_TRACE_BYTES: u64 = 64 << 20;
pub const MAX_WORKLOAD_BYTES: u64 = 8 << 20;
/// Most bytes of a kernel file (its JSON tree takes about ten times its text).
pub const MAX_KERNEL_BYTES: u64 = 8 << 20;

pub fn run(o: Options) -> Result<ExitCode> {
    let sets = parse_sets(&o.sets)?;
    // Every output is checked (and reserved) before the input is even read.
    let mut outputs = Outputs::new();
    let records = o.records.as_deref().map(|p| outputs.add(p)).transpose()?;
    let waveform = o
        .vcd
        .as_deref()
        .map(|p| outputs.add_waveform(p))
        .transpose()?;
    if let Some(name) = &o.kernel_profile {
        use smrtl_testbench::studies::{
            profiles::check_waves, sharing_profiles, sharing_repro::grid,
        };
        let prof = sharing_profiles::profile(name).map_err(UsageError)?;
        check_waves(o.waves).map_err(UsageError)?;
        let text = prof.program(grid(prof, o.waves), o.seed);
        let opts = options(&o, &sets, records.map(|r| outputs.writer(r)).transpose()?);
        let run = sim::run_kernel(prof.name, &text, opts);
        return finish(&o, outputs, records, waveform, run.map_err(UsageError)?);
    }
    if let Some(path) = &o.mem_workload {
        let text = read_text(path, MAX_WORKLOAD_BYTES)?;
        let opts = options(&o, &sets, records.map(|r| outputs.writer(r)).transpose()?);
        let run = sim::run_mem_workload(&path.display().to_string(), &text, opts);
        return finish(&o, outputs, records, waveform, run.map_err(UsageError)?);
    }
    if let Some(path) = &o.kernel {
        let text = read_text(path, MAX_KERNEL_BYTES)?;
        let opts = options(&o, &sets, records.map(|r| outputs.writer(r)).transpose()?);
        let run = sim::run_kernel(&path.display().to_string(), &text, opts);
        return finish(&o, outputs, records, waveform, run.map_err(UsageError)?);
    }
    let workload = match (&o.trace, &o.workload, &o.profile) {
        (Some(path), _, _) => {
            let text = read_text(path, MAX_TRACE_BYTES)?;
            let opts = options(&o, &sets, records.map(|r| outputs.writer(r)).transpose()?);
            let run = sim::run_trace(&path.display().to_string(), &text, opts);
            return finish(&o, outputs, records, waveform, run.map_err(UsageError)?);
        }
        (None, Some(path), _) => Workload::parse(
            &path.display().to_string(),
            &read_text(path, MAX_WORKLOAD_BYTES)?,
        ),
        (None, None, Some(name)) => Workload::profile(name, o.seed, o.waves),
        _ => unreachable!("clap requires one source"),
    }
    .map_err(UsageError)?;
    let opts = options(&o, &sets, records.map(|r| outputs.writer(r)).transpose()?);
    let run = sim::run_workload(workload, opts);
    finish(&o, outputs, records, waveform, run.map_err(UsageError)?)
}

/// The library's options, with the parsed `--set` overrides and the records' writer.
fn options<'a>(
    o: &Options,
    sets: &'a [(String, String)],
    records: Option<&'a mut dyn std::io::Write>,
) -> sim::Options<'a> {
    sim::Options {
        backend: o.backend.into(),
        sets,
        waveform: o.vcd.is_some(),
        records,
    }
}

/// Writes a run's waveform, checks its records, prints its report or failure, and commits
/// the outputs.
fn finish<R: Report>(
    o: &Options,
    mut outputs: Outputs,
    records: Option<Output>,
    waveform: Option<output::Waveform>,
    run: Run<R>,
) -> Result<ExitCode> {
    if let (Some(r), Some(e)) = (records, &run.records_error) {
        return Err(UsageError(format!(
            "cannot write {}: {e}",
            outputs.path(r).display()
        )));
    }
    if let (Some(out), Some(w)) = (&waveform, &run.waveform) {
        outputs.write_waveform(out, w.top, &w.layout, &w.rows)?;
    }
    let (text, code) = match &run.result {
        Ok(report) if o.json => (serde_json::to_string_pretty(report)?, ExitCode::SUCCESS),
        Ok(report) => (report.to_string(), ExitCode::SUCCESS),
        Err(failure) => {
            let mut text = failure.to_string();
            if let (true, Some(v)) = (failure.diverged(), &o.vcd) {
                text += &format!("\nvcd: {}", v.display());
            }
            (text, ExitCode::from(1))
        }
    };
    outputs.commit()?;
    println!("{text}");
    Ok(code)
}
