//! One cycle of the memory pipeline in the phase order of docs/memory-issue-control.md §1.3:
//! fill, response, drain, LSU, dispatch, issue, and the control's edge.

use super::l1d::{Outcome, MERGED};
use super::params::{Sched, Scheme, MAX_ACCESSES, MAX_KERNELS, SCHEDULERS};
use super::stats::SchedView;
use super::workload::{Body, Op};
use super::{next_rand, unit, Cand, Load, MemInst, MemPipeline, NEVER};
use crate::blocks::mem_issue_ctl::idle;
use crate::blocks::rbmi_arb::mask;
use crate::blocks::stall_inspector::src;

impl MemPipeline {
    /// Runs one cycle in the phase order of §1.3.
    pub fn step(&mut self) {
        let t = self.t;
        idle(&mut self.ev);
        self.outcome = Outcome::Idle;
        self.issued = [0; MAX_KERNELS];
        if self.pending_relaunch > 0 {
            self.relaunch();
        }
        if self.stalls.is_some() {
            self.stall_preds();
        }
        self.phase_fill(t);
        self.phase_response(t);
        self.phase_drain(t);
        self.phase_lsu(t);
        // Phase 5: dispatch.
        if self.disp.is_none() {
            if let Some(m) = self.mem_reg.take() {
                self.dispatch(m);
            }
        }
        self.phase_issue(t);
        if self.stalls.is_some() {
            self.stall_issue();
        }
        // Phase 7: the control absorbs the cycle's events.
        self.ctl.tick(&self.ev);
        self.track_milg();
        self.t += 1;
    }

    /// TBs that finished last cycle are replaced by new TBs of the same kernel (§8.1).
    fn relaunch(&mut self) {
        for tb in 0..self.tbs.len() {
            if self.tbs[tb].relaunch_at.is_some_and(|at| at <= self.t) {
                self.pending_relaunch -= 1;
                self.launch(tb);
            }
        }
    }

    /// Phase 1: at most one due fill.
    fn phase_fill(&mut self, t: u64) {
        if let Some(&(due, e)) = self.fills.front() {
            if due <= t {
                self.fills.pop_front();
                self.l1d.fill(e, &mut self.rq);
            }
        }
    }

    /// Phase 2: one access of the response queue is resolved.
    fn phase_response(&mut self, t: u64) {
        if let Some(raw) = self.rq.pop_front() {
            let id = raw & !MERGED;
            let from = if raw & MERGED != 0 {
                src::L1_COAL
            } else {
                src::MAIN_MEM
            };
            let l = &mut self.loads[id as usize];
            l.pending -= 1;
            if l.pending == 0 && l.left {
                let Load {
                    kernel, warp, seq, ..
                } = *l;
                self.load_free.push(id);
                self.complete(kernel, warp, seq, t, from);
            }
        }
    }

    /// Phase 3: the miss-queue head goes down; the lower memory starts at most one service.
    fn phase_drain(&mut self, t: u64) {
        if let Some(r) = self.l1d.drain() {
            self.lm_queue.push_back(r);
        }
        if t >= self.lm_next {
            if let Some(r) = self.lm_queue.pop_front() {
                self.lm_next = t + u64::from(self.p.lm_interval);
                if !r.write {
                    self.fills
                        .push_back((t + u64::from(self.p.lm_latency), r.mshr));
                }
            }
        }
    }

    /// Phase 4: the dispatch register's head access meets the L1D.
    fn phase_lsu(&mut self, t: u64) {
        let Some(d) = self.disp else {
            return;
        };
        let k = d.kernel as usize;
        let i = self.disp_next as usize;
        let line = d.lines[i];
        let outcome = if d.store {
            self.l1d.write(line)
        } else {
            self.l1d.read(line, self.disp_load)
        };
        self.outcome = outcome;
        let c = &mut self.counters[k];
        match outcome {
            Outcome::Hit => c.hits += 1,
            Outcome::HitReserved => c.hit_reserved += 1,
            Outcome::Miss => c.misses += 1,
            Outcome::Write => c.writes += 1,
            _ => {}
        }
        if let Some(cause) = outcome.cause() {
            c.causes.add(cause);
            c.lsu_stall_cycles += 1;
            self.lsu_stall_cycles += 1;
            self.ev.fail[k] = true;
            return;
        }
        self.ev.acc[k] = true;
        if i == 0 {
            self.ev.first[k] = true;
            c.first_accesses += 1;
        }
        if !d.store && matches!(outcome, Outcome::HitReserved | Outcome::Miss) {
            self.loads[self.disp_load as usize].pending += 1;
        }
        self.disp_next += 1;
        if self.disp_next == d.n {
            self.disp = None;
            if d.store {
                self.complete(d.kernel, d.warp, d.seq, t, src::L1);
            } else {
                let id = self.disp_load;
                let l = &mut self.loads[id as usize];
                l.left = true;
                if l.pending == 0 {
                    self.load_free.push(id);
                    self.complete(d.kernel, d.warp, d.seq, t, src::L1);
                }
            }
        }
    }

    /// Phase 5: `m` enters the dispatch register (first access presented next cycle).
    fn dispatch(&mut self, m: MemInst) {
        if !m.store {
            let load = Load {
                kernel: m.kernel,
                warp: m.warp,
                seq: m.seq,
                pending: 0,
                left: false,
            };
            self.disp_load = match self.load_free.pop() {
                Some(id) => {
                    self.loads[id as usize] = load;
                    id
                }
                None => {
                    self.loads.push(load);
                    (self.loads.len() - 1) as u32
                }
            };
        }
        self.disp = Some(m);
        self.disp_next = 0;
    }

    /// A memory instruction of warp `w` completes in cycle `t` (§1.5), its data from `from`
    /// (the stall inspector's source, docs/stall-inspector.md §5).
    fn complete(&mut self, kernel: u8, w: u16, seq: u32, t: u64, from: u64) {
        if self.stalls.is_some() {
            self.stall_writeback(w as usize, seq, from);
        }
        let k = kernel as usize;
        self.ev.done[k] += 1;
        self.counters[k].mem_completed += 1;
        let warp = &mut self.warps[w as usize];
        warp.outstanding -= 1;
        if warp.last_seq == seq && warp.ready_at == NEVER {
            warp.ready_at = t + 1;
        }
        self.maybe_finish(w as usize, t);
        self.stall_touch(w as usize);
    }

    /// Retires warp `w` if it issued its last instruction and nothing is outstanding; a TB
    /// whose warps all retired is replaced next cycle.
    fn maybe_finish(&mut self, w: usize, t: u64) {
        let warp = &mut self.warps[w];
        if !warp.live || warp.pc < warp.len || warp.outstanding > 0 {
            return;
        }
        warp.live = false;
        let tb = &mut self.tbs[warp.tb as usize];
        tb.running -= 1;
        if tb.running == 0 {
            tb.relaunch_at = Some(t + 1);
            self.counters[tb.kernel as usize].tbs_completed += 1;
            self.pending_relaunch += 1;
        }
    }

    /// Phase 6: candidates, the control's `comb`, the memory winner, per-scheduler issue.
    fn phase_issue(&mut self, t: u64) {
        let n = self.n;
        let blocked = self.smkw_blocked();
        let mut cand = [[None::<Cand>; MAX_KERNELS]; SCHEDULERS];
        let mut compute = [None::<u16>; SCHEDULERS];
        let mut mem_req = 0u8;
        for s in 0..SCHEDULERS {
            let mut pos = 0u16;
            let order = &self.order[s];
            let len = order.len();
            // GTO: the last-issued warp first, then oldest first; LRR: slot order after it.
            let (first, start) = match (self.p.sched, self.last[s]) {
                (Sched::Gto, Some(g)) => (Some(g), 0),
                (Sched::Lrr, Some(g)) => {
                    let at = order.iter().position(|&w| w == g).map_or(0, |i| i + 1);
                    (None, at)
                }
                _ => (None, 0),
            };
            let mut visit = |w: u16, me: &Self| -> bool {
                match me.next_kind(w as usize) {
                    None => true,
                    Some(_) if blocked >> me.warps[w as usize].kernel & 1 == 1 => true,
                    Some(true) => {
                        let k = me.warps[w as usize].kernel as usize;
                        if cand[s][k].is_none() {
                            cand[s][k] = Some(Cand { warp: w, pos });
                            mem_req |= 1 << k;
                        }
                        pos += 1;
                        true
                    }
                    Some(false) => {
                        compute[s] = Some(w);
                        false
                    }
                }
            };
            let mut go = true;
            if let Some(g) = first {
                go = visit(g, self);
            }
            if go {
                for i in 0..len {
                    let w = self.order[s][(start + i) % len];
                    if Some(w) == first {
                        continue;
                    }
                    if !visit(w, self) {
                        break;
                    }
                }
            }
        }
        let slot_free = self.mem_reg.is_none();
        for k in 0..n {
            self.ev.mem_req[k] = mem_req >> k & 1 == 1;
        }
        self.ev.slot_free = slot_free;
        self.ctl.comb(&self.ev, &mut self.out);
        let (grant, mem_ok) = (mask(&self.out.grant), mask(&self.out.mem_ok));
        let all = ((1u32 << n) - 1) as u8;
        let elig = mem_req & mem_ok & if slot_free { all } else { 0 };
        debug_assert_eq!(grant & !elig, 0, "grant of an ineligible kernel");
        let rot = (t % SCHEDULERS as u64) as usize;
        let mut winner: Option<(usize, u16)> = None;
        if elig != 0 {
            match self.p.scheme {
                Scheme::Baseline | Scheme::Smil | Scheme::Dmil => {
                    // First come at the shared slot: the rotation's first scheduler with an
                    // eligible candidate; its earliest eligible warp in run order.
                    for i in 0..SCHEDULERS {
                        let s = (rot + i) % SCHEDULERS;
                        let best = (0..n)
                            .filter(|&k| elig >> k & 1 == 1)
                            .filter_map(|k| cand[s][k])
                            .min_by_key(|c| c.pos);
                        if let Some(c) = best {
                            winner = Some((s, c.warp));
                            break;
                        }
                    }
                }
                Scheme::Rbmi | Scheme::Qbmi | Scheme::QbmiDmil => {
                    if grant != 0 {
                        let g = grant.trailing_zeros() as usize;
                        winner = (0..SCHEDULERS)
                            .map(|i| (rot + i) % SCHEDULERS)
                            .find_map(|s| cand[s][g].map(|c| (s, c.warp)));
                    }
                }
            }
        }
        for (s, pick) in compute.iter().enumerate() {
            let issued = match winner {
                Some((ws, w)) if ws == s => {
                    self.issue_mem(s, w as usize, t);
                    Some((w, true))
                }
                _ => pick.map(|w| {
                    self.issue_compute(s, w as usize, t);
                    (w, false)
                }),
            };
            self.sched_view[s] = SchedView {
                compute_ready: pick.is_some(),
                issued,
            };
        }
        if winner.is_some() {
            self.mem_issue_cycles += 1;
        }
    }

    /// SMK-W (spec §7, [P §4]): reloads the quotas when every kernel's is spent, or when no
    /// kernel with quota left has a live warp (the deadlock guard); returns the kernels out of
    /// quota, which issue nothing this cycle (0 when SMK-W is off).
    fn smkw_blocked(&mut self) -> u8 {
        let q = &self.p.smkw_quota;
        if q.is_empty() {
            return 0;
        }
        let n = self.n;
        let spent =
            |wq: &[u32; MAX_KERNELS]| (0..n).filter(|&k| wq[k] == 0).fold(0u8, |m, k| m | 1 << k);
        let mut out = spent(&self.wq);
        let live_with_quota = self
            .warps
            .iter()
            .any(|w| w.live && out >> w.kernel & 1 == 0);
        if !live_with_quota {
            self.wq[..n].copy_from_slice(q);
            out = spent(&self.wq);
        }
        out
    }

    fn advance(&mut self, s: usize, w: usize, t: u64, mem: bool) {
        let pc = self.warps[w].pc;
        let dep_next = self.depends(w, pc + 1);
        let mem_next = self.is_mem(w, pc + 1);
        let k = self.warps[w].kernel as usize;
        let alu = u64::from(self.kernels[k].alu_lat(self.p.alu_lat));
        let warp = &mut self.warps[w];
        warp.last_seq = pc;
        warp.pc = pc + 1;
        warp.mem_next = mem_next;
        warp.ready_at = match (dep_next, mem) {
            (false, _) => t + 1,
            (true, false) => t + alu,
            (true, true) => NEVER,
        };
        self.issued[k] += 1;
        self.wq[k] = self.wq[k].saturating_sub(1);
        self.last[s] = Some(w as u16);
    }

    fn issue_compute(&mut self, s: usize, w: usize, t: u64) {
        let k = self.warps[w].kernel as usize;
        self.counters[k].compute += 1;
        self.advance(s, w, t, false);
        self.maybe_finish(w, t);
        self.stall_touch(w);
    }

    fn issue_mem(&mut self, s: usize, w: usize, t: u64) {
        let k = self.warps[w].kernel as usize;
        let mut m = MemInst {
            kernel: k as u8,
            warp: w as u16,
            seq: self.warps[w].pc,
            store: false,
            n: 0,
            lines: [0; MAX_ACCESSES],
        };
        match &self.kernels[k].body {
            Body::Synth(sy) => {
                let warp = &mut self.warps[w];
                let rng = &mut warp.rng;
                m.store = sy.store_frac > 0.0 && unit(rng) < sy.store_frac;
                let base = next_rand(rng) % u64::from(sy.hot_lines);
                let region = (k as u64 + 1) << 56;
                for j in 0..sy.req as u64 {
                    let line = if unit(rng) < sy.reuse_p {
                        let hot = (base + j) % u64::from(sy.hot_lines);
                        region | (warp.gid * u64::from(sy.hot_lines) + hot)
                    } else {
                        self.stream_line[k] += 1;
                        region | 1 << 52 | sy.stream_line(self.stream_line[k])
                    };
                    m.lines[j as usize] = line;
                }
                m.n = sy.req as u8;
            }
            Body::Streams(st) => {
                let tbw = w - self.tbs[self.warps[w].tb as usize].first_warp as usize;
                let inst = &st[tbw][self.warps[w].pc as usize];
                m.store = inst.op == Op::Store;
                m.n = inst.lines.len() as u8;
                m.lines[..inst.lines.len()].copy_from_slice(&inst.lines);
            }
        }
        self.counters[k].mem_issued += 1;
        self.warps[w].outstanding += 1;
        self.ev.issue[k] = true;
        self.mem_reg = Some(m);
        self.advance(s, w, t, true);
        self.stall_touch(w);
    }
}
