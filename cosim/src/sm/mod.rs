//! SM-level models that are systems of their own, one per seed, each around its blocks' models
//! in `crate::blocks`:
//! - [`elastic_sm`]: the seed-000 SM core in scheduler mode (docs/elastic-pipeline.md §5): warps,
//!   the BCAWS scheduler and issue unit driving the elastic pipeline, run on workloads;
//! - [`sharing_sm`]: the seed-001 thread-block-residency SM (docs/scratchpad-sharing.md §1, §5)
//!   around the `sharing_core` model: launches, kernels' instruction streams, TBs retiring;
//! - [`mem_sm`]: the seed-004 SM memory pipeline (docs/memory-issue-control.md §1–§2):
//!   schedulers, the memory-issue slot, LSU, L1D and lower memory around `mem_issue_ctl`;
//! - [`coh_sm`]: the seed-003 coherent multi-SM memory system (docs/stall-inspector.md §10):
//!   SMs with L1, store buffer, scratchpad / stash and DMA over a banked L2, GPU coherence or
//!   DeNovo;
//! - [`stalls`]: the stall probe each of them can carry (docs/stall-inspector.md §5).

pub mod coh_sm;
pub mod elastic_sm;
pub mod mem_sm;
pub mod sharing_sm;
pub mod stalls;
