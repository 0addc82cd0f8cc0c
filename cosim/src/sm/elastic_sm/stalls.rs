//! The SM core's stall predicates (docs/stall-inspector.md §5.2; spec §3.1–§3.2, seed 003
//! §IV) from what the scheduler and issue unit read at the start of the cycle (§5.6):
//! `has_next`, `is_mem`, the busy bits, the warp whose subwarps are being fed, and `ready'`
//! (the BCAWS mask applied). The probe only observes: attaching it changes no cycle (I8).
//!
//! - `active`: the warp has a next instruction or one in flight. `inst_avail` 1, `sync_wait` 0
//!   (no instruction buffer, no barriers in this model).
//! - A busy warp (strict barrel: one instruction in flight) waits on it: `haz_load` when it is
//!   a memory instruction (SMEM, GLD, GST), `haz_comp` when ALU. The warp being fed is not
//!   waiting on itself: its head is the instruction in feed.
//! - A ready head that cannot enter: with the front end held, memory heads are `ms_block`
//!   (BANK_CONFLICT when the hold is a bank-conflict replay of the seed-000 detector, else
//!   OTHER) and ALU heads `fu_block`; memory heads the BCAWS mask withholds are `ms_block`
//!   with BANK_CONFLICT (the scheduler keeps them out to avoid the conflict).
//! - Sources: SMEM → LOCAL_SPM (L1 unless the inspector's `split_local`); GLD through ICNT →
//!   MAIN_MEM, GLD returned at writeback and GST → L1. The writeback is the edge at which the
//!   warp's busy bit clears, always final (it clears the only hazard of the warp).

use super::program::SmCore;
use super::record::SmEvents;
use crate::blocks::stall_inspector::{reason, src, Params, Planes, WarpPreds, Writeback};
use crate::sm::stalls::Stalls;
use smrtl_hdl::blocks::elastic_pipeline::{Cause, Kind};
use smrtl_hdl::BlockParams as _;

impl SmCore {
    /// The inspector this core drives: one slot per warp context, one issue slot.
    pub fn stall_params(&self) -> Result<Params, String> {
        let nw = self.params().warps;
        Params::resolve_pairs(None, &[("NW", &nw.to_string())])
            .map_err(|e| format!("the stall inspector cannot take this core: {e}"))
    }

    /// Attaches the stall probe `s` (built for [`SmCore::stall_params`]); it stays across
    /// kernels.
    pub fn attach_stalls(&mut self, s: Stalls) {
        assert_eq!(s.nw(), self.params().warps as usize);
        self.stalls.0 = Some(Box::new(s));
    }

    /// Detaches the stall probe.
    pub fn take_stalls(&mut self) -> Option<Stalls> {
        self.stalls.0.take().map(|s| *s)
    }

    /// The kind of warp `w`'s instruction in flight.
    fn inflight_kind(&self, w: usize) -> Kind {
        self.program.warps[w][self.program.inflight[w]].op
    }

    /// Every warp's predicates from the start-of-cycle state (module doc), as planes from the
    /// core's own bit vectors, the blocks left for [`SmCore::stall_step`]: the probe, taken out
    /// of its slot for the cycle, and `ready'`.
    pub(super) fn stall_preds(&mut self) -> Option<(Box<Stalls>, u64)> {
        let mut s = self.stalls.0.take()?;
        let (has_next, is_mem) = (self.program.has_next, self.program.is_mem);
        let (busy, current, ready_m) = self.core.sched_view(has_next, is_mem);
        // The warp being fed is not waiting on itself; its head is the instruction in feed.
        let feed = current.map_or(0, |c| 1u64 << c.0);
        let feed_mem = current.filter(|c| c.1.is_mem()).map_or(0, |_| feed);
        let waiting = busy & !feed;
        let load = waiting & self.program.inflight_mem;
        let all = u64::MAX >> (64 - s.nw());
        *s.planes_mut() = Planes {
            active: u128::from(has_next | busy),
            inst_avail: u128::from(all),
            haz_load: u128::from(load),
            haz_comp: u128::from(waiting & !load),
            is_mem: u128::from(is_mem & !feed | feed_mem),
            ..Planes::default()
        };
        if s.audits() {
            let derived = self.derive(has_next, is_mem, busy, current);
            let kept = *s.planes();
            s.audit(&kept, &derived);
        }
        if s.wants_pcs() {
            for (w, pc) in s.pcs_mut().iter_mut().enumerate() {
                let feeding = current.is_some_and(|c| c.0 as usize == w);
                let at = if feeding {
                    self.program.inflight[w]
                } else {
                    self.program.next[w]
                };
                *pc = self.program.warps[w].get(at).map_or(0, |i| u64::from(i.pc));
            }
        }
        Some((s, ready_m))
    }

    /// The predicates warp by warp, as the module doc states them (the audit's reference).
    fn derive(
        &self,
        has_next: u64,
        is_mem: u64,
        busy: u64,
        current: Option<(u32, Kind)>,
    ) -> Planes {
        let mut pl = Planes::default();
        for w in 0..self.params().warps as usize {
            let bit = 1u64 << w;
            let feeding = current.filter(|c| c.0 as usize == w);
            let waiting = busy & bit != 0 && feeding.is_none();
            let load = waiting && self.inflight_kind(w).is_mem();
            let p = WarpPreds {
                active: (has_next | busy) & bit != 0,
                inst_avail: true,
                haz_load: load,
                haz_comp: waiting && !load,
                is_mem: feeding.map_or(is_mem & bit != 0, |c| c.1.is_mem()),
                ..WarpPreds::default()
            };
            pl.set(w, &p);
        }
        pl
    }

    /// After the cycle `ev`: the heads that could not enter, the writeback, the step.
    pub(super) fn stall_step(&mut self, probe: Option<(Box<Stalls>, u64)>, ev: &SmEvents) {
        let Some((mut s, ready_m)) = probe else {
            return;
        };
        let issued = ev.issue.is_some();
        if !issued {
            let pl = *s.planes();
            let ready = pl.active & !pl.haz_load & !pl.haz_comp;
            if ev.fe_hold {
                let why = match ev.cause {
                    Cause::BankConflict => reason::BANK_CONFLICT,
                    _ => reason::OTHER,
                } as u8;
                s.block(ready & pl.is_mem, why);
                s.planes_mut().fu_block = ready & !pl.is_mem;
            } else {
                s.block(
                    ready & pl.is_mem & !u128::from(ready_m),
                    reason::BANK_CONFLICT as u8,
                );
            }
        }
        if let Some(w) = ev.warp_done {
            let w = w as usize;
            let from = match self.inflight_kind(w) {
                Kind::Smem => Some(src::LOCAL_SPM),
                Kind::Gld if self.params().gld_via_icnt() => Some(src::MAIN_MEM),
                Kind::Gld | Kind::Gst => Some(src::L1),
                Kind::Alu => None,
            };
            if let Some(from) = from {
                s.writeback(Writeback {
                    warp: w,
                    src: from as u8,
                    is_final: true,
                });
            }
        }
        s.step(u64::from(issued));
        self.stalls.0 = Some(s);
    }
}
