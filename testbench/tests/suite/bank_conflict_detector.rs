//! The detector's spec examples (docs/bank-conflicts.md §1.5 E1–E8, [000]'s example, the §5
//! T-vectors expressible as lane addresses) on the reference function, the port-level model and
//! rusthdl, plus the §1.4 invariants and the §2.4 structured sweep. Random co-simulation on
//! every backend, lint, Icarus, synthesis, the flip-flop inventory and the planted fault are the
//! conformance suite's.

use proptest::prelude::*;
use smrtl_cosim::blocks::bank_conflict_detector::{degree, degree_of, Cfg};
use smrtl_hdl::blocks::bank_conflict_detector::port::Inputs;
use smrtl_hdl::blocks::bank_conflict_detector::{Mode, Params, MODE_NAMES};
use smrtl_hdl::BlockParams;
use smrtl_testbench::blocks::bank_conflict_detector::{all, with_modes, words};
use smrtl_testbench::check;

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).unwrap()
}

/// (degree, cycles) of each access on the reference function; asserts that the port-level
/// model and rusthdl show exactly its five outputs (spec §2.1), one access per cycle.
fn evaluate_all(p: &Params, accesses: &[Inputs]) -> Vec<(u32, u32)> {
    let outs = check::directed(p, accesses);
    accesses
        .iter()
        .zip(outs)
        .map(|(a, o)| {
            let cfg = Cfg::of_params(p, a.mode8, a.size8);
            let mask = (a.lane_mask.iter().enumerate()).fold(0, |m, (l, &on)| m | (on as u64) << l);
            let r = degree(&cfg, a.valid, mask, &a.addr, a.mode8, a.size8);
            let got = (o.degree, o.degree_m1, o.cycles, o.conflict, o.any_active);
            let want = (
                u64::from(r.degree),
                u64::from(r.degree_m1),
                u64::from(r.cycles),
                r.conflict,
                r.any_active,
            );
            assert_eq!(
                got, want,
                "the RTL disagrees with the reference on {a:?} ({p:?})"
            );
            (r.degree, r.cycles)
        })
        .collect()
}

fn w(x: u64) -> Option<u64> {
    Some(x)
}

/// Spec §1.5 table, ep8: lanes as 4-byte word indices; (Literal, Multicast, GpgpuSimLimited,
/// Gpgpusim4Limited).
#[test]
fn mode_examples_e1_to_e6() {
    let n = None;
    type Row = (&'static str, Vec<Option<u64>>, [u32; 4]);
    let rows: Vec<Row> = vec![
        ("E1", (0..8).map(w).collect(), [1, 1, 1, 1]),
        ("E2", (0..8).map(|l| w(2 * l)).collect(), [2, 2, 2, 2]),
        ("E3", vec![w(5); 8], [8, 1, 1, 1]),
        ("E4", [0, 0, 1, 2, 3, 4, 5, 6].map(w).to_vec(), [2, 1, 2, 1]),
        ("E5", vec![w(0), w(0), w(8), w(1), n, n, n, n], [3, 2, 3, 2]),
        (
            "E5'",
            vec![w(8), w(0), w(0), w(1), n, n, n, n],
            [3, 2, 2, 2],
        ),
        ("E6", vec![n; 8], [1, 1, 1, 1]),
    ];
    for (i, mode) in MODE_NAMES.iter().enumerate() {
        let p = params("ep8", &[("MODE", mode)]);
        let accesses: Vec<Inputs> = rows.iter().map(|(_, w, _)| words(w)).collect();
        let got = evaluate_all(&p, &accesses);
        for ((name, _, want), (d, _)) in rows.iter().zip(got) {
            assert_eq!(d, want[i], "{name} in {mode}");
        }
    }
}

#[test]
fn e6_all_inactive_reports_no_activity() {
    let p = params("ep8", &[]);
    let o = &check::directed(&p, &[words(&[None; 8])])[0];
    assert_eq!((o.any_active, o.degree, o.conflict), (false, 1, false));
}

/// E7 (W = 8, N = 4, M = 8, byte address 8l) and E8 (W = 8, N = 8, M = 4, byte address 4l).
#[test]
fn mode_examples_e7_e8() {
    let e7 = with_modes(all(&strided(8, 1, 0, 8)), false, true);
    let e8 = with_modes(all(&strided(8, 1, 0, 4)), true, false);
    let modes = [
        ("literal", 2),
        ("multicast", 1),
        ("gpgpusim-limited", 2),
        ("gpgpusim4-limited", 2),
    ];
    for (mode, want) in modes {
        let p = params("ep8", &[("W", "8"), ("MODE", mode)]);
        let got = evaluate_all(&p, &[e7.clone(), e8.clone()]);
        assert_eq!(got[0].0, want, "E7 {mode}");
        assert_eq!(got[1].0, want, "E8 {mode}");
    }
}

/// With P = 2, E5 takes 2 / 1 / 2 / 1 cycles.
#[test]
fn e5_with_two_ports() {
    let e5 = words(&[w(0), w(0), w(8), w(1), None, None, None, None]);
    let modes = [
        ("literal", 2),
        ("multicast", 1),
        ("gpgpusim-limited", 2),
        ("gpgpusim4-limited", 1),
    ];
    for (mode, cycles) in modes {
        let p = params("ep8", &[("P", "2"), ("MODE", mode)]);
        assert_eq!(
            evaluate_all(&p, std::slice::from_ref(&e5))[0].1,
            cycles,
            "{mode}"
        );
    }
}

/// [000] §2.3 / §3.1: lanes 0 and 4 on bank 0 give degree 2.
#[test]
fn paper_000_lanes_0_and_4_on_bank_0() {
    let a = words(&[0, 1, 2, 3, 8, 5, 6, 7].map(w));
    for mode in MODE_NAMES {
        assert_eq!(
            evaluate_all(&params("ep8", &[("MODE", mode)]), std::slice::from_ref(&a))[0].0,
            2
        );
    }
}

/// Lanes at `offset + stride·l` elements of `elem` bytes.
fn strided(lanes: u64, stride: u64, offset: u64, elem: u64) -> Vec<u64> {
    (0..lanes).map(|l| (offset + stride * l) * elem).collect()
}

/// T1, T2 (conventional, case 2: W = N = M = 4) for B ∈ {8, 16, 32}.
#[test]
fn t1_t2_conventional_strides() {
    for (preset, b) in [("ep8", 8), ("tesla", 16), ("fermi", 32)] {
        let p = params(preset, &[("A", "16")]);
        let mut accesses = vec![all(&strided(b, 2, 0, 4))];
        accesses.extend((1..b).step_by(2).map(|s| all(&strided(b, s, 0, 4))));
        let got = evaluate_all(&p, &accesses);
        assert_eq!(got[0].0, 2, "T1 B = {b}");
        assert!(got[1..].iter().all(|g| g.0 == 1), "T2 B = {b}: {got:?}");
    }
}

/// T3: Cray-1 (16 banks × 8 B, 16 lanes, 8-byte words): strides 8 / 16 words conflict 8 / 16.
#[test]
fn t3_cray1() {
    let p = params("tesla", &[("W", "8"), ("A", "20")]);
    let a8 = with_modes(all(&strided(16, 8, 0, 8)), true, true);
    let a16 = with_modes(all(&strided(16, 16, 0, 8)), true, true);
    let got = evaluate_all(&p, &[a8, a16]);
    assert_eq!((got[0].0, got[1].0), (8, 16));
}

/// T4–T11, T13 on `kepler` (32 lanes, W = 8, A = 16).
#[test]
fn t_vectors_kepler() {
    let p = params("kepler", &[]);
    let four = |s: u64, o: u64| all(&strided(32, s, o, 4));
    // T4: stride 1 in 4B mode / 4-byte data and in 8B mode / 8-byte data.
    let mut list = vec![
        four(1, 0),
        with_modes(all(&strided(32, 1, 0, 8)), true, true),
    ];
    // T5: odd strides, any offset (row-major).
    for s in [1, 3, 5, 7, 9, 31, 33] {
        for o in [0, 1, 17, 63] {
            list.push(four(s, o));
        }
    }
    // T6–T8.
    let t678 = [
        (64, 32),
        (128, 32),
        (256, 32),
        (32, 16),
        (2, 1),
        (4, 2),
        (8, 4),
        (16, 8),
    ];
    for (s, _) in t678 {
        list.push(four(s, 0));
    }
    let got = evaluate_all(&p, &list);
    assert_eq!(got[0].0, 1, "T4 4B");
    assert_eq!(got[1].0, 1, "T4 8B");
    assert!(got[2..30].iter().all(|g| g.0 == 1), "T5");
    for ((s, want), g) in t678.iter().zip(&got[30..]) {
        assert_eq!(g.0, *want, "T6-T8 stride {s}");
    }

    // T9: over all offsets, min = the offset-0 value, max = that + 1.
    for (s, base) in [(2, 1), (4, 2), (8, 4), (16, 8), (32, 16)] {
        let offsets: Vec<Inputs> = (0..64).map(|o| four(s, o)).collect();
        let d: Vec<u32> = evaluate_all(&p, &offsets).iter().map(|g| g.0).collect();
        assert_eq!(*d.iter().min().unwrap(), base, "T9 min, stride {s}");
        assert_eq!(*d.iter().max().unwrap(), base + 1, "T9 max, stride {s}");
    }
    // T10 (4B mode) and T11 (8B mode, 4-byte data): stride 6, any offset.
    let t10: Vec<Inputs> = (0..64).map(|o| four(6, o)).collect();
    assert!(evaluate_all(&p, &t10).iter().all(|g| g.0 == 2), "T10");
    let t11: Vec<Inputs> = (0..64)
        .map(|o| with_modes(four(6, o), true, false))
        .collect();
    assert!(evaluate_all(&p, &t11).iter().all(|g| g.0 == 1), "T11");
    // T12 (R = 2): stride 1 < R in column-major. T13: odd strides give 1 or 2, never more.
    assert_eq!(
        evaluate_all(&p, &[with_modes(four(1, 0), true, false)])[0].0,
        1,
        "T12"
    );
    let t13: Vec<Inputs> = (1..64)
        .step_by(2)
        .flat_map(|s| (0..4).map(move |o| with_modes(four(s, o), true, false)))
        .collect();
    assert!(evaluate_all(&p, &t13).iter().all(|g| g.0 <= 2), "T13");
}

/// T12 with R = 4 (W = N = 16, model only) and T16 / T17 offset periods.
#[test]
fn t12_t16_t17_model() {
    let cfg16 = Cfg {
        lanes: 32,
        banks: 32,
        layer_bytes: 16,
        mode_bytes: 16,
        elem_bytes: 4,
        ports: 1,
        mode: Mode::Multicast,
    };
    for s in 1..4 {
        let d = degree_of(&cfg16, &[true; 32], &strided(32, s, 0, 4));
        assert_eq!(d.degree, 1, "T12 R = 4, stride {s}");
    }
    let row = Cfg {
        layer_bytes: 8,
        mode_bytes: 4,
        ..cfg16
    };
    let col = Cfg {
        layer_bytes: 8,
        mode_bytes: 8,
        ..cfg16
    };
    for s in 1..40 {
        for o in 0..64 {
            let at = |c: &Cfg, o: u64| degree_of(c, &[true; 32], &strided(32, s, o, 4)).degree;
            assert_eq!(at(&row, o), at(&row, o + 64), "T16 stride {s} offset {o}");
            assert_eq!(at(&col, o), at(&col, o + 2), "T17 stride {s} offset {o}");
        }
    }
}

/// §2.4 (2): stride 0…2·B·W/M × offset 0…B·W/M − 1 × every legal (N, M) × masks, on the
/// model and rusthdl (every output compared every cycle).
#[test]
fn structured_sweep_model_vs_rusthdl() {
    for (preset, sets) in [("ep8", vec![("W", "8")]), ("kepler", vec![])] {
        for mode in MODE_NAMES {
            let mut sets = sets.clone();
            sets.push(("MODE", mode));
            let p = params(preset, &sets);
            let lanes = p.lanes as u64;
            let masks = [
                u64::MAX >> (64 - lanes),
                0,
                (1 << (lanes / 2)) - 1,
                0xAAAA_AAAA & (u64::MAX >> (64 - lanes)),
            ];
            for (mode8, size8) in [(false, false), (false, true), (true, false), (true, true)] {
                let elem = if size8 { 8 } else { 4 };
                let per_row = (p.banks * p.layer_bytes) as u64 / elem;
                let mut accesses = vec![];
                for stride in 0..=2 * per_row {
                    for offset in 0..per_row {
                        for m in masks {
                            let mut a = with_modes(
                                all(&strided(lanes, stride, offset, elem)),
                                mode8,
                                size8,
                            );
                            a.lane_mask = (0..lanes).map(|l| m >> l & 1 == 1).collect();
                            accesses.push(a);
                        }
                    }
                }
                check::directed(&p, &accesses);
            }
        }
    }
}

proptest! {
    /// §1.4 invariants: 1 ≤ Multicast ≤ Literal ≤ L; Multicast ≤ GpgpuSimLimited ≤ L;
    /// Multicast ≤ Gpgpusim4Limited ≤ Literal; shifting every address by a multiple of B·W
    /// changes nothing; Literal, Multicast and Gpgpusim4Limited ignore lane order.
    #[test]
    fn invariants(
        lanes_log in 3u32..=5,
        wide in any::<bool>(),
        n8 in any::<bool>(),
        m8 in any::<bool>(),
        pool in prop::collection::vec(0u64..4096, 1..6),
        picks in prop::collection::vec((0usize..6, any::<bool>()), 32),
        shift in 0u64..8,
        rot in 0usize..32,
    ) {
        let lanes = 1 << lanes_log;
        let w = if wide { 8 } else { 4 };
        let cfg = |mode| Cfg { lanes, banks: lanes, layer_bytes: w, mode_bytes: if wide && n8 { 8 } else { 4 }, elem_bytes: if wide && m8 { 8 } else { 4 }, ports: 1, mode };
        let addrs: Vec<u64> = picks.iter().take(lanes as usize).map(|(i, _)| pool[i % pool.len()]).collect();
        let active: Vec<bool> = picks.iter().take(lanes as usize).map(|(_, a)| *a).collect();
        let d = |mode, addrs: &[u64], active: &[bool]| degree_of(&cfg(mode), active, addrs).degree;
        let (lit, mc, gs) = (d(Mode::Literal, &addrs, &active), d(Mode::Multicast, &addrs, &active), d(Mode::GpgpusimLimited, &addrs, &active));
        let gs4 = d(Mode::Gpgpusim4Limited, &addrs, &active);
        prop_assert!(1 <= mc && mc <= lit && lit <= lanes);
        prop_assert!(mc <= gs && gs <= lanes);
        prop_assert!(mc <= gs4 && gs4 <= lit);
        let row = (lanes * w) as u64;
        let shifted: Vec<u64> = addrs.iter().map(|a| a + shift * row).collect();
        for mode in Mode::ALL {
            prop_assert_eq!(d(mode, &addrs, &active), d(mode, &shifted, &active));
        }
        let mut ra = addrs.clone();
        let mut rb = active.clone();
        ra.rotate_left(rot % lanes as usize);
        rb.rotate_left(rot % lanes as usize);
        prop_assert_eq!(lit, d(Mode::Literal, &ra, &rb));
        prop_assert_eq!(mc, d(Mode::Multicast, &ra, &rb));
        prop_assert_eq!(gs4, d(Mode::Gpgpusim4Limited, &ra, &rb));
    }
}
