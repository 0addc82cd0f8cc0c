//! Bad input, second round (issue 22): each command refuses what it cannot finish or what its
//! consumer would refuse, never writes over one of its inputs and keeps its counts bounded;
//! the argument parser's errors are one line like every other. Each case through the CLI, with
//! its exit code, its message and the files left behind.

use crate::common;

use common::{assert_usage_error, files, smrtl, stderr};
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

const SWEEP: &str = "examples/sweep/small.json";
const SMALL_SM: &str = "examples/relssp/small-sm.txt";

fn write(dir: &Path, name: &str, text: &str) -> String {
    fs::write(dir.join(name), text).unwrap();
    dir.join(name).display().to_string()
}

fn p(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

/// A refusal that leaves `dir` exactly as it was (no output, no temporary file).
fn refused_leaving(dir: &Path, o: &Output, needle: &str) {
    let before = files(dir);
    assert_usage_error(o, needle);
    assert_eq!(files(dir), before, "nothing left behind");
}

/// Runs `args`, asserting a refusal naming `needle` that leaves `dir` as it was (every output
/// of `args` lies in `dir`).
fn refuse_in(dir: &Path, args: &[&str], needle: &str) {
    let before = files(dir);
    let o = smrtl(args);
    assert_usage_error(&o, needle);
    assert_eq!(files(dir), before, "nothing created: {args:?}");
}

// ---------------------------------------------------------------------------------------------
// Class 1: a run of nothing is refused
// ---------------------------------------------------------------------------------------------

#[test]
fn sim_refuses_a_workload_with_nothing_to_run_on_every_backend() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let empty = write(d, "none.json", r#"{"warps": []}"#);
    let blank = write(d, "blank.json", r#"{"warps": [[]], "params": {"W": 4}}"#);
    let records = p(d, "records.jsonl");
    for (input, needle) in [
        (&empty, "warps: nothing to run"),
        (&blank, "allowed: 1..=4 warps, at least one instruction"),
    ] {
        for backend in ["model", "rusthdl", "verilator"] {
            let args = ["sim", input, "--backend", backend, "--records", &records];
            refuse_in(d, &args, needle);
            // The deprecated alias reads the same way.
            refuse_in(
                d,
                &["sim", "--workload", input, "--backend", backend],
                needle,
            );
        }
    }
    assert!(!Path::new(&records).exists());
}

// ---------------------------------------------------------------------------------------------
// Class 2: relssp writes only what sim takes
// ---------------------------------------------------------------------------------------------

/// small-sm.txt with `line` after its `kernel` line (and its `param T=4` dropped).
fn small_sm_with(line: &str) -> String {
    fs::read_to_string(SMALL_SM)
        .unwrap()
        .lines()
        .filter(|l| *l != "param T=4")
        .flat_map(|l| {
            if l.starts_with("kernel ") {
                vec![l.to_string(), line.to_string()]
            } else {
                vec![l.to_string()]
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[test]
fn relssp_refuses_a_kernel_that_sim_would_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = p(d, "out.json");
    for (line, needle) in [
        (
            "param T=0",
            "parameter T = 0 is out of range; allowed: 2..=32",
        ),
        (
            "param ZZZ=1",
            "unknown parameter `ZZZ` for sharing_core; allowed: AGE_W",
        ),
        (
            "lock 99 99",
            "lock preset pair 99 owner 99; allowed: pair 0..8, owner 0..16",
        ),
    ] {
        let k = write(d, "k.txt", &small_sm_with(line));
        refuse_in(d, &["relssp", &k, "-o", &out], needle);
        // Without -o too: the printed program is as much sim's input.
        assert_usage_error(&smrtl(&["relssp", &k]), needle);
        // And sim says the same of the input.
        assert_usage_error(&smrtl(&["sim", &k]), needle);
    }
    // The kernel as shipped still goes through, and sim takes what relssp wrote.
    let o = smrtl(&["relssp", SMALL_SM, "-o", &out]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = smrtl(&["sim", "--kernel", &out]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// small-sm.txt padded with straight-line blocks after its last to `blocks` blocks in all.
fn small_sm_padded(blocks: usize) -> String {
    let mut text = fs::read_to_string(SMALL_SM).unwrap();
    for k in 4..blocks {
        text += &format!("PAD{k}:\n    alu r1 -> r2\n");
    }
    text
}

#[test]
fn relssp_split_blocks_count_against_the_block_limit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = p(d, "out.json");
    // At the limit, the split block would make 10 001: refused, the limit named.
    let k = write(d, "k.txt", &small_sm_padded(10_000));
    refuse_in(
        d,
        &["relssp", &k, "-o", &out],
        "the transformed kernel has 10001 blocks (1 split block added); allowed: 1..=10000 blocks, split blocks included",
    );
    // One block fewer fits, and sim takes the output.
    let k = write(d, "k.txt", &small_sm_padded(9_999));
    let o = smrtl(&["relssp", &k, "-o", &out]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = smrtl(&["sim", "--kernel", &out]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

// ---------------------------------------------------------------------------------------------
// Class 3: relssp's cost is exact or refused
// ---------------------------------------------------------------------------------------------

/// `depth` nested loops, each entered by its header `L<k>` and closed by `E<k>`; the innermost
/// body accesses both variables.
fn nested_loops(depth: usize) -> String {
    let mut s = String::from("kernel nest\nthreads 32\nt 1/2\nshared A 64\nshared B 64\n");
    for k in 0..depth {
        s += &format!("L{k}:\n    alu r1 -> r2\n");
    }
    s += "BODY:\n    ld.shared A -> r1\n    st.shared B r1\n";
    for k in (0..depth).rev() {
        let next = if k == 0 {
            "X".to_string()
        } else {
            format!("E{}", k - 1)
        };
        s += &format!("E{k}:\n    alu r1 -> r2\n    cbra L{k} {next} trips 2\n");
    }
    s + "X:\n    st.global r2\n"
}

#[test]
fn relssp_refuses_a_cost_beyond_u64_and_computes_the_others_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = p(d, "out.json");
    let k = write(d, "deep.txt", &nested_loops(19));
    refuse_in(
        d,
        &["relssp", &k, "-o", &out],
        "exceeds its limit of 18446744073709551615 (2^64 - 1)",
    );
    let o = smrtl(&["relssp", &k, "--json"]);
    assert_usage_error(&o, "at most 19 nested loops");
    // 17 deep: the body's 2 accesses weigh 10^17 each, exactly.
    let k = write(d, "ok.txt", &nested_loops(17));
    let o = smrtl(&["relssp", &k, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let cost = v["cost"].as_u64().unwrap();
    assert!(cost >= 100_000_000_000_000_000, "{cost}");
    assert!(cost < u64::MAX / 2, "not saturated: {cost}");
}

// ---------------------------------------------------------------------------------------------
// Class 4: no output may be an input
// ---------------------------------------------------------------------------------------------

/// The bytes and modification time of `path`.
fn stamp(path: &str) -> (Vec<u8>, std::time::SystemTime) {
    (
        fs::read(path).unwrap(),
        fs::metadata(path).unwrap().modified().unwrap(),
    )
}

/// `args` refused naming `input` as an input, `input` untouched and `dir` unchanged.
fn refuses_overwriting(dir: &Path, args: &[&str], input: &str) {
    let before = stamp(input);
    let o = smrtl(args);
    refused_leaving(
        dir,
        &o,
        "an input of this command (no output may be an input)",
    );
    assert_eq!(stamp(input), before, "{input} untouched: {args:?}");
}

#[test]
fn merge_never_overwrites_a_shard() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let shards: Vec<String> = (0..3).map(|i| p(d, &format!("s{i}.csv"))).collect();
    for (i, s) in shards.iter().enumerate() {
        let o = smrtl(&["sweep", SWEEP, "--shard", &format!("{i}/3"), "-o", s]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let (s0, s1, s2) = (&shards[0], &shards[1], &shards[2]);
    // A glob that put the output first: `smrtl merge s*.csv` with s1 first.
    refuses_overwriting(d, &["merge", s1, s0, s1, s2], s1);
    // Another name of the same file: a hard link, a symbolic link, a `./` spelling.
    fs::hard_link(s1, d.join("link.csv")).unwrap();
    std::os::unix::fs::symlink(s1, d.join("sym.csv")).unwrap();
    let dotted = format!("{}/./s1.csv", d.display());
    for out in [p(d, "link.csv"), p(d, "sym.csv"), dotted] {
        refuses_overwriting(d, &["merge", &out, s0, s1, s2], s1);
    }
    // A new output merges.
    let o = smrtl(&["merge", &p(d, "all.csv"), s0, s1, s2]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn no_command_writes_over_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spec = write(d, "spec.json", &fs::read_to_string(SWEEP).unwrap());
    refuses_overwriting(d, &["sweep", &spec, "-o", &spec], &spec);
    let stim = write(d, "stim.jsonl", "{\"acc\": 1}\n{\"acc\": 0}\n");
    refuses_overwriting(
        d,
        &["run", "req_counter", "--stim", &stim, "--out", &stim],
        &stim,
    );
    refuses_overwriting(
        d,
        &["run", "req_counter", "--stim", &stim, "--vcd", &stim],
        &stim,
    );
    let kernel = write(d, "k.txt", &fs::read_to_string(SMALL_SM).unwrap());
    refuses_overwriting(d, &["relssp", &kernel, "-o", &kernel], &kernel);
    let w = write(
        d,
        "w.json",
        &fs::read_to_string("examples/workloads/small.json").unwrap(),
    );
    refuses_overwriting(d, &["sim", &w, "--records", &w], &w);
    refuses_overwriting(d, &["sim", &w, "--vcd", &w], &w);
    refuses_overwriting(d, &["sim", "--workload", &w, "--records", &w], &w);
    // A sweep over input files: neither the spec nor one of its inputs is an output.
    let files_spec = serde_json::json!({"system": "elastic_sm", "inputs": [&w]}).to_string();
    let files_spec = write(d, "files.json", &files_spec);
    refuses_overwriting(d, &["sweep", &files_spec, "-o", &w], &w);
    // The GTKWave save file beside a VCD is an output too.
    let gtkw = write(d, "w.gtkw", "not a save file\n");
    refuses_overwriting(d, &["sim", &gtkw, "--vcd", &w], &gtkw);
    // cosim: a replay file is not overwritten by the VCD.
    let replay = p(d, "fail.json");
    let saved = serde_json::json!({
        "block": "req_counter", "params": {}, "cycles": [{"acc": "0x1"}]
    });
    fs::write(&replay, saved.to_string()).unwrap();
    refuses_overwriting(
        d,
        &[
            "cosim",
            "req_counter",
            "--replay",
            &replay,
            "--vcd",
            &replay,
        ],
        &replay,
    );
}

// ---------------------------------------------------------------------------------------------
// Class 5: --threads is bounded
// ---------------------------------------------------------------------------------------------

#[test]
fn sweep_threads_are_bounded_and_capped_at_the_points() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = p(d, "out.csv");
    for bad in ["100000", "1025", "0", "-1", "x"] {
        refuse_in(
            d,
            &["sweep", SWEEP, "--threads", bad, "-o", &out],
            "--threads <THREADS>': expected an integer in 1..=1024",
        );
    }
    let start = std::time::Instant::now();
    let o = smrtl(&["sweep", SWEEP, "--threads", "1024", "-o", &out]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("16 of 16 points (shard 0/1) on 16 threads"),
        "{}",
        stderr(&o)
    );
    assert!(start.elapsed().as_secs() < 60);
    let o = smrtl(&[
        "sweep",
        SWEEP,
        "--shard",
        "0/8",
        "--threads",
        "64",
        "-o",
        &out,
    ]);
    assert!(stderr(&o).contains("on 2 threads"), "{}", stderr(&o));
    // A negative shard is a value, refused by its own check.
    let o = smrtl(&["sweep", SWEEP, "--shard", "-1/2"]);
    assert_usage_error(&o, "-1/2");
}

// ---------------------------------------------------------------------------------------------
// Point 8: the parser's errors, numbers, strict input
// ---------------------------------------------------------------------------------------------

#[test]
fn parser_errors_are_one_line_with_the_allowed_values() {
    for (args, needle) in [
        (
            vec!["sim", "--backend", "foo"],
            "error: invalid value 'foo' for '--backend <BACKEND>'; allowed: model, rusthdl, verilator",
        ),
        (
            vec!["gen"],
            "error: the following required arguments were not provided: --output <OUTPUT> <BLOCK>",
        ),
        (vec!["frobnicate"], "error: unrecognized subcommand 'frobnicate'"),
        (vec!["list", "--bogus"], "error: unexpected argument '--bogus' found"),
        (
            vec!["cosim", "req_counter", "--cycles", "abc"],
            "'--cycles <CYCLES>': expected an integer in 1..=1000000000",
        ),
        (
            vec!["cosim", "req_counter", "--cycles", "-5"],
            "'--cycles <CYCLES>': expected an integer in 1..=1000000000",
        ),
        (
            vec!["relssp", "examples/relssp/a21.json", "--align", "-4"],
            "'--align <ALIGN>': expected an integer in 1..=4096",
        ),
        (
            vec!["sim", "--profile", "dct", "--waves", "-1"],
            "'--waves <N>': expected an integer in 1..=256",
        ),
        (
            vec!["sim", "--seed", "1.5", "--profile", "dct"],
            "'--seed <SEED>': expected an integer in 0..=18446744073709551615",
        ),
        (
            vec!["launch", "--smem", "-1", "--tb-smem", "1", "--tb-threads", "1"],
            "'--smem <BYTES>': expected an integer in 0..=18446744073709551615",
        ),
        // A negative fraction is a value, refused by its own check.
        (
            vec!["relssp", "examples/relssp/a21.json", "--t", "-1/3"],
            "--t: bad threshold `-1/3`; allowed: a fraction in (0, 1)",
        ),
    ] {
        let o = smrtl(&args);
        assert_usage_error(&o, needle);
        assert!(!stderr(&o).contains("Usage:") && !stderr(&o).contains("--help"));
    }
    // No command at all: the commands, in one line.
    assert_usage_error(
        &smrtl(&[]),
        "no command given; allowed: list, gen, cosim, run,",
    );
    // Help is still help.
    let o = smrtl(&["sim", "--help"]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn cycles_messages_say_why() {
    let o = smrtl(&["cosim", "req_counter", "--cycles", "2000000000"]);
    assert_usage_error(&o, "--cycles must be in 1..=1000000000, got 2000000000");
    assert!(!stderr(&o).contains("proves nothing"), "{}", stderr(&o));
    let o = smrtl(&["soak", "--cycles", "0"]);
    assert_usage_error(&o, "got 0 (a run of no cycles proves nothing)");
}

#[test]
fn a_repeated_set_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = p(d, "rc.v");
    refuse_in(
        d,
        &[
            "gen",
            "req_counter",
            "--set",
            "reqcnt_bits=4",
            "--set",
            "reqcnt_bits=8",
            "-o",
            &out,
        ],
        "--set reqcnt_bits is given more than once; allowed: one --set per name",
    );
    let o = smrtl(&["sim", "--profile", "dct", "--set", "W=8", "--set", "W=8"]);
    assert_usage_error(&o, "--set W is given more than once");
}

#[test]
fn stimulus_values_are_numbers_or_hex_strings() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = p(d, "out.jsonl");
    for bad in [
        r#""0x""#, r#""0x_""#, r#""+1""#, r#""1""#, "true", "-1", "1.5",
    ] {
        let stim = write(
            d,
            "s.jsonl",
            &format!("{{\"acc\": 1}}\n{{\"acc\": {bad}}}\n"),
        );
        let before = files(d);
        let o = smrtl(&["run", "req_counter", "--stim", &stim, "--out", &out]);
        assert_usage_error(&o, "cycle 1: port acc:");
        assert!(
            stderr(&o).contains(
                "allowed: an unsigned integer below 2^64 as a JSON number, or a \"0x...\" hex string"
            ),
            "{bad}: {}",
            stderr(&o)
        );
        assert_eq!(files(d), before);
    }
    // The documented forms still run.
    let stim = write(
        d,
        "s.jsonl",
        "{\"acc\": 1}\n{\"acc\": \"0x0\"}\n{\"acc\": \"0x_1\"}\n",
    );
    let o = smrtl(&["run", "req_counter", "--stim", &stim, "--out", &out]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn duplicate_json_keys_are_refused_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = p(d, "out.txt");
    let spec = write(
        d,
        "spec.json",
        r#"{"system": "elastic_sm", "workloads": ["dct"], "seeds": [1], "seeds": [2]}"#,
    );
    refuse_in(d, &["sweep", &spec, "-o", &out], "duplicate key `seeds`");
    let stim = write(d, "s.jsonl", "{\"acc\": 1, \"acc\": 0}\n");
    refuse_in(
        d,
        &["run", "req_counter", "--stim", &stim, "--out", &out],
        "duplicate key `acc` (each key may appear once) at line 1",
    );
    let w = write(
        d,
        "w.json",
        r#"{"warps": [[{"op": "alu", "pc": 0, "pc": 4}]]}"#,
    );
    refuse_in(d, &["sim", &w, "--records", &out], "duplicate key `pc`");
    refuse_in(d, &["sim", "--workload", &w], "duplicate key `pc`");
    let k = write(
        d,
        "k.json",
        r#"{"tb_smem": 64, "tb_smem": 128, "blocks": [{"name": "A", "instrs": []}]}"#,
    );
    refuse_in(d, &["relssp", &k, "-o", &out], "duplicate key `tb_smem`");
    refuse_in(d, &["sim", &k], "duplicate key `tb_smem`");
    let mem = write(
        d,
        "m.json",
        r#"{"kernels": ["sv"], "cycles": 100, "cycles": 200}"#,
    );
    refuse_in(d, &["sim", &mem], "duplicate key `cycles`");
    let replay = write(
        d,
        "r.json",
        r#"{"block": "req_counter", "block": "req_counter", "params": {}, "cycles": [{}]}"#,
    );
    refuse_in(
        d,
        &["cosim", "req_counter", "--replay", &replay],
        "duplicate key `block`",
    );
}

#[test]
fn workload_numbers_and_lengths_are_checked_by_field() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (text, needle) in [
        (
            r#"{"kernels": [{"bench": "sv", "iters": -1}], "cycles": 100}"#,
            "kernels[0]: `iters` = -1; allowed: an integer in 0..=4294967295",
        ),
        (
            r#"{"kernels": ["sv"], "cycles": -5}"#,
            "`cycles` = -5; allowed: an integer in 1..=1000000000",
        ),
        (
            r#"{"kernels": ["sv"], "tbs": [1.5], "cycles": 5}"#,
            "`tbs[0]` = 1.5; allowed: an integer in 1..=4294967295",
        ),
        (
            r#"{"kernels": ["sv", "bp"], "cycles": 100, "params": {"smil_limit": [1, 1, 1]}}"#,
            "params.smil_limit = [1, 1, 1] has 3 entries for 2 kernels; allowed: one limit per kernel, or none",
        ),
    ] {
        let m = write(d, "m.json", text);
        refuse_in(d, &["sim", &m], needle);
    }
    // A straight-line kernel with one warp per TB: the allowed stream count is just 1.
    let k = write(
        d,
        "k.json",
        r#"{"threads": 32, "smem": 64, "grid": 1, "warps": [[{"op": "alu", "dst": 1}], [{"op": "alu", "dst": 1}]]}"#,
    );
    let o = smrtl(&["sim", &k]);
    assert_usage_error(&o, "2 streams for 32 threads at LANES = 32; allowed: 1");
    assert!(!stderr(&o).contains("1 or 1"), "{}", stderr(&o));
}

#[test]
fn qbmi_arb_at_rpm_max_1_passes_verilator_lint() {
    if Command::new("verilator").arg("--version").output().is_err() {
        eprintln!("skipped: no verilator");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for rpm_max in ["1", "3", "7", "32"] {
        let v = p(dir.path(), "qbmi_arb.v");
        let set = format!("rpm_max={rpm_max}");
        let o = smrtl(&["gen", "qbmi_arb", "--set", &set, "-o", &v]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let top = stderr(&o) + &String::from_utf8(o.stdout).unwrap();
        let top = top
            .split("top module `")
            .nth(1)
            .unwrap()
            .split('`')
            .next()
            .unwrap();
        let lint = Command::new("verilator")
            .args([
                "--lint-only",
                "-Wall",
                "-Wno-UNUSEDSIGNAL",
                "-Wno-DECLFILENAME",
            ])
            .args(["--top-module", top, &v])
            .output()
            .unwrap();
        assert!(
            lint.status.success(),
            "rpm_max={rpm_max}: {}",
            String::from_utf8_lossy(&lint.stderr)
        );
    }
}
