//! `smrtl launch`: the scratchpad-sharing launch calculator through the CLI
//! (docs/scratchpad-sharing.md §1.2).

use crate::common;

use common::{assert_usage_error, smrtl, stdout};

/// The JSON answer for a TB of `tb_smem` bytes and `threads` threads on the paper's 16 KB SM,
/// with `extra` flags.
fn paper_sm(tb_smem: &str, threads: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "--smem",
        "16384",
        "--tb-smem",
        tb_smem,
        "--tb-threads",
        threads,
    ];
    args.extend(extra);
    json(&args)
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["launch", "--json"];
    all.extend(args);
    let o = smrtl(&all);
    assert_eq!(o.status.code(), Some(0), "{args:?}");
    serde_json::from_str(&stdout(&o)).unwrap()
}

#[test]
fn json_has_exactly_the_documented_keys() {
    let v = json(&[
        "--smem",
        "16384",
        "--tb-smem",
        "2176",
        "--tb-threads",
        "128",
    ]);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    let mut want = [
        "m_sp",
        "cap",
        "base",
        "n",
        "pairs",
        "unshared",
        "shsm",
        "u",
        "layout_bytes",
        "unused_bytes_base",
    ];
    want.sort();
    let mut keys = keys;
    keys.sort();
    assert_eq!(keys, want);
    // Example 3.3, DCT3: 7 TBs unshared, 12 shared as 5 pairs + 2 unshared, u = 220.
    assert_eq!(
        v,
        serde_json::json!({"m_sp": 7, "cap": 16, "base": 7, "n": 12, "pairs": 5, "unshared": 2,
            "shsm": 1, "u": 220, "layout_bytes": 16332, "unused_bytes_base": 1152})
    );
}

#[test]
fn thresholds_and_limits() {
    // Example 3.2: t = 109/147 gives each block of the backprop pair 6976 private bytes.
    let v = paper_sm("9408", "256", &["--t", "109/147"]);
    assert_eq!((v["u"].as_u64(), v["n"].as_u64()), (Some(6976), Some(2)));
    // A decimal threshold is the same fraction.
    let a = paper_sm("3840", "128", &["--t", "0.1"]);
    let b = paper_sm("3840", "128", &[]);
    assert_eq!(a, b);
    assert_eq!((a["n"].as_u64(), a["pairs"].as_u64()), (Some(6), Some(2)));
    // A register limit of 4 blocks leaves no room to share.
    let r = paper_sm("3840", "128", &["--reg-limit", "4"]);
    assert_eq!((r["n"].as_u64(), r["shsm"].as_u64()), (Some(4), Some(0)));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let base = ["launch", "--smem", "16384", "--tb-threads", "128"];
    for (extra, needle) in [
        (
            vec!["--tb-smem", "0"],
            "--tb-smem 0 is out of range; allowed: 1..=16384",
        ),
        (
            vec!["--tb-smem", "20000"],
            "--tb-smem 20000 is out of range",
        ),
        (
            vec!["--tb-smem", "100", "--t", "1/0"],
            "bad threshold `1/0`",
        ),
        (
            vec!["--tb-smem", "100", "--t", "3/2"],
            "a fraction in (0, 1)",
        ),
        (
            vec!["--tb-smem", "100", "--align", "0"],
            "--align 0 is out of range",
        ),
        (
            vec!["--tb-smem", "100", "--max-tbs", "0"],
            "--max-tbs 0 is out of range",
        ),
    ] {
        let mut args = base.to_vec();
        args.extend(extra);
        assert_usage_error(&smrtl(&args), needle);
    }
}
