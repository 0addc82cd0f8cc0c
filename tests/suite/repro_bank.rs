//! `smrtl repro bank-conflicts` through the binary (docs/bank-conflicts.md §4.1–§4.2): every
//! reconstructed Table 8.1 kernel's replays before and after the optimizer, the 3DFD targets,
//! the JSON report's shape, the SVG and `--strict`.

use crate::common;

use common::{smrtl, stderr, stdout};
use serde_json::Value;

#[test]
fn every_kernel_has_replays_removed_and_the_3dfd_targets_hold() {
    let o = smrtl(&["repro", "bank-conflicts", "--json", "--strict"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = r["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|x| x["kernel"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "3DFD",
            "NW",
            "TP-GSM",
            "TP-TC",
            "TP-TNBC",
            "Lud-DIA",
            "Lud-PERI",
            "CS-CRK",
            "CS-CCK",
            "Shfl_scan"
        ]
    );
    for x in rows {
        let (b, a) = (
            x["replays_before"].as_u64().unwrap(),
            x["replays_after"].as_u64().unwrap(),
        );
        assert!(a <= b, "{x}");
        assert!(x["bytes"].as_u64().unwrap() <= 49152, "{x}");
    }
    let fd = &rows[0];
    assert_eq!(
        (
            &fd["replays_before"],
            &fd["bank_width"],
            &fd["pads"]["s_data"],
            &fd["replays_after"]
        ),
        (
            &Value::from(78),
            &Value::from(8),
            &Value::from(0),
            &Value::from(0)
        )
    );
    assert_eq!(r["first_4b_zero_pad_3dfd"], 24);
    // TP-TNBC's padding halves TP-TC's replays as written.
    assert!(rows[4]["replays_before"].as_u64() < rows[3]["replays_before"].as_u64());
    for t in r["targets"].as_array().unwrap() {
        assert_eq!(t["holds"], true, "{t}");
    }
}

#[test]
fn text_quotes_the_paper_and_the_plot_is_an_svg() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("b.svg");
    let o = smrtl(&["repro", "bank-conflicts", "--plot", svg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("5-35 % runtime improvement"), "{text}");
    assert!(
        text.contains("K2 3DFD: the first zero-replay pad in 4B mode is 24"),
        "{text}"
    );
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(
        s.starts_with("<svg") && s.matches("<rect").count() == 20,
        "{s}"
    );
}

/// `smrtl bench bankan`: the report's shape only (no timing is asserted).
#[test]
fn bench_bankan_reports_both_sweeps_and_six_targets() {
    let o = smrtl(&["bench", "bankan", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let iters = |k: &str| -> Vec<u64> {
        r[k].as_array()
            .unwrap()
            .iter()
            .map(|p| p["iterations"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(
        iters("for_loop"),
        (1..=10).map(|k| 100 * k).collect::<Vec<_>>()
    );
    assert_eq!(iters("for_if"), [64, 128, 256, 384, 512]);
    for p in r["for_loop"].as_array().unwrap() {
        assert_eq!(p["grouped_evaluations"], 1, "{p}");
        assert_eq!(p["brute_evaluations"], p["iterations"], "{p}");
    }
    let ids: Vec<&str> = r["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["A1", "A2", "A3", "A4", "A5", "A6"]);
    let text = stdout(&smrtl(&["bench", "bankan"]));
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("PASS ") || l.starts_with("FAIL "))
            .count(),
        6,
        "{text}"
    );
}
