//! The stall breakdown as SVG (docs/stall-inspector.md §5; spec §5): four stacked bars as
//! shares of the run's cycles — the exclusive classes (Alg. 1/2), the fractional classes
//! (GCStack), the memory-data sources (b) and the memory-structural reasons (c), so (b) and
//! (c) are as tall as (a)'s MEM_DATA and MEM_STRUCT segments — and, with snapshots, the classes
//! of each window over time as stacked areas. Stacks run bottom to top in Alg. 2 order
//! (NO_STALL first, IDLE last), one fixed colour per class. Every segment carries
//! `data-stack`, `data-category` and `data-value` (its share).

use super::stalls::{REASONS, SOURCES};
use smrtl_cosim::sm::stalls::Breakdown;
use smrtl_hdl::blocks::stall_inspector::Class;
use std::fmt::Write as _;

/// Alg. 2 order, bottom to top, with each class's colour.
pub(crate) const STACK: [(Class, &str); 8] = [
    (Class::NoStall, "#4daf4a"),
    (Class::MemStruct, "#e41a1c"),
    (Class::MemData, "#377eb8"),
    (Class::Sync, "#984ea3"),
    (Class::CompStruct, "#ff7f00"),
    (Class::CompData, "#ffd92f"),
    (Class::Control, "#a65628"),
    (Class::Idle, "#bbbbbb"),
];

/// Colours of the sub-class stacks, in their order.
const SUB_COLOURS: [&str; 7] = [
    "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#c6dbef", "#777777",
];

const PLOT_H: f64 = 300.0;
const TOP: f64 = 40.0;
const LEFT: f64 = 60.0;
const BAR_W: f64 = 60.0;
const BAR_GAP: f64 = 40.0;
const AREA_W: f64 = 400.0;

fn y(share: f64) -> f64 {
    TOP + PLOT_H * (1.0 - share)
}

/// One stacked bar at `x`: `(label, share, colour)` bottom to top.
fn bar(o: &mut String, x: f64, stack: &str, segs: &[(String, f64, &str)]) {
    let mut base = 0.0;
    for (label, share, colour) in segs {
        let _ = writeln!(
            o,
            "<rect class=\"seg\" data-stack=\"{stack}\" data-category=\"{label}\" data-value=\"{share:.6}\" x=\"{x:.1}\" y=\"{:.2}\" width=\"{BAR_W}\" height=\"{:.2}\" fill=\"{colour}\"><title>{stack} {label}: {:.1}%</title></rect>",
            y(base + share),
            PLOT_H * share,
            100.0 * share
        );
        base += share;
    }
    let _ = writeln!(
        o,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{stack}</text>",
        x + BAR_W / 2.0,
        TOP + PLOT_H + 16.0
    );
}

/// The bars of the whole run.
fn bars(o: &mut String, b: &Breakdown) {
    let s = &b.totals;
    let n = b.cyc_total.max(1) as f64;
    let classes = |v: &dyn Fn(Class) -> f64| -> Vec<(String, f64, &str)> {
        STACK
            .iter()
            .map(|&(c, colour)| (c.to_string(), v(c) / n, colour))
            .collect()
    };
    let subs = |v: &[u64; 8], names: &[(u64, &'static str)]| -> Vec<(String, f64, &str)> {
        names
            .iter()
            .zip(SUB_COLOURS)
            .filter(|((k, name), _)| v[*k as usize] != 0 || !matches!(*name, "UNKNOWN" | "OTHER"))
            .map(|((k, name), colour)| (name.to_string(), v[*k as usize] as f64 / n, colour))
            .collect()
    };
    let stacks = [
        ("classes", classes(&|c| s.top[c as usize] as f64)),
        ("fractional", classes(&|c| s.fractional[c as usize])),
        ("mem_data", subs(&s.md_sub, &SOURCES)),
        ("mem_struct", subs(&s.ms_sub, &REASONS)),
    ];
    for (i, (name, segs)) in stacks.iter().enumerate() {
        bar(o, LEFT + BAR_GAP + i as f64 * (BAR_W + BAR_GAP), name, segs);
    }
}

/// The classes of each snapshot window as stacked areas, from x0.
fn areas(o: &mut String, b: &Breakdown, x0: f64) {
    let snaps = &b.snapshots;
    let Some(last) = snaps.last() else {
        return;
    };
    let x = |cycle: u64| x0 + AREA_W * cycle as f64 / last.cycle.max(1) as f64;
    // Per window: the share of each class among the window's cycles.
    let mut prev = ([0u64; 8], 0u64);
    let windows: Vec<(u64, u64, [f64; 8])> = snaps
        .iter()
        .map(|s| {
            let len = (s.cycle - prev.1).max(1) as f64;
            let share = std::array::from_fn(|c| (s.top[c] - prev.0[c]) as f64 / len);
            let w = (prev.1, s.cycle, share);
            prev = (s.top, s.cycle);
            w
        })
        .collect();
    let mut below = vec![0.0f64; windows.len()];
    for (c, colour) in STACK {
        let mut pts = String::new();
        let mut back = String::new();
        for (i, (from, to, share)) in windows.iter().enumerate() {
            let (lo, hi) = (below[i], below[i] + share[c as usize]);
            let _ = write!(
                pts,
                "{:.1},{:.2} {:.1},{:.2} ",
                x(*from),
                y(hi),
                x(*to),
                y(hi)
            );
            back = format!("{:.1},{:.2} {:.1},{:.2} ", x(*to), y(lo), x(*from), y(lo)) + &back;
            below[i] = hi;
        }
        let _ = writeln!(
            o,
            "<polygon class=\"area\" data-category=\"{c}\" points=\"{pts}{back}\" fill=\"{colour}\"/>"
        );
    }
    let _ = writeln!(
        o,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">classes per {}-cycle window (cycles 0 to {})</text>",
        x0 + AREA_W / 2.0,
        TOP + PLOT_H + 16.0,
        snaps[0].cycle,
        last.cycle
    );
}

/// The SVG of breakdown `b`.
pub fn svg(b: &Breakdown) -> String {
    let bars_w = BAR_GAP + 4.0 * (BAR_W + BAR_GAP);
    let area_w = if b.snapshots.is_empty() {
        0.0
    } else {
        AREA_W + BAR_GAP
    };
    let legend_w = 140.0;
    let (w, h) = (LEFT + bars_w + area_w + legend_w, TOP + PLOT_H + 40.0);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" font-family=\"sans-serif\" font-size=\"11\">"
    );
    let _ = writeln!(
        o,
        "<title>Stall breakdown, {} cycles, shares of the run's cycles (docs/stall-inspector.md)</title>",
        b.cyc_total
    );
    for share in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let _ = writeln!(
            o,
            "<line x1=\"{LEFT}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" stroke=\"#ddd\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{share:.2}</text>",
            LEFT + bars_w + area_w,
            LEFT - 5.0,
            y(share) + 4.0,
            yy = y(share)
        );
    }
    bars(&mut o, b);
    areas(&mut o, b, LEFT + bars_w);
    let lx = LEFT + bars_w + area_w + 10.0;
    for (i, (c, colour)) in STACK.iter().rev().enumerate() {
        let ly = TOP + 14.0 * i as f64;
        let _ = writeln!(
            o,
            "<rect x=\"{lx:.1}\" y=\"{ly:.1}\" width=\"10\" height=\"10\" fill=\"{colour}\"/><text x=\"{:.1}\" y=\"{:.1}\">{c}</text>",
            lx + 14.0,
            ly + 9.0
        );
    }
    o.push_str("</svg>\n");
    o
}
