//! Scratchpad sharing at SM level (docs/scratchpad-sharing.md §1, §5; Jatala et al., seed 001),
//! in two parts:
//!
//! - [`Core`]: `sharing_core`'s model, its blocks' models (`share_cfg`, `owner_class`,
//!   `warp_scheduler`, `sp_access_unit`, `lock_table`, `relssp_unit`) composed in the spec's
//!   in-cycle order (§2.1: class → pick → access check → grant/NACK → relssp/exit events of
//!   issued instructions → `done` → release → edge), behind one typed interface ([`CoreIn`] /
//!   [`CoreOut`], encoded to the port buffers by [`CorePorts`]). [`Model`] puts it on the ports.
//! - [`SharingSm`]: the thread-block-residency SM around it: the launch calculator (§1.2) and
//!   the launch writes (§1.3–1.4), the kernel's instruction streams, register scoreboards and
//!   latencies (§5), barriers, `cpl`, TBs retiring and new TBs taking the freed slots. An RTL
//!   beside the core sees the same inputs every cycle ([`SharingSm::cycle_checked`]).
//!
//! Launch cycles (a reset, then one configuration write per slot) come before kernel cycle 0,
//! which launches the first TBs; warps issue from the cycle after their launch, so Fig. 5's
//! cycle 1 is the first issue cycle. The hot path allocates nothing; per-cycle records are
//! built only when a caller asks for them.

use crate::blocks::lock_table::{self, LockTable};
use crate::blocks::owner_class::{classify, Locks};
use crate::blocks::relssp_unit::{Event, Relssp, WarpIn};
use crate::blocks::share_cfg::{CfgWrite, Table};
use crate::blocks::sp_access_unit::access;
use crate::blocks::warp_scheduler;
use crate::harness::layout::Layout;
use crate::harness::sim::Simulator;
use crate::harness::Mismatch;
use crate::kernel::cfg::{Lowered, Program};
use crate::kernel::launch::{self, Launch, Ratio};
use crate::kernel::program::{Instr, Kernel, Op, REGS};
use serde::Serialize;
use smrtl_hdl::blocks::lock_table::port as lt_port;
use smrtl_hdl::blocks::owner_class::port as oc_port;
use smrtl_hdl::blocks::relssp_unit::port as rs_port;
use smrtl_hdl::blocks::share_cfg;
use smrtl_hdl::blocks::sharing::{Class, FreeClass, Policy, Rank, Sched, Shape};
use smrtl_hdl::blocks::sharing_core::{port, Params as CoreParams};
use smrtl_hdl::blocks::sp_access_unit::port as sa_port;
use smrtl_hdl::blocks::warp_scheduler::port as ws_port;
use smrtl_hdl::params::{declared_by, Allowed, BlockParams, ParamError};
use std::fmt;

smrtl_hdl::block_params! {
    /// The SM model's parameters: `sharing_core`'s (the SM shape and the lock and scheduling
    /// switches, [C] in the spec) and the model-only launch threshold and latencies (§1.2, §5).
    #[derive(Eq)]
    pub struct SmParams {
        ..shape: Shape;
        policy: Policy = Policy::Transfer, "POLICY", Allowed::As(declared_by::<CoreParams>);
        pend_w: u32 = 6, "PEND_W", Allowed::As(declared_by::<CoreParams>);
        free_class: FreeClass = FreeClass::Nonowner, "FREE_CLASS", Allowed::As(declared_by::<CoreParams>);
        sched: Sched = Sched::Owf, "SCHED", Allowed::As(declared_by::<CoreParams>);
        rank: Rank = Rank::Owf3, "RANK", Allowed::As(declared_by::<CoreParams>);
        greedy: bool = false, "GREEDY", Allowed::As(declared_by::<CoreParams>);
        age_w: u32 = 16, "AGE_W", Allowed::As(declared_by::<CoreParams>);
        /// Sharing threshold: a shared TB's private fraction (§1.1; the paper's evaluation: 1/10).
        t: Ratio = Ratio { num: 1, den: 10 }, "t", Allowed::Json("a fraction in (0, 1): N/D or a decimal"), "e.g. --set t=1/10";
        /// Whether the launch shares scratchpad (§1.2); false launches the unshared baseline
        /// (`base` TBs, ShSM = 0), the paper's Unshared-* configurations.
        share: bool = true, "share", Allowed::Bool;
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
        CoreParams::presets()
            .into_iter()
            .map(|(name, core)| (name, SmParams::default().with_core(&core)))
            .collect()
    }

    fn check(&self) -> Result<(), ParamError> {
        self.core().check()
    }
}

impl SmParams {
    /// The params of the `sharing_core` RTL these describe (the block params are
    /// flattened in rather than nested, so `--set` names stay flat).
    pub fn core(&self) -> CoreParams {
        CoreParams {
            shape: self.shape.clone(),
            policy: self.policy,
            pend_w: self.pend_w,
            free_class: self.free_class,
            sched: self.sched,
            rank: self.rank,
            greedy: self.greedy,
            age_w: self.age_w,
        }
    }

    /// The launch of TBs of `threads` threads and `tb_smem` bytes on this SM (§1.2), or the
    /// unshared one when `share` is off.
    pub fn launch(&self, tb_smem: u32, threads: u32) -> Launch {
        let s = &self.shape;
        let l = launch::launch(&launch::Inputs {
            smem: s.smem as u64,
            tb_smem: tb_smem as u64,
            tb_threads: (threads.div_ceil(s.lanes) * s.lanes) as u64,
            max_tbs: s.slots as u64,
            max_threads: (s.warps * s.lanes) as u64,
            t: self.t,
            reg_limit: (self.reg_limit > 0).then_some(self.reg_limit as u64),
            align: self.align as u64,
        });
        if self.share {
            l
        } else {
            l.unshared(tb_smem as u64)
        }
    }

    /// These params with `core`'s block params.
    pub fn with_core(mut self, core: &CoreParams) -> SmParams {
        self.shape = core.shape.clone();
        (self.policy, self.pend_w, self.free_class) = (core.policy, core.pend_w, core.free_class);
        (self.sched, self.rank, self.greedy, self.age_w) =
            (core.sched, core.rank, core.greedy, core.age_w);
        self
    }
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

/// What [`SharingSm::cycle_checked`] shows each cycle's inputs and model outputs to: the RTL
/// in the loop, which answers with the first port it disagrees on.
pub type Check<'a> = dyn FnMut(Phase, &CoreIn, &CoreOut) -> Result<(), Box<Mismatch>> + 'a;

/// How a run with the RTL in the loop stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoopError {
    /// The model refused or stopped (see [`SmError`]).
    Model(SmError),
    /// The RTL's outputs differ from the model's in this cycle.
    Diverged(Phase, Box<Mismatch>),
}

impl fmt::Display for LoopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoopError::Model(e) => write!(f, "{e}"),
            LoopError::Diverged(Phase::Run(c), m) => write!(f, "kernel cycle {c}: {m}"),
            LoopError::Diverged(Phase::Launch(j), m) => write!(f, "launch cycle {j}: {m}"),
        }
    }
}

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

// ---------------------------------------------------------------------------------------------
// The core on its ports: `sharing_core`'s blocks, composed from their models
// ---------------------------------------------------------------------------------------------

/// What the SM side tells the core about a scheduler's pick, in the same cycle (§5): the
/// instruction is a shared access, a relssp, carries the exit flag; its lanes and offsets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dsc {
    pub shared: bool,
    pub rel: bool,
    pub exit: bool,
    pub mask: u64,
    /// One byte offset per lane (LANES of them).
    pub off: Vec<u64>,
}

/// One cycle's inputs of `sharing_core` (hdl/src/sharing_core.rs), typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreIn {
    pub reset: bool,
    pub cfg: CfgWrite,
    /// `cfg_lock_*`: preset or clear lock `k` as `(k, valid, owner)`.
    pub lock_cfg: Option<(u64, bool, u64)>,
    pub warps: Vec<WarpIn>,
    pub ready: Vec<bool>,
    pub age: Vec<u64>,
    /// Per scheduler.
    pub dsc: Vec<Dsc>,
    /// Per scheduler: `(cpl_valid, cpl_slot)`.
    pub cpl: Vec<(bool, u64)>,
}

impl CoreIn {
    /// Quiet inputs sized for `p`.
    pub fn new(p: &CoreParams) -> CoreIn {
        let s = &p.shape;
        let (w, ns) = (s.warps as usize, s.nsched as usize);
        CoreIn {
            reset: false,
            cfg: CfgWrite::default(),
            lock_cfg: None,
            warps: vec![WarpIn::default(); w],
            ready: vec![false; w],
            age: vec![0; w],
            dsc: vec![
                Dsc {
                    off: vec![0; s.lanes as usize],
                    ..Dsc::default()
                };
                ns
            ],
            cpl: vec![(false, 0); ns],
        }
    }
}

/// One cycle's outputs of `sharing_core`, typed: Moore values are the state at the start of
/// the cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoreOut {
    pub iss_valid: Vec<bool>,
    pub iss_idx: Vec<u64>,
    pub issued: Vec<bool>,
    pub rq_slot: Vec<u64>,
    pub last_valid: Vec<bool>,
    pub last_idx: Vec<u64>,
    pub table: Table,
    pub err_cfg: bool,
    pub owner_bit: Vec<bool>,
    pub warp_class: Vec<Class>,
    pub needs_lock: Vec<bool>,
    pub pair: Vec<u64>,
    /// Per scheduler, per lane.
    pub phys: Vec<u64>,
    pub lock: lock_table::Outputs,
    /// Bit `s` for slot `s`.
    pub done: u64,
    pub tb_empty: u64,
    pub rbits: Vec<u64>,
}

/// `sharing_core` as its blocks' models wired in the spec's in-cycle order (§2.1): the same
/// composition as the RTL top, so the SM model and every RTL backend see one interface.
pub struct Core {
    p: CoreParams,
    sched: smrtl_hdl::blocks::warp_scheduler::Params,
    table: Table,
    locks: LockTable,
    relssp: Relssp,
    last: Vec<Option<usize>>,
    // Scratch, sized once.
    lock_view: Locks,
    views: Vec<warp_scheduler::Warp>,
    lock_in: lock_table::Inputs,
    events: Vec<Event>,
}

impl Core {
    /// The core after reset.
    pub fn new(p: &CoreParams) -> Core {
        let s = &p.shape;
        let lt: smrtl_hdl::blocks::lock_table::Params = p.child();
        Core {
            p: p.clone(),
            sched: p.child(),
            table: Table::new(s),
            locks: LockTable::new(&lt),
            relssp: Relssp::new(&p.child()),
            last: vec![None; s.nsched as usize],
            lock_view: Locks {
                valid: vec![false; s.kp()],
                owner: vec![0; s.kp()],
            },
            views: vec![warp_scheduler::Warp::default(); s.ws()],
            lock_in: lock_table::Inputs::idle(&lt),
            events: vec![Event::default(); s.nsched as usize],
        }
    }

    /// Outputs sized for the core.
    pub fn outputs(&self) -> CoreOut {
        let s = &self.p.shape;
        let (w, ns, lanes) = (s.warps as usize, s.nsched as usize, s.lanes as usize);
        CoreOut {
            iss_valid: vec![false; ns],
            iss_idx: vec![0; ns],
            issued: vec![false; ns],
            rq_slot: vec![0; ns],
            last_valid: vec![false; ns],
            last_idx: vec![0; ns],
            table: self.table.clone(),
            err_cfg: false,
            owner_bit: vec![false; w],
            warp_class: vec![Class::Unshared; w],
            needs_lock: vec![false; ns],
            pair: vec![0; ns],
            phys: vec![0; ns * lanes],
            lock: lock_table::Outputs::new(&self.p.child()),
            done: 0,
            tb_empty: 0,
            rbits: vec![0; w],
        }
    }

    /// First half of a cycle: the Moore outputs, the warp classes from the registered locks
    /// (§2.5) and each scheduler's pick (§4). Reads `warps`, `ready` and `age` only.
    pub fn pick(&mut self, i: &CoreIn, o: &mut CoreOut) {
        let ns = self.p.shape.nsched as usize;
        o.table.clone_from(&self.table);
        o.err_cfg = self.table.err_cfg();
        for k in 0..self.lock_view.valid.len() {
            let (v, owner) = self.locks.lock(k);
            self.lock_view.valid[k] = v;
            self.lock_view.owner[k] = owner;
        }
        for (w, x) in i.warps.iter().enumerate() {
            let (bit, class) = classify(
                &self.table,
                &self.lock_view,
                self.p.free_class,
                x.valid,
                x.slot as u64,
            );
            o.owner_bit[w] = bit;
            o.warp_class[w] = class;
        }
        for q in 0..ns {
            o.last_valid[q] = self.last[q].is_some();
            o.last_idx[q] = self.last[q].unwrap_or(0) as u64;
            for (j, v) in self.views.iter_mut().enumerate() {
                let w = j * ns + q;
                *v = warp_scheduler::Warp {
                    ready: i.ready[w],
                    cls: o.warp_class[w].code(),
                    age: i.age[w],
                };
            }
            let pick = warp_scheduler::pick(&self.sched, self.last[q], &self.views);
            o.iss_valid[q] = pick.is_some();
            o.iss_idx[q] = pick.unwrap_or(0) as u64;
            let w = o.iss_idx[q] as usize * ns + q;
            o.rq_slot[q] = i.warps[w].slot as u64;
        }
    }

    /// Second half: access check (§2.3), grant / NACK (§2.4), the relssp and exit events of the
    /// issued instructions (§3), `done`, release and drain; then the clock edge.
    pub fn finish(&mut self, i: &CoreIn, o: &mut CoreOut) {
        let s = &self.p.shape;
        let (ns, lanes, aw) = (s.nsched as usize, s.lanes as usize, s.aw());
        let li = &mut self.lock_in;
        li.reset = i.reset;
        li.shsm = self.table.shsm;
        li.shtb.copy_from_slice(&self.table.shtb);
        for q in 0..ns {
            let d = &i.dsc[q];
            let valid = o.iss_valid[q] && d.shared;
            let a = access(
                &self.table,
                aw,
                valid,
                o.rq_slot[q],
                d.mask,
                &d.off,
                &mut o.phys[q * lanes..(q + 1) * lanes],
            );
            o.needs_lock[q] = a.needs_lock;
            o.pair[q] = a.pair;
            li.rq_valid[q] = valid;
            li.rq_slot[q] = o.rq_slot[q];
            li.needs_lock[q] = a.needs_lock;
            (li.cpl_valid[q], li.cpl_slot[q]) = i.cpl[q];
        }
        self.locks.grant(li, &mut o.lock);
        for q in 0..ns {
            let d = &i.dsc[q];
            o.issued[q] = o.iss_valid[q] && (!li.rq_valid[q] || o.lock.gnt[q]);
            self.events[q] = Event {
                valid: o.issued[q] && (d.rel || d.exit),
                rel: d.rel,
                exit: d.exit,
                warp: o.iss_idx[q] as usize * ns + q,
                mask: d.mask,
            };
        }
        let slots = self.relssp.eval(&i.warps, &self.events);
        (o.done, o.tb_empty) = (slots.done, slots.tb_empty);
        for sl in 0..li.done.len() {
            li.done[sl] = slots.done >> sl & 1 == 1;
            li.tb_empty[sl] = slots.tb_empty >> sl & 1 == 1;
        }
        (
            li.cfg_lock_we,
            li.cfg_lock_k,
            li.cfg_lock_valid,
            li.cfg_lock_owner,
        ) = match i.lock_cfg {
            Some((k, v, owner)) => (true, k, v, owner),
            None => (false, 0, false, 0),
        };
        for (w, r) in o.rbits.iter_mut().enumerate() {
            *r = self.relssp.rbits(w);
        }
        self.locks.step(li, &mut o.lock);
        // --- the edge ---
        self.relssp.tick(i.reset);
        if i.reset {
            self.table.reset();
            self.last.fill(None);
        } else {
            self.table.write(&i.cfg);
            for q in 0..ns {
                if o.iss_valid[q] {
                    self.last[q] = Some(o.iss_idx[q] as usize);
                }
            }
        }
    }

    /// The registered configuration.
    pub fn table(&self) -> &Table {
        &self.table
    }
}

/// Where each of the core's ports sits in the flat buffers of the RTL backends.
pub struct CorePorts {
    layout: Layout,
    p: CoreParams,
}

impl CorePorts {
    pub fn new(p: &CoreParams, layout: &Layout) -> CorePorts {
        CorePorts {
            layout: layout.clone(),
            p: p.clone(),
        }
    }

    fn put(&self, buf: &mut [u64], name: &str, i: usize, width: usize, v: u64) {
        self.layout
            .in_slot(name)
            .set_field(buf, i * width, width, v);
    }

    fn get(&self, buf: &[u64], name: &str, i: usize, width: usize) -> u64 {
        self.layout.in_slot(name).field(buf, i * width, width)
    }

    /// Writes `i` into an input buffer (every input port).
    pub fn write_inputs(&self, i: &CoreIn, buf: &mut [u64]) {
        let s = &self.p.shape;
        let (sw, tw, aw, kw, lanes) = (s.sw(), s.tw(), s.aw(), s.kw(), s.lanes as usize);
        let age_w = self.p.age_w as usize;
        buf.fill(0);
        let b = |v: bool| v as u64;
        self.put(buf, "reset", 0, 1, b(i.reset));
        if let Some(v) = i.cfg.shsm {
            self.put(buf, share_cfg::port::CFG_SHSM_WE, 0, 1, 1);
            self.put(buf, share_cfg::port::CFG_SHSM, 0, 1, b(v));
        }
        if let Some(u) = i.cfg.u {
            self.put(buf, share_cfg::port::CFG_U_WE, 0, 1, 1);
            self.put(buf, share_cfg::port::CFG_U, 0, aw, u);
        }
        if let Some((slot, partner, base)) = i.cfg.slot {
            self.put(buf, share_cfg::port::CFG_SLOT_WE, 0, 1, 1);
            self.put(buf, share_cfg::port::CFG_SLOT, 0, sw, slot);
            self.put(buf, share_cfg::port::CFG_PARTNER, 0, tw, partner);
            self.put(buf, share_cfg::port::CFG_BASE, 0, aw, base);
        }
        if let Some((k, v, owner)) = i.lock_cfg {
            self.put(buf, lt_port::CFG_LOCK_WE, 0, 1, 1);
            self.put(buf, lt_port::CFG_LOCK_K, 0, kw, k);
            self.put(buf, lt_port::CFG_LOCK_VALID, 0, 1, b(v));
            self.put(buf, lt_port::CFG_LOCK_OWNER, 0, sw, owner);
        }
        for (w, x) in i.warps.iter().enumerate() {
            self.put(buf, rs_port::WARP_VALID, w, 1, b(x.valid));
            self.put(buf, rs_port::WARP_SLOT, w, sw, x.slot as u64);
            self.put(buf, rs_port::LIVE, w, lanes, x.live);
            self.put(buf, rs_port::WARP_LAUNCH, w, 1, b(x.launch));
            self.put(buf, port::READY, w, 1, b(i.ready[w]));
            self.put(buf, port::AGE, w, age_w, i.age[w]);
        }
        for (q, d) in i.dsc.iter().enumerate() {
            self.put(buf, port::DSC_SHARED, q, 1, b(d.shared));
            self.put(buf, port::DSC_REL, q, 1, b(d.rel));
            self.put(buf, port::DSC_EXIT, q, 1, b(d.exit));
            self.put(buf, port::DSC_MASK, q, lanes, d.mask);
            for (l, &o) in d.off.iter().enumerate() {
                self.put(buf, port::DSC_OFF, q * lanes + l, aw, o);
            }
            self.put(buf, lt_port::CPL_VALID, q, 1, b(i.cpl[q].0));
            self.put(buf, lt_port::CPL_SLOT, q, sw, i.cpl[q].1);
        }
    }

    /// Reads an input buffer into `i` (what the port-level model does each cycle).
    pub fn read_inputs(&self, buf: &[u64], i: &mut CoreIn) {
        let s = &self.p.shape;
        let (sw, tw, aw, kw, lanes) = (s.sw(), s.tw(), s.aw(), s.kw(), s.lanes as usize);
        let age_w = self.p.age_w as usize;
        let on = |name: &str, k: usize| self.get(buf, name, k, 1) == 1;
        i.reset = on("reset", 0);
        i.cfg = CfgWrite {
            shsm: on(share_cfg::port::CFG_SHSM_WE, 0).then(|| on(share_cfg::port::CFG_SHSM, 0)),
            u: on(share_cfg::port::CFG_U_WE, 0)
                .then(|| self.get(buf, share_cfg::port::CFG_U, 0, aw)),
            slot: on(share_cfg::port::CFG_SLOT_WE, 0).then(|| {
                (
                    self.get(buf, share_cfg::port::CFG_SLOT, 0, sw),
                    self.get(buf, share_cfg::port::CFG_PARTNER, 0, tw),
                    self.get(buf, share_cfg::port::CFG_BASE, 0, aw),
                )
            }),
        };
        i.lock_cfg = on(lt_port::CFG_LOCK_WE, 0).then(|| {
            (
                self.get(buf, lt_port::CFG_LOCK_K, 0, kw),
                on(lt_port::CFG_LOCK_VALID, 0),
                self.get(buf, lt_port::CFG_LOCK_OWNER, 0, sw),
            )
        });
        for w in 0..i.warps.len() {
            i.warps[w] = WarpIn {
                valid: on(rs_port::WARP_VALID, w),
                slot: self.get(buf, rs_port::WARP_SLOT, w, sw) as usize,
                live: self.get(buf, rs_port::LIVE, w, lanes),
                launch: on(rs_port::WARP_LAUNCH, w),
            };
            i.ready[w] = on(port::READY, w);
            i.age[w] = self.get(buf, port::AGE, w, age_w);
        }
        for q in 0..i.dsc.len() {
            let d = &mut i.dsc[q];
            d.shared = on(port::DSC_SHARED, q);
            d.rel = on(port::DSC_REL, q);
            d.exit = on(port::DSC_EXIT, q);
            d.mask = self.get(buf, port::DSC_MASK, q, lanes);
            for l in 0..lanes {
                d.off[l] = self.get(buf, port::DSC_OFF, q * lanes + l, aw);
            }
            i.cpl[q] = (
                on(lt_port::CPL_VALID, q),
                self.get(buf, lt_port::CPL_SLOT, q, sw),
            );
        }
    }

    /// Writes `o` into an output buffer (every output port).
    pub fn write_outputs(&self, o: &CoreOut, buf: &mut [u64]) {
        let s = &self.p.shape;
        let (sw, tw, aw, kw, lanes) = (s.sw(), s.tw(), s.aw(), s.kw(), s.lanes as usize);
        let (wsw, pend_w) = (s.wsw(), self.p.pend_w as usize);
        let slot = |name: &str| self.layout.out_slot(name);
        buf.fill(0);
        let bits = |buf: &mut [u64], name: &str, v: &[bool]| {
            let sl = slot(name);
            for (k, &x) in v.iter().enumerate() {
                sl.set_field(buf, k, 1, x as u64);
            }
        };
        let words = |buf: &mut [u64], name: &str, v: &[u64], width: usize| {
            let sl = slot(name);
            for (k, &x) in v.iter().enumerate() {
                sl.set_field(buf, k * width, width, x);
            }
        };
        bits(buf, ws_port::ISS_VALID, &o.iss_valid);
        words(buf, ws_port::ISS_IDX, &o.iss_idx, wsw);
        bits(buf, port::ISSUED, &o.issued);
        words(buf, port::RQ_SLOT, &o.rq_slot, sw);
        bits(buf, ws_port::LAST_VALID, &o.last_valid);
        words(buf, ws_port::LAST_IDX, &o.last_idx, wsw);
        slot(share_cfg::port::SHSM).set(buf, o.table.shsm as u64);
        slot(share_cfg::port::U).set(buf, o.table.u);
        words(buf, share_cfg::port::SHTB, &o.table.shtb, tw);
        words(buf, share_cfg::port::BASE, &o.table.base, aw);
        slot(share_cfg::port::ERR_CFG).set(buf, o.err_cfg as u64);
        bits(buf, oc_port::OWNER_BIT, &o.owner_bit);
        let cls = slot(oc_port::WARP_CLASS);
        for (w, c) in o.warp_class.iter().enumerate() {
            cls.set_field(buf, w * Class::BITS, Class::BITS, c.code());
        }
        bits(buf, sa_port::NEEDS_LOCK, &o.needs_lock);
        words(buf, sa_port::PAIR, &o.pair, kw);
        words(buf, sa_port::PHYS, &o.phys, aw);
        let l = &o.lock;
        bits(buf, lt_port::GNT, &l.gnt);
        bits(buf, lt_port::NACK, &l.nack);
        bits(buf, lt_port::ACQ, &l.acq);
        bits(buf, lt_port::REL_FIRE, &l.rel_fire);
        bits(buf, lt_port::XFER, &l.xfer);
        bits(buf, lt_port::SLOT_IDLE, &l.slot_idle);
        bits(buf, lt_port::LOCK_VALID, &l.lock_valid);
        words(buf, lt_port::LOCK_OWNER, &l.lock_owner, sw);
        words(buf, lt_port::PEND, &l.pend, pend_w);
        slot(lt_port::ERR_PROTO).set(buf, l.err_proto as u64);
        slot(lt_port::ERR_PEND).set(buf, l.err_pend as u64);
        slot(rs_port::DONE).set(buf, o.done);
        slot(rs_port::TB_EMPTY).set(buf, o.tb_empty);
        words(buf, rs_port::RBITS, &o.rbits, lanes);
    }
}

/// `sharing_core`'s model on its ports: the core on the same buffers as the RTL backends.
pub struct Model {
    core: Core,
    ports: CorePorts,
    inp: CoreIn,
    out: CoreOut,
}

impl Model {
    pub fn new(p: &CoreParams, layout: &Layout) -> Model {
        let core = Core::new(p);
        let out = core.outputs();
        Model {
            core,
            ports: CorePorts::new(p, layout),
            inp: CoreIn::new(p),
            out,
        }
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        self.ports.read_inputs(inputs, &mut self.inp);
        self.core.pick(&self.inp, &mut self.out);
        self.core.finish(&self.inp, &mut self.out);
        self.ports.write_outputs(&self.out, outputs);
    }
}

// ---------------------------------------------------------------------------------------------
// The SM around the core: kernels, warps, latencies, barriers, TB slots (§1, §5)
// ---------------------------------------------------------------------------------------------

/// A warp slot as the SM sees it.
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
    /// First cycle it may issue (its launch cycle + 1).
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

/// Where the SM's cycle stands against the RTL's: launch cycles (reset, then the
/// configuration writes) come before kernel cycle 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Launch cycle `k` of the kernel's launch sequence.
    Launch(u32),
    /// Kernel cycle `c`.
    Run(u64),
}

/// The SM running one kernel around a [`Core`].
pub struct SharingSm<'k> {
    p: SmParams,
    k: &'k Kernel,
    wpt: u32,
    core: Core,
    inp: CoreIn,
    out: CoreOut,
    /// The launch's writes: the configuration table and the preset locks.
    launch_table: Table,
    /// Per stream and instruction, the `cbra`'s index among the stream's branches.
    branch_ids: Vec<Vec<u32>>,
    /// Branches per stream, at most.
    branches: usize,
    /// Per warp slot and branch, how often the warp evaluated it (`warp * branches + id`).
    visits: Vec<u32>,
    launch_cycles: u32,
    phase: Phase,
    slot_tb: Vec<Option<u32>>,
    next_tb: u32,
    age_next: u64,
    warps: Vec<Warp>,
    /// `cpl` schedule: scheduler q's access issued in c completes at `(c + lat − 1) mod lat`.
    cpl: Vec<Option<u32>>,
    stats: SmStats,
    idle_cycles: u32,
    busy_until: u64,
}

impl<'k> SharingSm<'k> {
    /// Launches `k` on an SM with params `p` (validated): the launch cycles reset the core and
    /// write its configuration; kernel cycle 0 launches the first TBs.
    pub fn new(p: &SmParams, k: &'k Kernel) -> Result<SharingSm<'k>, SmError> {
        let core_params = p.core();
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
        let launch = p.launch(k.smem, k.threads);
        if launch.n == 0 {
            return Err(SmError::Kernel("no TB fits on the SM".into()));
        }
        let kp = s.kp();
        for l in &k.locks {
            if l.pair as usize >= kp || l.owner >= s.slots {
                return Err(SmError::Kernel(format!(
                    "lock preset pair {} owner {}; allowed: pair 0..{kp}, owner 0..{}",
                    l.pair, l.owner, s.slots
                )));
            }
        }
        let launch_table = Table::launched(s, &launch, k.smem as u64);
        let branch_ids: Vec<Vec<u32>> = k
            .warps
            .iter()
            .map(|stream| {
                let mut n = 0;
                stream
                    .iter()
                    .map(|i| {
                        n += u32::from(i.op == Op::Cbra);
                        n.wrapping_sub(1)
                    })
                    .collect()
            })
            .collect();
        let branches = k
            .warps
            .iter()
            .map(|st| st.iter().filter(|i| i.op == Op::Cbra).count())
            .max()
            .unwrap_or(0);
        let launch_cycles = 1 + s.slots;
        let core = Core::new(&core_params);
        let out = core.outputs();
        let nsched = s.nsched as usize;
        Ok(SharingSm {
            p: p.clone(),
            k,
            wpt,
            inp: CoreIn::new(&core_params),
            out,
            core,
            launch_table,
            branch_ids,
            branches,
            visits: vec![0; branches * s.warps as usize],
            launch_cycles,
            phase: Phase::Launch(0),
            slot_tb: vec![None; s.slots as usize],
            next_tb: 0,
            age_next: 0,
            warps: vec![Warp::EMPTY; s.warps as usize],
            cpl: vec![None; nsched * p.lat_shared as usize],
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
        })
    }

    /// The cycle about to run.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Cycles of the launch sequence before kernel cycle 0: a reset, then one configuration
    /// write per slot.
    pub fn launch_cycles(&self) -> u32 {
        self.launch_cycles
    }

    /// Whether every TB has run and retired.
    pub fn finished(&self) -> bool {
        matches!(self.phase, Phase::Run(_))
            && self.next_tb == self.k.grid
            && self.slot_tb.iter().all(Option::is_none)
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
            self.visits[w * self.branches..(w + 1) * self.branches].fill(0);
            self.age_next += 1;
        }
        self.stats.tbs.push(TbLife {
            tb,
            slot,
            launch: cycle,
            finish: 0,
        });
        let n = self.slot_tb.iter().filter(|t| t.is_some()).count() as u32;
        self.stats.resident_tbs_max = self.stats.resident_tbs_max.max(n);
        tb
    }

    /// The warp's next instruction, if it may issue in kernel cycle `c` (§5 `ready`).
    fn ready(&self, w: usize, c: u64) -> bool {
        let wp = &self.warps[w];
        if !wp.valid || wp.live == 0 || wp.at_bar || c < wp.start {
            return false;
        }
        let Some(ins) = self.k.stream(wp.index as usize).get(wp.pc as usize) else {
            return false;
        };
        let srcs = ins.src_mask();
        (0..REGS)
            .filter(|r| srcs >> r & 1 == 1)
            .all(|r| wp.ready_at[r] <= c)
    }

    /// This cycle's inputs before the picks: the launch writes, or the warps' state.
    fn drive(&mut self) {
        let i = &mut self.inp;
        let c = match self.phase {
            Phase::Run(c) => Some(c),
            Phase::Launch(_) => None,
        };
        i.reset = false;
        i.cfg = CfgWrite::default();
        i.lock_cfg = None;
        for d in &mut i.dsc {
            d.shared = false;
            d.rel = false;
            d.exit = false;
            d.mask = 0;
            d.off.fill(0);
        }
        i.cpl.fill((false, 0));
        match self.phase {
            Phase::Launch(0) => i.reset = true,
            Phase::Launch(j) => {
                let j = j as usize - 1;
                let t = &self.launch_table;
                if j == 0 {
                    i.cfg.shsm = Some(t.shsm);
                    i.cfg.u = Some(t.u);
                }
                if j < t.shtb.len() {
                    i.cfg.slot = Some((j as u64, t.shtb[j], t.base[j]));
                }
            }
            Phase::Run(c) => {
                let lat = self.p.lat_shared as usize;
                for (q, cpl) in i.cpl.iter_mut().enumerate() {
                    if let Some(s) = self.cpl[q * lat + c as usize % lat] {
                        *cpl = (true, s as u64);
                    }
                }
            }
        }
        if let Some(c) = c {
            // Preset lock j is written in kernel cycle j, when its TBs are live (a lock of a
            // slot without threads would be released at once).
            if let Some(l) = self.k.locks.get(c as usize) {
                self.inp.lock_cfg = Some((l.pair as u64, true, l.owner as u64));
            }
            {
                for w in 0..self.warps.len() {
                    let wp = self.warps[w];
                    self.inp.warps[w] = WarpIn {
                        valid: wp.valid,
                        slot: wp.slot as usize,
                        live: wp.live,
                        launch: wp.valid && wp.start == c + 1,
                    };
                    self.inp.ready[w] = self.ready(w, c);
                    self.inp.age[w] = wp.age;
                }
            }
        }
    }

    /// Answers each scheduler's pick with its instruction's descriptor (same cycle, §5).
    fn describe(&mut self, picks: &CoreOut) {
        let ns = self.p.shape.nsched as usize;
        let lanes = self.p.shape.lanes as usize;
        for q in 0..ns {
            if !picks.iss_valid[q] || !matches!(self.phase, Phase::Run(_)) {
                continue;
            }
            let wp = &self.warps[picks.iss_idx[q] as usize * ns + q];
            let stream = self.k.stream(wp.index as usize);
            let ins = &stream[wp.pc as usize];
            let d = &mut self.inp.dsc[q];
            d.shared = ins.op.is_shared();
            d.rel = ins.op == Op::Relssp;
            d.exit = ins.exits(wp.pc as usize + 1 == stream.len());
            d.mask = wp.live;
            if let Some(off) = &ins.off {
                for l in 0..lanes {
                    d.off[l] = off.lane(l, lanes) as u64;
                }
            }
        }
    }

    /// Runs one cycle on the model, showing what happened to `rec` if given.
    pub fn cycle(&mut self, rec: Option<&mut CycleRecord>) -> Result<(), SmError> {
        self.cycle_checked(rec, &mut |_, _, _| Ok(()))
            .map_err(|e| match e {
                LoopError::Model(e) => e,
                LoopError::Diverged(..) => unreachable!("nothing to diverge from"),
            })
    }

    /// Runs one cycle and shows its inputs and the model's outputs to `check` before the SM
    /// reacts: an RTL beside the model evaluates the same inputs there and compares (§2.1).
    pub fn cycle_checked(
        &mut self,
        rec: Option<&mut CycleRecord>,
        check: &mut Check,
    ) -> Result<(), LoopError> {
        let phase = self.phase;
        self.drive();
        let mut out = std::mem::take(&mut self.out);
        self.core.pick(&self.inp, &mut out);
        self.describe(&out);
        self.core.finish(&self.inp, &mut out);
        let checked = check(phase, &self.inp, &out);
        let r = checked
            .map_err(|m| LoopError::Diverged(phase, m))
            .and_then(|()| self.after(&out, rec).map_err(LoopError::Model));
        self.out = out;
        r
    }

    /// The SM's side of the edge, from the core's outputs of the cycle: issued instructions
    /// advance, exits and barriers, completions scheduled, TBs retired and launched.
    fn after(&mut self, o: &CoreOut, mut rec: Option<&mut CycleRecord>) -> Result<(), SmError> {
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
        if o.err_cfg {
            return Err(SmError::Kernel(format!(
                "cycle {c}: the slot pairing is invalid (err_cfg)"
            )));
        }
        if o.lock.err_proto || o.lock.err_pend {
            let s = (0..o.lock.acq.len())
                .find(|&q| o.lock.acq[q])
                .map_or(0, |q| o.rq_slot[q] as u32);
            return Err(SmError::Protocol {
                cycle: c,
                slot: s,
                tb: self.slot_tb.get(s as usize).copied().flatten().unwrap_or(0),
            });
        }
        let ns = self.p.shape.nsched as usize;
        let lat = self.p.lat_shared as usize;
        let mut progress = false;
        for q in 0..ns {
            if !o.iss_valid[q] {
                continue;
            }
            let w = o.iss_idx[q] as usize * ns + q;
            let (slot, index, pc, live) = {
                let wp = &self.warps[w];
                (wp.slot, wp.index, wp.pc, wp.live)
            };
            let stream = self.k.stream(index as usize);
            let ins: &Instr = &stream[pc as usize];
            if let Some(r) = rec.as_deref_mut() {
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
                continue;
            }
            progress = true;
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
                    let id = self.branch_ids[(index as usize).min(self.branch_ids.len() - 1)]
                        [pc as usize];
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
            let wp = &mut self.warps[w];
            if ins.op == Op::Bar {
                wp.at_bar = true;
            }
            if let Some(d) = ins.dst {
                wp.ready_at[d as usize] = c + op_lat;
            }
            wp.pc = next;
            if exits {
                wp.live = 0;
                let tb = self.slot_tb[slot as usize].expect("valid warp has a TB");
                self.stats.tbs[tb as usize].finish = c;
            }
        }
        // Completions of this cycle were consumed by the core.
        for q in 0..ns {
            self.cpl[q * lat + c as usize % lat] = None;
        }
        self.count_locks(o, rec.as_deref_mut());
        self.release_barriers();
        for s in 0..self.slot_tb.len() {
            let Some(tb) = self.slot_tb[s] else { continue };
            if !o.lock.slot_idle[s] {
                continue;
            }
            progress = true;
            let s32 = s as u32;
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
        let pending = c < self.busy_until || o.lock.pend.iter().any(|&x| x != 0);
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

    /// Kernel cycle 0: the first TBs take slots `0..n`.
    fn start_kernel(&mut self) -> Phase {
        for slot in 0..self.stats.launch.n as u32 {
            if self.next_tb < self.k.grid {
                self.start_tb(slot, 0);
            }
        }
        Phase::Run(0)
    }

    /// Lock acquisitions and releases of the cycle, by cause (§2.4).
    fn count_locks(&mut self, o: &CoreOut, mut rec: Option<&mut CycleRecord>) {
        let l = &o.lock;
        for q in 0..l.acq.len() {
            // Two ports of one slot acquire one lock.
            let first = (0..q).all(|r| !(l.acq[r] && o.rq_slot[r] == o.rq_slot[q]));
            if l.acq[q] && first {
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
        for s in 0..l.rel_fire.len() {
            if !l.rel_fire[s] {
                continue;
            }
            let r = &mut self.stats.lock_releases;
            let cause = if l.xfer[s] {
                r.transfer += 1;
                "transfer"
            } else if o.tb_empty >> s & 1 == 1 {
                r.finish += 1;
                "finish"
            } else {
                r.relssp += 1;
                "relssp"
            };
            if let Some(rec) = rec.as_deref_mut() {
                rec.locks.push(LockEvent {
                    pair: o.table.pair(s as u64) as u32,
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
                }
            }
        }
    }

    /// Runs the kernel to the end, showing each kernel cycle to `each` if given.
    pub fn run(
        mut self,
        mut each: Option<&mut dyn FnMut(&CycleRecord)>,
    ) -> Result<SmStats, SmError> {
        let mut rec = CycleRecord::default();
        while !self.finished() {
            let kernel_cycle = matches!(self.phase, Phase::Run(_));
            match each.as_deref_mut() {
                Some(f) => {
                    self.cycle(Some(&mut rec))?;
                    if kernel_cycle {
                        f(&rec);
                    }
                }
                None => self.cycle(None)?,
            }
        }
        Ok(self.finish_stats())
    }

    /// The statistics, with IPC.
    pub fn finish_stats(mut self) -> SmStats {
        let s = &mut self.stats;
        s.ipc = if s.cycles == 0 {
            0.0
        } else {
            s.thread_instructions as f64 / s.cycles as f64
        };
        self.stats
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// A kernel file's kernel and params: the straight-line form ([`Kernel`]) or a program with
/// control flow ([`Program`], JSON with `blocks` or the text form), lowered; a program without `grid` runs one full wave (the launch's TB count).
pub fn load_kernel(
    text: &str,
    sets: &[(String, String)],
) -> Result<(Kernel, SmParams, Option<Lowered>), String> {
    let program = !text.trim_start().starts_with('{')
        || serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(text)
            .is_ok_and(|m| m.contains_key("blocks"));
    if !program {
        let k = Kernel::parse(text).map_err(|e| e.to_string())?;
        let p = params_for(&k, sets).map_err(|e| e.to_string())?;
        return Ok((k, p, None));
    }
    let prog = Program::parse(text).map_err(|e| e.to_string())?;
    let p = params_for(&prog.lower(1).kernel, sets).map_err(|e| e.to_string())?;
    p.validate().map_err(|e| e.to_string())?;
    let threads = prog.threads.unwrap_or(crate::kernel::cfg::DEFAULT_THREADS);
    let n = p.launch(prog.tb_smem, threads).n.max(1) as u32;
    let lowered = prog.lower(n);
    let k = lowered.kernel.clone();
    k.check(p.shape.lanes).map_err(|e| e.to_string())?;
    Ok((k, p, Some(lowered)))
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
