//! smrtl RTL: one file per block with its params (the single source of truth), its port list
//! and its RTL, built as a [`netlist::Module`] and emitted as Verilog through rust-hdl.

pub mod blocks;
pub mod compose;
pub mod netlist;
pub mod params;
pub mod rusthdl;
pub mod tools;
pub mod verilog;

pub use netlist::{Dir, Module, Port};
pub use params::{shown, BlockParams, ParamError, ParamInfo};
