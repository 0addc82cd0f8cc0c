//! smrtl co-simulation: behavioral models written from the spec, the block-level harness that
//! compares them cycle by cycle with an RTL backend, the backends, and the VCD and GTKWave
//! save-file writers.

pub mod backend;
pub mod bank_conflict_detector;
pub mod cfg;
pub mod cfg_text;
pub mod elastic_pipeline;
pub mod gtkw;
pub mod harness;
pub mod history_cache;
pub mod kernel;
pub mod launch;
pub mod layout;
pub mod lock_table;
pub mod mem_issue_ctl;
pub mod mem_pipeline;
pub mod milg;
pub mod owner_class;
pub mod qbmi_arb;
pub mod rbmi_arb;
pub mod relssp_pass;
pub mod relssp_unit;
pub mod req_counter;
pub mod share_cfg;
pub mod sharing_core;
pub mod sim;
pub mod sm_core;
pub mod sp_access_unit;
pub mod vcd_out;
pub mod warp_scheduler;

pub use layout::{Layout, Slot};
pub use sim::{Rtl, Simulator};
