//! smrtl co-simulation: behavioral models written from the spec, the block-level harness that
//! compares them cycle by cycle with an RTL backend, the backends, and the VCD and GTKWave
//! save-file writers.

pub mod backend;
pub mod bank_conflict_detector;
pub mod elastic_pipeline;
pub mod gtkw;
pub mod harness;
pub mod history_cache;
pub mod launch;
pub mod layout;
pub mod owner_class;
pub mod share_cfg;
pub mod sim;
pub mod sm_core;
pub mod sp_access_unit;
pub mod vcd_out;

pub use layout::{Layout, Slot};
pub use sim::{Rtl, Simulator};
