//! Hardware cost of the `MemIssueCtl` top (docs/memory-issue-control.md §6; Dai et al., seed
//! 004, §4.4): N MILGs plus the scheme's arbiter, checked against the RTL, beside the paper's
//! count (29 bits per MILG: 58 per SM for N = 2; QBMI adds a 10-bit counter per kernel).

use serde::Serialize;
use smrtl_hdl::blocks::mem_issue_ctl::{Params, Scheme};
use smrtl_hdl::tools::ToolError;

/// The top's flip-flop bits (spec §6 inventory).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Registers {
    pub kernels: u64,
    /// One MILG in the scheme's mode (44 Dmil / Smil, 36 Off at the paper widths).
    pub per_milg: u64,
    pub milgs: u64,
    /// The arbiter's registers (0 without BMI).
    pub arbiter: u64,
    pub total: u64,
    /// The paper's count for the same scheme: 29 per MILG when MIL is used, + 10 per kernel for
    /// QBMI (its minst counter); 0 for Baseline.
    pub paper: u64,
}

impl Registers {
    pub fn of(p: &Params) -> Registers {
        let n = u64::from(p.n);
        let m = p.milg();
        let per_milg = m.register_bits();
        let paper_milg = u64::from(m.inflight_bits + m.rsfail_bits + m.reqcnt_bits);
        let paper = match p.scheme {
            Scheme::Smil | Scheme::Dmil => n * paper_milg,
            Scheme::QbmiDmil => n * (paper_milg + 10),
            Scheme::Qbmi => n * 10,
            Scheme::Baseline | Scheme::Rbmi => 0,
        };
        let arbiter = p.register_bits() - n * per_milg;
        Registers {
            kernels: n,
            per_milg,
            milgs: n * per_milg,
            arbiter,
            total: p.register_bits(),
            paper,
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

/// The top's lines in `smrtl synth` (the conformance suite holds the inventory against the RTL
/// and Yosys).
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let r = Registers::of(p);
    let mut n = crate::Notes::default();
    let why = match p.milg().mode {
        smrtl_hdl::blocks::milg::Mode::Off => "the MILGs run in Off mode as observation counters (and QBMI's shared interval counters), which the paper's count does not include",
        _ => "each MILG keeps peak, mil and unl beyond the paper's three counters (+15 bits)",
    };
    n.add(
        format!(
            "storage ({:?}, N = {}): {} DFF bits = {} MILG(s) x {} ({:?} mode) + arbiter {}; the paper's count for this scheme: {} bits (29 per MILG, +10 per kernel for QBMI): {why}",
            p.scheme,
            r.kernels,
            r.total,
            r.kernels,
            r.per_milg,
            p.milg().mode,
            r.arbiter,
            r.paper
        ),
        "registers",
        &r,
    );
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use smrtl_hdl::BlockParams;

    #[test]
    fn dmil_pair_is_88_beside_the_papers_58() {
        let r = Registers::of(&Params::default());
        assert_eq!((r.per_milg, r.total, r.paper), (44, 88, 58));
        let b = Registers::of(&Params::resolve(Some("baseline"), &[]).unwrap());
        assert_eq!((b.per_milg, b.total, b.paper), (36, 72, 0));
    }

    /// The inventory of each scheme at the paper's widths, as the notes state it.
    #[test]
    fn inventory_per_scheme() {
        for (preset, want) in [
            ("paper", 88),
            ("baseline", 72),
            ("smil", 88),
            ("three", 132),
            ("rbmi", 73),
            ("qbmi", 136),
            ("qbmi_dmil", 152),
        ] {
            let p = Params::resolve(Some(preset), &[]).unwrap();
            assert_eq!(crate::BlockCost::register_inventory(&p), Some(want));
            let line = &notes(&p).unwrap().lines[0];
            assert!(line.contains(&format!(": {want} DFF bits")), "{line}");
        }
    }
}
