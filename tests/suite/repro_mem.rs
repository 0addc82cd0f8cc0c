//! `smrtl repro memory-issue-control` through the binary on a reduced grid
//! (docs/memory-issue-control.md §8.4; issue 23 items 3–5): two workloads per pair class at
//! 20K cycles under every scheme, the JSON rows and targets, the figures, the result cache
//! (a second run reuses every point; a lost or damaged entry is recomputed) and the shards
//! merged byte for byte into the unsharded table, whatever the thread count.

use crate::common;

use common::{assert_usage_error, files, smrtl, stderr, stdout};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const WORKLOADS: &str = "cp+hs,pf+bp,sv+bp,hs+ks,sv+ks,3m+ks";
const SCHEMES: [&str; 9] = [
    "spatial",
    "ws",
    "ws-rbmi",
    "ws-qbmi",
    "ws-dmil",
    "ws-qbmi-dmil",
    "smk-p-w",
    "smk-p-qbmi",
    "smk-p-dmil",
];

/// `smrtl repro memory-issue-control` on the reduced grid with the cache in `cache`.
fn repro(cache: &Path, extra: &[&str]) -> Output {
    repro_of(WORKLOADS, cache, extra)
}

/// `smrtl repro memory-issue-control` on `workloads` at 20K cycles.
fn repro_of(workloads: &str, cache: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "repro",
        "memory-issue-control",
        "--cycles",
        "20000",
        "--workloads",
        workloads,
    ];
    args.extend(extra);
    let o = Command::new(env!("CARGO_BIN_EXE_smrtl"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("SMRTL_CACHE_DIR", cache)
        .args(&args)
        .output()
        .expect("smrtl runs");
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    o
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(1.0)
}

/// Every row's NIPCs, WS, ANTT and fairness from its IPCs (spec §8.4); Spatial's shared IPC
/// the §7 scaled figure.
fn check_rows(rows: &[Value]) {
    assert_eq!(rows.len(), 6 * 9);
    for r in rows {
        let k = r["kernels"].as_array().unwrap();
        let nipc: Vec<f64> = k
            .iter()
            .map(|k| {
                let (s, a) = (
                    k["ipc_shared"].as_f64().unwrap(),
                    k["ipc_alone"].as_f64().unwrap(),
                );
                let n = k["nipc"].as_f64().unwrap();
                assert!(close(n, s / a), "{r}");
                if r["scheme"] == "spatial" {
                    assert!(close(s, 8.0 / 16.0 * a), "{r}");
                }
                for key in ["name", "miss_rate", "rsfail_rate", "lsu_stall"] {
                    assert!(!k[key].is_null(), "{key} in {r}");
                }
                n
            })
            .collect();
        let ws: f64 = nipc.iter().sum();
        let antt = nipc.iter().map(|x| 1.0 / x).sum::<f64>() / nipc.len() as f64;
        let fair = nipc.iter().copied().fold(f64::INFINITY, f64::min)
            / nipc.iter().copied().fold(0.0, f64::max);
        assert!(close(r["ws"].as_f64().unwrap(), ws), "{r}");
        assert!(close(r["antt"].as_f64().unwrap(), antt), "{r}");
        assert!(close(r["fairness"].as_f64().unwrap(), fair), "{r}");
        assert_eq!(r["hash"].as_str().unwrap().len(), 16);
    }
    for s in SCHEMES {
        assert_eq!(rows.iter().filter(|r| r["scheme"] == s).count(), 6, "{s}");
    }
    for c in ["C+C", "C+M", "M+M"] {
        assert_eq!(rows.iter().filter(|r| r["class"] == c).count(), 18, "{c}");
    }
}

/// Targets 1–10, each PASS / FAIL with numbers or null with a reason.
fn check_targets(t: &[Value]) {
    let ids: Vec<u64> = t.iter().map(|x| x["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, (1..=10).collect::<Vec<_>>());
    for x in t {
        match &x["pass"] {
            Value::Bool(_) => assert!(x["numbers"].is_object(), "{x}"),
            Value::Null => assert!(x["reason"].is_string(), "{x}"),
            other => panic!("pass {other}"),
        }
    }
    assert!(t[7]["reason"].as_str().unwrap().contains("--smil-grid"));
    assert!(t[9]["reason"].as_str().unwrap().contains("--sensitivity"));
    // The reduced grid holds every datum of targets 1–7 and 9.
    for i in [0, 1, 2, 3, 4, 5, 6, 8] {
        assert!(t[i]["pass"].is_boolean(), "{}", t[i]);
    }
}

#[test]
fn reduced_grid_every_scheme_cache_shards_and_plots() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let plots = dir.path().join("plots");
    let whole = dir.path().join("whole.csv");
    let (p, w) = (plots.to_str().unwrap(), whole.to_str().unwrap());
    let first = repro(
        &cache,
        &["--json", "--threads", "2", "--plot", p, "--csv", w],
    );
    assert!(
        stderr(&first).contains("reused 0 of 54 points"),
        "{}",
        stderr(&first)
    );
    let v: Value = serde_json::from_str(&stdout(&first)).unwrap();
    check_rows(v["rows"].as_array().unwrap());
    check_targets(v["targets"].as_array().unwrap());
    assert_eq!(
        files(&plots),
        ["antt.svg", "dmil-vs-ws.svg", "fairness.svg", "ws.svg"]
    );
    for f in files(&plots) {
        let svg = std::fs::read_to_string(plots.join(f)).unwrap();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
    }
    // A second run reuses every point and prints the same rows.
    let again = repro(&cache, &["--json"]);
    assert!(
        stderr(&again).contains("reused 54 of 54 points"),
        "{}",
        stderr(&again)
    );
    assert_eq!(stdout(&again), stdout(&first));
    // A lost entry (a run killed before writing it) and a damaged one are recomputed.
    let folder = cache.join("memory-issue-control");
    let hashes: Vec<&str> = v["rows"].as_array().unwrap()[..2]
        .iter()
        .map(|r| r["hash"].as_str().unwrap())
        .collect();
    std::fs::remove_file(folder.join(format!("{}.json", hashes[0]))).unwrap();
    let damaged = folder.join(format!("{}.json", hashes[1]));
    let text = std::fs::read_to_string(&damaged).unwrap();
    std::fs::write(&damaged, &text[..text.len() / 2]).unwrap();
    let resumed = repro(&cache, &["--json"]);
    assert!(
        stderr(&resumed).contains("reused 52 of 54 points"),
        "{}",
        stderr(&resumed)
    );
    assert_eq!(stdout(&resumed), stdout(&first));
    // Three shards (one without the cache, on one thread) merge into the unsharded table.
    let mut shards = vec![];
    for i in 0..3 {
        let out = dir.path().join(format!("s{i}.csv"));
        let shard = format!("{i}/3");
        let mut extra = vec!["--shard", &shard, "--csv", out.to_str().unwrap()];
        if i == 0 {
            extra.extend(["--no-cache", "--threads", "1"]);
        }
        repro(&cache, &extra);
        shards.push(out.to_str().unwrap().to_string());
    }
    let merged = dir.path().join("merged.csv");
    let mut args = vec!["merge", merged.to_str().unwrap()];
    args.extend(shards.iter().map(String::as_str));
    assert_eq!(smrtl(&args).status.code(), Some(0));
    assert_eq!(
        std::fs::read(&merged).unwrap(),
        std::fs::read(&whole).unwrap()
    );
}

#[test]
fn bad_input_is_one_line_exit_2_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("out.csv");
    let c = csv.to_str().unwrap();
    let base = ["repro", "memory-issue-control", "--no-cache", "--csv", c];
    let cases: [(&[&str], &str); 9] = [
        (&["--schemes", "ws,dmil"], "allowed: spatial, ws, ws-rbmi"),
        (&["--workloads", "bp+xx"], "allowed: cp, hs"),
        (&["--workloads", "bp"], "allowed: pairs, triples, all"),
        (&["--workloads", "bp+sv,sv+bp"], "twice"),
        (&["--cycles", "0"], "allowed: 1..="),
        (&["--shard", "3/3"], "--shard expects I/N"),
        (
            &["--waves", "2"],
            "--waves is not an option of memory-issue-control",
        ),
        (
            &["--plot", "fig.svg"],
            "draws several figures; give a directory",
        ),
        (
            &["--shard", "0/2", "--sensitivity"],
            "does not take --shard",
        ),
    ];
    for (extra, needle) in cases {
        let mut args = base.to_vec();
        args.extend(extra);
        assert_usage_error(&smrtl(&args), needle);
        assert!(!csv.exists(), "{extra:?} wrote {c}");
    }
    assert_usage_error(
        &smrtl(&["repro", "memory-issue-control", "--shard", "0/2"]),
        "--shard needs --csv OUT",
    );
    assert_usage_error(
        &smrtl(&["repro", "elastic-pipeline", "--cycles", "5"]),
        "--cycles is not an option of elastic-pipeline",
    );
    assert_eq!(files(dir.path()), Vec::<String>::new());
}

#[test]
fn sensitivity_runs_every_variant_and_evaluates_target_10() {
    let dir = tempfile::tempdir().unwrap();
    let o = repro_of(
        "bp+sv",
        dir.path(),
        &["--sensitivity", "--no-cache", "--json"],
    );
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let sens = v["sensitivity"].as_array().unwrap();
    let names: Vec<&str> = sens
        .iter()
        .map(|r| r["variant"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["l1d-48kb", "l1d-96kb", "lrr", "more-mshrs"]);
    assert_eq!(sens[0]["paper_ws"], serde_json::json!([0.021, 0.185]));
    let t10 = &v["targets"][9];
    assert!(t10["pass"].is_boolean(), "{t10}");
    let gains = &t10["numbers"]["dmil_ws_gain"];
    for (i, name) in names.iter().enumerate() {
        assert_eq!(gains[name], sens[i]["ws_gain"][1], "{name}");
    }
}
