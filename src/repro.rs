//! `smrtl repro`: reproduce a paper's evaluation trends on the behavioral models
//! (docs/elastic-pipeline.md §8; library in [`smrtl_testbench::repro`]).

use crate::output::write_atomic;
use crate::{Result, UsageError};
use smrtl_testbench::repro;
use std::path::PathBuf;
use std::process::ExitCode;

/// The reproducible experiments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Experiment {
    /// Seed 000 §6 (Figs. 6, 7, 9): Elastic Pipeline and BCAWS on the Table-5 profiles.
    ElasticPipeline,
}

pub struct Options {
    pub experiment: Experiment,
    pub json: bool,
    pub plot: Option<PathBuf>,
    pub seed: u64,
    pub waves: u32,
}

pub fn run(o: Options) -> Result<ExitCode> {
    match o.experiment {
        Experiment::ElasticPipeline => {}
    }
    // Refuse an unwritable plot path before the simulation.
    if let Some(path) = &o.plot {
        crate::output::writable_dir(path)?;
    }
    let report = repro::run(repro::Options {
        seed: o.seed,
        waves: o.waves,
    })
    .map_err(UsageError)?;
    if let Some(path) = &o.plot {
        write_atomic(path, repro::svg(&report).as_bytes())?;
    }
    if o.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", repro::text(&report));
    }
    Ok(ExitCode::SUCCESS)
}
