//! Stimulus for the `ReqCounter` (docs/memory-issue-control.md §3.3, §5): `acc` at a rate drawn
//! per case (and switched now and then), cases up to three intervals long so the counter wraps
//! inside them; rare resets.

use crate::design::{Bench, Case};
use proptest::prelude::*;
use smrtl_cosim::blocks::req_counter::Model;
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::req_counter::{build, port, Params};
use smrtl_hdl::tools::ToolError;
use smrtl_hdl::Module;

/// One cycle's inputs: (reset, acc).
pub type Cycle = (bool, bool);

/// The cycle as one input buffer.
pub fn encode(layout: &Layout, (reset, acc): Cycle) -> Vec<u64> {
    let mut buf = vec![0u64; layout.in_words];
    layout.in_slot("reset").set(&mut buf, reset as u64);
    layout.in_slot(port::ACC).set(&mut buf, acc as u64);
    buf
}

/// Longest random case: three intervals and a bit.
pub fn case_cycles(p: &Params) -> usize {
    (3usize << p.reqcnt_bits) + 32
}

/// `acc` chances in 256ths.
const RATES: [u8; 4] = [250, 200, 128, 20];

/// A case of `1..=max` cycles.
pub fn cycles(max: usize) -> impl Strategy<Value = Vec<Cycle>> {
    let raw = (any::<u8>(), any::<u8>(), prop::bool::weighted(0.002));
    (0..RATES.len(), prop::collection::vec(raw, 1..=max)).prop_map(|(mut rate, raws)| {
        raws.into_iter()
            .map(|(roll, switch, reset)| {
                if switch == 0 {
                    rate = usize::from(roll) % RATES.len();
                }
                (reset, roll < RATES[rate])
            })
            .collect()
    })
}

pub struct ReqCounterBench;

impl Bench for ReqCounterBench {
    type Params = Params;
    const SUMMARY: &'static str =
        "request counter: QBMI's 1024-request sampling interval without a MILG (seed 004)";

    fn module(p: &Params) -> Module {
        build(p)
    }

    fn model(p: &Params, layout: &Layout) -> Box<dyn Simulator + Send> {
        Box::new(Model::new(p, layout))
    }

    fn cases(p: &Params, layout: &Layout) -> BoxedStrategy<Case> {
        let layout = layout.clone();
        cycles(case_cycles(p))
            .prop_map(move |cs| cs.into_iter().map(|c| encode(&layout, c)).collect())
            .boxed()
    }

    fn cost_notes(p: &Params) -> Result<smrtl_synth::Notes, ToolError> {
        smrtl_synth::blocks::req_counter::notes(p)
    }
}
