//! Stimulus for the BCAWS block `history_cache` (docs/elastic-pipeline.md §5.2–5.4, §5.6): the
//! block's typed inputs per cycle and a proptest strategy biased towards hits, misses, evictions and MRU
//! updates — PCs from a small pool that maps mostly to one set, accumulator sequences that mostly walk
//! sw = 0..S−1 in order, lookups of recently written PCs — plus random counter and ready traffic.

use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::history_cache::Model;
use smrtl_hdl::blocks::history_cache::port::Inputs;
use smrtl_hdl::blocks::history_cache::Params;
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
}
