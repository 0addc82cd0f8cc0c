//! Stimulus for the bank-conflict detector: one [`Access`] per cycle, the spec's examples
//! (docs/bank-conflicts.md §1.5, §5) and proptest strategies biased to collide in group, layer and
//! element (§2.4).

use crate::design::{Case, OldBench};
use proptest::prelude::*;
use smrtl_cosim::blocks::bank_conflict_detector::Model;
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::bank_conflict_detector::{build, port, Params};
use smrtl_hdl::netlist::mask;
use smrtl_hdl::tools::ToolError;
use smrtl_hdl::Module;

/// One shared-memory access as the detector's inputs see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub valid: bool,
    pub lane_mask: u64,
    /// Byte address per lane.
    pub addrs: Vec<u64>,
    pub mode8: bool,
    pub size8: bool,
    pub reset: bool,
}

impl Access {
    /// All lanes active, valid, 4-byte mode and data.
    pub fn all(addrs: Vec<u64>) -> Access {
        Access {
            valid: true,
            lane_mask: mask(addrs.len()),
            addrs,
            mode8: false,
            size8: false,
            reset: false,
        }
    }

    /// Lanes given as 4-byte word indices, `None` = inactive (the notation of spec §1.5).
    pub fn words(words: &[Option<u64>]) -> Access {
        let mut a = Access::all(words.iter().map(|w| w.unwrap_or(0) * 4).collect());
        a.lane_mask = words
            .iter()
            .enumerate()
            .filter(|(_, w)| w.is_some())
            .fold(0, |m, (l, _)| m | 1 << l);
        a
    }

    pub fn with_modes(mut self, mode8: bool, size8: bool) -> Access {
        self.mode8 = mode8;
        self.size8 = size8;
        self
    }
}

/// The access as one cycle's input buffer.
pub fn encode(p: &Params, layout: &Layout, a: &Access) -> Vec<u64> {
    let mut buf = vec![0u64; layout.in_words];
    let mut put = |name: &str, v: u64| {
        if let Some(s) = layout.input(name) {
            s.of_mut(&mut buf)[0] = v & mask(s.width.min(64));
        }
    };
    put(port::VALID, a.valid as u64);
    put(port::LANE_MASK, a.lane_mask);
    put(port::MODE8, a.mode8 as u64);
    put(port::SIZE8, a.size8 as u64);
    put("reset", a.reset as u64);
    let slot = layout.input(port::ADDR).expect("addr port");
    let aw = p.addr_bits as usize;
    for (l, &addr) in a.addrs.iter().enumerate().take(p.lanes as usize) {
        slot.set_field(&mut buf, l * aw, aw, addr);
    }
    buf
}

/// A proptest strategy for one access (spec §2.4 (3)): small address pools force merges;
/// lanes derive from a pool entry by a same-word, same-layer or same-group-other-layer offset,
/// or take a free address; masks include all, none, low half and odd lanes.
pub fn access(p: &Params) -> impl Strategy<Value = Access> {
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
    )
        .prop_map(
            move |(valid, lane_mask, pool, lanes_spec, mode8, size8, reset)| {
                let addrs = lanes_spec
                    .into_iter()
                    .map(|(kind, pick, k, free)| {
                        let base = pool[pick % pool.len()];
                        let a = match kind {
                            0 => base,                       // same word: merges
                            1 => base ^ (k & 3),             // same word, other byte
                            2 => base.wrapping_add(k * row), // same group, other layer
                            _ => free,                       // anywhere
                        };
                        a & mask(aw)
                    })
                    .collect();
                Access {
                    valid,
                    lane_mask,
                    addrs,
                    mode8: wide && mode8,
                    size8: wide && size8,
                    reset,
                }
            },
        )
}

/// Longest random case; a failing case shrinks from at most this many cycles.
pub const CASE_CYCLES: usize = 64;

pub struct Detector;

impl OldBench for Detector {
    type Params = Params;
    const SUMMARY: &'static str = "shared-memory bank-conflict detector: lane addresses -> degree, service cycles (seeds 000, 002)";

    fn module(p: &Params) -> Module {
        build(p)
    }

    fn model(p: &Params, layout: &Layout) -> Box<dyn Simulator + Send> {
        Box::new(Model::new(p, layout))
    }

    fn cases(p: &Params, layout: &Layout) -> BoxedStrategy<Case> {
        let (p2, layout) = (p.clone(), layout.clone());
        prop::collection::vec(access(p), 1..=CASE_CYCLES)
            .prop_map(move |accs| accs.iter().map(|a| encode(&p2, &layout, a)).collect())
            .boxed()
    }

    fn cost_notes(p: &Params) -> Result<smrtl_synth::Notes, ToolError> {
        smrtl_synth::blocks::bank_conflict_detector::notes(p)
    }
}
