//! `smrtl repro`: reproduce a paper's evaluation trends on the behavioral models. The
//! experiments are the studies registry's ([`smrtl_testbench::studies::registry`]).

use crate::output::Outputs;
use crate::{Result, UsageError};
use clap::builder::{PossibleValue, PossibleValuesParser};
use smrtl_testbench::studies::cache;
use smrtl_testbench::studies::registry::{experiment, experiments, Experiment, Failure, Request};
use smrtl_testbench::studies::sweep::Shard;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Most `--threads` (as `smrtl sweep`).
const MAX_THREADS: u64 = 1024;

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
    format!(
        "Write every figure as SVG into DIR (created if missing; an experiment with one figure also takes a file OUT.svg): {}",
        each.join("; ")
    )
}

/// The help of option `flag`: what it does in each experiment that takes it (experiments
/// sharing one text named together).
fn option_help(flag: &str) -> String {
    let mut each: Vec<(Vec<&str>, &str)> = vec![];
    for e in experiments() {
        let Some(o) = e.options.iter().find(|o| o.flag == flag) else {
            continue;
        };
        match each.iter_mut().find(|(_, help)| *help == o.help) {
            Some((names, _)) => names.push(e.name),
            None => each.push((vec![e.name], o.help)),
        }
    }
    let each: Vec<String> = each
        .iter()
        .map(|(names, help)| format!("{}: {help}", names.join(", ")))
        .collect();
    each.join("; ")
}

/// What `--waves` counts, per experiment, and the defaults.
fn waves_help() -> String {
    let each: Vec<String> = experiments()
        .iter()
        .filter(|e| e.options.iter().any(|o| o.flag == "--waves"))
        .map(|e| match e.default_waves {
            Some(d) => format!("{} [default: {d}]", e.waves),
            None => e.waves.to_string(),
        })
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
    #[arg(long, value_name = "DIR", help = plot_help())]
    pub plot: Option<PathBuf>,
    /// Seed of the experiment's synthetic inputs.
    #[arg(value_parser = smrtl_testbench::arg_values::any_u64, long, default_value_t = 1)]
    pub seed: u64,
    #[arg(value_parser = smrtl_testbench::arg_values::waves, long, help = waves_help())]
    pub waves: Option<u32>,
    /// Exit 1 when a trend target fails (by default a failed target is reported, exit 0).
    #[arg(long)]
    pub strict: bool,
    // The experiments' own options: each one's help comes from the registry
    // ([`Experiment::options`]), naming the experiments that take it.
    #[arg(long, value_name = "N", value_parser = smrtl_testbench::arg_values::any_u64, help = option_help("--cycles"))]
    pub cycles: Option<u64>,
    #[arg(long, value_name = "pairs|triples|all|LIST", help = option_help("--workloads"))]
    pub workloads: Option<String>,
    #[arg(long, value_name = "LIST", help = option_help("--schemes"))]
    pub schemes: Option<String>,
    #[arg(long, help = option_help("--smil-grid"))]
    pub smil_grid: bool,
    #[arg(long, help = option_help("--sensitivity"))]
    pub sensitivity: bool,
    #[arg(long, value_name = "OUT", help = option_help("--csv"))]
    pub csv: Option<PathBuf>,
    #[arg(long, value_name = "I/N", allow_hyphen_values = true, help = option_help("--shard"))]
    pub shard: Option<String>,
    #[arg(long, help = option_help("--no-cache"))]
    pub no_cache: bool,
    #[arg(long, value_parser = smrtl_testbench::arg_values::uint::<usize>(1, MAX_THREADS), help = option_help("--threads"))]
    pub threads: Option<usize>,
    #[arg(long = "set", value_name = "KEY=VALUE", help = option_help("--set"))]
    pub sets: Vec<String>,
    #[arg(long, value_enum, help = option_help("--backend"))]
    pub backend: Option<crate::sim::Backend>,
}

/// The options given that `e` does not take (by their flag).
fn foreign(o: &ReproArgs, e: &Experiment) -> Option<&'static str> {
    let given = [
        ("--waves", o.waves.is_some()),
        ("--cycles", o.cycles.is_some()),
        ("--workloads", o.workloads.is_some()),
        ("--schemes", o.schemes.is_some()),
        ("--smil-grid", o.smil_grid),
        ("--sensitivity", o.sensitivity),
        ("--csv", o.csv.is_some()),
        ("--shard", o.shard.is_some()),
        ("--no-cache", o.no_cache),
        ("--threads", o.threads.is_some()),
        ("--set", !o.sets.is_empty()),
        ("--backend", o.backend.is_some()),
    ];
    given
        .into_iter()
        .find(|(flag, on)| *on && !e.options.iter().any(|o| o.flag == *flag))
        .map(|(flag, _)| flag)
}

/// Where the figures go: one `.svg` file, or a directory (created now if missing).
enum Plot {
    File(PathBuf),
    Dir(PathBuf, bool),
}

fn plot_target(p: &Path, e: &Experiment) -> Result<Plot> {
    if p.extension().is_some_and(|x| x == "svg") && !p.is_dir() {
        if !e.single_plot {
            return Err(UsageError(format!(
                "--plot {}: {} draws several figures; give a directory",
                p.display(),
                e.name
            )));
        }
        return Ok(Plot::File(p.to_path_buf()));
    }
    if p.is_dir() {
        return Ok(Plot::Dir(p.to_path_buf(), false));
    }
    if p.exists() {
        return Err(UsageError(format!(
            "--plot {}: not a directory (or an .svg file of a one-figure experiment)",
            p.display()
        )));
    }
    std::fs::create_dir(p).map_err(|err| {
        UsageError(format!(
            "--plot {}: cannot create the directory: {err}",
            p.display()
        ))
    })?;
    Ok(Plot::Dir(p.to_path_buf(), true))
}

pub fn run(o: ReproArgs) -> Result<ExitCode> {
    let e = experiment(&o.experiment).map_err(UsageError)?;
    if let Some(flag) = foreign(&o, &e) {
        let takes = if e.options.is_empty() {
            "none".to_string()
        } else {
            let flags: Vec<&str> = e.options.iter().map(|o| o.flag).collect();
            flags.join(", ")
        };
        return Err(UsageError(format!(
            "{flag} is not an option of {}; its options beyond --json, --plot, --seed, --strict: {takes}",
            e.name
        )));
    }
    if let Some(w) = o.waves {
        smrtl_testbench::systems::check_waves(w).map_err(UsageError)?;
    }
    let shard = o
        .shard
        .as_deref()
        .map(str::parse::<Shard>)
        .transpose()
        .map_err(UsageError)?;
    let sets = crate::parse_sets(&o.sets)?;
    // Refuse bad outputs before the simulation.
    let mut outputs = Outputs::new();
    let csv = o.csv.as_deref().map(|p| outputs.add(p)).transpose()?;
    let plot = o.plot.as_deref().map(|p| plot_target(p, &e)).transpose()?;
    // A one-figure file is reserved now; a directory's figures are named by the run.
    let plot_file = match &plot {
        Some(Plot::File(p)) => Some(outputs.add(p)?),
        _ => None,
    };
    let request = Request {
        seed: o.seed,
        waves: o.waves,
        plot: plot.is_some(),
        csv: csv.is_some(),
        cycles: o.cycles,
        workloads: o.workloads.clone(),
        schemes: o.schemes.clone(),
        smil_grid: o.smil_grid,
        sensitivity: o.sensitivity,
        shard,
        cache: if o.no_cache {
            None
        } else {
            cache::default_dir()
        },
        threads: o.threads.and_then(NonZeroUsize::new),
        sets,
        backend: o.backend.map_or_else(Default::default, Into::into),
    };
    let outcome = match (e.run)(&request) {
        Ok(x) => x,
        Err(failure) => {
            if let Some(Plot::Dir(d, true)) = &plot {
                let _ = std::fs::remove_dir(d);
            }
            return match failure {
                Failure::Refused(err) => Err(UsageError(err)),
                Failure::Run(err) => {
                    eprintln!("error: {err}");
                    Ok(ExitCode::from(1))
                }
            };
        }
    };
    if let (Some(csv), Some(text)) = (csv, &outcome.csv) {
        outputs.write(csv, text.as_bytes())?;
    }
    match &plot {
        Some(Plot::File(_)) => {
            if let (Some(out), Some((_, svg))) = (plot_file, outcome.svgs.first()) {
                outputs.write(out, svg.as_bytes())?;
            }
        }
        Some(Plot::Dir(d, _)) => {
            for (name, svg) in &outcome.svgs {
                let out = outputs.add(&d.join(name))?;
                outputs.write(out, svg.as_bytes())?;
            }
        }
        None => {}
    }
    outputs.commit()?;
    if o.json {
        println!("{}", outcome.json);
    } else {
        print!("{}", outcome.text);
    }
    if let Some(note) = &outcome.note {
        eprintln!("{note}");
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
