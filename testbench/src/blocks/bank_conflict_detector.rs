//! Stimulus for the bank-conflict detector (docs/bank-conflicts.md §1.5, §2.4): one access per
//! cycle as the detector's typed inputs, builders in the spec's notation (lanes as byte or word
//! addresses) and a proptest strategy biased to collide in group, layer and element (§2.4 (3)).

use crate::coverage::Cover;
use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::bank_conflict_detector::Model;
use smrtl_hdl::blocks::bank_conflict_detector::port::Inputs;
use smrtl_hdl::blocks::bank_conflict_detector::Params;
use smrtl_hdl::netlist::mask;

/// This block's coverpoints (docs/coverage.md).
type Point = Cover<Params>;

/// One access with every lane active (valid, 4-byte mode and data): lane l at byte address
/// `addrs[l]` (one address per lane of the configuration).
pub fn all(addrs: &[u64]) -> Inputs {
    Inputs {
        valid: true,
        lane_mask: vec![true; addrs.len()],
        addr: addrs.to_vec(),
        ..Inputs::default()
    }
}

/// Lanes as 4-byte word indices, `None` = inactive (the notation of spec §1.5).
pub fn words(words: &[Option<u64>]) -> Inputs {
    let mut a = all(&words.iter().map(|w| w.unwrap_or(0) * 4).collect::<Vec<_>>());
    a.lane_mask = words.iter().map(Option::is_some).collect();
    a
}

/// `a` with the W = 8 runtime bits: `mode8` (N = 8) and `size8` (M = 8).
pub fn with_modes(a: Inputs, mode8: bool, size8: bool) -> Inputs {
    Inputs { mode8, size8, ..a }
}

/// The lanes of `lane_mask` (bit l = lane l) of `lanes` lanes.
pub fn lanes_of(lane_mask: u64, lanes: usize) -> Vec<bool> {
    (0..lanes).map(|l| lane_mask >> l & 1 == 1).collect()
}

/// A proptest strategy for one access (spec §2.4 (3)): small address pools force merges;
/// lanes derive from a pool entry by a same-word, same-layer or same-group-other-layer offset,
/// or take a free address; one access in 20 is a column (every lane in one group, on layers of
/// its own: the worst degree); masks include all, none, one lane, low half and odd lanes.
pub fn access(p: &Params) -> impl Strategy<Value = Inputs> {
    let lanes = p.lanes as usize;
    let aw = p.addr_bits as usize;
    let wide = p.has_mode_inputs();
    let row = (p.banks * p.layer_bytes) as u64; // bytes in one layer of all banks
    let full = mask(lanes);
    let masks = prop_oneof![
        3 => Just(full),
        1 => Just(0u64),
        1 => Just(mask(lanes / 2)),
        1 => Just(0xAAAA_AAAA_AAAA_AAAA & full),
        3 => any::<u64>().prop_map(move |m| m & full),
        1 => (0..lanes).prop_map(|l| 1u64 << l),
    ];
    let lane = (0..4u8, 0..8usize, 0..4u64, any::<u64>());
    (
        prop::bool::weighted(0.9),
        masks,
        prop::collection::vec(any::<u64>(), 1..=4),
        prop::collection::vec(lane, lanes),
        any::<bool>(),
        any::<bool>(),
        prop::bool::weighted(0.02),
        prop::bool::weighted(0.05),
    )
        .prop_map(
            move |(valid, lane_mask, pool, lanes_spec, mode8, size8, reset, column)| {
                let addr = lanes_spec
                    .into_iter()
                    .enumerate()
                    .map(|(l, (kind, pick, k, free))| {
                        let base = pool[pick % pool.len()];
                        let a = match kind {
                            // A column: every lane in one group, each on a layer of its own
                            // (the worst degree, L).
                            _ if column => pool[0].wrapping_add(l as u64 * row),
                            0 => base,                       // same word: merges
                            1 => base ^ (k & 3),             // same word, other byte
                            2 => base.wrapping_add(k * row), // same group, other layer
                            _ => free,                       // anywhere
                        };
                        a & mask(aw)
                    })
                    .collect();
                Inputs {
                    reset,
                    valid,
                    lane_mask: lanes_of(lane_mask, lanes),
                    addr,
                    mode8: wide && mode8,
                    size8: wide && size8,
                }
            },
        )
}

/// Longest random case; a failing case shrinks from at most this many cycles.
pub const CASE_CYCLES: usize = 64;

impl Bench for Params {
    type Model = Model;
    const SUMMARY: &'static str = "shared-memory bank-conflict detector: lane addresses -> degree, service cycles (seeds 000, 002)";

    fn stimulus(&self) -> BoxedStrategy<Vec<Inputs>> {
        prop::collection::vec(access(self), 1..=CASE_CYCLES).boxed()
    }

    /// docs/bank-conflicts.md §1.4: no active lane, one lane, all lanes, a shared address,
    /// active lanes without conflict, a conflict, the worst degree (L), a multi-cycle service and
    /// ports absorbing a conflict; with W = 8 the mode inputs (§1.3).
    fn coverpoints(&self) -> Vec<Point> {
        let mut v = vec![
            Point::point("idle", "§1.4", |_, i, _, _| !i.valid),
            Point::point("no_active_lane", "§1.4", |_, i, _, _| {
                i.valid && active(i).count() == 0
            }),
            Point::point("one_lane", "§1.4", |_, i, _, _| active(i).count() == 1),
            Point::point("all_lanes", "§1.4", |_, i, _, _| {
                i.valid && i.lane_mask.iter().all(|&m| m)
            }),
            Point::point("shared_address", "§1.4", |_, i, _, _| {
                let lanes: Vec<usize> = active(i).collect();
                lanes
                    .iter()
                    .enumerate()
                    .any(|(k, &a)| lanes[k + 1..].iter().any(|&b| i.addr[a] == i.addr[b]))
            }),
            Point::point("active_no_conflict", "§1.4", |_, _, o, _| {
                o.any_active && !o.conflict
            }),
            Point::point("conflict", "§1.4", |_, _, o, _| o.conflict),
            Point::point("worst_degree", "§1.4", |p, _, o, _| {
                o.degree == u64::from(p.lanes)
            }),
            Point::point("multi_cycle", "§1.4", |_, _, o, _| o.cycles > 1),
        ];
        v.push(if self.ports > 1 {
            Point::point("ports_absorb", "§1.4", |_, _, o, _| o.degree > o.cycles)
        } else {
            Point::unreachable("ports_absorb", "§1.4", "P = 1: one cycle per degree")
        });
        if self.has_mode_inputs() {
            v.extend([
                Point::point("mode8", "§1.3", |_, i, _, _| i.valid && i.mode8),
                Point::point("size8_in_4_byte_mode", "§1.3", |_, i, _, _| {
                    i.valid && i.size8 && !i.mode8
                }),
            ]);
        }
        v
    }
}

/// The active lanes of a cycle: `valid` and the lane's mask bit (§1.4's Q).
fn active(i: &Inputs) -> impl Iterator<Item = usize> + '_ {
    (0..i.lane_mask.len()).filter(|&l| i.valid && i.lane_mask[l])
}
