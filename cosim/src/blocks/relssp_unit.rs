//! Behavioral model of the `RelsspUnit` (docs/scratchpad-sharing.md §3; Jatala et al., seed 001,
//! §6.2), written from the spec's pseudo-code, independently of the RTL: one integer lane mask
//! per warp, loops over ports, warps and slots.
//!
//! [`Relssp`] is the unit without ports (the SM model can drive it directly): [`Relssp::eval`]
//! gives this cycle's `done` / `tb_empty` and the next release bits, [`Relssp::tick`] takes the
//! clock edge. [`Model`] wires it to the block's ports for co-simulation.

use crate::blocks::bank_conflict_detector::{lane_field, Word};
use crate::harness::layout::{Layout, Slot};
use crate::harness::sim::Simulator;
use smrtl_hdl::blocks::relssp_unit::{port, Params};
use smrtl_hdl::netlist::mask;

/// One issue port's event this cycle (spec §3 `ev_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Event {
    pub valid: bool,
    pub rel: bool,
    pub exit: bool,
    /// Warp slot; an index ≥ W is ignored.
    pub warp: usize,
    /// Lanes that execute the instruction.
    pub mask: u64,
}

/// Per-warp inputs of one cycle (spec §3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WarpIn {
    pub valid: bool,
    /// TB slot id; an id ≥ T matches no slot.
    pub slot: usize,
    /// Launched, not yet exited lanes at the start of the cycle.
    pub live: u64,
    /// A new warp starts here: its release bits clear.
    pub launch: bool,
}

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

/// This cycle's per-slot outputs, bit `s` for slot `s`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotOut {
    pub done: u64,
    pub tb_empty: u64,
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

    /// Spec §3 for one cycle: `exm`/`rsm` ORed over the ports, `A`, `Rn`, `ok` per warp, then
    /// `done`/`tb_empty` per slot (a slot without a valid warp reads 1 in both).
    pub fn eval(&mut self, warps: &[WarpIn], events: &[Event]) -> SlotOut {
        let mut out = SlotOut {
            done: mask(self.slots),
            tb_empty: mask(self.slots),
        };
        for (w, x) in warps.iter().enumerate() {
            let (mut exm, mut rsm) = (0, 0);
            for e in events.iter().filter(|e| e.valid && e.warp == w) {
                if e.exit {
                    exm |= e.mask;
                }
                if e.rel {
                    rsm |= e.mask;
                }
            }
            let a = x.live & !exm & self.lanes_mask;
            self.rn[w] = if x.launch { 0 } else { self.r[w] | rsm };
            let ok = a & !self.rn[w] == 0;
            if x.valid && x.slot < self.slots {
                if !ok {
                    out.done &= !(1 << x.slot);
                }
                if a != 0 {
                    out.tb_empty &= !(1 << x.slot);
                }
            }
        }
        out
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

/// The block's ports, resolved once from the layout.
#[derive(Clone, Debug)]
struct Ports {
    reset: Word,
    warp_valid: Slot,
    warp_slot: Slot,
    live: Slot,
    warp_launch: Slot,
    ev_valid: Word,
    ev_rel: Word,
    ev_exit: Word,
    ev_warp: Slot,
    ev_mask: Slot,
    done: Word,
    tb_empty: Word,
    rbits: Slot,
}

/// The `RelsspUnit` on its ports: the same buffers as the RTL backends.
pub struct Model {
    ports: Ports,
    unit: Relssp,
    sw: usize,
    ww: usize,
    lanes: usize,
    warps: Vec<WarpIn>,
    events: Vec<Event>,
}

impl Model {
    pub fn new(p: &Params, layout: &Layout) -> Model {
        let s = p.shape();
        let input = |name: &str| layout.in_slot(name).clone();
        let word = |name: &str| Word::of(layout.in_slot(name));
        let output = |name: &str| Word::of(layout.out_slot(name));
        Model {
            ports: Ports {
                reset: word("reset"),
                warp_valid: input(port::WARP_VALID),
                warp_slot: input(port::WARP_SLOT),
                live: input(port::LIVE),
                warp_launch: input(port::WARP_LAUNCH),
                ev_valid: word(port::EV_VALID),
                ev_rel: word(port::EV_REL),
                ev_exit: word(port::EV_EXIT),
                ev_warp: input(port::EV_WARP),
                ev_mask: input(port::EV_MASK),
                done: output(port::DONE),
                tb_empty: output(port::TB_EMPTY),
                rbits: layout.out_slot(port::RBITS).clone(),
            },
            unit: Relssp::new(p),
            sw: s.sw(),
            ww: s.ww(),
            lanes: p.lanes as usize,
            warps: vec![WarpIn::default(); p.warps as usize],
            events: vec![Event::default(); p.nsched as usize],
        }
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        let ps = &self.ports;
        let bit = |slot: &Slot, i: usize| lane_field(slot.of(inputs), i, 1) == 1;
        for (w, x) in self.warps.iter_mut().enumerate() {
            *x = WarpIn {
                valid: bit(&ps.warp_valid, w),
                slot: lane_field(ps.warp_slot.of(inputs), w, self.sw) as usize,
                live: lane_field(ps.live.of(inputs), w, self.lanes),
                launch: bit(&ps.warp_launch, w),
            };
        }
        let flag = |word: Word, q: usize| word.get(inputs) >> q & 1 == 1;
        for (q, e) in self.events.iter_mut().enumerate() {
            *e = Event {
                valid: flag(ps.ev_valid, q),
                rel: flag(ps.ev_rel, q),
                exit: flag(ps.ev_exit, q),
                warp: lane_field(ps.ev_warp.of(inputs), q, self.ww) as usize,
                mask: lane_field(ps.ev_mask.of(inputs), q, self.lanes),
            };
        }
        // Moore: the release bits at the start of the cycle. LANES divides 64, so no warp's
        // field straddles two words.
        let words = ps.rbits.of_mut(outputs);
        words.fill(0);
        for w in 0..self.warps.len() {
            let lo = w * self.lanes;
            words[lo / 64] |= self.unit.rbits(w) << (lo % 64);
        }
        let out = self.unit.eval(&self.warps, &self.events);
        ps.done.set(outputs, out.done);
        ps.tb_empty.set(outputs, out.tb_empty);
        self.unit.tick(ps.reset.get(inputs) == 1);
    }
}
