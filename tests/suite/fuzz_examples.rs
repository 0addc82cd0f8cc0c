//! The newer examples, mutated, through the commands that read them (docs/cli.md "Errors and
//! exit codes", "Limits"): memory workloads (`sim`), relssp kernels (`relssp`, whose output
//! `sim --kernel` must then take), the stall-inspector stimulus (`run stall_inspector`), the
//! conflict batch of E5 (`conflict --batch`) and the static analyzer's kernels (`bankan`).
//! testbench/tests/fuzz_parsers.rs fuzzes the parsers in process; this test runs the binary, as
//! a user would.
//!
//! Each case is a shipped example with one to three edits: a JSON value replaced by an edge
//! value (a huge or negative number, a fraction, a string, null, a list), a key removed or
//! added, or, in the text forms, a few bytes replaced, removed or repeated. Properties: the
//! exit code is 0, 1 (model and RTL differ) or 2; an exit 2 prints exactly one line, `error: …`;
//! no panic and no backtrace; nothing but the expected output is left in the directory; a
//! kernel `relssp` writes is one `sim --kernel` runs. Cases are drawn from a fixed seed, so a
//! failure reproduces; the report prints how many cases each example family tried and how they
//! ended.

use crate::common;

use common::smrtl_in;
use serde_json::Value;
use std::process::Output;

/// Cases per example file.
const CASES: usize = 40;
/// A mutated memory workload runs at most this many cycles (a mutation may ask for 10^9, which
/// is legal and takes minutes); the cap is applied after the mutation, to a valid number only.
const MEM_CYCLES_CAP: u64 = 20_000;
/// A relssp output is run with at most this many TBs (the grid does not change what `sim`
/// checks of the params, locks and blocks, only how long it runs).
const GRID_CAP: u64 = 64;

/// A small deterministic generator (xorshift64*), so the cases need no extra crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Values a mutation puts in place of a JSON value.
fn edge_value(r: &mut Rng) -> Value {
    let v = [
        "0",
        "-1",
        "1",
        "2",
        "3",
        "1.5",
        "1e300",
        "99999999999999999999",
        "4294967296",
        "18446744073709551615",
        "\"\"",
        "\"0x\"",
        "\"+1\"",
        "\"bp\"",
        "\"ks\"",
        "\"zz\"",
        "\"dmil\"",
        "\"qbmi\"",
        "null",
        "true",
        "[]",
        "[1, 2, 3]",
        "{}",
    ];
    serde_json::from_str(v[r.below(v.len())]).unwrap()
}

/// Every place in `v` a mutation may edit: (path of keys / indices, is an object).
fn places(v: &Value, path: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    out.push(path.clone());
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                path.push(Value::String(k.clone()));
                places(x, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(Value::from(i));
                places(x, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(v: &'a mut Value, path: &[Value]) -> &'a mut Value {
    path.iter().fold(v, |v, k| match k {
        Value::String(s) => &mut v[s.as_str()],
        Value::Number(n) => &mut v[n.as_u64().unwrap() as usize],
        _ => unreachable!(),
    })
}

/// One to three edits of a JSON value: replace a value, remove a key, add a key (a real one
/// from elsewhere in the value, or an unknown one).
fn mutate_json(base: &Value, r: &mut Rng) -> Value {
    let mut v = base.clone();
    for _ in 0..1 + r.below(3) {
        let mut all = vec![];
        places(&v, &mut vec![], &mut all);
        let path = all[r.below(all.len())].clone();
        match r.below(4) {
            0 | 1 if !path.is_empty() => *at(&mut v, &path) = edge_value(r),
            2 if !path.is_empty() => {
                let (last, parent) = path.split_last().unwrap();
                match (at(&mut v, parent), last) {
                    (Value::Object(o), Value::String(k)) => {
                        o.remove(k);
                    }
                    (Value::Array(a), Value::Number(i)) => {
                        a.remove(i.as_u64().unwrap() as usize);
                    }
                    _ => {}
                }
            }
            _ => {
                if let Value::Object(o) = at(&mut v, &path) {
                    let keys = ["cycles", "seed", "tbs", "params", "zz", "kernels", "grid"];
                    o.insert(keys[r.below(keys.len())].into(), edge_value(r));
                }
            }
        }
    }
    v
}

/// One to three byte-level edits of a text: replace, remove or repeat a short span.
fn mutate_text(base: &str, r: &mut Rng) -> String {
    let mut t = base.as_bytes().to_vec();
    for _ in 0..1 + r.below(3) {
        if t.is_empty() {
            break;
        }
        let i = r.below(t.len());
        let n = (1 + r.below(8)).min(t.len() - i);
        match r.below(3) {
            0 => {
                let bytes = b"0123456789 -=.\n#xTWRz:\"{},[]";
                for b in &mut t[i..i + n] {
                    *b = bytes[r.below(bytes.len())];
                }
            }
            1 => {
                t.drain(i..i + n);
            }
            _ => {
                let span: Vec<u8> = t[i..i + n].to_vec();
                t.splice(i..i, span);
            }
        }
    }
    String::from_utf8_lossy(&t).into_owned()
}

/// The common properties of one run; returns its exit code.
fn check(o: &Output, what: &str, input: &str) -> i32 {
    let err = common::stderr(o);
    let code = o.status.code().unwrap_or(-1);
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{what} panicked: {err}\ninput: {input}"
    );
    match code {
        0 | 1 => {}
        2 => assert!(
            err.starts_with("error: ") && err.trim_end().lines().count() == 1,
            "{what}: exit 2 must print one `error:` line, printed {err:?}\ninput: {input}"
        ),
        c => panic!("{what}: exit {c}: {err}\ninput: {input}"),
    }
    code
}

fn example(rel: &str) -> String {
    std::fs::read_to_string(format!("{}/examples/{rel}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn examples_in(rel: &str) -> Vec<(String, String)> {
    let dir = format!("{}/examples/{rel}", env!("CARGO_MANIFEST_DIR"));
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension()
                .is_some_and(|x| x == "json" || x == "txt" || x == "cu")
        })
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    v.sort();
    v
}

/// Exit codes seen, for the report.
#[derive(Default, Debug)]
struct Tally {
    cases: usize,
    ok: usize,
    refused: usize,
}

impl Tally {
    fn add(&mut self, code: i32) {
        self.cases += 1;
        if code == 2 {
            self.refused += 1;
        } else {
            self.ok += 1;
        }
    }
}

/// A mutated text of `base` (JSON edits when it is JSON, byte edits otherwise or half the
/// time), with the long-run caps applied.
fn case(base: &str, r: &mut Rng, cap: impl Fn(&mut Value)) -> String {
    match serde_json::from_str::<Value>(base) {
        Ok(v) if r.below(2) == 0 => {
            let mut m = mutate_json(&v, r);
            cap(&mut m);
            m.to_string()
        }
        _ => {
            let t = mutate_text(base, r);
            match serde_json::from_str::<Value>(&t) {
                Ok(mut v) => {
                    cap(&mut v);
                    v.to_string()
                }
                Err(_) => t,
            }
        }
    }
}

fn cap_number(v: &mut Value, key: &str, most: u64) {
    if let Some(n) = v.get(key).and_then(Value::as_u64) {
        if n > most {
            v[key] = most.into();
        }
    }
}

#[test]
fn mutated_memory_workloads_through_sim() {
    let mut r = Rng(0x5eed_0004);
    let mut t = Tally::default();
    for (name, base) in examples_in("mem") {
        for _ in 0..CASES {
            let dir = tempfile::tempdir().unwrap();
            let text = case(&base, &mut r, |v| cap_number(v, "cycles", MEM_CYCLES_CAP));
            std::fs::write(dir.path().join(&name), &text).unwrap();
            let o = smrtl_in(dir.path(), &["sim", "--system", "mem_sm", &name]);
            t.add(check(&o, "sim (mem workload)", &text));
            assert_eq!(common::files(dir.path()), [name.as_str()], "{text}");
        }
    }
    println!("memory workloads: {t:?}");
    assert!(t.ok > 0 && t.refused > 0, "{t:?}");
}

#[test]
fn mutated_bankan_kernels_through_bankan() {
    let mut r = Rng(0x5eed_0026);
    let mut t = Tally::default();
    for (name, base) in examples_in("bankan") {
        for _ in 0..CASES {
            let dir = tempfile::tempdir().unwrap();
            let text = case(&base, &mut r, |_| {});
            std::fs::write(dir.path().join(&name), &text).unwrap();
            let o = smrtl_in(dir.path(), &["bankan", &name, "--json"]);
            t.add(check(&o, "bankan", &text));
            let o = smrtl_in(dir.path(), &["bankan", &name, "--optimize"]);
            check(&o, "bankan --optimize", &text);
            assert_eq!(common::files(dir.path()), [name.as_str()], "{text}");
        }
    }
    println!("bankan kernels: {t:?}");
    assert!(t.ok > 0 && t.refused > 0, "{t:?}");
}

#[test]
fn mutated_relssp_kernels_through_relssp_then_sim() {
    let mut r = Rng(0x5eed_0001);
    let (mut t, mut ran) = (Tally::default(), 0);
    for (name, base) in examples_in("relssp") {
        let input = if name.ends_with(".txt") {
            "k.txt"
        } else {
            "k.json"
        };
        for _ in 0..CASES {
            let dir = tempfile::tempdir().unwrap();
            let text = case(&base, &mut r, |_| {});
            std::fs::write(dir.path().join(input), &text).unwrap();
            let o = smrtl_in(dir.path(), &["relssp", input, "-o", "out.json"]);
            let code = check(&o, "relssp", &text);
            t.add(code);
            if code != 0 {
                assert_eq!(common::files(dir.path()), [input], "{text}");
                continue;
            }
            // What relssp wrote, sim takes (with the grid capped so the run is short).
            let out = dir.path().join("out.json");
            let mut k: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap())
                .expect("relssp writes JSON");
            cap_number(&mut k, "grid", GRID_CAP);
            std::fs::write(&out, k.to_string()).unwrap();
            let o = smrtl_in(dir.path(), &["sim", "--kernel", "out.json"]);
            assert_eq!(
                o.status.code(),
                Some(0),
                "sim refuses what relssp wrote: {}\ninput: {text}",
                common::stderr(&o)
            );
            ran += 1;
        }
    }
    println!("relssp kernels: {t:?}, {ran} outputs run by sim");
    assert!(ran > 0 && t.refused > 0, "{t:?}");
}

#[test]
fn mutated_stall_inspector_stimulus_and_conflict_batch() {
    let mut r = Rng(0x5eed_0003);
    let targets = [
        (
            "run/stall-blame.jsonl",
            &["run", "stall_inspector", "--stim", "in.jsonl"][..],
        ),
        (
            "conflict/e5.jsonl",
            &["conflict", "--batch", "in.jsonl"][..],
        ),
    ];
    for (rel, args) in targets {
        let base = example(rel);
        let mut t = Tally::default();
        for _ in 0..2 * CASES {
            let dir = tempfile::tempdir().unwrap();
            let text = if r.below(2) == 0 {
                // One line's JSON edited.
                let mut lines: Vec<String> = base.lines().map(String::from).collect();
                let i = r.below(lines.len());
                if let Ok(v) = serde_json::from_str::<Value>(&lines[i]) {
                    lines[i] = mutate_json(&v, &mut r).to_string();
                }
                lines.join("\n") + "\n"
            } else {
                mutate_text(&base, &mut r)
            };
            std::fs::write(dir.path().join("in.jsonl"), &text).unwrap();
            t.add(check(&smrtl_in(dir.path(), args), rel, &text));
            assert_eq!(common::files(dir.path()), ["in.jsonl"], "{text}");
        }
        println!("{rel}: {t:?}");
        assert!(t.ok > 0 && t.refused > 0, "{rel}: {t:?}");
    }
}
