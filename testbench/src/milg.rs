//! Stimulus for the `Milg` (docs/memory-issue-control.md §4, §5): one [`Cycle`] per cycle and a
//! proptest strategy of legal event streams (spec §5): `acc` and `fail` never together, `issue`
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

use crate::design::{Bench, Case};
use proptest::prelude::*;
use smrtl_cosim::milg::{Milg, MilgCfg, MilgEvents, Model};
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::milg::{build, port, Params};
use smrtl_hdl::netlist::mask;
use smrtl_hdl::tools::ToolError;
use smrtl_hdl::Module;

/// All the Milg's inputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cycle {
    pub reset: bool,
    pub ev: MilgEvents,
    pub smil_limit: u32,
    pub smil_unl: bool,
}

/// The cycle as one input buffer (values cut to the port widths).
pub fn encode(p: &Params, layout: &Layout, c: &Cycle) -> Vec<u64> {
    let mut buf = vec![0u64; layout.in_words];
    let mut set = |name: &str, v: u64| {
        let s = layout.in_slot(name);
        s.set_field(&mut buf, 0, s.width, v);
    };
    set("reset", c.reset as u64);
    set(port::ISSUE, c.ev.issue as u64);
    set(port::DONE, u64::from(c.ev.done));
    set(port::ACC, c.ev.acc as u64);
    set(port::FAIL, c.ev.fail as u64);
    let limit = u64::from(c.smil_limit) & mask(p.inflight_bits as usize);
    set(port::SMIL_LIMIT, limit);
    set(port::SMIL_UNL, c.smil_unl as u64);
    buf
}

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
/// `smil_unl`.
type Start = (usize, usize, usize, u8, u32, bool);

fn start() -> impl Strategy<Value = Start> {
    (
        0..ACC_FAIL.len(),
        0..ISSUE.len(),
        0..DONE.len(),
        0..8u8,
        any::<u32>(),
        prop::bool::weighted(0.25),
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
pub fn cycles(p: &Params, max: usize) -> impl Strategy<Value = Vec<Cycle>> {
    let p = p.clone();
    (start(), prop::collection::vec(raw(), 1..=max)).prop_map(
        move |((mut af, mut is, mut dn, kind, bits, unl), raws)| {
            let cfg = MilgCfg::of(&p);
            let mut g = Milg::new(&cfg);
            let mut smil_limit = limit(&p, kind, bits);
            let mut smil_unl = unl;
            let mut out = Vec::with_capacity(raws.len());
            for (a, i, d, (switch, sbits), reset) in raws {
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
                let c = Cycle {
                    reset,
                    ev,
                    smil_limit,
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

pub struct MilgBench;

impl Bench for MilgBench {
    type Params = Params;
    const SUMMARY: &'static str = "MILG: per-kernel in-flight memory-instruction limiter, SMIL / DMIL limit every 1024 requests (seed 004)";

    fn module(p: &Params) -> Module {
        build(p)
    }

    fn model(p: &Params, layout: &Layout) -> Box<dyn Simulator + Send> {
        Box::new(Model::new(p, layout))
    }

    fn cases(p: &Params, layout: &Layout) -> BoxedStrategy<Case> {
        let (p2, layout) = (p.clone(), layout.clone());
        cycles(p, case_cycles(p))
            .prop_map(move |cs| cs.iter().map(|c| encode(&p2, &layout, c)).collect())
            .boxed()
    }

    fn cost_notes(p: &Params) -> Result<smrtl_synth::Notes, ToolError> {
        smrtl_synth::milg::notes(p)
    }
}
