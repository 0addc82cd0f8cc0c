//! Static checks on the emitted `lock_table` beyond its presets (both use the TRANSFER policy;
//! the conformance suite checks the presets, docs/blocks.md "Conformance suite"): the FREE
//! policy passes `verilator --lint-only -Wall` (the project's waivers) and compiles in Icarus.
//!
//! A missing tool fails the test when `SMRTL_REQUIRE_TOOLS=1`, and skips it otherwise.

use smrtl_hdl::blocks::lock_table::{build, Params};
use smrtl_hdl::BlockParams;
use std::sync::Arc;

#[test]
fn the_free_policy_lints_and_compiles() {
    if !smrtl_hdl::tools::external(&["verilator", "iverilog"]) {
        return;
    }
    for preset in ["paper", "small"] {
        let p = Params::resolve_pairs(Some(preset), &[("POLICY", "FREE")]).unwrap();
        let module = Arc::new(build(&p));
        let verilog = smrtl_hdl::rusthdl::emit_verilog(&module);
        smrtl_synth::lint_verilator(&verilog, &module.name).unwrap();
        smrtl_synth::compile_icarus(&verilog, &module.name).unwrap();
    }
}
