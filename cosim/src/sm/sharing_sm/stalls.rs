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
use crate::blocks::stall_inspector::{src, Params, Planes, WarpPreds, Writeback};
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
        assert_eq!(s.nw(), self.warps.len(), "one slot per warp");
        self.preds = PredCache {
            touched: u128::MAX,
            base: Planes::default(),
            until: vec![0; self.warps.len()],
        };
        self.stalls.0 = Some(Box::new(s));
    }

    /// Detaches the stall probe.
    pub fn take_stalls(&mut self) -> Option<Stalls> {
        self.stalls.0.take().map(|s| *s)
    }

    /// Kernel cycle `c` with the core's picks `o`: every warp's predicates (those of warps
    /// changed or due recomputed, module doc), the writebacks and the probe's step.
    pub(super) fn stall_cycle(&mut self, c: u64, o: &Outputs) {
        let Some(mut s) = self.stalls.0.take() else {
            return;
        };
        debug_assert!(matches!(self.phase, Phase::Run(_)));
        let mut due = std::mem::take(&mut self.preds.touched);
        for (w, &u) in self.preds.until.iter().enumerate() {
            due |= u128::from(u <= c) << w;
        }
        due &= u128::MAX >> (128 - self.warps.len());
        while due != 0 {
            let w = due.trailing_zeros() as usize;
            due &= due - 1;
            let (p, last, until) = self.preds(w, c);
            self.preds.base.set(w, &p);
            self.preds.until[w] = until;
            // `last` holds only in the cycle computed: `until` brings it back then.
            if let Some(from) = last {
                s.writeback(Writeback {
                    warp: w,
                    src: from as u8,
                    is_final: true,
                });
            }
        }
        let base = self.preds.base;
        if s.audits() {
            let derived = self.derive(c);
            s.audit(&base, &derived);
        }
        // A NACKed pick costs its scheduler the cycle (module doc).
        let ns = self.p.shape.nsched as usize;
        let mut nacked_warps = 0u128;
        for q in (0..ns).filter(|&q| o.iss_valid[q] && !o.issued[q]) {
            nacked_warps |= self.preds.sched_mask(q, ns, self.warps.len());
        }
        let ready =
            base.active & base.inst_avail & !base.sync_wait & !base.haz_load & !base.haz_comp;
        *s.planes_mut() = Planes {
            sync_wait: base.sync_wait | nacked_warps & ready,
            ..base
        };
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

    /// Every warp's predicates in kernel cycle `c` (without the NACK), recomputed (the
    /// audit's reference).
    fn derive(&self, c: u64) -> Planes {
        let mut pl = Planes::default();
        for w in 0..self.warps.len() {
            pl.set(w, &self.preds(w, c).0);
        }
        pl
    }

    /// Warp `w`'s predicates in kernel cycle `c` (without the NACK), the source of its final
    /// writeback if its last pending load register is ready at the next edge, and the first
    /// cycle after `c` at which either can change without an event of the warp.
    fn preds(&self, w: usize, c: u64) -> (WarpPreds, Option<u64>, u64) {
        let wp = &self.warps[w];
        if !wp.valid || wp.live == 0 {
            return (WarpPreds::default(), None, u64::MAX);
        }
        if c < wp.start {
            return (WarpPreds::default(), None, wp.start);
        }
        let Some(ins) = self.k.stream(wp.index as usize).get(wp.pc as usize) else {
            let p = WarpPreds {
                active: true,
                ..WarpPreds::default()
            };
            return (p, None, u64::MAX);
        };
        let (mut load_last, mut load_src, mut comp) = (0u64, None, false);
        let mut until = u64::MAX;
        let srcs = ins.src_mask();
        for r in (0..32).filter(|r| srcs >> r & 1 == 1) {
            let at = wp.ready_at[r as usize];
            if at <= c {
                continue;
            }
            until = until.min(at);
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
        // The writeback cycle, one before the last load register is ready.
        if load_last > c + 1 {
            until = until.min(load_last - 1);
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
        (p, last, until)
    }
}

/// The predicates of the warps as last computed (docs/stall-inspector.md §7.5): a warp's are
/// recomputed only after an event of it (`touch`) or when time alone changes them (`until`),
/// so a cycle does not rescan the registers of every warp.
#[derive(Clone, Debug, Default)]
pub(super) struct PredCache {
    /// Warps changed since the last probe step.
    touched: u128,
    base: Planes,
    /// Recompute warp w's in cycle `until[w]`.
    until: Vec<u64>,
}

impl PredCache {
    /// Warp `w` changed (launch, issue, barrier, retirement).
    pub(super) fn touch(&mut self, w: usize) {
        self.touched |= 1 << w;
    }

    /// The warps of scheduler `q` of `ns` among `nw` (warp w goes to scheduler w mod ns).
    fn sched_mask(&self, q: usize, ns: usize, nw: usize) -> u128 {
        (q..nw).step_by(ns).fold(0, |m, w| m | 1 << w)
    }
}
