//! Hardware cost of `RbmiArb` (docs/memory-issue-control.md §3.1, §6): its one register, the
//! round-robin pointer of ⌈log2 N⌉ bits (spec §6 inventory), checked against the netlist and
//! Yosys. The paper prices no RBMI hardware (it adopts QBMI, §3.2).

use crate::yosys::GenericReport;
use serde::Serialize;
use smrtl_hdl::blocks::rbmi_arb::{build, Params};
use smrtl_hdl::tools::ToolError;
use std::sync::Arc;

/// The pointer's flip-flop bits, counted three ways.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Storage {
    /// Spec §6: ⌈log2 N⌉ (0 for N = 1, where the pointer is the constant 0).
    pub inventory_bits: u64,
    /// Register bits of the netlist as built.
    pub netlist_bits: u64,
    /// Flip-flop bits after Yosys's generic synthesis.
    pub yosys_bits: u64,
}

impl crate::BlockCost for Params {
    fn cost_notes(&self) -> Result<crate::Notes, ToolError> {
        notes(self)
    }
    fn register_inventory(&self) -> Option<u64> {
        Some(self.register_bits())
    }
}

/// Synthesizes `build(p)` (generic flow) and counts its storage (the conformance suite holds
/// the three counts equal).
pub fn cost(p: &Params) -> Result<(Storage, GenericReport), ToolError> {
    let module = Arc::new(build(p));
    let netlist_bits = module.register_bits();
    let generic = crate::cost_of(&module, false)?.generic;
    let storage = Storage {
        inventory_bits: p.register_bits(),
        netlist_bits,
        yosys_bits: generic.flip_flops,
    };
    Ok((storage, generic))
}

/// RbmiArb's lines in `smrtl synth`.
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let (s, generic) = cost(p)?;
    let mut n = crate::Notes {
        generic: Some(generic),
        ..Default::default()
    };
    n.add(
        format!(
            "pointer `last` (spec §6): ⌈log2 N⌉ = {} flip-flop bits for N = {}; netlist {}, Yosys {}{}; the paper gives no RBMI cost",
            s.inventory_bits,
            p.n,
            s.netlist_bits,
            s.yosys_bits,
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
