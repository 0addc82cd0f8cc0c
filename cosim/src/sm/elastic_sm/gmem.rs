//! The global-load return path the testbench owns (docs/elastic-pipeline.md §6, §8.2): a
//! fixed-latency ICNT FIFO (`{"icnt":N}`, D26) or the DRAM model (`{"dram":{...}}`, seed 000
//! Table 4). The model run and the RTL-in-the-loop run use this one type, so both see the same
//! returns. Storage is preallocated for W·S outstanding subwarps; the per-cycle path does not
//! allocate.

use super::{GmemReturn, SmParams};
use smrtl_hdl::blocks::sm_core::Dram;
use std::collections::VecDeque;

/// One outstanding DRAM request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Req {
    /// Arrival at the controller (core cycles), issue order, warp, subwarp, bank, row.
    at: u64,
    id: u64,
    warp: u32,
    sw: u32,
    bank: u32,
    row: u32,
}

/// One channel: its queue (arrival order), the SM's share of its data bus, its banks.
#[derive(Clone, Debug, Default)]
struct Channel {
    queue: Vec<Req>,
    bus_free: u64,
    bank_free: Vec<u64>,
    open_row: Vec<Option<u32>>,
}

/// The DRAM model (docs/elastic-pipeline.md §8.2): per-channel FR-FCFS over the first
/// `window` queued requests, per-bank row buffers; the SM sees 1/`cores` of every channel
/// (occupancies scaled by `cores`, latencies not).
#[derive(Clone, Debug, Default)]
pub struct DramModel {
    d: Option<Dram>,
    channels: Vec<Channel>,
    /// Served requests: (return cycle, id, warp, sw).
    done: Vec<(u64, u64, u32, u32)>,
    /// Per warp: the latest return cycle given (a warp's subwarps return in order).
    last: Vec<u64>,
    /// Per warp: its global loads so far (the address stream's index).
    loads: Vec<u32>,
    next_id: u64,
    /// Row hits and misses served (statistics).
    pub row_hits: u64,
    pub row_misses: u64,
}

/// SplitMix64: the address hash (deterministic, seeded).
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl DramModel {
    fn load(&mut self, d: Dram, warps: usize, subwarps: usize) {
        let cap = warps * subwarps;
        self.d = Some(d);
        self.channels
            .resize_with(d.channels as usize, Channel::default);
        for c in &mut self.channels {
            c.queue.clear();
            c.queue.reserve(cap);
            c.bus_free = 0;
            c.bank_free.clear();
            c.bank_free.resize(d.banks as usize, 0);
            c.open_row.clear();
            c.open_row.resize(d.banks as usize, None);
        }
        self.done.clear();
        self.done.reserve(cap);
        self.last.clear();
        self.last.resize(warps, 0);
        self.loads.clear();
        self.loads.resize(warps, 0);
        (self.next_id, self.row_hits, self.row_misses) = (0, 0, 0);
    }

    /// A GLD subwarp leaves MEM_last at `t`. Its warp instruction reads one 128-byte segment
    /// at a seeded address (uniform over 4 GB); subwarp `sw` reads its 32-byte quarter.
    fn request(&mut self, t: u64, warp: u32, sw: u32) {
        let d = self.d.expect("dram loaded");
        let w = warp as usize;
        if sw == 0 {
            self.loads[w] += 1;
        }
        let key = u64::from(d.seed) << 40 | u64::from(warp) << 24 | u64::from(self.loads[w]);
        let seg = mix(key) & 0xffff_ff80;
        // 256-byte channel interleave, then banks, then rows (row = one page per chip pair).
        let ch = (seg >> 8) % u64::from(d.channels);
        let rest = (seg >> 8) / u64::from(d.channels);
        let per_row = u64::from(d.row_bytes / 256).max(1);
        let bank = ((rest / per_row) % u64::from(d.banks)) as u32;
        let row = (rest / per_row / u64::from(d.banks)) as u32;
        let req = Req {
            at: t + u64::from(d.base / 2),
            id: self.next_id,
            warp,
            sw,
            bank,
            row,
        };
        self.next_id += 1;
        self.channels[ch as usize].queue.push(req);
    }

    /// Serves what the channels can start by cycle `t` (FR-FCFS: the oldest row hit on a free
    /// bank among the first `window` arrived requests, else the oldest on a free bank).
    fn advance(&mut self, t: u64) {
        let d = self.d.expect("dram loaded");
        let cores = u64::from(d.cores);
        let (burst, cl, miss) = (
            d.core_cycles(d.t_burst),
            d.core_cycles(d.t_cl),
            d.core_cycles(d.t_rp_rcd),
        );
        let back = u64::from(d.base - d.base / 2);
        for c in &mut self.channels {
            while c.bus_free <= t {
                let window = c.queue.iter().take(d.window as usize);
                let ready = |r: &&Req| r.at <= t && c.bank_free[r.bank as usize] <= t;
                let hit = window
                    .clone()
                    .position(|r| ready(&r) && c.open_row[r.bank as usize] == Some(r.row));
                let Some(i) = hit.or_else(|| window.clone().position(|r| ready(&r))) else {
                    break;
                };
                let r = c.queue.remove(i);
                let b = r.bank as usize;
                let is_hit = hit.is_some();
                let open = if is_hit { 0 } else { miss };
                if is_hit {
                    self.row_hits += 1;
                } else {
                    self.row_misses += 1;
                }
                c.open_row[b] = Some(r.row);
                // The SM's 1/cores share: the bank and the bus are busy `cores` times as long.
                c.bank_free[b] = t + (open + burst) * cores;
                c.bus_free = t + burst * cores;
                let w = r.warp as usize;
                let ret = (t + open + cl + burst + back).max(self.last[w]);
                self.last[w] = ret;
                self.done.push((ret, r.id, r.warp, r.sw));
            }
        }
    }

    /// The return due by `t` with the least (cycle, id), if any.
    fn pop(&mut self, t: u64) -> Option<(u32, u32)> {
        self.advance(t);
        let (i, _) = self
            .done
            .iter()
            .enumerate()
            .filter(|(_, x)| x.0 <= t)
            .min_by_key(|(_, x)| (x.0, x.1))?;
        let (_, _, w, sw) = self.done.swap_remove(i);
        Some((w, sw))
    }

    fn is_empty(&self) -> bool {
        self.done.is_empty() && self.channels.iter().all(|c| c.queue.is_empty())
    }
}

/// The return path of `p.gmem_return`.
#[derive(Clone, Debug, Default)]
pub struct GmemPath {
    latency: u64,
    /// Fixed latency: (first cycle it may be presented, warp, sw).
    fifo: VecDeque<(u64, u32, u32)>,
    dram: Option<DramModel>,
}

impl GmemPath {
    /// An empty path for `p` (kernel start), storage for W·S outstanding subwarps.
    pub fn new(p: &SmParams) -> GmemPath {
        let mut g = GmemPath::default();
        g.load(p);
        g
    }

    /// Empties the path for a kernel of `p`, keeping the storage.
    pub fn load(&mut self, p: &SmParams) {
        let (w, s) = (p.warps as usize, p.pipe.subwarps as usize);
        self.fifo.clear();
        self.fifo.reserve(w * s);
        self.latency = 0;
        match p.gmem_return {
            GmemReturn::Icnt(lat) => self.latency = u64::from(lat),
            GmemReturn::Dram(d) => self
                .dram
                .get_or_insert_with(DramModel::default)
                .load(d, w, s),
            GmemReturn::AtWriteback => {}
        }
        if !matches!(p.gmem_return, GmemReturn::Dram(_)) {
            self.dram = None;
        }
    }

    /// A GLD subwarp leaves MEM_last at cycle `t`.
    pub fn request(&mut self, t: u64, warp: u32, sw: u32) {
        match &mut self.dram {
            Some(d) => d.request(t, warp, sw),
            None => self.fifo.push_back((t + self.latency, warp, sw)),
        }
    }

    /// The return presented at cycle `t` (at most one per cycle).
    pub fn pop(&mut self, t: u64) -> Option<(u32, u32)> {
        if let Some(d) = &mut self.dram {
            return d.pop(t);
        }
        match self.fifo.front() {
            Some(&(at, w, sw)) if at <= t => {
                self.fifo.pop_front();
                Some((w, sw))
            }
            _ => None,
        }
    }

    /// Nothing outstanding.
    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty() && self.dram.as_ref().is_none_or(DramModel::is_empty)
    }

    /// (row hits, row misses) served by the DRAM model (0, 0 for the FIFO).
    pub fn row_stats(&self) -> (u64, u64) {
        self.dram
            .as_ref()
            .map_or((0, 0), |d| (d.row_hits, d.row_misses))
    }
}
