//! The L1D of the SM memory pipeline (docs/memory-issue-control.md §1.1, §1.4): tag array with
//! LRU and allocate-on-miss reservations, the MSHR table with merging, and the miss queue.
//! Fixed-size tables, allocated once: an access allocates nothing. The seed-003 memory system
//! (`coh_sm`) reuses it through [`L1d::with_geometry`], [`L1d::invalidate_valid`] and the
//! bypass MSHR entries ([`L1d::reserve_mshr`]), none of which this pipeline calls.

use super::params::{PipeParams, SetIndex};
use std::collections::VecDeque;

/// What one L1D access did (§1.4); the VCD's `l1d_outcome` code is the discriminant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum Outcome {
    Idle = 0,
    Hit = 1,
    HitReserved = 2,
    Miss = 3,
    Write = 4,
    FailLineAlloc = 5,
    FailMissQueue = 6,
    FailMshrMerge = 7,
    FailMshrEntry = 8,
}

impl Outcome {
    /// Whether the access was accepted.
    pub fn accepted(self) -> bool {
        matches!(
            self,
            Outcome::Hit | Outcome::HitReserved | Outcome::Miss | Outcome::Write
        )
    }
    /// The reservation-failure cause index (0 line allocation, 1 miss queue, 2 MSHR merge,
    /// 3 MSHR entry), if it failed.
    pub fn cause(self) -> Option<usize> {
        match self {
            Outcome::FailLineAlloc => Some(0),
            Outcome::FailMissQueue => Some(1),
            Outcome::FailMshrMerge => Some(2),
            Outcome::FailMshrEntry => Some(3),
            _ => None,
        }
    }
}

/// The mark [`L1d::fill`] puts on a merged access's load id in the response queue (the first,
/// allocating access is unmarked): where the data came from for the stall inspector
/// (docs/stall-inspector.md §5: L1_COAL vs MAIN_MEM).
pub const MERGED: u32 = 1 << 31;

const INVALID: u8 = 0;
const VALID: u8 = 1;
const RESERVED: u8 = 2;

#[derive(Clone, Copy, Debug, Default)]
struct Way {
    tag: u64,
    state: u8,
    lru: u64,
    mshr: u32,
}

/// A request on its way to the lower memory: a line and whether it is a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub line: u64,
    pub write: bool,
    /// The MSHR entry a read fills.
    pub mshr: u32,
}

/// An L1D's sizes (§1.1): what [`L1d::new`] takes from the pipeline's params.
#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    pub sets: u32,
    pub ways: u32,
    pub index: SetIndex,
    pub mshrs: u32,
    pub max_merge: u32,
    pub mq_depth: u32,
    pub mq_reserve: u32,
}

/// Tag array, MSHRs and miss queue.
pub struct L1d {
    sets: usize,
    ways: usize,
    set_bits: u32,
    index: SetIndex,
    tags: Vec<Way>,
    lru_clock: u64,
    max_merge: usize,
    mshr_line: Vec<u64>,
    mshr_way: Vec<u32>,
    mshr_n: Vec<u8>,
    /// `mshrs × max_merge` waiting accesses (their load ids), in arrival order.
    mshr_acc: Vec<u32>,
    mshr_free: Vec<u32>,
    mq: VecDeque<Request>,
    mq_depth: usize,
    mq_reserve: usize,
}

impl L1d {
    pub fn new(p: &PipeParams) -> L1d {
        L1d::with_geometry(Geometry {
            sets: p.l1d_sets,
            ways: p.l1d_ways,
            index: p.set_index,
            mshrs: p.mshrs,
            max_merge: p.max_merge,
            mq_depth: p.mq_depth,
            mq_reserve: p.mq_reserve,
        })
    }

    /// An L1D of geometry `g` (the seed-003 memory system's L1 reuses it).
    pub fn with_geometry(g: Geometry) -> L1d {
        let (sets, ways, mshrs) = (g.sets as usize, g.ways as usize, g.mshrs as usize);
        L1d {
            sets,
            ways,
            set_bits: g.sets.trailing_zeros(),
            index: g.index,
            tags: vec![Way::default(); sets * ways],
            lru_clock: 0,
            max_merge: g.max_merge as usize,
            mshr_line: vec![0; mshrs],
            mshr_way: vec![0; mshrs],
            mshr_n: vec![0; mshrs],
            mshr_acc: vec![0; mshrs * g.max_merge as usize],
            mshr_free: (0..mshrs as u32).rev().collect(),
            mq: VecDeque::with_capacity(g.mq_depth as usize),
            mq_depth: g.mq_depth as usize,
            mq_reserve: g.mq_reserve as usize,
        }
    }

    /// The set of line `l` (§1.1).
    pub fn set_of(&self, l: u64) -> usize {
        let mask = self.sets as u64 - 1;
        let b = self.set_bits;
        (match self.index {
            SetIndex::Xor if b > 0 => l ^ l >> b ^ l >> (2 * b),
            _ => l,
        } & mask) as usize
    }

    fn find(&self, set: usize, line: u64) -> Option<usize> {
        let base = set * self.ways;
        (base..base + self.ways)
            .find(|&i| self.tags[i].state != INVALID && self.tags[i].tag == line)
    }

    fn touch(&mut self, i: usize) {
        self.lru_clock += 1;
        self.tags[i].lru = self.lru_clock;
    }

    /// A read of `line` by load `id` (§1.4, checks in the table's order).
    pub fn read(&mut self, line: u64, id: u32) -> Outcome {
        let set = self.set_of(line);
        let found = self.find(set, line);
        if let Some(i) = found {
            if self.tags[i].state == VALID {
                self.touch(i);
                return Outcome::Hit;
            }
        }
        let base = set * self.ways;
        if found.is_none() && (base..base + self.ways).all(|i| self.tags[i].state == RESERVED) {
            return Outcome::FailLineAlloc;
        }
        if self.mq.len() + self.mq_reserve >= self.mq_depth {
            return Outcome::FailMissQueue;
        }
        if let Some(i) = found {
            let e = self.tags[i].mshr as usize;
            let n = self.mshr_n[e] as usize;
            if n >= self.max_merge {
                return Outcome::FailMshrMerge;
            }
            self.mshr_acc[e * self.max_merge + n] = id;
            self.mshr_n[e] += 1;
            return Outcome::HitReserved;
        }
        let Some(e) = self.mshr_free.pop() else {
            return Outcome::FailMshrEntry;
        };
        // Victim: first invalid way, else the least recently used valid one.
        let victim = (base..base + self.ways)
            .find(|&i| self.tags[i].state == INVALID)
            .or_else(|| {
                (base..base + self.ways)
                    .filter(|&i| self.tags[i].state == VALID)
                    .min_by_key(|&i| self.tags[i].lru)
            })
            .expect("a set with a non-reserved way");
        self.tags[victim] = Way {
            tag: line,
            state: RESERVED,
            lru: self.tags[victim].lru,
            mshr: e,
        };
        let e = e as usize;
        self.mshr_line[e] = line;
        self.mshr_way[e] = victim as u32;
        self.mshr_n[e] = 1;
        self.mshr_acc[e * self.max_merge] = id;
        self.mq.push_back(Request {
            line,
            write: false,
            mshr: e as u32,
        });
        Outcome::Miss
    }

    /// A write of `line` (§1.4: write-evict, write-no-allocate).
    pub fn write(&mut self, line: u64) -> Outcome {
        if self.mq.len() >= self.mq_depth {
            return Outcome::FailMissQueue;
        }
        let set = self.set_of(line);
        if let Some(i) = self.find(set, line) {
            if self.tags[i].state == VALID {
                self.tags[i].state = INVALID;
            }
        }
        self.mq.push_back(Request {
            line,
            write: true,
            mshr: u32::MAX,
        });
        Outcome::Write
    }

    /// Phase 3: the miss-queue head, leaving for the lower memory.
    pub fn drain(&mut self) -> Option<Request> {
        self.mq.pop_front()
    }

    /// Phase 1: MSHR entry `e`'s fill. The line becomes valid (most recent), the entry is freed
    /// and its accesses (allocating one first, the merged ones marked [`MERGED`]) go to `out` in
    /// arrival order.
    pub fn fill(&mut self, e: u32, out: &mut VecDeque<u32>) {
        let e = e as usize;
        let i = self.mshr_way[e] as usize;
        debug_assert_eq!(self.tags[i].state, RESERVED);
        self.tags[i].state = VALID;
        self.touch(i);
        let n = self.mshr_n[e] as usize;
        let acc = &self.mshr_acc[e * self.max_merge..][..n];
        out.extend(acc.iter().enumerate().map(|(j, &id)| {
            debug_assert_eq!(id & MERGED, 0, "load id beyond the merge mark");
            if j == 0 {
                id
            } else {
                id | MERGED
            }
        }));
        self.mshr_n[e] = 0;
        self.mshr_free.push(e as u32);
    }

    /// MSHR entries in use.
    pub fn mshrs_used(&self) -> usize {
        self.mshr_line.len() - self.mshr_free.len()
    }

    /// Miss-queue occupancy.
    pub fn mq_len(&self) -> usize {
        self.mq.len()
    }

    /// Whether `line` is valid in the cache.
    pub fn is_valid(&self, line: u64) -> bool {
        self.find(self.set_of(line), line)
            .is_some_and(|i| self.tags[i].state == VALID)
    }

    /// Whether `line` is reserved (fill pending), and its MSHR entry's access count.
    pub fn pending(&self, line: u64) -> Option<usize> {
        self.find(self.set_of(line), line)
            .filter(|&i| self.tags[i].state == RESERVED)
            .map(|i| self.mshr_n[self.tags[i].mshr as usize] as usize)
    }

    /// Ways of `set` that are reserved.
    pub fn reserved_in(&self, set: usize) -> usize {
        let base = set * self.ways;
        (base..base + self.ways)
            .filter(|&i| self.tags[i].state == RESERVED)
            .count()
    }

    /// Invalidates every valid line (an acquire, docs/stall-inspector.md §10.3); lines with a
    /// fill pending stay reserved. `keep` spares lines (DeNovo: owned ones).
    pub fn invalidate_valid(&mut self, keep: impl Fn(u64) -> bool) {
        for w in &mut self.tags {
            if w.state == VALID && !keep(w.tag) {
                w.state = INVALID;
            }
        }
    }

    /// Takes an MSHR entry for a request that bypasses the tag array (stash fill, DMA).
    pub fn reserve_mshr(&mut self) -> Option<u32> {
        let e = self.mshr_free.pop()?;
        self.mshr_n[e as usize] = 0;
        Some(e)
    }

    /// Returns an entry taken by [`L1d::reserve_mshr`].
    pub fn release_mshr(&mut self, e: u32) {
        debug_assert_eq!(self.mshr_n[e as usize], 0);
        self.mshr_free.push(e);
    }

    /// Free MSHR entries.
    pub fn mshrs_free(&self) -> usize {
        self.mshr_free.len()
    }
}
