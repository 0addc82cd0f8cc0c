//! The pipeline's components, each owning its latches: the front end, PRE, the MEM path and the
//! NONMEM side (docs/elastic-pipeline.md §2, §3.2, §4).

use super::entry::InFlight;
use smrtl_hdl::blocks::elastic_pipeline::{Cause, Params, PipeMode};
use std::collections::VecDeque;

/// A latch: an entry or empty.
pub type Latch = Option<InFlight>;

/// F, D1..Dk and EXE: one chain of bubble-collapsing latches (spec §3.2 step 7, D2).
#[derive(Clone, Debug)]
pub struct FrontEnd {
    /// `[F, D1, .., Dk, EXE]`.
    latches: Vec<Latch>,
}

impl FrontEnd {
    pub(super) fn new(fe_depth: usize) -> FrontEnd {
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

    pub(super) fn take_exe(&mut self) -> Option<InFlight> {
        self.latches.last_mut().and_then(Option::take)
    }

    /// Step 7: EXE takes Dk if EXE is free, each earlier latch advances if its successor is
    /// free. Returns `fe_hold` = F valid ∧ F did not move.
    pub(super) fn advance(&mut self) -> bool {
        for k in (1..self.latches.len()).rev() {
            if self.latches[k].is_none() {
                self.latches[k] = self.latches[k - 1].take();
            }
        }
        self.latches[0].is_some()
    }

    /// Loads F (only when it is free: ¬fe_hold).
    pub(super) fn load(&mut self, e: InFlight) {
        debug_assert!(self.latches[0].is_none());
        self.latches[0] = Some(e);
    }

    pub(super) fn is_empty(&self) -> bool {
        self.latches.iter().all(Option::is_none)
    }

    pub(super) fn clear(&mut self) {
        self.latches.fill(None);
    }
}

/// The PREMEM FIFO of N entries before MEM0 (spec §4, D11): strict FIFO, no pass-through.
/// Its storage is allocated once, for N entries.
#[derive(Clone, Debug)]
pub struct PreFifo {
    pub(super) q: VecDeque<InFlight>,
    pub(super) depth: usize,
}

impl PreFifo {
    pub(super) fn new(depth: usize) -> PreFifo {
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

    pub(super) fn push(&mut self, e: InFlight) {
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
    pub(super) fn new(m: usize) -> MemPath {
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
    pub(super) fn conflict_busy(&self) -> bool {
        self.stages[0].is_some() && self.rem > 1
    }

    /// Step 1: returns `mem0_done`; a held entry counts down.
    pub(super) fn serve(&mut self) -> bool {
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
    pub(super) fn offers_wb(&self, mem0_done: bool) -> bool {
        self.last().is_some() && (self.stages.len() > 1 || mem0_done)
    }

    /// Step 3: MEM_last leaves iff `selected` (returned), then the ripple from the end; MEM0
    /// moves iff done and MEM1 is free.
    pub(super) fn advance(&mut self, selected: bool, mem0_done: bool) -> Option<InFlight> {
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

    pub(super) fn mem0_free(&self) -> bool {
        self.stages[0].is_none()
    }

    /// MEM0 takes `e` for its `c` service cycles (steps 5, 6).
    pub(super) fn enter(&mut self, e: InFlight) {
        debug_assert!(self.mem0_free());
        self.stages[0] = Some(e);
        self.rem = e.cycles;
    }

    pub(super) fn is_empty(&self) -> bool {
        self.stages.iter().all(Option::is_none)
    }

    pub(super) fn clear(&mut self) {
        self.stages.fill(None);
        self.rem = 0;
    }
}

/// The NONMEM FIFO of Q entries (Elastic, spec §4, D12); each entry with its age (1 in its first
/// NQ cycle, for `nonmem_min_age`). Its storage is allocated once, for Q entries.
#[derive(Clone, Debug)]
pub struct NonmemFifo {
    pub(super) q: VecDeque<(InFlight, u32)>,
    pub(super) depth: usize,
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
    pub(super) fn new(p: &Params) -> Nonmem {
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
    pub(super) fn advance(&mut self, selected: bool) -> Option<InFlight> {
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

    pub(super) fn is_empty(&self) -> bool {
        match self {
            Nonmem::None => true,
            Nonmem::Latches(nm) => nm.iter().all(Option::is_none),
            Nonmem::Fifo(nq) => nq.is_empty(),
        }
    }

    pub(super) fn clear(&mut self) {
        match self {
            Nonmem::None => {}
            Nonmem::Latches(nm) => nm.fill(None),
            Nonmem::Fifo(nq) => nq.q.clear(),
        }
    }
}

/// Where step 5 sends the EXE entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ExeTo {
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
