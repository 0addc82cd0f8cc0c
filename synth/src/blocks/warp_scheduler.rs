//! Hardware cost of one warp scheduler (docs/scratchpad-sharing.md §4, §7): its state, the last
//! pick (`last_valid`, `last_idx`), counted from the params and checked against the netlist and
//! Yosys, beside spec §7's SM row "errors, scheduler last" (NSCHED of these plus the lock
//! table's two error bits) and the paper's per-scheduler logic.

use serde::Serialize;
use smrtl_hdl::blocks::sharing::Sched;
use smrtl_hdl::blocks::warp_scheduler::{build, Params};
use smrtl_hdl::tools::ToolError;

/// Error bits of the lock table (`err_proto`, `err_pend`) in spec §7's shared row.
pub const LOCK_ERROR_BITS: u64 = 2;

/// The selection logic as built: key comparators of the argmin tree (OWF, GTO) or index
/// comparators and first-valid trees (LRR, TWO_LEVEL).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Selection {
    pub comparators: u64,
    pub comparator_bits: u64,
}

impl crate::BlockCost for Params {
    fn cost_notes(&self) -> Result<crate::Notes, ToolError> {
        notes(self)
    }
    fn register_inventory(&self) -> Option<u64> {
        Some(self.register_bits())
    }
}

/// The spec §7 row "errors, scheduler last" of an SM with `p`'s schedulers:
/// 2 + NSCHED·(1 + ⌈log2 WS⌉) (26 at the defaults).
pub fn sm_row_bits(p: &Params) -> u64 {
    LOCK_ERROR_BITS + u64::from(p.nsched) * p.register_bits()
}

/// The scheduler's lines in `smrtl synth`.
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let (s, mut n) = crate::RegisterCount::measure(build(p), p.register_bits())?;
    n.add(
        format!(
            "state (spec §7): last_valid + last_idx = 1 + {}{} = {} flip-flops per scheduler; netlist {}, Yosys {} register bits; the SM's {} schedulers with the lock table's {} error bits make the row {} + {} x {} = {}",
            p.idx_bits(),
            match p.sched {
                Sched::TwoLevelActive => format!(" + {} (TWO_LEVEL_ACTIVE's active slots and pending ring, §4.1)", p.tl_list_bits()),
                _ => String::new(),
            },
            s.formula_bits,
            s.netlist_bits,
            s.yosys_rtl_bits,
            p.nsched,
            LOCK_ERROR_BITS,
            LOCK_ERROR_BITS,
            p.nsched,
            s.formula_bits,
            sm_row_bits(p)
        ),
        "storage",
        &s,
    );
    n.json.insert("sm_row_bits".into(), sm_row_bits(p).into());
    let ws = p.ws() as u64;
    let sel = match p.sched {
        Sched::Owf => Selection {
            comparators: ws.saturating_sub(1),
            comparator_bits: (p.rank_bits() + p.age_w as usize) as u64,
        },
        Sched::Gto => Selection {
            comparators: ws.saturating_sub(1),
            comparator_bits: u64::from(p.age_w),
        },
        Sched::Lrr | Sched::TwoLevel => Selection {
            comparators: ws.saturating_sub(1),
            comparator_bits: p.idx_bits() as u64,
        },
        // The list compaction: each slot's position against each list position, twice.
        Sched::TwoLevelActive => Selection {
            comparators: 2 * (p.tl_slots() as u64).pow(2),
            comparator_bits: smrtl_hdl::params::bits_for(p.tl_slots() as u64) as u64 + 1,
        },
    };
    n.add(
        format!(
            "selection: {} x {}-bit comparators ({}); paper §7.1: two comparators and one arithmetic unit per scheduler",
            sel.comparators,
            sel.comparator_bits,
            match p.sched {
                Sched::Owf | Sched::Gto => "argmin tree over the ready warps' keys",
                Sched::Lrr | Sched::TwoLevel => "index > last_idx, then two first-ready trees",
                Sched::TwoLevelActive => "active-list compaction, then a first-ready tree over the list",
            }
        ),
        "selection",
        &sel,
    );
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spec §7: 1 + ⌈log2 WS⌉ = 6 state bits per scheduler at the defaults, 26 in the SM row
    /// (two error bits and four schedulers); 3 at the small shape.
    #[test]
    fn state_bits_and_the_sm_row() {
        let p = Params::default();
        assert_eq!(crate::BlockCost::register_inventory(&p), Some(6));
        assert_eq!(sm_row_bits(&p), 26);
        let small = <Params as smrtl_hdl::BlockParams>::resolve(Some("small"), &[]).unwrap();
        assert_eq!(small.register_bits(), 3);
    }
}
