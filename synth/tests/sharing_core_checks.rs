//! Checks on the emitted `sharing_core` (docs/scratchpad-sharing.md §5.3, §7): Verilator lint
//! (-Wall with the documented waivers), Icarus compile and latch-free Yosys synthesis with the
//! flip-flops of every block module equal to the §7 inventory, on the `small` and `fig5`
//! presets; Verilator lint at the paper's defaults. (The defaults' synthesis, 3,553 flip-flops,
//! takes a minute: `smrtl synth sharing_core`, figures in the README.)

use smrtl_hdl::blocks::sharing_core::{build, Params};
use smrtl_hdl::rusthdl::emit_verilog;
use smrtl_hdl::BlockParams;
use smrtl_synth::blocks::sharing_core;
use smrtl_synth::checks;
use std::sync::Arc;

fn have_tools() -> bool {
    smrtl_hdl::tools::external(&["verilator", "iverilog", "yosys"])
}

#[test]
fn presets_lint_compile_and_synthesize_to_the_inventory() {
    if !have_tools() {
        return;
    }
    for preset in ["small", "fig5"] {
        let p = Params::resolve_pairs(Some(preset), &[]).unwrap();
        let module = Arc::new(build(&p));
        let verilog = emit_verilog(&module);
        let top = module.name.as_str();
        checks::lint_verilator(&verilog, top).unwrap_or_else(|e| panic!("{top}: {e}"));
        checks::compile_icarus(&verilog, top).unwrap_or_else(|e| panic!("{top}: {e}"));
        let (report, per_module) = sharing_core::checks(&p).unwrap();
        assert!(report.latches.is_empty(), "{preset}: {:?}", report.latches);
        for c in &per_module {
            assert_eq!(c.yosys, c.inventory, "{preset}: {c:?}");
        }
        let total = sharing_core::total(&sharing_core::inventory(&p));
        assert_eq!(report.flip_flops, total, "{preset}");
    }
}

#[test]
fn the_defaults_lint() {
    if !have_tools() {
        return;
    }
    let module = Arc::new(build(&Params::default()));
    checks::lint_verilator(&emit_verilog(&module), &module.name).unwrap();
}
