//! Stimulus for `SpAccessUnit` (docs/scratchpad-sharing.md §2.3, §1.4, §1.5): a random sharing
//! table held for a few cycles while every port issues requests whose lane offsets cluster at
//! the private/shared boundary (`u − 1`, `u`, `u + 1`), at 0 and at the top offset; masks are
//! full, empty, one lane or random; slots mostly name a real slot, sometimes one ≥ T.

use crate::design::{Case, OldBench};
use proptest::prelude::*;
use smrtl_cosim::blocks::share_cfg::{Table, TablePorts};
use smrtl_cosim::blocks::sp_access_unit::Model;
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::sharing::Shape;
use smrtl_hdl::blocks::sp_access_unit::{build, port, Params};
use smrtl_hdl::netlist::mask;
use smrtl_hdl::tools::ToolError;
use smrtl_hdl::Module;

/// One port's request (spec §2.3).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    pub valid: bool,
    pub slot: u64,
    pub mask: u64,
    /// TB-relative byte offset per lane.
    pub off: Vec<u64>,
}

/// One cycle: every port's request against a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    pub table: Table,
    pub requests: Vec<Request>,
    /// Unused by the block (combinational); driven to show it changes nothing.
    pub reset: bool,
}

/// The cycle as one input buffer (values are cut to the port widths).
pub fn encode(p: &Params, layout: &Layout, c: &Cycle) -> Vec<u64> {
    let s = p.shape();
    let (lanes, aw, sw) = (p.lanes as usize, s.aw(), s.sw());
    let mut buf = vec![0u64; layout.in_words];
    TablePorts::inputs(&s, layout).write(&mut buf, &c.table);
    layout.write_in(&mut buf, "reset", c.reset as u64);
    let (valid, slot) = (
        layout.in_slot(port::RQ_VALID),
        layout.in_slot(port::RQ_SLOT),
    );
    let (lane_mask, off) = (layout.in_slot(port::RQ_MASK), layout.in_slot(port::RQ_OFF));
    for (q, r) in c.requests.iter().enumerate() {
        valid.set_field(&mut buf, q, 1, r.valid as u64);
        slot.set_field(&mut buf, q * sw, sw, r.slot);
        lane_mask.set_field(&mut buf, q * lanes, lanes, r.mask);
        for (l, &o) in r.off.iter().enumerate() {
            off.set_field(&mut buf, (q * lanes + l) * aw, aw, o);
        }
    }
    buf
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

/// Random draws of one port's request, turned into a [`Request`] once the table is known.
type Raw = (bool, u64, u8, u64, Vec<(Off, u64)>);

fn raw(lanes: usize) -> impl Strategy<Value = Raw> {
    let off = prop_oneof![
        2 => Just(Off::BelowU),
        2 => Just(Off::AtU),
        1 => Just(Off::AboveU),
        1 => Just(Off::Zero),
        1 => Just(Off::Top),
        2 => Just(Off::Any),
    ];
    (
        prop::bool::weighted(0.85),
        any::<u64>(),
        0..8u8,
        any::<u64>(),
        prop::collection::vec((off, any::<u64>()), lanes),
    )
}

fn request(shape: &Shape, table: &Table, (valid, slot, mask_kind, m, offs): Raw) -> Request {
    let (lanes, top) = (shape.lanes as usize, mask(shape.aw()));
    let u = table.u;
    Request {
        valid,
        // A slot id >= T one time in eight.
        slot: if slot % 8 == 0 {
            slot >> 3
        } else {
            (slot >> 3) % u64::from(shape.slots)
        } & mask(shape.sw()),
        mask: match mask_kind {
            0 | 1 => mask(lanes),
            2 => 0,
            3 => 1 << (m % lanes as u64),
            _ => m & mask(lanes),
        },
        off: offs
            .into_iter()
            .map(|(kind, any)| {
                match kind {
                    Off::BelowU => u.wrapping_sub(1 + any % 2),
                    Off::AtU => u,
                    Off::AboveU => u + 1,
                    Off::Zero => 0,
                    Off::Top => top,
                    Off::Any => any,
                }
            } & top)
            .collect(),
    }
}

/// Cycles of requests on every port, in segments that share a random table.
pub fn cycles(shape: &Shape) -> impl Strategy<Value = Vec<Cycle>> {
    let shape = shape.clone();
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
                let requests = raws
                    .into_iter()
                    .map(|r| request(&shape, &table, r))
                    .collect();
                out.push(Cycle {
                    table: table.clone(),
                    requests,
                    reset,
                });
            }
        }
        out
    })
}

pub struct SpAccessUnitBench;

impl OldBench for SpAccessUnitBench {
    type Params = Params;
    const SUMMARY: &'static str =
        "scratchpad sharing's per-port lock check (off >= u) and physical address translation (seed 001)";

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
        smrtl_synth::blocks::sp_access_unit::notes(p)
    }
}
