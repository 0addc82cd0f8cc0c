//! Checks on the emitted `sm_core` (docs/elastic-pipeline.md §6, §7) beyond its presets (the
//! conformance suite lints, compiles, replays and synthesizes every preset, docs/blocks.md
//! "Conformance suite"): Verilator lint (-Wall, the one UNUSEDSIGNAL waiver), Icarus compile
//! and latch-free Yosys synthesis of Unified/Split variants of the micro core, with the storage
//! bits of the RTL (registers and the history cache's memories) exactly those the params imply
//! (pipeline + BCAWS + scheduler/issue unit); the Table 4 core's register split.
//!
//! A missing tool fails these tests when `SMRTL_REQUIRE_TOOLS=1`, and skips them otherwise.

use smrtl_hdl::blocks::sm_core::{build, Params};
use smrtl_hdl::rusthdl::emit_verilog;
use smrtl_hdl::BlockParams;
use smrtl_synth::blocks::sm_core::Registers;
use smrtl_synth::{checks, yosys};
use std::sync::Arc;

fn have_tools() -> bool {
    smrtl_hdl::tools::external(&["verilator", "iverilog", "yosys"])
}

fn check(preset: &str, sets: &[(&str, &str)]) {
    let what = format!("{preset} {sets:?}");
    let p = Params::resolve_pairs(Some(preset), sets).expect("valid params");
    let module = Arc::new(build(&p));
    let verilog = emit_verilog(&module);
    let top = module.name.as_str();
    checks::lint_verilator(&verilog, top).unwrap_or_else(|e| panic!("{what}: {e}"));
    checks::compile_icarus(&verilog, top).unwrap_or_else(|e| panic!("{what}: {e}"));
    let report = yosys::generic(&verilog, top).unwrap_or_else(|e| panic!("{what}: {e}"));
    println!(
        "{what}: {} cells, {} FF bits ({} in the RTL), depth {:?}, {:.1} s",
        report.cells, report.flip_flops, report.rtl_flip_flops, report.logic_depth, report.seconds
    );
    assert!(report.latches.is_empty(), "{what}: {:?}", report.latches);
    let r = Registers::of(&p);
    assert_eq!(
        module.register_bits() + module.memory_bits(),
        r.total,
        "{what}: {r:?}"
    );
    assert_eq!(
        report.rtl_flip_flops + report.memory_bits,
        r.total,
        "{what}: storage bits (registers and memories) in the RTL"
    );
    assert_eq!(report.memory_bits, module.memory_bits(), "{what}");
}

#[test]
fn micro_variants_lint_compile_and_synthesize() {
    if !have_tools() {
        return;
    }
    check(
        "micro",
        &[
            ("pipe_mode", "unified"),
            ("sched", "rr"),
            ("S", "1"),
            ("M", "1"),
        ],
    );
    check(
        "micro",
        &[
            ("pipe_mode", "split"),
            ("S", "4"),
            ("bcaws_policy", "issue_if_no_nonmem"),
            ("hc_ways", "1"),
            ("W", "3"),
        ],
    );
}

/// Register split of the Table 4 core, from the params alone.
#[test]
fn table4_register_split() {
    let p = Params::default();
    let r = Registers::of(&p);
    // BCAWS: 512 lines x (1 valid + 6 tag + 5 data) + 256 MRU + accumulator 5 + counter 5.
    assert_eq!(r.bcaws, 512 * 12 + 256 + 10);
    // Scheduler: 32 busy + 32 x 9 seq (tag 16 = 5 warp + 9 seq + 2 sw) + 5 RR pointer, and the
    // issue unit's 1 + 5 + 2 + 14 + 9 + 2.
    assert_eq!(r.scheduler, 32 + 32 * 9 + 5 + 33);
    let m = build(&p);
    assert_eq!(m.register_bits() + m.memory_bits(), r.total);
}
