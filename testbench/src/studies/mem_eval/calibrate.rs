//! `smrtl calibrate mem-kernels` (docs/memory-issue-control.md §8.1; spec §8.2–§8.3): each
//! Table-2 kernel alone at its isolated occupancy, its measured Cinst/Minst, Req/Minst, miss
//! and rsfail rates, % LSU stall, accesses per 1K cycles and Type beside Table 2 [P §2.4], and
//! the §8.3 checks evaluated with the numbers behind them.

use super::par_map;
use super::partition::isolated;
use serde::Serialize;
use smrtl_cosim::sm::mem_sm::params::PipeParams;
use smrtl_cosim::sm::mem_sm::workload::{Bench, Workload, BENCHES};
use smrtl_cosim::sm::mem_sm::MemPipeline;

/// Type threshold: more than 20 % LSU stall cycles is memory-intensive [P §2.4].
pub const M_STALL_PCT: f64 = 20.0;
/// Miss-rate tolerance of the calibration (spec §8.3).
pub const MISS_TOLERANCE: f64 = 0.05;
/// The §1.6 anchor, accesses per 1K cycles of isolated bp and sv [P §3.2, Fig. 6], and the band
/// counted as "near" it (the house's reading since the pipeline's first calibration).
pub const ANCHOR: f64 = 130.0;
pub const ANCHOR_BAND: (f64, f64) = (100.0, 200.0);

/// One kernel alone: what it measured and what Table 2 says.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub name: &'static str,
    pub tbs: u32,
    pub reuse_p: f64,
    pub hot_lines: u32,
    /// Its compute latency (the pipeline's `alu_lat` unless the benchmark sets its own).
    pub alu_lat: u32,
    /// Lines between its consecutive streaming lines.
    pub stride: u32,
    pub ipc: f64,
    pub cinst_per_minst: f64,
    pub req_per_minst: f64,
    pub miss_rate: f64,
    pub rsfail_rate: f64,
    pub lsu_stall_pct: f64,
    pub accesses_per_kcycle: f64,
    /// `M` if the LSU stalls more than 20 % of the cycles, else `C`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The generated streams hold exactly Cinst computes per memory instruction and Req
    /// accesses per memory instruction (up to the instructions the run cuts off).
    pub cinst_exact: bool,
    pub req_exact: bool,
    pub table2: Table2,
}

/// Table 2's row [P §2.4].
#[derive(Clone, Debug, Serialize)]
pub struct Table2 {
    pub cinst_per_minst: u32,
    pub req_per_minst: u32,
    pub miss_rate: f64,
    pub rsfail_rate: f64,
    #[serde(rename = "type")]
    pub kind: &'static str,
}

fn kind(memory_bound: bool) -> &'static str {
    if memory_bound {
        "M"
    } else {
        "C"
    }
}

/// Runs `b` alone at isolated occupancy for `cycles`.
pub fn measure(b: &'static Bench, p: &PipeParams, cycles: u64, seed: u64) -> Result<Row, String> {
    let spec = b.kernel();
    let tbs = isolated(&spec, p);
    let w = Workload {
        kernels: vec![spec.clone()],
        tbs: vec![tbs],
        cycles,
        seed,
        params: p.clone(),
    };
    let mut m = MemPipeline::new(&w)?;
    for _ in 0..cycles {
        m.step();
    }
    let s = m.stats();
    let k = &s.kernels[0];
    let c = m.counters(0);
    let warps = u64::from(spec.warps() * tbs);
    let (ci, r) = (u64::from(b.cinst), u64::from(b.req));
    Ok(Row {
        name: b.name,
        tbs,
        reuse_p: b.reuse_p,
        hot_lines: b.hot_lines,
        alu_lat: spec.alu_lat(p.alu_lat),
        stride: b.stride,
        ipc: k.ipc,
        cinst_per_minst: k.cinst_per_minst,
        req_per_minst: k.req_per_minst,
        miss_rate: k.l1d_miss_rate,
        rsfail_rate: k.l1d_rsfail_rate,
        lsu_stall_pct: k.lsu_stall_pct,
        accesses_per_kcycle: k.accesses_per_kcycle,
        kind: kind(k.lsu_stall_pct > M_STALL_PCT),
        cinst_exact: c.compute >= ci * c.mem_issued && c.compute <= ci * (c.mem_issued + warps),
        req_exact: c.accesses() <= r * c.first_accesses && c.accesses() + r > r * c.first_accesses,
        table2: Table2 {
            cinst_per_minst: b.cinst,
            req_per_minst: b.req,
            miss_rate: b.miss,
            rsfail_rate: b.rsfail,
            kind: kind(b.memory_bound),
        },
    })
}

/// Every Table-2 kernel, on every core, in Table-2 order.
pub fn measure_all(p: &PipeParams, cycles: u64, seed: u64) -> Result<Vec<Row>, String> {
    let benches: Vec<&'static Bench> = BENCHES.iter().collect();
    par_map(&benches, |b| measure(b, p, cycles, seed))
        .into_iter()
        .collect()
}

/// One §8.3 check: its id, whether it holds, and the numbers behind it in words.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    pub id: &'static str,
    pub pass: bool,
    pub detail: String,
}

fn names(rows: &[&Row]) -> String {
    rows.iter().map(|r| r.name).collect::<Vec<_>>().join(", ")
}

/// The §8.3 checks on `rows` (the 13 kernels in Table-2 order).
pub fn checks(rows: &[Row]) -> Vec<Check> {
    let mut out = vec![];
    let all = rows.len();
    let bad: Vec<&Row> = rows.iter().filter(|r| !r.cinst_exact).collect();
    out.push(Check {
        id: "cinst",
        pass: bad.is_empty(),
        detail: format!(
            "Cinst/Minst exact for {} of {all} kernels{}",
            all - bad.len(),
            if bad.is_empty() {
                String::new()
            } else {
                format!(" (not: {})", names(&bad))
            }
        ),
    });
    let bad: Vec<&Row> = rows.iter().filter(|r| !r.req_exact).collect();
    out.push(Check {
        id: "req",
        pass: bad.is_empty(),
        detail: format!(
            "Req/Minst exact for {} of {all} kernels{}",
            all - bad.len(),
            if bad.is_empty() {
                String::new()
            } else {
                format!(" (not: {})", names(&bad))
            }
        ),
    });
    let dev = |r: &Row| (r.miss_rate - r.table2.miss_rate).abs();
    let worst = rows.iter().max_by(|a, b| dev(a).total_cmp(&dev(b)));
    let within = rows.iter().filter(|r| dev(r) <= MISS_TOLERANCE).count();
    out.push(Check {
        id: "miss",
        pass: within == all,
        detail: format!(
            "miss rate within ±{MISS_TOLERANCE} of Table 2 for {within} of {all} kernels (largest deviation {:.4}, {})",
            worst.map_or(0.0, dev),
            worst.map_or("-", |r| r.name)
        ),
    });
    out.push(rsfail_order(rows));
    out.push(ax_highest(rows));
    let wrong: Vec<&Row> = rows.iter().filter(|r| r.kind != r.table2.kind).collect();
    let right = all - wrong.len();
    out.push(Check {
        id: "type",
        pass: 2 * right > all,
        detail: format!(
            "the {M_STALL_PCT} % LSU-stall rule gives Table 2's Type for {right} of {all} kernels (most: more than half){}",
            if wrong.is_empty() {
                String::new()
            } else {
                let w: Vec<String> = wrong
                    .iter()
                    .map(|r| format!("{} {:.1} % → {}, Table 2 {}", r.name, r.lsu_stall_pct, r.kind, r.table2.kind))
                    .collect();
                format!("; not: {}", w.join(", "))
            }
        ),
    });
    let anchor: Vec<&Row> = rows
        .iter()
        .filter(|r| ["bp", "sv"].contains(&r.name))
        .collect();
    let near = |r: &&Row| (ANCHOR_BAND.0..=ANCHOR_BAND.1).contains(&r.accesses_per_kcycle);
    out.push(Check {
        id: "anchor",
        pass: !anchor.is_empty() && anchor.iter().all(near),
        detail: format!(
            "bp and sv near {ANCHOR} accesses per 1K cycles ({}..{}): {}",
            ANCHOR_BAND.0,
            ANCHOR_BAND.1,
            anchor
                .iter()
                .map(|r| format!("{} {:.1}", r.name, r.accesses_per_kcycle))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    });
    out
}

/// "M kernels have higher rsfail rates than C kernels": every M above every C.
fn rsfail_order(rows: &[Row]) -> Check {
    let of = |t: &'static str| rows.iter().filter(move |r| r.table2.kind == t);
    let lowest_m = of("M").min_by(|a, b| a.rsfail_rate.total_cmp(&b.rsfail_rate));
    let highest_c = of("C").max_by(|a, b| a.rsfail_rate.total_cmp(&b.rsfail_rate));
    let mean = |t: &'static str| {
        let v: Vec<f64> = of(t).map(|r| r.rsfail_rate).collect();
        super::metrics::mean(&v)
    };
    let (pass, detail) = match (lowest_m, highest_c) {
        (Some(m), Some(c)) => (
            m.rsfail_rate > c.rsfail_rate,
            format!(
                "every M kernel's rsfail rate above every C kernel's: lowest M {} {:.2}, highest C {} {:.2} (means M {:.2}, C {:.2})",
                m.name, m.rsfail_rate, c.name, c.rsfail_rate, mean("M"), mean("C")
            ),
        ),
        _ => (false, "needs C and M kernels".into()),
    };
    Check {
        id: "rsfail",
        pass,
        detail,
    }
}

/// "(ax highest)": ax above every other kernel.
fn ax_highest(rows: &[Row]) -> Check {
    let ax = rows.iter().find(|r| r.name == "ax");
    let next = rows
        .iter()
        .filter(|r| r.name != "ax")
        .max_by(|a, b| a.rsfail_rate.total_cmp(&b.rsfail_rate));
    let (pass, detail) = match (ax, next) {
        (Some(ax), Some(next)) => (
            ax.rsfail_rate > next.rsfail_rate,
            format!(
                "ax has the highest rsfail rate: ax {:.2}, highest other {} {:.2}",
                ax.rsfail_rate, next.name, next.rsfail_rate
            ),
        ),
        _ => (false, "needs ax and another kernel".into()),
    };
    Check {
        id: "ax",
        pass,
        detail,
    }
}

/// The table and the checks as text.
pub fn text(rows: &[Row], checks: &[Check], cycles: u64, seed: u64) -> String {
    use std::fmt::Write as _;
    let mut s = format!(
        "mem kernels alone at isolated occupancy, {cycles} cycles, seed {seed} (Table 2 in parentheses)\n"
    );
    let _ = writeln!(
        s,
        "{:<5} {:>3} {:>7} {:>3} {:>4} {:>6} {:>10} {:>11} {:>13} {:>13} {:>9} {:>7} {:>5}",
        "bench",
        "TBs",
        "reuse_p",
        "hot",
        "alu",
        "stride",
        "Cinst/Minst",
        "Req/Minst",
        "miss",
        "rsfail",
        "LSU stall",
        "acc/1K",
        "Type"
    );
    for r in rows {
        let t = &r.table2;
        let _ = writeln!(
            s,
            "{:<5} {:>3} {:>7} {:>3} {:>4} {:>6} {:>10} {:>11} {:>13} {:>13} {:>8.1}% {:>7.1} {:>5}",
            r.name,
            r.tbs,
            r.reuse_p,
            r.hot_lines,
            r.alu_lat,
            r.stride,
            format!("{:.2} ({})", r.cinst_per_minst, t.cinst_per_minst),
            format!("{:.2} ({})", r.req_per_minst, t.req_per_minst),
            format!("{:.3} ({:.2})", r.miss_rate, t.miss_rate),
            format!("{:.2} ({:.2})", r.rsfail_rate, t.rsfail_rate),
            r.lsu_stall_pct,
            r.accesses_per_kcycle,
            format!("{} ({})", r.kind, t.kind),
        );
    }
    for c in checks {
        let _ = writeln!(
            s,
            "{} {}: {}",
            if c.pass { "PASS" } else { "FAIL" },
            c.id,
            c.detail
        );
    }
    let _ = writeln!(
        s,
        "{} of {} checks pass",
        checks.iter().filter(|c| c.pass).count(),
        checks.len()
    );
    s
}
