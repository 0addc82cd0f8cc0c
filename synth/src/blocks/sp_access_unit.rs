//! Hardware cost of `SpAccessUnit` (docs/scratchpad-sharing.md §2.3, §7; Jatala et al., seed
//! 001, §7.1): no registers, and the comparators and adders each port builds beside the paper's
//! "two comparators and one arithmetic unit" per scheduler (the `LANES = 1` case).

use crate::yosys::GenericReport;
use serde::Serialize;
use smrtl_hdl::blocks::sp_access_unit::{build, Params};
use smrtl_hdl::tools::ToolError;
use std::sync::Arc;

/// The arithmetic of one issue port as `build` makes it (spec §7 "Logic per port").
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PerPort {
    /// `ShTB[s] == NONE`: 1.
    pub none_comparators: u64,
    /// `s < ShTB[s]` (role and `pair`): 1.
    pub role_comparators: u64,
    /// `off >= u`: one per lane.
    pub lane_comparators: u64,
    /// `base[s] + u`: 1.
    pub base_adders: u64,
    /// `off + base`: one per lane.
    pub lane_adders: u64,
}

impl PerPort {
    /// Counts for `p`.
    pub fn of(p: &Params) -> PerPort {
        let lanes = u64::from(p.lanes);
        PerPort {
            none_comparators: 1,
            role_comparators: 1,
            lane_comparators: lanes,
            base_adders: 1,
            lane_adders: lanes,
        }
    }
}

/// The figures of one configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpAccessUnitCost {
    pub per_port: PerPort,
    pub ports: u64,
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
pub fn cost(p: &Params) -> Result<SpAccessUnitCost, ToolError> {
    let module = Arc::new(build(p));
    let generic = crate::cost_of(&module, false)?.generic;
    Ok(SpAccessUnitCost {
        per_port: PerPort::of(p),
        ports: u64::from(p.nsched),
        generic,
    })
}

/// SpAccessUnit's lines in `smrtl synth`: its per-port arithmetic beside the paper's.
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let c = cost(p)?;
    let a = &c.per_port;
    let mut n = crate::Notes {
        generic: Some(c.generic.clone()),
        ..Default::default()
    };
    n.add(
        format!(
            "registers: 0 (combinational); per port ({} ports): {} NONE comparator, {} slot-vs-partner comparator, {} off >= u comparators, 1 base + u adder and {} off + base adders (spec §7: one NONE comparator, LANES comparators and LANES adders; the paper's §7.1 two comparators and one adder per scheduler are the LANES = 1 case)",
            c.ports, a.none_comparators, a.role_comparators, a.lane_comparators, a.lane_adders
        ),
        "per_port",
        a,
    );
    Ok(n)
}
