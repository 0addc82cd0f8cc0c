//! Reproduction of seed 000's §6 evaluation (Figs. 6, 7, 9) on the synthetic Table-5 profiles
//! (docs/elastic-pipeline.md §8, D27): every profile under Unified+RR, Elastic+RR, Elastic+BCAWS
//! and the `IssueIfNoNonMem` variant on the behavioral SM model; stall categories and IPC as in
//! §3.3; the trend targets T1–T6 of §8 evaluated from the numbers; a Fig.-6-style SVG.
//!
//! Workloads and configurations are set only through the JSON params (spec names).

use crate::blocks::sm_core::workload_from_value;
use crate::studies::cache::{Cache, Tally};
use crate::studies::profiles::{profiles, Profile, LANES, SUBWARPS};
use crate::studies::sweep::par_map;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use smrtl_cosim::sm::elastic_sm::{run_stats, Outcome, SmCore, SmStats, Workload};
use smrtl_hdl::blocks::elastic_pipeline::Kind;
use std::path::Path;

mod spread;
mod targets;
mod text;

pub use spread::{Headline, KernelCmp, PerKernel, Seeds, Spread};

pub use text::{svg, text, PLOT_CATEGORIES};

/// Paper figures (P §6.1–6.2, Figs. 6/7 text; spec §8 "Headline results").
pub mod paper {
    /// Mean stall reduction of EP + BCAWS (P §6.1 / abstract: 42.3 % on average).
    pub const STALL_REDUCTION_MEAN: f64 = 0.423;
    /// Largest stall reduction of EP + BCAWS (P §6.1: up to 64.0 %).
    pub const STALL_REDUCTION_MAX: f64 = 0.640;
    /// Mean speedup − 1 of EP + BCAWS (P §6.2: 13.3 % on average).
    pub const SPEEDUP_MEAN: f64 = 0.133;
    /// Largest speedup − 1 of EP + BCAWS (P §6.2: up to 20.7 %).
    pub const SPEEDUP_MAX: f64 = 0.207;
    /// Mean speedup − 1 of EP with the default RR scheduler (P §6.2: 3.2 %).
    pub const RR_SPEEDUP_MEAN: f64 = 0.032;
    /// Extra mean speedup from BCAWS over EP + RR (P §6.2: 10.1 %).
    pub const BCAWS_EXTRA: f64 = 0.101;
    /// IDCT speedup of `IssueIfNoNonMem` over strict BCAWS (P §6.2: +5.1 %; worse elsewhere).
    pub const VARIANT_IDCT: f64 = 0.051;
}

/// Trend-target thresholds (our choice; spec §8 gives only the direction).
pub mod thresholds {
    /// T2: Elastic+BCAWS mean speedup at least this ("clear").
    pub const T2_SPEEDUP: f64 = 1.05;
    /// T2: Elastic+BCAWS mean stall reduction at least this ("large").
    pub const T2_STALL_REDUCTION: f64 = 0.30;
    /// T3: on regular profiles Elastic+BCAWS keeps at most this fraction of Unified+RR's
    /// `bank_conflict` stalls ("nearly vanish").
    pub const T3_RESIDUE: f64 = 0.10;
    /// T5: conflict-free cycles within this fraction of Unified+RR.
    pub const T5_CYCLES: f64 = 0.02;
}

/// One of the four configurations of §8.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Config {
    /// Baseline: `pipe_mode` unified, `sched` rr.
    UnifiedRr,
    /// `pipe_mode` elastic, `sched` rr.
    ElasticRr,
    /// `pipe_mode` elastic, `sched` bcaws, `bcaws_policy` strict (D19).
    ElasticBcaws,
    /// `pipe_mode` elastic, `sched` bcaws, `bcaws_policy` issue_if_no_nonmem (P §6.2 variant).
    ElasticBcawsVariant,
}

impl Config {
    pub const ALL: [Config; 4] = [
        Config::UnifiedRr,
        Config::ElasticRr,
        Config::ElasticBcaws,
        Config::ElasticBcawsVariant,
    ];

    /// The JSON name (`unified_rr`, …).
    pub fn key(self) -> &'static str {
        match self {
            Config::UnifiedRr => "unified_rr",
            Config::ElasticRr => "elastic_rr",
            Config::ElasticBcaws => "elastic_bcaws",
            Config::ElasticBcawsVariant => "elastic_bcaws_variant",
        }
    }

    /// Display label.
    pub fn label(self) -> &'static str {
        match self {
            Config::UnifiedRr => "Unified+RR",
            Config::ElasticRr => "Elastic+RR",
            Config::ElasticBcaws => "Elastic+BCAWS",
            Config::ElasticBcawsVariant => "Elastic+BCAWS(IssueIfNoNonMem)",
        }
    }

    /// Short display label (table, plot legend).
    pub fn short(self) -> &'static str {
        match self {
            Config::UnifiedRr => "Unified+RR",
            Config::ElasticRr => "Elastic+RR",
            Config::ElasticBcaws => "Elastic+BCAWS",
            Config::ElasticBcawsVariant => "Elastic+BCAWS(var)",
        }
    }

    /// Sets `pipe_mode`, `sched` and `bcaws_policy` in a workload's `params`.
    pub fn apply(self, workload: &mut Value) {
        let (mode, sched, policy) = match self {
            Config::UnifiedRr => ("unified", "rr", "strict"),
            Config::ElasticRr => ("elastic", "rr", "strict"),
            Config::ElasticBcaws => ("elastic", "bcaws", "strict"),
            Config::ElasticBcawsVariant => ("elastic", "bcaws", "issue_if_no_nonmem"),
        };
        let p = &mut workload["params"];
        p["pipe_mode"] = mode.into();
        p["sched"] = sched.into();
        p["bcaws_policy"] = policy.into();
    }
}

/// The conflict-free variant of a workload: every `degrees` array set to all 1s (T5, Fig. 9).
pub fn conflict_free(workload: &mut Value) {
    for warp in workload["warps"].as_array_mut().into_iter().flatten() {
        for ins in warp.as_array_mut().into_iter().flatten() {
            if let Some(d) = ins.get_mut("degrees").and_then(Value::as_array_mut) {
                d.iter_mut().for_each(|x| *x = 1.into());
            }
        }
    }
}

pub use crate::studies::profiles::MAX_WAVES;

/// Seeds the reproduction runs: `opts.seed` and the next ones (docs/elastic-pipeline.md §8.3).
pub const SEEDS: u64 = 3;

/// The global-load return path of the reproduction: the DRAM model with its Table-4
/// derivation, seeded (docs/elastic-pipeline.md §8.2).
pub fn gmem_return(seed: u64) -> Value {
    serde_json::json!({"dram": {"seed": seed}})
}

/// What to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Options {
    pub seed: u64,
    pub waves: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options { seed: 1, waves: 4 }
    }
}

/// One kernel × configuration (§3.3 figures).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub kernel: &'static str,
    pub config: Config,
    pub cycles: u64,
    pub issue: u64,
    pub bank_conflict: u64,
    /// `bank_conflict` stalls in the first wave (cycles t < cycles / waves): cold history cache.
    pub bank_conflict_first_wave: u64,
    /// `bank_conflict` stalls with an ALU entry in EXE (WB grant went to MEM_last, §3.3): the
    /// held-ALU write-back stall, reported as its own category (T3 leaves it out).
    pub bank_conflict_alu: u64,
    pub other: u64,
    pub sched_fail: u64,
    pub idle: u64,
    /// bank_conflict + other + sched_fail (§3.3).
    pub stalls: u64,
    pub wb_bubbles: u64,
    pub hc_hits: u64,
    pub hc_misses: u64,
    /// 1 − stalls / stalls(Unified+RR).
    pub stall_reduction: f64,
    /// cycles(Unified+RR) / cycles.
    pub speedup: f64,
    /// Subwarp issues per cycle (IPC per lane, §3.3).
    pub ipc: f64,
    /// `Profile::theoretic_speedup` = 1 + r(d̄ − 1).
    pub theoretic_speedup: f64,
}

/// A statistic over kernels: arithmetic mean and maximum (with its kernel).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MeanMax {
    pub mean: f64,
    pub max: f64,
    pub max_kernel: &'static str,
}

/// The kernel with the largest value (the first on a tie; `("", −∞)` for none).
pub fn argmax(v: impl IntoIterator<Item = (&'static str, f64)>) -> (&'static str, f64) {
    v.into_iter().fold(
        ("", f64::NEG_INFINITY),
        |a, b| if b.1 > a.1 { b } else { a },
    )
}

fn mean_max(v: &[(&'static str, f64)]) -> MeanMax {
    let mean = v.iter().map(|x| x.1).sum::<f64>() / v.len().max(1) as f64;
    let (max_kernel, max) = argmax(v.iter().copied());
    MeanMax {
        mean,
        max,
        max_kernel,
    }
}

/// Per-kernel speedup of the variant over strict BCAWS (cycles_strict / cycles_variant).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VariantGain {
    pub kernel: &'static str,
    pub speedup: f64,
}

/// Summary over kernels; every mean is the arithmetic mean over the 8 kernels.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub mean_kind: &'static str,
    /// Elastic+BCAWS stall reduction.
    pub bcaws_stall_reduction: MeanMax,
    /// Elastic+BCAWS speedup.
    pub bcaws_speedup: MeanMax,
    /// Elastic+RR speedup.
    pub rr_speedup: MeanMax,
    /// mean Elastic+BCAWS speedup − mean Elastic+RR speedup.
    pub bcaws_extra: f64,
    /// The variant against strict BCAWS, per kernel.
    pub variant_vs_strict: Vec<VariantGain>,
}

/// The paper's figures beside ours.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PaperFigures {
    pub stall_reduction_mean: f64,
    pub stall_reduction_max: f64,
    pub speedup_mean: f64,
    pub speedup_max: f64,
    pub rr_speedup_mean: f64,
    pub bcaws_extra: f64,
    pub variant_idct: f64,
    pub variant_elsewhere: &'static str,
}

impl PaperFigures {
    pub fn get() -> Self {
        PaperFigures {
            stall_reduction_mean: paper::STALL_REDUCTION_MEAN,
            stall_reduction_max: paper::STALL_REDUCTION_MAX,
            speedup_mean: paper::SPEEDUP_MEAN,
            speedup_max: paper::SPEEDUP_MAX,
            rr_speedup_mean: paper::RR_SPEEDUP_MEAN,
            bcaws_extra: paper::BCAWS_EXTRA,
            variant_idct: paper::VARIANT_IDCT,
            variant_elsewhere: "worse",
        }
    }
}

/// A trend target of §8 and whether it holds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Target {
    pub name: &'static str,
    pub claim: &'static str,
    pub holds: bool,
    /// The numbers behind the verdict.
    pub detail: String,
    /// Why it fails (empty when it holds).
    pub explanation: String,
}

/// The conflict-free run of one profile (T5).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConflictFreeRow {
    pub kernel: &'static str,
    pub cycles_unified_rr: u64,
    pub cycles_elastic_rr: u64,
    pub cycles_elastic_bcaws: u64,
    /// Elastic+BCAWS records equal Elastic+RR records.
    pub trace_identical: bool,
    /// cycles(Elastic+BCAWS) / cycles(Unified+RR) − 1.
    pub cycles_vs_unified: f64,
}

/// `sched_fail` of one profile with `gmem_return` = `at_writeback` (diagnosis of T4).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SchedFailNoIcnt {
    pub kernel: &'static str,
    pub elastic_rr: u64,
    pub elastic_bcaws: u64,
}

/// The whole reproduction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub experiment: &'static str,
    pub seed: u64,
    pub waves: u32,
    pub rows: Vec<Row>,
    pub conflict_free: Vec<ConflictFreeRow>,
    /// T4 diagnosis: sched_fail with `gmem_return` = `at_writeback` (no GLD latency).
    pub sched_fail_no_icnt: Vec<SchedFailNoIcnt>,
    pub summary: Summary,
    /// The global-load return path used (`gmem_return` of every main run).
    pub gmem_return: Value,
    /// Headline figures over the seeds and at half the waves.
    pub seeds: Seeds,
    /// Per kernel, ours beside the paper's.
    pub per_kernel: PerKernel,
    pub paper: PaperFigures,
    pub targets: Vec<Target>,
    pub notes: Vec<String>,
    /// Jobs the result cache gave back and jobs computed.
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

    /// Kernel names in Table 5 order.
    pub fn kernels(&self) -> Vec<&'static str> {
        let mut k: Vec<&'static str> = Vec::new();
        for r in &self.rows {
            if !k.contains(&r.kernel) {
                k.push(r.kernel);
            }
        }
        k
    }

    pub fn target(&self, name: &str) -> Option<&Target> {
        self.targets.iter().find(|t| t.name == name)
    }
}

/// One main run: the stats and a breakdown of its `bank_conflict` stalls.
#[derive(Serialize, Deserialize)]
struct Run {
    stats: SmStats,
    bank_conflict_first_wave: u64,
    bank_conflict_alu: u64,
}

fn simulate(workload: &Value, waves: u32) -> Result<Run, String> {
    let w = workload_from_value(workload)?;
    let mut core = SmCore::new(&w.params)?;
    let tags = core.tags();
    // (cycle, ALU entry in EXE) of every bank-conflict stall; no records are built.
    let mut conflicts = vec![];
    let stats = core.run_kernel_with(&w.warps, |ev| {
        if ev.outcome == Outcome::BankConflict {
            let alu = ev.exe.is_some_and(|tag| {
                let (warp, seq, _) = tags.unpack(tag);
                w.warps[warp as usize][seq as usize].op == Kind::Alu
            });
            conflicts.push((ev.t, alu));
        }
    })?;
    let first = stats.cycles / u64::from(waves.max(1));
    Ok(Run {
        bank_conflict_first_wave: conflicts.iter().filter(|c| c.0 < first).count() as u64,
        bank_conflict_alu: conflicts.iter().filter(|c| c.1).count() as u64,
        stats,
    })
}

/// Cycle limit of the lock-step comparison (as `SmCore::run_kernel`).
const CYCLE_LIMIT: u64 = 10_000_000;

/// Runs two workloads in lock step, comparing their per-cycle records (the `SmRun.records`
/// of each, without storing them). Returns (traces identical, cycles of `a`, cycles of `b`).
fn lockstep(a: &Workload, b: &Workload) -> Result<(bool, u64, u64), String> {
    let (mut ca, mut cb) = (SmCore::new(&a.params)?, SmCore::new(&b.params)?);
    ca.kernel_start(&a.warps);
    cb.kernel_start(&b.warps);
    let (mut na, mut nb, mut same) = (0u64, 0u64, true);
    loop {
        let ra = (!ca.done()).then(|| ca.cycle());
        let rb = (!cb.done()).then(|| cb.cycle());
        if ra.is_none() && rb.is_none() {
            return Ok((same, na, nb));
        }
        na += u64::from(ra.is_some());
        nb += u64::from(rb.is_some());
        same &= ra == rb;
        if na.max(nb) > CYCLE_LIMIT {
            return Err(format!("no completion within {CYCLE_LIMIT} cycles"));
        }
    }
}

/// What one job runs.
enum Job {
    /// Profile index, configuration.
    Main(usize, Config),
    /// Profile index: conflict-free Unified+RR, and Elastic+RR vs Elastic+BCAWS traces.
    ConflictFree(usize),
    /// Profile index, configuration, with `gmem_return` = `at_writeback` (T4 diagnosis).
    NoIcnt(usize, Config),
    /// Extra run (index into the seeds/half list), profile index, configuration: headline only.
    Extra(usize, usize, Config),
}

/// The headline configurations, in [`spread::headline`]'s order.
const HEADLINE: [Config; 3] = [Config::UnifiedRr, Config::ElasticRr, Config::ElasticBcaws];

/// A job's result, as the result cache keeps it.
#[derive(Serialize, Deserialize)]
enum JobOut {
    Main(Run),
    Extra(u64, u64),
    /// Cycles of Unified+RR, Elastic+RR and Elastic+BCAWS, and whether the two Elastic traces
    /// are identical.
    ConflictFree(u64, u64, u64, bool),
    NoIcnt(u64),
}

/// Runs the reproduction (deterministic in `opts.seed`), without the result cache.
pub fn run(opts: Options) -> Result<Report, String> {
    run_cached(opts, None)
}

/// [`run`] through the result cache in `cache` (docs/elastic-pipeline.md §8): each job is
/// computed once per code version, seed and waves.
pub fn run_cached(opts: Options, cache: Option<&Path>) -> Result<Report, String> {
    crate::studies::profiles::check_waves(opts.waves)?;
    let profs = profiles();
    let workload = |seed: u64, waves: u32, p: &Profile| {
        let mut w = p.workload(seed, waves, LANES, SUBWARPS);
        w["params"]["gmem_return"] = gmem_return(seed);
        w
    };
    let workloads: Vec<Value> = profs
        .iter()
        .map(|p| workload(opts.seed, opts.waves, p))
        .collect();
    // Extra runs: the next seeds at full length, then the first seed at half the waves.
    let mut extra: Vec<(u64, u32)> = (1..SEEDS).map(|k| (opts.seed + k, opts.waves)).collect();
    extra.push((opts.seed, (opts.waves / 2).max(1)));
    let mut jobs = Vec::new();
    for i in 0..profs.len() {
        jobs.push(Job::ConflictFree(i));
        jobs.extend(Config::ALL.iter().map(|&c| Job::Main(i, c)));
        jobs.extend([Config::ElasticRr, Config::ElasticBcaws].map(|c| Job::NoIcnt(i, c)));
        for v in 0..extra.len() {
            jobs.extend(HEADLINE.map(|c| Job::Extra(v, i, c)));
        }
    }
    let store = Cache::open(cache, "elastic-pipeline")?;
    let tally = Tally::default();
    // What decides a job's result, for the cache.
    let key = |job: &Job| -> Value {
        let (kind, i, c, (seed, waves)) = match *job {
            Job::Main(i, c) => ("main", i, Some(c), (opts.seed, opts.waves)),
            Job::Extra(v, i, c) => ("extra", i, Some(c), extra[v]),
            Job::NoIcnt(i, c) => ("no_icnt", i, Some(c), (opts.seed, opts.waves)),
            Job::ConflictFree(i) => ("conflict_free", i, None, (opts.seed, opts.waves)),
        };
        serde_json::json!({"job": kind, "profile": profs[i].name, "config": c.map(Config::key),
                           "seed": seed, "waves": waves})
    };
    let compute = |job: &Job| -> Result<JobOut, String> {
        match *job {
            Job::Main(i, c) => {
                let mut w = workloads[i].clone();
                c.apply(&mut w);
                Ok(JobOut::Main(simulate(&w, opts.waves)?))
            }
            Job::Extra(v, i, c) => {
                let (seed, waves) = extra[v];
                let mut w = workload(seed, waves, &profs[i]);
                c.apply(&mut w);
                let st = run_stats(&workload_from_value(&w)?)?;
                Ok(JobOut::Extra(st.cycles, stalls(&st)))
            }
            Job::NoIcnt(i, c) => {
                let mut w = workloads[i].clone();
                c.apply(&mut w);
                w["params"]["gmem_return"] = "at_writeback".into();
                Ok(JobOut::NoIcnt(
                    simulate(&w, opts.waves)?.stats.outcomes.sched_fail,
                ))
            }
            Job::ConflictFree(i) => {
                let mut base = workloads[i].clone();
                conflict_free(&mut base);
                let parse = |c: Config| {
                    let mut w = base.clone();
                    c.apply(&mut w);
                    workload_from_value(&w)
                };
                let u = run_stats(&parse(Config::UnifiedRr)?)?.cycles;
                let (same, rr, b) =
                    lockstep(&parse(Config::ElasticRr)?, &parse(Config::ElasticBcaws)?)?;
                Ok(JobOut::ConflictFree(u, rr, b, same))
            }
        }
    };
    // Every core, results in job order (the sweep engine's parallel map).
    let outs = par_map(&jobs, None, |job| -> Result<JobOut, String> {
        store
            .get_or(&key(job), &tally, || compute(job))
            .map(|(out, _)| out)
    });
    let mut runs: Vec<Vec<Option<Run>>> = profs
        .iter()
        .map(|_| Config::ALL.iter().map(|_| None).collect())
        .collect();
    let mut conflict_free_rows = Vec::new();
    let mut no_icnt = vec![[0u64; 2]; profs.len()];
    let mut extra_out = vec![vec![[(0u64, 0u64); 3]; profs.len()]; extra.len()];
    for (job, out) in jobs.iter().zip(outs) {
        match (job, out?) {
            (Job::Main(i, c), JobOut::Main(s)) => {
                let k = Config::ALL.iter().position(|x| x == c).expect("config");
                runs[*i][k] = Some(s);
            }
            (Job::NoIcnt(i, c), JobOut::NoIcnt(sf)) => {
                no_icnt[*i][usize::from(*c == Config::ElasticBcaws)] = sf;
            }
            (Job::Extra(v, i, c), JobOut::Extra(cy, st)) => {
                let k = HEADLINE.iter().position(|x| x == c).expect("config");
                extra_out[*v][*i][k] = (cy, st);
            }
            (Job::ConflictFree(i), JobOut::ConflictFree(u, rr, b, same)) => conflict_free_rows
                .push(ConflictFreeRow {
                    kernel: profs[*i].name,
                    cycles_unified_rr: u,
                    cycles_elastic_rr: rr,
                    cycles_elastic_bcaws: b,
                    trace_identical: same,
                    cycles_vs_unified: b as f64 / u.max(1) as f64 - 1.0,
                }),
            _ => unreachable!("job and result kinds match"),
        }
    }
    let mut rows = Vec::new();
    for (p, st) in profs.iter().zip(&runs) {
        let base = &st[0].as_ref().expect("baseline ran").stats;
        let base_stalls = stalls(base);
        for (&c, s) in Config::ALL.iter().zip(st) {
            rows.push(row(
                p,
                c,
                s.as_ref().expect("ran"),
                base.cycles,
                base_stalls,
            ));
        }
    }
    let sched_fail_no_icnt = profs
        .iter()
        .zip(&no_icnt)
        .map(|(p, x)| SchedFailNoIcnt {
            kernel: p.name,
            elastic_rr: x[0],
            elastic_bcaws: x[1],
        })
        .collect();
    let summary = summarize(&rows);
    let seeds = seeds(opts, &profs, &rows, &extra, &extra_out);
    let per_kernel = spread::per_kernel(&rows, &profs);
    let mut report = Report {
        experiment: "elastic-pipeline",
        seed: opts.seed,
        waves: opts.waves,
        rows,
        conflict_free: conflict_free_rows,
        sched_fail_no_icnt,
        summary,
        gmem_return: gmem_return(opts.seed),
        seeds,
        per_kernel,
        paper: PaperFigures::get(),
        targets: Vec::new(),
        notes: Vec::new(),
        cache: tally.get(),
    };
    report.targets = targets::targets(&report, &profs);
    report.notes = text::notes(&report, &profs);
    Ok(report)
}

/// The headline over the seeds and at half the waves: the main rows first, then the extra runs
/// (`extra[v]` = (seed, waves), `out[v][profile]` = (cycles, stalls) per [`HEADLINE`] config).
fn seeds(
    opts: Options,
    profs: &[Profile],
    rows: &[Row],
    extra: &[(u64, u32)],
    out: &[Vec<[(u64, u64); 3]>],
) -> Seeds {
    let main: Vec<[(u64, u64); 3]> = profs
        .iter()
        .map(|p| {
            HEADLINE.map(|c| {
                let r = rows
                    .iter()
                    .find(|r| r.kernel == p.name && r.config == c)
                    .expect("row");
                (r.cycles, r.stalls)
            })
        })
        .collect();
    let mut heads = vec![spread::headline(opts.seed, opts.waves, &main)];
    for (&(seed, waves), per) in extra.iter().zip(out) {
        heads.push(spread::headline(seed, waves, per));
    }
    let half = heads.pop().expect("the half-length run");
    Seeds::new(heads, half)
}

pub(crate) fn stalls(s: &SmStats) -> u64 {
    s.outcomes.bank_conflict + s.outcomes.other + s.outcomes.sched_fail
}

fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        if a == 0.0 {
            1.0
        } else {
            f64::INFINITY
        }
    } else {
        a / b
    }
}

fn row(p: &Profile, c: Config, run: &Run, base_cycles: u64, base_stalls: u64) -> Row {
    let s = &run.stats;
    let o = &s.outcomes;
    let total = stalls(s);
    Row {
        kernel: p.name,
        config: c,
        cycles: s.cycles,
        issue: o.issue,
        bank_conflict: o.bank_conflict,
        bank_conflict_first_wave: run.bank_conflict_first_wave,
        bank_conflict_alu: run.bank_conflict_alu,
        other: o.other,
        sched_fail: o.sched_fail,
        idle: o.idle,
        stalls: total,
        wb_bubbles: s.wb_bubbles,
        hc_hits: s.hc_hits,
        hc_misses: s.hc_misses,
        stall_reduction: 1.0 - ratio(total as f64, base_stalls as f64),
        speedup: ratio(base_cycles as f64, s.cycles as f64),
        ipc: s.ipc,
        theoretic_speedup: p.theoretic_speedup(),
    }
}

fn per_kernel(rows: &[Row], c: Config, f: impl Fn(&Row) -> f64) -> Vec<(&'static str, f64)> {
    rows.iter()
        .filter(|r| r.config == c)
        .map(|r| (r.kernel, f(r)))
        .collect()
}

fn summarize(rows: &[Row]) -> Summary {
    let bcaws_speedup = mean_max(&per_kernel(rows, Config::ElasticBcaws, |r| r.speedup));
    let rr_speedup = mean_max(&per_kernel(rows, Config::ElasticRr, |r| r.speedup));
    let strict = per_kernel(rows, Config::ElasticBcaws, |r| r.cycles as f64);
    let var = per_kernel(rows, Config::ElasticBcawsVariant, |r| r.cycles as f64);
    Summary {
        mean_kind: "arithmetic mean over the 8 kernels",
        bcaws_stall_reduction: mean_max(&per_kernel(rows, Config::ElasticBcaws, |r| {
            r.stall_reduction
        })),
        bcaws_extra: bcaws_speedup.mean - rr_speedup.mean,
        bcaws_speedup,
        rr_speedup,
        variant_vs_strict: strict
            .iter()
            .zip(&var)
            .map(|(s, v)| VariantGain {
                kernel: s.0,
                speedup: ratio(s.1, v.1),
            })
            .collect(),
    }
}
