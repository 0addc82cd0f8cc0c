//! Stimulus for `OwnerClass` (docs/scratchpad-sharing.md §2.5): a random sharing table and lock
//! state held for a few cycles (locks mostly owned by one of their pair's slots, some free, a
//! few naming another slot) while the warp map changes every cycle; warps sit mostly in shared
//! slots, also in unshared ones and sometimes in a slot id ≥ T, and are mostly valid.

use crate::design::{Case, OldBench};
use proptest::prelude::*;
use smrtl_cosim::blocks::owner_class::{Locks, Model};
use smrtl_cosim::blocks::share_cfg::{Table, TablePorts};
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::owner_class::{build, port, Params};
use smrtl_hdl::blocks::sharing::Shape;
use smrtl_hdl::netlist::mask;
use smrtl_hdl::tools::ToolError;
use smrtl_hdl::Module;

/// One cycle of OwnerClass's inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    pub table: Table,
    pub locks: Locks,
    /// Per warp slot: valid and TB slot.
    pub warps: Vec<(bool, u64)>,
    /// Unused by the block (combinational); driven to show it changes nothing.
    pub reset: bool,
}

/// The cycle as one input buffer (values are cut to the port widths).
pub fn encode(p: &Params, layout: &Layout, c: &Cycle) -> Vec<u64> {
    let s = p.shape();
    let sw = s.sw();
    let mut buf = vec![0u64; layout.in_words];
    TablePorts::inputs(&s, layout).write(&mut buf, &c.table);
    layout.write_in(&mut buf, "reset", c.reset as u64);
    let (valid, owner) = (
        layout.in_slot(port::LOCK_VALID),
        layout.in_slot(port::LOCK_OWNER),
    );
    for (k, (&v, &o)) in c.locks.valid.iter().zip(&c.locks.owner).enumerate() {
        valid.set_field(&mut buf, k, 1, v as u64);
        owner.set_field(&mut buf, k * sw, sw, o);
    }
    let (wv, ws) = (
        layout.in_slot(port::WARP_VALID),
        layout.in_slot(port::WARP_SLOT),
    );
    for (w, &(v, slot)) in c.warps.iter().enumerate() {
        wv.set_field(&mut buf, w, 1, v as u64);
        ws.set_field(&mut buf, w * sw, sw, slot);
    }
    buf
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

/// Locks of `table`'s pairs: pair `k` held (60 %) by slot `k`, its partner or anyone.
fn locks(shape: &Shape, table: &Table, raw: &[(bool, Owner, u64)]) -> Locks {
    let sw = mask(shape.sw());
    let owner = raw
        .iter()
        .enumerate()
        .map(|(k, &(_, who, any))| match who {
            Owner::Lower => k as u64,
            Owner::Partner => table.partner(k as u64) & sw,
            Owner::Any => any & sw,
        })
        .collect();
    Locks {
        valid: raw.iter().map(|r| r.0).collect(),
        owner,
    }
}

/// Cycles of warp maps, in segments that share a random table and lock state.
pub fn cycles(shape: &Shape) -> impl Strategy<Value = Vec<Cycle>> {
    let shape = shape.clone();
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
                let warps = warps
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
                out.push(Cycle {
                    table: table.clone(),
                    locks: locks.clone(),
                    warps,
                    reset,
                });
            }
        }
        out
    })
}

pub struct OwnerClassBench;

impl OldBench for OwnerClassBench {
    type Params = Params;
    const SUMMARY: &'static str =
        "scratchpad sharing's per-warp owner bit and OWF class (owner, unshared, non-owner) (seed 001)";

    fn module(p: &Params) -> Module {
        build(p)
    }

    fn model(p: &Params, layout: &Layout) -> Box<dyn Simulator + Send> {
        Box::new(Model::new(p, layout))
    }

    fn cases(p: &Params, layout: &Layout) -> BoxedStrategy<Case> {
        let (p, layout) = (p.clone(), layout.clone());
        cycles(&p.shape())
            .prop_map(move |cs| cs.iter().map(|c| encode(&p, &layout, c)).collect())
            .boxed()
    }

    fn cost_notes(p: &Params) -> Result<smrtl_synth::Notes, ToolError> {
        smrtl_synth::blocks::owner_class::notes(p)
    }
}
