//! The elastic pipeline's block bench (docs/elastic-pipeline.md §6, §9): the trace-mode top's
//! input encoding and random open-loop cases for the block harness. Trace files, their driver
//! and the lock-step co-simulation on records are in [`crate::studies::trace`].

use crate::design::{Case, OldBench};
use proptest::prelude::*;
use smrtl_cosim::blocks::elastic_pipeline::{Entry, Model};
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::elastic_pipeline::{port, ports, Kind, Params};
use smrtl_hdl::netlist::mask;
use smrtl_hdl::tools::ToolError;
use smrtl_hdl::Module;

// ---------------------------------------------------------------------------------------------
// Ports
// ---------------------------------------------------------------------------------------------

/// The trace-mode top's buffer layout for `p` (ports of `smrtl_hdl::blocks::elastic_pipeline::ports`).
pub fn layout(p: &Params) -> Layout {
    Layout::new(&ports(p))
}

/// One cycle's inputs: `offer` on `in_*` (in_valid = 1), `icnt_valid`, reset low.
pub fn encode_inputs(
    p: &Params,
    layout: &Layout,
    offer: Option<&Entry>,
    icnt_valid: bool,
) -> Vec<u64> {
    let mut buf = vec![0u64; layout.in_words];
    let mut put = |name: &str, v: u64| {
        if let Some(s) = layout.input(name) {
            s.of_mut(&mut buf)[0] = v & mask(s.width.min(64));
        }
    };
    put(port::ICNT_VALID, icnt_valid as u64);
    let Some(e) = offer else { return buf };
    put(port::IN_VALID, 1);
    put(port::IN_TAG, e.tag as u64);
    put(port::IN_KIND, e.kind as u64);
    put(port::IN_DEG, e.deg_override.unwrap_or(0) as u64);
    let act = e
        .act
        .iter()
        .enumerate()
        .fold(0u64, |m, (l, &on)| m | (on as u64) << l);
    put(port::IN_ACT, act);
    let aw = p.addr_bits as usize;
    let slot = layout.in_slot(port::IN_ADDR);
    for (l, &a) in e.addrs.iter().enumerate().take(p.lanes as usize) {
        slot.set_field(&mut buf, l * aw, aw, a as u64);
    }
    buf
}

// ---------------------------------------------------------------------------------------------
// Random open-loop cases (block harness)
// ---------------------------------------------------------------------------------------------

/// Longest random case.
pub const CASE_CYCLES: usize = 96;

/// Random per-cycle inputs for the block harness: an entry offered most cycles whatever
/// `in_ready` says (F loads only when ready), every kind, overrides 0..=L, addresses from small
/// strided pools so the detector sees real conflicts, ICNT grants and rare resets. Tags are
/// the cycle number.
pub fn cases(p: &Params, layout: &Layout) -> BoxedStrategy<Case> {
    let (p, layout) = (p.clone(), layout.clone());
    let lanes = p.lanes as usize;
    let cycle = (
        prop::bool::weighted(0.85),
        0..4u64,
        prop_oneof![2 => Just(0u32), 1 => 1..=p.lanes],
        (prop::sample::select(vec![0u32, 1, 2, 4, 8, 16]), 0..64u32),
        any::<u64>(),
        prop::bool::weighted(0.12),
        prop::bool::weighted(0.005),
    );
    prop::collection::vec(cycle, 1..=CASE_CYCLES)
        .prop_map(move |cycles| {
            cycles
                .into_iter()
                .enumerate()
                .map(
                    |(t, (valid, kind, deg, (stride, base), act, icnt, reset))| {
                        let e = Entry {
                            tag: (t as u64 & mask(p.tag_bits as usize)) as u32,
                            kind: Kind::from_bits(kind),
                            deg_override: (deg != 0).then_some(deg),
                            addrs: (0..lanes as u32)
                                .map(|l| (base + l * stride) & mask(p.addr_bits as usize) as u32)
                                .collect(),
                            // Bit 63 set: all lanes active (half the cases).
                            act: (0..lanes)
                                .map(|l| act >> 63 == 1 || act >> l & 1 == 1)
                                .collect(),
                        };
                        let mut buf = encode_inputs(&p, &layout, valid.then_some(&e), icnt);
                        if let Some(s) = layout.input("reset") {
                            s.of_mut(&mut buf)[0] = reset as u64;
                        }
                        buf
                    },
                )
                .collect()
        })
        .boxed()
}

/// The block for the tools (`smrtl list`, `gen`, `cosim`, `synth`): RTL, model, random cases.
pub struct ElasticPipeline;

impl OldBench for ElasticPipeline {
    type Params = Params;
    const SUMMARY: &'static str = "SM pipeline, trace mode: front end + unified / split / elastic backend (PREMEM, NONMEM FIFOs, WB priority) (seed 000)";

    fn module(p: &Params) -> Module {
        smrtl_hdl::blocks::elastic_pipeline::build(p)
    }

    fn model(p: &Params, layout: &Layout) -> Box<dyn Simulator + Send> {
        Box::new(Model::new(p, layout))
    }

    fn cases(p: &Params, layout: &Layout) -> BoxedStrategy<Case> {
        cases(p, layout)
    }

    fn cost_notes(p: &Params) -> Result<smrtl_synth::Notes, ToolError> {
        smrtl_synth::blocks::elastic_pipeline::notes(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::ValueTree;

    #[test]
    fn random_cases_run_on_the_model() {
        let p = Params {
            fe_depth: 2,
            mem_stages: 2,
            ..Params::default()
        };
        let layout = layout(&p);
        let mut runner = crate::check::runner(1);
        let strategy = cases(&p, &layout);
        for _ in 0..20 {
            let case = strategy.new_tree(&mut runner).unwrap().current();
            let mut model = Model::new(&p, &layout);
            let mut out = vec![0; layout.out_words];
            for inputs in &case {
                model.step(inputs, &mut out);
            }
        }
    }
}
