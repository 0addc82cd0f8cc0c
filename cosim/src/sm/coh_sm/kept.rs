//! The stall planes kept at the model's events (docs/stall-inspector.md §7.5, §10.8): with a
//! probe attached, each SM keeps one bit per warp per predicate, so a cycle costs the probe a
//! few word operations, not a read of every warp's view (T-f).
//!
//! A warp's own predicates (`active`, `inst_avail`, `sync_wait`, `haz_load`, `haz_comp`,
//! `is_mem`) change only at its events (issue, a load part, an atomic's return, a release or
//! barrier ending, its exit), marked dirty there, or when time alone ends a fetch redirect or a
//! compute hazard (`until`). A dirty warp's bits are taken from the view the issue stage just
//! computed. The SM-wide parts are composed each cycle from word masks: `ms_block` from the
//! LSU register (every memory head sees its reason) or a release flush (stores:
//! PENDING_RELEASE), `fu_block` from each unit's busy cycle and the warps whose head uses it.
//! `tests/coh_sm.rs` checks the kept planes against the views every cycle on random programs.

use super::params::REGS;
use super::prog::UNITS;
use super::sm::Sm;
use super::view::{reason, WarpView};
use crate::blocks::stall_inspector::Planes;

/// No compute unit (a warp's `units` entry).
const NO_UNIT: u8 = UNITS as u8;

/// One SM's planes as its events left them, and the SM-wide inputs of this cycle.
#[derive(Clone, Debug)]
pub struct Kept {
    /// Each warp's own predicates as last taken; `ms_block` holds the warps whose memory
    /// head is a store (PENDING_RELEASE during a release flush), `fu_block` nothing.
    own: Planes,
    /// Each warp's bits in `own`, packed (`active` … `is_mem`, then the store head), and
    /// its head's compute unit.
    bits: Vec<u8>,
    units: Vec<u8>,
    /// Per compute unit, the warps whose head uses it.
    unit: [u128; UNITS],
    /// Warps with an event since the last issue stage.
    dirty: u128,
    /// Warps whose bits change by time alone, in cycle `until[w]`.
    timed: u128,
    until: Vec<u64>,
    /// At most the least `until` of `timed`.
    next: u64,
    /// This cycle's SM-wide inputs: which warps the LSU blocks (0 none, 1 memory heads,
    /// 2 store heads), their reason, the compute units busy (a bit each).
    blocks: u8,
    reason: u8,
    busy: u8,
    /// Changes whenever this cycle's planes or blocks may differ from the last cycle's.
    gen: u64,
}

impl Kept {
    /// For `nw` warp slots, every one to be taken at the next issue stage.
    pub(super) fn new(nw: usize) -> Kept {
        Kept {
            own: Planes::default(),
            bits: vec![0; nw],
            units: vec![NO_UNIT; nw],
            unit: [0; UNITS],
            dirty: u128::MAX >> (128 - nw),
            timed: 0,
            until: vec![u64::MAX; nw],
            next: u64::MAX,
            blocks: 0,
            reason: reason::NONE,
            busy: 0,
            gen: 0,
        }
    }

    /// Warp `w` had an event.
    #[inline]
    pub(super) fn touch(&mut self, w: usize) {
        self.dirty |= 1 << w;
    }

    /// The planes of the last cycle's issue stage, `ms_block` included.
    #[inline]
    pub fn planes(&self) -> Planes {
        let ms_block = match self.blocks {
            0 => 0,
            1 => self.own.is_mem,
            _ => self.own.ms_block,
        };
        let mut fu_block = 0;
        for (u, m) in self.unit.iter().enumerate() {
            if self.busy >> u & 1 == 1 {
                fu_block |= m;
            }
        }
        Planes {
            ms_block,
            fu_block,
            ..self.own
        }
    }

    /// The LSU reason of the last cycle's `ms_block` warps (one a cycle in this model).
    #[inline]
    pub fn reason(&self) -> u8 {
        self.reason
    }

    /// Whether warp `w` had a load hazard in the last cycle.
    #[inline]
    pub fn haz_load(&self, w: usize) -> bool {
        self.bits.get(w).is_some_and(|b| b >> 3 & 1 == 1)
    }

    /// A summary of the last cycle's planes and blocks: equal keys of two cycles in a row
    /// mean equal planes and blocks (`Stalls::repeat_keyed`).
    #[inline]
    pub fn key(&self) -> [u64; 5] {
        [self.gen, 0, 0, 0, 0]
    }

    /// Warp `w`'s bits from its view `v`, whether its memory head is a store, its head's
    /// unit and the cycle its bits change by time alone (module doc). Only the changed bits
    /// are written.
    #[inline]
    fn take(&mut self, w: usize, v: &WarpView, store: bool, unit: u8, until: u64) {
        let packed = u8::from(v.active)
            | u8::from(v.inst_avail) << 1
            | u8::from(v.sync_wait) << 2
            | u8::from(v.haz_load) << 3
            | u8::from(v.haz_comp) << 4
            | u8::from(v.is_mem) << 5
            | u8::from(store) << 6;
        let mut diff = self.bits[w] ^ packed;
        let old = self.units[w];
        let timed = until != u64::MAX;
        if diff == 0 && old == unit && !timed && self.until[w] == u64::MAX {
            return;
        }
        let bit = 1u128 << w;
        if diff != 0 {
            self.bits[w] = packed;
            self.gen += 1;
            let pl = &mut self.own;
            while diff != 0 {
                let k = diff.trailing_zeros();
                diff &= diff - 1;
                *match k {
                    0 => &mut pl.active,
                    1 => &mut pl.inst_avail,
                    2 => &mut pl.sync_wait,
                    3 => &mut pl.haz_load,
                    4 => &mut pl.haz_comp,
                    5 => &mut pl.is_mem,
                    _ => &mut pl.ms_block,
                } ^= bit;
            }
        }
        if old != unit {
            if old != NO_UNIT {
                self.unit[old as usize] &= !bit;
            }
            if unit != NO_UNIT {
                self.unit[unit as usize] |= bit;
            }
            self.units[w] = unit;
            self.gen += 1;
        }
        self.until[w] = until;
        if timed {
            self.timed |= bit;
            self.next = self.next.min(until);
        } else {
            self.timed &= !bit;
        }
    }
}

impl Sm {
    /// Warp `w` had an event: its bits are taken again at the next issue stage.
    #[inline]
    pub(super) fn touch(&mut self, w: usize) {
        if let Some(k) = self.kept.as_deref_mut() {
            k.touch(w);
        }
    }

    /// Every warp had an event (a release flush or a barrier ended).
    pub(super) fn touch_all(&mut self) {
        if let Some(k) = self.kept.as_deref_mut() {
            k.dirty = u128::MAX >> (128 - self.warps.len());
        }
    }

    /// Cycle `t`'s planes, after the issue stage's views and before its pick (module doc).
    pub(super) fn keep_planes(&mut self, t: u64) {
        let Sm {
            kept,
            view,
            warps,
            progs,
            lsu,
            lsu_reason,
            rel_active,
            pipe_free,
            ..
        } = self;
        let Some(k) = kept.as_deref_mut() else {
            return;
        };
        let mut due = std::mem::take(&mut k.dirty);
        if t >= k.next {
            k.next = u64::MAX;
            let mut timed = k.timed;
            while timed != 0 {
                let w = timed.trailing_zeros() as usize;
                timed &= timed - 1;
                if k.until[w] <= t {
                    due |= 1 << w;
                } else {
                    k.next = k.next.min(k.until[w]);
                }
            }
        }
        while due != 0 {
            let w = due.trailing_zeros() as usize;
            due &= due - 1;
            let v = &view.warps[w];
            let warp = &warps[w];
            if !warp.live {
                k.take(w, v, false, NO_UNIT, u64::MAX);
                continue;
            }
            if t < warp.fetch_at {
                k.take(w, v, false, NO_UNIT, warp.fetch_at);
                continue;
            }
            let Some(op) = progs[w].get(warp.pc) else {
                k.take(w, v, false, NO_UNIT, u64::MAX);
                continue;
            };
            let until = if v.haz_comp {
                let regs = op.regs().into_iter().filter(|&r| (r as usize) < REGS);
                regs.map(|r| warp.comp_ready[r as usize])
                    .max()
                    .unwrap_or(u64::MAX)
            } else {
                u64::MAX
            };
            let unit = op.unit().map_or(NO_UNIT, |u| u as u8);
            k.take(w, v, v.is_mem && op.is_store(), unit, until);
        }
        let (blocks, why) = if lsu.is_some() {
            (1, *lsu_reason)
        } else if *rel_active {
            (2, reason::PENDING_RELEASE)
        } else {
            (0, reason::NONE)
        };
        let busy = (0..UNITS).fold(0u8, |m, u| m | u8::from(pipe_free[u] > t) << u);
        if (blocks, why, busy) != (k.blocks, k.reason, k.busy) {
            (k.blocks, k.reason, k.busy) = (blocks, why, busy);
            k.gen += 1;
        }
    }
}
