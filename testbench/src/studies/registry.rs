//! The reproducible experiments of `smrtl repro`: one entry per experiment. Adding one is its
//! study in this folder and one entry here.

use crate::studies::mem_eval::repro as mem_repro;
use crate::studies::sweep::Shard;
use crate::studies::{repro, sharing_repro, stall_repro};
use std::num::NonZeroUsize;
use std::path::PathBuf;

/// What the command line asks of an experiment (each experiment takes the options its
/// [`Experiment::options`] names; the CLI refuses the others).
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub seed: u64,
    pub waves: Option<u32>,
    /// Draw the figures.
    pub plot: bool,
    /// `--csv`: the rows as the sweep table (`smrtl merge` joins the shards' tables).
    pub csv: bool,
    pub cycles: Option<u64>,
    pub workloads: Option<String>,
    pub schemes: Option<String>,
    pub smil_grid: bool,
    /// `--sensitivity`: the L1D, LRR and MSHR variants (memory-issue-control).
    pub sensitivity: bool,
    pub shard: Option<Shard>,
    /// The result cache's directory (`None`: `--no-cache`).
    pub cache: Option<PathBuf>,
    pub threads: Option<NonZeroUsize>,
    /// `--set KEY=VALUE` params of the experiment's system.
    pub sets: Vec<(String, String)>,
    /// `--backend`: where the blocks in the loop run (stall-inspector: every SM's inspector).
    pub backend: crate::systems::Backend,
}

/// What an experiment gives the CLI.
pub struct Outcome {
    /// The whole report as one JSON object (`--json`).
    pub json: String,
    /// The report as people read it.
    pub text: String,
    /// The figures when asked for: (file name, SVG).
    pub svgs: Vec<(String, String)>,
    /// The rows as a sweep table in CSV, when asked for.
    pub csv: Option<String>,
    /// The trend targets that do not hold.
    pub failed: Vec<String>,
    /// A line for standard error (e.g. what the cache reused).
    pub note: Option<String>,
}

/// Why an experiment gives no outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The request is refused before any work (the CLI exits 2).
    Refused(String),
    /// The run itself failed: an RTL mismatch, a model's error (the CLI exits 1).
    Run(String),
}

/// An option an experiment takes beyond `--json`, `--plot`, `--seed` and `--strict`.
pub struct Opt {
    /// Its flag on the command line.
    pub flag: &'static str,
    /// What it does in this experiment (`smrtl repro --help`).
    pub help: &'static str,
}

/// A reproduction of a paper's evaluation trends on a behavioral model.
pub struct Experiment {
    /// Its name on the command line.
    pub name: &'static str,
    /// One line of help: which seed, which section, what runs.
    pub help: &'static str,
    /// What `--plot` draws.
    pub plot: &'static str,
    /// What `--waves` counts, and its default (None: it has no waves).
    pub waves: &'static str,
    pub default_waves: Option<u32>,
    /// The options it takes beyond `--json`, `--plot`, `--seed` and `--strict`.
    pub options: &'static [Opt],
    /// It draws one figure (`--plot` may also name an `.svg` file).
    pub single_plot: bool,
    /// Runs it (deterministic in the request); its own checks come before any work.
    pub run: fn(&Request) -> Result<Outcome, Failure>,
}

/// `--shard`, the same in every experiment that runs a grid of the sweep engine.
pub const SHARD: Opt = Opt {
    flag: "--shard",
    help: "run only slice I of N (0-based) of the grid; needs --csv",
};
/// `--no-cache`, the same in every experiment with the result cache.
pub const NO_CACHE: Opt = Opt {
    flag: "--no-cache",
    help: "neither read nor write the result cache ($SMRTL_CACHE_DIR, else $XDG_CACHE_HOME/smrtl, else ~/.cache/smrtl)",
};
/// `--threads`, the same in every experiment that runs points in parallel.
pub const THREADS: Opt = Opt {
    flag: "--threads",
    help: "worker threads [default: every core]; the output does not depend on it",
};

/// `--waves` (its help and default come from [`Experiment::waves`]).
const WAVES: Opt = Opt {
    flag: "--waves",
    help: "waves of each input",
};

/// Every experiment, in `smrtl repro --help` order.
pub fn experiments() -> Vec<Experiment> {
    vec![
        Experiment {
            name: "elastic-pipeline",
            help: "Seed 000 §6 (Figs. 6, 7, 9): Elastic Pipeline and BCAWS on the Table-5 profiles",
            plot: "elastic-pipeline: stall categories, cf. seed 000 Fig. 6",
            waves: "repetitions per warp context of each profile's body (elastic-pipeline)",
            default_waves: Some(repro::Options::default().waves),
            options: &[WAVES, NO_CACHE],
            single_plot: true,
            run: elastic_pipeline,
        },
        Experiment {
            name: "scratchpad-sharing",
            help: "Seed 001 §8 (Tables 4, 11): scratchpad sharing, OWF, OPT / PostDom relssp on the Table-1 kernels",
            plot: "scratchpad-sharing: IPC improvement per kernel and configuration",
            waves: "waves of every kernel's shared launch instead of the paper's TBs per SM (scratchpad-sharing)",
            default_waves: None,
            options: &[WAVES, NO_CACHE, THREADS],
            single_plot: true,
            run: scratchpad_sharing,
        },
        Experiment {
            name: "memory-issue-control",
            help: "Seed 004 §4 (Fig. 4): WS, SMK-P/W, RBMI, QBMI, DMIL and SMIL on every pair and triple of the Table-2 kernels",
            plot: "memory-issue-control: WS, ANTT and fairness per class and scheme, DMIL vs WS, SMIL heat maps",
            waves: "",
            default_waves: None,
            options: mem_repro::OPTIONS,
            single_plot: false,
            run: mem_repro::run,
        },
        Experiment {
            name: "stall-inspector",
            help: "Seed 003 §VI–VII (Figs. 1–4): UTS, UTSD, implicit data movement and the MSHR sweep on the coherent multi-SM model, every SM's stall inspector in the loop",
            plot: "stall-inspector: per figure, (a) stall classes, (b) memory-data sources, (c) memory-structural reasons, normalised to the baseline's time",
            waves: "",
            default_waves: None,
            options: stall_repro::run::OPTIONS,
            single_plot: false,
            run: stall_repro::run::run,
        },
        Experiment {
            name: "bank-conflicts",
            help: "Seed 002 §4.1-§4.2 (Table 8.1, Fig. 8.10(a)): bankan's replays before and after its optimizer on the reconstructed kernels",
            plot: "bank-conflicts: replays per kernel before and after the proposed layout",
            waves: "",
            default_waves: None,
            options: &[],
            single_plot: true,
            run: crate::studies::bank_repro::run,
        },
    ]
}

/// Looks an experiment up by name; the error lists the known ones.
pub fn experiment(name: &str) -> Result<Experiment, String> {
    let all = experiments();
    let names: Vec<&str> = all.iter().map(|e| e.name).collect();
    let joined = names.join(", ");
    all.into_iter()
        .find(|e| e.name == name)
        .ok_or_else(|| smrtl_hdl::shown(&format!("unknown experiment `{name}`; allowed: {joined}")))
}

fn failed(targets: &[repro::Target]) -> Vec<String> {
    targets
        .iter()
        .filter(|t| !t.holds)
        .map(|t| t.name.to_string())
        .collect()
}

fn elastic_pipeline(q: &Request) -> Result<Outcome, Failure> {
    let waves = q.waves.unwrap_or(repro::Options::default().waves);
    let opts = repro::Options {
        seed: q.seed,
        waves,
    };
    let r = repro::run_cached(opts, q.cache.as_deref()).map_err(Failure::Run)?;
    let (reused, computed) = r.cache;
    Ok(Outcome {
        json: serde_json::to_string_pretty(&r).map_err(|e| Failure::Run(e.to_string()))?,
        text: repro::text(&r),
        svgs: if q.plot {
            vec![("elastic-pipeline.svg".into(), repro::svg(&r))]
        } else {
            vec![]
        },
        csv: None,
        failed: failed(&r.targets),
        note: Some(cache_note("elastic-pipeline", q, reused, computed)),
    })
}

/// The line a cached study prints on stderr: whether the cache was on and what it gave back.
fn cache_note(study: &str, q: &Request, reused: u64, computed: u64) -> String {
    let state = if q.cache.is_some() {
        "on"
    } else {
        "off (--no-cache)"
    };
    format!(
        "{study}: cache {state}: reused {reused} of {} runs",
        reused + computed
    )
}

fn scratchpad_sharing(q: &Request) -> Result<Outcome, Failure> {
    let r = sharing_repro::run(sharing_repro::Options {
        seed: q.seed,
        waves: q.waves,
        cache: q.cache.clone(),
        threads: q.threads,
    })
    .map_err(Failure::Run)?;
    let (reused, computed) = r.cache;
    Ok(Outcome {
        json: serde_json::to_string_pretty(&r).map_err(|e| Failure::Run(e.to_string()))?,
        text: sharing_repro::text(&r),
        svgs: if q.plot {
            vec![("scratchpad-sharing.svg".into(), sharing_repro::svg(&r))]
        } else {
            vec![]
        },
        csv: None,
        failed: failed(&r.targets),
        note: Some(cache_note("scratchpad-sharing", q, reused, computed)),
    })
}
