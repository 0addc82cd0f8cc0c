//! `gpgpusim4-limited`, GPGPU-Sim 4.x's `-gpgpu_shmem_limited_broadcast 1` rule
//! (docs/bank-conflicts.md §1.4, §1.5): hand-worked examples of `generate_mem_accesses` on the
//! reference function, the model and both RTL backends, and random accesses model against RTL
//! on rust-hdl and Verilator.

use smrtl_cosim::blocks::bank_conflict_detector::{degree, Cfg};
use smrtl_hdl::blocks::bank_conflict_detector::port::Inputs;
use smrtl_hdl::blocks::bank_conflict_detector::Params;
use smrtl_hdl::BlockParams;
use smrtl_testbench::blocks::bank_conflict_detector::{all, with_modes, words};
use smrtl_testbench::check;
use smrtl_testbench::conformance::Backend;
use smrtl_testbench::design::encode;
use smrtl_testbench::Design;

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).unwrap()
}

/// The degree of `a` on the reference function (spec §2.4).
fn reference(p: &Params, a: &Inputs) -> u32 {
    let cfg = Cfg::of_params(p, a.mode8, a.size8);
    let mask = (a.lane_mask.iter().enumerate()).fold(0, |m, (l, &on)| m | (on as u64) << l);
    degree(&cfg, a.valid, mask, &a.addr, a.mode8, a.size8).degree
}

/// Whether Verilator (and the C++ toolchain it needs) is installed.
fn verilator() -> bool {
    smrtl_hdl::tools::external(&["verilator", "make", "g++"])
}

/// Runs `accesses` through the model and each RTL backend (every output compared every cycle)
/// and returns the reference degrees.
fn on_every_backend(p: &Params, accesses: &[Inputs]) -> Vec<u32> {
    check::directed(p, accesses);
    if verilator() {
        let d = Design::new(p);
        let case = encode(p, &d.layout, accesses);
        let rtl = Backend::Verilator.factory(&d).expect("verilator builds");
        let out = check::run_case(&d, &rtl, &case, None);
        assert!(out.mismatch.is_none(), "verilator: {:?}", out.mismatch);
    }
    accesses.iter().map(|a| reference(p, a)).collect()
}

fn w(x: u64) -> Option<u64> {
    Some(x)
}

/// Hand-worked on `ep8` (8 banks of 4-byte words, as GPGPU-Sim's `shmem_bank_func`): lanes as
/// word indices, so the bank is the word mod 8. Each row: the lanes, then the degree under
/// gpgpusim4-limited and under gpgpusim-limited (2.x), literal and multicast.
#[test]
fn hand_worked_examples_of_the_4x_rule() {
    let n = None;
    type Row = (&'static str, Vec<Option<u64>>, [u32; 4]);
    let rows: Vec<Row> = vec![
        // The first example: lanes 0, 1 → byte 0, lane 2 → byte 4. Bank 0's word 0 is
        // the broadcast (counted once), bank 1 has one lane.
        (
            "issue-a",
            vec![w(0), w(0), w(1), n, n, n, n, n],
            [1, 2, 2, 1],
        ),
        // Lanes 0, 1 → byte 0 and 2, 3 → byte 128 (word 32, bank 0): one broadcast per part,
        // so word 32 still counts once per lane: 1 + 2.
        (
            "issue-b",
            vec![w(0), w(0), w(32), w(32), n, n, n, n],
            [3, 2, 4, 2],
        ),
        // Banks in order before lanes: word 9 (bank 1) has lanes 0, 1, word 8 (bank 0) lanes
        // 2, 3 and word 16 lane 4. Bank 0's word 8 is the broadcast: bank 0 counts 2, bank 1
        // still 2.
        (
            "bank-order",
            vec![w(9), w(9), w(8), w(8), w(16), n, n, n],
            [2, 3, 3, 2],
        ),
        // Words in order within a bank: word 16 (lanes 0, 1) and word 8 (lanes 2, 3, 4), both
        // bank 0. Word 8 comes first: 5 − 2 = 3 (taking word 16 would give 4).
        (
            "word-order",
            vec![w(16), w(16), w(8), w(8), w(8), n, n, n],
            [3, 2, 5, 2],
        ),
        // One broadcast per part: bank 0's word 0 (2 lanes) is it; bank 1's word 1 (3 lanes)
        // counts 3.
        (
            "one-only",
            vec![w(0), w(0), w(1), w(1), w(1), n, n, n],
            [3, 2, 3, 1],
        ),
        // The broadcast's bank need not be the worst: bank 0 → 1, bank 1 (words 1, 9) → 2.
        (
            "elsewhere",
            vec![w(0), w(0), w(1), w(9), n, n, n, n],
            [2, 3, 2, 2],
        ),
        // Every lane on one word (E3): 8 − 7.
        ("all-one-word", vec![w(5); 8], [1, 1, 8, 1]),
        // No shared word: literal.
        (
            "no-broadcast",
            (0..8).map(|l| w(8 * l)).collect(),
            [8, 8, 8, 8],
        ),
        // Inactive lanes do not count (lane 1 would share word 0).
        ("inactive", vec![w(0), n, w(8), n, n, n, n, n], [2, 2, 2, 2]),
    ];
    let accesses: Vec<Inputs> = rows.iter().map(|(_, lanes, _)| words(lanes)).collect();
    let modes = [
        "gpgpusim4-limited",
        "gpgpusim-limited",
        "literal",
        "multicast",
    ];
    for (i, mode) in modes.iter().enumerate() {
        let got = on_every_backend(&params("ep8", &[("MODE", mode)]), &accesses);
        for ((name, _, want), d) in rows.iter().zip(got) {
            assert_eq!(d, want[i], "{name} in {mode}");
        }
    }
}

/// The second example on `kepler` (32 banks × 8 bytes, 4-byte mode): bytes 0 and 128
/// are bank 0, one layer (multicast 1), but two words: 3 under the 4.x rule. With 8-byte
/// elements and banks (mode8, size8) lanes 0, 1 → byte 0 and 2 → byte 4 are one element.
#[test]
fn kepler_examples() {
    let p = params("kepler", &[("MODE", "gpgpusim4-limited")]);
    let mut a = vec![0u64; 32];
    a[2] = 128;
    a[3] = 128;
    let mut four = all(&a);
    four.lane_mask = (0..32).map(|l| l < 4).collect();
    let mut b = vec![0u64; 32];
    b[2] = 4;
    let mut eight = with_modes(all(&b), true, true);
    eight.lane_mask = (0..32).map(|l| l < 3).collect();
    assert_eq!(on_every_backend(&p, &[four, eight]), [3, 1]);
}

/// Random accesses (spec §2.4 (3) strategy), model against RTL: rust-hdl on four configurations
/// (4- and 8-byte layers, P = 2, REG_OUT), Verilator on the two `ep8` ones.
#[test]
fn random_accesses_model_vs_rtl() {
    let mode = ("MODE", "gpgpusim4-limited");
    let configs = [
        ("ep8_gpgpusim4", vec![]),
        ("ep8", vec![mode, ("W", "8"), ("REG_OUT", "true")]),
        ("l16_w8_gpgpusim_p2", vec![mode]),
        ("kepler", vec![mode]),
    ];
    for (i, (preset, sets)) in configs.iter().enumerate() {
        let d = Design::new(&params(preset, sets));
        check::assert_random_on_rusthdl(&d, 20_000, 40 + i as u64);
    }
    if !verilator() {
        return;
    }
    // Kepler's 32 x 32 detector is verilated by `kepler_examples` already (a build is 10 s).
    for (i, (preset, sets)) in configs[..2].iter().enumerate() {
        let d = Design::new(&params(preset, sets));
        let rtl = Backend::Verilator.factory(&d).expect("verilator builds");
        let r = check::random(&d, &rtl, 20_000, 50 + i as u64);
        assert!(r.failure.is_none(), "{preset}: {:?}", r.failure);
    }
}
