//! The scratchpad-sharing reproduction as people read it: the text report and the bar chart
//! (docs/scratchpad-sharing.md §8).

use super::*;
use std::fmt::Write as _;

pub(super) fn pct(x: f64) -> String {
    format!("{:+.2} %", 100.0 * x)
}

/// The text report.
pub fn text(r: &Report) -> String {
    let mut o = String::new();
    let seeds: Vec<String> = r.seeds.iter().map(u64::to_string).collect();
    let _ = writeln!(
        o,
        "scratchpad sharing (seed 001 §8): {} synthetic Table 1 kernels × {} configurations, seeds {}, {} (docs/scratchpad-sharing.md §8)\n",
        table1().count(),
        Config::ALL.len(),
        seeds.join(", "),
        match r.waves {
            Some(w) => format!("{w} waves of each kernel's shared launch"),
            None => "the paper's TBs per SM".into(),
        }
    );
    sizing_text(&mut o, r);
    let _ = writeln!(
        o,
        "\nseed {} (IPC: mean over the seeds, and its range where the seeds differ):",
        r.seeds[0]
    );
    let _ = writeln!(
        o,
        "{:<10} {:<19} {:>4} {:>9} {:>11} {:>8} {:>9}  IPC range",
        "kernel", "config", "TBs", "cycles", "thr-instr", "IPC", "vs LRR"
    );
    for row in &r.rows {
        let m = &row.measure;
        let range = if row.ipc_max > row.ipc_min {
            format!("{:.2}..{:.2}", row.ipc_min, row.ipc_max)
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "{:<10} {:<19} {:>4} {:>9} {:>11} {:>8.2} {:>9}  {range}",
            row.kernel,
            row.config.label(),
            m.resident_tbs,
            m.cycles,
            m.thread_instructions,
            row.ipc_mean,
            pct(row.gain_vs_lrr)
        );
    }
    let _ = writeln!(o, "\nIPC improvement, geomean over the 14 kernels (max), and cycle reduction 1 − geomean(cycles ratio) (max):");
    for &c in &Config::SHARED {
        for &b in &Config::BASELINES {
            let g = r.gain(c, b);
            let _ = writeln!(
                o,
                "  {:<19} vs {:<16} IPC {:>9} (max {} {}), cycles −{:.2} % (max −{:.1} %)",
                c.label(),
                b.label(),
                pct(g.ipc_gain),
                pct(g.ipc_gain_max),
                g.ipc_gain_max_kernel,
                100.0 * g.cycle_reduction,
                100.0 * g.cycle_reduction_max
            );
        }
    }
    let g = |b| r.gain(Config::SharedOwfOpt, b).ipc_gain;
    let _ = writeln!(
        o,
        "  paper (Table 11, Shared-OWF-OPT): vs LRR {}, vs GTO {}, vs 2Level {}; max {} {}; cycles −{:.2} % avg, −{:.1} % max",
        pct(paper::GAIN_VS_LRR),
        pct(paper::GAIN_VS_GTO),
        pct(paper::GAIN_VS_2LEVEL),
        pct(paper::GAIN_MAX),
        paper::GAIN_MAX_KERNEL,
        100.0 * paper::CYCLE_REDUCTION_MEAN,
        100.0 * paper::CYCLE_REDUCTION_MAX
    );
    let _ = writeln!(
        o,
        "  ours   (Shared-OWF-OPT):           vs LRR {}, vs GTO {}, vs 2Level {}",
        pct(g(Config::UnsharedLrr)),
        pct(g(Config::UnsharedGto)),
        pct(g(Config::Unshared2Level))
    );
    spread_text(&mut o, r);
    comparison_text(&mut o, &r.comparison);
    let _ = writeln!(
        o,
        "\nTable 4: dynamic thread-instructions, Unshared-LRR (U) and Shared-OWF-OPT (SO)"
    );
    let _ = writeln!(
        o,
        "  {:<10} {:>8} {:>11} {:>11} {:>10} {:>6} {:>6}",
        "kernel", "threads", "U", "SO", "(SO−U)/thr", "extra", "paper"
    );
    for i in &r.instructions {
        let _ = writeln!(
            o,
            "  {:<10} {:>8} {:>11} {:>11} {:>10.3} {:>6} {:>6}",
            i.kernel,
            i.threads,
            i.unshared_lrr,
            i.shared_owf_opt,
            i.extra_per_thread,
            i.extra.label(),
            i.paper_extra.label()
        );
    }
    let _ = writeln!(
        o,
        "\nresident TBs per SM, unshared → shared (T = 16 slots, 3072 threads unless noted):"
    );
    let _ = writeln!(
        o,
        "  {:<10} {:>8} {:>8} {:>8} {:>14} {:>8}  paper",
        "kernel", "16 KB", "48 KB", "64 KB", "48 KB/2048 thr", "Table 1"
    );
    let f = |x: (u64, u64)| format!("{}→{}", x.0, x.1);
    for s in &r.residency {
        let _ = writeln!(
            o,
            "  {:<10} {:>8} {:>8} {:>8} {:>14} {:>8}  {}",
            s.kernel,
            f(s.kb16),
            f(s.kb48),
            f(s.kb64),
            f(s.kb48_2048),
            format!("{}→{}", s.paper_kb16.0, s.paper_kb16.1),
            s.paper_note
        );
    }
    let _ = writeln!(o, "\ntrend targets (docs/scratchpad-sharing.md §8):");
    for t in &r.targets {
        let _ = writeln!(
            o,
            "  {} {}: {}",
            t.name,
            if t.holds { "PASS" } else { "FAIL" },
            t.claim
        );
        let _ = writeln!(o, "     {}", t.detail);
        if !t.explanation.is_empty() {
            let _ = writeln!(o, "     why: {}", t.explanation);
        }
    }
    if !r.notes.is_empty() {
        let _ = writeln!(o, "\nnotes:");
        for n in &r.notes {
            let _ = writeln!(o, "  - {n}");
        }
    }
    o
}

/// Each kernel's run length beside the paper's.
fn sizing_text(o: &mut String, r: &Report) {
    let _ = writeln!(
        o,
        "run length: Table 4's threads / TB size / {PAPER_SMS} SMs = the paper's TBs per SM; ours (waves of the shared launch), at most {MAX_WAVES} waves"
    );
    for z in &r.sizing {
        let _ = writeln!(
            o,
            "  {:<10} {:>9} threads  {:>7.1} TBs/SM  ours {:>4} TBs ({:>5.1} waves){}",
            z.kernel,
            z.paper_threads,
            z.paper_tbs_per_sm,
            z.grid,
            z.waves,
            if z.capped { " capped" } else { "" }
        );
    }
}

/// The headline per seed and at half the length.
fn spread_text(o: &mut String, r: &Report) {
    let _ = writeln!(
        o,
        "\nShared-OWF-OPT geomean per seed ({}): mean [range] vs paper; at half the run length",
        r.seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (s, c) in r.spread.iter().zip(&r.convergence) {
        let per: Vec<String> = s.per_seed.iter().map(|x| pct(*x)).collect();
        let _ = writeln!(
            o,
            "  vs {:<16} {}: mean {} [{} .. {}], paper {} ({:+.2} pp); half length {} (moved {:+.2} pp: {}; most: {})",
            s.baseline.label(),
            per.join(" / "),
            pct(s.mean),
            pct(s.min),
            pct(s.max),
            pct(s.paper),
            100.0 * (s.mean - s.paper),
            pct(c.half),
            100.0 * c.moved,
            if c.converged {
                format!("converged, within {:.0} pp", 100.0 * compare::CONVERGED)
            } else {
                format!("NOT converged, more than {:.0} pp", 100.0 * compare::CONVERGED)
            },
            c.movers
                .iter()
                .map(|(k, d)| format!("{k} {:+.1} pp", 100.0 * d))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// Every kernel beside Table 11.
fn comparison_text(o: &mut String, c: &Comparison) {
    let _ = writeln!(
        o,
        "\nper kernel, Shared-OWF-OPT's IPC gain, ours (mean over the seeds) / paper (Table 11):"
    );
    let _ = writeln!(
        o,
        "  {:<10} {:>21} {:>21} {:>21} {:>21}  vs LRR over the seeds",
        "kernel", "vs LRR", "vs GTO", "vs 2Level", "2Level vs LRR"
    );
    let pair = |a: f64, b: f64| format!("{} / {}", pct(a), pct(b));
    for k in &c.kernels {
        let _ = writeln!(
            o,
            "  {:<10} {:>21} {:>21} {:>21} {:>21}  {} .. {}",
            k.kernel,
            pair(k.ours[0], k.paper[0]),
            pair(k.ours[1], k.paper[1]),
            pair(k.ours[2], k.paper[2]),
            pair(k.two_level_vs_lrr.0, k.two_level_vs_lrr.1),
            pct(k.ours_lrr_min),
            pct(k.ours_lrr_max)
        );
    }
    let _ = writeln!(
        o,
        "  correlation with the paper over the 14 kernels: vs LRR {:.3}, vs GTO {:.3}, vs 2Level {:.3}; furthest from the paper (vs LRR): {}",
        c.correlation[0],
        c.correlation[1],
        c.correlation[2],
        c.furthest
            .iter()
            .map(|(k, d)| format!("{k} {:+.1} pp", 100.0 * d))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

/// A bar chart of the per-kernel IPC improvement over Unshared-LRR, one bar per shared
/// configuration (cf. [001] Fig. 14). Every bar is a `<rect class="bar">` with `data-kernel`,
/// `data-config` and `data-value`.
pub fn svg(r: &Report) -> String {
    let kernels: Vec<&str> = table1().map(|p| p.name).collect();
    let configs = Config::SHARED;
    let colours = ["#9ecae1", "#3182bd", "#e6550d", "#31a354"];
    let vals: Vec<f64> = r
        .rows
        .iter()
        .filter(|x| configs.contains(&x.config))
        .map(|x| x.gain_vs_lrr)
        .collect();
    let step = 0.25;
    let hi = (vals.iter().copied().fold(0.0f64, f64::max) / step)
        .ceil()
        .max(1.0)
        * step;
    let lo = (vals.iter().copied().fold(0.0f64, f64::min) / step).floor() * step;
    let (left, right, top, bottom) = (60.0, 20.0, 40.0, 90.0);
    let (bar_w, gap) = (9.0, 14.0);
    let group_w = configs.len() as f64 * bar_w;
    let plot_w = kernels.len() as f64 * (group_w + gap) + gap;
    let plot_h = 300.0;
    let (w, h) = (left + plot_w + right, top + plot_h + bottom);
    let y = |v: f64| top + plot_h * (hi - v) / (hi - lo);
    let mut o = String::new();
    let _ = writeln!(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" font-family=\"sans-serif\" font-size=\"11\">");
    let _ = writeln!(
        o,
        "<title>IPC improvement over Unshared-LRR (seeds from {}; cf. [001] Fig. 14)</title>",
        r.seeds[0]
    );
    let _ = writeln!(o, "<text x=\"{:.1}\" y=\"20\" text-anchor=\"middle\" font-size=\"13\">IPC improvement over Unshared-LRR, synthetic Table 1 kernels</text>", w / 2.0);
    let mut v = lo;
    while v <= hi + 1e-9 {
        let yy = y(v);
        let stroke = if v.abs() < 1e-9 { "black" } else { "#ddd" };
        let _ = writeln!(o, "<line x1=\"{left:.1}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" stroke=\"{stroke}\"/>", left + plot_w);
        let _ = writeln!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{:.0} %</text>",
            left - 5.0,
            yy + 4.0,
            100.0 * v
        );
        v += step;
    }
    let _ = writeln!(o, "<text x=\"15\" y=\"{0:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 15 {0:.1})\">IPC / IPC(Unshared-LRR) − 1</text>", top + plot_h / 2.0);
    for (g, k) in kernels.iter().enumerate() {
        let gx = left + gap + g as f64 * (group_w + gap);
        for (b, (&c, colour)) in configs.iter().zip(colours).enumerate() {
            let val = r.row(k, c).gain_vs_lrr;
            let (y0, y1) = (y(val.max(0.0)), y(val.min(0.0)));
            let _ = writeln!(
                o,
                "<rect class=\"bar\" data-kernel=\"{k}\" data-config=\"{}\" data-value=\"{val:.6}\" x=\"{:.1}\" y=\"{y0:.2}\" width=\"{bar_w:.1}\" height=\"{:.2}\" fill=\"{colour}\"><title>{k} {}: {}</title></rect>",
                serde_json::to_value(c).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default(),
                gx + b as f64 * bar_w,
                y1 - y0,
                c.label(),
                pct(val)
            );
        }
        let (tx, ty) = (gx + group_w / 2.0, top + plot_h + 12.0);
        let _ = writeln!(o, "<text x=\"{tx:.1}\" y=\"{ty:.1}\" text-anchor=\"end\" transform=\"rotate(-45 {tx:.1} {ty:.1})\">{k}</text>");
    }
    let ly = h - 18.0;
    for (i, (&c, colour)) in configs.iter().zip(colours).enumerate() {
        let lx = left + i as f64 * 150.0;
        let _ = writeln!(o, "<rect class=\"legend\" x=\"{lx:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{colour}\"/><text x=\"{:.1}\" y=\"{ly:.1}\">{}</text>", ly - 10.0, lx + 16.0, c.label());
    }
    o.push_str("</svg>\n");
    o
}
