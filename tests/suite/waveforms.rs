//! Every VCD the `smrtl` command line writes has a GTKWave save file beside it (`run.vcd`,
//! `run.gtkw`) that names the dump and only signals the dump has. The save file's content is
//! checked in depth, with wellen and the vcd crate, by `testbench/tests/waveforms.rs`.

use std::collections::HashSet;
use std::path::Path;

use crate::common;
use common::smrtl;

fn run_ok(args: &[&str]) {
    let o = smrtl(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "smrtl {args:?}: {err}");
}

/// Every variable declared in `items` under the scope path `path`: its id, its dotted path
/// (`top.scope.name`) and its width.
fn vcd_vars(items: &[vcd::ScopeItem], path: &str, out: &mut Vec<(vcd::IdCode, String, u32)>) {
    for it in items {
        match it {
            vcd::ScopeItem::Var(v) => out.push((v.code, format!("{path}.{}", v.reference), v.size)),
            vcd::ScopeItem::Scope(s) if path.is_empty() => {
                vcd_vars(&s.children, &s.identifier, out)
            }
            vcd::ScopeItem::Scope(s) => {
                vcd_vars(&s.children, &format!("{path}.{}", s.identifier), out)
            }
        }
    }
}

/// Every variable of the VCD at `path`, named as GTKWave names it (`top.scope.name[7:0]`).
fn vcd_names(path: &Path) -> HashSet<String> {
    let text = std::fs::read(path).unwrap();
    let header = vcd::Parser::new(&text[..]).parse_header().unwrap();
    let mut vars = vec![];
    vcd_vars(&header.items, "", &mut vars);
    vars.into_iter()
        .map(|(_, name, size)| match size {
            1 => name,
            _ => format!("{name}[{}:0]", size - 1),
        })
        .collect()
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

/// Every value change of the VCD at `path`: variable (scope path and name, as
/// [`vcd_names`] spells it without the range) → the value at each timestamp it is set.
fn vcd_values(path: &Path) -> std::collections::HashMap<String, Vec<(u64, Vec<vcd::Value>)>> {
    let text = std::fs::read(path).unwrap();
    let mut parser = vcd::Parser::new(&text[..]);
    let header = parser.parse_header().unwrap();
    let mut vars = vec![];
    vcd_vars(&header.items, "", &mut vars);
    let by_id: std::collections::HashMap<_, _> =
        vars.into_iter().map(|(id, name, _)| (id, name)).collect();
    let mut values: std::collections::HashMap<String, Vec<(u64, Vec<vcd::Value>)>> =
        Default::default();
    let mut t = 0;
    for command in parser {
        let (id, v) = match command.unwrap() {
            vcd::Command::Timestamp(x) => {
                t = x;
                continue;
            }
            vcd::Command::ChangeScalar(id, v) => (id, vec![v]),
            vcd::Command::ChangeVector(id, v) => (id, v.into_iter().collect()),
            _ => continue,
        };
        values.entry(by_id[&id].clone()).or_default().push((t, v));
    }
    values
}

/// Each `arrays` bus `SCOPE.NAME` of the VCD at `vcd` is shown per element too, `NAME_0` …
/// `NAME_{n-1}` (element 0 lowest, as many as the bus holds), and every element equals its
/// field of the bus at every time either changes (docs/cli.md "Waveforms").
fn check_elements(vcd: &Path, arrays: &[&str]) {
    let values = vcd_values(vcd);
    let at = |name: &str, t: u64| -> Vec<vcd::Value> {
        let changes = &values[name];
        let i = changes.partition_point(|(x, _)| *x <= t);
        assert!(i > 0, "{name} has no value at {t}");
        changes[i - 1].1.clone()
    };
    for bus in arrays {
        let elems: Vec<String> = (0..)
            .map(|k| format!("{bus}_{k}"))
            .take_while(|e| values.contains_key(e))
            .collect();
        assert!(elems.len() >= 2, "{vcd:?}: {bus} per element");
        let width = values[*bus][0].1.len();
        let start = elems
            .iter()
            .chain(std::iter::once(&bus.to_string()))
            .map(|e| values[e.as_str()][0].0)
            .max()
            .unwrap();
        let w = width / elems.len();
        assert_eq!(w * elems.len(), width, "{bus}: {} elements", elems.len());
        let mut times: Vec<u64> = elems
            .iter()
            .chain(std::iter::once(&bus.to_string()))
            .flat_map(|e| values[e.as_str()].iter().map(|(t, _)| *t))
            .collect();
        times.sort_unstable();
        times.dedup();
        for t in times.into_iter().filter(|t| *t >= start) {
            let whole = at(bus, t);
            for (k, e) in elems.iter().enumerate() {
                // Vectors are written MSB first: element k is `width - (k+1)*w ..`.
                let field = &whole[width - (k + 1) * w..width - k * w];
                assert_eq!(at(e, t), field, "{e} at {t}");
            }
        }
    }
}

#[test]
fn array_ports_are_shown_per_element() {
    let dir = tempfile::tempdir().unwrap();
    let path = |f: &str| dir.path().join(f).to_str().unwrap().to_string();
    let example = |f: &str| format!("{}/examples/{f}", env!("CARGO_MANIFEST_DIR"));
    // mem_issue_ctl: per-kernel registers and ports, model alone and with the RTL in the loop.
    for backend in ["model", "rusthdl"] {
        let vcd = path(&format!("mem-{backend}.vcd"));
        run_ok(&[
            "sim",
            "--mem-workload",
            &example("mem/bp_sv.json"),
            "--set",
            "scheme=dmil",
            "--backend",
            backend,
            "--vcd",
            &vcd,
        ]);
        let traces = check_save_file(Path::new(&vcd));
        assert!(traces.iter().any(|t| t.ends_with("model.inflight_1[6:0]")));
        // The model alone dumps the whole pipeline; with the RTL, the control beside it.
        let arrays: &[&str] = match backend {
            "model" => &["mem_pipeline.model.inflight", "mem_pipeline.model.rsfail"],
            _ => &[
                "mem_issue_ctl.model.inflight",
                "mem_issue_ctl.rtl.inflight",
                "mem_issue_ctl.rtl.reqcnt",
            ],
        };
        check_elements(Path::new(&vcd), arrays);
    }
    // sharing_core: per-warp inputs; sm_core: per-warp inputs.
    let vcd = path("sharing.vcd");
    let kernel = example("sharing/fig5-owf.json");
    run_ok(&[
        "sim",
        "--kernel",
        &kernel,
        "--backend",
        "rusthdl",
        "--vcd",
        &vcd,
    ]);
    check_save_file(Path::new(&vcd));
    check_elements(
        Path::new(&vcd),
        &["sharing_core.stim.live", "sharing_core.stim.warp_slot"],
    );
    let workload = example("workloads/small.json");
    let vcd = path("core.vcd");
    run_ok(&[
        "sim",
        "--workload",
        &workload,
        "--backend",
        "rusthdl",
        "--vcd",
        &vcd,
    ]);
    check_save_file(Path::new(&vcd));
    check_elements(Path::new(&vcd), &["sm_core.stim.pc", "sm_core.stim.kind"]);
}
