//! Studies over the SM-level systems: `smrtl sim` runs and their trace files, sweeps,
//! reproductions, profiles and the batch conflict evaluator.

pub mod conflict;
pub mod mem_sm;
pub mod profiles;
pub mod repro;
pub mod sharing_profiles;
pub mod sharing_repro;
pub mod sim;
pub mod sweep;
pub mod trace;
