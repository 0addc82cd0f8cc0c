//! `smrtl sim`: an input of a system (a file, its kind recognised, or a built-in input) on
//! the system's behavioral model, alone or with its block's RTL in the loop (lock-step, every
//! cycle compared). Which systems, kinds, built-in inputs and deprecated alias flags exist is
//! the registry's ([`smrtl_testbench::systems`]).

use crate::output::{Output, Outputs, Waveform};
use crate::{parse_sets, Result, UsageError};
use clap::ArgMatches;
use smrtl_cosim::sm::stalls::StallOptions;
use smrtl_testbench::systems::stalls::{self, StallRequest};
use smrtl_testbench::systems::{self, cli, Run, RunOptions};
use std::path::PathBuf;
use std::process::ExitCode;

/// `--backend`, with the library's help for each value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    #[value(help = systems::Backend::Model.help())]
    Model,
    #[value(help = systems::Backend::Rusthdl.help())]
    Rusthdl,
    #[value(help = systems::Backend::Verilator.help())]
    Verilator,
}

impl From<Backend> for systems::Backend {
    fn from(b: Backend) -> Self {
        match b {
            Backend::Model => systems::Backend::Model,
            Backend::Rusthdl => systems::Backend::Rusthdl,
            Backend::Verilator => systems::Backend::Verilator,
        }
    }
}

/// The options of `smrtl sim` beside the registry's input options ([`cli::args`]).
#[derive(clap::Args)]
pub struct SimArgs {
    /// The input: its system and kind come from its "kind" field, else from its shape (see
    /// `smrtl list --systems`).
    pub file: Option<PathBuf>,
    /// Seed of a built-in input (what it draws: `smrtl list --systems`).
    #[arg(value_parser = smrtl_testbench::arg_values::any_u64, long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, value_enum, default_value = "model")]
    pub backend: Backend,
    #[arg(long)]
    pub json: bool,
    /// Write the per-cycle records as JSON lines, as the run goes (`-` for standard output).
    #[arg(long)]
    pub records: Option<PathBuf>,
    /// Write a VCD: inputs, model outputs and (with an RTL backend) RTL outputs and nets, and
    /// a GTKWave save file beside it (OUT.gtkw).
    #[arg(long)]
    pub vcd: Option<PathBuf>,
    /// Override a parameter of the system (`smrtl list --systems`), e.g. `--set KEY=VALUE`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Take the parameters a GPGPU-Sim configuration maps (`smrtl config --from-gpgpusim
    /// FILE SYSTEM` shows them); a `--set` of the same parameter wins.
    #[arg(long, value_name = "FILE")]
    pub gpgpusim_config: Option<PathBuf>,
    /// Print the stall breakdown (docs/stall-inspector.md): classes, memory-data sources,
    /// memory-structural reasons, conservation; with an RTL backend the `stall_inspector`
    /// RTL runs in the loop too, compared every cycle and read out at the end.
    #[arg(long)]
    pub stalls: bool,
    /// Write the stall breakdown as CSV (totals, snapshots, per PC).
    #[arg(long, value_name = "OUT", requires = "stalls")]
    pub stalls_csv: Option<PathBuf>,
    /// Draw the stall stacks as SVG (bars; stacked areas over time with --stalls-every).
    #[arg(long, value_name = "OUT.svg", requires = "stalls")]
    pub stalls_plot: Option<PathBuf>,
    /// Snapshot the stacks every K cycles (the stacks over time).
    #[arg(value_parser = smrtl_testbench::arg_values::uint::<u64>(1, u64::MAX), long, value_name = "K", requires = "stalls")]
    pub stalls_every: Option<u64>,
}

/// The `sim` command: its own options and the registry's.
pub fn command(c: clap::Command) -> clap::Command {
    c.args(cli::args(cli::For::Sim))
}

pub fn run(o: SimArgs, m: &ArgMatches) -> Result<ExitCode> {
    let sets = parse_sets(&o.sets)?;
    let chosen = cli::choose_sim(m, o.file.clone()).map_err(UsageError)?;
    let gpgpusim = o
        .gpgpusim_config
        .as_deref()
        .map(smrtl_testbench::gpgpusim::Config::read)
        .transpose()?;
    // Every output is checked (and reserved) before the input is even read.
    let mut outputs = Outputs::new();
    let records = o.records.as_deref().map(|p| outputs.add(p)).transpose()?;
    let waveform = o
        .vcd
        .as_deref()
        .map(|p| outputs.add_waveform(p))
        .transpose()?;
    let stall_files = [
        o.stalls_csv
            .as_deref()
            .map(|p| outputs.add(p))
            .transpose()?,
        o.stalls_plot
            .as_deref()
            .map(|p| outputs.add(p))
            .transpose()?,
    ];
    if let Some(input) = chosen.path() {
        outputs.input(input)?;
    }
    let (_, loaded) = chosen
        .load(o.seed, &sets, gpgpusim.as_ref())
        .map_err(UsageError)?;
    let opts = RunOptions {
        backend: o.backend.into(),
        waveform: o.vcd.is_some(),
        records: records.map(|r| outputs.writer(r)).transpose()?,
        stalls: o.stalls.then_some(StallRequest {
            opts: StallOptions {
                every: o.stalls_every.unwrap_or(0),
                // Only the CSV and the JSON show the per-PC table.
                per_pc: o.stalls_csv.is_some() || o.json,
                audit: false,
            },
        }),
    };
    let run = smrtl_hdl::progress::watch(|| loaded.run(opts)).map_err(UsageError)?;
    if let Some(b) = &run.stalls {
        let [csv, plot] = stall_files;
        if let Some(out) = csv {
            outputs.write(out, stalls::csv_all(b, &run.stalls_per_sm).as_bytes())?;
        }
        if let Some(out) = plot {
            outputs.write(out, systems::stall_plot::svg(b).as_bytes())?;
        }
    }
    finish(&o, outputs, records, waveform, run)
}

/// Writes a run's waveform, checks its records, prints its report or failure, and commits
/// the outputs.
fn finish(
    o: &SimArgs,
    mut outputs: Outputs,
    records: Option<Output>,
    waveform: Option<Waveform>,
    run: Run,
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
    let backend = systems::Backend::from(o.backend);
    let (text, code) = match (&run.result, &run.stalls) {
        (Ok(report), stalls) if o.json => {
            let mut v = report.json();
            if let Some(b) = stalls {
                v["stalls"] = stalls::json_all(b, &run.stalls_per_sm);
            }
            (serde_json::to_string_pretty(&v)?, ExitCode::SUCCESS)
        }
        (Ok(report), Some(b)) => (
            format!(
                "{report}\n{}",
                stalls::text_all(b, &run.stalls_per_sm, backend)
            ),
            ExitCode::SUCCESS,
        ),
        (Ok(report), None) => (report.to_string(), ExitCode::SUCCESS),
        (Err(failure), _) => {
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
