//! Checks on the emitted `sharing_core` (docs/scratchpad-sharing.md §5.3, §7): latch-free Yosys
//! synthesis with the flip-flops of every block module equal to the §7 inventory, on the `small`
//! and `fig5` presets. Lint, Icarus and the whole design's synthesis at every preset (the paper's
//! defaults included: 3,553 flip-flops) are the conformance suite's (docs/blocks.md
//! "Conformance suite").

use smrtl_hdl::blocks::sharing_core::Params;
use smrtl_hdl::BlockParams;
use smrtl_synth::blocks::sharing_core;

fn have_tools() -> bool {
    smrtl_hdl::tools::external(&["yosys"])
}

#[test]
fn every_module_synthesizes_to_its_inventory() {
    if !have_tools() {
        return;
    }
    for preset in ["small", "fig5"] {
        let p = Params::resolve_pairs(Some(preset), &[]).unwrap();
        let (report, per_module) = sharing_core::checks(&p).unwrap();
        assert!(report.latches.is_empty(), "{preset}: {:?}", report.latches);
        for c in &per_module {
            assert_eq!(c.yosys, c.inventory, "{preset}: {c:?}");
        }
        let total = sharing_core::total(&sharing_core::inventory(&p));
        assert_eq!(report.flip_flops, total, "{preset}");
    }
}
