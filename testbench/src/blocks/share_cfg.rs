//! Stimulus for `ShareCfg` (docs/scratchpad-sharing.md §2.2) and the sharing tables every
//! scratchpad-sharing bench draws ([`table`]): mostly the §1.3 / §1.4 launch layout, also
//! symmetric pairings that break `min(s, partner) < KP`, and garbage, so `err_cfg` and the §0
//! out-of-range rules are exercised. ShareCfg's cases write a target table entry by entry, with
//! random writes, ShSM / `u` writes and rare resets mixed in, so the registered table passes
//! through half-built states on its way to a valid pairing.

use crate::coverage::Cover;
use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::share_cfg::{Model, Table};
use smrtl_hdl::blocks::share_cfg::port::{Inputs, Outputs};
use smrtl_hdl::blocks::share_cfg::Params;
use smrtl_hdl::blocks::sharing::Shape;
use smrtl_hdl::netlist::mask;

/// This block's coverpoints (docs/coverage.md).
type Point = Cover<Params>;

/// How a random table is made.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// The launch layout of §1.3 / §1.4: a valid pairing.
    Launch,
    /// A random symmetric matching of slots: `min(s, partner)` may reach KP.
    Matching,
    /// Every entry `NONE` or any TW-bit value.
    Garbage,
}

/// A random sharing table of `shape`, biased toward a valid launch (spec §1.3, §1.4) with a
/// few corrupted entries; `u` is often a TB's tenth, sometimes 0 or the top offset.
pub fn table(shape: &Shape) -> impl Strategy<Value = Table> {
    let shape = shape.clone();
    let t = shape.slots as usize;
    let kind = prop_oneof![
        6 => Just(Kind::Launch),
        2 => Just(Kind::Matching),
        1 => Just(Kind::Garbage),
    ];
    (
        kind,
        (
            any::<u64>(),
            any::<u64>(),
            any::<u64>(),
            0..8u8,
            any::<u64>(),
        ),
        prop::bool::weighted(0.9),
        Just((0..t as u64).collect::<Vec<u64>>()).prop_shuffle(),
        prop::collection::vec(any::<u64>(), t),
        prop::option::weighted(0.1, (any::<usize>(), any::<u64>())),
    )
        .prop_map(
            move |(kind, (originals, pairs, r_tb, u_kind, u_any), shsm, order, noise, corrupt)| {
                let aw_top = mask(shape.aw());
                let slots = t as u64;
                let r_tb = 1 + r_tb % aw_top;
                let u = match u_kind {
                    0 => 0,
                    1 => aw_top,
                    2 => u_any & aw_top,
                    _ => r_tb.div_ceil(10),
                };
                let mut table = match kind {
                    Kind::Launch => {
                        let originals = originals % (slots + 1);
                        let most = originals.min(slots - originals).min(shape.kp() as u64);
                        Table::layout(&shape, shsm, originals, pairs % (most + 1), u, r_tb)
                    }
                    Kind::Matching => {
                        let mut table = Table::new(&shape);
                        let matched = (pairs as usize % (t / 2 + 1)) * 2;
                        for two in order[..matched].chunks(2) {
                            table.shtb[two[0] as usize] = two[1];
                            table.shtb[two[1] as usize] = two[0];
                        }
                        table.shsm = shsm;
                        table.u = u;
                        for (b, n) in table.base.iter_mut().zip(&noise) {
                            *b = n & aw_top;
                        }
                        table
                    }
                    Kind::Garbage => {
                        let mut table = Table::new(&shape);
                        for (s, n) in noise.iter().enumerate() {
                            if n & 1 == 1 {
                                table.shtb[s] = (n >> 1) & shape.none();
                            }
                            table.base[s] = (n >> 8) & aw_top;
                        }
                        table.shsm = shsm;
                        table.u = u;
                        table
                    }
                };
                if let Some((s, v)) = corrupt {
                    table.shtb[s % t] = v & shape.none();
                }
                table
            },
        )
}

/// A cycle that writes ShTB[slot] = partner and base[slot] = base (spec §2.2).
pub fn slot_write(slot: u64, partner: u64, base: u64) -> Inputs {
    Inputs {
        cfg_slot_we: true,
        cfg_slot: slot,
        cfg_partner: partner,
        cfg_base: base,
        ..Inputs::default()
    }
}

/// The whole of `table` as a launch writes it: ShSM and u, then one slot per cycle.
pub fn launch_writes(table: &Table) -> Vec<Inputs> {
    let mut writes = vec![Inputs {
        cfg_shsm_we: true,
        cfg_shsm: table.shsm,
        cfg_u_we: true,
        cfg_u: table.u,
        ..Inputs::default()
    }];
    for (s, (&e, &b)) in table.shtb.iter().zip(&table.base).enumerate() {
        writes.push(slot_write(s as u64, e, b));
    }
    writes
}

/// Longest random case; a failing case shrinks from at most this many cycles.
pub const CASE_CYCLES: usize = 64;

/// What a cycle's slot port does.
#[derive(Clone, Copy, Debug)]
enum SlotOp {
    /// Writes the target's next entry (in slot order, wrapping).
    Next,
    /// Any slot id (≥ T included), any partner and base.
    Random,
    Idle,
}

/// Cycles of ShareCfg writes toward a random target table.
pub fn writes(shape: &Shape) -> impl Strategy<Value = Vec<Inputs>> {
    let shape = shape.clone();
    let op = prop_oneof![
        8 => Just(SlotOp::Next),
        1 => Just(SlotOp::Random),
        3 => Just(SlotOp::Idle),
    ];
    let cycle = (
        op,
        (any::<u64>(), any::<u64>(), any::<u64>()),
        (prop::bool::weighted(0.1), prop::bool::weighted(0.1)),
        (prop::bool::weighted(0.8), any::<u64>()),
        prop::bool::weighted(0.01),
    );
    (table(&shape), prop::collection::vec(cycle, 1..=CASE_CYCLES)).prop_map(
        move |(target, cycles)| {
            let t = target.shtb.len() as u64;
            let mut next = 0;
            cycles
                .into_iter()
                .map(
                    |(op, (slot, partner, base), (shsm_we, u_we), (own_u, u), reset)| {
                        let mut w = match op {
                            SlotOp::Next => {
                                let s = next % t;
                                next += 1;
                                slot_write(s, target.shtb[s as usize], target.base[s as usize])
                            }
                            SlotOp::Random => slot_write(slot, partner, base),
                            SlotOp::Idle => Inputs {
                                cfg_slot_we: false,
                                ..slot_write(slot, partner, base)
                            },
                        };
                        w.reset = reset;
                        w.cfg_shsm_we = shsm_we;
                        w.cfg_shsm = target.shsm;
                        w.cfg_u_we = u_we;
                        w.cfg_u = if own_u { target.u } else { u };
                        w
                    },
                )
                .collect()
        },
    )
}

impl Bench for Params {
    type Model = Model;
    const SUMMARY: &'static str =
        "scratchpad sharing's ShSM bit, ShTB pairing table, u and bases, with err_cfg (seed 001)";

    fn stimulus(&self) -> BoxedStrategy<Vec<Inputs>> {
        writes(&self.shape()).boxed()
    }
    /// docs/scratchpad-sharing.md §2.2: each write (a pairing, an unshared slot, a dropped
    /// slot), all three at once, reset over a write, a valid table and each cause of `err_cfg`.
    fn coverpoints(&self) -> Vec<Point> {
        let s = self.shape();
        let (t, none, kp) = (u64::from(self.slots), s.none(), s.kp() as u64);
        let writes = |i: &Inputs| i.cfg_shsm_we || i.cfg_u_we || i.cfg_slot_we;
        let slot_write = move |i: &Inputs| !i.reset && i.cfg_slot_we && i.cfg_slot < t;
        let mut v = vec![
            Point::point("write_shsm", "§2.2", |_, i, _, _| {
                !i.reset && i.cfg_shsm_we
            }),
            Point::point("write_u", "§2.2", |_, i, _, _| !i.reset && i.cfg_u_we),
            Point::point("write_partner", "§2.2", move |_, i, _, _| {
                slot_write(i) && i.cfg_partner != none
            }),
            Point::point("write_unshared", "§2.2", move |_, i, _, _| {
                slot_write(i) && i.cfg_partner == none
            }),
            Point::point("three_writes_at_once", "§2.2", |_, i, _, _| {
                i.cfg_shsm_we && i.cfg_u_we && i.cfg_slot_we
            }),
            Point::point("reset_wins_over_a_write", "§2.2", move |_, i, _, _| {
                i.reset && writes(i)
            }),
            Point::point("valid_pairing", "§2.2", move |_, _, o, _| {
                !o.err_cfg && shared(o, none).next().is_some()
            }),
            Point::point("err_self_pair", "§2.2", move |_, _, o, _| {
                shared(o, none).any(|(k, e)| e == k)
            }),
            Point::point("err_one_sided", "§2.2", move |_, _, o, _| {
                shared(o, none).any(|(k, e)| e < t && e != k && o.shtb[e as usize] != k)
            }),
            Point::point("err_pair_index", "§2.2", move |_, _, o, _| {
                shared(o, none).any(|(k, e)| e < t && k.min(e) >= kp)
            }),
        ];
        v.push(if none > t {
            Point::point("err_partner_out_of_range", "§2.2", move |_, _, o, _| {
                shared(o, none).any(|(_, e)| e >= t)
            })
        } else {
            Point::unreachable(
                "err_partner_out_of_range",
                "§2.2",
                "T = 2^TW - 1: every entry ≥ T is NONE",
            )
        });
        v.push(if t < 1 << s.sw() {
            Point::point("write_dropped", "§2.2", move |_, i, _, _| {
                !i.reset && i.cfg_slot_we && i.cfg_slot >= t
            })
        } else {
            Point::unreachable(
                "write_dropped",
                "§2.2",
                "T is a power of two: every cfg_slot names a slot",
            )
        });
        v
    }
}

/// Each shared slot's (slot, partner) in the registered table (docs/scratchpad-sharing.md §2.2).
fn shared(o: &Outputs, none: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
    (0u64..)
        .zip(&o.shtb)
        .map(|(k, &e)| (k, e))
        .filter(move |&(_, e)| e != none)
}
