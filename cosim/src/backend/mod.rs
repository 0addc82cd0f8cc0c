//! RTL backends behind the one [`crate::sim::Simulator`] interface.

pub mod icarus;
pub mod rusthdl;
pub mod verilator;
