//! RTL backends behind the one [`crate::harness::sim::Simulator`] interface.

pub mod icarus;
pub mod rusthdl;
pub mod verilator;
