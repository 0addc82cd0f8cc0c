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
use crate::sm::stalls::{Key, Stalls};
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

    /// What the probe reads of the start of a cycle (module doc): the planes as the core's
    /// words, built into the probe only when the cycle needs them (audited runs and per-PC
    /// tables build them now, with the PCs). `None` without a probe.
    #[inline]
    pub(super) fn stall_preds(&mut self) -> Option<Start> {
        let s = self.stalls.0.as_deref()?;
        let (has_next, is_mem) = (self.program.has_next, self.program.is_mem);
        let (busy, current) = self.core.sched_view();
        // The warp being fed is not waiting on itself; its head is the instruction in feed.
        let feed = current.map_or(0, |c| 1u64 << c.0);
        let feed_mem = current.filter(|c| c.1.is_mem()).map_or(0, |_| feed);
        let waiting = busy & !feed;
        let load = waiting & self.program.inflight_mem;
        let start = Start {
            active: has_next | busy,
            load,
            comp: waiting & !load,
            is_mem: is_mem & !feed | feed_mem,
        };
        if s.builds_at_start() {
            self.stall_preds_now(&start, has_next, is_mem, busy, current);
        }
        Some(start)
    }

    /// The planes built at the start of the cycle: audited against the per-warp derivation,
    /// with `ready'` kept for the audit of the blocks, and the warps' PCs.
    #[cold]
    fn stall_preds_now(
        &mut self,
        start: &Start,
        has_next: u64,
        is_mem: u64,
        busy: u64,
        current: Option<(u32, Kind)>,
    ) {
        let derived = self.derive(has_next, is_mem, busy, current);
        let ready_m = self.core.ready_m(has_next, is_mem);
        let Some(s) = self.stalls.0.as_deref_mut() else {
            return;
        };
        start.build(s);
        if s.audits() {
            let kept = *s.planes();
            s.audit(&kept, &derived);
            self.audit_ready_m = Some(ready_m);
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
    }

    /// Where warp `w`'s instruction in flight was served (module doc); `None` for ALU, which
    /// writes back no load.
    fn source(&self, w: usize) -> Option<u64> {
        match self.inflight_kind(w) {
            Kind::Smem => Some(src::LOCAL_SPM),
            Kind::Gld if self.params().gld_via_icnt() => Some(src::MAIN_MEM),
            Kind::Gld | Kind::Gst => Some(src::L1),
            Kind::Alu => None,
        }
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

    /// After the cycle `ev`: a cycle with issue needs no planes (only whether a warp was
    /// ready, and with a load writeback that warp's load hazard), nor does a cycle without
    /// issue or writeback that repeats the last stall cycle's key; any other goes through
    /// [`SmCore::stall_cycle`].
    #[inline(always)]
    pub(super) fn stall_step(&mut self, start: Option<Start>, ev: &SmEvents) {
        let Some(start) = start else {
            return;
        };
        // The load writeback of this cycle, if any: (warp, where it was served).
        let wb = ev
            .warp_done
            .and_then(|w| Some((w as usize, self.source(w as usize)?)));
        let Some(s) = self.stalls.0.as_deref_mut() else {
            return;
        };
        // A probe that builds the planes at the start takes none of these shortcuts.
        let done = match (ev.issue.is_some(), wb) {
            (true, None) => s.step_issue_unseen(1, start.any_ready()),
            (true, Some((warp, from))) => s.step_issue_final_unseen(
                1,
                start.any_ready(),
                &Writeback {
                    warp,
                    src: from as u8,
                    is_final: true,
                },
                start.load >> warp & 1 == 1,
            ),
            (false, None) => s.repeat_keyed(start.key(ev)),
            (false, Some(_)) => false,
        };
        if !done {
            self.stall_cycle(start, ev, wb);
        }
    }

    /// A cycle with its planes: the heads that could not enter, the writeback `wb`, the step.
    ///
    /// A cycle without issue and without a front-end hold is one whose decision found
    /// `ready'` empty (a pending subwarp would have entered), so every ready memory head was
    /// withheld by the BCAWS mask: BANK_CONFLICT. The audit checks that against `ready'`.
    #[inline(never)]
    fn stall_cycle(&mut self, start: Start, ev: &SmEvents, wb: Option<(usize, u64)>) {
        let Some(mut s) = self.stalls.0.take() else {
            return;
        };
        if !s.builds_at_start() {
            start.build(&mut s);
        }
        let ready_m = self.audit_ready_m.take();
        let issued = ev.issue.is_some();
        if !issued {
            // The planes' words, as built (no copy of the planes).
            let ready = u128::from(start.active & !start.load & !start.comp);
            let is_mem = u128::from(start.is_mem);
            if ev.fe_hold {
                let why = match ev.cause {
                    Cause::BankConflict => reason::BANK_CONFLICT,
                    _ => reason::OTHER,
                } as u8;
                s.block(ready & is_mem, why);
                s.planes_mut().fu_block = ready & !is_mem;
            } else {
                let withheld = ready & is_mem;
                if let Some(ready_m) = ready_m {
                    let derived = withheld & !u128::from(ready_m);
                    let pl = *s.planes();
                    s.audit(
                        &Planes {
                            ms_block: withheld,
                            ..pl
                        },
                        &Planes {
                            ms_block: derived,
                            ..pl
                        },
                    );
                }
                s.block(withheld, reason::BANK_CONFLICT as u8);
            }
        }
        if let Some((warp, from)) = wb {
            s.writeback(Writeback {
                warp,
                src: from as u8,
                is_final: true,
            });
        }
        s.step(u64::from(issued));
        if !issued && wb.is_none() {
            s.keep_key(start.key(ev));
        }
        self.stalls.0 = Some(s);
    }
}

/// The start of a cycle as the probe reads it (module doc): the planes as the core's words
/// (in the probe already when it [`Stalls::builds_at_start`]).
#[derive(Clone, Copy)]
pub(super) struct Start {
    active: u64,
    load: u64,
    comp: u64,
    is_mem: u64,
}

impl Start {
    /// A warp was ready: active, not waiting on its instruction in flight.
    #[inline]
    fn any_ready(&self) -> bool {
        self.active & !self.load & !self.comp != 0
    }

    /// The planes and the blocks of a cycle without issue as one key (`stall_cycle` blocks
    /// from the planes, the hold and its cause only).
    #[inline]
    fn key(&self, ev: &SmEvents) -> Key {
        let hold = u64::from(ev.fe_hold) | (ev.cause as u64) << 1;
        [self.active, self.load, self.comp, self.is_mem, hold]
    }

    /// The planes into the probe `s`.
    fn build(&self, s: &mut Stalls) {
        let all = u64::MAX >> (64 - s.nw());
        *s.planes_mut() = Planes {
            active: u128::from(self.active),
            inst_avail: u128::from(all),
            haz_load: u128::from(self.load),
            haz_comp: u128::from(self.comp),
            is_mem: u128::from(self.is_mem),
            ..Planes::default()
        };
    }
}
