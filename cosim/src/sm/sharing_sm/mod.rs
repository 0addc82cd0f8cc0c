//! The thread-block-residency SM of scratchpad sharing (docs/scratchpad-sharing.md §1, §5; Jatala
//! et al., seed 001) around the `sharing_core` block model
//! ([`crate::blocks::sharing_core::Core`]): the launch calculator (§1.2) and the launch writes
//! (§1.3–1.4), the kernel's instruction streams, register scoreboards and latencies (§5),
//! barriers, `cpl`, TBs retiring and new TBs taking the freed slots. An RTL beside the core sees
//! the same inputs every cycle ([`SharingSm::cycle_checked`]).
//!
//! Launch cycles (a reset, then one configuration write per slot) come before kernel cycle 0,
//! which launches the first TBs; warps issue from the cycle after their launch, so Fig. 5's
//! cycle 1 is the first issue cycle. The hot path allocates nothing; per-cycle records are
//! built only when a caller asks for them.
//!
//! Parts: the params and kernel loading (`params.rs`), errors, statistics and records
//! (`record.rs`), the cycle with its inputs to the core (`cycle.rs`), and the SM's side of the
//! edge (`edge.rs`), the stall probe's predicates (`stalls.rs`).

use crate::blocks::share_cfg::Table;
use crate::blocks::sharing_core::{Core, Inputs, Outputs};
use crate::kernel::program::{Kernel, REGS};

mod cycle;
mod edge;
mod params;
mod record;
mod stalls;

pub use params::{load_kernel, params_for, SmParams};
pub use record::{
    Check, CycleRecord, LockEvent, LoopError, Outcome, Pick, Releases, SmError, SmStats, TbLife,
    TbSummary, MAX_CYCLES, TB_LIST_MAX,
};

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
    /// Registers whose pending producer is a scratchpad / global access (the stall probe's
    /// load scoreboard tags, docs/stall-inspector.md §5).
    shared_dst: u32,
    global_dst: u32,
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
        shared_dst: 0,
        global_dst: 0,
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
    /// The core's inputs and outputs of the cycle.
    inp: Inputs,
    out: Outputs,
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
    /// The last cycle changed nothing but time: no pick, no lock event, no pending request,
    /// no TB retired (the idle skip's precondition, `cycle.rs`).
    quiet: bool,
    /// Whether [`SharingSm::run`] skips idle stretches (on by default).
    skip: bool,
    /// The stall probe, when attached (docs/stall-inspector.md §5): it only observes.
    stalls: crate::sm::stalls::ProbeSlot,
    /// The probe's predicates kept between the warps' events (`stalls.rs`).
    preds: stalls::PredCache,
}
