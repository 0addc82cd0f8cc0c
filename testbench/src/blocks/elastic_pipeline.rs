//! The elastic pipeline's block bench (docs/elastic-pipeline.md §6, §9): the trace-mode top's
//! typed inputs of an offered entry and random open-loop cases for the block harness. Trace
//! files, their driver and the lock-step co-simulation on records are in
//! [`crate::studies::trace`].

use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::elastic_pipeline::{Entry, Model};
use smrtl_cosim::Layout;
use smrtl_hdl::blocks::elastic_pipeline::port::{Inputs, Io};
use smrtl_hdl::blocks::elastic_pipeline::{ports, Kind, Params};
use smrtl_hdl::netlist::mask;

/// The trace-mode top's buffer layout for `p` (its declared ports and latch taps).
pub fn layout(p: &Params) -> Layout {
    Layout::new(&ports(p))
}

/// One cycle's inputs: `offer` on `in_*` (in_valid = 1), `icnt_valid`, reset low.
pub fn inputs(p: &Params, offer: Option<&Entry>, icnt_valid: bool) -> Inputs {
    let mut i = Inputs {
        icnt_valid,
        ..Inputs::new(p)
    };
    if let Some(e) = offer {
        i.in_valid = true;
        i.in_tag = u64::from(e.tag);
        i.in_kind = e.kind as u64;
        i.in_deg = u64::from(e.deg_override.unwrap_or(0));
        for (a, &w) in i.in_addr.iter_mut().zip(e.addrs.iter()) {
            *a = u64::from(w);
        }
        for (a, &on) in i.in_act.iter_mut().zip(e.act.iter()) {
            *a = on;
        }
    }
    i
}

/// [`inputs`] as one cycle's input buffer of `layout`.
pub fn encode_inputs(
    p: &Params,
    layout: &Layout,
    offer: Option<&Entry>,
    icnt_valid: bool,
) -> Vec<u64> {
    let mut buf = vec![0u64; layout.in_words];
    Io::new(p, layout).write_inputs(&inputs(p, offer, icnt_valid), &mut buf);
    buf
}

/// Longest random case.
pub const CASE_CYCLES: usize = 96;

/// Random per-cycle inputs for the block harness: an entry offered most cycles whatever
/// `in_ready` says (F loads only when ready), every kind, overrides 0..=L, addresses from small
/// strided pools so the detector sees real conflicts, ICNT grants and rare resets. Tags are
/// the cycle number.
pub fn cycles(p: &Params) -> impl Strategy<Value = Vec<Inputs>> {
    let p = p.clone();
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
    prop::collection::vec(cycle, 1..=CASE_CYCLES).prop_map(move |cycles| {
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
                    Inputs {
                        reset,
                        ..inputs(&p, valid.then_some(&e), icnt)
                    }
                },
            )
            .collect()
    })
}

impl Bench for Params {
    type Model = Model;
    const SUMMARY: &'static str = "SM pipeline, trace mode: front end + unified / split / elastic backend (PREMEM, NONMEM FIFOs, WB priority) (seed 000)";

    fn stimulus(&self) -> BoxedStrategy<Vec<Inputs>> {
        cycles(self).boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::ValueTree;
    use smrtl_cosim::{BlockModel, Simulator};

    #[test]
    fn random_cases_run_on_the_model() {
        let p = Params {
            fe_depth: 2,
            mem_stages: 2,
            ..Params::default()
        };
        let d = crate::Design::new(&p);
        let mut runner = crate::check::runner(1);
        for _ in 0..20 {
            let case = d.cases().new_tree(&mut runner).unwrap().current();
            let mut model = Model::new(&p, &d.layout);
            let mut out = vec![0; d.layout.out_words];
            for inputs in &case {
                model.step(inputs, &mut out);
            }
        }
    }
}
