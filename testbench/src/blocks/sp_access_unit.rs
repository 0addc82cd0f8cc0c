//! Stimulus for `SpAccessUnit` (docs/scratchpad-sharing.md §2.3, §1.4, §1.5): a random sharing
//! table held for a few cycles while every port issues requests whose lane offsets cluster at
//! the private/shared boundary (`u − 1`, `u`, `u + 1`), at 0 and at the top offset; masks are
//! full, empty, one lane or random; slots mostly name a real slot, sometimes one ≥ T.

use crate::coverage::Cover;
use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::share_cfg::Table;
use smrtl_cosim::blocks::sp_access_unit::Model;
use smrtl_hdl::blocks::sharing::Shape;
use smrtl_hdl::blocks::sp_access_unit::port::Inputs;
use smrtl_hdl::blocks::sp_access_unit::Params;
use smrtl_hdl::netlist::mask;

/// This block's coverpoints (docs/coverage.md).
type Point = Cover<Params>;

/// Inputs of `p` with `table` on the ShareCfg ports and every port idle.
pub fn with_table(p: &Params, table: &Table) -> Inputs {
    let mut c = Inputs::new(p);
    c.shsm = table.shsm;
    c.u = table.u;
    c.shtb.copy_from_slice(&table.shtb);
    c.base.copy_from_slice(&table.base);
    c
}

/// Longest random case; a failing case shrinks from at most this many cycles.
pub const CASE_CYCLES: usize = 32;

/// Cycles sharing one table.
const SEGMENT_CYCLES: usize = 8;

/// Where a lane's offset falls (spec §1.5: private means `off < u`).
#[derive(Clone, Copy, Debug)]
enum Off {
    BelowU,
    AtU,
    AboveU,
    Zero,
    Top,
    Any,
}

impl Off {
    /// The kind of a lane's draw `x` (weights 2:3:1:1:1:2 in the order declared) and the rest of
    /// the draw. One plain number per lane: a `prop_oneof!` per lane made drawing the stimulus
    /// most of a co-simulation's time (a value tree and a runner clone per lane and cycle). A draw
    /// shrinks towards 0, which is `BelowU` with the rest 0.
    fn of(x: u64) -> (Off, u64) {
        const KINDS: [Off; 10] = [
            Off::BelowU,
            Off::BelowU,
            Off::AtU,
            Off::AtU,
            Off::AtU,
            Off::AboveU,
            Off::Zero,
            Off::Top,
            Off::Any,
            Off::Any,
        ];
        (KINDS[(x % 10) as usize], x / 10)
    }
}

/// Random draws of one port's request, turned into its inputs once the table is known.
type Raw = (bool, u64, u8, u64, Vec<u64>);

fn raw(lanes: usize) -> impl Strategy<Value = Raw> {
    (
        prop::bool::weighted(0.85),
        any::<u64>(),
        0..8u8,
        any::<u64>(),
        prop::collection::vec(any::<u64>(), lanes),
    )
}

/// Port `q`'s request of `c` from its draws (offsets relative to the table's `u`).
fn request(shape: &Shape, c: &mut Inputs, q: usize, (valid, slot, mask_kind, m, offs): Raw) {
    let (lanes, top) = (shape.lanes as usize, mask(shape.aw()));
    let u = c.u;
    c.rq_valid[q] = valid;
    // A slot id >= T one time in eight.
    c.rq_slot[q] = if slot % 8 == 0 {
        slot >> 3
    } else {
        (slot >> 3) % u64::from(shape.slots)
    } & mask(shape.sw());
    c.rq_mask[q] = match mask_kind {
        0 | 1 => mask(lanes),
        2 => 0,
        3 => 1 << (m % lanes as u64),
        _ => m & mask(lanes),
    };
    for (l, x) in offs.into_iter().enumerate() {
        let (kind, any) = Off::of(x);
        c.rq_off[q * lanes + l] = match kind {
            Off::BelowU => u.wrapping_sub(1 + any % 2),
            Off::AtU => u,
            Off::AboveU => u + 1,
            Off::Zero => 0,
            Off::Top => top,
            Off::Any => any,
        } & top;
    }
}

/// Cycles of requests on every port, in segments that share a random table.
pub fn cycles(p: &Params) -> impl Strategy<Value = Vec<Inputs>> {
    let p = p.clone();
    let shape = p.shape();
    let ports = shape.nsched as usize;
    let segment = (
        crate::blocks::share_cfg::table(&shape),
        prop::collection::vec(
            (
                prop::collection::vec(raw(shape.lanes as usize), ports),
                prop::bool::weighted(0.05),
            ),
            1..=SEGMENT_CYCLES,
        ),
    );
    prop::collection::vec(segment, 1..=CASE_CYCLES / SEGMENT_CYCLES).prop_map(move |segments| {
        let mut out = vec![];
        for (table, cycles) in segments {
            for (raws, reset) in cycles {
                let mut c = with_table(&p, &table);
                c.reset = reset;
                for (q, r) in raws.into_iter().enumerate() {
                    request(&shape, &mut c, q, r);
                }
                out.push(c);
            }
        }
        out
    })
}

impl Bench for Params {
    type Model = Model;
    const SUMMARY: &'static str =
        "scratchpad sharing's per-port lock check (off >= u) and physical address translation (seed 001)";

    fn stimulus(&self) -> BoxedStrategy<Vec<Inputs>> {
        cycles(self).boxed()
    }
    /// docs/scratchpad-sharing.md §2.3: a request that needs the lock, a shared slot's
    /// request below `u` (no lock), an unshared request, the upper slot's skip by `u`, ShSM off,
    /// an address that wraps, and a slot out of range where T leaves room for one.
    fn coverpoints(&self) -> Vec<Point> {
        let s = self.shape();
        let (t, none, lanes) = (u64::from(self.slots), s.none(), self.lanes as usize);
        let partner = move |i: &Inputs, sl: u64| if sl < t { i.shtb[sl as usize] } else { none };
        let shared = move |i: &Inputs, sl: u64| i.shsm && partner(i, sl) != none;
        // The active lanes of port p, as indices into rq_off and phys.
        let active = move |i: &Inputs, p: usize| {
            let m = i.rq_mask[p];
            (0..lanes)
                .filter(move |&l| m >> l & 1 == 1)
                .map(move |l| p * lanes + l)
        };
        let ports = |i: &Inputs| {
            (0..i.rq_valid.len())
                .filter(|&p| i.rq_valid[p])
                .collect::<Vec<_>>()
        };
        let mut v = vec![
            Point::point("needs_lock", "§2.3", |_, _, o, _| {
                o.needs_lock.iter().any(|&n| n)
            }),
            Point::point("shared_below_u", "§2.3", move |_, i, o, _| {
                ports(i)
                    .into_iter()
                    .any(|p| shared(i, i.rq_slot[p]) && !o.needs_lock[p])
            }),
            Point::point("unshared_request", "§2.3", move |_, i, _, _| {
                ports(i).into_iter().any(|p| !shared(i, i.rq_slot[p]))
            }),
            Point::point("upper_slot_skips_u", "§2.3", move |_, i, _, _| {
                ports(i).into_iter().any(|p| {
                    let sl = i.rq_slot[p];
                    shared(i, sl) && sl < partner(i, sl) && active(i, p).any(|x| i.rq_off[x] >= i.u)
                })
            }),
            Point::point("shsm_off", "§2.3", move |_, i, _, _| {
                !i.shsm && !ports(i).is_empty()
            }),
            Point::point("address_wraps", "§2.3", move |_, i, o, _| {
                ports(i)
                    .into_iter()
                    .any(|p| active(i, p).any(|x| o.phys[x] < i.rq_off[x]))
            }),
        ];
        v.push(if t < 1 << s.sw() {
            Point::point("slot_out_of_range", "§2.3", move |_, i, _, _| {
                ports(i).into_iter().any(|p| i.rq_slot[p] >= t)
            })
        } else {
            Point::unreachable(
                "slot_out_of_range",
                "§2.3",
                "T is a power of two: every rq_slot names a slot",
            )
        });
        v
    }
}
