//! `smrtl bench bankan`: the analysis time of docs/bank-conflicts.md §4.2 ([002] §8.1,
//! Figs. 8.2(b) and 8.7). A `for` access (s[i][4·tx], 100…1000 iterations) and a `for-if`
//! access (s[tx][i] under `if (tx ≤ i)`, 64…512 iterations), each timed per expression as the
//! median of repeated runs taken round robin over the sweep's points, beside brute force; the
//! targets are evaluated by code.

use super::bank_repro::Target;
use serde::Serialize;
use smrtl_cosim::bankan::{analysis, Kernel, Overrides, Raw};
use std::fmt::Write as _;
use std::time::Instant;

/// Timed runs per point (the median counts).
const RUNS: usize = 21;

/// One point of a sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub iterations: u64,
    /// Median milliseconds per expression, distinct cases.
    pub grouped_ms: f64,
    /// Median milliseconds per expression, every warp and iteration.
    pub brute_ms: f64,
    pub grouped_evaluations: u64,
    /// Of the distinct cases, those a closed form answered (docs/bank-conflicts.md §3.3).
    pub closed_evaluations: u64,
    pub brute_evaluations: u64,
}

/// The bench.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub runs: usize,
    pub for_loop: Vec<Point>,
    pub for_if: Vec<Point>,
    pub targets: Vec<Target>,
}

/// The kernel of one point: `for` (s[i][4·tx]) or `for-if` (s[tx][i] if tx ≤ i).
fn kernel(for_if: bool, n: u64) -> Kernel {
    let (rows, cols, access) = if for_if {
        (
            32,
            n,
            format!(
                r#"{{"array": "s", "row": [1, 0, 0], "col": [0, 0, 0], "for": [{{"trips": {n}, "inc": [0, 1]}}], "if": [{{"tx": -1, "i": [1], "c": 0}}]}}"#
            ),
        )
    } else {
        (
            n,
            128,
            format!(
                r#"{{"array": "s", "row": [0, 0, 0], "col": [4, 0, 0], "for": [{{"trips": {n}, "inc": [1, 0]}}]}}"#
            ),
        )
    };
    let text = format!(
        r#"{{"block": [32, 1], "arrays": [{{"name": "s", "elem_bytes": 4, "rows": {rows}, "cols": {cols}}}], "accesses": [{access}]}}"#
    );
    Raw::read(&text)
        .and_then(|r| r.validate(Overrides::default()))
        .expect("bench kernels are valid")
}

/// Calls of the analysis per timed run (microsecond calls would time the clock's noise).
const BATCH: u32 = 50;

/// Milliseconds per call of `f` over one run of [`BATCH`] calls.
fn timed<T>(f: &mut dyn FnMut() -> T) -> f64 {
    let t = Instant::now();
    for _ in 0..BATCH {
        std::hint::black_box(f());
    }
    t.elapsed().as_secs_f64() * 1e3 / f64::from(BATCH)
}

fn median(mut ms: Vec<f64>) -> f64 {
    ms.sort_by(f64::total_cmp);
    ms[ms.len() / 2]
}

/// The points of one sweep (`for` or `for-if` at each count), timed round robin: each of
/// [`RUNS`] rounds times every point once (grouped, then brute force), so drift of the
/// machine's speed during the sweep reaches every point alike; the median per point.
fn sweep(for_if: bool, counts: &[u64]) -> Vec<Point> {
    let kernels: Vec<Kernel> = counts.iter().map(|&n| kernel(for_if, n)).collect();
    let mut points: Vec<Point> = kernels
        .iter()
        .zip(counts)
        .map(|(k, &n)| {
            let a = &k.accesses[0];
            let g = analysis::grouped(k, a);
            let b = analysis::brute(k, a);
            assert_eq!(
                (&g.degree, g.replays, g.conflicts),
                (&b.degree, b.replays, b.conflicts),
                "grouped and brute force agree"
            );
            Point {
                iterations: n,
                grouped_ms: 0.0,
                brute_ms: 0.0,
                grouped_evaluations: g.evaluations,
                closed_evaluations: g.closed,
                brute_evaluations: b.evaluations,
            }
        })
        .collect();
    let mut grouped: Vec<Vec<f64>> = vec![vec![]; counts.len()];
    let mut brute: Vec<Vec<f64>> = vec![vec![]; counts.len()];
    for _ in 0..RUNS {
        for (p, k) in kernels.iter().enumerate() {
            let a = &k.accesses[0];
            grouped[p].push(timed(&mut || analysis::grouped(k, a)));
            brute[p].push(timed(&mut || analysis::brute(k, a)));
        }
    }
    for (p, x) in points.iter_mut().enumerate() {
        x.grouped_ms = median(std::mem::take(&mut grouped[p]));
        x.brute_ms = median(std::mem::take(&mut brute[p]));
    }
    points
}

fn sweep_targets(
    name: &'static str,
    ids: [&'static str; 3],
    claims: [&'static str; 3],
    limit_ms: f64,
    p: &[Point],
) -> Vec<Target> {
    let (first, last) = (&p[0], &p[p.len() - 1]);
    let max = p.iter().map(|x| x.grouped_ms).fold(0.0, f64::max);
    let growth = last.iterations as f64 / first.iterations as f64;
    vec![
        Target {
            id: ids[0],
            claim: claims[0],
            must: true,
            holds: max < limit_ms,
            detail: format!("{name}: largest median {max:.4} ms (limit {limit_ms} ms)"),
        },
        Target {
            id: ids[1],
            claim: claims[1],
            must: true,
            holds: last.grouped_ms <= 1.5 * first.grouped_ms,
            detail: format!(
                "{name}: {:.4} ms at {} vs {:.4} ms at {} ({:.2}x)",
                last.grouped_ms,
                last.iterations,
                first.grouped_ms,
                first.iterations,
                last.grouped_ms / first.grouped_ms
            ),
        },
        Target {
            id: ids[2],
            claim: claims[2],
            must: true,
            holds: last.brute_ms >= 0.5 * growth * first.brute_ms,
            detail: format!(
                "{name}: brute force {:.4} -> {:.4} ms ({:.2}x for {growth:.0}x the iterations)",
                first.brute_ms,
                last.brute_ms,
                last.brute_ms / first.brute_ms
            ),
        },
    ]
}

/// Runs the bench.
pub fn run() -> Report {
    let counts: Vec<u64> = (1..=10).map(|k| 100 * k).collect();
    let for_loop = sweep(false, &counts);
    let for_if = sweep(true, &[64, 128, 256, 384, 512]);
    let mut targets = sweep_targets(
        "for",
        ["A1", "A2", "A3"],
        [
            "for: < 0.05 ms per expression (100…1000 iterations)",
            "for: median at the largest count <= 1.5x the smallest",
            "for: brute force grows with the iterations (at least half linearly)",
        ],
        0.05,
        &for_loop,
    );
    targets.extend(sweep_targets(
        "for-if",
        ["A4", "A5", "A6"],
        [
            "for-if: < 0.5 ms per expression (<= 512 iterations)",
            "for-if: median at the largest count <= 1.5x the smallest",
            "for-if: brute force grows with the iterations (at least half linearly)",
        ],
        0.5,
        &for_if,
    ));
    Report {
        runs: RUNS,
        for_loop,
        for_if,
        targets,
    }
}

/// The report as people read it.
pub fn text(r: &Report) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "bench bankan: analysis time per expression, median of {} round-robin runs of {BATCH} calls ([002] §8.1; docs/bank-conflicts.md §4.2)",
        r.runs
    );
    for (name, p) in [("for", &r.for_loop), ("for-if", &r.for_if)] {
        let _ = writeln!(
            o,
            "{name:<7} {:>10} {:>12} {:>8} {:>8} {:>12} {:>8}",
            "iterations", "grouped ms", "cases", "closed", "brute ms", "evals"
        );
        for x in p.iter() {
            let _ = writeln!(
                o,
                "{:<7} {:>10} {:>12.4} {:>8} {:>8} {:>12.4} {:>8}",
                "",
                x.iterations,
                x.grouped_ms,
                x.grouped_evaluations,
                x.closed_evaluations,
                x.brute_ms,
                x.brute_evaluations
            );
        }
    }
    for t in &r.targets {
        let v = if t.holds { "PASS" } else { "FAIL" };
        let _ = writeln!(o, "{v} {} {} ({})", t.id, t.claim, t.detail);
    }
    o
}
