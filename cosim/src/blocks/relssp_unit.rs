//! Behavioral model of the `RelsspUnit` (docs/scratchpad-sharing.md §3; Jatala et al., seed 001,
//! §6.2), written from the spec's pseudo-code, independently of the RTL: one integer lane mask
//! per warp, loops over ports, warps and slots.
//!
//! [`Relssp`] is the unit on its typed cycle (the SM top drives it the same way):
//! [`Relssp::eval`] gives this cycle's `rbits`, `done` / `tb_empty` and the next release bits,
//! [`Relssp::tick`] takes the clock edge. [`Model`] puts it on the block's ports for
//! co-simulation. Nothing allocates per cycle.

use crate::{BlockModel, Layout, Simulator};
use smrtl_hdl::blocks::relssp_unit::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::relssp_unit::Params;
use smrtl_hdl::netlist::mask;

/// The release bits `R[W][LANES]` and the combinational `done` / `tb_empty` logic.
#[derive(Clone, Debug)]
pub struct Relssp {
    slots: usize,
    lanes_mask: u64,
    /// `R[w]`, one bit per lane.
    r: Vec<u64>,
    /// `Rn[w]` of the last [`Relssp::eval`], what the edge loads.
    rn: Vec<u64>,
}

impl Relssp {
    /// The unit in its reset state (all release bits 0).
    pub fn new(p: &Params) -> Relssp {
        let w = p.warps as usize;
        Relssp {
            slots: p.slots as usize,
            lanes_mask: mask(p.lanes as usize),
            r: vec![0; w],
            rn: vec![0; w],
        }
    }

    /// `R[w]`.
    pub fn rbits(&self, w: usize) -> u64 {
        self.r[w]
    }

    /// Spec §3 for one cycle: `rbits` = `R` (Moore); `exm`/`rsm` ORed over the valid events
    /// (a warp index ≥ W matches no warp), `A = live & ~exm`, `Rn` (0 on launch), `ok` per
    /// warp; then per slot `done` and `tb_empty`, the AND over its valid warps (a slot without
    /// one, or a slot id ≥ T, reads 1 in both).
    pub fn eval(&mut self, i: &Inputs, o: &mut Outputs) {
        o.rbits.copy_from_slice(&self.r);
        o.done.fill(true);
        o.tb_empty.fill(true);
        for w in 0..self.r.len() {
            let (mut exm, mut rsm) = (0, 0);
            for q in 0..i.ev_valid.len() {
                if i.ev_valid[q] && i.ev_warp[q] == w as u64 {
                    if i.ev_exit[q] {
                        exm |= i.ev_mask[q];
                    }
                    if i.ev_rel[q] {
                        rsm |= i.ev_mask[q];
                    }
                }
            }
            let a = i.live[w] & !exm & self.lanes_mask;
            self.rn[w] = if i.warp_launch[w] { 0 } else { self.r[w] | rsm };
            let ok = a & !self.rn[w] == 0;
            let s = i.warp_slot[w] as usize;
            if i.warp_valid[w] && s < self.slots {
                o.done[s] &= ok;
                o.tb_empty[s] &= a == 0;
            }
        }
    }

    /// The clock edge: `R <= Rn` (of the last [`Relssp::eval`]), or 0 on reset.
    pub fn tick(&mut self, reset: bool) {
        if reset {
            self.r.fill(0);
        } else {
            self.r.copy_from_slice(&self.rn);
        }
    }
}

/// The `RelsspUnit` on its ports: the same buffers as the RTL backends.
pub struct Model {
    unit: Relssp,
    io: Io,
    inputs: Inputs,
    outputs: Outputs,
}

impl BlockModel for Model {
    type Params = Params;
    fn new(p: &Params, layout: &Layout) -> Model {
        Model {
            unit: Relssp::new(p),
            io: Io::new(p, layout),
            inputs: Inputs::new(p),
            outputs: Outputs::new(p),
        }
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        self.io.read_inputs(inputs, &mut self.inputs);
        self.unit.eval(&self.inputs, &mut self.outputs);
        self.io.write_outputs(&self.outputs, outputs);
        self.unit.tick(self.inputs.reset);
    }
}
