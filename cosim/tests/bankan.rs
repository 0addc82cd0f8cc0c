//! `bankan` (docs/bank-conflicts.md §3.4): the distinct-case grouping gives exactly what brute
//! force over every warp and iteration gives, on random kernels; the loop folding's case counts.

use proptest::prelude::*;
use serde_json::json;
use smrtl_cosim::bankan::{analysis, Overrides, Raw};

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
        prop::sample::select(vec!["literal", "multicast", "gpgpusim-limited"]),
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
    /// proposes has the replays it reports.
    #[test]
    fn optimizer_reports_what_its_layout_gives(v in kernels()) {
        let k = kernel(v);
        let l = smrtl_cosim::bankan::optimize::optimize(&k, 1 << 24);
        prop_assert!(l.replays_after <= l.replays_before);
        let names: Vec<&str> = k.arrays.iter().map(|a| a.name.as_str()).collect();
        let pads: Vec<u64> = names.iter().map(|n| l.pads[*n]).collect();
        let dummies: Vec<u64> = names.iter().map(|n| l.dummies[*n]).collect();
        let o = k.relayout(l.bank_width, &pads, &dummies).unwrap();
        let r: u64 = o.accesses.iter().map(|a| analysis::brute(&o, a).replays).sum();
        prop_assert_eq!(r, l.replays_after);
        prop_assert_eq!(o.bytes(), l.bytes);
    }
}
