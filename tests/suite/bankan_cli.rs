//! `smrtl bankan` through the binary (docs/bank-conflicts.md §3.4): the spec's §5 T-vectors
//! that the analysis answers (T1–T24; T18–T20 through the distinct cases of `--json`), the
//! 3DFD pad sweep (T21, T22), the exact output of the issue's JSON
//! example, --brute-force agreeing with the grouped analysis, and one-line refusals.

use crate::common;

use common::{assert_usage_error, smrtl, stderr, stdout};
use serde_json::{json, Value};
use std::path::Path;

/// `smrtl bankan FILE --json extra...` on the kernel `v`.
fn analyse(v: &Value, extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("k.json");
    std::fs::write(&file, v.to_string()).unwrap();
    let mut args = vec!["bankan", file.to_str().unwrap(), "--json"];
    args.extend(extra);
    let o = smrtl(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

/// A configuration: B, L, W, N, M.
#[derive(Clone, Copy)]
struct Conf(u32, u32, u32, u32, u32);

/// Kepler 4B mode, 4-byte data.
const KEPLER: Conf = Conf(32, 32, 8, 4, 4);

/// One warp of `lanes` threads, one access per (stride, offset) in elements: lane l reads
/// element offset + l·stride of a 1-row array.
fn strided(c: Conf, accesses: &[(i64, i64)]) -> Value {
    let Conf(banks, lanes, w, n, m) = c;
    let cols = accesses
        .iter()
        .map(|(s, o)| s * (lanes as i64 - 1) + o + 1)
        .max()
        .unwrap();
    json!({
        "banks": banks, "lanes": lanes, "layer_bytes": w, "bank_width": n,
        "block": [lanes, 1],
        "arrays": [{"name": "a", "elem_bytes": m, "rows": 1, "cols": cols}],
        "accesses": accesses.iter().map(|(s, o)| json!({
            "array": "a", "row": [0, 0, 0], "col": [s, 0, o]
        })).collect::<Vec<_>>(),
    })
}

/// Degree of the single warp of each access.
fn degrees(c: Conf, accesses: &[(i64, i64)]) -> Vec<u64> {
    let v = analyse(&strided(c, accesses), &[]);
    v["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["degree"][0].as_u64().unwrap())
        .collect()
}

fn at_offsets(stride: i64, offsets: std::ops::Range<i64>) -> Vec<(i64, i64)> {
    offsets.map(|o| (stride, o)).collect()
}

#[test]
fn t1_t2_conventional_mapping() {
    for b in [8, 16, 32] {
        let conv = Conf(b, b, 4, 4, 4);
        assert_eq!(degrees(conv, &[(2, 0)]), [2], "T1, B = {b}");
        let odd: Vec<(i64, i64)> = (0..20).map(|k| (2 * k + 1, 0)).collect();
        assert!(degrees(conv, &odd).iter().all(|&d| d == 1), "T2, B = {b}");
    }
}

#[test]
fn t4_t5_unit_and_odd_strides() {
    assert_eq!(degrees(KEPLER, &[(1, 0)]), [1], "T4, 4B mode");
    assert_eq!(
        degrees(Conf(32, 32, 8, 8, 8), &[(1, 0)]),
        [1],
        "T4, 8B mode"
    );
    let odd: Vec<(i64, i64)> = (0..8)
        .flat_map(|k| (0..64).map(move |o| (2 * k + 1, o)))
        .collect();
    assert!(degrees(KEPLER, &odd).iter().all(|&d| d == 1), "T5");
}

#[test]
fn t6_t7_t8_power_of_two_strides() {
    assert_eq!(
        degrees(KEPLER, &[(64, 0), (128, 0), (256, 0)]),
        [32, 32, 32]
    );
    assert_eq!(degrees(KEPLER, &[(32, 0)]), [16]);
    assert_eq!(
        degrees(KEPLER, &[(2, 0), (4, 0), (8, 0), (16, 0)]),
        [1, 2, 4, 8]
    );
}

#[test]
fn t9_offsets_add_at_most_one() {
    for (s, lo) in [(2, 1), (4, 2), (8, 4), (16, 8), (32, 16)] {
        let d = degrees(KEPLER, &at_offsets(s, 0..64));
        let (min, max) = (*d.iter().min().unwrap(), *d.iter().max().unwrap());
        assert_eq!((min, max), (lo, lo + 1), "T9, stride {s}");
    }
}

#[test]
fn t10_t11_stride_six() {
    let d = degrees(KEPLER, &at_offsets(6, 0..64));
    assert!(d.iter().all(|&x| x == 2), "T10: {d:?}");
    let d = degrees(Conf(32, 32, 8, 8, 4), &at_offsets(6, 0..64));
    assert!(d.iter().all(|&x| x == 1), "T11: {d:?}");
}

#[test]
fn t12_t13_column_major() {
    assert_eq!(
        degrees(Conf(32, 32, 8, 8, 4), &[(1, 0), (1, 1)]),
        [1, 1],
        "T12 R = 2"
    );
    let r4: Vec<(i64, i64)> = (1..4).flat_map(|s| (0..4).map(move |o| (s, o))).collect();
    assert!(
        degrees(Conf(32, 32, 16, 16, 4), &r4)
            .iter()
            .all(|&d| d == 1),
        "T12 R = 4"
    );
    let odd: Vec<(i64, i64)> = (0..32)
        .flat_map(|k| (0..4).map(move |o| (2 * k + 1, o)))
        .collect();
    let d = degrees(Conf(32, 32, 8, 8, 4), &odd);
    assert!(d.iter().all(|&x| x == 1 || x == 2), "T13: {d:?}");
    assert!(d.contains(&2), "T13: some odd stride conflicts");
}

#[test]
fn t16_offset_period_is_a_layer_of_all_banks() {
    for s in 1..=40 {
        let d = degrees(KEPLER, &at_offsets(s, 0..128));
        assert_eq!(d[..64], d[64..], "T16, stride {s}");
    }
}

#[test]
fn t23_even_stride_over_many_warps() {
    for s in [2, 4, 6, 8, 16] {
        let v = json!({
            "block": [256, 1],
            "arrays": [{"name": "a", "elem_bytes": 4, "rows": 1, "cols": 256 * s}],
            "accesses": [{"array": "a", "row": [0, 0, 0], "col": [s, 0, 0]}],
        });
        let a = &analyse(&v, &[])["accesses"][0];
        let d: Vec<u64> = a["degree"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        assert_eq!(d.len(), 8);
        assert!(d.iter().all(|&x| x == d[0]), "T23 stride {s}: {d:?}");
        assert_eq!(a["conflicts"], json!(d[0] * 8));
    }
}

/// examples/bankan/3dfd.json with its pad set to `pad`.
fn three_dfd(pad: u64) -> Value {
    let text = std::fs::read_to_string("examples/bankan/3dfd.json").unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["arrays"][0]["pad"] = json!(pad);
    v
}

#[test]
fn t21_t22_3dfd_pad_sweep() {
    let replays: Vec<u64> = (0..=24)
        .map(|pad| {
            analyse(&three_dfd(pad), &[])["total_replays"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert!(replays[..24].iter().all(|&r| r > 0), "T21: {replays:?}");
    assert_eq!(replays[24], 0, "T21");
    assert_eq!(
        replays,
        [
            78, 84, 92, 96, 91, 115, 126, 129, 32, 80, 110, 119, 90, 98, 90, 86, 93, 84, 77, 81,
            72, 76, 65, 70, 0
        ]
    );
    let eight = analyse(&three_dfd(0), &["--bank-width", "8"]);
    assert_eq!(eight["total_replays"], json!(0), "T22");
    assert_eq!(eight["config"]["bank_width"], json!(8));
}

#[test]
fn the_issue_example_exactly() {
    let v = analyse(
        &serde_json::from_str(&std::fs::read_to_string("examples/bankan/issue.json").unwrap())
            .unwrap(),
        &[],
    );
    assert_eq!(
        v,
        json!({
            "config": {"banks": 32, "bank_width": 4, "layer_bytes": 8, "lanes": 32,
                       "mode": "multicast", "block": [16, 16], "warps": 8},
            "accesses": [{
                "array": "s", "expr": "s[ty + 4][tx + 4] if 0 <= tx < 4",
                "degree": [1, 1, 1, 1, 1, 1, 1, 1],
                "warp_conflicts": [1, 1, 1, 1, 1, 1, 1, 1],
                "replays": 0, "conflicts": 8, "wavefronts": 8, "ideal_wavefronts": 8,
                "evaluations": 4,
                "explanation": "warp 0: degree 1, every bank serves one layer",
                "cases": [
                    {"lanes": 8, "offset": 16, "degree": 1, "count": 2},
                    {"lanes": 8, "offset": 80, "degree": 1, "count": 2},
                    {"lanes": 8, "offset": 144, "degree": 1, "count": 2},
                    {"lanes": 8, "offset": 208, "degree": 1, "count": 2}
                ]
            }],
            "total_replays": 0, "total_conflicts": 8,
            "total_wavefronts": 8, "total_ideal_wavefronts": 8
        })
    );
    let o = smrtl(&["bankan", "examples/bankan/issue.json"]);
    assert_eq!(
        stdout(&o),
        "bankan: 32 banks, 8 B layers, 4 B bank mode, multicast, 32 lanes; block 16x16 (8 warps)\n\
         access 0: s[ty + 4][tx + 4] if 0 <= tx < 4\n  \
         degree per warp: 1 1 1 1 1 1 1 1\n  \
         replays 0, conflicts 8; wavefronts 8 (ideal 8)\n  \
         worst: warp 0: degree 1, every bank serves one layer\n\
         total: replays 0, conflicts 8; wavefronts 8 (ideal 8)\n"
    );
}

/// Everything but the evaluation counts and the distinct cases (not listed by brute force).
fn without_evaluations(mut v: Value) -> Value {
    for a in v["accesses"].as_array_mut().unwrap() {
        a.as_object_mut().unwrap().remove("evaluations");
        a.as_object_mut().unwrap().remove("cases");
    }
    v
}

#[test]
fn brute_force_agrees_and_modes_override() {
    for file in [
        "examples/bankan/3dfd.json",
        "examples/bankan/lud-forif.json",
    ] {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        for mode in [
            "literal",
            "multicast",
            "gpgpusim-limited",
            "gpgpusim4-limited",
        ] {
            let g = analyse(&v, &["--mode", mode]);
            let b = analyse(&v, &["--mode", mode, "--brute-force"]);
            assert_eq!(g["config"]["mode"], json!(mode));
            assert_eq!(
                without_evaluations(g),
                without_evaluations(b),
                "{file} {mode}"
            );
        }
    }
}

#[test]
fn for_if_counts_every_iteration_of_every_warp() {
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string("examples/bankan/lud-forif.json").unwrap())
            .unwrap();
    let a = &analyse(&v, &[])["accesses"][0];
    // i = 0…14 leave lanes i+1…15 active; i = 15 none: 15 executed warp accesses.
    assert_eq!(a["ideal_wavefronts"], json!(15));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let issue = std::fs::read_to_string("examples/bankan/issue.json").unwrap();
    let cases: &[(&str, &str, &str)] = &[
        ("\"dummy\": 0}", "\"dummy\": 0, \"base\": 3}", "unknown field `base`"),
        ("\"multicast\"", "\"broadcast\"", "allowed: literal, multicast, gpgpusim-limited, gpgpusim4-limited"),
        ("\"bank_width\": 4", "\"bank_width\": 6", "bank_width = 6 is out of range; allowed: 4, 8"),
        ("\"banks\": 32", "\"banks\": 12", "banks = 12 is out of range; allowed: 8, 16, 32"),
        ("\"elem_bytes\": 4", "\"elem_bytes\": 2", "elem_bytes = 2 is out of range"),
        ("[0, 4]", "[0, 17]", "tx range [0, 17) is out of range"),
        ("[1, 0, 4]", "[1, 0, 21]", "col index spans 21..=24"),
        ("\"array\": \"s\"", "\"array\": \"q\"", "array `q` is not declared; allowed: s"),
        ("[16, 16]", "[64, 32]", "bdx·bdy ≤ 1024"),
        ("\"accesses\": [", "\"accesses\": [{\"array\": \"s\", \"row\": [0,0,0], \"col\": [0,0,0], \"for\": [{\"trips\": 0, \"inc\": [0, 1]}]},", "for[0].trips = 0; allowed: at least 1"),
        ("\"accesses\": [", "\"accesses\": [{\"array\": \"s\", \"row\": [0,0,0], \"col\": [0,0,0], \"for\": [{\"trips\": 1000, \"inc\": [0, 0]}, {\"trips\": 1000, \"inc\": [0, 0]}]},", "allowed: at most 65536"),
        ("\"accesses\": [", "\"accesses\": [{\"array\": \"s\", \"row\": [0,0,0], \"col\": [0,0,0], \"if\": [{\"i\": [1]}]},", "allowed: at most one per loop (0)"),
        ("\"banks\": 32,", "\"banks\": 32, \"banks\": 16,", "duplicate key `banks`"),
        ("[0, 1, 4]", "[0, 1]", "row: invalid length 2, expected an array of length 3"),
        ("\"rows\": 24", "\"rows\": -1", "rows: invalid value: integer `-1`"),
        ("\"banks\": 32", "\"banks\": \"32\"", "banks: invalid type: string"),
        ("\"ty\": null", "\"ty\": [1]", "ty: invalid length 1"),
        ("\"dummy\": 0}", "\"dummy\": 0, \"swizzle\": [3, 0, 2]}", "allowed: [B, M, S] with B ≥ 1, S ≥ B"),
        ("\"dummy\": 0}", "\"dummy\": 0, \"swizzle\": [3, 2, 3]}", "Swizzle<3,2,3> swizzles blocks of 256 elements but the array has 576"),
    ];
    for (from, to, needle) in cases {
        assert!(issue.contains(from), "{from}");
        let file = dir.path().join("bad.json");
        std::fs::write(&file, issue.replacen(from, to, 1)).unwrap();
        assert_usage_error(&smrtl(&["bankan", file.to_str().unwrap()]), needle);
    }
    let e = "examples/bankan/issue.json";
    assert_usage_error(
        &smrtl(&["bankan", e, "--mode", "fast"]),
        "--mode `fast` is unknown",
    );
    assert_usage_error(
        &smrtl(&["bankan", e, "--bank-width", "16"]),
        "--bank-width = 16 is out of range; allowed: 4, 8",
    );
    assert_usage_error(
        &smrtl(&["bankan", e, "--no-swizzle"]),
        "--no-swizzle applies only with --optimize",
    );
    assert_usage_error(
        &smrtl(&["bankan", "no/such.json"]),
        "cannot read no/such.json",
    );
    assert!(Path::new(e).exists());
}

#[test]
fn t3_cray_1_gcd_rule() {
    assert_eq!(degrees(Conf(16, 16, 8, 8, 8), &[(8, 0), (16, 0)]), [8, 16]);
}

/// The largest pad from a stride in 1..=200 to the next conflict-free stride.
fn max_pad_to_conflict_free(c: Conf) -> i64 {
    let strides: Vec<(i64, i64)> = (1..=256).map(|s| (s, 0)).collect();
    let d = degrees(c, &strides);
    let free: Vec<i64> = (1..=256).filter(|&s| d[s as usize - 1] == 1).collect();
    (1..=200)
        .map(|s| free.iter().find(|&&f| f >= s).unwrap() - s)
        .max()
        .unwrap()
}

#[test]
fn t14_t15_pads_to_the_next_conflict_free_stride() {
    for (r, pad) in [(2, 3), (4, 7), (8, 15)] {
        let w = 4 * r;
        assert_eq!(
            max_pad_to_conflict_free(Conf(32, 32, w, w, 4)),
            pad,
            "T14 R = {r}"
        );
    }
    assert_eq!(max_pad_to_conflict_free(KEPLER), 1, "T15");
}

#[test]
fn t24_loop_cases_stay_within_a_layer() {
    for trips in [100, 1000] {
        let v = json!({
            "block": [32, 1],
            "arrays": [{"name": "a", "elem_bytes": 4, "rows": 1, "cols": 3000}],
            "accesses": [{"array": "a", "row": [0, 0, 0], "col": [2, 0, 0],
                          "for": [{"trips": trips, "inc": [0, 1]}]}],
        });
        let a = &analyse(&v, &[])["accesses"][0];
        assert!(a["evaluations"].as_u64().unwrap() <= 64, "T24: {a}");
        assert_eq!(a["ideal_wavefronts"], json!(trips));
        let b = &analyse(&v, &["--brute-force"])["accesses"][0];
        assert_eq!(b["evaluations"], json!(trips));
        assert_eq!(a["replays"], b["replays"]);
    }
}

#[test]
fn t17_column_major_offset_period_is_r() {
    for s in 1..=40 {
        let d = degrees(Conf(32, 32, 8, 8, 4), &at_offsets(s, 0..66));
        assert!((0..64).all(|o| d[o] == d[o + 2]), "T17, stride {s}: {d:?}");
    }
}

/// `--verify BACKEND` on every shipped example (JSON and text form): each distinct case on the
/// detector RTL equals the model, in every mode and bank width the RTL takes.
fn verify_examples(backend: &str, modes: &[&str]) {
    let mut files: Vec<_> = std::fs::read_dir("examples/bankan")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json" || x == "cu"))
        .collect();
    files.sort();
    assert!(files.len() >= 16, "{files:?}");
    for path in files {
        let file = path.display().to_string();
        for mode in modes {
            for width in ["4", "8"] {
                let flags = ["--verify", backend, "--mode", mode, "--bank-width", width];
                let o = smrtl(&[&["bankan", file.as_str(), "--json"][..], &flags].concat());
                assert_eq!(o.status.code(), Some(0), "{file}: {}", stderr(&o));
                let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
                let cases: u64 = r["accesses"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a["evaluations"].as_u64().unwrap())
                    .sum();
                assert_eq!(
                    r["verify"],
                    json!({"backend": backend, "cases": cases, "mismatches": 0}),
                    "{file} {mode} {width}"
                );
            }
        }
    }
}

#[test]
fn verify_rusthdl_agrees_on_every_shipped_example() {
    verify_examples(
        "rusthdl",
        &[
            "literal",
            "multicast",
            "gpgpusim-limited",
            "gpgpusim4-limited",
        ],
    );
    let o = smrtl(&["bankan", "examples/bankan/3dfd.json", "--verify", "rusthdl"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o)
        .ends_with("verify rusthdl: 80 distinct cases, every degree equal to the model's\n"));
}

#[test]
fn verify_verilator_agrees_on_every_shipped_example() {
    if !smrtl_hdl::tools::external(&["verilator"]) {
        return;
    }
    verify_examples("verilator", &["multicast"]);
}

#[test]
fn verify_refuses_a_layer_width_without_rtl() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w16.json");
    let v = strided(Conf(32, 32, 16, 16, 4), &[(1, 0)]);
    std::fs::write(&file, v.to_string()).unwrap();
    assert_usage_error(
        &smrtl(&["bankan", file.to_str().unwrap(), "--verify", "rusthdl"]),
        "--verify: layer_bytes = 16 has no RTL; allowed: 4, 8",
    );
}

#[test]
fn optimize_3dfd_prefers_8b_mode_without_padding() {
    let v = three_dfd(0);
    let l = analyse(&v, &["--optimize"]);
    assert_eq!(
        l,
        json!({"bank_width": 8, "pads": {"s_data": 0}, "dummies": {"s_data": 0}, "bytes": 2304,
               "replays_before": 78, "replays_after": 0, "evaluated": 54,
               "swizzles": {"s_data": null}})
    );
    // Literal counts both halves of an 8-byte word: 4B mode and pad 24, T21's first zero.
    let l = analyse(&v, &["--optimize", "--mode", "literal"]);
    assert_eq!(
        (l["bank_width"].clone(), l["pads"]["s_data"].clone()),
        (json!(4), json!(24))
    );
    assert_eq!(l["replays_after"], json!(0));
    let lud: Value =
        serde_json::from_str(&std::fs::read_to_string("examples/bankan/lud-forif.json").unwrap())
            .unwrap();
    // A swizzle removes every replay for no byte; [002]'s padding alone takes pad 1.
    let l = analyse(&lud, &["--optimize"]);
    assert_eq!(
        (
            l["pads"]["shadow"].clone(),
            l["swizzles"]["shadow"].clone(),
            l["bytes"].clone()
        ),
        (json!(0), json!([2, 0, 6]), json!(1024))
    );
    assert_eq!(l["replays_after"], json!(0));
    let l = analyse(&lud, &["--optimize", "--no-swizzle"]);
    assert_eq!(
        (l["bank_width"].clone(), l["pads"]["shadow"].clone()),
        (json!(4), json!(1))
    );
    assert_eq!(
        (l["replays_before"].clone(), l["replays_after"].clone()),
        (json!(21), json!(0))
    );
    let o = smrtl(&["bankan", "examples/bankan/3dfd.json", "--optimize"]);
    assert_eq!(
        stdout(&o),
        "optimize: bank width 8 B; pads s_data 0; dummies s_data 0; 2304 bytes; replays 78 -> 0 \
         (54 layouts scored)\n"
    );
}

#[test]
fn optimize_keeps_the_file_layout_when_nothing_fits_the_budget() {
    let l = analyse(&three_dfd(0), &["--optimize", "--budget", "100"]);
    assert_eq!(l["replays_after"], l["replays_before"]);
    assert_eq!(l["bytes"], json!(2304));
    let e = "examples/bankan/3dfd.json";
    assert_usage_error(
        &smrtl(&["bankan", e, "--optimize", "--brute-force"]),
        "do not apply with --optimize",
    );
    assert_usage_error(
        &smrtl(&["bankan", e, "--budget", "100"]),
        "--budget applies only with --optimize",
    );
    assert_usage_error(
        &smrtl(&["bankan", e, "--optimize", "--budget", "0"]),
        "--budget 0 is out of range",
    );
}

/// An access that leaves its array only where its `if` disables the thread is accepted
/// (NW's anti-diagonal); one that leaves it for an enabled thread is still refused.
#[test]
fn bounds_follow_the_if_conditions() {
    let kernel = |c: i64| {
        json!({"block": [16, 1], "arrays": [{"name": "t", "elem_bytes": 4, "rows": 17, "cols": 17}],
               "accesses": [{"array": "t", "row": [-1, 0, 0], "col": [1, 0, 1],
                             "for": [{"trips": 16, "inc": [1, 0]}], "if": [{"tx": -1, "i": [1], "c": c}]}]})
    };
    let r = analyse(&kernel(0), &[]);
    assert_eq!(r["accesses"][0]["ideal_wavefronts"], json!(16));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("k.json");
    std::fs::write(&file, kernel(1).to_string()).unwrap();
    assert_usage_error(
        &smrtl(&["bankan", file.to_str().unwrap()]),
        &format!("{}: accesses[0]: row index spans -1..=15 over the active threads and iterations; allowed: 0..=16 (the array's rows)", file.display()),
    );
}

/// The `cases` of the single access of `v`: (lanes, byte offset, degree, count) each.
fn case_list(v: &Value) -> Vec<(u64, u64, u64, u64)> {
    analyse(v, &[])["accesses"][0]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let f = |k: &str| c[k].as_u64().unwrap();
            (f("lanes"), f("offset"), f("degree"), f("count"))
        })
        .collect()
}

/// T18 ([002] App. A-1, Table A-1): column-major, R = 4 (W = N = 16, M = 4), stride 11. One
/// thread reads element row_idx + 11·k at iteration k = 0…3, each iteration its own case; a
/// case's byte offset gives ⟨imm_col_offset, row_offset⟩ = ⟨offset / N, (offset mod N) / M⟩.
#[test]
fn t18_column_major_stride_11_table() {
    let want = [
        [(0, 0), (2, 3), (5, 2), (8, 1)],
        [(0, 1), (3, 0), (5, 3), (8, 2)],
        [(0, 2), (3, 1), (6, 0), (8, 3)],
        [(0, 3), (3, 2), (6, 1), (9, 0)],
    ];
    for (row_idx, want) in want.iter().enumerate() {
        let v = json!({
            "banks": 32, "lanes": 32, "layer_bytes": 16, "bank_width": 16, "block": [1, 1],
            "arrays": [{"name": "a", "elem_bytes": 4, "rows": 1, "cols": 40}],
            "accesses": [{"array": "a", "row": [0, 0, 0], "col": [0, 0, row_idx],
                          "for": [{"trips": 4, "inc": [0, 11]}]}],
        });
        let got: Vec<(u64, u64)> = case_list(&v)
            .iter()
            .map(|&(lanes, off, _, count)| {
                assert_eq!((lanes, count), (1, 1));
                (off / 16, off % 16 / 4)
            })
            .collect();
        assert_eq!(got, want, "T18 row_idx {row_idx}");
    }
}

/// T19 ([002] §5.2, Fig. 5.4): a loop of T = 10 iterations whose offset repeats with period P
/// folds into P cases, case k standing for ⌈(T − k)/P⌉ iterations (P = 3: 4, 3, 3). Offsets
/// here are bytes mod B·W = 256 and a step of 4·inc bytes has period 64 / gcd(inc, 64), a power
/// of two, so P = 3 has no kernel; P = 2, 4, 8 show the same rule (P = 4: 3, 3, 2, 2).
#[test]
fn t19_loop_cases_get_their_iteration_counts() {
    for (inc, p) in [(32, 2u64), (16, 4), (8, 8)] {
        let v = json!({
            "block": [32, 1],
            "arrays": [{"name": "a", "elem_bytes": 4, "rows": 1, "cols": 32 + 9 * inc}],
            "accesses": [{"array": "a", "row": [0, 0, 0], "col": [1, 0, 0],
                          "for": [{"trips": 10, "inc": [0, inc]}]}],
        });
        let counts: Vec<u64> = case_list(&v).iter().map(|c| c.3).collect();
        let want: Vec<u64> = (0..p).map(|k| (10 - k).div_ceil(p)).collect();
        assert_eq!(counts, want, "T19 P = {p}");
    }
    assert_eq!(
        (0..3)
            .map(|k: u64| (10 - k).div_ceil(3))
            .collect::<Vec<_>>(),
        [4, 3, 3]
    );
}

/// T20 ([002] §5.4, Alg. 5.1, Fig. 5.8): `for-if` with vectors of L = 4 threads, i = 0…15, thread
/// t of vector j active iff t + 4j ≤ i (min(i + 1, 4) lanes in vector 0, §3.3's INFERRED
/// reading). The four vectors are an outer loop j over a 4-thread block (the model's warps have
/// 8 lanes or more); rows 16 words apart put every active lane in one bank, so the degree is the
/// active count and the conflict number is Σ_i C_i·i.
#[test]
fn t20_for_if_active_lane_counts() {
    let v = json!({
        "banks": 8, "lanes": 8, "layer_bytes": 4, "bank_width": 4, "block": [4, 1],
        "arrays": [{"name": "s", "elem_bytes": 4, "rows": 4, "cols": 16}],
        "accesses": [{"array": "s", "row": [1, 0, 0], "col": [0, 0, 0],
                      "for": [{"trips": 4, "inc": [0, 0]}, {"trips": 16, "inc": [0, 1]}],
                      "if": [{"tx": -1, "i": [-4, 1], "c": 0}]}],
    });
    let mut c = [0u64; 5];
    for (lanes, _, degree, count) in case_list(&v) {
        assert_eq!(degree, lanes);
        c[lanes as usize] += count;
    }
    assert_eq!(c, [0, 4, 4, 4, 28], "T20: C_1…C_4");
    let a = &analyse(&v, &[])["accesses"][0];
    assert_eq!(a["ideal_wavefronts"], json!(40));
    assert_eq!(a["conflicts"], json!(4 + 2 * 4 + 3 * 4 + 4 * 28));
    let b = &analyse(&v, &["--brute-force"])["accesses"][0];
    assert_eq!(a["replays"], b["replays"]);
}
