//! A small, width-checked netlist: the RTL of every smrtl block is built as one [`Module`]
//! from its params. The same `Module` is evaluated cycle by cycle (the `rusthdl` backend runs it
//! inside rust-hdl's simulator, see [`crate::rusthdl`]) and emitted as Verilog
//! ([`crate::verilog`]), so simulation and Verilog come from one description.
//!
//! Hierarchy: a module instantiates another with [`Module::instance`]. For evaluation the
//! child's nets, registers and memories are copied into the parent (one flat tape, no speed
//! lost); for Verilog the parent keeps the instance and the child is emitted once as its own
//! module, however often it is instantiated (see `docs/verilog.md`).
//!
//! Memories ([`Module::memory`]) are arrays with asynchronous ([`Module::read`]) or synchronous
//! ([`Module::read_sync`]) read ports and clocked write ports ([`Module::write`]); their data has no
//! reset, so Yosys infers them as RAM.
//!
//! Width discipline: every operator takes operands of equal width and every assignment target has
//! the width of its expression. Under that rule Verilog's context-determined widths equal the
//! self-determined ones, so the emitted text means exactly what [`Module::eval_comb`] computes.

mod eval;
mod expr;
mod fold;
mod ir;
mod table;

pub(crate) use expr::NodeView;
pub use expr::{concat, concat_wide, or_all, or_tree, replicate, select_onehot, Expr, Op};
pub(crate) use ir::Item;
pub use ir::{
    addr_bits, mask, port_list, words_for, Dir, Instance, InstanceRef, Memory, Module, Net,
    NetKind, Port,
};
pub use table::Table;
