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
//!
//! Parts: the pipeline's state and TB launches (`state.rs`), the cycle in its phases
//! (`phases.rs`), counters, statistics and records (`stats.rs`), the waveform and the run loop
//! (`wave.rs`), the stall probe's predicates (`stalls.rs`); the L1D (`l1d.rs`), the params (`params.rs`) and workloads (`workload.rs`).

pub mod l1d;
pub mod params;
pub mod partition;
mod phases;
mod stalls;
mod state;
mod stats;
mod wave;
pub mod workload;

pub use crate::blocks::mem_issue_ctl::{CtlIn, CtlOut, MemIssueCtl};
use l1d::{L1d, Outcome};
use params::{PipeParams, MAX_ACCESSES, MAX_KERNELS, SCHEDULERS};
pub use stats::{
    Causes, Counters, CycleRecord, DispatchView, KernelStats, MilHistory, PipeStats, SchedView,
};
use std::collections::VecDeque;
pub use wave::{push_wave, run, run_on, wave_layout};
use workload::KernelSpec;

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
    /// SMK-W: each kernel's warp-instruction quota left (spec §7); unused when
    /// `p.smkw_quota` is empty.
    wq: [u32; MAX_KERNELS],
    sched_view: [SchedView; SCHEDULERS],
    counters: [Counters; MAX_KERNELS],
    lsu_stall_cycles: u64,
    mem_issue_cycles: u64,
    pending_relaunch: u32,
    /// The stall probe, when attached (docs/stall-inspector.md §5): it only observes.
    stalls: Option<Box<crate::sm::stalls::Stalls>>,
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
