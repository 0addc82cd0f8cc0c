//! One RTL generator per block: its params (the single source of truth), its ports and its
//! netlist. `sharing` holds the parameters the scratchpad-sharing blocks share.

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
pub mod sharing;
pub mod sharing_core;
pub mod sm_core;
pub mod sp_access_unit;
pub mod stall_inspector;
pub mod warp_scheduler;

/// The docs pages the blocks' Verilog cites ([`crate::netlist::Module::cites`]): each block's
/// section comments give § numbers of its page (docs/verilog.md "Names").
pub(crate) mod docs {
    pub const ELASTIC_PIPELINE: &str = "docs/elastic-pipeline.md";
    pub const MEMORY_ISSUE_CONTROL: &str = "docs/memory-issue-control.md";
    pub const SCRATCHPAD_SHARING: &str = "docs/scratchpad-sharing.md";
    pub const STALL_INSPECTOR: &str = "docs/stall-inspector.md";
}
