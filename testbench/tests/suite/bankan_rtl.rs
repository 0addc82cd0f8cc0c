//! `bankan` against the hardware (docs/bank-conflicts.md §3.4, issue 26 item 4): random affine
//! accesses, ranges, loops, `if` masks, XOR swizzles and configurations the detector RTL takes; the grouped
//! analysis equals brute force, and every distinct case's degree equals the
//! `bank_conflict_detector` RTL's on rust-hdl.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::json;
use smrtl_cosim::bankan::{analysis, Overrides, Raw};
use smrtl_hdl::blocks::bank_conflict_detector::MODE_NAMES;
use smrtl_testbench::studies::conflict::{Backend, Batch};

/// A random kernel in the RTL's configurations: L = B, W ∈ {4, 8}.
fn kernels() -> impl Strategy<Value = serde_json::Value> {
    let access = (
        prop::array::uniform3(-3i64..=3),
        prop::array::uniform3(-3i64..=3),
        prop::collection::vec((1u64..6, -3i64..=3, -3i64..=3), 0..3),
        prop::collection::vec((-2i64..=2, -2i64..=2, -2i64..=2, -4i64..=8), 0..3),
    )
        .prop_map(|(row, col, loops, conds)| {
            let n = loops.len();
            json!({
                "array": "a",
                "row": [row[0], row[1], 100],
                "col": [col[0], col[1], 100],
                "for": loops.iter().map(|(t, r, c)| json!({"trips": t, "inc": [r, c]})).collect::<Vec<_>>(),
                "if": conds.iter().map(|(a, b, i, c)| {
                    let i: Vec<i64> = [*i].into_iter().take(n).collect();
                    json!({"tx": a, "ty": b, "i": i, "c": c})
                }).collect::<Vec<_>>(),
            })
        });
    (
        prop::sample::select(vec![8u32, 16, 32]),
        prop::sample::select(vec![
            (4u32, 4u32, 4u32),
            (8, 4, 4),
            (8, 8, 4),
            (8, 4, 8),
            (8, 8, 8),
        ]),
        prop::sample::select(MODE_NAMES.to_vec()),
        (8u64..=24, 1u64..=4),
        (0u64..40, 0u64..40),
        prop::collection::vec(access, 1..3),
        prop::option::of((1u32..=4, 0u32..=2, 0u32..=2)),
    )
        .prop_map(
            |(lanes, (w, n, m), mode, (bdx, bdy), (pad, dummy), accesses, swizzle)| {
                // A swizzled array (CuTe's Swizzle<B, M, S>, S ≥ B) of 256 × 256 elements, which
                // every period up to 2^16 tiles.
                let array = match swizzle {
                    Some((b, base, more)) => json!({"name": "a", "elem_bytes": m, "rows": 256,
                    "cols": 256, "dummy": dummy, "swizzle": [b, base, b + more]}),
                    None => json!({"name": "a", "elem_bytes": m, "rows": 200, "cols": 200,
                    "pad": pad, "dummy": dummy}),
                };
                json!({
                    "banks": lanes, "lanes": lanes, "layer_bytes": w, "bank_width": n, "mode": mode,
                    "block": [bdx, bdy],
                    "arrays": [array],
                    "accesses": accesses,
                })
            },
        )
}

#[test]
fn analyzer_brute_force_and_rtl_agree() {
    // One evaluator for all cases: it builds each configuration's detector once.
    let batch = std::cell::RefCell::new(Batch::new(Backend::Rusthdl).unwrap());
    let mut runner = TestRunner::new(Config::with_cases(256));
    runner
        .run(&kernels(), |v| {
            let k = Raw::parse(&v.to_string())
                .unwrap()
                .validate(Overrides::default())
                .unwrap();
            for a in &k.accesses {
                let g = analysis::grouped(&k, a);
                let b = analysis::brute(&k, a);
                prop_assert_eq!(&g.degree, &b.degree);
                prop_assert_eq!((g.replays, g.conflicts), (b.replays, b.conflicts));
                let cfg = k.cfg(a.array);
                for c in analysis::cases(&k, a) {
                    let (rtl, _) = batch.borrow_mut().eval(&cfg, &c.active, &c.addrs).unwrap();
                    prop_assert_eq!(rtl, c.degree, "{:?} {:?}", c.addrs, c.active);
                }
            }
            Ok(())
        })
        .unwrap();
}
