//! Stimulus for one warp scheduler (docs/scratchpad-sharing.md §4): a proptest strategy of typed
//! cycles with persistent warp state. The ready set mostly changes a bit or two
//! per cycle (so the last pick often stays ready: GTO and GREEDY keep it, LRR walks on), is
//! sometimes redrawn at one of four densities (a single ready warp moves TWO_LEVEL between
//! groups) or emptied; classes change one warp at a time (code 3 included); ages are drawn from
//! a few values in some cases (ties at any AGE_W) and are reassigned as warps relaunch; resets
//! are rare; few or most warps start waiting, and `waiting` bits toggle one warp at a time
//! (TWO_LEVEL_ACTIVE demotes those).

use crate::coverage::Cover;
use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::warp_scheduler::Model;
use smrtl_hdl::blocks::sharing::{Class, Sched, TWO_LEVEL_GROUP};
use smrtl_hdl::blocks::warp_scheduler::port::{Inputs, Outputs};
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
        // The share of warps not waiting, per case (one in sixteen to three quarters): with
        // few, TWO_LEVEL_ACTIVE's list churns through the whole pending FIFO in a case.
        let active = (bits[0] >> 62) as u8;
        for (j, &b) in bits.iter().enumerate() {
            w.warps.ready[j] = at_density(density, b, b >> 17, b >> 33) & 1 == 1;
            w.warps.cls[j] = (b >> 2) & mask(Class::BITS);
            w.warps.age[j] = w.age(j as u64, b >> 8);
            w.warps.waiting[j] = at_density(active, b >> 40, b >> 47, b >> 54) & 1 == 0;
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

    /// docs/scratchpad-sharing.md §4: the policy picking each candidate position, no ready
    /// warp, and the policy's own rules (OWF: each class picked, rank over age, the index
    /// tie-break, GREEDY keeping the last; GTO keeping the last; LRR wrapping; TWO_LEVEL
    /// switching groups; TWO_LEVEL_ACTIVE demoting a waiting warp), reset.
    fn coverpoints(&self) -> Vec<Point> {
        let mut v: Vec<Point> = (0..self.ws() as u64)
            .map(|w| {
                Point::point(format!("pick_warp_{w}"), "§4", move |_, _, o, _| {
                    o.iss_valid && o.iss_idx == w
                })
            })
            .collect();
        v.push(Point::point("no_ready_warp", "§4", |_, _, o, _| {
            !o.iss_valid
        }));
        v.push(Point::point("reset", "§4", |_, i, _, _| i.reset));
        v.extend(match self.sched {
            Sched::Owf => owf_points(self),
            Sched::Gto => vec![keeps_last("gto_keeps_last")],
            Sched::Lrr => vec![Point::point("lrr_wraps_around", "§4", |_, _, o, _| {
                o.iss_valid && o.last_valid && o.iss_idx <= o.last_idx
            })],
            Sched::TwoLevel => vec![group_switch(self)],
            Sched::TwoLevelActive => vec![demotion(self)],
        });
        v
    }
}

/// This block's coverpoints (docs/coverage.md).
type Point = Cover<Params>;

/// The ready warps other than the pick.
fn ready_others<'a>(i: &'a Inputs, o: &Outputs) -> impl Iterator<Item = usize> + 'a {
    let w = o.iss_idx as usize;
    (0..i.ready.len()).filter(move |&j| j != w && i.ready[j])
}

/// The pick's OWF key `(rank, age)` of warp `j`.
fn key(p: &Params, i: &Inputs, j: usize) -> (u64, u64) {
    (p.rank.of(Class::of_code(i.cls[j])), i.age[j])
}

/// The pick is the last warp while another ready warp has a better key (GREEDY, GTO).
fn keeps_last(name: &str) -> Point {
    Point::point(name, "§4", |p, i, o, _| {
        let (l, n) = (o.last_idx as usize, i.ready.len());
        o.iss_valid
            && o.last_valid
            && o.iss_idx == o.last_idx
            && (0..n).any(|j| i.ready[j] && key(p, i, j) < key(p, i, l))
    })
}

/// Each class picked, a better rank beating an older warp, equal keys going to the lower
/// index, and GREEDY keeping the last pick.
fn owf_points(p: &Params) -> Vec<Point> {
    let mut v: Vec<Point> = [Class::Owner, Class::Unshared, Class::Nonowner]
        .into_iter()
        .map(|c| {
            let name = format!("pick_{c:?}").to_lowercase();
            Point::point(name, "§4", move |_, i, o, _| {
                o.iss_valid && Class::of_code(i.cls[o.iss_idx as usize]) == c
            })
        })
        .collect();
    v.extend(order_points(p));
    v.push(match p.greedy {
        true => keeps_last("greedy_keeps_last"),
        false => Point::unreachable("greedy_keeps_last", "§4", "GREEDY = false"),
    });
    v
}

/// A better rank beating an older warp, and equal keys going to the lower index.
fn order_points(p: &Params) -> Vec<Point> {
    if p.ws() == 1 {
        let why = "WS = 1: no second warp to compare with";
        return vec![
            Point::unreachable("rank_beats_age", "§4", why),
            Point::unreachable("tie_to_lower_index", "§4", why),
        ];
    }
    vec![
        Point::point("rank_beats_age", "§4", |p, i, o, _| {
            let w = o.iss_idx as usize;
            let (rank, age) = key(p, i, w);
            o.iss_valid && ready_others(i, o).any(|j| i.age[j] < age && key(p, i, j).0 > rank)
        }),
        Point::point("tie_to_lower_index", "§4", |p, i, o, _| {
            let w = o.iss_idx as usize;
            o.iss_valid && ready_others(i, o).any(|j| j > w && key(p, i, j) == key(p, i, w))
        }),
    ]
}

/// TWO_LEVEL leaving the last pick's group.
fn group_switch(p: &Params) -> Point {
    if p.ws() <= TWO_LEVEL_GROUP {
        return Point::unreachable("group_switch", "§4", "one group: WS ≤ 8");
    }
    let g = TWO_LEVEL_GROUP as u64;
    Point::point("group_switch", "§4", move |_, _, o, _| {
        o.iss_valid && o.last_valid && o.iss_idx / g != o.last_idx / g
    })
}

/// TWO_LEVEL_ACTIVE moving a waiting active warp to the pending FIFO (§4.1): after the
/// edge, a warp waiting in this cycle at the back of the FIFO, where demotion puts it.
fn demotion(p: &Params) -> Point {
    if p.ws() <= p.tl_slots() {
        let why = "WS ≤ TL_ACTIVE: a demoted warp is refilled in the same cycle";
        return Point::unreachable("waiting_warp_demoted", "§4.1", why);
    }
    Point::point("waiting_warp_demoted", "§4.1", |_, i, _, m| {
        let lists = m
            .state()
            .lists
            .as_ref()
            .expect("TWO_LEVEL_ACTIVE keeps lists");
        !i.reset && lists.pending.back().is_some_and(|&w| i.waiting[w])
    })
}
