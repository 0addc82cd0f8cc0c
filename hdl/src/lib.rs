//! smrtl RTL: one file per block with its params (the single source of truth), its port list
//! and its RTL, built as a [`netlist::Module`] and emitted as Verilog through rust-hdl.

pub mod bank_conflict_detector;
pub mod compose;
pub mod elastic_pipeline;
pub mod history_cache;
pub mod lock_table;
pub mod mem_issue_ctl;
pub mod milg;
pub mod netlist;
pub mod owner_class;
pub mod params;
pub mod qbmi_arb;
pub mod rbmi_arb;
pub mod relssp_unit;
pub mod req_counter;
pub mod rusthdl;
pub mod share_cfg;
pub mod sharing;
pub mod sharing_core;
pub mod sm_core;
pub mod sp_access_unit;
pub mod tools;
pub mod verilog;
pub mod warp_scheduler;

pub use netlist::{Dir, Module, Port};
pub use params::{shown, BlockParams, ParamError, ParamInfo};
