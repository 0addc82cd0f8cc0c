//! Behavioral model of the SM pipeline of seed 000 (docs/elastic-pipeline.md §2–4), written from
//! the spec text, independently of the RTL: F → D1..Dk → EXE, then the `Unified`, `Split` or
//! `Elastic` backend, evaluated once per cycle in the order of §3.2.
//!
//! Layers, inside out:
//! - the components ([`FrontEnd`], [`PreFifo`], [`MemPath`], [`Nonmem`]), each owning its latches;
//! - [`Pipeline`]: the entry-level model, one [`Pipeline::cycle`] per clock, returning the
//!   per-cycle [`Record`] of §3.5 (the SM model builds on it), or one [`Pipeline::step_with`]
//!   when only fe_hold and the cause are wanted;
//! - [`Model`]: the pipeline on the trace-mode ports of `smrtl_hdl::blocks::elastic_pipeline::ports`, a
//!   [`Simulator`] like every RTL backend;
//! - [`record_from_outputs`] / [`encode_record`]: the record ⇄ output-buffer mapping, so model
//!   and RTL records come from the same decoder, and [`Summary`] of a run.
//!
//! Nothing allocates per cycle: latches hold small `Copy` [`InFlight`] entries (no lane data),
//! every latch array and FIFO is allocated once with the pipeline, the ports are resolved once
//! with the [`Model`], and records are built only by the record-returning calls.

use crate::blocks::bank_conflict_detector::{degree_of, lane_field, Cfg, Word, MAX_LANES};
use crate::harness::layout::{Layout, Slot};
use crate::harness::sim::Simulator;
use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use smrtl_hdl::blocks::elastic_pipeline::{
    port, stage_ports, Cause, Kind, Params, PipeMode, WbPriority, WbSrc,
};
use std::collections::VecDeque;
use std::fmt;
use std::ops::{Deref, DerefMut};

/// One value per lane (L ≤ [`MAX_LANES`], spec §1) in fixed storage: an entry's lane data
/// without a heap allocation. Reads and writes as a slice of length L; builds with `collect`.
#[derive(Clone, Copy)]
pub struct Lanes<T> {
    len: usize,
    values: [T; MAX_LANES],
}

impl<T: Copy + Default> Lanes<T> {
    /// `lanes` copies of `value`.
    pub fn splat(value: T, lanes: usize) -> Lanes<T> {
        std::iter::repeat_n(value, lanes).collect()
    }
}

impl<T> Deref for Lanes<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.values[..self.len]
    }
}

impl<T> DerefMut for Lanes<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.values[..self.len]
    }
}

impl<T: Copy + Default> FromIterator<T> for Lanes<T> {
    /// Panics beyond [`MAX_LANES`] values.
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Lanes<T> {
        let mut lanes = Lanes {
            len: 0,
            values: [T::default(); MAX_LANES],
        };
        for value in iter {
            assert!(lanes.len < MAX_LANES, "more than {MAX_LANES} lanes");
            lanes.values[lanes.len] = value;
            lanes.len += 1;
        }
        lanes
    }
}

impl<T: PartialEq> PartialEq for Lanes<T> {
    fn eq(&self, other: &Lanes<T>) -> bool {
        **self == **other
    }
}

impl<T: Eq> Eq for Lanes<T> {}

impl<T: PartialEq, const N: usize> PartialEq<[T; N]> for Lanes<T> {
    fn eq(&self, other: &[T; N]) -> bool {
        **self == other[..]
    }
}

impl<T: fmt::Debug> fmt::Debug for Lanes<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Serialize> Serialize for Lanes<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de, T: Deserialize<'de> + Copy + Default> Deserialize<'de> for Lanes<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Lanes<T>, D::Error> {
        let values = Vec::<T>::deserialize(d)?;
        if values.len() > MAX_LANES {
            return Err(de::Error::invalid_length(
                values.len(),
                &"at most 32 lane values",
            ));
        }
        Ok(values.into_iter().collect())
    }
}

/// One pipeline entry as issued: one subwarp instruction (spec §2 "Entry"). Trace mode carries
/// no warp, subwarp or PC yet; the tag is the stream index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub tag: u32,
    pub kind: Kind,
    /// `deg_override` (micro tests): the degree d ≥ 1 instead of the detector's.
    pub deg_override: Option<u32>,
    /// Word address per lane (L entries, AW bits each).
    pub addrs: Lanes<u32>,
    /// Active lanes (L entries).
    pub act: Lanes<bool>,
}

impl Entry {
    /// An entry of `kind` with all `lanes` active at word address 0 and no override.
    pub fn new(tag: u32, kind: Kind, lanes: usize) -> Entry {
        Entry {
            tag,
            kind,
            deg_override: None,
            addrs: Lanes::splat(0, lanes),
            act: Lanes::splat(true, lanes),
        }
    }

    /// `S(d)` of the acceptance tables (§9): SMEM with `deg_override` = d.
    pub fn smem_deg(tag: u32, d: u32, lanes: usize) -> Entry {
        Entry {
            deg_override: Some(d),
            ..Entry::new(tag, Kind::Smem, lanes)
        }
    }
}

/// An entry inside the pipeline: what the latches and FIFOs need of an [`Entry`] (spec §2):
/// its tag, its kind and its MEM0 service cycles c (D7). c depends on the entry alone, so it
/// is computed once, when the entry is loaded into F.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InFlight {
    pub tag: u32,
    pub kind: Kind,
    /// Service cycles c in MEM0 (≥ 1).
    pub cycles: u32,
}

impl InFlight {
    pub fn of(cfg: &Cfg, e: &Entry) -> InFlight {
        InFlight {
            tag: e.tag,
            kind: e.kind,
            cycles: service_cycles(cfg, e),
        }
    }
}

/// The detector configuration MEM0 instantiates (spec §2 "Conflict detector"): W = N = M = 4,
/// so a lane's byte address is 4 × its word address.
pub fn detector_cfg(p: &Params) -> Cfg {
    Cfg {
        lanes: p.lanes,
        banks: p.banks,
        layer_bytes: 4,
        mode_bytes: 4,
        elem_bytes: 4,
        ports: p.ports,
        mode: p.broadcast,
    }
}

/// Conflict degree d of an SMEM entry: the override, else the detector's degree over the active
/// lanes (an entry with no active lane has d = 1, D6).
pub fn degree(cfg: &Cfg, e: &Entry) -> u32 {
    e.deg_override.unwrap_or_else(|| {
        let bytes: Lanes<u64> = e.addrs.iter().map(|&w| 4 * w as u64).collect();
        degree_of(cfg, &e.act, &bytes).degree
    })
}

/// Service cycles c in MEM0: ⌈d/P⌉ for SMEM, 1 for every other kind (spec §2, D7).
pub fn service_cycles(cfg: &Cfg, e: &Entry) -> u32 {
    match e.kind {
        Kind::Smem => degree(cfg, e).div_ceil(cfg.ports),
        _ => 1,
    }
}

// ---------------------------------------------------------------------------------------------
// Components
// ---------------------------------------------------------------------------------------------

/// A latch: an entry or empty.
pub type Latch = Option<InFlight>;

/// F, D1..Dk and EXE: one chain of bubble-collapsing latches (spec §3.2 step 7, D2).
#[derive(Clone, Debug)]
pub struct FrontEnd {
    /// `[F, D1, .., Dk, EXE]`.
    latches: Vec<Latch>,
}

impl FrontEnd {
    fn new(fe_depth: usize) -> FrontEnd {
        FrontEnd {
            latches: vec![None; fe_depth + 2],
        }
    }

    pub fn f(&self) -> Option<&InFlight> {
        self.latches[0].as_ref()
    }

    /// D1..Dk.
    pub fn d(&self) -> &[Latch] {
        &self.latches[1..self.latches.len() - 1]
    }

    pub fn exe(&self) -> Option<&InFlight> {
        self.latches.last().and_then(Option::as_ref)
    }

    fn take_exe(&mut self) -> Option<InFlight> {
        self.latches.last_mut().and_then(Option::take)
    }

    /// Step 7: EXE takes Dk if EXE is free, each earlier latch advances if its successor is
    /// free. Returns `fe_hold` = F valid ∧ F did not move.
    fn advance(&mut self) -> bool {
        for k in (1..self.latches.len()).rev() {
            if self.latches[k].is_none() {
                self.latches[k] = self.latches[k - 1].take();
            }
        }
        self.latches[0].is_some()
    }

    /// Loads F (only when it is free: ¬fe_hold).
    fn load(&mut self, e: InFlight) {
        debug_assert!(self.latches[0].is_none());
        self.latches[0] = Some(e);
    }

    fn is_empty(&self) -> bool {
        self.latches.iter().all(Option::is_none)
    }

    fn clear(&mut self) {
        self.latches.fill(None);
    }
}

/// The PREMEM FIFO of N entries before MEM0 (spec §4, D11): strict FIFO, no pass-through.
/// Its storage is allocated once, for N entries.
#[derive(Clone, Debug)]
pub struct PreFifo {
    q: VecDeque<InFlight>,
    depth: usize,
}

impl PreFifo {
    fn new(depth: usize) -> PreFifo {
        PreFifo {
            q: VecDeque::with_capacity(depth),
            depth,
        }
    }

    /// Entries, oldest first.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = &InFlight> {
        self.q.iter()
    }

    pub fn len(&self) -> usize {
        self.q.len()
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    fn push(&mut self, e: InFlight) {
        debug_assert!(self.q.len() < self.depth, "PRE overflow");
        self.q.push_back(e);
    }
}

/// MEM0..MEM(M−1) (spec §3.2 steps 1, 3). MEM0 holds an entry for its `rem` service cycles.
#[derive(Clone, Debug)]
pub struct MemPath {
    stages: Vec<Latch>,
    /// Service cycles left for the MEM0 entry, the current one included (0 when empty).
    rem: u32,
}

impl MemPath {
    fn new(m: usize) -> MemPath {
        MemPath {
            stages: vec![None; m],
            rem: 0,
        }
    }

    /// MEM0 with its `rem`.
    pub fn mem0(&self) -> Option<(&InFlight, u32)> {
        self.stages[0].as_ref().map(|e| (e, self.rem))
    }

    /// MEM0..MEM(M−1).
    pub fn stages(&self) -> &[Latch] {
        &self.stages
    }

    fn last(&self) -> &Latch {
        self.stages.last().expect("M ≥ 1")
    }

    /// MEM0 is held for another cycle (the `bank_conflict` test of §3.3).
    fn conflict_busy(&self) -> bool {
        self.stages[0].is_some() && self.rem > 1
    }

    /// Step 1: returns `mem0_done`; a held entry counts down.
    fn serve(&mut self) -> bool {
        if self.stages[0].is_none() {
            return false;
        }
        if self.rem > 1 {
            self.rem -= 1;
            false
        } else {
            true
        }
    }

    /// MEM_last is a WB source (step 2): valid, and done if it is MEM0 (M = 1).
    fn offers_wb(&self, mem0_done: bool) -> bool {
        self.last().is_some() && (self.stages.len() > 1 || mem0_done)
    }

    /// Step 3: MEM_last leaves iff `selected` (returned), then the ripple from the end; MEM0
    /// moves iff done and MEM1 is free.
    fn advance(&mut self, selected: bool, mem0_done: bool) -> Option<InFlight> {
        let m = self.stages.len();
        let left = if selected {
            self.stages[m - 1].take()
        } else {
            None
        };
        for k in (1..m.saturating_sub(1)).rev() {
            if self.stages[k + 1].is_none() {
                self.stages[k + 1] = self.stages[k].take();
            }
        }
        if m > 1 && mem0_done && self.stages[1].is_none() {
            self.stages[1] = self.stages[0].take();
        }
        if self.stages[0].is_none() {
            self.rem = 0;
        }
        left
    }

    fn mem0_free(&self) -> bool {
        self.stages[0].is_none()
    }

    /// MEM0 takes `e` for its `c` service cycles (steps 5, 6).
    fn enter(&mut self, e: InFlight) {
        debug_assert!(self.mem0_free());
        self.stages[0] = Some(e);
        self.rem = e.cycles;
    }

    fn is_empty(&self) -> bool {
        self.stages.iter().all(Option::is_none)
    }

    fn clear(&mut self) {
        self.stages.fill(None);
        self.rem = 0;
    }
}

/// The NONMEM FIFO of Q entries (Elastic, spec §4, D12); each entry with its age (1 in its first
/// NQ cycle, for `nonmem_min_age`). Its storage is allocated once, for Q entries.
#[derive(Clone, Debug)]
pub struct NonmemFifo {
    q: VecDeque<(InFlight, u32)>,
    depth: usize,
}

impl NonmemFifo {
    /// Entries, oldest first.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = &InFlight> {
        self.q.iter().map(|(e, _)| e)
    }

    pub fn len(&self) -> usize {
        self.q.len()
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
}

/// The ALU side of the backend: nothing (Unified), NM0..NM(M−1) (Split) or the NONMEM FIFO
/// (Elastic).
#[derive(Clone, Debug)]
pub enum Nonmem {
    None,
    Latches(Vec<Latch>),
    Fifo(NonmemFifo),
}

impl Nonmem {
    fn new(p: &Params) -> Nonmem {
        match p.pipe_mode {
            PipeMode::Unified => Nonmem::None,
            PipeMode::Split => Nonmem::Latches(vec![None; p.nm_slots()]),
            PipeMode::Elastic => Nonmem::Fifo(NonmemFifo {
                q: VecDeque::with_capacity(p.nq_slots()),
                depth: p.nq_slots(),
            }),
        }
    }

    /// Step 4: the selected NQ head dequeues, or the NM latches shift as the MEM path does
    /// (NM_last leaves iff selected). Returns the entry that left for WB.
    fn advance(&mut self, selected: bool) -> Option<InFlight> {
        match self {
            Nonmem::None => None,
            Nonmem::Latches(nm) => {
                let m = nm.len();
                let left = if selected { nm[m - 1].take() } else { None };
                for k in (0..m - 1).rev() {
                    if nm[k + 1].is_none() {
                        nm[k + 1] = nm[k].take();
                    }
                }
                left
            }
            Nonmem::Fifo(nq) => {
                let left = if selected { nq.q.pop_front() } else { None };
                for (_, age) in nq.q.iter_mut() {
                    *age += 1;
                }
                left.map(|(e, _)| e)
            }
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Nonmem::None => true,
            Nonmem::Latches(nm) => nm.iter().all(Option::is_none),
            Nonmem::Fifo(nq) => nq.is_empty(),
        }
    }

    fn clear(&mut self) {
        match self {
            Nonmem::None => {}
            Nonmem::Latches(nm) => nm.fill(None),
            Nonmem::Fifo(nq) => nq.q.clear(),
        }
    }
}

/// Where step 5 sends the EXE entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ExeTo {
    Mem0,
    Pre,
    Nm0,
    Nq,
    Wb,
    Hold,
}

/// What WB holds during a cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WbContent {
    Empty,
    Icnt,
    Entry(InFlight),
}

/// The end-of-cycle outcome of one cycle (spec §3.2 step 7, §3.3): fe_hold (the front end did
/// not accept, in_ready = ¬fe_hold) and its cause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stall {
    pub fe_hold: bool,
    pub cause: Cause,
}

// ---------------------------------------------------------------------------------------------
// The pipeline
// ---------------------------------------------------------------------------------------------

/// The pipeline at one cycle boundary: every latch, plus the cycle number t of the coming cycle.
#[derive(Clone, Debug)]
pub struct Pipeline {
    p: Params,
    cfg: Cfg,
    t: u64,
    fe: FrontEnd,
    pre: PreFifo,
    mem: MemPath,
    nonmem: Nonmem,
    wb: WbContent,
    /// The source that filled WB (selected at the end of the previous cycle).
    wb_src: WbSrc,
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
    fn wb_shown(&self) -> Wb {
        match self.wb {
            WbContent::Empty => Wb::Empty,
            WbContent::Icnt => Wb::Icnt,
            WbContent::Entry(e) => Wb::Entry(e.tag),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The per-cycle record (§3.5)
// ---------------------------------------------------------------------------------------------

/// WB during a cycle: a stream entry's tag, ICNT data, or nothing (a bubble). JSON: the tag
/// number, `"ICNT"` or `"-"` (spec §3.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wb {
    Empty,
    Icnt,
    Entry(u32),
}

impl fmt::Display for Wb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Wb::Empty => f.write_str("-"),
            Wb::Icnt => f.write_str("ICNT"),
            Wb::Entry(tag) => write!(f, "{tag}"),
        }
    }
}

impl Serialize for Wb {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Wb::Entry(tag) => s.serialize_u32(*tag),
            other => s.serialize_str(&other.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for Wb {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Wb, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Tag(u32),
            Text(String),
        }
        match Repr::deserialize(d)? {
            Repr::Tag(tag) => Ok(Wb::Entry(tag)),
            Repr::Text(s) if s == "-" => Ok(Wb::Empty),
            Repr::Text(s) if s == "ICNT" => Ok(Wb::Icnt),
            Repr::Text(s) => Err(de::Error::invalid_value(
                de::Unexpected::Str(&s),
                &"a tag number, \"ICNT\" or \"-\"",
            )),
        }
    }
}

/// One cycle of the trace (spec §3.5): the contents of every latch during cycle `t` and the
/// end-of-cycle outcome.
///
/// JSON, one object per cycle; a latch is its entry's tag (the stream index) or `null` when
/// empty; FIFOs list their entries oldest first; structures the backend lacks are omitted:
///
/// ```json
/// {"t":9,"F":9,"D":[8],"EXE":7,"PRE":[6],"MEM0":5,"rem":1,"MEM":[null],"NQ":[],
///  "WB":"-","wb_src":"NONE","fe_hold":false,"cause":"none"}
/// ```
///
/// - `D`: D1..Dk (`D[0]` is D1); `MEM`: MEM1..MEM(M−1) (`MEM[0]` is MEM1), MEM0 and its `rem`
///   (service cycles left including this one, 0 when empty) are separate fields.
/// - `PRE`, `NQ`: Elastic only; `NM`: Split only (NM0..NM(M−1)).
/// - `WB`: tag, `"ICNT"` or `"-"`; `wb_src`: the source selected at the end of t−1 that filled
///   WB (`NONE`, `ICNT`, `MEM`, `NQ`, `EXE`, `NM`).
/// - `fe_hold`, `cause` (`none`, `bank_conflict`, `other`): about cycle t (§3.2 step 7, §3.3);
///   a stall at t costs the issue slot t+1, where the spec's tables mark it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub t: u64,
    #[serde(rename = "F")]
    pub f: Option<u32>,
    #[serde(rename = "D")]
    pub d: Vec<Option<u32>>,
    #[serde(rename = "EXE")]
    pub exe: Option<u32>,
    #[serde(rename = "PRE", default, skip_serializing_if = "Option::is_none")]
    pub pre: Option<Vec<u32>>,
    #[serde(rename = "MEM0")]
    pub mem0: Option<u32>,
    pub rem: u32,
    #[serde(rename = "MEM")]
    pub mem: Vec<Option<u32>>,
    #[serde(rename = "NQ", default, skip_serializing_if = "Option::is_none")]
    pub nq: Option<Vec<u32>>,
    #[serde(rename = "NM", default, skip_serializing_if = "Option::is_none")]
    pub nm: Option<Vec<Option<u32>>>,
    #[serde(rename = "WB")]
    pub wb: Wb,
    pub wb_src: WbSrc,
    pub fe_hold: bool,
    pub cause: Cause,
}

impl Record {
    /// The fields in record order under their spec §3.5 names (`D1`.., `MEM1`.., `NM0`..; FIFOs
    /// as one array), for reports and for naming the first difference between two records.
    pub fn fields(&self) -> Vec<(String, Value)> {
        fn json<T: Serialize>(x: &T) -> Value {
            serde_json::to_value(x).expect("record fields serialize")
        }
        let mut v = vec![("t".into(), json(&self.t)), ("F".into(), json(&self.f))];
        v.extend(
            self.d
                .iter()
                .enumerate()
                .map(|(k, x)| (format!("D{}", k + 1), json(x))),
        );
        v.push(("EXE".into(), json(&self.exe)));
        if let Some(pre) = &self.pre {
            v.push(("PRE".into(), json(pre)));
        }
        v.push(("MEM0".into(), json(&self.mem0)));
        v.push(("rem".into(), json(&self.rem)));
        v.extend(
            self.mem
                .iter()
                .enumerate()
                .map(|(k, x)| (format!("MEM{}", k + 1), json(x))),
        );
        if let Some(nq) = &self.nq {
            v.push(("NQ".into(), json(nq)));
        }
        if let Some(nm) = &self.nm {
            v.extend(
                nm.iter()
                    .enumerate()
                    .map(|(k, x)| (format!("NM{k}"), json(x))),
            );
        }
        v.push(("WB".into(), json(&self.wb)));
        v.push(("wb_src".into(), json(&self.wb_src)));
        v.push(("fe_hold".into(), json(&self.fe_hold)));
        v.push(("cause".into(), json(&self.cause)));
        v
    }
}

/// Run totals from a record list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub cycles: u64,
    /// Cycles with fe_hold (§3.3).
    pub stalls: u64,
    pub stall_causes: StallCauses,
    /// Cycles with WB empty strictly between the first and the last cycle in which a stream
    /// entry occupies WB (ICNT data is not a bubble).
    pub wb_bubbles: u64,
    /// The last cycle in which a stream entry occupies WB.
    pub last_wb_cycle: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StallCauses {
    pub bank_conflict: u64,
    pub other: u64,
}

impl Summary {
    pub fn of(records: &[Record]) -> Summary {
        let mut acc = SummaryAcc::default();
        for r in records {
            acc.record(r);
        }
        acc.finish()
    }
}

/// WB bubbles (§3.3) counted cycle by cycle: the cycles with WB empty strictly between the
/// first and the last cycle with a stream entry in WB (ICNT data is not a bubble).
#[derive(Clone, Debug, Default)]
pub struct WbBubbles {
    seen_entry: bool,
    /// Empty cycles since the last cycle with a stream entry in WB.
    gap: u64,
    count: u64,
}

impl WbBubbles {
    pub fn add(&mut self, wb: Wb) {
        match wb {
            Wb::Entry(_) => {
                self.count += std::mem::take(&mut self.gap);
                self.seen_entry = true;
            }
            Wb::Empty if self.seen_entry => self.gap += 1,
            _ => {}
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }
}

/// A [`Summary`] accumulated record by record, in cycle order (no record kept).
#[derive(Clone, Debug, Default)]
pub struct SummaryAcc {
    summary: Summary,
    bubbles: WbBubbles,
}

impl SummaryAcc {
    pub fn record(&mut self, r: &Record) {
        let s = &mut self.summary;
        s.cycles += 1;
        s.stalls += r.fe_hold as u64;
        s.stall_causes.bank_conflict += (r.cause == Cause::BankConflict) as u64;
        s.stall_causes.other += (r.cause == Cause::Other) as u64;
        if matches!(r.wb, Wb::Entry(_)) {
            s.last_wb_cycle = Some(r.t);
        }
        self.bubbles.add(r.wb);
    }

    pub fn finish(self) -> Summary {
        Summary {
            wb_bubbles: self.bubbles.count(),
            ..self.summary
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Ports
// ---------------------------------------------------------------------------------------------

/// One latch's taps `<stage>_valid` / `<stage>_tag` (spec §6), as `Some(tag)` or `None`.
#[derive(Clone, Copy, Debug)]
struct Tap {
    valid: Word,
    tag: Word,
}

impl Tap {
    fn new(layout: &Layout, stage: &str) -> Tap {
        let (valid, tag) = stage_ports(stage);
        Tap {
            valid: Word::of(layout.out_slot(&valid)),
            tag: Word::of(layout.out_slot(&tag)),
        }
    }

    fn get(&self, buf: &[u64]) -> Option<u32> {
        (self.valid.get(buf) == 1).then(|| self.tag.get(buf) as u32)
    }

    fn set(&self, buf: &mut [u64], tag: Option<u32>) {
        self.valid.set(buf, tag.is_some() as u64);
        self.tag.set(buf, tag.unwrap_or(0) as u64);
    }
}

/// Latch taps in order, one tag each.
fn set_latches(taps: &[Tap], tags: impl Iterator<Item = Option<u32>>, buf: &mut [u64]) {
    for (tap, tag) in taps.iter().zip(tags) {
        tap.set(buf, tag);
    }
}

/// A FIFO's slot taps (oldest first, the rest empty) and its count.
fn set_fifo(taps: &[Tap], count: Word, tags: impl ExactSizeIterator<Item = u32>, buf: &mut [u64]) {
    count.set(buf, tags.len() as u64);
    let mut tags = tags;
    for tap in taps {
        tap.set(buf, tags.next());
    }
}

/// The trace-mode top's output ports (spec §3.5, §6) resolved once: the record ⇄ output-buffer
/// mapping. FIFO contents are the valid slots in slot order.
#[derive(Clone, Debug)]
pub struct RecordPorts {
    mode: PipeMode,
    in_ready: Word,
    fe_hold: Word,
    cause: Word,
    wb_valid: Word,
    wb_icnt: Word,
    wb_tag: Word,
    wb_src: Word,
    mem0_rem: Word,
    pre_count: Word,
    nq_count: Word,
    f: Tap,
    /// D1..Dk.
    d: Vec<Tap>,
    exe: Tap,
    pre: Vec<Tap>,
    /// MEM0..MEM(M−1).
    mem: Vec<Tap>,
    nq: Vec<Tap>,
    nm: Vec<Tap>,
}

impl RecordPorts {
    /// The output ports of `p`'s trace-mode top in `layout` (panics on a missing port).
    pub fn new(p: &Params, layout: &Layout) -> RecordPorts {
        let word = |name: &str| Word::of(layout.out_slot(name));
        let taps = |prefix: &str, range: std::ops::Range<usize>| -> Vec<Tap> {
            range
                .map(|i| Tap::new(layout, &format!("{prefix}{i}")))
                .collect()
        };
        RecordPorts {
            mode: p.pipe_mode,
            in_ready: word(port::IN_READY),
            fe_hold: word(port::FE_HOLD),
            cause: word(port::CAUSE),
            wb_valid: word(port::WB_VALID),
            wb_icnt: word(port::WB_ICNT),
            wb_tag: word(port::WB_TAG),
            wb_src: word(port::WB_SRC),
            mem0_rem: word(port::MEM0_REM),
            pre_count: word(port::PRE_COUNT),
            nq_count: word(port::NQ_COUNT),
            f: Tap::new(layout, "f"),
            d: taps("d", 1..p.fe_depth as usize + 1),
            exe: Tap::new(layout, "exe"),
            pre: taps("pre", 0..p.pre_slots()),
            mem: taps("mem", 0..p.mem_stages as usize),
            nq: taps("nq", 0..p.nq_slots()),
            nm: taps("nm", 0..p.nm_slots()),
        }
    }

    /// Decodes one cycle's output buffer into its record (see [`record_from_outputs`]).
    pub fn record(&self, t: u64, outputs: &[u64]) -> Record {
        let latches = |taps: &[Tap]| -> Vec<Option<u32>> {
            taps.iter().map(|tap| tap.get(outputs)).collect()
        };
        let fifo =
            |taps: &[Tap]| -> Vec<u32> { taps.iter().filter_map(|tap| tap.get(outputs)).collect() };
        let mode = self.mode;
        let wb = match (self.wb_valid.get(outputs), self.wb_icnt.get(outputs)) {
            (0, _) => Wb::Empty,
            (_, 1) => Wb::Icnt,
            _ => Wb::Entry(self.wb_tag.get(outputs) as u32),
        };
        Record {
            t,
            f: self.f.get(outputs),
            d: latches(&self.d),
            exe: self.exe.get(outputs),
            pre: (mode == PipeMode::Elastic).then(|| fifo(&self.pre)),
            mem0: self.mem[0].get(outputs),
            rem: self.mem0_rem.get(outputs) as u32,
            mem: latches(&self.mem[1..]),
            nq: (mode == PipeMode::Elastic).then(|| fifo(&self.nq)),
            nm: (mode == PipeMode::Split).then(|| latches(&self.nm)),
            wb,
            wb_src: WbSrc::from_bits(self.wb_src.get(outputs)).unwrap_or(WbSrc::None),
            fe_hold: self.fe_hold.get(outputs) == 1,
            cause: Cause::from_bits(self.cause.get(outputs)).unwrap_or(Cause::Other),
        }
    }

    /// Writes `r` onto the output ports (see [`encode_record`]).
    pub fn write(&self, r: &Record, outputs: &mut [u64]) {
        self.write_stall(
            Stall {
                fe_hold: r.fe_hold,
                cause: r.cause,
            },
            outputs,
        );
        self.write_wb(r.wb, r.wb_src, outputs);
        self.mem0_rem.set(outputs, r.rem as u64);
        let pre = r.pre.as_deref().unwrap_or_default();
        let nq = r.nq.as_deref().unwrap_or_default();
        set_fifo(&self.pre, self.pre_count, pre.iter().copied(), outputs);
        set_fifo(&self.nq, self.nq_count, nq.iter().copied(), outputs);
        self.f.set(outputs, r.f);
        set_latches(&self.d, r.d.iter().copied(), outputs);
        self.exe.set(outputs, r.exe);
        self.mem[0].set(outputs, r.mem0);
        set_latches(&self.mem[1..], r.mem.iter().copied(), outputs);
        set_latches(&self.nm, r.nm.iter().flatten().copied(), outputs);
    }

    /// Writes what the outputs show of `pipe` during its coming cycle: every port of the record
    /// [`Pipeline::cycle`] would return except in_ready, fe_hold and cause
    /// ([`RecordPorts::write_stall`]), without building the record.
    pub fn write_state(&self, pipe: &Pipeline, outputs: &mut [u64]) {
        let tag = |e: &Latch| e.map(|e| e.tag);
        self.write_wb(pipe.wb_shown(), pipe.wb_src, outputs);
        let rem = pipe.mem.mem0().map_or(0, |(_, rem)| rem);
        self.mem0_rem.set(outputs, rem as u64);
        set_fifo(
            &self.pre,
            self.pre_count,
            pipe.pre.entries().map(|e| e.tag),
            outputs,
        );
        match &pipe.nonmem {
            Nonmem::Fifo(nq) => set_fifo(
                &self.nq,
                self.nq_count,
                nq.entries().map(|e| e.tag),
                outputs,
            ),
            _ => self.nq_count.set(outputs, 0),
        }
        if let Nonmem::Latches(nm) = &pipe.nonmem {
            set_latches(&self.nm, nm.iter().map(tag), outputs);
        }
        self.f.set(outputs, pipe.fe.f().map(|e| e.tag));
        set_latches(&self.d, pipe.fe.d().iter().map(tag), outputs);
        self.exe.set(outputs, pipe.fe.exe().map(|e| e.tag));
        set_latches(&self.mem, pipe.mem.stages().iter().map(tag), outputs);
    }

    /// Writes in_ready = ¬fe_hold, fe_hold and cause.
    pub fn write_stall(&self, s: Stall, outputs: &mut [u64]) {
        self.in_ready.set(outputs, !s.fe_hold as u64);
        self.fe_hold.set(outputs, s.fe_hold as u64);
        self.cause.set(outputs, s.cause as u64);
    }

    fn write_wb(&self, wb: Wb, src: WbSrc, outputs: &mut [u64]) {
        self.wb_valid.set(outputs, (wb != Wb::Empty) as u64);
        self.wb_icnt.set(outputs, (wb == Wb::Icnt) as u64);
        let tag = match wb {
            Wb::Entry(tag) => tag as u64,
            _ => 0,
        };
        self.wb_tag.set(outputs, tag);
        self.wb_src.set(outputs, src as u64);
    }
}

/// Decodes one cycle's output buffer into its record. Model and RTL records both come from
/// here. FIFO contents are the valid slots in slot order. Bit patterns no record can express (a
/// tag on an empty latch, `pre_count` disagreeing with the valid bits, unused `cause`/`wb_src`
/// codes, which decode as `other`/`NONE`) vanish here: compare the buffers as well.
/// Resolves the ports on every call: per-cycle loops keep a [`RecordPorts`] instead.
pub fn record_from_outputs(p: &Params, layout: &Layout, t: u64, outputs: &[u64]) -> Record {
    RecordPorts::new(p, layout).record(t, outputs)
}

/// Writes `r` onto the output ports (the inverse of [`record_from_outputs`]; `in_ready` =
/// ¬fe_hold). Resolves the ports on every call, as [`record_from_outputs`] does.
pub fn encode_record(p: &Params, layout: &Layout, r: &Record, outputs: &mut [u64]) {
    RecordPorts::new(p, layout).write(r, outputs)
}

/// The trace-mode top's input ports (spec §6) resolved once.
#[derive(Clone, Debug)]
struct OfferPorts {
    reset: Word,
    in_valid: Word,
    in_tag: Word,
    in_kind: Word,
    in_deg: Word,
    in_addr: Slot,
    in_act: Word,
    icnt_valid: Word,
    lanes: usize,
    addr_bits: usize,
}

impl OfferPorts {
    fn new(p: &Params, layout: &Layout) -> OfferPorts {
        let word = |name: &str| Word::of(layout.in_slot(name));
        OfferPorts {
            reset: word("reset"),
            in_valid: word(port::IN_VALID),
            in_tag: word(port::IN_TAG),
            in_kind: word(port::IN_KIND),
            in_deg: word(port::IN_DEG),
            in_addr: layout.in_slot(port::IN_ADDR).clone(),
            in_act: word(port::IN_ACT),
            icnt_valid: word(port::ICNT_VALID),
            lanes: p.lanes as usize,
            addr_bits: p.addr_bits as usize,
        }
    }

    /// The entry offered on `in_*`, if `in_valid`.
    fn offer(&self, inputs: &[u64]) -> Option<Entry> {
        if self.in_valid.get(inputs) == 0 {
            return None;
        }
        let addr = self.in_addr.of(inputs);
        let act = self.in_act.get(inputs);
        let deg = self.in_deg.get(inputs) as u32;
        Some(Entry {
            tag: self.in_tag.get(inputs) as u32,
            kind: Kind::from_bits(self.in_kind.get(inputs)),
            deg_override: (deg != 0).then_some(deg),
            addrs: (0..self.lanes)
                .map(|l| lane_field(addr, l, self.addr_bits) as u32)
                .collect(),
            act: (0..self.lanes).map(|l| act >> l & 1 == 1).collect(),
        })
    }
}

/// The pipeline on the trace-mode ports (contract: outputs show cycle t's latches and fe_hold,
/// then the edge; `reset` high empties everything at the edge). Steps without building records.
pub struct Model {
    pipe: Pipeline,
    inputs: OfferPorts,
    outputs: RecordPorts,
}

impl Model {
    pub fn new(params: &Params, layout: &Layout) -> Model {
        Model {
            pipe: Pipeline::new(params),
            inputs: OfferPorts::new(params, layout),
            outputs: RecordPorts::new(params, layout),
        }
    }

    pub fn pipeline(&self) -> &Pipeline {
        &self.pipe
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        // The latches during t (§3.5), then the cycle's fe_hold and cause.
        self.outputs.write_state(&self.pipe, outputs);
        let icnt = self.inputs.icnt_valid.get(inputs) == 1;
        let (offer, cfg) = (&self.inputs, self.pipe.cfg);
        // The offer is decoded only when the front end accepts it.
        let stall = self.pipe.step_with(icnt, |in_ready| {
            let e = in_ready.then(|| offer.offer(inputs)).flatten()?;
            Some(InFlight::of(&cfg, &e))
        });
        self.outputs.write_stall(stall, outputs);
        if self.inputs.reset.get(inputs) == 1 {
            self.pipe.reset();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smrtl_hdl::blocks::bank_conflict_detector::Mode;
    use smrtl_hdl::blocks::elastic_pipeline::ports;

    fn micro(mode: PipeMode) -> Params {
        Params {
            pipe_mode: mode,
            mem_stages: 2,
            premem_depth: 1,
            nonmem_depth: 2,
            fe_depth: 1,
            ..Params::default()
        }
    }

    #[test]
    fn record_json_shape() {
        let mut pipe = Pipeline::new(&micro(PipeMode::Elastic));
        let l = 8;
        let s2 = Entry::smem_deg(0, 2, l);
        let r0 = pipe.cycle(Some(&s2), false);
        let json = serde_json::to_string(&r0).unwrap();
        assert_eq!(
            json,
            r#"{"t":0,"F":null,"D":[null],"EXE":null,"PRE":[],"MEM0":null,"rem":0,"MEM":[null],"NQ":[],"WB":"-","wb_src":"NONE","fe_hold":false,"cause":"none"}"#
        );
        let back: Record = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r0);
        let split = Pipeline::new(&micro(PipeMode::Split)).cycle(None, true);
        let json = serde_json::to_string(&split).unwrap();
        assert!(
            json.contains(r#""MEM":[null],"NM":[null,null],"WB":"-""#),
            "{json}"
        );
        assert!(!json.contains("PRE") && !json.contains("NQ"));
        for wb in [Wb::Empty, Wb::Icnt, Wb::Entry(7)] {
            let text = serde_json::to_string(&wb).unwrap();
            assert_eq!(serde_json::from_str::<Wb>(&text).unwrap(), wb);
        }
        assert!(serde_json::from_str::<Wb>(r#""x""#).is_err());
    }

    #[test]
    fn entry_lanes_as_slices_and_json() {
        let e = Entry {
            addrs: (0..8).map(|l| 8 * l).collect(),
            ..Entry::new(3, Kind::Smem, 8)
        };
        assert_eq!(e.addrs.len(), 8);
        assert_eq!(e.addrs[2], 16);
        assert_eq!(e.act, [true; 8]);
        let json = serde_json::to_string(&e).unwrap();
        assert!(
            json.contains(r#""addrs":[0,8,16,24,32,40,48,56]"#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<Entry>(&json).unwrap(), e);
        let too_many = json.replace("[0,8,", &format!("[{}0,8,", "0,".repeat(32)));
        assert!(serde_json::from_str::<Entry>(&too_many).is_err());
    }

    #[test]
    fn outputs_round_trip() {
        for mode in [PipeMode::Unified, PipeMode::Split, PipeMode::Elastic] {
            let p = micro(mode);
            let layout = Layout::new(&ports(&p));
            let mut pipe = Pipeline::new(&p);
            let stream: Vec<Entry> = (0..12)
                .map(|i| match i % 3 {
                    0 => Entry::smem_deg(i, 3, 8),
                    1 => Entry::new(i, Kind::Alu, 8),
                    _ => Entry::new(i, Kind::Gld, 8),
                })
                .collect();
            let mut next = 0;
            for t in 0..40 {
                let r = pipe.cycle(stream.get(next), t % 7 == 3);
                if !r.fe_hold && next < stream.len() {
                    next += 1;
                }
                let mut out = vec![0; layout.out_words];
                encode_record(&p, &layout, &r, &mut out);
                assert_eq!(record_from_outputs(&p, &layout, r.t, &out), r);
            }
            assert!(pipe.is_drained());
        }
    }

    /// A small deterministic generator (no dependency for one test).
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    /// The port-level [`Model`] (no records) writes exactly the encoded records of
    /// [`Pipeline::cycle`], resets included, in every mode.
    #[test]
    fn model_outputs_are_the_encoded_records() {
        let mut rng = Lcg(1);
        for (mode, m, n, q, ports_p, broadcast, priority, min_age) in [
            (
                PipeMode::Unified,
                4,
                3,
                4,
                1,
                Mode::Multicast,
                WbPriority::MemFirst,
                0,
            ),
            (
                PipeMode::Split,
                2,
                0,
                0,
                2,
                Mode::Literal,
                WbPriority::MemFirst,
                0,
            ),
            (
                PipeMode::Elastic,
                4,
                3,
                4,
                1,
                Mode::Multicast,
                WbPriority::MemFirst,
                0,
            ),
            (
                PipeMode::Elastic,
                1,
                0,
                1,
                1,
                Mode::GpgpusimLimited,
                WbPriority::NonmemFirst,
                0,
            ),
            (
                PipeMode::Elastic,
                2,
                2,
                3,
                2,
                Mode::Literal,
                WbPriority::MemFirst,
                2,
            ),
        ] {
            let p = Params {
                pipe_mode: mode,
                mem_stages: m,
                premem_depth: n,
                nonmem_depth: q,
                fe_depth: 2,
                ports: ports_p,
                broadcast,
                wb_priority: priority,
                nonmem_min_age: min_age,
                ..Params::default()
            };
            let layout = Layout::new(&ports(&p));
            let mut model = Model::new(&p, &layout);
            let mut pipe = Pipeline::new(&p);
            let (mut fast, mut encoded) = (vec![0; layout.out_words], vec![0; layout.out_words]);
            for t in 0..3000u64 {
                let e = Entry {
                    tag: t as u32 & 0xffff,
                    kind: Kind::from_bits(rng.below(4)),
                    deg_override: [None, None, Some(1 + rng.below(8) as u32)]
                        [rng.below(3) as usize],
                    addrs: (0..8)
                        .map(|_| 8 * rng.below(4) as u32 + rng.below(2) as u32)
                        .collect(),
                    act: (0..8).map(|_| rng.below(8) != 0).collect(),
                };
                let offer = (rng.below(8) != 0).then_some(&e);
                let (icnt, reset) = (rng.below(8) == 0, rng.below(200) == 0);
                let mut inputs = vec![0; layout.in_words];
                let set = |buf: &mut [u64], name: &str, v: u64| layout.in_slot(name).set(buf, v);
                set(&mut inputs, port::ICNT_VALID, icnt as u64);
                set(&mut inputs, "reset", reset as u64);
                if let Some(e) = offer {
                    set(&mut inputs, port::IN_VALID, 1);
                    set(&mut inputs, port::IN_TAG, e.tag as u64);
                    set(&mut inputs, port::IN_KIND, e.kind as u64);
                    set(
                        &mut inputs,
                        port::IN_DEG,
                        e.deg_override.unwrap_or(0) as u64,
                    );
                    let act = e.act.iter().rev().fold(0, |m, &on| m << 1 | on as u64);
                    set(&mut inputs, port::IN_ACT, act);
                    let addr = layout.in_slot(port::IN_ADDR);
                    let aw = p.addr_bits as usize;
                    for (l, &a) in e.addrs.iter().enumerate() {
                        addr.set_field(&mut inputs, l * aw, aw, a as u64);
                    }
                }
                model.step(&inputs, &mut fast);
                encode_record(&p, &layout, &pipe.cycle(offer, icnt), &mut encoded);
                if reset {
                    pipe = Pipeline::new(&p);
                }
                assert_eq!(fast, encoded, "{mode:?} M={m} N={n} Q={q}, cycle {t}");
            }
        }
    }

    #[test]
    fn detector_degree_and_service() {
        let p = Params {
            ports: 2,
            ..Params::default()
        };
        let cfg = detector_cfg(&p);
        // Stride 4 over 8 banks: two lanes per bank, 4 bank-words per bank.
        let e = Entry {
            addrs: (0..8).map(|l| 4 * l).collect(),
            ..Entry::new(0, Kind::Smem, 8)
        };
        assert_eq!(degree(&cfg, &e), 4);
        assert_eq!(service_cycles(&cfg, &e), 2);
        let none = Entry {
            act: Lanes::splat(false, 8),
            ..e.clone()
        };
        assert_eq!(service_cycles(&cfg, &none), 1);
        let gld = Entry {
            kind: Kind::Gld,
            ..e
        };
        assert_eq!(service_cycles(&cfg, &gld), 1);
    }
}
