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
//! - [`PortModel`], port mode (the `sm_core` block model, `cosim/src/blocks/sm_core.rs`): the
//!   `sm_core` input ports themselves, cycle by cycle (`has_next`, `kind`, `pc` per warp; the
//!   same-cycle descriptor answer `desc_*`; `icnt_*`; `kernel_start`; `reset`), producing the
//!   output ports, like every RTL backend.
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
//!
//! Parts: the workload and tag codec (`workload.rs`), the records and statistics (`record.rs`),
//! the core hardware driven by an issue source (`hardware.rs`), program mode with the kernel
//! runs (`program.rs`), and the stall probe's predicates (`stalls.rs`).
//!
//! [`Pipeline`]: crate::blocks::elastic_pipeline::Pipeline
//! [`Pipeline::cycle_with`]: crate::blocks::elastic_pipeline::Pipeline::cycle_with
//! [`Pipeline::step_with`]: crate::blocks::elastic_pipeline::Pipeline::step_with
//! [`HistoryCache`]: crate::blocks::history_cache::HistoryCache
//! [`Accumulator`]: crate::blocks::history_cache::Accumulator
//! [`DistanceCounter`]: crate::blocks::history_cache::DistanceCounter
//! [`PortModel`]: crate::blocks::sm_core::PortModel

mod gmem;
mod hardware;
mod program;
mod record;
mod stalls;
mod workload;

pub use gmem::GmemPath;
pub(crate) use hardware::{Core, Source};
pub use program::{core_of, run, run_each, run_stats, SmCore, MAX_KERNEL_CYCLES};
pub use record::{HcWrite, Outcome, OutcomeCounts, SmEvents, SmRecord, SmRun, SmStats, StatsAcc};
pub use smrtl_hdl::blocks::sm_core::{lg, Dram, GmemReturn, Params as SmParams, Sched};
pub use workload::{Instr, TagCodec, Workload};
