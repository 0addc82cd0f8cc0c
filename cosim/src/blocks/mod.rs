//! One behavioral model per block, written from the spec, on the block's ports.

pub mod bank_conflict_detector;
pub mod elastic_pipeline;
pub mod history_cache;
pub mod lock_table;
pub mod mem_issue_ctl;
pub mod milg;
pub mod owner_class;
pub mod qbmi_arb;
pub mod rbmi_arb;
pub mod relssp_unit;
pub mod req_counter;
pub mod share_cfg;
pub mod sharing_core;
pub mod sm_core;
pub mod sp_access_unit;
pub mod stall_inspector;
pub mod warp_scheduler;
