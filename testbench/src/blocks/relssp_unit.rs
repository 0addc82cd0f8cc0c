//! Stimulus for the `RelsspUnit` (docs/scratchpad-sharing.md §3): one [`Cycle`] per cycle, and
//! a proptest strategy that plays an SM around the unit. TBs of one to four warps sit in the
//! slots; issue-port events mostly hit the warps of one "focus" slot, so several ports collide
//! on a warp and a slot's release completes; relssp masks are all live lanes, the lanes not yet
//! released, a subset, one lane or lanes that are not live; exits clear `live` from the next
//! cycle as the SM would (usually); warps are launched (sometimes while a relssp to the same
//! warp is issued), invalidated and moved, slot ids ≥ T and warp ids ≥ W occur where the widths
//! allow them, and resets are rare.

use crate::design::{Case, OldBench};
use proptest::prelude::*;
use smrtl_cosim::blocks::relssp_unit::{Event, Model, WarpIn};
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::relssp_unit::{build, port, Params};
use smrtl_hdl::netlist::mask;
use smrtl_hdl::tools::ToolError;
use smrtl_hdl::Module;

/// All the unit's inputs of one cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    pub reset: bool,
    /// Per warp slot, W of them.
    pub warps: Vec<WarpIn>,
    /// Per issue port, NSCHED of them.
    pub events: Vec<Event>,
}

impl Cycle {
    /// No warp, no event.
    pub fn idle(p: &Params) -> Cycle {
        Cycle {
            reset: false,
            warps: vec![WarpIn::default(); p.warps as usize],
            events: vec![Event::default(); p.nsched as usize],
        }
    }
}

/// The cycle as one input buffer (values are cut to the field widths).
pub fn encode(p: &Params, layout: &Layout, c: &Cycle) -> Vec<u64> {
    let s = p.shape();
    let (sw, ww, l) = (s.sw(), s.ww(), p.lanes as usize);
    let mut buf = vec![0u64; layout.in_words];
    let slot = |name: &str| layout.in_slot(name);
    slot("reset").set(&mut buf, c.reset as u64);
    for (w, x) in c.warps.iter().enumerate() {
        slot(port::WARP_VALID).set_field(&mut buf, w, 1, x.valid as u64);
        slot(port::WARP_SLOT).set_field(&mut buf, w * sw, sw, x.slot as u64);
        slot(port::LIVE).set_field(&mut buf, w * l, l, x.live);
        slot(port::WARP_LAUNCH).set_field(&mut buf, w, 1, x.launch as u64);
    }
    for (q, e) in c.events.iter().enumerate() {
        slot(port::EV_VALID).set_field(&mut buf, q, 1, e.valid as u64);
        slot(port::EV_REL).set_field(&mut buf, q, 1, e.rel as u64);
        slot(port::EV_EXIT).set_field(&mut buf, q, 1, e.exit as u64);
        slot(port::EV_WARP).set_field(&mut buf, q * ww, ww, e.warp as u64);
        slot(port::EV_MASK).set_field(&mut buf, q * l, l, e.mask);
    }
    buf
}

/// Longest random case; a failing case shrinks from at most this many cycles.
pub const CASE_CYCLES: usize = 96;

/// Most issue ports of any shape (NSCHED ≤ 4): the per-port draws of a cycle.
const MAX_PORTS: usize = 4;

/// One port's draws: event kind, warp choice, warp pick, mask kind, random bits.
type PortRaw = (u8, u8, usize, u8, u64);
/// One cycle's draws: the ports, a control action (kind, warp pick, random bits), whether
/// `live` follows this cycle's exits, and reset.
type Raw = ([PortRaw; MAX_PORTS], (u8, usize, u64), bool, bool);

fn raw() -> impl Strategy<Value = Raw> {
    let port = (0..8u8, 0..10u8, any::<usize>(), 0..6u8, any::<u64>());
    (
        prop::array::uniform4(port),
        (0..40u8, any::<usize>(), any::<u64>()),
        prop::bool::weighted(0.9),
        prop::bool::weighted(0.004),
    )
}

/// What a case starts from: warps per TB, the chance a warp slot is vacant, how `live` starts.
type Start = (usize, u8, u8, u64);

fn start() -> impl Strategy<Value = Start> {
    (1..=4usize, 0..4u8, 0..4u8, any::<u64>())
}

/// A 64-bit odd constant (2^64 / golden ratio) that spreads one case's random bits over warps.
const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SM around the unit while a case is generated.
struct Sm {
    p: Params,
    /// The inputs of the coming cycle (events and pulses cleared).
    warps: Vec<WarpIn>,
    /// The unit's release bits, tracked to draw "the lanes not yet released".
    r: Vec<u64>,
    focus: usize,
    /// Scratch: the valid warps of the focus slot.
    in_focus: Vec<usize>,
}

impl Sm {
    fn new(p: &Params, (per_tb, vacant, live_kind, bits): Start) -> Sm {
        let full = mask(p.lanes as usize);
        let t = p.slots as usize;
        let warps = (0..p.warps as usize)
            .map(|w| {
                let h = (bits ^ w as u64).wrapping_mul(MIX);
                let live = match live_kind {
                    0 => h & full,
                    1 if w % 3 == 0 => h & full,
                    _ => full,
                };
                WarpIn {
                    // With `vacant`, about one warp slot in four is empty.
                    valid: vacant == 0 || (h >> 40) & 3 != 0,
                    slot: (w / per_tb) % t,
                    live,
                    launch: false,
                }
            })
            .collect();
        Sm {
            p: p.clone(),
            warps,
            r: vec![0; p.warps as usize],
            focus: 0,
            in_focus: Vec::with_capacity(p.warps as usize),
        }
    }

    /// A live-lane mask for a newly launched warp.
    fn new_live(&self, bits: u64) -> u64 {
        let full = mask(self.p.lanes as usize);
        match bits % 4 {
            0 => (bits >> 8) & full,
            1 => full >> ((bits >> 8) % self.p.lanes as u64),
            _ => full,
        }
    }

    /// A warp index by `choice` (0..10): the focus slot's warps mostly, any warp, or any value
    /// the `ev_warp` field holds (≥ W where the width allows).
    fn warp(&self, choice: u8, pick: usize) -> usize {
        let w = self.p.warps as usize;
        match choice {
            0..=5 if !self.in_focus.is_empty() => self.in_focus[pick % self.in_focus.len()],
            9 => pick % (1 << self.p.shape().ww()),
            _ => pick % w,
        }
    }

    /// The lanes an event executes on, by `kind` (0..6).
    fn lanes(&self, warp: usize, kind: u8, bits: u64) -> u64 {
        let full = mask(self.p.lanes as usize);
        let (live, r) = match self.warps.get(warp) {
            Some(x) => (x.live, self.r[warp]),
            None => (full, 0),
        };
        match kind {
            0 => live,
            1 => live & !r,
            2 => live & bits,
            3 => live & (1 << (bits % self.p.lanes as u64)),
            4 => bits & full,
            _ => full,
        }
    }

    /// One cycle from its draws; updates the SM for the next one.
    fn cycle(&mut self, (ports, (ctl, cpick, cbits), follow, reset): Raw) -> Cycle {
        let p = &self.p;
        let (t, nw) = (p.slots as usize, p.warps as usize);
        let full = mask(p.lanes as usize);
        let slot_ids = 1usize << p.shape().sw();
        self.in_focus.clear();
        for (w, x) in self.warps.iter().enumerate() {
            if x.valid && x.slot == self.focus {
                self.in_focus.push(w);
            }
        }
        let events: Vec<Event> = ports[..p.nsched as usize]
            .iter()
            .map(|&(kind, choice, pick, mkind, bits)| {
                let warp = self.warp(choice, pick);
                Event {
                    valid: kind != 0,
                    rel: matches!(kind, 1..=3 | 6) || (kind == 0 && bits & 1 == 1),
                    exit: matches!(kind, 4..=6) || (kind == 0 && bits & 2 == 2),
                    warp,
                    mask: self.lanes(warp, mkind, bits >> 2),
                }
            })
            .collect();
        let mut warps = self.warps.clone();
        match ctl {
            // Launch a warp, mostly one of the focus slot (so it races its relssp events).
            0..=2 => {
                let w = self.warp(cpick as u8 % 10, cpick >> 8) % nw;
                warps[w] = WarpIn {
                    valid: true,
                    slot: if ctl == 2 {
                        (cbits as usize) % t
                    } else {
                        warps[w].slot
                    },
                    live: self.new_live(cbits >> 8),
                    launch: true,
                };
            }
            3 => warps[cpick % nw].valid ^= true,
            // Move a warp to any slot id the field holds (≥ T where the width allows).
            4 => warps[cpick % nw].slot = (cbits as usize) % slot_ids,
            5..=7 => self.focus = (cbits as usize) % t,
            _ => {}
        }
        // The next cycle: release bits as the unit keeps them, exited lanes leave `live`.
        self.warps = warps.clone();
        for (w, x) in self.warps.iter_mut().enumerate() {
            let (mut exm, mut rsm) = (0, 0);
            for e in events.iter().filter(|e| e.valid && e.warp == w) {
                exm |= if e.exit { e.mask } else { 0 };
                rsm |= if e.rel { e.mask } else { 0 };
            }
            self.r[w] = if reset || x.launch {
                0
            } else {
                self.r[w] | rsm
            };
            if follow {
                x.live &= !exm & full;
            }
            x.launch = false;
        }
        Cycle {
            reset,
            warps,
            events,
        }
    }
}

/// A case of `1..=max` cycles for `p`.
pub fn cycles(p: &Params, max: usize) -> impl Strategy<Value = Vec<Cycle>> {
    let p = p.clone();
    (start(), prop::collection::vec(raw(), 1..=max)).prop_map(move |(start, raws)| {
        let mut sm = Sm::new(&p, start);
        raws.into_iter().map(|r| sm.cycle(r)).collect()
    })
}

pub struct RelsspBench;

impl OldBench for RelsspBench {
    type Params = Params;
    const SUMMARY: &'static str =
        "relssp release logic: per-thread release bits, per-TB-slot done and tb_empty (seed 001)";

    fn module(p: &Params) -> Module {
        build(p)
    }

    fn model(p: &Params, layout: &Layout) -> Box<dyn Simulator + Send> {
        Box::new(Model::new(p, layout))
    }

    fn cases(p: &Params, layout: &Layout) -> BoxedStrategy<Case> {
        let (p2, layout) = (p.clone(), layout.clone());
        cycles(p, CASE_CYCLES)
            .prop_map(move |cs| cs.iter().map(|c| encode(&p2, &layout, c)).collect())
            .boxed()
    }

    fn cost_notes(p: &Params) -> Result<smrtl_synth::Notes, ToolError> {
        smrtl_synth::blocks::relssp_unit::notes(p)
    }
}
