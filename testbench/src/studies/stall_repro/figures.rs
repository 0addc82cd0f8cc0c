//! The figures of `smrtl repro stall-inspector` (docs/stall-inspector.md §11; spec §5, seed 003
//! Figs. 1–4): per study, three stacked-bar sub-figures with one bar per configuration —
//! (a) the eight classes, (b) the memory-data sources, (c) the memory-structural reasons.
//!
//! Normalisation (spec §5): `G[k][c]` is counter `c` of configuration `k` averaged over its
//! SMs, so the classes of a bar add up to its kernel-active cycles `T_k`; every segment is
//! `G[k][c] / T_base` (the first bar is the baseline, 1.0 tall), and (b) and (c) divide by
//! `T_base` too, so their stacks are as tall as (a)'s MEM_DATA and MEM_STRUCT segments
//! (`sub_norm = total`). Stacks run bottom to top in Alg. 2 order, one fixed colour per class;
//! UNKNOWN and OTHER are drawn only when not zero; LOCAL_SPM is folded into L1.

use crate::systems::stall_plot::STACK;
use smrtl_cosim::sm::stalls::Snapshot;
use smrtl_hdl::blocks::stall_inspector::{reason, src, Class};
use std::fmt::Write as _;

/// (b)'s sources, in stack order, with LOCAL_SPM folded into L1 (spec §5).
pub const SOURCES: [(&str, &[u64]); 6] = [
    ("L1", &[src::L1, src::LOCAL_SPM]),
    ("L1_COAL", &[src::L1_COAL]),
    ("L2", &[src::L2]),
    ("REMOTE_L1", &[src::REMOTE_L1]),
    ("MAIN_MEM", &[src::MAIN_MEM]),
    ("UNKNOWN", &[src::UNKNOWN, src::RESERVED]),
];

/// (c)'s reasons, in stack order.
pub const REASONS: [(&str, u64); 6] = [
    ("MSHR_FULL", reason::MSHR_FULL),
    ("SB_FULL", reason::SB_FULL),
    ("BANK_CONFLICT", reason::BANK_CONFLICT),
    ("PENDING_RELEASE", reason::PENDING_RELEASE),
    ("PENDING_DMA", reason::PENDING_DMA),
    ("OTHER", reason::OTHER),
];

/// Colours of (b) and (c), in their stack order.
const SUB_COLOURS: [&str; 6] = [
    "#9ecae1", "#4292c6", "#08519c", "#fd8d3c", "#a63603", "#777777",
];

/// One bar: a configuration and its SMs' counters at the end of the run.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    pub config: String,
    /// The run's cycles (the slowest SM's end).
    pub cycles: u64,
    pub sms: Vec<Snapshot>,
}

impl Bar {
    /// `G[c]` of a counter array picked by `of`: the mean over the SMs.
    fn mean(&self, of: impl Fn(&Snapshot) -> u64) -> f64 {
        let n = self.sms.len().max(1) as f64;
        self.sms.iter().map(of).sum::<u64>() as f64 / n
    }

    /// `G[c]` of class `c`.
    pub fn class(&self, c: Class) -> f64 {
        self.mean(|s| s.top[c as usize])
    }

    /// `T_k`: the classes summed (kernel-active cycles per SM).
    pub fn total(&self) -> f64 {
        self.mean(|s| s.top.iter().sum())
    }

    /// (b)'s source `name` (an entry of [`SOURCES`]).
    pub fn source(&self, name: &str) -> f64 {
        let (_, codes) = SOURCES.iter().find(|s| s.0 == name).expect("a source");
        self.mean(|s| codes.iter().map(|&c| s.md_sub[c as usize]).sum())
    }

    /// (c)'s reason `name` (an entry of [`REASONS`]).
    pub fn reason(&self, name: &str) -> f64 {
        let (_, code) = REASONS.iter().find(|r| r.0 == name).expect("a reason");
        self.mean(|s| s.ms_sub[*code as usize])
    }
}

/// A study's figure: its bars, the first the baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// File stem, e.g. `fig1-uts`.
    pub id: &'static str,
    /// The paper's caption, shortened.
    pub title: &'static str,
    pub bars: Vec<Bar>,
}

/// One sub-figure's segments of one bar: (name, normalised height, colour).
type Segments = Vec<(&'static str, f64, &'static str)>;

impl Figure {
    /// `T_base`.
    fn base(&self) -> f64 {
        self.bars.first().map_or(1.0, Bar::total).max(1.0)
    }

    /// The bar named `config`.
    pub fn bar(&self, config: &str) -> Option<&Bar> {
        self.bars.iter().find(|b| b.config == config)
    }

    /// Sub-figure `sub` ('a', 'b' or 'c') of bar `b`, normalised.
    fn segments(&self, b: &Bar, sub: char) -> Segments {
        let base = self.base();
        let drawn = |name: &str, v: f64| v != 0.0 || !matches!(name, "UNKNOWN" | "OTHER");
        match sub {
            'a' => STACK
                .iter()
                .map(|&(c, colour)| (c.name(), b.class(c) / base, colour))
                .collect(),
            'b' => SOURCES
                .iter()
                .zip(SUB_COLOURS)
                .map(|((name, _), colour)| (*name, b.source(name), colour))
                .filter(|(name, v, _)| drawn(name, *v))
                .map(|(name, v, colour)| (name, v / base, colour))
                .collect(),
            _ => REASONS
                .iter()
                .zip(SUB_COLOURS)
                .map(|((name, _), colour)| (*name, b.reason(name), colour))
                .filter(|(name, v, _)| drawn(name, *v))
                .map(|(name, v, colour)| (name, v / base, colour))
                .collect(),
        }
    }

    /// The CSV rows of spec §5: `figure,config,sm,stack,category,cycles,normalised`, one row
    /// per SM and counter, then the SMs' mean as `sm = mean` (the bar's height).
    pub fn csv_rows(&self, out: &mut String) {
        let base = self.base();
        for b in &self.bars {
            let mut row = |sm: &str, stack: &str, cat: &str, v: f64| {
                let _ = writeln!(
                    out,
                    "{},{},{sm},{stack},{cat},{v},{:.6}",
                    self.id,
                    b.config,
                    v / base
                );
            };
            for (s, snap) in b.sms.iter().enumerate() {
                let sm = s.to_string();
                for (c, _) in STACK {
                    row(&sm, "classes", c.name(), snap.top[c as usize] as f64);
                }
                for (name, codes) in SOURCES {
                    let v: u64 = codes.iter().map(|&c| snap.md_sub[c as usize]).sum();
                    row(&sm, "mem_data", name, v as f64);
                }
                for (name, code) in REASONS {
                    row(&sm, "mem_struct", name, snap.ms_sub[code as usize] as f64);
                }
            }
            for (c, _) in STACK {
                row("mean", "classes", c.name(), b.class(c));
            }
            for (name, _) in SOURCES {
                row("mean", "mem_data", name, b.source(name));
            }
            for (name, _) in REASONS {
                row("mean", "mem_struct", name, b.reason(name));
            }
        }
    }

    /// Sub-figure `sub` ('a', 'b', 'c') as SVG: one stacked bar per configuration.
    pub fn svg(&self, sub: char) -> String {
        let what = match sub {
            'a' => "stall classes",
            'b' => "memory-data stalls by source",
            _ => "memory-structural stalls by reason",
        };
        let bars: Vec<(&str, Segments)> = self
            .bars
            .iter()
            .map(|b| (b.config.as_str(), self.segments(b, sub)))
            .collect();
        let tallest = bars
            .iter()
            .map(|(_, s)| s.iter().map(|x| x.1).sum::<f64>())
            .fold(1.0f64, f64::max);
        draw(&format!("{} ({sub}) {what}", self.title), &bars, tallest)
    }
}

const PLOT_H: f64 = 300.0;
const TOP: f64 = 40.0;
const LEFT: f64 = 70.0;
const BAR_W: f64 = 56.0;
const GAP: f64 = 28.0;
const LEGEND_W: f64 = 170.0;

/// Stacked bars with a y axis in units of the baseline's time and a legend.
fn draw(title: &str, bars: &[(&str, Segments)], tallest: f64) -> String {
    let y = |v: f64| TOP + PLOT_H * (1.0 - v / tallest);
    let plot_w = bars.len() as f64 * (BAR_W + GAP) + GAP;
    let (w, h) = (LEFT + plot_w + LEGEND_W, TOP + PLOT_H + 50.0);
    let mut o = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" font-family=\"sans-serif\" font-size=\"11\">\n<text x=\"{LEFT}\" y=\"20\" font-size=\"13\">{title}</text>\n"
    );
    for k in 0..=4 {
        let v = tallest * f64::from(k) / 4.0;
        let _ = writeln!(
            o,
            "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{v:.2}</text>",
            LEFT + plot_w,
            LEFT - 6.0,
            y(v) + 4.0,
            y = y(v)
        );
    }
    let _ = writeln!(
        o,
        "<text transform=\"translate(16,{:.1}) rotate(-90)\" text-anchor=\"middle\">time / baseline time</text>",
        TOP + PLOT_H / 2.0
    );
    for (i, (config, segs)) in bars.iter().enumerate() {
        let x = LEFT + GAP + i as f64 * (BAR_W + GAP);
        let mut below = 0.0;
        for (name, v, colour) in segs {
            let _ = writeln!(
                o,
                "<rect class=\"seg\" data-config=\"{config}\" data-category=\"{name}\" data-value=\"{v:.6}\" x=\"{x:.1}\" y=\"{:.2}\" width=\"{BAR_W}\" height=\"{:.2}\" fill=\"{colour}\"><title>{config} {name}: {v:.3}</title></rect>",
                y(below + v),
                PLOT_H * v / tallest
            );
            below += v;
        }
        let _ = writeln!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{config}</text>",
            x + BAR_W / 2.0,
            TOP + PLOT_H + 16.0
        );
    }
    // The legend, top to bottom as the stacks read.
    if let Some((_, segs)) = bars.first() {
        for (i, (name, _, colour)) in segs.iter().rev().enumerate() {
            let ly = TOP + 14.0 * i as f64;
            let lx = LEFT + plot_w + 12.0;
            let _ = writeln!(
                o,
                "<rect x=\"{lx:.1}\" y=\"{ly:.1}\" width=\"10\" height=\"10\" fill=\"{colour}\"/><text x=\"{:.1}\" y=\"{:.1}\">{name}</text>",
                lx + 14.0,
                ly + 9.0
            );
        }
    }
    o.push_str("</svg>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(top: [u64; 8]) -> Snapshot {
        Snapshot {
            cycle: top.iter().sum(),
            top,
            md_sub: [0; 8],
            ms_sub: [0; 8],
            fractional: [0.0; 8],
        }
    }

    /// The baseline bar is 1.0 tall, the others T_k / T_base, averaged over the SMs.
    #[test]
    fn bars_are_normalised_to_the_baseline() {
        let mut a = snap([60, 10, 10, 0, 10, 0, 10, 0]);
        a.md_sub[src::LOCAL_SPM as usize] = 4;
        a.md_sub[src::L1 as usize] = 6;
        let f = Figure {
            id: "t",
            title: "t",
            bars: vec![
                Bar {
                    config: "base".into(),
                    cycles: 100,
                    sms: vec![a.clone(), a],
                },
                Bar {
                    config: "half".into(),
                    cycles: 50,
                    sms: vec![
                        snap([25, 0, 0, 25, 0, 0, 0, 0]),
                        snap([25, 0, 0, 25, 0, 0, 0, 0]),
                    ],
                },
            ],
        };
        let h = |b: usize, s: char| f.segments(&f.bars[b], s).iter().map(|x| x.1).sum::<f64>();
        assert!((h(0, 'a') - 1.0).abs() < 1e-12);
        assert!((h(1, 'a') - 0.5).abs() < 1e-12);
        // (b) is as tall as (a)'s MEM_DATA segment, LOCAL_SPM folded into L1.
        assert!((h(0, 'b') - 0.1).abs() < 1e-12, "{}", h(0, 'b'));
        assert!((f.bars[0].source("L1") - 10.0).abs() < 1e-12);
        let svg = f.svg('a');
        assert_eq!(svg.matches("class=\"seg\"").count(), 16);
        let mut csv = String::new();
        f.csv_rows(&mut csv);
        assert!(
            csv.contains("t,half,mean,classes,SYNC,25,0.250000"),
            "{csv}"
        );
    }
}
