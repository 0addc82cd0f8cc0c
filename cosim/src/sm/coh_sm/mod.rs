//! The coherent multi-SM memory system of seed 003 (Alsop et al., GSI; docs/stall-inspector.md
//! §10; spec §2.5–§2.6, §3, §6): N SMs, each with warps running an operation list with
//! control flow and values (`prog.rs`; kernel files in `text.rs`, docs §10.4), an LSU input
//! register, an L1 with MSHRs (the seed-004 [`L1d`]), a write-combining store buffer, a
//! scratchpad / stash and a DMA engine, sharing a 16-bank L2 on a 4×4 mesh under GPU coherence
//! or DeNovo. Every response carries the §2.5 source of the
//! level that supplied it; every warp's §4.2 predicates and the cycle's writebacks are read
//! through [`SmView`] (`probe.rs` turns them into the stall inspector's inputs).
//!
//! A cycle: each SM's LSU register tries to get through (`lsu.rs`); each SM sends one L1 miss,
//! one store-buffer entry and one DMA request (`sm.rs`); each SM issues (`issue.rs`); the
//! responses due are delivered; releases, barriers, exits and kernel-end flushes settle. SMs in
//! index order, responses in (due, send) order: deterministic. Nothing allocates per cycle once
//! the response heap has reached its working size.
//!
//! [`L1d`]: crate::sm::mem_sm::l1d::L1d

mod issue;
pub mod kept;
mod l2;
mod lsu;
mod mem;
mod net;
mod owned;
pub mod params;
pub mod probe;
pub mod prog;
mod sb;
mod sm;
mod spm;
pub mod text;
pub mod view;

use net::Net;
use params::CohParams;
use prog::Op;
use sm::Sm;
pub use sm::SmStats;
use std::sync::Arc;
pub use view::{SmView, WarpView, Wb};

/// The system: its SMs, the shared L2 and the responses in flight.
pub struct CohSystem {
    net: Net,
    sms: Vec<Sm>,
    t: u64,
}

impl CohSystem {
    /// `progs[s][w]` is warp `w` of SM `s` (SMs and warps without a program stay idle).
    pub fn new(p: &CohParams, progs: Vec<Vec<Vec<Op>>>) -> Result<CohSystem, String> {
        let shared = progs
            .into_iter()
            .map(|sm| sm.into_iter().map(Arc::from).collect())
            .collect();
        Self::with_shared(p, shared)
    }

    /// As [`CohSystem::new`], with programs warps may share (one copy of a kernel's ops).
    fn with_shared(p: &CohParams, progs: Vec<Vec<Arc<[Op]>>>) -> Result<CohSystem, String> {
        use smrtl_hdl::BlockParams as _;
        p.check().map_err(|e| e.to_string())?;
        if progs.len() > p.sms as usize {
            return Err(format!("{} SM programs for {} SMs", progs.len(), p.sms));
        }
        for (s, sm) in progs.iter().enumerate() {
            if sm.len() > p.warps as usize {
                return Err(format!("SM {s}: {} warps for {} slots", sm.len(), p.warps));
            }
            for (w, ops) in sm.iter().enumerate() {
                prog::check(ops).map_err(|e| format!("SM {s} warp {w}: {e}"))?;
            }
        }
        let mut progs = progs;
        progs.resize(p.sms as usize, vec![]);
        Ok(CohSystem {
            net: Net::new(p),
            sms: progs
                .into_iter()
                .enumerate()
                .map(|(s, w)| Sm::new(p, s as u8, w))
                .collect(),
            t: 0,
        })
    }

    /// One cycle; `false` once every SM is done (nothing is stepped then).
    pub fn step(&mut self) -> bool {
        if self.finished() {
            return false;
        }
        let t = self.t;
        for sm in &mut self.sms {
            sm.view.wbs.clear();
            sm.lsu_step(&mut self.net, t);
        }
        for sm in &mut self.sms {
            sm.send(&mut self.net, t);
        }
        for sm in &mut self.sms {
            sm.issue(&mut self.net, t);
        }
        while let Some(ev) = self.net.pop(t) {
            self.sms[ev.sm()].deliver(ev, &mut self.net);
        }
        for sm in &mut self.sms {
            sm.end_cycle(&self.net, t);
        }
        self.t += 1;
        true
    }

    /// Runs to the end (or `max` cycles: an error), calling `each` after every cycle.
    pub fn run_with(&mut self, max: u64, mut each: impl FnMut(&CohSystem)) -> Result<u64, String> {
        while self.step() {
            each(self);
            if self.net.mem.overflow {
                return Err(format!(
                    "more than {} distinct non-zero words written (mem::MAX_WORDS)",
                    mem::MAX_WORDS
                ));
            }
            if self.t >= max && !self.finished() {
                return Err(format!("not finished after {max} cycles"));
            }
        }
        Ok(self.t)
    }

    /// Runs to the end; the cycles taken.
    pub fn run(&mut self, max: u64) -> Result<u64, String> {
        self.run_with(max, |_| {})
    }

    /// Every SM done.
    pub fn finished(&self) -> bool {
        self.sms.iter().all(|s| s.done)
    }

    /// Cycles stepped.
    pub fn cycle(&self) -> u64 {
        self.t
    }

    /// SM `s`'s view of the last cycle stepped.
    pub fn view(&self, s: usize) -> &SmView {
        &self.sms[s].view
    }

    /// From the next cycle on, every SM keeps its stall planes beside its issue stage (`kept.rs`;
    /// docs/stall-inspector.md §10.8): a probe reads [`CohSystem::kept`] instead of the views.
    pub fn keep_planes(&mut self) {
        for sm in &mut self.sms {
            sm.kept = Some(Box::new(kept::Kept::new(sm.warps.len())));
        }
    }

    /// SM `s`'s planes of the last cycle stepped, if kept ([`CohSystem::keep_planes`]).
    #[inline]
    pub fn kept(&self, s: usize) -> Option<&kept::Kept> {
        self.sms[s].kept.as_deref()
    }

    /// SM `s`'s statistics.
    pub fn stats(&self, s: usize) -> &SmStats {
        &self.sms[s].stats
    }

    /// SMs.
    pub fn sms(&self) -> usize {
        self.sms.len()
    }

    /// The params.
    pub fn params(&self) -> &CohParams {
        &self.net.p
    }

    /// Lines SM `s` owns (DeNovo) and its store-buffer entries in use.
    pub fn occupancy(&self, s: usize) -> (usize, usize) {
        (self.net.owned[s].len(), self.sms[s].sb.used())
    }

    /// The value of the global word at byte address `addr` (docs §10.4).
    pub fn word(&self, addr: u64) -> u64 {
        self.net.mem.read(mem::Space::Global, addr)
    }

    /// Register `r` of warp `w` of SM `s`.
    pub fn reg(&self, s: usize, w: usize, r: usize) -> u64 {
        self.sms[s].warps[w].regs[r]
    }

    /// The DeNovo owner of global line `line` at the L2.
    pub fn owner(&self, line: u64) -> Option<u8> {
        self.net.l2.owner(line)
    }
}
