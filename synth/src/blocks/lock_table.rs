//! Hardware cost of the `LockTable` (docs/scratchpad-sharing.md §2.4, §7; Jatala et al., seed
//! 001, §7.1): its register bits from the spec's inventory, checked against the RTL, beside the
//! paper's lock variables.

use serde::Serialize;
use smrtl_hdl::blocks::lock_table::Params;
use smrtl_hdl::tools::ToolError;

/// The lock table's flip-flop bits by structure (spec §7 table).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Registers {
    /// Locks: `KP·(1+SW)`, a valid bit and an owner id per pair (40 at the defaults).
    pub locks: u64,
    /// In-flight counters for the drain rule: `T·PEND_W` (96); not in the paper.
    pub pend: u64,
    /// The sticky `err_proto` and `err_pend` (the "errors" part of §7's last row).
    pub errors: u64,
    pub total: u64,
    /// The paper's lock variables, `⌊T/2⌋·⌈log2 T⌉` (32): ids only, no "free" encoding.
    pub paper_lock_bits: u64,
}

impl Registers {
    /// Counts for `p`, from the spec's formulas.
    pub fn of(p: &Params) -> Registers {
        let s = p.shape();
        let (kp, sw) = (s.kp() as u64, s.sw() as u64);
        let locks = kp * (1 + sw);
        let pend = u64::from(p.slots) * u64::from(p.pend_w);
        let errors = 2;
        Registers {
            locks,
            pend,
            errors,
            total: locks + pend + errors,
            paper_lock_bits: kp * sw,
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

/// The lock table's lines in `smrtl synth` (the conformance suite holds the inventory against
/// the RTL and Yosys).
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let r = Registers::of(p);
    let mut n = crate::Notes::default();
    n.add(
        format!(
            "storage: {} DFF bits = locks {} (KP x (1 + SW): valid bit + owner id per pair) + in-flight counters {} (T x PEND_W, for the drain rule; not in the paper) + {} sticky error flags; paper §7.1 lock variables: {} bits (ids only)",
            r.total, r.locks, r.pend, r.errors, r.paper_lock_bits
        ),
        "registers",
        &r,
    );
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use smrtl_hdl::blocks::lock_table::build;
    use smrtl_hdl::BlockParams;

    #[test]
    fn defaults_match_section_7() {
        let r = Registers::of(&Params::default());
        assert_eq!(
            (r.locks, r.pend, r.errors, r.total, r.paper_lock_bits),
            (40, 96, 2, 138, 32)
        );
        assert_eq!(notes(&Params::default()).unwrap().lines.len(), 1);
    }

    #[test]
    fn formula_equals_the_rtl_for_odd_shapes() {
        for (t, w) in [("2", "1"), ("6", "3"), ("32", "16")] {
            let p = Params::resolve_pairs(None, &[("T", t), ("PEND_W", w)]).unwrap();
            assert_eq!(build(&p).register_bits(), Registers::of(&p).total, "T={t}");
        }
    }
}
