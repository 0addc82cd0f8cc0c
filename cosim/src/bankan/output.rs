//! `bankan`'s report (docs/bank-conflicts.md §3.4): per access the degree per warp, replays
//! Σ(d − 1), [002]'s conflict number Σd, the wavefront counts a profiler would show, and an
//! explanation of the worst warp access (which lanes meet in which bank and layer, §1.3–1.4);
//! the kernel's totals. The JSON form is [`Report`] itself; [`Report::text`] the human one.

use super::analysis::{AccessResult, Worst};
use super::input::{Access, Kernel};
use crate::blocks::bank_conflict_detector::decode;
use serde::Serialize;
use smrtl_hdl::blocks::bank_conflict_detector::Mode;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The configuration analysed.
#[derive(Debug, Clone, Serialize)]
pub struct Config {
    pub banks: u32,
    pub bank_width: u32,
    pub layer_bytes: u32,
    pub lanes: u32,
    pub mode: String,
    pub block: [u64; 2],
    pub warps: u64,
}

/// One access's figures.
#[derive(Debug, Clone, Serialize)]
pub struct AccessReport {
    pub array: String,
    /// The access as `array[row][col]`, loop indices i0, i1, …
    pub expr: String,
    /// Per warp, the largest degree over its executed iterations; 0 for a warp with no active
    /// lane.
    pub degree: Vec<u32>,
    /// Per warp, Σd over its executed iterations.
    pub warp_conflicts: Vec<u64>,
    pub replays: u64,
    pub conflicts: u64,
    /// Shared-memory wavefronts of this model (= conflicts) and the ideal count (one per
    /// executed warp access).
    pub wavefronts: u64,
    pub ideal_wavefronts: u64,
    /// Degree-function calls (distinct cases; every warp access with --brute-force).
    pub evaluations: u64,
    pub explanation: String,
    /// The distinct cases with their warp-access counts (docs/bank-conflicts.md §3.4; not with
    /// --brute-force).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<super::analysis::CaseCount>,
}

/// The whole analysis.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub config: Config,
    pub accesses: Vec<AccessReport>,
    pub total_replays: u64,
    pub total_conflicts: u64,
    pub total_wavefronts: u64,
    pub total_ideal_wavefronts: u64,
}

impl Report {
    /// The report of `results` (one per access of `k`, in input order).
    pub fn new(k: &Kernel, results: &[(AccessResult, Option<Worst>)]) -> Report {
        let accesses: Vec<AccessReport> = k
            .accesses
            .iter()
            .zip(results)
            .map(|(a, (r, w))| AccessReport {
                array: k.arrays[a.array].name.clone(),
                expr: expr(k, a),
                degree: r.degree.clone(),
                warp_conflicts: r.warp_conflicts.clone(),
                replays: r.replays,
                conflicts: r.conflicts,
                wavefronts: r.conflicts,
                ideal_wavefronts: r.executed,
                evaluations: r.evaluations,
                explanation: explain(k, a, w.as_ref()),
                cases: r.cases.clone(),
            })
            .collect();
        let sum = |f: fn(&AccessReport) -> u64| accesses.iter().map(f).sum::<u64>();
        Report {
            config: Config {
                banks: k.banks,
                bank_width: k.bank_width,
                layer_bytes: k.layer_bytes,
                lanes: k.lanes,
                mode: k.mode.to_string(),
                block: [k.bdx, k.bdy],
                warps: k.warps(),
            },
            total_replays: sum(|a| a.replays),
            total_conflicts: sum(|a| a.conflicts),
            total_wavefronts: sum(|a| a.wavefronts),
            total_ideal_wavefronts: sum(|a| a.ideal_wavefronts),
            accesses,
        }
    }

    /// The human report.
    pub fn text(&self) -> String {
        let c = &self.config;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "bankan: {} banks, {} B layers, {} B bank mode, {}, {} lanes; block {}x{} ({} warp{})",
            c.banks,
            c.layer_bytes,
            c.bank_width,
            c.mode,
            c.lanes,
            c.block[0],
            c.block[1],
            c.warps,
            if c.warps == 1 { "" } else { "s" }
        );
        for (n, a) in self.accesses.iter().enumerate() {
            let degrees: Vec<String> = a.degree.iter().map(u32::to_string).collect();
            let _ = writeln!(s, "access {n}: {}", a.expr);
            let _ = writeln!(s, "  degree per warp: {}", degrees.join(" "));
            let _ = writeln!(
                s,
                "  replays {}, conflicts {}; wavefronts {} (ideal {})",
                a.replays, a.conflicts, a.wavefronts, a.ideal_wavefronts
            );
            let _ = writeln!(s, "  worst: {}", a.explanation);
        }
        let _ = writeln!(
            s,
            "total: replays {}, conflicts {}; wavefronts {} (ideal {})",
            self.total_replays,
            self.total_conflicts,
            self.total_wavefronts,
            self.total_ideal_wavefronts
        );
        s
    }
}

/// `c0·tx + c1·ty + c2 + Σ inc_j·i_j` as a short expression.
fn affine(terms: &[(i64, String)], c: i64) -> String {
    let mut s = String::new();
    for (k, v) in terms.iter().filter(|(k, _)| *k != 0) {
        let mag = if k.abs() == 1 {
            v.clone()
        } else {
            format!("{}*{v}", k.abs())
        };
        if s.is_empty() {
            s = if *k < 0 { format!("-{mag}") } else { mag };
        } else {
            let _ = write!(s, " {} {mag}", if *k < 0 { '-' } else { '+' });
        }
    }
    match (s.is_empty(), c) {
        (true, _) => c.to_string(),
        (false, 0) => s,
        (false, c) => format!("{s} {} {}", if c < 0 { '-' } else { '+' }, c.abs()),
    }
}

/// The access as written in CUDA, loops and conditions after it.
fn expr(k: &Kernel, a: &Access) -> String {
    let idx = |f: [i64; 3], w: usize| {
        let mut t = vec![(f[0], "tx".to_string()), (f[1], "ty".to_string())];
        t.extend(
            a.loops
                .iter()
                .enumerate()
                .map(|(j, l)| (l.inc[w], format!("i{j}"))),
        );
        affine(&t, f[2])
    };
    let arr = &k.arrays[a.array];
    let mut s = format!("{}[{}][{}]", arr.name, idx(a.row, 0), idx(a.col, 1));
    if let Some(sw) = arr.swizzle {
        let _ = write!(s, " through {sw}");
    }
    for (j, l) in a.loops.iter().enumerate() {
        let _ = write!(s, " for i{j} < {}", l.trips);
    }
    let full = |r: [u64; 2], dim: u64| r == [0, dim];
    if !full(a.tx, k.bdx) {
        let _ = write!(s, " if {} <= tx < {}", a.tx[0], a.tx[1]);
    }
    if !full(a.ty, k.bdy) {
        let _ = write!(s, " if {} <= ty < {}", a.ty[0], a.ty[1]);
    }
    for c in &a.conds {
        let mut t = vec![(c.tx, "tx".to_string()), (c.ty, "ty".to_string())];
        t.extend(c.i.iter().enumerate().map(|(j, &x)| (x, format!("i{j}"))));
        let _ = write!(s, " if {} >= 0", affine(&t, c.c));
    }
    s
}

/// Lane numbers as ranges: `0-3, 16-19`.
fn lane_ranges(lanes: &[usize]) -> String {
    let mut parts: Vec<String> = vec![];
    let mut i = 0;
    while i < lanes.len() {
        let mut j = i;
        while j + 1 < lanes.len() && lanes[j + 1] == lanes[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            lanes[i].to_string()
        } else {
            format!("{}-{}", lanes[i], lanes[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// Which lanes of the worst warp access meet in which bank and layer, and the rule of the
/// mode that turns them into the degree (§1.4).
fn explain(k: &Kernel, a: &Access, w: Option<&Worst>) -> String {
    let Some(w) = w else {
        return "no warp executes this access".into();
    };
    let cfg = k.cfg(a.array);
    let at = if w.iteration.is_empty() {
        format!("warp {}", w.warp)
    } else {
        let iv: Vec<String> = w
            .iteration
            .iter()
            .enumerate()
            .map(|(j, i)| format!("i{j} = {i}"))
            .collect();
        format!("warp {}, {}", w.warp, iv.join(", "))
    };
    if w.degree == 1 {
        return format!("{at}: degree 1, every bank serves one layer");
    }
    // Per bank group, per layer: the lanes.
    let mut groups: BTreeMap<u64, BTreeMap<u64, Vec<usize>>> = BTreeMap::new();
    for (l, _) in w.active.iter().enumerate().filter(|(_, &on)| on) {
        let d = decode(&cfg, w.addrs[l]);
        groups
            .entry(d.group)
            .or_default()
            .entry(d.layer)
            .or_default()
            .push(l);
    }
    // Gpgpusim4Limited: the first element of two or more lanes, by (group, element), counts once.
    let mut per_element: BTreeMap<(u64, u64), usize> = BTreeMap::new();
    for (l, _) in w.active.iter().enumerate().filter(|(_, &on)| on) {
        let d = decode(&cfg, w.addrs[l]);
        *per_element.entry((d.group, d.element)).or_default() += 1;
    }
    let broadcast = per_element.iter().find(|(_, &n)| n > 1);
    let weight = |g: u64, layers: &BTreeMap<u64, Vec<usize>>| match cfg.mode {
        Mode::Literal => layers.values().map(Vec::len).sum::<usize>(),
        Mode::Gpgpusim4Limited => {
            let lanes = layers.values().map(Vec::len).sum::<usize>();
            match broadcast {
                Some((&(bg, _), &n)) if bg == g => lanes - (n - 1),
                _ => lanes,
            }
        }
        _ => layers.len(),
    };
    let (g, layers) = groups
        .iter()
        .max_by_key(|(g, layers)| (weight(**g, layers), std::cmp::Reverse(**g)))
        .expect("an active lane");
    let per = (cfg.elem_bytes.max(cfg.mode_bytes) / cfg.mode_bytes) as u64;
    let bank = if per == 1 {
        format!("bank {g}")
    } else {
        format!("banks {}-{}", g * per, g * per + per - 1)
    };
    let list: Vec<String> = layers
        .iter()
        .map(|(layer, lanes)| format!("layer {layer} <- lanes {}", lane_ranges(lanes)))
        .collect();
    let rule = match cfg.mode {
        Mode::Literal => "literal: one cycle per lane on a bank",
        Mode::Multicast => "multicast: one cycle per distinct layer of a bank",
        Mode::GpgpusimLimited => "gpgpusim-limited: one slot per distinct word of a bank",
        Mode::Gpgpusim4Limited => {
            "gpgpusim4-limited: one cycle per lane on a bank, the first shared word once"
        }
    };
    format!(
        "{at}: {bank}: {}; degree {} ({rule})",
        list.join("; "),
        w.degree
    )
}
