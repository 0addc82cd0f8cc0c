//! Behavioral model of the `StallInspector` (docs/stall-inspector.md §1–§3; spec §4.3), written
//! from the per-cycle pseudo-code with plain integers, independently of the RTL.
//!
//! [`Gsi`] is the typed inspector an SM model drives (docs §3.7): per cycle it takes each warp
//! slot's predicates ([`WarpPreds`]) and the SM's cycle inputs ([`CycleIn`]), returns what the
//! block's outputs say ([`CycleOut`]) and updates its counters; [`Gsi::read`] is the read-out
//! map. [`Model`] puts it on the block's ports for co-simulation. Nothing allocates per cycle.

use crate::{BlockModel, Layout, Simulator};
use smrtl_hdl::blocks::stall_inspector::port::{Inputs, Io, Outputs};
pub use smrtl_hdl::blocks::stall_inspector::{addr, reason, src, status, Class, Params};

/// One warp slot's predicates in a cycle (docs §3.2): what the issue stage sees of its head
/// instruction, from the start-of-cycle state. `repr(C)`: the eight predicates are its first
/// eight bytes (a model packs them with one load, docs/stall-inspector.md §10.8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct WarpPreds {
    pub active: bool,
    pub inst_avail: bool,
    pub sync_wait: bool,
    pub haz_load: bool,
    pub haz_comp: bool,
    pub is_mem: bool,
    pub ms_block: bool,
    pub fu_block: bool,
    /// The LSU's stuck reason for this warp (docs §1.4), 0..=7.
    pub ms_reason: u8,
}

/// A load writeback (docs §2): at most one per cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Writeback {
    pub warp: usize,
    /// Where the data came from (docs §1.3), 0..=7.
    pub src: u8,
    /// Releasing its register clears the warp's last load hazard.
    pub is_final: bool,
}

/// Every warp slot's predicates of a cycle as bit planes, bit w = warp w (docs §3.2): how an SM
/// model keeps them at its own events instead of rebuilding NW structs a cycle (spec §7.3 T-f).
/// The memory-structural reasons are not here: only `ms_sel`'s is read (see [`Gsi::evaluate_planes`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Planes {
    pub active: u128,
    pub inst_avail: u128,
    pub sync_wait: u128,
    pub haz_load: u128,
    pub haz_comp: u128,
    pub is_mem: u128,
    pub ms_block: u128,
    pub fu_block: u128,
}

impl Planes {
    /// The planes of `warps` (one entry per slot, at most 128).
    pub fn of(warps: &[WarpPreds]) -> Planes {
        let mut pl = Planes::default();
        for (w, p) in warps.iter().enumerate() {
            pl.set(w, p);
        }
        pl
    }

    /// Warp `w`'s bits to `p`'s (its reason is not kept).
    pub fn set(&mut self, w: usize, p: &WarpPreds) {
        let bit = 1u128 << w;
        // One variable shift for all eight planes (a u128 shift costs a dozen instructions).
        let put = |plane: &mut u128, on: bool| {
            *plane = *plane & !bit | bit & u128::from(on).wrapping_neg();
        };
        put(&mut self.active, p.active);
        put(&mut self.inst_avail, p.inst_avail);
        put(&mut self.sync_wait, p.sync_wait);
        put(&mut self.haz_load, p.haz_load);
        put(&mut self.haz_comp, p.haz_comp);
        put(&mut self.is_mem, p.is_mem);
        put(&mut self.ms_block, p.ms_block);
        put(&mut self.fu_block, p.fu_block);
    }

    /// `p`'s predicates packed, bit k = the k-th plane of [`Planes::named`] (its reason left
    /// out): what [`Planes::flip`] takes.
    pub(crate) fn packed(p: &WarpPreds) -> u8 {
        [
            p.active,
            p.inst_avail,
            p.sync_wait,
            p.haz_load,
            p.haz_comp,
            p.is_mem,
            p.ms_block,
            p.fu_block,
        ]
        .iter()
        .enumerate()
        .fold(0, |m, (k, &on)| m | u8::from(on) << k)
    }

    /// Flips `bit` in the planes named by the bits of `diff` (as [`Planes::packed`] numbers
    /// them): a warp's changed predicates, without rewriting the others.
    pub(crate) fn flip(&mut self, diff: u8, bit: u128) {
        let at = |k: u32| bit & u128::from(diff >> k & 1).wrapping_neg();
        self.active ^= at(0);
        self.inst_avail ^= at(1);
        self.sync_wait ^= at(2);
        self.haz_load ^= at(3);
        self.haz_comp ^= at(4);
        self.is_mem ^= at(5);
        self.ms_block ^= at(6);
        self.fu_block ^= at(7);
    }

    /// Whether `self` and `o` differ in any bit (branch-free: a cycle asks it once).
    fn differs(&self, o: &Planes) -> bool {
        let (a, b) = (self.named(), o.named());
        a.iter().zip(&b).fold(0, |x, (a, b)| x | a.1 ^ b.1) != 0
    }

    /// The planes with their port names, in port order.
    pub fn named(&self) -> [(&'static str, u128); 8] {
        [
            ("active", self.active),
            ("inst_avail", self.inst_avail),
            ("sync_wait", self.sync_wait),
            ("haz_load", self.haz_load),
            ("haz_comp", self.haz_comp),
            ("is_mem", self.is_mem),
            ("ms_block", self.ms_block),
            ("fu_block", self.fu_block),
        ]
    }

    /// Warp `w`'s predicates, with `ms_reason` as given.
    pub fn warp(&self, w: usize, ms_reason: u8) -> WarpPreds {
        let on = |plane: u128| plane >> w & 1 == 1;
        WarpPreds {
            active: on(self.active),
            inst_avail: on(self.inst_avail),
            sync_wait: on(self.sync_wait),
            haz_load: on(self.haz_load),
            haz_comp: on(self.haz_comp),
            is_mem: on(self.is_mem),
            ms_block: on(self.ms_block),
            fu_block: on(self.fu_block),
            ms_reason,
        }
    }
}

/// The SM's inputs of a cycle besides the warps' predicates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CycleIn {
    /// Kernel active: the cycle is counted.
    pub en: bool,
    /// Zero every counter, blame and status (the cycle is not counted).
    pub clear: bool,
    /// Instructions issued.
    pub n_issued: u64,
    pub ldwb: Option<Writeback>,
}

/// A blame flush into `md_sub` (docs §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flush {
    pub warp: usize,
    /// The normalised sub-class.
    pub src: u8,
    pub amt: u64,
}

/// The block's outputs of a cycle (the warp classes are in [`Gsi::wcls`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CycleOut {
    pub cls: Class,
    /// The lowest MEM_DATA warp (0 if none).
    pub md_sel: usize,
    /// The lowest MEM_STRUCT warp (0 if none).
    pub ms_sel: usize,
    /// The MEM_STRUCT reason, normalised, when `cls` = MEM_STRUCT; else 0.
    pub ms_cyc_reason: u8,
    pub flush: Option<Flush>,
}

/// What an evaluation leaves in the inspector beside its outputs (class masks, the planes
/// classified and last evaluated, `ready`, `ms_sel`'s reason): a probe keeps it with a state
/// it may meet again and puts it back ([`Gsi::restore`], docs/stall-inspector.md §7.5).
#[derive(Clone, Copy, Debug)]
pub struct Evaluation {
    masks: [u128; 8],
    haz_load: u128,
    sel_reason: u8,
    classified: Planes,
    fresh: bool,
    generation: u64,
    sels: (Option<usize>, Option<usize>),
    stall_cls: Option<Class>,
    ready: u128,
    last_planes: Planes,
    evaluated: bool,
}

/// The inspector: configuration, counters, blame and status.
#[derive(Clone, Debug)]
pub struct Gsi {
    p: Params,
    cmax: u64,
    bmax: u64,
    top: [u64; 8],
    md_sub: [u64; 8],
    ms_sub: [u64; 8],
    wc: [u64; 8],
    cyc_total: u64,
    inst_issued: u64,
    blame: Vec<u64>,
    status: u8,
    /// This cycle's warps of each class, bit w = warp w (written by [`Gsi::evaluate`]).
    masks: [u128; 8],
    /// This cycle's warp classes (written by [`Gsi::evaluate`] while `keep_wcls`).
    wcls: Vec<Class>,
    keep_wcls: bool,
    /// What the clock edge reads of this cycle's predicates (written by [`Gsi::evaluate_planes`]):
    /// the load-hazard plane and `ms_sel`'s raw reason.
    haz_load: u128,
    sel_reason: u8,
    /// The planes the masks were classified from, and what follows from them alone: `md_sel`,
    /// `ms_sel` and (once asked) the class of a cycle without issue. A cycle with the same
    /// planes reuses them (most stall cycles, spec §7.3 T-f).
    classified: Planes,
    /// Whether `classified` and what follows from it are valid.
    fresh: bool,
    /// How many times the planes were classified (a new classification, a new number).
    generation: u64,
    /// The last generation given (a restored evaluation keeps its own number).
    gen_next: u64,
    sels: (Option<usize>, Option<usize>),
    stall_cls: Option<Class>,
    /// This cycle's ready warps (NO_STALL), whatever the order: the warps no test of Alg. 1
    /// holds for.
    ready: u128,
    /// The planes of the last evaluated cycle (valid once `evaluated`).
    last_planes: Planes,
    evaluated: bool,
    /// Classify every cycle; else a cycle with issue, which needs only `ready`, skips it
    /// (its class masks and warp classes are then the last classified cycle's).
    eager: bool,
}

/// 2^bits − 1.
fn ones(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// `a + b` clipped at `max`, and whether it was clipped.
fn sat_add(a: u64, b: u64, max: u64) -> (u64, bool) {
    match a.checked_add(b) {
        Some(s) if s <= max => (s, false),
        _ => (max, true),
    }
}

/// The warps in each mask, with the CPU's population-count instruction where it has one
/// (baseline x86-64 has none: the portable form costs a dozen instructions a word).
fn popcounts(masks: &[u128; 8]) -> [u32; 8] {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        #[target_feature(enable = "popcnt")]
        fn hw(m: &[u128; 8]) -> [u32; 8] {
            m.map(u128::count_ones)
        }
        // SAFETY: the CPU has the instruction (checked above).
        return unsafe { hw(masks) };
    }
    masks.map(u128::count_ones)
}

/// [`popcounts`] of masks that fit in 64 bits (NW ≤ 64, docs/stall-inspector.md §7.5).
fn popcounts64(masks: &[u128; 8]) -> [u32; 8] {
    let low = masks.map(|m| m as u64);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        #[target_feature(enable = "popcnt")]
        fn hw(m: &[u64; 8]) -> [u32; 8] {
            m.map(u64::count_ones)
        }
        // SAFETY: the CPU has the instruction (checked above).
        return unsafe { hw(&low) };
    }
    low.map(u64::count_ones)
}

/// The ready warps of `nw` (NO_STALL), whatever the order: the union of Alg. 1's tests written
/// out, none of which holds for a ready warp.
pub(crate) fn ready_of(pl: &Planes, nw: usize) -> u128 {
    if nw <= 64 {
        // One word per plane where the warps fit (docs/stall-inspector.md §7.5).
        let w = |x: u128| x as u64;
        let stalled = !w(pl.inst_avail)
            | w(pl.sync_wait)
            | w(pl.haz_load)
            | w(pl.haz_comp)
            | w(pl.is_mem) & w(pl.ms_block)
            | !w(pl.is_mem) & w(pl.fu_block);
        return u128::from(w(pl.active) & u64::MAX >> (64 - nw) & !stalled);
    }
    let stalled = !pl.inst_avail
        | pl.sync_wait
        | pl.haz_load
        | pl.haz_comp
        | pl.is_mem & pl.ms_block
        | !pl.is_mem & pl.fu_block;
    pl.active & u128::MAX >> (128 - nw) & !stalled
}

/// The warps each test of Alg. 1 holds for, by class code (NO_STALL and IDLE: none).
fn holds(pl: &Planes) -> [u128; 8] {
    let mut h = [0u128; 8];
    h[Class::Control as usize] = !pl.inst_avail;
    h[Class::Sync as usize] = pl.sync_wait;
    h[Class::MemData as usize] = pl.haz_load;
    h[Class::MemStruct as usize] = pl.is_mem & pl.ms_block;
    h[Class::CompData as usize] = pl.haz_comp;
    h[Class::CompStruct as usize] = !pl.is_mem & pl.fu_block;
    h
}

/// Alg. 2 without the issue count (docs §3.3): the first class of `cycle_order` some warp is
/// in; at cycle level IDLE means "no warp active" (D4), not "some warp IDLE".
fn stall_class(p: &Params, masks: &[u128; 8]) -> Class {
    let nw = p.nw;
    let idle = masks[Class::Idle as usize] == u128::MAX >> (128 - nw);
    let seen = |k: Class| match k {
        Class::Idle => idle,
        k => masks[k as usize] != 0,
    };
    p.cycle_order
        .0
        .iter()
        .copied()
        .find(|&k| seen(k))
        .unwrap_or(Class::Idle)
}

impl Gsi {
    /// The reset state of the inspector `p` (validated params).
    pub fn new(p: &Params) -> Gsi {
        let nw = p.nw as usize;
        Gsi {
            p: p.clone(),
            cmax: ones(p.cw),
            bmax: ones(p.bw),
            top: [0; 8],
            md_sub: [0; 8],
            ms_sub: [0; 8],
            wc: [0; 8],
            cyc_total: 0,
            inst_issued: 0,
            blame: vec![0; nw],
            status: 0,
            masks: [0; 8],
            wcls: vec![Class::Idle; nw],
            keep_wcls: true,
            haz_load: 0,
            sel_reason: 0,
            classified: Planes::default(),
            fresh: false,
            generation: 0,
            gen_next: 0,
            sels: (None, None),
            stall_cls: None,
            ready: 0,
            last_planes: Planes::default(),
            evaluated: false,
            eager: true,
        }
    }

    /// Whether [`Gsi::evaluate`] writes [`Gsi::wcls`] (on by default; a caller reading the
    /// classes through [`Gsi::class_mask`] or [`Gsi::wcls_of`] turns it off to save NW writes a
    /// cycle).
    pub fn keep_wcls(&mut self, keep: bool) {
        self.keep_wcls = keep;
    }

    /// Whether a cycle with issue may skip the classification (see [`Gsi::ready_mask`]); a
    /// caller reading the class masks or warp classes of every cycle keeps it eager (the
    /// default), as the RTL check does.
    pub fn set_eager(&mut self, eager: bool) {
        self.eager = eager;
    }

    /// This cycle's ready warps (NO_STALL), in every cycle.
    pub fn ready_mask(&self) -> u128 {
        self.ready
    }

    /// This cycle's warps of class `c`, bit w = warp w.
    pub fn class_mask(&self, c: Class) -> u128 {
        self.masks[c as usize]
    }

    /// This cycle's warps per class (the population counts of the class masks).
    pub fn class_counts(&self) -> [u32; 8] {
        if self.blame.len() <= 64 {
            popcounts64(&self.masks)
        } else {
            popcounts(&self.masks)
        }
    }

    /// Whether `pl` differs from the planes last classified.
    fn changed(&self, pl: &Planes) -> bool {
        !self.fresh || self.classified.differs(pl)
    }

    /// Whether `pl` differs from the last evaluated cycle's planes.
    pub fn planes_changed(&self, pl: &Planes) -> bool {
        !self.evaluated || self.last_planes.differs(pl)
    }

    /// The raw LSU reason of the last evaluated cycle's `ms_sel` (0 if none; stale after a
    /// cycle with issue that skipped the classification).
    pub fn sel_reason(&self) -> u8 {
        self.sel_reason
    }

    /// The last evaluation's state ([`Evaluation`]).
    pub fn evaluation(&self) -> Evaluation {
        Evaluation {
            masks: self.masks,
            haz_load: self.haz_load,
            sel_reason: self.sel_reason,
            classified: self.classified,
            fresh: self.fresh,
            generation: self.generation,
            sels: self.sels,
            stall_cls: self.stall_cls,
            ready: self.ready,
            last_planes: self.last_planes,
            evaluated: self.evaluated,
        }
    }

    /// Puts an evaluation's state back: the inspector is as after that evaluation, its
    /// counters, blame and status as they are (the warp classes are not kept).
    pub fn restore(&mut self, e: &Evaluation) {
        self.masks = e.masks;
        self.haz_load = e.haz_load;
        self.sel_reason = e.sel_reason;
        self.classified = e.classified;
        self.fresh = e.fresh;
        self.generation = e.generation;
        self.sels = e.sels;
        self.stall_cls = e.stall_cls;
        self.ready = e.ready;
        self.last_planes = e.last_planes;
        self.evaluated = e.evaluated;
    }

    /// Changes whenever this cycle's classes differ from the last evaluated cycle's may.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Warp `w`'s class this cycle.
    pub fn wcls_of(&self, w: usize) -> Class {
        let bit = 1u128 << w;
        let c = self.masks.iter().position(|m| m & bit != 0).unwrap_or(1);
        Class::of_code(c as u64)
    }

    pub fn params(&self) -> &Params {
        &self.p
    }

    /// Every counter, blame and status to 0 (`clear`, `reset`).
    pub fn zero(&mut self) {
        self.top = [0; 8];
        self.md_sub = [0; 8];
        self.ms_sub = [0; 8];
        self.wc = [0; 8];
        self.cyc_total = 0;
        self.inst_issued = 0;
        self.blame.fill(0);
        self.status = 0;
    }

    /// Alg. 1 (docs §3.3): IDLE when inactive, else the first test of `warp_order` that holds,
    /// else NO_STALL.
    pub fn warp_class(&self, w: &WarpPreds) -> Class {
        if !w.active {
            return Class::Idle;
        }
        for &c in &self.p.warp_order.0 {
            let holds = match c {
                Class::Control => !w.inst_avail,
                Class::Sync => w.sync_wait,
                Class::MemData => w.haz_load,
                Class::MemStruct => w.is_mem && w.ms_block,
                Class::CompData => w.haz_comp,
                Class::CompStruct => !w.is_mem && w.fu_block,
                Class::NoStall | Class::Idle => false,
            };
            if holds {
                return c;
            }
        }
        Class::NoStall
    }

    /// This cycle's warp classes (after [`Gsi::evaluate`] or [`Gsi::step`], while
    /// [`Gsi::keep_wcls`] is on).
    pub fn wcls(&self) -> &[Class] {
        &self.wcls
    }

    /// Alg. 1 on every warp at once (docs §3.3), one bit per warp: each test of `warp_order`
    /// takes the warps it holds for among those not yet classified. Then Alg. 2 without the
    /// issue count: the lowest warps of the memory classes and the cycle's stall class.
    fn classify(&mut self, pl: &Planes) {
        let nw = self.blame.len();
        if nw <= 64 {
            self.classify64(pl, nw);
        } else {
            let all = u128::MAX >> (128 - nw);
            let holds = holds(pl);
            let mut rest = pl.active & all;
            self.masks = [0; 8];
            for &c in &self.p.warp_order.0 {
                let m = holds[c as usize] & rest;
                self.masks[c as usize] = m;
                rest &= !m;
            }
            self.masks[Class::NoStall as usize] = rest;
            self.masks[Class::Idle as usize] = !pl.active & all;
        }
        let low = |m: u128| (m != 0).then(|| m.trailing_zeros() as usize);
        self.sels = (
            low(self.masks[Class::MemData as usize]),
            low(self.masks[Class::MemStruct as usize]),
        );
        self.stall_cls = None;
        self.classified = *pl;
        self.fresh = true;
        self.gen_next += 1;
        self.generation = self.gen_next;
    }

    /// [`Gsi::classify`]'s class masks where the `nw` warps fit in one 64-bit word per plane
    /// (docs/stall-inspector.md §7.5): half the words of the 128-bit path, the same masks.
    fn classify64(&mut self, pl: &Planes, nw: usize) {
        let w = |x: u128| x as u64;
        let all = u64::MAX >> (64 - nw);
        let holds = holds(pl).map(w);
        let mut rest = w(pl.active) & all;
        let mut masks = [0u64; 8];
        for &c in &self.p.warp_order.0 {
            let m = holds[c as usize] & rest;
            masks[c as usize] = m;
            rest &= !m;
        }
        masks[Class::NoStall as usize] = rest;
        masks[Class::Idle as usize] = !w(pl.active) & all;
        self.masks = masks.map(u128::from);
    }

    /// The outputs of a cycle from its inputs and the start-of-cycle state (docs §3.3); fills
    /// [`Gsi::class_mask`] (and [`Gsi::wcls`] while kept). `warps` has one entry per warp slot.
    pub fn evaluate(&mut self, warps: &[WarpPreds], c: &CycleIn) -> CycleOut {
        assert_eq!(warps.len(), self.wcls.len(), "one WarpPreds per warp slot");
        self.evaluate_planes(&Planes::of(warps), |w| warps[w].ms_reason, c)
    }

    /// [`Gsi::evaluate`] on the predicates as planes; `ms_reason(w)` is warp w's LSU reason,
    /// asked only of `ms_sel` (a warp of the MEM_STRUCT class) when there is one.
    pub fn evaluate_planes(
        &mut self,
        pl: &Planes,
        ms_reason: impl Fn(usize) -> u8,
        c: &CycleIn,
    ) -> CycleOut {
        self.ready = ready_of(pl, self.blame.len());
        let needed = c.n_issued == 0 || self.eager || self.p.warp_counters;
        if needed && self.changed(pl) {
            self.classify(pl);
            if self.keep_wcls {
                for w in 0..self.wcls.len() {
                    self.wcls[w] = self.wcls_of(w);
                }
            }
        }
        let (md_sel, ms_sel) = self.sels;
        let cls = if c.n_issued != 0 {
            Class::NoStall
        } else {
            *self
                .stall_cls
                .get_or_insert_with(|| stall_class(&self.p, &self.masks))
        };
        self.sel_reason = ms_sel.map_or(0, |w| ms_reason(w) & 7);
        self.haz_load = pl.haz_load;
        self.last_planes = *pl;
        self.evaluated = true;
        let (md_sel, ms_sel) = (md_sel.unwrap_or(0), ms_sel.unwrap_or(0));
        let ms_cyc_reason = if cls == Class::MemStruct {
            match self.sel_reason {
                0 | 7 => reason::OTHER as u8,
                r => r,
            }
        } else {
            0
        };
        let flush = self.flush(c, cls, md_sel);
        CycleOut {
            cls,
            md_sel,
            ms_sel,
            ms_cyc_reason,
            flush,
        }
    }

    /// Whether this cycle's MEM_DATA charge goes to warp `w`.
    fn charged(c: &CycleIn, cls: Class, md_sel: usize, w: usize) -> bool {
        c.en && cls == Class::MemData && w == md_sel
    }

    /// The flush of a `final` writeback (docs §2): blame[w] plus this cycle's charge to w,
    /// when not 0.
    fn flush(&self, c: &CycleIn, cls: Class, md_sel: usize) -> Option<Flush> {
        let wb = c.ldwb.filter(|l| l.is_final && l.warp < self.blame.len())?;
        let inc = Self::charged(c, cls, md_sel, wb.warp) as u64;
        let (amt, _) = sat_add(self.blame[wb.warp], inc, self.bmax);
        (amt != 0).then(|| Flush {
            warp: wb.warp,
            src: self.p.norm_src(u64::from(wb.src)) as u8,
            amt,
        })
    }

    /// The clock edge (docs §3.3): counters, blame and status from the cycle's inputs and its
    /// outputs `o` (from [`Gsi::evaluate`] or [`Gsi::evaluate_planes`] on the same inputs).
    pub fn update(&mut self, c: &CycleIn, o: &CycleOut) {
        self.update_times(c, o, 1);
    }

    /// Whether [`Gsi::step_issues`] may count issue cycles without their classes: nothing
    /// reads them (not eager, no warp counters).
    #[inline]
    pub fn batches_issue(&self) -> bool {
        !self.eager && !self.p.warp_counters
    }

    /// `k` cycles with issue counted at once (`n_issued` instructions in all; `not_ready`: one
    /// of them had no ready warp, ISSUED_NOT_READY), clipped as `k` single edges would be.
    /// Only where [`Gsi::batches_issue`]: a cycle after it evaluates afresh.
    pub fn step_issues(&mut self, k: u64, n_issued: u64, not_ready: bool) {
        let cmax = self.cmax;
        let (t, c1) = sat_add(self.cyc_total, k, cmax);
        let (ns, c2) = sat_add(self.top[Class::NoStall as usize], k, cmax);
        let (ii, c3) = sat_add(self.inst_issued, n_issued, cmax);
        (
            self.cyc_total,
            self.top[Class::NoStall as usize],
            self.inst_issued,
        ) = (t, ns, ii);
        self.status |= u8::from(c1 | c2 | c3) << status::COUNTER_SAT
            | u8::from(not_ready) << status::ISSUED_NOT_READY;
    }

    /// The edge of a final load writeback in a cycle with issue (so no MEM_DATA charge this
    /// cycle) beside [`Gsi::step_issues`]: the warp's blame flushed into its source, the blame
    /// cleared, FINAL_WITHOUT_HAZARD unless `had_hazard` (the warp's `haz_load` this cycle), as
    /// [`Gsi::update`] would. `wb` is final, of a warp slot.
    pub fn flush_final(&mut self, wb: &Writeback, had_hazard: bool) {
        debug_assert!(wb.is_final && wb.warp < self.blame.len());
        let amt = std::mem::take(&mut self.blame[wb.warp]);
        if amt != 0 {
            let s = self.p.norm_src(u64::from(wb.src)) as usize;
            let (v, clipped) = sat_add(self.md_sub[s], amt, self.cmax);
            self.md_sub[s] = v;
            self.status |= u8::from(clipped) << status::COUNTER_SAT;
        }
        self.status |= u8::from(!had_hazard) << status::FINAL_WITHOUT_HAZARD;
    }

    /// `k` clock edges of the same cycle (`c` without writeback or `clear`) in one: the
    /// counters move by `k` times the cycle's step, clipped as `k` single edges would be.
    pub fn repeat(&mut self, c: &CycleIn, o: &CycleOut, k: u64) {
        assert!(
            c.ldwb.is_none() && !c.clear,
            "only a cycle without events repeats"
        );
        self.update_times(c, o, k);
    }

    fn update_times(&mut self, c: &CycleIn, o: &CycleOut, k: u64) {
        if c.clear {
            self.zero();
            return;
        }
        let mut flags = 0u8;
        let mut count = |v: &mut u64, by: u64, max: u64, flag: u32| {
            let (s, clipped) = sat_add(*v, by, max);
            *v = s;
            if clipped {
                flags |= 1 << flag;
            }
        };
        let cmax = self.cmax;
        if c.en {
            count(&mut self.cyc_total, k, cmax, status::COUNTER_SAT);
            count(&mut self.top[o.cls as usize], k, cmax, status::COUNTER_SAT);
            let issued = c.n_issued.saturating_mul(k);
            count(&mut self.inst_issued, issued, cmax, status::COUNTER_SAT);
            if o.cls == Class::MemStruct {
                let r = o.ms_cyc_reason as usize;
                count(&mut self.ms_sub[r], k, cmax, status::COUNTER_SAT);
            }
            if self.p.warp_counters {
                let n = self.class_counts();
                for (v, m) in self.wc.iter_mut().zip(n) {
                    count(v, u64::from(m).saturating_mul(k), cmax, status::COUNTER_SAT);
                }
            }
        }
        let fl = c
            .ldwb
            .filter(|l| l.is_final && l.warp < self.blame.len())
            .map(|l| l.warp);
        let bmax = self.bmax;
        // Only `md_sel` is charged; the flushed warp's charge is in the flush amount (clipped
        // there, lost too).
        if Self::charged(c, o.cls, o.md_sel, o.md_sel) {
            count(&mut self.blame[o.md_sel], k, bmax, status::BLAME_SAT);
        }
        if let Some(w) = fl {
            self.blame[w] = 0;
        }
        if let Some(f) = o.flush {
            count(
                &mut self.md_sub[f.src as usize],
                f.amt,
                cmax,
                status::COUNTER_SAT,
            );
        }
        let ready = self.ready != 0;
        let issued = c.n_issued != 0;
        if c.en {
            if ready && !issued {
                flags |= 1 << status::READY_NOT_ISSUED;
            }
            if issued && !ready {
                flags |= 1 << status::ISSUED_NOT_READY;
            }
            if o.cls == Class::MemStruct && matches!(self.sel_reason, 0 | 7) {
                flags |= 1 << status::BAD_REASON;
            }
        }
        if let Some(w) = fl {
            if self.haz_load >> w & 1 == 0 {
                flags |= 1 << status::FINAL_WITHOUT_HAZARD;
            }
        }
        self.status |= flags;
    }

    /// [`Gsi::evaluate`] then [`Gsi::update`]: one cycle.
    pub fn step(&mut self, warps: &[WarpPreds], c: &CycleIn) -> CycleOut {
        let o = self.evaluate(warps, c);
        self.update(c, &o);
        o
    }

    /// The read-out map (docs §3.4): the register at `a`, 0 where there is none.
    pub fn read(&self, a: u64) -> u64 {
        let base = self.p.blame_base();
        let nw = self.blame.len() as u64;
        match a {
            0x00..=0x07 => self.top[a as usize],
            0x08..=0x0F => {
                let s = a - addr::MD_SUB;
                let exists = self.p.md_sources().contains(&s);
                if exists {
                    self.md_sub[s as usize]
                } else {
                    0
                }
            }
            0x11..=0x16 => self.ms_sub[(a - addr::MS_SUB) as usize],
            addr::CYC_TOTAL => self.cyc_total,
            addr::INST_ISSUED => self.inst_issued,
            addr::STATUS => u64::from(self.status),
            0x20..=0x27 if self.p.warp_counters => self.wc[(a - addr::WC) as usize],
            _ if a >= base && a < base + nw => self.blame[(a - base) as usize],
            _ => 0,
        }
    }

    pub fn status(&self) -> u8 {
        self.status
    }
    pub fn top(&self, c: Class) -> u64 {
        self.top[c as usize]
    }
    pub fn md_sub(&self, s: u64) -> u64 {
        self.md_sub[(s & 7) as usize]
    }
    pub fn ms_sub(&self, r: u64) -> u64 {
        self.ms_sub[(r & 7) as usize]
    }
    pub fn wc(&self, c: Class) -> u64 {
        self.wc[c as usize]
    }
    pub fn cyc_total(&self) -> u64 {
        self.cyc_total
    }
    pub fn inst_issued(&self) -> u64 {
        self.inst_issued
    }
    pub fn blame(&self) -> &[u64] {
        &self.blame
    }
}

/// The inspector on its ports.
pub struct Model {
    gsi: Gsi,
    io: Io,
    inputs: Inputs,
    outputs: Outputs,
    warps: Vec<WarpPreds>,
}

impl BlockModel for Model {
    type Params = Params;
    fn new(p: &Params, layout: &Layout) -> Model {
        Model {
            gsi: Gsi::new(p),
            io: Io::new(p, layout),
            inputs: Inputs::new(p),
            outputs: Outputs::new(p),
            warps: vec![WarpPreds::default(); p.nw as usize],
        }
    }
}

/// The ports of a typed cycle, the inverse of [`cycle_of`] (`rd_addr` is left as it is): how
/// an SM model drives the RTL in its loop.
pub fn write_cycle(i: &mut Inputs, warps: &[WarpPreds], c: &CycleIn) {
    write_preds(i, warps);
    i.en = c.en;
    i.clear = c.clear;
    i.n_issued = c.n_issued;
    i.ldwb_valid = c.ldwb.is_some();
    i.ldwb_warp = c.ldwb.map_or(0, |l| l.warp as u64);
    i.ldwb_src = c.ldwb.map_or(0, |l| u64::from(l.src));
    i.ldwb_final = c.ldwb.is_some_and(|l| l.is_final);
}

/// The per-warp predicate ports of `warps` (the rest of `i` is left as it is).
pub fn write_preds(i: &mut Inputs, warps: &[WarpPreds]) {
    for (w, x) in warps.iter().enumerate() {
        i.active[w] = x.active;
        i.inst_avail[w] = x.inst_avail;
        i.sync_wait[w] = x.sync_wait;
        i.haz_load[w] = x.haz_load;
        i.haz_comp[w] = x.haz_comp;
        i.is_mem[w] = x.is_mem;
        i.ms_block[w] = x.ms_block;
        i.fu_block[w] = x.fu_block;
        i.ms_reason[w] = u64::from(x.ms_reason);
    }
}

/// The typed cycle of the ports as the inspector takes it (writes `warps` in place).
pub fn cycle_of(i: &Inputs, warps: &mut [WarpPreds]) -> CycleIn {
    for (w, x) in warps.iter_mut().enumerate() {
        *x = WarpPreds {
            active: i.active[w],
            inst_avail: i.inst_avail[w],
            sync_wait: i.sync_wait[w],
            haz_load: i.haz_load[w],
            haz_comp: i.haz_comp[w],
            is_mem: i.is_mem[w],
            ms_block: i.ms_block[w],
            fu_block: i.fu_block[w],
            ms_reason: (i.ms_reason[w] & 7) as u8,
        };
    }
    CycleIn {
        en: i.en,
        clear: i.clear,
        n_issued: i.n_issued,
        ldwb: i.ldwb_valid.then_some(Writeback {
            warp: i.ldwb_warp as usize,
            src: (i.ldwb_src & 7) as u8,
            is_final: i.ldwb_final,
        }),
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        let (i, o) = (&mut self.inputs, &mut self.outputs);
        self.io.read_inputs(inputs, i);
        let c = cycle_of(i, &mut self.warps);
        let r = self.gsi.evaluate(&self.warps, &c);
        o.cls = r.cls.code();
        for (x, k) in o.wcls.iter_mut().zip(self.gsi.wcls()) {
            *x = k.code();
        }
        o.md_sel = r.md_sel as u64;
        o.ms_sel = r.ms_sel as u64;
        o.ms_cyc_reason = u64::from(r.ms_cyc_reason);
        o.flush_valid = r.flush.is_some();
        o.flush_src = r.flush.map_or(0, |f| u64::from(f.src));
        o.flush_amt = r.flush.map_or(0, |f| f.amt);
        o.rd_data = self.gsi.read(i.rd_addr);
        o.status = u64::from(self.gsi.status());
        self.io.write_outputs(o, outputs);
        if i.reset {
            self.gsi.zero();
        } else {
            self.gsi.update(&c, &r);
        }
    }
}

#[cfg(test)]
#[path = "stall_inspector_tests.rs"]
mod tests;
