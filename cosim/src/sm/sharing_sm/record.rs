//! Why a run stops ([`SmError`], [`LoopError`]), what it measured ([`SmStats`]) and the
//! per-cycle record (docs/scratchpad-sharing.md §5).

use super::Phase;
use crate::blocks::sharing_core::{Inputs, Outputs};
use crate::harness::Mismatch;
use crate::kernel::launch::Launch;
use crate::kernel::program::Op;
use serde::Serialize;
use std::fmt;

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
///
/// [`SharingSm::cycle_checked`]: super::SharingSm::cycle_checked
pub type Check<'a> = dyn FnMut(Phase, &Inputs, &Outputs) -> Result<(), Box<Mismatch>> + 'a;

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
    /// Each TB, by TB id. Not serialized: a report lists them only for grids up to
    /// [`TB_LIST_MAX`] and summarises them always ([`TbSummary`], docs/cli.md "Limits").
    #[serde(skip)]
    pub tbs: Vec<TbLife>,
}

/// A JSON report lists each TB's life only for grids of at most this many TBs (a grid of 10^6
/// TBs would make a 100 MB report); larger grids get the [`TbSummary`] alone.
pub const TB_LIST_MAX: usize = 10_000;

/// The TB lives of a run in a few numbers: how many, and the spread of their turnaround (finish
/// − launch) and of their launch and finish cycles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct TbSummary {
    pub count: u64,
    /// Whether the report lists every TB (`tbs`): `count` ≤ [`TB_LIST_MAX`].
    pub listed: bool,
    pub turnaround_min: u64,
    pub turnaround_mean: f64,
    pub turnaround_max: u64,
    pub last_launch: u64,
    pub first_finish: u64,
}

impl TbSummary {
    pub fn of(tbs: &[TbLife]) -> TbSummary {
        let turnaround = |t: &TbLife| t.finish - t.launch;
        let total: u128 = tbs.iter().map(|t| u128::from(turnaround(t))).sum();
        TbSummary {
            count: tbs.len() as u64,
            listed: tbs.len() <= TB_LIST_MAX,
            turnaround_min: tbs.iter().map(turnaround).min().unwrap_or(0),
            turnaround_mean: if tbs.is_empty() {
                0.0
            } else {
                total as f64 / tbs.len() as f64
            },
            turnaround_max: tbs.iter().map(turnaround).max().unwrap_or(0),
            last_launch: tbs.iter().map(|t| t.launch).max().unwrap_or(0),
            first_finish: tbs.iter().map(|t| t.finish).min().unwrap_or(0),
        }
    }
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
