//! Seeds, convergence and the per-kernel comparison of the reproduction
//! (docs/elastic-pipeline.md §8.3–§8.4; seed 000 §6.2, Table 5).

use super::{ratio, Config, Row};
use crate::studies::profiles::Profile;
use crate::studies::sharing_repro::pearson;
use serde::Serialize;
use smrtl_hdl::blocks::sm_core::Dram;
use std::fmt::Write;

/// Headline figures of one run (seed, waves).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Headline {
    /// Workload seed = DRAM-model seed.
    pub seed: u64,
    pub waves: u32,
    /// Means over the kernels: Elastic+BCAWS speedup − 1, stall reduction; Elastic+RR speedup − 1.
    pub speedup: f64,
    pub stall_reduction: f64,
    pub rr_speedup: f64,
}

/// Mean and range of a figure over the seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Spread {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    fn of(v: impl Iterator<Item = f64> + Clone) -> Spread {
        let n = v.clone().count().max(1) as f64;
        Spread {
            mean: v.clone().sum::<f64>() / n,
            min: v.clone().fold(f64::INFINITY, f64::min),
            max: v.fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// The seeds (full length) and the convergence check (first seed at half the waves).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Seeds {
    pub runs: Vec<Headline>,
    pub speedup: Spread,
    pub stall_reduction: Spread,
    pub half: Headline,
}

impl Seeds {
    pub(super) fn new(runs: Vec<Headline>, half: Headline) -> Seeds {
        Seeds {
            speedup: Spread::of(runs.iter().map(|h| h.speedup)),
            stall_reduction: Spread::of(runs.iter().map(|h| h.stall_reduction)),
            runs,
            half,
        }
    }
}

/// (cycles, stalls) of one kernel under the three headline configurations.
type Triple = [(u64, u64); 3];

/// Headline of one run from its (cycles, stalls) per kernel × [Unified+RR, Elastic+RR,
/// Elastic+BCAWS].
pub(super) fn headline(seed: u64, waves: u32, per: &[[(u64, u64); 3]]) -> Headline {
    let n = per.len().max(1) as f64;
    let mean = |f: &dyn Fn(&Triple) -> f64| per.iter().map(f).sum::<f64>() / n;
    Headline {
        seed,
        waves,
        speedup: mean(&|k| ratio(k[0].0 as f64, k[2].0 as f64) - 1.0),
        stall_reduction: mean(&|k| 1.0 - ratio(k[2].1 as f64, k[0].1 as f64)),
        rr_speedup: mean(&|k| ratio(k[0].0 as f64, k[1].0 as f64) - 1.0),
    }
}

/// What seed 000 states per kernel (§6.1–6.2, Figs. 6/7; Table 5): the theoretic bound
/// and whether the achieved speedup lies below, near or above it. Fig. 7's bars are not
/// given as numbers in the text.
pub fn paper_relation(kernel: &str) -> &'static str {
    match kernel {
        "aes_encrypt" | "aes_decrypt" => "below",
        "dct" | "idct" => "far below",
        "transpose" | "dct_short" | "idct_short" => "above",
        _ => "near",
    }
}

/// Rank of a relation to the bound, far below 0 .. above 3, for the correlation.
fn relation_rank(rel: &str) -> f64 {
    match rel {
        "far below" => 0.0,
        "below" => 1.0,
        "near" => 2.0,
        _ => 3.0,
    }
}

/// [000] Fig. 10's group: DCT/IDCT require more than half the DRAM peak, the rest less.
pub fn paper_bw_group(kernel: &str) -> &'static str {
    match kernel {
        "dct" | "idct" => "high",
        _ => "low",
    }
}

/// Fig. 10's threshold between the groups, a fraction of the DRAM peak.
pub const BW_THRESHOLD: f64 = 0.5;

/// One kernel: the paper's bound and relation beside our Elastic+BCAWS figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelCmp {
    pub kernel: &'static str,
    /// Table 5 theoretic speedup (the paper's only per-kernel number).
    pub paper_bound: f64,
    pub paper_relation: &'static str,
    pub speedup: f64,
    pub stall_reduction: f64,
    /// speedup / bound.
    pub of_bound: f64,
    /// sched_fail Elastic+RR -> Elastic+BCAWS (paper: up on DCT/IDCT, down on Transpose and
    /// DCT/IDCT_short).
    pub sched_fail_rr: u64,
    pub sched_fail_bcaws: u64,
    /// Our relation matches the paper's.
    pub agrees: bool,
    /// Fig. 10's required DRAM bandwidth of our profile, a fraction of the peak.
    pub required_bw: f64,
    pub paper_bw_group: &'static str,
    /// Our required bandwidth falls in the paper's Fig. 10 group.
    pub bw_agrees: bool,
}

/// The per-kernel comparison and the correlation of our speedup with the paper's bound.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PerKernel {
    pub kernels: Vec<KernelCmp>,
    /// Pearson correlation over kernels of our Elastic+BCAWS speedup and Table 5's bound.
    pub correlation_with_bound: f64,
    /// Pearson correlation over kernels of our speedup / bound and the rank of the paper's
    /// relation (far below 0, below 1, near 2, above 3): the per-kernel comparison the
    /// paper's text allows.
    pub correlation_with_relation: f64,
    /// Kernels whose relation to the bound differs from the paper's, furthest first.
    pub furthest_off: Vec<&'static str>,
}

fn ours_relation(of_bound: f64) -> &'static str {
    match of_bound {
        x if x > 1.01 => "above",
        x if x < 0.95 => "far below",
        x if x < 0.99 => "below",
        _ => "near",
    }
}

pub(super) fn per_kernel(rows: &[Row], profs: &[Profile]) -> PerKernel {
    let row = |k: &str, c: Config| {
        rows.iter()
            .find(|r| r.kernel == k && r.config == c)
            .expect("every kernel × config has a row")
    };
    let kernels: Vec<KernelCmp> = profs
        .iter()
        .map(|p| {
            let b = row(p.name, Config::ElasticBcaws);
            let bound = p.theoretic_speedup();
            let of_bound = b.speedup / bound;
            let rel = paper_relation(p.name);
            let ours = ours_relation(of_bound);
            let required_bw = p.required_dram_bw(&Dram::default());
            let group = paper_bw_group(p.name);
            KernelCmp {
                kernel: p.name,
                paper_bound: bound,
                paper_relation: rel,
                speedup: b.speedup,
                stall_reduction: b.stall_reduction,
                of_bound,
                sched_fail_rr: row(p.name, Config::ElasticRr).sched_fail,
                sched_fail_bcaws: b.sched_fail,
                agrees: ours == rel || (rel == "below" && ours == "far below"),
                required_bw,
                paper_bw_group: group,
                bw_agrees: (required_bw > BW_THRESHOLD) == (group == "high"),
            }
        })
        .collect();
    let x: Vec<f64> = kernels.iter().map(|k| k.speedup).collect();
    let y: Vec<f64> = kernels.iter().map(|k| k.paper_bound).collect();
    let mut off: Vec<&KernelCmp> = kernels.iter().filter(|k| !k.agrees).collect();
    off.sort_by(|a, b| {
        (b.of_bound - 1.0)
            .abs()
            .total_cmp(&(a.of_bound - 1.0).abs())
    });
    let of: Vec<f64> = kernels.iter().map(|k| k.of_bound).collect();
    let rank: Vec<f64> = kernels
        .iter()
        .map(|k| relation_rank(k.paper_relation))
        .collect();
    PerKernel {
        correlation_with_bound: pearson(&x, &y),
        correlation_with_relation: pearson(&of, &rank),
        furthest_off: off.iter().map(|k| k.kernel).collect(),
        kernels,
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// The seeds, convergence and per-kernel sections of the text report.
pub(super) fn text(o: &mut String, s: &Seeds, k: &PerKernel) {
    let pc = |x: f64| format!("{:.1} %", 100.0 * x);
    let _ = writeln!(
        o,
        "\nseeds (workload seed = DRAM seed; Elastic+BCAWS means over kernels):"
    );
    for h in &s.runs {
        let _ = writeln!(
            o,
            "  seed {} waves {}: speedup {}, stall reduction {}, Elastic+RR speedup {}",
            h.seed,
            h.waves,
            pc(h.speedup),
            pc(h.stall_reduction),
            pc(h.rr_speedup)
        );
    }
    let _ = writeln!(
        o,
        "  over {} seeds: speedup mean {} (range {} .. {}), stall reduction mean {} (range {} .. {})",
        s.runs.len(),
        pc(s.speedup.mean),
        pc(s.speedup.min),
        pc(s.speedup.max),
        pc(s.stall_reduction.mean),
        pc(s.stall_reduction.min),
        pc(s.stall_reduction.max)
    );
    let f = &s.runs[0];
    let _ = writeln!(
        o,
        "  convergence, seed {}: waves {} speedup {}, stall reduction {}; waves {} speedup {}, stall reduction {}",
        f.seed,
        f.waves,
        pc(f.speedup),
        pc(f.stall_reduction),
        s.half.waves,
        pc(s.half.speedup),
        pc(s.half.stall_reduction)
    );
    let _ = writeln!(
        o,
        "\nper kernel, Elastic+BCAWS vs seed 000 (Table 5 bound; §6.2 relation to it; Fig. 10 DRAM group):"
    );
    let _ = writeln!(
        o,
        "  {:<11} {:>7} {:>9} {:>9} {:>8} {:>10} {:>14} {:>5} {:>6} {:>5} {:>5}",
        "kernel",
        "bound",
        "speedup",
        "of_bound",
        "stall_rd",
        "paper",
        "sched_f rr->b",
        "agree",
        "req_bw",
        "group",
        "agree"
    );
    for c in &k.kernels {
        let _ = writeln!(
            o,
            "  {:<11} {:>7.3} {:>9.4} {:>9.3} {:>7.1}% {:>10} {:>14} {:>5} {:>5.0}% {:>5} {:>5}",
            c.kernel,
            c.paper_bound,
            c.speedup,
            c.of_bound,
            100.0 * c.stall_reduction,
            c.paper_relation,
            format!("{}->{}", c.sched_fail_rr, c.sched_fail_bcaws),
            yes(c.agrees),
            100.0 * c.required_bw,
            c.paper_bw_group,
            yes(c.bw_agrees)
        );
    }
    let _ = writeln!(
        o,
        "  correlation of our speedup / bound with the paper's relation (far below 0 .. above 3): {:.3}; of our speedup with the bound: {:.3}; relation differs from the paper on: {}",
        k.correlation_with_relation,
        k.correlation_with_bound,
        if k.furthest_off.is_empty() {
            "none".to_string()
        } else {
            k.furthest_off.join(", ")
        }
    );
}
