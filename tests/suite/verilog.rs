//! The Verilog a user takes away (docs/verilog.md): stable unique module names, a header whose
//! command regenerates the file exactly, hierarchy, readable lines, and files of several
//! configurations (and a block beside a parent that contains it) compiling together in one
//! Icarus, Verilator and Yosys invocation.

use smrtl_hdl::tools::external;
use std::path::Path;
use std::process::Command;

use crate::common;
use common::smrtl;

fn gen(dir: &Path, file: &str, args: &[&str]) -> String {
    let out = dir.join(file);
    let mut all = vec!["gen"];
    all.extend_from_slice(args);
    all.extend(["-o", out.to_str().unwrap()]);
    let o = smrtl(&all);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(out).unwrap()
}

/// Module names defined in `v`, in order.
fn modules(v: &str) -> Vec<String> {
    v.lines()
        .filter_map(|l| l.strip_prefix("module "))
        .map(|l| l.trim_end_matches(" (").to_string())
        .collect()
}

/// The regenerate command of a file's header, as arguments (shell quotes removed).
fn regenerate_args(v: &str) -> Vec<String> {
    let text: String = v
        .lines()
        .skip_while(|l| !l.starts_with("// regenerate with:"))
        .skip(1)
        .take_while(|l| l.starts_with("//   "))
        .map(|l| l.trim_start_matches("//").trim().trim_end_matches('\\'))
        .collect::<Vec<_>>()
        .join(" ");
    let mut args = vec![];
    let mut cur = String::new();
    let mut quoted = false;
    for c in text.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    args.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        args.push(cur);
    }
    assert_eq!(args.first().map(String::as_str), Some("smrtl"), "{text}");
    args.remove(0);
    args
}

#[test]
fn header_command_regenerates_the_same_file_and_names_are_stable() {
    let dir = tempfile::tempdir().unwrap();
    for (file, args) in [
        ("ep8.v", vec!["bank_conflict_detector", "--preset", "ep8"]),
        ("micro.v", vec!["sm_core", "--preset", "micro"]),
        ("hc.v", vec!["history_cache", "--set", "hc_sets=16"]),
    ] {
        let first = gen(dir.path(), file, &args);
        let again = gen(dir.path(), file, &args);
        assert_eq!(first, again, "{file}: deterministic");
        let path = dir.path().join(file);
        std::fs::remove_file(&path).unwrap();
        let regen = regenerate_args(&first);
        let regen: Vec<&str> = regen.iter().map(String::as_str).collect();
        let o = smrtl(&regen);
        assert!(o.status.success(), "{file}: {regen:?}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), first, "{file}");
        assert!(
            first.lines().all(|l| l.len() <= 300),
            "{file}: a line over 300 characters"
        );
    }
    // The default configuration keeps the plain name.
    let v = gen(dir.path(), "default.v", &["bank_conflict_detector"]);
    assert_eq!(modules(&v), ["bank_conflict_detector"]);
}

/// Whether `line` has `? x[N] : x[M]`: a 2:1 mux between two constant bit selects of one net, the node of
/// a hand-unrolled select where an indexed select `x[i]` would do (docs/verilog.md "Indexed
/// selects").
fn is_mux_chain(line: &str) -> bool {
    // The net name of a constant bit select `name[N]`.
    let atom = |t: &str| -> Option<String> {
        let t = t.trim_end_matches([';', ')', ',']);
        let (name, rest) = t.split_once('[')?;
        let ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && rest
                .strip_suffix(']')
                .is_some_and(|n| n.parse::<u32>().is_ok());
        ok.then(|| name.to_string())
    };
    let words: Vec<&str> = line.split_whitespace().collect();
    words
        .windows(4)
        .any(|w| w[0] == "?" && w[2] == ":" && atom(w[1]).is_some_and(|x| atom(w[3]) == Some(x)))
}

#[test]
fn every_preset_emits_short_lines() {
    let list: serde_json::Value =
        serde_json::from_slice(&smrtl(&["list", "--json"]).stdout).expect("list --json");
    let dir = tempfile::tempdir().unwrap();
    let mut files = 0;
    for block in list.as_array().unwrap() {
        let name = block["block"].as_str().unwrap();
        for preset in block["presets"].as_array().unwrap() {
            let preset = preset["name"].as_str().unwrap();
            let v = gen(dir.path(), "p.v", &[name, "--preset", preset]);
            let longest = v.lines().map(str::len).max().unwrap_or(0);
            assert!(
                longest <= 300,
                "{name} {preset}: a line of {longest} characters"
            );
            if let Some(line) = v.lines().find(|l| is_mux_chain(l)) {
                panic!("{name} {preset}: a select unrolled as a mux tree: {line}");
            }
            files += 1;
        }
    }
    assert!(files >= 10, "{files} presets");
}

#[test]
fn sm_core_is_a_hierarchy() {
    let dir = tempfile::tempdir().unwrap();
    let v = gen(dir.path(), "sm.v", &["sm_core"]);
    let names = modules(&v);
    assert_eq!(names[0], "sm_core");
    for part in [
        "elastic_pipeline",
        "bank_conflict_detector",
        "history_cache",
        "sm_core_sched",
    ] {
        assert!(
            names.iter().any(|n| n.starts_with(part)),
            "{part} in {names:?}"
        );
    }
    for inst in ["pipe (", "hc (", "sched (", "det ("] {
        assert!(v.contains(inst), "instance {inst}");
    }
    assert!(v.lines().all(|l| l.len() <= 300));
}

#[test]
fn configurations_and_parents_compile_together() {
    if !external(&["iverilog", "verilator", "yosys"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = gen(d, "a.v", &["bank_conflict_detector", "--preset", "ep8"]);
    let b = gen(d, "b.v", &["bank_conflict_detector", "--preset", "tesla"]);
    let c = gen(d, "c.v", &["elastic_pipeline", "--preset", "micro"]);
    let (na, nb, nc) = (modules(&a), modules(&b), modules(&c));
    assert_ne!(na[0], nb[0], "two configurations, two names");
    // The micro pipeline's MEM0 detector is the ep8 configuration: a.v and c.v share it.
    assert!(nc.contains(&na[0]), "{nc:?} contains {}", na[0]);
    let files = ["a.v", "b.v", "c.v"];
    let run = |cmd: &mut Command, what: &str| {
        let o = cmd.current_dir(d).output().expect(what);
        assert!(
            o.status.success(),
            "{what}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    };
    run(
        Command::new("iverilog")
            .args(["-g2012", "-o", "all.vvp"])
            .args(files),
        "iverilog",
    );
    run(
        Command::new("verilator")
            .args(["--lint-only", "-Wall", "-Wno-UNUSEDSIGNAL", "-Wno-MULTITOP"])
            .args(["-Wno-DECLFILENAME"])
            .args(files),
        "verilator",
    );
    // Every module of the three files elaborated together (three tops), processes to netlists,
    // and Yosys's design check must pass.
    let script = format!(
        "read_verilog {}; hierarchy -check; proc; opt_clean; check -assert; stat",
        files.join(" ")
    );
    run(Command::new("yosys").args(["-q", "-p", &script]), "yosys");
}
