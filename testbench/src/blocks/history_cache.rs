//! Stimulus for the BCAWS block `history_cache` (docs/elastic-pipeline.md §5.2–5.4, §5.6): the
//! block's typed inputs per cycle and a proptest strategy biased towards hits, misses, evictions and MRU
//! updates — PCs from a small pool that maps mostly to one set, accumulator sequences that mostly walk
//! sw = 0..S−1 in order, lookups of recently written PCs — plus random counter and ready traffic.

use crate::coverage::Cover;
use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::history_cache::Model;
use smrtl_hdl::blocks::history_cache::port::{Inputs, Outputs};
use smrtl_hdl::blocks::history_cache::{BcawsPolicy, CounterMode, Params};
use smrtl_hdl::netlist::mask;

/// Longest random case; a failing case shrinks from at most this many cycles.
pub const CASE_CYCLES: usize = 64;

/// The warps of bit vector `v` (warp 0 lowest), `w` of them.
fn warps(v: u64, w: usize) -> Vec<bool> {
    (0..w).map(|k| v >> k & 1 == 1).collect()
}

/// Random draws of one cycle, turned into [`Inputs`] by [`cycles`].
type Raw = (
    (bool, bool, u32, u32, usize, bool),
    (u8, usize, u64),
    (u64, u64, bool),
    (bool, bool, bool, bool, bool, bool),
);

fn raw() -> impl Strategy<Value = Raw> {
    (
        (
            prop::bool::weighted(0.7),  // acc_v
            prop::bool::weighted(0.9),  // sw in order
            any::<u32>(),               // random sw
            any::<u32>(),               // svc_m1
            any::<usize>(),             // pc pick
            prop::bool::weighted(0.05), // random acc pc
        ),
        (0..5u8, any::<usize>(), any::<u64>()), // lookup kind, pick, random pc
        (any::<u64>(), any::<u64>(), prop::bool::weighted(0.25)), // ready, is_mem, only mem
        (
            prop::bool::weighted(0.15),  // load
            prop::bool::weighted(0.3),   // smem_sw_pending
            prop::bool::weighted(0.2),   // fe_hold
            prop::bool::weighted(0.85),  // enable
            prop::bool::weighted(0.01),  // clear
            prop::bool::weighted(0.003), // reset
        ),
    )
}

/// A case of per-cycle inputs: PCs from `pool`, accumulator walks, recent-PC lookups.
pub fn cycles(p: &Params, max: usize) -> impl Strategy<Value = Vec<Inputs>> {
    let p = p.clone();
    let ib = p.hc_sets.trailing_zeros();
    let pcw = p.pc_bits as usize;
    // Most pool PCs share one hot set, so a 2-way set overflows and the MRU decides.
    let hot = 1 % p.hc_sets as u64;
    let set = prop_oneof![3 => Just(hot), 1 => 0..p.hc_sets.min(4) as u64];
    let pc = (0..8u64, set, any::<u64>(), prop::bool::weighted(0.1)).prop_map(
        move |(tag, set, free, wild)| {
            if wild {
                free & mask(pcw)
            } else {
                ((tag << ib) | set) & mask(pcw)
            }
        },
    );
    (
        prop::collection::vec(pc, 3..=8),
        prop::collection::vec(raw(), 1..=max),
    )
        .prop_map(move |(pool, raws)| {
            let s = u64::from(p.warp_size / p.lanes);
            let svc_mask = mask(p.lanes.trailing_zeros() as usize);
            let (w, wmask) = (p.warps as usize, mask(p.warps as usize));
            let (mut next_sw, mut cur_pc) = (0u64, pool[0]);
            let mut written: Vec<u64> = vec![];
            let mut out = Vec::with_capacity(raws.len());
            for (acc, lk, rdy, ctl) in raws {
                let (acc_v, in_order, sw_rand, svc, pick, wild_pc) = acc;
                let mut c = Inputs {
                    acc_v,
                    acc_svc_m1: u64::from(svc) & svc_mask,
                    ..Inputs::new(&p)
                };
                if acc_v {
                    if in_order {
                        if next_sw == 0 {
                            cur_pc = pool[pick % pool.len()];
                        }
                        c.acc_sw = next_sw;
                        next_sw = (next_sw + 1) % s;
                    } else {
                        c.acc_sw = u64::from(sw_rand) % s.max(2);
                        cur_pc = pool[pick % pool.len()];
                    }
                    c.acc_pc_in = if wild_pc {
                        (sw_rand as u64).wrapping_mul(0x9E37_79B9) & mask(pcw)
                    } else {
                        cur_pc
                    };
                    if c.acc_sw == s - 1 {
                        written.push(c.acc_pc_in);
                    }
                } else {
                    // Idle MEM0: the other fields still toggle.
                    c.acc_sw = u64::from(sw_rand) % s.max(2);
                    c.acc_pc_in = pool[pick % pool.len()];
                }
                let (kind, lpick, lfree) = lk;
                c.lk_pc = match kind {
                    0 | 1 if !written.is_empty() => {
                        let recent = written.len().min(4);
                        written[written.len() - 1 - lpick % recent]
                    }
                    2 => cur_pc,
                    4 => lfree & mask(pcw),
                    _ => pool[lpick % pool.len()],
                };
                let (ready, is_mem, only_mem) = rdy;
                let is_mem = is_mem & wmask;
                let ready = if only_mem {
                    ready & is_mem
                } else {
                    ready & wmask
                };
                c.is_mem = warps(is_mem, w);
                c.ready = warps(ready, w);
                let (load, pending, hold, enable, clear, reset) = ctl;
                c.load = load;
                c.smem_sw_pending = pending;
                c.fe_hold = hold;
                c.enable = enable;
                c.clear = clear;
                c.reset = reset;
                if c.clear || c.reset {
                    next_sw = 0;
                    written.clear();
                }
                out.push(c);
            }
            out
        })
}

impl Bench for Params {
    type Model = Model;
    const SUMMARY: &'static str = "BCAWS: conflict history cache, degree accumulator, distance counter and memory-warp mask (seed 000)";

    fn stimulus(&self) -> BoxedStrategy<Vec<Inputs>> {
        cycles(self, CASE_CYCLES).boxed()
    }

    /// docs/elastic-pipeline.md §5.2–§5.4, §5.6: lookup hit and miss in a full set, an
    /// overwrite on hit, the accumulator mid-warp and valid, counter load / decrement / hold
    /// (each hold reason the mode has), a memory warp masked, the policy's exception,
    /// `kernel_start` clearing a valid line or the counter, reset.
    fn coverpoints(&self) -> Vec<Point> {
        let ways = self.hc_ways as usize;
        // The counter after the edge, from a cycle with no load, clear or reset.
        let kept = |i: &Inputs, o: &Outputs, m: &Model| {
            let after = u64::from(m.state.counter.counter());
            (o.counter > 0 && !i.load && !i.clear && !i.reset).then_some(after)
        };
        let mut v = vec![
            Point::point("lookup_hit", "§5.2", |_, _, o, _| o.lk_hit),
            Point::point("miss_in_full_set", "§5.2", move |_, i, o, m| {
                let c = &m.state.cache;
                let set = c.index(i.lk_pc);
                !o.lk_hit && (0..ways).all(|w| c.line(set, w).valid)
            }),
            Point::point("overwrite_on_hit", "§5.2", |_, i, o, _| {
                o.acc_valid && o.lk_hit && i.lk_pc == o.acc_pc
            }),
            Point::point("accumulator_valid", "§5.3", |_, _, o, _| o.acc_valid),
            Point::point("counter_load", "§5.4", |_, i, _, _| {
                i.load && !i.clear && !i.reset
            }),
            Point::point("counter_decrement", "§5.4", move |_, i, o, m| {
                kept(i, o, m) == Some(o.counter.wrapping_sub(1))
            }),
            Point::point("memory_warp_masked", "§5.4", |_, i, o, _| {
                (0..o.ready_m.len()).any(|w| i.ready[w] && i.is_mem[w] && !o.ready_m[w])
            }),
            Point::point("clear_with_state", "§5.2", |_, i, o, _| {
                i.clear && (o.lk_hit || o.counter > 0)
            }),
            Point::point("reset", "§5.2", |_, i, _, _| i.reset),
        ];
        v.push(Point::unless(
            (self.warp_size / self.lanes <= 2)
                .then_some("S ≤ 2: no subwarp between the first and the last"),
            "accumulate_mid_warp",
            "§5.3",
            |_, i, o, _| i.acc_v && i.acc_sw > 0 && !o.acc_valid,
        ));
        v.push(Point::unless(
            (!self.bcaws_freeze_on_stall).then_some("bcaws_freeze_on_stall = false"),
            "counter_frozen_on_stall",
            "§5.4",
            move |_, i, o, m| i.fe_hold && kept(i, o, m) == Some(o.counter),
        ));
        v.push(Point::unless(
            (self.counter_mode == CounterMode::LoadPredPlusSm1)
                .then_some("load_pred_plus_sm1 ignores smem_sw_pending"),
            "counter_held_for_subwarps",
            "§5.4",
            move |_, i, o, m| i.smem_sw_pending && !i.fe_hold && kept(i, o, m) == Some(o.counter),
        ));
        v.push(Point::unless(
            (self.bcaws_policy == BcawsPolicy::Strict)
                .then_some("strict: the mask holds every memory warp"),
            "only_memory_warps_pass_the_mask",
            "§5.6",
            |_, i, o, _| o.mask && (0..o.ready_m.len()).any(|w| i.is_mem[w] && o.ready_m[w]),
        ));
        v
    }
}

/// This block's coverpoints (docs/coverage.md).
type Point = Cover<Params>;
