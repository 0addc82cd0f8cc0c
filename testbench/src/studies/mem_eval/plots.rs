//! The study's figures as SVG (docs/memory-issue-control.md §8.4; issue 23 item 4), in the
//! hand-written style of the other repro plots: Fig. 4-style bars of weighted speedup per class
//! and scheme (geometric mean, as Fig. 4 [P]), ANTT and fairness bars (arithmetic means), the
//! per-workload scatter of WS-DMIL against WS, and the WS-SMIL heat maps.

use super::report::Report;
use super::study::SMIL_PAIRS;
use std::fmt::Write as _;

/// Series colours, one per scheme.
const COLOURS: [&str; 9] = [
    "#888888", "#1f77b4", "#aec7e8", "#ff7f0e", "#2ca02c", "#98df8a", "#9467bd", "#c5b0d5",
    "#d62728",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn head(o: &mut String, w: f64, h: f64, title: &str) {
    let _ = writeln!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" \
         viewBox=\"0 0 {w:.0} {h:.0}\" font-family=\"sans-serif\" font-size=\"11\">"
    );
    let _ = writeln!(o, "<title>{}</title>", esc(title));
    let _ = writeln!(
        o,
        "<text x=\"{:.1}\" y=\"20\" text-anchor=\"middle\" font-size=\"13\">{}</text>",
        w / 2.0,
        esc(title)
    );
}

/// A nice axis top and step for values up to `top`.
fn axis(top: f64) -> (f64, f64) {
    let top = if top.is_finite() && top > 0.0 {
        top
    } else {
        1.0
    };
    let raw = top / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * mag);
    ((top / step).ceil() * step, step)
}

/// Grouped bars: `groups` on the x axis, one bar per series (`None`: no bar).
fn bars(
    title: &str,
    ylabel: &str,
    groups: &[&str],
    series: &[&str],
    v: &[Vec<Option<f64>>],
) -> String {
    let top = v.iter().flatten().flatten().copied().fold(0.0, f64::max);
    let (y_max, step) = axis(top);
    let (left, right, top_m, bottom) = (60.0, 150.0, 40.0, 50.0);
    let (bar_w, gap) = (12.0, 18.0);
    let group_w = series.len() as f64 * bar_w;
    let plot_w = groups.len() as f64 * (group_w + gap) + gap;
    let plot_h = 300.0;
    let (w, h) = (left + plot_w + right, top_m + plot_h + bottom);
    let y = |x: f64| top_m + plot_h * (1.0 - x / y_max);
    let mut o = String::new();
    head(&mut o, w, h, title);
    let mut t = 0.0;
    while t <= y_max + 1e-9 {
        let _ = writeln!(
            o,
            "<line x1=\"{left}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{t:.2}</text>",
            y(t),
            left + plot_w,
            y(t),
            left - 5.0,
            y(t) + 4.0
        );
        t += step;
    }
    let _ = writeln!(
        o,
        "<line x1=\"{left}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"black\"/>\
         <text x=\"15\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 15 {:.1})\">{}</text>",
        y(0.0),
        left + plot_w,
        y(0.0),
        top_m + plot_h / 2.0,
        top_m + plot_h / 2.0,
        esc(ylabel)
    );
    for (gi, g) in groups.iter().enumerate() {
        let x0 = left + gap + gi as f64 * (group_w + gap);
        for (si, val) in v[gi].iter().enumerate() {
            if let Some(val) = val {
                let _ = writeln!(
                    o,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{bar_w}\" height=\"{:.1}\" fill=\"{}\"><title>{} {}: {val}</title></rect>",
                    x0 + si as f64 * bar_w,
                    y(*val),
                    (y(0.0) - y(*val)).max(0.0),
                    COLOURS[si % COLOURS.len()],
                    esc(g),
                    esc(series[si])
                );
            }
        }
        let _ = writeln!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            x0 + group_w / 2.0,
            y(0.0) + 16.0,
            esc(g)
        );
    }
    for (si, s) in series.iter().enumerate() {
        let yy = top_m + 14.0 * si as f64;
        let _ = writeln!(
            o,
            "<rect x=\"{:.1}\" y=\"{yy:.1}\" width=\"10\" height=\"10\" fill=\"{}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            left + plot_w + 10.0,
            COLOURS[si % COLOURS.len()],
            left + plot_w + 24.0,
            yy + 9.0,
            esc(s)
        );
    }
    o.push_str("</svg>\n");
    o
}

/// Bars of one class statistic (groups that ran × the study's schemes).
fn class_bars(
    r: &Report,
    title: &str,
    ylabel: &str,
    f: impl Fn(&super::summary::ClassStats) -> Option<f64>,
) -> String {
    let mut groups: Vec<&str> = vec![];
    for c in &r.classes {
        if !groups.contains(&c.group) {
            groups.push(c.group);
        }
    }
    let v: Vec<Vec<Option<f64>>> = groups
        .iter()
        .map(|g| {
            r.schemes
                .iter()
                .map(|s| super::summary::find(&r.classes, g, s).and_then(&f))
                .collect()
        })
        .collect();
    bars(title, ylabel, &groups, &r.schemes, &v)
}

/// WS-DMIL against WS, one dot per workload, with the diagonal.
fn scatter(r: &Report) -> Option<String> {
    let pts: Vec<(String, f64, f64)> = r
        .rows
        .iter()
        .filter(|x| x.scheme == "ws")
        .filter_map(|w| {
            let d = r
                .rows
                .iter()
                .find(|x| x.scheme == "ws-dmil" && x.workload == w.workload)?;
            Some((w.workload.clone(), w.ws, d.ws))
        })
        .collect();
    if pts.is_empty() {
        return None;
    }
    let top = pts.iter().map(|p| p.1.max(p.2)).fold(0.0, f64::max);
    let (m, step) = axis(top);
    let (left, top_m, side) = (60.0, 40.0, 360.0);
    let (w, h) = (left + side + 30.0, top_m + side + 50.0);
    let sx = |v: f64| left + side * v / m;
    let sy = |v: f64| top_m + side * (1.0 - v / m);
    let mut o = String::new();
    head(
        &mut o,
        w,
        h,
        &format!(
            "Weighted speedup per workload: WS-DMIL vs WS ({} workloads, {} cycles)",
            pts.len(),
            r.cycles
        ),
    );
    let mut t = 0.0;
    while t <= m + 1e-9 {
        let _ = writeln!(
            o,
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#eee\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{t:.2}</text>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{t:.2}</text>",
            sx(0.0),
            sy(t),
            sx(m),
            sy(t),
            left - 5.0,
            sy(t) + 4.0,
            sx(t),
            sy(0.0) + 16.0
        );
        t += step;
    }
    let _ = writeln!(
        o,
        "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">WS (Warped-Slicer)</text>\
         <text x=\"15\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 15 {:.1})\">WS-DMIL</text>",
        sx(0.0), sy(0.0), sx(m), sy(m),
        left + side / 2.0, sy(0.0) + 36.0,
        top_m + side / 2.0, top_m + side / 2.0
    );
    for (name, a, b) in &pts {
        let _ = writeln!(
            o,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"#2ca02c\" fill-opacity=\"0.7\"><title>{}: WS {a}, WS-DMIL {b}</title></circle>",
            sx(*a),
            sy(*b),
            esc(name)
        );
    }
    o.push_str("</svg>\n");
    Some(o)
}

/// The WS-SMIL heat map of `w`: kernel-0 limit across, kernel-1 limit down, colour = WS.
fn heat(r: &Report, w: &str) -> Option<String> {
    let pts: Vec<_> = r.smil.iter().filter(|p| p.workload == w).collect();
    if pts.is_empty() {
        return None;
    }
    let (lo, hi) = pts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.ws), b.max(p.ws))
        });
    let cell = 16.0;
    let (left, top_m) = (70.0, 50.0);
    let (wd, ht) = (left + 25.0 * cell + 90.0, top_m + 25.0 * cell + 60.0);
    let pos = |l: u32| if l == 0 { 24.0 } else { f64::from(l - 1) };
    let mut o = String::new();
    head(
        &mut o,
        wd,
        ht,
        &format!("WS-SMIL weighted speedup, {w} (limits 1..24, U = unlimited)"),
    );
    for p in &pts {
        let t = if hi > lo {
            (p.ws - lo) / (hi - lo)
        } else {
            0.5
        };
        // White (low) to dark blue (high).
        let c = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
        let _ = writeln!(
            o,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{cell}\" height=\"{cell}\" fill=\"#{:02x}{:02x}{:02x}\"><title>({}, {}): WS {}</title></rect>",
            left + pos(p.limits[0]) * cell,
            top_m + pos(p.limits[1]) * cell,
            c(255.0, 8.0),
            c(255.0, 48.0),
            c(255.0, 107.0),
            p.limits[0],
            p.limits[1],
            p.ws
        );
    }
    for l in [1u32, 4, 8, 12, 16, 20, 24, 0] {
        let label = if l == 0 {
            "U".to_string()
        } else {
            l.to_string()
        };
        let _ = writeln!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{label}</text>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>",
            left + (pos(l) + 0.5) * cell,
            top_m + 25.0 * cell + 14.0,
            left - 4.0,
            top_m + (pos(l) + 0.5) * cell + 4.0
        );
    }
    let _ = writeln!(
        o,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">kernel-0 limit</text>\
         <text x=\"20\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 20 {:.1})\">kernel-1 limit</text>\
         <text x=\"{:.1}\" y=\"{:.1}\">WS {lo:.3} (white) … {hi:.3} (blue)</text>",
        left + 12.5 * cell,
        top_m + 25.0 * cell + 32.0,
        top_m + 12.5 * cell,
        top_m + 12.5 * cell,
        left,
        top_m + 25.0 * cell + 50.0
    );
    o.push_str("</svg>\n");
    Some(o)
}

/// Every figure of the report: (file name, SVG).
pub fn figures(r: &Report) -> Vec<(String, String)> {
    let mut out = vec![
        (
            "ws.svg".to_string(),
            class_bars(
                r,
                &format!(
                    "Weighted speedup per class and scheme (geometric mean, cf. Fig. 4; {} cycles)",
                    r.cycles
                ),
                "weighted speedup",
                |c| Some(c.ws_geomean),
            ),
        ),
        (
            "antt.svg".to_string(),
            class_bars(
                r,
                "ANTT per class and scheme (arithmetic mean; lower is better)",
                "ANTT",
                |c| c.antt_mean,
            ),
        ),
        (
            "fairness.svg".to_string(),
            class_bars(
                r,
                "Fairness per class and scheme (arithmetic mean; higher is better)",
                "fairness",
                |c| Some(c.fairness_mean),
            ),
        ),
    ];
    if let Some(s) = scatter(r) {
        out.push(("dmil-vs-ws.svg".into(), s));
    }
    for w in SMIL_PAIRS {
        if let Some(s) = heat(r, w) {
            out.push((format!("smil-{}.svg", w.replace('+', "-")), s));
        }
    }
    out
}
