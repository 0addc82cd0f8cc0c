//! `smrtl sweep` and `smrtl merge` as a user meets them: the same bytes whatever the thread
//! count, sharded then merged == unsharded, bad specs and bad shard sets refused with one line
//! and exit code 2, no partial files.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common;
use common::{assert_usage_error, smrtl};

/// 16 points (2 workloads × 2 × 2 params × 2 seeds), well under a second.
const SPEC: &str = "examples/sweep/small.json";

fn ok(args: &[&str]) -> Output {
    let o = smrtl(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

/// Runs the sweep of `spec` in `n` shards into `dir`; the shard files.
fn shards(spec: &str, n: usize, format: &str, dir: &Path) -> Vec<String> {
    (0..n)
        .map(|i| {
            let out = path(dir, &format!("shard-{i}.{format}"));
            let shard = format!("{i}/{n}");
            ok(&[
                "sweep", spec, "--format", format, "--shard", &shard, "-o", &out,
            ]);
            out
        })
        .collect()
}

#[test]
fn same_bytes_whatever_the_thread_count() {
    let one = ok(&["sweep", SPEC, "--threads", "1"]).stdout;
    let two = ok(&["sweep", SPEC, "--threads", "2"]).stdout;
    assert_eq!(one, two);
    let text = String::from_utf8(one).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 17, "a header and 16 rows");
    assert!(lines[0].starts_with(
        "point,points,spec,workload,sched,pipe_mode,waves,seed,cycles,issued_warp_instructions"
    ));
    for (i, row) in lines[1..].iter().enumerate() {
        assert!(row.starts_with(&format!("{i},16,")), "grid order: {row}");
    }
    // Grid order: workload, then the params in file order, then waves, then seed.
    assert!(
        lines[1].contains(",transpose,rr,unified,1,1,"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].contains(",transpose,rr,unified,1,2,"),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].contains(",transpose,rr,elastic,1,1,"),
        "{}",
        lines[3]
    );

    let a = ok(&["sweep", SPEC, "--format", "jsonl", "--threads", "1"]).stdout;
    let b = ok(&["sweep", SPEC, "--format", "jsonl", "--threads", "2"]).stdout;
    assert_eq!(a, b);
    let row: serde_json::Value =
        serde_json::from_str(String::from_utf8(a).unwrap().lines().nth(5).unwrap()).unwrap();
    assert_eq!(row["point"], 5);
    assert!(row["cycles"].as_u64().unwrap() > 0);
}

/// A row equals what `smrtl sim` prints for the same profile, seed and overrides.
#[test]
fn a_row_is_the_sim_of_its_point() {
    let out = ok(&["sweep", SPEC, "--format", "jsonl"]).stdout;
    let row: serde_json::Value =
        serde_json::from_str(String::from_utf8(out).unwrap().lines().nth(9).unwrap()).unwrap();
    let (sched, mode) = (
        row["sched"].as_str().unwrap(),
        row["pipe_mode"].as_str().unwrap(),
    );
    let sim = ok(&[
        "sim",
        "--profile",
        row["workload"].as_str().unwrap(),
        "--seed",
        &row["seed"].to_string(),
        "--waves",
        &row["waves"].to_string(),
        "--set",
        &format!("sched={sched}"),
        "--set",
        &format!("pipe_mode={mode}"),
        "--json",
    ])
    .stdout;
    let sim: serde_json::Value = serde_json::from_slice(&sim).unwrap();
    for k in ["cycles", "wb_bubbles", "hc_hits", "hc_misses", "ipc"] {
        assert_eq!(row[k], sim[k], "{k}");
    }
    assert_eq!(row["sched_fail"], sim["outcomes"]["sched_fail"]);
}

#[test]
fn three_shards_merge_into_the_unsharded_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["csv", "jsonl"] {
        let whole = path(dir.path(), &format!("whole.{format}"));
        ok(&["sweep", SPEC, "--format", format, "-o", &whole]);
        let mut parts = shards(SPEC, 3, format, dir.path());
        parts.reverse(); // any order
        let merged = path(dir.path(), &format!("merged.{format}"));
        let mut args = vec!["merge", merged.as_str()];
        args.extend(parts.iter().map(String::as_str));
        ok(&args);
        assert_eq!(
            std::fs::read(&merged).unwrap(),
            std::fs::read(&whole).unwrap(),
            "{format}"
        );
    }
}

#[test]
fn bad_spec_is_one_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.csv");
    let cases = [
        (
            r#"{"workloads": ["dct"], "seed": [1]}"#,
            "unknown field `seed`",
        ),
        (r#"{"workloads": ["nope"]}"#, "unknown profile `nope`"),
        (
            r#"{"workloads": ["dct"], "params": {"colour": "red"}}"#,
            "unknown parameter `colour`",
        ),
        (
            r#"{"workloads": ["dct"], "params": {"sched": ["rr", "lottery"]}}"#,
            "lottery",
        ),
        (r#"{"workloads": ["dct"], "params": {"M": 99}}"#, "M"),
        (r#"{"workloads": ["dct"], "waves": 0}"#, "waves"),
        (
            r#"{"workloads": ["dct"], "seeds": []}"#,
            "seeds: empty list",
        ),
        (r#"{"workloads": ["dct"]"#, "EOF"),
    ];
    for (i, (text, needle)) in cases.iter().enumerate() {
        let spec = dir.path().join(format!("bad-{i}.json"));
        std::fs::write(&spec, text).unwrap();
        let o = smrtl(&[
            "sweep",
            &spec.display().to_string(),
            "-o",
            &out.display().to_string(),
        ]);
        assert_usage_error(&o, needle);
        assert!(!out.exists(), "{text}: no output file");
    }
    assert_usage_error(
        &smrtl(&["sweep", "missing.json"]),
        "cannot read missing.json",
    );
    for bad in ["3/3", "1", "x/2"] {
        assert_usage_error(
            &smrtl(&["sweep", SPEC, "--shard", bad]),
            "--shard expects I/N",
        );
    }
    let nowhere = path(dir.path(), "no/such/dir/out.csv");
    assert_usage_error(&smrtl(&["sweep", SPEC, "-o", &nowhere]), "does not exist");
}

#[test]
fn merge_refuses_incomplete_overlapping_or_foreign_shards() {
    let dir = tempfile::tempdir().unwrap();
    let parts = shards(SPEC, 3, "csv", dir.path());
    let out: PathBuf = dir.path().join("merged.csv");
    let merge = |files: &[&str]| {
        let out = out.display().to_string();
        let mut args = vec!["merge", out.as_str()];
        args.extend(files);
        smrtl(&args)
    };
    assert_usage_error(&merge(&[&parts[0], &parts[2]]), "incomplete");
    assert_usage_error(
        &merge(&[&parts[0], &parts[1], &parts[2], &parts[1]]),
        "overlapping",
    );
    // Another spec (other seeds): same columns, other spec id.
    let other = dir.path().join("other.json");
    std::fs::write(
        &other,
        std::fs::read_to_string(SPEC)
            .unwrap()
            .replace("[1, 2]", "[3, 4]"),
    )
    .unwrap();
    let foreign = dir.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    let theirs = shards(&other.display().to_string(), 3, "csv", &foreign);
    assert_usage_error(
        &merge(&[&parts[0], &theirs[1], &parts[2]]),
        "from another sweep",
    );
    // CSV and JSON lines do not mix.
    let jsonl = shards(SPEC, 3, "jsonl", dir.path());
    assert_usage_error(&merge(&[&parts[0], &jsonl[1], &parts[2]]), "format");
    assert_usage_error(&merge(&[&parts[0], "missing.csv"]), "cannot read");
    assert!(!out.exists(), "no output file after a refused merge");
}
