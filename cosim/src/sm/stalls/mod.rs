//! SM-level stall accounting (docs/stall-inspector.md §5; spec §3, seed 003 §IV): the probe an
//! SM model fills with its warps' §4.2 predicates every cycle, from the state its own issue
//! logic uses, and steps once per cycle. The probe runs the inspector model [`Gsi`] (the
//! exclusive stack of Alg. 1 / Alg. 2), a check beside it (the `stall_inspector` RTL in the
//! loop, [`StallCheck`]) and, model-only (item 4 of issue 24): GCStack's fractional stack,
//! snapshots every K cycles and the classification per instruction (PC).
//!
//! The probe only observes (I8): a model with a probe attached runs the same cycles. Nothing
//! allocates per cycle unless snapshots or the per-PC table are asked for. The predicates are
//! bit planes ([`Planes`]) a model keeps at its own events, so a cycle costs a few word
//! operations whatever the number of warps (spec §7.3 T-f, docs/stall-inspector.md §7.5).

use crate::blocks::stall_inspector::{
    ready_of, Class, CycleIn, CycleOut, Evaluation, Gsi, Params, Planes, WarpPreds, Writeback,
};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The classes in code order (index = [`Class::code`]).
pub const CLASSES: [Class; 8] = Class::ALL;

/// A check beside the inspector model every cycle: the `stall_inspector` RTL in the loop.
pub trait StallCheck {
    /// Cycle `t`: its inputs, the model's outputs (`gsi` in its start-of-cycle state, its
    /// [`Gsi::wcls_of`] this cycle's). The first difference, as one line.
    fn cycle(
        &mut self,
        t: u64,
        warps: &[WarpPreds],
        c: &CycleIn,
        o: &CycleOut,
        gsi: &Gsi,
    ) -> Result<(), String>;
    /// After the last cycle: the read-out map against `gsi`'s counters.
    fn finish(&mut self, gsi: &Gsi) -> Result<(), String>;
}

/// What a probe keeps beyond the exclusive counters (all model-only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StallOptions {
    /// Snapshot the stacks every this many cycles (0: none).
    pub every: u64,
    /// Charge each cycle's class to the PC of the warp it was taken from.
    pub per_pc: bool,
    /// Check the planes a model keeps at its events against its per-warp derivation every
    /// cycle (a test of the model's bookkeeping; slow).
    pub audit: bool,
}

/// The most reason groups of a cycle ([`Stalls::block`]).
const GROUPS: usize = 4;

/// The final writebacks of a cycle the probe chooses among (more: the least blamed drop out).
const FINALS: usize = 8;
const NO_WB: Writeback = Writeback {
    warp: 0,
    src: 0,
    is_final: false,
};

/// The most stall states kept for a model's key to meet again ([`Stalls::repeat_cached`]).
const STATES: usize = 8;

/// A stall state kept: the model's key, the cycle's inputs and outputs, the inspector's
/// evaluation.
type State = (Key, CycleIn, CycleOut, Evaluation);

/// The stacks at the end of a window of cycles (cumulative from cycle 0); serialised as the
/// stall study's result cache keeps it (docs/stall-inspector.md §11.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Cycles counted up to here.
    pub cycle: u64,
    pub top: [u64; 8],
    pub md_sub: [u64; 8],
    pub ms_sub: [u64; 8],
    pub fractional: [f64; 8],
}

/// Predicates kept at a model's events (docs/stall-inspector.md §7.5): each warp's bits as of
/// its last event, and its compute hazard, which ends by itself at a known cycle, on a timing
/// wheel. [`Tracked::latch`] gives the planes of a cycle in a few word operations.
#[derive(Clone, Debug, Default)]
struct Tracked {
    planes: Planes,
    /// Each warp's compute hazard holds in cycles before this one.
    until: Vec<u64>,
    /// Each warp's predicates but `haz_comp` as in `planes`, packed ([`Planes::packed`]): an
    /// event that changes none of them writes no plane.
    bits: Vec<u8>,
    /// `wheel[x % len]`: the warps whose compute hazard ends at cycle x.
    wheel: Vec<u128>,
    /// The first cycle not latched yet.
    next: u64,
}

impl Tracked {
    fn new(nw: usize, horizon: u64, next: u64) -> Tracked {
        Tracked {
            planes: Planes::default(),
            until: vec![0; nw],
            bits: vec![0; nw],
            wheel: vec![0; horizon.max(1).next_power_of_two() as usize],
            next,
        }
    }

    fn slot(&self, x: u64) -> usize {
        (x & (self.wheel.len() as u64 - 1)) as usize
    }

    /// Warp `w` after an event: its predicates `p` (its `haz_comp` is not read) and the cycle
    /// its compute hazard lasts until (exclusive; at most the horizon ahead).
    fn set(&mut self, w: usize, p: &WarpPreds, comp_until: u64) {
        let bit = 1u128 << w;
        let old = self.until[w];
        if old >= self.next {
            let i = self.slot(old);
            self.wheel[i] &= !bit;
        }
        let pending = comp_until >= self.next;
        if pending {
            assert!(
                comp_until - self.next < self.wheel.len() as u64,
                "a compute hazard beyond the probe's horizon"
            );
            let i = self.slot(comp_until);
            self.wheel[i] |= bit;
        }
        const HAZ_COMP: u8 = 1 << 4;
        let packed = Planes::packed(p) & !HAZ_COMP;
        let diff = self.bits[w] ^ packed;
        if diff != 0 {
            self.bits[w] = packed;
            self.planes.flip(diff, bit);
        }
        // The wheel clears `haz_comp` in the planes alone: it is written every time.
        let on = bit & u128::from(pending).wrapping_neg();
        self.planes.haz_comp = self.planes.haz_comp & !bit | on;
        self.until[w] = comp_until;
    }

    /// The planes of cycle `t` (cycles latch in order): the hazards ending by `t` expire.
    fn latch(&mut self, t: u64) -> Planes {
        let n = self.wheel.len() as u64;
        for x in self.next..=t.min(self.next + n - 1) {
            let i = self.slot(x);
            self.planes.haz_comp &= !self.wheel[i];
            self.wheel[i] = 0;
        }
        self.next = t + 1;
        self.planes
    }
}

/// The probe: the inspector, this cycle's predicates (the system writes them), and what is
/// kept beside the counters.
pub struct Stalls {
    gsi: Gsi,
    planes: Planes,
    /// This cycle's memory-structural blocks: (warps, their LSU reason), from [`Stalls::block`].
    groups: [(u128, u8); GROUPS],
    n_groups: usize,
    /// Each warp's head PC this cycle (a system's own key: kernel and PC packed).
    pcs: Vec<u64>,
    /// This cycle's final writebacks (the inspector takes one, [`Stalls::writeback`]) and its
    /// first other one.
    finals: [Writeback; FINALS],
    n_finals: usize,
    other: Option<Writeback>,
    opts: StallOptions,
    /// Whether cycles may be counted without their classes: nothing reads them (no check, no
    /// per-PC table, no audit, no warp counters). Fixed when the probe is built.
    batch: bool,
    t: u64,
    /// The next cycle count at which a snapshot is taken (`u64::MAX`: none).
    next_snapshot: u64,
    /// GCStack's stack kept exactly: `split[n][c]` = warps of class c summed over the stall
    /// cycles with n warps active; whole cycles (NO_STALL, IDLE) in `whole`.
    split: Vec<[u64; 8]>,
    whole: [u64; 8],
    /// Stall cycles not yet added to `split`, all with the classes of `run_gen`: `run_per`
    /// warps of each class.
    run: u64,
    run_gen: u64,
    run_per: [u32; 8],
    /// The predicates as structs, for a check or an audit.
    scratch: Vec<WarpPreds>,
    /// The predicates a model keeps at its events ([`Stalls::track_events`]).
    tracked: Tracked,
    /// The last counted stall cycle without writeback (its inputs and outputs), and how many
    /// cycles since repeated it exactly and are not yet on the inspector's counters. Issue
    /// cycles counted in a batch between them leave it in place: every edge of both batches
    /// is a clipped addition to counters or an OR into the status, so their order does not
    /// matter (nothing between them evaluates the inspector).
    last: Option<(CycleIn, CycleOut)>,
    repeats: u64,
    /// The model's summary of the last cycle's planes and blocks ([`Stalls::repeat_keyed`]).
    key: Option<Key>,
    /// Recent stall states by key, if kept ([`Stalls::keep_states`]), and the next to replace.
    states: Option<Vec<State>>,
    next_state: usize,
    /// Issue cycles counted but not yet on the inspector's counters, nor on `whole` and
    /// `issue_cycles` ([`Stalls::step_issue_unseen`]): cycles, instructions, whether one had no
    /// ready warp.
    pend: (u64, u64, bool),
    snapshots: Vec<Snapshot>,
    per_pc: HashMap<u64, [u64; 8]>,
    /// Final writebacks with blame beyond the one per cycle the inspector takes (spec §3.2 step
    /// 3): their blame stays with the warp until its next final writeback.
    collisions: u64,
    /// Cycles in which an instruction issued (I2, counted apart from the inspector).
    issue_cycles: u64,
    check: Option<Box<dyn StallCheck>>,
    error: Option<String>,
}

impl Stalls {
    /// A probe for the inspector `p` (validated), keeping what `opts` asks for.
    pub fn new(p: &Params, opts: StallOptions) -> Stalls {
        let nw = p.nw as usize;
        let mut gsi = Gsi::new(p);
        // The classes are read through the class masks, and only in stall cycles (a check
        // beside the model makes it eager again).
        gsi.keep_wcls(false);
        gsi.set_eager(false);
        let batch = !opts.per_pc && !opts.audit && gsi.batches_issue();
        Stalls {
            gsi,
            planes: Planes::default(),
            groups: [(0, 0); GROUPS],
            n_groups: 0,
            pcs: vec![0; nw],
            finals: [NO_WB; FINALS],
            n_finals: 0,
            other: None,
            opts,
            batch,
            t: 0,
            next_snapshot: if opts.every == 0 {
                u64::MAX
            } else {
                opts.every
            },
            split: vec![[0; 8]; nw + 1],
            whole: [0; 8],
            run: 0,
            run_gen: 0,
            run_per: [0; 8],
            scratch: vec![WarpPreds::default(); nw],
            tracked: Tracked::default(),
            last: None,
            repeats: 0,
            key: None,
            states: None,
            next_state: 0,
            pend: (0, 0, false),
            snapshots: vec![],
            per_pc: HashMap::new(),
            collisions: 0,
            issue_cycles: 0,
            check: None,
            error: None,
        }
    }

    /// Runs `check` beside the model every cycle from now on.
    pub fn with_check(mut self, check: Box<dyn StallCheck>) -> Stalls {
        self.check = Some(check);
        self.gsi.set_eager(true);
        self.batch = false;
        self
    }

    /// Warp slots.
    #[inline]
    pub fn nw(&self) -> usize {
        self.pcs.len()
    }

    /// This cycle's predicates, to be written by the system (a model keeping them at its
    /// events writes only what changed; `ms_block` through [`Stalls::block`]).
    pub fn planes_mut(&mut self) -> &mut Planes {
        &mut self.planes
    }

    /// This cycle's predicates.
    pub fn planes(&self) -> &Planes {
        &self.planes
    }

    /// Warps `mask` are blocked at the LSU this cycle for `reason` (spec §2.6); a warp keeps
    /// the first reason given for it. At most four reasons a cycle.
    pub fn block(&mut self, mask: u128, reason: u8) {
        let fresh = mask & !self.planes.ms_block;
        if fresh == 0 {
            return;
        }
        assert!(
            self.n_groups < GROUPS,
            "at most {GROUPS} LSU reasons a cycle"
        );
        self.groups[self.n_groups] = (fresh, reason);
        self.n_groups += 1;
        self.planes.ms_block |= fresh;
    }

    /// Warp `w`'s LSU reason this cycle (0 unless blocked).
    fn reason(&self, w: usize) -> u8 {
        reason_in(&self.groups[..self.n_groups], w)
    }

    /// The model keeps the predicates at its events from cycle `next` on ([`Stalls::track`],
    /// [`Stalls::latch`]): compute hazards last at most `horizon` cycles past the event.
    pub fn track_events(&mut self, horizon: u64, next: u64) {
        self.tracked = Tracked::new(self.nw(), horizon, next);
    }

    /// Warp `w` after one of the model's events: its predicates (`haz_comp` not read) and the
    /// cycle before which its compute hazard holds.
    pub fn track(&mut self, w: usize, p: &WarpPreds, comp_until: u64) {
        self.tracked.set(w, p, comp_until);
    }

    /// This cycle's (`t`) predicates are the ones kept at the events (`ms_block` and
    /// `fu_block` as the events left them, usually 0; blocks through [`Stalls::block`]).
    pub fn latch(&mut self, t: u64) {
        self.planes = self.tracked.latch(t);
    }

    /// Whether the planes are to be checked against the model's per-warp derivation.
    #[inline]
    pub fn audits(&self) -> bool {
        self.opts.audit
    }

    /// An audit's finding: the model's planes `kept` differ from its derivation `derived` in
    /// this cycle (the first difference is kept and fails [`Stalls::finish`]).
    pub fn audit(&mut self, kept: &Planes, derived: &Planes) {
        if self.error.is_some() {
            return;
        }
        let diff = kept
            .named()
            .into_iter()
            .zip(derived.named())
            .find(|(k, d)| k.1 != d.1);
        if let Some(((name, k), (_, d))) = diff {
            let w = (k ^ d).trailing_zeros();
            self.error = Some(format!(
                "stall probe audit, cycle {}: warp {w}'s {name} is {} as kept at the model's events, {} as derived from its state",
                self.t,
                k >> w & 1,
                d >> w & 1
            ));
        }
    }

    /// Each warp's head PC this cycle (used only with [`StallOptions::per_pc`]).
    pub fn pcs_mut(&mut self) -> &mut [u64] {
        &mut self.pcs
    }

    /// Whether PCs are used.
    #[inline]
    pub fn wants_pcs(&self) -> bool {
        self.opts.per_pc
    }

    /// Whether a model builds the planes at the start of every cycle: to audit them, or for
    /// the PCs of the per-PC table.
    #[inline]
    pub fn builds_at_start(&self) -> bool {
        self.opts.audit || self.opts.per_pc
    }

    /// A load writeback of this cycle. The inspector takes one per cycle (spec §3.2 step 3): a
    /// final one before any other, and among final ones the one that flushes the most blame
    /// (the warp's, plus this cycle's MEM_DATA charge; the first on a tie); a final one left
    /// out with blame is counted as a collision (its blame waits for the warp's next final
    /// writeback, so conservation holds).
    pub fn writeback(&mut self, wb: Writeback) {
        if !wb.is_final {
            // It moves no counter, blame or status (no flush, spec §3.2): only a check beside
            // the model sees it; without one the cycle is as without it (docs §7.5).
            if self.check.is_some() {
                self.other = self.other.or(Some(wb));
            }
            return;
        }
        if self.n_finals == FINALS {
            // Beyond the room of a cycle: the least blamed one drops out now.
            self.settle_repeats();
            let blame = |w: &Writeback| self.gsi.blame().get(w.warp).copied().unwrap_or(0);
            let (i, least) = (0..FINALS).fold((0, u64::MAX), |(i, b), j| {
                let bj = blame(&self.finals[j]);
                if bj < b {
                    (j, bj)
                } else {
                    (i, b)
                }
            });
            let drop = if blame(&wb) > least {
                self.finals[i]
            } else {
                wb
            };
            self.collisions += u64::from(blame(&drop) > 0);
            if blame(&wb) > least {
                self.finals[i] = wb;
            }
            return;
        }
        self.finals[self.n_finals] = wb;
        self.n_finals += 1;
    }

    /// The writeback the inspector takes this cycle (module doc of [`Stalls::writeback`]).
    fn chosen_writeback(&mut self, en: bool, n_issued: u64) -> Option<Writeback> {
        let n = std::mem::take(&mut self.n_finals);
        let other = self.other.take();
        if n <= 1 {
            return if n == 1 { Some(self.finals[0]) } else { other };
        }
        // This cycle's classes without a writeback: which warp MEM_DATA charges.
        let c = CycleIn {
            en,
            clear: false,
            n_issued,
            ldwb: None,
        };
        let groups = &self.groups[..self.n_groups];
        let o = self
            .gsi
            .evaluate_planes(&self.planes, |w| reason_in(groups, w), &c);
        let charged = |w: usize| en && o.cls == Class::MemData && o.md_sel == w;
        let amt = |w: &Writeback| {
            self.gsi.blame().get(w.warp).copied().unwrap_or(0) + u64::from(charged(w.warp))
        };
        let finals = &self.finals[..n];
        let best = (1..n).fold(0, |b, j| {
            if amt(&finals[j]) > amt(&finals[b]) {
                j
            } else {
                b
            }
        });
        let left = (0..n).filter(|&j| j != best && amt(&finals[j]) > 0).count();
        self.collisions += left as u64;
        Some(finals[best])
    }

    /// One counted cycle issuing `n_issued` (the predicates and writeback written before):
    /// the inspector's outputs, the check, the counters, then the model-only accounts.
    pub fn step(&mut self, n_issued: u64) {
        self.cycle(true, n_issued);
    }

    /// A counted cycle with `n_issued` issues whose planes the model did not build, knowing
    /// only whether any warp was ready: counted (`true`) when nothing needs this cycle's
    /// classes (no writeback, no check, no per-PC table, no audit, no warp counters), in a batch
    /// the inspector's counters take at the next other cycle; else `false` and nothing moved:
    /// build the planes and call [`Stalls::step`]. No block may have been given this cycle.
    #[inline]
    pub fn step_issue_unseen(&mut self, n_issued: u64, any_ready: bool) -> bool {
        if n_issued == 0 || !self.batch || self.n_finals != 0 || self.other.is_some() {
            return false;
        }
        debug_assert_eq!(self.n_groups, 0, "a cycle with blocks has planes");
        self.pend_issue(n_issued, any_ready);
        true
    }

    /// [`Stalls::step_issue_unseen`] for a cycle with one final load writeback `wb` (of a warp
    /// slot) besides, `haz_load` being its warp's load hazard this cycle: the batched cycles
    /// settle first (the flush reads the blame they charge), then the flush, and the cycle
    /// joins the next batch. The last stall cycle stays repeatable (its outputs do not read
    /// the blame). `false` and nothing moved where the classes are needed.
    #[inline]
    pub fn step_issue_final_unseen(
        &mut self,
        n_issued: u64,
        any_ready: bool,
        wb: &Writeback,
        haz_load: bool,
    ) -> bool {
        if n_issued == 0
            || !self.batch
            || self.n_finals != 0
            || self.other.is_some()
            || !wb.is_final
            || wb.warp >= self.nw()
        {
            return false;
        }
        debug_assert_eq!(self.n_groups, 0, "a cycle with blocks has planes");
        self.settle_repeats();
        self.gsi.flush_final(wb, haz_load);
        self.pend_issue(n_issued, any_ready);
        true
    }

    /// An issue cycle without writeback into the batch (`whole`, `issue_cycles` and the
    /// inspector's counters take it when the batch settles): its few edges, nothing else.
    #[inline]
    fn pend_issue(&mut self, n_issued: u64, any_ready: bool) {
        self.pend.0 += 1;
        self.pend.1 += n_issued;
        self.pend.2 |= !any_ready;
        self.t += 1;
        if self.t == self.next_snapshot {
            self.take_snapshot();
        }
    }

    /// A counted cycle without issue and without writeback whose planes and blocks the model
    /// summarises as `key` (equal keys mean equal planes and blocks): counted as the last
    /// stall cycle again, without the planes, when that cycle had this key and can repeat
    /// (`true`; issue cycles counted without planes may lie between; never with a per-PC
    /// table or an audit); else `false` and nothing moved: build the planes, block, call
    /// [`Stalls::step`], then [`Stalls::keep_key`].
    #[inline(always)]
    pub fn repeat_keyed(&mut self, key: Key) -> bool {
        // Word by word, without a call to `memcmp`.
        let same = self
            .key
            .is_some_and(|k| k.iter().zip(&key).fold(0, |d, (a, b)| d | a ^ b) == 0);
        let hit = same && self.n_finals == 0 && self.other.is_none() && self.n_groups == 0;
        if hit {
            self.repeat_last();
        }
        hit
    }

    /// [`Stalls::repeat_keyed`] for a cycle with one final load writeback `wb` (of a warp
    /// slot) besides, `haz_load` being its warp's load hazard this cycle: the repeat, the
    /// batched cycles settled, then the flush (it reads the blame the repeat charges), as
    /// [`Stalls::cycle`] splits it. `false` and nothing moved where it does not apply.
    #[inline]
    pub fn repeat_keyed_final(&mut self, key: Key, wb: &Writeback, haz_load: bool) -> bool {
        if !self.splits_final(wb) || !(self.repeat_keyed(key) || self.repeat_cached(key)) {
            return false;
        }
        self.settle_repeats();
        self.gsi.flush_final(wb, haz_load);
        true
    }

    /// Whether non-final writebacks are read (by a check beside the model); without one they
    /// change nothing and a model may leave them out ([`Stalls::writeback`]).
    #[inline]
    pub fn reads_nonfinal(&self) -> bool {
        self.check.is_some()
    }

    /// The key of the cycle just stepped ([`Stalls::repeat_keyed`]); with
    /// [`Stalls::keep_states`], the state is kept under it too.
    pub fn keep_key(&mut self, key: Key) {
        let repeatable = self.last.as_ref().is_some_and(|l| l.0.n_issued == 0);
        self.key = (self.batch && repeatable).then_some(key);
        if let (Some(states), Some(_), Some((c, o))) = (&mut self.states, self.key, self.last) {
            let st = (key, c, o, self.gsi.evaluation());
            if states.len() < STATES {
                states.push(st);
            } else {
                states[self.next_state] = st;
                self.next_state = (self.next_state + 1) % STATES;
            }
        }
    }

    /// From now on, the last few stall states are kept by key for [`Stalls::repeat_cached`]:
    /// for a model whose keys are its planes' content, where states come back (spin loops,
    /// docs/stall-inspector.md §7.5).
    pub fn keep_states(&mut self) {
        self.states = Some(Vec::with_capacity(STATES));
    }

    /// [`Stalls::repeat_keyed`] against the kept states ([`Stalls::keep_states`]): a cycle
    /// whose key is a kept state's is counted as that state again (the batched cycles settle,
    /// the inspector's evaluation is put back, the state is the last stall cycle); else
    /// `false` and nothing moved.
    pub fn repeat_cached(&mut self, key: Key) -> bool {
        if self.n_finals != 0 || self.other.is_some() || self.n_groups != 0 {
            return false;
        }
        // The first word first: most kept states differ there.
        let same = |k: &Key| k[0] == key[0] && k[1..] == key[1..];
        let Some(st) = self
            .states
            .as_ref()
            .and_then(|v| v.iter().find(|s| same(&s.0)))
        else {
            return false;
        };
        let (k, c, o, ev) = *st;
        self.settle_repeats();
        self.gsi.restore(&ev);
        self.last = Some((c, o));
        self.key = Some(k);
        self.repeat_last();
        true
    }

    /// A cycle, counted if `en` (an uncounted one only moves a flush, spec §4.3). The blocks
    /// of [`Stalls::block`] end with it.
    pub fn cycle(&mut self, en: bool, n_issued: u64) {
        let wb = self.finals[0];
        if en && self.n_finals == 1 && self.splits_final(&wb) {
            // One final writeback: the cycle's edge without it, then its flush (the flush reads
            // the blame this cycle charges; docs/stall-inspector.md §7.5). The cycle stays
            // repeatable.
            self.n_finals = 0;
            let had_hazard = self.planes.haz_load >> wb.warp & 1 == 1;
            self.cycle_plain(true, n_issued);
            self.settle_repeats();
            self.gsi.flush_final(&wb, had_hazard);
            return;
        }
        self.cycle_plain(en, n_issued);
    }

    /// Whether a cycle's one final writeback `wb` may be flushed after the cycle's edge
    /// without it: nothing reads the cycle's inputs (batches), a warp slot, no non-final one
    /// beside it and no snapshot at the cycle's end (it reads the flushed counters).
    #[inline]
    fn splits_final(&self, wb: &Writeback) -> bool {
        self.batch
            && wb.is_final
            && wb.warp < self.nw()
            && self.other.is_none()
            && self.t + 1 != self.next_snapshot
    }

    /// [`Stalls::cycle`] once its final writeback, if split, is out.
    fn cycle_plain(&mut self, en: bool, n_issued: u64) {
        self.key = None;
        if en && self.repeats_last(n_issued) {
            self.repeat_last();
            return;
        }
        if en && n_issued != 0 && self.batch && self.n_finals == 0 && self.other.is_none() {
            // The common cycle of a busy SM: NO_STALL, no writeback, into the batch.
            let any_ready = ready_of(&self.planes, self.nw()) != 0;
            self.planes.ms_block = 0;
            self.n_groups = 0;
            self.pend_issue(n_issued, any_ready);
            return;
        }
        self.settle_repeats();
        let c = CycleIn {
            en,
            clear: false,
            n_issued,
            ldwb: self.chosen_writeback(en, n_issued),
        };
        let groups = &self.groups[..self.n_groups];
        let reason = |w: usize| reason_in(groups, w);
        let o = self.gsi.evaluate_planes(&self.planes, reason, &c);
        if self.check.is_some() && self.error.is_none() {
            self.run_check(&c, &o);
        }
        if en {
            self.fractional(o.cls);
            if self.opts.per_pc {
                self.charge_pc(&o);
            }
        }
        self.gsi.update(&c, &o);
        self.last = (en && c.ldwb.is_none() && self.check.is_none()).then_some((c, o));
        if en {
            self.end_counted(n_issued != 0);
        } else {
            self.planes.ms_block = 0;
            self.n_groups = 0;
        }
    }

    /// The end of a counted cycle: this cycle's blocks go, the cycle counts, a snapshot is
    /// taken when due.
    #[inline]
    fn end_counted(&mut self, issued: bool) {
        self.planes.ms_block = 0;
        self.n_groups = 0;
        self.issue_cycles += u64::from(issued);
        self.t += 1;
        if self.t == self.next_snapshot {
            self.take_snapshot();
        }
    }

    /// The snapshot due at this cycle's end.
    #[cold]
    fn take_snapshot(&mut self) {
        self.next_snapshot += self.opts.every;
        self.settle();
        self.settle_repeats();
        self.snapshots.push(self.snapshot());
    }

    /// Whether this cycle is the last stall cycle again: no writeback, the same issue count, the
    /// same planes and the same LSU reason at `ms_sel` (so the same outputs, spec §4.3).
    fn repeats_last(&self, n_issued: u64) -> bool {
        let Some((c, o)) = &self.last else {
            return false;
        };
        self.n_finals == 0
            && self.other.is_none()
            && c.n_issued == n_issued
            && !self.gsi.planes_changed(&self.planes)
            && (o.cls != Class::MemStruct
                || reason_in(&self.groups[..self.n_groups], o.ms_sel) == self.gsi.sel_reason())
    }

    /// A repeated cycle: counted now, on the inspector's counters at the next other cycle.
    #[inline]
    fn repeat_last(&mut self) {
        let (n_issued, cls) = self
            .last
            .as_ref()
            .map_or((0, Class::Idle), |l| (l.0.n_issued, l.1.cls));
        self.repeats += 1;
        self.fractional(cls);
        if self.opts.per_pc {
            let o = self.last.as_ref().map(|l| l.1);
            if let Some(o) = o {
                self.charge_pc(&o);
            }
        }
        self.end_counted(n_issued != 0);
    }

    /// The batched cycles (repeats, issue cycles) onto the inspector's counters.
    fn settle_repeats(&mut self) {
        if self.pend.0 != 0 {
            let (k, n, not_ready) = std::mem::take(&mut self.pend);
            self.gsi.step_issues(k, n, not_ready);
            self.whole[Class::NoStall as usize] += k;
            self.issue_cycles += k;
        }
        if let (Some((c, o)), k @ 1..) = (&self.last, self.repeats) {
            self.gsi.repeat(c, o, k);
        }
        self.repeats = 0;
    }

    /// The check beside the model, on the predicates as structs.
    fn run_check(&mut self, c: &CycleIn, o: &CycleOut) {
        for w in 0..self.scratch.len() {
            self.scratch[w] = self.planes.warp(w, self.reason(w));
        }
        if let Some(check) = self.check.as_deref_mut() {
            if let Err(e) = check.cycle(self.t, &self.scratch, c, o, &self.gsi) {
                self.error = Some(e);
            }
        }
    }

    /// GCStack's rule (item 4): an issuing cycle is NO_STALL; otherwise the cycle is split
    /// equally over the active warps' classes (IDLE when none is active). Kept as integer
    /// sums per number of active warps: exact, and no division per cycle; stall cycles with
    /// the same classes are added up first.
    fn fractional(&mut self, cls: Class) {
        if cls == Class::NoStall || cls == Class::Idle {
            self.whole[cls as usize] += 1;
            return;
        }
        if self.gsi.generation() != self.run_gen {
            self.settle();
            self.run_gen = self.gsi.generation();
            // Active warps are never IDLE: the other classes split them.
            self.run_per = self.gsi.class_counts();
            self.run_per[Class::Idle as usize] = 0;
        }
        self.run += 1;
    }

    /// Adds the stall cycles counted since the classes last changed to `split`.
    fn settle(&mut self) {
        if self.run == 0 {
            return;
        }
        let per = self.run_per;
        let n: u32 = per.iter().sum();
        for (f, m) in self.split[n as usize].iter_mut().zip(per) {
            *f += u64::from(m) * self.run;
        }
        self.run = 0;
    }

    /// The fractional stack so far (after [`Stalls::settle`]).
    fn fractional_stack(&self) -> [f64; 8] {
        let mut f = self.whole.map(|x| x as f64);
        for (n, row) in self.split.iter().enumerate().skip(1) {
            for (x, &m) in f.iter_mut().zip(row) {
                *x += m as f64 / n as f64;
            }
        }
        f
    }

    /// The cycle's class charged to the PC of the warp it came from: `md_sel` / `ms_sel` for
    /// the memory classes, else the lowest warp of that class (none for IDLE, nor for an issue
    /// with no warp ready: the status bit ISSUED_NOT_READY).
    fn charge_pc(&mut self, o: &CycleOut) {
        let w = match o.cls {
            Class::MemData => Some(o.md_sel),
            Class::MemStruct => Some(o.ms_sel),
            Class::Idle => None,
            cls => {
                // A cycle with issue may skip the classification: its ready warps are kept.
                let m = match cls {
                    Class::NoStall => self.gsi.ready_mask(),
                    cls => self.gsi.class_mask(cls),
                };
                (m != 0).then(|| m.trailing_zeros() as usize)
            }
        };
        if let Some(w) = w {
            self.per_pc.entry(self.pcs[w]).or_insert([0; 8])[o.cls as usize] += 1;
        }
    }

    fn snapshot(&self) -> Snapshot {
        let g = &self.gsi;
        Snapshot {
            cycle: self.t,
            top: CLASSES.map(|c| g.top(c)),
            md_sub: std::array::from_fn(|s| g.md_sub(s as u64)),
            ms_sub: std::array::from_fn(|r| g.ms_sub(r as u64)),
            fractional: self.fractional_stack(),
        }
    }

    /// After the last cycle: the check's read-out, and the breakdown.
    pub fn finish(mut self) -> Result<Breakdown, String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.settle_repeats();
        if let Some(check) = self.check.as_deref_mut() {
            check.finish(&self.gsi)?;
        }
        self.settle();
        let last = self.snapshot();
        let mut per_pc: Vec<(u64, [u64; 8])> = self.per_pc.into_iter().collect();
        per_pc.sort_unstable_by_key(|e| e.0);
        Ok(Breakdown {
            nw: self.gsi.params().nw,
            cyc_total: self.gsi.cyc_total(),
            inst_issued: self.gsi.inst_issued(),
            status: self.gsi.status(),
            blame_pending: self.gsi.blame().iter().sum(),
            collisions: self.collisions,
            issue_cycles: self.issue_cycles,
            totals: last,
            snapshots: self.snapshots,
            per_pc,
            checked: self.check.is_some(),
        })
    }
}

/// The stall breakdown of a run (docs/stall-inspector.md §5).
#[derive(Clone, Debug, PartialEq)]
pub struct Breakdown {
    /// Warp slots of the inspector.
    pub nw: u32,
    pub cyc_total: u64,
    pub inst_issued: u64,
    /// The inspector's sticky status bits.
    pub status: u8,
    /// MEM_DATA cycles blamed on warps whose final writeback had not come by the end.
    pub blame_pending: u64,
    /// Final writebacks with blame beyond one per cycle (their blame rolled into the warp's
    /// next one).
    pub collisions: u64,
    /// Cycles in which an instruction issued, counted beside the inspector.
    pub issue_cycles: u64,
    /// The stacks over the whole run.
    pub totals: Snapshot,
    /// The stacks every K cycles (cumulative), if asked.
    pub snapshots: Vec<Snapshot>,
    /// Per PC key: cycles of each class charged to it, by key, if asked.
    pub per_pc: Vec<(u64, [u64; 8])>,
    /// Whether a check (the RTL) ran beside the model and agreed.
    pub checked: bool,
}

impl Breakdown {
    /// The conservation checks of spec §7.1 (I1, I2, I4, I5 with the blame still pending at
    /// the end): each as (statement, left side, right side).
    pub fn conservation(&self) -> [(&'static str, u64, u64); 4] {
        let s = &self.totals;
        let stalls: u64 = s.top[1..].iter().sum();
        let md: u64 = s.md_sub.iter().sum::<u64>() + self.blame_pending;
        let ms: u64 = s.ms_sub.iter().sum();
        [
            (
                "sum of stall classes = cycles without issue",
                stalls,
                self.cyc_total - self.issue_cycles,
            ),
            (
                "NO_STALL = cycles with issue",
                s.top[Class::NoStall as usize],
                self.issue_cycles,
            ),
            (
                "sum of memory-data sources + blame pending = MEM_DATA",
                md,
                s.top[Class::MemData as usize],
            ),
            (
                "sum of memory-structural reasons = MEM_STRUCT",
                ms,
                s.top[Class::MemStruct as usize],
            ),
        ]
    }

    /// Whether every conservation check holds and no status bit is set.
    pub fn conserved(&self) -> bool {
        self.status == 0 && self.conservation().iter().all(|(_, a, b)| a == b)
    }
}

/// A model's summary of a cycle's planes and blocks ([`Stalls::repeat_keyed`]).
pub type Key = [u64; 5];

/// A model's place for a probe: a clone of the model carries none (a check beside the model
/// belongs to one run), and `Debug` shows only whether one is attached.
#[derive(Default)]
pub struct ProbeSlot(pub Option<Box<Stalls>>);

impl Clone for ProbeSlot {
    fn clone(&self) -> ProbeSlot {
        ProbeSlot(None)
    }
}

impl std::fmt::Debug for ProbeSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ProbeSlot({})",
            if self.0.is_some() { "attached" } else { "none" }
        )
    }
}

/// Warp `w`'s reason among this cycle's blocks (0 if in none).
fn reason_in(groups: &[(u128, u8)], w: usize) -> u8 {
    let bit = 1u128 << w;
    groups.iter().find(|g| g.0 & bit != 0).map_or(0, |g| g.1)
}

#[cfg(test)]
mod tests;
