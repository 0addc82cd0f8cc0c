//! The one place the memory system meets the stall probe's API (docs/stall-inspector.md
//! §10.5): a cycle's [`SmView`] as the inspector's per-warp predicates and writebacks.

use super::view::{SmView, Wb};
use crate::blocks::stall_inspector::{Class, CycleIn, CycleOut, Gsi, Planes, WarpPreds};

/// One SM's cycle as planes, rebuilt from every warp's view, and the warps blocked by each
/// LSU reason: the reference the planes kept at the events (`kept.rs`) must equal
/// (docs/stall-inspector.md §10.8).
pub fn planes_of(v: &SmView) -> (Planes, [u128; 8]) {
    let mut pl = Planes::default();
    let mut blocked = [0u128; 8];
    for (w, p) in v.warps.iter().enumerate() {
        pl.set(w, p);
        blocked[usize::from(p.ms_reason & 7)] |= u128::from(p.ms_block) << w;
    }
    (pl, blocked)
}

/// Writes one SM's cycle into `out` (one entry per warp) and returns its cycle inputs; with
/// several writebacks the first final one is taken (the probe has its own rule).
pub fn cycle(v: &SmView, out: &mut [WarpPreds]) -> CycleIn {
    for (o, w) in out.iter_mut().zip(&v.warps) {
        *o = *w;
    }
    let ldwb = v.wbs.iter().find(|w| w.is_final).or(v.wbs.first()).copied();
    CycleIn {
        en: true,
        clear: false,
        n_issued: u64::from(v.issued),
        ldwb,
    }
}

/// Steps an inspector model with one SM's cycles (the tests' I1–I6 checks). Of several final
/// writebacks in a cycle it passes the one whose warp carries the most blame, as the §7 probe
/// does, and counts the others that carried blame (their blame waits for the warp's next
/// final writeback).
pub struct Feed {
    preds: Vec<WarpPreds>,
    /// Final writebacks with blame left out (one writeback per cycle, spec §3.2 step 3).
    pub collisions: u64,
}

impl Feed {
    /// For `nw` warp slots.
    pub fn new(nw: usize) -> Feed {
        Feed {
            preds: vec![WarpPreds::default(); nw],
            collisions: 0,
        }
    }

    /// One cycle of `v` into `gsi`.
    pub fn step(&mut self, gsi: &mut Gsi, v: &SmView) -> CycleOut {
        let mut c = cycle(v, &mut self.preds);
        if v.wbs.iter().filter(|w| w.is_final).count() <= 1 {
            return gsi.step(&self.preds, &c);
        }
        // The blame a flush would move: the warp's blame plus this cycle's MEM_DATA charge.
        c.ldwb = None;
        let o = gsi.evaluate(&self.preds, &c);
        let amt = |w: &Wb| {
            let charged = o.cls == Class::MemData && o.md_sel == w.warp;
            gsi.blame().get(w.warp).copied().unwrap_or(0) + u64::from(charged)
        };
        let best = v
            .wbs
            .iter()
            .filter(|w| w.is_final)
            .fold(None::<&Wb>, |b, w| match b {
                Some(b) if amt(b) >= amt(w) => Some(b),
                _ => Some(w),
            });
        if let Some(b) = best {
            c.ldwb = Some(*b);
            let left = v.wbs.iter().filter(|w| w.is_final && !std::ptr::eq(*w, b));
            self.collisions += left.filter(|w| amt(w) > 0).count() as u64;
        }
        let o = gsi.evaluate(&self.preds, &c);
        gsi.update(&c, &o);
        o
    }
}
