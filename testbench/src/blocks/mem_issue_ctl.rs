//! Stimulus for the `MemIssueCtl` top (docs/memory-issue-control.md §2, §5): legal SM cycles
//! (spec §5): at most one L1D outcome per cycle over all kernels (`Σ(acc + fail) ≤ 1`), `first`
//! only with its kernel's `acc`, exactly one memory instruction issues when a kernel is granted
//! (one of the granted kernels; never otherwise), completions at most what is in flight. The
//! generator steps the behavioral top to know the grant and the counts.
//!
//! Each case draws the L1D's request / failure mix (the milg profiles), which kernel's accesses
//! dominate, request and slot-free rates, completion rates and SMIL limits per kernel, and
//! switches profile now and then; cases last several of one kernel's intervals.

use crate::blocks::milg::ACC_FAIL;
use crate::coverage::Cover;
use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::mem_issue_ctl::{MemIssueCtl, Model, MAX_KERNELS};
use smrtl_cosim::blocks::rbmi_arb;
use smrtl_hdl::blocks::mem_issue_ctl::port::{self, Inputs, Outputs};
use smrtl_hdl::blocks::mem_issue_ctl::{Params, Scheme};
use smrtl_hdl::blocks::milg::{port as milg_port, Mode};
use smrtl_hdl::netlist::mask;
use smrtl_hdl::netlist::Port;
use smrtl_hdl::BlockParams;
use smrtl_synth::prove::Proof;

/// Longest random case: about three intervals of each kernel (at least 320 cycles).
pub fn case_cycles(p: &Params) -> usize {
    ((3 * p.kernels()) << p.reqcnt_bits).max(256) + 64
}

/// Chances (256ths) that a kernel has a memory instruction ready, and that the slot is free.
const REQ: [u32; 3] = [230, 128, 40];
const SLOT: [u32; 3] = [250, 160, 64];
/// Chances (256ths) of one and of two completions per kernel.
const DONE: [(u32, u32); 3] = [(90, 20), (30, 4), (140, 60)];

/// A case's start: L1D mix, dominant kernel (≥ N: none), request, slot and completion
/// profiles, SMIL limits and `smil_unl` bits.
type Start = (usize, usize, usize, usize, usize, [u8; MAX_KERNELS], u8);

fn start() -> impl Strategy<Value = Start> {
    (
        0..ACC_FAIL.len(),
        0..4usize,
        0..REQ.len(),
        0..SLOT.len(),
        0..DONE.len(),
        prop::array::uniform3(any::<u8>()),
        any::<u8>(),
    )
}

/// One cycle's draws: L1D roll, kernel pick, request rolls, slot roll, issue pick, completion
/// rolls, first roll, profile switch (kind, bits), reset.
type Raw = (u8, u8, [u8; 3], u8, u8, [u8; 3], u8, (u8, u8), bool);

fn raw() -> impl Strategy<Value = Raw> {
    (
        any::<u8>(),
        any::<u8>(),
        prop::array::uniform3(any::<u8>()),
        any::<u8>(),
        any::<u8>(),
        prop::array::uniform3(any::<u8>()),
        any::<u8>(),
        (any::<u8>(), any::<u8>()),
        prop::bool::weighted(0.002),
    )
}

/// A SMIL limit from a random byte: mostly 1..4, sometimes anything the field holds.
fn limit(b: u8, ib: u32) -> u8 {
    if b < 192 {
        1 + b % 4
    } else {
        b & mask(ib as usize) as u8
    }
}

/// A legal case of `1..=max` cycles for `p` (see the module doc).
pub fn cycles(p: &Params, max: usize) -> impl Strategy<Value = Vec<Inputs>> {
    let p = p.clone();
    (start(), prop::collection::vec(raw(), 1..=max)).prop_map(move |(s, raws)| {
        let n = p.kernels();
        let (mut af, hot, mut rq, mut sl, mut dn, lims, unl) = s;
        let mut smil = Inputs::new(&p);
        for (k, &b) in lims.iter().enumerate().take(n) {
            smil.smil_limit[k] = u64::from(limit(b, p.inflight_bits));
            smil.smil_unl[k] = unl >> k & 1 == 1;
        }
        let mut ctl = MemIssueCtl::new(&p);
        let mut out = Vec::with_capacity(raws.len());
        for (l1d, pick, reqs, slot, ipick, dones, first, (switch, sbits), reset) in raws {
            if switch < 4 {
                let b = usize::from(sbits);
                match switch {
                    0 => af = b % ACC_FAIL.len(),
                    1 => rq = b % REQ.len(),
                    2 => sl = b % SLOT.len(),
                    _ => dn = b % DONE.len(),
                }
            }
            let mut x = Inputs {
                reset,
                slot_free: u32::from(slot) < SLOT[sl],
                ..smil.clone()
            };
            for (k, &r) in reqs.iter().enumerate().take(n) {
                x.mem_req[k] = u32::from(r) < REQ[rq];
            }
            // One L1D outcome per cycle, mostly the dominant kernel's when there is one.
            let k = if hot < n && pick < 160 {
                hot
            } else {
                usize::from(pick) % n
            };
            let (pa, pf) = ACC_FAIL[af];
            let l1d = u32::from(l1d);
            if l1d < pa {
                x.acc[k] = true;
                x.first[k] = first < 96;
            } else if l1d < pa + pf {
                x.fail[k] = true;
            }
            // Exactly one granted kernel issues.
            let grant = ctl.grant(rbmi_arb::mask(&x.mem_req), x.slot_free);
            let granted = grant.count_ones();
            if granted > 0 {
                let nth = u32::from(ipick) % granted;
                let g = (0..n)
                    .filter(|&k| grant >> k & 1 == 1)
                    .nth(nth as usize)
                    .expect("a granted kernel");
                x.issue[g] = true;
            }
            let (d1, d2) = DONE[dn];
            for (k, &d) in dones.iter().enumerate().take(n) {
                let d = u32::from(d);
                let want = if d < d2 {
                    2
                } else if d < d1 + d2 {
                    1
                } else {
                    0
                };
                let can = ctl.inflight(k) + u32::from(x.issue[k]);
                x.done[k] = u64::from(want.min(can));
            }
            if reset {
                ctl.reset();
            } else {
                ctl.tick(&x);
            }
            out.push(x);
        }
        out
    })
}

/// This block's coverpoints (docs/coverage.md).
type Point = Cover<Params>;

impl Bench for Params {
    type Model = Model;
    const SUMMARY: &'static str = "SM memory-issue control: N MILGs (Off / SMIL / DMIL) and the BMI arbiter, elig and grant (seed 004)";

    fn stimulus(&self) -> BoxedStrategy<Vec<Inputs>> {
        cycles(self, case_cycles(self)).boxed()
    }

    fn properties(&self) -> Option<Proof> {
        Some(proof(self))
    }

    /// docs/memory-issue-control.md §2, §5: each kernel granted, a request waiting on a busy
    /// MEM slot, a MILG gate holding a ready kernel (SMIL, DMIL), several kernels eligible at
    /// once (granted together, or one picked by the arbiter), reservation failures counted.
    fn coverpoints(&self) -> Vec<Point> {
        let n = self.kernels();
        let mut v: Vec<Point> = (0..n)
            .map(|k| {
                Point::point(format!("grant_kernel_{k}"), "§5", move |_, _, o, _| {
                    o.grant[k]
                })
            })
            .collect();
        v.push(Point::point("slot_busy", "§2", |_, i, _, _| {
            !i.slot_free && i.mem_req.iter().any(|&r| r)
        }));
        v.push(Point::point("failure_counted", "§4", |_, i, _, _| {
            i.fail.iter().any(|&f| f)
        }));
        v.push(Point::unless(
            (self.scheme.milg_mode() == Mode::Off)
                .then_some("MILGs in Off mode: the gate is always open"),
            "gate_holds_kernel",
            "§4",
            |_, i, o, _| (0..i.mem_req.len()).any(|k| i.mem_req[k] && !o.mem_ok[k]),
        ));
        let elig = |i: &Inputs, o: &Outputs| {
            (0..i.mem_req.len())
                .filter(|&k| i.mem_req[k] && o.mem_ok[k] && i.slot_free)
                .count()
        };
        let granted = |o: &Outputs| o.grant.iter().filter(|&&g| g).count();
        // An arbiter grants one of them; without one, `grant` is `elig` itself.
        let one = self.scheme.has_arbiter();
        v.push(Point::unless(
            (n == 1).then_some("N = 1: one kernel"),
            "several_eligible",
            "§5",
            move |_, i, o, _| elig(i, o) > 1 && (granted(o) == 1) == one,
        ));
        v
    }

    /// Every scheme at N = 1, 2, 3, at the `small` widths (an interval, and so a QBMI sample,
    /// ends within BMC reach; the MILG at the paper's widths is proven by `smrtl prove milg`).
    fn proof_configs() -> Vec<Params> {
        let small = Params::resolve(Some("small"), &[]).expect("small preset");
        let mut all = vec![];
        for scheme in Scheme::ALL {
            for n in 1..=MAX_KERNELS as u32 {
                all.push(Params {
                    n,
                    scheme,
                    ..small.clone()
                });
            }
        }
        all
    }
}

/// The top's solver proof (docs/prove.md §5.5; spec §2–§5): per kernel k, the MILG's stimulus
/// and invariants ([`crate::blocks::milg::properties`]) over the k-th fields of the buses; the legal SM
/// cycle (at most one kernel issues, only a granted one, and one does whenever a kernel is
/// granted); `mem_ok` and every debug output registered only; and the scheme's arbitration:
/// `grant = elig` without an arbiter, the RBMI or QBMI proof with the arbiter, QBMI's sample
/// being the MILGs' interval boundaries (`acc` at the last request of an interval).
pub fn proof(p: &Params) -> Proof {
    use smrtl_synth::prove::{field, Def, Property};
    let n = p.kernels();
    let milg = p.milg();
    let zero = format!("{n}'d0");
    let (issue, grant) = (port::ISSUE, port::GRANT);
    let mut defs = vec![];
    let mut props = vec![];
    let fields: Vec<Port> = smrtl_hdl::blocks::milg::ports(&milg)
        .into_iter()
        .filter(|q| !matches!(q.name.as_str(), "clock" | "reset" | milg_port::BOUNDARY))
        .collect();
    let qmax = mask(p.reqcnt_bits as usize);
    for k in 0..n {
        for q in &fields {
            defs.push(Def::new(
                format!("{}_{k}", q.name),
                q.width,
                field(&q.name, k, q.width),
            ));
        }
        defs.push(Def::new(
            format!("{}_{k}", milg_port::BOUNDARY),
            1,
            format!(
                "{}_{k} && {}_{k} == {}'d{qmax}",
                port::ACC,
                port::REQCNT,
                p.reqcnt_bits
            ),
        ));
        props.extend(crate::blocks::milg::properties(
            &milg,
            &|name| format!("{name}_{k}"),
            &format!("_{k}"),
        ));
    }
    props.extend([
        Property::assume(
            "issue_at_most_one",
            format!("({issue} & ({issue} - {n}'d1)) == {zero}"),
        ),
        Property::assume("issue_granted", format!("({issue} & ~{grant}) == {zero}")),
        Property::assume(
            "issue_when_granted",
            format!("({grant} == {zero}) == ({issue} == {zero})"),
        ),
    ]);
    props.extend(
        crate::blocks::milg::REGISTERED
            .iter()
            .map(|o| Property::registered(o)),
    );
    let arbiter = match p.scheme {
        Scheme::Rbmi => Some(crate::blocks::rbmi_arb::proof(&p.rbmi())),
        Scheme::Qbmi | Scheme::QbmiDmil => {
            let sample = "sample";
            let bits: Vec<String> = (0..n)
                .rev()
                .map(|k| format!("{}_{k}", milg_port::BOUNDARY))
                .collect();
            defs.push(Def::new(sample, n, format!("{{{}}}", bits.join(", "))));
            Some(crate::blocks::qbmi_arb::proof_sampled_by(&p.qbmi(), sample))
        }
        Scheme::Baseline | Scheme::Smil | Scheme::Dmil => {
            defs.push(crate::blocks::rbmi_arb::elig_def(n));
            props.push(Property::assert(
                "grant_is_elig",
                format!("{grant} == elig"),
            ));
            None
        }
    };
    let milg_proof = crate::blocks::milg::proof(&milg);
    let (mut bmc_depth, mut induction_depth) = (milg_proof.bmc_depth, milg_proof.induction_depth);
    if let Some(a) = arbiter {
        defs.extend(a.defs);
        props.extend(a.properties);
        bmc_depth = bmc_depth.max(a.bmc_depth);
        induction_depth = induction_depth.max(a.induction_depth);
    }
    Proof {
        defs,
        properties: props,
        bmc_depth,
        induction_depth,
    }
}
