//! `smrtl repro`: reproduce a paper's evaluation trends on the behavioral models. The
//! experiments are the studies registry's ([`smrtl_testbench::studies::registry`]).

use crate::output::Outputs;
use crate::{Result, UsageError};
use clap::builder::{PossibleValue, PossibleValuesParser};
use smrtl_testbench::studies::registry::{experiment, experiments};
use std::path::PathBuf;
use std::process::ExitCode;

/// The experiment names with their help, for clap.
fn names() -> PossibleValuesParser {
    PossibleValuesParser::new(
        experiments()
            .into_iter()
            .map(|e| PossibleValue::new(e.name).help(e.help)),
    )
}

/// What `--plot` draws, per experiment.
fn plot_help() -> String {
    let each: Vec<&str> = experiments().iter().map(|e| e.plot).collect();
    format!("Write an SVG bar chart ({})", each.join("; "))
}

/// What `--waves` counts, per experiment, and the defaults.
fn waves_help() -> String {
    let each: Vec<String> = experiments()
        .iter()
        .map(|e| format!("{} [default: {}]", e.waves, e.default_waves))
        .collect();
    format!("Waves of each input: {}; 1..=256", each.join(", or "))
}

#[derive(clap::Args)]
pub struct ReproArgs {
    /// The experiment.
    #[arg(value_parser = names())]
    pub experiment: String,
    /// Print one JSON object (rows, summary, paper figures, targets, notes).
    #[arg(long)]
    pub json: bool,
    #[arg(long, value_name = "OUT.svg", help = plot_help())]
    pub plot: Option<PathBuf>,
    /// Seed of the experiment's synthetic inputs.
    #[arg(value_parser = smrtl_testbench::arg_values::any_u64, long, default_value_t = 1)]
    pub seed: u64,
    #[arg(value_parser = smrtl_testbench::arg_values::waves, long, help = waves_help())]
    pub waves: Option<u32>,
    /// Exit 1 when a trend target fails (by default a failed target is reported, exit 0).
    #[arg(long)]
    pub strict: bool,
}

pub fn run(o: ReproArgs) -> Result<ExitCode> {
    let e = experiment(&o.experiment).map_err(UsageError)?;
    let waves = o.waves.unwrap_or(e.default_waves);
    // Refuse a bad plot path or waves before the simulation.
    let mut outputs = Outputs::new();
    let plot = o.plot.as_deref().map(|p| outputs.add(p)).transpose()?;
    smrtl_testbench::systems::check_waves(waves).map_err(UsageError)?;
    let outcome = (e.run)(o.seed, waves, plot.is_some()).map_err(UsageError)?;
    if let (Some(plot), Some(svg)) = (plot, &outcome.svg) {
        outputs.write(plot, svg.as_bytes())?;
    }
    outputs.commit()?;
    if o.json {
        println!("{}", outcome.json);
    } else {
        print!("{}", outcome.text);
    }
    let failed = &outcome.failed;
    if failed.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let (verdict, code) = if o.strict {
        ("exit 1 (--strict)", ExitCode::from(1))
    } else {
        (
            "exit 0: a trend target is a comparison with the paper, not an error of the run; pass --strict to make it one",
            ExitCode::SUCCESS,
        )
    };
    eprintln!(
        "{} trend target(s) failed ({}); {verdict}",
        failed.len(),
        failed.join(", ")
    );
    Ok(code)
}
