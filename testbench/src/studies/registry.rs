//! The reproducible experiments of `smrtl repro`: one line per experiment. Adding one is its
//! study in this folder and one line here.

use crate::studies::{repro, sharing_repro};

/// What an experiment gives the CLI.
pub struct Outcome {
    /// The whole report as one JSON object (`--json`).
    pub json: String,
    /// The report as people read it.
    pub text: String,
    /// The plot, when asked for.
    pub svg: Option<String>,
    /// The trend targets that do not hold.
    pub failed: Vec<&'static str>,
}

/// A reproduction of a paper's evaluation trends on a behavioral model.
pub struct Experiment {
    /// Its name on the command line.
    pub name: &'static str,
    /// One line of help: which seed, which section, what runs.
    pub help: &'static str,
    /// What `--plot` draws.
    pub plot: &'static str,
    /// What `--waves` counts, and its default.
    pub waves: &'static str,
    pub default_waves: u32,
    /// Runs it (deterministic in `seed`); `plot` asks for the SVG.
    pub run: fn(seed: u64, waves: u32, plot: bool) -> Result<Outcome, String>,
}

/// Every experiment, in `smrtl repro --help` order.
pub fn experiments() -> Vec<Experiment> {
    vec![
        Experiment {
            name: "elastic-pipeline",
            help: "Seed 000 §6 (Figs. 6, 7, 9): Elastic Pipeline and BCAWS on the Table-5 profiles",
            plot: "elastic-pipeline: stall categories, cf. seed 000 Fig. 6",
            waves: "repetitions per warp context of each profile's body (elastic-pipeline)",
            default_waves: repro::Options::default().waves,
            run: elastic_pipeline,
        },
        Experiment {
            name: "scratchpad-sharing",
            help: "Seed 001 §8 (Tables 4, 11): scratchpad sharing, OWF, OPT / PostDom relssp on the Table-1 kernels",
            plot: "scratchpad-sharing: IPC improvement per kernel and configuration",
            waves: "waves of each kernel's shared launch (scratchpad-sharing)",
            default_waves: sharing_repro::Options::default().waves,
            run: scratchpad_sharing,
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

fn failed(targets: &[repro::Target]) -> Vec<&'static str> {
    targets
        .iter()
        .filter(|t| !t.holds)
        .map(|t| t.name)
        .collect()
}

fn elastic_pipeline(seed: u64, waves: u32, plot: bool) -> Result<Outcome, String> {
    let r = repro::run(repro::Options { seed, waves })?;
    Ok(Outcome {
        json: serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?,
        text: repro::text(&r),
        svg: plot.then(|| repro::svg(&r)),
        failed: failed(&r.targets),
    })
}

fn scratchpad_sharing(seed: u64, waves: u32, plot: bool) -> Result<Outcome, String> {
    let r = sharing_repro::run(sharing_repro::Options { seed, waves })?;
    Ok(Outcome {
        json: serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?,
        text: sharing_repro::text(&r),
        svg: plot.then(|| sharing_repro::svg(&r)),
        failed: failed(&r.targets),
    })
}
