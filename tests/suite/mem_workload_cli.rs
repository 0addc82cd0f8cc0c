//! `smrtl sim --mem-workload`: the JSON report's fields, records, the VCD's signals, and bad
//! input as one-line usage errors (exit 2).

use crate::common;
use common::{assert_usage_error, smrtl, stdout};
use std::path::PathBuf;

/// A temporary directory holding workload `text` as `w.json`, and that file's path.
fn workload(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("w.json");
    std::fs::write(&f, text).unwrap();
    (dir, f)
}

#[test]
fn json_report_has_the_per_kernel_fields() {
    let (dir, f) =
        workload(r#"{"kernels": ["bp", "sv"], "tbs": [9, 4], "cycles": 5000, "seed": 2}"#);
    let rec = dir.path().join("r.jsonl");
    let vcd = dir.path().join("w.vcd");
    let o = smrtl(&[
        "sim",
        "--mem-workload",
        f.to_str().unwrap(),
        "--set",
        "sched=lrr",
        "--json",
        "--records",
        rec.to_str().unwrap(),
        "--vcd",
        vcd.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["cycles"], 5000);
    assert_eq!(v["params"]["sched"], "lrr");
    assert_eq!(v["backend"], "model");
    let ks = v["kernels"].as_array().unwrap();
    assert_eq!(ks.len(), 2);
    assert_eq!(
        (ks[0]["name"].as_str(), ks[1]["name"].as_str()),
        (Some("bp"), Some("sv"))
    );
    for k in ks {
        for field in [
            "warp_instructions",
            "ipc",
            "accesses",
            "l1d_miss_rate",
            "l1d_rsfail_rate",
            "lsu_stall_pct",
            "compute_util",
        ] {
            assert!(k[field].is_number(), "{field} in {k}");
        }
        for cause in ["line_alloc", "miss_queue", "mshr_merge", "mshr_entry"] {
            assert!(k["rsfail_by_cause"][cause].is_u64(), "{cause}");
        }
        assert!(k["milg"]["unl_cycles"].is_u64());
        assert!(k["warp_instructions"].as_u64().unwrap() > 0);
    }
    let lines = std::fs::read_to_string(&rec).unwrap();
    assert_eq!(lines.lines().count(), 5000);
    let first: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert_eq!(first["t"], 0);
    let text = std::fs::read_to_string(&vcd).unwrap();
    for sig in [
        "slot_free",
        "lsu_busy",
        "l1d_outcome",
        "mshr_occupancy",
        "mq_occupancy",
        "rq_occupancy",
        "inflight",
        "mil",
        "unl",
    ] {
        assert!(text.contains(&format!(" {sig} ")), "{sig} in the VCD");
    }
}

#[test]
fn text_report_names_each_kernel() {
    let o = smrtl(&["sim", "--mem-workload", "examples/mem/explicit.json"]);
    assert!(o.status.success());
    let s = stdout(&o);
    assert!(
        s.contains("two_warps (2 TBs)") && s.contains("sv (2 TBs)"),
        "{s}"
    );
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("w.json");
    let cases = [
        (
            r#"{"kernels": ["zz"], "cycles": 10}"#,
            vec![],
            "unknown benchmark `zz`",
        ),
        ("{", vec![], "malformed workload"),
        (
            r#"{"kernels": ["bp"], "cycles": 10}"#,
            vec!["--set", "mshrs=0"],
            "mshrs",
        ),
        (
            r#"{"kernels": ["bp"], "cycles": 10}"#,
            vec!["--set", "nope=1"],
            "unknown parameter `nope`",
        ),
        (
            r#"{"kernels": ["bp"], "cycles": 10}"#,
            vec!["--set", "scheme=warp"],
            "scheme",
        ),
        (
            r#"{"kernels": ["bp", "sv"], "cycles": 10}"#,
            vec!["--set", "rpm_init=1,2,3"],
            "rpm_init",
        ),
    ];
    for (text, extra, needle) in cases {
        std::fs::write(&f, text).unwrap();
        let mut args = vec!["sim", "--mem-workload", f.to_str().unwrap()];
        args.extend(extra);
        assert_usage_error(&smrtl(&args), needle);
    }
    assert_usage_error(
        &smrtl(&["sim", "--mem-workload", "/nonexistent/w.json"]),
        "w.json",
    );
}

/// `--backend rusthdl` runs `mem_issue_ctl` in the loop: the report is the model's, and the VCD
/// has the SM signals as stimulus beside the control's ports, model and RTL.
#[test]
fn rtl_in_the_loop_reports_the_model_run_and_both_sides_in_the_vcd() {
    let (dir, f) = workload(
        r#"{"kernels": ["bp", "sv"], "tbs": [9, 4], "cycles": 3000, "seed": 2, "params": {"scheme": "qbmi_dmil"}}"#,
    );
    let vcd = dir.path().join("w.vcd");
    let run = |backend: &str, vcd: Option<&str>| {
        let mut args = vec!["sim", "--mem-workload", f.to_str().unwrap(), "--json"];
        args.extend(["--backend", backend]);
        if let Some(v) = vcd {
            args.extend(["--vcd", v]);
        }
        let o = smrtl(&args);
        assert!(o.status.success(), "{}", common::stderr(&o));
        let mut v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["backend"], backend);
        v["backend"] = serde_json::Value::Null;
        v
    };
    assert_eq!(
        run("rusthdl", Some(vcd.to_str().unwrap())),
        run("model", None)
    );
    let text = std::fs::read_to_string(&vcd).unwrap();
    for scope in ["stim", "model", "rtl"] {
        assert!(
            text.contains(&format!("$scope module {scope} $end")),
            "{scope}"
        );
    }
    for signal in [
        "l1d_outcome",
        "mshr_occupancy",
        "grant",
        "mem_ok",
        "mil",
        "quota",
        "rpm",
    ] {
        assert!(text.contains(&format!(" {signal} $end")), "{signal}");
    }
}

/// `smrtl bench mem_issue_ctl --mem-workload`: the pipeline model's cycles/s and the control in
/// the loop on rust-hdl (and Verilator where built) in one run, with the ratios; bad pairings
/// are usage errors.
#[test]
fn bench_reports_the_pipeline_model_and_the_rtl_in_the_loop() {
    let (_dir, f) =
        workload(r#"{"kernels": ["bp", "sv"], "tbs": [9, 4], "cycles": 4000, "seed": 2}"#);
    let path = f.to_str().unwrap();
    let o = smrtl(&[
        "bench",
        "mem_issue_ctl",
        "--mem-workload",
        path,
        "--set",
        "scheme=rbmi",
        "--json",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (v["cycles"].as_u64(), v["params"]["scheme"].as_str()),
        (Some(4000), Some("Rbmi"))
    );
    let rate = |name: &str| {
        v["rates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["backend"] == name)
            .and_then(|r| r["cycles_per_second"].as_f64())
    };
    let model = rate("model").expect("the model's rate");
    let rusthdl = rate("cosim:rusthdl").expect("rust-hdl in the loop");
    assert!(model > 0.0 && rusthdl > 0.0);
    if smrtl_testbench::external("verilator") {
        assert!(rate("cosim:verilator").is_some(), "{v}");
    }
    assert_usage_error(
        &smrtl(&["bench", "milg", "--mem-workload", path]),
        "--mem-workload runs the SM memory pipeline with `mem_issue_ctl`",
    );
    assert_usage_error(
        &smrtl(&[
            "bench",
            "mem_issue_ctl",
            "--mem-workload",
            path,
            "--set",
            "scheme=warp",
        ]),
        "scheme",
    );
}
