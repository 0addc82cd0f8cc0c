//! Studies over the SM-level systems ([`crate::systems`]): sweeps, reproductions, profiles,
//! the trace files of the elastic pipeline, the memory pipeline with its control in the loop,
//! and the batch conflict evaluator.

pub mod bank_bench;
pub mod bank_repro;
pub mod cache;
pub mod conflict;
pub mod mem_eval;
pub mod mem_sm;
pub mod profiles;
pub mod registry;
pub mod repro;
pub mod sharing_profiles;
pub mod sharing_repro;
pub mod stall_repro;
pub mod sweep;
pub mod trace;
