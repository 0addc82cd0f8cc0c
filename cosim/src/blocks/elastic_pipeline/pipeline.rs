//! [`Pipeline`]: the entry-level model, one cycle per call in the order of
//! docs/elastic-pipeline.md §3.2 (steps 1–8), §3.3 causes.

use super::components::{ExeTo, FrontEnd, Latch, MemPath, Nonmem, PreFifo, Stall, WbContent};
use super::entry::{detector_cfg, Entry, InFlight};
use super::record::{Record, Wb};
use crate::blocks::bank_conflict_detector::Cfg;
use smrtl_hdl::blocks::elastic_pipeline::{Cause, Kind, Params, PipeMode, WbPriority, WbSrc};

/// The pipeline at one cycle boundary: every latch, plus the cycle number t of the coming cycle.
#[derive(Clone, Debug)]
pub struct Pipeline {
    p: Params,
    pub(super) cfg: Cfg,
    t: u64,
    pub(super) fe: FrontEnd,
    pub(super) pre: PreFifo,
    pub(super) mem: MemPath,
    pub(super) nonmem: Nonmem,
    wb: WbContent,
    /// The source that filled WB (selected at the end of the previous cycle).
    pub(super) wb_src: WbSrc,
}

impl Pipeline {
    /// The reset state: everything empty, t = 0 (spec §3.1).
    pub fn new(p: &Params) -> Pipeline {
        Pipeline {
            p: p.clone(),
            cfg: detector_cfg(p),
            t: 0,
            fe: FrontEnd::new(p.fe_depth as usize),
            pre: PreFifo::new(p.pre_slots()),
            mem: MemPath::new(p.mem_stages as usize),
            nonmem: Nonmem::new(p),
            wb: WbContent::Empty,
            wb_src: WbSrc::None,
        }
    }

    /// Back to the reset state (spec §3.1) in place: [`Pipeline::new`] without reallocating.
    pub fn reset(&mut self) {
        self.t = 0;
        self.fe.clear();
        self.pre.q.clear();
        self.mem.clear();
        self.nonmem.clear();
        self.wb = WbContent::Empty;
        self.wb_src = WbSrc::None;
    }

    pub fn params(&self) -> &Params {
        &self.p
    }

    /// The detector configuration of MEM0 ([`detector_cfg`]).
    pub fn cfg(&self) -> &Cfg {
        &self.cfg
    }

    /// The cycle the next [`Pipeline::cycle`] call evaluates.
    pub fn t(&self) -> u64 {
        self.t
    }

    pub fn front_end(&self) -> &FrontEnd {
        &self.fe
    }

    pub fn pre(&self) -> &PreFifo {
        &self.pre
    }

    pub fn mem(&self) -> &MemPath {
        &self.mem
    }

    pub fn nonmem(&self) -> &Nonmem {
        &self.nonmem
    }

    pub fn wb(&self) -> &WbContent {
        &self.wb
    }

    pub fn wb_src(&self) -> WbSrc {
        self.wb_src
    }

    /// No entry anywhere before WB.
    pub fn is_drained(&self) -> bool {
        self.fe.is_empty() && self.pre.is_empty() && self.mem.is_empty() && self.nonmem.is_empty()
    }

    /// One clock cycle in trace mode: `offer` is loaded into F iff ¬fe_hold; `icnt_valid` puts
    /// ICNT data into WB for the next cycle. Returns the record of this cycle (contents during
    /// t, fe_hold and cause of t) and advances to t + 1.
    pub fn cycle(&mut self, offer: Option<&Entry>, icnt_valid: bool) -> Record {
        let cfg = self.cfg;
        self.record_cycle(icnt_valid, |in_ready| {
            offer.filter(|_| in_ready).map(|e| InFlight::of(&cfg, e))
        })
    }

    /// [`Pipeline::cycle`] with the issue source asked once `in_ready` = ¬fe_hold is known
    /// (scheduler mode decides only when the front end can accept, §5.6); what it returns is
    /// loaded into F only when in_ready.
    pub fn cycle_with(
        &mut self,
        icnt_valid: bool,
        source: impl FnOnce(bool) -> Option<Entry>,
    ) -> Record {
        let cfg = self.cfg;
        self.record_cycle(icnt_valid, |in_ready| {
            source(in_ready).map(|e| InFlight::of(&cfg, &e))
        })
    }

    /// [`Pipeline::step_with`], plus the record of the cycle.
    fn record_cycle(
        &mut self,
        icnt_valid: bool,
        source: impl FnOnce(bool) -> Option<InFlight>,
    ) -> Record {
        let mut record = self.snapshot();
        let stall = self.step_with(icnt_valid, source);
        record.fe_hold = stall.fe_hold;
        record.cause = stall.cause;
        record
    }

    /// One clock cycle without a record (spec §3.2 steps 1–8): the latches during the cycle are
    /// this pipeline's state before the call. The source is asked as in
    /// [`Pipeline::cycle_with`], with the entry in its in-flight form.
    pub fn step_with(
        &mut self,
        icnt_valid: bool,
        source: impl FnOnce(bool) -> Option<InFlight>,
    ) -> Stall {
        // Start-of-cycle facts (§3.2: MUX controls and PRE-full use the start state; §3.3).
        let conflict_busy = self.mem.conflict_busy();
        let p_start = self.pre.len();

        // 1. MEM0 service.
        let mem0_done = self.mem.serve();
        // 2. WB select.
        let src = self.select(icnt_valid, mem0_done);
        let mut wb = match src {
            WbSrc::Icnt => WbContent::Icnt,
            _ => WbContent::Empty,
        };
        // 3. MEM advance.
        if let Some(e) = self.mem.advance(src == WbSrc::Mem, mem0_done) {
            wb = WbContent::Entry(e);
        }
        // 4. NONMEM.
        if let Some(e) = self.nonmem.advance(matches!(src, WbSrc::Nq | WbSrc::Nm)) {
            wb = WbContent::Entry(e);
        }
        // 5. EXE output.
        if let Some(e) = self.exe_output(src == WbSrc::Exe, p_start) {
            wb = WbContent::Entry(e);
        }
        // 6. PRE → MEM0.
        self.pre_to_mem0();
        // 7. Front end.
        let exe_kind = self.fe.exe().map(|e| e.kind);
        let fe_hold = self.fe.advance();
        if let Some(e) = source(!fe_hold).filter(|_| !fe_hold) {
            self.fe.load(e);
        }
        let cause = match exe_kind {
            Some(kind) if fe_hold => self.cause(kind, conflict_busy, p_start, src),
            _ => Cause::None,
        };
        // 8. WB.
        self.wb = wb;
        self.wb_src = src;
        self.t += 1;
        Stall { fe_hold, cause }
    }

    /// Step 2: the first available source in the mode's priority list (D9, D14).
    /// `wb_priority` only reorders the Elastic list (it names the NQ head).
    fn select(&self, icnt_valid: bool, mem0_done: bool) -> WbSrc {
        let icnt = (icnt_valid, WbSrc::Icnt);
        let mem = (self.mem.offers_wb(mem0_done), WbSrc::Mem);
        let absent = (false, WbSrc::None);
        let order = match &self.nonmem {
            Nonmem::None => [icnt, mem, absent, absent],
            Nonmem::Latches(nm) => [
                icnt,
                mem,
                (nm.last().is_some_and(Option::is_some), WbSrc::Nm),
                absent,
            ],
            Nonmem::Fifo(nq) => {
                // Debug mode nonmem_min_age = a > 0: EXE is no source, the head needs age ≥ a.
                let a = self.p.nonmem_min_age;
                let head = (nq.q.front().is_some_and(|&(_, age)| age >= a), WbSrc::Nq);
                let exe_alu = self.fe.exe().is_some_and(|e| !e.kind.is_mem());
                let exe = (a == 0 && exe_alu, WbSrc::Exe);
                match self.p.wb_priority {
                    WbPriority::MemFirst => [icnt, mem, head, exe],
                    WbPriority::NonmemFirst => [icnt, head, mem, exe],
                }
            }
        };
        order
            .into_iter()
            .find_map(|(available, src)| available.then_some(src))
            .unwrap_or(WbSrc::None)
    }

    /// Step 5: where the EXE entry `e` goes.
    fn exe_destination(&self, e: &InFlight, selected: bool, p_start: usize) -> ExeTo {
        let mem0_free = self.mem.mem0_free();
        let or_hold = |ok: bool, to: ExeTo| if ok { to } else { ExeTo::Hold };
        match (&self.nonmem, e.kind.is_mem()) {
            // Unified: every entry through MEM0.
            (Nonmem::None, _) => or_hold(mem0_free, ExeTo::Mem0),
            // Split: memory entries to MEM0, ALU entries to NM0.
            (Nonmem::Latches(_), true) => or_hold(mem0_free, ExeTo::Mem0),
            (Nonmem::Latches(nm), false) => or_hold(nm[0].is_none(), ExeTo::Nm0),
            // Elastic memory entry: bypass an empty PRE only; PRE full is judged at the start
            // of the cycle (D11).
            (Nonmem::Fifo(_), true) if p_start == 0 && mem0_free => ExeTo::Mem0,
            (Nonmem::Fifo(_), true) => or_hold(p_start < self.pre.depth, ExeTo::Pre),
            // Elastic ALU entry: WB if granted (D10), else NQ if it has room after the
            // same-cycle dequeue (D12).
            (Nonmem::Fifo(_), false) if selected => ExeTo::Wb,
            (Nonmem::Fifo(nq), false) => or_hold(nq.len() < nq.depth, ExeTo::Nq),
        }
    }

    /// Step 5: moves the EXE entry. Returns it when it goes to WB (Elastic ALU granted in step 2).
    fn exe_output(&mut self, selected: bool, p_start: usize) -> Option<InFlight> {
        let to = self.exe_destination(self.fe.exe()?, selected, p_start);
        if to == ExeTo::Hold {
            return None;
        }
        let e = self.fe.take_exe().expect("EXE valid");
        match (to, &mut self.nonmem) {
            (ExeTo::Mem0, _) => self.mem.enter(e),
            (ExeTo::Pre, _) => self.pre.push(e),
            (ExeTo::Nm0, Nonmem::Latches(nm)) => nm[0] = Some(e),
            (ExeTo::Nq, Nonmem::Fifo(nq)) => nq.q.push_back((e, 1)),
            (ExeTo::Wb, _) => return Some(e),
            _ => unreachable!("the destination matches the backend"),
        }
        None
    }

    /// Step 6: the PRE head enters a still-free MEM0 (EXE never bypasses a non-empty PRE, D11).
    fn pre_to_mem0(&mut self) {
        if self.mem.mem0_free() {
            if let Some(e) = self.pre.q.pop_front() {
                self.mem.enter(e);
            }
        }
    }

    /// Stall cause when fe_hold (spec §3.3 table), from the held EXE entry's kind, the start
    /// state and the WB grant.
    fn cause(&self, kind: Kind, conflict_busy: bool, p_start: usize, src: WbSrc) -> Cause {
        let unified = self.p.pipe_mode == PipeMode::Unified;
        if kind.is_mem() || unified {
            let pre_full = self.p.pipe_mode == PipeMode::Elastic
                && self.pre.depth > 0
                && p_start == self.pre.depth;
            if conflict_busy || pre_full {
                Cause::BankConflict
            } else {
                Cause::Other
            }
        } else if src == WbSrc::Mem {
            Cause::BankConflict
        } else {
            // ICNT grant; also the debug-only case (`nonmem_min_age`) of no eligible grant.
            Cause::Other
        }
    }

    /// The latches during the coming cycle, as a record (fe_hold and cause are filled in by
    /// [`Pipeline::cycle`]).
    fn snapshot(&self) -> Record {
        let tag = |e: &Latch| e.map(|e| e.tag);
        let elastic = self.p.pipe_mode == PipeMode::Elastic;
        Record {
            t: self.t,
            f: self.fe.f().map(|e| e.tag),
            d: self.fe.d().iter().map(tag).collect(),
            exe: self.fe.exe().map(|e| e.tag),
            pre: elastic.then(|| self.pre.entries().map(|e| e.tag).collect()),
            mem0: self.mem.mem0().map(|(e, _)| e.tag),
            rem: self.mem.mem0().map_or(0, |(_, rem)| rem),
            mem: self.mem.stages()[1..].iter().map(tag).collect(),
            nq: match &self.nonmem {
                Nonmem::Fifo(nq) => Some(nq.entries().map(|e| e.tag).collect()),
                _ => None,
            },
            nm: match &self.nonmem {
                Nonmem::Latches(nm) => Some(nm.iter().map(tag).collect()),
                _ => None,
            },
            wb: self.wb_shown(),
            wb_src: self.wb_src,
            fe_hold: false,
            cause: Cause::None,
        }
    }

    /// WB during the coming cycle, as the record shows it.
    pub(super) fn wb_shown(&self) -> Wb {
        match self.wb {
            WbContent::Empty => Wb::Empty,
            WbContent::Icnt => Wb::Icnt,
            WbContent::Entry(e) => Wb::Entry(e.tag),
        }
    }
}
