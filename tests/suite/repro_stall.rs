//! `smrtl repro stall-inspector` through the CLI (docs/stall-inspector.md §11): the reduced
//! study of the CI (2 SMs for UTS and UTSD; the implicit studies keep their 1 SM) on the model
//! and with every SM's `stall_inspector` RTL in the loop on rust-hdl and Verilator, every
//! output written, every target evaluated; one-line refusals before any work.

use crate::common;

use common::{assert_usage_error, smrtl, stdout};
use serde_json::Value;

/// The reduced study's JSON on `backend`, with its CSV and figures written into `dir`.
fn reduced(backend: &str, dir: &std::path::Path) -> Value {
    let csv = dir.join("gsi.csv");
    let plots = dir.join("plots");
    let o = smrtl(&[
        "repro",
        "stall-inspector",
        "--set",
        "sms=2",
        "--backend",
        backend,
        "--json",
        "--csv",
        csv.to_str().unwrap(),
        "--plot",
        plots.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert!(csv.starts_with("figure,config,sm,stack,category,cycles,normalised\n"));
    assert!(csv.contains("fig3-implicit,stash,mean,mem_struct,SB_FULL,"));
    assert_eq!(std::fs::read_dir(&plots).unwrap().count(), 12);
    let svg = std::fs::read_to_string(plots.join("fig4-mshr-c.svg")).unwrap();
    assert!(svg.contains("data-config=\"stash 256\""));
    serde_json::from_str(&stdout(&o)).unwrap()
}

#[test]
fn the_reduced_study_runs_on_the_model_and_with_the_rtl_in_the_loop() {
    let dir = tempfile::tempdir().unwrap();
    let model = reduced("model", dir.path());
    let bars: Vec<usize> = model["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["bars"].as_array().unwrap().len())
        .collect();
    assert_eq!(bars, [2, 2, 3, 12]);
    // Both protocols, DMA and stash ran; the baseline of each figure is 1.0 tall.
    for f in model["figures"].as_array().unwrap() {
        assert!((f["bars"][0]["time"].as_f64().unwrap() - 1.0).abs() < 1e-12);
        for b in f["bars"].as_array().unwrap() {
            assert!(b["cycles"].as_u64().unwrap() > 1000, "{b}");
        }
    }
    // DMA: MSHR-bound at 32 entries (MSHR_FULL), PENDING_DMA once the MSHRs hold a transfer.
    let implicit = &model["figures"][2]["bars"];
    assert!(implicit[1]["mem_struct"]["MSHR_FULL"].as_f64().unwrap() > 0.0);
    let dma256 = model["figures"][3]["bars"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["config"] == "scratchpad+DMA 256")
        .unwrap();
    assert!(dma256["mem_struct"]["PENDING_DMA"].as_f64().unwrap() > 0.0);
    assert!(
        model["figures"][1]["bars"][1]["mem_data"]["REMOTE_L1"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert_eq!(model["figures"][1]["bars"][0]["mem_data"]["REMOTE_L1"], 0.0);
    let ids: Vec<&str> = model["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert!(t["must"].is_boolean() && t["should"].is_boolean(), "{t}");
            assert!(!t["numbers"].as_object().unwrap().is_empty(), "{t}");
            t["id"].as_str().unwrap()
        })
        .collect();
    assert_eq!(ids, ["T-a", "T-b", "T-c", "T-d", "T-e", "T-f"]);
    // The RTL in the loop changes nothing: its read-out equals the model's counters.
    let rtl = tempfile::tempdir().unwrap();
    assert_eq!(reduced("rusthdl", rtl.path())["figures"], model["figures"]);
    if smrtl_testbench::external("verilator") {
        let v = tempfile::tempdir().unwrap();
        assert_eq!(reduced("verilator", v.path())["figures"], model["figures"]);
    }
}

#[test]
fn bad_requests_are_refused_before_any_work() {
    let o = smrtl(&["repro", "stall-inspector", "--set", "sms=17"]);
    assert_usage_error(&o, "parameter sms = 17 is out of range; allowed: 1..=16");
    let o = smrtl(&["repro", "stall-inspector", "--set", "nope=1"]);
    assert_usage_error(&o, "nope");
    let o = smrtl(&["repro", "stall-inspector", "--waves", "2"]);
    assert_usage_error(
        &o,
        "--waves is not an option of stall-inspector; its options beyond --json, --plot, --seed, --strict: --csv, --set, --backend, --shard, --no-cache, --threads",
    );
    let o = smrtl(&["repro", "stall-inspector", "--shard", "0/2"]);
    assert_usage_error(&o, "--shard needs --csv OUT");
    let o = smrtl(&["repro", "elastic-pipeline", "--backend", "rusthdl"]);
    assert_usage_error(&o, "--backend is not an option of elastic-pipeline");
}

/// `smrtl repro stall-inspector` with the cache in `cache`; its output, exit 0 checked.
fn cached(cache: &std::path::Path, args: &[&str]) -> std::process::Output {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_smrtl"))
        .env("SMRTL_CACHE_DIR", cache)
        .args(["repro", "stall-inspector", "--set", "sms=2"])
        .args(args)
        .output()
        .expect("smrtl runs");
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    o
}

/// The studies are a grid of the sweep engine: shards merge into the bytes of the whole
/// table, their points land in the cache, and the whole report then reuses every one.
#[test]
fn shards_merge_into_the_whole_table_and_the_report_reuses_them() {
    let dir = tempfile::tempdir().unwrap();
    let (cache, p) = (dir.path().join("cache"), |n: &str| dir.path().join(n));
    let s = |n: &str| p(n).to_str().unwrap().to_string();
    for (i, f) in ["1/2", "0/2"].iter().zip(["b.csv", "a.csv"]) {
        let o = cached(&cache, &["--shard", i, "--csv", &s(f), "--threads", "1"]);
        assert!(stdout(&o).starts_with(&format!("stall-inspector shard {i}: ")));
    }
    let o = smrtl(&["merge", &s("merged.csv"), &s("a.csv"), &s("b.csv")]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let o = cached(&cache, &["--shard", "0/1", "--csv", &s("whole.csv")]);
    assert!(common::stderr(&o).contains("reused 19 of 19 points"));
    let whole = std::fs::read_to_string(p("whole.csv")).unwrap();
    assert_eq!(std::fs::read_to_string(p("merged.csv")).unwrap(), whole);
    assert_eq!(whole.lines().count(), 20);
    assert!(whole.starts_with("point,points,spec,figure,config,kernel,cycles,sms\n"));
    let o = cached(&cache, &["--json"]);
    assert!(common::stderr(&o).contains("reused 19 of 19 points"));
    let fresh = cached(&cache, &["--json", "--no-cache"]);
    assert!(common::stderr(&fresh).contains("cache off (--no-cache): reused 0 of 19"));
    let figures = |o: &std::process::Output| {
        serde_json::from_str::<Value>(&stdout(o)).unwrap()["figures"].clone()
    };
    assert_eq!(figures(&o), figures(&fresh));
}

/// The figures docs/stall-inspector.md §11.1 shows are the ones the full study draws now.
#[test]
fn the_documented_figures_are_what_the_full_study_draws() {
    let dir = tempfile::tempdir().unwrap();
    let plots = dir.path().join("plots");
    let o = smrtl(&[
        "repro",
        "stall-inspector",
        "--no-cache",
        "--plot",
        plots.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/repro-stall-inspector");
    let names = common::files(&plots);
    assert_eq!(names.len(), 12);
    for n in &names {
        let fresh = std::fs::read_to_string(plots.join(n)).unwrap();
        let shown = std::fs::read_to_string(docs.join(n)).unwrap_or_default();
        assert!(
            fresh == shown,
            "docs/repro-stall-inspector/{n} differs from the study's; regenerate with `smrtl repro stall-inspector --plot docs/repro-stall-inspector`"
        );
    }
}
