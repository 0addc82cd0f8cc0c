//! smrtl co-simulation: behavioral models written from the spec, the block-level harness that
//! compares them cycle by cycle with an RTL backend, the backends, and the VCD and GTKWave
//! save-file writers.

pub mod bankan;
pub mod blocks;
pub mod harness;
pub mod json;
pub mod kernel;
pub mod sm;

pub use harness::layout::{Layout, Slot};
pub use harness::sim::{BlockModel, Rtl, Simulator};
