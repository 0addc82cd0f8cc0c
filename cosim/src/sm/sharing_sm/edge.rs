//! The SM's side of the clock edge (docs/scratchpad-sharing.md §2.4, §5): issued instructions
//! advance, completions are scheduled, locks counted, barriers released, TBs retired and
//! launched.

use super::record::{CycleRecord, LockEvent, Outcome, Pick, SmError, MAX_CYCLES};
use super::{Phase, SharingSm};
use crate::blocks::sharing_core::Outputs;
use crate::kernel::program::{Instr, Op};

impl SharingSm<'_> {
    /// The SM's side of the edge, from the core's outputs of the cycle: issued instructions
    /// advance, exits and barriers, completions scheduled, TBs retired and launched.
    pub(super) fn after(
        &mut self,
        o: &Outputs,
        mut rec: Option<&mut CycleRecord>,
    ) -> Result<(), SmError> {
        let c = match self.phase {
            Phase::Launch(j) => {
                self.phase = if j + 1 < self.launch_cycles {
                    Phase::Launch(j + 1)
                } else {
                    self.start_kernel()
                };
                return Ok(());
            }
            Phase::Run(c) => c,
        };
        if let Some(r) = rec.as_deref_mut() {
            r.cycle = c;
            r.picks.clear();
            r.locks.clear();
            r.retired.clear();
            r.launched.clear();
        }
        self.check_errors(o, c)?;
        let ns = self.p.shape.nsched as usize;
        let lat = self.p.lat_shared as usize;
        let mut progress = false;
        for q in 0..ns {
            progress |= self.advance(q, o, c, rec.as_deref_mut());
        }
        // Completions of this cycle were consumed by the core.
        for q in 0..ns {
            self.cpl[q * lat + c as usize % lat] = None;
        }
        self.count_locks(o, rec.as_deref_mut());
        self.release_barriers();
        let retired = self.retire_and_launch(o, c, rec);
        self.quiet = !progress
            && !retired
            && o.iss_valid.iter().all(|&v| !v)
            && o.pend.iter().all(|&x| x == 0)
            && o.acq.iter().all(|&x| !x)
            && o.rel_fire.iter().all(|&x| !x);
        progress |= retired;
        let pending = c < self.busy_until || o.pend.iter().any(|&x| x != 0);
        self.idle_cycles = if progress || pending {
            0
        } else {
            self.idle_cycles + 1
        };
        self.phase = Phase::Run(c + 1);
        if self.idle_cycles > 4 && !self.finished() {
            return Err(SmError::Deadlock { cycle: c });
        }
        if c + 1 >= MAX_CYCLES {
            return Err(SmError::CycleLimit);
        }
        Ok(())
    }

    /// The core's error outputs in kernel cycle `c`: an invalid slot pairing (`err_cfg`), or a
    /// lock acquired against the protocol (§2.4 `err_proto`, `err_pend`).
    fn check_errors(&self, o: &Outputs, c: u64) -> Result<(), SmError> {
        if o.err_cfg {
            return Err(SmError::Kernel(format!(
                "cycle {c}: the slot pairing is invalid (err_cfg)"
            )));
        }
        if o.err_proto || o.err_pend {
            let s = (0..o.acq.len())
                .find(|&q| o.acq[q])
                .map_or(0, |q| o.rq_slot[q] as u32);
            return Err(SmError::Protocol {
                cycle: c,
                slot: s,
                tb: self.slot_tb.get(s as usize).copied().flatten().unwrap_or(0),
            });
        }
        Ok(())
    }

    /// Scheduler `q`'s pick in kernel cycle `c` (§5): recorded, and when issued (not NACKed) the
    /// warp advances: latency and scoreboard, the `cpl` of a locked access, branch, barrier and
    /// exit. Whether an instruction issued.
    fn advance(&mut self, q: usize, o: &Outputs, c: u64, rec: Option<&mut CycleRecord>) -> bool {
        if !o.iss_valid[q] {
            return false;
        }
        let ns = self.p.shape.nsched as usize;
        let lat = self.p.lat_shared as usize;
        let w = o.iss_idx[q] as usize * ns + q;
        let (slot, index, pc, live) = {
            let wp = &self.warps[w];
            (wp.slot, wp.index, wp.pc, wp.live)
        };
        let stream = self.k.stream(index as usize);
        let ins: &Instr = &stream[pc as usize];
        if let Some(r) = rec {
            r.picks.push(Pick {
                sched: q as u32,
                warp: w as u32,
                tb: self.slot_tb[slot as usize].expect("valid warp has a TB"),
                slot,
                pc,
                op: ins.op,
                outcome: if o.issued[q] {
                    Outcome::Issue
                } else {
                    Outcome::Nack
                },
            });
        }
        if !o.issued[q] {
            self.stats.nacks += 1;
            return false;
        }
        let op_lat = match ins.op {
            Op::Alu | Op::Mov => self.p.lat_alu,
            op if op.is_shared() => self.p.lat_shared,
            op if op.is_global() => self.p.lat_global,
            _ => 1,
        } as u64;
        self.stats.warp_instructions += 1;
        self.stats.thread_instructions += live.count_ones() as u64;
        self.busy_until = self.busy_until.max(c + op_lat);
        if o.needs_lock[q] {
            self.cpl[q * lat + (c as usize + lat - 1) % lat] = Some(slot);
        }
        let exits = ins.exits(pc as usize + 1 == stream.len());
        let next = match ins.op {
            Op::Bra => ins.to[0],
            Op::Cbra => {
                let id =
                    self.branch_ids[(index as usize).min(self.branch_ids.len() - 1)][pc as usize];
                let visit = &mut self.visits[w * self.branches + id as usize];
                let tb = self.slot_tb[slot as usize].expect("valid warp has a TB");
                let global = tb as u64 * self.wpt as u64 + index as u64;
                let rule = ins.branch.unwrap_or_default();
                let first = rule.first(self.k.seed, global, id, *visit);
                *visit = visit.wrapping_add(1);
                ins.to[usize::from(!first)]
            }
            _ => pc + 1,
        };
        self.preds.touch(w);
        let wp = &mut self.warps[w];
        if ins.op == Op::Bar {
            wp.at_bar = true;
        }
        if let Some(d) = ins.dst {
            wp.ready_at[d as usize] = c + op_lat;
            let bit = 1u32 << d;
            wp.shared_dst = wp.shared_dst & !bit | if ins.op.is_shared() { bit } else { 0 };
            wp.global_dst = wp.global_dst & !bit | if ins.op.is_global() { bit } else { 0 };
        }
        wp.pc = next;
        if exits {
            wp.live = 0;
            let tb = self.slot_tb[slot as usize].expect("valid warp has a TB");
            self.stats.tbs[tb as usize].finish = c;
        }
        true
    }

    /// TBs whose slot went idle retire at the end of kernel cycle `c`, and the next TBs take the
    /// freed slots. Whether any TB retired.
    fn retire_and_launch(
        &mut self,
        o: &Outputs,
        c: u64,
        mut rec: Option<&mut CycleRecord>,
    ) -> bool {
        let mut retired = false;
        for s in 0..self.slot_tb.len() {
            let Some(tb) = self.slot_tb[s] else { continue };
            if !o.slot_idle[s] {
                continue;
            }
            retired = true;
            let s32 = s as u32;
            self.slot_tb[s] = None;
            for i in 0..self.wpt {
                let w = (s32 * self.wpt + i) as usize;
                self.warps[w].valid = false;
                self.preds.touch(w);
            }
            self.stats.tbs_completed += 1;
            self.stats.cycles = self.stats.cycles.max(self.stats.tbs[tb as usize].finish);
            if let Some(r) = rec.as_deref_mut() {
                r.retired.push(tb);
            }
            if self.next_tb < self.k.grid {
                let new = self.start_tb(s32, c + 1);
                if let Some(r) = rec.as_deref_mut() {
                    r.launched.push(new);
                }
            }
        }
        retired
    }

    /// Lock acquisitions and releases of the cycle, by cause (§2.4).
    fn count_locks(&mut self, o: &Outputs, mut rec: Option<&mut CycleRecord>) {
        let kw = self.p.shape.kw();
        for q in 0..o.acq.len() {
            // Two ports of one slot acquire one lock.
            let first = (0..q).all(|r| !(o.acq[r] && o.rq_slot[r] == o.rq_slot[q]));
            if o.acq[q] && first {
                self.stats.lock_acquires += 1;
                if let Some(r) = rec.as_deref_mut() {
                    r.locks.push(LockEvent {
                        pair: o.pair[q] as u32,
                        slot: o.rq_slot[q] as u32,
                        cause: "acquire",
                    });
                }
            }
        }
        for s in 0..o.rel_fire.len() {
            if !o.rel_fire[s] {
                continue;
            }
            let r = &mut self.stats.lock_releases;
            let cause = if o.xfer[s] {
                r.transfer += 1;
                "transfer"
            } else if o.tb_empty[s] {
                r.finish += 1;
                "finish"
            } else {
                r.relssp += 1;
                "relssp"
            };
            if let Some(rec) = rec.as_deref_mut() {
                rec.locks.push(LockEvent {
                    pair: pair_of(o, s, kw),
                    slot: s as u32,
                    cause,
                });
            }
        }
    }

    /// A TB's barrier opens when every live warp of it waits there.
    fn release_barriers(&mut self) {
        for s in 0..self.slot_tb.len() as u32 {
            if self.slot_tb[s as usize].is_none() {
                continue;
            }
            let warps = (s * self.wpt..(s + 1) * self.wpt).map(|w| w as usize);
            let live = |w: &usize| self.warps[*w].live != 0;
            if warps.clone().any(|w| live(&w))
                && warps.clone().filter(live).all(|w| self.warps[w].at_bar)
            {
                for w in warps {
                    self.warps[w].at_bar = false;
                    self.preds.touch(w);
                }
            }
        }
    }
}

/// `pair(s)` of the registered table the core shows in `o` (§1.3: the low KW bits of
/// `min(s, ShTB[s])`).
fn pair_of(o: &Outputs, s: usize, kw: usize) -> u32 {
    (smrtl_hdl::blocks::sharing::pair(s as u64, o.shtb[s]) & smrtl_hdl::netlist::mask(kw)) as u32
}
