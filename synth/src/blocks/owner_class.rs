//! Hardware cost of `OwnerClass` (docs/scratchpad-sharing.md §2.5, §7; Jatala et al., seed 001,
//! §7.1): the owner bits the paper stores are decoded here, so the block has no registers.

use crate::yosys::GenericReport;
use serde::Serialize;
use smrtl_hdl::blocks::owner_class::{build, Params};
use smrtl_hdl::tools::ToolError;
use std::sync::Arc;

/// Owner-bit storage: the project's and the paper's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OwnerBits {
    /// Register bits of the block: 0 (spec §2.5 [D], §7).
    pub registers: u64,
    /// The paper's stored owner bits, one per warp slot: W (§7.1).
    pub paper: u64,
}

/// The figures of one configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OwnerClassCost {
    pub owner_bits: OwnerBits,
    pub generic: GenericReport,
}

impl crate::BlockCost for Params {
    fn cost_notes(&self) -> Result<crate::Notes, ToolError> {
        notes(self)
    }
    /// Spec §7: no registers (combinational).
    fn register_inventory(&self) -> Option<u64> {
        Some(0)
    }
}

/// Builds and synthesizes `p` (generic flow).
pub fn cost(p: &Params) -> Result<OwnerClassCost, ToolError> {
    let module = Arc::new(build(p));
    let generic = crate::cost_of(&module, false)?.generic;
    Ok(OwnerClassCost {
        owner_bits: OwnerBits {
            registers: 0,
            paper: u64::from(p.warps),
        },
        generic,
    })
}

/// OwnerClass's lines in `smrtl synth`: no stored owner bits, against the paper's W.
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let c = cost(p)?;
    let mut n = crate::Notes {
        generic: Some(c.generic.clone()),
        ..Default::default()
    };
    n.add(
        format!(
            "registers: 0; owner bits and classes are decoded from the locks every cycle (spec §2.5 [D]): one lock lookup per slot and one T:1 multiplexer of 3 bits per warp; the paper's §7.1 count stores W = {} owner bits",
            c.owner_bits.paper
        ),
        "owner_bits",
        &c.owner_bits,
    );
    Ok(n)
}
