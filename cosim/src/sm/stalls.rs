//! SM-level stall accounting (docs/stall-inspector.md §5; spec §3, seed 003 §IV): the probe an
//! SM model fills with its warps' §4.2 predicates every cycle, from the state its own issue
//! logic uses, and steps once per cycle. The probe runs the inspector model [`Gsi`] (the
//! exclusive stack of Alg. 1 / Alg. 2), a check beside it (the `stall_inspector` RTL in the
//! loop, [`StallCheck`]) and, model-only (item 4 of issue 24): GCStack's fractional stack,
//! snapshots every K cycles and the classification per instruction (PC).
//!
//! The probe only observes (I8): a model with a probe attached runs the same cycles. Nothing
//! allocates per cycle unless snapshots or the per-PC table are asked for.

use crate::blocks::stall_inspector::{Class, CycleIn, CycleOut, Gsi, Params, WarpPreds, Writeback};
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
}

/// The stacks at the end of a window of cycles (cumulative from cycle 0).
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// Cycles counted up to here.
    pub cycle: u64,
    pub top: [u64; 8],
    pub md_sub: [u64; 8],
    pub ms_sub: [u64; 8],
    pub fractional: [f64; 8],
}

/// The probe: the inspector, this cycle's predicates (the system writes them), and what is
/// kept beside the counters.
pub struct Stalls {
    gsi: Gsi,
    warps: Vec<WarpPreds>,
    /// Each warp's head PC this cycle (a system's own key: kernel and PC packed).
    pcs: Vec<u64>,
    ldwb: Option<Writeback>,
    opts: StallOptions,
    t: u64,
    fractional: [f64; 8],
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
        // The classes are read through the class masks.
        gsi.keep_wcls(false);
        Stalls {
            gsi,
            warps: vec![WarpPreds::default(); nw],
            pcs: vec![0; nw],
            ldwb: None,
            opts,
            t: 0,
            fractional: [0.0; 8],
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
        self
    }

    /// This cycle's predicates, one per warp slot, to be written by the system.
    pub fn warps_mut(&mut self) -> &mut [WarpPreds] {
        &mut self.warps
    }

    /// This cycle's predicates.
    pub fn warps(&self) -> &[WarpPreds] {
        &self.warps
    }

    /// Each warp's head PC this cycle (used only with [`StallOptions::per_pc`]).
    pub fn pcs_mut(&mut self) -> &mut [u64] {
        &mut self.pcs
    }

    /// Whether PCs are used.
    pub fn wants_pcs(&self) -> bool {
        self.opts.per_pc
    }

    /// A load writeback of this cycle. The inspector takes one per cycle (spec §3.2 step 3): a
    /// final one before any other, and among final ones the one whose warp carries the most
    /// blame (the first on a tie); a final one left out with blame is counted as a collision
    /// (its blame waits for the warp's next final writeback, so conservation holds).
    pub fn writeback(&mut self, wb: Writeback) {
        let blame = |w: &Writeback| self.gsi.blame().get(w.warp).copied().unwrap_or(0);
        let (keep, drop) = match self.ldwb {
            None => (wb, None),
            Some(old) if !old.is_final => (wb, None),
            Some(old) if !wb.is_final => (old, None),
            Some(old) if blame(&wb) > blame(&old) => (wb, Some(old)),
            Some(old) => (old, Some(wb)),
        };
        if drop.is_some_and(|d| blame(&d) > 0) {
            self.collisions += 1;
        }
        self.ldwb = Some(keep);
    }

    /// One counted cycle issuing `n_issued` (the predicates and writeback written before):
    /// the inspector's outputs, the check, the counters, then the model-only accounts.
    pub fn step(&mut self, n_issued: u64) {
        self.cycle(true, n_issued);
    }

    /// A cycle, counted if `en` (an uncounted one only moves a flush, spec §4.3).
    pub fn cycle(&mut self, en: bool, n_issued: u64) {
        let c = CycleIn {
            en,
            clear: false,
            n_issued,
            ldwb: self.ldwb.take(),
        };
        let o = self.gsi.evaluate(&self.warps, &c);
        if let (Some(check), None) = (self.check.as_deref_mut(), &self.error) {
            if let Err(e) = check.cycle(self.t, &self.warps, &c, &o, &self.gsi) {
                self.error = Some(e);
            }
        }
        if en {
            self.fractional(o.cls);
        }
        if en && self.opts.per_pc {
            self.charge_pc(&o);
        }
        self.gsi.update(&self.warps, &c, &o);
        if !en {
            return;
        }
        self.issue_cycles += u64::from(n_issued != 0);
        self.t += 1;
        if self.opts.every != 0 && self.t.is_multiple_of(self.opts.every) {
            self.snapshots.push(self.snapshot());
        }
    }

    /// GCStack's rule (item 4): an issuing cycle is NO_STALL; otherwise the cycle is split
    /// equally over the active warps' classes (IDLE when none is active).
    fn fractional(&mut self, cls: Class) {
        if cls == Class::NoStall || cls == Class::Idle {
            self.fractional[cls as usize] += 1.0;
            return;
        }
        // Active warps are never IDLE: the other masks split them.
        let per = CLASSES.map(|c| match c {
            Class::Idle => 0,
            c => self.gsi.class_mask(c).count_ones(),
        });
        let n: u32 = per.iter().sum();
        for (f, &m) in self.fractional.iter_mut().zip(&per) {
            *f += f64::from(m) / f64::from(n);
        }
    }

    /// The cycle's class charged to the PC of the warp it came from: `md_sel` / `ms_sel` for
    /// the memory classes, else the lowest warp of that class (none for IDLE).
    fn charge_pc(&mut self, o: &CycleOut) {
        let w = match o.cls {
            Class::MemData => Some(o.md_sel),
            Class::MemStruct => Some(o.ms_sel),
            Class::Idle => None,
            cls => Some(self.gsi.class_mask(cls).trailing_zeros() as usize),
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
            fractional: self.fractional,
        }
    }

    /// After the last cycle: the check's read-out, and the breakdown.
    pub fn finish(mut self) -> Result<Breakdown, String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if let Some(check) = self.check.as_deref_mut() {
            check.finish(&self.gsi)?;
        }
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
