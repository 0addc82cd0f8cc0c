//! `coh_sm`, seed 003's coherent multi-SM memory system (docs/stall-inspector.md §10, §10.8;
//! spec §2.5–§2.6, §3, §6): kernel files (`smrtl_cosim::sm::coh_sm::text`) on the model
//! alone, or with one `stall_inspector` RTL per SM in the loop (NW = the SM's warp slots),
//! driven by that SM's predicates and compared every cycle and in the read-out (spec §7.2).
//! `--stalls` prints each SM's three stacks and their sum (spec §5).

use super::run::{Lines, WAVE_WINDOW};
use super::stalls::{self, SharedRows, StallRequest, StallRtl, BLOCK};
use super::{
    metric_names, Backend, BenchPlan, Failure, Input, InputKind, Loaded, Profiles, RtlPasses, Run,
    RunOptions, Shape, SweepChecker, System, Waveform,
};
use serde::Serialize;
use serde_json::{json, Value};
use smrtl_cosim::blocks::stall_inspector::{Params as GsiParams, Planes};
use smrtl_cosim::harness::Trace as WaveRows;
use smrtl_cosim::sm::coh_sm::kept::Kept;
use smrtl_cosim::sm::coh_sm::params::CohParams;
use smrtl_cosim::sm::coh_sm::prog::Op;
use smrtl_cosim::sm::coh_sm::text::{self, CohKernel};
use smrtl_cosim::sm::coh_sm::{probe, CohSystem, SmView};
use smrtl_cosim::sm::stalls::{Breakdown, StallOptions, Stalls};
use smrtl_cosim::Layout;
use smrtl_hdl::blocks::stall_inspector::ports;
use smrtl_hdl::{shown, BlockParams, ParamInfo};
use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;

/// The system.
pub struct CohSm;

/// Most cycles a run may take before it is stopped as a failure.
pub const MAX_CYCLES: u64 = 50_000_000;

/// Cycles of each SM's inspector a waveform keeps (every SM records; one is written).
const SM_WAVE_WINDOW: usize = 8192;

static INPUTS: [InputKind; 1] = [InputKind {
    name: "coh-kernel",
    summary: "coherent multi-SM kernel (seed 003): per-warp programs of every SM, header params (text, .coh; docs/stall-inspector.md §10.8)",
    shapes: &[Shape::Text {
        extensions: &["coh"],
    }],
    max_bytes: 8 << 20,
    legacy_flag: None,
    legacy_bench: None,
    block: BLOCK,
    records: "one JSON line per cycle: each SM's instructions issued and load writebacks",
    vcd: "one SM's stall_inspector ports, model and RTL (needs an RTL backend): the SM that diverged, else SM 0; the last 8192 cycles and the read-out",
    metrics: &METRICS,
}];

/// Sweep metrics: (column, place in a run's report).
const METRICS: [(&str, &str); 8] = [
    ("cycles", "/cycles"),
    ("warp_instructions", "/warp_instructions"),
    ("ipc_per_sm", "/ipc_per_sm"),
    ("l2", "/served/L2"),
    ("remote_l1", "/served/REMOTE_L1"),
    ("main_mem", "/served/MAIN_MEM"),
    ("mshr_full", "/lsu_stuck/MSHR_FULL"),
    ("pending_release", "/lsu_stuck/PENDING_RELEASE"),
];

impl System for CohSm {
    fn name(&self) -> &'static str {
        "coh_sm"
    }

    fn summary(&self) -> &'static str {
        "seed 003's coherent multi-SM memory system: L1s, store buffers, scratchpad / stash and DMA over a banked L2, GPU coherence or DeNovo (docs/stall-inspector.md §10)"
    }

    fn params(&self) -> Vec<ParamInfo> {
        CohParams::describe()
    }

    fn inputs(&self) -> &'static [InputKind] {
        &INPUTS
    }

    fn profiles(&self) -> Option<&'static Profiles> {
        None
    }

    fn load(&self, input: Input, sets: &[(String, String)]) -> Result<Box<dyn Loaded>, String> {
        match input {
            Input::File { name, text, .. } => Ok(Box::new(CohInput::load(name, text, sets)?)),
            Input::Profile { .. } => Err(no_profiles()),
        }
    }

    fn sweep_metrics(&self) -> Vec<&'static str> {
        metric_names(&METRICS)
    }

    fn sweep_checker(&self) -> SweepChecker {
        Box::new(|_, _, _| Err(no_profiles()))
    }

    fn sweep_point(
        &self,
        _: &str,
        _: &[(String, Value)],
        _: u64,
        _: u32,
    ) -> Result<Vec<Value>, String> {
        Err(no_profiles())
    }
}

fn no_profiles() -> String {
    "coh_sm has no built-in profiles: give it kernel files (a sweep's \"inputs\")".into()
}

/// What a run runs: a kernel file's kernel, or per-warp operation lists (the tests' builders).
enum Program {
    Kernel(CohKernel),
    Ops(Vec<Vec<Vec<Op>>>),
}

/// A kernel read and checked, with its params (the header's, then `--set`).
pub struct CohInput {
    name: String,
    p: CohParams,
    program: Program,
    gsi: GsiParams,
}

impl CohInput {
    /// Kernel file `text` (named `name` in messages), its params overridden by `sets`; every
    /// error here, before any run.
    pub fn load(name: &str, text: &str, sets: &[(String, String)]) -> Result<CohInput, String> {
        let bad = |e: String| shown(&format!("{name}: {e}"));
        let kernel = text::parse(text).map_err(bad)?;
        let pairs: Vec<(&str, &str)> = kernel
            .sets
            .iter()
            .chain(sets)
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let p = CohParams::resolve_pairs(None, &pairs).map_err(|e| bad(e.to_string()))?;
        CohInput::of(name, p, Program::Kernel(kernel))
    }

    /// `progs[sm][warp]` on params `p`, as [`CohSystem::new`] takes them (the tests' builders).
    pub fn of_ops(name: &str, p: CohParams, progs: Vec<Vec<Vec<Op>>>) -> Result<CohInput, String> {
        CohInput::of(name, p, Program::Ops(progs))
    }

    fn of(name: &str, p: CohParams, program: Program) -> Result<CohInput, String> {
        let bad = |e: String| shown(&format!("{name}: {e}"));
        let nw = p.warps.to_string();
        let gsi = GsiParams::resolve_pairs(None, &[("NW", &nw), ("IW", "1")])
            .map_err(|e| bad(format!("the stall inspector cannot take it: {e}")))?;
        let input = CohInput {
            name: name.to_string(),
            p,
            program,
            gsi,
        };
        input.system().map_err(bad)?;
        Ok(input)
    }

    /// A fresh system at cycle 0.
    fn system(&self) -> Result<CohSystem, String> {
        match &self.program {
            Program::Kernel(k) => CohSystem::from_kernel(&self.p, k),
            Program::Ops(progs) => CohSystem::new(&self.p, progs.clone()),
        }
    }

    /// The params the run uses.
    pub fn params(&self) -> &CohParams {
        &self.p
    }

    /// The stall inspector's params (NW = the SM's warp slots, IW = 1).
    pub fn inspector(&self) -> &GsiParams {
        &self.gsi
    }

    /// One probe per SM: the model's inspector, with the RTL on `backend` beside it (named by
    /// its SM, recording into `rows[s]` when given).
    fn probes(
        &self,
        req: &StallRequest,
        backend: Backend,
        rows: &[SharedRows],
    ) -> Result<Vec<Feed>, String> {
        (0..self.p.sms as usize)
            .map(|s| {
                let rtl = match backend {
                    Backend::Model => None,
                    b => {
                        let r = StallRtl::new(&self.gsi, b)?.labelled(format!("SM {s}"));
                        Some(match rows.get(s) {
                            Some(rows) => r.recording(rows.clone()),
                            None => r,
                        })
                    }
                };
                Ok(Feed::new(stalls::probe_of(&self.gsi, req, rtl)))
            })
            .collect()
    }

    /// A model run with SM `s`'s inspector RTL `rtl(s)` (if any) beside its probe: the cycles
    /// and each SM's breakdown or first difference (the tests plant faults through it).
    pub fn checked_with(
        &self,
        mut rtl: impl FnMut(usize) -> Option<StallRtl>,
    ) -> Result<(u64, Vec<Result<Breakdown, String>>), String> {
        let req = StallRequest::SIM;
        let mut probes: Vec<Feed> = (0..self.p.sms as usize)
            .map(|s| {
                let rtl = rtl(s).map(|r| r.labelled(format!("SM {s}")));
                Feed::new(stalls::probe_of(&self.gsi, &req, rtl))
            })
            .collect();
        let sys = self.go(&mut probes, None)?;
        Ok((
            sys.cycle(),
            probes.into_iter().map(|f| f.stalls.finish()).collect(),
        ))
    }

    /// Runs the kernel to its end, each SM's cycle into its probe (if any) and `each`.
    fn go(
        &self,
        probes: &mut [Feed],
        mut each: Option<&mut dyn FnMut(&CohSystem)>,
    ) -> Result<CohSystem, String> {
        let mut sys = self.system()?;
        if !probes.is_empty() {
            sys.keep_planes();
        }
        while sys.step() {
            for (s, probe) in probes.iter_mut().enumerate() {
                probe.step(&sys, s)?;
            }
            if let Some(f) = each.as_deref_mut() {
                f(&sys);
            }
            if sys.cycle() >= MAX_CYCLES && !sys.finished() {
                return Err(format!("not finished after {MAX_CYCLES} cycles"));
            }
        }
        Ok(sys)
    }
}

/// One SM's probe, fed from the planes the SM keeps at its events (docs/stall-inspector.md
/// §7.5, §10.8): a few word operations a cycle, whatever the number of warps.
pub struct Feed {
    /// The probe (with the SM's inspector RTL beside it, if any).
    pub stalls: Stalls,
}

impl Feed {
    /// Feeds `stalls`, which keeps its recent stall states (`Stalls::keep_states`).
    pub fn new(mut stalls: Stalls) -> Feed {
        stalls.keep_states();
        Feed { stalls }
    }

    /// SM `sm`'s last cycle into its probe: an issue cycle without writeback, or with one
    /// final one, is counted in a batch, and a stall cycle whose key (the planes' content and
    /// the LSU reason) is the last stall cycle's or a kept state's is counted again, its one
    /// final writeback flushed after it, without planes (docs/stall-inspector.md §7.5;
    /// non-final writebacks change nothing and are left out without a check); any other
    /// takes the kept planes, the LSU blocks (one reason a cycle), the writebacks and the
    /// issue. With an audit, the kept planes are checked against the views every cycle.
    pub fn step(&mut self, sys: &CohSystem, sm: usize) -> Result<(), String> {
        let s = &mut self.stalls;
        let v = sys.view(sm);
        let k = sys.kept(sm).ok_or("the SM keeps no stall planes")?;
        if s.audits() {
            audit(s, &k.planes(), k.reason(), v, sys.cycle() - 1)?;
        }
        let issued = u64::from(v.issued);
        // The final writebacks (the last one), and whether a non-final one is read.
        let (mut finals, mut last, mut other) = (0, None, false);
        for wb in &v.wbs {
            if wb.is_final {
                finals += 1;
                last = Some(wb);
            } else {
                other = true;
            }
        }
        let other = other && s.reads_nonfinal();
        // A warp issued only if it was ready: some warp was.
        let done = match (issued != 0, finals, last) {
            _ if other => false,
            (true, 0, _) => s.step_issue_unseen(issued, true),
            (true, 1, Some(wb)) => s.step_issue_final_unseen(issued, true, wb, k.haz_load(wb.warp)),
            (false, 0, _) => {
                let key = k.key();
                s.repeat_keyed(key) || s.repeat_cached(key)
            }
            (false, 1, Some(wb)) => s.repeat_keyed_final(k.key(), wb, k.haz_load(wb.warp)),
            _ => false,
        };
        if !done {
            Self::full(s, v, k, issued);
        }
        Ok(())
    }

    /// A cycle the shortcuts do not take: the kept planes, the LSU blocks, the writebacks,
    /// the step (out of line: the common cycle's code stays small).
    #[inline(never)]
    fn full(s: &mut Stalls, v: &SmView, k: &Kept, issued: u64) {
        let kept = k.planes();
        *s.planes_mut() = Planes {
            ms_block: 0,
            ..kept
        };
        if kept.ms_block != 0 {
            s.block(kept.ms_block, k.reason());
        }
        for wb in &v.wbs {
            s.writeback(*wb);
        }
        s.step(issued);
        if issued == 0 {
            s.keep_key(k.key());
        }
    }
}

/// The kept planes `kept` against the planes rebuilt from view `v` (a difference fails the
/// probe), and the blocks' `reason` against the views' (an error for cycle `t`).
fn audit(s: &mut Stalls, kept: &Planes, reason: u8, v: &SmView, t: u64) -> Result<(), String> {
    let (derived, blocked) = probe::planes_of(v);
    s.audit(kept, &derived);
    match blocked.iter().position(|&m| m != 0) {
        Some(r) if r as u8 != reason || blocked[r] != derived.ms_block => Err(format!(
            "stall probe audit, cycle {t}: LSU reason {reason} as kept at the model's events, {r} in the views"
        )),
        _ => Ok(()),
    }
}

/// Names of the §2.5 sources and §2.6 reasons, by code, for the report.
fn named(v: &[u64; 8], names: &[(u64, &str)]) -> Value {
    names
        .iter()
        .map(|&(k, n)| (n.to_string(), json!(v[k as usize])))
        .collect()
}

/// One SM's figures.
#[derive(Clone, Debug, Serialize)]
struct SmFigures {
    warp_instructions: u64,
    done_at: u64,
    served: Value,
    lsu_stuck: Value,
}

/// The report of a run.
pub struct CohReport {
    backend: Backend,
    source: String,
    params: CohParams,
    cycles: u64,
    per_sm: Vec<SmFigures>,
    served: [u64; 8],
    lsu_stuck: [u64; 8],
}

impl CohReport {
    fn of(sys: &CohSystem, backend: Backend, source: &str) -> CohReport {
        let (mut served, mut lsu_stuck) = ([0u64; 8], [0u64; 8]);
        let per_sm = (0..sys.sms())
            .map(|s| {
                let st = sys.stats(s);
                for k in 0..8 {
                    served[k] += st.served[k];
                    lsu_stuck[k] += st.lsu_stuck[k];
                }
                SmFigures {
                    warp_instructions: st.issued,
                    done_at: st.done_at,
                    served: named(&st.served, &stalls::SOURCES),
                    lsu_stuck: named(&st.lsu_stuck, &stalls::REASONS),
                }
            })
            .collect();
        CohReport {
            backend,
            source: source.to_string(),
            params: sys.params().clone(),
            cycles: sys.cycle(),
            per_sm,
            served,
            lsu_stuck,
        }
    }

    fn instructions(&self) -> u64 {
        self.per_sm.iter().map(|s| s.warp_instructions).sum()
    }

    fn ipc_per_sm(&self) -> f64 {
        self.instructions() as f64 / (self.cycles.max(1) * self.per_sm.len() as u64) as f64
    }
}

impl fmt::Display for CohReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.params;
        write!(
            f,
            "{}: {} cycles, {} SMs x {} warp slots, protocol {}, {} warp instructions, IPC per SM {:.3}",
            self.source,
            self.cycles,
            self.per_sm.len(),
            p.warps,
            serde_json::to_value(p.protocol).map_err(|_| fmt::Error)?.as_str().unwrap_or("?"),
            self.instructions(),
            self.ipc_per_sm(),
        )?;
        let parts: Vec<String> = stalls::SOURCES[..6]
            .iter()
            .map(|&(k, n)| format!("{n} {}", self.served[k as usize]))
            .collect();
        write!(f, "\n  load parts served: {}", parts.join(", "))?;
        let parts: Vec<String> = stalls::REASONS
            .iter()
            .map(|&(k, n)| format!("{n} {}", self.lsu_stuck[k as usize]))
            .collect();
        write!(
            f,
            "\n  LSU register stuck (SM-cycles): {}",
            parts.join(", ")
        )?;
        if self.backend != Backend::Model {
            let b = self.backend.name();
            let n = self.per_sm.len();
            write!(f, "\n  {BLOCK} RTL ({b}) of each of the {n} SMs agrees on every cycle and in the read-out")?;
        }
        Ok(())
    }
}

impl Serialize for CohReport {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        json!({
            "backend": self.backend.name(),
            "source": self.source,
            "params": self.params,
            "cycles": self.cycles,
            "sms": self.per_sm.len(),
            "warp_instructions": self.instructions(),
            "ipc_per_sm": self.ipc_per_sm(),
            "served": named(&self.served, &stalls::SOURCES),
            "lsu_stuck": named(&self.lsu_stuck, &stalls::REASONS),
            "per_sm": self.per_sm,
        })
        .serialize(s)
    }
}

/// A cycle's record (`--records`).
#[derive(Serialize)]
struct CycleRecord {
    cycle: u64,
    issued: Vec<u8>,
    writebacks: Vec<usize>,
}

impl Loaded for CohInput {
    fn run(&self, o: RunOptions) -> Result<Run, String> {
        if o.waveform && o.backend == Backend::Model {
            return Err(shown(&format!(
                "{}: --vcd shows each SM's {BLOCK} RTL: it needs --backend rusthdl or verilator",
                self.name
            )));
        }
        // Per PC is not kept: the views carry no PC.
        let req = o.stalls.map(|r| StallRequest {
            opts: StallOptions {
                per_pc: false,
                ..r.opts
            },
        });
        let sms = self.p.sms as usize;
        let rows: Vec<SharedRows> = match o.waveform {
            true => (0..sms)
                .map(|_| Rc::new(RefCell::new(WaveRows::new(SM_WAVE_WINDOW.min(WAVE_WINDOW)))))
                .collect(),
            false => vec![],
        };
        let mut probes = match (req, o.backend) {
            (None, Backend::Model) => vec![],
            (r, b) => self.probes(&r.unwrap_or(StallRequest::SIM), b, &rows)?,
        };
        let mut lines = Lines::new(o.records);
        let recording = lines.recording();
        let ran = {
            let mut record = |sys: &CohSystem| {
                lines.put(&CycleRecord {
                    cycle: sys.cycle() - 1,
                    issued: (0..sys.sms()).map(|s| sys.view(s).issued).collect(),
                    writebacks: (0..sys.sms()).map(|s| sys.view(s).wbs.len()).collect(),
                })
            };
            let each = recording.then_some(&mut record as &mut dyn FnMut(&CohSystem));
            self.go(&mut probes, each)
        };
        let failure = |cause: String, diverged| Failure {
            block: BLOCK,
            backend: o.backend,
            cause,
            diverged,
        };
        let mut per_sm: Vec<Breakdown> = vec![];
        let mut failed_sm = None;
        let result = match ran {
            Err(e) => Err(failure(e, false)),
            Ok(sys) => {
                let mut result = Ok(CohReport::of(&sys, o.backend, &self.name));
                for (s, probe) in probes.into_iter().enumerate() {
                    match probe.stalls.finish() {
                        Ok(b) => per_sm.push(b),
                        Err(e) if result.is_ok() => {
                            failed_sm = Some(s);
                            result = Err(failure(e, true));
                        }
                        Err(_) => {}
                    }
                }
                result
            }
        };
        let waveform = rows.get(failed_sm.unwrap_or(0)).map(|r| Waveform {
            top: BLOCK,
            layout: Layout::new(&ports(&self.gsi)),
            rows: r.replace(WaveRows::new(1)),
        });
        let shown_stalls = o.stalls.is_some() && result.is_ok();
        let total = stalls::sum(&per_sm).filter(|_| shown_stalls);
        Ok(Run {
            result: result.map(|r| Box::new(r) as Box<dyn super::Report>),
            waveform,
            records_error: lines.error,
            stalls: total,
            stalls_per_sm: if shown_stalls { per_sm } else { vec![] },
        })
    }

    fn bench(&self, label: &str) -> Result<BenchPlan, String> {
        let sys = self.go(&mut [], None)?;
        let (t, sms) = (sys.cycle(), sys.sms() as u64);
        let r = CohReport::of(&sys, Backend::Model, &self.name);
        Ok(BenchPlan {
            subject: format!("{BLOCK} x {sms} SMs {label}"),
            figures: format!(
                "{t} cycles x {sms} SMs = {} SM-cycles, {} warp instructions",
                t * sms,
                r.instructions()
            ),
            head: json!({
                "block": BLOCK,
                "coh_kernel": self.name,
                "params": self.p,
                "cycles": t,
                "sms": sms,
                "sm_cycles": t * sms,
            }),
            base: "model",
            unit: "sm_cycles",
            model: "coherent multi-SM model alone",
            rusthdl: format!("model + one {BLOCK} RTL per SM on rust-hdl, lock step"),
            verilator: format!("model + one {BLOCK} RTL per SM on Verilator, lock step"),
            where_: "with every SM's inspector in the loop",
            side: "the inspectors (probe, RTL, compare)",
        })
    }

    fn model_pass(&self) -> Result<u64, String> {
        let sys = self.go(&mut [], None)?;
        Ok(sys.cycle() * sys.sms() as u64)
    }

    fn stalls_pass(&self) -> Result<Option<u64>, String> {
        let mut probes = self.probes(&StallRequest::SIM, Backend::Model, &[])?;
        let sys = self.go(&mut probes, None)?;
        for p in probes {
            p.stalls.finish()?;
        }
        Ok(Some(sys.cycle() * sys.sms() as u64))
    }

    fn rtl_passes(&self, backend: Backend) -> Result<RtlPasses<'_>, String> {
        if backend == Backend::Model {
            return Err("the model has no RTL in its loop".into());
        }
        // Built (or found in the cache) now, so a missing tool shows before any timing.
        StallRtl::new(&self.gsi, backend)?;
        Ok(Box::new(move || {
            let mut probes = self.probes(&StallRequest::SIM, backend, &[])?;
            let sys = self.go(&mut probes, None)?;
            for p in probes {
                p.stalls
                    .finish()
                    .map_err(|e| format!("{}: the RTL differs from the model: {e}", self.name))?;
            }
            Ok(sys.cycle() * sys.sms() as u64)
        }))
    }
}
