//! The bridge to rust-hdl: a [`Module`] becomes a rust-hdl [`Block`] whose atoms carry their
//! widths at run time (rust-hdl's `Signal<_, Bits<N>>` fixes N at compile time, smrtl's params are
//! chosen on the command line). rust-hdl's `simulate()` settles the block, which is the `rusthdl`
//! co-simulation backend; each instance of the hierarchy is handed to rust-hdl's probes as a child
//! block (a scope of its own in rust-hdl's VCD, a named submodule for its Verilog writer).
//!
//! For Verilog the block is a rust-hdl black box whose code is smrtl's own text
//! ([`crate::verilog`]): rust-hdl's generator names modules by their path and has no ternary,
//! concatenation or memory, so a rust-hdl design that contains an smrtl block instantiates it by
//! its stable module name (see [`crate::compose`] and `docs/verilog.md`).

use crate::netlist::{Module, NetKind};
use rust_hdl::core::constraint::PinConstraint;
use rust_hdl::core::prelude::*;
use rust_hdl::core::type_descriptor::{TypeDescriptor, TypeKind};
use std::sync::Arc;

/// A [`Module`] with its simulation state, as a rust-hdl block.
pub struct RtlBlock {
    module: Arc<Module>,
    values: Vec<u64>,
    /// The last `update` evaluated (an edge or a new input): rust-hdl's `has_changed`. It is
    /// conservative (an evaluation that changed nothing still counts), which costs one more
    /// no-op update per settle instead of a copy and a compare of every net and memory word
    /// per update (a scratchpad's memory made that most of a co-simulation's time).
    changed: bool,
    clock_seen: bool,
    /// An input changed since the last evaluation: the nets may not be settled. rust-hdl calls
    /// `update` until nothing changes; a pass with no new input and no edge only confirms the
    /// fixpoint, so it skips the evaluation (the netlist runs in evaluation order and settles in
    /// one pass).
    dirty: bool,
    ids: Vec<usize>,
}

impl RtlBlock {
    pub fn new(module: Arc<Module>) -> RtlBlock {
        let values = module.new_state();
        let ids = module
            .nets()
            .iter()
            .map(|_| rust_hdl::core::signal::get_signal_id())
            .collect();
        RtlBlock {
            values,
            changed: false,
            module,
            clock_seen: false,
            dirty: true,
            ids,
        }
    }

    pub fn module(&self) -> &Module {
        &self.module
    }

    /// Drives an input net (like writing `signal.next` in rust-hdl).
    pub fn set(&mut self, net: usize, words: &[u64]) {
        if self.module.get_words(&self.values, net) != words {
            self.module.set_words(&mut self.values, net, words);
            self.dirty = true;
        }
    }

    pub fn get(&self, net: usize) -> &[u64] {
        self.module.get_words(&self.values, net)
    }

    /// All net values (ports, wires and registers), for waveforms.
    pub fn values(&self) -> &[u64] {
        &self.values
    }
}

impl Logic for RtlBlock {
    fn update(&mut self) {
        self.changed = false;
        if let Some(clk) = self.module.clock_net() {
            let level = self.module.get(&self.values, clk) & 1 == 1;
            if level && !self.clock_seen {
                // Next values were settled by the previous update.
                self.module.clock_edge(&mut self.values);
                self.dirty = true;
            }
            self.clock_seen = level;
        }
        if self.dirty {
            self.module.eval_comb(&mut self.values);
            self.dirty = false;
            self.changed = true;
        }
    }

    fn hdl(&self) -> Verilog {
        Verilog::Blackbox(BlackBox {
            code: crate::verilog::emit(&self.module, &[]),
            name: self.module.name.clone(),
        })
    }
}

impl Block for RtlBlock {
    fn connect_all(&mut self) {}

    fn update_all(&mut self) {
        self.update();
    }

    fn has_changed(&self) -> bool {
        self.changed
    }

    fn accept(&self, name: &str, probe: &mut dyn Probe) {
        probe.visit_start_scope(name, self);
        self.accept_contents(probe, true);
        probe.visit_end_scope(name, self);
    }
}

impl RtlBlock {
    /// Visits the top's nets as atoms (its ports only when `ports`: a typed wrapper's signals
    /// stand for them, see [`crate::compose`]), then each instance as a child block.
    pub fn accept_contents(&self, probe: &mut dyn Probe, ports: bool) {
        self.visit_level(&self.module, 0, ports, probe);
    }

    /// Visits the own nets of `level` (a module of the hierarchy whose net 0 is net `base` of the
    /// flattened top) as atoms, then each of its instances as a child scope.
    fn visit_level(&self, level: &Module, base: usize, ports: bool, probe: &mut dyn Probe) {
        let top = &*self.module;
        for (i, net) in level.nets().iter().enumerate() {
            if net.owner.is_some() {
                continue;
            }
            let kind = match net.kind {
                NetKind::Input => AtomKind::InputParameter,
                NetKind::Output => AtomKind::OutputParameter,
                _ => AtomKind::LocalSignal,
            };
            if !ports && kind != AtomKind::LocalSignal {
                continue;
            }
            let id = base + i;
            let atom = NetAtom {
                width: net.width,
                kind,
                words: top.get_words(&self.values, id),
                changed: self.changed,
                id: self.ids[id],
            };
            probe.visit_atom(&net.name, &atom);
        }
        for inst in level.instances() {
            let scope = InstanceScope {
                block: self,
                module: &inst.module,
                base: base + inst.net_base,
            };
            scope.accept(&inst.name, probe);
        }
    }
}

/// One instance of the hierarchy, seen by rust-hdl as a child block of its parent (its nets live
/// in the flattened top's value store).
struct InstanceScope<'a> {
    block: &'a RtlBlock,
    module: &'a Module,
    base: usize,
}

impl Logic for InstanceScope<'_> {
    fn update(&mut self) {}

    /// Named by its stable module name; its text is in the top's black box, once.
    fn hdl(&self) -> Verilog {
        Verilog::Blackbox(BlackBox {
            code: String::new(),
            name: self.module.name.clone(),
        })
    }
}

impl Block for InstanceScope<'_> {
    fn connect_all(&mut self) {}
    fn update_all(&mut self) {}
    fn has_changed(&self) -> bool {
        false
    }
    fn accept(&self, name: &str, probe: &mut dyn Probe) {
        probe.visit_start_scope(name, self);
        self.block.visit_level(self.module, self.base, true, probe);
        probe.visit_end_scope(name, self);
    }
}

/// One net seen as a rust-hdl atom.
struct NetAtom<'a> {
    width: usize,
    kind: AtomKind,
    words: &'a [u64],
    changed: bool,
    id: usize,
}

impl Atom for NetAtom<'_> {
    fn bits(&self) -> usize {
        self.width
    }
    fn connected(&self) -> bool {
        true
    }
    fn changed(&self) -> bool {
        self.changed
    }
    fn kind(&self) -> AtomKind {
        self.kind
    }
    fn descriptor(&self) -> TypeDescriptor {
        TypeDescriptor {
            name: format!("Bits<{}>", self.width),
            kind: TypeKind::Bits(self.width),
        }
    }
    fn vcd(&self) -> VCDValue {
        let bit = |b: usize| {
            if self.words[b / 64] >> (b % 64) & 1 == 1 {
                vcd::Value::V1
            } else {
                vcd::Value::V0
            }
        };
        if self.width == 1 {
            VCDValue::Single(bit(0))
        } else {
            VCDValue::Vector((0..self.width).rev().map(bit).collect())
        }
    }
    fn id(&self) -> usize {
        self.id
    }
    fn verilog(&self) -> VerilogLiteral {
        VerilogLiteral::from(self.words[0])
    }
    fn constraints(&self) -> Vec<PinConstraint> {
        vec![]
    }
}

/// The Verilog of `m` (top module `m.name`, then every distinct child module once); see
/// [`crate::verilog::emit`].
pub fn emit_verilog(m: &Arc<Module>) -> String {
    crate::verilog::emit(m, &[])
}
