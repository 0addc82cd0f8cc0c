//! The `rusthdl` backend: the block's RTL inside rust-hdl's simulator, in process. The default
//! backend: it needs no external tool.

use crate::harness::layout::Layout;
use crate::harness::sim::{Rtl, Simulator};
use rust_hdl::core::prelude::simulate;
use smrtl_hdl::netlist::{Module, NetKind};
use smrtl_hdl::rusthdl::RtlBlock;
use std::sync::Arc;

/// Delta cycles allowed for one settle; a netlist in evaluation order settles in two.
const MAX_DELTAS: usize = 8;

pub struct RustHdl {
    block: RtlBlock,
    /// Net id of each stimulus input and each output, in layout order.
    in_nets: Vec<usize>,
    out_nets: Vec<usize>,
    clock: Option<usize>,
    layout: Layout,
}

impl RustHdl {
    pub fn new(module: Arc<Module>) -> RustHdl {
        let layout = Layout::new(&module.ports());
        let id = |n: &str| module.net_id(n).expect("port net");
        let in_nets = layout.inputs.iter().map(|s| id(&s.name)).collect();
        let out_nets = layout.outputs.iter().map(|s| id(&s.name)).collect();
        let clock = module.clock_net();
        let mut block = RtlBlock::new(module);
        settle(&mut block);
        RustHdl {
            block,
            in_nets,
            out_nets,
            clock,
            layout,
        }
    }
}

impl Rtl for RustHdl {
    fn eval(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        for (slot, &net) in self.layout.inputs.iter().zip(&self.in_nets) {
            self.block.set(net, slot.of(inputs));
        }
        // The clock falls with the new inputs; it rose at the end of the previous step.
        if let Some(clk) = self.clock {
            self.block.set(clk, &[0]);
        }
        settle(&mut self.block);
        for (slot, &net) in self.layout.outputs.iter().zip(&self.out_nets) {
            slot.of_mut(outputs).copy_from_slice(self.block.get(net));
        }
    }

    fn edge(&mut self) {
        if let Some(clk) = self.clock {
            self.block.set(clk, &[1]);
            settle(&mut self.block);
        }
    }
}

impl RustHdl {
    /// The wires and registers a waveform shows, with their net indices.
    fn internal(&self) -> impl Iterator<Item = (usize, &smrtl_hdl::netlist::Net)> {
        self.block
            .module()
            .nets()
            .iter()
            .enumerate()
            .filter(|(_, n)| matches!(n.kind, NetKind::Wire | NetKind::Reg { .. }))
    }
}

fn settle(block: &mut RtlBlock) {
    assert!(
        simulate(block, MAX_DELTAS),
        "netlist did not settle: combinational loop"
    );
}

impl Simulator for RustHdl {
    fn name(&self) -> &str {
        "rusthdl"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        self.eval(inputs, outputs);
        self.edge();
    }

    fn internal_nets(&self) -> Vec<(String, usize)> {
        self.internal()
            .map(|(_, n)| (n.name.clone(), n.width))
            .collect()
    }

    fn internal_values(&self, words: &mut Vec<u64>) {
        for (i, _) in self.internal() {
            words.extend_from_slice(self.block.get(i));
        }
    }
}
