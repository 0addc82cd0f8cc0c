//! Stimulus for `OwnerClass` (docs/scratchpad-sharing.md §2.5): a random sharing table and lock
//! state held for a few cycles (locks mostly owned by one of their pair's slots, some free, a
//! few naming another slot) while the warp map changes every cycle; warps sit mostly in shared
//! slots, also in unshared ones and sometimes in a slot id ≥ T, and are mostly valid.

use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::owner_class::Model;
use smrtl_cosim::blocks::share_cfg::Table;
use smrtl_hdl::blocks::owner_class::port::Inputs;
use smrtl_hdl::blocks::owner_class::Params;
use smrtl_hdl::blocks::sharing::Shape;
use smrtl_hdl::netlist::mask;

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
}
