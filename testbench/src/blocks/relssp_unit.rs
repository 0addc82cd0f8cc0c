//! Stimulus for the `RelsspUnit` (docs/scratchpad-sharing.md §3): a proptest strategy of typed
//! cycles that plays an SM around the unit. TBs of one to four warps sit in the
//! slots; issue-port events mostly hit the warps of one "focus" slot, so several ports collide
//! on a warp and a slot's release completes; relssp masks are all live lanes, the lanes not yet
//! released, a subset, one lane or lanes that are not live; exits clear `live` from the next
//! cycle as the SM would (usually); warps are launched (sometimes while a relssp to the same
//! warp is issued), invalidated and moved, slot ids ≥ T and warp ids ≥ W occur where the widths
//! allow them, and resets are rare.

use crate::coverage::Cover;
use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::relssp_unit::Model;
use smrtl_hdl::blocks::relssp_unit::port::{Inputs, Outputs};
use smrtl_hdl::blocks::relssp_unit::Params;
use smrtl_hdl::netlist::mask;

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
    /// The warps of the coming cycle (no event, no launch).
    next: Inputs,
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
        let mut next = Inputs::new(p);
        for w in 0..p.warps as usize {
            let h = (bits ^ w as u64).wrapping_mul(MIX);
            next.live[w] = match live_kind {
                0 => h & full,
                1 if w % 3 == 0 => h & full,
                _ => full,
            };
            // With `vacant`, about one warp slot in four is empty.
            next.warp_valid[w] = vacant == 0 || (h >> 40) & 3 != 0;
            next.warp_slot[w] = ((w / per_tb) % t) as u64;
        }
        Sm {
            p: p.clone(),
            next,
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
        let (live, r) = match self.next.live.get(warp) {
            Some(&live) => (live, self.r[warp]),
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
    fn cycle(&mut self, (ports, (ctl, cpick, cbits), follow, reset): Raw) -> Inputs {
        let (t, nw) = (self.p.slots as usize, self.p.warps as usize);
        let full = mask(self.p.lanes as usize);
        let slot_ids = 1u64 << self.p.shape().sw();
        self.in_focus.clear();
        for w in 0..nw {
            if self.next.warp_valid[w] && self.next.warp_slot[w] == self.focus as u64 {
                self.in_focus.push(w);
            }
        }
        let mut c = self.next.clone();
        c.reset = reset;
        for (q, &(kind, choice, pick, mkind, bits)) in ports[..c.ev_valid.len()].iter().enumerate()
        {
            let warp = self.warp(choice, pick);
            c.ev_valid[q] = kind != 0;
            c.ev_rel[q] = matches!(kind, 1..=3 | 6) || (kind == 0 && bits & 1 == 1);
            c.ev_exit[q] = matches!(kind, 4..=6) || (kind == 0 && bits & 2 == 2);
            c.ev_warp[q] = warp as u64;
            c.ev_mask[q] = self.lanes(warp, mkind, bits >> 2);
        }
        match ctl {
            // Launch a warp, mostly one of the focus slot (so it races its relssp events).
            0..=2 => {
                let w = self.warp(cpick as u8 % 10, cpick >> 8) % nw;
                c.warp_valid[w] = true;
                if ctl == 2 {
                    c.warp_slot[w] = cbits % t as u64;
                }
                c.live[w] = self.new_live(cbits >> 8);
                c.warp_launch[w] = true;
            }
            3 => c.warp_valid[cpick % nw] ^= true,
            // Move a warp to any slot id the field holds (≥ T where the width allows).
            4 => c.warp_slot[cpick % nw] = cbits % slot_ids,
            5..=7 => self.focus = (cbits as usize) % t,
            _ => {}
        }
        // The next cycle: release bits as the unit keeps them, exited lanes leave `live`.
        let n = &mut self.next;
        n.warp_valid.copy_from_slice(&c.warp_valid);
        n.warp_slot.copy_from_slice(&c.warp_slot);
        n.live.copy_from_slice(&c.live);
        for w in 0..nw {
            let (mut exm, mut rsm) = (0, 0);
            for q in (0..c.ev_valid.len()).filter(|&q| c.ev_valid[q] && c.ev_warp[q] == w as u64) {
                exm |= if c.ev_exit[q] { c.ev_mask[q] } else { 0 };
                rsm |= if c.ev_rel[q] { c.ev_mask[q] } else { 0 };
            }
            self.r[w] = if reset || c.warp_launch[w] {
                0
            } else {
                self.r[w] | rsm
            };
            if follow {
                n.live[w] &= !exm & full;
            }
        }
        c
    }
}

/// A case of `1..=max` cycles for `p`.
pub fn cycles(p: &Params, max: usize) -> impl Strategy<Value = Vec<Inputs>> {
    let p = p.clone();
    (start(), prop::collection::vec(raw(), 1..=max)).prop_map(move |(start, raws)| {
        let mut sm = Sm::new(&p, start);
        raws.into_iter().map(|r| sm.cycle(r)).collect()
    })
}

impl Bench for Params {
    type Model = Model;
    const SUMMARY: &'static str =
        "relssp release logic: per-thread release bits, per-TB-slot done and tb_empty (seed 001)";

    fn stimulus(&self) -> BoxedStrategy<Vec<Inputs>> {
        cycles(self, CASE_CYCLES).boxed()
    }

    /// docs/scratchpad-sharing.md §3: a slot done with threads active, completed by this
    /// cycle's `relssp` or by its exits, a slot not done, all threads exiting, a launch
    /// clearing `R` and winning over a same-cycle `relssp`, a repeated `relssp`, `relssp` on
    /// lanes that are not live, two ports on one warp, the out-of-range rules, reset.
    fn coverpoints(&self) -> Vec<Point> {
        let mut v = vec![
            Point::point("done_with_active_threads", "§3", |_, _, o, _| {
                (0..o.done.len()).any(|s| o.done[s] && !o.tb_empty[s])
            }),
            Point::point("done_by_this_cycles_relssp", "§3", |p, i, o, _| {
                completes(p, i, o, |q| i.ev_rel[q])
            }),
            Point::point("done_by_this_cycles_exit", "§3", |p, i, o, _| {
                completes(p, i, o, |q| i.ev_exit[q])
            }),
            Point::point("slot_not_done", "§3", |_, _, o, _| {
                o.done.iter().any(|&d| !d)
            }),
            Point::point("last_threads_exit", "§3", |_, i, o, _| {
                (0..i.warp_valid.len()).any(|w| {
                    let s = i.warp_slot[w] as usize;
                    i.warp_valid[w] && i.live[w] != 0 && s < o.tb_empty.len() && o.tb_empty[s]
                })
            }),
            Point::point("launch_clears_r", "§3", |_, i, o, _| {
                (0..i.warp_launch.len()).any(|w| i.warp_launch[w] && o.rbits[w] != 0)
            }),
            Point::point("launch_beats_relssp", "§3", |_, i, _, _| {
                ports(i)
                    .any(|q| i.ev_rel[q] && i.warp_launch.get(i.ev_warp[q] as usize) == Some(&true))
            }),
            Point::point("repeated_relssp", "§3", |_, i, o, _| {
                ports(i).any(|q| {
                    let r = o.rbits.get(i.ev_warp[q] as usize).copied().unwrap_or(0);
                    i.ev_rel[q] && i.ev_mask[q] != 0 && i.ev_mask[q] & !r == 0
                })
            }),
            Point::point("relssp_on_dead_lanes", "§3", |_, i, _, _| {
                ports(i).any(|q| {
                    let live = i.live.get(i.ev_warp[q] as usize).copied().unwrap_or(0);
                    i.ev_rel[q] && i.ev_mask[q] & !live != 0
                })
            }),
            Point::point("event_without_valid", "§3", |_, i, _, _| {
                (0..i.ev_valid.len()).any(|q| !i.ev_valid[q] && (i.ev_rel[q] || i.ev_exit[q]))
            }),
            Point::point("reset", "§3", |_, i, _, _| i.reset),
        ];
        v.push(Point::unless(
            (self.nsched == 1).then_some("NSCHED = 1: one issue port"),
            "two_ports_one_warp",
            "§3",
            |_, i, _, _| ports(i).any(|a| ports(i).any(|b| a < b && i.ev_warp[a] == i.ev_warp[b])),
        ));
        let s = self.shape();
        let (t, w) = (u64::from(self.slots), u64::from(self.warps));
        v.push(Point::unless(
            (1u64 << s.sw() == t).then_some("T is a power of two: every slot id names a slot"),
            "slot_id_out_of_range",
            "§3",
            move |_, i, _, _| {
                (0..i.warp_valid.len()).any(|k| i.warp_valid[k] && i.warp_slot[k] >= t)
            },
        ));
        v.push(Point::unless(
            (1u64 << s.ww() == w).then_some("W is a power of two: every warp id names a warp"),
            "warp_id_out_of_range",
            "§3",
            move |_, i, _, _| ports(i).any(|q| i.ev_warp[q] >= w),
        ));
        v
    }
}

/// This block's coverpoints (docs/coverage.md).
type Point = Cover<Params>;

/// The valid issue ports of a cycle.
fn ports(i: &Inputs) -> impl Iterator<Item = usize> + Clone + '_ {
    (0..i.ev_valid.len()).filter(|&q| i.ev_valid[q])
}

/// A slot is done in this cycle only because of an event `kind` of this cycle: a port of that
/// kind names a valid warp of the slot whose active lanes it covers and whose `R` did not.
fn completes(p: &Params, i: &Inputs, o: &Outputs, kind: impl Fn(usize) -> bool) -> bool {
    ports(i).filter(|&q| kind(q)).any(|q| {
        let w = i.ev_warp[q] as usize;
        let s = i.warp_slot.get(w).copied().unwrap_or(u64::MAX) as usize;
        w < i.warp_valid.len()
            && i.warp_valid[w]
            && s < p.slots as usize
            && o.done[s]
            && i.live[w] & !o.rbits[w] & i.ev_mask[q] != 0
    })
}
