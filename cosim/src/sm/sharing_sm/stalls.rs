//! The thread-block-residency SM's stall predicates (docs/stall-inspector.md §5.2; spec
//! §3.1–§3.2, seed 003 §IV) from the state the cycle's `ready` and the core's picks read
//! (docs/scratchpad-sharing.md §5), taken after the picks and before the SM's side of the edge.
//! The probe only observes: attaching it changes no cycle (I8). Launch cycles are not counted.
//!
//! - `active`: a valid warp with live threads that may issue from this cycle on (launched
//!   before it). `inst_avail`: its stream has an instruction at its PC.
//! - `sync_wait`: waiting at a barrier; and the lock NACKs of scratchpad sharing [D]: a pick
//!   NACKed by the lock table costs its scheduler the cycle, so the NACKed warp and the
//!   scheduler's other ready warps are SYNC (waiting on the lock, spec D6's acquire).
//! - `haz_load` / `haz_comp`: a source register not ready yet whose producer was a scratchpad
//!   or global access / an ALU or MOV (scoreboard tags kept by the SM for the probe).
//!   Outstanding atomics count as loads (the model has no atomic wait of its own).
//! - `is_mem`: scratchpad or global access. Nothing blocks the LSU or a unit in this model:
//!   `ms_block` and `fu_block` are 0.
//! - Writebacks: a warp whose head waits on loads and whose last such register becomes ready
//!   at the next edge (`ready_at` = t + 1) has its final writeback in t, tagged by that
//!   register's producer: scratchpad → LOCAL_SPM (L1 unless `split_local`), global →
//!   MAIN_MEM.

use super::{Phase, SharingSm};
use crate::blocks::sharing_core::Outputs;
use crate::blocks::stall_inspector::{src, Params, WarpPreds, Writeback};
use crate::sm::stalls::Stalls;
use smrtl_hdl::BlockParams as _;

impl SharingSm<'_> {
    /// The inspector this SM drives: one slot per warp slot, one issue slot per scheduler.
    pub fn stall_params(&self) -> Result<Params, String> {
        let (nw, iw) = (self.warps.len(), self.p.shape.nsched);
        Params::resolve_pairs(None, &[("NW", &nw.to_string()), ("IW", &iw.to_string())])
            .map_err(|e| format!("the stall inspector cannot take this SM: {e}"))
    }

    /// Attaches the stall probe `s` (built for [`SharingSm::stall_params`]).
    pub fn attach_stalls(&mut self, s: Stalls) {
        assert_eq!(s.warps().len(), self.warps.len(), "one slot per warp");
        self.stalls.0 = Some(Box::new(s));
    }

    /// Detaches the stall probe.
    pub fn take_stalls(&mut self) -> Option<Stalls> {
        self.stalls.0.take().map(|s| *s)
    }

    /// Kernel cycle `c` with the core's picks `o`: every warp's predicates, the writeback and
    /// the probe's step.
    pub(super) fn stall_cycle(&mut self, c: u64, o: &Outputs) {
        let Some(mut s) = self.stalls.0.take() else {
            return;
        };
        debug_assert!(matches!(self.phase, Phase::Run(_)));
        let ns = self.p.shape.nsched as usize;
        let mut nacked = 0u64;
        for q in 0..ns {
            if o.iss_valid[q] && !o.issued[q] {
                nacked |= 1 << q;
            }
        }
        for w in 0..self.warps.len() {
            let (p, last) = self.preds(w, c);
            let nack = nacked >> (w % ns) & 1 == 1;
            let ready = p.active && p.inst_avail && !p.sync_wait && !p.haz_load && !p.haz_comp;
            s.warps_mut()[w] = WarpPreds {
                sync_wait: p.sync_wait || nack && ready,
                ..p
            };
            if let Some(from) = last {
                s.writeback(Writeback {
                    warp: w,
                    src: from as u8,
                    is_final: true,
                });
            }
        }
        if s.wants_pcs() {
            for (w, pc) in s.pcs_mut().iter_mut().enumerate() {
                let wp = &self.warps[w];
                *pc = u64::from(wp.index) << 32 | u64::from(wp.pc);
            }
        }
        let n = o.issued.iter().filter(|&&i| i).count() as u64;
        s.step(n);
        self.stalls.0 = Some(s);
    }

    /// Warp `w`'s predicates in kernel cycle `c` (without the NACK), and the source of its
    /// final writeback if its last pending load register is ready at the next edge.
    fn preds(&self, w: usize, c: u64) -> (WarpPreds, Option<u64>) {
        let wp = &self.warps[w];
        if !wp.valid || wp.live == 0 || c < wp.start {
            return (WarpPreds::default(), None);
        }
        let Some(ins) = self.k.stream(wp.index as usize).get(wp.pc as usize) else {
            return (
                WarpPreds {
                    active: true,
                    ..WarpPreds::default()
                },
                None,
            );
        };
        let (mut load_last, mut load_src, mut comp) = (0u64, None, false);
        let srcs = ins.src_mask();
        for r in (0..32).filter(|r| srcs >> r & 1 == 1) {
            let at = wp.ready_at[r as usize];
            if at <= c {
                continue;
            }
            let bit = 1u32 << r;
            let from = if wp.shared_dst & bit != 0 {
                Some(src::LOCAL_SPM)
            } else if wp.global_dst & bit != 0 {
                Some(src::MAIN_MEM)
            } else {
                None
            };
            match from {
                Some(f) if at >= load_last => (load_last, load_src) = (at, Some(f)),
                Some(_) => {}
                None => comp = true,
            }
        }
        let p = WarpPreds {
            active: true,
            inst_avail: true,
            sync_wait: wp.at_bar,
            haz_load: load_src.is_some(),
            haz_comp: comp,
            is_mem: ins.op.is_shared() || ins.op.is_global(),
            ..WarpPreds::default()
        };
        let last = (load_last == c + 1).then_some(load_src).flatten();
        (p, last)
    }
}
