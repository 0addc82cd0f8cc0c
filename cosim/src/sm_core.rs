//! Behavioral SM model in **scheduler mode** (spec elastic-pipeline.md §2, §3.3, §5; D3,
//! D15–D22, D24–D26): W warp contexts with program counters, a strict-barrel issue unit, the
//! round-robin scheduler and the BCAWS hardware, driving the trace-mode [`Pipeline`].
//!
//! Reused, not duplicated: [`Pipeline::cycle_with`] (the issue source is asked once `in_ready`
//! = ¬fe_hold is known), [`HistoryCache`], [`Accumulator`], [`DistanceCounter`] and
//! [`masked_ready`]. The pipeline is used unchanged: MEM0-leave and WB-load events are read off
//! the latches before and after each cycle.
//!
//! **Entry tags** pack `(warp, seq, sw)` into the pipeline's `tag_bits`:
//! `tag = warp << (SEQB + SWB) | (seq mod 2^SEQB) << SWB | sw`, with SWB = lg S, WB = lg W
//! (lg x = max(1, ⌈log2 x⌉)) and SEQB = tag_bits − WB − SWB (≥ 1; `seq` = the warp's
//! instruction index, wrapping). See [`TagCodec`].
//!
//! **Per-cycle order** (cycle t): the pipeline runs §3.2 steps 1–8; in step 7, if ¬fe_hold(t),
//! the issue unit either feeds the pending subwarp of the current warp instruction or, when
//! none is pending, makes a decision (RR over `ready'`, §5.6) and feeds subwarp 0. At the edge:
//! busy bits clear for warps whose completing entry was loaded into WB (or whose last ICNT
//! return was presented), the accumulator sees the SMEM entry that left MEM0, the cache is
//! written on `acc_valid`, and the counter loads (SMEM decision) or decrements (§5.4).
//!
//! Under `sched = rr` the BCAWS hardware still runs (cache, accumulator, counter) but its mask
//! enable is 0, so the trace fields stay comparable between the two schedulers.

use crate::bank_conflict_detector::Cfg;
use crate::elastic_pipeline::{
    detector_cfg, service_cycles, Entry, Pipeline, Record, Summary, WbContent,
};
use crate::history_cache::{Accumulator, DistanceCounter, HistoryCache};
use crate::layout::Layout;
use serde::{Deserialize, Serialize};
use smrtl_hdl::elastic_pipeline::{Cause, Kind};
use smrtl_hdl::BlockParams;
use std::collections::VecDeque;

pub use smrtl_hdl::sm_core::{lg, GmemReturn, Params as SmParams, Sched};

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
            e.addrs = a[sw].clone();
            if let Some(act) = &self.active {
                e.act = act[sw].clone();
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
        let mut o = OutcomeCounts::default();
        for r in records {
            *match r.outcome {
                Outcome::Issue => &mut o.issue,
                Outcome::BankConflict => &mut o.bank_conflict,
                Outcome::Other => &mut o.other,
                Outcome::SchedFail => &mut o.sched_fail,
                Outcome::Idle => &mut o.idle,
            } += 1;
        }
        let pipe: Vec<Record> = records.iter().map(|r| r.pipe.clone()).collect();
        let cycles = records.len() as u64;
        let count = |f: &dyn Fn(&SmRecord) -> bool| records.iter().filter(|r| f(r)).count() as u64;
        SmStats {
            cycles,
            issued_warp_instructions: count(&|r| r.decision.is_some()),
            issues: o.issue,
            wb_bubbles: Summary::of(&pipe).wb_bubbles,
            ipc: if cycles == 0 {
                0.0
            } else {
                o.issue as f64 / cycles as f64
            },
            hc_hits: count(&|r| r.hc_lookup == Some(true)),
            hc_misses: count(&|r| r.hc_lookup == Some(false)),
            outcomes: o,
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

#[derive(Clone, Debug, Default)]
struct Warp {
    /// Index of the next instruction.
    next: usize,
    busy: bool,
    /// PC of the in-flight instruction.
    inflight_pc: u32,
}

/// The issue unit's current warp instruction.
#[derive(Clone, Debug)]
struct Current {
    warp: u32,
    seq: u32,
    instr: Instr,
    /// Subwarps already loaded into F.
    issued: u32,
}

/// What happened in the source callback of one cycle.
#[derive(Clone, Debug, Default)]
struct IssueEvent {
    decision: Option<u32>,
    pred: u32,
    load: bool,
    hit: bool,
    /// The subwarp loaded into F.
    loaded: Option<(u32, u32)>,
    sched_fail: bool,
}

/// The SM core in scheduler mode.
#[derive(Clone, Debug)]
pub struct SmCore {
    p: SmParams,
    cfg: Cfg,
    tags: TagCodec,
    pipe: Pipeline,
    cache: HistoryCache,
    acc: Accumulator,
    counter: DistanceCounter,
    program: Vec<Vec<Instr>>,
    warps: Vec<Warp>,
    last: u32,
    current: Option<Current>,
    /// ICNT returns: (cycle it may be presented, warp, sw).
    icnt: VecDeque<(u64, u32, u32)>,
}

impl SmCore {
    /// A core with params `p` (validated) and no program.
    pub fn new(p: &SmParams) -> Result<SmCore, String> {
        p.validate().map_err(|e| e.to_string())?;
        let pp = p.pipe.clone();
        Ok(SmCore {
            cfg: detector_cfg(&pp),
            tags: TagCodec::of(p),
            pipe: Pipeline::new(&pp),
            cache: HistoryCache::new(p.hc_sets, p.hc_ways, p.pc_bits, p.dw()),
            acc: Accumulator::new(p.pipe.subwarps, p.dw()),
            counter: DistanceCounter::new(
                p.pipe.subwarps,
                p.dw(),
                p.counter_mode,
                p.bcaws_freeze_on_stall,
                p.bcaws_policy,
            ),
            program: Vec::new(),
            warps: vec![Warp::default(); p.warps as usize],
            last: p.warps - 1,
            current: None,
            icnt: VecDeque::new(),
            p: p.clone(),
        })
    }

    pub fn params(&self) -> &SmParams {
        &self.p
    }
    pub fn cache(&self) -> &HistoryCache {
        &self.cache
    }
    pub fn counter(&self) -> &DistanceCounter {
        &self.counter
    }
    pub fn accumulator(&self) -> &Accumulator {
        &self.acc
    }
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipe
    }
    pub fn tags(&self) -> TagCodec {
        self.tags
    }

    /// `kernel_start` (D21): the pipeline must be empty; clears the cache's valid and MRU bits,
    /// the counter and the accumulator, and resets warps and the RR pointer. The cycle counter
    /// restarts at 0.
    pub fn kernel_start(&mut self, program: &[Vec<Instr>]) {
        assert!(program.len() <= self.p.warps as usize, "more warps than W");
        self.pipe = Pipeline::new(&self.p.pipe);
        self.cache.clear();
        self.acc.clear();
        self.counter.clear();
        self.program = program.to_vec();
        self.program.resize(self.p.warps as usize, Vec::new());
        self.warps = vec![Warp::default(); self.p.warps as usize];
        self.last = self.p.warps - 1;
        self.current = None;
        self.icnt.clear();
    }

    fn has_next(&self, w: usize) -> bool {
        self.warps[w].next < self.program[w].len()
    }

    /// Bit vectors (ready, is_mem) at the start of the cycle (§5.6, D24).
    fn ready_vectors(&self) -> (u64, u64) {
        let (mut ready, mut is_mem) = (0u64, 0u64);
        for w in 0..self.warps.len() {
            if self.has_next(w) && !self.warps[w].busy {
                ready |= 1 << w;
            }
            if self.has_next(w) && self.program[w][self.warps[w].next].op.is_mem() {
                is_mem |= 1 << w;
            }
        }
        (ready, is_mem)
    }

    /// All warps finished and everything drained.
    pub fn done(&self) -> bool {
        (0..self.warps.len()).all(|w| !self.has_next(w) && !self.warps[w].busy)
            && self.current.is_none()
            && self.pipe.is_drained()
            && *self.pipe.wb() == WbContent::Empty
            && self.icnt.is_empty()
    }

    /// The issue source of one cycle (§5.6), called with `in_ready` = ¬fe_hold(t).
    fn source(&mut self, in_ready: bool, ev: &mut IssueEvent) -> Option<Entry> {
        if !in_ready {
            return None;
        }
        if self.current.is_none() {
            let (ready, is_mem) = self.ready_vectors();
            let enable = self.p.sched == Sched::Bcaws;
            let ready_m = self.counter.ready_m(enable, ready, is_mem);
            let n = self.p.warps;
            let grant = (1..=n)
                .map(|k| (self.last + k) % n)
                .find(|&w| ready_m >> w & 1 == 1);
            let Some(w) = grant else {
                ev.sched_fail = (0..n as usize).any(|w| self.has_next(w));
                return None;
            };
            self.last = w;
            let warp = &mut self.warps[w as usize];
            let seq = warp.next as u32;
            let instr = self.program[w as usize][warp.next].clone();
            warp.next += 1;
            warp.busy = true;
            warp.inflight_pc = instr.pc;
            let pc = instr.pc as u64;
            ev.decision = Some(w);
            ev.pred = self.cache.pred(pc);
            if instr.op == Kind::Smem {
                ev.load = true;
                ev.hit = self.cache.lookup(pc).is_some();
            }
            self.current = Some(Current {
                warp: w,
                seq,
                instr,
                issued: 0,
            });
        }
        let cur = self.current.as_mut().expect("current instruction");
        let tag = self.tags.pack(cur.warp, cur.seq, cur.issued);
        let e = cur
            .instr
            .entry(tag, cur.issued as usize, self.p.pipe.lanes as usize);
        ev.loaded = Some((cur.warp, cur.issued));
        cur.issued += 1;
        if cur.issued == self.p.pipe.subwarps {
            self.current = None;
        }
        Some(e)
    }

    /// One clock cycle.
    pub fn cycle(&mut self) -> SmRecord {
        let t = self.pipe.t();
        let mask = self.counter.mask(self.p.sched == Sched::Bcaws);
        let counter = self.counter.counter();
        // smem_sw_pending: the issue unit owes SMEM subwarps at the start of the cycle.
        let smem_sw_pending = self
            .current
            .as_ref()
            .is_some_and(|c| c.instr.op == Kind::Smem);
        // ICNT: at most one return presented per cycle.
        let icnt_ret = match self.icnt.front() {
            Some(&(at, _, _)) if at <= t => self.icnt.pop_front(),
            _ => None,
        };
        let mem0_before = self.pipe.mem().mem0().map(|(e, _)| e.clone());

        let mut ev = IssueEvent::default();
        let mut pipe = std::mem::replace(&mut self.pipe, Pipeline::new(&self.p.pipe));
        let rec = pipe.cycle_with(icnt_ret.is_some(), |in_ready| {
            self.source(in_ready, &mut ev)
        });
        self.pipe = pipe;

        // --- the clock edge ---
        // MEM0 leave: the entry that was in MEM0 is no longer there (tags are unique in flight).
        let left =
            mem0_before.filter(|e| self.pipe.mem().mem0().is_none_or(|(n, _)| n.tag != e.tag));
        let (mut v, mut sw, mut svc_m1, mut pc) = (false, 0, 0, 0u64);
        if let Some(e) = left.filter(|e| e.kind == Kind::Smem) {
            let (w, _, s) = self.tags.unpack(e.tag);
            v = true;
            sw = s;
            svc_m1 = service_cycles(&self.cfg, &e) - 1;
            pc = self.warps[w as usize].inflight_pc as u64;
        }
        let acc_out = self.acc.step(v, sw, svc_m1, pc);
        let hc_write = acc_out.valid.then(|| {
            self.cache.write(acc_out.pc, acc_out.value);
            HcWrite {
                pc: acc_out.pc as u32,
                value: acc_out.value,
            }
        });
        self.counter
            .tick(ev.load, ev.pred, smem_sw_pending, rec.fe_hold);
        // WB load: busy clears when the completing entry is loaded into WB.
        let last_sw = self.p.pipe.subwarps - 1;
        let (mut warp_done, mut icnt_req) = (None, None);
        if let WbContent::Entry(e) = self.pipe.wb() {
            let (w, _, s) = self.tags.unpack(e.tag);
            match self.p.gmem_return {
                GmemReturn::Icnt(lat) if e.kind == Kind::Gld => {
                    // It left MEM_last at this edge; its return may be presented at t + lat.
                    self.icnt.push_back((t + lat as u64, w, s));
                    icnt_req = Some((w, s));
                }
                _ if s == last_sw => warp_done = Some(w),
                _ => {}
            }
        }
        if let Some((_, w, s)) = icnt_ret {
            if s == last_sw {
                warp_done = Some(w);
            }
        }
        if let Some(w) = warp_done {
            self.warps[w as usize].busy = false;
        }

        let outcome = if rec.fe_hold {
            match rec.cause {
                Cause::BankConflict => Outcome::BankConflict,
                _ => Outcome::Other,
            }
        } else if ev.loaded.is_some() {
            Outcome::Issue
        } else if ev.sched_fail {
            Outcome::SchedFail
        } else {
            Outcome::Idle
        };
        SmRecord {
            pipe: rec,
            decision: ev.decision,
            mask,
            counter,
            pred: ev.pred,
            hc_write,
            hc_lookup: ev.load.then_some(ev.hit),
            issue: ev.loaded,
            warp_done,
            icnt_req,
            outcome,
        }
    }

    /// Runs `program` as one kernel: `kernel_start` at cycle 0, then cycles until every warp
    /// has finished and the pipeline (WB included) and ICNT are empty.
    pub fn run_kernel(&mut self, program: &[Vec<Instr>]) -> SmRun {
        self.kernel_start(program);
        let mut records = Vec::new();
        let limit = 10_000_000u64;
        while !self.done() {
            assert!(
                self.pipe.t() < limit,
                "sm_core: no completion within {limit} cycles"
            );
            records.push(self.cycle());
        }
        let stats = SmStats::of(&records);
        SmRun { records, stats }
    }
}

/// Writes `r` onto the `sm_core` RTL's output ports (spec §6): what the RTL must show in that
/// cycle. Ports without an event read 0.
pub fn encode_record(p: &SmParams, layout: &Layout, r: &SmRecord, out: &mut [u64]) {
    use smrtl_hdl::sm_core::port;
    crate::elastic_pipeline::encode_record(&p.pipe, layout, &r.pipe, out);
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
    let mut core = SmCore::new(&w.params)?;
    if w.warps.len() > w.params.warps as usize {
        return Err(format!(
            "warps: {} warps exceed W = {}",
            w.warps.len(),
            w.params.warps
        ));
    }
    Ok(core.run_kernel(&w.warps))
}
