//! `bankan` (docs/bank-conflicts.md §3.4): the distinct-case grouping gives exactly what brute
//! force over every warp and iteration gives, on random kernels; the loop folding's case counts;
//! the closed forms of [002] §3.2 against brute force over the full sweep, and their use.

use proptest::prelude::*;
use serde_json::json;
use smrtl_cosim::bankan::swizzle::Swizzle;
use smrtl_cosim::bankan::{analysis, closed, Overrides, Raw};
use smrtl_cosim::blocks::bank_conflict_detector::{degree_of, Cfg};
use smrtl_hdl::blocks::bank_conflict_detector::{Mode, MODE_NAMES};

fn kernel(v: serde_json::Value) -> smrtl_cosim::bankan::Kernel {
    Raw::parse(&v.to_string())
        .unwrap()
        .validate(Overrides::default())
        .unwrap()
}

/// A random access: coefficients, ranges, up to two loops and two conditions.
fn access() -> impl Strategy<Value = serde_json::Value> {
    (
        (
            prop::array::uniform3(-3i64..=3),
            prop::array::uniform3(-3i64..=3),
            0usize..2,
            prop::option::of((0u64..4, 1u64..5)),
        ),
        prop::collection::vec((1u64..7, -3i64..=3, -3i64..=3), 0..3),
        prop::collection::vec((-2i64..=2, -2i64..=2, -2i64..=2, -2i64..=2, -4i64..=8), 0..3),
    )
        .prop_map(|((row, col, array, tx), loops, conds)| {
            let n = loops.len();
            let name = ["a", "b"][array];
            json!({
                "array": name,
                "row": [row[0], row[1], 300],
                "col": [col[0], col[1], 300],
                "tx": tx.map(|(lo, w)| [lo, lo + w]),
                "for": loops.iter().map(|(t, r, c)| json!({"trips": t, "inc": [r, c]})).collect::<Vec<_>>(),
                "if": conds.iter().map(|(a, b, i0, i1, c)| {
                    let i: Vec<i64> = [*i0, *i1].into_iter().take(n).collect();
                    json!({"tx": a, "ty": b, "i": i, "c": c})
                }).collect::<Vec<_>>(),
            })
        })
}

fn kernels() -> impl Strategy<Value = serde_json::Value> {
    (
        (prop::sample::select(vec![8u32, 16, 32]), prop::sample::select(vec![8u32, 16, 32])),
        prop::sample::select(vec![(4u32, 4u32, 4u32, 4u32), (8, 4, 4, 8), (8, 8, 4, 8), (8, 4, 8, 4), (8, 8, 8, 4), (16, 4, 8, 16), (16, 16, 4, 4)]),
        prop::sample::select(MODE_NAMES.to_vec()),
        (8u64..=40, 1u64..=5),
        (0u64..70, 0u64..70, 0u64..70),
        prop::collection::vec(access(), 1..4),
    )
        .prop_map(|((banks, lanes), (w, n, ma, mb), mode, (bdx, bdy), (pad, dummy_a, dummy_b), accesses)| {
            json!({
                "banks": banks, "lanes": lanes, "layer_bytes": w, "bank_width": n, "mode": mode,
                "block": [bdx, bdy],
                "arrays": [
                    {"name": "a", "elem_bytes": ma, "rows": 600, "cols": 600, "pad": pad, "dummy": dummy_a},
                    {"name": "b", "elem_bytes": mb, "rows": 600, "cols": 601, "dummy": dummy_b},
                ],
                "accesses": accesses,
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn grouped_equals_brute_force(v in kernels()) {
        let k = kernel(v);
        for a in &k.accesses {
            let g = analysis::grouped(&k, a);
            let b = analysis::brute(&k, a);
            prop_assert_eq!(&g.degree, &b.degree);
            prop_assert_eq!(&g.warp_conflicts, &b.warp_conflicts);
            prop_assert_eq!((g.replays, g.conflicts, g.executed), (b.replays, b.conflicts, b.executed));
            prop_assert!(g.evaluations <= b.evaluations);
        }
    }
}

/// A loop that moves the access by one element per iteration, 1000 iterations: one warp, at
/// most B·W/M = 64 distinct cases whatever the trip count (§3.3, T24).
#[test]
fn loop_cases_are_bounded_by_the_layer() {
    for trips in [10u64, 100, 1000] {
        let k = kernel(json!({
            "block": [32, 1],
            "arrays": [{"name": "s", "elem_bytes": 4, "rows": 1, "cols": 3000}],
            "accesses": [{"array": "s", "row": [0, 0, 0], "col": [2, 0, 0],
                          "for": [{"trips": trips, "inc": [0, 1]}]}],
        }));
        let g = analysis::grouped(&k, &k.accesses[0]);
        assert!(g.evaluations <= 64, "{trips}: {}", g.evaluations);
        assert_eq!(g.executed, trips);
        let b = analysis::brute(&k, &k.accesses[0]);
        assert_eq!((g.replays, g.conflicts), (b.replays, b.conflicts));
        assert_eq!(b.evaluations, trips);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// The optimizer never proposes more replays than the file's layout, and the layout it
    /// proposes (pads, dummies and swizzles) has the replays it reports.
    #[test]
    fn optimizer_reports_what_its_layout_gives(v in kernels()) {
        let k = kernel(v);
        let l = smrtl_cosim::bankan::optimize::optimize(&k, 1 << 24);
        prop_assert!(l.replays_after <= l.replays_before);
        let names: Vec<&str> = k.arrays.iter().map(|a| a.name.as_str()).collect();
        let pads: Vec<u64> = names.iter().map(|n| l.pads[*n]).collect();
        let dummies: Vec<u64> = names.iter().map(|n| l.dummies[*n]).collect();
        let mut o = k.relayout(l.bank_width, &pads, &dummies).unwrap();
        for a in &mut o.arrays {
            a.swizzle = l.swizzles[&a.name].map(|b_m_s| Swizzle::new(b_m_s).unwrap());
        }
        let r: u64 = o.accesses.iter().map(|a| analysis::brute(&o, a).replays).sum();
        prop_assert_eq!(r, l.replays_after);
        prop_assert_eq!(o.bytes(), l.bytes);
    }
}

/// Lane l at element `offset + l·stride` (shifted by whole layers to stay non-negative), the
/// lanes of `mask` active: the degree function's answer (§1.4).
fn brute_strided(cfg: &Cfg, stride: i64, offset: i64, mask: u64) -> u32 {
    let l = cfg.lanes as i64;
    let m = cfg.elem_bytes as i64;
    let layer = (cfg.banks * cfg.layer_bytes) as i64;
    let low = (offset + stride * (l - 1)).min(offset) * m;
    let shift = if low < 0 {
        (-low + layer - 1) / layer * layer
    } else {
        0
    };
    let active: Vec<bool> = (0..l).map(|x| mask >> x & 1 == 1).collect();
    let addrs: Vec<u64> = (0..l)
        .map(|x| ((offset + x * stride) * m + shift) as u64)
        .collect();
    degree_of(cfg, &active, &addrs).degree
}

/// Every closed form of `closed::degree` against brute force (docs/bank-conflicts.md §3.2,
/// §3.3): B = L ∈ {8, 16, 32} and L = 16 with B = 32, every W, N, M, all four modes, strides
/// −B·R…2·B·R + 1 (R = W/min(N, M)), every offset in a layer of all banks (B·W/M), the full
/// vector and two partial masks. Also [002]'s bound without a fast path: column-major R = 2
/// with odd S is 1 or 2 (App. A-3).
#[test]
fn closed_forms_equal_brute_force_over_the_sweep() {
    let mut answered = [0u64; Mode::ALL.len()];
    for (banks, lanes) in [(8u32, 8u32), (16, 16), (32, 32), (32, 16)] {
        for w in [4u32, 8, 16, 32] {
            for n in [4u32, 8, 16, 32].into_iter().filter(|&x| x <= w) {
                for m in [4u32, 8, 16, 32].into_iter().filter(|&x| x <= w) {
                    for (mi, mode) in Mode::ALL.into_iter().enumerate() {
                        let cfg = Cfg {
                            lanes,
                            banks,
                            layer_bytes: w,
                            mode_bytes: n,
                            elem_bytes: m,
                            ports: 1,
                            mode,
                        };
                        let r = (w / n.min(m)) as i64;
                        let b = banks as i64;
                        let layer = (banks * w / m) as i64;
                        let full = (1u64 << lanes) - 1;
                        for s in -b * r..=2 * b * r + 1 {
                            for o in 0..layer {
                                let masks = [full, full & 0x5b3d_96e1, full & !0x8421_0841];
                                for mask in masks {
                                    let c = mask.count_ones();
                                    let Some(d) = closed::degree(&cfg, s, o, c) else {
                                        continue;
                                    };
                                    let want = brute_strided(&cfg, s, o, mask);
                                    assert_eq!(
                                        d, want,
                                        "{cfg:?} stride {s} offset {o} mask {mask:#x}"
                                    );
                                    answered[mi] += 1;
                                }
                                if m < n && n == w && r == 2 && s % 2 != 0 && lanes == banks {
                                    let d = brute_strided(&cfg, s, o, full);
                                    assert!(
                                        mode != Mode::Multicast || d <= 2,
                                        "A-3: {cfg:?} {s} {o}"
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(answered.iter().all(|&x| x > 10_000), "{answered:?}");
}

/// The fast path is taken: a 1D strided warp access (and a `for-if` over one, partial masks
/// included) is answered by the closed forms; a 2D pattern is not (docs/bank-conflicts.md §3.3).
#[test]
fn the_closed_form_fast_path_is_taken() {
    let one = |access: serde_json::Value, block: [u64; 2]| {
        let k = kernel(json!({
            "block": block,
            "arrays": [{"name": "s", "elem_bytes": 4, "rows": 64, "cols": 2048}],
            "accesses": [access],
        }));
        let g = analysis::grouped(&k, &k.accesses[0]);
        let b = analysis::brute(&k, &k.accesses[0]);
        assert_eq!((g.replays, g.conflicts), (b.replays, b.conflicts));
        assert_eq!(b.closed, 0);
        (g.evaluations, g.closed)
    };
    for s in [1, 2, 3, 6, 32, 64] {
        let (e, c) = one(
            json!({"array": "s", "row": [0, 0, 0], "col": [s, 0, 0]}),
            [32, 1],
        );
        assert_eq!((e, c), (1, 1), "stride {s}");
    }
    // s[tx][i] if tx <= i: rows 2048 words apart, every mask one bank (§5.3's B·R | S rule).
    let (e, c) = one(
        json!({"array": "s", "row": [1, 0, 0], "col": [0, 0, 0],
               "for": [{"trips": 40, "inc": [0, 1]}], "if": [{"tx": -1, "i": [1]}]}),
        [32, 1],
    );
    assert_eq!(c, e);
    assert!(e > 32, "{e}");
    // A 16x2 block reading s[ty][tx]: two rows in a warp, not one stride.
    let (e, c) = one(
        json!({"array": "s", "row": [0, 1, 0], "col": [1, 0, 0]}),
        [16, 2],
    );
    assert_eq!((e, c), (1, 0));
}
