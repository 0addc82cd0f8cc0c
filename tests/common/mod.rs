//! What every CLI test file shares: running the binary and checking a usage error.
#![allow(dead_code)]

use std::process::{Command, Output};

/// Runs `smrtl` with `args` from the repository root.
pub fn smrtl(args: &[&str]) -> Output {
    smrtl_in(std::path::Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

/// Runs `smrtl` with `args` in `dir`.
pub fn smrtl_in(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_smrtl"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("smrtl runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Exit code 2, exactly one line on stderr naming `needle`, no panic.
pub fn assert_usage_error(o: &Output, needle: &str) {
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(o));
    let err = stderr(o);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains(needle), "`{needle}` in {err}");
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"));
}

/// The names in `dir`, sorted (hidden files, such as temporary outputs, included).
pub fn files(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// examples/sharing/fig5-owf.json with its grid set to `grid` TBs and `extra` more ALU
/// instructions per warp: a kernel as long as a test needs.
pub fn owf_kernel(grid: u64, extra: usize) -> serde_json::Value {
    let example = format!(
        "{}/examples/sharing/fig5-owf.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut kernel: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(example).unwrap()).unwrap();
    kernel["grid"] = grid.into();
    let alu = serde_json::json!({"op": "alu", "dst": 3});
    let warp = kernel["warps"][0].as_array_mut().unwrap();
    for _ in 0..extra {
        warp.insert(2, alu.clone());
    }
    kernel
}

/// Runs `command` (a shell line) under `script` (util-linux), which gives it a terminal;
/// returns what it wrote to the terminal.
pub fn on_a_terminal(command: &str, dir: &std::path::Path) -> String {
    let log = dir.join("typescript");
    let o = Command::new("script")
        .args(["-qec", command])
        .arg(&log)
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}", o);
    String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned()
}
