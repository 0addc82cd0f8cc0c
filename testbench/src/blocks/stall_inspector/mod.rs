//! Stimulus for the `StallInspector` (docs/stall-inspector.md §6): predicate streams shaped
//! like an SM's, as a proptest strategy of typed cycles.
//!
//! Each warp slot lives through episodes: ready, or stalled by one cause (CONTROL, SYNC,
//! MEM_DATA, MEM_STRUCT, COMP_DATA, COMP_STRUCT) for a drawn number of cycles, with its LSU
//! reason and its load's source drawn per episode; noise adds competing predicates, so every
//! priority of Alg. 1 is exercised. A MEM_DATA episode ends with the warp's `final` writeback
//! in its last stalled cycle (the hazard still visible, docs §2), one writeback per cycle;
//! noise adds non-final writebacks, finals without a hazard (status bit 5) and warps ≥ NW.
//! `n_issued` follows readiness (the model's Alg. 1 under the block's `warp_order`) in most
//! cases, and breaks it in some (status bits 2, 3).
//!
//! A case draws a profile — which causes occur, how long episodes last, how many warps are
//! active, how often `en` is low, how noisy — and switches it now and then; so single-cause
//! cases reach every cycle class and sub-class (an all-stalled SM at NW = 96 included), long
//! MEM_DATA episodes saturate a small BW, and long cases saturate a small CW (the `small`
//! preset). `clear` and `reset` are rare; `rd_addr` walks the read-out map. Per cycle one
//! drawn word seeds a small generator, so shrinking removes cycles and simplifies words.

mod proof;

pub use proof::proof;

use crate::coverage::Cover;
use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::stall_inspector::{write_preds, Gsi, Model, WarpPreds};
use smrtl_hdl::blocks::stall_inspector::port::Inputs;
use smrtl_hdl::blocks::stall_inspector::{status, Class, Params};
use smrtl_hdl::netlist::mask;
use smrtl_synth::prove::Proof;

/// Longest random case: long enough for a CW = 8 counter to saturate (255 counted cycles).
pub fn case_cycles(_p: &Params) -> usize {
    600
}

/// A small deterministic generator (splitmix64) seeded per cycle.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// True with chance `p256` / 256.
    pub fn chance(&mut self, p256: u64) -> bool {
        self.next_u64() % 256 < p256
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// The six stall causes of Alg. 1 (a warp's episode is one of them, or ready).
pub const CAUSES: [Class; 6] = [
    Class::Control,
    Class::Sync,
    Class::MemData,
    Class::MemStruct,
    Class::CompData,
    Class::CompStruct,
];

/// A case's traffic profile (chances in 256ths).
#[derive(Clone, Copy, Debug)]
pub struct Profile {
    /// Which of [`CAUSES`] occur (bit i: `CAUSES[i]`).
    pub causes: u8,
    /// Chance that a new episode is "ready".
    pub ready: u64,
    /// Longest episode, cycles.
    pub hold: u64,
    /// Chance per predicate and cycle that noise flips it.
    pub noise: u64,
    /// Chance that an inactive warp becomes active, and an active one inactive, per cycle.
    pub launch: u64,
    pub exit: u64,
    /// Chance of an uncounted cycle.
    pub en_off: u64,
    /// Chance per cycle of an off-pattern writeback.
    pub wb_noise: u64,
    /// `n_issued` follows readiness (else it is drawn freely half the time).
    pub conformant: bool,
    /// Reasons 0 and 7 occur (status bit 4).
    pub bad_reasons: bool,
}

const READY: [u64; 4] = [0, 12, 80, 180];
const HOLD: [u64; 4] = [1, 4, 16, 70];
const NOISE: [u64; 3] = [0, 6, 50];
const LAUNCH: [(u64, u64); 5] = [(255, 0), (40, 2), (20, 20), (2, 40), (0, 255)];
const EN_OFF: [u64; 3] = [0, 12, 128];
const WB_NOISE: [u64; 3] = [0, 6, 30];

impl Profile {
    /// A profile from drawn bits.
    pub fn draw(r: &mut Rng) -> Profile {
        // A third of the cases have a single cause (every cycle class within reach).
        let causes = if r.chance(85) {
            1 << r.below(6)
        } else {
            (r.next_u64() & 0x3f) as u8
        };
        let (launch, exit) = LAUNCH[r.below(5) as usize];
        Profile {
            causes,
            ready: READY[r.below(4) as usize],
            hold: HOLD[r.below(4) as usize],
            noise: NOISE[r.below(3) as usize],
            launch,
            exit,
            en_off: EN_OFF[r.below(3) as usize],
            wb_noise: WB_NOISE[r.below(3) as usize],
            conformant: r.chance(230),
            bad_reasons: r.chance(40),
        }
    }
}

/// One warp slot's episode.
#[derive(Clone, Copy, Debug, Default)]
struct Warp {
    active: bool,
    /// The episode's cause (`None`: ready).
    cause: Option<Class>,
    /// Cycles left in the episode.
    left: u64,
    reason: u8,
    src: u8,
    is_mem: bool,
}

/// The generator of one case (see the module doc).
pub struct Gen {
    p: Params,
    gsi: Gsi,
    prof: Profile,
    warps: Vec<Warp>,
    preds: Vec<WarpPreds>,
    /// Every address of the read-out map that holds a register.
    addrs: Vec<u64>,
}

impl Gen {
    pub fn new(p: &Params, seed: u64) -> Gen {
        let mut r = Rng::new(seed);
        let nw = p.nw as usize;
        let mut addrs: Vec<u64> = (0..8).collect();
        addrs.extend(p.md_sources().iter().map(|s| 0x08 + s));
        addrs.extend(p.ms_reasons().iter().map(|s| 0x10 + s));
        addrs.extend([0x18, 0x19, 0x1a]);
        if p.warp_counters {
            addrs.extend(0x20..0x28);
        }
        addrs.extend((0..p.nw as u64).map(|w| p.blame_base() + w));
        Gen {
            p: p.clone(),
            gsi: Gsi::new(p),
            prof: Profile::draw(&mut r),
            warps: vec![Warp::default(); nw],
            preds: vec![WarpPreds::default(); nw],
            addrs,
        }
    }

    /// A new episode for a warp.
    fn episode(&self, r: &mut Rng) -> Warp {
        let prof = &self.prof;
        let enabled: Vec<Class> = (0..6)
            .filter(|i| prof.causes >> i & 1 == 1)
            .map(|i| CAUSES[i])
            .collect();
        let cause = if enabled.is_empty() || r.chance(prof.ready) {
            None
        } else {
            Some(enabled[r.below(enabled.len() as u64) as usize])
        };
        let reason = if prof.bad_reasons && r.chance(30) {
            [0, 7][r.below(2) as usize]
        } else {
            1 + r.below(6) as u8
        };
        Warp {
            active: true,
            cause,
            left: 1 + r.below(prof.hold),
            reason,
            src: r.below(8) as u8,
            is_mem: r.chance(128),
        }
    }

    /// The predicates of a warp in its episode, with noise.
    fn predicates(&self, w: &Warp, r: &mut Rng) -> WarpPreds {
        let mut x = WarpPreds {
            active: w.active,
            inst_avail: true,
            is_mem: w.is_mem,
            ms_reason: w.reason,
            ..WarpPreds::default()
        };
        match w.cause {
            Some(Class::Control) => x.inst_avail = false,
            Some(Class::Sync) => x.sync_wait = true,
            Some(Class::MemData) => x.haz_load = true,
            Some(Class::MemStruct) => (x.is_mem, x.ms_block) = (true, true),
            Some(Class::CompData) => x.haz_comp = true,
            Some(Class::CompStruct) => (x.is_mem, x.fu_block) = (false, true),
            _ => {}
        }
        let n = self.prof.noise;
        if n > 0 {
            let flip = |b: &mut bool, r: &mut Rng| *b ^= r.chance(n);
            flip(&mut x.inst_avail, r);
            flip(&mut x.sync_wait, r);
            flip(&mut x.haz_load, r);
            flip(&mut x.haz_comp, r);
            flip(&mut x.is_mem, r);
            flip(&mut x.ms_block, r);
            flip(&mut x.fu_block, r);
        }
        x
    }

    /// The next cycle from the drawn word `seed`.
    pub fn cycle(&mut self, seed: u64) -> Inputs {
        let mut r = Rng::new(seed);
        let p = self.p.clone();
        let nw = p.nw as usize;
        if r.chance(3) {
            self.prof = Profile::draw(&mut r);
        }
        let mut c = Inputs::new(&p);
        c.reset = r.chance(1) && r.chance(128);
        c.clear = !c.reset && r.chance(1);
        c.en = !r.chance(self.prof.en_off);
        // Episodes advance; a MEM_DATA episode's last cycle carries its final writeback.
        let mut final_of = None;
        for w in 0..nw {
            let mut s = self.warps[w];
            if s.active && r.chance(self.prof.exit) {
                s.active = false;
            } else if (!s.active && r.chance(self.prof.launch)) || (s.active && s.left == 0) {
                s = self.episode(&mut r);
            }
            if s.active && s.cause == Some(Class::MemData) && s.left <= 1 {
                if final_of.is_none() {
                    final_of = Some((w, s.src));
                } else {
                    s.left += 1; // one writeback per cycle: this one waits
                }
            }
            s.left = s.left.saturating_sub(1);
            self.preds[w] = self.predicates(&s, &mut r);
            self.warps[w] = s;
        }
        write_preds(&mut c, &self.preds);
        self.writeback(&mut c, final_of, &mut r);
        let ready = self
            .preds
            .iter()
            .any(|x| self.gsi.warp_class(x) == Class::NoStall);
        let iw = u64::from(p.iw);
        c.n_issued = if self.prof.conformant || r.chance(128) {
            if ready {
                1 + r.below(iw)
            } else {
                0
            }
        } else {
            r.below(1 << p.iwb())
        };
        c.rd_addr = if r.chance(200) {
            self.addrs[r.below(self.addrs.len() as u64) as usize]
        } else {
            r.below(1 << p.addr_bits())
        };
        c
    }

    /// This cycle's writeback: the ending MEM_DATA episode's final one, else now and then an
    /// off-pattern one (non-final, final without a hazard, a warp ≥ NW).
    fn writeback(&self, c: &mut Inputs, final_of: Option<(usize, u8)>, r: &mut Rng) {
        let wmax = mask(self.p.wb());
        if let Some((w, s)) = final_of {
            (c.ldwb_valid, c.ldwb_final) = (true, true);
            (c.ldwb_warp, c.ldwb_src) = (w as u64, u64::from(s));
        } else if r.chance(self.prof.wb_noise) {
            c.ldwb_valid = true;
            c.ldwb_final = r.chance(100);
            c.ldwb_warp = if r.chance(40) {
                r.below(wmax + 1)
            } else {
                r.below(u64::from(self.p.nw))
            };
            c.ldwb_src = r.below(8);
        } else if r.chance(8) {
            // Fields without `valid`: ignored.
            c.ldwb_final = r.chance(128);
            c.ldwb_warp = r.below(wmax + 1);
            c.ldwb_src = r.below(8);
        }
    }
}

/// A case of `1..=max` cycles for `p` (see the module doc).
pub fn cycles(p: &Params, max: usize) -> impl Strategy<Value = Vec<Inputs>> {
    let p = p.clone();
    (any::<u64>(), prop::collection::vec(any::<u64>(), 1..=max)).prop_map(move |(start, seeds)| {
        let mut g = Gen::new(&p, start);
        seeds.into_iter().map(|s| g.cycle(s)).collect()
    })
}

/// `n` cycles of the generator from `seed` (the invariant tests' long streams).
pub fn stream(p: &Params, seed: u64, n: usize) -> Vec<Inputs> {
    let mut g = Gen::new(p, seed);
    let mut r = Rng::new(seed ^ 0x5eed);
    (0..n).map(|_| g.cycle(r.next_u64())).collect()
}

impl Bench for Params {
    type Model = Model;
    const SUMMARY: &'static str =
        "GSI stall inspector: per-warp and per-cycle stall classes, memory sub-classes by deferred blame (seed 003)";

    fn stimulus(&self) -> BoxedStrategy<Vec<Inputs>> {
        cycles(self, case_cycles(self)).boxed()
    }

    fn properties(&self) -> Option<Proof> {
        Some(proof(self))
    }

    /// docs/stall-inspector.md §1–§3: each cycle class and each warp class, each memory-data
    /// sub-class flushed with blame, each memory-structural reason of a MEM_STRUCT cycle, the
    /// status flags (saturation where a case can reach it), `clear` and an uncounted cycle.
    fn coverpoints(&self) -> Vec<Point> {
        let mut v = vec![];
        for c in Class::ALL {
            let (code, name) = (c.code(), c.name().to_lowercase());
            v.push(Point::point(
                format!("cycle_{name}"),
                "§1.2",
                move |_, i, o, _| i.en && o.cls == code,
            ));
            v.push(Point::point(
                format!("warp_{name}"),
                "§1.2",
                move |_, _, o, _| o.wcls.contains(&code),
            ));
        }
        for s in self.md_sources() {
            v.push(Point::point(
                format!("flush_src_{s}"),
                "§1.3",
                move |_, _, o, _| o.flush_valid && o.flush_src == s && o.flush_amt > 0,
            ));
        }
        for r in self.ms_reasons() {
            v.push(Point::point(
                format!("mem_struct_reason_{r}"),
                "§1.4",
                move |_, i, o, _| i.en && o.cls == Class::MemStruct.code() && o.ms_cyc_reason == r,
            ));
        }
        v.push(Point::point("clear", "§3.3", |_, i, _, _| i.clear));
        v.push(Point::point("uncounted_cycle", "§3.3", |_, i, _, _| {
            !i.en && !i.clear
        }));
        v.extend(status_points(self));
        v
    }

    /// The default preset (NW = 8) and NW = 1, 4 (where I9 is proven, docs §6).
    fn proof_configs() -> Vec<Params> {
        let d = Params::default();
        vec![
            d.clone(),
            Params { nw: 1, ..d.clone() },
            Params { nw: 4, ..d },
        ]
    }
}

/// This block's coverpoints (docs/coverage.md).
type Point = Cover<Params>;

/// Each status flag (§3.5) rising; the saturation flags only where a random case's
/// counts reach 2^CW − 1 or 2^BW − 1.
fn status_points(p: &Params) -> Vec<Point> {
    let cycles = case_cycles(p) as u128;
    let most = cycles * if p.warp_counters { u128::from(p.nw) } else { 1 };
    let reach = |bits: u32, most: u128| (1u128 << bits) - 1 <= most;
    let flags = [
        ("counter_saturates", status::COUNTER_SAT, reach(p.cw, most)),
        ("blame_saturates", status::BLAME_SAT, reach(p.bw, cycles)),
        ("ready_not_issued", status::READY_NOT_ISSUED, true),
        ("issued_not_ready", status::ISSUED_NOT_READY, true),
        ("bad_reason", status::BAD_REASON, true),
        ("final_without_hazard", status::FINAL_WITHOUT_HAZARD, true),
    ];
    flags
        .into_iter()
        .map(|(name, bit, reachable)| match reachable {
            true => Point::point(name, "§3.5", move |_, _, o, _| o.status >> bit & 1 == 1),
            false => Point::unreachable(
                name,
                "§3.5",
                "2^CW − 1 (2^BW − 1 for blame) exceeds what a random case can count",
            ),
        })
        .collect()
}
