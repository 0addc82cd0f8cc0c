//! The `BankConflictDetector` in Yosys: with REG_OUT the RTL registers exactly the five
//! outputs, and with P = 1 Yosys merges the `cycles` register into `degree` (equal values,
//! docs/bank-conflicts.md §2.1). Lint, Icarus, latch-free synthesis and the flip-flop inventory
//! at every preset are the conformance suite's.
//!
//! A missing tool fails the test when `SMRTL_REQUIRE_TOOLS=1`, and skips it otherwise.

use smrtl_hdl::blocks::bank_conflict_detector::{build, Params};
use smrtl_hdl::rusthdl::emit_verilog;
use smrtl_hdl::BlockParams;
use smrtl_synth::blocks::bank_conflict_detector::register_bits;
use smrtl_synth::yosys;
use std::sync::Arc;

#[test]
fn ep8_reg_out_registers_exactly_the_outputs() {
    if !smrtl_hdl::tools::external(&["yosys"]) {
        return;
    }
    let p = Params::resolve_pairs(Some("ep8"), &[("REG_OUT", "true")]).unwrap();
    let dw = p.degree_bits() as u64;
    // degree, degree_m1, cycles, conflict, any_active: 4 + 3 + 4 + 1 + 1 for ep8.
    assert_eq!(register_bits(&p), 13);
    let module = Arc::new(build(&p));
    let report = yosys::generic(&emit_verilog(&module), &module.name).unwrap();
    assert_eq!(report.rtl_flip_flops, 13, "register bits in the RTL");
    // With P = 1, cycles = degree, and Yosys merges the two equal registers.
    assert_eq!(report.flip_flops, 13 - dw, "flip-flops after synthesis");
}
