//! The thread-block-residency SM model of scratchpad sharing (docs/scratchpad-sharing.md §1,
//! §5; Jatala et al., seed 001), written from the spec: TB slots filled by the launch
//! calculator (§1.2), slot pairing (§1.3), the layout and the private-offset check (§1.4–1.5),
//! per-pair locks with NACK and retry and the drain counters (§2.4), relssp and exit events
//! (§3), OWF and the baselines over NSCHED schedulers (§4), latencies and `cpl` (§5), TBs
//! retiring and new TBs taking the freed slots.
//!
//! Every cycle follows the spec's in-cycle order (§2.1): class → pick → access check →
//! grant/NACK → relssp/exit events of issued instructions → `done` → release → edge. Cycle 0
//! launches the first TBs; warps issue from the cycle after their launch, so Fig. 5's cycle 1 is
//! the first issue cycle. The hot path allocates nothing; per-cycle records are built only when
//! a caller asks for them.

use crate::kernel::{Instr, Kernel, Op, REGS};
use crate::launch::{self, Launch, Ratio};
use serde::Serialize;
use smrtl_hdl::params::{declared_by, Allowed, BlockParams, ParamError};
use smrtl_hdl::sharing::{pair, Class, FreeClass, Policy, Rank, Sched, Shape, TWO_LEVEL_GROUP};
use std::fmt;

smrtl_hdl::block_params! {
    /// The SM model's parameters: the SM shape, the lock and scheduling switches ([C] in the
    /// spec) and the model-only launch threshold and latencies (§1.2, §5).
    #[derive(Eq)]
    pub struct SmParams {
        ..shape: Shape;
        /// Lock action when the owner finishes (§2.4).
        policy: Policy = Policy::Transfer, "POLICY", Allowed::Names(&["TRANSFER", "FREE"]);
        /// OWF class of a shared TB whose pair lock is free (§2.5).
        free_class: FreeClass = FreeClass::Nonowner, "FREE_CLASS", Allowed::Names(&["NONOWNER", "UNSHARED"]);
        /// Class → priority map of OWF (§4).
        rank: Rank = Rank::Owf3, "RANK", Allowed::Names(&["OWF3", "OWF2", "UWF"]);
        /// Greedy-within-class issue under OWF (§4).
        greedy: bool = false, "GREEDY", Allowed::Bool;
        /// Warp scheduler (§4).
        sched: Sched = Sched::Owf, "SCHED", Allowed::Names(&["OWF", "LRR", "GTO", "TWO_LEVEL"]);
        /// Dynamic warp id (age) width.
        age_w: u32 = 16, "AGE_W", Allowed::Range(2, 32);
        /// Width of the per-slot in-flight counter.
        pend_w: u32 = 6, "PEND_W", Allowed::Range(1, 16);
        /// Sharing threshold: a shared TB's private fraction (§1.1; the paper's evaluation: 1/10).
        t: Ratio = Ratio { num: 1, den: 10 }, "t", Allowed::Json("a fraction in (0, 1): N/D or a decimal"), "e.g. --set t=1/10";
        /// Granule of the private size u, in bytes (§1.2).
        align: u32 = 4, "ALIGN", Allowed::Range(1, 4096);
        /// TBs the register file allows (0: no limit).
        reg_limit: u32 = 0, "reg_limit", Allowed::Range(0, 1024);
        /// ALU and MOV latency (§5).
        lat_alu: u32 = 1, "lat_alu", Allowed::Range(1, 64);
        /// Scratchpad access latency; a granted shared-region access raises `cpl` in cycle
        /// issue + lat − 1 (§5).
        lat_shared: u32 = 5, "lat_shared", Allowed::Range(2, 64);
        /// Global access latency (§5: mid of the paper's 400–800 range).
        lat_global: u32 = 600, "lat_global", Allowed::Range(1, 100_000);
    }
}

impl BlockParams for SmParams {
    const BLOCK: &'static str = "sharing_core";

    fn presets() -> Vec<(&'static str, Self)> {
        vec![("paper", SmParams::default())]
    }

    fn check(&self) -> Result<(), ParamError> {
        self.shape.check()
    }
}

/// Which parameters the SM model shares with the RTL blocks (for `smrtl list`).
pub fn declarations() -> Vec<smrtl_hdl::params::ParamDecl> {
    declared_by::<SmParams>()
}

/// Why a kernel cannot run, or stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SmError {
    /// The kernel does not fit the SM (a one-line reason).
    Kernel(String),
    /// A TB whose live threads all ran relssp acquired a lock (§2.4 `err_proto`): the
    /// compiler's safety condition is violated.
    Protocol { cycle: u64, slot: u32, tb: u32 },
    /// No warp can ever issue again.
    Deadlock { cycle: u64 },
    /// Still running after [`MAX_CYCLES`].
    CycleLimit,
}

impl fmt::Display for SmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SmError::Kernel(m) => f.write_str(m),
            SmError::Protocol { cycle, slot, tb } => write!(
                f,
                "cycle {cycle}: TB {tb} (slot {slot}) acquired its pair's lock after all its live threads ran relssp (err_proto)"
            ),
            SmError::Deadlock { cycle } => {
                write!(f, "cycle {cycle}: deadlock, no warp can issue again")
            }
            SmError::CycleLimit => write!(f, "still running after {MAX_CYCLES} cycles"),
        }
    }
}

/// Most schedulers (NSCHED's largest value).
const MAX_SCHED: usize = 4;

/// Most cycles of one kernel.
pub const MAX_CYCLES: u64 = 100_000_000;

/// Lock releases by cause (§2.4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Releases {
    /// All live threads of the owner ran relssp.
    pub relssp: u64,
    /// The owner finished and the lock was freed.
    pub finish: u64,
    /// The owner finished and the lock went to its live partner (`TRANSFER`).
    pub transfer: u64,
}

/// One TB's life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TbLife {
    pub tb: u32,
    pub slot: u32,
    /// Launch cycle (its warps issue from the next one).
    pub launch: u64,
    /// Cycle its last thread exited.
    pub finish: u64,
}

/// What a kernel run measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SmStats {
    /// Cycle the last TB finished.
    pub cycles: u64,
    /// Issued warp instructions × their live threads.
    pub thread_instructions: u64,
    pub warp_instructions: u64,
    pub ipc: f64,
    pub resident_tbs_max: u32,
    pub tbs_completed: u32,
    pub nacks: u64,
    pub lock_acquires: u64,
    pub lock_releases: Releases,
    /// The launch calculator's answer for this kernel (§1.2).
    pub launch: Launch,
    /// Each TB, by TB id.
    pub tbs: Vec<TbLife>,
}

/// What happened to a scheduler's pick.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Issue,
    Nack,
}

/// One scheduler's pick in a cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Pick {
    pub sched: u32,
    pub warp: u32,
    pub tb: u32,
    pub slot: u32,
    pub pc: u32,
    pub op: Op,
    pub outcome: Outcome,
}

/// A lock event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LockEvent {
    pub pair: u32,
    pub slot: u32,
    /// `acquire`, `relssp`, `finish` or `transfer` (to the partner).
    pub cause: &'static str,
}

/// One cycle, as `--records` writes it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CycleRecord {
    pub cycle: u64,
    pub picks: Vec<Pick>,
    pub locks: Vec<LockEvent>,
    /// TBs whose slot retired at the end of the cycle, and TBs launched into freed slots (their
    /// warps are valid from the next cycle).
    pub retired: Vec<u32>,
    pub launched: Vec<u32>,
}

/// A warp slot.
#[derive(Clone, Copy, Debug)]
struct Warp {
    valid: bool,
    slot: u32,
    /// Index of the warp in its TB (its stream).
    index: u32,
    pc: u32,
    /// Threads launched and not exited.
    live: u64,
    age: u64,
    /// First cycle it may issue.
    start: u64,
    at_bar: bool,
    ready_at: [u64; REGS],
}

impl Warp {
    const EMPTY: Warp = Warp {
        valid: false,
        slot: 0,
        index: 0,
        pc: 0,
        live: 0,
        age: 0,
        start: 0,
        at_bar: false,
        ready_at: [0; REGS],
    };
}

/// The SM running one kernel.
pub struct SharingSm<'k> {
    p: SmParams,
    k: &'k Kernel,
    wpt: u32,
    // --- configuration (§2.2) ---
    shsm: bool,
    u: u32,
    shtb: Vec<u32>,
    base: Vec<u32>,
    none: u32,
    // --- TB slots ---
    slot_tb: Vec<Option<u32>>,
    next_tb: u32,
    age_next: u64,
    // --- warps and their release bits (§3) ---
    warps: Vec<Warp>,
    rbits: Vec<u64>,
    // --- locks and drain (§2.4) ---
    lock: Vec<(bool, u32)>,
    lock_nx: Vec<(bool, u32)>,
    pend: Vec<u32>,
    /// `cpl` schedule: port p's access issued in c completes at `(c + lat − 1) mod lat`.
    cpl: Vec<Option<u32>>,
    // --- schedulers (§4) ---
    last: Vec<(bool, usize)>,
    now: u64,
    stats: SmStats,
    idle_cycles: u32,
    busy_until: u64,
    // --- per-cycle scratch, sized once ---
    picks: Vec<Option<usize>>,
    granted: Vec<bool>,
    exm: Vec<u64>,
    rsm: Vec<u64>,
    done: Vec<bool>,
    tb_empty: Vec<bool>,
    pend_nx: Vec<u32>,
}

impl<'k> SharingSm<'k> {
    /// Launches `k` on an SM with params `p` (validated): cycle 0 fills the first slots.
    pub fn new(p: &SmParams, k: &'k Kernel) -> Result<SharingSm<'k>, SmError> {
        let s = &p.shape;
        k.check(s.lanes).map_err(|e| SmError::Kernel(e.0))?;
        let wpt = k.warps_per_tb(s.lanes);
        if wpt > s.warps {
            return Err(SmError::Kernel(format!(
                "a TB of {} threads needs {wpt} warps; the SM has W = {}",
                k.threads, s.warps
            )));
        }
        if k.smem > s.smem {
            return Err(SmError::Kernel(format!(
                "a TB needs {} scratchpad bytes; the SM has R = {}",
                k.smem, s.smem
            )));
        }
        let launch = launch::launch(&launch::Inputs {
            smem: s.smem as u64,
            tb_smem: k.smem as u64,
            tb_threads: (wpt * s.lanes) as u64,
            max_tbs: s.slots as u64,
            max_threads: (s.warps * s.lanes) as u64,
            t: p.t,
            reg_limit: (p.reg_limit > 0).then_some(p.reg_limit as u64),
            align: p.align as u64,
        });
        if launch.n == 0 {
            return Err(SmError::Kernel("no TB fits on the SM".into()));
        }
        let (t, kp) = (s.slots as usize, s.kp());
        let none = s.none() as u32;
        let (mut shtb, mut base) = (vec![none; t], vec![0u32; t]);
        let (m_sp, pairs, r_tb, u) = (
            launch.m_sp as u32,
            launch.pairs as u32,
            k.smem,
            launch.u as u32,
        );
        for slot in 0..launch.n as u32 {
            let sl = slot as usize;
            if launch.shsm == 1 && slot < pairs {
                shtb[sl] = m_sp + slot;
                base[sl] = slot * (r_tb + u);
            } else if launch.shsm == 1 && slot >= m_sp {
                let k = slot - m_sp;
                shtb[sl] = k;
                base[sl] = k * (r_tb + u) + u;
            } else if launch.shsm == 1 {
                base[sl] = pairs * (r_tb + u) + (slot - pairs) * r_tb;
            } else {
                base[sl] = slot * r_tb;
            }
        }
        let mut lock = vec![(false, 0u32); kp];
        for l in &k.locks {
            if l.pair as usize >= kp || l.owner >= s.slots {
                return Err(SmError::Kernel(format!(
                    "lock preset pair {} owner {}; allowed: pair 0..{kp}, owner 0..{}",
                    l.pair, l.owner, s.slots
                )));
            }
            lock[l.pair as usize] = (true, l.owner);
        }
        let nsched = s.nsched as usize;
        let mut sm = SharingSm {
            p: p.clone(),
            k,
            wpt,
            shsm: launch.shsm == 1,
            u,
            shtb,
            base,
            none,
            slot_tb: vec![None; t],
            next_tb: 0,
            age_next: 0,
            warps: vec![Warp::EMPTY; s.warps as usize],
            rbits: vec![0; s.warps as usize],
            lock_nx: lock.clone(),
            lock,
            pend: vec![0; t],
            cpl: vec![None; nsched * p.lat_shared as usize],
            last: vec![(false, 0); nsched],
            now: 0,
            stats: SmStats {
                cycles: 0,
                thread_instructions: 0,
                warp_instructions: 0,
                ipc: 0.0,
                resident_tbs_max: 0,
                tbs_completed: 0,
                nacks: 0,
                lock_acquires: 0,
                lock_releases: Releases::default(),
                launch,
                tbs: Vec::with_capacity(k.grid as usize),
            },
            idle_cycles: 0,
            busy_until: 0,
            picks: vec![None; nsched],
            granted: vec![false; nsched],
            exm: vec![0; s.warps as usize],
            rsm: vec![0; s.warps as usize],
            done: vec![false; t],
            tb_empty: vec![false; t],
            pend_nx: vec![0; t],
        };
        for slot in 0..launch.n as u32 {
            if sm.next_tb < k.grid {
                sm.start_tb(slot, 0);
            }
        }
        sm.note_residency();
        Ok(sm)
    }

    /// The launch calculator's answer and the configured layout: `(shsm, u, shtb, base)`.
    pub fn config(&self) -> (bool, u32, &[u32], &[u32]) {
        (self.shsm, self.u, &self.shtb, &self.base)
    }

    /// Puts the next TB into `slot`; its warps are valid from `cycle` and issue after it.
    fn start_tb(&mut self, slot: u32, cycle: u64) -> u32 {
        let tb = self.next_tb;
        self.next_tb += 1;
        self.slot_tb[slot as usize] = Some(tb);
        let lanes = self.p.shape.lanes;
        for i in 0..self.wpt {
            let w = (slot * self.wpt + i) as usize;
            self.warps[w] = Warp {
                valid: true,
                slot,
                index: i,
                pc: 0,
                live: self.k.live_mask(i, lanes),
                age: self.age_next & mask(self.p.age_w),
                start: cycle + 1,
                at_bar: false,
                ready_at: [0; REGS],
            };
            self.rbits[w] = 0; // warp_launch clears R (§3)
            self.age_next += 1;
        }
        self.stats.tbs.push(TbLife {
            tb,
            slot,
            launch: cycle,
            finish: 0,
        });
        tb
    }

    fn note_residency(&mut self) {
        let n = self.slot_tb.iter().filter(|t| t.is_some()).count() as u32;
        self.stats.resident_tbs_max = self.stats.resident_tbs_max.max(n);
    }

    /// Whether every TB has run and retired.
    pub fn finished(&self) -> bool {
        self.next_tb == self.k.grid && self.slot_tb.iter().all(Option::is_none)
    }

    /// `unsh(s)`: the slot accesses its whole region directly (§2.3).
    fn unshared(&self, s: u32) -> bool {
        !self.shsm || self.shtb[s as usize] == self.none
    }

    /// The lock entry of a shared slot.
    fn pair_of(&self, s: u32) -> usize {
        pair(s as u64, self.shtb[s as usize] as u64) as usize
    }

    /// Warp class from the registered lock state (§2.5).
    fn class(&self, w: usize) -> Class {
        let s = self.warps[w].slot;
        if self.unshared(s) {
            return Class::Unshared;
        }
        match self.lock[self.pair_of(s)] {
            (true, o) if o == s => Class::Owner,
            (true, _) => Class::Nonowner,
            (false, _) => self.p.free_class.class(),
        }
    }

    /// The warp's next instruction, if it may issue in the current cycle (§5 `ready`).
    fn ready(&self, w: usize) -> bool {
        let wp = &self.warps[w];
        if !wp.valid || wp.live == 0 || wp.at_bar || self.now < wp.start {
            return false;
        }
        let Some(ins) = self.k.stream(wp.index as usize).get(wp.pc as usize) else {
            return false;
        };
        let srcs = ins.src_mask();
        (0..REGS)
            .filter(|r| srcs >> r & 1 == 1)
            .all(|r| wp.ready_at[r] <= self.now)
    }

    /// Scheduler `p`'s pick (§4): the warp slot, or none.
    fn pick(&self, p: usize) -> Option<usize> {
        let ns = self.p.shape.nsched as usize;
        let ws = self.p.shape.ws();
        let warp = |j: usize| j * ns + p;
        let ready = |j: usize| self.ready(warp(j));
        let (last_valid, last) = self.last[p];
        let oldest = |key: &dyn Fn(usize) -> u64| {
            (0..ws)
                .filter(|&j| ready(j))
                .min_by_key(|&j| (key(j), self.warps[warp(j)].age, j))
        };
        let circular = |from: usize, range: std::ops::Range<usize>| {
            let n = range.len();
            (0..n)
                .map(|i| range.start + (from - range.start + i) % n)
                .find(|&j| ready(j))
        };
        match self.p.sched {
            Sched::Owf => {
                let rank = |j: usize| self.p.rank.of(self.class(warp(j)));
                let best = oldest(&rank)?;
                if self.p.greedy && last_valid && ready(last) && rank(last) == rank(best) {
                    Some(last)
                } else {
                    Some(best)
                }
            }
            Sched::Gto if last_valid && ready(last) => Some(last),
            Sched::Gto => oldest(&|_| 0),
            Sched::Lrr => circular(if last_valid { (last + 1) % ws } else { 0 }, 0..ws),
            Sched::TwoLevel => {
                let g = TWO_LEVEL_GROUP;
                let groups = ws.div_ceil(g);
                let group = |i: usize| i * g..((i + 1) * g).min(ws);
                let cur = if last_valid { last / g } else { 0 };
                let from = if last_valid {
                    let r = group(cur);
                    r.start + (last + 1 - r.start) % r.len()
                } else {
                    0
                };
                circular(from, group(cur)).or_else(|| {
                    (1..groups)
                        .map(|i| group((cur + i) % groups))
                        .find_map(|r| r.clone().find(|&j| ready(j)))
                })
            }
        }
        .map(warp)
    }

    /// Runs one cycle; `rec`, when given, receives what happened.
    pub fn cycle(&mut self, mut rec: Option<&mut CycleRecord>) -> Result<(), SmError> {
        let c = self.now;
        if let Some(r) = rec.as_deref_mut() {
            r.cycle = c;
            r.picks.clear();
            r.locks.clear();
            r.retired.clear();
            r.launched.clear();
        }
        let ns = self.p.shape.nsched as usize;
        let lanes = self.p.shape.lanes as usize;

        // --- pick (classes read the registered locks) ---------------------------------------
        for p in 0..ns {
            self.picks[p] = self.pick(p);
        }
        for p in 0..ns {
            if let Some(w) = self.picks[p] {
                self.last[p] = (true, w / ns);
            }
        }

        // --- access check and grant/NACK (§1.5, §2.4) ----------------------------------------
        // needs_lock per port; acquisitions race per pair, the lower slot winning.
        let mut needs = [false; MAX_SCHED];
        for p in 0..ns {
            let Some(w) = self.picks[p] else { continue };
            let wp = &self.warps[w];
            let ins = &self.k.stream(wp.index as usize)[wp.pc as usize];
            if ins.op.is_shared() && !self.unshared(wp.slot) {
                let off = ins.off.as_ref().expect("shared access has offsets");
                needs[p] = (0..lanes).any(|l| wp.live >> l & 1 == 1 && off.lane(l) >= self.u);
            }
        }
        let mut acq = [false; MAX_SCHED];
        for p in 0..ns {
            let Some(w) = self.picks[p] else { continue };
            let s = self.warps[w].slot;
            let k = if needs[p] { self.pair_of(s) } else { 0 };
            let own = needs[p] && self.lock[k] == (true, s);
            let want = |q: usize| {
                needs[q] && !self.lock[k].0 && {
                    let sq = self.warps[self.picks[q].expect("needs a pick")].slot;
                    self.pair_of(sq) == k
                }
            };
            acq[p] = want(p)
                && (0..ns)
                    .filter(|&q| want(q))
                    .all(|q| self.warps[self.picks[q].expect("wants")].slot >= s);
            self.granted[p] = !needs[p] || own || acq[p];
        }

        // --- issue granted instructions; events of this cycle (§3, §5) ------------------------
        self.exm.fill(0);
        self.rsm.fill(0);
        self.pend_nx.copy_from_slice(&self.pend);
        let lat = self.p.lat_shared as usize;
        let mut progress = false;
        for p in 0..ns {
            let Some(w) = self.picks[p] else { continue };
            let (slot, index, pc, live) = {
                let wp = &self.warps[w];
                (wp.slot, wp.index, wp.pc, wp.live)
            };
            let ins: &Instr = &self.k.stream(index as usize)[pc as usize];
            if let Some(r) = rec.as_deref_mut() {
                r.picks.push(Pick {
                    sched: p as u32,
                    warp: w as u32,
                    tb: self.slot_tb[slot as usize].expect("valid warp has a TB"),
                    slot,
                    pc,
                    op: ins.op,
                    outcome: if self.granted[p] {
                        Outcome::Issue
                    } else {
                        Outcome::Nack
                    },
                });
            }
            if !self.granted[p] {
                self.stats.nacks += 1;
                continue;
            }
            progress = true;
            let last_of_stream = pc as usize + 1 == self.k.stream(index as usize).len();
            let op_lat = match ins.op {
                Op::Alu | Op::Mov => self.p.lat_alu,
                o if o.is_shared() => self.p.lat_shared,
                o if o.is_global() => self.p.lat_global,
                _ => 1,
            } as u64;
            self.stats.warp_instructions += 1;
            self.stats.thread_instructions += live.count_ones() as u64;
            self.busy_until = self.busy_until.max(c + op_lat);
            if needs[p] {
                self.pend_nx[slot as usize] += 1;
                self.cpl[p * lat + (c as usize + lat - 1) % lat] = Some(slot);
            }
            match ins.op {
                Op::Relssp => self.rsm[w] |= live,
                Op::Bar => self.warps[w].at_bar = true,
                _ => {}
            }
            if ins.exit || last_of_stream {
                self.exm[w] |= live;
            }
            let wp = &mut self.warps[w];
            if let Some(d) = ins.dst {
                wp.ready_at[d as usize] = c + op_lat;
            }
            wp.pc += 1;
        }
        // Completions of accesses issued lat − 1 cycles ago.
        for p in 0..ns {
            if let Some(s) = self.cpl[p * lat + c as usize % lat].take() {
                self.pend_nx[s as usize] -= 1;
            }
        }

        // --- done and tb_empty (§3) ------------------------------------------------------------
        self.done.fill(true);
        self.tb_empty.fill(true);
        for w in 0..self.warps.len() {
            let wp = &self.warps[w];
            if !wp.valid {
                continue;
            }
            let alive = wp.live & !self.exm[w];
            let released = self.rbits[w] | self.rsm[w];
            let s = wp.slot as usize;
            self.done[s] &= alive & !released == 0;
            self.tb_empty[s] &= alive == 0;
        }

        // --- release and acquire (§2.4) ----------------------------------------------------------
        self.lock_nx.copy_from_slice(&self.lock);
        for (k, entry) in self.lock.iter().enumerate() {
            let (valid, o) = *entry;
            if !valid || !self.done[o as usize] || self.pend_nx[o as usize] != 0 {
                continue;
            }
            let o2 = self.shtb[o as usize];
            let partner_live = o2 != self.none && !self.tb_empty[o2 as usize];
            let cause = if self.tb_empty[o as usize] {
                if self.p.policy == Policy::Transfer && partner_live {
                    self.lock_nx[k] = (true, o2);
                    self.stats.lock_releases.transfer += 1;
                    "transfer"
                } else {
                    self.lock_nx[k] = (false, 0);
                    self.stats.lock_releases.finish += 1;
                    "finish"
                }
            } else {
                self.lock_nx[k] = (false, 0);
                self.stats.lock_releases.relssp += 1;
                "relssp"
            };
            if let Some(r) = rec.as_deref_mut() {
                r.locks.push(LockEvent {
                    pair: k as u32,
                    slot: o,
                    cause,
                });
            }
        }
        for p in 0..ns {
            if !acq[p] {
                continue;
            }
            let s = self.warps[self.picks[p].expect("acquired")].slot;
            let k = self.pair_of(s);
            // Two ports of one slot may acquire together: one acquisition.
            if self.lock_nx[k] != (true, s) {
                self.lock_nx[k] = (true, s);
                self.stats.lock_acquires += 1;
                if let Some(r) = rec.as_deref_mut() {
                    r.locks.push(LockEvent {
                        pair: k as u32,
                        slot: s,
                        cause: "acquire",
                    });
                }
            }
            if self.done[s as usize] {
                return Err(SmError::Protocol {
                    cycle: c,
                    slot: s,
                    tb: self.slot_tb[s as usize].expect("acquirer has a TB"),
                });
            }
        }

        // --- retire idle slots (slot_idle, §2.4), then the edge ----------------------------------
        for w in 0..self.warps.len() {
            if !self.warps[w].valid {
                continue;
            }
            self.rbits[w] |= self.rsm[w];
            if self.exm[w] != 0 {
                self.warps[w].live &= !self.exm[w];
                if self.warps[w].live == 0 {
                    let s = self.warps[w].slot as usize;
                    let tb = self.slot_tb[s].expect("valid warp has a TB");
                    self.stats.tbs[tb as usize].finish = c;
                }
            }
        }
        self.release_barriers();
        self.pend.copy_from_slice(&self.pend_nx);
        self.lock.copy_from_slice(&self.lock_nx);
        for s in 0..self.slot_tb.len() {
            let Some(tb) = self.slot_tb[s] else { continue };
            let s32 = s as u32;
            let holds = !self.unshared(s32) && self.lock[self.pair_of(s32)] == (true, s32);
            if !(self.tb_empty[s] && self.pend[s] == 0 && !holds) {
                continue;
            }
            progress = true;
            self.slot_tb[s] = None;
            for i in 0..self.wpt {
                self.warps[(s32 * self.wpt + i) as usize].valid = false;
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
        self.note_residency();

        // --- progress watch ----------------------------------------------------------------------
        let pending = c < self.busy_until || self.pend.iter().any(|&x| x != 0);
        self.idle_cycles = if progress || pending {
            0
        } else {
            self.idle_cycles + 1
        };
        self.now += 1;
        if self.idle_cycles > 4 && !self.finished() {
            return Err(SmError::Deadlock { cycle: c });
        }
        if self.now >= MAX_CYCLES {
            return Err(SmError::CycleLimit);
        }
        Ok(())
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
                }
            }
        }
    }

    /// Runs the kernel to the end, showing each cycle to `each` if given.
    pub fn run(
        mut self,
        mut each: Option<&mut dyn FnMut(&CycleRecord)>,
    ) -> Result<SmStats, SmError> {
        let mut rec = CycleRecord::default();
        while !self.finished() {
            match each.as_deref_mut() {
                Some(f) => {
                    self.cycle(Some(&mut rec))?;
                    f(&rec);
                }
                None => self.cycle(None)?,
            }
        }
        let s = &mut self.stats;
        s.ipc = if s.cycles == 0 {
            0.0
        } else {
            s.thread_instructions as f64 / s.cycles as f64
        };
        Ok(self.stats)
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// Kernel `k`'s params: the defaults, then the kernel file's `params`, then `sets` (the
/// command line's `--set`, which wins).
pub fn params_for(k: &Kernel, sets: &[(String, String)]) -> Result<SmParams, ParamError> {
    let mut all: Vec<(String, String)> = k
        .params
        .iter()
        .map(|(key, v)| {
            let text = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (key.clone(), text)
        })
        .collect();
    all.extend_from_slice(sets);
    SmParams::resolve(None, &all)
}
