//! A block driven from Python (docs/verilog.md, "From cocotb"): the real cocotb (PyPI, in the
//! virtual environment `.ci/run` makes) runs examples/cocotb on the stall inspector's Verilog in
//! Icarus against the JSON lines `smrtl run --backend model` wrote, and fails on a wrong value.

use smrtl_hdl::tools::{child_path, external, find};
use std::path::Path;
use std::process::{Command, Output};

fn smrtl(dir: &Path, args: &[&str]) {
    let o = Command::new(env!("CARGO_BIN_EXE_smrtl"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// `examples/cocotb/run.py VERILOG STIM EXPECTED` with the virtual environment's python3.
fn cocotb(dir: &Path, expected: &str) -> (Output, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = Command::new(find("python3").expect("python3"))
        .arg(root.join("examples/cocotb/run.py"))
        .args(["stall_inspector.v", "stim.jsonl", expected])
        .current_dir(dir)
        .env("PATH", child_path())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o, text)
}

#[test]
fn the_cocotb_example_matches_the_model_and_catches_a_wrong_value() {
    if !external(&["iverilog", "cocotb-config"]) {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root.join("examples/run/stall-blame.jsonl"),
        dir.path().join("stim.jsonl"),
    )
    .unwrap();
    let nw = ["--set", "NW=2"];
    smrtl(
        dir.path(),
        &[
            &["gen", "stall_inspector"][..],
            &nw,
            &["-o", "stall_inspector.v"],
        ]
        .concat(),
    );
    smrtl(
        dir.path(),
        &[
            &["run", "stall_inspector"][..],
            &nw,
            &["--stim", "stim.jsonl", "--out", "expected.jsonl"],
        ]
        .concat(),
    );
    let (o, text) = cocotb(dir.path(), "expected.jsonl");
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("11 cycles, every output equal to the model's"),
        "{text}"
    );
    assert!(text.contains("cocotb: 1 test(s), 0 failed"), "{text}");

    // One expected value off by one at cycle 5: the test names the cycle and port, exit 1.
    let expected = std::fs::read_to_string(dir.path().join("expected.jsonl")).unwrap();
    let mut lines: Vec<serde_json::Value> = expected
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let cls = lines[5]["cls"].as_u64().unwrap();
    lines[5]["cls"] = ((cls + 1) % 8).into();
    let wrong: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.path().join("wrong.jsonl"), wrong).unwrap();
    let (o, text) = cocotb(dir.path(), "wrong.jsonl");
    assert_eq!(o.status.code(), Some(1), "{text}");
    let want = format!(
        "cycle 5: port cls: expected {}, actual {cls}",
        (cls + 1) % 8
    );
    assert!(text.contains(&want), "{text}");
}
