//! The issue stage (docs/stall-inspector.md §10.3; spec §3.1–§3.2): every warp's predicates
//! from the state it reads (after the LSU's cycle), then one instruction from the first ready
//! warp after the last one that issued (loose round robin). The predicates are the §4.2 ones,
//! so the view written here is exactly what issued.

use super::net::Net;
use super::params::{LANES, REGS};
use super::prog::Op;
use super::sm::{LsuInst, Sm};
use super::view::{reason, WarpView};

impl Sm {
    /// Warp `w`'s predicates in cycle `t`; records the loads its head waits on.
    fn warp_view(&mut self, w: usize, t: u64) -> WarpView {
        let lsu_busy = self.lsu.is_some();
        let warp = &mut self.warps[w];
        if !warp.live {
            warp.head_haz = 0;
            return WarpView::default();
        }
        let sync = warp.atom > 0 || warp.rel_wait || warp.bar;
        let Some(op) = self.progs[w].get(warp.pc) else {
            warp.head_haz = warp.pend_load;
            return WarpView {
                active: true,
                inst_avail: true,
                sync_wait: sync,
                haz_load: warp.pend_load != 0,
                ..WarpView::default()
            };
        };
        let mask = op.reg_mask();
        warp.head_haz = mask & warp.pend_load;
        let is_mem = op.is_mem();
        let (ms_block, ms_reason) = if !is_mem {
            (false, reason::NONE)
        } else if lsu_busy {
            (true, self.lsu_reason)
        } else if op.is_store() && self.rel_active {
            (true, reason::PENDING_RELEASE)
        } else {
            (false, reason::NONE)
        };
        let haz_comp = op
            .regs()
            .iter()
            .any(|&r| (r as usize) < REGS && warp.comp_ready[r as usize] > t);
        WarpView {
            active: true,
            inst_avail: true,
            sync_wait: sync || (*op == Op::Acquire && warp.pend_load != 0),
            haz_load: warp.head_haz != 0,
            haz_comp,
            is_mem,
            ms_block,
            fu_block: matches!(op, Op::Comp { .. }) && self.pipe_free > t,
            ms_reason,
        }
    }

    /// Cycle `t`'s issue stage: the views, then at most one instruction.
    pub fn issue(&mut self, net: &mut Net, t: u64) {
        let nw = self.warps.len();
        for w in 0..nw {
            self.view.warps[w] = self.warp_view(w, t);
        }
        self.view.issued = 0;
        let ready = |v: &WarpView| {
            v.active
                && v.inst_avail
                && !v.sync_wait
                && !v.haz_load
                && !v.haz_comp
                && (!v.is_mem || !v.ms_block)
                && !v.fu_block
        };
        let pick = (1..=nw)
            .map(|k| (self.last + k) % nw)
            .find(|&w| ready(&self.view.warps[w]) && self.warps[w].pc < self.progs[w].len());
        if let Some(w) = pick {
            self.last = w;
            self.view.issued = 1;
            self.stats.issued += 1;
            self.exec(w, net, t);
        }
    }

    /// Warp `w` issues its head.
    fn exec(&mut self, w: usize, net: &mut Net, t: u64) {
        let op = self.progs[w][self.warps[w].pc];
        self.warps[w].pc += 1;
        match op {
            Op::Comp { dst, lat, ii, .. } => {
                self.warps[w].comp_ready[dst as usize] = t + u64::from(lat);
                self.pipe_free = t + u64::from(ii);
            }
            Op::Acquire => {
                // Owned data (DeNovo) lives in the owned lines, not the L1 tags: both
                // protocols drop every valid L1 line; stash chunks survive only if owned.
                self.l1.invalidate_valid(|_| false);
                let owned = &net.owned[self.id as usize];
                self.spm.invalidate(|line| owned.contains(line));
            }
            Op::Release => {
                self.warps[w].rel_wait = true;
                self.rel_active = true;
                self.sb.queue_all();
            }
            Op::Barrier => self.warps[w].bar = true,
            _ => self.enter_lsu(w, op),
        }
    }

    /// A memory instruction enters the LSU register: its lines (or stash chunks), and the
    /// pending register of a load.
    fn enter_lsu(&mut self, w: usize, op: Op) {
        let mut inst = LsuInst {
            warp: w as u16,
            op,
            lines: [0; LANES],
            n: 0,
            next: 0,
            degree: 0,
            k: 0,
        };
        match op {
            Op::Ld { at, .. } | Op::St { at, .. } | Op::Atom { at, .. } => {
                inst.n = at.lines(&mut inst.lines) as u8;
            }
            Op::StashLd { at, .. } | Op::StashSt { at, .. } => {
                let mut n = 0;
                for l in 0..at.lanes as usize {
                    let c = self.spm.chunk_of(at.addr(l)) as u64;
                    if !inst.lines[..n].contains(&c) {
                        inst.lines[n] = c;
                        n += 1;
                    }
                }
                inst.n = n as u8;
            }
            _ => inst.n = 1,
        }
        match op {
            Op::Ld { dst, .. } | Op::SpLd { dst, .. } | Op::StashLd { dst, .. } => {
                let parts = if matches!(op, Op::SpLd { .. }) {
                    1
                } else {
                    inst.n
                };
                self.parts[w * REGS + dst as usize] = parts;
                self.warps[w].pend_load |= 1u64 << dst;
            }
            Op::Atom { .. } => self.warps[w].atom = u32::from(inst.n),
            _ => {}
        }
        self.lsu = Some(inst);
    }
}
