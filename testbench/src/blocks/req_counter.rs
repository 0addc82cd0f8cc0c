//! Stimulus for the `ReqCounter` (docs/memory-issue-control.md §3.3, §5): `acc` at a rate drawn
//! per case (and switched now and then), cases up to three intervals long so the counter wraps
//! inside them; rare resets, in half the cases.

use crate::coverage::Cover;
use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::req_counter::Model;
use smrtl_hdl::blocks::req_counter::port::Inputs;
use smrtl_hdl::blocks::req_counter::Params;

/// This block's coverpoints (docs/coverage.md).
type Point = Cover<Params>;

/// Longest random case: three intervals and a bit.
pub fn case_cycles(p: &Params) -> usize {
    (3usize << p.reqcnt_bits) + 32
}

/// `acc` chances in 256ths.
const RATES: [u8; 4] = [250, 200, 128, 20];

/// A case of `1..=max` cycles.
pub fn cycles(max: usize) -> impl Strategy<Value = Vec<Inputs>> {
    let raw = (any::<u8>(), any::<u8>(), prop::bool::weighted(0.002));
    // Half the cases never reset: a reset every 500 cycles or so would end nearly every
    // paper-sized interval early (docs/coverage.md §3).
    let resets = prop::bool::weighted(0.5);
    (0..RATES.len(), resets, prop::collection::vec(raw, 1..=max)).prop_map(
        |(mut rate, resets, raws)| {
            raws.into_iter()
                .map(|(roll, switch, reset)| {
                    let reset = reset && resets;
                    if switch == 0 {
                        rate = usize::from(roll) % RATES.len();
                    }
                    Inputs {
                        reset,
                        acc: roll < RATES[rate],
                    }
                })
                .collect()
        },
    )
}

impl Bench for Params {
    type Model = Model;
    const SUMMARY: &'static str =
        "request counter: QBMI's 1024-request sampling interval without a MILG (seed 004)";

    fn stimulus(&self) -> BoxedStrategy<Vec<Inputs>> {
        cycles(case_cycles(self)).boxed()
    }

    /// docs/memory-issue-control.md §4.5: counting, holding, the 1024th request, reset.
    fn coverpoints(&self) -> Vec<Point> {
        vec![
            Point::point("count", "§4.5", |_, i, o, _| i.acc && !o.boundary),
            Point::point("hold", "§4.5", |_, i, o, _| !i.acc && o.reqcnt > 0),
            Point::point("boundary", "§4.5", |_, _, o, _| o.boundary),
            Point::point("reset_mid_interval", "§4.5", |_, i, o, _| {
                i.reset && o.reqcnt > 0
            }),
        ]
    }
}
