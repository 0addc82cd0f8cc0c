//! SM-level runs: a trace of subwarp entries on the elastic pipeline (docs/elastic-pipeline.md
//! §3) or a scheduler-mode workload on the SM core (§5), on the behavioral model alone or with
//! the block's RTL in lock-step beside it, every cycle compared.

use crate::blocks::elastic_pipeline as pipeline;
use crate::blocks::sm_core::{self, SmDivergence};
use crate::studies::profiles;
use crate::studies::trace::{self as traces, DriveError, Trace, TraceError};
use crate::Design;
use serde::ser::Error as _;
use serde::{Serialize, Serializer};
use serde_json::Value;
use smrtl_cosim::blocks::elastic_pipeline::{Model, Record, Summary, SummaryAcc};
use smrtl_cosim::harness::backend::{rusthdl::RustHdl, verilator::Verilator};
use smrtl_cosim::harness::Trace as WaveRows;
use smrtl_cosim::sm::elastic_sm::{SmParams, SmRecord, SmStats};
use smrtl_cosim::BlockModel;
use smrtl_cosim::{Layout, Rtl};
use smrtl_hdl::blocks::elastic_pipeline::Params;
use smrtl_hdl::{shown, BlockParams};
use std::fmt;
use std::io::Write;

/// Cycles kept in a waveform.
const WAVE_WINDOW: usize = 100_000;

/// Where a run executes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Model,
    Rusthdl,
    Verilator,
}

impl Backend {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Model => "model",
            Backend::Rusthdl => "rusthdl",
            Backend::Verilator => "verilator",
        }
    }

    /// One line of help on what the backend runs.
    pub fn help(self) -> &'static str {
        match self {
            Backend::Model => "The behavioral model alone",
            Backend::Rusthdl => "The pipeline RTL in rust-hdl's simulator, beside the model",
            Backend::Verilator => "The pipeline's Verilog, verilated, beside the model",
        }
    }
}

/// How to run.
pub struct Options<'a> {
    pub backend: Backend,
    /// `KEY=VALUE` parameter overrides.
    pub sets: &'a [(String, String)],
    /// Keep the cycles for a waveform (the last [`WAVE_WINDOW`] within the trace's byte budget).
    pub waveform: bool,
    /// Where each cycle's record goes, as one JSON line, as the run goes (none is kept).
    pub records: Option<&'a mut dyn Write>,
}

/// Writes records as JSON lines; the first write error stops it and is kept for the report.
struct Lines<'a> {
    out: Option<&'a mut dyn Write>,
    error: Option<std::io::Error>,
}

impl<'a> Lines<'a> {
    fn new(out: Option<&'a mut dyn Write>) -> Lines<'a> {
        Lines { out, error: None }
    }

    fn put(&mut self, record: &impl Serialize) {
        if let (Some(out), None) = (self.out.as_deref_mut(), &self.error) {
            let written = serde_json::to_writer(&mut *out, record)
                .map_err(std::io::Error::from)
                .and_then(|_| out.write_all(b"\n"));
            self.error = written.err();
        }
    }
}

/// The cycles of a run, for a VCD of block `top`.
pub struct Waveform {
    pub top: &'static str,
    pub layout: Layout,
    pub rows: WaveRows,
}

/// What a run gives: its report, or how the RTL failed; its waveform if asked for; and the
/// error that stopped the records, if one did.
pub struct Run<R> {
    pub result: Result<R, Failure>,
    pub waveform: Option<Waveform>,
    pub records_error: Option<std::io::Error>,
}

/// The report of a passing run: text with `Display`, JSON with `Serialize`.
pub trait Report: fmt::Display + Serialize {}

/// How a run failed: the RTL diverged from the model, or the pipeline did not drain within
/// its cycle budget.
#[derive(Debug)]
pub struct Failure {
    block: &'static str,
    backend: Backend,
    cause: Cause,
}

#[derive(Debug)]
enum Cause {
    Pipeline(DriveError),
    Core(Box<SmDivergence>),
    Sharing(smrtl_cosim::sm::sharing_sm::LoopError),
    Mem(crate::studies::mem_sm::MemLoopError),
}

impl Failure {
    /// Whether the RTL diverged from the model (a waveform then shows where).
    pub fn diverged(&self) -> bool {
        use smrtl_cosim::sm::sharing_sm::LoopError;
        !matches!(
            self.cause,
            Cause::Pipeline(DriveError::CycleLimit { .. })
                | Cause::Sharing(LoopError::Model(_))
                | Cause::Mem(crate::studies::mem_sm::MemLoopError::Model(_))
        )
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FAIL {} on {}: ", self.block, self.backend.name())?;
        match &self.cause {
            Cause::Pipeline(DriveError::Diverged(d)) => write!(
                f,
                "{d}\nmodel record: {}\nrtl record:   {}",
                json(&d.model)?,
                json(&d.rtl)?
            ),
            Cause::Pipeline(e) => write!(f, "{e}"),
            Cause::Core(d) => write!(f, "{d}\nmodel record: {}", json(&d.model)?),
            Cause::Sharing(e) => write!(f, "{e}"),
            Cause::Mem(e) => write!(f, "{e}"),
        }
    }
}

/// A record as one line of JSON, inside a `Display`.
fn json(record: &impl Serialize) -> Result<String, fmt::Error> {
    serde_json::to_string(record).map_err(|_| fmt::Error)
}

/// `value` serialized with `fields` added (keys sorted, as in every JSON value).
fn with_fields<S: Serializer>(
    value: &impl Serialize,
    fields: impl IntoIterator<Item = (&'static str, Value)>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut v = serde_json::to_value(value).map_err(S::Error::custom)?;
    for (key, field) in fields {
        v[key] = field;
    }
    v.serialize(s)
}

/// A run's statistics as one JSON object, with its backend, its input's name and its params.
fn run_json<S: Serializer>(
    stats: &impl Serialize,
    backend: Backend,
    source: &str,
    params: &impl Serialize,
    s: S,
) -> Result<S::Ok, S::Error> {
    let params = serde_json::to_value(params).map_err(S::Error::custom)?;
    let fields = [
        ("backend", backend.name().into()),
        ("source", source.into()),
        ("params", params),
    ];
    with_fields(stats, fields, s)
}

// ---------------------------------------------------------------------------------------------
// Trace mode: the elastic pipeline
// ---------------------------------------------------------------------------------------------

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

impl Report for TraceReport {}

/// Runs trace file `text` (`name` in messages), its params overridden by `o.sets`, on the
/// pipeline model; with an RTL backend, the pipeline RTL beside it compares every record.
pub fn run_trace(name: &str, text: &str, o: Options) -> Result<Run<TraceReport>, String> {
    let trace = load_trace(text, o.sets).map_err(|e| shown(&format!("{name}: {e}")))?;
    let p = &trace.params;
    let layout = pipeline::layout(p);
    let limit = trace.cycle_budget();
    let mut rows = o.waveform.then(|| WaveRows::new(WAVE_WINDOW));
    let mut model = Model::new(p, &layout);
    let mut lines = Lines::new(o.records);
    let mut summary = SummaryAcc::default();
    let mut each = |r: &Record| {
        summary.record(r);
        lines.put(r);
    };
    let result = match o.backend {
        Backend::Model => {
            traces::run_traced(&mut model, &layout, &trace, limit, rows.as_mut(), &mut each)
        }
        rtl => {
            let mut dut = pipeline_rtl(&Design::new(p), rtl)?;
            traces::cosim_traced(
                &mut model,
                dut.as_mut(),
                &layout,
                &trace,
                limit,
                rows.as_mut(),
                &mut each,
            )
        }
    };
    let result = match result {
        Ok(_) => Ok(TraceReport {
            backend: o.backend,
            params: trace.params.clone(),
            entries: trace.stream.len(),
            summary: summary.finish(),
        }),
        Err(e) => Err(Failure {
            block: Params::BLOCK,
            backend: o.backend,
            cause: Cause::Pipeline(e),
        }),
    };
    let waveform = rows.map(|rows| Waveform {
        top: Params::BLOCK,
        layout,
        rows,
    });
    Ok(Run {
        result,
        waveform,
        records_error: lines.error,
    })
}

/// Parses a trace file and applies `sets` to its params.
fn load_trace(text: &str, sets: &[(String, String)]) -> Result<Trace, TraceError> {
    Trace::from_json_with(text, sets)
}

/// A fresh instance of the pipeline RTL on `backend`, in its reset state.
fn pipeline_rtl(design: &Design, backend: Backend) -> Result<Box<dyn Rtl>, String> {
    Ok(match backend {
        Backend::Verilator => {
            Box::new(Verilator::new(&design.module, &design.verilog()).map_err(|e| e.to_string())?)
        }
        _ => Box::new(RustHdl::new(design.module.clone())),
    })
}

// ---------------------------------------------------------------------------------------------
// Scheduler mode: the SM core
// ---------------------------------------------------------------------------------------------

/// A scheduler-mode workload before its parameter overrides, and its name in messages.
pub struct Workload {
    source: String,
    value: Value,
}

impl Workload {
    /// Workload file `text`, named `name` in messages.
    pub fn parse(name: &str, text: &str) -> Result<Workload, String> {
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
            value: p.workload(
                seed,
                profiles::check_waves(waves)?,
                profiles::LANES,
                profiles::SUBWARPS,
            ),
        })
    }

    /// The workload with its params overridden by `sets` (JSON values, else text), checked;
    /// with its name for messages.
    fn resolve(
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
            let (block, backend) = (SmParams::BLOCK, self.backend.name());
            write!(f, ", {block} RTL ({backend}) agrees on every cycle")?;
        }
        Ok(())
    }
}

impl Serialize for WorkloadReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        run_json(&self.stats, self.backend, &self.source, &self.params, s)
    }
}

impl Report for WorkloadReport {}

/// Runs workload `w`, its params overridden by `o.sets` (JSON values, else text), on the SM
/// core model; with an RTL backend, the core RTL beside it compares every output every cycle.
pub fn run_workload(w: Workload, o: Options) -> Result<Run<WorkloadReport>, String> {
    let (source, workload) = w.resolve(o.sets)?;
    let p = &workload.params;
    let kernels = [workload.warps.clone()];
    let mut rows = o.waveform.then(|| WaveRows::new(WAVE_WINDOW));
    let mut lines = Lines::new(o.records);
    let result = match o.backend {
        Backend::Model => {
            let stats = smrtl_cosim::sm::elastic_sm::run_each(&workload, &mut |r| lines.put(r))
                .map_err(|e| format!("{source}: {e}"))?;
            if let Some(rows) = rows.as_mut() {
                sm_core::model_rows(p, &workload.warps, rows)?;
            }
            Ok(vec![stats])
        }
        backend => {
            let mut dut = match backend {
                Backend::Verilator => sm_core::verilator(p).map_err(|e| e.to_string())?,
                _ => sm_core::rusthdl(p),
            };
            let layout = sm_core::layout(p);
            let mut each = |_: usize, r: &SmRecord| lines.put(r);
            sm_core::cosim_each(p, &layout, &kernels, dut.as_mut(), rows.as_mut(), &mut each)
        }
    };
    let result = match result {
        Ok(mut stats) => Ok(WorkloadReport {
            backend: o.backend,
            source,
            params: p.clone(),
            stats: stats.remove(0),
        }),
        Err(d) => Err(Failure {
            block: SmParams::BLOCK,
            backend: o.backend,
            cause: Cause::Core(d),
        }),
    };
    let waveform = rows.map(|rows| Waveform {
        top: SmParams::BLOCK,
        layout: sm_core::layout(p),
        rows,
    });
    Ok(Run {
        result,
        waveform,
        records_error: lines.error,
    })
}

/// A workload prepared for `smrtl bench --profile`: the SM core model alone, and the core RTL
/// beside it on each backend, each run returning the cycles it simulated.
pub struct WorkloadBench {
    source: String,
    workload: smrtl_cosim::sm::elastic_sm::Workload,
}

impl WorkloadBench {
    /// Workload `w` with its params overridden by `sets` (as [`run_workload`] applies them).
    pub fn new(w: Workload, sets: &[(String, String)]) -> Result<WorkloadBench, String> {
        let (source, workload) = w.resolve(sets)?;
        Ok(WorkloadBench { source, workload })
    }

    /// The block the workload runs on.
    pub fn block(&self) -> &'static str {
        SmParams::BLOCK
    }

    pub fn params(&self) -> &SmParams {
        &self.workload.params
    }

    /// The model's run: (cycles, warp instructions issued).
    pub fn model(&self) -> Result<(u64, u64), String> {
        let run = smrtl_cosim::sm::elastic_sm::run(&self.workload)
            .map_err(|e| format!("{}: {e}", self.source))?;
        Ok((run.stats.cycles, run.stats.issued_warp_instructions))
    }

    /// Builds (or finds in the cache) what `backend` needs, so a missing tool shows before
    /// any timing.
    pub fn prepare(&self, backend: Backend) -> Result<(), String> {
        match backend {
            Backend::Verilator => sm_core::verilator(self.params())
                .map(|_| ())
                .map_err(|e| e.to_string()),
            _ => Ok(()),
        }
    }

    /// The model and the core RTL on `backend` in lock step; the cycles simulated.
    pub fn cosim(&self, backend: Backend) -> Result<u64, String> {
        let p = self.params();
        let mut dut = match backend {
            Backend::Verilator => sm_core::verilator(p).map_err(|e| e.to_string())?,
            _ => sm_core::rusthdl(p),
        };
        let kernels = [self.workload.warps.clone()];
        let runs = sm_core::cosim(p, &kernels, dut.as_mut(), None)
            .map_err(|d| format!("{} does not co-simulate: {d}", self.source))?;
        Ok(runs.iter().map(|r| r.stats.cycles).sum())
    }
}

// ---------------------------------------------------------------------------------------------
// Kernel mode: thread-block residency with scratchpad sharing (docs/scratchpad-sharing.md §5)
// ---------------------------------------------------------------------------------------------

/// The report of a kernel run.
pub struct KernelReport {
    backend: Backend,
    source: String,
    params: smrtl_cosim::sm::sharing_sm::SmParams,
    stats: smrtl_cosim::sm::sharing_sm::SmStats,
}

impl KernelReport {
    pub fn stats(&self) -> &smrtl_cosim::sm::sharing_sm::SmStats {
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
            write!(f, ", sharing_core RTL ({backend}) agrees on every cycle")?;
        }
        Ok(())
    }
}

impl Serialize for KernelReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        run_json(&self.stats, self.backend, &self.source, &self.params, s)
    }
}

impl Report for KernelReport {}

/// Runs kernel file `text` (named `name` in messages), its params overridden by `o.sets`, on
/// the thread-block-residency SM model.
pub fn run_kernel(name: &str, text: &str, o: Options) -> Result<Run<KernelReport>, String> {
    use smrtl_cosim::sm::sharing_sm::{load_kernel, SharingSm};
    use smrtl_hdl::BlockParams as _;
    let (kernel, params, _) =
        load_kernel(text, o.sets).map_err(|e| shown(&format!("{name}: {e}")))?;
    params
        .validate()
        .map_err(|e| shown(&format!("{name}: {e}")))?;
    let core = params.core();
    // Refused before any work: a kernel that does not fit is a usage error.
    SharingSm::new(&params, &kernel).map_err(|e| shown(&format!("{name}: {e}")))?;
    let mut dut = match o.backend {
        Backend::Model => None,
        Backend::Rusthdl => Some(crate::blocks::sharing_core::rusthdl(&core)),
        Backend::Verilator => {
            Some(crate::blocks::sharing_core::verilator(&core).map_err(|e| e.to_string())?)
        }
    };
    let mut rows = o.waveform.then(|| WaveRows::new(WAVE_WINDOW));
    let mut lines = Lines::new(o.records);
    let recording = lines.out.is_some();
    let mut each = |r: &smrtl_cosim::sm::sharing_sm::CycleRecord| lines.put(r);
    let run = crate::blocks::sharing_core::cosim_kernel(
        &params,
        &kernel,
        dut.as_mut().map(|d| &mut **d as &mut dyn smrtl_cosim::Rtl),
        rows.as_mut(),
        recording.then_some(&mut each as &mut dyn FnMut(&_)),
    );
    let source = if kernel.name.is_empty() {
        name.to_string()
    } else {
        kernel.name.clone()
    };
    let result = match run {
        Ok(stats) => Ok(KernelReport {
            backend: o.backend,
            source,
            params,
            stats,
        }),
        // The model alone stopping (a deadlock, a protocol error) is the kernel's problem.
        Err(smrtl_cosim::sm::sharing_sm::LoopError::Model(e)) if o.backend == Backend::Model => {
            return Err(shown(&format!("{name}: {e}")))
        }
        Err(e) => Err(Failure {
            block: "sharing_core",
            backend: o.backend,
            cause: Cause::Sharing(e),
        }),
    };
    Ok(Run {
        result,
        waveform: rows.map(|rows| Waveform {
            top: "sharing_core",
            layout: crate::blocks::sharing_core::layout(&core),
            rows,
        }),
        records_error: lines.error,
    })
}

// ---------------------------------------------------------------------------------------------
// Memory-workload mode: the SM memory pipeline (docs/memory-issue-control.md §1–§2, §8)
// ---------------------------------------------------------------------------------------------

/// The report of a memory-pipeline run.
pub struct MemReport {
    backend: Backend,
    source: String,
    params: smrtl_cosim::sm::mem_sm::params::PipeParams,
    seed: u64,
    stats: smrtl_cosim::sm::mem_sm::PipeStats,
}

impl MemReport {
    pub fn stats(&self) -> &smrtl_cosim::sm::mem_sm::PipeStats {
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
            json(&s.scheme)?.trim_matches('"'),
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
            write!(f, "\n  mem_issue_ctl RTL ({backend}) agrees on every cycle")?;
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

impl Report for MemReport {}

/// Runs memory workload file `text` (named `name` in messages), its params overridden by
/// `o.sets`, on the SM memory-pipeline model, with the `mem_issue_ctl` RTL in the loop on the
/// rusthdl and Verilator backends (`crate::studies::mem_sm::cosim_mem`).
pub fn run_mem_workload(name: &str, text: &str, o: Options) -> Result<Run<MemReport>, String> {
    use crate::studies::mem_sm;
    use smrtl_cosim::sm::mem_sm::{self as mp, workload};
    let w = workload::parse(text, o.sets).map_err(|e| shown(&format!("{name}: {e}")))?;
    // Refused before any work: params the control cannot take are a usage error.
    mp::MemPipeline::new(&w).map_err(|e| shown(&format!("{name}: {e}")))?;
    let ctl = mem_sm::ctl_params(&w);
    let mut dut = match o.backend {
        Backend::Model => None,
        Backend::Rusthdl => Some(mem_sm::rusthdl(&ctl)),
        Backend::Verilator => Some(mem_sm::verilator(&ctl).map_err(|e| e.to_string())?),
    };
    let mut rows = o.waveform.then(|| WaveRows::new(WAVE_WINDOW));
    let mut lines = Lines::new(o.records);
    let recording = lines.out.is_some();
    let mut each = |r: &mp::CycleRecord| lines.put(r);
    let each = recording.then_some(&mut each as &mut dyn FnMut(&_));
    let (result, layout, top) = match dut.as_deref_mut() {
        None => (
            Ok(mp::run(&w, each, rows.as_mut()).map_err(|e| shown(&format!("{name}: {e}")))?),
            mp::wave_layout(&w.params, w.kernels.len()),
            "mem_pipeline",
        ),
        Some(dut) => {
            let run = mem_sm::cosim_mem(&w, dut, rows.as_mut(), each);
            let result = run.map_err(|e| Failure {
                block: "mem_issue_ctl",
                backend: o.backend,
                cause: Cause::Mem(e),
            });
            (result, mem_sm::layout(&ctl), "mem_issue_ctl")
        }
    };
    Ok(Run {
        result: result.map(|stats| MemReport {
            backend: o.backend,
            source: name.to_string(),
            params: w.params,
            seed: w.seed,
            stats,
        }),
        waveform: rows.map(|rows| Waveform { top, layout, rows }),
        records_error: lines.error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIG4: &str = include_str!("../../../examples/traces/fig4_two_subwarps.json");

    fn model(sets: &[(String, String)]) -> Options<'_> {
        Options {
            backend: Backend::Model,
            sets,
            waveform: true,
            records: None,
        }
    }

    #[test]
    fn trace_report_reads_as_in_the_readme() {
        let sets = [("N".to_string(), "0".to_string())];
        let mut records = vec![];
        let opts = Options {
            records: Some(&mut records),
            ..model(&sets)
        };
        let run = run_trace("fig4.json", FIG4, opts).unwrap();
        let wave = run.waveform.expect("asked for");
        assert_eq!((wave.top, wave.rows.rows.len()), ("elastic_pipeline", 18));
        let report = run.result.unwrap();
        assert_eq!(
            report.to_string(),
            "Elastic pipeline, 11 entries: 18 cycles, 1 stalls (1 bank_conflict, 0 other), 3 WB bubbles, last WB in cycle 17"
        );
        let v = serde_json::to_value(&report).unwrap();
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
        let err = |r: Result<Run<TraceReport>, String>| r.err().expect("rejected");
        assert!(err(run_trace("t.json", "not json", model(&[]))).starts_with("t.json: trace file"));
        let sets = [("M".to_string(), "9".to_string())];
        assert!(err(run_trace("t.json", FIG4, model(&sets))).starts_with("t.json: parameter M = 9"));
        let w = Workload::parse("w.json", r#"{"warps": [[{"op": "mul", "pc": 0}]]}"#).unwrap();
        let e = run_workload(w, model(&[])).err().expect("rejected");
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
        let trace = load_trace(FIG4, &[]).unwrap();
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
        let f = Failure {
            block: Params::BLOCK,
            backend: Backend::Rusthdl,
            cause: Cause::Pipeline(DriveError::Diverged(Box::new(diverged))),
        };
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
        let f = Failure {
            block: Params::BLOCK,
            backend: Backend::Model,
            cause: Cause::Pipeline(limit),
        };
        assert_eq!(
            f.to_string(),
            "FAIL elastic_pipeline on model: cycle limit 5 reached: 1 of 11 stream entries left WB"
        );
        assert!(!f.diverged());
    }
}
