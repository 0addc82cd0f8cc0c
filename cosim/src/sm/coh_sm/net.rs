//! What the SMs share (docs/stall-inspector.md §10.3): the L2, the DeNovo owned lines of every
//! SM (an L2 answer can take a line from another SM) and the responses in flight, delivered
//! at the end of their cycle in (due, send order): deterministic, and no allocation once the
//! heap has grown to the run's working size.

use super::l2::{Kind, Served, L2};
use super::mem::Mem;
use super::owned::Owned;
use super::params::{CohParams, LANES};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A response on its way to SM `sm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ev {
    /// A load part served without leaving the SM (L1, scratchpad, stash hit): load id, source.
    Part { sm: u8, id: u32, src: u8 },
    /// L1 MSHR entry `e`'s line arrived.
    L1Fill { sm: u8, e: u32, src: u8 },
    /// Stash fill in MSHR entry `e` arrived.
    StashFill { sm: u8, e: u32, src: u8 },
    /// A DMA line of region `region` answered, freeing MSHR entry `e`.
    Dma { sm: u8, e: u32, region: u8 },
    /// Store-buffer entry `idx` acknowledged by the L2.
    Ack { sm: u8, idx: u32 },
    /// An atomic of warp `warp` performed at the L2: `val` (lane 0's old word) for `dst`.
    Atom {
        sm: u8,
        warp: u16,
        src: u8,
        dst: u8,
        val: u64,
    },
}

impl Ev {
    pub fn sm(&self) -> usize {
        match *self {
            Ev::Part { sm, .. }
            | Ev::L1Fill { sm, .. }
            | Ev::StashFill { sm, .. }
            | Ev::Dma { sm, .. }
            | Ev::Ack { sm, .. }
            | Ev::Atom { sm, .. } => sm as usize,
        }
    }
}

/// The shared part of the system.
pub struct Net {
    pub p: CohParams,
    pub l2: L2,
    pub owned: Vec<Owned>,
    /// The kernel language's values (docs §10.4).
    pub mem: Mem,
    q: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    /// Responses in flight per SM.
    pub inflight: Vec<u32>,
}

impl Net {
    pub fn new(p: &CohParams) -> Net {
        let n = p.sms as usize;
        // In flight per SM at most: one response per MSHR entry and store-buffer entry, an
        // atomic per lane of every warp, a hit per lane for `hit_lat` cycles.
        let lanes = LANES as u32;
        let cap = n * (p.mshrs + p.sb_entries + (p.warps + p.hit_lat) * lanes) as usize;
        Net {
            p: p.clone(),
            l2: L2::new(p),
            owned: (0..n).map(|_| Owned::new(p.owned_lines as usize)).collect(),
            mem: Mem::new(),
            q: BinaryHeap::with_capacity(cap),
            seq: 0,
            inflight: vec![0; n],
        }
    }

    /// Schedules `ev` for the end of cycle `due`.
    pub fn at(&mut self, due: u64, ev: Ev) {
        self.inflight[ev.sm()] += 1;
        self.seq += 1;
        self.q.push(Reverse((due, self.seq, ev)));
    }

    /// The next response due by cycle `t`.
    pub fn pop(&mut self, t: u64) -> Option<Ev> {
        match self.q.peek() {
            Some(Reverse((due, _, _))) if *due <= t => {
                let Reverse((_, _, ev)) = self.q.pop()?;
                self.inflight[ev.sm()] -= 1;
                Some(ev)
            }
            _ => None,
        }
    }

    /// Request `kind` for `line` from SM `sm` in cycle `t`; ownership the L2 took away is
    /// dropped from the SM that held it.
    pub fn l2(&mut self, t: u64, sm: u8, line: u64, kind: Kind) -> Served {
        let s = self.l2.access(&self.p, t, sm, line, kind);
        if let Some((o, l)) = s.revoked {
            self.owned[o as usize].remove(l);
        }
        s
    }

    /// SM `sm` takes ownership of `line` (its registration acknowledged); a line its table
    /// evicts is dropped at the L2.
    pub fn own(&mut self, sm: u8, line: u64) {
        if self.l2.owner(line) != Some(sm) {
            return; // taken by another SM while the registration was in flight
        }
        if let Some(old) = self.owned[sm as usize].insert(line) {
            self.l2.disown(old, sm);
        }
    }
}
