//! `smrtl relssp`: the relssp compiler pass through the CLI (docs/scratchpad-sharing.md §6):
//! the `--json` object, `-o` kernels that `smrtl sim --kernel` runs with the Table 4 extra
//! instructions, and one-line errors that leave no output behind.

use crate::common;

use common::{assert_usage_error, files, smrtl, stdout};
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let mut all = vec!["relssp", "--json"];
    all.extend(args);
    let o = smrtl(&all);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", common::stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

#[test]
fn json_has_the_documented_keys_and_the_a21_placement() {
    let v = json(&["examples/relssp/a21.json"]);
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "cost",
            "layout",
            "mode",
            "program",
            "relssp",
            "selected",
            "split_blocks",
            "u"
        ]
    );
    assert_eq!(v["mode"], "opt");
    assert_eq!(v["selected"], serde_json::json!(["A"]));
    assert_eq!(v["layout"], serde_json::json!({"A": 0}));
    assert_eq!(
        v["relssp"],
        serde_json::json!([
            {"block": "B2", "position": "after", "index": 0},
            {"block": "split_B1_B3", "position": "in", "index": 0}
        ])
    );
    assert_eq!(
        v["split_blocks"],
        serde_json::json!([{"name": "split_B1_B3", "from": "B1", "to": "B3"}])
    );
    let post = json(&["examples/relssp/a21.json", "--mode", "postdom"]);
    assert_eq!(
        post["relssp"],
        serde_json::json!([{"block": "B3", "position": "in", "index": 0}])
    );
    assert_eq!(post["split_blocks"], serde_json::json!([]));
}

#[test]
fn text_form_input_and_human_summary() {
    let o = smrtl(&["relssp", "examples/relssp/a20-loop.txt"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(out.contains("selected: P (cost 1)"), "{out}");
    assert!(out.contains("layout: S @ 0, P @ 64"), "{out}");
    assert!(out.contains("relssp: B1 after instruction 1"), "{out}");
    // The program follows in the text form.
    assert!(out.contains("    st.shared P r1\n    relssp\n"), "{out}");
}

/// Thread instructions of `smrtl sim --kernel FILE`.
fn sim_thread_instructions(file: &str) -> u64 {
    let o = smrtl(&["sim", "--kernel", file, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    v["thread_instructions"].as_u64().unwrap()
}

/// `-o` writes a kernel `smrtl sim --kernel` runs; every thread runs one more instruction
/// (the relssp after the loop, Table 4's pattern without a kept split block).
#[test]
fn output_runs_in_sim_with_one_extra_instruction_per_thread() {
    let dir = tempfile::tempdir().unwrap();
    let base = sim_thread_instructions("examples/relssp/issue.json");
    // 8 TBs of 64 threads.
    for (mode, extra) in [("opt", 512), ("postdom", 512), ("none", 0)] {
        let out = dir.path().join(format!("{mode}.json"));
        let o = smrtl(&[
            "relssp",
            "examples/relssp/issue.json",
            "--mode",
            mode,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
        let got = sim_thread_instructions(out.to_str().unwrap());
        assert_eq!(got - base, extra, "{mode}");
    }
}

#[test]
fn bad_input_is_one_line_and_leaves_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let out = out.to_str().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"blocks": []}"#).unwrap();
    let with_relssp = dir.path().join("rel.txt");
    std::fs::write(&with_relssp, "shared A 8\nB:\n    relssp\n").unwrap();
    let cases: [(Vec<&str>, &str); 6] = [
        (
            vec!["examples/relssp/a21.json", "--mode", "fast"],
            "allowed: opt, postdom, none",
        ),
        (
            vec!["examples/relssp/a21.json", "--align", "0"],
            "--align 0",
        ),
        (vec!["examples/relssp/a21.json", "--t", "3/2"], "--t"),
        (vec!["examples/relssp/missing.json"], "cannot read"),
        (vec![bad.to_str().unwrap()], "0 blocks"),
        (
            vec![with_relssp.to_str().unwrap()],
            "already holds a relssp",
        ),
    ];
    for (args, needle) in cases {
        let mut all = vec!["relssp", "-o", out];
        all.extend(&args);
        assert_usage_error(&smrtl(&all), needle);
    }
    assert_eq!(files(dir.path()), ["bad.json", "rel.txt"]);
}

/// A kernel transformed by `smrtl relssp` runs in `smrtl sim --kernel` with `sharing_core` in
/// the loop on rust-hdl and Verilator, agreeing every cycle; relssp releases the lock early and
/// each thread runs 2 more instructions (the split block's relssp and bra, [001] Table 4).
#[test]
fn transformed_kernel_runs_with_sharing_core_in_the_loop() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("small-opt.json");
    let out = out.to_str().unwrap();
    let o = smrtl(&["relssp", "examples/relssp/small-sm.txt", "-o", out]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let sim = |file: &str, backend: &str| -> Value {
        let o = smrtl(&["sim", "--kernel", file, "--backend", backend, "--json"]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{backend}: {}",
            common::stderr(&o)
        );
        serde_json::from_str(&stdout(&o)).unwrap()
    };
    let before = sim("examples/relssp/small-sm.txt", "model");
    let model = sim(out, "model");
    let extra = model["thread_instructions"].as_u64().unwrap()
        - before["thread_instructions"].as_u64().unwrap();
    let threads = 12 * 8;
    assert_eq!(extra, 2 * threads, "Table 4: relssp + bra per thread");
    assert_eq!(before["lock_releases"]["relssp"], 0);
    assert!(model["lock_releases"]["relssp"].as_u64().unwrap() > 0);
    let mut backends = vec!["rusthdl"];
    if smrtl_testbench::external("verilator") {
        backends.push("verilator");
    }
    for backend in backends {
        let v = sim(out, backend);
        assert_eq!(v["cycles"], model["cycles"], "{backend}");
        assert_eq!(v["backend"], backend);
    }
}
