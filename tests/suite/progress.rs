//! The progress line (docs/cli.md, "Progress"): on a terminal a long `run` shows how many
//! cycles it has done, and so does a long `sim`; with stderr redirected nothing but errors ever
//! reaches it.

use crate::common;

use std::io::Write;

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
    let cmd = format!(
        "{} run sm_core --stim {stim} --out /dev/null",
        env!("CARGO_BIN_EXE_smrtl")
    );
    let text = common::on_a_terminal(&cmd, dir.path());
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
    // About 3 s: 350 000 TBs of 23 instructions per warp.
    let kernel = common::owf_kernel(350_000, 20);
    let path = dir.path().join("long.json");
    std::fs::write(&path, kernel.to_string()).unwrap();
    let cmd = format!(
        "{} sim --kernel {}",
        env!("CARGO_BIN_EXE_smrtl"),
        path.display()
    );
    let text = common::on_a_terminal(&cmd, dir.path());
    assert!(text.contains("sharing_sm: "), "progress in {text:?}");
    assert!(text.contains("350000 TBs"), "the report in {text:?}");
}
