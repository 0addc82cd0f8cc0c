//! Memory flat in the number of cycles (docs/cli.md "Limits"): `smrtl run` streams its
//! stimulus and outputs, so a long run peaks where a short one does; the Icarus backend, which
//! replays in batch, refuses a stimulus above its bound before any work.

mod common;

use common::{assert_usage_error, files, smrtl};
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs smrtl with `args` in `dir`; returns its exit code, its stderr and its peak resident
/// set in KiB (`ru_maxrss` of the child from `wait4`).
fn run_measured(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String, i64) {
    #[allow(clippy::zombie_processes)] // reaped by wait4 below
    let mut child = Command::new(env!("CARGO_BIN_EXE_smrtl"))
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    let mut status = 0;
    // SAFETY: wait4 on the child this test started, with valid out pointers; the child is
    // reaped here (`Child` is dropped without waiting).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (code, err, usage.ru_maxrss)
}

/// `n` idle cycles (`{}` per line: every input keeps its value, 0).
fn idle(dir: &std::path::Path, n: usize) -> String {
    let path = dir.join(format!("idle-{n}.jsonl"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for _ in 0..n {
        f.write_all(b"{}\n").unwrap();
    }
    f.flush().unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn run_memory_does_not_grow_with_cycles() {
    let dir = tempfile::tempdir().unwrap();
    let (short, long) = (idle(dir.path(), 1_000), idle(dir.path(), 300_000));
    for (block, backend) in [("sm_core", "model"), ("sharing_core", "model")] {
        let mut peaks = vec![];
        for stim in [&short, &long] {
            let out = dir.path().join("out.jsonl");
            let args = [
                "run",
                block,
                "--backend",
                backend,
                "--stim",
                stim,
                "--out",
                out.to_str().unwrap(),
            ];
            let (code, err, kib) = run_measured(dir.path(), &args);
            assert_eq!(code, Some(0), "{block}: {err}");
            assert_eq!(err, "", "nothing on a stderr that is not a terminal");
            peaks.push(kib);
        }
        // Counted as read: this process's memory is shared with the next child until it execs,
        // and would count in that child's peak.
        let file = std::fs::File::open(dir.path().join("out.jsonl")).unwrap();
        let lines = std::io::BufRead::lines(std::io::BufReader::new(file)).count();
        assert_eq!(lines, 300_000, "{block}: one output line per cycle");
        // Before streaming, 3·10^5 cycles of either block took over 600 MB.
        assert!(
            peaks[1] < 64 << 10,
            "{block} on {backend}: peak {} KiB",
            peaks[1]
        );
        assert!(
            peaks[1] < peaks[0] + (16 << 10),
            "{block} on {backend}: {} KiB for 10^3 cycles, {} KiB for 3·10^5",
            peaks[0],
            peaks[1]
        );
    }
    let mut left = files(dir.path());
    left.sort();
    assert_eq!(left, ["idle-1000.jsonl", "idle-300000.jsonl", "out.jsonl"]);
}

#[test]
fn run_on_rusthdl_streams_too() {
    let dir = tempfile::tempdir().unwrap();
    let stim = idle(dir.path(), 100_000);
    let (code, err, kib) = run_measured(
        dir.path(),
        &[
            "run",
            "sm_core",
            "--backend",
            "rusthdl",
            "--stim",
            &stim,
            "--out",
            "/dev/null",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(kib < 64 << 10, "peak {kib} KiB");
}

#[test]
fn icarus_refuses_a_stimulus_above_its_bound_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let stim = idle(dir.path(), 100_001);
    let out = dir.path().join("out.jsonl");
    // No tool is needed: the bound is checked before Icarus is looked for.
    let o = smrtl(&[
        "run",
        "sm_core",
        "--backend",
        "icarus",
        "--stim",
        &stim,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_usage_error(&o, "the icarus backend replays at most 100000");
    assert_eq!(
        files(dir.path()),
        ["idle-100001.jsonl"],
        "no output written"
    );
}

/// `sim --kernel --json` on a huge grid summarises its TBs (`tb_summary`) instead of listing
/// each (docs/cli.md "Limits": at most 10 000 listed): a grid of 2·10^5 TBs stays small, and a
/// grid of three still lists every TB.
#[test]
fn sim_json_summarises_huge_grids() {
    let dir = tempfile::tempdir().unwrap();
    let kernel = common::owf_kernel(200_000, 0);
    let big = dir.path().join("big.json");
    std::fs::write(&big, kernel.to_string()).unwrap();
    let args = ["sim", "--kernel", big.to_str().unwrap(), "--json"];
    let (code, err, kib) = run_measured(dir.path(), &args);
    assert_eq!(code, Some(0), "{err}");
    // Listing every TB took 1.8 GB at 10^6 TBs (about 370 MB at this grid).
    assert!(kib < 64 << 10, "peak {kib} KiB");
    let report = |path: &str| -> serde_json::Value {
        let o = smrtl(&["sim", "--kernel", path, "--json"]);
        assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let v = report(big.to_str().unwrap());
    assert_eq!(v["tb_summary"]["count"], 200_000);
    assert_eq!(v["tb_summary"]["listed"], false);
    assert!(v.get("tbs").is_none(), "no per-TB list above 10 000 TBs");
    assert!(v["tb_summary"]["turnaround_min"].as_u64().unwrap() > 0);
    let small = report("examples/sharing/fig5-owf.json");
    assert_eq!(small["tb_summary"]["listed"], true);
    assert_eq!(small["tbs"].as_array().unwrap().len(), 3);
}
