//! What the user reads: every message names the real cause and a real remedy on one line (exit
//! code 2 for bad input), every parameter has a `--set` form that works and that `smrtl list`
//! shows, and numbers are echoed as the user wrote them. Each case as a user met it, through
//! the CLI, with the files it leaves behind (none).

use crate::common;

use common::{assert_usage_error, files, smrtl, stderr, stdout};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `smrtl` with `args` in `dir`, with `env` set (a `PATH` of `None` removes nothing).
fn smrtl_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_smrtl"));
    cmd.current_dir(dir).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("smrtl runs")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    fs::write(dir.join(name), text).unwrap();
    dir.join(name).display().to_string()
}

/// A usage error (see [`assert_usage_error`]) whose one line is exactly `error: {line}`.
fn assert_error_line(o: &Output, line: &str) {
    assert_usage_error(o, line);
    assert_eq!(stderr(o).trim_end(), format!("error: {line}"));
}

/// The lines of `smrtl list` of block `block`, up to the next block.
fn list_section(text: &str, block: &str) -> Vec<String> {
    let mut lines = text.lines().skip_while(|l| *l != block);
    let mut out = vec![lines.next().expect("block listed").to_string()];
    out.extend(lines.take_while(|l| l.starts_with(' ')).map(str::to_string));
    out
}

/// A directory of symlinks to every program on `PATH` but those whose names start with one of
/// `without`: a `PATH` on which exactly those tools are missing.
fn path_without(root: &Path, without: &[&str]) -> String {
    let bin = root.join("bin");
    fs::create_dir_all(&bin).unwrap();
    for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if without.iter().any(|w| name.starts_with(w)) || bin.join(&name).exists() {
                continue;
            }
            let _ = std::os::unix::fs::symlink(e.path(), bin.join(&name));
        }
    }
    bin.display().to_string()
}

/// The repository's example trace.
fn fig4() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/traces/fig4_two_subwarps.json")
}

// ---------------------------------------------------------------------------------------------
// `smrtl list`: one form of every value, aligned columns.

#[test]
fn list_shows_bools_as_set_takes_them() {
    let o = smrtl(&["list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for (block, name, default) in [
        ("bank_conflict_detector", "REG_OUT", "false"),
        ("history_cache", "bcaws_freeze_on_stall", "true"),
        ("sm_core", "bcaws_freeze_on_stall", "true"),
    ] {
        let section = list_section(&text, block);
        let row = section
            .iter()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} listed for {block}"));
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(&cells[1..4], &[default, "false,", "true"], "{row}");
        assert!(
            section
                .iter()
                .filter(|l| l.contains(&format!("{name}=")))
                .all(
                    |l| l.contains(&format!("{name}=true")) || l.contains(&format!("{name}=false"))
                ),
            "presets show {name} as false / true"
        );
    }
    assert!(!text.contains("0, 1"), "no bool shown as 0, 1");

    let json: serde_json::Value =
        serde_json::from_slice(&smrtl(&["list", "--json"]).stdout).unwrap();
    let reg_out = &json[0]["params"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "REG_OUT")
        .unwrap()
        .clone();
    assert_eq!(reg_out["allowed"], "false, true");
    assert_eq!(reg_out["default"], false);
    assert_eq!(json[0]["presets"][0]["params"]["REG_OUT"], false);

    // Every form `--set` takes is accepted, and the file header shows the one form.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("d.v");
    for (set, shown) in [
        ("REG_OUT=true", "REG_OUT=true"),
        ("REG_OUT=1", "REG_OUT=true"),
        ("REG_OUT=false", "REG_OUT=false"),
        ("REG_OUT=0", "REG_OUT=false"),
    ] {
        let o = smrtl(&[
            "gen",
            "bank_conflict_detector",
            "--preset",
            "ep8",
            "--set",
            set,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{set}: {}", stderr(&o));
        let v = fs::read_to_string(&out).unwrap();
        assert!(v.contains(&format!("//   A=14 B=8 L=8 MODE=multicast P=1 {shown} W=4")));
        assert!(
            v.contains(&format!("--set {shown}")),
            "regenerate with {shown}"
        );
    }
    fs::remove_file(&out).unwrap();
    assert_error_line(
        &smrtl(&[
            "gen",
            "bank_conflict_detector",
            "--set",
            "REG_OUT=2",
            "-o",
            out.to_str().unwrap(),
        ]),
        "bad value `2` for parameter REG_OUT; allowed: false, true",
    );
    assert!(files(dir.path()).is_empty());
}

#[test]
fn list_columns_align_whatever_the_lengths() {
    let text = stdout(&smrtl(&["list"]));
    let blocks: Vec<&str> = text.lines().filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(
        blocks,
        [
            "bank_conflict_detector",
            "elastic_pipeline",
            "history_cache",
            "sm_core",
            "share_cfg",
            "sp_access_unit",
            "lock_table",
            "owner_class",
            "relssp_unit",
            "warp_scheduler",
            "sharing_core",
            "rbmi_arb",
            "qbmi_arb",
            "milg",
            "req_counter",
            "mem_issue_ctl",
            "stall_inspector",
        ]
    );
    for block in blocks {
        let section = list_section(&text, block);
        let head = section
            .iter()
            .position(|l| l.trim_start().starts_with("name "))
            .unwrap_or_else(|| panic!("{block}: a header row"));
        let header = &section[head];
        let col = |word: &str| header.find(word).unwrap();
        let (default, allowed, meaning) = (col("default"), col("allowed"), col("meaning"));
        let presets = section
            .iter()
            .position(|l| l.starts_with("  presets"))
            .unwrap();
        let rows = &section[head + 1..presets];
        let names: Vec<&str> = rows
            .iter()
            .filter(|l| !l[4..5].starts_with(' '))
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        // The name column is as wide as the longest name (or its header), and no wider.
        let longest = names
            .iter()
            .map(|n| n.len())
            .max()
            .unwrap()
            .max("name".len());
        assert_eq!(default, 4 + longest + 2, "{block}: {header}");
        // Every cell starts in its column: the two characters before it are blank and, on a
        // parameter's first line, the default and the allowed values are there.
        let starts_at = |line: &str, c: usize| {
            line.len() > c && line[c - 2..c] == *"  " && !line[c..].starts_with(' ')
        };
        for line in rows {
            assert!(
                line.len() > 4 && line.starts_with("    "),
                "{block}: {line:?}"
            );
            if !line[4..5].starts_with(' ') {
                assert!(starts_at(line, default), "{block}: default column: {line}");
                assert!(starts_at(line, allowed), "{block}: allowed column: {line}");
            } else {
                // A continuation line: blank up to the allowed or the meaning column.
                let first = line.len() - line.trim_start().len();
                assert!(first == allowed || first == meaning, "{block}: {line}");
            }
            if line.len() > meaning {
                assert!(starts_at(line, meaning), "{block}: meaning column: {line}");
            }
            assert!(line.len() <= meaning + 60, "{block}: wrapped: {line}");
        }
        // Preset parameters start in one column too (table4_rr is longer than table4).
        let preset_lines = &section[presets + 1..];
        let name_w = preset_lines
            .iter()
            .filter_map(|l| {
                l[4..]
                    .split_whitespace()
                    .next()
                    .filter(|_| !l[4..5].starts_with(' '))
            })
            .map(str::len)
            .max()
            .unwrap();
        for line in preset_lines {
            assert!(
                starts_at(line, 4 + name_w + 2),
                "{block}: preset column: {line}"
            );
        }
    }
    // The long default and the literal `--set` form of sm_core's structured parameter.
    let section = list_section(&text, "sm_core");
    let at = section
        .iter()
        .position(|l| l.trim_start().starts_with("gmem_return "))
        .unwrap();
    assert!(
        section[at].contains(r#" {"icnt":400}  at_writeback, {"icnt":N} with N in 1..=100000, "#)
    );
    assert!(section[at + 1..]
        .iter()
        .take(5)
        .any(|l| l.contains(r#"(e.g. --set 'gmem_return={"dram":{"seed":2}}')"#)));
}

// ---------------------------------------------------------------------------------------------
// Structured parameters: the `--set` form `smrtl list` shows works everywhere.

#[test]
fn gmem_return_takes_its_listed_forms_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let icnt = r#"gmem_return={"icnt":100}"#;
    for args in [
        // From the default (an object) and from `micro` (a name), both ways.
        vec!["cosim", "sm_core", "--set", icnt, "--cycles", "10"],
        vec![
            "cosim", "sm_core", "--preset", "micro", "--set", icnt, "--cycles", "10",
        ],
        vec![
            "cosim",
            "sm_core",
            "--set",
            "gmem_return=at_writeback",
            "--cycles",
            "10",
        ],
        vec![
            "cosim",
            "sm_core",
            "--preset",
            "micro",
            "--set",
            "gmem_return=AT-WRITEBACK",
            "--cycles",
            "10",
        ],
    ] {
        let o = smrtl_in(d, &args, &[]);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).starts_with("PASS sm_core"), "{args:?}");
    }
    for (set, want) in [
        (icnt, serde_json::json!({"icnt": 100})),
        (
            "gmem_return=at_writeback",
            serde_json::json!("at_writeback"),
        ),
    ] {
        let o = smrtl_in(d, &["sim", "--profile", "dct", "--set", set, "--json"], &[]);
        assert!(o.status.success(), "{set}: {}", stderr(&o));
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(report["params"]["gmem_return"], want, "{set}");
    }
    let spec = write(
        d,
        "spec.json",
        r#"{"params": {"gmem_return": ["at_writeback", {"icnt": 100}]}, "workloads": ["dct"], "seeds": [1], "waves": 1}"#,
    );
    let o = smrtl_in(d, &["sweep", &spec], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 3, "a header and two points");

    // The regenerate command of a file header is a working `--set` form.
    let out = d.join("core.v");
    let o = smrtl_in(
        d,
        &[
            "gen",
            "sm_core",
            "--preset",
            "micro",
            "--set",
            r#"gmem_return={"icnt": 7}"#,
            "-o",
            "core.v",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let header = fs::read_to_string(&out).unwrap();
    assert!(header.contains(r#"//   AW=12"#) && header.contains(r#" gmem_return={"icnt":7} "#));
    assert!(
        header.contains(r#"--set 'gmem_return={"icnt":7}'"#),
        "quoted for the shell"
    );
    fs::remove_file(&out).unwrap();

    // Bad values: the value as written, the allowed forms and the literal example.
    let allowed = r#"allowed: at_writeback, {"icnt":N} with N in 1..=100000, {"dram":{...}} with base, channels, banks, cores, window, t_burst, core_mhz, dram_mhz in 1..=100000 (seed, t_rp_rcd, t_cl any), row_bytes a power of 2 >= 128 (e.g. --set 'gmem_return={"dram":{"seed":2}}')"#;
    for (set, line) in [
        (
            r#"gmem_return={"icnt": 0}"#,
            format!(r#"parameter gmem_return = {{"icnt": 0}} is out of range; {allowed}"#),
        ),
        (
            r#"gmem_return={"icnt":100001}"#,
            format!(r#"parameter gmem_return = {{"icnt":100001}} is out of range; {allowed}"#),
        ),
        (
            // What the shell leaves of an unquoted `--set gmem_return={"icnt":100}`.
            "gmem_return={icnt:100}",
            format!("bad value `{{icnt:100}}` for parameter gmem_return; {allowed}"),
        ),
        (
            "gmem_return=icnt",
            format!("bad value `icnt` for parameter gmem_return; {allowed}"),
        ),
        (
            r#"gmem_return={"icnt":99999999999999999999}"#,
            format!(
                r#"bad value `{{"icnt":99999999999999999999}}` for parameter gmem_return; {allowed}"#
            ),
        ),
    ] {
        assert_error_line(
            &smrtl_in(
                d,
                &["cosim", "sm_core", "--set", set, "--cycles", "10"],
                &[],
            ),
            &line,
        );
        assert_error_line(
            &smrtl_in(d, &["gen", "sm_core", "--set", set, "-o", "core.v"], &[]),
            &line,
        );
    }
    let o = smrtl_in(
        d,
        &[
            "sim",
            "--profile",
            "dct",
            "--set",
            r#"gmem_return={"icnt":0}"#,
        ],
        &[],
    );
    assert_error_line(
        &o,
        &format!(
            r#"profile dct: params: parameter gmem_return = {{"icnt":0}} is out of range; {allowed}"#
        ),
    );
    let spec = write(
        d,
        "spec.json",
        r#"{"params": {"gmem_return": [{"icnt": 0}]}, "workloads": ["dct"], "seeds": [1], "waves": 1}"#,
    );
    assert_usage_error(&smrtl_in(d, &["sweep", &spec], &[]), allowed);
    fs::remove_file(d.join("spec.json")).unwrap();
    assert!(files(d).is_empty(), "{:?}", files(d));
}

// ---------------------------------------------------------------------------------------------
// Numbers as written.

#[test]
fn numbers_are_echoed_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let trace: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(fig4()).unwrap()).unwrap();
    let range = |v: &str| format!("parameter M = {v} is out of range; allowed: 1..=8");
    let digits =
        |v: &str| format!("parameter M = {v} is not an integer in plain digits; allowed: 1..=8");
    for (written, shown, line) in [
        (
            "99999999999999999999",
            "99999999999999999999",
            range as fn(&str) -> String,
        ),
        ("18446744073709551616", "18446744073709551616", range),
        ("4294967296", "4294967296", range),
        ("-3", "-3", range),
        ("9", "9", range),
        ("2.5", "2.5", digits),
        ("-0", "-0", digits),
        ("2.0", "2.0", digits),
        // serde_json spells an exponent with its sign: `1e3` is read as `1e+3`.
        ("1e3", "1e+3", digits),
    ] {
        // A trace file's params.
        let mut t = trace.clone();
        t["params"]["M"] = serde_json::Value::String("@".into());
        let text = t
            .to_string()
            .replace(r#""M":"@""#, &format!(r#""M":{written}"#));
        let path = write(d, "t.json", &text);
        let o = smrtl_in(d, &["sim", "--trace", &path], &[]);
        assert_error_line(&o, &format!("{path}: {}", line(shown)));
        // `--set` on the command line keeps every spelling.
        let set = format!("M={written}");
        assert_error_line(
            &smrtl_in(
                d,
                &["cosim", "elastic_pipeline", "--set", &set, "--cycles", "1"],
                &[],
            ),
            &line(written),
        );
        assert_error_line(
            &smrtl_in(d, &["sim", "--trace", &path, "--set", &set], &[]),
            &format!("{path}: {}", line(written)),
        );
        // A sweep spec and a profile's overrides (JSON values).
        let spec = write(
            d,
            "spec.json",
            &format!(
                r#"{{"params": {{"M": [{written}]}}, "workloads": ["dct"], "seeds": [1], "waves": 1}}"#
            ),
        );
        let o = smrtl_in(d, &["sweep", &spec], &[]);
        assert_usage_error(&o, &format!("params: {}", line(shown)));
        let o = smrtl_in(d, &["sim", "--profile", "dct", "--set", &set], &[]);
        assert_error_line(&o, &format!("profile dct: params: {}", line(shown)));
    }
    // Leading zeros on the command line are the user's too.
    assert_error_line(
        &smrtl_in(
            d,
            &[
                "cosim",
                "elastic_pipeline",
                "--set",
                "M=09",
                "--cycles",
                "1",
            ],
            &[],
        ),
        &range("09"),
    );
    // Not a number at all.
    assert_error_line(
        &smrtl_in(
            d,
            &[
                "cosim",
                "elastic_pipeline",
                "--set",
                "M=four",
                "--cycles",
                "1",
            ],
            &[],
        ),
        "bad value `four` for parameter M; allowed: 1..=8",
    );
    fs::remove_file(d.join("t.json")).unwrap();
    fs::remove_file(d.join("spec.json")).unwrap();
    assert!(files(d).is_empty(), "{:?}", files(d));
}

// ---------------------------------------------------------------------------------------------
// External tools and the build cache.

/// A short co-simulation that needs a Verilator build.
const EP8_ON_VERILATOR: [&str; 8] = [
    "cosim",
    "bank_conflict_detector",
    "--preset",
    "ep8",
    "--backend",
    "verilator",
    "--cycles",
    "10",
];

#[test]
fn an_unusable_build_cache_is_named_with_the_remedy() {
    if !smrtl_hdl::tools::external(&["verilator", "make", "g++"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = EP8_ON_VERILATOR;
    let o = smrtl_in(d, &args, &[("SMRTL_CACHE_DIR", "/proc/nope")]);
    assert_error_line(
        &o,
        "cannot create directory /proc/nope: No such file or directory (os error 2); \
         set SMRTL_CACHE_DIR to a writable directory",
    );
    let file = write(d, "file", "");
    let cache = format!("{file}/cache");
    let o = smrtl_in(d, &args, &[("SMRTL_CACHE_DIR", &cache)]);
    assert_error_line(
        &o,
        &format!(
            "cannot create directory {cache}: Not a directory (os error 20); \
             set SMRTL_CACHE_DIR to a writable directory"
        ),
    );
    assert_eq!(files(d), ["file"]);
}

#[test]
fn a_missing_tool_is_named_with_its_package() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let empty = d.join("empty");
    fs::create_dir(&empty).unwrap();
    let path = empty.display().to_string();
    let o = smrtl_in(
        d,
        &[
            "cosim",
            "bank_conflict_detector",
            "--backend",
            "verilator",
            "--cycles",
            "10",
        ],
        &[("PATH", &path)],
    );
    assert_error_line(
        &o,
        "verilator not found on PATH; install it (Debian: apt-get install -y verilator)",
    );
    let o = smrtl_in(
        d,
        &["synth", "bank_conflict_detector", "--preset", "ep8"],
        &[("PATH", &path)],
    );
    assert_error_line(
        &o,
        "yosys not found on PATH; install it (Debian: apt-get install -y yosys)",
    );
    assert!(!stderr(&o).contains("--backend"), "synth has no --backend");
    assert_eq!(files(d), ["empty"]);
}

#[test]
fn synth_without_nextpnr_says_how_to_get_or_skip_fmax() {
    if !smrtl_hdl::tools::external(&["yosys"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = path_without(dir.path(), &["nextpnr"]);
    let work = dir.path().join("work");
    fs::create_dir(&work).unwrap();
    let o = smrtl_in(
        &work,
        &["synth", "bank_conflict_detector", "--preset", "ep8"],
        &[("PATH", &path)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let fmax = stdout(&o)
        .lines()
        .find(|l| l.trim_start().starts_with("Fmax"))
        .unwrap()
        .to_string();
    assert_eq!(
        fmax.trim(),
        "Fmax: not measured: nextpnr-ice40 is not installed \
         (Debian: apt-get install -y nextpnr-ice40; --no-fmax skips the estimate)"
    );
    assert!(stdout(&o).contains("MODE=multicast P=1 REG_OUT=false W=4"));
    let o = smrtl_in(
        &work,
        &[
            "synth",
            "bank_conflict_detector",
            "--preset",
            "ep8",
            "--no-fmax",
            "--no-ice40",
        ],
        &[("PATH", &path)],
    );
    assert!(
        o.status.success(),
        "the flags the message names exist: {}",
        stderr(&o)
    );
    assert!(files(&work).is_empty());
}

#[test]
fn a_failing_tool_is_one_line() {
    // A `verilator` that fails with a few lines of output, and a cache that stays empty.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = path_without(d, &["verilator"]);
    let fake = Path::new(&path).join("verilator");
    fs::write(
        &fake,
        "#!/bin/sh\necho '%Error: first problem'\necho\necho '  %Error: second problem  ' >&2\nexit 1\n",
    )
    .unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let cache = d.join("cache");
    fs::create_dir(&cache).unwrap();
    let o = smrtl_in(
        d,
        &EP8_ON_VERILATOR,
        &[
            ("PATH", &path),
            ("SMRTL_CACHE_DIR", cache.to_str().unwrap()),
        ],
    );
    if Path::new(&path).join("make").exists() && Path::new(&path).join("g++").exists() {
        assert_error_line(
            &o,
            "verilator failed: %Error: first problem; %Error: second problem",
        );
    } else {
        assert_usage_error(
            &o,
            "not found on PATH; install it (Debian: apt-get install -y",
        );
    }
    assert!(files(&cache).is_empty());
}
