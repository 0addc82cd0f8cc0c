//! The memory-issue-control evaluation (docs/memory-issue-control.md §8.1–§8.3; spec §7–§8;
//! Dai et al., "Accelerate GPU Concurrent Kernel Execution by Mitigating Memory Pipeline
//! Stalls", HPCA 2018, §2.3–§4): the study's params, the schemes it compares, the workloads,
//! the metrics, the kernels' isolated calibration and the TB partitions of the baselines.

pub mod calibrate;
pub mod metrics;
pub mod partition;
pub mod plots;
pub mod report;
pub mod repro;
pub mod sensitivity;
pub mod study;
pub mod summary;
pub mod trends;
pub mod workloads;

use rayon::prelude::*;
use smrtl_cosim::sm::mem_sm::params::{PipeParams, Scheme};
use smrtl_cosim::sm::mem_sm::workload::{KernelSpec, Workload, MAX_CYCLES};
use smrtl_cosim::sm::mem_sm::{self as mp, PipeStats};
use smrtl_hdl::params::{Allowed, BlockParams};

smrtl_hdl::block_params! {
    /// The evaluation's own parameters (spec §7, §8.1, §9), beside the pipeline's (`mem_pipeline`).
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct EvalParams {
        /// Cycles per workload and per isolated run, the calibration's too (§8.1: 2M; CI 200K).
        run_cycles: u64 = 2_000_000, "run_cycles", Allowed::Range(1, MAX_CYCLES);
        /// Cycles of each point of a Warped-Slicer scalability curve (§7).
        ws_profile_cycles: u64 = 200_000, "ws_profile_cycles", Allowed::Range(1, MAX_CYCLES);
        /// SMK-W: cycles of IPC a warp-instruction quota holds (§7: wq = round(IPC_alone × window)).
        smkw_window: u32 = 1000, "smkw_window", Allowed::Range(1, 1_000_000);
        /// SMs of the GPU (§1.1), split by Spatial (§7).
        sms: u32 = 16, "sms", Allowed::Range(1, 1024);
        /// Seed of every run (the generator's PRNG per benchmark, warp and seed, §8.3).
        seed: u64 = 1, "seed", Allowed::Range(0, u64::MAX);
    }
}

impl BlockParams for EvalParams {
    const BLOCK: &'static str = "mem_eval";

    fn presets() -> Vec<(&'static str, Self)> {
        vec![("paper", EvalParams::default())]
    }
}

/// The TB partition a scheme runs on (spec §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Partition {
    /// SMs split, each kernel alone at isolated occupancy on its SMs.
    Spatial,
    /// Warped-Slicer's sweet point on static scalability curves.
    Ws,
    /// SMK-P: DRF progressive filling.
    SmkP,
}

impl Partition {
    /// The spellings of `smrtl partition --scheme`.
    pub const NAMES: [&'static str; 3] = ["spatial", "ws", "smk-p"];

    pub fn name(self) -> &'static str {
        match self {
            Partition::Spatial => "spatial",
            Partition::Ws => "ws",
            Partition::SmkP => "smk-p",
        }
    }

    /// `spatial`, `ws` or `smk-p`; the error is one line naming them.
    pub fn parse(s: &str) -> Result<Partition, String> {
        match s {
            "spatial" => Ok(Partition::Spatial),
            "ws" => Ok(Partition::Ws),
            "smk-p" => Ok(Partition::SmkP),
            _ => Err(format!(
                "--scheme `{}` is not a partition; allowed: {}",
                smrtl_hdl::shown(s),
                Partition::NAMES.join(", ")
            )),
        }
    }
}

/// A compared scheme (spec §8.1, [P §4]): its partition, the memory-issue control it runs and
/// whether SMK-W's warp-instruction quotas are on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvalScheme {
    pub name: &'static str,
    pub partition: Partition,
    pub ctl: Scheme,
    pub smkw: bool,
}

const fn scheme(name: &'static str, partition: Partition, ctl: Scheme, smkw: bool) -> EvalScheme {
    EvalScheme {
        name,
        partition,
        ctl,
        smkw,
    }
}

/// The nine schemes, spelled as on the command line and in JSON.
pub const SCHEMES: [EvalScheme; 9] = [
    scheme("spatial", Partition::Spatial, Scheme::Baseline, false),
    scheme("ws", Partition::Ws, Scheme::Baseline, false),
    scheme("ws-rbmi", Partition::Ws, Scheme::Rbmi, false),
    scheme("ws-qbmi", Partition::Ws, Scheme::Qbmi, false),
    scheme("ws-dmil", Partition::Ws, Scheme::Dmil, false),
    scheme("ws-qbmi-dmil", Partition::Ws, Scheme::QbmiDmil, false),
    scheme("smk-p-w", Partition::SmkP, Scheme::Baseline, true),
    scheme("smk-p-qbmi", Partition::SmkP, Scheme::Qbmi, false),
    scheme("smk-p-dmil", Partition::SmkP, Scheme::Dmil, false),
];

/// The scheme spelled `s`; the error is one line naming the nine.
pub fn scheme_named(s: &str) -> Result<&'static EvalScheme, String> {
    SCHEMES.iter().find(|e| e.name == s).ok_or_else(|| {
        format!(
            "unknown scheme `{}`; allowed: {}",
            smrtl_hdl::shown(s),
            SCHEMES.map(|e| e.name).join(", ")
        )
    })
}

/// One run of `kernels` with `tbs` resident TBs on the pipeline `p` (its scheme as given).
pub fn run(
    kernels: &[KernelSpec],
    tbs: &[u32],
    cycles: u64,
    seed: u64,
    p: &PipeParams,
) -> Result<PipeStats, String> {
    let w = Workload {
        kernels: kernels.to_vec(),
        tbs: tbs.to_vec(),
        cycles,
        seed,
        params: p.clone(),
    };
    mp::run(&w, None, None)
}

/// `f` over `jobs` on every core, results in job order.
pub fn par_map<J: Sync, R: Send>(jobs: &[J], f: impl Fn(&J) -> R + Sync + Send) -> Vec<R> {
    jobs.par_iter().map(f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nine_scheme_spellings() {
        let names: Vec<&str> = SCHEMES.iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "spatial",
                "ws",
                "ws-rbmi",
                "ws-qbmi",
                "ws-dmil",
                "ws-qbmi-dmil",
                "smk-p-w",
                "smk-p-qbmi",
                "smk-p-dmil"
            ]
        );
        assert_eq!(scheme_named("ws-dmil").unwrap().ctl, Scheme::Dmil);
        assert!(scheme_named("smk-p-w").unwrap().smkw);
        assert!(scheme_named("wsdmil")
            .unwrap_err()
            .contains("allowed: spatial, ws,"));
        assert_eq!(Partition::parse("smk-p"), Ok(Partition::SmkP));
        assert!(Partition::parse("smk")
            .unwrap_err()
            .contains("allowed: spatial, ws, smk-p"));
    }

    #[test]
    fn eval_params_defaults_are_the_spec() {
        let e = EvalParams::default();
        assert_eq!(
            (e.run_cycles, e.ws_profile_cycles, e.smkw_window, e.sms),
            (2_000_000, 200_000, 1000, 16)
        );
        e.validate().unwrap();
    }
}
