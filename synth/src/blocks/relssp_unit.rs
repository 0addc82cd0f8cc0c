//! Hardware cost of the `RelsspUnit` (docs/scratchpad-sharing.md §3, §7): its storage, the
//! release bits `R[W][LANES]` of spec §7's inventory (not in the paper's count, which stores no
//! per-thread state), checked against the netlist and Yosys, and the size of the §3 gate trees.

use serde::Serialize;
use smrtl_hdl::blocks::relssp_unit::{build, Params};
use smrtl_hdl::tools::ToolError;

/// The §3 gates: a LANES-input AND per warp, a W-input AND per slot (for `done` and again for
/// `tb_empty`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Gates {
    pub warp_ands: u64,
    pub warp_and_inputs: u64,
    pub slot_ands: u64,
    pub slot_and_inputs: u64,
}

impl crate::BlockCost for Params {
    fn cost_notes(&self) -> Result<crate::Notes, ToolError> {
        notes(self)
    }
    /// Spec §7: W·LANES release bits.
    fn register_inventory(&self) -> Option<u64> {
        Some(self.register_bits())
    }
}

/// The unit's lines in `smrtl synth`.
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let (s, mut n) = crate::RegisterCount::measure(build(p), p.register_bits())?;
    n.add(
        format!(
            "R bits (spec §7): W x LANES = {} x {} = {} flip-flops, one release bit per thread of a warp slot, set by relssp, cleared at warp launch (not in the paper's 209-bit count); netlist {}, Yosys {} register bits",
            p.warps, p.lanes, s.formula_bits, s.netlist_bits, s.yosys_rtl_bits
        ),
        "storage",
        &s,
    );
    let g = Gates {
        warp_ands: u64::from(p.warps),
        warp_and_inputs: u64::from(p.lanes),
        slot_ands: 2 * u64::from(p.slots),
        slot_and_inputs: u64::from(p.warps),
    };
    n.add(
        format!(
            "gates (spec §3): {} x {}-input AND (ok per warp, the paper's NAND per thread), {} x {}-input AND (done and tb_empty per slot)",
            g.warp_ands, g.warp_and_inputs, g.slot_ands, g.slot_and_inputs
        ),
        "gates",
        &g,
    );
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spec §7: W·LANES = 96 · 32 = 3072 release bits at the defaults.
    #[test]
    fn inventory_is_w_times_lanes() {
        assert_eq!(
            crate::BlockCost::register_inventory(&Params::default()),
            Some(3072)
        );
    }
}
