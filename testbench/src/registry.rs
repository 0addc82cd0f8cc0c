//! Every block smrtl knows: one line per block. Adding a block is one file per layer (`hdl/`,
//! `cosim/`, `testbench/`, `synth/`, the same name) and one line here.

use crate::design::BlockEntry;

/// Every block, in `smrtl list` order.
pub fn blocks() -> Vec<BlockEntry> {
    vec![
        BlockEntry::of::<smrtl_hdl::blocks::bank_conflict_detector::Params>(),
        BlockEntry::of::<smrtl_hdl::blocks::elastic_pipeline::Params>(),
        BlockEntry::of::<smrtl_hdl::blocks::history_cache::Params>(),
        BlockEntry::of::<smrtl_hdl::blocks::sm_core::Params>(),
        BlockEntry::of::<smrtl_hdl::blocks::share_cfg::Params>(),
        BlockEntry::of::<smrtl_hdl::blocks::sp_access_unit::Params>(),
        BlockEntry::of::<smrtl_hdl::blocks::lock_table::Params>(),
        BlockEntry::of::<smrtl_hdl::blocks::owner_class::Params>(),
        BlockEntry::of::<smrtl_hdl::blocks::relssp_unit::Params>(),
        BlockEntry::of::<smrtl_hdl::blocks::warp_scheduler::Params>(),
        BlockEntry::of::<smrtl_hdl::blocks::sharing_core::Params>(),
        BlockEntry::of::<smrtl_hdl::blocks::rbmi_arb::Params>(),
        BlockEntry::of::<smrtl_hdl::blocks::qbmi_arb::Params>(),
        BlockEntry::of::<smrtl_hdl::blocks::milg::Params>(),
        BlockEntry::of::<smrtl_hdl::blocks::req_counter::Params>(),
        BlockEntry::of::<smrtl_hdl::blocks::mem_issue_ctl::Params>(),
        BlockEntry::of::<smrtl_hdl::blocks::stall_inspector::Params>(),
    ]
}

/// Looks a block up by name (`-` and `_` alike); the error lists the known blocks.
pub fn block(name: &str) -> Result<BlockEntry, String> {
    block_raw(name).map_err(|e| smrtl_hdl::shown(&e))
}

/// [`block`] before control characters in echoed text are escaped.
fn block_raw(name: &str) -> Result<BlockEntry, String> {
    let all = blocks();
    let names: Vec<&str> = all.iter().map(|b| b.name).collect();
    let joined = names.join(", ");
    all.into_iter()
        .find(|b| b.name == name.replace('-', "_"))
        .ok_or_else(|| format!("unknown block `{name}`; allowed: {joined}"))
}
