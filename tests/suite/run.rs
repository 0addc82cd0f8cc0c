//! `smrtl run BLOCK --stim FILE`: every block on every backend, per-cycle JSON-line outputs,
//! directed spec scenarios, and bad stimulus as a one-line error (exit 2, no output file).

use proptest::strategy::{Strategy, ValueTree};
use serde_json::Value;
use smrtl_testbench::check;
use std::path::Path;
use std::process::Output;

use crate::common;
use common::{smrtl, stderr};

fn lines(o: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// The smallest preset of every block (the one the conformance suite gives the external tools
/// on every run, so a Verilator build is shared), as `smrtl run` arguments.
fn small_preset(entry: &smrtl_testbench::BlockEntry) -> &'static str {
    smrtl_testbench::conformance::smallest_preset(entry)
}

/// A random case of `d` as JSON lines (every input, every cycle) and the model's outputs as
/// `smrtl run` prints them.
fn vectors(d: &smrtl_testbench::Design, cycles: usize) -> (String, Vec<Vec<u64>>) {
    let case = check::first_cycles(d, 7, cycles);
    let file =
        smrtl_testbench::stimulus_file::StimulusFile::new(d.name, &d.params, &d.layout, &case);
    let text: String = file
        .cycles
        .iter()
        .map(|c| serde_json::to_string(c).unwrap() + "\n")
        .collect();
    let r = check::run_vectors(d, None, &case, None);
    (text, r.outputs)
}

/// Output port `s` of a printed line as words.
fn words(v: &Value, width: usize) -> Vec<u64> {
    let n = width.div_ceil(64);
    let mut w = vec![0u64; n];
    match v {
        Value::Number(x) => w[0] = x.as_u64().unwrap(),
        Value::String(s) => {
            let hex = s.strip_prefix("0x").unwrap();
            for (i, ch) in hex.chars().rev().enumerate() {
                w[i / 16] |= (ch.to_digit(16).unwrap() as u64) << (4 * (i % 16));
            }
        }
        other => panic!("unexpected value {other}"),
    }
    w
}

fn check_outputs(d: &smrtl_testbench::Design, printed: &[Value], expected: &[Vec<u64>]) {
    assert_eq!(printed.len(), expected.len(), "one line per cycle");
    for (c, (line, exp)) in printed.iter().zip(expected).enumerate() {
        assert_eq!(line["cycle"], c as u64);
        assert_eq!(line.as_object().unwrap().len(), d.layout.outputs.len() + 1);
        for s in &d.layout.outputs {
            assert_eq!(
                words(&line[&s.name], s.width),
                s.of(exp),
                "cycle {c} port {}",
                s.name
            );
        }
    }
}

/// Runs every block's smallest preset on `backend` with `cycles` random vectors and checks the
/// printed lines against the model's outputs (with `--out` when `to_file`).
fn every_block_on(backend: &str, cycles: usize, to_file: bool) {
    let dir = tempfile::tempdir().unwrap();
    for entry in smrtl_testbench::blocks() {
        let preset = small_preset(&entry);
        let d = (entry.configure)(Some(preset), &[]).unwrap();
        let (text, expected) = vectors(&d, cycles);
        let stim = write(dir.path(), &format!("{}.jsonl", d.name), &text);
        let out = dir.path().join(format!("{}-{backend}.jsonl", d.name));
        let mut args = vec![
            "run",
            d.name,
            "--preset",
            preset,
            "--stim",
            &stim,
            "--backend",
            backend,
        ];
        let out_arg = out.display().to_string();
        if to_file {
            args.extend(["--out", &out_arg]);
        }
        let o = smrtl(&args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{} {backend}: {}",
            d.name,
            stderr(&o)
        );
        let printed = if to_file {
            assert!(o.stdout.is_empty(), "--out takes the lines");
            std::fs::read_to_string(&out)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        } else {
            lines(&o)
        };
        check_outputs(&d, &printed, &expected);
    }
}

#[test]
fn every_block_runs_on_the_model_and_rusthdl_with_identical_outputs() {
    every_block_on("model", 60, false);
    every_block_on("rusthdl", 60, true);
}

#[test]
fn external_backends_run_every_block_and_agree_with_the_model() {
    for (tool, backend) in [("verilator", "verilator"), ("iverilog", "icarus")] {
        if smrtl_testbench::external(tool) {
            every_block_on(backend, 40, false);
        }
    }
}

/// docs/bank-conflicts.md §1.4 on the `ep8` detector (L = B = 8, W = 4): eight lanes in bank 0,
/// each in its own layer, take eight cycles; the same word for every lane is one broadcast;
/// lanes not given keep their value, so the mask alone changes the third cycle.
#[test]
fn detector_scenarios_through_run() {
    let dir = tempfile::tempdir().unwrap();
    // Byte address of lane l: layer l of bank 0 = l * B * W = l * 32 (A = 14 bits per lane).
    let layered: u128 = (0..8).fold(0, |a, l| a | (l as u128 * 32) << (14 * l));
    let text = format!(
        "{{\"valid\":1,\"lane_mask\":255,\"addr\":\"0x{layered:x}\"}}\n\
         {{\"addr\":0}}\n\
         {{\"addr\":\"0x{layered:x}\"}}\n\
         {{\"lane_mask\":3}}\n"
    );
    let stim = write(dir.path(), "d.jsonl", &text);
    for backend in ["model", "rusthdl"] {
        let o = smrtl(&[
            "run",
            "bank_conflict_detector",
            "--preset",
            "ep8",
            "--stim",
            &stim,
            "--backend",
            backend,
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let degrees: Vec<u64> = lines(&o)
            .iter()
            .map(|l| l["degree"].as_u64().unwrap())
            .collect();
        assert_eq!(degrees, [8, 1, 8, 2], "{backend}");
    }
}

/// Bad stimulus: a one-line error naming the cycle and the port, exit 2, no output file.
#[test]
fn bad_stimulus_is_one_line_naming_cycle_and_port() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.jsonl");
    for (text, needles) in [
        (
            "{\"valid\":1}\n{\"bogus\":1}\n",
            vec![
                "cycle 1",
                "unknown input port `bogus`",
                "allowed: reset, valid",
            ],
        ),
        (
            "{\"valid\":3}\n",
            vec!["cycle 0", "port valid", "wider than the port's 1 bits"],
        ),
        (
            "{\"addr\":\"0x1_0000_0000_0000_0000_0000_0000_0000\"}\n",
            vec!["cycle 0", "port addr", "wider"],
        ),
        (
            "{\"valid\":1}\n{\"valid\":1\n",
            vec!["line 2 (cycle 1)", "malformed JSON"],
        ),
        (
            "{\"valid\":-1}\n",
            vec!["cycle 0", "port valid", "not an unsigned integer"],
        ),
        ("[1]\n", vec!["line 1 (cycle 0)", "expected an object"]),
        ("\n", vec!["no cycles"]),
    ] {
        let stim = write(dir.path(), "bad.jsonl", text);
        let o = smrtl(&[
            "run",
            "bank_conflict_detector",
            "--preset",
            "ep8",
            "--stim",
            &stim,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{text}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        for n in needles {
            assert!(err.contains(n), "`{n}` in {err}");
        }
        assert!(!out.exists(), "no output file for {text}");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }
}

/// A replay file (as `smrtl cosim` saves for a failure) runs too, with its own params.
#[test]
fn replay_files_run_with_their_params() {
    let dir = tempfile::tempdir().unwrap();
    let entry = smrtl_testbench::block("history_cache").unwrap();
    let d = (entry.configure)(Some("small"), &[]).unwrap();
    let mut runner = check::runner(3);
    let case = d.cases().new_tree(&mut runner).unwrap().current();
    let file =
        smrtl_testbench::stimulus_file::StimulusFile::new(d.name, &d.params, &d.layout, &case);
    let stim = write(dir.path(), "r.json", &serde_json::to_string(&file).unwrap());
    let o = smrtl(&[
        "run",
        "history_cache",
        "--stim",
        &stim,
        "--backend",
        "rusthdl",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    check_outputs(
        &d,
        &lines(&o),
        &check::run_vectors(&d, None, &case, None).outputs,
    );
    let o = smrtl(&["run", "bank_conflict_detector", "--stim", &stim]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("stimulus is for block `history_cache`"));
}
