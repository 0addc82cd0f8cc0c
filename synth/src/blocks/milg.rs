//! Hardware cost of the `Milg` (docs/memory-issue-control.md §4.3, §6; Dai et al., seed 004,
//! §4.4): its flip-flop inventory by register, checked against the RTL, beside the paper's
//! 29 bits per MILG (7-bit in-flight, 12-bit failure and 10-bit request counters; the 10-bit
//! shifter is wires).

use serde::Serialize;
use smrtl_hdl::blocks::milg::{Mode, Params};
use smrtl_hdl::tools::ToolError;

/// The Milg's flip-flop bits by register (spec §4.3, §6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Registers {
    pub inflight: u64,
    pub rsfail: u64,
    pub reqcnt: u64,
    /// The interval's running maximum of `inflight` (the paper folds it into the counter).
    pub peak: u64,
    /// The limit and the "unlimited" flag: registers in Smil and Dmil, constants in Off.
    pub mil: u64,
    pub unl: u64,
    pub total: u64,
    /// The paper's count: in-flight + failure + request counters (29 at the defaults).
    pub paper: u64,
}

impl Registers {
    /// Counts for `p` from the inventory (44 in Dmil and Smil, 36 in Off at the defaults).
    pub fn of(p: &Params) -> Registers {
        let (ib, fb, qb) = (
            u64::from(p.inflight_bits),
            u64::from(p.rsfail_bits),
            u64::from(p.reqcnt_bits),
        );
        let limit = p.mode != Mode::Off;
        let (mil, unl) = if limit { (ib, 1) } else { (0, 0) };
        Registers {
            inflight: ib,
            rsfail: fb,
            reqcnt: qb,
            peak: ib,
            mil,
            unl,
            total: 2 * ib + fb + qb + mil + unl,
            paper: ib + fb + qb,
        }
    }
}

impl crate::BlockCost for Params {
    fn cost_notes(&self) -> Result<crate::Notes, ToolError> {
        notes(self)
    }
    fn register_inventory(&self) -> Option<u64> {
        Some(Registers::of(self).total)
    }
}

/// The Milg's lines in `smrtl synth` (the conformance suite holds the inventory against the
/// RTL and Yosys).
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let r = Registers::of(p);
    let mut n = crate::Notes::default();
    let limit = if p.mode == Mode::Off {
        "mil / unl are constants in Off (all ones, 1)".to_string()
    } else {
        format!("mil {} + unl {}", r.mil, r.unl)
    };
    n.add(
        format!(
            "storage ({:?}): {} DFF bits = inflight {} + rsfail {} (saturating) + reqcnt {} + peak {} + {}; paper §4.4 counts {} bits per MILG (the three counters; shifter = wires): beyond it peak (a max register the paper folds into its counter) and the limit registers",
            p.mode, r.total, r.inflight, r.rsfail, r.reqcnt, r.peak, limit, r.paper
        ),
        "registers",
        &r,
    );
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's defaults; the conformance suite holds the inventory against the IR and
    /// Yosys at every preset.
    #[test]
    fn inventory_is_44_in_dmil() {
        let r = Registers::of(&Params::default());
        assert_eq!(
            (r.inflight, r.rsfail, r.reqcnt, r.peak, r.mil, r.unl, r.total, r.paper),
            (7, 12, 10, 7, 7, 1, 44, 29)
        );
    }
}
