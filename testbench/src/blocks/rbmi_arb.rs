//! Stimulus for `rbmi_arb` (docs/memory-issue-control.md §3.1): per case, each kernel gets a
//! request density (rare, half, almost always), so that rotations over all kernels and skips of
//! an ineligible kernel both happen often; `mem_ok` is mostly open, `slot_free` mostly set, and
//! a rare reset puts the pointer back mid-case.

use crate::design::{Case, OldBench};
use proptest::prelude::*;
use smrtl_cosim::blocks::rbmi_arb::Model;
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::rbmi_arb::{build, port, Params};
use smrtl_hdl::tools::ToolError;
use smrtl_hdl::Module;
use smrtl_synth::prove::{Def, Proof};

/// One cycle of RbmiArb's inputs (bit k = kernel k).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cycle {
    pub mem_req: u8,
    pub mem_ok: u8,
    pub slot_free: bool,
    pub reset: bool,
}

impl Cycle {
    /// Every kernel requests, no gate, slot free.
    pub fn all(n: usize) -> Cycle {
        let all = ((1u16 << n) - 1) as u8;
        Cycle {
            mem_req: all,
            mem_ok: all,
            slot_free: true,
            reset: false,
        }
    }
}

/// The cycles as input buffers.
pub fn encode(layout: &Layout, cycles: &[Cycle]) -> Case {
    cycles
        .iter()
        .map(|c| {
            let mut buf = vec![0u64; layout.in_words];
            layout.write_in(&mut buf, "reset", c.reset as u64);
            layout.write_in(&mut buf, port::MEM_REQ, u64::from(c.mem_req));
            layout.write_in(&mut buf, port::MEM_OK, u64::from(c.mem_ok));
            layout.write_in(&mut buf, port::SLOT_FREE, c.slot_free as u64);
            buf
        })
        .collect()
}

/// Longest random case; a failing case shrinks from at most this many cycles.
pub const CASE_CYCLES: usize = 64;

/// Per-kernel request densities a case draws from (of 16).
const DENSITY: [u32; 3] = [2, 8, 15];

/// Random cycles for `n` kernels (see the module doc).
pub fn cycles(n: usize, max: usize) -> impl Strategy<Value = Vec<Cycle>> {
    let cycle = (
        prop::collection::vec((0..16u32, 0..16u32), n),
        prop::bool::weighted(0.8),
        prop::bool::weighted(0.01),
    );
    (
        prop::collection::vec(0..DENSITY.len(), n),
        prop::collection::vec(cycle, 1..=max),
    )
        .prop_map(move |(density, raws)| {
            raws.into_iter()
                .map(|(kernels, slot_free, reset)| {
                    let (mut mem_req, mut mem_ok) = (0u8, 0u8);
                    for (k, &(r, o)) in kernels.iter().enumerate() {
                        mem_req |= u8::from(r < DENSITY[density[k]]) << k;
                        mem_ok |= u8::from(o < 14) << k;
                    }
                    Cycle {
                        mem_req,
                        mem_ok,
                        slot_free,
                        reset,
                    }
                })
                .collect()
        })
}

pub struct RbmiArbBench;

impl OldBench for RbmiArbBench {
    type Params = Params;
    const SUMMARY: &'static str =
        "RBMI: loose round-robin over kernels for the SM's memory-issue slot (seed 004)";

    fn module(p: &Params) -> Module {
        build(p)
    }

    fn model(p: &Params, layout: &Layout) -> Box<dyn Simulator + Send> {
        Box::new(Model::new(p, layout))
    }

    fn cases(p: &Params, layout: &Layout) -> BoxedStrategy<Case> {
        let layout = layout.clone();
        cycles(p.kernels(), CASE_CYCLES)
            .prop_map(move |cs| encode(&layout, &cs))
            .boxed()
    }

    fn cost_notes(p: &Params) -> Result<smrtl_synth::Notes, ToolError> {
        smrtl_synth::blocks::rbmi_arb::notes(p)
    }

    fn properties(p: &Params) -> Option<Proof> {
        Some(proof(p))
    }
}

/// The wrapper wire `elig = mem_req & mem_ok & {N{slot_free}}` (spec §2), over the port names
/// the arbiters and `mem_issue_ctl` share.
pub fn elig_def(n: usize) -> Def {
    Def::new(
        "elig",
        n,
        format!(
            "{} & {} & {{{n}{{{}}}}}",
            port::MEM_REQ,
            port::MEM_OK,
            port::SLOT_FREE
        ),
    )
}

/// RbmiArb's solver proof (docs/prove.md §5.3; spec §3.1): every input is legal. With
/// `elig = mem_req & mem_ok & {N{slot_free}}`: at most one `grant` bit, only to an eligible
/// kernel, and one whenever a kernel is eligible (work conservation); the grant is the first
/// eligible kernel after `last` in cyclic order; `last` names a kernel and follows the grant.
/// `last` is a register. The presets cover N = 1, 2, 3.
pub fn proof(p: &Params) -> Proof {
    use smrtl_synth::prove::{zext, Property};
    let n = p.kernels();
    let lb = p.last_bits();
    let (grant, last) = (port::GRANT, port::LAST);
    let zero = format!("{n}'d0");
    let elig = elig_def(n);
    let mut props = vec![
        Property::assert(
            "grant_onehot",
            format!("({grant} & ({grant} - {n}'d1)) == {zero}"),
        ),
        Property::assert("grant_eligible", format!("({grant} & ~elig) == {zero}")),
        Property::assert(
            "work_conserving",
            format!("(elig != {zero}) == ({grant} != {zero})"),
        ),
        Property::assert(
            "last_in_range",
            format!("{} < {}'d{n}", zext(last, lb, lb + 1), lb + 1),
        ),
    ];
    let mut follows = vec![format!("past_{grant} != {zero} || {last} == past_{last}")];
    for k in 0..n {
        follows.push(format!("!past_{grant}[{k}] || {last} == {lb}'d{k}"));
        for l in 0..n {
            // Kernels before k in the order l+1, l+2, ...: none of them may be eligible.
            let before: Vec<String> = (1..n)
                .map(|i| (l + i) % n)
                .take_while(|&j| j != k)
                .map(|j| format!("!elig[{j}]"))
                .collect();
            if !before.is_empty() {
                props.push(Property::assert(
                    format!("first_after_last_{l}_{k}"),
                    format!(
                        "!({last} == {lb}'d{l} && {grant}[{k}]) || ({})",
                        before.join(" && ")
                    ),
                ));
            }
        }
    }
    props.push(Property::assert(
        "last_follows_grant",
        format!("!f_past || past_reset || (({}))", follows.join(") && (")),
    ));
    props.push(Property::registered(last));
    Proof {
        defs: vec![elig],
        properties: props,
        bmc_depth: 8,
        induction_depth: 2,
    }
}
