//! Every block smrtl knows: one line per block. Adding a block is one file per layer (`hdl/`,
//! `cosim/`, `testbench/`, `synth/`, the same name) and one line here.

use crate::design::BlockEntry;

/// Every block, in `smrtl list` order.
pub fn blocks() -> Vec<BlockEntry> {
    vec![
        BlockEntry::old::<crate::blocks::bank_conflict_detector::Detector>(),
        BlockEntry::old::<crate::blocks::elastic_pipeline::ElasticPipeline>(),
        BlockEntry::old::<crate::blocks::history_cache::HistoryCacheBench>(),
        BlockEntry::old::<crate::blocks::sm_core::SmCoreBench>(),
        BlockEntry::old::<crate::blocks::share_cfg::ShareCfgBench>(),
        BlockEntry::old::<crate::blocks::sp_access_unit::SpAccessUnitBench>(),
        BlockEntry::old::<crate::blocks::lock_table::LockTableBench>(),
        BlockEntry::old::<crate::blocks::owner_class::OwnerClassBench>(),
        BlockEntry::old::<crate::blocks::relssp_unit::RelsspBench>(),
        BlockEntry::old::<crate::blocks::warp_scheduler::WarpSchedulerBench>(),
        BlockEntry::old::<crate::blocks::sharing_core::SharingCoreBench>(),
        BlockEntry::old::<crate::blocks::rbmi_arb::RbmiArbBench>(),
        BlockEntry::old::<crate::blocks::qbmi_arb::QbmiArbBench>(),
        BlockEntry::of::<smrtl_hdl::blocks::milg::Params>(),
        BlockEntry::of::<smrtl_hdl::blocks::req_counter::Params>(),
        BlockEntry::of::<smrtl_hdl::blocks::stall_inspector::Params>(),
        BlockEntry::old::<crate::blocks::mem_issue_ctl::MemIssueCtlBench>(),
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
