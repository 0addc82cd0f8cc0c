//! Stimulus for `OwnerClass` (docs/scratchpad-sharing.md §2.5): a random sharing table and lock
//! state held for a few cycles (locks mostly owned by one of their pair's slots, some free, a
//! few naming another slot) while the warp map changes every cycle; warps sit mostly in shared
//! slots, also in unshared ones and sometimes in a slot id ≥ T, and are mostly valid.

use crate::coverage::Cover;
use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::owner_class::Model;
use smrtl_cosim::blocks::share_cfg::Table;
use smrtl_hdl::blocks::owner_class::port::{Inputs, Outputs};
use smrtl_hdl::blocks::owner_class::Params;
use smrtl_hdl::blocks::sharing::Class;
use smrtl_hdl::blocks::sharing::Shape;
use smrtl_hdl::netlist::mask;
/// This block's coverpoints (docs/coverage.md).
type Point = Cover<Params>;

/// Inputs of `p` with `table`'s ShSM and ShTB, the locks `(valid, owner)` per pair and every
/// warp slot `(valid, slot)`.
pub fn inputs(p: &Params, table: &Table, locks: &[(bool, u64)], warps: &[(bool, u64)]) -> Inputs {
    let mut c = Inputs::new(p);
    c.shsm = table.shsm;
    c.shtb.copy_from_slice(&table.shtb);
    for (k, &(v, o)) in locks.iter().enumerate() {
        (c.lock_valid[k], c.lock_owner[k]) = (v, o);
    }
    for (w, &(v, s)) in warps.iter().enumerate() {
        (c.warp_valid[w], c.warp_slot[w]) = (v, s);
    }
    c
}

/// Longest random case; a failing case shrinks from at most this many cycles.
pub const CASE_CYCLES: usize = 32;

/// Cycles sharing one table and lock state.
const SEGMENT_CYCLES: usize = 8;

/// Who a random lock names.
#[derive(Clone, Copy, Debug)]
enum Owner {
    /// Slot k, the pair's lower slot in the launch layout.
    Lower,
    /// ShTB[k], its partner.
    Partner,
    Any,
}

/// Locks `(valid, owner)` of `table`'s pairs: pair `k` held (60 %) by slot `k`, its partner
/// or anyone.
fn locks(shape: &Shape, table: &Table, raw: &[(bool, Owner, u64)]) -> Vec<(bool, u64)> {
    let sw = mask(shape.sw());
    raw.iter()
        .enumerate()
        .map(|(k, &(valid, who, any))| {
            let owner = match who {
                Owner::Lower => k as u64,
                Owner::Partner => table.partner(k as u64) & sw,
                Owner::Any => any & sw,
            };
            (valid, owner)
        })
        .collect()
}

/// Cycles of warp maps, in segments that share a random table and lock state.
pub fn cycles(p: &Params) -> impl Strategy<Value = Vec<Inputs>> {
    let p = p.clone();
    let shape = p.shape();
    let (t, w, kp) = (u64::from(shape.slots), shape.warps as usize, shape.kp());
    let who =
        prop_oneof![3 => Just(Owner::Lower), 3 => Just(Owner::Partner), 1 => Just(Owner::Any)];
    let warp = (prop::bool::weighted(0.9), any::<u64>());
    let segment = (
        crate::blocks::share_cfg::table(&shape),
        prop::collection::vec((prop::bool::weighted(0.6), who, any::<u64>()), kp),
        prop::collection::vec(
            (prop::collection::vec(warp, w), prop::bool::weighted(0.05)),
            1..=SEGMENT_CYCLES,
        ),
    );
    prop::collection::vec(segment, 1..=CASE_CYCLES / SEGMENT_CYCLES).prop_map(move |segments| {
        let mut out = vec![];
        for (table, lock_raw, cycles) in segments {
            let locks = locks(&shape, &table, &lock_raw);
            let shared: Vec<u64> = (0..t).filter(|&s| table.partner(s) != table.none).collect();
            for (warps, reset) in cycles {
                // Half the warps in a shared slot (if any), one in eight in a slot id >= T.
                let warps: Vec<(bool, u64)> = warps
                    .into_iter()
                    .map(|(valid, s)| {
                        let slot = match s % 8 {
                            0 => s >> 3,
                            1..=4 if !shared.is_empty() => shared[(s >> 3) as usize % shared.len()],
                            _ => (s >> 3) % t,
                        };
                        (valid, slot & mask(shape.sw()))
                    })
                    .collect();
                let mut c = inputs(&p, &table, &locks, &warps);
                c.reset = reset;
                out.push(c);
            }
        }
        out
    })
}

impl Bench for Params {
    type Model = Model;
    const SUMMARY: &'static str =
        "scratchpad sharing's per-warp owner bit and OWF class (owner, unshared, non-owner) (seed 001)";

    fn stimulus(&self) -> BoxedStrategy<Vec<Inputs>> {
        cycles(self).boxed()
    }
    /// docs/scratchpad-sharing.md §2.5: every class (owner, unshared, non-owner), a shared
    /// warp whose lock is free (`FREE_CLASS`), an invalid warp in the owner's slot, ShSM off
    /// over a shared table, and a slot out of range where T leaves room for one.
    fn coverpoints(&self) -> Vec<Point> {
        let s = self.shape();
        let look = Lookup {
            t: u64::from(self.slots),
            none: s.none(),
            kp: s.kp() as u64,
            kw: s.kw(),
        };
        let class = |o: &Outputs, c: Class| o.warp_class.iter().any(|&w| w == c.code());
        let warps = |i: &Inputs| 0..i.warp_valid.len();
        let mut v = vec![
            Point::point("class_owner", "§2.5", move |_, _, o, _| {
                class(o, Class::Owner)
            }),
            Point::point("class_unshared", "§2.5", move |_, _, o, _| {
                class(o, Class::Unshared)
            }),
            Point::point("class_nonowner", "§2.5", move |_, _, o, _| {
                class(o, Class::Nonowner)
            }),
            Point::point("free_lock", "§2.5", move |_, i, _, _| {
                warps(i).any(|w| i.warp_valid[w] && look.shared(i, w) && !look.lock(i, w).0)
            }),
            Point::point("invalid_warp_in_owner_slot", "§2.5", move |_, i, _, _| {
                warps(i).any(|w| !i.warp_valid[w] && look.owns(i, w))
            }),
            Point::point("shsm_off_over_shared_table", "§2.5", move |_, i, _, _| {
                !i.shsm && i.shtb.iter().any(|&e| e != look.none)
            }),
        ];
        v.push(if look.t < 1 << s.sw() {
            Point::point("slot_out_of_range", "§2.5", move |_, i, _, _| {
                warps(i).any(|w| i.warp_valid[w] && i.warp_slot[w] >= look.t)
            })
        } else {
            Point::unreachable(
                "slot_out_of_range",
                "§2.5",
                "T is a power of two: every warp_slot names a slot",
            )
        });
        v
    }
}

/// The §2.5 lookups of a warp's slot, with spec §0's out-of-range rules (a slot ≥ T reads
/// ShTB as `NONE`, a pair index ≥ KP a free lock).
#[derive(Clone, Copy)]
struct Lookup {
    t: u64,
    none: u64,
    kp: u64,
    kw: usize,
}

impl Lookup {
    fn partner(&self, i: &Inputs, s: u64) -> u64 {
        if s < self.t {
            i.shtb[s as usize]
        } else {
            self.none
        }
    }

    /// Warp `w`'s slot is shared (ShSM on and a partner).
    fn shared(&self, i: &Inputs, w: usize) -> bool {
        i.shsm && self.partner(i, i.warp_slot[w]) != self.none
    }

    /// (held, owner) of warp `w`'s pair lock.
    fn lock(&self, i: &Inputs, w: usize) -> (bool, u64) {
        let s = i.warp_slot[w];
        let k = s.min(self.partner(i, s)) & mask(self.kw);
        if k < self.kp {
            (i.lock_valid[k as usize], i.lock_owner[k as usize])
        } else {
            (false, 0)
        }
    }

    /// Warp `w`'s slot holds its pair's lock.
    fn owns(&self, i: &Inputs, w: usize) -> bool {
        self.shared(i, w) && self.lock(i, w) == (true, i.warp_slot[w])
    }
}
