//! The scratchpad / stash of one SM and its DMA engine (docs/stall-inspector.md §10.3; [P
//! §VII-A]): 4-byte banks with the seed-000/002 degree function for conflicts, stash chunks of
//! one line filled on demand from the mapped global data (a miss takes an MSHR entry and
//! bypasses the L1), and DMA regions whose scratchpad range is blocked until every line of the
//! transfer is done (one request per cycle, each holding an MSHR entry until answered).

use super::params::{CohParams, LANES, LINE_BYTES};
use super::prog::Pat;
use crate::blocks::bank_conflict_detector::{degree_of, Cfg};
use smrtl_hdl::blocks::bank_conflict_detector::Mode;
use std::collections::VecDeque;

/// Most stash maps and DMA regions live at once.
pub const MAX_MAPS: usize = 16;
pub const MAX_DMA: usize = 16;

/// A stash chunk's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chunk {
    /// Not present (a mapped access misses).
    Invalid,
    /// A fill is on its way in MSHR entry `e`.
    Pending(u32),
    Valid,
}

/// A stash map: `bytes` at stash offset `spm` mirror global `global`.
#[derive(Clone, Copy, Debug, Default)]
struct Map {
    spm: u64,
    global: u64,
    bytes: u64,
}

/// A DMA transfer.
#[derive(Clone, Copy, Debug, Default)]
pub struct Region {
    pub spm: u64,
    pub global: u64,
    pub bytes: u64,
    pub to_spm: bool,
    /// Lines requested and answered, of `total`.
    pub sent: u32,
    pub done: u32,
    pub total: u32,
    pub live: bool,
    /// Its next line once waited for an MSHR entry: the MSHR file throttles the transfer.
    pub mshr_bound: bool,
}

/// Scratchpad / stash state and the DMA engine's regions.
pub struct Spm {
    cfg: Cfg,
    pub chunk: Vec<Chunk>,
    maps: [Map; MAX_MAPS],
    n_maps: usize,
    pub dma: [Region; MAX_DMA],
    /// Waiting stash accesses per MSHR entry (their load ids), as the L1D's merge slots.
    max_merge: usize,
    pub byp_n: Vec<u8>,
    pub byp_acc: Vec<u32>,
    pub byp_chunk: Vec<u32>,
}

impl Spm {
    pub fn new(p: &CohParams) -> Spm {
        let m = p.mshrs as usize;
        Spm {
            cfg: Cfg {
                lanes: LANES as u32,
                banks: p.spm_banks,
                layer_bytes: 4,
                mode_bytes: 4,
                elem_bytes: 4,
                ports: 1,
                mode: Mode::Multicast,
            },
            chunk: vec![Chunk::Invalid; p.spm_chunks()],
            maps: [Map::default(); MAX_MAPS],
            n_maps: 0,
            dma: [Region::default(); MAX_DMA],
            max_merge: p.max_merge as usize,
            byp_n: vec![0; m],
            byp_acc: vec![0; m * p.max_merge as usize],
            byp_chunk: vec![0; m],
        }
    }

    /// Bank-conflict degree of an access (1: none).
    pub fn degree(&self, at: &Pat) -> u32 {
        let mut active = [false; LANES];
        let mut addrs = [0u64; LANES];
        for l in 0..at.lanes as usize {
            active[l] = true;
            addrs[l] = at.addr(l);
        }
        degree_of(&self.cfg, &active, &addrs).degree
    }

    /// Whether the access overlaps a DMA transfer not yet complete.
    pub fn dma_pending(&self, at: &Pat) -> bool {
        let (lo, hi) = (at.base, at.addr(at.lanes as usize - 1).wrapping_add(4));
        self.dma
            .iter()
            .any(|r| r.live && lo < r.spm + r.bytes && r.spm < hi)
    }

    /// Whether the access overlaps a DMA transfer the MSHR file throttles (docs §10.3).
    pub fn dma_mshr_bound(&self, at: &Pat) -> bool {
        let (lo, hi) = (at.base, at.addr(at.lanes as usize - 1).wrapping_add(4));
        self.dma
            .iter()
            .any(|r| r.live && r.mshr_bound && lo < r.spm + r.bytes && r.spm < hi)
    }

    /// The DMA engine has a line to send and no MSHR entry: its transfer is MSHR-bound.
    pub fn dma_wait_mshr(&mut self) {
        if let Some(r) = self.dma.iter_mut().find(|r| r.live && r.sent < r.total) {
            r.mshr_bound = true;
        }
    }

    /// Adds a stash map: it replaces a map of the same stash offset, else the oldest one when
    /// the table is full (project decision); the chunks it covers become invalid.
    pub fn map(&mut self, spm: u64, global: u64, bytes: u64) {
        let m = Map { spm, global, bytes };
        if let Some(i) = self.maps[..self.n_maps].iter().position(|x| x.spm == spm) {
            self.maps[i] = m;
        } else if self.n_maps == MAX_MAPS {
            self.maps.copy_within(1.., 0);
            self.maps[MAX_MAPS - 1] = m;
        } else {
            self.maps[self.n_maps] = m;
            self.n_maps += 1;
        }
        let first = (spm / LINE_BYTES) as usize;
        let last = (spm + bytes).div_ceil(LINE_BYTES) as usize;
        for c in first..last.min(self.chunk.len()) {
            self.chunk[c] = Chunk::Invalid;
        }
    }

    /// The global line stash chunk `c` mirrors, if mapped (the latest map wins).
    pub fn global_line(&self, c: usize) -> Option<u64> {
        let off = c as u64 * LINE_BYTES;
        self.maps[..self.n_maps]
            .iter()
            .rev()
            .find(|m| off >= m.spm && off < m.spm + m.bytes)
            .map(|m| m.global.wrapping_add(off - m.spm) / LINE_BYTES)
    }

    /// The global address stash offset `a` mirrors, if mapped (the latest map wins).
    pub fn global_addr(&self, a: u64) -> Option<u64> {
        self.maps[..self.n_maps]
            .iter()
            .rev()
            .find(|m| a >= m.spm && a - m.spm < m.bytes)
            .map(|m| m.global.wrapping_add(a - m.spm))
    }

    /// The chunk of stash offset `a` (wrapping at the stash size).
    pub fn chunk_of(&self, a: u64) -> usize {
        (a / LINE_BYTES) as usize % self.chunk.len()
    }

    /// Adds waiting access `id` to MSHR entry `e`'s stash fill; `false` when its slots are full.
    pub fn wait_on(&mut self, e: u32, id: u32) -> bool {
        let (e, n) = (e as usize, self.byp_n[e as usize] as usize);
        if n >= self.max_merge {
            return false;
        }
        self.byp_acc[e * self.max_merge + n] = id;
        self.byp_n[e] += 1;
        true
    }

    /// Entry `e`'s stash fill arrived: the chunk is valid; the waiting ids (in arrival order)
    /// go to `out`.
    pub fn fill(&mut self, e: u32, out: &mut VecDeque<u32>) {
        let e = e as usize;
        let c = self.byp_chunk[e] as usize;
        if self.chunk[c] == Chunk::Pending(e as u32) {
            self.chunk[c] = Chunk::Valid;
        }
        out.extend(&self.byp_acc[e * self.max_merge..][..self.byp_n[e] as usize]);
        self.byp_n[e] = 0;
    }

    /// Invalidates valid stash chunks whose global line `keep` refuses (an acquire).
    pub fn invalidate(&mut self, keep: impl Fn(u64) -> bool) {
        for c in 0..self.chunk.len() {
            if self.chunk[c] == Chunk::Valid && !self.global_line(c).is_some_and(&keep) {
                self.chunk[c] = Chunk::Invalid;
            }
        }
    }

    /// Starts a DMA transfer; `false` when every region slot is busy.
    pub fn start_dma(&mut self, spm: u64, global: u64, bytes: u64, to_spm: bool) -> bool {
        let Some(r) = self.dma.iter_mut().find(|r| !r.live) else {
            return false;
        };
        let total = bytes.div_ceil(LINE_BYTES) as u32;
        *r = Region {
            spm,
            global,
            bytes,
            to_spm,
            sent: 0,
            done: 0,
            total,
            live: total > 0,
            mshr_bound: false,
        };
        true
    }

    /// The DMA engine's next request: the lowest region slot with lines left to send.
    pub fn next_dma(&mut self) -> Option<(usize, u64, bool)> {
        let (i, r) = self
            .dma
            .iter_mut()
            .enumerate()
            .find(|(_, r)| r.live && r.sent < r.total)?;
        let line = r.global / LINE_BYTES + u64::from(r.sent);
        r.sent += 1;
        Some((i, line, r.to_spm))
    }

    /// A DMA line of region `i` answered; the region ends with its last line.
    pub fn dma_done(&mut self, i: usize) {
        let r = &mut self.dma[i];
        r.done += 1;
        if r.done == r.total {
            r.live = false;
        }
    }

    /// Whether the DMA engine has nothing left.
    pub fn dma_idle(&self) -> bool {
        self.dma.iter().all(|r| !r.live)
    }
}
