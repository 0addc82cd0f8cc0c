//! Stimulus for the `Milg` (docs/memory-issue-control.md §4, §5): a proptest strategy of legal event streams (spec §5): `acc` and `fail` never together, `issue`
//! only while the gate is open, `done` at most what is in flight (plus this cycle's issue), so
//! the in-flight count stays in range. The generator steps the behavioral model to know the
//! gate and the count.
//!
//! Each case draws a traffic profile (request / failure mix, issue and completion rates) and
//! switches it now and then, so intervals end often (acceptance-heavy phases), failures per
//! request reach 1, 2, 3 and saturation (failure-heavy phases, so the divider sees every
//! ratio), the count climbs to the guard (issue-heavy phases with few completions) and drains
//! to 0. Cases last up to six intervals, so the paper's 1024-request intervals end inside
//! them; the small presets (8-request intervals) end one every few cycles. SMIL limits are drawn
//! per case (0 and all ones included) and sometimes change; resets are rare.

use crate::coverage::Cover;
use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::milg::{Milg, MilgCfg, MilgEvents, Model};
use smrtl_hdl::blocks::milg::port::{self, Inputs, Outputs};
use smrtl_hdl::blocks::milg::{Mode, Params, Ratio0Policy};
use smrtl_hdl::netlist::mask;
use smrtl_hdl::BlockParams;
use smrtl_synth::prove::{Proof, Property};

/// This block's coverpoints (docs/coverage.md).
type Point = Cover<Params>;

/// Longest random case for `p`: six intervals and a bit (6208 cycles at the paper's 1024
/// requests), at least 320 (dozens of 8-request intervals). A failing case shrinks from at
/// most this.
pub fn case_cycles(p: &Params) -> usize {
    (6usize << p.reqcnt_bits).max(256) + 64
}

/// Request / failure mixes, chances in 256ths: (acc, fail). Interval length in cycles is
/// about 2^reqcnt_bits · 256 / acc; failures per request fail / acc.
pub const ACC_FAIL: [(u32, u32); 10] = [
    (205, 38),
    (250, 0),
    (128, 128),
    (110, 146),
    (77, 179),
    (60, 196),
    (45, 211),
    (36, 220),
    (25, 231),
    (0, 0),
];
/// The mixes (indices into [`ACC_FAIL`]) a steady case holds: no failures, and 1.3, 2.3, 3.3
/// and 4.7 failures per request (every ratio, the largest, and saturation inside one case).
const STEADY_MIXES: [usize; 5] = [1, 3, 4, 5, 6];
/// Chance (in 256ths) that the kernel wants to issue, when the gate is open.
const ISSUE: [u32; 4] = [230, 128, 40, 0];
/// Chances (in 256ths) of one and of two completions (capped by what is in flight).
const DONE: [(u32, u32); 4] = [(90, 20), (40, 5), (128, 64), (8, 0)];

/// One cycle's draws: acc/fail roll, issue roll, done roll, a profile switch (and its bits),
/// reset.
type Raw = (u8, u8, u8, (u8, u8), bool);

fn raw() -> impl Strategy<Value = Raw> {
    (
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
        (any::<u8>(), any::<u8>()),
        prop::bool::weighted(0.002),
    )
}

/// A case's start: profile indices (acc/fail, issue, done), the SMIL limit kind and value,
/// `smil_unl`, and whether the case is steady: its full length on one profile (so that a
/// 1024-request interval sees one mix: no failures, or failures up to saturation).
type Start = (usize, usize, usize, u8, u32, bool, bool);

fn start() -> impl Strategy<Value = Start> {
    (
        0..ACC_FAIL.len(),
        0..ISSUE.len(),
        0..DONE.len(),
        0..8u8,
        any::<u32>(),
        prop::bool::weighted(0.25),
        prop::bool::weighted(0.5),
    )
}

/// A SMIL limit by `kind`: mostly small (1..4), sometimes any value, 0 or all ones.
fn limit(p: &Params, kind: u8, bits: u32) -> u32 {
    let max = mask(p.inflight_bits as usize) as u32;
    match kind {
        0..=3 => 1 + bits % 4,
        4 => 0,
        5 => max,
        _ => bits & max,
    }
}

/// A legal case of `1..=max` cycles for `p` (see the module doc).
pub fn cycles(p: &Params, max: usize) -> impl Strategy<Value = Vec<Inputs>> {
    let p = p.clone();
    (start(), 0..=max, prop::collection::vec(raw(), 1..=max)).prop_map(
        move |((mut af, mut is, mut dn, kind, bits, unl, sticky), extra, raws)| {
            let cfg = MilgCfg::of(&p);
            let mut g = Milg::new(&cfg);
            let mut smil_limit = limit(&p, kind, bits);
            let mut smil_unl = unl;
            // A steady case runs on one profile, from the mixes that end intervals with no
            // failures or with failures up to saturation, its draws repeated.
            // Its draws and `extra` more cycles (at most `max`): long cases, and a failing one
            // still shrinks (`extra` halves to 0 first).
            let len = if sticky {
                (raws.len() + extra).min(max)
            } else {
                raws.len()
            };
            if sticky {
                af = STEADY_MIXES[af % STEADY_MIXES.len()];
            }
            let mut out = Vec::with_capacity(len);
            for (a, i, d, (mut switch, sbits), mut reset) in raws.into_iter().cycle().take(len) {
                // A steady case neither switches nor resets (a reset every 500 cycles or so
                // would end every paper-sized interval early).
                if sticky {
                    (switch, reset) = (u8::MAX, false);
                }
                // A new phase about every 100 cycles: one of the profiles, or the SMIL config.
                if switch < 3 {
                    let s = usize::from(sbits);
                    match switch {
                        0 => af = s % ACC_FAIL.len(),
                        1 => is = s % ISSUE.len(),
                        _ if s % 8 == 0 => {
                            smil_limit = limit(&p, sbits / 8 % 8, bits >> (s % 8));
                            smil_unl = !smil_unl;
                        }
                        _ => dn = s % DONE.len(),
                    }
                }
                let (a, i, d) = (u32::from(a), u32::from(i), u32::from(d));
                let (pa, pf) = ACC_FAIL[af];
                let issue = g.mem_ok() && i < ISSUE[is];
                let (d1, d2) = DONE[dn];
                let want = if d < d2 {
                    2
                } else if d < d1 + d2 {
                    1
                } else {
                    0
                };
                let done = want.min(g.inflight + issue as u32) as u8;
                let ev = MilgEvents {
                    issue,
                    done,
                    acc: a < pa,
                    fail: a >= pa && a < pa + pf,
                };
                let c = Inputs {
                    reset,
                    issue: ev.issue,
                    done: u64::from(ev.done),
                    acc: ev.acc,
                    fail: ev.fail,
                    smil_limit: u64::from(smil_limit),
                    smil_unl,
                };
                if reset {
                    g = Milg::new(&cfg);
                } else {
                    g.tick(ev, smil_limit, smil_unl);
                }
                out.push(c);
            }
            out
        },
    )
}

impl Bench for Params {
    type Model = Model;
    const SUMMARY: &'static str = "MILG: per-kernel in-flight memory-instruction limiter, SMIL / DMIL limit every 1024 requests (seed 004)";

    fn stimulus(&self) -> BoxedStrategy<Vec<Inputs>> {
        cycles(self, case_cycles(self)).boxed()
    }

    fn properties(&self) -> Option<Proof> {
        Some(proof(self))
    }

    /// Every mode and `r = 0` policy at the paper's widths, and the `small` widths (where an
    /// interval boundary and the saturations are within BMC reach) in every mode.
    fn proof_configs() -> Vec<Params> {
        let paper = Params::default();
        let small = Params::resolve(Some("small"), &[]).expect("small preset");
        let mut all = vec![];
        for base in [paper, small] {
            for mode in [Mode::Off, Mode::Smil, Mode::Dmil] {
                for ratio0_policy in [Ratio0Policy::Unlimited, Ratio0Policy::Increment] {
                    if mode != Mode::Dmil && ratio0_policy == Ratio0Policy::Increment {
                        continue; // the policy only acts in Dmil
                    }
                    all.push(Params {
                        mode,
                        ratio0_policy,
                        ..base.clone()
                    });
                }
            }
        }
        all
    }

    /// docs/memory-issue-control.md §4: issue and completion (two at once, with an issue), the
    /// gate closed by the guard and by the limit, a drained and a peaked count, failures and
    /// their saturation, every interval boundary (ratio 0, 1 and the largest), reset; per mode
    /// the limit's sources.
    fn coverpoints(&self) -> Vec<Point> {
        let mut v = vec![
            Point::point("issue", "§4.2", |_, i: &Inputs, _, _| i.issue),
            Point::point("done_two", "§4.2", |_, i, _, _| i.done == 2),
            Point::point("issue_and_done", "§4.3", |_, i, _, _| {
                i.issue && i.done > 0
            }),
            Point::point("drained", "§4.3", |_, _, o, _| o.inflight == 0),
            Point::point("peak_above_inflight", "§4.3", |_, _, o, _| {
                o.peak > o.inflight
            }),
            Point::point("gate_closed_at_guard", "§4.2", |p, _, o, _| {
                !o.mem_ok && o.inflight == mask(p.inflight_bits as usize)
            }),
            Point::point("fail", "§4.3", |_, i, _, _| i.fail),
            Point::point("rsfail_saturated", "§4.3", |p, _, o, _| {
                o.rsfail == mask(p.rsfail_bits as usize)
            }),
            Point::point("boundary", "§4.3", |_, _, o, _| o.boundary),
            Point::point("reset_in_flight", "§4.3", |_, i, o, _| {
                i.reset && o.inflight > 0
            }),
        ];
        let limit_closes = |p: &Params, o: &Outputs| {
            !o.mem_ok && !o.unl && o.inflight < mask(p.inflight_bits as usize)
        };
        match self.mode {
            Mode::Dmil => {
                let top = mask(self.ratio_bits());
                v.extend([
                    Point::point("boundary_ratio_0", "§4.1", |p, i, o, _| {
                        o.boundary && ratio(p, i, o) == 0
                    }),
                    Point::point("boundary_ratio_1", "§4", |p, i, o, _| {
                        o.boundary && ratio(p, i, o) == 1
                    }),
                    Point::point("boundary_ratio_max", "§4", move |p, i, o, _| {
                        o.boundary && ratio(p, i, o) == top
                    }),
                    Point::point("gate_closed_by_limit", "§4.2", move |p, _, o, _| {
                        limit_closes(p, o)
                    }),
                    Point::point("limit_1", "§4", |_, _, o, _| !o.unl && o.mil == 1),
                ]);
                v.push(match self.ratio0_policy {
                    Ratio0Policy::Unlimited => {
                        Point::point("unlimited", "§4.1", |_, _, o, _| o.unl)
                    }
                    Ratio0Policy::Increment => {
                        Point::point("increment_to_max", "§4.1", |p, _, o, _| {
                            !o.unl && o.mil == mask(p.inflight_bits as usize)
                        })
                    }
                });
            }
            Mode::Smil => v.extend([
                Point::point("gate_closed_by_limit", "§4.4", move |p, _, o, _| {
                    limit_closes(p, o)
                }),
                Point::point("smil_unlimited", "§4.4", |_, i, _, _| i.smil_unl),
                Point::point("smil_limit_0", "§4.4", |_, i, _, _| {
                    !i.smil_unl && i.smil_limit == 0
                }),
            ]),
            Mode::Off => v.push(Point::unreachable(
                "gate_closed_by_limit",
                "§4.4",
                "mode Off ties unl to 1: only the guard closes the gate",
            )),
        }
        v
    }
}

/// The MILG's solver proof (docs/prove.md §5.2; spec §4.3–§4.5): [`properties`] over its own
/// ports, `boundary` = `acc` & `reqcnt` = max, and every debug output registered only.
pub fn proof(p: &Params) -> Proof {
    let mut props = properties(p, &|port| port.to_string(), "");
    props.push(Property::assert(
        "boundary_at_last_request",
        format!(
            "{} == ({} && {} == {}'d{})",
            port::BOUNDARY,
            port::ACC,
            port::REQCNT,
            p.reqcnt_bits,
            mask(p.reqcnt_bits as usize)
        ),
    ));
    props.extend(REGISTERED.iter().map(|o| Property::registered(o)));
    Proof {
        defs: vec![],
        properties: props,
        bmc_depth: bmc_depth(p),
        induction_depth: 4,
    }
}

/// The MILG outputs that depend only on registers (spec §4.4: `mem_ok` is the registered gate).
pub const REGISTERED: [&str; 7] = [
    port::MEM_OK,
    port::MIL,
    port::UNL,
    port::INFLIGHT,
    port::PEAK,
    port::RSFAIL,
    port::REQCNT,
];

/// BMC steps from reset that reach the end of an interval at the `small` widths (8 requests).
pub fn bmc_depth(p: &Params) -> u32 {
    if p.reqcnt_bits <= 3 {
        12
    } else {
        8
    }
}

/// The MILG's legal stimulus and invariants over the names `sig(port)`: the block's own ports,
/// or one kernel's fields of `mem_issue_ctl`'s buses (docs/prove.md §5.5); every property's name
/// ends in `tag`.
///
/// Legal stimulus (spec §4.4, §5): `acc` and `fail` never together; `done` ≤ 2 and never more
/// than are in flight; `issue` only when `mem_ok`; the SMIL configuration is stable and names a
/// limit ≥ 1 unless unlimited.
///
/// Invariants: `inflight` counts issues minus completions exactly (never wraps, so it stays in
/// 0..2^inflight_bits−1); `mem_ok` is the §4.4 gate; `mil` ≥ 1 whenever `unl` = 0; `rsfail`
/// adds each failure and holds at its maximum (saturates, never wraps) between boundaries, and
/// clears at one; `peak` ≥ `inflight`, and restarts at `inflight` after a boundary; `reqcnt`
/// counts the accepted requests modulo the interval (back to 0 after the last one).
pub fn properties(p: &Params, sig: &dyn Fn(&str) -> String, tag: &str) -> Vec<Property> {
    use smrtl_synth::prove::zext;
    let (ib, fb, qb) = (
        p.inflight_bits as usize,
        p.rsfail_bits as usize,
        p.reqcnt_bits as usize,
    );
    let imax = format!("{ib}'d{}", mask(ib));
    let fmax = format!("{fb}'d{}", mask(fb));
    let since = "!f_past || past_reset";
    let [issue, done, acc, fail, mem_ok, mil, unl, boundary, inflight, peak, rsfail, reqcnt, smil_limit, smil_unl] =
        [
            port::ISSUE,
            port::DONE,
            port::ACC,
            port::FAIL,
            port::MEM_OK,
            port::MIL,
            port::UNL,
            port::BOUNDARY,
            port::INFLIGHT,
            port::PEAK,
            port::RSFAIL,
            port::REQCNT,
            port::SMIL_LIMIT,
            port::SMIL_UNL,
        ]
        .map(sig);
    let w = ib + 1;
    let assume = |name: &str, e: String| Property::assume(format!("{name}{tag}"), e);
    let assert = |name: &str, e: String| Property::assert(format!("{name}{tag}"), e);
    vec![
        assume("acc_xor_fail", format!("!({acc} && {fail})")),
        assume("done_at_most_2", format!("{done} <= 2'd2")),
        assume(
            "done_in_flight",
            format!(
                "{} <= {}",
                zext(&done, 2, w.max(2)),
                zext(&inflight, ib, w.max(2))
            ),
        ),
        assume("issue_when_mem_ok", format!("!{issue} || {mem_ok}")),
        assume(
            "smil_stable",
            format!("!f_past || ({smil_limit} == past_{smil_limit} && {smil_unl} == past_{smil_unl})"),
        ),
        assume(
            "smil_limit_at_least_1",
            format!("{smil_unl} || {smil_limit} != {ib}'d0"),
        ),
        assert(
            "inflight_counts",
            format!(
                "{since} || {} == {} + {} - {}",
                zext(&inflight, ib, w),
                zext(&format!("past_{inflight}"), ib, w),
                zext(&format!("past_{issue}"), 1, w),
                zext(&format!("past_{done}"), 2, w.max(2)),
            ),
        ),
        assert(
            "mem_ok_gate",
            format!("{mem_ok} == (({unl} || {inflight} < {mil}) && {inflight} < {imax})"),
        ),
        assert(
            "reqcnt_counts_accesses",
            format!(
                "{since} || {reqcnt} == past_{reqcnt} + {}",
                zext(&format!("past_{acc}"), 1, qb)
            ),
        ),
        assert("mil_at_least_1", format!("{unl} || {mil} != {ib}'d0")),
        assert(
            "rsfail_saturates",
            format!(
                "{since} || past_{boundary} || (past_{rsfail} == {fmax} ? {rsfail} == {fmax} : {rsfail} == past_{rsfail} + {})",
                zext(&format!("past_{fail}"), 1, fb),
            ),
        ),
        assert(
            "rsfail_clears_at_boundary",
            format!("{since} || !past_{boundary} || {rsfail} == {fb}'d0"),
        ),
        assert("peak_ge_inflight", format!("{peak} >= {inflight}")),
        assert(
            "peak_restarts_at_boundary",
            format!("{since} || !past_{boundary} || {peak} == {inflight}"),
        ),
    ]
}

/// Failures per request at a boundary: `min(rsfail + fail, max) >> reqcnt_bits` (§4.3).
fn ratio(p: &Params, i: &Inputs, o: &Outputs) -> u64 {
    (o.rsfail + u64::from(i.fail)).min(mask(p.rsfail_bits as usize)) >> p.reqcnt_bits
}
