//! The study as a report (docs/memory-issue-control.md §8.4; issue 23 item 3): the JSON of
//! `--json` (`rows`, `targets`, class means, the §8.5 figures beside ours) and the text people
//! read.

use super::sensitivity::SensRow;
use super::study::{Options, Row, Study};
use super::summary::{comparisons, named, summarize, ClassStats, Comparison};
use super::trends::{targets, Target};
use serde::Serialize;
use std::fmt::Write as _;

/// One WS-SMIL point (kernel limits, 0 = unlimited).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SmilPoint {
    pub workload: String,
    pub limits: [u32; 2],
    pub ws: f64,
    pub hash: String,
}

/// How big the study is.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Size {
    pub grid_points: usize,
    pub isolated_runs: usize,
    pub profile_points: usize,
    /// Cycles simulated to compute every point from scratch (Spatial points run nothing).
    pub simulated_cycles: u64,
}

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub experiment: &'static str,
    pub cycles: u64,
    pub seed: u64,
    pub ws_profile_cycles: u64,
    pub schemes: Vec<&'static str>,
    pub size: Size,
    pub rows: Vec<Row>,
    pub smil: Vec<SmilPoint>,
    pub classes: Vec<ClassStats>,
    pub paper: Vec<Comparison>,
    pub named: Vec<Comparison>,
    pub targets: Vec<Target>,
    /// `--sensitivity`: each variant's gains over WS beside the paper's.
    pub sensitivity: Option<Vec<SensRow>>,
}

/// The report of a whole (unsharded) study.
pub fn report(o: &Options, s: &Study, sensitivity: Option<Vec<SensRow>>) -> Report {
    let schemes: Vec<&'static str> = o.schemes.iter().map(|x| x.name).collect();
    let classes = summarize(s, &schemes);
    let profile_points: usize = s.curves.values().map(Vec::len).sum();
    let ran = s.rows.iter().filter(|r| r.scheme != "spatial").count() as u64;
    Report {
        experiment: "memory-issue-control",
        cycles: o.cycles,
        seed: o.seed,
        ws_profile_cycles: o.eval.ws_profile_cycles,
        schemes,
        size: Size {
            grid_points: s.grid_points,
            isolated_runs: s.alone.len(),
            profile_points,
            simulated_cycles: (ran + s.alone.len() as u64) * o.cycles
                + profile_points as u64 * o.eval.ws_profile_cycles,
        },
        rows: s.main_rows().cloned().collect(),
        smil: s
            .rows
            .iter()
            .filter_map(|r| {
                r.smil_limits().map(|limits| SmilPoint {
                    workload: r.workload.clone(),
                    limits,
                    ws: r.ws,
                    hash: r.hash.clone(),
                })
            })
            .collect(),
        paper: comparisons(&classes),
        named: named(s, &o.pipe),
        targets: targets(s, &classes, sensitivity.as_deref()),
        sensitivity,
        classes,
    }
}

/// The targets that fail, by id.
pub fn failed(r: &Report) -> Vec<String> {
    r.targets
        .iter()
        .filter(|t| t.pass == Some(false))
        .map(|t| format!("T{}", t.id))
        .collect()
}

fn opt(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.4}"))
}

fn comparison_lines(s: &mut String, title: &str, cs: &[Comparison]) {
    let _ = writeln!(s, "\n{title} (ours, paper in parentheses)");
    for c in cs {
        let cells: Vec<String> = c
            .labels
            .iter()
            .zip(&c.ours)
            .zip(&c.paper)
            .map(|((l, o), p)| format!("{l} {} ({p})", opt(*o)))
            .collect();
        let _ = writeln!(s, "  {}: {}", c.what, cells.join(", "));
    }
}

/// The report as text.
pub fn text(r: &Report) -> String {
    let mut s = format!(
        "memory-issue-control: {} points ({} rows, {} SMIL points), {} cycles each, seed {}; \
         {} isolated runs, {} profile points of {} cycles; {} simulated cycles\n",
        r.size.grid_points,
        r.rows.len(),
        r.smil.len(),
        r.cycles,
        r.seed,
        r.size.isolated_runs,
        r.size.profile_points,
        r.ws_profile_cycles,
        r.size.simulated_cycles
    );
    let _ = writeln!(
        s,
        "\n{:<8} {:<13} {:>4} {:>15} {:>15} {:>15}",
        "class", "scheme", "n", "WS mean/geo", "ANTT mean/geo", "fair mean/geo"
    );
    for c in &r.classes {
        let _ = writeln!(
            s,
            "{:<8} {:<13} {:>4} {:>7.4}/{:<7.4} {:>7}/{:<7} {:>7.4}/{:<7.4}",
            c.group,
            c.scheme,
            c.workloads,
            c.ws_mean,
            c.ws_geomean,
            opt(c.antt_mean),
            opt(c.antt_geomean),
            c.fairness_mean,
            c.fairness_geomean
        );
    }
    comparison_lines(&mut s, "§8.5 headline figures", &r.paper);
    comparison_lines(&mut s, "§8.5 named cases", &r.named);
    if !r.smil.is_empty() {
        let _ = writeln!(s, "\nWS-SMIL optima (limits, 0 = unlimited; paper: pf+bp best unlimited, sv+ks best at (3, 1), bp+ks poor for kernel-1 limits ≥ 8)");
        for w in super::study::SMIL_PAIRS {
            let best = r
                .smil
                .iter()
                .filter(|p| p.workload == w)
                .max_by(|a, b| a.ws.total_cmp(&b.ws));
            if let Some(b) = best {
                let _ = writeln!(
                    s,
                    "  {w}: best ({}, {}) WS {:.4}",
                    b.limits[0], b.limits[1], b.ws
                );
            }
        }
    }
    if let Some(sens) = &r.sensitivity {
        let _ = writeln!(s, "\nsensitivity (WS-QBMI, WS-DMIL over WS: WS gain; ANTT better by; paper in parentheses)");
        for v in sens {
            let paper =
                |x: Option<[f64; 2]>| x.map_or("-".into(), |p| format!("{}, {}", p[0], p[1]));
            let _ = writeln!(
                s,
                "  {} ({}): WS {:.4}, {:.4} ({}); ANTT {}, {} ({})",
                v.variant,
                v.group,
                v.ws_gain[0],
                v.ws_gain[1],
                paper(v.paper_ws),
                opt(v.antt_reduction[0]),
                opt(v.antt_reduction[1]),
                paper(v.paper_antt)
            );
        }
    }
    let _ = writeln!(s, "\n§8.6 trend targets");
    for t in &r.targets {
        let verdict = match t.pass {
            Some(true) => "PASS",
            Some(false) => "FAIL",
            None => "N/A ",
        };
        let why = t.reason.clone().unwrap_or_else(|| t.numbers.to_string());
        let _ = writeln!(s, "{verdict} T{}: {}\n      {why}", t.id, t.claim);
    }
    let pass = r.targets.iter().filter(|t| t.pass == Some(true)).count();
    let fail = r.targets.iter().filter(|t| t.pass == Some(false)).count();
    let _ = writeln!(
        s,
        "{pass} of 10 targets pass, {fail} fail, {} lack data",
        10 - pass - fail
    );
    s
}
