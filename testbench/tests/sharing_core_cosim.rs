//! `sharing_core` at block level (docs/scratchpad-sharing.md §5.3): random inputs on its ports,
//! the composed model against the RTL on rusthdl, every output every cycle — 10^5 cycles on the
//! `small` preset with the default switches, and 2·10^4 on each other switch setting.

use smrtl_hdl::blocks::sharing_core::Params;
use smrtl_hdl::BlockParams;
use smrtl_testbench::blocks::sharing_core::SharingCoreBench;
use smrtl_testbench::{check, Design};

fn random(sets: &[(&str, &str)], cycles: u64, seed: u64) {
    let d = Design::old::<SharingCoreBench>(&Params::resolve_pairs(Some("small"), sets).unwrap());
    check::assert_random_on_rusthdl(&d, cycles, seed);
}

#[test]
fn random_rusthdl_defaults() {
    random(&[], 100_000, 1);
}

#[test]
fn random_rusthdl_switches() {
    for (seed, sets) in [
        [
            ("POLICY", "FREE"),
            ("FREE_CLASS", "UNSHARED"),
            ("SCHED", "OWF"),
        ],
        [("POLICY", "TRANSFER"), ("RANK", "OWF2"), ("GREEDY", "true")],
        [("RANK", "UWF"), ("SCHED", "LRR"), ("PEND_W", "2")],
        [("SCHED", "GTO"), ("NSCHED", "1"), ("AGE_W", "3")],
        [("SCHED", "TWO_LEVEL"), ("W", "16"), ("NSCHED", "1")],
    ]
    .iter()
    .enumerate()
    {
        random(sets, 20_000, 10 + seed as u64);
    }
}
