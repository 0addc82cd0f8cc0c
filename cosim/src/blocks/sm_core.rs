//! Behavioral SM model in **scheduler mode** (docs/elastic-pipeline.md §2, §3.3, §5; D3,
//! D15–D22, D24–D26): W warp contexts with program counters, a strict-barrel issue unit, the
//! round-robin scheduler and the BCAWS hardware, driving the trace-mode [`Pipeline`].
//!
//! Reused, not duplicated: [`Pipeline::cycle_with`] / [`Pipeline::step_with`] (the issue
//! source is asked once `in_ready` = ¬fe_hold is known), [`HistoryCache`], [`Accumulator`] and
//! [`DistanceCounter`] (with its `ready'` mask). The pipeline is used unchanged: MEM0-leave and
//! WB-load events are read off the latches before and after each cycle.
//!
//! **Records only when asked.** [`SmCore::cycle`] returns the §3.5 [`SmRecord`];
//! [`SmCore::step`] returns the cycle's [`SmEvents`] (`Copy`) and builds no record, and
//! [`SmCore::run_stats`] / [`SmCore::run_kernel_with`] run a kernel on it: the state is
//! allocated once per core and kernel, and no cycle allocates.
//!
//! **Issue sources** (spec §6: the testbench owns the programs and the ICNT FIFO). One core,
//! two drivers of what the `sm_core` inputs carry:
//! - [`SmCore`], program mode: a workload's instruction lists and the ICNT return FIFO, as the
//!   co-simulation testbench drives the RTL;
//! - [`PortModel`], port mode: the `sm_core` input ports themselves, cycle by cycle (`has_next`,
//!   `kind`, `pc` per warp; the same-cycle descriptor answer `desc_*`; `icnt_*`;
//!   `kernel_start`; `reset`), producing the output ports, like every RTL backend.
//!
//! **Entry tags** pack `(warp, seq, sw)` into the pipeline's `tag_bits`:
//! `tag = warp << (SEQB + SWB) | (seq mod 2^SEQB) << SWB | sw`, with SWB = lg S, WB = lg W
//! (lg x = max(1, ⌈log2 x⌉)) and SEQB = tag_bits − WB − SWB (≥ 1; `seq` = the warp's
//! instruction index, wrapping). See [`TagCodec`].
//!
//! **Per-cycle order** (cycle t): the pipeline runs §3.2 steps 1–8; in step 7, if ¬fe_hold(t),
//! the issue unit either feeds the pending subwarp of the current warp instruction or, when
//! none is pending (and no `kernel_start`), makes a decision (RR over `ready'`, §5.6) and feeds
//! subwarp 0. At the edge: busy bits set for the decided warp and clear for warps whose
//! completing entry was loaded into WB (or whose last ICNT return was presented), the
//! accumulator sees the SMEM entry that left MEM0, the cache is written on `acc_valid`, and the
//! counter loads (SMEM decision) or decrements (§5.4); `kernel_start` instead clears the
//! cache, accumulator, counter, busy bits, sequence numbers and RR pointer (§5.2, D21).
//!
//! Under `sched = rr` the BCAWS hardware still runs (cache, accumulator, counter) but its mask
//! enable is 0, so the trace fields stay comparable between the two schedulers.

use crate::blocks::elastic_pipeline::{
    Entry, InFlight, Pipeline, Record, Stall, Wb, WbBubbles, WbContent,
};
use crate::blocks::history_cache::{Accumulator, DistanceCounter, HistoryCache};
use crate::harness::layout::{Layout, Slot};
use crate::harness::sim::{Rtl, Simulator};
use serde::{Deserialize, Serialize};
use smrtl_hdl::blocks::elastic_pipeline::{Cause, Kind, WbSrc};
use smrtl_hdl::blocks::sm_core::port;
use smrtl_hdl::BlockParams;
use std::collections::VecDeque;

pub use smrtl_hdl::blocks::sm_core::{lg, GmemReturn, Params as SmParams, Sched};

/// `(warp, seq, sw)` ⇄ pipeline tag (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TagCodec {
    pub warp_bits: u32,
    pub sw_bits: u32,
    pub seq_bits: u32,
}

impl TagCodec {
    /// The codec of a core's params.
    pub fn of(p: &SmParams) -> TagCodec {
        TagCodec {
            warp_bits: p.warp_bits() as u32,
            sw_bits: p.sw_bits() as u32,
            seq_bits: p.seq_bits() as u32,
        }
    }

    pub fn pack(&self, warp: u32, seq: u32, sw: u32) -> u32 {
        let seq = (seq as u64 & ((1u64 << self.seq_bits) - 1)) as u32;
        let hi = (warp as u64) << (self.seq_bits + self.sw_bits);
        (hi | (seq as u64) << self.sw_bits | sw as u64) as u32
    }

    /// `(warp, seq mod 2^SEQB, sw)`.
    pub fn unpack(&self, tag: u32) -> (u32, u32, u32) {
        let t = tag as u64;
        let sw = t & ((1 << self.sw_bits) - 1);
        let seq = (t >> self.sw_bits) & ((1 << self.seq_bits) - 1);
        let warp = t >> (self.seq_bits + self.sw_bits);
        (warp as u32, seq as u32, sw as u32)
    }
}

/// One warp instruction of a workload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instr {
    pub op: Kind,
    pub pc: u32,
    /// SMEM: degree per subwarp (S values, `deg_override`); all 1 for other kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degrees: Option<Vec<u32>>,
    /// SMEM: word address per lane per subwarp (`[S][L]`); the detector computes degrees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addrs: Option<Vec<Vec<u32>>>,
    /// With `addrs`: active lanes per subwarp (`[S][L]`), default all active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<Vec<Vec<bool>>>,
}

impl Instr {
    pub fn alu(pc: u32) -> Instr {
        Instr::of(Kind::Alu, pc)
    }
    pub fn of(op: Kind, pc: u32) -> Instr {
        Instr {
            op,
            pc,
            degrees: None,
            addrs: None,
            active: None,
        }
    }
    pub fn smem(pc: u32, degrees: &[u32]) -> Instr {
        Instr {
            degrees: Some(degrees.to_vec()),
            ..Instr::of(Kind::Smem, pc)
        }
    }

    /// The pipeline entry of subwarp `sw`.
    fn entry(&self, tag: u32, sw: usize, lanes: usize) -> Entry {
        let mut e = Entry::new(tag, self.op, lanes);
        if self.op != Kind::Smem {
            return e;
        }
        if let Some(a) = &self.addrs {
            for l in 0..lanes {
                e.addrs[l] = a[sw][l];
                e.act[l] = self.active.as_ref().is_none_or(|act| act[sw][l]);
            }
        } else {
            e.deg_override = Some(self.degrees.as_ref().map_or(1, |d| d[sw]));
        }
        e
    }
}

/// A kernel: params plus one instruction list per warp (≤ W warps; the rest are empty).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub params: SmParams,
    pub warps: Vec<Vec<Instr>>,
}

impl Workload {
    /// A lower bound of the kernel's cycles: a warp waits for each of its global loads' ICNT
    /// return, and one subwarp issues per cycle. Checked against [`MAX_KERNEL_CYCLES`] before
    /// a run, so a workload that cannot finish is refused at once.
    pub fn min_cycles(&self) -> u64 {
        let latency = match self.params.gmem_return {
            GmemReturn::Icnt(l) => l as u64,
            GmemReturn::AtWriteback => 0,
        };
        let loads = self
            .warps
            .iter()
            .map(|p| p.iter().filter(|i| i.op == Kind::Gld).count() as u64 * latency)
            .max()
            .unwrap_or(0);
        let issues = self.warps.iter().map(|p| p.len() as u64).sum::<u64>()
            * self.params.pipe.subwarps as u64;
        loads.max(issues)
    }
}

/// Per-cycle outcome (spec §3.3 "Cycle outcomes").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Issue,
    BankConflict,
    Other,
    SchedFail,
    Idle,
}

/// A cache write at the end of the cycle (`acc_valid`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HcWrite {
    pub pc: u32,
    pub value: u32,
}

/// The scheduler-mode record of one cycle (§3.5): the pipeline record plus the BCAWS fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SmRecord {
    #[serde(flatten)]
    pub pipe: Record,
    /// The warp granted in this cycle (a decision), if any.
    pub decision: Option<u32>,
    /// `mask` during the cycle (0 under `rr`).
    pub mask: bool,
    /// The counter register during the cycle.
    pub counter: u32,
    /// The history-cache prediction for the decided warp's PC (0 without a decision).
    pub pred: u32,
    /// The cache write at the end of the cycle.
    pub hc_write: Option<HcWrite>,
    /// An SMEM decision's cache lookup: whether it hit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hc_lookup: Option<bool>,
    /// The subwarp `(warp, sw)` loaded into F at the end of the cycle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue: Option<(u32, u32)>,
    /// The warp whose busy bit clears at the end of the cycle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warp_done: Option<u32>,
    /// A GLD subwarp `(warp, sw)` sent to ICNT at the end of the cycle (`Icnt{lat}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icnt_req: Option<(u32, u32)>,
    pub outcome: Outcome,
}

impl SmRecord {
    /// The record of a cycle: the pipeline's latches plus what the core did.
    pub fn new(pipe: Record, ev: &SmEvents) -> SmRecord {
        SmRecord {
            pipe,
            decision: ev.decision,
            mask: ev.mask,
            counter: ev.counter,
            pred: ev.pred,
            hc_write: ev.hc_write,
            hc_lookup: ev.hc_lookup,
            issue: ev.issue,
            warp_done: ev.warp_done,
            icnt_req: ev.icnt_req,
            outcome: ev.outcome,
        }
    }
}

/// What one cycle did, without the pipeline's latch contents (no allocation): the
/// [`SmRecord`] fields plus the few pipeline facts the statistics and stall breakdowns use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmEvents {
    /// The cycle (the record's `t`).
    pub t: u64,
    /// WB during the cycle (§3.5 `WB`).
    pub wb: Wb,
    /// The EXE latch during the cycle (the held entry of a stall, §3.3 cause table).
    pub exe: Option<u32>,
    pub fe_hold: bool,
    pub cause: Cause,
    pub decision: Option<u32>,
    pub mask: bool,
    pub counter: u32,
    pub pred: u32,
    pub hc_write: Option<HcWrite>,
    pub hc_lookup: Option<bool>,
    pub issue: Option<(u32, u32)>,
    pub warp_done: Option<u32>,
    pub icnt_req: Option<(u32, u32)>,
    pub outcome: Outcome,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutcomeCounts {
    pub issue: u64,
    pub bank_conflict: u64,
    pub other: u64,
    pub sched_fail: u64,
    pub idle: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SmStats {
    pub cycles: u64,
    /// Decisions (warp instructions issued).
    pub issued_warp_instructions: u64,
    /// Subwarp issues (= `outcomes.issue`).
    pub issues: u64,
    pub outcomes: OutcomeCounts,
    pub wb_bubbles: u64,
    /// IPC per lane = issues / cycles (spec §3.3): subwarp issues per cycle.
    pub ipc: f64,
    /// History-cache lookups of SMEM decisions that hit / missed.
    pub hc_hits: u64,
    pub hc_misses: u64,
}

impl SmStats {
    /// The figures of a kernel's records (spec §3.3): every count comes from the records, so
    /// a co-simulated run that matches the model has identical stats.
    pub fn of(records: &[SmRecord]) -> SmStats {
        let mut acc = StatsAcc::default();
        for r in records {
            acc.record(r);
        }
        acc.finish()
    }
}

/// [`SmStats`] accumulated cycle by cycle, in cycle order.
#[derive(Clone, Debug, Default)]
pub struct StatsAcc {
    cycles: u64,
    decisions: u64,
    outcomes: OutcomeCounts,
    hc_hits: u64,
    hc_misses: u64,
    wb_bubbles: WbBubbles,
}

impl StatsAcc {
    /// Counts one cycle's record.
    pub fn record(&mut self, r: &SmRecord) {
        self.add(r.outcome, r.decision.is_some(), r.hc_lookup, r.pipe.wb);
    }

    fn add(&mut self, outcome: Outcome, decision: bool, hc_lookup: Option<bool>, wb: Wb) {
        self.cycles += 1;
        let o = &mut self.outcomes;
        *match outcome {
            Outcome::Issue => &mut o.issue,
            Outcome::BankConflict => &mut o.bank_conflict,
            Outcome::Other => &mut o.other,
            Outcome::SchedFail => &mut o.sched_fail,
            Outcome::Idle => &mut o.idle,
        } += 1;
        self.decisions += decision as u64;
        match hc_lookup {
            Some(true) => self.hc_hits += 1,
            Some(false) => self.hc_misses += 1,
            None => {}
        }
        self.wb_bubbles.add(wb);
    }

    pub fn finish(self) -> SmStats {
        let issues = self.outcomes.issue;
        SmStats {
            cycles: self.cycles,
            issued_warp_instructions: self.decisions,
            issues,
            wb_bubbles: self.wb_bubbles.count(),
            ipc: if self.cycles == 0 {
                0.0
            } else {
                issues as f64 / self.cycles as f64
            },
            hc_hits: self.hc_hits,
            hc_misses: self.hc_misses,
            outcomes: self.outcomes,
        }
    }
}

#[derive(Clone, Debug)]
pub struct SmRun {
    pub records: Vec<SmRecord>,
    pub stats: SmStats,
}

impl SmRun {
    /// The pipeline records alone.
    pub fn pipe_records(&self) -> Vec<Record> {
        self.records.iter().map(|r| r.pipe.clone()).collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Issue sources (spec §6: what the testbench drives)
// ---------------------------------------------------------------------------------------------

/// What drives the issue unit: the `sm_core` inputs of the current cycle, however produced.
trait Source {
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

/// Program mode: the workload's instruction lists, each warp's next and in-flight instruction,
/// and the fixed-latency ICNT return FIFO (D26).
#[derive(Clone, Debug, Default)]
struct Program {
    warps: Vec<Vec<Instr>>,
    next: Vec<usize>,
    inflight: Vec<usize>,
    has_next: u64,
    is_mem: u64,
    lanes: usize,
    latency: u64,
    /// Returns: (first cycle it may be presented, warp, sw).
    icnt: VecDeque<(u64, u32, u32)>,
}

impl Program {
    fn load(&mut self, p: &SmParams, program: &[Vec<Instr>]) {
        let w = p.warps as usize;
        assert!(program.len() <= w, "more warps than W");
        self.warps.clear();
        self.warps.extend_from_slice(program);
        self.warps.resize(w, Vec::new());
        for v in [&mut self.next, &mut self.inflight] {
            v.clear();
            v.resize(w, 0);
        }
        self.lanes = p.pipe.lanes as usize;
        self.latency = match p.gmem_return {
            GmemReturn::Icnt(lat) => lat as u64,
            GmemReturn::AtWriteback => 0,
        };
        self.icnt.clear();
        // At most one instruction in flight per warp: ≤ W·S returns outstanding.
        self.icnt.reserve(w * p.pipe.subwarps as usize);
        (self.has_next, self.is_mem) = (0, 0);
        for w in 0..w {
            self.update(w);
        }
    }

    /// Recomputes warp `w`'s bits of `has_next` and `is_mem`.
    fn update(&mut self, w: usize) {
        let bit = 1u64 << w;
        let next = self.warps[w].get(self.next[w]);
        self.has_next = self.has_next & !bit | if next.is_some() { bit } else { 0 };
        let mem = next.is_some_and(|i| i.op.is_mem());
        self.is_mem = self.is_mem & !bit | if mem { bit } else { 0 };
    }

    fn done(&self) -> bool {
        self.has_next == 0 && self.icnt.is_empty()
    }
}

impl Source for Program {
    fn vectors(&self) -> (u64, u64) {
        (self.has_next, self.is_mem)
    }

    fn next(&self, w: usize) -> (Kind, u32) {
        let i = &self.warps[w][self.next[w]];
        (i.op, i.pc)
    }

    fn decided(&mut self, w: usize) {
        self.inflight[w] = self.next[w];
        self.next[w] += 1;
        self.update(w);
    }

    fn entry(&self, tag: u32, _kind: Kind, warp: u32, sw: u32) -> Entry {
        let w = warp as usize;
        self.warps[w][self.inflight[w]].entry(tag, sw as usize, self.lanes)
    }

    fn icnt_return(&mut self, t: u64) -> Option<(u32, u32)> {
        match self.icnt.front() {
            Some(&(at, w, sw)) if at <= t => {
                self.icnt.pop_front();
                Some((w, sw))
            }
            _ => None,
        }
    }

    fn icnt_request(&mut self, t: u64, warp: u32, sw: u32) {
        self.icnt.push_back((t + self.latency, warp, sw));
    }
}

// ---------------------------------------------------------------------------------------------
// The core: pipeline, BCAWS hardware, scheduler and issue unit
// ---------------------------------------------------------------------------------------------

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
struct Core {
    p: SmParams,
    tags: TagCodec,
    pipe: Pipeline,
    /// The PCs of the SMEM entries between F and MEM0, oldest first: an entry carries its PC
    /// to the accumulator (§5.3), and SMEM entries reach MEM0 in issue order (in-order front
    /// end, FIFO PRE, D11).
    smem_pcs: VecDeque<u32>,
    /// `acc_svc_m1` is lg L bits (spec §6 `DegreeAccumulator`).
    svc_mask: u32,
    cache: HistoryCache,
    acc: Accumulator,
    counter: DistanceCounter,
    issue: Issue,
}

impl Core {
    /// The reset state (params validated by the caller).
    fn new(p: &SmParams) -> Core {
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
    fn clear(&mut self) {
        self.cache.clear();
        self.acc.clear();
        self.counter.clear();
        self.issue.clear();
    }

    fn bcaws(&self) -> bool {
        self.p.sched == Sched::Bcaws
    }

    /// No warp busy, no subwarp pending, the pipeline (WB included) empty.
    fn idle(&self) -> bool {
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
    fn cycle<S: Source>(
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

// ---------------------------------------------------------------------------------------------
// Program mode
// ---------------------------------------------------------------------------------------------

/// The SM core in scheduler mode, driven by a workload (program mode).
#[derive(Clone, Debug)]
pub struct SmCore {
    core: Core,
    program: Program,
}

impl SmCore {
    /// A core with params `p` (validated) and no program.
    pub fn new(p: &SmParams) -> Result<SmCore, String> {
        p.validate().map_err(|e| e.to_string())?;
        let mut program = Program::default();
        program.load(p, &[]);
        Ok(SmCore {
            core: Core::new(p),
            program,
        })
    }

    pub fn params(&self) -> &SmParams {
        &self.core.p
    }
    pub fn cache(&self) -> &HistoryCache {
        &self.core.cache
    }
    pub fn counter(&self) -> &DistanceCounter {
        &self.core.counter
    }
    pub fn accumulator(&self) -> &Accumulator {
        &self.core.acc
    }
    pub fn pipeline(&self) -> &Pipeline {
        &self.core.pipe
    }
    pub fn tags(&self) -> TagCodec {
        self.core.tags
    }

    /// `kernel_start` (D21): the pipeline must be empty; clears the cache's valid and MRU bits,
    /// the counter and the accumulator, and resets warps and the RR pointer. The cycle counter
    /// restarts at 0.
    pub fn kernel_start(&mut self, program: &[Vec<Instr>]) {
        self.core.pipe.reset();
        self.core.smem_pcs.clear();
        self.core.clear();
        self.program.load(&self.core.p, program);
    }

    /// All warps finished and everything drained.
    pub fn done(&self) -> bool {
        self.program.done() && self.core.idle()
    }

    /// One clock cycle, with its record.
    pub fn cycle(&mut self) -> SmRecord {
        let (rec, ev) = self.core.cycle(&mut self.program, false, true);
        SmRecord::new(rec.expect("record asked for"), &ev)
    }

    /// One clock cycle without the pipeline's record.
    pub fn step(&mut self) -> SmEvents {
        self.core.cycle(&mut self.program, false, false).1
    }

    /// Runs `program` as one kernel: `kernel_start` at cycle 0, then cycles until every warp
    /// has finished and the pipeline (WB included) and ICNT are empty; its records kept.
    pub fn run_kernel(&mut self, program: &[Vec<Instr>]) -> Result<SmRun, String> {
        let mut records = Vec::new();
        let stats = self.run_kernel_each(program, &mut |rec| records.push(rec.clone()))?;
        Ok(SmRun { records, stats })
    }

    /// [`SmCore::run_kernel`], showing each record to `each` instead of keeping it.
    pub fn run_kernel_each(
        &mut self,
        program: &[Vec<Instr>],
        each: &mut dyn FnMut(&SmRecord),
    ) -> Result<SmStats, String> {
        self.run(program, |core| {
            let rec = core.cycle();
            each(&rec);
            (
                rec.outcome,
                rec.decision.is_some(),
                rec.hc_lookup,
                rec.pipe.wb,
            )
        })
    }

    /// [`SmCore::run_kernel`] without records: only the statistics are accumulated.
    pub fn run_stats(&mut self, program: &[Vec<Instr>]) -> Result<SmStats, String> {
        self.run_kernel_with(program, |_| {})
    }

    /// [`SmCore::run_stats`], showing `f` every cycle's events (no records are built).
    pub fn run_kernel_with(
        &mut self,
        program: &[Vec<Instr>],
        mut f: impl FnMut(&SmEvents),
    ) -> Result<SmStats, String> {
        self.run(program, |core| {
            let ev = core.step();
            f(&ev);
            (ev.outcome, ev.decision.is_some(), ev.hc_lookup, ev.wb)
        })
    }

    /// The kernel loop: `cycle` runs one cycle and returns what the statistics count. A kernel
    /// still running after [`MAX_KERNEL_CYCLES`] is an error.
    fn run(
        &mut self,
        program: &[Vec<Instr>],
        mut cycle: impl FnMut(&mut SmCore) -> (Outcome, bool, Option<bool>, Wb),
    ) -> Result<SmStats, String> {
        self.kernel_start(program);
        let mut acc = StatsAcc::default();
        while !self.done() {
            if self.core.pipe.t() >= MAX_KERNEL_CYCLES {
                return Err(format!(
                    "the kernel did not finish within {MAX_KERNEL_CYCLES} cycles (the documented limit; run fewer waves or instructions)"
                ));
            }
            let (outcome, decision, lookup, wb) = cycle(self);
            acc.add(outcome, decision, lookup, wb);
        }
        Ok(acc.finish())
    }
}

/// Most cycles one kernel may run on the SM model (README "Limits"): minutes at the model's
/// speed, so a runaway workload ends with an error.
pub const MAX_KERNEL_CYCLES: u64 = 100_000_000;

/// Writes `r` onto the `sm_core` RTL's output ports (spec §6): what the RTL must show in that
/// cycle. Ports without an event read 0.
pub fn encode_record(p: &SmParams, layout: &Layout, r: &SmRecord, out: &mut [u64]) {
    crate::blocks::elastic_pipeline::encode_record(&p.pipe, layout, &r.pipe, out);
    let mut w = |name: &str, v: u64| layout.write_out(out, name, v);
    let (iw, isw) = r.issue.unwrap_or((0, 0));
    w(port::ISSUE_VALID, r.issue.is_some() as u64);
    w(port::ISSUE_WARP, iw as u64);
    w(port::ISSUE_SW, isw as u64);
    w(port::DECIDE, r.decision.is_some() as u64);
    w(port::GRANT, r.decision.unwrap_or(0) as u64);
    w(port::SCHED_FAIL, (r.outcome == Outcome::SchedFail) as u64);
    w(port::MASK, r.mask as u64);
    w(port::COUNTER, r.counter as u64);
    w(port::PRED, r.pred as u64);
    w(port::HC_LOOKUP, r.hc_lookup.is_some() as u64);
    w(port::HC_HIT, (r.hc_lookup == Some(true)) as u64);
    let hw = r.hc_write.unwrap_or(HcWrite { pc: 0, value: 0 });
    w(port::HC_WRITE, r.hc_write.is_some() as u64);
    w(port::HC_WRITE_PC, hw.pc as u64);
    w(port::HC_WRITE_VALUE, hw.value as u64);
    w(port::WARP_DONE, r.warp_done.is_some() as u64);
    w(port::WARP_DONE_ID, r.warp_done.unwrap_or(0) as u64);
    let (rw, rsw) = r.icnt_req.unwrap_or((0, 0));
    w(port::ICNT_REQ, r.icnt_req.is_some() as u64);
    w(port::ICNT_REQ_WARP, rw as u64);
    w(port::ICNT_REQ_SW, rsw as u64);
}

/// Runs a workload on a fresh core (deterministic).
pub fn run(w: &Workload) -> Result<SmRun, String> {
    core_for(w)?.run_kernel(&w.warps)
}

/// [`run`], showing each record to `each` instead of keeping it.
pub fn run_each(w: &Workload, each: &mut dyn FnMut(&SmRecord)) -> Result<SmStats, String> {
    core_for(w)?.run_kernel_each(&w.warps, each)
}

/// [`run`] without records: the statistics only.
pub fn run_stats(w: &Workload) -> Result<SmStats, String> {
    core_for(w)?.run_stats(&w.warps)
}

fn core_for(w: &Workload) -> Result<SmCore, String> {
    let core = SmCore::new(&w.params)?;
    if w.warps.len() > w.params.warps as usize {
        return Err(format!(
            "warps: {} warps exceed W = {}",
            w.warps.len(),
            w.params.warps
        ));
    }
    let least = w.min_cycles();
    if least > MAX_KERNEL_CYCLES {
        return Err(format!(
            "the kernel needs at least {least} cycles (each warp waits out its global loads' ICNT latency, one subwarp issues per cycle); allowed: at most {MAX_KERNEL_CYCLES}"
        ));
    }
    Ok(core)
}

// ---------------------------------------------------------------------------------------------
// Port mode
// ---------------------------------------------------------------------------------------------

/// Port mode: the `sm_core` inputs of one cycle, decoded (spec §6).
#[derive(Clone, Debug)]
struct Ports {
    has_next: u64,
    is_mem: u64,
    kind: Vec<Kind>,
    pc: Vec<u32>,
    /// The descriptor answer for (`issue_warp`, `issue_sw`), tag and kind aside: `desc_deg`
    /// as `deg_override` (0 = the detector computes the degree), `desc_addr`, `desc_act`.
    desc: Entry,
    icnt: Option<(u32, u32)>,
}

impl Source for Ports {
    fn vectors(&self) -> (u64, u64) {
        (self.has_next, self.is_mem)
    }

    fn next(&self, w: usize) -> (Kind, u32) {
        (self.kind[w], self.pc[w])
    }

    fn decided(&mut self, _w: usize) {}

    fn entry(&self, tag: u32, kind: Kind, _warp: u32, _sw: u32) -> Entry {
        Entry {
            tag,
            kind,
            ..self.desc.clone()
        }
    }

    fn icnt_return(&mut self, _t: u64) -> Option<(u32, u32)> {
        self.icnt
    }

    fn icnt_request(&mut self, _t: u64, _warp: u32, _sw: u32) {}
}

/// The input slots of the `sm_core` layout, looked up once.
#[derive(Clone, Debug)]
struct InSlots {
    reset: Slot,
    kernel_start: Slot,
    has_next: Slot,
    kind: Slot,
    pc: Slot,
    desc_addr: Slot,
    desc_act: Slot,
    desc_deg: Slot,
    icnt_valid: Slot,
    icnt_warp: Slot,
    icnt_sw: Slot,
}

/// The behavioral `sm_core` on its ports (spec §5.6, §6): driven by the input ports cycle by
/// cycle exactly as the RTL is, writing the output ports ([`encode_record`]). The same core as
/// [`SmCore`], with the inputs as its issue source; `kernel_start` is a cycle without a
/// decision whose edge clears the BCAWS and scheduler state (D21), and `reset` high returns
/// everything to the reset state at the edge. Its reset state is the RTL's.
///
/// As an [`Rtl`], [`Rtl::eval`] computes the cycle's outputs without committing it (the
/// testbench may answer the descriptor request and evaluate again) and [`Rtl::edge`] commits
/// the last evaluation.
#[derive(Clone, Debug)]
pub struct PortModel {
    layout: Layout,
    slots: InSlots,
    core: Core,
    ports: Ports,
    /// The state after the last [`Rtl::eval`], committed by [`Rtl::edge`].
    evaluated: Option<Core>,
}

impl PortModel {
    /// The model of the `sm_core` with params `p` (validated) on `layout` (its ports, spec §6),
    /// in its reset state.
    pub fn new(p: &SmParams, layout: &Layout) -> Result<PortModel, String> {
        p.validate().map_err(|e| e.to_string())?;
        let slot = |name: &str| layout.find_input(name).cloned();
        let slots = InSlots {
            reset: slot("reset")?,
            kernel_start: slot(port::KERNEL_START)?,
            has_next: slot(port::HAS_NEXT)?,
            kind: slot(port::KIND)?,
            pc: slot(port::PC)?,
            desc_addr: slot(port::DESC_ADDR)?,
            desc_act: slot(port::DESC_ACT)?,
            desc_deg: slot(port::DESC_DEG)?,
            icnt_valid: slot(port::ICNT_VALID)?,
            icnt_warp: slot(port::ICNT_WARP)?,
            icnt_sw: slot(port::ICNT_SW)?,
        };
        let (w, l) = (p.warps as usize, p.pipe.lanes as usize);
        Ok(PortModel {
            layout: layout.clone(),
            slots,
            core: Core::new(p),
            ports: Ports {
                has_next: 0,
                is_mem: 0,
                kind: vec![Kind::Alu; w],
                pc: vec![0; w],
                desc: Entry::new(0, Kind::Alu, l),
                icnt: None,
            },
            evaluated: None,
        })
    }

    /// The params.
    pub fn params(&self) -> &SmParams {
        &self.core.p
    }

    /// Decodes `inputs` into the issue source; returns (`kernel_start`, `reset`).
    fn decode(&mut self, inputs: &[u64]) -> (bool, bool) {
        let (s, p, ports) = (&self.slots, &self.core.p, &mut self.ports);
        // A port's value; bits beyond its width are not part of it.
        let val = |slot: &Slot| slot.field(inputs, 0, slot.width.min(64));
        let bit = |slot: &Slot| val(slot) == 1;
        let w = p.warps as usize;
        let (pcw, aw) = (p.pc_bits as usize, p.pipe.addr_bits as usize);
        ports.has_next = s.has_next.field(inputs, 0, w);
        ports.is_mem = 0;
        for k in 0..w {
            ports.kind[k] = Kind::from_bits(s.kind.field(inputs, 2 * k, 2));
            ports.pc[k] = s.pc.field(inputs, pcw * k, pcw) as u32;
            ports.is_mem |= (ports.kind[k].is_mem() as u64) << k;
        }
        let desc = &mut ports.desc;
        let deg = val(&s.desc_deg) as u32;
        desc.deg_override = (deg != 0).then_some(deg);
        for l in 0..desc.addrs.len() {
            desc.addrs[l] = s.desc_addr.field(inputs, l * aw, aw) as u32;
            desc.act[l] = s.desc_act.field(inputs, l, 1) == 1;
        }
        ports.icnt = bit(&s.icnt_valid).then(|| (val(&s.icnt_warp) as u32, val(&s.icnt_sw) as u32));
        (bit(&s.kernel_start), bit(&s.reset))
    }

    /// One cycle of `core` on the decoded inputs: writes the outputs, then takes the edge.
    fn cycle(&mut self, inputs: &[u64], outputs: &mut [u64], commit: bool) {
        let (start, reset) = self.decode(inputs);
        let mut next = if commit {
            None
        } else {
            Some(self.core.clone())
        };
        let core = next.as_mut().unwrap_or(&mut self.core);
        let (rec, ev) = core.cycle(&mut self.ports, start, true);
        if reset {
            *core = Core::new(&core.p);
        }
        outputs.fill(0);
        let rec = SmRecord::new(rec.expect("record asked for"), &ev);
        encode_record(&self.core.p, &self.layout, &rec, outputs);
        self.evaluated = next;
    }
}

impl Simulator for PortModel {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        self.cycle(inputs, outputs, true);
    }
}

impl Rtl for PortModel {
    fn eval(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        self.cycle(inputs, outputs, false);
    }

    fn edge(&mut self) {
        if let Some(core) = self.evaluated.take() {
            self.core = core;
        }
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
