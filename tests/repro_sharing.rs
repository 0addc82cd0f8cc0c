//! `smrtl repro scratchpad-sharing` and `smrtl sim --kernel-profile` through the CLI
//! (docs/scratchpad-sharing.md §8): the whole reproduction once (every target evaluated, the
//! plot written), and one-line refusals.

mod common;

use common::{assert_usage_error, smrtl, stdout};
use serde_json::Value;

#[test]
fn repro_runs_every_kernel_and_configuration_and_writes_the_plot() {
    let dir = tempfile::tempdir().unwrap();
    let plot = dir.path().join("sharing.svg");
    let o = smrtl(&[
        "repro",
        "scratchpad-sharing",
        "--json",
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 14 * 7);
    assert!(rows.iter().all(|r| r["cycles"].as_u64().unwrap() > 0));
    let targets: Vec<(&str, bool)> = v["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["holds"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        targets.iter().map(|t| t.0).collect::<Vec<_>>(),
        ["T1", "T2", "T3", "T4"]
    );
    assert!(targets.iter().all(|t| t.1), "{targets:?}");
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert_eq!(svg.matches("class=\"bar\"").count(), 14 * 4);
}

#[test]
fn sim_kernel_profile_runs_and_refuses_unknown_names() {
    let o = smrtl(&["sim", "--kernel-profile", "NW1", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["resident_tbs_max"], 2);
    assert_eq!(v["tbs_completed"], 2);
    let o = smrtl(&["sim", "--kernel-profile", "nope"]);
    assert_usage_error(&o, "unknown kernel profile `nope`; allowed: backprop, DCT1");
    let o = smrtl(&["sim", "--kernel-profile", "NW1", "--waves", "0"]);
    assert_usage_error(&o, "waves");
}
