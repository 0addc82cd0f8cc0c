//! Co-simulation: the port layout, the one `Simulator` interface, the compare loop, the RTL
//! backends and the waveform writers.

pub mod backend;
pub mod compare;
pub mod gtkw;
pub mod layout;
pub mod sim;
pub mod surfer;
pub mod vcd_out;

pub use compare::*;
