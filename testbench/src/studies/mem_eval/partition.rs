//! The TB partitions of the baselines on the Table-2 kernels (docs/memory-issue-control.md
//! §8.2; spec §7; Dai et al., HPCA 2018, §1, §2.5, §4.1): Spatial, Warped-Slicer from static
//! scalability curves measured here, SMK-P, and the feasibility of a given tuple.

use super::workloads::Mix;
use super::{par_map, run, EvalParams, Partition};
use serde::Serialize;
use smrtl_cosim::sm::mem_sm::params::PipeParams;
pub use smrtl_cosim::sm::mem_sm::partition::isolated;
use smrtl_cosim::sm::mem_sm::partition::{
    caps, overflow, scaled, smk_p, spatial_sms, sweet_point, usage, Usage, RESOURCES,
};
use smrtl_cosim::sm::mem_sm::workload::KernelSpec;

/// What one kernel holds under a partition.
#[derive(Clone, Debug, Serialize)]
pub struct Held {
    pub name: &'static str,
    pub tbs: u32,
    /// `[threads, warps, TBs, registers, shared-memory bytes]`.
    pub used: Usage,
}

/// A kernel's static scalability curve (spec §7): `IPC(n)` and `S(n) = IPC(n)/IPC(n_max)`.
#[derive(Clone, Debug, Serialize)]
pub struct Curve {
    pub name: &'static str,
    pub ipc: Vec<f64>,
    pub scaled: Vec<f64>,
}

/// A chosen partition.
#[derive(Clone, Debug, Serialize)]
pub struct Choice {
    pub scheme: &'static str,
    pub kernels: Vec<&'static str>,
    pub tbs: Vec<u32>,
    pub held: Vec<Held>,
    /// Per-SM totals (the kernels share one SM), absent under Spatial.
    pub total: Option<Usage>,
    pub caps: Usage,
    /// Spatial: the SMs of each kernel.
    pub sms: Option<Vec<u32>>,
    /// Warped-Slicer: the curves, the sweet point's `S_k(n_k)` and theoretical weighted speedup.
    pub curves: Option<Vec<Curve>>,
    pub scaled: Option<Vec<f64>>,
    pub theoretical_ws: Option<f64>,
    pub profile_cycles: Option<u64>,
}

fn held(mix: &Mix, specs: &[KernelSpec], tbs: &[u32]) -> Vec<Held> {
    mix.0
        .iter()
        .zip(specs)
        .zip(tbs)
        .map(|((b, s), &n)| Held {
            name: b.name,
            tbs: n,
            used: usage(std::slice::from_ref(s), &[n]),
        })
        .collect()
}

/// Kernel `k`'s scalability curves: IPC alone with 1..=n_max TBs, `cycles` each, every point of
/// every kernel on every core.
pub fn curves(
    specs: &[KernelSpec],
    p: &PipeParams,
    cycles: u64,
    seed: u64,
) -> Result<Vec<Vec<f64>>, String> {
    let jobs: Vec<(usize, u32)> = specs
        .iter()
        .enumerate()
        .flat_map(|(k, s)| (1..=isolated(s, p)).map(move |n| (k, n)))
        .collect();
    let ipc = par_map(&jobs, |&(k, n)| {
        run(std::slice::from_ref(&specs[k]), &[n], cycles, seed, p).map(|s| s.kernels[0].ipc)
    });
    let mut out = vec![vec![]; specs.len()];
    for (&(k, _), x) in jobs.iter().zip(ipc) {
        out[k].push(x?);
    }
    Ok(out)
}

/// The partition `kind` of `mix` on the pipeline `p` (Warped-Slicer measures its curves with
/// `e.ws_profile_cycles` per point).
pub fn choose(
    kind: Partition,
    mix: &Mix,
    p: &PipeParams,
    e: &EvalParams,
) -> Result<Choice, String> {
    let specs: Vec<KernelSpec> = mix.0.iter().map(|b| b.kernel()).collect();
    for (b, s) in mix.0.iter().zip(&specs) {
        if isolated(s, p) == 0 {
            let o = overflow(std::slice::from_ref(s), &[1], p).expect("a TB that does not fit");
            return Err(format!("one TB of {} does not fit the SM: {o}", b.name));
        }
    }
    let mut c = Choice {
        scheme: kind.name(),
        kernels: mix.0.iter().map(|b| b.name).collect(),
        tbs: vec![],
        held: vec![],
        total: None,
        caps: caps(p),
        sms: None,
        curves: None,
        scaled: None,
        theoretical_ws: None,
        profile_cycles: None,
    };
    match kind {
        Partition::Spatial => {
            c.tbs = specs.iter().map(|s| isolated(s, p)).collect();
            c.sms = Some(spatial_sms(specs.len(), e.sms));
        }
        Partition::SmkP => {
            c.tbs = smk_p(&specs, p);
            c.total = Some(usage(&specs, &c.tbs));
        }
        Partition::Ws => {
            let ipc = curves(&specs, p, e.ws_profile_cycles, e.seed)?;
            let sp = sweet_point(&ipc, |t| overflow(&specs, t, p).is_none())
                .ok_or("no tuple with one TB of each kernel fits the SM")?;
            c.tbs = sp.tbs;
            c.total = Some(usage(&specs, &c.tbs));
            c.scaled = Some(sp.scaled);
            c.theoretical_ws = Some(sp.theoretical_ws);
            c.profile_cycles = Some(e.ws_profile_cycles);
            c.curves = Some(
                mix.0
                    .iter()
                    .zip(ipc)
                    .map(|(b, ipc)| Curve {
                        name: b.name,
                        scaled: scaled(&ipc),
                        ipc,
                    })
                    .collect(),
            );
        }
    }
    c.held = held(mix, &specs, &c.tbs);
    Ok(c)
}

/// A given tuple: whether it fits, and the first resource it overflows.
#[derive(Clone, Debug, Serialize)]
pub struct Feasibility {
    pub kernels: Vec<&'static str>,
    pub tbs: Vec<u32>,
    pub feasible: bool,
    pub held: Vec<Held>,
    pub total: Usage,
    pub caps: Usage,
    /// The first overflowing resource (threads, warps, TBs, registers, shared memory).
    pub overflow: Option<String>,
    pub used: Option<u64>,
    pub cap: Option<u64>,
}

/// Checks `tbs` (one count per kernel) against the SM of `p`.
pub fn check(mix: &Mix, tbs: &[u32], p: &PipeParams) -> Feasibility {
    let specs: Vec<KernelSpec> = mix.0.iter().map(|b| b.kernel()).collect();
    let o = overflow(&specs, tbs, p);
    Feasibility {
        kernels: mix.0.iter().map(|b| b.name).collect(),
        tbs: tbs.to_vec(),
        feasible: o.is_none(),
        held: held(mix, &specs, tbs),
        total: usage(&specs, tbs),
        caps: caps(p),
        overflow: o.map(|o| RESOURCES[o.resource].to_string()),
        used: o.map(|o| o.used),
        cap: o.map(|o| o.cap),
    }
}

/// `1536 threads, 48 warps, 6 TBs, 18432 registers, 6528 B shared memory`.
pub fn words(u: &Usage) -> String {
    format!(
        "{} threads, {} warps, {} TBs, {} registers, {} B shared memory",
        u[0], u[1], u[2], u[3], u[4]
    )
}

/// `3072/3072 threads, …`.
pub fn of_caps(u: &Usage, cap: &Usage) -> String {
    format!(
        "{}/{} threads, {}/{} warps, {}/{} TBs, {}/{} registers, {}/{} B shared memory",
        u[0], cap[0], u[1], cap[1], u[2], cap[2], u[3], cap[3], u[4], cap[4]
    )
}
