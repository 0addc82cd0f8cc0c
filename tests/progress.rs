//! The progress line (docs/cli.md, "Progress"): on a terminal a long `run` shows how many
//! cycles it has done; with stderr redirected nothing but errors ever reaches it.

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
    if smrtl_hdl::tools::find("script").is_none() {
        eprintln!("skipped: script (util-linux) not installed");
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
