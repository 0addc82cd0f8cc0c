//! Hardware cost of `ShareCfg` (docs/scratchpad-sharing.md §2.2, §7; Jatala et al., seed 001,
//! §7.1): its register bits by structure, from the §7 inventory, checked against the netlist
//! and reported with Yosys's count.

use crate::yosys::GenericReport;
use serde::Serialize;
use smrtl_hdl::blocks::share_cfg::{build, Params};
use smrtl_hdl::tools::ToolError;
use std::sync::Arc;

/// ShareCfg's register bits (spec §7 rows "ShSM, u", "ShTB" and "base").
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Registers {
    /// ShSM and `u`: 1 + AW.
    pub shsm_u: u64,
    /// ShTB: T·TW.
    pub shtb: u64,
    /// The translation bases: T·AW (not in the paper).
    pub base: u64,
    pub total: u64,
}

impl Registers {
    /// Counts for `p`.
    pub fn of(p: &Params) -> Registers {
        let s = p.shape();
        let t = u64::from(p.slots);
        let (aw, tw) = (s.aw() as u64, s.tw() as u64);
        let (shsm_u, shtb, base) = (1 + aw, t * tw, t * aw);
        Registers {
            shsm_u,
            shtb,
            base,
            total: shsm_u + shtb + base,
        }
    }
}

/// The figures of one configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShareCfgCost {
    pub registers: Registers,
    /// Register bits of the netlist as built; equals `registers.total`.
    pub built_register_bits: u64,
    pub generic: GenericReport,
}

impl crate::BlockCost for Params {
    fn cost_notes(&self) -> Result<crate::Notes, ToolError> {
        notes(self)
    }
    fn register_inventory(&self) -> Option<u64> {
        Some(Registers::of(self).total)
    }
}

/// Builds and synthesizes `p` (generic flow; the conformance suite holds the §7 inventory
/// against the netlist and Yosys).
pub fn cost(p: &Params) -> Result<ShareCfgCost, ToolError> {
    let module = Arc::new(build(p));
    let registers = Registers::of(p);
    let generic = crate::cost_of(&module, false)?.generic;
    Ok(ShareCfgCost {
        registers,
        built_register_bits: module.register_bits(),
        generic,
    })
}

/// ShareCfg's lines in `smrtl synth`: its register bits beside the paper's §7.1 count.
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let c = cost(p)?;
    let r = &c.registers;
    let mut n = crate::Notes {
        generic: Some(c.generic.clone()),
        ..Default::default()
    };
    n.add(
        format!(
            "registers: {} bits = ShSM + u {} (1 + AW) + ShTB {} (T x TW) + base {} (T x AW, translation, not in the paper) (spec §7); netlist {}, Yosys {} in the RTL, {} flip-flops after synthesis; the paper's §7.1 count has ShSM + ShTB = {} of them",
            r.total,
            r.shsm_u,
            r.shtb,
            r.base,
            c.built_register_bits,
            c.generic.rtl_flip_flops,
            c.generic.flip_flops,
            1 + r.shtb
        ),
        "registers",
        r,
    );
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spec §7: ShSM and u (15) + ShTB (80) + base (224) = 319 bits at the defaults.
    #[test]
    fn inventory_is_319_bits_at_the_defaults() {
        let r = Registers::of(&Params::default());
        assert_eq!((r.shsm_u, r.shtb, r.base, r.total), (15, 80, 224, 319));
    }
}
