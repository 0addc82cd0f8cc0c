//! Every VCD the `smrtl` command line writes has a GTKWave save file beside it (`run.vcd`,
//! `run.gtkw`) that names the dump and only signals the dump has. The save file's content is
//! checked in depth, with wellen and the vcd crate, by `testbench/tests/waveforms.rs`.

use std::collections::HashSet;
use std::path::Path;

mod common;
use common::smrtl;

fn run_ok(args: &[&str]) {
    let o = smrtl(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "smrtl {args:?}: {err}");
}

/// Every variable of the VCD at `path`, named as GTKWave names it (`top.scope.name[7:0]`).
fn vcd_names(path: &Path) -> HashSet<String> {
    fn walk(items: &[vcd::ScopeItem], path: &str, out: &mut HashSet<String>) {
        for it in items {
            match it {
                vcd::ScopeItem::Var(v) if v.size > 1 => {
                    out.insert(format!("{path}.{}[{}:0]", v.reference, v.size - 1));
                }
                vcd::ScopeItem::Var(v) => {
                    out.insert(format!("{path}.{}", v.reference));
                }
                vcd::ScopeItem::Scope(s) if path.is_empty() => {
                    walk(&s.children, &s.identifier, out)
                }
                vcd::ScopeItem::Scope(s) => {
                    walk(&s.children, &format!("{path}.{}", s.identifier), out)
                }
            }
        }
    }
    let text = std::fs::read(path).unwrap();
    let header = vcd::Parser::new(&text[..]).parse_header().unwrap();
    let mut names = HashSet::new();
    walk(&header.items, "", &mut names);
    names
}

/// Checks the save file beside the VCD at `vcd`; returns the signals it shows.
fn check_save_file(vcd: &Path) -> Vec<String> {
    let save = vcd.with_extension("gtkw");
    let text = std::fs::read_to_string(&save).unwrap_or_else(|e| panic!("{save:?}: {e}"));
    let file = vcd.file_name().unwrap().to_str().unwrap();
    assert!(text.contains(&format!("[dumpfile] \"{file}\"\n")), "{text}");
    let traces: Vec<String> = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with(['[', '*', '@', '-']))
        .map(|l| l.rsplit_once("} ").map_or(l, |(_, name)| name).to_string())
        .collect();
    let names = vcd_names(vcd);
    for t in &traces {
        assert!(names.contains(t), "{t} of {save:?} in the VCD");
    }
    assert!(traces[0].ends_with(".mismatch"), "the mismatch flag first");
    // The Surfer command file beside them adds the same variables in the same order.
    let sucl = vcd.with_extension("sucl");
    let text = std::fs::read_to_string(&sucl).unwrap_or_else(|e| panic!("{sucl:?}: {e}"));
    let added: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("variable_add "))
        .collect();
    let bare: Vec<&str> = traces
        .iter()
        .map(|t| t.split('[').next().unwrap())
        .collect();
    assert_eq!(added, bare, "{sucl:?}");
    traces
}

#[test]
fn cosim_writes_a_save_file_beside_the_vcd() {
    let dir = tempfile::tempdir().unwrap();
    let vcd = dir.path().join("run.vcd");
    let args = [
        "cosim",
        "bank_conflict_detector",
        "--preset",
        "ep8",
        "--cycles",
        "200",
    ];
    run_ok(&[&args[..], &["--vcd", vcd.to_str().unwrap()]].concat());
    let traces = check_save_file(&vcd);
    assert_eq!(traces[1], "bank_conflict_detector.model.degree[3:0]");
    assert_eq!(traces[2], "bank_conflict_detector.rtl.degree[3:0]");
}

#[test]
fn sim_writes_save_files_for_traces_and_workloads() {
    let dir = tempfile::tempdir().unwrap();
    let trace = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/traces/mixed.json");
    for backend in ["model", "rusthdl"] {
        let vcd = dir.path().join(format!("pipe-{backend}.vcd"));
        run_ok(&[
            "sim",
            "--trace",
            trace,
            "--backend",
            backend,
            "--vcd",
            vcd.to_str().unwrap(),
        ]);
        let traces = check_save_file(&vcd);
        let rtl = traces.iter().any(|t| t.contains(".rtl."));
        assert_eq!(
            rtl,
            backend == "rusthdl",
            "{backend}: RTL rows only with an RTL"
        );
    }
    let workload = dir.path().join("micro.json");
    std::fs::write(
        &workload,
        r#"{"params": {"M": 2, "N": 1, "Q": 2, "fe_depth": 1, "S": 2, "W": 4, "hc_sets": 16,
                       "gmem_return": {"icnt": 9}},
            "warps": [[{"op": "smem", "pc": 1, "degrees": [4, 2]}, {"op": "gld", "pc": 2}],
                      [{"op": "alu", "pc": 3}, {"op": "smem", "pc": 1, "degrees": [4, 2]}]]}"#,
    )
    .unwrap();
    let vcd = dir.path().join("core.vcd");
    let w = workload.to_str().unwrap();
    run_ok(&[
        "sim",
        "--workload",
        w,
        "--backend",
        "rusthdl",
        "--vcd",
        vcd.to_str().unwrap(),
    ]);
    let traces = check_save_file(&vcd);
    // Internal nets of nested instances, by their full path.
    assert!(traces.iter().any(|t| t.starts_with("sm_core.rtl.pipe.")));
}

#[test]
fn a_vcd_named_like_a_save_file_is_refused() {
    for ext in ["gtkw", "sucl"] {
        refused_as(ext);
    }
}

fn refused_as(ext: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("run.{ext}"));
    let o = smrtl(&[
        "cosim",
        "bank_conflict_detector",
        "--preset",
        "ep8",
        "--cycles",
        "10",
        "--vcd",
        path.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains(&format!(".{ext}")));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
}
