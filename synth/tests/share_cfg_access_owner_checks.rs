//! Checks on the emitted `share_cfg`, `sp_access_unit` and `owner_class`
//! (docs/scratchpad-sharing.md §2.2, §2.3, §2.5, §7) at widths beyond their presets (the
//! conformance suite checks the presets, docs/blocks.md "Conformance suite"): Verilator lint
//! (-Wall with the documented waivers), Icarus compile and latch-free Yosys synthesis, with
//! Yosys's register bits equal to the §7 inventory (ShareCfg: 1 + AW + T·TW + T·AW, 319 at the
//! defaults; the other two: 0) for T ∈ {6, 8, 32}.
//!
//! A missing tool skips these tests.

use smrtl_hdl::rusthdl::emit_verilog;
use smrtl_hdl::{BlockParams, Module};
use smrtl_synth::{checks, yosys};
use std::sync::Arc;

fn have_tools() -> bool {
    smrtl_hdl::tools::external(&["verilator", "iverilog", "yosys"])
}

/// Lints, compiles and synthesizes `module`; returns Yosys's register bits in the RTL.
fn check(module: Module) -> u64 {
    let module = Arc::new(module);
    let verilog = emit_verilog(&module);
    let top = module.name.as_str();
    checks::lint_verilator(&verilog, top).unwrap_or_else(|e| panic!("{top}: {e}"));
    checks::compile_icarus(&verilog, top).unwrap_or_else(|e| panic!("{top}: {e}"));
    let report = yosys::generic(&verilog, top).unwrap_or_else(|e| panic!("{top}: {e}"));
    println!(
        "{top}: {} cells, {} FF bits ({} in the RTL), depth {:?}, {:.1} s",
        report.cells, report.flip_flops, report.rtl_flip_flops, report.logic_depth, report.seconds
    );
    assert!(report.latches.is_empty(), "{top}: {:?}", report.latches);
    assert_eq!(report.rtl_flip_flops, module.register_bits(), "{top}");
    report.rtl_flip_flops
}

#[test]
fn share_cfg_registers_match_section_7() {
    use smrtl_hdl::blocks::share_cfg::{build, Params};
    if !have_tools() {
        return;
    }
    for t in ["8", "32", "6"] {
        let p = Params::resolve_pairs(Some("paper"), &[("T", t)]).unwrap();
        let bits = check(build(&p));
        assert_eq!(
            bits,
            smrtl_synth::blocks::share_cfg::Registers::of(&p).total,
            "T = {t}"
        );
    }
    assert_eq!(
        smrtl_synth::blocks::share_cfg::Registers::of(&Params::default()).total,
        319
    );
}

#[test]
fn sp_access_unit_has_no_registers() {
    use smrtl_hdl::blocks::sp_access_unit::{build, Params};
    if !have_tools() {
        return;
    }
    for (preset, t) in [("small", "6"), ("paper", "8"), ("paper", "32")] {
        let p = Params::resolve_pairs(Some(preset), &[("T", t)]).unwrap();
        assert_eq!(check(build(&p)), 0, "{preset} T = {t}");
    }
}

#[test]
fn owner_class_has_no_registers() {
    use smrtl_hdl::blocks::owner_class::{build, Params};
    if !have_tools() {
        return;
    }
    for (t, free_class) in [("6", "UNSHARED"), ("8", "NONOWNER"), ("32", "UNSHARED")] {
        let p =
            Params::resolve_pairs(Some("paper"), &[("T", t), ("FREE_CLASS", free_class)]).unwrap();
        assert_eq!(check(build(&p)), 0, "T = {t}");
    }
}
