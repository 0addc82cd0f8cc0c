//! `smrtl repro stall-inspector` (docs/stall-inspector.md §11; spec §5–§7.3, seed 003 Figs.
//! 1–4): the figures of the paper's case studies, normalised as spec §5 says, and the trend
//! targets T-a … T-f evaluated on them.

pub mod figures;
pub mod points;
pub mod report;
pub mod run;
pub mod targets;
