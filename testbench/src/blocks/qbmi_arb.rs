//! Stimulus for `qbmi_arb` (docs/memory-issue-control.md §3.2–3.4). Per case each kernel draws
//! a request density (rare, half, almost always), a `first` density and a sample rate, so that
//! quotas drain unevenly, refills happen often and rpm takes many values; `mem_ok` is mostly
//! open and `slot_free` mostly set. The generator steps the behavioral model to see refills
//! coming (the granted kernel holds quota 1) and then, half the time, samples some kernel in the
//! same cycle, so rpm changes coincide with refills (spec §3.4: the refill uses the
//! start-of-cycle rpm). A rare reset restarts the state mid-case.

use crate::design::{Case, OldBench};
use proptest::prelude::*;
use smrtl_cosim::blocks::qbmi_arb::{eligible, Model, Qbmi, QbmiCfg};
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::qbmi_arb::{build, port, Params};
use smrtl_hdl::tools::ToolError;
use smrtl_hdl::Module;
use smrtl_synth::prove::Proof;

/// One cycle of QbmiArb's inputs (bit k = kernel k).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cycle {
    pub mem_req: u8,
    pub mem_ok: u8,
    pub slot_free: bool,
    pub first: u8,
    pub sample: u8,
    pub reset: bool,
}

impl Cycle {
    /// Every kernel requests, no gate, slot free, no first, no sample.
    pub fn all(n: usize) -> Cycle {
        let all = ((1u16 << n) - 1) as u8;
        Cycle {
            mem_req: all,
            mem_ok: all,
            slot_free: true,
            ..Cycle::default()
        }
    }

    /// Only the kernels of `mask` request (no gate, slot free).
    pub fn req(mask: u8) -> Cycle {
        Cycle {
            mem_req: mask,
            mem_ok: 0b111,
            slot_free: true,
            ..Cycle::default()
        }
    }
}

/// The cycles as input buffers (values cut to N bits by the port widths).
pub fn encode(layout: &Layout, cycles: &[Cycle]) -> Case {
    let n = layout.in_slot(port::MEM_REQ).width;
    let cut = |v: u8| u64::from(v) & ((1 << n) - 1);
    cycles
        .iter()
        .map(|c| {
            let mut buf = vec![0u64; layout.in_words];
            layout.write_in(&mut buf, "reset", c.reset as u64);
            layout.write_in(&mut buf, port::MEM_REQ, cut(c.mem_req));
            layout.write_in(&mut buf, port::MEM_OK, cut(c.mem_ok));
            layout.write_in(&mut buf, port::SLOT_FREE, c.slot_free as u64);
            layout.write_in(&mut buf, port::FIRST, cut(c.first));
            layout.write_in(&mut buf, port::SAMPLE, cut(c.sample));
            buf
        })
        .collect()
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
pub fn cycles(p: &Params, max: usize) -> impl Strategy<Value = Vec<Cycle>> {
    let n = p.kernels();
    let cfg = QbmiCfg::of(p);
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
                    .map(|(kernels, slot_free, reset, coincide, who)| {
                        let mut c = Cycle {
                            slot_free,
                            reset,
                            ..Cycle::default()
                        };
                        for (k, &(r, o, f, s)) in kernels.iter().enumerate() {
                            let (dr, df, ds) = density[k];
                            c.mem_req |= u8::from(r < REQ_DENSITY[dr]) << k;
                            c.mem_ok |= u8::from(o < 14) << k;
                            c.first |= u8::from(f < FIRST_DENSITY[df]) << k;
                            c.sample |= u8::from(s < SAMPLE_RATE[ds]) << k;
                        }
                        let g = arb.grant(eligible(c.mem_req, c.mem_ok, c.slot_free));
                        if g.is_some_and(|g| arb.quota[g] == 1) && coincide {
                            c.sample |= 1 << who;
                        }
                        if c.reset {
                            arb = Qbmi::new(&cfg);
                        } else {
                            arb.tick(g, c.first, c.sample);
                        }
                        c
                    })
                    .collect()
            },
        )
}

pub struct QbmiArbBench;

impl OldBench for QbmiArbBench {
    type Params = Params;
    const SUMMARY: &'static str =
        "QBMI: quota-based memory-issue arbiter, quotas LCM(rpm)/rpm_k, run-time Req/Minst sampling (seed 004)";

    fn module(p: &Params) -> Module {
        build(p)
    }

    fn model(p: &Params, layout: &Layout) -> Box<dyn Simulator + Send> {
        Box::new(Model::new(p, layout))
    }

    fn cases(p: &Params, layout: &Layout) -> BoxedStrategy<Case> {
        let layout = layout.clone();
        cycles(p, CASE_CYCLES)
            .prop_map(move |cs| encode(&layout, &cs))
            .boxed()
    }

    fn cost_notes(p: &Params) -> Result<smrtl_synth::Notes, ToolError> {
        smrtl_synth::blocks::qbmi_arb::notes(p)
    }

    fn properties(p: &Params) -> Option<Proof> {
        Some(proof(p))
    }

    /// N = 1, 2, 3 (the presets cover 2 and 3) with the defaults.
    fn proof_configs() -> Vec<Params> {
        let mut all = vec![Params {
            n: 1,
            ..Params::default()
        }];
        all.extend(
            <Params as smrtl_hdl::BlockParams>::presets()
                .into_iter()
                .map(|(_, p)| p),
        );
        all
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
