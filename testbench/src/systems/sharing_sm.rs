//! `sharing_sm`, seed 001's thread-block-residency SM with scratchpad sharing
//! (docs/scratchpad-sharing.md §5): kernel files (the JSON forms and the text form, §5.1,
//! §6.0) and the synthetic kernels of Table 1 (§8.1), on the SM model alone or with the
//! `sharing_core` RTL in the loop.

use super::run::{run_json, Lines, WAVE_WINDOW};
use super::stalls;
use super::{
    check_waves, loading_checker, metric_names, model_point, Backend, BenchPlan, Failure, Input,
    InputKind, Loaded, Profiles, RtlPasses, Run, RunOptions, Shape, SweepChecker, System, Waveform,
};
use crate::blocks::sharing_core as core_tb;
use crate::studies::{sharing_profiles, sharing_repro::grid};
use serde::{Serialize, Serializer};
use serde_json::{json, Value};
use smrtl_cosim::harness::Trace as WaveRows;
use smrtl_cosim::kernel::program::Kernel;
use smrtl_cosim::sm::sharing_sm::{
    load_kernel, CycleRecord, LoopError, SharingSm as Model, SmParams, SmStats, TbSummary,
};
use smrtl_cosim::Rtl;
use smrtl_hdl::{shown, BlockParams, ParamInfo};
use std::fmt;

/// The system.
pub struct SharingSm;

/// Most bytes of a kernel file (its JSON tree takes about ten times its text).
pub const MAX_KERNEL_BYTES: u64 = 8 << 20;

/// The block in the loop.
const CORE: &str = <SmParams as BlockParams>::BLOCK;

static INPUTS: [InputKind; 1] = [InputKind {
    name: "kernel",
    summary: "Scratchpad-sharing kernel (seed 001): {\"threads\", \"smem\", \"grid\", \"warps\": [[...]], \"params\"}, the control-flow JSON form {\"shared\", \"tb_smem\", \"blocks\": [...]}, or the text form (.txt)",
    shapes: &[
        Shape::Json {
            required: &["threads", "smem", "grid", "warps"],
            allowed: &["name", "threads", "smem", "grid", "warps", "locks", "params", "seed"],
        },
        Shape::Json {
            required: &["blocks"],
            allowed: &[
                "name", "shared", "tb_smem", "t", "threads", "grid", "seed", "blocks", "locks",
                "params",
            ],
        },
        Shape::Text {
            extensions: &["txt"],
        },
    ],
    max_bytes: MAX_KERNEL_BYTES,
    legacy_flag: Some("kernel"),
    legacy_bench: None,
    block: CORE,
    records: "one JSON line per kernel cycle: the SM's picks, lock events and TB changes (docs/scratchpad-sharing.md §5.3)",
    vcd: "sharing_core's ports, model and (with an RTL backend) RTL, and the RTL's nets, launch cycles included",
    metrics: &METRICS,
}];

fn names() -> Vec<&'static str> {
    sharing_profiles::PROFILES.iter().map(|p| p.name).collect()
}

static PROFILES: Profiles = Profiles {
    summary: "the synthetic scratchpad-sharing kernels of seed 001's Table 1 (docs/scratchpad-sharing.md §8.1)",
    names,
    lookup: |name| sharing_profiles::profile(name).map(|p| p.name.to_string()),
    seed: "the kernel's branch coins",
    waves: "waves of its shared launch (TBs = waves × the launch's TBs)",
    legacy_flag: Some("kernel-profile"),
    legacy_help: "A synthetic scratchpad-sharing kernel of seed 001's Table 1 (backprop, DCT1, ..., heartwall, ...; docs/scratchpad-sharing.md §8.1), `--waves` waves of its shared launch.",
    legacy_bench: None,
    block: CORE,
};

/// Sweep metrics: (column, place in a run's report).
const METRICS: [(&str, &str); 10] = [
    ("cycles", "/cycles"),
    ("thread_instructions", "/thread_instructions"),
    ("warp_instructions", "/warp_instructions"),
    ("ipc", "/ipc"),
    ("tbs_completed", "/tbs_completed"),
    ("resident_tbs_max", "/resident_tbs_max"),
    ("launch_tbs", "/launch/n"),
    ("nacks", "/nacks"),
    ("lock_acquires", "/lock_acquires"),
    ("relssp_releases", "/lock_releases/relssp"),
];

impl System for SharingSm {
    fn name(&self) -> &'static str {
        "sharing_sm"
    }

    fn summary(&self) -> &'static str {
        "seed 001's thread-block-residency SM: scratchpad sharing, lock tables, relssp, OWF scheduling (docs/scratchpad-sharing.md)"
    }

    fn params(&self) -> Vec<ParamInfo> {
        SmParams::describe()
    }

    fn inputs(&self) -> &'static [InputKind] {
        &INPUTS
    }

    fn profiles(&self) -> Option<&'static Profiles> {
        Some(&PROFILES)
    }

    fn load(&self, input: Input, sets: &[(String, String)]) -> Result<Box<dyn Loaded>, String> {
        match input {
            Input::File { name, text, .. } => Ok(Box::new(KernelInput::load(name, text, sets)?)),
            Input::Profile { name, seed, waves } => {
                let prof = sharing_profiles::profile(name)?;
                let text = prof.program(grid(prof, check_waves(waves)?), seed);
                Ok(Box::new(KernelInput::load(prof.name, &text, sets)?))
            }
        }
    }

    fn sweep_metrics(&self) -> Vec<&'static str> {
        metric_names(&METRICS)
    }

    fn sweep_checker(&self) -> SweepChecker {
        loading_checker(&SharingSm)
    }

    fn sweep_point(
        &self,
        profile: &str,
        overrides: &[(String, Value)],
        seed: u64,
        waves: u32,
    ) -> Result<Vec<Value>, String> {
        model_point(self, &METRICS, profile, overrides, seed, waves)
    }
}

/// Whether `smrtl sim` takes kernel file `text` as it is (no `--set`): the checks of a kernel
/// input before it runs; the error is the one `sim` would print after the file's name.
pub fn check_kernel(text: &str) -> Result<(), String> {
    let (kernel, params, _) = load_kernel(text, &[])?;
    params.validate().map_err(|e| e.to_string())?;
    Model::new(&params, &kernel).map_err(|e| e.to_string())?;
    Ok(())
}

/// A kernel, read and checked against its params.
struct KernelInput {
    /// The file's name in messages.
    name: String,
    /// The kernel's name, else the file's.
    source: String,
    kernel: Kernel,
    params: SmParams,
}

impl KernelInput {
    /// Kernel file `text` (named `name` in messages), its params overridden by `sets`; a
    /// kernel that does not fit the SM is refused here, before any work.
    fn load(name: &str, text: &str, sets: &[(String, String)]) -> Result<KernelInput, String> {
        let at = |e: String| shown(&format!("{name}: {e}"));
        let (kernel, params, _) = load_kernel(text, sets).map_err(at)?;
        params.validate().map_err(|e| at(e.to_string()))?;
        Model::new(&params, &kernel).map_err(|e| at(e.to_string()))?;
        let source = if kernel.name.is_empty() {
            name.to_string()
        } else {
            kernel.name.clone()
        };
        Ok(KernelInput {
            name: name.to_string(),
            source,
            kernel,
            params,
        })
    }

    fn dut(&self, backend: Backend) -> Result<Option<Box<dyn Rtl>>, String> {
        let core = self.params.core();
        Ok(match backend {
            Backend::Model => None,
            Backend::Rusthdl => Some(core_tb::rusthdl(&core)),
            Backend::Verilator => Some(core_tb::verilator(&core).map_err(|e| e.to_string())?),
        })
    }
}

/// The report of a kernel run.
pub struct KernelReport {
    backend: Backend,
    source: String,
    params: SmParams,
    stats: SmStats,
}

impl KernelReport {
    pub fn stats(&self) -> &SmStats {
        &self.stats
    }
}

impl fmt::Display for KernelReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.stats;
        let (l, r) = (&s.launch, &s.lock_releases);
        write!(
            f,
            "{}: {} cycles, {} thread instructions, IPC {:.2}; {} TBs, at most {} resident (launch: {} = 2×{} shared + {} unshared, {} without sharing); {} NACKs; locks: {} acquired, released by relssp {}, at finish {}, transferred {}",
            self.source,
            s.cycles,
            s.thread_instructions,
            s.ipc,
            s.tbs_completed,
            s.resident_tbs_max,
            l.n,
            l.pairs,
            l.unshared,
            l.base,
            s.nacks,
            s.lock_acquires,
            r.relssp,
            r.finish,
            r.transfer,
        )?;
        if self.backend != Backend::Model {
            let backend = self.backend.name();
            write!(f, ", {CORE} RTL ({backend}) agrees on every cycle")?;
        }
        Ok(())
    }
}

impl Serialize for KernelReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error as _;
        let tbs = &self.stats.tbs;
        let summary = TbSummary::of(tbs);
        let mut extra = vec![(
            "tb_summary",
            serde_json::to_value(summary).map_err(S::Error::custom)?,
        )];
        if summary.listed {
            extra.push(("tbs", serde_json::to_value(tbs).map_err(S::Error::custom)?));
        }
        run_json(
            &self.stats,
            self.backend,
            &self.source,
            &self.params,
            extra,
            s,
        )
    }
}

impl Loaded for KernelInput {
    fn run(&self, o: RunOptions) -> Result<Run, String> {
        let probe = match &o.stalls {
            Some(req) => {
                let sm = Model::new(&self.params, &self.kernel)
                    .map_err(|e| shown(&format!("{}: {e}", self.name)))?;
                let sp = sm
                    .stall_params()
                    .map_err(|e| shown(&format!("{}: {e}", self.name)))?;
                Some(stalls::probe(&sp, req, o.backend)?)
            }
            None => None,
        };
        let mut dut = self.dut(o.backend)?;
        let mut rows = o.waveform.then(|| WaveRows::new(WAVE_WINDOW));
        let mut lines = Lines::new(o.records);
        let recording = lines.recording();
        let mut each = |r: &CycleRecord| lines.put(r);
        let run = core_tb::cosim_kernel_probed(
            &self.params,
            &self.kernel,
            probe,
            dut.as_mut().map(|d| &mut **d as &mut dyn Rtl),
            rows.as_mut(),
            recording.then_some(&mut each as &mut dyn FnMut(&_)),
        );
        let (run, probe) = match run {
            Ok((stats, probe)) => (Ok(stats), probe),
            Err(e) => (Err(e), None),
        };
        let result = match run {
            Ok(stats) => Ok(Box::new(KernelReport {
                backend: o.backend,
                source: self.source.clone(),
                params: self.params.clone(),
                stats,
            }) as Box<dyn super::Report>),
            // The model alone stopping (a deadlock, a protocol error) is the kernel's problem.
            Err(LoopError::Model(e)) if o.backend == Backend::Model => {
                return Err(shown(&format!("{}: {e}", self.name)))
            }
            Err(e) => Err(Failure {
                block: CORE,
                backend: o.backend,
                diverged: !matches!(e, LoopError::Model(_)),
                cause: e.to_string(),
            }),
        };
        let (result, stalls) = stalls::finish(result, probe, o.backend);
        Ok(Run {
            result,
            waveform: rows.map(|rows| Waveform {
                top: CORE,
                layout: core_tb::layout(&self.params.core()),
                rows,
            }),
            records_error: lines.error,
            stalls,
            stalls_per_sm: vec![],
        })
    }

    fn bench(&self, label: &str) -> Result<BenchPlan, String> {
        let stats = core_tb::cosim_kernel(&self.params, &self.kernel, None, None, None)
            .map_err(|e| format!("{}: {e}", self.name))?;
        Ok(BenchPlan {
            subject: format!("{CORE} {label}"),
            figures: format!(
                "{} cycles, {} thread instructions, {} TBs",
                stats.cycles, stats.thread_instructions, stats.tbs_completed
            ),
            head: json!({
                "block": CORE,
                "input": label,
                "params": self.params,
                "cycles": stats.cycles,
            }),
            base: "cosim:rusthdl",
            unit: "cycles",
            model: "behavioral SM model alone",
            rusthdl: format!("model + {CORE} RTL on rust-hdl, lock step"),
            verilator: format!("model + {CORE} RTL on Verilator, lock step"),
            where_: "in the SM co-simulation",
            side: "the RTL side (backend + port encoding + compare)",
        })
    }

    fn model_pass(&self) -> Result<u64, String> {
        let stats = core_tb::cosim_kernel(&self.params, &self.kernel, None, None, None)
            .map_err(|e| format!("{}: {e}", self.name))?;
        Ok(stats.cycles)
    }

    fn stalls_pass(&self) -> Result<Option<u64>, String> {
        let sm = Model::new(&self.params, &self.kernel).map_err(|e| e.to_string())?;
        let probe = stalls::probe(
            &sm.stall_params()?,
            &stalls::StallRequest::SIM,
            Backend::Model,
        )?;
        let (stats, probe) =
            core_tb::cosim_kernel_probed(&self.params, &self.kernel, Some(probe), None, None, None)
                .map_err(|e| format!("{}: {e}", self.name))?;
        probe.expect("attached").finish()?;
        Ok(Some(stats.cycles))
    }

    fn rtl_passes(&self, backend: Backend) -> Result<RtlPasses<'_>, String> {
        self.dut(backend)?;
        Ok(Box::new(move || {
            let mut dut = self.dut(backend)?;
            let rtl = dut.as_mut().map(|d| &mut **d as &mut dyn Rtl);
            let stats = core_tb::cosim_kernel(&self.params, &self.kernel, rtl, None, None)
                .map_err(|e| format!("{} does not co-simulate: {e}", self.name))?;
            Ok(stats.cycles)
        }))
    }
}
