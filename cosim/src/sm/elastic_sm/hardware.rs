//! The `sm_core` hardware (docs/elastic-pipeline.md §5, §6 `SmCore`): the pipeline, the BCAWS
//! hardware, the scheduler and the issue unit, driven by a [`Source`] of the `sm_core` inputs.

use super::record::{HcWrite, Outcome, SmEvents};
use super::workload::TagCodec;
use super::{Sched, SmParams};
use crate::blocks::elastic_pipeline::{Entry, InFlight, Pipeline, Record, Stall, Wb, WbContent};
use crate::blocks::history_cache::{Accumulator, DistanceCounter, HistoryCache};
use smrtl_hdl::blocks::elastic_pipeline::{Cause, Kind, WbSrc};
use std::collections::VecDeque;

/// What drives the issue unit: the `sm_core` inputs of the current cycle, however produced.
pub(crate) trait Source {
    /// `has_next` and `is_mem` as bit vectors (warp w = bit w; §5.4 D24: is_mem from the
    /// warp's next-instruction descriptor, kind ≠ ALU).
    fn vectors(&self) -> (u64, u64);
    /// The next instruction (`kind`, `pc`) of warp `w`, which has one.
    fn next(&self, w: usize) -> (Kind, u32);
    /// Warp `w` was granted: its next instruction becomes the one in flight.
    fn decided(&mut self, w: usize);
    /// The entry of subwarp `sw` of warp `warp`'s instruction in flight (`desc_*`).
    fn entry(&self, tag: u32, kind: Kind, warp: u32, sw: u32) -> Entry;
    /// The ICNT return presented in cycle `t` (≤ 1 per cycle, §5.6).
    fn icnt_return(&mut self, t: u64) -> Option<(u32, u32)>;
    /// A GLD subwarp leaves MEM_last for ICNT at the end of cycle `t` (`Icnt{lat}`).
    fn icnt_request(&mut self, t: u64, warp: u32, sw: u32);
}

/// The issue unit's current warp instruction (its subwarps still to feed).
#[derive(Clone, Copy, Debug)]
struct Current {
    warp: u32,
    seq: u32,
    kind: Kind,
    pc: u32,
    /// Subwarps already loaded into F.
    issued: u32,
}

/// What happened in the issue unit in one cycle.
#[derive(Clone, Copy, Debug, Default)]
struct IssueEvent {
    decision: Option<u32>,
    pred: u32,
    /// An SMEM decision: the counter loads `pred` (§5.4), after a cache lookup that hit or not.
    load: bool,
    hit: bool,
    /// The subwarp loaded into F.
    loaded: Option<(u32, u32)>,
    /// The PC it carries, if it is SMEM (for the accumulator, §5.3).
    smem_pc: Option<u32>,
    sched_fail: bool,
}

/// The scheduler and issue unit (§5.6): RR pointer, busy bits, per-warp registers, the current
/// warp instruction.
#[derive(Clone, Debug)]
struct Issue {
    tags: TagCodec,
    subwarps: u32,
    /// Per warp: the sequence number of its next decision (the RTL's `seq{w}_q`, SEQB bits).
    seq: Vec<u32>,
    /// Busy bits, warp w = bit w (W ≤ 64).
    busy: u64,
    /// The RR pointer (`last`, reset W − 1).
    last: u32,
    current: Option<Current>,
}

impl Issue {
    fn new(p: &SmParams) -> Issue {
        let w = p.warps;
        Issue {
            tags: TagCodec::of(p),
            subwarps: p.pipe.subwarps,
            seq: vec![0; w as usize],
            busy: 0,
            last: w - 1,
            current: None,
        }
    }

    /// Busy bits, sequence numbers, RR pointer and the pending subwarps to their reset values.
    fn clear(&mut self) {
        self.seq.fill(0);
        self.busy = 0;
        self.last = self.seq.len() as u32 - 1;
        self.current = None;
    }

    /// Step 7 of a cycle (§5.6) once `in_ready` = ¬fe_hold is known: the entry loaded into F,
    /// the pending subwarp of the current warp instruction or, when none is pending (and no
    /// `kernel_start`), subwarp 0 of a decision: RR over `ready'` = the BCAWS mask applied to
    /// `has_next ∧ ¬busy`, with the cache lookup of the granted warp's PC.
    fn feed<S: Source>(
        &mut self,
        in_ready: bool,
        start: bool,
        bcaws: Bcaws,
        src: &mut S,
        ev: &mut IssueEvent,
    ) -> Option<Entry> {
        if !in_ready {
            return None;
        }
        if self.current.is_none() && !start {
            let (has_next, is_mem) = src.vectors();
            let ready = has_next & !self.busy;
            let ready_m = bcaws.counter.ready_m(bcaws.enable, ready, is_mem);
            let Some(w) = round_robin(ready_m, self.last) else {
                ev.sched_fail = has_next != 0;
                return None;
            };
            let (kind, pc) = src.next(w as usize);
            src.decided(w as usize);
            self.last = w;
            let seq = self.seq[w as usize];
            self.seq[w as usize] = seq.wrapping_add(1);
            let hit = bcaws.cache.lookup(pc as u64);
            ev.decision = Some(w);
            ev.pred = hit.unwrap_or(0);
            ev.load = kind == Kind::Smem;
            ev.hit = hit.is_some();
            self.current = Some(Current {
                warp: w,
                seq,
                kind,
                pc,
                issued: 0,
            });
        }
        let cur = self.current.as_mut()?;
        let tag = self.tags.pack(cur.warp, cur.seq, cur.issued);
        let e = src.entry(tag, cur.kind, cur.warp, cur.issued);
        ev.loaded = Some((cur.warp, cur.issued));
        ev.smem_pc = (cur.kind == Kind::Smem).then_some(cur.pc);
        cur.issued += 1;
        if cur.issued == self.subwarps {
            self.current = None;
        }
        Some(e)
    }
}

/// The BCAWS hardware as the scheduler sees it in a decision cycle (§5.2, §5.4): the cache
/// lookup, and the ready mask (`enable` = 0 under `rr`).
#[derive(Clone, Copy)]
struct Bcaws<'a> {
    cache: &'a HistoryCache,
    counter: &'a DistanceCounter,
    enable: bool,
}

/// The outcome of a cycle (§3.3 "Cycle outcomes"): a stall by its cause, else an issue, a
/// scheduling failure or idle.
fn outcome(stall: Stall, ev: &IssueEvent) -> Outcome {
    if stall.fe_hold {
        match stall.cause {
            Cause::BankConflict => Outcome::BankConflict,
            _ => Outcome::Other,
        }
    } else if ev.loaded.is_some() {
        Outcome::Issue
    } else if ev.sched_fail {
        Outcome::SchedFail
    } else {
        Outcome::Idle
    }
}

/// MEM0 at the start of a cycle, for its leave event (see [`Core::mem0_leave`]).
#[derive(Clone, Copy, Debug)]
struct MemLeave {
    /// MEM0's entry if it is done (rem = 1).
    done: Option<InFlight>,
    /// Some MEM1..MEM_last is empty.
    gap: bool,
}

impl MemLeave {
    /// The entry that left, given the cycle's WB source.
    fn left(self, wb_src: WbSrc) -> Option<InFlight> {
        self.done.filter(|_| self.gap || wb_src == WbSrc::Mem)
    }
}

/// Round robin (§5.6, D20): the first warp set in `eligible` among last+1 … last+W (mod W).
fn round_robin(eligible: u64, last: u32) -> Option<u32> {
    let above = eligible & u64::MAX.checked_shl(last + 1).unwrap_or(0);
    match (above, eligible) {
        (0, 0) => None,
        (0, e) => Some(e.trailing_zeros()),
        (a, _) => Some(a.trailing_zeros()),
    }
}

/// The `sm_core` hardware (spec §6 `SmCore`), driven by a [`Source`].
#[derive(Clone, Debug)]
pub(crate) struct Core {
    pub(crate) p: SmParams,
    pub(super) tags: TagCodec,
    pub(super) pipe: Pipeline,
    /// The PCs of the SMEM entries between F and MEM0, oldest first: an entry carries its PC
    /// to the accumulator (§5.3), and SMEM entries reach MEM0 in issue order (in-order front
    /// end, FIFO PRE, D11).
    pub(super) smem_pcs: VecDeque<u32>,
    /// `acc_svc_m1` is lg L bits (spec §6 `DegreeAccumulator`).
    svc_mask: u32,
    pub(super) cache: HistoryCache,
    pub(super) acc: Accumulator,
    pub(super) counter: DistanceCounter,
    issue: Issue,
}

impl Core {
    /// The reset state (params validated by the caller).
    pub(crate) fn new(p: &SmParams) -> Core {
        let pp = &p.pipe;
        Core {
            tags: TagCodec::of(p),
            pipe: Pipeline::new(pp),
            // F, D1..Dk, EXE, PRE, MEM0 and the one issued before MEM0's leaves.
            smem_pcs: VecDeque::with_capacity(pp.fe_depth as usize + 4 + pp.pre_slots()),
            svc_mask: (1 << p.history_cache().svc_bits()) - 1,
            cache: HistoryCache::new(p.hc_sets, p.hc_ways, p.pc_bits, p.dw()),
            acc: Accumulator::new(pp.subwarps, p.dw()),
            counter: DistanceCounter::new(
                pp.subwarps,
                p.dw(),
                p.counter_mode,
                p.bcaws_freeze_on_stall,
                p.bcaws_policy,
            ),
            issue: Issue::new(p),
            p: p.clone(),
        }
    }

    /// `kernel_start` at the edge (§5.2, D21): the BCAWS state and the scheduler's registers.
    pub(super) fn clear(&mut self) {
        self.cache.clear();
        self.acc.clear();
        self.counter.clear();
        self.issue.clear();
    }

    fn bcaws(&self) -> bool {
        self.p.sched == Sched::Bcaws
    }

    /// The scheduler's view at the start of a cycle, for the stall probe: the busy bits and the
    /// warp whose subwarps are still being fed (and its kind).
    pub(super) fn sched_view(&self) -> (u64, Option<(u32, Kind)>) {
        (
            self.issue.busy,
            self.issue.current.map(|c| (c.warp, c.kind)),
        )
    }

    /// `ready'` of `has_next` / `is_mem` at the start of a cycle (the BCAWS mask applied): what
    /// the issue unit chooses from. The probe's audit reads it (docs/stall-inspector.md §7.1).
    pub(super) fn ready_m(&self, has_next: u64, is_mem: u64) -> u64 {
        self.counter
            .ready_m(self.bcaws(), has_next & !self.issue.busy, is_mem)
    }

    /// No warp busy, no subwarp pending, the pipeline (WB included) empty.
    pub(super) fn idle(&self) -> bool {
        self.issue.busy == 0
            && self.issue.current.is_none()
            && self.pipe.is_drained()
            && *self.pipe.wb() == WbContent::Empty
    }

    /// The MEM0 entry that leaves at the coming edge, given the WB source selected in that
    /// cycle (§3.2 steps 1, 3): it is done (rem = 1) and MEM1 is free after the ripple, i.e. one
    /// of MEM1..MEM_last is empty at the start of the cycle or MEM_last is selected for WB
    /// (M = 1: MEM0 is MEM_last). Call before [`Pipeline::step_with`], then apply
    /// [`MemLeave::left`] to the source it selected.
    fn mem0_leave(&self) -> MemLeave {
        let mem = self.pipe.mem();
        MemLeave {
            done: mem.mem0().filter(|&(_, rem)| rem == 1).map(|(e, _)| *e),
            gap: mem.stages()[1..].iter().any(Option::is_none),
        }
    }

    /// One clock cycle (§3.2 with the issue unit in step 7, §5.6), then the edge. `start` =
    /// `kernel_start`: no decision in this cycle, and the edge clears instead of updating the
    /// BCAWS and scheduler state. `with_record` asks for the pipeline's latch record.
    pub(crate) fn cycle<S: Source>(
        &mut self,
        src: &mut S,
        start: bool,
        with_record: bool,
    ) -> (Option<Record>, SmEvents) {
        let t = self.pipe.t();
        let enable = self.bcaws();
        let mask = self.counter.mask(enable);
        let counter = self.counter.counter();
        // smem_sw_pending: the issue unit owes SMEM subwarps at the start of the cycle.
        let smem_sw_pending = self.issue.current.is_some_and(|c| c.kind == Kind::Smem);
        let icnt_ret = src.icnt_return(t);
        let wb = match self.pipe.wb() {
            WbContent::Empty => Wb::Empty,
            WbContent::Icnt => Wb::Icnt,
            WbContent::Entry(e) => Wb::Entry(e.tag),
        };
        let exe = self.pipe.front_end().exe().map(|e| e.tag);
        let mem0_leave = self.mem0_leave();

        let mut ev = IssueEvent::default();
        let bcaws = Bcaws {
            cache: &self.cache,
            counter: &self.counter,
            enable,
        };
        let issue = &mut self.issue;
        let mut feed = |in_ready| issue.feed(in_ready, start, bcaws, src, &mut ev);
        let icnt_valid = icnt_ret.is_some();
        let (rec, stall) = if with_record {
            let rec = self.pipe.cycle_with(icnt_valid, feed);
            let stall = Stall {
                fe_hold: rec.fe_hold,
                cause: rec.cause,
            };
            (Some(rec), stall)
        } else {
            let cfg = *self.pipe.cfg();
            let stall = self.pipe.step_with(icnt_valid, |in_ready| {
                feed(in_ready).map(|e| InFlight::of(&cfg, &e))
            });
            (None, stall)
        };

        // --- the clock edge ---
        if let Some(pc) = ev.smem_pc {
            self.smem_pcs.push_back(pc);
        }
        // MEM0 leave (§5.3): the SMEM entry that was in MEM0 feeds the accumulator.
        let (mut v, mut sw, mut svc_m1, mut pc) = (false, 0, 0, 0u64);
        let left = mem0_leave.left(self.pipe.wb_src());
        if let Some(e) = left.filter(|e| e.kind == Kind::Smem) {
            v = true;
            sw = self.tags.unpack(e.tag).2;
            svc_m1 = (e.cycles - 1) & self.svc_mask;
            pc = self.smem_pcs.pop_front().expect("an SMEM entry's PC") as u64;
        }
        let acc_out = self.acc.eval(v, sw, svc_m1, pc);
        let hc_write = acc_out.valid.then_some(HcWrite {
            pc: acc_out.pc as u32,
            value: acc_out.value,
        });
        // WB load (§5.6, D26): busy clears when the completing entry is loaded into WB, or
        // when the ICNT return of a GLD's last subwarp is presented.
        let last_sw = self.p.pipe.subwarps - 1;
        let (mut wb_done, mut icnt_req) = (None, None);
        if let WbContent::Entry(e) = self.pipe.wb() {
            let (w, _, sw) = self.tags.unpack(e.tag);
            if e.kind == Kind::Gld && self.p.gld_via_icnt() {
                icnt_req = Some((w, sw));
            } else if sw == last_sw {
                wb_done = Some(w);
            }
        }
        let icnt_done = icnt_ret.filter(|&(_, sw)| sw == last_sw).map(|(w, _)| w);
        let warp_done = wb_done.or(icnt_done);
        if let Some((w, sw)) = icnt_req {
            // It left MEM_last at this edge; its return may be presented at t + lat.
            src.icnt_request(t, w, sw);
        }
        if start {
            self.clear();
        } else {
            if acc_out.valid {
                self.cache.write(acc_out.pc, acc_out.value);
            }
            self.acc.tick(v, sw, svc_m1);
            self.counter
                .tick(ev.load, ev.pred, smem_sw_pending, stall.fe_hold);
            let set = ev.decision.map_or(0, |w| 1u64 << w);
            let done = warp_done.map_or(0, |w| 1u64 << w);
            self.issue.busy = self.issue.busy & !done | set;
        }

        let events = SmEvents {
            t,
            wb,
            exe,
            fe_hold: stall.fe_hold,
            cause: stall.cause,
            decision: ev.decision,
            mask,
            counter,
            pred: ev.pred,
            hc_write,
            hc_lookup: ev.load.then_some(ev.hit),
            issue: ev.loaded,
            warp_done,
            icnt_req,
            outcome: outcome(stall, &ev),
        };
        (rec, events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_from_last() {
        assert_eq!(round_robin(0, 3), None);
        assert_eq!(round_robin(0b1011, 3), Some(0));
        assert_eq!(round_robin(0b1011, 0), Some(1));
        assert_eq!(round_robin(0b1011, 1), Some(3));
        assert_eq!(round_robin(1 << 63 | 1, 63), Some(0));
        assert_eq!(round_robin(1 << 63 | 1, 62), Some(63));
    }
}
