//! `mem_sm`, seed 004's SM memory pipeline with concurrent kernels
//! (docs/memory-issue-control.md §1–§2, §8): memory workloads (examples/mem/*.json) and the
//! Table-2 benchmarks alone or side by side, on the pipeline model alone or with the
//! `mem_issue_ctl` RTL in the loop (§5.6).

use super::run::{json as one_line, with_fields, Lines, WAVE_WINDOW};
use super::stalls;
use super::{
    check_waves, loading_checker, metric_names, model_point, Backend, BenchPlan, Failure, Input,
    InputKind, LegacyBench, Loaded, Profiles, RtlPasses, Run, RunOptions, Shape, SweepChecker,
    System, Waveform,
};
use crate::studies::mem_sm as in_loop;
use serde::ser::Error as _;
use serde::{Serialize, Serializer};
use serde_json::{json, Value};
use smrtl_cosim::harness::Trace as WaveRows;
use smrtl_cosim::sm::mem_sm::params::{PipeParams, MAX_KERNELS};
use smrtl_cosim::sm::mem_sm::workload::{self, Workload, BENCHES};
use smrtl_cosim::sm::mem_sm::{self as mp, CycleRecord, PipeStats};
use smrtl_cosim::Rtl;
use smrtl_hdl::blocks::mem_issue_ctl::Params as CtlParams;
use smrtl_hdl::{shown, BlockParams, ParamInfo};
use std::fmt;

/// The system.
pub struct MemSm;

/// The block in the loop, and the model's own top in a waveform of the model alone.
const CTL: &str = <CtlParams as BlockParams>::BLOCK;
const PIPELINE: &str = <PipeParams as BlockParams>::BLOCK;

/// Cycles of a profile's run per wave.
pub const CYCLES_PER_WAVE: u64 = 100_000;

fn refuse_bench(block: &str) -> String {
    format!("--mem-workload runs the SM memory pipeline with `{CTL}` in the loop, not `{block}`")
}

static INPUTS: [InputKind; 1] = [InputKind {
    name: "mem-workload",
    summary: "SM memory-pipeline workload (seed 004): {\"kernels\": [\"bp\", \"sv\"], \"cycles\": N, \"seed\", \"tbs\", \"params\"}",
    shapes: &[Shape::Json {
        required: &["kernels"],
        allowed: &["kernels", "tbs", "cycles", "seed", "params"],
    }],
    max_bytes: 8 << 20,
    legacy_flag: Some("mem-workload"),
    legacy_bench: Some(LegacyBench {
        block: CTL,
        refuse: refuse_bench,
    }),
    block: CTL,
    records: "one JSON line per cycle: the control's inputs and outputs, the L1D outcome, occupancies, the control's registers per kernel (docs/memory-issue-control.md §8)",
    vcd: "the SM signals (slot_free, lsu_busy, l1d_outcome, mshr/mq/rq occupancy) beside mem_issue_ctl's ports, model and (with an RTL backend) RTL",
    metrics: &METRICS,
}];

fn names() -> Vec<&'static str> {
    BENCHES.iter().map(|b| b.name).collect()
}

static PROFILES: Profiles = Profiles {
    summary: "the Table-2 benchmarks of seed 004, alone or up to three side by side joined by + (bp+sv), SMK-P filling",
    names,
    lookup,
    seed: "the kernels' generators",
    waves: "cycles, in units of 100 000",
    legacy_flag: None,
    legacy_help: "",
    legacy_bench: None,
    block: CTL,
};

/// Sweep metrics: (column, place in a run's report); kernel k's are null beyond the
/// workload's kernels.
const METRICS: [(&str, &str); 13] = [
    ("cycles", "/cycles"),
    ("warp_instructions", "/warp_instructions"),
    ("ipc", "/ipc"),
    ("lsu_stall_pct", "/lsu_stall_pct"),
    ("compute_util", "/compute_util"),
    ("k0_ipc", "/kernels/0/ipc"),
    ("k1_ipc", "/kernels/1/ipc"),
    ("k2_ipc", "/kernels/2/ipc"),
    ("k0_l1d_miss_rate", "/kernels/0/l1d_miss_rate"),
    ("k1_l1d_miss_rate", "/kernels/1/l1d_miss_rate"),
    ("k2_l1d_miss_rate", "/kernels/2/l1d_miss_rate"),
    ("k0_tbs", "/kernels/0/tbs"),
    ("k1_tbs", "/kernels/1/tbs"),
];

impl System for MemSm {
    fn name(&self) -> &'static str {
        "mem_sm"
    }

    fn summary(&self) -> &'static str {
        "seed 004's SM memory pipeline with concurrent kernels and the memory-issue control (docs/memory-issue-control.md)"
    }

    fn params(&self) -> Vec<ParamInfo> {
        PipeParams::describe()
    }

    fn inputs(&self) -> &'static [InputKind] {
        &INPUTS
    }

    fn profiles(&self) -> Option<&'static Profiles> {
        Some(&PROFILES)
    }

    fn load(&self, input: Input, sets: &[(String, String)]) -> Result<Box<dyn Loaded>, String> {
        match input {
            Input::File { name, text, .. } => Ok(Box::new(MemInput::load(name, text, sets)?)),
            Input::Profile { name, seed, waves } => {
                let text = profile_workload(name, seed, waves)?;
                Ok(Box::new(MemInput::load(
                    &format!("profile {name}"),
                    &text,
                    sets,
                )?))
            }
        }
    }

    fn sweep_metrics(&self) -> Vec<&'static str> {
        metric_names(&METRICS)
    }

    fn sweep_checker(&self) -> SweepChecker {
        loading_checker(&MemSm)
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

/// The Table-2 names of profile `name` (`bp`, `bp+sv`: up to [`MAX_KERNELS`] joined by `+`),
/// as the table spells them.
fn kernels_of(name: &str) -> Result<Vec<&'static str>, String> {
    let parts: Vec<&str> = name.split('+').map(str::trim).collect();
    let bad = |why: String| {
        shown(&format!(
            "unknown profile `{name}`: {why}; allowed: {} (up to {MAX_KERNELS} joined by +)",
            workload::bench_names()
        ))
    };
    if parts.len() > MAX_KERNELS {
        return Err(bad(format!("{} kernels", parts.len())));
    }
    parts
        .iter()
        .map(|k| {
            workload::bench_named(k)
                .map(|b| b.name)
                .ok_or_else(|| bad(format!("no benchmark `{k}`")))
        })
        .collect()
}

fn lookup(name: &str) -> Result<String, String> {
    Ok(kernels_of(name)?.join("+"))
}

/// Profile `name` as a workload file: SMK-P filling, `waves` × [`CYCLES_PER_WAVE`] cycles.
fn profile_workload(name: &str, seed: u64, waves: u32) -> Result<String, String> {
    let kernels = kernels_of(name)?;
    let cycles = CYCLES_PER_WAVE * u64::from(check_waves(waves)?);
    Ok(json!({"kernels": kernels, "cycles": cycles, "seed": seed}).to_string())
}

/// A memory workload, read and checked.
struct MemInput {
    name: String,
    workload: Workload,
}

impl MemInput {
    /// Workload file `text` (named `name` in messages), its params overridden by `sets`;
    /// params the control cannot take are refused here, before any work.
    fn load(name: &str, text: &str, sets: &[(String, String)]) -> Result<MemInput, String> {
        let w = workload::parse(text, sets).map_err(|e| shown(&format!("{name}: {e}")))?;
        mp::MemPipeline::new(&w).map_err(|e| shown(&format!("{name}: {e}")))?;
        Ok(MemInput {
            name: name.to_string(),
            workload: w,
        })
    }

    fn ctl(&self) -> CtlParams {
        in_loop::ctl_params(&self.workload)
    }

    fn dut(&self, backend: Backend) -> Result<Option<Box<dyn Rtl>>, String> {
        let ctl = self.ctl();
        Ok(match backend {
            Backend::Model => None,
            Backend::Rusthdl => Some(in_loop::rusthdl(&ctl)),
            Backend::Verilator => Some(in_loop::verilator(&ctl).map_err(|e| e.to_string())?),
        })
    }

    fn kernels(&self) -> Vec<&str> {
        self.workload
            .kernels
            .iter()
            .map(|k| k.name.as_str())
            .collect()
    }
}

/// The report of a memory-pipeline run.
pub struct MemReport {
    backend: Backend,
    source: String,
    params: PipeParams,
    seed: u64,
    stats: PipeStats,
}

impl MemReport {
    pub fn stats(&self) -> &PipeStats {
        &self.stats
    }
}

impl fmt::Display for MemReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.stats;
        write!(
            f,
            "{}: {} cycles, scheme {}, IPC {:.3}, LSU stall {:.1}%, compute utilisation {:.3}",
            self.source,
            s.cycles,
            one_line(&s.scheme)?.trim_matches('"'),
            s.ipc,
            s.lsu_stall_pct,
            s.compute_util,
        )?;
        for k in &s.kernels {
            let c = &k.rsfail_by_cause;
            write!(
                f,
                "\n  {} ({} TBs): {} warp instructions, IPC {:.3}, {} accesses, miss rate {:.2}, rsfail rate {:.2} (line {}, mq {}, merge {}, mshr {}), LSU stall {:.1}%",
                k.name,
                k.tbs,
                k.warp_instructions,
                k.ipc,
                k.accesses,
                k.l1d_miss_rate,
                k.l1d_rsfail_rate,
                c.line_alloc,
                c.miss_queue,
                c.mshr_merge,
                c.mshr_entry,
                k.lsu_stall_pct,
            )?;
        }
        if self.backend != Backend::Model {
            let backend = self.backend.name();
            write!(f, "\n  {CTL} RTL ({backend}) agrees on every cycle")?;
        }
        Ok(())
    }
}

impl Serialize for MemReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let params = serde_json::to_value(&self.params).map_err(S::Error::custom)?;
        let fields = [
            ("backend", self.backend.name().into()),
            ("source", self.source.as_str().into()),
            ("seed", self.seed.into()),
            ("params", params),
        ];
        with_fields(&self.stats, fields, s)
    }
}

impl Loaded for MemInput {
    fn run(&self, o: RunOptions) -> Result<Run, String> {
        let (w, name) = (&self.workload, &self.name);
        let mut m = mp::MemPipeline::new(w).map_err(|e| shown(&format!("{name}: {e}")))?;
        if let Some(req) = &o.stalls {
            let p = m
                .stall_params()
                .map_err(|e| shown(&format!("{name}: {e}")))?;
            m.attach_stalls(stalls::probe(&p, req, o.backend)?);
        }
        let mut dut = self.dut(o.backend)?;
        let mut rows = o.waveform.then(|| WaveRows::new(WAVE_WINDOW));
        let mut lines = Lines::new(o.records);
        let recording = lines.recording();
        let mut each = |r: &CycleRecord| lines.put(r);
        let each = recording.then_some(&mut each as &mut dyn FnMut(&_));
        let (result, layout, top) = match dut.as_deref_mut() {
            None => (
                Ok(mp::run_on(&mut m, w, each, rows.as_mut())),
                mp::wave_layout(&w.params, w.kernels.len()),
                PIPELINE,
            ),
            Some(dut) => {
                let run = in_loop::cosim_mem_on(&mut m, w, dut, rows.as_mut(), each);
                let result = run.map_err(|e| Failure {
                    block: CTL,
                    backend: o.backend,
                    diverged: !matches!(e, in_loop::MemLoopError::Model(_)),
                    cause: e.to_string(),
                });
                (result, in_loop::layout(&self.ctl()), CTL)
            }
        };
        let (result, stalls) = stalls::finish(result, m.take_stalls(), o.backend);
        Ok(Run {
            result: result.map(|stats| {
                Box::new(MemReport {
                    backend: o.backend,
                    source: name.clone(),
                    params: w.params.clone(),
                    seed: w.seed,
                    stats,
                }) as Box<dyn super::Report>
            }),
            waveform: rows.map(|rows| Waveform { top, layout, rows }),
            records_error: lines.error,
            stalls,
            stalls_per_sm: vec![],
        })
    }

    fn bench(&self, label: &str) -> Result<BenchPlan, String> {
        let w = &self.workload;
        let kernels = self.kernels();
        Ok(BenchPlan {
            subject: format!("{CTL} {label}"),
            figures: format!(
                "{} cycles, kernels {}, scheme {:?}, seed {}",
                w.cycles,
                kernels.join("+"),
                self.ctl().scheme,
                w.seed
            ),
            head: json!({
                "block": CTL,
                "mem_workload": self.name,
                "kernels": kernels,
                "params": w.params,
                "seed": w.seed,
                "cycles": w.cycles,
            }),
            base: "model",
            unit: "cycles",
            model: "SM memory-pipeline model alone",
            rusthdl: format!("model + {CTL} RTL on rust-hdl, lock step"),
            verilator: format!("model + {CTL} RTL on Verilator, lock step"),
            where_: "with the control in the loop",
            side: "the control's RTL (backend + port encoding + compare)",
        })
    }

    fn model_pass(&self) -> Result<u64, String> {
        mp::run(&self.workload, None, None)?;
        Ok(self.workload.cycles)
    }

    fn stalls_pass(&self) -> Result<Option<u64>, String> {
        let w = &self.workload;
        let mut m = mp::MemPipeline::new(w)?;
        let p = m.stall_params()?;
        m.attach_stalls(stalls::probe(
            &p,
            &stalls::StallRequest::SIM,
            Backend::Model,
        )?);
        mp::run_on(&mut m, w, None, None);
        m.take_stalls().expect("attached").finish()?;
        Ok(Some(w.cycles))
    }

    fn rtl_passes(&self, backend: Backend) -> Result<RtlPasses<'_>, String> {
        // One instance for every pass: each starts with a reset cycle.
        let mut dut = self
            .dut(backend)?
            .ok_or("the model has no RTL in its loop")?;
        Ok(Box::new(move || {
            in_loop::cosim_mem(&self.workload, dut.as_mut(), None, None)
                .map_err(|e| format!("{}: the RTL differs from the model: {e}", self.name))?;
            Ok(self.workload.cycles)
        }))
    }
}
