//! Hardware cost of the scheduler-mode SM core (docs/elastic-pipeline.md §5.6, §6, §7): Yosys
//! generic figures of `sm_core` and where its storage bits (registers, and the history cache's
//! tag and data memories) go — the pipeline (whose entries
//! carry the PC here), the BCAWS hardware (history cache, accumulator, counter) and the
//! scheduler with the issue unit — each counted from the params and checked against the RTL.

use crate::yosys::GenericReport;
use serde::Serialize;
use smrtl_hdl::blocks::elastic_pipeline::{self as pipe, stages};
use smrtl_hdl::blocks::sm_core::{build, Params};
use smrtl_hdl::tools::ToolError;
use std::sync::Arc;

/// Storage bits of `build(p)` by part: registers, plus memory words (the history cache's tag
/// and data arrays).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Registers {
    /// The pipeline's latches and control, plus a PCW-bit PC in every latch.
    pub pipeline: u64,
    /// History cache (lines, valid, MRU), accumulator and distance counter.
    pub bcaws: u64,
    /// Busy bits (W), sequence numbers (W × SEQB), RR pointer (lg W) and the issue unit's
    /// current instruction (pending, warp, kind, PC, seq, next subwarp).
    pub scheduler: u64,
    pub total: u64,
}

impl Registers {
    /// Counts for `p`.
    pub fn of(p: &Params) -> Registers {
        let latches = stages(&p.pipe).len() as u64;
        let pipeline = pipe::build(&p.pipe).register_bits() + latches * u64::from(p.pc_bits);
        let bcaws = crate::blocks::history_cache::Registers::of(&p.history_cache()).total;
        let (w, wb, swb) = (u64::from(p.warps), p.warp_bits() as u64, p.sw_bits() as u64);
        let seqb = p.seq_bits() as u64;
        let issue = 1 + wb + 2 + u64::from(p.pc_bits) + seqb + swb;
        let scheduler = w + w * seqb + wb + issue;
        Registers {
            pipeline,
            bcaws,
            scheduler,
            total: pipeline + bcaws + scheduler,
        }
    }
}

impl crate::BlockCost for Params {
    fn cost_notes(&self) -> Result<crate::Notes, ToolError> {
        notes(self)
    }
    fn register_inventory(&self) -> Option<u64> {
        Some(register_inventory(self))
    }
}

/// The core's flip-flop bits: [`Registers::total`] less the history cache's tag and data
/// memories, which the IR and Yosys count as memory bits, not registers (as the history cache's
/// own inventory does, `crate::blocks::history_cache::register_inventory`).
pub fn register_inventory(p: &Params) -> u64 {
    let hc = crate::blocks::history_cache::Registers::of(&p.history_cache());
    Registers::of(p).total - (hc.total - hc.flip_flops)
}

/// The core's figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SmCoreCost {
    pub registers: Registers,
    /// Register bits of the netlist as built (memory words excluded).
    pub built_register_bits: u64,
    /// Memory bits of the netlist as built; with `built_register_bits`, equals
    /// `registers.total`.
    pub built_memory_bits: u64,
    pub generic: GenericReport,
}

/// Synthesizes `build(p)` (generic flow) and splits its registers.
pub fn cost(p: &Params) -> Result<SmCoreCost, ToolError> {
    let module = Arc::new(build(p));
    let generic = crate::cost_of(&module, false)?.generic;
    Ok(SmCoreCost {
        registers: Registers::of(p),
        built_register_bits: module.register_bits(),
        built_memory_bits: module.memory_bits(),
        generic,
    })
}

/// The core's lines in `smrtl synth`: storage bits per part and the cache beside Table 3.
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let c = cost(p)?;
    let mut n = crate::Notes {
        generic: Some(c.generic.clone()),
        ..Default::default()
    };
    let r = &c.registers;
    n.add(
        format!(
            "storage bits: pipeline {} (entries carry a {}-bit PC), BCAWS {} (history cache, accumulator, counter), scheduler + issue unit {} = {} (netlist: {} register + {} memory bits)",
            r.pipeline, p.pc_bits, r.bcaws, r.scheduler, r.total, c.built_register_bits, c.built_memory_bits
        ),
        "registers",
        r,
    );
    let hp = p.history_cache();
    let cache_bits = r.bcaws - 2 * u64::from(p.dw());
    n.add(
        format!(
            "cache storage: {cache_bits} bits in the RTL; paper Table 3: {} bits = {} bytes, {} bits = {} bytes with valid and MRU bits",
            hp.storage_bits(),
            hp.storage_bits() / 8,
            hp.storage_bits_with_state(),
            hp.storage_bits_with_state() / 8
        ),
        "cache_storage_bits",
        cache_bits,
    );
    n.json
        .insert("paper_storage_bits".into(), hp.storage_bits().into());
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use smrtl_hdl::BlockParams;

    /// The Table 4 core's storage by part, from the params alone, and what the IR builds: the
    /// flip-flop inventory and, with the history cache's memories, the whole storage.
    #[test]
    fn table4_register_split() {
        let p = Params::default();
        let r = Registers::of(&p);
        // BCAWS: 512 lines x (1 valid + 6 tag + 5 data) + 256 MRU + accumulator 5 + counter 5.
        assert_eq!(r.bcaws, 512 * 12 + 256 + 10);
        // Scheduler: 32 busy + 32 x 9 seq (tag 16 = 5 warp + 9 seq + 2 sw) + 5 RR pointer, and
        // the issue unit's 1 + 5 + 2 + 14 + 9 + 2.
        assert_eq!(r.scheduler, 32 + 32 * 9 + 5 + 33);
        assert_eq!(register_inventory(&p), r.total - 512 * 11);
        for (name, p) in Params::presets() {
            let m = build(&p);
            assert_eq!(m.register_bits(), register_inventory(&p), "{name}");
            assert_eq!(
                m.register_bits() + m.memory_bits(),
                Registers::of(&p).total,
                "{name}"
            );
        }
    }
}
