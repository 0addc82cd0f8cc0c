//! `smrtl partition` and `smrtl calibrate` through the binary (docs/memory-issue-control.md
//! §8.1–§8.2; spec §7, §8.2): the §8.2 isolated occupancies, the bp+sv feasibility example,
//! SMK-P tuples derived by hand from the §7 rule, a Warped-Slicer choice, and bad input.

use crate::common;

use common::{assert_usage_error, smrtl, stdout};
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let o = smrtl(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", common::stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("one JSON object")
}

fn tbs(v: &Value) -> Vec<u64> {
    v["tbs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

/// §8.2 "TBs/SM": alone, SMK-P filling and Spatial give each kernel its isolated occupancy.
#[test]
fn isolated_occupancies_of_table2() {
    let want = [
        ("cp", 16),
        ("hs", 7),
        ("dc", 16),
        ("pf", 12),
        ("bp", 12),
        ("bs", 6),
        ("st", 6),
        ("3m", 12),
        ("sv", 16),
        ("cd", 16),
        ("s2", 16),
        ("ks", 12),
        ("ax", 12),
    ];
    for (k, n) in want {
        let v = json(&["partition", k, "--scheme", "smk-p", "--json"]);
        assert_eq!(tbs(&v), [n], "{k}");
        let v = json(&["partition", k, "--scheme", "spatial", "--json"]);
        assert_eq!(tbs(&v), [n], "{k}");
        assert_eq!(v["sms"], serde_json::json!([16]));
    }
}

/// [P §2.5] bp+sv's sweet point (9, 4) fits; one more bp TB overflows the threads first.
#[test]
fn bp_sv_feasibility() {
    let v = json(&["partition", "bp", "sv", "--tbs", "9,4", "--json"]);
    assert_eq!(v["feasible"], true);
    assert_eq!(v["total"], serde_json::json!([3072, 96, 13, 39936, 9792]));
    assert_eq!(v["overflow"], Value::Null);
    let v = json(&["partition", "bp+sv", "--tbs", "10,4", "--json"]);
    assert_eq!(v["feasible"], false);
    assert_eq!(
        (&v["overflow"], &v["used"], &v["cap"]),
        (&"threads".into(), &3328.into(), &3072.into())
    );
    let o = smrtl(&["partition", "bp", "sv", "--tbs", "9,5"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stdout(&o).starts_with("bp 9 TBs, sv 5 TBs: infeasible, threads 3264 > 3072\n"),
        "{}",
        stdout(&o)
    );
    // Each other resource: registers (cd 8 × 4096 + hs 4 × 9216), TB slots, shared memory.
    let v = json(&["partition", "cd", "hs", "--tbs", "8,4", "--json"]);
    assert_eq!(
        (&v["overflow"], &v["used"]),
        (&"registers".into(), &69632.into())
    );
    let v = json(&["partition", "cp", "dc", "--tbs", "10,7", "--json"]);
    assert_eq!((&v["overflow"], &v["used"]), (&"TBs".into(), &17.into()));
    let v = json(&[
        "partition",
        "bp",
        "cp",
        "--tbs",
        "1,4",
        "--set",
        "max_smem=16384",
        "--json",
    ]);
    assert_eq!(
        (&v["overflow"], &v["used"], &v["cap"]),
        (&"shared memory".into(), &17552.into(), &16384.into())
    );
}

/// SMK-P tuples derived by hand from the §7 rule (shares before the addition, ties to the lowest
/// index): bp+sv (bp n/12 by threads, sv m/16 by TB slots) fills to (6, 8), where 256·6 + 192·8
/// = 3072 threads; sv+ks (m/16, n/12) to (8, 6), where neither 9·192 + 6·256 nor 8·192 + 7·256
/// fits; cp+ks+ax (a/16 by TB slots, b/12, c/12) to (6, 5, 4), 3072 threads.
#[test]
fn smk_p_tuples_by_hand() {
    for (ks, want) in [
        (&["bp", "sv"][..], &[6u64, 8][..]),
        (&["sv", "ks"], &[8, 6]),
        (&["sv+ks"], &[8, 6]),
        (&["cp", "ks", "ax"], &[6, 5, 4]),
    ] {
        let mut args = vec!["partition"];
        args.extend_from_slice(ks);
        args.extend_from_slice(&["--scheme", "smk-p", "--json"]);
        assert_eq!(tbs(&json(&args)), want, "{ks:?}");
    }
    let o = smrtl(&["partition", "bp", "sv", "--scheme", "smk-p"]);
    assert_eq!(
        stdout(&o),
        "smk-p: bp 6 TBs, sv 8 TBs\n  bp: 1536 threads, 48 warps, 6 TBs, 18432 registers, 6528 B shared memory\n  sv: 1536 threads, 48 warps, 8 TBs, 24576 registers, 0 B shared memory\n  SM: 3072/3072 threads, 96/96 warps, 14/16 TBs, 43008/65536 registers, 6528/98304 B shared memory\n"
    );
}

/// Spatial splits the 16 SMs 8/8 and 6/5/5 (kernel 0 largest).
#[test]
fn spatial_splits_the_sms() {
    let v = json(&["partition", "bp", "sv", "--scheme", "spatial", "--json"]);
    assert_eq!(v["sms"], serde_json::json!([8, 8]));
    assert_eq!(tbs(&v), [12, 16]);
    let v = json(&[
        "partition",
        "cp",
        "ks",
        "ax",
        "--scheme",
        "spatial",
        "--json",
    ]);
    assert_eq!(v["sms"], serde_json::json!([6, 5, 5]));
}

/// Warped-Slicer: the curves behind the choice, a feasible tuple maximising min S, and the
/// theoretical weighted speedup Σ S (short profiles to keep the test quick).
#[test]
fn ws_choice_follows_its_curves() {
    let v = json(&[
        "partition",
        "bp",
        "sv",
        "--scheme",
        "ws",
        "--profile-cycles",
        "20000",
        "--json",
    ]);
    let t = tbs(&v);
    let curves = v["curves"].as_array().unwrap();
    assert_eq!(curves[0]["ipc"].as_array().unwrap().len(), 12);
    assert_eq!(curves[1]["ipc"].as_array().unwrap().len(), 16);
    let s: Vec<f64> = v["scaled"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    for k in 0..2 {
        assert_eq!(
            curves[k]["scaled"][t[k] as usize - 1].as_f64().unwrap(),
            s[k]
        );
    }
    let ws = v["theoretical_ws"].as_f64().unwrap();
    assert!((ws - s.iter().sum::<f64>()).abs() < 1e-12);
    // No feasible tuple has a larger minimum S.
    let check = json(&[
        "partition",
        "bp",
        "sv",
        "--tbs",
        &format!("{},{}", t[0], t[1]),
        "--json",
    ]);
    assert_eq!(check["feasible"], true);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let cases: [(&[&str], &str); 10] = [
        (
            &["partition", "bp", "xx", "--scheme", "ws"],
            "allowed: cp, hs, dc",
        ),
        (
            &["partition", "bp", "sv", "--scheme", "smk"],
            "allowed: spatial, ws, smk-p",
        ),
        (
            &["partition", "cp", "hs", "dc", "pf", "--scheme", "ws"],
            "1 to 3",
        ),
        (
            &["partition", "bp", "sv"],
            "give --scheme (spatial, ws, smk-p) or --tbs",
        ),
        (
            &["partition", "bp", "sv", "--tbs", "9"],
            "expected 2 TB counts",
        ),
        (
            &["partition", "bp", "sv", "--tbs", "9,x"],
            "expected 2 TB counts",
        ),
        (
            &["partition", "bp", "sv", "--tbs", "9,4", "--scheme", "ws"],
            "exclude each other",
        ),
        (&["partition", "bp", "bp", "--tbs", "1,1"], "twice"),
        (&["calibrate", "kernels"], "allowed: mem-kernels"),
        (
            &["calibrate", "mem-kernels", "--set", "lm_interval=0"],
            "lm_interval",
        ),
    ];
    for (args, needle) in cases {
        assert_usage_error(&smrtl(args), needle);
    }
}
