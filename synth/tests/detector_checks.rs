//! Static checks on the emitted `BankConflictDetector` beyond its presets (the conformance suite
//! lints, compiles, replays and synthesizes every preset, docs/blocks.md "Conformance suite"):
//! Verilator lint (with the documented waivers), Icarus compile and latch-free generic synthesis
//! of the other modes, port counts and widths, and the REG_OUT flip-flop count.
//!
//! A missing tool fails the test when `SMRTL_REQUIRE_TOOLS=1`, and skips it otherwise.

use smrtl_hdl::blocks::bank_conflict_detector::{build, Params};
use smrtl_hdl::rusthdl::emit_verilog;
use smrtl_hdl::BlockParams;
use smrtl_synth::{checks, yosys};
use std::sync::Arc;

/// True when Verilator, Icarus and Yosys are installed (else skip, or fail in CI).
fn have_tools(_test: &str) -> bool {
    smrtl_hdl::tools::external(&["verilator", "iverilog", "yosys"])
}

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).expect("valid params")
}

/// Lint, compile and synthesize one configuration; returns its flip-flop counts
/// (as written in the RTL, after synthesis).
fn check(preset: &str, sets: &[(&str, &str)]) -> (u64, u64) {
    let p = params(preset, sets);
    let module = Arc::new(build(&p));
    let verilog = emit_verilog(&module);
    let top = module.name.as_str();
    let what = format!("{preset} {sets:?}");
    checks::lint_verilator(&verilog, top).unwrap_or_else(|e| panic!("{what}: {e}"));
    checks::compile_icarus(&verilog, top).unwrap_or_else(|e| panic!("{what}: {e}"));
    let report = yosys::generic(&verilog, top).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        report.latches.is_empty(),
        "{what}: latches {:?}",
        report.latches
    );
    assert!(report.cells > 0, "{what}: empty netlist");
    (report.rtl_flip_flops, report.flip_flops)
}

/// The modes of `ep8` other than its preset's (multicast).
#[test]
fn ep8_other_modes_are_clean_and_combinational() {
    if !have_tools("ep8_other_modes_are_clean_and_combinational") {
        return;
    }
    for mode in ["literal", "gpgpusim-limited"] {
        assert_eq!(check("ep8", &[("MODE", mode)]), (0, 0), "ep8 {mode}");
    }
}

#[test]
fn ep8_reg_out_registers_exactly_the_outputs() {
    if !have_tools("ep8_reg_out_registers_exactly_the_outputs") {
        return;
    }
    let p = params("ep8", &[("REG_OUT", "true")]);
    let dw = p.degree_bits() as u64;
    // degree, degree_m1, cycles, conflict, any_active: 4 + 3 + 4 + 1 + 1 for ep8.
    let expected = dw + p.degree_m1_bits() as u64 + dw + 1 + 1;
    assert_eq!(expected, 13);
    let (rtl, synthesized) = check("ep8", &[("REG_OUT", "true")]);
    assert_eq!(rtl, expected, "register bits in the RTL");
    // With P = 1, cycles = degree, and Yosys merges the two equal registers.
    assert_eq!(synthesized, expected - dw, "flip-flops after synthesis");
}

#[test]
fn tesla_multicast_w8_is_clean() {
    if !have_tools("tesla_multicast_w8_is_clean") {
        return;
    }
    assert_eq!(check("tesla", &[("W", "8")]), (0, 0));
}

/// Every configuration the co-simulation tests run besides the presets (multicast, P = 1) lints
/// and compiles; the widest P / W combination also synthesizes without latches.
#[test]
fn cosimulated_configurations_are_clean() {
    if !have_tools("cosimulated_configurations_are_clean") {
        return;
    }
    let mut configs: Vec<(&str, Vec<(&str, &str)>)> = vec![];
    for preset in ["kepler", "fermi", "tesla", "ep8"] {
        for mode in ["literal", "multicast", "gpgpusim-limited"] {
            for ports in ["1", "2", "4"] {
                if (mode, ports) == ("multicast", "1") {
                    continue; // the preset itself
                }
                configs.push((preset, vec![("MODE", mode), ("P", ports)]));
            }
        }
    }
    configs.push(("ep8", vec![("W", "8")]));
    configs.push(("tesla", vec![("W", "8"), ("A", "20")]));
    configs.push((
        "kepler",
        vec![("REG_OUT", "true"), ("MODE", "gpgpusim-limited")],
    ));
    configs.push(("kepler", vec![("L", "16"), ("B", "32")]));
    for (preset, sets) in &configs {
        let p = params(preset, sets);
        let module = Arc::new(build(&p));
        let verilog = emit_verilog(&module);
        let what = format!("{preset} {sets:?}");
        checks::lint_verilator(&verilog, &module.name).unwrap_or_else(|e| panic!("{what}: {e}"));
        checks::compile_icarus(&verilog, &module.name).unwrap_or_else(|e| panic!("{what}: {e}"));
    }
    check(
        "ep8",
        &[("W", "8"), ("P", "4"), ("MODE", "gpgpusim-limited")],
    );
}
