//! Stimulus for `qbmi_arb` (docs/memory-issue-control.md §3.2–3.4). Per case each kernel draws
//! a request density (rare, half, almost always), a `first` density and a sample rate, so that
//! quotas drain unevenly, refills happen often and rpm takes many values; `mem_ok` is mostly
//! open and `slot_free` mostly set. The generator steps the behavioral model to see refills
//! coming (the granted kernel holds quota 1) and then, half the time, samples some kernel in the
//! same cycle, so rpm changes coincide with refills (spec §3.4: the refill uses the
//! start-of-cycle rpm). A rare reset restarts the state mid-case.

use crate::coverage::Cover;
use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::qbmi_arb::{eligible, Model, Qbmi, QbmiCfg};
use smrtl_cosim::blocks::rbmi_arb::{kernels, mask};
use smrtl_hdl::blocks::qbmi_arb::port::{self, Inputs, Outputs};
use smrtl_hdl::blocks::qbmi_arb::Params;
use smrtl_hdl::BlockParams;
use smrtl_synth::prove::Proof;

/// This block's coverpoints (docs/coverage.md).
type Point = Cover<Params>;

/// One cycle in which the kernels of `mask` request (bit k = kernel k), no MIL gate, slot
/// free, no first access, no sample.
pub fn req(p: &Params, mask: u8) -> Inputs {
    let n = p.kernels();
    Inputs {
        mem_req: kernels(n, mask),
        mem_ok: vec![true; n],
        slot_free: true,
        ..Inputs::new(p)
    }
}

/// One cycle in which every kernel requests, no gate, slot free, no first, no sample.
pub fn all(p: &Params) -> Inputs {
    req(p, u8::MAX)
}

/// Longest random case; a failing case shrinks from at most this many cycles.
pub const CASE_CYCLES: usize = 200;

/// Per-kernel request densities a case draws from (of 16).
const REQ_DENSITY: [u32; 3] = [2, 8, 15];
/// Per-kernel `first` densities (of 16).
const FIRST_DENSITY: [u32; 3] = [1, 6, 15];
/// Per-kernel sample rates (of 256).
const SAMPLE_RATE: [u32; 3] = [2, 8, 40];

/// One kernel's draws in a cycle: request, gate, first, sample (uniform, compared with the
/// case's densities).
type KernelRaw = (u32, u32, u32, u32);
/// One cycle's draws: the kernels, slot free, reset, a sample in a refill cycle and its kernel.
type Raw = (Vec<KernelRaw>, bool, bool, bool, usize);

/// Random cycles for `p` (see the module doc).
pub fn cycles(p: &Params, max: usize) -> impl Strategy<Value = Vec<Inputs>> {
    let n = p.kernels();
    let (p, cfg) = (p.clone(), QbmiCfg::of(p));
    let kernel = (0..16u32, 0..16u32, 0..16u32, 0..256u32);
    let raw = (
        prop::collection::vec(kernel, n),
        prop::bool::weighted(0.85),
        prop::bool::weighted(0.004),
        prop::bool::weighted(0.5),
        0..n,
    );
    let density = (
        0..REQ_DENSITY.len(),
        0..FIRST_DENSITY.len(),
        0..SAMPLE_RATE.len(),
    );
    (
        prop::collection::vec(density, n),
        prop::collection::vec(raw, 1..=max),
    )
        .prop_map(
            move |(density, raws): (Vec<(usize, usize, usize)>, Vec<Raw>)| {
                let mut arb = Qbmi::new(&cfg);
                raws.into_iter()
                    .map(|(ks, slot_free, reset, coincide, who)| {
                        let mut c = Inputs {
                            reset,
                            slot_free,
                            ..Inputs::new(&p)
                        };
                        for (k, &(r, o, f, s)) in ks.iter().enumerate() {
                            let (dr, df, ds) = density[k];
                            c.mem_req[k] = r < REQ_DENSITY[dr];
                            c.mem_ok[k] = o < 14;
                            c.first[k] = f < FIRST_DENSITY[df];
                            c.sample[k] = s < SAMPLE_RATE[ds];
                        }
                        let elig = eligible(mask(&c.mem_req), mask(&c.mem_ok), c.slot_free);
                        let g = arb.grant(elig);
                        if g.is_some_and(|g| arb.quota[g] == 1) && coincide {
                            c.sample[who] = true;
                        }
                        if c.reset {
                            arb = Qbmi::new(&cfg);
                        } else {
                            arb.tick(g, mask(&c.first), mask(&c.sample));
                        }
                        c
                    })
                    .collect()
            },
        )
}

/// Most cycles of a [`starve`] case.
const STARVE_MAX: usize = 1 << 13;

/// A case that saturates kernel 0's quota (§3.2), when one of at most [`STARVE_MAX`] cycles
/// can: the first cycle samples kernel 0 over a full interval (rpm 1, the largest base) and the
/// last kernel over one request (rpm clamped to `rpm_max`, base 1); then only the last kernel
/// requests, so every grant refills and adds kernel 0's base, `rpm_max`, to its quota. A
/// varying `slot_free` keeps it random.
fn starve(p: &Params) -> Option<impl Strategy<Value = Vec<Inputs>>> {
    let (n, p) = (p.kernels(), p.clone());
    let quota_max = smrtl_hdl::netlist::mask(p.quota_bits as usize) as usize;
    let len = quota_max.div_ceil(p.rpm_max as usize) * 2 + 16;
    (n > 1 && len <= STARVE_MAX).then(|| {
        prop::collection::vec(prop::bool::weighted(0.9), len..=len).prop_map(move |free| {
            let mut cycles: Vec<Inputs> = free
                .into_iter()
                .map(|slot_free| {
                    let mut c = req(&p, 1 << (n - 1));
                    c.slot_free = slot_free;
                    c
                })
                .collect();
            cycles[0].sample[0] = true;
            cycles[0].sample[n - 1] = true;
            cycles[0].first[n - 1] = true;
            cycles
        })
    })
}

impl Bench for Params {
    type Model = Model;
    const SUMMARY: &'static str =
        "QBMI: quota-based memory-issue arbiter, quotas LCM(rpm)/rpm_k, run-time Req/Minst sampling (seed 004)";

    fn stimulus(&self) -> BoxedStrategy<Vec<Inputs>> {
        match starve(self) {
            Some(long) => prop_oneof![19 => cycles(self, CASE_CYCLES), 1 => long].boxed(),
            None => cycles(self, CASE_CYCLES).boxed(),
        }
    }

    fn properties(&self) -> Option<Proof> {
        Some(proof(self))
    }

    /// N = 1, 2, 3 with the defaults, Table 2's reset rpm and the small widths (the presets
    /// `paper`, `three`, `bp_sv_ks`, `small`).
    fn proof_configs() -> Vec<Params> {
        let mut all = vec![Params {
            n: 1,
            ..Params::default()
        }];
        all.extend(
            ["paper", "three", "bp_sv_ks", "small"]
                .map(|name| Params::resolve(Some(name), &[]).expect("a preset")),
        );
        all
    }

    /// docs/memory-issue-control.md §3.2–3.4: every kernel granted and sampled, ties and
    /// quota-led picks, refills (with a sample in the same cycle), saturation of a quota, a
    /// sample of a full interval (c = I) and one clamped to rpm_max, reset.
    fn coverpoints(&self) -> Vec<Point> {
        let n = self.kernels();
        let mut v: Vec<Point> = Vec::new();
        for k in 0..n {
            v.push(Point::point(
                format!("grant_{k}"),
                "§3.2",
                move |_, _, o: &Outputs, _| o.grant[k],
            ));
            v.push(Point::point(
                format!("sample_{k}"),
                "§3.3",
                move |_, i: &Inputs, _, _| i.sample[k],
            ));
        }
        v.extend([
            Point::point("refill", "§3.2", |_, _, o, _| refill(o)),
            Point::point("sample_in_refill", "§3.4", |_, i, o, _| {
                refill(o) && i.sample.iter().any(|&s| s)
            }),
            if n == 1 && self.quota_bits > 1 {
                Point::unreachable(
                    "quota_saturated",
                    "§3.2",
                    "N = 1: the base is 1, so the quota is 1 at every cycle's start",
                )
            } else if starve(self).is_none() && n > 1 {
                Point::unreachable(
                    "quota_saturated",
                    "§3.2",
                    "quota_bits too wide to saturate within a random case (docs/coverage.md)",
                )
            } else {
                Point::point("quota_saturated", "§3.2", |p, _, o, _| {
                    o.quota
                        .iter()
                        .any(|&q| q == smrtl_hdl::netlist::mask(p.quota_bits as usize))
                })
            },
            Point::point("sample_full_interval", "§3.3", |p, i, o, _| {
                (0..p.kernels()).any(|k| i.sample[k] && interval_count(p, i, o, k) == 0)
            }),
            if (1u64 << self.reqcnt_bits) <= u64::from(self.rpm_max) {
                Point::unreachable(
                    "sample_clamped",
                    "§3.3",
                    "I = 2^reqcnt_bits ≤ rpm_max: I / c never exceeds rpm_max",
                )
            } else {
                Point::point("sample_clamped", "§3.3", |p, i, o, _| {
                    (0..p.kernels())
                        .any(|k| i.sample[k] && sampled_rpm(p, i, o, k) > u64::from(p.rpm_max))
                })
            },
            Point::point("reset", "§3.2", |_, i, _, _| i.reset),
        ]);
        if n == 1 {
            let why = "N = 1: one kernel, no contention";
            v.push(Point::unreachable("tie_to_lowest", "§3.2", why));
            v.push(Point::unreachable("quota_beats_order", "§3.2", why));
        } else {
            v.push(Point::point("tie_to_lowest", "§3.2", |_, i, o, _| {
                let e = elig(i);
                let g = o.grant.iter().position(|&g| g);
                g.is_some_and(|g| (g + 1..e.len()).any(|k| e[k] && o.quota[k] == o.quota[g]))
            }));
            v.push(Point::point("quota_beats_order", "§3.2", |_, i, o, _| {
                let e = elig(i);
                let g = o.grant.iter().position(|&g| g);
                g.is_some_and(|g| (0..g).any(|k| e[k]))
            }));
        }
        v
    }
}

/// QbmiArb's solver proof (docs/prove.md §5.4; spec §3.2–§3.5): every input is legal.
/// With `elig = mem_req & mem_ok & {N{slot_free}}`: at most one `grant` bit, only to an
/// eligible kernel, one whenever a kernel is eligible; the grant has the largest quota among
/// the eligible kernels (ties to the lowest k); every quota ≥ 1 at the start of a cycle;
/// `base_k × rpm_k` equal for all k; every rpm in 1..rpm_max, changed only by a sample. The
/// debug registers are registers only (`base` is a function of `rpm`).
pub fn proof(p: &Params) -> Proof {
    proof_sampled_by(p, port::SAMPLE)
}

/// [`proof`] with `sample` naming the sample bits: the port in the block, the MILGs' interval
/// boundaries in `mem_issue_ctl` (docs/prove.md §5.5).
pub fn proof_sampled_by(p: &Params, sample: &str) -> Proof {
    use smrtl_hdl::blocks::qbmi_arb::BASE_BITS;
    use smrtl_synth::prove::{field, zext, Def, Property};
    let n = p.kernels();
    let (qb, rb) = (p.quota_bits as usize, p.rpm_bits());
    let grant = port::GRANT;
    let zero = format!("{n}'d0");
    let mut defs = vec![crate::blocks::rbmi_arb::elig_def(n)];
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
    ];
    let pw = BASE_BITS + rb;
    for k in 0..n {
        defs.push(Def::new(
            format!("quota_{k}"),
            qb,
            field(port::QUOTA, k, qb),
        ));
        defs.push(Def::new(format!("rpm_{k}"), rb, field(port::RPM, k, rb)));
        defs.push(Def::new(
            format!("lcm_{k}"),
            pw,
            format!(
                "{} * {}",
                zext(&field(port::BASE, k, BASE_BITS), BASE_BITS, pw),
                zext(&format!("rpm_{k}"), rb, pw)
            ),
        ));
    }
    for k in 0..n {
        for j in (0..n).filter(|&j| j != k) {
            let cmp = if j < k { ">" } else { ">=" };
            props.push(Property::assert(
                format!("grant_max_quota_{k}_{j}"),
                format!("!({grant}[{k}] && elig[{j}]) || quota_{k} {cmp} quota_{j}"),
            ));
        }
        props.push(Property::assert(
            format!("quota_at_least_1_{k}"),
            format!("quota_{k} != {qb}'d0"),
        ));
        props.push(Property::assert(
            format!("rpm_in_range_{k}"),
            format!("rpm_{k} != {rb}'d0 && rpm_{k} <= {rb}'d{}", p.rpm_max),
        ));
        props.push(Property::assert(
            format!("rpm_changes_only_on_sample_{k}"),
            format!("!f_past || past_reset || past_{sample}[{k}] || rpm_{k} == past_rpm_{k}"),
        ));
        if k > 0 {
            props.push(Property::assert(
                format!("base_rpm_equal_{k}"),
                format!("lcm_{k} == lcm_0"),
            ));
        }
    }
    for o in [port::QUOTA, port::BASE, port::RPM, port::MINST] {
        props.push(Property::registered(o));
    }
    Proof {
        defs,
        properties: props,
        bmc_depth: 6,
        induction_depth: 2,
    }
}

/// Each kernel's eligibility this cycle (docs/memory-issue-control.md §3).
fn elig(i: &Inputs) -> Vec<bool> {
    (i.mem_req.iter().zip(&i.mem_ok))
        .map(|(&r, &ok)| r && ok && i.slot_free)
        .collect()
}

/// Whether this cycle's grant refills the quotas: the granted kernel held quota 1 (§3.2).
fn refill(o: &Outputs) -> bool {
    (o.grant.iter().zip(&o.quota)).any(|(&g, &q)| g && q == 1)
}

/// Kernel `k`'s interval count with this cycle's `first`: `(minst + first) mod I` (§3.3).
fn interval_count(p: &Params, i: &Inputs, o: &Outputs, k: usize) -> u64 {
    (o.minst[k] + u64::from(i.first[k])) % (1 << p.reqcnt_bits)
}

/// The rpm a sample of kernel `k` computes before the clamp: `round(I / c)` (§3.3).
fn sampled_rpm(p: &Params, i: &Inputs, o: &Outputs, k: usize) -> u64 {
    let big_i = 1u64 << p.reqcnt_bits;
    let c = match interval_count(p, i, o, k) {
        0 => big_i,
        c => c,
    };
    match p.rpm_round {
        smrtl_hdl::blocks::qbmi_arb::RpmRound::Nearest => (2 * big_i + c) / (2 * c),
        smrtl_hdl::blocks::qbmi_arb::RpmRound::Floor => big_i / c,
    }
}
