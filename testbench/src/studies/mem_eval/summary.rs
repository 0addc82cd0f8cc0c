//! The study's averages and the paper's figures beside them (docs/memory-issue-control.md
//! §8.4; spec §8.4–§8.5; Dai et al., HPCA 2018, §4.1–§4.3, Fig. 4): per class and overall,
//! arithmetic and geometric means of weighted speedup, ANTT and fairness; the §8.5 headline
//! comparisons; the named cases.

use super::metrics::{antt_ratio, antt_reduction, gain, geomean, mean};
use super::study::{Row, Study};
use super::workloads::{PAIR_CLASSES, TRIPLE_CLASSES};
use serde::Serialize;
use smrtl_cosim::sm::mem_sm::params::PipeParams;
use smrtl_cosim::sm::mem_sm::partition::sweet_point;

/// The overall groups of two and three kernels.
pub const PAIRS: &str = "pairs";
pub const TRIPLES: &str = "triples";

/// The groups in report order: the pair classes, all pairs, the triple classes, all triples.
pub fn groups() -> Vec<&'static str> {
    let mut g: Vec<&'static str> = PAIR_CLASSES.to_vec();
    g.push(PAIRS);
    g.extend(TRIPLE_CLASSES);
    g.push(TRIPLES);
    g
}

/// Whether `row` belongs to `group`.
pub fn in_group(row: &Row, group: &str) -> bool {
    match group {
        PAIRS => row.kernels.len() == 2,
        TRIPLES => row.kernels.len() == 3,
        class => row.class == class,
    }
}

/// One group × scheme: its workloads and their means.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ClassStats {
    pub group: &'static str,
    pub scheme: String,
    pub workloads: usize,
    pub ws_mean: f64,
    pub ws_geomean: f64,
    /// None when a workload's ANTT is infinite (a kernel made no progress).
    pub antt_mean: Option<f64>,
    pub antt_geomean: Option<f64>,
    pub fairness_mean: f64,
    pub fairness_geomean: f64,
}

fn stats(group: &'static str, scheme: &str, rows: &[&Row]) -> ClassStats {
    let ws: Vec<f64> = rows.iter().map(|r| r.ws).collect();
    let fair: Vec<f64> = rows.iter().map(|r| r.fairness).collect();
    let antt: Option<Vec<f64>> = rows.iter().map(|r| r.antt).collect();
    ClassStats {
        group,
        scheme: scheme.into(),
        workloads: rows.len(),
        ws_mean: mean(&ws),
        ws_geomean: geomean(&ws),
        antt_mean: antt.as_deref().map(mean),
        antt_geomean: antt.as_deref().map(geomean),
        fairness_mean: mean(&fair),
        fairness_geomean: geomean(&fair),
    }
}

/// Every group × scheme that has rows, groups in report order, schemes in `schemes` order.
pub fn summarize(s: &Study, schemes: &[&str]) -> Vec<ClassStats> {
    let mut out = vec![];
    for g in groups() {
        for &sc in schemes {
            let rows: Vec<&Row> = s
                .main_rows()
                .filter(|r| r.scheme == sc && in_group(r, g))
                .collect();
            if !rows.is_empty() {
                out.push(stats(g, sc, &rows));
            }
        }
    }
    out
}

/// The class statistics of `group` under `scheme`, if it ran.
pub fn find<'a>(c: &'a [ClassStats], group: &str, scheme: &str) -> Option<&'a ClassStats> {
    c.iter().find(|x| x.group == group && x.scheme == scheme)
}

/// A §8.5 figure beside ours: the paper's values and ours in the same order (None: not run).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Comparison {
    pub what: &'static str,
    pub labels: Vec<&'static str>,
    pub paper: Vec<f64>,
    pub ours: Vec<Option<f64>>,
}

/// Which measure of a group a comparison reads.
#[derive(Clone, Copy)]
enum Measure {
    Ws,
    WsGain,
    AnttReduction,
    AnttRatio,
    FairnessGain,
}

fn measure(c: &[ClassStats], group: &str, base: &str, scheme: &str, m: Measure) -> Option<f64> {
    let x = find(c, group, scheme)?;
    let b = find(c, group, base);
    match m {
        Measure::Ws => Some(x.ws_mean),
        Measure::WsGain => Some(gain(x.ws_mean, b?.ws_mean)),
        Measure::AnttReduction => Some(antt_reduction(x.antt_mean?, b?.antt_mean?)),
        Measure::AnttRatio => Some(antt_ratio(x.antt_mean?, b?.antt_mean?)),
        Measure::FairnessGain => Some(gain(x.fairness_mean, b?.fairness_mean)),
    }
}

/// The §8.5 table [P §4.1–§4.2]: averages are arithmetic means over the group's workloads,
/// gains `new/base − 1` of those means, ANTT "better by" in both forms of §8.4.
pub fn comparisons(c: &[ClassStats]) -> Vec<Comparison> {
    use Measure::*;
    let ws4 = ["spatial", "ws", "ws-qbmi", "ws-dmil"];
    let smk = ["smk-p-w", "smk-p-qbmi", "smk-p-dmil"];
    let line = |what, group, base, schemes: &[&'static str], m, paper: &[f64]| Comparison {
        what,
        labels: schemes.to_vec(),
        paper: paper.to_vec(),
        ours: schemes
            .iter()
            .map(|s| measure(c, group, base, s, m))
            .collect(),
    };
    let vs_ws = ["ws-qbmi", "ws-dmil"];
    let vs_w = ["smk-p-qbmi", "smk-p-dmil"];
    vec![
        line(
            "weighted speedup, 2 kernels",
            PAIRS,
            "ws",
            &ws4,
            Ws,
            &[1.13, 1.20, 1.22, 1.49],
        ),
        line(
            "WS gain over WS, 2 kernels",
            PAIRS,
            "ws",
            &vs_ws,
            WsGain,
            &[0.015, 0.246],
        ),
        line(
            "ANTT better than WS by, 2 kernels ((base − new)/base)",
            PAIRS,
            "ws",
            &vs_ws,
            AnttReduction,
            &[0.405, 0.561],
        ),
        line(
            "ANTT better than WS by, 2 kernels (base/new − 1)",
            PAIRS,
            "ws",
            &vs_ws,
            AnttRatio,
            &[0.405, 0.561],
        ),
        line(
            "fairness gain over WS, 2 kernels",
            PAIRS,
            "ws",
            &vs_ws,
            FairnessGain,
            &[0.178, 0.323],
        ),
        line(
            "weighted speedup, SMK, 2 kernels",
            PAIRS,
            "smk-p-w",
            &smk,
            Ws,
            &[1.10, 1.15, 1.40],
        ),
        line(
            "WS gain over SMK-(P+W), 2 kernels",
            PAIRS,
            "smk-p-w",
            &vs_w,
            WsGain,
            &[0.044, 0.272],
        ),
        line(
            "ANTT better than SMK-(P+W) by, 2 kernels ((base − new)/base)",
            PAIRS,
            "smk-p-w",
            &vs_w,
            AnttReduction,
            &[0.492, 0.646],
        ),
        line(
            "ANTT better than SMK-(P+W) by, 2 kernels (base/new − 1)",
            PAIRS,
            "smk-p-w",
            &vs_w,
            AnttRatio,
            &[0.492, 0.646],
        ),
        line(
            "WS gain over WS, 3 kernels",
            TRIPLES,
            "ws",
            &vs_ws,
            WsGain,
            &[0.032, 0.194],
        ),
        line(
            "ANTT better than WS by, 3 kernels ((base − new)/base)",
            TRIPLES,
            "ws",
            &vs_ws,
            AnttReduction,
            &[0.583, 0.687],
        ),
        line(
            "WS gain over SMK-(P+W), 3 kernels",
            TRIPLES,
            "smk-p-w",
            &vs_w,
            WsGain,
            &[0.055, 0.219],
        ),
        line(
            "ANTT better than SMK-(P+W) by, 3 kernels ((base − new)/base)",
            TRIPLES,
            "smk-p-w",
            &vs_w,
            AnttReduction,
            &[0.791, 0.859],
        ),
    ]
}

/// The named cases of §8.5 [P §2.5, §3.2–§3.4].
pub fn named(s: &Study, pipe: &PipeParams) -> Vec<Comparison> {
    let mut out = vec![];
    // bp+sv's sweet point and theoretical WS [P §2.5], from the curves if both ran.
    let sp = match (s.curves.get("bp"), s.curves.get("sv")) {
        (Some(a), Some(b)) => {
            let specs = ["bp", "sv"].map(|n| {
                smrtl_cosim::sm::mem_sm::workload::bench_named(n)
                    .expect("Table 2")
                    .kernel()
            });
            sweet_point(&[a.clone(), b.clone()], |t| {
                smrtl_cosim::sm::mem_sm::partition::overflow(&specs, t, pipe).is_none()
            })
        }
        _ => None,
    };
    out.push(Comparison {
        what: "bp+sv WS sweet point (bp TBs, sv TBs) and theoretical WS",
        labels: vec!["bp", "sv", "theoretical"],
        paper: vec![9.0, 4.0, 1.94],
        ours: match sp {
            Some(sp) => vec![
                Some(f64::from(sp.tbs[0])),
                Some(f64::from(sp.tbs[1])),
                Some(sp.theoretical_ws),
            ],
            None => vec![None; 3],
        },
    });
    let kernel = |w: &str, sc: &str, k: &str| {
        s.row(w, sc)
            .and_then(|r| r.kernels.iter().find(|x| x.name == k).cloned())
    };
    out.push(Comparison {
        what: "bp NIPC in bp+sv",
        labels: vec!["ws", "ws-rbmi", "ws-qbmi"],
        paper: vec![0.39, 0.45, 0.48],
        ours: ["ws", "ws-rbmi", "ws-qbmi"]
            .iter()
            .map(|sc| kernel("bp+sv", sc, "bp").map(|k| k.nipc))
            .collect(),
    });
    for (w, before) in [("bp+ks", 0.88), ("sv+ks", 0.98)] {
        out.push(Comparison {
            what: if w == "bp+ks" {
                "ks miss rate in bp+ks"
            } else {
                "ks miss rate in sv+ks"
            },
            labels: vec!["ws-qbmi", "ws-dmil"],
            paper: vec![before, 0.52],
            ours: ["ws-qbmi", "ws-dmil"]
                .iter()
                .map(|sc| kernel(w, sc, "ks").map(|k| k.miss_rate))
                .collect(),
        });
    }
    out
}
