//! The Elastic-minus-Unified overhead of the emitted `elastic_pipeline` beside the paper's
//! Table 2 (docs/elastic-pipeline.md §7), on `micro` and `table4`. Lint, Icarus, latch-free
//! synthesis and the register inventory at every preset are the conformance suite's.
//!
//! A missing tool fails the test when `SMRTL_REQUIRE_TOOLS=1`, and skips it otherwise.

use smrtl_hdl::blocks::elastic_pipeline::Params;
use smrtl_hdl::BlockParams;
use smrtl_synth::blocks::elastic_pipeline::overhead;

/// True when Yosys is installed (else skip, or fail in CI).
fn have_tools(_test: &str) -> bool {
    smrtl_hdl::tools::external(&["yosys"])
}

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).expect("valid params")
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
