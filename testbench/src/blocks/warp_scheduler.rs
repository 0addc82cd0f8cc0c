//! Stimulus for one warp scheduler (docs/scratchpad-sharing.md §4): one [`Cycle`] per cycle and
//! a proptest strategy with persistent warp state. The ready set mostly changes a bit or two
//! per cycle (so the last pick often stays ready: GTO and GREEDY keep it, LRR walks on), is
//! sometimes redrawn at one of four densities (a single ready warp moves TWO_LEVEL between
//! groups) or emptied; classes change one warp at a time (code 3 included); ages are drawn from
//! a few values in some cases (ties at any AGE_W) and are reassigned as warps relaunch; resets
//! are rare.

use crate::design::{Case, OldBench};
use proptest::prelude::*;
use smrtl_cosim::blocks::warp_scheduler::{Model, Warp};
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::sharing::Class;
use smrtl_hdl::blocks::warp_scheduler::{build, port, Params};
use smrtl_hdl::netlist::mask;
use smrtl_hdl::tools::ToolError;
use smrtl_hdl::Module;

/// All the scheduler's inputs of one cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    pub reset: bool,
    /// Per warp of the scheduler, WS of them.
    pub warps: Vec<Warp>,
}

/// The cycle as one input buffer (values are cut to the field widths).
pub fn encode(p: &Params, layout: &Layout, c: &Cycle) -> Vec<u64> {
    let aw = p.age_w as usize;
    let mut buf = vec![0u64; layout.in_words];
    let slot = |name: &str| layout.in_slot(name);
    slot("reset").set(&mut buf, c.reset as u64);
    for (j, w) in c.warps.iter().enumerate() {
        slot(port::READY).set_field(&mut buf, j, 1, w.ready as u64);
        slot(port::CLS).set_field(&mut buf, j * Class::BITS, Class::BITS, w.cls);
        slot(port::AGE).set_field(&mut buf, j * aw, aw, w.age);
    }
    buf
}

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
    warps: Vec<Warp>,
    density: u8,
    age_pool: bool,
    /// Next dynamic warp id for a relaunched warp (wraps at AGE_W bits).
    next_age: u64,
}

impl Warps {
    fn new(p: &Params, (density, age_pool, bits): Start) -> Warps {
        let mut w = Warps {
            p: p.clone(),
            warps: vec![],
            density,
            age_pool,
            next_age: 0,
        };
        w.warps = bits
            .iter()
            .enumerate()
            .map(|(j, &b)| Warp {
                ready: at_density(density, b, b >> 17, b >> 33) & 1 == 1,
                cls: (b >> 2) & mask(Class::BITS),
                age: w.age(j as u64, b >> 8),
            })
            .collect();
        w.next_age = w.warps.len() as u64;
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

    fn cycle(&mut self, (action, a, b, bits, reset): Raw) -> Cycle {
        let ws = self.warps.len();
        let (a, b) = (a % ws, b % ws);
        match action {
            0..=5 => self.warps[a].ready ^= true,
            6..=8 => {
                self.warps[a].ready ^= true;
                self.warps[b].ready ^= true;
            }
            9 | 10 => {
                // The case's density, or any of the four.
                let density = match bits & 1 {
                    0 => self.density,
                    _ => ((bits >> 1) % 4) as u8,
                };
                for (j, w) in self.warps.iter_mut().enumerate() {
                    let x = bits.rotate_left(j as u32) ^ (bits >> 7).rotate_right(3 * j as u32);
                    w.ready = at_density(density, x, x >> 11, x >> 23) & 1 == 1;
                }
            }
            11 => {
                // A single ready warp: TWO_LEVEL moves to its group.
                for (j, w) in self.warps.iter_mut().enumerate() {
                    w.ready = j == a;
                }
            }
            12 => self.warps.iter_mut().for_each(|w| w.ready = false),
            13 | 14 => self.warps[a].cls = bits & mask(Class::BITS),
            15 | 16 => {
                // A relaunched warp: a new dynamic id.
                self.warps[a].age = self.age(self.next_age, bits);
                self.next_age += 1;
            }
            _ => {}
        }
        Cycle {
            reset,
            warps: self.warps.clone(),
        }
    }
}

/// A case of `1..=max` cycles for `p`.
pub fn cycles(p: &Params, max: usize) -> impl Strategy<Value = Vec<Cycle>> {
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

pub struct WarpSchedulerBench;

impl OldBench for WarpSchedulerBench {
    type Params = Params;
    const SUMMARY: &'static str =
        "one warp scheduler: Owner Warp First, LRR, GTO or two-level, with its last pick (seed 001)";

    fn module(p: &Params) -> Module {
        build(p)
    }

    fn model(p: &Params, layout: &Layout) -> Box<dyn Simulator + Send> {
        Box::new(Model::new(p, layout))
    }

    fn cases(p: &Params, layout: &Layout) -> BoxedStrategy<Case> {
        let (p2, layout) = (p.clone(), layout.clone());
        cycles(p, CASE_CYCLES)
            .prop_map(move |cs| cs.iter().map(|c| encode(&p2, &layout, c)).collect())
            .boxed()
    }

    fn cost_notes(p: &Params) -> Result<smrtl_synth::Notes, ToolError> {
        smrtl_synth::blocks::warp_scheduler::notes(p)
    }
}
