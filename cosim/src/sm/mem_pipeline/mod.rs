//! The behavioural SM memory pipeline of docs/memory-issue-control.md §1–§2 (Dai et al., seed
//! 004): warps of up to three concurrent kernels on four schedulers, the shared memory-issue
//! slot, the MEM pipeline register, the LSU dispatch register, the L1D with MSHRs and miss
//! queue, the abstract lower memory (§1.6) and the response queue, stepped in the phase order
//! of §1.3. The memory-issue control is [`crate::blocks::mem_issue_ctl::MemIssueCtl`], reached only
//! through its typed interface (`comb` in phase 6, `tick` in phase 7), so the RTL
//! `mem_issue_ctl` can be stepped beside it with the same [`CtlIn`] each cycle.
//!
//! The hot path allocates nothing once the run's queues have grown to their working size;
//! per-cycle records ([`CycleRecord`]) are built only when a caller asks for them.

pub mod l1d;
pub mod params;
pub mod workload;

pub use crate::blocks::mem_issue_ctl::{CtlIn, CtlOut, MemIssueCtl};
use crate::blocks::rbmi_arb::mask;
use crate::harness::layout::Layout;
use crate::harness::Trace as WaveRows;
use l1d::{L1d, Outcome};
use params::{PipeParams, Sched, Scheme, MAX_ACCESSES, MAX_KERNELS, SCHEDULERS};
use serde::Serialize;
use smrtl_hdl::params::BlockParams as _;
use smrtl_hdl::{Dir, Port};
use std::collections::VecDeque;
use workload::{Body, KernelSpec, Op, Workload};

/// Cycle value of "not ready until a memory instruction completes".
const NEVER: u64 = u64::MAX;

/// A memory instruction in the MEM or dispatch register: its coalesced lines.
#[derive(Clone, Copy, Debug)]
struct MemInst {
    kernel: u8,
    warp: u16,
    seq: u32,
    store: bool,
    n: u8,
    lines: [u64; MAX_ACCESSES],
}

/// A load that left the issue stage and has accesses pending.
#[derive(Clone, Copy, Debug, Default)]
struct Load {
    kernel: u8,
    warp: u16,
    seq: u32,
    /// Accepted accesses not yet resolved.
    pending: u32,
    /// All accesses accepted: the instruction left the dispatch register.
    left: bool,
}

/// One warp slot.
#[derive(Clone, Copy, Debug, Default)]
struct Warp {
    live: bool,
    kernel: u8,
    tb: u16,
    /// Kernel-wide warp number (the generator's PRNG stream).
    gid: u64,
    /// Next instruction.
    pc: u32,
    /// Instructions in its program.
    len: u32,
    /// First cycle the next instruction's operands are ready ([`NEVER`]: waits for `last_seq`).
    ready_at: u64,
    /// Sequence number of the last issued instruction.
    last_seq: u32,
    /// Issued memory instructions not yet complete.
    outstanding: u32,
    /// Whether instruction `pc` is a memory instruction (kept so the issue scan is cheap).
    mem_next: bool,
    rng: u64,
}

/// One TB slot: its kernel, its warp slots, and its warps still running.
#[derive(Clone, Copy, Debug, Default)]
struct Tb {
    kernel: u8,
    first_warp: u16,
    warps: u16,
    running: u16,
    /// Cycle its replacement launches (after it finished).
    relaunch_at: Option<u64>,
}

/// The four reservation-failure causes (§1.4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Causes {
    pub line_alloc: u64,
    pub miss_queue: u64,
    pub mshr_merge: u64,
    pub mshr_entry: u64,
}

impl Causes {
    fn add(&mut self, cause: usize) {
        *[
            &mut self.line_alloc,
            &mut self.miss_queue,
            &mut self.mshr_merge,
            &mut self.mshr_entry,
        ][cause] += 1;
    }
    pub fn total(&self) -> u64 {
        self.line_alloc + self.miss_queue + self.mshr_merge + self.mshr_entry
    }
}

/// Summary of a kernel's MILG limit registers over a run (read from the control each cycle).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MilHistory {
    /// Cycles with `unl = 1`.
    pub unl_cycles: u64,
    /// Smallest and largest `mil` while limited (`unl = 0`); none if never limited.
    pub mil_min: Option<u32>,
    pub mil_max: Option<u32>,
    /// Cycles in which `mil` or `unl` changed.
    pub changes: u64,
    /// Values at the end of the run.
    pub mil_final: u32,
    pub unl_final: bool,
    /// Largest `inflight` seen.
    pub inflight_max: u32,
}

/// Raw per-kernel counters (§1.7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub compute: u64,
    pub mem_issued: u64,
    pub mem_completed: u64,
    pub first_accesses: u64,
    pub hits: u64,
    pub hit_reserved: u64,
    pub misses: u64,
    pub writes: u64,
    pub causes: Causes,
    /// Cycles whose failed head access was this kernel's.
    pub lsu_stall_cycles: u64,
    pub tbs_completed: u64,
    pub mil: MilHistory,
}

impl Counters {
    pub fn accesses(&self) -> u64 {
        self.hits + self.hit_reserved + self.misses + self.writes
    }
}

/// A kernel's statistics at the end of a run (§1.7).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelStats {
    pub name: String,
    pub tbs: u32,
    pub warp_instructions: u64,
    pub compute_instructions: u64,
    pub mem_instructions: u64,
    pub mem_completed: u64,
    pub ipc: f64,
    pub accesses: u64,
    pub hits: u64,
    pub hit_reserved: u64,
    pub misses: u64,
    pub writes: u64,
    pub l1d_miss_rate: f64,
    pub rsfail: u64,
    pub l1d_rsfail_rate: f64,
    pub rsfail_by_cause: Causes,
    pub lsu_stall_cycles: u64,
    pub lsu_stall_pct: f64,
    pub compute_util: f64,
    /// Cinst/Minst and Req/Minst as run (§8.3 calibration).
    pub cinst_per_minst: f64,
    pub req_per_minst: f64,
    pub accesses_per_kcycle: f64,
    pub tbs_completed: u64,
    pub milg: MilHistory,
}

/// A run's statistics: the SM's and each kernel's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PipeStats {
    pub cycles: u64,
    pub scheme: Scheme,
    pub warp_instructions: u64,
    pub ipc: f64,
    pub lsu_stall_cycles: u64,
    pub lsu_stall_pct: f64,
    pub compute_util: f64,
    pub mem_issue_cycles: u64,
    pub kernels: Vec<KernelStats>,
}

/// One cycle as the records and the waveform show it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CycleRecord {
    pub t: u64,
    pub slot_free: bool,
    pub lsu_busy: bool,
    pub l1d_outcome: u8,
    pub mshr: u32,
    pub mq: u32,
    pub rq: u32,
    /// The control's inputs this cycle (bit k = kernel k).
    pub mem_req: u8,
    pub issue: u8,
    pub done: [u8; MAX_KERNELS],
    pub acc: u8,
    pub first: u8,
    pub fail: u8,
    /// The control's outputs before the edge.
    pub grant: u8,
    pub mem_ok: u8,
    /// The control's registers after the edge, per kernel.
    pub inflight: [u32; MAX_KERNELS],
    pub peak: [u32; MAX_KERNELS],
    pub rsfail: [u32; MAX_KERNELS],
    pub reqcnt: [u32; MAX_KERNELS],
    pub mil: [u32; MAX_KERNELS],
    pub unl: u8,
    /// Warp instructions issued this cycle (compute and memory), per kernel.
    pub issued: [u8; MAX_KERNELS],
}

/// What one scheduler saw and did in the cycle just run (for checks of §2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedView {
    /// It had a ready warp whose next instruction is a compute instruction.
    pub compute_ready: bool,
    /// The warp slot it issued from, and whether that was a memory instruction.
    pub issued: Option<(u16, bool)>,
}

/// The dispatch register's instruction: kernel, warp slot, sequence number, next access and
/// access count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DispatchView {
    pub kernel: u8,
    pub warp: u16,
    pub seq: u32,
    pub next: u8,
    pub n: u8,
}

/// The memory-issue candidate of one (scheduler, kernel): warp and place in the leading run.
#[derive(Clone, Copy, Debug)]
struct Cand {
    warp: u16,
    pos: u16,
}

/// The SM memory pipeline of one workload.
pub struct MemPipeline {
    p: PipeParams,
    kernels: Vec<KernelSpec>,
    tbs_of: Vec<u32>,
    seed: u64,
    n: usize,
    t: u64,
    warps: Vec<Warp>,
    tbs: Vec<Tb>,
    /// Per scheduler: its warp slots, oldest first (GTO) or in slot order (LRR).
    order: [Vec<u16>; SCHEDULERS],
    /// Per scheduler: the last issued warp.
    last: [Option<u16>; SCHEDULERS],
    next_gid: Vec<u64>,
    stream_line: Vec<u64>,
    mem_reg: Option<MemInst>,
    disp: Option<MemInst>,
    disp_next: u8,
    disp_load: u32,
    loads: Vec<Load>,
    load_free: Vec<u32>,
    l1d: L1d,
    rq: VecDeque<u32>,
    /// Lower memory: waiting requests and fills due.
    lm_queue: VecDeque<l1d::Request>,
    lm_next: u64,
    fills: VecDeque<(u64, u32)>,
    ctl: MemIssueCtl,
    ev: CtlIn,
    out: CtlOut,
    outcome: Outcome,
    issued: [u8; MAX_KERNELS],
    sched_view: [SchedView; SCHEDULERS],
    counters: [Counters; MAX_KERNELS],
    lsu_stall_cycles: u64,
    mem_issue_cycles: u64,
    pending_relaunch: u32,
}

/// splitmix64: seeds a warp's xorshift stream from (benchmark, warp, seed).
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// xorshift64*.
fn next_rand(s: &mut u64) -> u64 {
    let mut x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    x.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// A uniform draw in [0, 1).
fn unit(s: &mut u64) -> f64 {
    (next_rand(s) >> 11) as f64 / (1u64 << 53) as f64
}

fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

impl MemPipeline {
    /// The pipeline of workload `w` at cycle 0, its TBs resident (§1.1), in reset state.
    pub fn new(w: &Workload) -> Result<MemPipeline, String> {
        let p = w.params.clone();
        let n = w.kernels.len();
        let cp = p.ctl(n);
        cp.validate().map_err(|e| e.to_string())?;
        let ctl = MemIssueCtl::new(&cp);
        let total_warps: u32 = w
            .kernels
            .iter()
            .zip(&w.tbs)
            .map(|(k, &t)| k.warps() * t)
            .sum();
        let mut m = MemPipeline {
            l1d: L1d::new(&p),
            p,
            kernels: w.kernels.clone(),
            tbs_of: w.tbs.clone(),
            seed: w.seed,
            n,
            t: 0,
            warps: vec![Warp::default(); total_warps as usize],
            tbs: vec![],
            order: Default::default(),
            last: [None; SCHEDULERS],
            next_gid: vec![0; n],
            stream_line: vec![0; n],
            mem_reg: None,
            disp: None,
            disp_next: 0,
            disp_load: 0,
            loads: Vec::with_capacity(1024),
            load_free: Vec::with_capacity(1024),
            rq: VecDeque::with_capacity(4096),
            lm_queue: VecDeque::with_capacity(1024),
            lm_next: 0,
            fills: VecDeque::with_capacity(1024),
            ctl,
            ev: CtlIn::new(&cp),
            out: CtlOut::new(&cp),
            outcome: Outcome::Idle,
            issued: [0; MAX_KERNELS],
            sched_view: [SchedView::default(); SCHEDULERS],
            counters: Default::default(),
            lsu_stall_cycles: 0,
            mem_issue_cycles: 0,
            pending_relaunch: 0,
        };
        for o in &mut m.order {
            o.reserve(total_warps as usize);
        }
        // The SMIL configuration, the same every cycle (a limit of 0 or none: unlimited).
        for k in 0..n {
            let limit = m.p.smil_limit.get(k).copied().unwrap_or(0);
            m.ev.smil_limit[k] = u64::from(limit);
            m.ev.smil_unl[k] = limit == 0;
        }
        // Initial launch: one TB per kernel in turn (kernel 0 first), until each has its count.
        let mut next_warp = 0u16;
        let most = w.tbs.iter().copied().max().unwrap_or(0);
        for round in 0..most {
            for k in 0..n {
                if round < w.tbs[k] {
                    let warps = m.kernels[k].warps() as u16;
                    m.tbs.push(Tb {
                        kernel: k as u8,
                        first_warp: next_warp,
                        warps,
                        running: 0,
                        relaunch_at: None,
                    });
                    next_warp += warps;
                    let tb = m.tbs.len() - 1;
                    m.launch(tb);
                }
            }
        }
        Ok(m)
    }

    /// Starts a new TB in slot `tb`: fresh warps, youngest in GTO order.
    fn launch(&mut self, tb: usize) {
        let Tb {
            kernel,
            first_warp,
            warps,
            ..
        } = self.tbs[tb];
        let k = kernel as usize;
        for i in 0..warps {
            let slot = first_warp + i;
            let gid = self.next_gid[k];
            self.next_gid[k] += 1;
            let len = match &self.kernels[k].body {
                Body::Synth(s) => s.iters * (s.cinst + 1),
                Body::Streams(st) => st[i as usize].len() as u32,
            };
            let seed = mix(name_hash(&self.kernels[k].name) ^ mix(gid ^ mix(self.seed)));
            self.warps[slot as usize] = Warp {
                live: true,
                kernel,
                tb: tb as u16,
                gid,
                pc: 0,
                len,
                ready_at: 0,
                last_seq: u32::MAX,
                outstanding: 0,
                mem_next: false,
                rng: seed | 1,
            };
            self.warps[slot as usize].mem_next = self.is_mem(slot as usize, 0);
            let s = slot as usize % SCHEDULERS;
            let order = &mut self.order[s];
            match self.p.sched {
                Sched::Gto => {
                    order.retain(|&w| w != slot);
                    order.push(slot);
                }
                Sched::Lrr => {
                    if let Err(at) = order.binary_search(&slot) {
                        order.insert(at, slot);
                    }
                }
            }
        }
        self.tbs[tb].running = warps;
        self.tbs[tb].relaunch_at = None;
        // Every program has an instruction (workload.rs refuses empty streams), so a TB
        // finishes only through its warps (`maybe_finish`).
    }

    /// The current cycle (the next one [`MemPipeline::step`] runs).
    pub fn cycle(&self) -> u64 {
        self.t
    }

    pub fn params(&self) -> &PipeParams {
        &self.p
    }

    /// The control (read-only: its registers for reports and checks).
    pub fn ctl(&self) -> &MemIssueCtl {
        &self.ctl
    }

    /// This cycle's control inputs (after [`MemPipeline::step`]: the cycle just run).
    pub fn events(&self) -> &CtlIn {
        &self.ev
    }

    /// The control's `grant` and `mem_ok` of the cycle just run (its other outputs unset).
    pub fn ctl_out(&self) -> &CtlOut {
        &self.out
    }

    /// The L1D outcome of the cycle just run.
    pub fn outcome(&self) -> Outcome {
        self.outcome
    }

    /// The L1D (read-only).
    pub fn l1d(&self) -> &L1d {
        &self.l1d
    }

    /// Whether the MEM register holds an instruction.
    pub fn mem_reg_busy(&self) -> bool {
        self.mem_reg.is_some()
    }

    /// Whether the dispatch register holds an instruction.
    pub fn lsu_busy(&self) -> bool {
        self.disp.is_some()
    }

    /// Raw counters of kernel `k`.
    pub fn counters(&self, k: usize) -> &Counters {
        &self.counters[k]
    }

    /// Warp instructions issued in the cycle just run, per kernel.
    pub fn issued(&self) -> [u8; MAX_KERNELS] {
        self.issued
    }

    /// Each scheduler's view of the cycle just run.
    pub fn sched_view(&self) -> &[SchedView; SCHEDULERS] {
        &self.sched_view
    }

    /// The dispatch register now.
    pub fn dispatch_view(&self) -> Option<DispatchView> {
        self.disp.map(|d| DispatchView {
            kernel: d.kernel,
            warp: d.warp,
            seq: d.seq,
            next: self.disp_next,
            n: d.n,
        })
    }

    /// Response-queue occupancy.
    pub fn rq_len(&self) -> usize {
        self.rq.len()
    }

    /// Whether warp `w`'s next instruction is ready and a memory instruction (`Some(true)`),
    /// ready and compute (`Some(false)`), or not ready (`None`).
    fn next_kind(&self, w: usize) -> Option<bool> {
        let warp = &self.warps[w];
        if !warp.live || warp.pc >= warp.len || warp.ready_at > self.t {
            return None;
        }
        Some(warp.mem_next)
    }

    /// Whether instruction `pc` of warp `w` is a memory instruction.
    fn is_mem(&self, w: usize, pc: u32) -> bool {
        let warp = &self.warps[w];
        match &self.kernels[warp.kernel as usize].body {
            Body::Synth(s) => pc % (s.cinst + 1) == s.cinst,
            Body::Streams(st) => {
                let tbw = w - self.tbs[warp.tb as usize].first_warp as usize;
                st[tbw]
                    .get(pc as usize)
                    .is_some_and(|i| i.op != Op::Compute)
            }
        }
    }

    /// Whether instruction `pc` of warp `w` depends on its predecessor.
    fn depends(&self, w: usize, pc: u32) -> bool {
        let warp = &self.warps[w];
        match &self.kernels[warp.kernel as usize].body {
            Body::Synth(s) => {
                let pos = pc % (s.cinst + 1);
                // The first compute after a load, and the memory instruction after the last
                // compute (or after the previous memory instruction when cinst = 0).
                (pos == 0 && pc > 0) || pos == s.cinst
            }
            Body::Streams(st) => {
                let tbw = w - self.tbs[warp.tb as usize].first_warp as usize;
                st[tbw].get(pc as usize).is_some_and(|i| i.dep)
            }
        }
    }

    /// Runs one cycle in the phase order of §1.3.
    pub fn step(&mut self) {
        let t = self.t;
        crate::blocks::mem_issue_ctl::idle(&mut self.ev);
        self.outcome = Outcome::Idle;
        self.issued = [0; MAX_KERNELS];
        if self.pending_relaunch > 0 {
            self.relaunch();
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
        if let Some(id) = self.rq.pop_front() {
            let l = &mut self.loads[id as usize];
            l.pending -= 1;
            if l.pending == 0 && l.left {
                let Load {
                    kernel, warp, seq, ..
                } = *l;
                self.load_free.push(id);
                self.complete(kernel, warp, seq, t);
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
                self.complete(d.kernel, d.warp, d.seq, t);
            } else {
                let id = self.disp_load;
                let l = &mut self.loads[id as usize];
                l.left = true;
                if l.pending == 0 {
                    self.load_free.push(id);
                    self.complete(d.kernel, d.warp, d.seq, t);
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

    /// A memory instruction of warp `w` completes in cycle `t` (§1.5).
    fn complete(&mut self, kernel: u8, w: u16, seq: u32, t: u64) {
        let k = kernel as usize;
        self.ev.done[k] += 1;
        self.counters[k].mem_completed += 1;
        let warp = &mut self.warps[w as usize];
        warp.outstanding -= 1;
        if warp.last_seq == seq && warp.ready_at == NEVER {
            warp.ready_at = t + 1;
        }
        self.maybe_finish(w as usize, t);
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

    fn advance(&mut self, s: usize, w: usize, t: u64, mem: bool) {
        let pc = self.warps[w].pc;
        let dep_next = self.depends(w, pc + 1);
        let mem_next = self.is_mem(w, pc + 1);
        let alu = u64::from(self.p.alu_lat);
        let warp = &mut self.warps[w];
        warp.last_seq = pc;
        warp.pc = pc + 1;
        warp.mem_next = mem_next;
        warp.ready_at = match (dep_next, mem) {
            (false, _) => t + 1,
            (true, false) => t + alu,
            (true, true) => NEVER,
        };
        let k = warp.kernel as usize;
        self.issued[k] += 1;
        self.last[s] = Some(w as u16);
    }

    fn issue_compute(&mut self, s: usize, w: usize, t: u64) {
        let k = self.warps[w].kernel as usize;
        self.counters[k].compute += 1;
        self.advance(s, w, t, false);
        self.maybe_finish(w, t);
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
                        region | 1 << 52 | self.stream_line[k]
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
    }

    /// Keeps the MILG limit summary (§4.3 registers read from the control after the edge).
    fn track_milg(&mut self) {
        for k in 0..self.n {
            let (mil, unl) = (self.ctl.mil(k), self.ctl.unl(k));
            let h = &mut self.counters[k].mil;
            if self.t > 0 && (mil != h.mil_final || unl != h.unl_final) {
                h.changes += 1;
            }
            h.mil_final = mil;
            h.unl_final = unl;
            if unl {
                h.unl_cycles += 1;
            } else {
                h.mil_min = Some(h.mil_min.map_or(mil, |m| m.min(mil)));
                h.mil_max = Some(h.mil_max.map_or(mil, |m| m.max(mil)));
            }
            h.inflight_max = h.inflight_max.max(self.ctl.inflight(k));
        }
    }

    /// The cycle just run as a record.
    pub fn record(&self) -> CycleRecord {
        let mut r = CycleRecord {
            t: self.t - 1,
            slot_free: self.ev.slot_free,
            lsu_busy: self.disp.is_some() || self.outcome != Outcome::Idle,
            l1d_outcome: self.outcome as u8,
            mshr: self.l1d.mshrs_used() as u32,
            mq: self.l1d.mq_len() as u32,
            rq: self.rq.len() as u32,
            mem_req: mask(&self.ev.mem_req),
            issue: mask(&self.ev.issue),
            acc: mask(&self.ev.acc),
            first: mask(&self.ev.first),
            fail: mask(&self.ev.fail),
            grant: mask(&self.out.grant),
            mem_ok: mask(&self.out.mem_ok),
            issued: self.issued,
            ..CycleRecord::default()
        };
        for k in 0..self.n {
            r.done[k] = self.ev.done[k] as u8;
            r.inflight[k] = self.ctl.inflight(k);
            r.peak[k] = self.ctl.peak(k);
            r.rsfail[k] = self.ctl.rsfail(k);
            r.reqcnt[k] = self.ctl.reqcnt(k);
            r.mil[k] = self.ctl.mil(k);
            r.unl |= u8::from(self.ctl.unl(k)) << k;
        }
        r
    }

    /// The statistics so far (§1.7).
    pub fn stats(&self) -> PipeStats {
        let cycles = self.t.max(1);
        let pct = |x: u64| 100.0 * x as f64 / cycles as f64;
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let kernels: Vec<KernelStats> = (0..self.n)
            .map(|k| {
                let c = &self.counters[k];
                let acc = c.accesses();
                let missed = c.misses
                    + if self.p.miss_counts_pending {
                        c.hit_reserved
                    } else {
                        0
                    };
                let wi = c.compute + c.mem_issued;
                KernelStats {
                    name: self.kernels[k].name.clone(),
                    tbs: self.tbs_of[k],
                    warp_instructions: wi,
                    compute_instructions: c.compute,
                    mem_instructions: c.mem_issued,
                    mem_completed: c.mem_completed,
                    ipc: wi as f64 / cycles as f64,
                    accesses: acc,
                    hits: c.hits,
                    hit_reserved: c.hit_reserved,
                    misses: c.misses,
                    writes: c.writes,
                    l1d_miss_rate: ratio(missed, acc - c.writes),
                    rsfail: c.causes.total(),
                    l1d_rsfail_rate: ratio(c.causes.total(), acc),
                    rsfail_by_cause: c.causes,
                    lsu_stall_cycles: c.lsu_stall_cycles,
                    lsu_stall_pct: pct(c.lsu_stall_cycles),
                    compute_util: c.compute as f64 / (SCHEDULERS as f64 * cycles as f64),
                    cinst_per_minst: ratio(c.compute, c.mem_issued),
                    req_per_minst: ratio(acc, c.first_accesses),
                    accesses_per_kcycle: 1000.0 * acc as f64 / cycles as f64,
                    tbs_completed: c.tbs_completed,
                    milg: c.mil,
                }
            })
            .collect();
        let wi: u64 = kernels.iter().map(|k| k.warp_instructions).sum();
        let compute: u64 = kernels.iter().map(|k| k.compute_instructions).sum();
        PipeStats {
            cycles: self.t,
            scheme: self.p.scheme,
            warp_instructions: wi,
            ipc: wi as f64 / cycles as f64,
            lsu_stall_cycles: self.lsu_stall_cycles,
            lsu_stall_pct: pct(self.lsu_stall_cycles),
            compute_util: compute as f64 / (SCHEDULERS as f64 * cycles as f64),
            mem_issue_cycles: self.mem_issue_cycles,
            kernels,
        }
    }
}

/// The waveform's signals (docs §5 "VCD signals"): per SM `slot_free`, `lsu_busy`,
/// `l1d_outcome[3:0]`, occupancies, and the control's ports and registers, packed per kernel
/// (kernel 0 lowest).
pub fn wave_layout(p: &PipeParams, n: usize) -> Layout {
    let out = |name: &str, width: usize| Port {
        name: name.into(),
        dir: Dir::Out,
        width,
    };
    let ports = vec![
        out("slot_free", 1),
        out("lsu_busy", 1),
        out("l1d_outcome", 4),
        out("mshr_occupancy", 13),
        out("mq_occupancy", 11),
        out("rq_occupancy", 16),
        out("mem_req", n),
        out("mem_ok", n),
        out("grant", n),
        out("issue", n),
        out("done", 2 * n),
        out("acc", n),
        out("first", n),
        out("fail", n),
        out("inflight", n * p.inflight_bits as usize),
        out("peak", n * p.inflight_bits as usize),
        out("rsfail", n * p.rsfail_bits as usize),
        out("reqcnt", n * p.reqcnt_bits as usize),
        out("mil", n * p.inflight_bits as usize),
        out("unl", n),
    ];
    Layout::new(&ports)
}

/// Appends cycle record `r` to `rows` in the layout of [`wave_layout`].
pub fn push_wave(rows: &mut WaveRows, layout: &Layout, p: &PipeParams, n: usize, r: &CycleRecord) {
    rows.push_with(r.t, false, |row| {
        row.model.resize(layout.out_words, 0);
        let buf = &mut row.model;
        let mut put = |name: &str, v: u64| layout.out_slot(name).set(buf, v);
        put("slot_free", r.slot_free.into());
        put("lsu_busy", r.lsu_busy.into());
        put("l1d_outcome", r.l1d_outcome.into());
        put("mshr_occupancy", r.mshr.into());
        put("mq_occupancy", r.mq.into());
        put("rq_occupancy", r.rq.into());
        put("mem_req", r.mem_req.into());
        put("mem_ok", r.mem_ok.into());
        put("grant", r.grant.into());
        put("issue", r.issue.into());
        put("acc", r.acc.into());
        put("first", r.first.into());
        put("fail", r.fail.into());
        put("unl", r.unl.into());
        let fields: [(&str, usize, &[u32; MAX_KERNELS]); 5] = [
            ("inflight", p.inflight_bits as usize, &r.inflight),
            ("peak", p.inflight_bits as usize, &r.peak),
            ("rsfail", p.rsfail_bits as usize, &r.rsfail),
            ("reqcnt", p.reqcnt_bits as usize, &r.reqcnt),
            ("mil", p.inflight_bits as usize, &r.mil),
        ];
        for (name, bits, v) in fields {
            let slot = layout.out_slot(name);
            for (k, &x) in v.iter().enumerate().take(n) {
                slot.set_field(buf, k * bits, bits, x.into());
            }
        }
        let done = layout.out_slot("done");
        for k in 0..n {
            done.set_field(buf, 2 * k, 2, r.done[k].into());
        }
    });
}

/// Runs workload `w` for its cycles; `each` sees every cycle's record (built only if given);
/// `rows` keeps the waveform if given.
pub fn run(
    w: &Workload,
    mut each: Option<&mut dyn FnMut(&CycleRecord)>,
    mut rows: Option<&mut WaveRows>,
) -> Result<PipeStats, String> {
    let mut m = MemPipeline::new(w)?;
    let n = w.kernels.len();
    let layout = rows.as_ref().map(|_| wave_layout(&w.params, n));
    let recording = each.is_some() || rows.is_some();
    for _ in 0..w.cycles {
        m.step();
        if recording {
            let r = m.record();
            if let Some(f) = each.as_deref_mut() {
                f(&r);
            }
            if let (Some(rows), Some(layout)) = (rows.as_deref_mut(), &layout) {
                push_wave(rows, layout, &w.params, n, &r);
            }
        }
    }
    Ok(m.stats())
}
