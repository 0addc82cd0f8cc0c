//! Static checks on the emitted `elastic_pipeline` beyond its presets (the conformance suite
//! lints, compiles, replays and synthesizes every preset, docs/blocks.md "Conformance suite"):
//! Verilator lint (with the documented waivers) and Icarus compile of the other co-simulated
//! configurations, latch-free generic synthesis and the register inventory of the other micro
//! modes, the register bits of micro counted by hand, and the Elastic-minus-Unified overhead
//! report on `micro` and `table4`.
//!
//! A missing tool fails the test when `SMRTL_REQUIRE_TOOLS=1`, and skips it otherwise.

use smrtl_hdl::blocks::elastic_pipeline::{build, Params};
use smrtl_hdl::rusthdl::emit_verilog;
use smrtl_hdl::BlockParams;
use smrtl_synth::blocks::elastic_pipeline::{overhead, Registers};
use smrtl_synth::{checks, yosys, GenericReport};
use std::sync::Arc;

/// True when Verilator, Icarus and Yosys are installed (else skip, or fail in CI).
fn have_tools(_test: &str) -> bool {
    smrtl_hdl::tools::external(&["verilator", "iverilog", "yosys"])
}

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).expect("valid params")
}

/// Emits one configuration; returns its Verilog, top module name and a label for messages.
fn emit(preset: &str, sets: &[(&str, &str)]) -> (Params, String, String, String) {
    let p = params(preset, sets);
    let module = Arc::new(build(&p));
    let verilog = emit_verilog(&module);
    (
        p,
        verilog,
        module.name.clone(),
        format!("{preset} {sets:?}"),
    )
}

/// Synthesizes one configuration, checks it is latch-free and holds exactly the register bits
/// its params imply, and returns the report.
fn synthesize(preset: &str, sets: &[(&str, &str)]) -> GenericReport {
    let (p, verilog, top, what) = emit(preset, sets);
    let report = yosys::generic(&verilog, &top).unwrap_or_else(|e| panic!("{what}: {e}"));
    println!(
        "{what}: {} cells, {} FF bits ({} in the RTL), {:.1} s",
        report.cells, report.flip_flops, report.rtl_flip_flops, report.seconds
    );
    assert!(
        report.latches.is_empty(),
        "{what}: latches {:?}",
        report.latches
    );
    assert!(report.cells > 0, "{what}: empty netlist");
    assert_eq!(
        report.rtl_flip_flops,
        Registers::of(&p).total,
        "{what}: register bits in the RTL"
    );
    report
}

/// Every configuration the co-simulation tests run besides the presets lints and compiles.
#[test]
fn cosimulated_configurations_lint_and_compile() {
    if !have_tools("cosimulated_configurations_lint_and_compile") {
        return;
    }
    let configs: &[(&str, &[(&str, &str)])] = &[
        ("micro", &[("pipe_mode", "unified")]),
        ("micro", &[("pipe_mode", "split")]),
        ("micro", &[("M", "1")]),
        ("micro", &[("M", "4"), ("N", "3"), ("Q", "5")]),
        (
            "micro",
            &[("nonmem_min_age", "2"), ("wb_priority", "nonmem_first")],
        ),
        ("micro", &[("P", "2")]),
        ("micro", &[("broadcast", "gpgpusim-limited")]),
        ("micro", &[("broadcast", "literal")]),
    ];
    for (preset, sets) in configs {
        let (_, verilog, top, what) = emit(preset, sets);
        checks::lint_verilator(&verilog, &top).unwrap_or_else(|e| panic!("{what}: {e}"));
        checks::compile_icarus(&verilog, &top).unwrap_or_else(|e| panic!("{what}: {e}"));
    }
}

/// micro in the two modes other than its preset's synthesizes without latches, its RTL
/// registers the inventory of [`Registers`].
#[test]
fn micro_other_modes_synthesize_clean() {
    if !have_tools("micro_other_modes_synthesize_clean") {
        return;
    }
    for mode in ["unified", "split"] {
        synthesize("micro", &[("pipe_mode", mode)]);
    }
}

/// The register bits of micro Elastic, counted by hand: seven latches (F, D1, EXE, MEM0, MEM1,
/// NQ0, NQ1) of 1 + 16 + 2 + 4 + 8 + 8·12 = 127 bits, the 4-bit MEM0 elapsed counter and the
/// WB registers 1 + 1 + 16 + 3. The preset's in the IR (the conformance suite holds Yosys to
/// the IR there); with NQ ages in Yosys.
#[test]
fn micro_elastic_register_bits() {
    if !have_tools("micro_elastic_register_bits") {
        return;
    }
    let p = params("micro", &[]);
    let latch = 1 + p.tag_bits + 2 + p.rem_bits() as u32 + p.lanes + p.lanes * p.addr_bits;
    assert_eq!(latch, 127);
    let latches = 1 + p.fe_depth + 1 + p.mem_stages + p.nonmem_depth;
    let expected = u64::from(latches * latch + p.rem_bits() as u32 + 1 + 1 + p.tag_bits + 3);
    assert_eq!(expected, 7 * 127 + 4 + 21);
    assert_eq!(Registers::of(&p).total, expected);
    assert_eq!(build(&p).register_bits(), expected);
    // NQ ages add Q × lg(a + 1) bits.
    let aged = [("nonmem_min_age", "2")];
    assert_eq!(
        Registers::of(&params("micro", &aged)).total,
        expected + 2 * 2
    );
    let (_, verilog, top, _) = emit("micro", &aged);
    let report = yosys::generic(&verilog, &top).unwrap();
    assert_eq!(report.rtl_flip_flops, expected + 2 * 2);
}

/// micro's overhead: Elastic adds Q = M = 2 NONMEM latches and no PREMEM (N = 0), i.e. exactly
/// (M + N) · L = 16 lane latches of our 127/8-bit lanes in the RTL.
#[test]
fn micro_overhead() {
    if !have_tools("micro_overhead") {
        return;
    }
    let o = overhead(&params("micro", &[])).unwrap();
    println!("{}", serde_json::to_string_pretty(&o).unwrap());
    assert_eq!(o.paper.lane_latches, 16);
    assert_eq!(o.paper.wb_mux_2to1_per_bit, 4);
    assert_eq!(o.paper.mem0_mux_2to1_per_bit, 0);
    assert_eq!(o.rtl_ff_bits.difference, 2 * 127);
    assert_eq!(o.rtl_lane_latches, 16.0);
    assert_eq!(o.paper_mux_2to1_at_our_widths, 4 * 16);
    assert_eq!(o.elastic.registers.total, o.rtl_ff_bits.elastic);
    assert_eq!(o.unified.registers.total, o.rtl_ff_bits.unified);
    assert!(o.ff_bits.difference > 0 && o.ff_bits.difference < o.rtl_ff_bits.difference);
    assert!(o.cells.difference > 0);
    assert!(o.elastic.generic.latches.is_empty() && o.unified.generic.latches.is_empty());
    assert!(o.notes.iter().any(|n| n.contains("D23")));
}

/// table4's overhead: N + Q = 3 + 4 = M + N latches, so the RTL difference is exactly Table 2's
/// 56 lane latches of our 127/8-bit lanes.
#[test]
fn table4_overhead_matches_table2_latch_count() {
    if !have_tools("table4_overhead_matches_table2_latch_count") {
        return;
    }
    let o = overhead(&params("table4", &[])).unwrap();
    println!(
        "table4: FF bits {:?}, RTL bits {:?}, cells {:?}, MUX cells {:?}, {:.1} s",
        o.ff_bits, o.rtl_ff_bits, o.cells, o.mux_cells, o.seconds
    );
    assert_eq!(o.paper.lane_latches, 56);
    assert_eq!(o.rtl_ff_bits.difference, 7 * 127);
    assert_eq!(o.rtl_lane_latches, 56.0);
    // Six 2:1 per tag bit (WB) + three per entry bit without valid (MEM0): 6·16 + 3·126.
    assert_eq!(o.paper_mux_2to1_at_our_widths, 474);
    assert!(o.ff_bits.difference > 0 && o.cells.difference > 0);
}
