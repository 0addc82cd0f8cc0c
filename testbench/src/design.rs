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

/// The transition's descriptor (blocks not yet converted to [`Bench`]) (implemented once per block, in its file here; listed once in
/// [`crate::registry`]). Params, ports and widths come from [`Bench::Params`].
pub trait OldBench: 'static {
    type Params: BlockParams + PartialEq + Send + Sync + 'static;
    /// One line for `smrtl list`: what the block is and which seed it comes from.
    const SUMMARY: &'static str;
    /// The RTL.
    fn module(p: &Self::Params) -> Module;
    /// The behavioral model at the block's ports, in its reset state.
    fn model(p: &Self::Params, layout: &Layout) -> Box<dyn Simulator + Send>;
    /// Random cases for co-simulation; shrinking works on them.
    fn cases(p: &Self::Params, layout: &Layout) -> BoxedStrategy<Case>;
    /// The block's own lines in `smrtl synth` (its figures beside the paper's).
    fn cost_notes(_p: &Self::Params) -> Result<Notes, ToolError> {
        Ok(Notes::default())
    }
    /// The block's solver proof at `p` for `smrtl prove` (docs/prove.md): legal-stimulus
    /// assumptions, invariants over its ports, registered-only outputs and the depths; `None`
    /// for a block (or configuration) without properties.
    fn properties(_p: &Self::Params) -> Option<Proof> {
        None
    }
    /// The configurations `smrtl prove --all-configs` proves: by default the presets.
    fn proof_configs() -> Vec<Self::Params> {
        Self::Params::presets()
            .into_iter()
            .map(|(_, p)| p)
            .collect()
    }
}

/// A configured block.
pub struct Design {
    pub name: &'static str,
    pub params: serde_json::Value,
    pub module: Arc<Module>,
    pub layout: Layout,
    model: Box<dyn Fn() -> Box<dyn Simulator + Send> + Send + Sync>,
    cases: BoxedStrategy<Case>,
    notes: Box<dyn Fn() -> Result<Notes, ToolError> + Send + Sync>,
    /// The block's proof at these params ([`Bench::properties`]).
    pub proof: Option<Proof>,
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

    fn with_module<P: Bench>(p: &P, module: Module) -> Design {
        let module = Arc::new(module);
        let layout = Layout::new(&module.ports());
        let (pm, lm, pn, pc) = (p.clone(), layout.clone(), p.clone(), p.clone());
        let lc = layout.clone();
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
            notes: Box::new(move || pn.cost_notes()),
            proof: p.properties(),
        }
    }

    pub fn old<B: OldBench>(p: &B::Params) -> Design {
        let module = Arc::new(B::module(p));
        let layout = Layout::new(&module.ports());
        let cases = B::cases(p, &layout);
        let (pm, lm, pn) = (p.clone(), layout.clone(), p.clone());
        Design {
            name: B::Params::BLOCK,
            params: serde_json::to_value(p).expect("params serialize"),
            module,
            layout,
            model: Box::new(move || B::model(&pm, &lm)),
            cases,
            notes: Box::new(move || B::cost_notes(&pn)),
            proof: B::properties(p),
        }
    }

    /// A fresh behavioral model in its reset state.
    pub fn model(&self) -> Box<dyn Simulator + Send> {
        (self.model)()
    }

    pub fn cases(&self) -> BoxedStrategy<Case> {
        self.cases.clone()
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

/// A block as `smrtl list` shows it, and how to configure it.
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
        }
    }

    /// The entry of a block not yet converted to [`Bench`].
    pub fn old<B: OldBench>() -> BlockEntry {
        BlockEntry {
            name: B::Params::BLOCK,
            summary: B::SUMMARY,
            params: B::Params::describe,
            presets: presets::<B::Params>,
            configure: configure::<B>,
            proof_configs: proof_configs::<B>,
            #[cfg(feature = "faults")]
            faults: &[],
        }
    }
}

fn proof_configs<B: OldBench>() -> Vec<Design> {
    B::proof_configs().iter().map(Design::old::<B>).collect()
}

fn configure<B: OldBench>(
    preset: Option<&str>,
    sets: &[(String, String)],
) -> Result<Design, ParamError> {
    Ok(Design::old::<B>(&B::Params::resolve(preset, sets)?))
}

fn presets<P: BlockParams>() -> Vec<(&'static str, serde_json::Value)> {
    P::presets()
        .into_iter()
        .map(|(n, p)| (n, serde_json::to_value(p).expect("params serialize")))
        .collect()
}
