//! What a block provides to the tools ([`Bench`]), and a block with chosen params ready for
//! every tool ([`Design`]): its RTL, ports, model, random stimulus and cost notes. The CLI and
//! the tests reach every block through this one shape; the list of blocks is
//! [`crate::registry`] (docs/blocks.md §1).
//!
//! A block's descriptor is its params type with one trait per layer, each implemented in the
//! block's file of that layer: [`Block`] (`hdl/`: ports declared once, the generator, planted
//! faults), [`BlockModel`] (`cosim/`: the model), [`BlockCost`] (`synth/`: cost lines and the
//! register inventory) and [`Bench`] (`testbench/`: the summary, the random stimulus as typed
//! cycles, proofs).

use crate::coverage::{self, Counter, Cover};
use proptest::strategy::{BoxedStrategy, Strategy};
use smrtl_cosim::{BlockModel, Layout, Simulator};
use smrtl_hdl::tools::ToolError;
use smrtl_hdl::{Block, BlockParams, HasPorts, Module, ParamError, ParamInfo};
use smrtl_synth::prove::Proof;
use smrtl_synth::{BlockCost, Notes};
use std::sync::Arc;

/// One random test case: an input buffer per cycle, starting from reset.
pub type Case = Vec<Vec<u64>>;

/// A block's test-bench layer (implemented once per block on its params, in
/// `testbench/src/blocks/<block>.rs`; listed once in [`crate::registry`]). Ports, widths, the
/// RTL, the model and the cost lines come from the other layers' traits.
pub trait Bench: Block + BlockCost + PartialEq + Send + Sync + 'static {
    /// The block's behavioral model.
    type Model: BlockModel<Params = Self>;
    /// One line for `smrtl list`: what the block is and which seed it comes from.
    const SUMMARY: &'static str;
    /// Random stimulus: cases of typed cycles from reset, for co-simulation and shrinking.
    fn stimulus(&self) -> BoxedStrategy<Vec<Self::Inputs>>;
    /// The block's solver proof at these params for `smrtl prove` (docs/prove.md): legal-
    /// stimulus assumptions, invariants over its ports, registered-only outputs and the
    /// depths; `None` for a block (or configuration) without properties.
    fn properties(&self) -> Option<Proof> {
        None
    }
    /// The configurations `smrtl prove --all-configs` proves: by default the presets.
    fn proof_configs() -> Vec<Self> {
        Self::presets().into_iter().map(|(_, p)| p).collect()
    }
    /// The block's coverpoints at these params (docs/coverage.md): each rule of its spec that
    /// the random stimulus must exercise, or why no legal stimulus can.
    fn coverpoints(&self) -> Vec<Cover<Self>>;
}

/// The input buffers of `cycles` in `layout` (each cycle from idle: a port a cycle does not
/// set is 0).
pub fn encode<P: HasPorts>(p: &P, layout: &Layout, cycles: &[P::Inputs]) -> Case {
    let io = p.io(layout);
    cycles
        .iter()
        .map(|c| {
            let mut buf = vec![0u64; layout.in_words];
            P::encode(&io, c, &mut buf);
            buf
        })
        .collect()
}

/// A configured block.
pub struct Design {
    pub name: &'static str,
    pub params: serde_json::Value,
    pub module: Arc<Module>,
    pub layout: Layout,
    model: Box<dyn Fn() -> Box<dyn Simulator + Send> + Send + Sync>,
    cases: BoxedStrategy<Case>,
    counter: Box<dyn Fn() -> Box<dyn Counter> + Send + Sync>,
    notes: Box<dyn Fn() -> Result<Notes, ToolError> + Send + Sync>,
    /// The block's proof at these params ([`Bench::properties`]).
    pub proof: Option<Proof>,
    /// The register bits of the block's own inventory ([`BlockCost::register_inventory`]),
    /// which the conformance suite holds against the IR and Yosys; `None` where the block
    /// states none (and for blocks not yet converted to [`Bench`]).
    pub inventory: Option<u64>,
}

impl Design {
    /// Block `P` at params `p`.
    pub fn new<P: Bench>(p: &P) -> Design {
        Design::with_module(p, p.build())
    }

    /// Block `P` at `p` with `fault` planted in its RTL (the model stays correct): what the
    /// conformance suite must catch (docs/blocks.md §4).
    #[cfg(feature = "faults")]
    pub fn with_fault<P: Bench>(p: &P, fault: &smrtl_hdl::faults::Fault) -> Design {
        Design::with_module(p, smrtl_hdl::faults::plant_module(fault, || p.build()))
    }

    /// [`Design::with_fault`], or `None` when no generator builds `fault` at `p` (a fault on a
    /// path these params do not build).
    #[cfg(feature = "faults")]
    pub fn with_fault_if_built<P: Bench>(
        p: &P,
        fault: &smrtl_hdl::faults::Fault,
    ) -> Option<Design> {
        let (mut module, hit) = smrtl_hdl::faults::plant(fault, || p.build());
        hit.then(|| {
            module.name = format!("{}_fault", module.name);
            Design::with_module(p, module)
        })
    }

    fn with_module<P: Bench>(p: &P, module: Module) -> Design {
        let module = Arc::new(module);
        let layout = Layout::new(&module.ports());
        let (pm, lm, pn, pc) = (p.clone(), layout.clone(), p.clone(), p.clone());
        let (lc, pv, lv) = (layout.clone(), p.clone(), layout.clone());
        Design {
            name: P::BLOCK,
            params: serde_json::to_value(p).expect("params serialize"),
            module,
            layout,
            model: Box::new(move || Box::new(P::Model::new(&pm, &lm))),
            cases: p
                .stimulus()
                .prop_map(move |cycles| encode(&pc, &lc, &cycles))
                .boxed(),
            counter: Box::new(move || coverage::counter(&pv, &lv)),
            notes: Box::new(move || pn.cost_notes()),
            proof: p.properties(),
            inventory: p.register_inventory(),
        }
    }

    /// A fresh behavioral model in its reset state.
    pub fn model(&self) -> Box<dyn Simulator + Send> {
        (self.model)()
    }

    pub fn cases(&self) -> BoxedStrategy<Case> {
        self.cases.clone()
    }

    /// A fresh counter of the block's coverpoints ([`Bench::coverpoints`]).
    pub fn coverage_counter(&self) -> Box<dyn Counter> {
        (self.counter)()
    }

    /// The block's own lines in `smrtl synth` (may run Yosys).
    pub fn cost_notes(&self) -> Result<Notes, ToolError> {
        (self.notes)()
    }

    /// The block's Verilog: the top module (named by [`smrtl_hdl::params::module_name`]) and
    /// every module below it, with the params and the regenerate command in the header.
    pub fn verilog(&self) -> String {
        self.verilog_for(None)
    }

    /// [`Design::verilog`] for a file written to `output` (named in the regenerate command).
    pub fn verilog_for(&self, output: Option<&str>) -> String {
        let header = smrtl_hdl::params::header_lines(self.name, &self.params, output);
        smrtl_hdl::verilog::emit(&self.module, &header)
    }
}

/// Builds a block's [`Design`] from an optional preset and `key=value` overrides.
pub type Configure = fn(Option<&str>, &[(String, String)]) -> Result<Design, ParamError>;

/// Builds a block's [`Design`] at an optional preset with one of its planted faults in the RTL
/// (the model stays correct); `Ok(None)` when these params do not build the fault.
#[cfg(feature = "faults")]
pub type ConfigureWithFault =
    fn(Option<&str>, &smrtl_hdl::faults::Fault) -> Result<Option<Design>, ParamError>;

/// A block as `smrtl list` shows it, and how to configure it.
#[derive(Clone)]
pub struct BlockEntry {
    pub name: &'static str,
    pub summary: &'static str,
    pub params: fn() -> Vec<ParamInfo>,
    pub presets: fn() -> Vec<(&'static str, serde_json::Value)>,
    pub configure: Configure,
    /// The configurations `smrtl prove --all-configs` proves ([`Bench::proof_configs`]).
    pub proof_configs: fn() -> Vec<Design>,
    /// The block's planted faults (docs/blocks.md §4).
    #[cfg(feature = "faults")]
    pub faults: &'static [smrtl_hdl::faults::Fault],
    /// A preset's design with one of [`BlockEntry::faults`] planted: what the conformance
    /// suite must catch (docs/blocks.md "Conformance suite").
    #[cfg(feature = "faults")]
    pub configure_with_fault: ConfigureWithFault,
}

impl BlockEntry {
    /// The entry of block `P`.
    pub fn of<P: Bench>() -> BlockEntry {
        BlockEntry {
            name: P::BLOCK,
            summary: P::SUMMARY,
            params: P::describe,
            presets: presets::<P>,
            configure: |preset, sets| Ok(Design::new(&P::resolve(preset, sets)?)),
            proof_configs: || P::proof_configs().iter().map(Design::new).collect(),
            #[cfg(feature = "faults")]
            faults: P::FAULTS,
            #[cfg(feature = "faults")]
            configure_with_fault: |preset, fault| {
                Ok(Design::with_fault_if_built(
                    &P::resolve(preset, &[])?,
                    fault,
                ))
            },
        }
    }
}

fn presets<P: BlockParams>() -> Vec<(&'static str, serde_json::Value)> {
    P::presets()
        .into_iter()
        .map(|(n, p)| (n, serde_json::to_value(p).expect("params serialize")))
        .collect()
}
