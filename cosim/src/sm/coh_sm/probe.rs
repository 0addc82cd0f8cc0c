//! The one place the memory system meets the stall probe's API (docs/stall-inspector.md
//! §10.5): a cycle's [`SmView`] as the inspector's per-warp predicates and writebacks.

use super::view::{SmView, WarpView, Wb};
use crate::blocks::stall_inspector::{CycleIn, CycleOut, Gsi, WarpPreds, Writeback};

/// A warp's view as the inspector's predicates.
pub fn preds(v: &WarpView) -> WarpPreds {
    WarpPreds {
        active: v.active,
        inst_avail: v.inst_avail,
        sync_wait: v.sync_wait,
        haz_load: v.haz_load,
        haz_comp: v.haz_comp,
        is_mem: v.is_mem,
        ms_block: v.ms_block,
        fu_block: v.fu_block,
        ms_reason: v.ms_reason,
    }
}

/// A writeback as the inspector's.
pub fn writeback(w: &Wb) -> Writeback {
    Writeback {
        warp: w.warp,
        src: w.src,
        is_final: w.is_final,
    }
}

/// Writes one SM's cycle into `out` (one entry per warp) and returns its cycle inputs; with
/// several writebacks the first final one is taken (the probe has its own rule).
pub fn cycle(v: &SmView, out: &mut [WarpPreds]) -> CycleIn {
    for (o, w) in out.iter_mut().zip(&v.warps) {
        *o = preds(w);
    }
    let ldwb = v
        .wbs
        .iter()
        .find(|w| w.is_final)
        .or(v.wbs.first())
        .map(writeback);
    CycleIn {
        en: true,
        clear: false,
        n_issued: u64::from(v.issued),
        ldwb,
    }
}

/// Steps an inspector model with one SM's cycles (the tests' I1–I6 checks).
pub struct Feed {
    preds: Vec<WarpPreds>,
}

impl Feed {
    /// For `nw` warp slots.
    pub fn new(nw: usize) -> Feed {
        Feed {
            preds: vec![WarpPreds::default(); nw],
        }
    }

    /// One cycle of `v` into `gsi`.
    pub fn step(&mut self, gsi: &mut Gsi, v: &SmView) -> CycleOut {
        let c = cycle(v, &mut self.preds);
        gsi.step(&self.preds, &c)
    }
}
