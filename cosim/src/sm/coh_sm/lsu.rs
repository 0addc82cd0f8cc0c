//! The LSU input register (docs/stall-inspector.md §10.3; spec §2.6 LSU convention): each cycle
//! its occupant tries to get through; it leaves when every line is through, else it stays with
//! the §2.6 reason of what stopped it, which every memory head behind it sees. Stuck accesses
//! that reached their resource keep their pending register (dependents are MEM_DATA).

use super::l2::Kind;
use super::net::{Ev, Net};
use super::params::{Protocol, REGS};
use super::prog::{AtomF, Op, Pat};
use super::sm::{LsuInst, Sm};
use super::spm::Chunk;
use super::view::{reason, src};
use crate::sm::mem_sm::l1d::Outcome;

impl Sm {
    /// Cycle `t` of the LSU register.
    pub fn lsu_step(&mut self, net: &mut Net, t: u64) {
        self.lsu_reason = reason::NONE;
        let Some(mut inst) = self.lsu.take() else {
            return;
        };
        let r = match inst.op {
            Op::Ld { dst, .. } => self.load(&mut inst, net, t, dst),
            Op::St { .. } => self.store(&mut inst, net, |_, l| Some(l)),
            Op::Atom {
                f,
                dst,
                src,
                cmp,
                at,
            } => {
                let sm = self.id;
                let w = inst.warp as usize;
                let (v, c) = (self.value(w, src, 0), self.value(w, cmp, 0));
                let val = atomic(&mut net.mem, f, &at, v, c);
                for &line in &inst.lines[..inst.n as usize] {
                    let s = net.l2(t, sm, line, Kind::Atomic);
                    let warp = inst.warp;
                    net.at(
                        s.due,
                        Ev::Atom {
                            sm,
                            warp,
                            src: s.src,
                            dst,
                            val,
                        },
                    );
                }
                reason::NONE
            }
            Op::SpLd { dst, at } | Op::SpSt { src: dst, at } => {
                if self.spm.dma_pending(&at) {
                    // "Blocked due to a full MSHR or a pending DMA" [P §VII-C]: a transfer
                    // the MSHR file throttles holds the access for want of MSHRs, which more
                    // entries shorten [P §VII-D] (docs/stall-inspector.md §10.3).
                    if self.spm.dma_mshr_bound(&at) {
                        reason::MSHR_FULL
                    } else {
                        reason::PENDING_DMA
                    }
                } else if self.replay(&mut inst) {
                    reason::BANK_CONFLICT
                } else {
                    if matches!(inst.op, Op::SpLd { .. }) {
                        let id = self.id_of(&inst, dst);
                        self.hit(net, t, id, src::LOCAL_SPM);
                    }
                    reason::NONE
                }
            }
            Op::StashLd { dst, .. } => {
                if self.replay(&mut inst) {
                    reason::BANK_CONFLICT
                } else {
                    self.stash_load(&mut inst, net, t, dst)
                }
            }
            Op::StashSt { .. } => {
                if self.replay(&mut inst) {
                    reason::BANK_CONFLICT
                } else {
                    self.store(&mut inst, net, |spm, c| spm.global_line(c as usize))
                }
            }
            Op::StashMap {
                spm, global, bytes, ..
            } => {
                self.spm.map(spm, global, bytes);
                reason::NONE
            }
            Op::Dma {
                spm,
                global,
                bytes,
                to_spm,
                ..
            } => {
                if self.spm.start_dma(spm, global, bytes, to_spm) {
                    reason::NONE
                } else {
                    reason::OTHER
                }
            }
            _ => reason::NONE,
        };
        if r != reason::NONE {
            self.lsu = Some(inst);
            self.lsu_reason = r;
            self.stats.lsu_stuck[r as usize] += 1;
        }
    }

    fn id_of(&self, inst: &LsuInst, dst: u8) -> u32 {
        (inst.warp as usize * REGS + dst as usize) as u32
    }

    /// A part served inside the SM, after the hit latency.
    fn hit(&mut self, net: &mut Net, t: u64, id: u32, s: u8) {
        let due = t + u64::from(net.p.hit_lat) - 1;
        net.at(
            due,
            Ev::Part {
                sm: self.id,
                id,
                src: s,
            },
        );
    }

    /// Scratchpad / stash bank conflicts: degree D holds the register D − 1 extra cycles.
    fn replay(&mut self, inst: &mut LsuInst) -> bool {
        let at = match inst.op {
            Op::SpLd { at, .. } | Op::SpSt { at, .. } => at,
            Op::StashLd { at, .. } | Op::StashSt { at, .. } => at,
            _ => return false,
        };
        if inst.degree == 0 {
            inst.degree = self.spm.degree(&at);
        }
        inst.k += 1;
        inst.k < inst.degree
    }

    /// A global load: at most one line per L1 bank per cycle, each a hit (owned, in the store
    /// buffer, or valid), a merge into a live MSHR entry, or a new miss.
    fn load(&mut self, inst: &mut LsuInst, net: &mut Net, t: u64, dst: u8) -> u8 {
        let id = self.id_of(inst, dst);
        let banks = u64::from(net.p.l1_banks);
        let mut used = 0u64;
        while inst.next < inst.n {
            let line = inst.lines[inst.next as usize];
            let b = 1u64 << (line % banks);
            if used & b != 0 {
                return reason::BANK_CONFLICT;
            }
            used |= b;
            if net.owned[self.id as usize].hit(line) || self.sb.holds(line) {
                self.hit(net, t, id, src::L1);
            } else {
                match self.l1.read(line, id) {
                    Outcome::Hit => self.hit(net, t, id, src::L1),
                    Outcome::HitReserved | Outcome::Miss => {}
                    Outcome::FailMshrEntry | Outcome::FailMshrMerge => return reason::MSHR_FULL,
                    _ => return reason::OTHER,
                }
            }
            inst.next += 1;
        }
        reason::NONE
    }

    /// A store: each line (`line_of` maps a line or stash chunk to its global line; `None`:
    /// a stash chunk without a map, written locally) combined or given a store-buffer entry;
    /// a full buffer starts a flush and holds the store (SB_FULL). Under DeNovo a line this SM
    /// owns is written in place: owned data is neither written back nor registered again at a
    /// release ([P §VI-A, §VI-D]; spec §6 "takes ownership at release").
    fn store(
        &mut self,
        inst: &mut LsuInst,
        net: &mut Net,
        line_of: impl Fn(&super::spm::Spm, u64) -> Option<u64>,
    ) -> u8 {
        let denovo = net.p.protocol == Protocol::Denovo;
        while inst.next < inst.n {
            if let Some(line) = line_of(&self.spm, inst.lines[inst.next as usize]) {
                let owned = denovo && net.owned[self.id as usize].hit(line);
                if !owned && !self.sb.write(line) {
                    self.sb.queue_all();
                    return reason::SB_FULL;
                }
            }
            inst.next += 1;
        }
        reason::NONE
    }

    /// A stash load: each chunk hits (valid or unmapped), waits on a fill in flight, or takes
    /// an MSHR entry and asks the L2 for its global line (bypassing the L1).
    fn stash_load(&mut self, inst: &mut LsuInst, net: &mut Net, t: u64, dst: u8) -> u8 {
        let id = self.id_of(inst, dst);
        while inst.next < inst.n {
            let c = inst.lines[inst.next as usize] as usize;
            match (self.spm.chunk[c], self.spm.global_line(c)) {
                (_, None) | (Chunk::Valid, _) => self.hit(net, t, id, src::LOCAL_SPM),
                (Chunk::Pending(e), _) => {
                    if !self.spm.wait_on(e, id) {
                        return reason::MSHR_FULL;
                    }
                }
                (Chunk::Invalid, Some(line)) => {
                    let Some(e) = self.l1.reserve_mshr() else {
                        return reason::MSHR_FULL;
                    };
                    self.spm.chunk[c] = Chunk::Pending(e);
                    self.spm.byp_chunk[e as usize] = c as u32;
                    self.spm.wait_on(e, id);
                    let sm = self.id;
                    let s = net.l2(t, sm, line, Kind::Read);
                    net.at(s.due, Ev::StashFill { sm, e, src: s.src });
                }
            }
            inst.next += 1;
        }
        reason::NONE
    }
}

/// Atomic `f` on every lane's word in lane order, performed where the L2 performs it (docs
/// §10.4): `src` the operand, `cmp` a CAS's expected value; lane 0's old word.
fn atomic(mem: &mut super::mem::Mem, f: AtomF, at: &Pat, src: u64, cmp: u64) -> u64 {
    use super::mem::Space::Global;
    let mut first = 0;
    for l in 0..at.lanes as usize {
        let a = at.addr(l);
        let old = mem.read(Global, a);
        let new = match f {
            AtomF::Add => old.wrapping_add(src),
            AtomF::Exch => src,
            AtomF::Cas if old == cmp => src,
            AtomF::Cas => old,
        };
        mem.write(Global, a, new);
        if l == 0 {
            first = old;
        }
    }
    first
}
