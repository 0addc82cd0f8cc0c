//! Stimulus for `rbmi_arb` (docs/memory-issue-control.md §3.1): per case, each kernel gets a
//! request density (rare, half, almost always), so that rotations over all kernels and skips of
//! an ineligible kernel both happen often; `mem_ok` is mostly open, `slot_free` mostly set, and
//! a rare reset puts the pointer back mid-case.

use crate::coverage::Cover;
use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::rbmi_arb::{kernels, Model};
use smrtl_hdl::blocks::rbmi_arb::port::{self, Inputs, Outputs};
use smrtl_hdl::blocks::rbmi_arb::Params;
use smrtl_synth::prove::{Def, Proof};

/// This block's coverpoints (docs/coverage.md).
type Point = Cover<Params>;

/// One cycle in which the kernels of `mask` request (bit k = kernel k), no MIL gate, slot free.
pub fn req(p: &Params, mask: u8) -> Inputs {
    let n = p.kernels();
    Inputs {
        mem_req: kernels(n, mask),
        mem_ok: vec![true; n],
        slot_free: true,
        ..Inputs::new(p)
    }
}

/// One cycle in which every kernel requests, no gate, slot free.
pub fn all(p: &Params) -> Inputs {
    req(p, u8::MAX)
}

/// Longest random case; a failing case shrinks from at most this many cycles.
pub const CASE_CYCLES: usize = 64;

/// Per-kernel request densities a case draws from (of 16).
const DENSITY: [u32; 3] = [2, 8, 15];

/// Random cycles for `p` (see the module doc).
pub fn cycles(p: &Params, max: usize) -> impl Strategy<Value = Vec<Inputs>> {
    let n = p.kernels();
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
                .map(|(ks, slot_free, reset)| Inputs {
                    reset,
                    mem_req: (0..n).map(|k| ks[k].0 < DENSITY[density[k]]).collect(),
                    mem_ok: ks.iter().map(|&(_, o)| o < 14).collect(),
                    slot_free,
                })
                .collect()
        })
}

impl Bench for Params {
    type Model = Model;
    const SUMMARY: &'static str =
        "RBMI: loose round-robin over kernels for the SM's memory-issue slot (seed 004)";

    fn stimulus(&self) -> BoxedStrategy<Vec<Inputs>> {
        cycles(self, CASE_CYCLES).boxed()
    }

    fn properties(&self) -> Option<Proof> {
        Some(proof(self))
    }

    /// docs/memory-issue-control.md §3.1: every kernel granted, a skip past an ineligible
    /// kernel, contention, a request the gate or a busy slot holds back, reset.
    fn coverpoints(&self) -> Vec<Point> {
        let n = self.kernels();
        let elig = |i: &Inputs| -> Vec<bool> {
            (i.mem_req.iter().zip(&i.mem_ok))
                .map(|(&r, &ok)| r && ok && i.slot_free)
                .collect()
        };
        let mut v: Vec<Point> = (0..n)
            .map(|k| {
                Point::point(
                    format!("grant_{k}"),
                    "§3.1",
                    move |_, _, o: &Outputs, _| o.grant[k],
                )
            })
            .collect();
        v.push(Point::point("held_back", "§3.1", |_, i, o, _| {
            i.mem_req.iter().any(|&r| r) && !o.grant.iter().any(|&g| g)
        }));
        v.push(Point::point("reset", "§3.1", |_, i, _, _| i.reset));
        if n == 1 {
            let why = "N = 1: one kernel, nothing to rotate past or contend with";
            v.push(Point::unreachable("contention", "§3.1", why));
            v.push(Point::unreachable("skip_ineligible", "§3.1", why));
        } else {
            v.push(Point::point("contention", "§3.1", move |_, i, _, _| {
                elig(i).iter().filter(|&&e| e).count() >= 2
            }));
            v.push(Point::point(
                "skip_ineligible",
                "§3.1",
                move |_, _, o, _| {
                    let next = (o.last as usize + 1) % n;
                    o.grant.iter().any(|&g| g) && !o.grant[next]
                },
            ));
        }
        v
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
