//! A block with chosen params, ready for every tool: its RTL, ports, model and random stimulus.
//! The CLI and the tests reach every block through this one shape.

use proptest::strategy::BoxedStrategy;
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::{BlockParams, Module, ParamError, ParamInfo};
use std::sync::Arc;

/// One random test case: an input buffer per cycle, starting from reset.
pub type Case = Vec<Vec<u64>>;

/// What a block provides to the tools (implemented once per block, in its file here).
pub trait Bench {
    type Params: BlockParams;
    fn module(p: &Self::Params) -> Module;
    fn model(p: &Self::Params, layout: &Layout) -> Box<dyn Simulator>;
    /// Random cases for co-simulation; shrinking works on them.
    fn cases(p: &Self::Params, layout: &Layout) -> BoxedStrategy<Case>;
}

/// A configured block.
pub struct Design {
    pub name: &'static str,
    pub params: serde_json::Value,
    pub module: Arc<Module>,
    pub layout: Layout,
    /// Block-level model and stimulus; `None` for a block co-simulated at SM level with its own
    /// testbench (`sm_core`, see [`crate::sm_core`]).
    bench: Option<BlockBench>,
}

struct BlockBench {
    model: Box<dyn Fn() -> Box<dyn Simulator> + Send + Sync>,
    cases: BoxedStrategy<Case>,
}

impl Design {
    pub fn new<B: Bench>(p: &B::Params) -> Design
    where
        B::Params: Send + Sync + 'static,
    {
        let module = Arc::new(B::module(p));
        let layout = Layout::new(&module.ports());
        let cases = B::cases(p, &layout);
        let (pm, lm) = (p.clone(), layout.clone());
        Design {
            name: B::Params::BLOCK,
            params: serde_json::to_value(p).expect("params serialize"),
            module,
            layout,
            bench: Some(BlockBench {
                model: Box::new(move || B::model(&pm, &lm)),
                cases,
            }),
        }
    }

    /// A block without a block-level bench: RTL, ports and Verilog only.
    pub fn rtl_only<P: smrtl_hdl::BlockParams>(p: &P, module: Module) -> Design {
        let module = Arc::new(module);
        Design {
            name: P::BLOCK,
            params: serde_json::to_value(p).expect("params serialize"),
            layout: Layout::new(&module.ports()),
            module,
            bench: None,
        }
    }

    /// Whether the block has a block-level model and random stimulus.
    pub fn has_bench(&self) -> bool {
        self.bench.is_some()
    }

    fn bench(&self) -> &BlockBench {
        self.bench
            .as_ref()
            .expect("block-level bench (check Design::has_bench first)")
    }

    /// A fresh behavioral model in its reset state.
    pub fn model(&self) -> Box<dyn Simulator> {
        (self.bench().model)()
    }

    pub fn cases(&self) -> BoxedStrategy<Case> {
        self.bench().cases.clone()
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
}

fn configure<B: Bench>(
    preset: Option<&str>,
    sets: &[(String, String)],
) -> Result<Design, ParamError>
where
    B::Params: Send + Sync + 'static,
{
    Ok(Design::new::<B>(&B::Params::resolve(preset, sets)?))
}

fn presets<P: BlockParams>() -> Vec<(&'static str, serde_json::Value)> {
    P::presets()
        .into_iter()
        .map(|(n, p)| (n, serde_json::to_value(p).expect("params serialize")))
        .collect()
}

/// Every block smrtl knows.
pub fn blocks() -> Vec<BlockEntry> {
    use crate::bank_conflict_detector::Detector;
    use crate::elastic_pipeline::ElasticPipeline;
    use crate::history_cache::HistoryCacheBench;
    use smrtl_hdl::bank_conflict_detector::Params;
    use smrtl_hdl::elastic_pipeline::Params as PipeParams;
    use smrtl_hdl::history_cache::Params as HcParams;
    use smrtl_hdl::sm_core::Params as SmParams;
    vec![
        BlockEntry {
            name: Params::BLOCK,
            summary: "shared-memory bank-conflict detector: lane addresses -> degree, service cycles (seeds 000, 002)",
            params: Params::describe,
            presets: presets::<Params>,
            configure: configure::<Detector>,
        },
        BlockEntry {
            name: PipeParams::BLOCK,
            summary: "SM pipeline, trace mode: front end + unified / split / elastic backend (PREMEM, NONMEM FIFOs, WB priority) (seed 000)",
            params: PipeParams::describe,
            presets: presets::<PipeParams>,
            configure: configure::<ElasticPipeline>,
        },
        BlockEntry {
            name: HcParams::BLOCK,
            summary: "BCAWS: conflict history cache, degree accumulator, distance counter and memory-warp mask (seed 000)",
            params: HcParams::describe,
            presets: presets::<HcParams>,
            configure: configure::<HistoryCacheBench>,
        },
        BlockEntry {
            name: SmParams::BLOCK,
            summary: "SM core, scheduler mode: RR scheduler + BCAWS mask, issue unit, history cache and the pipeline; co-simulated with workloads (`smrtl sim --workload`) (seed 000)",
            params: SmParams::describe,
            presets: presets::<SmParams>,
            configure: |preset, sets| {
                let p = SmParams::resolve(preset, sets)?;
                Ok(Design::rtl_only(&p, smrtl_hdl::sm_core::build(&p)))
            },
        },
    ]
}

/// Looks a block up by name; the error lists the known blocks.
pub fn block(name: &str) -> Result<BlockEntry, String> {
    let all = blocks();
    let names: Vec<&str> = all.iter().map(|b| b.name).collect();
    let joined = names.join(", ");
    all.into_iter()
        .find(|b| b.name == name.replace('-', "_"))
        .ok_or_else(|| format!("unknown block `{name}`; allowed: {joined}"))
}
