//! The `smrtl` command line as a user meets it: outputs, exit codes (0 ok, 1 mismatch, 2 bad
//! input), one-line errors, no partial files.

use std::path::Path;
use std::process::{Command, Output};

use crate::common;
use common::{assert_usage_error, smrtl, stderr, stdout};

#[test]
fn list_shows_blocks_params_and_presets() {
    let o = smrtl(&["list"]);
    assert!(o.status.success());
    let text = stdout(&o);
    for needle in [
        "bank_conflict_detector",
        "MODE",
        "gpgpusim-limited",
        "gpgpusim4-limited",
        "kepler",
        "ep8",
        "8, 16, 32",
    ] {
        assert!(text.contains(needle), "{needle} in list");
    }
    let json: serde_json::Value =
        serde_json::from_slice(&smrtl(&["list", "--json"]).stdout).unwrap();
    assert_eq!(json[0]["block"], "bank_conflict_detector");
}

#[test]
fn gen_writes_one_module_named_after_the_block() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("d.v");
    let o = smrtl(&[
        "gen",
        "bank_conflict_detector",
        "--preset",
        "ep8",
        "--set",
        "MODE=literal",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = std::fs::read_to_string(&out).unwrap();
    assert_eq!(v.lines().filter(|l| l.starts_with("module ")).count(), 1);
    assert_eq!(v.lines().filter(|l| l.starts_with("endmodule")).count(), 1);
    // Not the default configuration: the name spells out the params that differ.
    let name = v
        .lines()
        .find_map(|l| l.strip_prefix("module "))
        .and_then(|l| l.strip_suffix(" ("))
        .expect("module line");
    assert_eq!(name, "bank_conflict_detector_A14_B8_L8_MODEliteral_W4");
    assert!(
        v.contains("input  wire [111:0] addr"),
        "8 lanes x 14 address bits, packed"
    );
    assert!(v.contains("MODE=literal") && v.contains("--set MODE=literal"));
}

#[test]
fn bad_input_is_one_line_exit_2_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.v");
    let o = out.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["gen", "bank_conflict_detector", "--set", "L=12", "-o", o],
            "allowed: 8, 16, 32",
        ),
        (
            vec![
                "gen",
                "bank_conflict_detector",
                "--preset",
                "ep8",
                "--set",
                "A=4",
                "-o",
                o,
            ],
            "allowed: 6..=32",
        ),
        (
            vec![
                "gen",
                "bank_conflict_detector",
                "--set",
                "MODE=fast",
                "-o",
                o,
            ],
            "literal, multicast, gpgpusim-limited, gpgpusim4-limited",
        ),
        (
            vec!["gen", "bank_conflict_detector", "--set", "X=1", "-o", o],
            "unknown parameter `X`",
        ),
        (
            vec!["gen", "bank_conflict_detector", "--set", "L", "-o", o],
            "KEY=VALUE",
        ),
        (vec!["gen", "warp_drive", "-o", o], "unknown block"),
        (
            vec![
                "gen",
                "bank_conflict_detector",
                "--preset",
                "volta",
                "-o",
                o,
            ],
            "kepler, fermi, tesla, ep8",
        ),
        (
            vec!["cosim", "bank_conflict_detector", "--set", "P=3"],
            "allowed: 1, 2, 4",
        ),
    ];
    for (args, needle) in cases {
        assert_usage_error(&smrtl(&args), needle);
        assert!(!out.exists(), "no output file after {args:?}");
    }
    let nowhere = dir.path().join("missing/x.v");
    assert_usage_error(
        &smrtl(&[
            "gen",
            "bank_conflict_detector",
            "-o",
            nowhere.to_str().unwrap(),
        ]),
        "does not exist",
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no temporary files left"
    );
}

#[test]
fn cosim_json_reports_cycles_mismatches_backend() {
    let o = smrtl(&[
        "cosim",
        "bank_conflict_detector",
        "--preset",
        "ep8",
        "--cycles",
        "3000",
        "--seed",
        "4",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["backend"], "rusthdl");
    assert_eq!(v["mismatches"], 0);
    assert!(v["cycles"].as_u64().unwrap() >= 3000);
    // Same seed, same run.
    let again: serde_json::Value = serde_json::from_slice(
        &smrtl(&[
            "cosim",
            "bank_conflict_detector",
            "--preset",
            "ep8",
            "--cycles",
            "3000",
            "--seed",
            "4",
            "--json",
        ])
        .stdout,
    )
    .unwrap();
    assert_eq!(v, again);
}

#[test]
fn cosim_vcd_and_replay_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let vcd = dir.path().join("run.vcd");
    let o = smrtl(&[
        "cosim",
        "bank_conflict_detector",
        "--preset",
        "ep8",
        "--cycles",
        "200",
        "--vcd",
        vcd.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&vcd).unwrap();
    for scope in [
        "$scope module stim",
        "$scope module model",
        "$scope module rtl",
        "mismatch",
    ] {
        assert!(text.contains(scope), "{scope}");
    }
    // A hand-written replay file: E3 in ep8 (all lanes on word 5).
    let stim = dir.path().join("e3.json");
    let addr_hex = format!(
        "0x{:x}",
        (0..8).fold(0u128, |a, l| a | (20u128 << (14 * l)))
    );
    std::fs::write(&stim, serde_json::json!({
        "block": "bank_conflict_detector",
        "params": {"L": 8, "B": 8, "W": 4, "A": 14, "P": 1, "MODE": "literal", "REG_OUT": false},
        "cycles": [{"valid": 1, "lane_mask": "0xff", "addr": addr_hex}]
    }).to_string()).unwrap();
    let o = smrtl(&[
        "cosim",
        "bank_conflict_detector",
        "--replay",
        stim.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["cycles"], 1);
    // Malformed replay files are usage errors that name the problem.
    std::fs::write(&stim, r#"{"block": "bank_conflict_detector", "params": {}, "cycles": [{"valid": 1, "bogus": 3}]}"#).unwrap();
    assert_usage_error(
        &smrtl(&[
            "cosim",
            "bank_conflict_detector",
            "--replay",
            stim.to_str().unwrap(),
        ]),
        "unknown input port `bogus`",
    );
    std::fs::write(&stim, r#"{"block": "bank_conflict_detector", "params": {}, "cycles": [{"lane_mask": "0x1ffffffff"}]}"#).unwrap();
    assert_usage_error(
        &smrtl(&[
            "cosim",
            "bank_conflict_detector",
            "--replay",
            stim.to_str().unwrap(),
        ]),
        "wider than the port's 32 bits",
    );
    std::fs::write(&stim, "{ not json").unwrap();
    assert_usage_error(
        &smrtl(&[
            "cosim",
            "bank_conflict_detector",
            "--replay",
            stim.to_str().unwrap(),
        ]),
        "malformed stimulus file",
    );
}

fn batch(lines: &[serde_json::Value], backend: &str) -> (Output, Vec<serde_json::Value>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.jsonl");
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&path, text.join("\n")).unwrap();
    let o = smrtl(&[
        "conflict",
        "--batch",
        path.to_str().unwrap(),
        "--backend",
        backend,
    ]);
    let out = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (o, out)
}

fn line(mode: &str, w: u64, n: u64, m: u64, addrs: Vec<u64>) -> serde_json::Value {
    serde_json::json!({"lanes": 8, "banks": 8, "layer_bytes": w, "mode_bytes": n, "elem_bytes": m, "ports": 1, "mode": mode, "addrs": addrs})
}

#[test]
fn conflict_batch_agrees_across_backends_and_reports_bad_lines() {
    let e5 = serde_json::json!({"lanes": 8, "banks": 8, "layer_bytes": 4, "mode_bytes": 4, "elem_bytes": 4, "ports": 2, "mode": "gpgpusim-limited", "addrs": [0, 0, 32, 4, 0, 0, 0, 0], "active": [1, 1, 1, 1, 0, 0, 0, 0]});
    let good = vec![
        line("literal", 4, 4, 4, vec![20; 8]),
        line("multicast", 4, 4, 4, vec![20; 8]),
        line("literal", 8, 4, 8, (0..8).map(|l| 8 * l).collect()),
        e5,
    ];
    let want = [(8, 8), (1, 1), (2, 2), (3, 2)];
    let mut backends = vec!["model", "rusthdl"];
    if smrtl_testbench::external("verilator") {
        backends.push("verilator");
    }
    for backend in backends {
        let (o, out) = batch(&good, backend);
        assert!(o.status.success(), "{backend}: {}", stderr(&o));
        let got: Vec<(u64, u64)> = out
            .iter()
            .map(|v| (v["degree"].as_u64().unwrap(), v["cycles"].as_u64().unwrap()))
            .collect();
        assert_eq!(got, want, "{backend}");
    }
    let mut mixed = good.clone();
    mixed.insert(1, serde_json::json!({"lanes": 8}));
    mixed.insert(2, line("multicast", 4, 8, 4, vec![0; 8]));
    let (o, out) = batch(&mixed, "model");
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(out.len(), 6, "one output line per input line");
    assert!(out[1]["error"].as_str().unwrap().contains("line 2"));
    assert!(out[2]["error"].as_str().unwrap().contains("mode_bytes"));
    assert_eq!(out[3]["degree"], 1, "carries on after bad lines");
}

#[test]
fn missing_tool_is_a_usage_error() {
    let o = Command::new(env!("CARGO_BIN_EXE_smrtl"))
        .args([
            "cosim",
            "bank_conflict_detector",
            "--preset",
            "ep8",
            "--backend",
            "verilator",
            "--cycles",
            "10",
        ])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_usage_error(&o, "verilator not found");
    let o = Command::new(env!("CARGO_BIN_EXE_smrtl"))
        .args(["synth", "bank_conflict_detector", "--preset", "ep8"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_usage_error(&o, "yosys not found");
    assert!(Path::new(env!("CARGO_BIN_EXE_smrtl")).exists());
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn sim_trace_json_matches_its_records_on_every_backend() {
    let dir = tempfile::tempdir().unwrap();
    // Fig. 3 stream (G, G, A×4, S(2), A×6) with ICNT grants, Elastic M = 2, N = 0.
    let trace = write(
        dir.path(),
        "t.json",
        r#"{"params": {"pipe_mode": "elastic", "M": 2, "N": 0, "Q": 2, "fe_depth": 1},
        "stream": ["G", "G", "A", "A", "A", "A", "S(2)", "A", "A", "A", "A", "A", "A",
                   {"kind": "smem", "addrs": [0, 8, 16, 24, 1, 2, 3, 4], "active": [1, 1, 1, 1, 1, 1, 1, 0]}],
        "icnt_valid_cycles": [3, 9, 10]}"#,
    );
    let mut backends = vec!["model", "rusthdl"];
    if smrtl_testbench::external("verilator") {
        backends.push("verilator");
    }
    let mut summaries = vec![];
    for backend in backends {
        let records = dir.path().join(format!("{backend}.jsonl"));
        let o = smrtl(&[
            "sim",
            "--trace",
            &trace,
            "--backend",
            backend,
            "--json",
            "--records",
            records.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{backend}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let recs: Vec<serde_json::Value> = std::fs::read_to_string(&records)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let stalls = recs.iter().filter(|r| r["fe_hold"] == true).count() as u64;
        let bank = recs
            .iter()
            .filter(|r| r["cause"] == "bank_conflict")
            .count() as u64;
        let other = recs.iter().filter(|r| r["cause"] == "other").count() as u64;
        let wb_entry: Vec<u64> = recs
            .iter()
            .filter(|r| r["WB"].is_u64())
            .map(|r| r["t"].as_u64().unwrap())
            .collect();
        let (first, last) = (wb_entry[0], *wb_entry.last().unwrap());
        let bubbles = recs
            .iter()
            .filter(|r| r["WB"] == "-" && (first + 1..last).contains(&r["t"].as_u64().unwrap()))
            .count() as u64;
        assert_eq!(v["cycles"].as_u64().unwrap(), recs.len() as u64);
        assert_eq!(v["stalls"].as_u64().unwrap(), stalls);
        assert_eq!(v["stall_causes"]["bank_conflict"].as_u64().unwrap(), bank);
        assert_eq!(v["stall_causes"]["other"].as_u64().unwrap(), other);
        assert_eq!(v["wb_bubbles"].as_u64().unwrap(), bubbles);
        assert_eq!(v["last_wb_cycle"].as_u64().unwrap(), last);
        assert_eq!(wb_entry.len(), 14, "every entry commits once");
        assert_eq!(v["backend"], backend);
        let mut v = v;
        v["backend"] = "-".into();
        summaries.push(v);
    }
    assert!(
        summaries.windows(2).all(|w| w[0] == w[1]),
        "same figures on every backend"
    );
}

#[test]
fn sim_rejects_bad_trace_files_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (r#"{"stream": ["A", "X"]}"#, "stream[1]"),
        (r#"{"params": {"M": 9}, "stream": ["A"]}"#, "allowed: 1..=8"),
        (
            r#"{"params": {"pipe_mode": "fast"}, "stream": ["A"]}"#,
            "unified, split, elastic",
        ),
        (r#"{"stream": ["S(9)"]}"#, "stream[0]"),
        (
            r#"{"stream": [{"kind": "smem", "addrs": [1, 2]}]}"#,
            "stream[0]",
        ),
        (r#"{"stream": "A"}"#, "trace file"),
        ("not json", "trace file"),
    ];
    for (i, (text, needle)) in cases.iter().enumerate() {
        let path = write(dir.path(), &format!("bad{i}.json"), text);
        let records = dir.path().join(format!("r{i}.jsonl"));
        let o = smrtl(&[
            "sim",
            "--trace",
            &path,
            "--records",
            records.to_str().unwrap(),
        ]);
        assert_usage_error(&o, needle);
        assert!(!records.exists(), "no records file for a rejected trace");
    }
}

#[test]
fn sim_profile_runs_the_scheduler_model() {
    let o = smrtl(&[
        "sim",
        "--profile",
        "transpose",
        "--seed",
        "3",
        "--set",
        "sched=bcaws",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let outcomes: u64 = v["outcomes"]
        .as_object()
        .unwrap()
        .values()
        .map(|x| x.as_u64().unwrap())
        .sum();
    assert_eq!(
        outcomes,
        v["cycles"].as_u64().unwrap(),
        "exactly one outcome per cycle"
    );
    assert_eq!(v["issued_warp_instructions"], 1728);
    let again = smrtl(&[
        "sim",
        "--profile",
        "transpose",
        "--seed",
        "3",
        "--set",
        "sched=bcaws",
        "--json",
    ]);
    assert_eq!(o.stdout, again.stdout, "a seed reproduces the run");
    assert_usage_error(&smrtl(&["sim", "--profile", "fft"]), "allowed: aes_encrypt");
    let dir = tempfile::tempdir().unwrap();
    // The sm_core RTL in the loop: same figures as the model, a VCD with both scopes.
    let w = write(
        dir.path(),
        "micro.json",
        r#"{"params": {"M": 2, "N": 1, "Q": 2, "fe_depth": 1, "S": 2, "W": 4, "hc_sets": 16,
                       "gmem_return": {"icnt": 9}},
            "warps": [[{"op": "smem", "pc": 1, "degrees": [4, 2]}, {"op": "gld", "pc": 2}],
                      [{"op": "alu", "pc": 3}, {"op": "smem", "pc": 1, "degrees": [4, 2]}]]}"#,
    );
    let model = smrtl(&["sim", "--workload", &w, "--json"]);
    let vcd = dir.path().join("core.vcd");
    let rtl = smrtl(&[
        "sim",
        "--workload",
        &w,
        "--backend",
        "rusthdl",
        "--json",
        "--vcd",
        vcd.to_str().unwrap(),
    ]);
    assert!(rtl.status.success(), "{}", stderr(&rtl));
    let (mut a, mut b): (serde_json::Value, serde_json::Value) = (
        serde_json::from_slice(&model.stdout).unwrap(),
        serde_json::from_slice(&rtl.stdout).unwrap(),
    );
    assert_eq!(b["backend"], "rusthdl");
    a["backend"] = "x".into();
    b["backend"] = "x".into();
    assert_eq!(a, b);
    let text = std::fs::read_to_string(&vcd).unwrap();
    for scope in [
        "$scope module sm_core",
        "$scope module model",
        "$scope module rtl",
        // The RTL's internal nets, a scope per instance of the hierarchy.
        "$scope module pipe",
        "$scope module det",
        "$scope module hc",
        "$scope module sched",
    ] {
        assert!(text.contains(scope), "{scope}");
    }
    assert!(text.contains(" issue_warp ") && text.contains(" desc_deg "));
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "w.json",
        r#"{"warps": [[{"op": "mul", "pc": 0}]]}"#,
    );
    assert_usage_error(&smrtl(&["sim", "--workload", &bad]), "warps[0][0].op");
}

/// `cosim sm_core` co-simulates random scheduler-mode workloads at SM level; the block-level
/// options that do not apply are clear errors.
#[test]
fn cosim_sm_core_runs_random_workloads() {
    let o = smrtl(&[
        "cosim", "sm_core", "--preset", "micro", "--cycles", "3000", "--seed", "5", "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["mismatches"], 0);
    assert!(v["cycles"].as_u64().unwrap() >= 3000);
    let again = smrtl(&[
        "cosim", "sm_core", "--preset", "micro", "--cycles", "3000", "--seed", "5", "--json",
    ]);
    assert_eq!(o.stdout, again.stdout, "a seed reproduces the run");
    assert_usage_error(
        &smrtl(&["cosim", "sm_core", "--replay", "no-such-file.json"]),
        "cannot read no-such-file.json",
    );
}
