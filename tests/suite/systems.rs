//! The systems through the CLI (docs/cli.md §"Systems"): `smrtl sim FILE` on every kind (its
//! kind recognised, or named by a `"kind"` field), `--system NAME --profile P`, the deprecated
//! aliases giving the same bytes, the unknown-kind refusal, `bench --system`, a sweep of a
//! system other than the default, and `list --systems`.

use crate::common;

use common::{assert_usage_error, files, smrtl, stderr, stdout};
use serde_json::Value;
use std::path::Path;

/// `smrtl args`, which must succeed; its stdout.
fn ok(args: &[&str]) -> String {
    let o = smrtl(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&ok(args)).unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// `smrtl sim FILE` gives the bytes of the flag each kind answered to before.
#[test]
fn sim_file_is_its_deprecated_alias_on_every_kind() {
    for (file, flag) in [
        ("examples/traces/fig4_two_subwarps.json", "--trace"),
        ("examples/workloads/small.json", "--workload"),
        ("examples/sharing/fig5-owf.json", "--kernel"),
        ("examples/sharing/three-phase.txt", "--kernel"),
        ("examples/relssp/a21.json", "--kernel"),
        ("examples/mem/explicit.json", "--mem-workload"),
    ] {
        for json in [false, true] {
            let mut new = vec!["sim", file];
            let mut old = vec!["sim", flag, file];
            if json {
                new.push("--json");
                old.push("--json");
            }
            assert_eq!(ok(&new), ok(&old), "{file} {flag}");
        }
    }
}

/// One small run per system with the RTL in the loop on rust-hdl: the model's figures.
#[test]
fn sim_file_with_the_rtl_in_the_loop_on_each_system() {
    let dir = tempfile::tempdir().unwrap();
    let mem = write(
        dir.path(),
        "mem.json",
        r#"{"kernels": ["bp", "sv"], "tbs": [2, 2], "cycles": 400, "seed": 3, "params": {"scheme": "qbmi_dmil"}}"#,
    );
    for file in [
        "examples/traces/fig4_two_subwarps.json",
        "examples/sharing/fig5-uwf.json",
        mem.as_str(),
    ] {
        let mut model = json(&["sim", file, "--json"]);
        let mut rtl = json(&["sim", file, "--json", "--backend", "rusthdl"]);
        assert_eq!(
            (&model["backend"], &rtl["backend"]),
            (&"model".into(), &"rusthdl".into())
        );
        model["backend"] = Value::Null;
        rtl["backend"] = Value::Null;
        assert_eq!(model, rtl, "{file}");
    }
}

/// `--system NAME --profile P` is what the deprecated profile flags ran, and a `mem_sm`
/// profile is a Table-2 workload of 10^5 cycles per wave.
#[test]
fn sim_system_profile_runs_the_built_in_inputs() {
    let new = ok(&[
        "sim",
        "--system",
        "elastic_sm",
        "--profile",
        "transpose",
        "--seed",
        "3",
        "--set",
        "sched=rr",
        "--json",
    ]);
    let old = ok(&[
        "sim",
        "--profile",
        "transpose",
        "--seed",
        "3",
        "--set",
        "sched=rr",
        "--json",
    ]);
    assert_eq!(new, old);
    let new = ok(&["sim", "--system", "sharing_sm", "--profile", "nw1"]);
    assert_eq!(new, ok(&["sim", "--kernel-profile", "NW1"]));
    let v = json(&[
        "sim",
        "--system",
        "mem_sm",
        "--profile",
        "BP+sv",
        "--seed",
        "2",
        "--json",
    ]);
    assert_eq!(v["cycles"], 100_000);
    assert_eq!(v["seed"], 2);
    let names: Vec<&str> = v["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bp", "sv"]);
    for (args, needle) in [
        (
            vec!["sim", "--system", "mem_sm", "--profile", "bp+zz"],
            "unknown profile `bp+zz`: no benchmark `zz`; allowed: cp, hs",
        ),
        (
            vec!["sim", "--system", "sharing_sm", "--profile", "fft"],
            "unknown kernel profile `fft`",
        ),
        (
            vec![
                "sim",
                "--system",
                "mem_sm",
                "--profile",
                "bp",
                "--waves",
                "0",
            ],
            "waves must be in 1..=256",
        ),
        (
            vec!["sim", "--system", "nope", "--profile", "bp"],
            "unknown system `nope`; allowed: elastic_sm, sharing_sm, mem_sm, coh_sm",
        ),
        (
            vec!["sim", "--system", "mem_sm"],
            "--system mem_sm needs FILE or --profile NAME",
        ),
        (
            vec!["sim", "--system", "coh_sm"],
            "--system coh_sm needs FILE (it has no built-in profiles)",
        ),
        (
            vec!["sim", "--system", "coh_sm", "--profile", "uts"],
            "coh_sm has no built-in profiles",
        ),
        (
            vec!["sim", "examples/coh/small.coh", "--set", "warps=0"],
            "parameter warps = 0 is out of range",
        ),
        (
            vec!["sim", "examples/coh/small.coh", "--vcd", "x.vcd"],
            "--vcd shows each SM's stall_inspector RTL: it needs --backend rusthdl or verilator",
        ),
        (
            vec![
                "sim",
                "--system",
                "mem_sm",
                "--profile",
                "bp",
                "--set",
                "M=2",
            ],
            "unknown parameter `M` for mem_sm; allowed: scheme, sched",
        ),
        (
            vec!["sim", "--system", "mem_sm", "--kernel-profile", "NW1"],
            "--kernel-profile is an input of sharing_sm, not of mem_sm",
        ),
        (
            vec!["sim", "examples/mem/bp_sv.json", "--profile", "dct"],
            "give one input, not both FILE and --profile",
        ),
    ] {
        assert_usage_error(&smrtl(&args), needle);
    }
}

/// A file no kind claims is one line naming every kind, before any output is written; a
/// `"kind"` field names the kind whatever the shape, and must agree with an alias flag.
#[test]
fn kinds_are_recognised_or_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let records = d.join("r.jsonl").display().to_string();
    let kinds =
        "trace (elastic_sm), workload (elastic_sm), kernel (sharing_sm), mem-workload (mem_sm), coh-kernel (coh_sm)";
    for (name, text, needle) in [
        (
            "a.json",
            r#"{"params": {"M": 2}}"#,
            "cannot tell its kind from its keys (params)",
        ),
        ("b.csv", "1,2,3\n", "no kind reads text files named .csv"),
        (
            "c.json",
            r#"{"kind": "vcd", "stream": []}"#,
            r#"unknown "kind" "vcd""#,
        ),
        ("d.json", "{\"stream\": [", "not JSON"),
    ] {
        let f = write(d, name, text);
        let o = smrtl(&["sim", &f, "--records", &records]);
        assert_usage_error(&o, needle);
        assert!(stderr(&o).contains(kinds), "{}", stderr(&o));
    }
    assert_eq!(
        files(d),
        ["a.json", "b.csv", "c.json", "d.json"],
        "no output"
    );
    // A "kind" field (any place, any spacing): the same run as without it.
    let fig4 = std::fs::read_to_string("examples/traces/fig4_two_subwarps.json").unwrap();
    let with = fig4.replacen('{', "{\n  \"kind\" : \"trace\",", 1);
    let f = write(d, "t.json", &with);
    let want = ok(&["sim", "examples/traces/fig4_two_subwarps.json", "--json"]);
    assert_eq!(ok(&["sim", &f, "--json"]), want);
    assert_eq!(ok(&["sim", "--trace", &f, "--json"]), want);
    assert_usage_error(
        &smrtl(&["sim", "--kernel", &f]),
        r#"its "kind" is "trace", not "kernel""#,
    );
    // A "kind" field between the other keys.
    let m = write(
        d,
        "m.json",
        r#"{"cycles": 300, "kind": "mem-workload", "kernels": ["sv"]}"#,
    );
    assert_eq!(json(&["sim", &m, "--json"])["cycles"], 300);
    // With --system, the file must be one of its inputs.
    assert_usage_error(
        &smrtl(&[
            "sim",
            "--system",
            "sharing_sm",
            "examples/traces/mixed.json",
        ]),
        "is a trace file of elastic_sm, not an input of sharing_sm (its kinds: kernel)",
    );
    // A `--set` names a param of the system in any case, as its declaration spells it.
    for file in [
        "examples/workloads/small.json",
        "examples/traces/mixed.json",
    ] {
        assert_eq!(
            ok(&["sim", file, "--set", "m=3", "--json"]),
            ok(&["sim", file, "--set", "M=3", "--json"])
        );
    }
    // A trace takes only the pipeline's parameters of elastic_sm.
    assert_usage_error(
        &smrtl(&["sim", "examples/traces/mixed.json", "--set", "sched=rr"]),
        "parameter sched does not apply to a trace",
    );
    let o = smrtl(&["sim"]);
    assert_usage_error(
        &o,
        "no input: give FILE (kinds: trace, workload, kernel, mem-workload, coh-kernel)",
    );
    for alias in [
        "--trace FILE",
        "--kernel-profile NAME",
        "--mem-workload FILE",
    ] {
        assert!(stderr(&o).contains(alias), "{alias}: {}", stderr(&o));
    }
}

/// `bench --system` races the model alone and with the RTL in the loop, on a file or a
/// profile, for any system.
#[test]
fn bench_system_races_the_model_and_the_rtl_in_the_loop() {
    let dir = tempfile::tempdir().unwrap();
    let mem = write(
        dir.path(),
        "mem.json",
        r#"{"kernels": ["bp"], "tbs": [2], "cycles": 300, "seed": 1}"#,
    );
    for args in [
        vec![
            "bench",
            "--system",
            "sharing_sm",
            "examples/sharing/fig5-owf.json",
        ],
        vec!["bench", "--system", "mem_sm", mem.as_str()],
        vec![
            "bench",
            "--system",
            "elastic_sm",
            "examples/traces/fig4_two_subwarps.json",
        ],
    ] {
        let mut with_json = args.clone();
        with_json.push("--json");
        let v = json(&with_json);
        assert_eq!(v["system"], args[2], "{args:?}");
        let rate = |name: &str| {
            v["rates"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["backend"] == name)
                .and_then(|r| r["cycles_per_second"].as_f64())
        };
        assert!(rate("model").unwrap() > 0.0, "{v}");
        assert!(rate("cosim:rusthdl").unwrap() > 0.0, "{v}");
        if smrtl_testbench::external("verilator") {
            assert!(rate("cosim:verilator").is_some(), "{v}");
        }
    }
    let text = ok(&[
        "bench",
        "--system",
        "sharing_sm",
        "examples/sharing/fig5-owf.json",
    ]);
    assert!(
        text.starts_with("bench sharing_core examples/sharing/fig5-owf.json (13 cycles"),
        "{text}"
    );
    for (args, needle) in [
        (
            vec!["bench", "--system", "mem_sm"],
            "--system mem_sm needs FILE or --profile NAME",
        ),
        (
            vec!["bench", "--system", "mem_sm", &mem, "--preset", "x"],
            "--preset does not apply with --system",
        ),
        (
            vec!["bench", "sm_core", "--profile", "dct", "--preset", "micro"],
            "--preset does not apply with --profile",
        ),
        (
            vec!["bench", "milg", "--profile", "dct"],
            "--profile runs a workload on `sm_core`, not on `milg`",
        ),
        (
            vec!["bench"],
            "bench needs a BLOCK, or --system NAME with FILE or --profile NAME",
        ),
    ] {
        assert_usage_error(&smrtl(&args), needle);
    }
}

/// A sweep of `mem_sm`: its params × its profiles × seeds, the same bytes on one and two
/// threads, and a row equal to `sim --system mem_sm --profile` of its point.
#[test]
fn sweep_of_another_system_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let spec = write(
        dir.path(),
        "mem.json",
        r#"{"system": "mem_sm", "params": {"scheme": ["baseline", "rbmi"]}, "workloads": ["bp", "sv+ks"], "seeds": [1, 2]}"#,
    );
    let one = ok(&["sweep", &spec, "--threads", "1"]);
    assert_eq!(one, ok(&["sweep", &spec, "--threads", "2"]));
    let lines: Vec<&str> = one.lines().collect();
    assert_eq!(lines.len(), 9, "a header and 8 rows");
    assert!(
        lines[0].starts_with(
            "point,points,spec,workload,scheme,waves,seed,cycles,warp_instructions,ipc,"
        ),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains(",bp,baseline,1,1,100000,"),
        "{}",
        lines[1]
    );
    let rows = ok(&["sweep", &spec, "--format", "jsonl"]);
    let row: Value = serde_json::from_str(rows.lines().nth(7).unwrap()).unwrap();
    assert_eq!(
        (&row["workload"], &row["scheme"], &row["seed"]),
        (&"sv+ks".into(), &"rbmi".into(), &2.into())
    );
    let sim = json(&[
        "sim",
        "--system",
        "mem_sm",
        "--profile",
        "sv+ks",
        "--seed",
        "2",
        "--set",
        "scheme=rbmi",
        "--json",
    ]);
    for (col, at) in [
        ("ipc", "/ipc"),
        ("k1_ipc", "/kernels/1/ipc"),
        ("k0_tbs", "/kernels/0/tbs"),
    ] {
        assert_eq!(&row[col], sim.pointer(at).unwrap(), "{col}");
    }
    assert_eq!(row["k2_ipc"], Value::Null, "no third kernel");
    // The default system's spec keeps its id with the field written out.
    let small = std::fs::read_to_string("examples/sweep/small.json").unwrap();
    let explicit = write(
        dir.path(),
        "small.json",
        &small.replacen('{', "{\"system\": \"elastic_sm\",", 1),
    );
    assert_eq!(
        ok(&["sweep", &explicit]),
        ok(&["sweep", "examples/sweep/small.json"])
    );
    for (text, needle) in [
        (
            r#"{"system": "gpu", "workloads": ["bp"]}"#,
            "system: unknown system `gpu`",
        ),
        (
            r#"{"system": "mem_sm", "workloads": ["bp"], "params": {"sched": "rr"}}"#,
            "sched",
        ),
        (
            r#"{"system": "mem_sm", "workloads": ["bp"], "params": {"M": 2}}"#,
            "params: unknown parameter `M`",
        ),
        (
            r#"{"system": "sharing_sm", "workloads": ["dct"]}"#,
            "workloads: unknown kernel profile `dct`",
        ),
    ] {
        let bad = write(dir.path(), "bad.json", text);
        assert_usage_error(&smrtl(&["sweep", &bad]), needle);
    }
}

#[test]
fn list_systems_shows_kinds_params_and_profiles() {
    let text = ok(&["list", "--systems"]);
    for needle in [
        "elastic_sm\n",
        "sharing_sm\n",
        "mem_sm\n",
        "    trace  JSON with stream, at most 64 MiB; deprecated flag --trace",
        "    kernel  JSON with threads, smem, grid, warps; or JSON with blocks; or text named .txt",
        "    scheme ",
        "aes_encrypt",
        "heartwall",
        "  sweep metrics (\"workloads\"): cycles, warp_instructions, ipc",
        "      sweep metrics (\"inputs\"): cycles, stalls, bank_conflict",
    ] {
        assert!(text.contains(needle), "{needle}");
    }
    let v = json(&["list", "--systems", "--json"]);
    let systems: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["system"].as_str().unwrap())
        .collect();
    assert_eq!(systems, ["elastic_sm", "sharing_sm", "mem_sm", "coh_sm"]);
    assert_eq!(v[2]["inputs"][0]["kind"], "mem-workload");
    assert_eq!(v[2]["inputs"][0]["deprecated_flag"], "--mem-workload");
    assert_eq!(v[1]["profiles"]["deprecated_flag"], "--kernel-profile");
    assert!(v[0]["params"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "sched"));
    // The deprecated aliases are marked in --help; repro's experiments are the registry's.
    let help = ok(&["sim", "--help"]);
    for flag in ["--trace", "--workload", "--kernel", "--mem-workload"] {
        let at = help.find(&format!("      {flag} <FILE>")).expect(flag);
        let entry = &help[at..];
        let end = entry[1..].find("\n      --").unwrap_or(entry.len());
        assert!(
            entry[..end].contains("deprecated alias of `smrtl sim FILE`"),
            "{flag}"
        );
    }
    let repro = ok(&["repro", "--help"]);
    assert!(repro.contains("elastic-pipeline") && repro.contains("scratchpad-sharing"));
    assert_eq!(smrtl(&["repro", "gpu"]).status.code(), Some(2));
}
