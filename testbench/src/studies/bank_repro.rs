//! `smrtl repro bank-conflicts`: the kernel study of docs/bank-conflicts.md §4.1–§4.2 on the
//! reconstructed [002] Table 8.1 kernels (`examples/bankan/`): per kernel the analysis's replays
//! on the layout as written, the optimizer's layout and its replays, and the replay ratio
//! after/before ([002] Fig. 8.10(a)'s metric). The paper's runtime figures are quoted, not
//! claimed (they need a K20c).

use crate::studies::registry::{Failure, Outcome, Request};
use serde::Serialize;
use smrtl_cosim::bankan::optimize::{optimize_with, Layout, DEFAULT_BUDGET};
use smrtl_cosim::bankan::{Kernel, Overrides, Raw};
use std::fmt::Write as _;

/// The shipped kernels: (name, JSON).
pub const KERNELS: [(&str, &str); 10] = [
    ("3DFD", include_str!("../../../examples/bankan/3dfd.json")),
    ("NW", include_str!("../../../examples/bankan/nw.json")),
    (
        "TP-GSM",
        include_str!("../../../examples/bankan/tp-gsm.json"),
    ),
    ("TP-TC", include_str!("../../../examples/bankan/tp-tc.json")),
    (
        "TP-TNBC",
        include_str!("../../../examples/bankan/tp-tnbc.json"),
    ),
    (
        "Lud-DIA",
        include_str!("../../../examples/bankan/lud-dia.json"),
    ),
    (
        "Lud-PERI",
        include_str!("../../../examples/bankan/lud-peri.json"),
    ),
    (
        "CS-CRK",
        include_str!("../../../examples/bankan/cs-crk.json"),
    ),
    (
        "CS-CCK",
        include_str!("../../../examples/bankan/cs-cck.json"),
    ),
    (
        "Shfl_scan",
        include_str!("../../../examples/bankan/shfl-scan.json"),
    ),
];

/// The paper's statements, beside the figures.
const QUOTED: [&str; 3] = [
    "[002] §6.4: 3DFD's first zero-conflict option is <N = 4, pad 24>; <N = 8, pad 0> is preferred (first in 8B mode, no extra memory)",
    "[002] Abstract, Ch. 9: 5-35 % runtime improvement over 13 kernels, 19 % on average (K20c; quoted, not claimed)",
    "[002] §8.2: kernels with a larger share of replayed instructions gain more (per-kernel Figs. 8.9-8.10 lost)",
];

/// One kernel's row.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub kernel: String,
    /// The optimizer's layout, its replays before and after.
    #[serde(flatten)]
    pub layout: Layout,
    /// Bytes of the layout as written.
    pub bytes_before: u64,
    /// after / before (1 when there is nothing to remove).
    pub ratio: f64,
}

/// A target evaluated by code (the kernel study's and `smrtl bench bankan`'s).
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    pub id: &'static str,
    pub claim: &'static str,
    /// "must": a failure fails `--strict`.
    pub must: bool,
    pub holds: bool,
    pub detail: String,
}

/// The whole study.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub rows: Vec<Row>,
    /// 3DFD in 4B mode: the first intra-pad with zero replays.
    pub first_4b_zero_pad_3dfd: Option<u64>,
    pub quoted: Vec<&'static str>,
    pub targets: Vec<Target>,
}

fn kernel(name: &str, text: &str) -> Result<Kernel, String> {
    Raw::read(text)
        .and_then(|r| r.validate(Overrides::default()))
        .map_err(|e| format!("{name}: {e}"))
}

/// 3DFD's first zero-replay pad in 4B mode (pads 0…63).
fn first_zero_pad(k: &Kernel) -> Option<u64> {
    let n = k.arrays.len();
    (0..64).find(|&p| {
        k.relayout(4, &vec![p; n], &vec![0; n])
            .is_some_and(|z| total(&z) == 0)
    })
}

fn total(k: &Kernel) -> u64 {
    smrtl_cosim::bankan::analyze(k, false).total_replays
}

/// Runs the study.
pub fn study() -> Result<Report, String> {
    let mut rows = vec![];
    let mut pad24 = None;
    for (name, text) in KERNELS {
        let k = kernel(name, text)?;
        let l = optimize_with(&k, DEFAULT_BUDGET, false);
        if name == "3DFD" {
            pad24 = first_zero_pad(&k);
        }
        rows.push(Row {
            kernel: name.into(),
            bytes_before: k.bytes(),
            ratio: if l.replays_before == 0 {
                1.0
            } else {
                l.replays_after as f64 / l.replays_before as f64
            },
            layout: l,
        });
    }
    let targets = targets(&rows, pad24);
    Ok(Report {
        rows,
        first_4b_zero_pad_3dfd: pad24,
        quoted: QUOTED.to_vec(),
        targets,
    })
}

fn targets(rows: &[Row], pad24: Option<u64>) -> Vec<Target> {
    let fd = rows.iter().find(|r| r.kernel == "3DFD");
    let fd_ok = fd.is_some_and(|r| {
        r.layout.bank_width == 8
            && r.layout.pads.values().all(|&p| p == 0)
            && r.layout.replays_after == 0
    });
    let conflicted: Vec<&Row> = rows
        .iter()
        .filter(|r| r.layout.replays_before > 0)
        .collect();
    let never_worse = rows
        .iter()
        .all(|r| r.layout.replays_after <= r.layout.replays_before);
    let zero = conflicted
        .iter()
        .filter(|r| r.layout.replays_after == 0)
        .count();
    vec![
        Target {
            id: "K1",
            claim: "3DFD: the optimizer returns <N = 8, pad 0> with no replays ([002] §6.4)",
            must: true,
            holds: fd_ok,
            detail: fd.map_or("3DFD missing".into(), |r| {
                format!(
                    "N = {}, pads {:?}, replays {} -> {}",
                    r.layout.bank_width,
                    r.layout.pads,
                    r.layout.replays_before,
                    r.layout.replays_after
                )
            }),
        },
        Target {
            id: "K2",
            claim: "3DFD: the first zero-replay pad in 4B mode is 24 ([002] §6.4)",
            must: true,
            holds: pad24 == Some(24),
            detail: pad24.map_or("no zero-replay pad in 0…63".into(), |p| {
                format!("first zero pad: {p}")
            }),
        },
        Target {
            id: "K3",
            claim: "the optimizer never raises replays (ratio after/before <= 1 on every kernel)",
            must: true,
            holds: never_worse,
            detail: format!("{} kernels", rows.len()),
        },
        Target {
            id: "K4",
            claim: "every kernel with replays has a zero-replay layout within 48 KiB",
            must: false,
            holds: zero == conflicted.len(),
            detail: format!("{zero} of {} conflicted kernels reach 0", conflicted.len()),
        },
    ]
}

/// The report as people read it.
pub fn text(r: &Report) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "Bank-conflict kernel study ([002] Table 8.1, reconstructed; K20c: 32 banks, W = 8 B, 4B mode as written)");
    let _ = writeln!(
        o,
        "{:<10} {:>8} {:>3} {:<40} {:>7} {:>7} {:>7} {:>6}",
        "kernel", "replays", "N", "pads (dummies)", "bytes0", "bytes", "replays", "ratio"
    );
    for x in &r.rows {
        let pads: Vec<String> = x
            .layout
            .pads
            .iter()
            .map(|(a, p)| format!("{a}={p}({})", x.layout.dummies[a]))
            .collect();
        let _ = writeln!(
            o,
            "{:<10} {:>8} {:>3} {:<40} {:>7} {:>7} {:>7} {:>6.3}",
            x.kernel,
            x.layout.replays_before,
            x.layout.bank_width,
            pads.join(","),
            x.bytes_before,
            x.layout.bytes,
            x.layout.replays_after,
            x.ratio
        );
    }
    let _ = writeln!(o, "Quoted:");
    for q in &r.quoted {
        let _ = writeln!(o, "  {q}");
    }
    let _ = writeln!(o, "Targets:");
    for t in &r.targets {
        let verdict = match (t.holds, t.must) {
            (true, _) => "holds",
            (false, true) => "FAILS (must)",
            (false, false) => "fails",
        };
        let _ = writeln!(o, "  {} {}: {verdict} ({})", t.id, t.claim, t.detail);
    }
    o
}

/// Bars of replays before / after per kernel.
pub fn svg(r: &Report) -> String {
    let hi = r
        .rows
        .iter()
        .map(|x| x.layout.replays_before)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let (left, top, plot_h, bar, gap) = (60.0, 40.0, 300.0, 14.0, 16.0);
    let w = left + r.rows.len() as f64 * (2.0 * bar + gap) + gap + 20.0;
    let h = top + plot_h + 90.0;
    let y = |v: f64| top + plot_h * (1.0 - v / hi);
    let mut o = String::new();
    let _ = writeln!(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" font-family=\"sans-serif\" font-size=\"11\">");
    let _ = writeln!(
        o,
        "<title>Replays before / after the optimizer's layout (cf. [002] Fig. 8.10(a))</title>"
    );
    let _ = writeln!(o, "<text x=\"{:.1}\" y=\"20\" text-anchor=\"middle\" font-size=\"13\">Replays per block: as written (grey) vs optimized (blue)</text>", w / 2.0);
    let _ = writeln!(
        o,
        "<line x1=\"{left}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"black\"/>",
        y(0.0),
        w - 20.0,
        y(0.0)
    );
    let _ = writeln!(
        o,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{hi:.0}</text>",
        left - 4.0,
        y(hi) + 4.0
    );
    let _ = writeln!(
        o,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">0</text>",
        left - 4.0,
        y(0.0) + 4.0
    );
    for (i, x) in r.rows.iter().enumerate() {
        let x0 = left + gap + i as f64 * (2.0 * bar + gap);
        for (j, (v, c)) in [
            (x.layout.replays_before, "#bdbdbd"),
            (x.layout.replays_after, "#3182bd"),
        ]
        .into_iter()
        .enumerate()
        {
            let v = v as f64;
            let _ = writeln!(o, "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{bar}\" height=\"{:.1}\" fill=\"{c}\"><title>{} {}: {v}</title></rect>", x0 + j as f64 * bar, y(v), y(0.0) - y(v), x.kernel, ["before", "after"][j]);
        }
        let _ = writeln!(
            o,
            "<text transform=\"translate({:.1},{:.1}) rotate(-45)\" text-anchor=\"end\">{}</text>",
            x0 + bar,
            y(0.0) + 12.0,
            x.kernel
        );
    }
    o.push_str("</svg>\n");
    o
}

/// The registry's entry point.
pub fn run(q: &Request) -> Result<Outcome, Failure> {
    let r = study().map_err(Failure::Run)?;
    Ok(Outcome {
        json: serde_json::to_string_pretty(&r).map_err(|e| Failure::Run(e.to_string()))?,
        text: text(&r),
        svgs: if q.plot {
            vec![("bank-conflicts.svg".into(), svg(&r))]
        } else {
            vec![]
        },
        csv: None,
        failed: r
            .targets
            .iter()
            .filter(|t| t.must && !t.holds)
            .map(|t| t.id.to_string())
            .collect(),
        note: None,
    })
}
