//! Stimulus for one warp scheduler (docs/scratchpad-sharing.md §4): a proptest strategy of typed
//! cycles with persistent warp state. The ready set mostly changes a bit or two
//! per cycle (so the last pick often stays ready: GTO and GREEDY keep it, LRR walks on), is
//! sometimes redrawn at one of four densities (a single ready warp moves TWO_LEVEL between
//! groups) or emptied; classes change one warp at a time (code 3 included); ages are drawn from
//! a few values in some cases (ties at any AGE_W) and are reassigned as warps relaunch; resets
//! are rare; `waiting` bits toggle one warp at a time (TWO_LEVEL_ACTIVE demotes those).

use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::warp_scheduler::Model;
use smrtl_hdl::blocks::sharing::Class;
use smrtl_hdl::blocks::warp_scheduler::port::Inputs;
use smrtl_hdl::blocks::warp_scheduler::Params;
use smrtl_hdl::netlist::mask;

/// Longest random case; a failing case shrinks from at most this many cycles.
pub const CASE_CYCLES: usize = 64;

/// One cycle's draws: action, two warp picks, random bits, reset.
type Raw = (u8, usize, usize, u64, bool);

fn raw() -> impl Strategy<Value = Raw> {
    (
        0..20u8,
        any::<usize>(),
        any::<usize>(),
        any::<u64>(),
        prop::bool::weighted(0.01),
    )
}

/// What a case starts from: ready density (0..4), whether ages come from a pool of four values,
/// and per-warp random bits (ready, class and age derive from them).
type Start = (u8, bool, Vec<u64>);

/// Ready bits at `density` (0: about one in sixteen, 1: a quarter, 2: half, 3: three quarters)
/// from three random words.
fn at_density(density: u8, a: u64, b: u64, c: u64) -> u64 {
    match density {
        0 => a & b & c & (c >> 1),
        1 => a & b,
        2 => a,
        _ => a | b,
    }
}

/// The scheduler's warps while a case is generated.
struct Warps {
    p: Params,
    /// The warps' `ready`, `cls` and `age` (the next cycle's inputs).
    warps: Inputs,
    density: u8,
    age_pool: bool,
    /// Next dynamic warp id for a relaunched warp (wraps at AGE_W bits).
    next_age: u64,
}

impl Warps {
    fn new(p: &Params, (density, age_pool, bits): Start) -> Warps {
        let mut w = Warps {
            p: p.clone(),
            warps: Inputs::new(p),
            density,
            age_pool,
            next_age: bits.len() as u64,
        };
        for (j, &b) in bits.iter().enumerate() {
            w.warps.ready[j] = at_density(density, b, b >> 17, b >> 33) & 1 == 1;
            w.warps.cls[j] = (b >> 2) & mask(Class::BITS);
            w.warps.age[j] = w.age(j as u64, b >> 8);
            w.warps.waiting[j] = (b >> 40) & 3 == 0;
        }
        w
    }

    /// An age: from a pool of four (ties), launch order, or any value.
    fn age(&self, order: u64, bits: u64) -> u64 {
        let m = mask(self.p.age_w as usize);
        match (self.age_pool, bits % 4) {
            (true, _) => (bits >> 2) % 4,
            (false, 0) => (bits >> 2) & m,
            _ => order & m,
        }
    }

    fn cycle(&mut self, (action, a, b, bits, reset): Raw) -> Inputs {
        let ws = self.warps.ready.len();
        let (a, b) = (a % ws, b % ws);
        let ready = &mut self.warps.ready;
        match action {
            0..=5 => ready[a] ^= true,
            6..=8 => {
                ready[a] ^= true;
                ready[b] ^= true;
            }
            9 | 10 => {
                // The case's density, or any of the four.
                let density = match bits & 1 {
                    0 => self.density,
                    _ => ((bits >> 1) % 4) as u8,
                };
                for (j, r) in ready.iter_mut().enumerate() {
                    let x = bits.rotate_left(j as u32) ^ (bits >> 7).rotate_right(3 * j as u32);
                    *r = at_density(density, x, x >> 11, x >> 23) & 1 == 1;
                }
            }
            11 => {
                // A single ready warp: TWO_LEVEL moves to its group.
                for (j, r) in ready.iter_mut().enumerate() {
                    *r = j == a;
                }
            }
            12 => ready.fill(false),
            13 | 14 => self.warps.cls[a] = bits & mask(Class::BITS),
            15 | 16 => {
                // A relaunched warp: a new dynamic id.
                self.warps.age[a] = self.age(self.next_age, bits);
                self.next_age += 1;
            }
            // TWO_LEVEL_ACTIVE's demotion: a warp starts or stops waiting.
            17 | 18 => self.warps.waiting[a] ^= true,
            _ => {}
        }
        Inputs {
            reset,
            ..self.warps.clone()
        }
    }
}

/// A case of `1..=max` cycles for `p`.
pub fn cycles(p: &Params, max: usize) -> impl Strategy<Value = Vec<Inputs>> {
    let p = p.clone();
    let start = (
        0..4u8,
        prop::bool::weighted(0.3),
        prop::collection::vec(any::<u64>(), p.ws()),
    );
    (start, prop::collection::vec(raw(), 1..=max)).prop_map(move |(start, raws)| {
        let mut w = Warps::new(&p, start);
        raws.into_iter().map(|r| w.cycle(r)).collect()
    })
}

impl Bench for Params {
    type Model = Model;
    const SUMMARY: &'static str =
        "one warp scheduler: Owner Warp First, LRR, GTO, two-level or GPGPU-Sim's two-level active, with its last pick (seed 001)";

    fn stimulus(&self) -> BoxedStrategy<Vec<Inputs>> {
        cycles(self, CASE_CYCLES).boxed()
    }
}
