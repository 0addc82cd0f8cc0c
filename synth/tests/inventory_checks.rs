//! The register inventories of the blocks whose cost layer does not yet state one through
//! `BlockCost::register_inventory`: each formula against the IR's storage bits at every preset,
//! no tool needed. The conformance suite (`testbench/tests/suite/conformance.rs`, docs/blocks.md
//! "Conformance suite") holds Yosys's flip-flops and memory bits to the IR's at every preset, so
//! these are the inventories against Yosys too; a block leaves this file when its cost layer
//! states its inventory (the suite then checks it).

use smrtl_hdl::{BlockParams, Module};

/// `(preset, IR storage bits, inventory)` for every preset of a block.
fn every_preset<P: BlockParams>(
    build: impl Fn(&P) -> Module,
    storage: impl Fn(&Module) -> u64,
    inventory: impl Fn(&P) -> u64,
) -> Vec<(&'static str, u64, u64)> {
    let rows: Vec<_> = P::presets()
        .into_iter()
        .map(|(name, p)| (name, storage(&build(&p)), inventory(&p)))
        .collect();
    assert!(!rows.is_empty());
    rows
}

fn assert_equal(block: &str, rows: &[(&str, u64, u64)]) {
    for (preset, ir, inventory) in rows {
        assert_eq!(
            ir, inventory,
            "{block}/{preset}: IR storage bits vs the inventory"
        );
    }
}

#[test]
fn lock_table_registers_are_the_section_7_inventory() {
    use smrtl_hdl::blocks::lock_table::{build, Params};
    let rows = every_preset::<Params>(build, Module::register_bits, |p| {
        smrtl_synth::blocks::lock_table::Registers::of(p).total
    });
    assert_equal("lock_table", &rows);
}

#[test]
fn mem_issue_ctl_registers_are_the_inventory() {
    use smrtl_hdl::blocks::mem_issue_ctl::{build, Params};
    let rows = every_preset::<Params>(build, Module::register_bits, |p| {
        smrtl_synth::blocks::mem_issue_ctl::Registers::of(p).total
    });
    assert_equal("mem_issue_ctl", &rows);
}

#[test]
fn elastic_pipeline_registers_are_the_inventory() {
    use smrtl_hdl::blocks::elastic_pipeline::{build, Params};
    let rows = every_preset::<Params>(build, Module::register_bits, |p| {
        smrtl_synth::blocks::elastic_pipeline::Registers::of(p).total
    });
    assert_equal("elastic_pipeline", &rows);
}

/// Registers and memories: the pipeline, BCAWS (its history cache's memories) and the
/// scheduler / issue unit.
#[test]
fn sm_core_storage_is_the_inventory() {
    use smrtl_hdl::blocks::sm_core::{build, Params};
    let rows = every_preset::<Params>(
        build,
        |m| m.register_bits() + m.memory_bits(),
        |p| smrtl_synth::blocks::sm_core::Registers::of(p).total,
    );
    assert_equal("sm_core", &rows);
}
