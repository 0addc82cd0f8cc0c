//! smrtl stimulus: the papers' scenarios, random generators and proptest strategies, and the
//! random co-simulation driver that shrinks a failure to a minimal case.

pub mod bank_conflict_detector;
pub mod check;
pub mod design;
pub mod elastic_pipeline;
pub mod stimulus_file;

pub use design::{block, blocks, Bench, Case, Design};

/// Whether tests may use external `tool`: true when installed; when missing, a test run that
/// requires tools (`SMRTL_REQUIRE_TOOLS=1`, as CI sets) panics instead of skipping.
pub fn external(tool: &str) -> bool {
    if smrtl_hdl::tools::find(tool).is_some() {
        return true;
    }
    assert!(
        !smrtl_hdl::tools::tools_required(),
        "{tool} is not installed but SMRTL_REQUIRE_TOOLS=1: this test must not be skipped"
    );
    eprintln!("skipped: {tool} is not installed");
    false
}
