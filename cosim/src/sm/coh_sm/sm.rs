//! One SM of the coherent memory system (docs/stall-inspector.md §10.3): its warps and their
//! scoreboards, the LSU input register, the L1 (the seed-004 pipeline's [`L1d`]: tags, MSHRs
//! with merging, miss queue), the store buffer, the scratchpad / stash and DMA engine, and
//! what it sends to the L2 each cycle. The issue stage is in `issue.rs`, the LSU in `lsu.rs`.

use super::l2::Kind;
use super::net::{Ev, Net};
use super::params::{CohParams, Protocol, LANES, REGS};
use super::prog::{Op, UNITS};
use super::sb::StoreBuffer;
use super::spm::Spm;
use super::view::{SmView, WarpView, Wb};
use crate::sm::mem_sm::l1d::{Geometry, L1d};
use crate::sm::mem_sm::params::SetIndex;
use std::collections::VecDeque;
use std::sync::Arc;

/// One warp slot.
#[derive(Clone, Debug)]
pub(super) struct Warp {
    pub live: bool,
    pub pc: usize,
    /// Registers a pending load will write.
    pub pend_load: u64,
    /// Cycle each register's compute result is ready.
    pub comp_ready: [u64; REGS],
    /// Atomic parts not yet performed.
    pub atom: u32,
    /// Waiting for the SM's release flush.
    pub rel_wait: bool,
    /// Waiting at a barrier.
    pub bar: bool,
    /// The load registers the head waited on this cycle (for a writeback's `final`).
    pub head_haz: u64,
    /// Register values (docs §10.4).
    pub regs: [u64; REGS],
    /// First cycle the next instruction is fetched after a taken branch (CONTROL before it).
    pub fetch_at: u64,
    /// Evaluations of each `Cbra` id (the `trips` / `p` rules).
    pub visits: Vec<u32>,
}

/// A memory instruction in the LSU input register.
#[derive(Clone, Copy, Debug)]
pub(super) struct LsuInst {
    pub warp: u16,
    pub op: Op,
    /// Lines (global accesses) or stash chunks, distinct, in lane order.
    pub lines: [u64; LANES],
    pub n: u8,
    /// Lines already through.
    pub next: u8,
    /// Bank-conflict degree (scratchpad / stash; 0 until its first cycle) and cycles spent.
    pub degree: u32,
    pub k: u32,
}

/// Per-SM statistics.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SmStats {
    pub issued: u64,
    /// Load parts served, by §2.5 source.
    pub served: [u64; 8],
    /// Cycles the LSU register was stuck, by §2.6 reason.
    pub lsu_stuck: [u64; 8],
    /// Cycle the SM finished (its warps exited, its store buffer drained).
    pub done_at: u64,
}

/// One SM.
pub(super) struct Sm {
    pub id: u8,
    pub warps: Vec<Warp>,
    /// Each warp slot's program (warps running one kernel share it).
    pub progs: Vec<Arc<[Op]>>,
    pub l1: L1d,
    pub sb: StoreBuffer,
    pub spm: Spm,
    pub lsu: Option<LsuInst>,
    /// The LSU register's stuck reason this cycle (NONE when empty or moved on).
    pub lsu_reason: u8,
    /// Load parts outstanding per (warp, register): id = warp · REGS + register.
    pub parts: Vec<u8>,
    /// Per compute unit, the first cycle it takes an instruction.
    pub pipe_free: [u64; UNITS],
    /// Seed of the `p` branches; warps launched (`%nwarp`).
    pub seed: u64,
    pub nwarp: u64,
    /// SMs of the system (`%nsm`).
    pub nsm: u64,
    pub last: usize,
    /// A release flush runs (stores wait: PENDING_RELEASE).
    pub rel_active: bool,
    /// Every warp exited: the kernel-end flush runs.
    pub ending: bool,
    pub done: bool,
    pub view: SmView,
    pub stats: SmStats,
    /// The stall planes kept beside the issue stage, with a probe attached (`kept.rs`).
    pub kept: Option<Box<super::kept::Kept>>,
    buf: VecDeque<u32>,
}

impl Sm {
    pub fn new(p: &CohParams, id: u8, progs: Vec<Arc<[Op]>>) -> Sm {
        let nw = p.warps as usize;
        let live = progs.len();
        let branches = |w: usize| {
            progs.get(w).map_or(0, |ops: &Arc<[Op]>| {
                ops.iter()
                    .filter_map(|o| match o {
                        Op::Cbra {
                            id,
                            cond: super::prog::Cond::Rule(_),
                            ..
                        } => Some(*id as usize + 1),
                        _ => None,
                    })
                    .max()
                    .unwrap_or(0)
            })
        };
        let warp = |w: usize| Warp {
            live: w < live,
            pc: 0,
            pend_load: 0,
            comp_ready: [0; REGS],
            atom: 0,
            rel_wait: false,
            bar: false,
            head_haz: 0,
            regs: [0; REGS],
            fetch_at: 0,
            visits: vec![0; branches(w)],
        };
        let warps = (0..nw).map(warp).collect();
        let mut progs = progs;
        progs.resize(nw, Arc::from(&[][..]));
        Sm {
            id,
            warps,
            progs,
            l1: L1d::with_geometry(Geometry {
                sets: p.l1_sets,
                ways: p.l1_ways,
                index: SetIndex::Linear,
                mshrs: p.mshrs,
                max_merge: p.max_merge,
                mq_depth: p.mq_depth,
                mq_reserve: 0,
            }),
            sb: StoreBuffer::new(p.sb_entries as usize),
            spm: Spm::new(p),
            lsu: None,
            lsu_reason: 0,
            parts: vec![0; nw * REGS],
            pipe_free: [0; UNITS],
            seed: 0,
            nwarp: live as u64,
            nsm: u64::from(p.sms),
            last: nw - 1,
            rel_active: false,
            ending: false,
            done: false,
            view: SmView {
                warps: vec![WarpView::default(); nw],
                wbs: Vec::with_capacity(nw * REGS),
                issued: 0,
            },
            stats: SmStats::default(),
            kept: None,
            buf: VecDeque::with_capacity(p.max_merge as usize),
        }
    }

    /// What leaves the SM this cycle: one L1 miss, one store-buffer entry, one DMA request.
    pub fn send(&mut self, net: &mut Net, t: u64) {
        let sm = self.id;
        if let Some(r) = self.l1.drain() {
            let s = net.l2(t, sm, r.line, Kind::Read);
            net.at(
                s.due,
                Ev::L1Fill {
                    sm,
                    e: r.mshr,
                    src: s.src,
                },
            );
        }
        if let Some((idx, line)) = self.sb.send(self.rel_active || self.ending) {
            let kind = match net.p.protocol {
                Protocol::Gpu => Kind::Write,
                Protocol::Denovo => Kind::Own,
            };
            let s = net.l2(t, sm, line, kind);
            net.at(s.due, Ev::Ack { sm, idx });
        }
        if self.l1.mshrs_free() == 0 {
            self.spm.dma_wait_mshr();
        } else {
            if let Some((region, line, to_spm)) = self.spm.next_dma() {
                let e = self.l1.reserve_mshr().expect("a free MSHR entry");
                let kind = if to_spm { Kind::Read } else { Kind::Write };
                let s = net.l2(t, sm, line, kind);
                net.at(
                    s.due,
                    Ev::Dma {
                        sm,
                        e,
                        region: region as u8,
                    },
                );
            }
        }
    }

    /// A response due this cycle (delivered at the end of the cycle, after issue).
    pub fn deliver(&mut self, ev: Ev, net: &mut Net) {
        match ev {
            Ev::Part { id, src, .. } => self.part_done(id, src),
            Ev::L1Fill { e, src, .. } => {
                self.l1.fill(e, &mut self.buf);
                self.parts_from_buf(src);
            }
            Ev::StashFill { e, src, .. } => {
                self.spm.fill(e, &mut self.buf);
                self.l1.release_mshr(e);
                self.parts_from_buf(src);
            }
            Ev::Dma { e, region, .. } => {
                self.l1.release_mshr(e);
                self.spm.dma_done(region as usize);
            }
            Ev::Ack { idx, .. } => {
                let line = self.sb.ack(idx);
                if net.p.protocol == Protocol::Denovo {
                    net.own(self.id, line);
                }
            }
            Ev::Atom {
                warp,
                src,
                dst,
                val,
                ..
            } => {
                let w = &mut self.warps[warp as usize];
                if (dst as usize) < REGS {
                    w.regs[dst as usize] = val;
                }
                w.atom -= 1;
                if w.atom == 0 {
                    // The warp waited as SYNC (spec D6): no load hazard to clear.
                    self.view.wbs.push(Wb {
                        warp: warp as usize,
                        src,
                        is_final: false,
                    });
                }
            }
        }
    }

    /// The waiting accesses of a fill, in `buf`: the first served by `src`, the merged ones
    /// by the same response (L1_COAL).
    fn parts_from_buf(&mut self, src: u8) {
        use crate::sm::mem_sm::l1d::MERGED;
        let mut first = true;
        while let Some(id) = self.buf.pop_front() {
            let s = if first && id & MERGED == 0 {
                src
            } else {
                super::view::src::L1_COAL
            };
            first = false;
            self.part_done(id & !MERGED, s);
        }
    }

    /// One part of load `id` served by `src`; the last one releases the register.
    pub fn part_done(&mut self, id: u32, src: u8) {
        self.stats.served[src as usize] += 1;
        let id = id as usize;
        self.parts[id] -= 1;
        if self.parts[id] > 0 {
            return;
        }
        let (w, bit) = (id / REGS, 1u64 << (id % REGS));
        let warp = &mut self.warps[w];
        warp.pend_load &= !bit;
        let is_final = warp.head_haz & bit != 0 && warp.head_haz & warp.pend_load == 0;
        self.view.wbs.push(Wb {
            warp: w,
            src,
            is_final,
        });
    }

    /// End of the cycle: releases, barriers, exits, the kernel-end flush, done.
    pub fn end_cycle(&mut self, net: &Net, t: u64) {
        let lsu_store = self.lsu.is_some_and(|i| i.op.is_store());
        if self.rel_active && self.sb.is_empty() && !lsu_store {
            self.rel_active = false;
            self.warps.iter_mut().for_each(|w| w.rel_wait = false);
        }
        let live = self.warps.iter().filter(|w| w.live).count();
        let at_bar = self.warps.iter().filter(|w| w.live && w.bar).count();
        if at_bar > 0 && at_bar == live {
            self.warps.iter_mut().for_each(|w| w.bar = false);
        }
        for (w, prog) in self.warps.iter_mut().zip(&self.progs) {
            if w.live
                && w.pc == prog.len()
                && w.pend_load == 0
                && w.atom == 0
                && !w.rel_wait
                && !w.bar
            {
                w.live = false;
            }
        }
        if !self.ending && self.lsu.is_none() && self.warps.iter().all(|w| !w.live) {
            self.ending = true;
            self.sb.queue_all();
        }
        if self.ending
            && !self.done
            && self.sb.is_empty()
            && self.spm.dma_idle()
            && net.inflight[self.id as usize] == 0
        {
            self.done = true;
            self.stats.done_at = t + 1;
        }
    }
}
