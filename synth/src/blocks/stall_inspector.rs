//! Hardware cost of the `StallInspector` (docs/stall-inspector.md §5; spec §4.5). The paper
//! gives none: GSI is a simulator feature (paper §V: it adds 5% to simulation time). The spec's
//! inventory is (22 + `split_local`)·CW + NW·BW + 6 flip-flops (+ 8·CW with `warp_counters`):
//! 838 at the defaults, 1,478 for `paper`; `smrtl synth` shows it beside Yosys's generic flow
//! at NW ∈ {8, 16, 48}, with cells and gate equivalents.

use crate::yosys::{self, GenericReport};
use serde::Serialize;
use smrtl_hdl::blocks::stall_inspector::{build, Params};
use smrtl_hdl::tools::ToolError;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The spec's §4.5 flip-flop inventory, by register group.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Registers {
    /// `cyc_total`, `inst_issued`: 2·CW.
    pub base: u64,
    /// `top[8]`: 8·CW.
    pub top: u64,
    /// `md_sub`: (6 + split_local)·CW.
    pub md_sub: u64,
    /// `ms_sub[1..=6]`: 6·CW.
    pub ms_sub: u64,
    /// NW·BW.
    pub blame: u64,
    /// Status bits 0–5.
    pub status: u64,
    /// `wc[8]` with `warp_counters`: 8·CW.
    pub wc: u64,
    pub total: u64,
}

impl Registers {
    /// The §4.5 formula for `p`.
    pub fn of(p: &Params) -> Registers {
        let (cw, nw, bw) = (u64::from(p.cw), u64::from(p.nw), u64::from(p.bw));
        let r = Registers {
            base: 2 * cw,
            top: 8 * cw,
            md_sub: (6 + p.split_local as u64) * cw,
            ms_sub: 6 * cw,
            blame: nw * bw,
            status: 6,
            wc: if p.warp_counters { 8 * cw } else { 0 },
            total: 0,
        };
        Registers {
            total: r.base + r.top + r.md_sub + r.ms_sub + r.blame + r.status + r.wc,
            ..r
        }
    }
}

/// NAND2 gate equivalents of a generic cell (Yosys's internal library), the usual static-CMOS
/// weights: inverter 0.67, NAND / NOR 1, AND / OR (and the -NOT forms) 1.33, AOI3 / OAI3 1.33,
/// AOI4 / OAI4 1.67, XOR / XNOR / MUX 2.33, a D flip-flop 4.67, plus 1.33 for a synchronous
/// reset and 2.33 for an enable. `None` for a cell type outside that table.
pub fn gate_equivalents(cell: &str) -> Option<f64> {
    let t = cell.trim_start_matches('$').trim_matches('_');
    let logic = match t {
        "NOT" => Some(0.67),
        "NAND" | "NOR" => Some(1.0),
        "AND" | "OR" | "ANDNOT" | "ORNOT" | "AOI3" | "OAI3" => Some(1.33),
        "AOI4" | "OAI4" => Some(1.67),
        "XOR" | "XNOR" | "MUX" => Some(2.33),
        _ => None,
    };
    if logic.is_some() {
        return logic;
    }
    let ff = t.starts_with("DFF") || t.starts_with("SDFF");
    ff.then(|| {
        let kind = t.split('_').next().unwrap_or("");
        let reset = if kind.starts_with('S') { 1.33 } else { 0.0 };
        let enable = if kind.contains('E') { 2.33 } else { 0.0 };
        4.67 + reset + enable
    })
}

/// Gate equivalents of a whole design, and the cell types outside the weight table (counted 0).
pub fn design_ge(cells: &BTreeMap<String, u64>) -> (f64, Vec<String>) {
    let mut unknown = vec![];
    let mut ge = 0.0;
    for (t, n) in cells {
        match gate_equivalents(t) {
            Some(w) => ge += w * *n as f64,
            None => unknown.push(t.clone()),
        }
    }
    (ge, unknown)
}

/// One configuration's Yosys figures beside the formula.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    pub nw: u32,
    pub formula_ff: u64,
    pub yosys_ff: u64,
    pub cells: u64,
    pub ge: f64,
    pub latches: u64,
}

/// The NW values of the cost table (spec §4.5).
pub const NW_POINTS: [u32; 3] = [8, 16, 48];

/// Yosys's generic flow on `p` with NW replaced by each of [`NW_POINTS`] (two at a time), and
/// the report of `p` itself when its NW is one of them.
pub fn sweep(p: &Params) -> Result<(Vec<Point>, Option<GenericReport>), ToolError> {
    let run = |nw: u32| -> Result<(Point, GenericReport), ToolError> {
        let q = Params { nw, ..p.clone() };
        let module = Arc::new(build(&q));
        let g = yosys::generic(&smrtl_hdl::rusthdl::emit_verilog(&module), &module.name)?;
        let (ge, _) = design_ge(&g.cells_by_type);
        let point = Point {
            nw,
            formula_ff: Registers::of(&q).total,
            yosys_ff: g.flip_flops,
            cells: g.cells,
            ge,
            latches: g.latches.values().sum(),
        };
        Ok((point, g))
    };
    let results: Vec<Result<(Point, GenericReport), ToolError>> = std::thread::scope(|s| {
        let second = s.spawn(|| run(NW_POINTS[1]));
        let first = run(NW_POINTS[0]);
        let second = second.join().expect("synthesis thread");
        let third = run(NW_POINTS[2]);
        vec![first, second, third]
    });
    let mut points = vec![];
    let mut own = None;
    for r in results {
        let (point, g) = r?;
        if point.nw == p.nw {
            own = Some(g);
        }
        points.push(point);
    }
    Ok((points, own))
}

impl crate::BlockCost for Params {
    fn cost_notes(&self) -> Result<crate::Notes, ToolError> {
        notes(self)
    }
    fn register_inventory(&self) -> Option<u64> {
        Some(Registers::of(self).total)
    }
}

/// The inspector's lines in `smrtl synth`: the §4.5 inventory, then Yosys at NW = 8, 16, 48.
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let r = Registers::of(p);
    let mut n = crate::Notes::default();
    let wc = if p.warp_counters {
        format!(" + wc 8·CW {}", r.wc)
    } else {
        String::new()
    };
    n.add(
        format!(
            "storage: {} DFF bits = cyc_total + inst_issued {} + top {} + md_sub {} + ms_sub {} + blame NW·BW {} + status {}{wc} (spec §4.5: (22 + split_local)·CW + NW·BW + 6; 838 at the defaults, 1,478 for paper); the paper states no hardware cost (GSI is a simulator feature, +5% simulation time, §V)",
            r.total, r.base, r.top, r.md_sub, r.ms_sub, r.blame, r.status
        ),
        "registers",
        &r,
    );
    let (points, own) = sweep(p)?;
    let cells: Vec<String> = points
        .iter()
        .map(|x| {
            format!(
                "NW {}: {} flip-flops (formula {}), {} cells, {:.0} GE",
                x.nw, x.yosys_ff, x.formula_ff, x.cells, x.ge
            )
        })
        .collect();
    n.add(
        format!(
            "yosys synth by NW (the other params as given): {}; GE = NAND2 equivalents (docs/stall-inspector.md §5)",
            cells.join("; ")
        ),
        "nw_points",
        &points,
    );
    n.generic = own;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use smrtl_hdl::BlockParams;

    #[test]
    fn inventory_is_the_formula() {
        assert_eq!(Registers::of(&Params::default()).total, 838);
        let paper = Params::resolve(Some("paper"), &[]).unwrap();
        assert_eq!(Registers::of(&paper).total, 1478);
        for (name, p) in Params::presets() {
            assert_eq!(build(&p).register_bits(), Registers::of(&p).total, "{name}");
        }
    }

    #[test]
    fn weights_cover_the_generic_cells() {
        for t in ["$_NOT_", "$_MUX_", "$_AOI4_", "$_XNOR_"] {
            assert!(gate_equivalents(t).is_some(), "{t}");
        }
        assert_eq!(gate_equivalents("$_DFF_P_"), Some(4.67));
        assert_eq!(gate_equivalents("$_SDFF_PP0_"), Some(4.67 + 1.33));
        assert_eq!(gate_equivalents("$_SDFFE_PP0P_"), Some(4.67 + 1.33 + 2.33));
        assert_eq!(gate_equivalents("$_DFFE_PP_"), Some(4.67 + 2.33));
        assert_eq!(gate_equivalents("$_DLATCH_P_"), None);
    }
}
