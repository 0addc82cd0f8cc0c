//! The SM-level systems: each an SM model with the block(s) it can run in its loop, the input
//! files it reads, its params and its built-in profiles. What the blocks are to `smrtl gen`,
//! `cosim` and `synth` ([`crate::registry`]), the systems are to `smrtl sim`, `bench`, `sweep`
//! and `list --systems`: the CLI reaches every system through the one shape [`System`], and
//! the list is [`registry`], one line per system (docs/architecture.md §"Systems").

pub mod cli;
pub mod coh_sm;
pub mod detect;
pub mod elastic_sm;
pub mod mem_sm;
pub mod registry;
pub mod run;
pub mod sharing_sm;
pub mod stall_plot;
pub mod stalls;

pub use detect::{detect, Detected};
pub use registry::{system, systems};
pub use run::{Backend, Failure, Report, Run, RunOptions, Waveform};

use serde_json::Value;
use smrtl_hdl::{ParamError, ParamInfo};

/// How a file of an input kind is recognised when no `"kind"` field names it.
#[derive(Debug)]
pub enum Shape {
    /// A JSON object with every key of `required`; `allowed` is every key the format takes
    /// (it tells two kinds apart when both find their required keys).
    Json {
        required: &'static [&'static str],
        allowed: &'static [&'static str],
    },
    /// Text that is not JSON, in a file with one of these extensions (without the dot).
    Text { extensions: &'static [&'static str] },
}

/// The `smrtl bench BLOCK --FLAG` form an input kind or a profile set answered to before
/// `smrtl bench --system` (now its deprecated alias).
#[derive(Debug)]
pub struct LegacyBench {
    /// The block the old form named.
    pub block: &'static str,
    /// The one-line refusal of another block (the block given).
    pub refuse: fn(&str) -> String,
}

/// One kind of input file of a system.
#[derive(Debug)]
pub struct InputKind {
    /// Its `"kind"` value.
    pub name: &'static str,
    /// What the file is, in one line (with its format).
    pub summary: &'static str,
    /// How a file without a `"kind"` field is recognised as this kind.
    pub shapes: &'static [Shape],
    /// Most bytes of such a file (docs/cli.md "Limits").
    pub max_bytes: u64,
    /// The `smrtl sim` flag that read it before `smrtl sim FILE` (now its deprecated alias),
    /// if it had one.
    pub legacy_flag: Option<&'static str>,
    /// The `smrtl bench BLOCK --FLAG` form, if there was one.
    pub legacy_bench: Option<LegacyBench>,
    /// The block whose RTL runs in the loop on an RTL backend.
    pub block: &'static str,
    /// What `--records` writes.
    pub records: &'static str,
    /// What `--vcd` shows.
    pub vcd: &'static str,
    /// A sweep's columns over files of this kind: (column, JSON pointer into a model run's
    /// report).
    pub metrics: &'static [(&'static str, &'static str)],
}

/// A system's built-in profiles (synthetic inputs, by name).
#[derive(Debug)]
pub struct Profiles {
    /// What a profile is, in one line.
    pub summary: &'static str,
    /// The names, in listing order.
    pub names: fn() -> Vec<&'static str>,
    /// A profile's canonical name (names are case-insensitive), or the one-line error that
    /// lists the allowed ones.
    pub lookup: fn(&str) -> Result<String, String>,
    /// What `--seed` draws, and what `--waves` counts (1..=256).
    pub seed: &'static str,
    pub waves: &'static str,
    /// The `smrtl sim` flag that ran them before `--system NAME --profile P`, if any.
    pub legacy_flag: Option<&'static str>,
    /// The help of that flag.
    pub legacy_help: &'static str,
    /// The `smrtl bench BLOCK --profile` form, if there was one.
    pub legacy_bench: Option<LegacyBench>,
    /// The block whose RTL runs in the loop on an RTL backend.
    pub block: &'static str,
}

/// What a system runs on.
#[derive(Clone, Copy, Debug)]
pub enum Input<'a> {
    /// A file of one of the system's kinds: its name in messages and its text.
    File {
        kind: &'static InputKind,
        name: &'a str,
        text: &'a str,
    },
    /// A built-in profile.
    Profile {
        name: &'a str,
        seed: u64,
        waves: u32,
    },
}

/// A system's descriptor: implemented once per system, in its file of this folder, and listed
/// once in [`registry`].
pub trait System: Sync {
    /// Its name on the command line (`--system NAME`, a sweep spec's `"system"`).
    fn name(&self) -> &'static str;
    /// One line for `smrtl list --systems`: what it is and which seed it comes from.
    fn summary(&self) -> &'static str;
    /// Its params, declared once with `block_params!` (`--set`, `smrtl list --systems`, sweep
    /// axes).
    fn params(&self) -> Vec<ParamInfo>;
    /// The kinds of input file it reads.
    fn inputs(&self) -> &'static [InputKind];
    /// Its built-in profiles, if it has any.
    fn profiles(&self) -> Option<&'static Profiles>;
    /// Reads and checks `input` with the params overridden by `sets` (already checked by
    /// [`check_sets`]): every usage error surfaces here, before any run.
    fn load(&self, input: Input, sets: &[(String, String)]) -> Result<Box<dyn Loaded>, String>;
    /// The columns a sweep point adds after the grid's axes.
    fn sweep_metrics(&self) -> Vec<&'static str>;
    /// Checks each profile × params combination of a sweep before any point runs (a checker
    /// may keep what it drew between calls).
    fn sweep_checker(&self) -> SweepChecker;
    /// One sweep point on the model: profile `profile`, params `overrides` (JSON values, as in
    /// a file's `params`), `seed` and `waves`; one cell per [`System::sweep_metrics`].
    fn sweep_point(
        &self,
        profile: &str,
        overrides: &[(String, Value)],
        seed: u64,
        waves: u32,
    ) -> Result<Vec<Value>, String>;
}

/// An input read and checked for a system: run it (`smrtl sim`), or time it (`smrtl bench`).
pub trait Loaded: Sync {
    /// Runs on `o.backend`: the model alone, or with the block's RTL in lock step beside it,
    /// every cycle compared.
    fn run(&self, o: RunOptions) -> Result<Run, String>;
    /// How `smrtl bench` shows this input; `label` is how it was given (`--profile dct`, a
    /// path). Runs the model once for the figures.
    fn bench(&self, label: &str) -> Result<BenchPlan, String>;
    /// One run of the model alone: the cycles it simulated.
    fn model_pass(&self) -> Result<u64, String>;
    /// [`Loaded::model_pass`] with the stall probe attached as `smrtl sim --stalls` attaches
    /// it (docs/stall-inspector.md §5); `None` when the input has no warps to classify.
    fn stalls_pass(&self) -> Result<Option<u64>, String> {
        Ok(None)
    }
    /// Passes of the model with the RTL on `backend` in the loop (built, or found in the
    /// cache, now, so a missing tool shows before any timing); each returns the cycles it
    /// simulated, and a divergence is an error.
    fn rtl_passes(&self, backend: Backend) -> Result<RtlPasses<'_>, String>;
}

/// A checker of a sweep's profile × params combinations: (profile, params, seed).
pub type SweepChecker = Box<dyn FnMut(&str, &[(String, Value)], u64) -> Result<(), String>>;

/// Repeated runs with the RTL in the loop (see [`Loaded::rtl_passes`]).
pub type RtlPasses<'a> = Box<dyn FnMut() -> Result<u64, String> + 'a>;

/// How `smrtl bench` titles and describes the race of one loaded input.
pub struct BenchPlan {
    /// The block in the loop and the input: `sm_core --profile dct`.
    pub subject: String,
    /// The run's figures: `45304 cycles, 8544 warp instructions, seed 1`.
    pub figures: String,
    /// The JSON fields before the rates.
    pub head: Value,
    /// The rate the `x ...` column divides by.
    pub base: &'static str,
    /// What a pass's count counts (`cycles`; a multi-SM system: `sm_cycles`).
    pub unit: &'static str,
    /// What the model contender is, and the RTL ones on rust-hdl and on Verilator.
    pub model: &'static str,
    pub rusthdl: String,
    pub verilator: String,
    /// Where the co-simulation runs, and what its RTL side does beyond the model (ratio
    /// lines).
    pub where_: &'static str,
    pub side: &'static str,
}

/// Every `--set` with its key as `system` declares it (the exact name, else the one that
/// matches in any case: `m=2` is `M=2`); a name the system does not declare is refused with
/// the allowed ones. The values are checked where they land, with the input's own params.
pub fn check_sets(
    system: &dyn System,
    sets: &[(String, String)],
) -> Result<Vec<(String, String)>, String> {
    let params = system.params();
    sets.iter()
        .map(|(key, value)| {
            let exact = params.iter().find(|p| p.name == key);
            let named = exact.or_else(|| params.iter().find(|p| p.name.eq_ignore_ascii_case(key)));
            match named {
                Some(p) => Ok((p.name.to_string(), value.clone())),
                None => {
                    let allowed: Vec<&str> = params.iter().map(|p| p.name).collect();
                    Err(ParamError::Unknown {
                        block: system.name().into(),
                        key: key.clone(),
                        allowed: allowed.join(", "),
                    }
                    .to_string())
                }
            }
        })
        .collect()
}

/// A system's sweep metrics: each column's name and its JSON pointer into the run's report.
pub type Metrics = [(&'static str, &'static str)];

/// The names of `metrics`' columns ([`System::sweep_metrics`]).
pub fn metric_names(metrics: &Metrics) -> Vec<&'static str> {
    metrics.iter().map(|m| m.0).collect()
}

/// [`System::sweep_checker`] of a system whose profiles are checked by loading them.
pub fn loading_checker(system: &'static dyn System) -> SweepChecker {
    Box::new(move |profile, overrides, seed| {
        let input = Input::Profile {
            name: profile,
            seed,
            waves: 1,
        };
        system.load(input, &sets_of(overrides)).map(|_| ())
    })
}

/// [`System::sweep_point`] of a system whose profiles run on the model: `metrics` read from the
/// run's JSON report.
pub fn model_point(
    system: &dyn System,
    metrics: &Metrics,
    profile: &str,
    overrides: &[(String, Value)],
    seed: u64,
    waves: u32,
) -> Result<Vec<Value>, String> {
    let input = Input::Profile {
        name: profile,
        seed,
        waves,
    };
    let report = match system
        .load(input, &sets_of(overrides))?
        .run(RunOptions::model())?
        .result
    {
        Ok(r) => r.json(),
        Err(f) => return Err(f.to_string()),
    };
    Ok(metrics.iter().map(|(_, at)| metric(&report, at)).collect())
}

/// Sweep overrides (JSON values) as `--set` pairs: a string as it is, any other value as JSON.
pub fn sets_of(overrides: &[(String, Value)]) -> Vec<(String, String)> {
    overrides
        .iter()
        .map(|(k, v)| {
            let text = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), text)
        })
        .collect()
}

/// The value at JSON pointer `at` of a report (null where there is none): the default sweep
/// metrics read a model run's report.
pub fn metric(report: &Value, at: &str) -> Value {
    report.pointer(at).cloned().unwrap_or(Value::Null)
}

/// Refuses `--waves` outside 1..=256 (the bound of every system's profiles).
pub fn check_waves(waves: u32) -> Result<u32, String> {
    crate::studies::profiles::check_waves(waves)
}
