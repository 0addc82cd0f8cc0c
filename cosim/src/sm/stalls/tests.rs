//! The probe's shortcuts against stepping every cycle in full (docs/stall-inspector.md §7.5).

use super::*;
use crate::blocks::stall_inspector::reason;
use smrtl_hdl::BlockParams as _;

/// A check that accepts every cycle: it makes the probe step the inspector cycle by cycle.
struct Accept;
impl StallCheck for Accept {
    fn cycle(
        &mut self,
        _: u64,
        _: &[WarpPreds],
        _: &CycleIn,
        _: &CycleOut,
        _: &Gsi,
    ) -> Result<(), String> {
        Ok(())
    }
    fn finish(&mut self, _: &Gsi) -> Result<(), String> {
        Ok(())
    }
}

/// One cycle of the random stream on `s`, stepped in full.
#[allow(clippy::too_many_arguments)]
fn cycle(s: &mut Stalls, pl: &Planes, block: u128, why: u8, wb: bool, draw: u64, t: u64, n: u64) {
    *s.pcs_mut().first_mut().unwrap() = t % 3;
    *s.planes_mut() = *pl;
    s.block(block, why);
    if wb {
        s.writeback(drawn_writeback(draw, s.nw()));
    }
    s.step(n);
}

/// The writeback of a cycle of the random stream.
fn drawn_writeback(draw: u64, nw: usize) -> Writeback {
    Writeback {
        warp: (draw >> 40) as usize % nw,
        src: (draw >> 50) as u8 & 7,
        is_final: draw >> 60 & 1 == 1,
    }
}

/// Repeated cycles batched onto the counters, and cycles with issue stepped without the
/// classification or the planes (`step_issue_unseen`, with a final writeback
/// `step_issue_final_unseen`), and cycles known by the model's key (`repeat_keyed`), give
/// the breakdown of stepping every cycle in full: random planes held
/// for random stretches, writebacks, blocks, issue counts, snapshots, saturation.
#[test]
fn repeated_cycles_batch_exactly() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    // `pool`: the planes are drawn from a few states that come back (a spin loop), keyed by
    // content, and `a` keeps its recent states (`repeat_cached`, `repeat_keyed_final`).
    for (nw, cw, bw, per_pc, pool) in [
        ("8", "32", "16", true, false),
        ("8", "32", "16", false, false),
        ("5", "8", "3", false, false),
        ("6", "32", "16", false, true),
        ("6", "9", "3", false, true),
    ] {
        let p = Params::resolve_pairs(None, &[("NW", nw), ("CW", cw), ("BW", bw)]).unwrap();
        let opts = StallOptions {
            every: 37,
            per_pc,
            audit: false,
        };
        let mut a = Stalls::new(&p, opts);
        if pool {
            a.keep_states();
        }
        let mut b = Stalls::new(&p, opts).with_check(Box::new(Accept));
        let mut pl = Planes::default();
        let mut hold = 0;
        let mut shortcuts = [0u32; 5];
        let states: Vec<(u64, [u64; 4])> = (0..12)
            .map(|_| (rnd(), [rnd(), rnd(), rnd(), rnd()]))
            .collect();
        for t in 0..20_000u64 {
            if rnd() % 4 == 0 {
                let (h, r) = if pool {
                    states[(rnd() % 12) as usize]
                } else {
                    (rnd(), [rnd(), rnd(), rnd(), rnd()])
                };
                hold = h;
                pl = Planes {
                    active: u128::from(r[0] | r[1]),
                    inst_avail: u128::from(r[1] | r[2] | r[3]),
                    sync_wait: u128::from(r[2] & r[3] & r[0]),
                    haz_load: u128::from(r[3] & r[1]),
                    haz_comp: u128::from(r[0] & r[2]),
                    is_mem: u128::from(r[1] ^ r[3]),
                    ms_block: 0,
                    fu_block: u128::from(r[2] & r[1]),
                };
            }
            let draw = rnd();
            let n = u64::from(draw % 5 == 0);
            // Blocks held with the planes, in a third of the cycles.
            let block = u128::from(hold >> 8) & pl.is_mem & if draw % 3 == 0 { !0 } else { 0 };
            let why = [reason::MSHR_FULL, reason::OTHER, 0][(hold >> 20) as usize % 3] as u8;
            let wb = (draw >> 30) % 9 == 0;
            // `a` takes the models' shortcuts where they apply: an issue cycle without its
            // planes, a non-issue cycle known by its key.
            let key = [
                pl.active as u64,
                pl.haz_load as u64,
                block as u64 | u64::from(why) << 60,
                pl.inst_avail as u64 ^ pl.is_mem as u64,
                if pool { hold } else { t / 50 },
            ];
            let ready = ready_of(&pl, a.nw()) != 0;
            let w = drawn_writeback(draw, a.nw());
            let had_hazard = pl.haz_load >> w.warp & 1 == 1;
            if !wb && n != 0 && block == 0 && a.step_issue_unseen(n, ready) {
                shortcuts[0] += 1;
            } else if !wb && n == 0 && a.repeat_keyed(key) {
                shortcuts[1] += 1;
            } else if !wb && n == 0 && a.repeat_cached(key) {
                shortcuts[3] += 1;
            } else if wb && n == 0 && a.repeat_keyed_final(key, &w, had_hazard) {
                shortcuts[4] += 1;
            } else if wb
                && n != 0
                && block == 0
                && a.step_issue_final_unseen(n, ready, &w, had_hazard)
            {
                shortcuts[2] += 1;
            } else {
                cycle(&mut a, &pl, block, why, wb, draw, t, n);
                if n == 0 {
                    a.keep_key(key);
                }
            }
            cycle(&mut b, &pl, block, why, wb, draw, t, n);
        }
        assert!(
            per_pc || shortcuts[..2].iter().all(|&k| k > 1000) && shortcuts[2] > 50,
            "{shortcuts:?}"
        );
        assert!(
            !pool || shortcuts[3] > 1000 && shortcuts[4] > 50,
            "{shortcuts:?}"
        );
        let (a, mut b) = (a.finish().unwrap(), b.finish().unwrap());
        b.checked = false;
        assert_eq!(a, b, "NW {nw} CW {cw} BW {bw}");
        assert!(a.status & 1 << status_sat() != 0 || cw == "32");
    }
}

fn status_sat() -> u32 {
    crate::blocks::stall_inspector::status::COUNTER_SAT
}
