//! Hardware cost of the `ReqCounter` (docs/memory-issue-control.md §3.3, §6): `reqcnt_bits`
//! flip-flops, needed only where no MILG shares its request counter with QBMI.

use serde::Serialize;
use smrtl_hdl::blocks::req_counter::Params;
use smrtl_hdl::tools::ToolError;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Registers {
    pub reqcnt: u64,
}

impl crate::BlockCost for Params {
    fn cost_notes(&self) -> Result<crate::Notes, ToolError> {
        notes(self)
    }
    fn register_inventory(&self) -> Option<u64> {
        Some(self.register_bits())
    }
}

/// The counter's line in `smrtl synth`.
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let r = Registers {
        reqcnt: p.register_bits(),
    };
    let mut n = crate::Notes::default();
    n.add(
        format!(
            "storage: {} DFF bits = the request counter (the paper's 10-bit MILG request counter, stand-alone; only when no MILG shares it with QBMI, spec §3.3)",
            r.reqcnt
        ),
        "registers",
        &r,
    );
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inventory (10 bits at the paper's widths) is what the notes state; the conformance
    /// suite holds it against the IR and Yosys.
    #[test]
    fn notes_state_the_inventory() {
        let p = Params::default();
        assert_eq!(crate::BlockCost::register_inventory(&p), Some(10));
        assert!(notes(&p).unwrap().lines[0].starts_with("storage: 10 DFF bits"));
    }
}
