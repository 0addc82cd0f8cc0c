//! Reproduction of seed 001's §8 evaluation (docs/scratchpad-sharing.md §8): the synthetic Table 1
//! kernels ([`crate::studies::sharing_profiles`]) under the three unshared baselines and the four shared
//! configurations on the thread-block-residency SM model, IPC and cycles with the paper's metric
//! definitions (geomean of ratios), Table 4's instruction pattern, the resident-TB counts at 16,
//! 48 and 64 KB, and the four trend targets evaluated from the numbers. Each kernel runs the TBs
//! one SM ran in the paper (Table 4's threads over the TB size and 14 SMs, capped at
//! [`MAX_WAVES`]), over [`SEEDS`] seeds, and again at half that length (the convergence check);
//! every run goes through the result cache.
//!
//! Parts: the runs and the report (this file), the seeds' spread, the convergence check and
//! the per-kernel comparison with Table 11 (`compare.rs`), the trend targets (`targets.rs`),
//! the text and the chart (`text.rs`).

use crate::studies::cache::{Cache, Tally};
use crate::studies::repro::{argmax, Target};
use crate::studies::sharing_profiles::{Extra, KernelProfile, Set, PROFILES, WAVES};
use crate::studies::sweep::par_map;
use serde::{Deserialize, Serialize};
use smrtl_cosim::kernel::cfg::Program;
use smrtl_cosim::kernel::relssp_pass::{self, Mode};
use smrtl_cosim::sm::sharing_sm::{load_kernel, SharingSm, SmParams, SmStats};
use std::num::NonZeroUsize;
use std::path::PathBuf;

mod compare;
mod targets;
mod text;

pub use compare::{pearson, Comparison, Convergence, KernelCompare, Spread};
pub use text::{svg, text};

/// The paper's tables ([001] Tables 4 and 11) and the §8 metrics over them (spec A23).
pub mod paper {
    /// Table 11: IPC of Unshared-LRR, Unshared-GTO, Unshared-2Level and Shared-OWF-OPT.
    pub const TABLE11: [(&str, [f64; 4]); 14] = [
        ("backprop", [178.01, 179.78, 178.38, 310.1]),
        ("DCT1", [284.48, 289.39, 281.54, 322.28]),
        ("DCT2", [283.84, 287.16, 288.42, 325.83]),
        ("DCT3", [358.11, 373.21, 384.3, 423.12]),
        ("DCT4", [381.23, 402.4, 406.12, 436.2]),
        ("NQU", [35.77, 35.77, 35.76, 37.46]),
        ("SRAD1", [199.18, 200.58, 199.23, 227.74]),
        ("SRAD2", [67.19, 67.39, 66.98, 76.18]),
        ("FDTD3d", [330.52, 331.96, 328.95, 322.94]),
        ("heartwall", [104.92, 104.92, 105.05, 201.62]),
        ("histogram", [153.46, 153.38, 151.56, 153.19]),
        ("MC1", [44.43, 44.57, 44.15, 58.79]),
        ("NW1", [25.34, 25.34, 25.26, 25.94]),
        ("NW2", [25.4, 25.4, 25.32, 27.51]),
    ];

    /// Table 4: threads, Unshared-LRR and Shared-OWF-OPT dynamic thread-instructions.
    pub const TABLE4: [(&str, [u64; 3]); 14] = [
        ("backprop", [1_048_576, 131_203_072, 133_234_688]),
        ("DCT1", [32_768, 9_371_648, 9_404_416]),
        ("DCT2", [32_768, 9_502_720, 9_535_488]),
        ("DCT3", [32_768, 11_255_808, 11_304_960]),
        ("DCT4", [32_768, 11_157_504, 11_206_656]),
        ("NQU", [24_576, 1_282_747, 1_331_515]),
        ("SRAD1", [4_161_600, 756_433_955, 760_595_555]),
        ("SRAD2", [4_161_600, 450_077_975, 454_239_575]),
        ("FDTD3d", [144_384, 5_549_531_392, 5_549_820_160]),
        ("heartwall", [17_920, 11_280_920, 11_316_760]),
        ("histogram", [46_080, 893_769_168, 893_861_328]),
        ("MC1", [3_008, 2_881_568, 2_887_584]),
        ("NW1", [3_184, 5_580_458, 5_583_642]),
        ("NW2", [3_168, 5_561_919, 5_565_087]),
    ];

    /// Headline figures ([001] abstract, §8.1): average and largest IPC improvement of
    /// Shared-OWF-OPT over each baseline, and the cycle reductions.
    pub const GAIN_VS_LRR: f64 = 0.1901;
    pub const GAIN_VS_GTO: f64 = 0.1773;
    pub const GAIN_VS_2LEVEL: f64 = 0.1808;
    pub const GAIN_MAX: f64 = 0.9217;
    pub const GAIN_MAX_KERNEL: &str = "heartwall";
    pub const CYCLE_REDUCTION_MEAN: f64 = 0.1542;
    pub const CYCLE_REDUCTION_MAX: f64 = 0.478;
}

/// `geomean(new_k / base_k) − 1` (spec §8 "Metrics": the paper's average).
pub fn geomean_gain(pairs: impl IntoIterator<Item = (f64, f64)>) -> f64 {
    geomean(pairs.into_iter().map(|(new, base)| new / base)) - 1.0
}

/// The geometric mean (1 for no values).
pub fn geomean(v: impl IntoIterator<Item = f64>) -> f64 {
    let (sum, n) = v
        .into_iter()
        .fold((0.0, 0u32), |(s, n), x| (s + x.ln(), n + 1));
    if n == 0 {
        1.0
    } else {
        (sum / f64::from(n)).exp()
    }
}

/// Thresholds of the trend targets (our choice; §8 gives directions).
pub mod thresholds {
    /// T1, T2: "about 0" is within this fraction.
    pub const ABOUT_ZERO: f64 = 0.03;
    /// T2: OPT and PostDom "help" on Set 1: geomean gain over Shared-OWF at least this.
    pub const HELPS: f64 = 0.05;
}

/// One of the seven configurations of §8.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Config {
    UnsharedLrr,
    UnsharedGto,
    Unshared2Level,
    SharedLrr,
    SharedOwf,
    SharedOwfOpt,
    SharedOwfPostDom,
}

impl Config {
    pub const ALL: [Config; 7] = [
        Config::UnsharedLrr,
        Config::UnsharedGto,
        Config::Unshared2Level,
        Config::SharedLrr,
        Config::SharedOwf,
        Config::SharedOwfOpt,
        Config::SharedOwfPostDom,
    ];
    /// The baselines the improvements are measured against.
    pub const BASELINES: [Config; 3] = [
        Config::UnsharedLrr,
        Config::UnsharedGto,
        Config::Unshared2Level,
    ];
    /// The configurations with scratchpad sharing.
    pub const SHARED: [Config; 4] = [
        Config::SharedLrr,
        Config::SharedOwf,
        Config::SharedOwfOpt,
        Config::SharedOwfPostDom,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Config::UnsharedLrr => "Unshared-LRR",
            Config::UnsharedGto => "Unshared-GTO",
            Config::Unshared2Level => "Unshared-2Level",
            Config::SharedLrr => "Shared-LRR",
            Config::SharedOwf => "Shared-OWF",
            Config::SharedOwfOpt => "Shared-OWF-OPT",
            Config::SharedOwfPostDom => "Shared-OWF-PostDom",
        }
    }

    /// The SM params that make this configuration (`--set` names).
    pub fn sets(self) -> Vec<(String, String)> {
        let (share, sched) = match self {
            Config::UnsharedLrr => (false, "LRR"),
            Config::UnsharedGto => (false, "GTO"),
            Config::Unshared2Level => (false, "TWO_LEVEL_ACTIVE"), // TL_ACTIVE = 6 (its default)
            Config::SharedLrr => (true, "LRR"),
            _ => (true, "OWF"),
        };
        vec![
            ("share".into(), share.to_string()),
            ("SCHED".into(), sched.into()),
        ]
    }

    /// The relssp placement the kernel is compiled with, if any.
    pub fn mode(self) -> Option<Mode> {
        match self {
            Config::SharedOwfOpt => Some(Mode::Opt),
            Config::SharedOwfPostDom => Some(Mode::PostDom),
            _ => None,
        }
    }
}

/// What one run measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measure {
    pub cycles: u64,
    pub thread_instructions: u64,
    /// Thread-instructions per cycle (inserted relssp and `bra` included).
    pub ipc: f64,
    pub resident_tbs: u32,
    /// Whether the kernel ran with relssp placed (the launch shares and the configuration
    /// compiles with the pass).
    pub compiled: bool,
}

/// Runs `prof` (`grid` TBs, coins seeded `seed`) under `config` with extra `--set`s.
pub fn run_one(
    prof: &KernelProfile,
    config: Config,
    grid: u32,
    seed: u64,
    extra: &[(String, String)],
) -> Result<Measure, String> {
    let text = prof.program(grid, seed);
    let mut sets = config.sets();
    sets.extend_from_slice(extra);
    let (mut kernel, mut params, _) = load_kernel(&text, &sets)?;
    // The compiler inserts relssp only into kernels whose launch shares (ShSM = 1): the launch
    // is known at compile time from R_tb, the block size and the SM (docs §8.1).
    let shares = params.launch(prof.r_tb, prof.threads).shsm == 1;
    let compiled = match config.mode() {
        Some(mode) if shares => {
            let prog = Program::parse(&text).map_err(|e| e.to_string())?;
            let placed = relssp_pass::place(
                &prog,
                &relssp_pass::Options {
                    mode,
                    t: params.t,
                    align: params.align,
                },
            )
            .map_err(|e| e.to_string())?;
            let json = serde_json::to_string(&placed.program).map_err(|e| e.to_string())?;
            (kernel, params, _) = load_kernel(&json, &sets)?;
            true
        }
        _ => false,
    };
    let stats = run_stats(&params, &kernel)
        .map_err(|e| format!("{} {}: {e}", prof.name, config.label()))?;
    Ok(Measure {
        cycles: stats.cycles,
        thread_instructions: stats.thread_instructions,
        ipc: stats.ipc,
        resident_tbs: stats.resident_tbs_max,
        compiled,
    })
}

fn run_stats(p: &SmParams, k: &smrtl_cosim::kernel::program::Kernel) -> Result<SmStats, String> {
    SharingSm::new(p, k)
        .and_then(|sm| sm.run(None))
        .map_err(|e| e.to_string())
}

/// TBs of a profile's runs: `waves` waves of the shared launch at the SM's defaults.
pub fn grid(prof: &KernelProfile, waves: u32) -> u32 {
    waves * shared_launch(prof)
}

/// TBs of one wave of the shared launch at the SM's defaults.
fn shared_launch(prof: &KernelProfile) -> u32 {
    SmParams::default().launch(prof.r_tb, prof.threads).n.max(1) as u32
}

/// SMs of the paper's GPU ([001] §3's configuration: 14 clusters of one core).
pub const PAPER_SMS: u64 = 14;
/// The longest run, in waves of the shared launch: at the paper's size backprop would run 146
/// waves and SRAD1/2 258; their figures settle long before (the convergence check shows it),
/// and the command stays within its time budget.
pub const MAX_WAVES: u32 = 24;
/// Seeds of every run: the base seed and the next ones (only kernels with a branch coin
/// differ between seeds; the others run once).
pub const SEEDS: u64 = 3;

/// How long one kernel runs, and where that comes from (docs/scratchpad-sharing.md §8.1).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sizing {
    pub kernel: &'static str,
    /// Threads the paper launched (Table 4).
    pub paper_threads: u64,
    /// TBs per SM in the paper: threads / TB size / 14 SMs.
    pub paper_tbs_per_sm: f64,
    /// TBs our SM runs, and that in waves of the shared launch.
    pub grid: u32,
    pub waves: f64,
    /// Whether [`MAX_WAVES`] cut the paper's size.
    pub capped: bool,
}

/// Threads the paper launched for `kernel` (Table 4), if it is a Table 1 kernel.
pub fn paper_threads(kernel: &str) -> Option<u64> {
    paper::TABLE4
        .iter()
        .find(|(k, _)| *k == kernel)
        .map(|(_, v)| v[0])
}

/// The run length of `prof`: `waves` waves when given, else the paper's TBs per SM (rounded,
/// at least one; GPGPU-Sim hands the grid's TBs to the 14 SMs round-robin) capped at
/// [`MAX_WAVES`] waves; the Set-3 controls (not in Table 4) run [`WAVES`] waves.
pub fn sizing(prof: &KernelProfile, waves: Option<u32>) -> Sizing {
    let n = shared_launch(prof);
    let threads = paper_threads(prof.name).unwrap_or(0);
    let per_sm = threads as f64 / f64::from(prof.threads) / PAPER_SMS as f64;
    let (grid, capped) = match waves {
        Some(w) => (w * n, false),
        None if threads == 0 => (WAVES * n, false),
        None => {
            let tbs = (per_sm.round() as u32).max(1);
            (tbs.min(MAX_WAVES * n), tbs > MAX_WAVES * n)
        }
    };
    Sizing {
        kernel: prof.name,
        paper_threads: threads,
        paper_tbs_per_sm: per_sm,
        grid,
        waves: f64::from(grid) / f64::from(n),
        capped,
    }
}

/// The options of a reproduction.
#[derive(Clone, Debug)]
pub struct Options {
    /// The first seed of the branch coins (the runs use [`SEEDS`] seeds from it).
    pub seed: u64,
    /// Every kernel's run length in waves of the shared launch (None: the paper's size).
    pub waves: Option<u32>,
    /// The result cache's directory (None: off).
    pub cache: Option<PathBuf>,
    pub threads: Option<NonZeroUsize>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            seed: 1,
            waves: None,
            cache: None,
            threads: None,
        }
    }
}

/// One kernel × configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub kernel: &'static str,
    pub config: Config,
    /// The first seed's run.
    #[serde(flatten)]
    pub measure: Measure,
    /// IPC over the seeds: mean, least, largest.
    pub ipc_mean: f64,
    pub ipc_min: f64,
    pub ipc_max: f64,
    /// IPC / IPC(Unshared-LRR) − 1, the mean over the seeds of each seed's ratio.
    pub gain_vs_lrr: f64,
}

/// An improvement over kernels: the geomean (the paper's average) and the largest.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Gain {
    pub config: Config,
    pub baseline: Config,
    /// `geomean(IPC / IPC_base) − 1`.
    pub ipc_gain: f64,
    pub ipc_gain_max: f64,
    pub ipc_gain_max_kernel: &'static str,
    /// `1 − geomean(cycles / cycles_base)`.
    pub cycle_reduction: f64,
    pub cycle_reduction_max: f64,
}

/// Table 4's pattern for one kernel: ours beside the paper's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InstrRow {
    pub kernel: &'static str,
    pub threads: u64,
    pub unshared_lrr: u64,
    pub shared_owf_opt: u64,
    /// (SO − U) / threads.
    pub extra_per_thread: f64,
    pub extra: Extra,
    pub paper_extra: Extra,
}

/// Resident TBs of a kernel by scratchpad size: (unshared, shared).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Residency {
    pub kernel: &'static str,
    pub kb16: (u64, u64),
    pub kb48: (u64, u64),
    /// 48 KB with at most 2048 threads ([001] §8.1's second 48 KB configuration).
    pub kb48_2048: (u64, u64),
    pub kb64: (u64, u64),
    /// Table 1's counts at 16 KB.
    pub paper_kb16: (u32, u32),
    /// What the paper states at 48 / 64 KB, where it does.
    pub paper_note: &'static str,
}

/// Trend 1's sweep: Shared-OWF's gain over Unshared-LRR as the private phase grows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepPoint {
    pub private: u32,
    pub gain: f64,
}

/// Trend 4: a Set-3 control's pairs of runs that must be cycle-identical.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ControlRow {
    pub kernel: &'static str,
    pub shsm: u8,
    /// (shared, unshared) cycles for LRR and GTO; (OPT, non-OPT); (OWF GREEDY, GTO).
    pub lrr: (u64, u64),
    pub gto: (u64, u64),
    pub opt: (u64, u64),
    pub owf_greedy: (u64, u64),
}

/// The whole reproduction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub experiment: &'static str,
    /// The seeds every kernel ran with (the first is `--seed`).
    pub seeds: Vec<u64>,
    /// `--waves` when given (every kernel that many waves), else the paper's sizes.
    pub waves: Option<u32>,
    pub sizing: Vec<Sizing>,
    pub rows: Vec<Row>,
    /// Geomean gains over the kernels, the mean over the seeds.
    pub gains: Vec<Gain>,
    /// Shared-OWF-OPT's geomean gain over each baseline per seed.
    pub spread: Vec<Spread>,
    /// The same at half the run length.
    pub convergence: Vec<Convergence>,
    /// Ours beside Table 11, kernel by kernel.
    pub comparison: Comparison,
    pub instructions: Vec<InstrRow>,
    pub residency: Vec<Residency>,
    pub private_sweep: Vec<SweepPoint>,
    pub controls: Vec<ControlRow>,
    pub targets: Vec<Target>,
    pub notes: Vec<String>,
    /// Runs the result cache gave back and runs computed.
    #[serde(skip)]
    pub cache: (u64, u64),
}

impl Report {
    /// The row of `kernel` under `config`.
    pub fn row(&self, kernel: &str, config: Config) -> &Row {
        self.rows
            .iter()
            .find(|r| r.kernel == kernel && r.config == config)
            .expect("every kernel × config has a row")
    }

    /// The improvement of `config` over `baseline`.
    pub fn gain(&self, config: Config, baseline: Config) -> &Gain {
        self.gains
            .iter()
            .find(|g| g.config == config && g.baseline == baseline)
            .expect("every shared config × baseline has a gain")
    }

    pub fn target(&self, name: &str) -> Option<&Target> {
        self.targets.iter().find(|t| t.name == name)
    }
}

/// The 14 Table 1 kernels.
pub fn table1() -> impl Iterator<Item = &'static KernelProfile> {
    PROFILES.iter().filter(|p| p.set != Set::Three)
}

/// The profile trend 1 sweeps (an MC1-like Set-2 kernel) and its private-phase lengths.
const SWEEP_PROFILE: &str = "MC1";
const SWEEP_PRIVATE: [u32; 4] = [0, 3, 6, 12];

/// Trend 4's runs of each Set-3 control: a name, a configuration and extra `--set`s.
type ControlRun = (
    &'static str,
    Config,
    &'static [(&'static str, &'static str)],
);
const CONTROL_RUNS: [ControlRun; 7] = [
    ("shared_lrr", Config::SharedLrr, &[]),
    ("unshared_lrr", Config::UnsharedLrr, &[]),
    ("shared_gto", Config::SharedLrr, &[("SCHED", "GTO")]),
    ("unshared_gto", Config::UnsharedGto, &[]),
    ("opt", Config::SharedOwfOpt, &[]),
    ("owf", Config::SharedOwf, &[]),
    ("owf_greedy", Config::SharedOwf, &[("GREEDY", "true")]),
];

/// One run: a profile (its name, or trend 1's sweep length), a configuration, its TBs, the
/// coins' seed (0 for a kernel without a coin: every seed runs it alike) and extra `--set`s.
#[derive(Clone, Debug, PartialEq)]
struct RunKey {
    prof: KernelProfile,
    config: Config,
    grid: u32,
    seed: u64,
    extra: &'static [(&'static str, &'static str)],
}

impl RunKey {
    fn new(prof: KernelProfile, config: Config, grid: u32, seed: u64) -> RunKey {
        let seed = if prof.has_coin() { seed } else { 0 };
        RunKey {
            prof,
            config,
            grid,
            seed,
            extra: &[],
        }
    }

    /// What decides the run, for the result cache.
    fn parts(&self) -> serde_json::Value {
        serde_json::json!({
            "profile": self.prof, "config": self.config, "grid": self.grid,
            "seed": self.seed, "extra": self.extra,
        })
    }

    fn run(&self) -> Result<Measure, String> {
        let extra: Vec<(String, String)> = self
            .extra
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        run_one(&self.prof, self.config, self.grid, self.seed, &extra)
    }
}

/// The measures of the runs, each run once, by index.
struct Runs {
    measures: Vec<Measure>,
}

impl Runs {
    /// Adds `key` (once) and returns its index.
    fn add(keys: &mut Vec<RunKey>, key: RunKey) -> usize {
        keys.iter().position(|k| *k == key).unwrap_or_else(|| {
            keys.push(key);
            keys.len() - 1
        })
    }

    /// Runs every key on the sweep engine's threads through the cache.
    fn measure(keys: Vec<RunKey>, opts: &Options, tally: &Tally) -> Result<Runs, String> {
        let cache = Cache::open(opts.cache.as_deref(), "scratchpad-sharing")?;
        let outs = par_map(&keys, opts.threads, |k| {
            cache.get_or(&k.parts(), tally, || k.run()).map(|(m, _)| m)
        });
        let measures = outs.into_iter().collect::<Result<Vec<_>, _>>()?;
        Ok(Runs { measures })
    }
}

/// The runs' indices per seed, kernel and configuration.
type Table = Vec<Vec<[usize; 7]>>;

/// Runs the reproduction on every core (the sweep engine's parallel map) through the result
/// cache; deterministic in `opts.seed` whatever the thread count.
pub fn run(opts: Options) -> Result<Report, String> {
    let seeds: Vec<u64> = (0..SEEDS).map(|i| opts.seed.wrapping_add(i)).collect();
    let sizing: Vec<Sizing> = table1().map(|p| sizing(p, opts.waves)).collect();
    let sweep_prof = crate::studies::sharing_profiles::profile(SWEEP_PROFILE)?;
    let mut keys = vec![];
    let table = |keys: &mut Vec<RunKey>, half: bool| -> Table {
        seeds
            .iter()
            .map(|&s| {
                table1()
                    .zip(&sizing)
                    .map(|(p, z)| {
                        let grid = if half { z.grid.div_ceil(2) } else { z.grid };
                        Config::ALL.map(|c| Runs::add(keys, RunKey::new(*p, c, grid, s)))
                    })
                    .collect()
            })
            .collect()
    };
    let (full, half) = (table(&mut keys, false), table(&mut keys, true));
    let sweep: Vec<[usize; 2]> = SWEEP_PRIVATE
        .iter()
        .map(|&n| {
            let p = sweep_prof.with_private(n);
            [Config::UnsharedLrr, Config::SharedOwf]
                .map(|c| Runs::add(&mut keys, RunKey::new(p, c, grid(&p, WAVES), seeds[0])))
        })
        .collect();
    let controls_at: Vec<(&'static KernelProfile, Vec<usize>)> = PROFILES
        .iter()
        .filter(|p| p.set == Set::Three)
        .map(|p| {
            let at = CONTROL_RUNS
                .iter()
                .map(|&(_, c, extra)| {
                    let key = RunKey {
                        extra,
                        ..RunKey::new(*p, c, grid(p, WAVES), seeds[0])
                    };
                    Runs::add(&mut keys, key)
                })
                .collect();
            (p, at)
        })
        .collect();
    let tally = Tally::default();
    let runs = Runs::measure(keys, &opts, &tally)?;
    let m = |i: usize| &runs.measures[i];
    let mut report = Report {
        experiment: "scratchpad-sharing",
        seeds: seeds.clone(),
        waves: opts.waves,
        rows: rows(&full, &runs),
        gains: vec![],
        spread: vec![],
        convergence: vec![],
        comparison: Comparison::default(),
        sizing,
        instructions: vec![],
        residency: residency(),
        private_sweep: SWEEP_PRIVATE
            .iter()
            .zip(&sweep)
            .map(|(&n, [u, s])| SweepPoint {
                private: n,
                gain: m(*s).ipc / m(*u).ipc - 1.0,
            })
            .collect(),
        controls: controls_at
            .iter()
            .map(|(p, at)| control(p, |run| m(at[run]).cycles))
            .collect(),
        targets: vec![],
        notes: vec![],
        cache: tally.get(),
    };
    let ipc = |t: &Table| -> Vec<Vec<[f64; 7]>> {
        t.iter()
            .map(|per| per.iter().map(|row| row.map(|i| m(i).ipc)).collect())
            .collect()
    };
    let (full_ipc, half_ipc) = (ipc(&full), ipc(&half));
    report.gains = gains(&report, &full_ipc, &runs, &full);
    report.spread = compare::spread(&seeds, &full_ipc);
    report.convergence = compare::convergence(&full_ipc, &half_ipc);
    report.comparison = compare::comparison(&full_ipc);
    report.instructions = instructions(&report);
    report.targets = targets::targets(&report);
    report.notes = targets::notes(&report);
    Ok(report)
}

/// The rows of the first seed, with the IPC over all seeds.
fn rows(full: &Table, runs: &Runs) -> Vec<Row> {
    let m = |i: usize| &runs.measures[i];
    let mut out = vec![];
    for (k, p) in table1().enumerate() {
        for (j, &c) in Config::ALL.iter().enumerate() {
            let ipcs: Vec<f64> = full.iter().map(|per| m(per[k][j]).ipc).collect();
            let gains = full
                .iter()
                .map(|per| m(per[k][j]).ipc / m(per[k][0]).ipc - 1.0);
            out.push(Row {
                kernel: p.name,
                config: c,
                measure: m(full[0][k][j]).clone(),
                ipc_mean: mean(ipcs.iter().copied()),
                ipc_min: ipcs.iter().copied().fold(f64::INFINITY, f64::min),
                ipc_max: ipcs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                gain_vs_lrr: mean(gains),
            });
        }
    }
    out
}

/// The arithmetic mean (0 for no values).
pub fn mean(v: impl IntoIterator<Item = f64>) -> f64 {
    let (s, n) = v.into_iter().fold((0.0, 0u32), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        s / f64::from(n)
    }
}

/// Index of `c` in [`Config::ALL`].
pub fn at(c: Config) -> usize {
    Config::ALL
        .iter()
        .position(|&x| x == c)
        .expect("every config is in ALL")
}

/// Each shared configuration's gains over each baseline: per seed the geomean over the
/// kernels, then the mean over the seeds (the largest from the kernels' mean ratios).
fn gains(r: &Report, ipc: &[Vec<[f64; 7]>], runs: &Runs, full: &Table) -> Vec<Gain> {
    let cycles = |s: usize, k: usize, c: Config| runs.measures[full[s][k][at(c)]].cycles as f64;
    let names: Vec<&'static str> = r.sizing.iter().map(|z| z.kernel).collect();
    let mut out = vec![];
    for &c in &Config::SHARED {
        for &b in &Config::BASELINES {
            let ratio = |s: usize, k: usize| ipc[s][k][at(c)] / ipc[s][k][at(b)];
            let cyc = |s: usize, k: usize| cycles(s, k, c) / cycles(s, k, b);
            let seeds = 0..ipc.len();
            let per_kernel = |f: &dyn Fn(usize, usize) -> f64| -> Vec<f64> {
                (0..names.len())
                    .map(|k| mean(seeds.clone().map(|s| f(s, k))))
                    .collect()
            };
            let (kr, kc) = (per_kernel(&ratio), per_kernel(&cyc));
            let (max_kernel, max) = argmax(names.iter().copied().zip(kr.iter().copied()));
            let geo = |f: &dyn Fn(usize, usize) -> f64| {
                mean(
                    seeds
                        .clone()
                        .map(|s| geomean((0..names.len()).map(|k| f(s, k)))),
                )
            };
            out.push(Gain {
                config: c,
                baseline: b,
                ipc_gain: geo(&ratio) - 1.0,
                ipc_gain_max: max - 1.0,
                ipc_gain_max_kernel: max_kernel,
                cycle_reduction: 1.0 - geo(&cyc),
                cycle_reduction_max: 1.0 - kc.iter().copied().fold(f64::INFINITY, f64::min),
            });
        }
    }
    out
}

fn instructions(r: &Report) -> Vec<InstrRow> {
    table1()
        .map(|p| {
            let threads = u64::from(sizing(p, r.waves).grid) * u64::from(p.threads);
            let u = r
                .row(p.name, Config::UnsharedLrr)
                .measure
                .thread_instructions;
            let so = r
                .row(p.name, Config::SharedOwfOpt)
                .measure
                .thread_instructions;
            let extra = so.saturating_sub(u);
            InstrRow {
                kernel: p.name,
                threads,
                unshared_lrr: u,
                shared_owf_opt: so,
                extra_per_thread: extra as f64 / threads as f64,
                extra: Extra::classify(extra, threads),
                paper_extra: p
                    .paper_extra
                    .expect("Table 1 kernels have Table 4's column"),
            }
        })
        .collect()
}

/// Resident TBs of every Table 1 kernel at 16, 48 and 64 KB of scratchpad (§8.1).
fn residency() -> Vec<Residency> {
    let at = |p: &KernelProfile, smem: u32, warps: u32| {
        let mut sm = SmParams::default();
        sm.shape.smem = smem;
        sm.shape.warps = warps;
        let l = sm.launch(p.r_tb, p.threads);
        (l.base, l.n)
    };
    let w = SmParams::default().shape.warps;
    table1()
        .map(|p| Residency {
            kernel: p.name,
            kb16: at(p, 16 << 10, w),
            kb48: at(p, 48 << 10, w),
            kb48_2048: at(p, 48 << 10, 2048 / 32),
            kb64: at(p, 64 << 10, w),
            paper_kb16: p.paper_tbs,
            paper_note: match p.name {
                "DCT1" | "DCT2" => "48 KB: 8; 64 KB: 8 (thread limit)",
                "FDTD3d" => "48 KB: 16",
                "backprop" => "64 KB: 8 (thread limit)",
                "SRAD1" | "SRAD2" => "48 KB / 2048 threads: no extra TBs",
                _ => "",
            },
        })
        .collect()
}

/// Trend 4's pairs of `p`, from the cycles of each of [`CONTROL_RUNS`] by index.
fn control(p: &KernelProfile, cyc: impl Fn(usize) -> u64) -> ControlRow {
    let run = |name: &str| {
        let i = CONTROL_RUNS
            .iter()
            .position(|r| r.0 == name)
            .expect("a control run of that name");
        cyc(i)
    };
    ControlRow {
        kernel: p.name,
        shsm: SmParams::default().launch(p.r_tb, p.threads).shsm,
        lrr: (run("shared_lrr"), run("unshared_lrr")),
        gto: (run("shared_gto"), run("unshared_gto")),
        opt: (run("opt"), run("owf")),
        owf_greedy: (run("owf_greedy"), run("shared_gto")),
    }
}
