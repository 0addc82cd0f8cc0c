//! Child tools on interrupt and on error (docs/cli.md, "Child tools and interrupts"): a SIGTERM
//! or SIGINT while Yosys runs ends smrtl, kills Yosys's whole process group, and leaves no
//! scratch directory and no output file; a tool that fails leaves no grandchild and no scratch
//! directory either.

use crate::common;

use common::{files, stderr};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// (pid, parent pid, process group) of every process.
fn processes() -> Vec<(i32, i32, i32)> {
    let mut v = vec![];
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid pgrp ...`; comm may hold spaces and parentheses.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f[0] == "Z" || f[0] == "X" {
            continue; // exited, waiting to be reaped by whoever inherited it
        }
        v.push((pid, f[1].parse().unwrap(), f[2].parse().unwrap()));
    }
    v
}

/// The live processes of group `pgid`, after up to 3 s for a dying group to go.
fn survivors(pgid: i32) -> Vec<i32> {
    let start = Instant::now();
    loop {
        let live: Vec<i32> = processes()
            .into_iter()
            .filter(|&(_, _, g)| g == pgid)
            .map(|(p, _, _)| p)
            .collect();
        if live.is_empty() || start.elapsed() > Duration::from_secs(3) {
            return live;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts smrtl with `args`, its temp dir `tmp`, in `cwd`.
fn start(args: &[&str], tmp: &Path, cwd: &Path, path_env: Option<&str>) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_smrtl"));
    cmd.current_dir(cwd)
        .args(args)
        .env("TMPDIR", tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(p) = path_env {
        cmd.env("PATH", p);
    }
    cmd.spawn().expect("smrtl starts")
}

/// The first child of `parent` that has become a tool (its command is no longer smrtl's: a child
/// between fork and exec still has smrtl's process group), and its process group; polled for up
/// to 120 s.
fn child_group(parent: &mut Child) -> (i32, i32) {
    let me = parent.id() as i32;
    let exe = Path::new(env!("CARGO_BIN_EXE_smrtl"))
        .file_name()
        .unwrap()
        .to_owned();
    let is_tool = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .is_ok_and(|c| c.trim_end().as_bytes() != exe.as_encoded_bytes())
    };
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(120) {
        if let Some(&(pid, _, pgid)) = processes()
            .iter()
            .find(|&&(pid, ppid, _)| ppid == me && is_tool(pid))
        {
            return (pid, pgid);
        }
        assert!(
            parent.try_wait().unwrap().is_none(),
            "smrtl ended before starting a tool"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("no child tool started within 120 s");
}

/// `smrtl <args>` until its first tool runs, then `signal`: smrtl ends as the signal would,
/// the tool's group is gone, `tmp` and `out_dir` are as before.
fn interrupt(args: &[&str], signal: i32) {
    if !smrtl_hdl::tools::external(&["yosys"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let mut smrtl = start(args, tmp.path(), work.path(), None);
    let (tool, pgid) = child_group(&mut smrtl);
    assert_eq!(tool, pgid, "the tool leads its own process group");
    // Let the tool get going (it has its scratch files open).
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(smrtl.id() as i32, signal) }, 0);
    let out = smrtl.wait_with_output().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert!(
        out.status.signal() == Some(signal) || out.status.code() == Some(128 + signal),
        "ended by the signal: {:?}, {}",
        out.status,
        stderr(&out)
    );
    assert!(
        !stderr(&out).contains("panicked"),
        "no panic: {}",
        stderr(&out)
    );
    assert_eq!(
        survivors(pgid),
        Vec::<i32>::new(),
        "the tool's group is gone"
    );
    assert_eq!(files(tmp.path()), Vec::<String>::new(), "no scratch left");
    assert_eq!(files(work.path()), Vec::<String>::new(), "no output left");
}

#[test]
fn sigterm_during_prove_kills_yosys_and_removes_scratch() {
    interrupt(&["prove", "lock_table", "--vcd", "cex.vcd"], libc::SIGTERM);
}

#[test]
fn sigint_during_synth_kills_yosys_and_removes_scratch() {
    interrupt(&["synth", "sm_core", "--no-ice40"], libc::SIGINT);
}

/// A `yosys` that leaves a grandchild behind and fails: smrtl reports the failure on one line
/// (exit 2), kills the grandchild with the group, and removes its scratch directory.
#[test]
fn failing_tool_leaves_no_grandchild_and_no_scratch() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let fake = bin.path().join("yosys");
    let marker = work.path().join("grandchild.pid");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\nsleep 300 &\necho $! > {}\necho 'ERROR: planted failure' >&2\nexit 1\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let smrtl = start(
        &["synth", "sm_core", "--no-ice40"],
        tmp.path(),
        work.path(),
        Some(&path),
    );
    let out = smrtl.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("yosys failed") && err.contains("planted failure"),
        "{err}"
    );
    let grandchild: i32 = std::fs::read_to_string(&marker)
        .expect("the fake yosys ran")
        .trim()
        .parse()
        .unwrap();
    let start = Instant::now();
    while processes().iter().any(|&(p, _, _)| p == grandchild) {
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "the tool's grandchild {grandchild} survived"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(files(tmp.path()), Vec::<String>::new(), "no scratch left");
    assert_eq!(files(work.path()), ["grandchild.pid"]);
}
