//! `elastic_sm`, seed 000's SM core (docs/elastic-pipeline.md): trace files of subwarp
//! entries on the elastic pipeline (§3), scheduler-mode workloads on the SM core (§5) and the
//! synthetic Table-5 profiles (§8), on the behavioral model alone or with the block's RTL in
//! lock step beside it, every cycle compared.

use super::run::{json, run_json, with_fields, Lines, WAVE_WINDOW};
use super::stalls;
use super::{
    check_waves, Backend, BenchPlan, Failure, Input, InputKind, LegacyBench, Loaded, Profiles,
    RtlPasses, Run, RunOptions, Shape, SweepChecker, System, Waveform,
};
use crate::blocks::elastic_pipeline as pipeline;
use crate::blocks::sm_core::{self, params_from_value, workload_from_value, SmDivergence};
use crate::studies::profiles::{self, LANES, SUBWARPS};
use crate::studies::trace::{self as traces, DriveError, Trace};
use crate::Design;
use serde::ser::Error as _;
use serde::{Serialize, Serializer};
use serde_json::{json, Value};
use smrtl_cosim::blocks::elastic_pipeline::{Model, Record, Summary, SummaryAcc};
use smrtl_cosim::harness::backend::rusthdl::RustHdl;
use smrtl_cosim::harness::Trace as WaveRows;
use smrtl_cosim::sm::elastic_sm::{SmParams, SmRecord, SmStats};
use smrtl_cosim::{BlockModel, Rtl};
use smrtl_hdl::blocks::elastic_pipeline::Params;
use smrtl_hdl::params::Declared;
use smrtl_hdl::{shown, BlockParams, ParamInfo};
use std::collections::HashMap;
use std::fmt;

/// The system.
pub struct ElasticSm;

const PIPE: &str = <Params as BlockParams>::BLOCK;
const CORE: &str = <SmParams as BlockParams>::BLOCK;

static INPUTS: [InputKind; 2] = [
    InputKind {
        name: "trace",
        summary: "Trace file: {\"params\": {...}, \"stream\": [...], \"icnt_valid_cycles\": [...]}, the elastic pipeline alone",
        shapes: &[Shape::Json {
            required: &["stream"],
            allowed: &["params", "stream", "icnt_valid_cycles"],
        }],
        max_bytes: 64 << 20,
        legacy_flag: Some("trace"),
        legacy_bench: None,
        block: PIPE,
        records: "one JSON line per cycle: the pipeline's record (docs/elastic-pipeline.md §3.5)",
        vcd: "the pipeline's inputs, model outputs and (with an RTL backend) RTL outputs and nets",
        metrics: &[
            ("cycles", "/cycles"),
            ("stalls", "/stalls"),
            ("bank_conflict", "/stall_causes/bank_conflict"),
            ("other", "/stall_causes/other"),
            ("wb_bubbles", "/wb_bubbles"),
            ("last_wb_cycle", "/last_wb_cycle"),
        ],
    },
    InputKind {
        name: "workload",
        summary: "Scheduler-mode workload: {\"params\": {...}, \"warps\": [[{\"op\": ..., \"pc\": ...}, ...], ...]}, the SM core",
        shapes: &[Shape::Json {
            required: &["warps"],
            allowed: &["params", "warps"],
        }],
        max_bytes: 8 << 20,
        legacy_flag: Some("workload"),
        legacy_bench: None,
        block: CORE,
        records: "one JSON line per cycle: the SM core's record (docs/elastic-pipeline.md §5.6)",
        vcd: "the core's ports, model and (with an RTL backend) RTL, and the RTL's nets by instance",
        metrics: &[
            ("cycles", "/cycles"),
            ("issued_warp_instructions", "/issued_warp_instructions"),
            ("issue", "/outcomes/issue"),
            ("bank_conflict", "/outcomes/bank_conflict"),
            ("other", "/outcomes/other"),
            ("sched_fail", "/outcomes/sched_fail"),
            ("idle", "/outcomes/idle"),
            ("wb_bubbles", "/wb_bubbles"),
            ("hc_hits", "/hc_hits"),
            ("hc_misses", "/hc_misses"),
            ("ipc", "/ipc"),
        ],
    },
];

fn refuse_profile_bench(block: &str) -> String {
    format!("--profile runs a workload on `{CORE}`, not on `{block}`")
}

static PROFILES: Profiles = Profiles {
    summary: "the synthetic kernels of seed 000's Table 5 as scheduler-mode workloads (docs/elastic-pipeline.md §8)",
    names: profiles::names,
    lookup: |name| profiles::profile(name).map(|p| p.name.to_string()),
    seed: "the workload's draw (degrees, strides, irregular accesses)",
    waves: "repetitions of the body per warp context (successive CTAs)",
    legacy_flag: Some("profile"),
    legacy_help: "A synthetic kernel profile of seed 000's Table 5 (aes_encrypt, dct, transpose, ...).",
    legacy_bench: Some(LegacyBench {
        block: CORE,
        refuse: refuse_profile_bench,
    }),
    block: CORE,
};

/// Metrics of one sweep point, after its coordinates (the [`SmStats`] of the run).
pub const SM_METRICS: [&str; 11] = [
    "cycles",
    "issued_warp_instructions",
    "issue",
    "bank_conflict",
    "other",
    "sched_fail",
    "idle",
    "wb_bubbles",
    "hc_hits",
    "hc_misses",
    "ipc",
];

impl System for ElasticSm {
    fn name(&self) -> &'static str {
        "elastic_sm"
    }

    fn summary(&self) -> &'static str {
        "seed 000's SM core: the elastic pipeline with BCAWS scheduling and the history cache (docs/elastic-pipeline.md)"
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
            Input::File { kind, name, text } if kind.name == "trace" => {
                Ok(Box::new(TraceInput::load(name, text, sets)?))
            }
            Input::File { name, text, .. } => {
                let w = Workload::parse(name, text)?;
                Ok(Box::new(WorkloadInput::new(w, sets, None)?))
            }
            Input::Profile { name, seed, waves } => {
                let w = Workload::profile(name, seed, waves)?;
                let of = ProfileOf {
                    name: profiles::profile(name)?.name,
                    seed,
                    waves,
                };
                Ok(Box::new(WorkloadInput::new(w, sets, Some(of))?))
            }
        }
    }

    fn sweep_metrics(&self) -> Vec<&'static str> {
        SM_METRICS.to_vec()
    }

    fn sweep_checker(&self) -> SweepChecker {
        let mut bodies = Bodies::default();
        Box::new(move |name, overrides, seed| check_point(&mut bodies, name, overrides, seed))
    }

    fn sweep_point(
        &self,
        profile: &str,
        overrides: &[(String, Value)],
        seed: u64,
        waves: u32,
    ) -> Result<Vec<Value>, String> {
        let w = workload_from_value(&sweep_workload(profile, overrides, seed, waves)?)?;
        let stats = smrtl_cosim::sm::elastic_sm::run_stats(&w)?;
        Ok(metrics(&stats))
    }
}

// ---------------------------------------------------------------------------------------------
// Trace files: the elastic pipeline
// ---------------------------------------------------------------------------------------------

/// A trace file, read and checked.
struct TraceInput {
    trace: Trace,
}

impl TraceInput {
    /// Trace file `text` (`name` in messages), its params overridden by `sets`: the
    /// pipeline's params only, the SM core's others do not apply to a trace.
    fn load(name: &str, text: &str, sets: &[(String, String)]) -> Result<TraceInput, String> {
        let pipe = Params::declared();
        if let Some((key, _)) = sets
            .iter()
            .find(|(k, _)| !pipe.iter().any(|d| d.name.eq_ignore_ascii_case(k)))
        {
            let names: Vec<&str> = pipe.iter().map(|d| d.name).collect();
            return Err(shown(&format!(
                "{name}: parameter {key} does not apply to a trace, which runs {PIPE} alone; \
                 allowed: {}",
                names.join(", ")
            )));
        }
        let trace =
            Trace::from_json_with(text, sets).map_err(|e| shown(&format!("{name}: {e}")))?;
        Ok(TraceInput { trace })
    }

    /// A fresh pipeline RTL of `design` on `backend`.
    fn rtl(design: &Design, backend: Backend) -> Result<Box<dyn Rtl>, String> {
        match backend {
            Backend::Verilator => crate::verilated(&design.module).map_err(|e| e.to_string()),
            _ => Ok(Box::new(RustHdl::new(design.module.clone()))),
        }
    }
}

/// The report of a trace run.
pub struct TraceReport {
    backend: Backend,
    params: Params,
    entries: usize,
    summary: Summary,
}

impl fmt::Display for TraceReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.summary;
        write!(
            f,
            "{:?} pipeline, {} entries: {} cycles, {} stalls ({} bank_conflict, {} other), {} WB bubbles, last WB in cycle {}",
            self.params.pipe_mode,
            self.entries,
            s.cycles,
            s.stalls,
            s.stall_causes.bank_conflict,
            s.stall_causes.other,
            s.wb_bubbles,
            s.last_wb_cycle.map_or("-".into(), |c| c.to_string()),
        )?;
        if self.backend != Backend::Model {
            write!(f, ", RTL ({}) agrees on every record", self.backend.name())?;
        }
        Ok(())
    }
}

impl Serialize for TraceReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let params = serde_json::to_value(&self.params).map_err(S::Error::custom)?;
        let fields = [
            ("backend", self.backend.name().into()),
            ("entries", self.entries.into()),
            ("params", params),
        ];
        with_fields(&self.summary, fields, s)
    }
}

/// How a pipeline run failed.
fn pipeline_failure(backend: Backend, e: DriveError) -> Failure {
    let diverged = !matches!(e, DriveError::CycleLimit { .. });
    let cause = match &e {
        DriveError::Diverged(d) => format!(
            "{d}\nmodel record: {}\nrtl record:   {}",
            json(&d.model).unwrap_or_default(),
            json(&d.rtl).unwrap_or_default()
        ),
        e => e.to_string(),
    };
    Failure {
        block: PIPE,
        backend,
        cause,
        diverged,
    }
}

impl Loaded for TraceInput {
    fn run(&self, o: RunOptions) -> Result<Run, String> {
        if o.stalls.is_some() {
            return Err(smrtl_hdl::shown(
                "--stalls needs warps; a trace drives the pipeline alone (allowed: an sm-workload file or --profile)",
            ));
        }
        let trace = &self.trace;
        let p = &trace.params;
        let layout = pipeline::layout(p);
        let limit = trace.cycle_budget();
        let mut rows = o.waveform.then(|| WaveRows::new(WAVE_WINDOW));
        let mut model = Model::new(p, &layout);
        let mut lines = Lines::new(o.records);
        let mut summary = SummaryAcc::default();
        let mut progress = smrtl_hdl::progress::Counter::watched("elastic_sm", 0, "cycles");
        let mut each = |r: &Record| {
            progress.tick();
            summary.record(r);
            lines.put(r);
        };
        let result = match o.backend {
            Backend::Model => {
                traces::run_traced(&mut model, &layout, trace, limit, rows.as_mut(), &mut each)
            }
            rtl => {
                let mut dut = Self::rtl(&Design::new(p), rtl)?;
                traces::cosim_traced(
                    &mut model,
                    dut.as_mut(),
                    &layout,
                    trace,
                    limit,
                    rows.as_mut(),
                    &mut each,
                )
            }
        };
        let result = match result {
            Ok(_) => Ok(Box::new(TraceReport {
                backend: o.backend,
                params: p.clone(),
                entries: trace.stream.len(),
                summary: summary.finish(),
            }) as Box<dyn super::Report>),
            Err(e) => Err(pipeline_failure(o.backend, e)),
        };
        Ok(Run {
            result,
            waveform: rows.map(|rows| Waveform {
                top: PIPE,
                layout,
                rows,
            }),
            records_error: lines.error,
            stalls: None,
            stalls_per_sm: vec![],
        })
    }

    fn bench(&self, label: &str) -> Result<BenchPlan, String> {
        let cycles = self.model_pass()?;
        Ok(BenchPlan {
            subject: format!("{PIPE} {label}"),
            figures: format!("{cycles} cycles, {} entries", self.trace.stream.len()),
            head: json!({
                "block": PIPE,
                "input": label,
                "params": self.trace.params,
                "cycles": cycles,
            }),
            base: "cosim:rusthdl",
            unit: "cycles",
            model: "behavioral pipeline model alone",
            rusthdl: "model + pipeline RTL on rust-hdl, lock step".into(),
            verilator: "model + pipeline RTL on Verilator, lock step".into(),
            where_: "in the pipeline co-simulation",
            side: "the RTL side (backend + record compare)",
        })
    }

    fn model_pass(&self) -> Result<u64, String> {
        let (trace, layout) = (&self.trace, pipeline::layout(&self.trace.params));
        let mut model = Model::new(&trace.params, &layout);
        traces::run_traced(
            &mut model,
            &layout,
            trace,
            trace.cycle_budget(),
            None,
            &mut |_| {},
        )
        .map_err(|e| e.to_string())
    }

    fn rtl_passes(&self, backend: Backend) -> Result<RtlPasses<'_>, String> {
        let design = Design::new(&self.trace.params);
        Self::rtl(&design, backend)?;
        let (trace, layout) = (&self.trace, pipeline::layout(&self.trace.params));
        Ok(Box::new(move || {
            let mut model = Model::new(&trace.params, &layout);
            let mut dut = Self::rtl(&design, backend)?;
            let limit = trace.cycle_budget();
            traces::cosim_traced(
                &mut model,
                dut.as_mut(),
                &layout,
                trace,
                limit,
                None,
                &mut |_| {},
            )
            .map_err(|e| {
                format!(
                    "the trace does not co-simulate: {}",
                    pipeline_failure(backend, e)
                )
            })
        }))
    }
}

// ---------------------------------------------------------------------------------------------
// Scheduler mode: the SM core on a workload or a profile
// ---------------------------------------------------------------------------------------------

/// A scheduler-mode workload before its parameter overrides, and its name in messages.
pub struct Workload {
    source: String,
    value: Value,
}

impl Workload {
    /// Workload file `text`, named `name` in messages.
    pub fn parse(name: &str, text: &str) -> Result<Workload, String> {
        smrtl_cosim::json::repeated_key(text).map_err(|e| format!("{name}: {e}"))?;
        let value = serde_json::from_str(text)
            .map_err(|e| shown(&format!("{name}: malformed workload: {e}")))?;
        Ok(Workload {
            source: name.to_string(),
            value,
        })
    }

    /// The synthetic kernel profile `name` (see [`profiles`]): `waves` repetitions of its body
    /// per warp context, drawn with `seed`.
    pub fn profile(name: &str, seed: u64, waves: u32) -> Result<Workload, String> {
        let p = profiles::profile(name)?;
        Ok(Workload {
            source: format!("profile {name}"),
            value: p.workload(seed, check_waves(waves)?, LANES, SUBWARPS),
        })
    }

    /// The workload with its params overridden by `sets` (JSON values, else text), checked;
    /// with its name for messages.
    pub fn resolve(
        self,
        sets: &[(String, String)],
    ) -> Result<(String, smrtl_cosim::sm::elastic_sm::Workload), String> {
        let Workload { source, mut value } = self;
        if !sets.is_empty() {
            let params = value
                .as_object_mut()
                .map(|o| o.entry("params").or_insert_with(|| Value::Object(Default::default())))
                .and_then(Value::as_object_mut)
                .ok_or_else(|| {
                    format!("{source}: a workload is an object {{\"params\": {{...}}, \"warps\": [...]}}")
                })?;
            for (key, val) in sets {
                let v = serde_json::from_str(val).unwrap_or_else(|_| Value::from(val.as_str()));
                params.insert(key.clone(), v);
            }
        }
        let workload =
            sm_core::workload_from_value(&value).map_err(|e| shown(&format!("{source}: {e}")))?;
        Ok((source, workload))
    }
}

/// The profile a workload was drawn from.
struct ProfileOf {
    name: &'static str,
    seed: u64,
    waves: u32,
}

/// A scheduler-mode workload with its params resolved.
struct WorkloadInput {
    source: String,
    workload: smrtl_cosim::sm::elastic_sm::Workload,
    profile: Option<ProfileOf>,
}

impl WorkloadInput {
    fn new(
        w: Workload,
        sets: &[(String, String)],
        profile: Option<ProfileOf>,
    ) -> Result<WorkloadInput, String> {
        let (source, workload) = w.resolve(sets)?;
        Ok(WorkloadInput {
            source,
            workload,
            profile,
        })
    }

    fn dut(&self, backend: Backend) -> Result<Box<dyn Rtl>, String> {
        let p = &self.workload.params;
        match backend {
            Backend::Verilator => sm_core::verilator(p).map_err(|e| e.to_string()),
            _ => Ok(sm_core::rusthdl(p)),
        }
    }
}

/// The report of a scheduler-mode run.
pub struct WorkloadReport {
    backend: Backend,
    source: String,
    params: SmParams,
    stats: SmStats,
}

impl fmt::Display for WorkloadReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.stats;
        write!(
            f,
            "{}: {} cycles, {} warp instructions, IPC per lane {:.3}, outcomes {}, {} WB bubbles, history cache {} hits / {} misses",
            self.source,
            s.cycles,
            s.issued_warp_instructions,
            s.ipc,
            json(&s.outcomes)?,
            s.wb_bubbles,
            s.hc_hits,
            s.hc_misses,
        )?;
        if self.backend != Backend::Model {
            let backend = self.backend.name();
            write!(f, ", {CORE} RTL ({backend}) agrees on every cycle")?;
        }
        Ok(())
    }
}

impl Serialize for WorkloadReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        run_json(
            &self.stats,
            self.backend,
            &self.source,
            &self.params,
            vec![],
            s,
        )
    }
}

fn core_failure(backend: Backend, d: Box<SmDivergence>) -> Failure {
    Failure {
        block: CORE,
        backend,
        cause: format!("{d}\nmodel record: {}", json(&d.model).unwrap_or_default()),
        diverged: true,
    }
}

impl Loaded for WorkloadInput {
    fn run(&self, o: RunOptions) -> Result<Run, String> {
        let (source, workload) = (&self.source, &self.workload);
        let p = &workload.params;
        let mut core = smrtl_cosim::sm::elastic_sm::core_of(workload)
            .map_err(|e| shown(&format!("{source}: {e}")))?;
        if let Some(req) = &o.stalls {
            let sp = core
                .stall_params()
                .map_err(|e| shown(&format!("{source}: {e}")))?;
            core.attach_stalls(stalls::probe(&sp, req, o.backend)?);
        }
        let mut rows = o.waveform.then(|| WaveRows::new(WAVE_WINDOW));
        let mut lines = Lines::new(o.records);
        let result = match o.backend {
            Backend::Model => {
                // Records are built only when asked for (`--records`).
                let stats = if lines.recording() {
                    core.run_kernel_each(&workload.warps, &mut |r| lines.put(r))
                } else {
                    core.run_stats(&workload.warps)
                };
                let stats = stats.map_err(|e| format!("{source}: {e}"))?;
                if let Some(rows) = rows.as_mut() {
                    sm_core::model_rows(p, &workload.warps, rows)?;
                }
                Ok(vec![stats])
            }
            backend => {
                let mut dut = self.dut(backend)?;
                let layout = sm_core::layout(p);
                let kernels = [workload.warps.clone()];
                let mut each = |_: usize, r: &SmRecord| lines.put(r);
                let (dut, rows) = (dut.as_mut(), rows.as_mut());
                sm_core::cosim_each_on(&mut core, &layout, &kernels, dut, rows, &mut each)
            }
        };
        let result = match result {
            Ok(mut stats) => Ok(Box::new(WorkloadReport {
                backend: o.backend,
                source: source.clone(),
                params: p.clone(),
                stats: stats.remove(0),
            }) as Box<dyn super::Report>),
            Err(d) => Err(core_failure(o.backend, d)),
        };
        let (result, stalls) = stalls::finish(result, core.take_stalls(), o.backend);
        Ok(Run {
            result,
            waveform: rows.map(|rows| Waveform {
                top: CORE,
                layout: sm_core::layout(p),
                rows,
            }),
            records_error: lines.error,
            stalls,
            stalls_per_sm: vec![],
        })
    }

    fn bench(&self, label: &str) -> Result<BenchPlan, String> {
        let run = smrtl_cosim::sm::elastic_sm::run(&self.workload)
            .map_err(|e| format!("{}: {e}", self.source))?;
        let (cycles, instructions) = (run.stats.cycles, run.stats.issued_warp_instructions);
        let params = &self.workload.params;
        let (figures, head) = match &self.profile {
            Some(p) => (
                format!(
                    "{cycles} cycles, {instructions} warp instructions, seed {}",
                    p.seed
                ),
                json!({"block": CORE, "profile": p.name, "params": params, "seed": p.seed,
                       "waves": p.waves.max(1), "cycles": cycles}),
            ),
            None => (
                format!("{cycles} cycles, {instructions} warp instructions"),
                json!({"block": CORE, "input": label, "params": params, "cycles": cycles}),
            ),
        };
        Ok(BenchPlan {
            subject: format!("{CORE} {label}"),
            figures,
            head,
            base: "cosim:rusthdl",
            unit: "cycles",
            model: "behavioral SM model alone",
            rusthdl: "model + core RTL on rust-hdl, lock step".into(),
            verilator: "model + core RTL on Verilator, lock step".into(),
            where_: "in the SM co-simulation",
            side: "the RTL side (backend + testbench)",
        })
    }

    /// The model as `smrtl sim` runs it without `--records`.
    fn model_pass(&self) -> Result<u64, String> {
        let stats = smrtl_cosim::sm::elastic_sm::run_stats(&self.workload)
            .map_err(|e| format!("{}: {e}", self.source))?;
        Ok(stats.cycles)
    }

    fn stalls_pass(&self) -> Result<Option<u64>, String> {
        let w = &self.workload;
        let mut core = smrtl_cosim::sm::elastic_sm::core_of(w)?;
        let p = core.stall_params()?;
        core.attach_stalls(stalls::probe(
            &p,
            &stalls::StallRequest::SIM,
            Backend::Model,
        )?);
        let stats = core.run_stats(&w.warps)?;
        core.take_stalls().expect("attached").finish()?;
        Ok(Some(stats.cycles))
    }

    fn rtl_passes(&self, backend: Backend) -> Result<RtlPasses<'_>, String> {
        // Build (or find in the cache) before any timing.
        self.dut(backend)?;
        Ok(Box::new(move || {
            let p = &self.workload.params;
            let mut dut = self.dut(backend)?;
            let kernels = [self.workload.warps.clone()];
            let runs = sm_core::cosim(p, &kernels, dut.as_mut(), None)
                .map_err(|d| format!("{} does not co-simulate: {d}", self.source))?;
            Ok(runs.iter().map(|r| r.stats.cycles).sum())
        }))
    }
}

// ---------------------------------------------------------------------------------------------
// Sweeps: a profile's workload per point, the point's params over the profile's
// ---------------------------------------------------------------------------------------------

fn metrics(s: &SmStats) -> Vec<Value> {
    let o = &s.outcomes;
    vec![
        s.cycles.into(),
        s.issued_warp_instructions.into(),
        o.issue.into(),
        o.bank_conflict.into(),
        o.other.into(),
        o.sched_fail.into(),
        o.idle.into(),
        s.wb_bubbles.into(),
        s.hc_hits.into(),
        s.hc_misses.into(),
        s.ipc.into(),
    ]
}

/// Profile `name`'s workload with `overrides` on its params, generated for the point's `L`
/// and `S` (the defaults unless swept), so a row is reproduced by `smrtl sim --system
/// elastic_sm --profile W --seed S --waves N --set k=v …`.
fn sweep_workload(
    name: &str,
    overrides: &[(String, Value)],
    seed: u64,
    waves: u32,
) -> Result<Value, String> {
    let profile = profiles::profile(name)?;
    let mut w = profile.workload(seed, waves, LANES, SUBWARPS);
    for (k, v) in overrides {
        w["params"][k] = v.clone();
    }
    let p = params_from_value(&w["params"])?;
    if (p.pipe.lanes, p.pipe.subwarps) != (LANES, SUBWARPS) {
        let params = w["params"].take();
        w = profile.workload(seed, waves, p.pipe.lanes, p.pipe.subwarps);
        w["params"] = params;
    }
    Ok(w)
}

/// Profiles drawn for the checks, by (name, lanes, subwarps): their params, first warp and
/// number of warps.
#[derive(Default)]
struct Bodies(HashMap<(String, u32, u32), (Value, Value, usize)>);

impl Bodies {
    fn get(
        &mut self,
        name: &str,
        seed: u64,
        lanes: u32,
        subwarps: u32,
    ) -> Result<&(Value, Value, usize), String> {
        let key = (name.to_string(), lanes, subwarps);
        if !self.0.contains_key(&key) {
            let mut w = profiles::profile(name)?.workload(seed, 1, lanes, subwarps);
            let warps = w["warps"].as_array_mut().expect("a profile has warps");
            let n = warps.len();
            let first = warps.first().cloned().unwrap_or_default();
            self.0.insert(key.clone(), (w["params"].take(), first, n));
        }
        Ok(&self.0[&key])
    }
}

/// Checks profile `name` with `overrides`: its params, and its first warp (every warp runs
/// the same body) against them. Each profile is drawn once per lane and subwarp count.
fn check_point(
    bodies: &mut Bodies,
    name: &str,
    overrides: &[(String, Value)],
    seed: u64,
) -> Result<(), String> {
    let mut params = bodies.get(name, seed, LANES, SUBWARPS)?.0.clone();
    for (k, v) in overrides {
        params[k] = v.clone();
    }
    let p = params_from_value(&params)?;
    let (_, first, n) = bodies.get(name, seed, p.pipe.lanes, p.pipe.subwarps)?;
    let n = *n;
    let w = serde_json::json!({"params": params, "warps": [first]});
    let limit = workload_from_value(&w)?.params.warps as usize;
    if n > limit {
        return Err(format!("warps: {n} warps exceed W = {limit}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIG4: &str = include_str!("../../../examples/traces/fig4_two_subwarps.json");

    fn trace(name: &str, text: &str, sets: &[(String, String)]) -> Result<TraceInput, String> {
        TraceInput::load(name, text, sets)
    }

    #[test]
    fn trace_report_reads_as_in_the_readme() {
        let sets = [("N".to_string(), "0".to_string())];
        let mut records = vec![];
        let opts = RunOptions {
            backend: Backend::Model,
            waveform: true,
            records: Some(&mut records),
            stalls: None,
        };
        let run = trace("fig4.json", FIG4, &sets).unwrap().run(opts).unwrap();
        let wave = run.waveform.expect("asked for");
        assert_eq!((wave.top, wave.rows.rows.len()), ("elastic_pipeline", 18));
        let report = run.result.unwrap();
        assert_eq!(
            report.to_string(),
            "Elastic pipeline, 11 entries: 18 cycles, 1 stalls (1 bank_conflict, 0 other), 3 WB bubbles, last WB in cycle 17"
        );
        let v = report.json();
        assert_eq!(
            (&v["backend"], &v["entries"], &v["cycles"]),
            (&"model".into(), &11.into(), &18.into())
        );
        assert_eq!(v["params"]["N"], 0);
        let lines: Vec<&str> = std::str::from_utf8(&records).unwrap().lines().collect();
        assert_eq!(lines.len(), 18);
        assert!(lines[17].starts_with(r#"{"t":17,"#), "{}", lines[17]);
    }

    #[test]
    fn bad_traces_and_workloads_are_named_in_errors() {
        let err = |r: Result<TraceInput, String>| r.err().expect("rejected");
        assert!(err(trace("t.json", "not json", &[])).starts_with("t.json: trace file"));
        let sets = [("M".to_string(), "9".to_string())];
        assert!(err(trace("t.json", FIG4, &sets)).starts_with("t.json: parameter M = 9"));
        let sched = [("sched".to_string(), "rr".to_string())];
        assert!(err(trace("t.json", FIG4, &sched)).contains("does not apply to a trace"));
        let w = Workload::parse("w.json", r#"{"warps": [[{"op": "mul", "pc": 0}]]}"#).unwrap();
        let e = WorkloadInput::new(w, &[], None).err().expect("rejected");
        assert!(e.starts_with("w.json: warps[0][0].op"), "{e}");
        assert!(Workload::parse("w.json", "{")
            .err()
            .unwrap()
            .starts_with("w.json: malformed workload"));
        assert!(Workload::profile("fft", 1, 1)
            .err()
            .unwrap()
            .starts_with("unknown profile `fft`"));
    }

    #[test]
    fn failures_show_the_records_and_whether_the_rtl_diverged() {
        let trace = Trace::from_json_with(FIG4, &[]).unwrap();
        let record = traces::run_model(&trace).unwrap().swap_remove(3);
        let rec = serde_json::to_string(&record).unwrap();
        let diverged = traces::Divergence {
            cycle: 3,
            field: "WB".into(),
            expected: "1".into(),
            actual: "2".into(),
            model: record.clone(),
            rtl: record,
        };
        let f = pipeline_failure(Backend::Rusthdl, DriveError::Diverged(Box::new(diverged)));
        assert_eq!(
            f.to_string(),
            format!("FAIL elastic_pipeline on rusthdl: cycle 3: WB expected 1 (model) actual 2 (rtl)\nmodel record: {rec}\nrtl record:   {rec}")
        );
        assert!(f.diverged());
        let limit = DriveError::CycleLimit {
            limit: 5,
            retired: 1,
            total: 11,
        };
        let f = pipeline_failure(Backend::Model, limit);
        assert_eq!(
            f.to_string(),
            "FAIL elastic_pipeline on model: cycle limit 5 reached: 1 of 11 stream entries left WB"
        );
        assert!(!f.diverged());
    }
}
