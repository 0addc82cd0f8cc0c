//! smrtl RTL: one file per block with its params (the single source of truth), its ports
//! (declared once with [`ports!`]) and its generator, built as a [`netlist::Module`]. The same
//! module is evaluated (the rust-hdl bridge, [`rusthdl`]) and written as Verilog by the
//! project's own writer ([`verilog`]).

pub mod block;
pub mod blocks;
pub mod cleanup;
pub mod compose;
#[cfg(feature = "faults")]
pub mod faults;
pub mod layout;
pub mod netlist;
pub mod params;
pub mod ports;
pub mod progress;
pub mod rusthdl;
pub mod tools;
pub mod verilog;

pub use block::Block;
pub use layout::{Layout, Slot};
pub use netlist::{Dir, Module, Port};
pub use params::{shown, BlockParams, ParamError, ParamInfo};
pub use ports::HasPorts;

#[doc(hidden)]
pub use pastey as __pastey;

/// `ok`: without the `faults` feature no planted fault is compiled (see `faults`).
#[cfg(not(feature = "faults"))]
#[macro_export]
macro_rules! planted {
    ($fault:expr, $bug:expr, $ok:expr) => {
        $ok
    };
}
