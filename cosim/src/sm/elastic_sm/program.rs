//! Program mode (docs/elastic-pipeline.md §6: the testbench owns the programs and the ICNT
//! FIFO): [`SmCore`] runs a workload's instruction lists as kernels.

use super::gmem::GmemPath;
use super::hardware::{Core, Source};
use super::record::{Outcome, SmEvents, SmRecord, SmRun, SmStats, StatsAcc};
use super::workload::{Instr, TagCodec, Workload};
use super::SmParams;
use crate::blocks::elastic_pipeline::{Entry, Pipeline, Wb};
use crate::blocks::history_cache::{Accumulator, DistanceCounter, HistoryCache};
use crate::sm::stalls::ProbeSlot;
use smrtl_hdl::blocks::elastic_pipeline::Kind;
use smrtl_hdl::progress::Counter;
use smrtl_hdl::BlockParams;

/// Program mode: the workload's instruction lists, each warp's next and in-flight instruction,
/// and the global-load return path (D26; docs/elastic-pipeline.md §8.2).
#[derive(Clone, Debug, Default)]
pub(super) struct Program {
    pub(super) warps: Vec<Vec<Instr>>,
    pub(super) next: Vec<usize>,
    pub(super) inflight: Vec<usize>,
    pub(super) has_next: u64,
    pub(super) is_mem: u64,
    /// Warps whose instruction in flight is a memory one (SMEM, GLD, GST): the stall probe's
    /// load hazard (docs/stall-inspector.md §5.2).
    pub(super) inflight_mem: u64,
    lanes: usize,
    pub(super) icnt: GmemPath,
}

impl Program {
    fn load(&mut self, p: &SmParams, program: &[Vec<Instr>]) {
        let w = p.warps as usize;
        assert!(program.len() <= w, "more warps than W");
        self.warps.clear();
        self.warps.extend_from_slice(program);
        self.warps.resize(w, Vec::new());
        for v in [&mut self.next, &mut self.inflight] {
            v.clear();
            v.resize(w, 0);
        }
        self.lanes = p.pipe.lanes as usize;
        // At most one instruction in flight per warp: ≤ W·S returns outstanding.
        self.icnt.load(p);
        (self.has_next, self.is_mem, self.inflight_mem) = (0, 0, 0);
        for w in 0..w {
            self.update(w);
        }
    }

    /// Recomputes warp `w`'s bits of `has_next` and `is_mem`.
    fn update(&mut self, w: usize) {
        let bit = 1u64 << w;
        let next = self.warps[w].get(self.next[w]);
        self.has_next = self.has_next & !bit | if next.is_some() { bit } else { 0 };
        let mem = next.is_some_and(|i| i.op.is_mem());
        self.is_mem = self.is_mem & !bit | if mem { bit } else { 0 };
    }

    fn done(&self) -> bool {
        self.has_next == 0 && self.icnt.is_empty()
    }
}

impl Source for Program {
    fn vectors(&self) -> (u64, u64) {
        (self.has_next, self.is_mem)
    }

    fn next(&self, w: usize) -> (Kind, u32) {
        let i = &self.warps[w][self.next[w]];
        (i.op, i.pc)
    }

    fn decided(&mut self, w: usize) {
        self.inflight[w] = self.next[w];
        let bit = 1u64 << w;
        let mem = self.warps[w][self.next[w]].op.is_mem();
        self.inflight_mem = self.inflight_mem & !bit | u64::from(mem) << w;
        self.next[w] += 1;
        self.update(w);
    }

    fn entry(&self, tag: u32, _kind: Kind, warp: u32, sw: u32) -> Entry {
        let w = warp as usize;
        self.warps[w][self.inflight[w]].entry(tag, sw as usize, self.lanes)
    }

    fn icnt_return(&mut self, t: u64) -> Option<(u32, u32)> {
        self.icnt.pop(t)
    }

    fn icnt_request(&mut self, t: u64, warp: u32, sw: u32) {
        self.icnt.request(t, warp, sw);
    }
}

/// The SM core in scheduler mode, driven by a workload (program mode).
#[derive(Clone, Debug)]
pub struct SmCore {
    pub(super) core: Core,
    pub(super) program: Program,
    /// The stall probe, when attached (docs/stall-inspector.md §5): it only observes.
    pub(super) stalls: ProbeSlot,
    /// `ready'` at the start of this cycle, read in audited runs only (the audit of the blocks).
    pub(super) audit_ready_m: Option<u64>,
}

impl SmCore {
    /// A core with params `p` (validated) and no program.
    pub fn new(p: &SmParams) -> Result<SmCore, String> {
        p.validate().map_err(|e| e.to_string())?;
        let mut program = Program::default();
        program.load(p, &[]);
        Ok(SmCore {
            core: Core::new(p),
            program,
            stalls: ProbeSlot::default(),
            audit_ready_m: None,
        })
    }

    pub fn params(&self) -> &SmParams {
        &self.core.p
    }
    pub fn cache(&self) -> &HistoryCache {
        &self.core.cache
    }
    pub fn counter(&self) -> &DistanceCounter {
        &self.core.counter
    }
    pub fn accumulator(&self) -> &Accumulator {
        &self.core.acc
    }
    pub fn pipeline(&self) -> &Pipeline {
        &self.core.pipe
    }
    pub fn tags(&self) -> TagCodec {
        self.core.tags
    }

    /// `kernel_start` (D21): the pipeline must be empty; clears the cache's valid and MRU bits,
    /// the counter and the accumulator, and resets warps and the RR pointer. The cycle counter
    /// restarts at 0.
    pub fn kernel_start(&mut self, program: &[Vec<Instr>]) {
        self.core.pipe.reset();
        self.core.smem_pcs.clear();
        self.core.clear();
        self.program.load(&self.core.p, program);
    }

    /// All warps finished and everything drained.
    pub fn done(&self) -> bool {
        self.program.done() && self.core.idle()
    }

    /// One clock cycle, with its record.
    pub fn cycle(&mut self) -> SmRecord {
        let probe = self.stall_preds();
        let (rec, ev) = self.core.cycle(&mut self.program, false, true);
        self.stall_step(probe, &ev);
        SmRecord::new(rec.expect("record asked for"), &ev)
    }

    /// One clock cycle without the pipeline's record.
    pub fn step(&mut self) -> SmEvents {
        // One path with or without a probe: the events go to the caller uncopied.
        let probe = self.stall_preds();
        let ev = self.core.cycle(&mut self.program, false, false).1;
        if probe.is_some() {
            self.stall_step(probe, &ev);
        }
        ev
    }

    /// Runs `program` as one kernel: `kernel_start` at cycle 0, then cycles until every warp
    /// has finished and the pipeline (WB included) and ICNT are empty; its records kept.
    pub fn run_kernel(&mut self, program: &[Vec<Instr>]) -> Result<SmRun, String> {
        let mut records = Vec::new();
        let stats = self.run_kernel_each(program, &mut |rec| records.push(rec.clone()))?;
        Ok(SmRun { records, stats })
    }

    /// [`SmCore::run_kernel`], showing each record to `each` instead of keeping it.
    pub fn run_kernel_each(
        &mut self,
        program: &[Vec<Instr>],
        each: &mut dyn FnMut(&SmRecord),
    ) -> Result<SmStats, String> {
        self.run(program, |core| {
            let rec = core.cycle();
            each(&rec);
            (
                rec.outcome,
                rec.decision.is_some(),
                rec.hc_lookup,
                rec.pipe.wb,
            )
        })
    }

    /// [`SmCore::run_kernel`] without records: only the statistics are accumulated.
    pub fn run_stats(&mut self, program: &[Vec<Instr>]) -> Result<SmStats, String> {
        self.run_kernel_with(program, |_| {})
    }

    /// [`SmCore::run_stats`], showing `f` every cycle's events (no records are built).
    pub fn run_kernel_with(
        &mut self,
        program: &[Vec<Instr>],
        mut f: impl FnMut(&SmEvents),
    ) -> Result<SmStats, String> {
        self.run(program, |core| {
            let ev = core.step();
            f(&ev);
            (ev.outcome, ev.decision.is_some(), ev.hc_lookup, ev.wb)
        })
    }

    /// The kernel loop: `cycle` runs one cycle and returns what the statistics count. A kernel
    /// still running after [`MAX_KERNEL_CYCLES`] is an error.
    fn run(
        &mut self,
        program: &[Vec<Instr>],
        mut cycle: impl FnMut(&mut SmCore) -> (Outcome, bool, Option<bool>, Wb),
    ) -> Result<SmStats, String> {
        self.kernel_start(program);
        let mut acc = StatsAcc::default();
        let mut progress = Counter::watched("elastic_sm", 0, "cycles");
        while !self.done() {
            progress.tick();
            if self.core.pipe.t() >= MAX_KERNEL_CYCLES {
                return Err(format!(
                    "the kernel did not finish within {MAX_KERNEL_CYCLES} cycles (the documented limit; run fewer waves or instructions)"
                ));
            }
            let (outcome, decision, lookup, wb) = cycle(self);
            acc.add(outcome, decision, lookup, wb);
        }
        progress.finish();
        Ok(acc.finish())
    }
}

/// Most cycles one kernel may run on the SM model (docs/cli.md "Limits"): minutes at the model's
/// speed, so a runaway workload ends with an error.
pub const MAX_KERNEL_CYCLES: u64 = 100_000_000;

/// A fresh core for workload `w`, checked (its warps fit, its least cycles are within the
/// limit).
pub fn core_of(w: &Workload) -> Result<SmCore, String> {
    core_for(w)
}

/// Runs a workload on a fresh core (deterministic).
pub fn run(w: &Workload) -> Result<SmRun, String> {
    core_for(w)?.run_kernel(&w.warps)
}

/// [`run`], showing each record to `each` instead of keeping it.
pub fn run_each(w: &Workload, each: &mut dyn FnMut(&SmRecord)) -> Result<SmStats, String> {
    core_for(w)?.run_kernel_each(&w.warps, each)
}

/// [`run`] without records: the statistics only.
pub fn run_stats(w: &Workload) -> Result<SmStats, String> {
    core_for(w)?.run_stats(&w.warps)
}

fn core_for(w: &Workload) -> Result<SmCore, String> {
    let core = SmCore::new(&w.params)?;
    if w.warps.len() > w.params.warps as usize {
        return Err(format!(
            "warps: {} warps exceed W = {}",
            w.warps.len(),
            w.params.warps
        ));
    }
    let least = w.min_cycles();
    if least > MAX_KERNEL_CYCLES {
        return Err(format!(
            "the kernel needs at least {least} cycles (each warp waits out its global loads' ICNT latency, one subwarp issues per cycle); allowed: at most {MAX_KERNEL_CYCLES}"
        ));
    }
    Ok(core)
}
