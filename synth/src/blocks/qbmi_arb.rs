//! Hardware cost of `QbmiArb` (docs/memory-issue-control.md §3.3–3.4, §6; Dai et al., seed 004,
//! §4.4): its flip-flops from the spec's inventory (per kernel `rpm`, `quota`, `minst`: 32 bits
//! at the defaults), checked against the netlist and Yosys, beside the paper's count, which
//! adds only the 10-bit memory-instruction counter per kernel and leaves the quota arithmetic
//! unspecified.

use crate::yosys::GenericReport;
use serde::Serialize;
use smrtl_hdl::blocks::qbmi_arb::{build, Params};
use smrtl_hdl::tools::ToolError;
use std::sync::Arc;

/// The flip-flop bits by structure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Registers {
    /// Per kernel: the rpm register, ⌈log2(rpm_max+1)⌉ bits (6).
    pub rpm: u64,
    /// Per kernel: the quota, quota_bits (16).
    pub quota: u64,
    /// Per kernel: the memory-instruction counter, reqcnt_bits (10): the paper's counter.
    pub minst: u64,
    /// Per kernel: rpm + quota + minst (32).
    pub per_kernel: u64,
    /// N × per_kernel: the spec §6 inventory.
    pub inventory: u64,
    /// Register bits of the netlist as built.
    pub netlist: u64,
    /// Flip-flop bits Yosys reads from the Verilog (before optimization).
    pub yosys_rtl: u64,
    /// Flip-flop bits after Yosys's generic synthesis.
    pub yosys: u64,
    /// The paper's QBMI addition (§4.4): one 10-bit memory-instruction counter per kernel.
    pub paper: u64,
    /// inventory − paper: the rpm and quota registers the paper does not count.
    pub beyond_paper: u64,
}

/// The paper's memory-instruction counter width (§4.4).
pub const PAPER_MINST_BITS: u64 = 10;

impl crate::BlockCost for Params {
    fn cost_notes(&self) -> Result<crate::Notes, ToolError> {
        notes(self)
    }
    fn register_inventory(&self) -> Option<u64> {
        Some(self.register_bits())
    }
}

/// The paper's QBMI flip-flops for `p` (§4.4): one memory-instruction counter per kernel.
pub fn paper_bits(p: &Params) -> u64 {
    u64::from(p.n) * PAPER_MINST_BITS
}

/// Synthesizes `build(p)` (generic flow) and counts its flip-flops (the conformance suite holds
/// the inventory, the netlist and Yosys equal).
pub fn cost(p: &Params) -> Result<(Registers, GenericReport), ToolError> {
    let module = Arc::new(build(p));
    let netlist = module.register_bits();
    let generic = crate::cost_of(&module, false)?.generic;
    let inventory = p.register_bits();
    let paper = paper_bits(p);
    let r = Registers {
        rpm: p.rpm_bits() as u64,
        quota: u64::from(p.quota_bits),
        minst: u64::from(p.reqcnt_bits),
        per_kernel: p.register_bits_per_kernel(),
        inventory,
        netlist,
        yosys_rtl: generic.rtl_flip_flops,
        yosys: generic.flip_flops,
        paper,
        beyond_paper: inventory.saturating_sub(paper),
    };
    Ok((r, generic))
}

/// QbmiArb's lines in `smrtl synth`.
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let (r, generic) = cost(p)?;
    let cells = generic.cells;
    let mut n = crate::Notes {
        generic: Some(generic),
        ..Default::default()
    };
    n.add(
        format!(
            "registers (spec §6): N x (rpm {} + quota {} + minst {}) = {} x {} = {} flip-flop bits; netlist {}, Yosys {} (RTL {}); the paper (§4.4) counts +{} per kernel = {} (the minst counter) and leaves the quota arithmetic unspecified: the {} bits beyond it are the rpm registers that hold the sampled Req/Minst and the saturating quota counters",
            r.rpm, r.quota, r.minst, p.n, r.per_kernel, r.inventory, r.netlist, r.yosys, r.yosys_rtl,
            PAPER_MINST_BITS, r.paper, r.beyond_paper
        ),
        "registers",
        &r,
    );
    n.add(
        format!(
            "logic (spec §6 extras): {} generic cells in all: the base-quota circuit (rpm decoded to prime exponents, LCM by max exponent, base by constant multiplications), {} restoring divider(s) of {} quotient bits for round(2^{} / c), an {}-way quota comparator and {} saturating {}-bit adders",
            cells, p.n, r.rpm, p.reqcnt_bits, p.n, p.n, r.quota
        ),
        "cells",
        cells,
    );
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use smrtl_hdl::BlockParams;

    /// 32 bits per kernel at the defaults, of which the paper counts the 10-bit minst counter:
    /// 44 of the pair's 64 are beyond it; 96 for three kernels.
    #[test]
    fn defaults_are_32_bits_per_kernel_44_beyond_the_paper() {
        let p = Params::default();
        let inventory = crate::BlockCost::register_inventory(&p).unwrap();
        let per_kernel = p.register_bits_per_kernel();
        assert_eq!((per_kernel, inventory, paper_bits(&p)), (32, 64, 20));
        let three = Params::resolve(Some("bp_sv_ks"), &[]).unwrap();
        assert_eq!(crate::BlockCost::register_inventory(&three), Some(96));
    }
}
