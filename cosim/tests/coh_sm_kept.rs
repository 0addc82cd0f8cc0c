//! The stall planes `coh_sm` keeps at its events (docs/stall-inspector.md §7.5, §10.8) against
//! planes rebuilt from every warp's view, every cycle, on random programs: the debug
//! cross-check that keeps the optimisation from drifting from the views the issue stage uses.

use smrtl_cosim::sm::coh_sm::params::{CohParams, Protocol};
use smrtl_cosim::sm::coh_sm::prog::{AtomF, Func, Op, Pat, IMM, NONE};
use smrtl_cosim::sm::coh_sm::{probe, CohSystem};

const LINE: u64 = 128;

/// xorshift64*.
fn rand(s: &mut u64) -> u64 {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    s.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// One random operation at `pc` of `n`: every kind, compute on all three units, forward
/// branches (taken: a fetch redirect) and barriers.
fn random_op(s: &mut u64, pc: usize, n: usize) -> Op {
    let r = (rand(s) % 8) as u8;
    let at = Pat {
        base: rand(s) % 48 * LINE + rand(s) % 4 * 4,
        stride: [0, 4, 8, 64, 128][(rand(s) % 5) as usize],
        lanes: 1 + (rand(s) % 32) as u8,
        reg: NONE,
    };
    let sp = Pat {
        base: rand(s) % 64 * 128,
        ..at
    };
    let f = [Func::Add, Func::Mul, Func::Sfu, Func::Hash][(rand(s) % 4) as usize];
    match rand(s) % 18 {
        0 | 1 => Op::Ld { dst: r, at },
        2 => Op::St { src: r, at },
        3 => Op::Atom {
            f: AtomF::Add,
            cmp: NONE,
            dst: r,
            src: NONE,
            at,
        },
        4 => Op::Acquire,
        5 => Op::Release,
        6 => Op::SpLd { dst: r, at: sp },
        7 => Op::SpSt { src: r, at: sp },
        8 => Op::StashMap {
            spm: rand(s) % 8 * 1024,
            global: (1 << 20) + rand(s) % 8 * 1024,
            bytes: 1024,
            reg: NONE,
        },
        9 => Op::StashLd { dst: r, at: sp },
        10 => Op::StashSt { src: r, at: sp },
        11 => Op::Dma {
            spm: rand(s) % 8 * 1024,
            global: rand(s) % 64 * LINE,
            bytes: 128 * (1 + rand(s) % 8),
            to_spm: rand(s).is_multiple_of(2),
            reg: NONE,
        },
        12 | 13 => Op::Calc {
            f,
            dst: r,
            a: (rand(s) % 8) as u8,
            b: IMM,
            imm: rand(s) % 16,
        },
        14 => Op::Bra {
            to: (pc + 1 + (rand(s) % 3) as usize).min(n) as u32,
        },
        15 => Op::Barrier,
        _ => Op::Comp {
            dst: r,
            a: (rand(s) % 8) as u8,
            b: NONE,
            lat: 1 + (rand(s) % 8) as u8,
            ii: 1 + (rand(s) % 2) as u8,
        },
    }
}

/// Every cycle of every SM: the kept planes equal the views' planes, and the warps the LSU
/// blocks have the kept reason.
fn check(p: &CohParams, progs: Vec<Vec<Vec<Op>>>, case: u64) -> u64 {
    let mut sys = CohSystem::new(p, progs).expect("valid programs");
    sys.keep_planes();
    let mut blocked_cycles = 0;
    sys.run_with(200_000, |sys| {
        let t = sys.cycle() - 1;
        for s in 0..sys.sms() {
            let k = sys.kept(s).expect("kept");
            let (derived, blocked) = probe::planes_of(sys.view(s));
            assert_eq!(
                k.planes(),
                derived,
                "case {case}, SM {s}, cycle {t}: kept planes"
            );
            for (r, &m) in blocked.iter().enumerate().filter(|(_, &m)| m != 0) {
                assert_eq!(
                    (r as u8, m),
                    (k.reason(), derived.ms_block),
                    "case {case}, SM {s}, cycle {t}: LSU reason"
                );
                blocked_cycles += 1;
            }
        }
    })
    .expect("finishes");
    blocked_cycles
}

#[test]
fn kept_planes_equal_the_views_every_cycle_on_random_programs() {
    let mut seed = 0x6b65_7074_u64;
    let cases = std::env::var("COH_FUZZ_CASES").map_or(24, |v| v.parse().unwrap_or(24));
    let mut blocked = 0;
    for case in 0..cases {
        let p = CohParams {
            sms: 1 + (case % 3) as u32,
            warps: [4, 8, 3][case as usize % 3],
            protocol: [Protocol::Gpu, Protocol::Denovo][case as usize % 2],
            mshrs: [4, 32][case as usize / 2 % 2],
            sb_entries: [2, 32][case as usize / 4 % 2],
            redirect: (case % 4) as u32,
            ..CohParams::default()
        };
        let n = 40;
        let progs = (0..p.sms)
            .map(|_| {
                (0..p.warps)
                    .map(|_| (0..n).map(|pc| random_op(&mut seed, pc, n)).collect())
                    .collect()
            })
            .collect();
        blocked += check(&p, progs, case);
    }
    // The cases reach the LSU blocks (the planes' SM-wide part).
    assert!(blocked > 100, "{blocked} cycles with LSU blocks");
}
