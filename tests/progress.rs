//! The progress line (docs/cli.md, "Progress"): on a terminal a long `run` shows how many
//! cycles it has done, and so does a long `sim`; with stderr redirected nothing but errors ever
//! reaches it.

mod common;

use std::io::Write;
use std::process::Command;

fn idle(dir: &std::path::Path, n: usize) -> String {
    let path = dir.join("idle.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for _ in 0..n {
        f.write_all(b"{}\n").unwrap();
    }
    f.flush().unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn quiet_when_stderr_is_not_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let stim = idle(dir.path(), 400_000);
    let o = common::smrtl(&["run", "sm_core", "--stim", &stim, "--out", "/dev/null"]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    assert_eq!(common::stderr(&o), "", "no progress on a pipe");
    assert_eq!(common::files(dir.path()), ["idle.jsonl"]);
}

/// Under `script` (util-linux), which gives smrtl a terminal: a run longer than the two-second
/// delay draws `<block>: N of M cycles`.
#[test]
fn a_long_run_on_a_terminal_shows_its_cycles() {
    if !smrtl_hdl::tools::external(&["script"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let stim = idle(dir.path(), 1_000_000);
    let log = dir.path().join("typescript");
    let cmd = format!(
        "{} run sm_core --stim {stim} --out /dev/null",
        env!("CARGO_BIN_EXE_smrtl")
    );
    let o = Command::new("script")
        .args(["-qec", &cmd])
        .arg(&log)
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}", o);
    let text = String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned();
    assert!(
        text.contains("sm_core: ") && text.contains(" of 1000000 cycles ("),
        "progress in {text:?}"
    );
}

/// Under `script`: a `sim` of a kernel running longer than the delay draws `<system>: N cycles`
/// (its length is not known ahead), and the report follows on stdout.
#[test]
fn a_long_sim_on_a_terminal_shows_its_cycles() {
    if !smrtl_hdl::tools::external(&["script"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let example = format!(
        "{}/examples/sharing/fig5-owf.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut kernel: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&example).unwrap()).unwrap();
    // About 3 s: 350 000 TBs of 23 instructions per warp.
    kernel["grid"] = 350_000.into();
    let alu = serde_json::json!({"op": "alu", "dst": 3});
    let warp = kernel["warps"][0].as_array_mut().unwrap();
    for _ in 0..20 {
        warp.insert(2, alu.clone());
    }
    let path = dir.path().join("long.json");
    std::fs::write(&path, kernel.to_string()).unwrap();
    let log = dir.path().join("typescript");
    let cmd = format!(
        "{} sim --kernel {}",
        env!("CARGO_BIN_EXE_smrtl"),
        path.display()
    );
    let o = Command::new("script")
        .args(["-qec", &cmd])
        .arg(&log)
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}", o);
    let text = String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned();
    assert!(text.contains("sharing_sm: "), "progress in {text:?}");
    assert!(text.contains("350000 TBs"), "the report in {text:?}");
}
