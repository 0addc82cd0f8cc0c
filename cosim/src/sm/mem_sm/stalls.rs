//! The memory pipeline's stall predicates (docs/stall-inspector.md §5.2; spec §3.1–§3.2, seed
//! 003 §IV): every warp slot's §4.2 predicates from the state phase 6's issue scan reads, the
//! load sources of §2.5 and the LSU reasons of §2.6. The probe only observes: attaching it
//! changes no cycle (I8).
//!
//! - Taken at the start of the cycle (after TB relaunches): phases 1–5 change nothing the scan
//!   reads but `ready_at` from "never" to t + 1 (still not ready in t) and the retirement of a
//!   warp whose last memory instruction completes, so S(t) is exactly what the scan uses.
//! - `haz_load`: the head waits for a memory instruction (`ready_at` = never: a load, or a
//!   store, which completes when the LSU accepts its last line), or the warp issued its last
//!   instruction and waits for its memory to drain before it exits. `haz_comp`: the head
//!   waits for a compute result. `inst_avail`, `sync_wait`, `fu_block`: always 1, 0, 0 (no
//!   instruction buffer, barriers or busy units in this model).
//! - `ms_block`: a ready memory head that did not issue. Its reason: with the MEM register
//!   still full, the LSU head's (MSHR entry or merge slots → MSHR_FULL; a store meeting a full
//!   miss queue → SB_FULL; a load meeting it, a line allocation failure, or the head's next
//!   line of a multi-line access → OTHER); with the slot free, the memory-issue control's
//!   gate or the arbitration → OTHER.
//! - Sources: an access that hit → L1; an access merged into a live MSHR entry → L1_COAL; the
//!   allocating access, served by the lower memory → MAIN_MEM; a store → L1 (accepted by the
//!   L1D). The writeback is `final` when it clears the head's hazard.

use super::l1d::Outcome;
use super::params::SCHEDULERS;
use super::{MemPipeline, Warp, NEVER};
use crate::blocks::stall_inspector::{reason, Params, Planes, WarpPreds, Writeback};
use crate::sm::stalls::Stalls;
use smrtl_hdl::BlockParams as _;

impl MemPipeline {
    /// The inspector this pipeline drives: one warp slot per warp of its TBs, one issue slot
    /// per scheduler; refused above the block's 128 slots.
    pub fn stall_params(&self) -> Result<Params, String> {
        let (nw, iw) = (self.warps.len().max(1), SCHEDULERS);
        Params::resolve_pairs(None, &[("NW", &nw.to_string()), ("IW", &iw.to_string())])
            .map_err(|e| format!("the stall inspector cannot take this workload: {e}"))
    }

    /// Attaches the stall probe `s` (built for [`MemPipeline::stall_params`]): the predicates
    /// are kept at the pipeline's events from now on (module doc).
    pub fn attach_stalls(&mut self, mut s: Stalls) {
        assert_eq!(s.nw(), self.warps.len().max(1), "one slot per warp");
        // A compute hazard lasts at most the longest compute latency of the kernels.
        let alu = self.kernels.iter().map(|k| k.alu_lat(self.p.alu_lat));
        s.track_events(u64::from(alu.max().unwrap_or(1)), self.t);
        for w in 0..self.warps.len() {
            let (p, until) = track_of(&self.warps[w]);
            s.track(w, &p, until);
        }
        self.stalls = Some(Box::new(s));
    }

    /// Detaches the stall probe.
    pub fn take_stalls(&mut self) -> Option<Stalls> {
        self.stalls.take().map(|s| *s)
    }

    /// Warp `w` changed (launch, issue, completion, retirement): its predicates to the probe.
    pub(super) fn stall_touch(&mut self, w: usize) {
        if let Some(s) = self.stalls.as_deref_mut() {
            let (p, until) = track_of(&self.warps[w]);
            s.track(w, &p, until);
        }
    }

    /// Every warp's predicates of S(t) (module doc), before phase 1: the ones kept at the
    /// events (checked against [`MemPipeline::derive`] when the probe audits).
    pub(super) fn stall_preds(&mut self) {
        let Some(mut s) = self.stalls.take() else {
            return;
        };
        let t = self.t;
        s.latch(t);
        if s.audits() {
            let kept = *s.planes();
            s.audit(&kept, &self.derive(t));
        }
        if s.wants_pcs() {
            for (pc, warp) in s.pcs_mut().iter_mut().zip(&self.warps) {
                *pc = u64::from(warp.kernel) << 32 | u64::from(warp.pc);
            }
        }
        self.stalls = Some(s);
    }

    /// Every warp's predicates in cycle `t` from its state, as the module doc states them.
    fn derive(&self, t: u64) -> Planes {
        let mut pl = Planes::default();
        for (w, warp) in self.warps.iter().enumerate() {
            let (p, until) = track_of(warp);
            pl.set(
                w,
                &WarpPreds {
                    haz_comp: until > t,
                    ..p
                },
            );
        }
        pl
    }

    /// The completion of warp `w`'s memory instruction `seq` with data from `from`, before
    /// [`MemPipeline::complete`] updates the warp: final if it clears the head's hazard.
    pub(super) fn stall_writeback(&mut self, w: usize, seq: u32, from: u64) {
        let warp = &self.warps[w];
        let is_final = if warp.pc < warp.len {
            warp.last_seq == seq && warp.ready_at == NEVER
        } else {
            warp.outstanding == 1
        };
        if let Some(s) = self.stalls.as_deref_mut() {
            s.writeback(Writeback {
                warp: w,
                src: from as u8,
                is_final,
            });
        }
    }

    /// After phase 6: the ready memory heads that did not issue are blocked, with the LSU's
    /// reason; then the probe steps with the cycle's issue count.
    pub(super) fn stall_issue(&mut self) {
        let Some(mut s) = self.stalls.take() else {
            return;
        };
        let why = if self.ev.slot_free {
            reason::OTHER
        } else {
            self.lsu_reason()
        } as u8;
        // At most one memory instruction issues a cycle (the shared slot).
        let winner = self
            .sched_view
            .iter()
            .find_map(|v| v.issued.filter(|i| i.1).map(|i| 1u128 << i.0))
            .unwrap_or(0);
        let pl = s.planes();
        let blocked = pl.is_mem & !pl.haz_load & !pl.haz_comp & !winner;
        s.block(blocked, why);
        let n: u64 = self.issued.iter().map(|&i| u64::from(i)).sum();
        s.step(n);
        self.stalls = Some(s);
    }

    /// Why the MEM register did not move on: its LSU head's stuck reason (module doc).
    fn lsu_reason(&self) -> u64 {
        let store = self.disp.is_some_and(|d| d.store);
        match self.outcome {
            Outcome::FailMshrEntry | Outcome::FailMshrMerge => reason::MSHR_FULL,
            Outcome::FailMissQueue if store => reason::SB_FULL,
            _ => reason::OTHER,
        }
    }
}

/// A warp's predicates as its last event left them (module doc), and the cycle before which its
/// compute hazard holds (0: none).
fn track_of(warp: &Warp) -> (WarpPreds, u64) {
    if !warp.live {
        return (WarpPreds::default(), 0);
    }
    let head = warp.pc < warp.len;
    let p = WarpPreds {
        active: true,
        inst_avail: true,
        haz_load: if head {
            warp.ready_at == NEVER
        } else {
            warp.outstanding > 0
        },
        is_mem: head && warp.mem_next,
        ..WarpPreds::default()
    };
    let until = if head && warp.ready_at != NEVER {
        warp.ready_at
    } else {
        0
    };
    (p, until)
}
