//! smrtl stimulus: the papers' scenarios, random generators and proptest strategies, and the
//! random co-simulation driver that shrinks a failure to a minimal case.

pub mod bank_conflict_detector;
pub mod check;
pub mod conflict;
pub mod design;
pub mod elastic_pipeline;
pub mod history_cache;
pub mod lock_table;
pub mod owner_class;
pub mod profiles;
pub mod registry;
pub mod relssp_unit;
pub mod repro;
pub mod share_cfg;
pub mod sharing_core;
pub mod sim;
pub mod sm_core;
pub mod sp_access_unit;
pub mod stimulus_file;
pub mod sweep;
pub mod warp_scheduler;

pub use design::{Bench, BlockEntry, Case, Design};
pub use registry::{block, blocks};

/// Whether tests may use external `tool` (see [`smrtl_hdl::tools::external`]).
pub fn external(tool: &str) -> bool {
    smrtl_hdl::tools::external(&[tool])
}
