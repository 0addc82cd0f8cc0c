//! Hardware cost of `RbmiArb` (docs/memory-issue-control.md §3.1, §6): its one register, the
//! round-robin pointer of ⌈log2 N⌉ bits (spec §6 inventory), checked against the netlist and
//! Yosys. The paper prices no RBMI hardware (it adopts QBMI, §3.2).

use smrtl_hdl::blocks::rbmi_arb::{build, Params};
use smrtl_hdl::tools::ToolError;

impl crate::BlockCost for Params {
    fn cost_notes(&self) -> Result<crate::Notes, ToolError> {
        notes(self)
    }
    fn register_inventory(&self) -> Option<u64> {
        Some(self.register_bits())
    }
}

/// RbmiArb's lines in `smrtl synth`.
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let (s, mut n) = crate::RegisterCount::measure(build(p), p.register_bits())?;
    n.add(
        format!(
            "pointer `last` (spec §6): ⌈log2 N⌉ = {} flip-flop bits for N = {}; netlist {}, Yosys {}{}; the paper gives no RBMI cost",
            s.formula_bits,
            p.n,
            s.netlist_bits,
            s.yosys_rtl_bits,
            if p.n == 1 { " (N = 1: `last` is tied to 0)" } else { "" }
        ),
        "storage",
        &s,
    );
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inventory is the pointer: none for N = 1 (`last` tied to 0), ⌈log2 N⌉ otherwise.
    #[test]
    fn inventory_is_the_pointer() {
        let bits = [1, 2, 3].map(|n| crate::BlockCost::register_inventory(&Params { n }));
        assert_eq!(bits, [Some(0), Some(1), Some(2)]);
    }
}
