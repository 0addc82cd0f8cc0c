//! smrtl as a FuseSoC generator (docs/verilog.md, "FuseSoC"): the real `fusesoc` (PyPI, in the
//! virtual environment `.ci/run` makes) runs the root `smrtl.core` generator for the two
//! configurations of `examples/fusesoc`, lints the user design with Verilator and simulates it
//! in Icarus; the generated files are what `smrtl gen` writes; bad generator parameters are one
//! line, and never reach a shell.

use smrtl_hdl::tools::{child_path, external, find};
use std::path::Path;
use std::process::{Command, Output};

/// A copy of what a FuseSoC library needs from the clone (the generator core, its script and
/// the example), so the search for `.core` files stays out of `target/`.
fn library() -> tempfile::TempDir {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("examples")).unwrap();
    for (from, to) in [
        ("smrtl.core", "."),
        ("fusesoc", "."),
        ("examples/fusesoc", "examples"),
    ] {
        let ok = Command::new("cp")
            .arg("-r")
            .arg(root.join(from))
            .arg(dir.path().join(to))
            .status()
            .unwrap()
            .success();
        assert!(ok, "copying {from}");
    }
    dir
}

/// `fusesoc --cores-root . ARGS` in `dir`, with the smrtl under test and the virtual
/// environment's tools (fusesoc's python3 first).
fn fusesoc(dir: &Path, args: &[&str]) -> Output {
    let fusesoc = find("fusesoc").expect("fusesoc installed");
    Command::new(fusesoc)
        .args(["--cores-root", "."])
        .args(args)
        .current_dir(dir)
        .env("SMRTL", env!("CARGO_BIN_EXE_smrtl"))
        .env("PATH", child_path())
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The one file named `name` under `dir`, recursively.
fn find_file(dir: &Path, name: &str) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir).ok()? {
        let path = entry.ok()?.path();
        if path.file_name().is_some_and(|n| n == name) {
            return Some(path);
        }
        if path.is_dir() {
            if let Some(found) = find_file(&path, name) {
                return Some(found);
            }
        }
    }
    None
}

#[test]
fn the_example_generates_lints_and_simulates_through_fusesoc() {
    if !external(&["fusesoc", "verilator", "iverilog"]) {
        return;
    }
    let lib = library();
    let lint = fusesoc(
        lib.path(),
        &["run", "--target", "lint", "smrtl:examples:two_detectors"],
    );
    assert!(lint.status.success(), "{}", text(&lint));
    let sim = fusesoc(
        lib.path(),
        &["run", "--target", "sim", "smrtl:examples:two_detectors"],
    );
    let out = text(&sim);
    assert!(sim.status.success(), "{out}");
    assert!(
        out.contains("PASS: one word 1 vs 8 cycles, eight banks 1 vs 1"),
        "{out}"
    );

    // Each generated file is byte for byte what `smrtl gen` writes for that configuration.
    for (name, args) in [
        ("multicast", vec!["--preset", "ep8"]),
        ("literal", vec!["--preset", "ep8", "--set", "MODE=literal"]),
    ] {
        let file = format!("two_detectors-{name}.v");
        let made = find_file(&lib.path().join("build"), &file).expect("generated Verilog");
        let here = tempfile::tempdir().unwrap();
        let mut all = vec!["gen", "bank_conflict_detector"];
        all.extend(&args);
        all.extend(["-o", &file]);
        let o = Command::new(env!("CARGO_BIN_EXE_smrtl"))
            .args(&all)
            .current_dir(here.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(
            std::fs::read_to_string(made).unwrap(),
            std::fs::read_to_string(here.path().join(&file)).unwrap(),
            "{file}"
        );
        let core = find_file(
            &lib.path().join("build"),
            &format!("two_detectors-{name}.core"),
        )
        .expect("generated core");
        let core = std::fs::read_to_string(core).unwrap();
        assert!(core.starts_with("CAPI=2:\n"), "{core}");
        assert!(
            core.contains(&file) && core.contains("verilogSource"),
            "{core}"
        );
    }
}

/// A core with one generated configuration of the detector, parameters as given (YAML flow).
fn one_config_core(dir: &Path, parameters: &str) {
    let core = format!(
        "CAPI=2:\nname: smrtl:examples:bad:0.1.0\nfilesets:\n  deps:\n    depend: [\"::smrtl\"]\n\
         generate:\n  g:\n    generator: smrtl\n    parameters: {parameters}\n\
         targets:\n  default:\n    filesets: [deps]\n    generate: [g]\n    \
         default_tool: icarus\n    toplevel: x\n"
    );
    std::fs::write(dir.join("examples/bad.core"), core).unwrap();
}

#[test]
fn bad_generator_parameters_are_one_line_and_never_reach_a_shell() {
    if !external(&["fusesoc"]) {
        return;
    }
    for (parameters, message) in [
        (
            "{block: bank_conflict_detector, colour: red}",
            "error: smrtl generator: unknown parameter 'colour'; allowed: block, preset, set",
        ),
        (
            "{preset: ep8}",
            "error: smrtl generator: parameter 'block' is required",
        ),
        (
            "{block: bank_conflict_detector, set: {L: 12}}",
            "error: parameter L = 12 is out of range; allowed: 8, 16, 32",
        ),
        (
            // A shell would run the `touch`; smrtl gets it as part of one argument.
            "{block: bank_conflict_detector, set: {MODE: 'literal; touch pwned'}}",
            "error: bad value `literal; touch pwned` for parameter MODE; allowed: literal",
        ),
    ] {
        let lib = library();
        one_config_core(lib.path(), parameters);
        let o = fusesoc(lib.path(), &["run", "--setup", "smrtl:examples:bad"]);
        let out = text(&o);
        assert!(!o.status.success(), "{parameters}: {out}");
        assert!(out.contains(message), "{parameters}: {out}");
        assert!(
            find_file(lib.path(), "pwned").is_none(),
            "a shell ran: {out}"
        );
        assert!(
            find_file(lib.path(), "bad-g.v").is_none(),
            "{parameters}: Verilog written: {out}"
        );
    }
}
