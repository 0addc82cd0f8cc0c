//! The issue stage (docs/stall-inspector.md §10.3; spec §3.1–§3.2): every warp's predicates
//! from the state it reads (after the LSU's cycle), then one instruction from the first ready
//! warp after the last one that issued (loose round robin). The predicates are the §4.2 ones,
//! so the view written here is exactly what issued. Issue also performs the kernel language's
//! values (docs §10.4): compute results, plain loads and stores, branch decisions; a taken
//! branch leaves the warp without an instruction for `redirect` cycles (CONTROL, spec D5).

use super::mem::Space;
use super::net::Net;
use super::params::{LANES, REGS};
use super::prog::{Cond, Op, Reg, Unit, IMM, SR_NSM, SR_NWARP, SR_SM, SR_WARP};
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
        if t < warp.fetch_at {
            // The fetch redirect of a taken branch: no instruction (CONTROL).
            warp.head_haz = 0;
            return WarpView {
                active: true,
                sync_wait: sync,
                ..WarpView::default()
            };
        }
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
            fu_block: op.unit().is_some_and(|u| self.pipe_free[u as usize] > t),
            ms_reason,
        }
    }

    /// Cycle `t`'s issue stage: the views, then at most one instruction.
    pub fn issue(&mut self, net: &mut Net, t: u64) {
        let nw = self.warps.len();
        for w in 0..nw {
            self.view.warps[w] = self.warp_view(w, t);
        }
        self.keep_planes();
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

    /// The value warp `w` reads from operand `r` (`imm` for [`IMM`], 0 for none).
    pub(super) fn value(&self, w: usize, r: Reg, imm: u64) -> u64 {
        match r {
            _ if (r as usize) < REGS => self.warps[w].regs[r as usize],
            SR_SM => u64::from(self.id),
            SR_WARP => w as u64,
            SR_NSM => self.nsm,
            SR_NWARP => self.nwarp,
            IMM => imm,
            _ => 0,
        }
    }

    /// Warp `w` issues its head.
    fn exec(&mut self, w: usize, net: &mut Net, t: u64) {
        let pc = self.warps[w].pc;
        let mut op = self.progs[w][pc];
        self.warps[w].pc += 1;
        if let Some(at) = op.pat_mut() {
            if at.reg != super::prog::NONE {
                at.base = at.base.wrapping_add(self.value(w, at.reg, 0));
                at.reg = super::prog::NONE;
            }
        }
        if let Op::Dma { global, reg, .. } | Op::StashMap { global, reg, .. } = &mut op {
            if *reg != super::prog::NONE {
                *global = global.wrapping_add(self.value(w, *reg, 0));
                *reg = super::prog::NONE;
            }
        }
        match op {
            Op::Comp { dst, lat, ii, .. } => {
                self.warps[w].comp_ready[dst as usize] = t + u64::from(lat);
                self.pipe_free[Unit::Alu as usize] = t + u64::from(ii);
            }
            Op::Calc { f, dst, a, b, imm } => {
                let v = f.eval(self.value(w, a, imm), self.value(w, b, imm));
                let (lat, ii) = net.p.unit_timing(f.unit());
                let warp = &mut self.warps[w];
                warp.regs[dst as usize] = v;
                warp.comp_ready[dst as usize] = t + lat;
                self.pipe_free[f.unit() as usize] = t + ii;
            }
            Op::Bra { to } => self.jump(w, pc, to, net, t),
            Op::Cbra { to, cond, id } => {
                let first = match cond {
                    Cond::Nz(r) => self.value(w, r, 0) != 0,
                    Cond::Z(r) => self.value(w, r, 0) == 0,
                    Cond::Rule(b) => {
                        let gid = u64::from(self.id) * self.warps.len() as u64 + w as u64;
                        let v = &mut self.warps[w].visits[id as usize];
                        *v += 1;
                        b.first(self.seed, gid, u32::from(id), *v - 1)
                    }
                };
                self.jump(w, pc, to[usize::from(!first)], net, t);
            }
            Op::Exit => self.warps[w].pc = self.progs[w].len(),
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
            _ => {
                self.values_at_issue(w, &op, net);
                self.enter_lsu(w, op);
            }
        }
    }

    /// Control moves from `pc` to `to`; anywhere but the next op is a taken branch whose fetch
    /// redirect leaves the warp without an instruction for `redirect` cycles.
    fn jump(&mut self, w: usize, pc: usize, to: u32, net: &Net, t: u64) {
        let warp = &mut self.warps[w];
        warp.pc = to as usize;
        if to as usize != pc + 1 {
            warp.fetch_at = t + 1 + u64::from(net.p.redirect);
        }
    }

    /// The values of a plain load or store, scratchpad and stash access or DMA transfer, at
    /// issue (GPGPU-Sim's functional model): a load's register gets lane 0's word, a store
    /// writes its register to every lane's word.
    fn values_at_issue(&mut self, w: usize, op: &Op, net: &mut Net) {
        let sp = Space::Spm(self.id);
        let stash = |spm: &super::spm::Spm, a: u64| match spm.global_addr(a) {
            Some(g) => (Space::Global, g),
            None => (sp, a),
        };
        let (dst, space, addr) = match *op {
            Op::Ld { dst, at } => (dst, Space::Global, at.addr(0)),
            Op::SpLd { dst, at } => (dst, sp, at.addr(0)),
            Op::StashLd { dst, at } => {
                let (s, a) = stash(&self.spm, at.addr(0));
                (dst, s, a)
            }
            Op::St { src, at } | Op::SpSt { src, at } | Op::StashSt { src, at } => {
                let v = self.value(w, src, 0);
                for l in 0..at.lanes as usize {
                    let (s, a) = match op {
                        Op::St { .. } => (Space::Global, at.addr(l)),
                        Op::SpSt { .. } => (sp, at.addr(l)),
                        _ => stash(&self.spm, at.addr(l)),
                    };
                    net.mem.write(s, a, v);
                }
                return;
            }
            Op::Dma {
                spm,
                global,
                bytes,
                to_spm,
                ..
            } => {
                let (g, s) = ((Space::Global, global), (sp, spm));
                let (from, to) = if to_spm { (g, s) } else { (s, g) };
                net.mem.copy(from, to, bytes);
                return;
            }
            _ => return,
        };
        if (dst as usize) < REGS {
            self.warps[w].regs[dst as usize] = net.mem.read(space, addr);
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
