//! The bridge to rust-hdl: a [`Module`] becomes a rust-hdl [`Block`] whose atoms carry their
//! widths at run time (rust-hdl's `Signal<_, Bits<N>>` fixes N at compile time, smrtl's params are
//! chosen on the command line). rust-hdl's `generate_verilog` writes the module (ports and net
//! declarations from the block's atoms) around the logic body this file renders, and rust-hdl's
//! `simulate()` settles the block, which is the `rusthdl` co-simulation backend.
//!
//! The body is rendered here rather than through rust-hdl's `VerilogExpression` AST: that AST has
//! no ternary or concatenation, and its generator re-evaluates any signal text containing `[`.

use crate::netlist::{mask, Module, NetKind, NodeView, Op};
use rust_hdl::core::constraint::PinConstraint;
use rust_hdl::core::prelude::*;
use rust_hdl::core::type_descriptor::{TypeDescriptor, TypeKind};
use std::sync::Arc;

/// A [`Module`] with its simulation state, as a rust-hdl block.
pub struct RtlBlock {
    module: Arc<Module>,
    values: Vec<u64>,
    prev: Vec<u64>,
    clock_seen: bool,
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
            prev: values.clone(),
            values,
            module,
            clock_seen: false,
            ids,
        }
    }

    pub fn module(&self) -> &Module {
        &self.module
    }

    /// Drives an input net (like writing `signal.next` in rust-hdl).
    pub fn set(&mut self, net: usize, words: &[u64]) {
        self.module.set_words(&mut self.values, net, words);
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
        self.prev.copy_from_slice(&self.values);
        if let Some(clk) = self.module.clock_net() {
            let level = self.module.get(&self.values, clk) & 1 == 1;
            if level && !self.clock_seen {
                // Next values were settled by the previous update.
                self.module.clock_edge(&mut self.values);
            }
            self.clock_seen = level;
        }
        self.module.eval_comb(&mut self.values);
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(verilog_body(&self.module))
    }
}

impl Block for RtlBlock {
    fn connect_all(&mut self) {}

    fn update_all(&mut self) {
        self.update();
    }

    fn has_changed(&self) -> bool {
        self.values != self.prev
    }

    fn accept(&self, name: &str, probe: &mut dyn Probe) {
        probe.visit_start_scope(name, self);
        for (i, net) in self.module.nets().iter().enumerate() {
            let atom = NetAtom {
                width: net.width,
                kind: match net.kind {
                    NetKind::Input => AtomKind::InputParameter,
                    NetKind::Output => AtomKind::OutputParameter,
                    _ => AtomKind::LocalSignal,
                },
                words: self.module.get_words(&self.values, i),
                changed: self.module.get_words(&self.prev, i)
                    != self.module.get_words(&self.values, i),
                id: self.ids[i],
            };
            probe.visit_atom(&net.name, &atom);
        }
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
        VCDValue::Vector(
            (0..self.width)
                .rev()
                .map(|b| {
                    if self.words[b / 64] >> (b % 64) & 1 == 1 {
                        vcd::Value::V1
                    } else {
                        vcd::Value::V0
                    }
                })
                .collect(),
        )
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

/// An expression as Verilog text. Every operator's operands have equal widths (see
/// [`crate::netlist`]), so Verilog's context-determined widths change nothing.
fn render(m: &Module, e: &crate::netlist::Expr) -> String {
    let name = |id: usize| m.nets()[id].name.clone();
    match Module::node_view(e) {
        NodeView::Net(id) => name(id),
        NodeView::Const(c, w) => format!("{w}'d{}", c & mask(w)),
        NodeView::Slice(id, lo, w) => {
            if m.nets()[id].width == 1 {
                name(id)
            } else if w == 1 {
                format!("{}[{lo}]", name(id))
            } else {
                format!("{}[{}:{lo}]", name(id), lo + w - 1)
            }
        }
        NodeView::Not(a) => format!("~{}", paren(m, a)),
        NodeView::Any(a) => format!("|{}", paren(m, a)),
        NodeView::Bin(op, x, y) => {
            let op = match op {
                Op::And => "&",
                Op::Or => "|",
                Op::Xor => "^",
                Op::Add => "+",
                Op::Sub => "-",
                Op::Eq => "==",
                Op::Lt => "<",
            };
            format!("{} {op} {}", paren(m, x), paren(m, y))
        }
        NodeView::Mux(c, t, f) => {
            format!("{} ? {} : {}", paren(m, c), paren(m, t), paren(m, f))
        }
        NodeView::Concat(parts) => format!(
            "{{{}}}",
            parts
                .iter()
                .map(|p| render(m, p))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A sub-expression, parenthesised unless atomic.
fn paren(m: &Module, e: &crate::netlist::Expr) -> String {
    match Module::node_view(e) {
        NodeView::Net(_) | NodeView::Const(..) | NodeView::Slice(..) | NodeView::Concat(_) => {
            render(m, e)
        }
        _ => format!("({})", render(m, e)),
    }
}

/// The module body: the combinational nets in one `always @(*)` block, in evaluation order,
/// then the registers on `posedge clock` with synchronous reset.
fn verilog_body(m: &Module) -> String {
    let mut body = String::new();
    let assigns = m.assigns();
    if !assigns.is_empty() {
        body += "always @(*) begin\n";
        for (t, e) in assigns {
            body += &format!("    {} = {};\n", m.nets()[*t].name, render(m, e));
        }
        body += "end\n";
    }
    if m.has_registers() {
        let reset = &m.nets()[m.reset_net().expect("registers imply a reset")].name;
        let (mut rst, mut run) = (String::new(), String::new());
        for &(r, d) in m.regs() {
            let n = &m.nets()[r];
            let NetKind::Reg { reset } = n.kind else {
                unreachable!()
            };
            rst += &format!("        {} <= {}'d{reset};\n", n.name, n.width);
            run += &format!("        {} <= {};\n", n.name, m.nets()[d].name);
        }
        body += &format!(
            "always @(posedge clock) begin\n    if ({reset}) begin\n{rst}    end else begin\n{run}    end\nend\n"
        );
    }
    body
}

/// The Verilog of `m` as one self-contained file whose top module is named `m.name`.
pub fn emit_verilog(m: &Arc<Module>) -> String {
    let block = RtlBlock::new(m.clone());
    let text = generate_verilog_unchecked(&block);
    let renamed = text
        .replacen("module top(", &format!("module {}(", m.name), 1)
        .replacen("endmodule // top", &format!("endmodule // {}", m.name), 1);
    format!(
        "// Generated by smrtl {} from rust-hdl; top module `{}`.\n// Do not edit: regenerate with `smrtl gen {}`.\n{}",
        env!("CARGO_PKG_VERSION"),
        m.name,
        m.name,
        renamed
    )
}
