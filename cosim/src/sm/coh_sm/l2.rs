//! The shared L2 (docs/stall-inspector.md §10.3; spec §6): 16 banks, one per node of the 4×4
//! mesh (line `l` in bank `l mod 16`), set-associative with LRU, the DeNovo owner of each line,
//! one request accepted per bank per cycle. It answers with the time the data reaches the
//! requester and the §2.5 source of whoever supplied it. Memory has no bandwidth limit
//! (project decision).

use super::params::{CohParams, L2_BANKS};
use super::view::src;

/// No owner.
const NOBODY: u8 = u8::MAX;

/// What a request asks of the L2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A read (L1 miss, stash fill, DMA into the scratchpad).
    Read,
    /// A write-through or DMA write of a line (no fetch: lines are written whole; project
    /// decision).
    Write,
    /// DeNovo ownership registration of a line (no fetch).
    Own,
    /// An atomic, performed at the L2 (revokes ownership).
    Atomic,
}

/// The L2's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Served {
    /// Cycle the response reaches the requester.
    pub due: u64,
    /// §2.5 source.
    pub src: u8,
    /// An SM that lost ownership of the line (registration by another SM, an atomic, a write
    /// or an L2 eviction); the caller drops it from that SM's owned lines.
    pub revoked: Option<(u8, u64)>,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    tag: u64,
    valid: bool,
    owner: u8,
    lru: u64,
    /// Cycle the line's memory fill reaches its first requester.
    ready: u64,
}

/// The banked L2.
pub struct L2 {
    sets: usize,
    ways: usize,
    e: Vec<Entry>,
    clock: u64,
    bank_free: [u64; L2_BANKS as usize],
}

impl L2 {
    pub fn new(p: &CohParams) -> L2 {
        let (sets, ways) = (p.l2_sets as usize, p.l2_ways as usize);
        let empty = Entry {
            tag: 0,
            valid: false,
            owner: NOBODY,
            lru: 0,
            ready: 0,
        };
        L2 {
            sets,
            ways,
            e: vec![empty; L2_BANKS as usize * sets * ways],
            clock: 0,
            bank_free: [0; L2_BANKS as usize],
        }
    }

    /// The bank of `line`.
    pub fn bank(line: u64) -> u32 {
        (line % u64::from(L2_BANKS)) as u32
    }

    fn set_base(&self, line: u64) -> usize {
        let bank = Self::bank(line) as usize;
        let set = (line / u64::from(L2_BANKS)) as usize % self.sets;
        (bank * self.sets + set) * self.ways
    }

    /// The DeNovo owner of `line`, if any.
    pub fn owner(&self, line: u64) -> Option<u8> {
        let b = self.set_base(line);
        self.e[b..b + self.ways]
            .iter()
            .find(|x| x.valid && x.tag == line && x.owner != NOBODY)
            .map(|x| x.owner)
    }

    /// Drops `sm`'s registration of `line` (its owned lines evicted it; written back without
    /// timing: project decision).
    pub fn disown(&mut self, line: u64, sm: u8) {
        let b = self.set_base(line);
        if let Some(x) = self.e[b..b + self.ways]
            .iter_mut()
            .find(|x| x.valid && x.tag == line && x.owner == sm)
        {
            x.owner = NOBODY;
        }
    }

    /// Request `kind` for `line` from SM `sm` (at mesh node `sm`), sent in cycle `t`.
    pub fn access(&mut self, p: &CohParams, t: u64, sm: u8, line: u64, kind: Kind) -> Served {
        let bank = Self::bank(line);
        let bf = &mut self.bank_free[bank as usize];
        let start = t.max(*bf);
        *bf = start + 1;
        let h = CohParams::hops(u32::from(sm), bank);
        self.clock += 1;
        let base = self.set_base(line);
        let ways = base..base + self.ways;
        let hit = ways
            .clone()
            .find(|&i| self.e[i].valid && self.e[i].tag == line);
        let (i, revoked, served) = match hit {
            Some(i) => (i, None, self.hit(p, i, start, sm, h, bank, kind)),
            None => {
                let v = self.victim(ways);
                let old = self.e[v];
                let revoked = (old.valid && old.owner != NOBODY).then_some((old.owner, old.tag));
                let fetch = matches!(kind, Kind::Read | Kind::Atomic);
                let (due, s) = if fetch {
                    (start + p.mem_latency(h), src::MAIN_MEM)
                } else {
                    (start + p.l2_latency(h), src::L2)
                };
                self.e[v] = Entry {
                    tag: line,
                    valid: true,
                    owner: NOBODY,
                    lru: 0,
                    ready: if fetch { due } else { 0 },
                };
                (v, revoked, (due, s, None))
            }
        };
        self.e[i].lru = self.clock;
        if kind == Kind::Own {
            self.e[i].owner = sm;
        }
        let (due, s, r) = served;
        Served {
            due,
            src: s,
            revoked: r.or(revoked),
        }
    }

    /// A hit on entry `i`: forwarded to the owner, waiting for a fill, or served here.
    #[allow(clippy::too_many_arguments)]
    fn hit(
        &mut self,
        p: &CohParams,
        i: usize,
        start: u64,
        sm: u8,
        h: u32,
        bank: u32,
        kind: Kind,
    ) -> (u64, u8, Option<(u8, u64)>) {
        let x = self.e[i];
        if x.owner != NOBODY && x.owner != sm {
            let due = start + p.remote_latency(u32::from(sm), bank, u32::from(x.owner));
            // A read leaves the owner in place; anything else takes the line from it.
            let revoked = (kind != Kind::Read).then_some((x.owner, x.tag));
            if revoked.is_some() {
                self.e[i].owner = NOBODY;
            }
            return (due, src::REMOTE_L1, revoked);
        }
        let due = start + p.l2_latency(h);
        if x.ready > due && matches!(kind, Kind::Read | Kind::Atomic) {
            (x.ready, src::MAIN_MEM, None)
        } else {
            (due, src::L2, None)
        }
    }

    /// An invalid way, else the least recently used unowned one, else the least recently used.
    fn victim(&self, ways: std::ops::Range<usize>) -> usize {
        ways.clone()
            .find(|&i| !self.e[i].valid)
            .or_else(|| {
                ways.clone()
                    .filter(|&i| self.e[i].owner == NOBODY)
                    .min_by_key(|&i| self.e[i].lru)
            })
            .or_else(|| ways.clone().min_by_key(|&i| self.e[i].lru))
            .expect("an L2 set has ways")
    }
}
