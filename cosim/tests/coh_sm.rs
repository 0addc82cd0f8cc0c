//! Directed tests of the seed-003 coherent memory system (docs/stall-inspector.md §10): the
//! §2.5 tagging and §2.6 blocking rules on small per-warp programs, one per sub-class, and the
//! stall inspector fed from the views (I1, I5, status 0).

use smrtl_cosim::blocks::stall_inspector::{Class, Gsi, Params};
use smrtl_cosim::sm::coh_sm::params::{CohParams, Protocol};
use smrtl_cosim::sm::coh_sm::prog::{AtomF, Op, Pat, NONE};
use smrtl_cosim::sm::coh_sm::view::{reason, src, SmView};
use smrtl_cosim::sm::coh_sm::{probe, CohSystem};

const LINE: u64 = 128;

fn params(sms: u32, protocol: Protocol) -> CohParams {
    CohParams {
        sms,
        warps: 4,
        protocol,
        ..CohParams::default()
    }
}

/// Runs to the end; every cycle's views of every SM.
fn run(p: &CohParams, progs: Vec<Vec<Vec<Op>>>) -> (CohSystem, Vec<Vec<SmView>>) {
    let mut sys = CohSystem::new(p, progs).expect("valid programs");
    let mut trace = vec![];
    sys.run_with(100_000, |s| {
        trace.push((0..s.sms()).map(|i| s.view(i).clone()).collect())
    })
    .expect("finishes");
    (sys, trace)
}

fn use_reg(r: u8) -> Op {
    Op::Comp {
        dst: 63,
        a: r,
        b: NONE,
        lat: 1,
        ii: 1,
    }
}

fn delay(dst: u8, lat: u8) -> Op {
    Op::Comp {
        dst,
        a: NONE,
        b: NONE,
        lat,
        ii: 1,
    }
}

/// The sources of warp `w` of SM `s`'s writebacks, in order.
fn sources(trace: &[Vec<SmView>], s: usize, w: usize) -> Vec<u8> {
    trace
        .iter()
        .flat_map(|c| c[s].wbs.iter().filter(|b| b.warp == w).map(|b| b.src))
        .collect()
}

#[test]
fn thirty_four_cold_loads_block_on_mshr_full_after_the_33rd() {
    let p = params(1, Protocol::Gpu);
    let prog = (0..34)
        .map(|i| Op::Ld {
            dst: i as u8,
            at: Pat::one(i * LINE),
        })
        .collect();
    let (sys, trace) = run(&p, vec![vec![prog]]);
    let mut issued = 0;
    let first = trace
        .iter()
        .position(|c| {
            let w = c[0].warps[0];
            issued += u64::from(c[0].issued);
            w.ms_block && w.ms_reason == reason::MSHR_FULL
        })
        .expect("an MSHR_FULL cycle");
    let before: u64 = trace[..first].iter().map(|c| u64::from(c[0].issued)).sum();
    assert_eq!(before, 33, "33 loads issue before the first MSHR_FULL");
    assert_eq!(first, 33, "one load a cycle, the 34th blocked in cycle 33");
    assert!(
        trace[..first].iter().all(|c| !c[0].warps[0].ms_block),
        "nothing blocks before"
    );
    assert_eq!(sys.stats(0).served[src::MAIN_MEM as usize], 34);
    assert!(sys.stats(0).lsu_stuck[reason::MSHR_FULL as usize] > 100);
}

#[test]
fn dependent_add_after_scratchpad_load_waits_load_to_use_minus_one() {
    let p = params(1, Protocol::Gpu);
    let prog = vec![
        Op::SpLd {
            dst: 1,
            at: Pat::words(0),
        },
        use_reg(1),
    ];
    let (_, trace) = run(&p, vec![vec![prog]]);
    let issue: Vec<usize> = (0..trace.len())
        .filter(|&t| trace[t][0].issued == 1)
        .collect();
    assert_eq!(issue, [0, 2], "load-to-use latency 2 (1-cycle hit)");
    let md: Vec<usize> = (0..trace.len())
        .filter(|&t| trace[t][0].warps[0].haz_load && trace[t][0].warps[0].active && t < 2)
        .collect();
    assert_eq!(md, [1], "MEM_DATA for exactly load-to-use - 1 cycle");
    let wb = &trace[1][0].wbs;
    assert_eq!(wb.len(), 1);
    assert_eq!((wb[0].src, wb[0].is_final), (src::LOCAL_SPM, true));
}

/// SM 1 writes line `x` and releases; SM 0 reads it 200 cycles later.
fn remote_read(protocol: Protocol) -> (CohSystem, Vec<Vec<SmView>>) {
    let x = 5 * LINE;
    let p = params(2, protocol);
    let reader = vec![
        delay(1, 200),
        Op::Ld {
            dst: 1,
            at: Pat::one(x),
        },
        use_reg(1),
    ];
    let writer = vec![
        Op::St {
            src: NONE,
            at: Pat::one(x),
        },
        Op::Release,
    ];
    run(&p, vec![vec![reader], vec![writer]])
}

/// The inspector's md_sub of SM `s` over a run.
fn md_sub(p: &CohParams, trace: &[Vec<SmView>], s: usize) -> [u64; 8] {
    let mut gsi = Gsi::new(&Params {
        nw: p.warps,
        ..Params::default()
    });
    let mut feed = probe::Feed::new(p.warps as usize);
    for c in trace {
        feed.step(&mut gsi, &c[s]);
    }
    std::array::from_fn(|k| gsi.md_sub(k as u64))
}

#[test]
fn denovo_load_of_a_line_owned_elsewhere_is_remote_l1_and_l2_under_gpu() {
    let (sys, trace) = remote_read(Protocol::Denovo);
    assert_eq!(sources(&trace, 0, 0), [src::REMOTE_L1]);
    let md = md_sub(sys.params(), &trace, 0);
    assert!(md[src::REMOTE_L1 as usize] >= 35, "{md:?}");
    assert_eq!(md.iter().sum::<u64>(), md[src::REMOTE_L1 as usize]);
    assert_eq!(sys.owner(5), Some(1), "the reader does not take ownership");
    let (sys, trace) = remote_read(Protocol::Gpu);
    assert_eq!(sources(&trace, 0, 0), [src::L2]);
    let md = md_sub(sys.params(), &trace, 0);
    assert_eq!(md[src::REMOTE_L1 as usize], 0, "{md:?}");
    assert!(md[src::L2 as usize] >= 29, "{md:?}");
    for s in 0..2 {
        assert_eq!(sys.stats(s).served[src::REMOTE_L1 as usize], 0, "I6");
    }
    assert_eq!(sys.owner(5), None);
}

#[test]
fn store_behind_a_release_flush_is_pending_release_while_the_releaser_is_sync() {
    let p = params(1, Protocol::Gpu);
    let releaser = vec![
        Op::St {
            src: NONE,
            at: Pat::one(0),
        },
        Op::St {
            src: NONE,
            at: Pat::one(LINE),
        },
        Op::Release,
        use_reg(0),
    ];
    let storer = vec![
        delay(1, 8),
        Op::St {
            src: 1,
            at: Pat::one(64 * LINE),
        },
    ];
    let (sys, trace) = run(&p, vec![vec![releaser, storer]]);
    let blocked: Vec<usize> = (0..trace.len())
        .filter(|&t| {
            let w = trace[t][0].warps[1];
            w.ms_block && w.ms_reason == reason::PENDING_RELEASE
        })
        .collect();
    assert!(blocked.len() > 10, "the store waits for the flush");
    for &t in &blocked {
        assert!(
            trace[t][0].warps[0].sync_wait,
            "cycle {t}: the releaser is SYNC"
        );
    }
    assert_eq!(sys.stats(0).lsu_stuck[reason::PENDING_RELEASE as usize], 0);
}

#[test]
fn thirty_four_stores_to_distinct_lines_block_on_sb_full_after_the_33rd() {
    let p = params(1, Protocol::Gpu);
    let prog = (0..34)
        .map(|i| Op::St {
            src: NONE,
            at: Pat::one(i * LINE),
        })
        .collect();
    let (_, trace) = run(&p, vec![vec![prog]]);
    let first = trace
        .iter()
        .position(|c| c[0].warps[0].ms_block)
        .expect("a blocked store");
    assert_eq!(trace[first][0].warps[0].ms_reason, reason::SB_FULL);
    let before: u64 = trace[..first].iter().map(|c| u64::from(c[0].issued)).sum();
    assert_eq!(before, 33);
}

#[test]
fn second_miss_to_a_line_in_flight_is_l1_coal() {
    let p = params(1, Protocol::Gpu);
    let w = || {
        vec![
            Op::Ld {
                dst: 0,
                at: Pat::one(7 * LINE),
            },
            use_reg(0),
        ]
    };
    let (_, trace) = run(&p, vec![vec![w(), w()]]);
    assert_eq!(sources(&trace, 0, 0), [src::MAIN_MEM]);
    assert_eq!(sources(&trace, 0, 1), [src::L1_COAL]);
}

#[test]
fn scratchpad_bank_conflicts_replay_degree_minus_one_cycles() {
    let p = params(1, Protocol::Gpu);
    let conflicted = Pat {
        base: 0,
        stride: 128,
        lanes: 32,
        reg: NONE,
    };
    let prog = vec![
        Op::SpLd {
            dst: 1,
            at: conflicted,
        },
        use_reg(1),
    ];
    let other = vec![Op::SpLd {
        dst: 2,
        at: Pat::words(4096),
    }];
    let (sys, trace) = run(&p, vec![vec![prog, other]]);
    assert_eq!(sys.stats(0).lsu_stuck[reason::BANK_CONFLICT as usize], 31);
    assert!(trace
        .iter()
        .any(|c| c[0].warps[1].ms_block && c[0].warps[1].ms_reason == reason::BANK_CONFLICT));
    assert_eq!(sources(&trace, 0, 0), [src::LOCAL_SPM]);
}

/// One SM, two warps: warp 0 DMAs `bytes` into the scratchpad at word 0 and uses its first
/// word; warp 1, four cycles later, loads scratchpad word `other_word`.
fn dma_then_use(bytes: u64, other_word: u64) -> Vec<Vec<Vec<Op>>> {
    let user = vec![
        Op::Dma {
            spm: 0,
            global: 1 << 20,
            bytes,
            to_spm: true,
            reg: NONE,
        },
        Op::SpLd {
            dst: 1,
            at: Pat::words(0),
        },
        use_reg(1),
    ];
    let other = vec![
        delay(1, 4),
        Op::SpLd {
            dst: 2,
            at: Pat::words(other_word),
        },
    ];
    vec![vec![user, other]]
}

/// A transfer larger than the MSHR file is MSHR-bound: an access waiting on it is
/// MSHR_FULL ("blocked due to a full MSHR or a pending DMA" [P §VII-C]); with MSHRs for every
/// line the same wait is PENDING_DMA (docs/stall-inspector.md §10.3).
#[test]
fn an_access_behind_an_mshr_bound_transfer_is_mshr_full() {
    let waits = |mshrs: u32, bytes: u64| {
        let p = CohParams {
            mshrs,
            ..params(1, Protocol::Denovo)
        };
        let (_, trace) = run(&p, dma_then_use(bytes, 128));
        let of = |r: u8| {
            trace
                .iter()
                .filter(|c| c[0].warps[1].ms_block && c[0].warps[1].ms_reason == r)
                .count()
        };
        (of(reason::MSHR_FULL), of(reason::PENDING_DMA))
    };
    let (full, pending) = waits(32, 8192);
    // PENDING_DMA only while the engine still found entries (its first 32 lines).
    assert!(
        full > 300 && pending <= 32,
        "64 lines, 32 MSHRs: {full} {pending}"
    );
    let (full, pending) = waits(64, 8192);
    assert!(
        full == 0 && pending > 150,
        "64 lines, 64 MSHRs: {full} {pending}"
    );
}

#[test]
fn dma_region_blocks_its_first_use_and_other_memory_sees_pending_dma() {
    let p = params(1, Protocol::Denovo);
    let (sys, trace) = run(&p, dma_then_use(4096, 8192));
    let md = trace.iter().filter(|c| c[0].warps[0].haz_load).count();
    let pd = trace
        .iter()
        .filter(|c| c[0].warps[1].ms_block && c[0].warps[1].ms_reason == reason::PENDING_DMA)
        .count();
    assert!(md > 197, "the first use waits for the whole transfer: {md}");
    assert!(pd > 150, "the other warp's access waits behind it: {pd}");
    assert_eq!(sources(&trace, 0, 0), [src::LOCAL_SPM]);
    assert_eq!(
        sys.stats(0).served[src::MAIN_MEM as usize],
        0,
        "DMA lines are no loads"
    );
}

#[test]
fn stash_misses_fill_on_demand_and_then_hit() {
    let p = params(1, Protocol::Denovo);
    let prog = vec![
        Op::StashMap {
            spm: 0,
            global: 1 << 20,
            bytes: 4096,
            reg: NONE,
        },
        Op::StashLd {
            dst: 1,
            at: Pat::words(0),
        },
        use_reg(1),
        Op::StashLd {
            dst: 2,
            at: Pat::words(0),
        },
        use_reg(2),
    ];
    let (_, trace) = run(&p, vec![vec![prog]]);
    assert_eq!(sources(&trace, 0, 0), [src::MAIN_MEM, src::LOCAL_SPM]);
}

#[test]
fn atomics_run_at_the_l2_and_the_warp_waits_as_sync() {
    let p = params(2, Protocol::Denovo);
    let x = 9 * LINE;
    let atom = Op::Atom {
        f: AtomF::Add,
        cmp: NONE,
        dst: 1,
        src: NONE,
        at: Pat::one(x),
    };
    let a = vec![atom, use_reg(1), atom, use_reg(1)];
    let owner = vec![
        Op::St {
            src: NONE,
            at: Pat::one(x),
        },
        Op::Release,
    ];
    let (sys, trace) = run(&p, vec![vec![a], vec![owner]]);
    let src0 = sources(&trace, 0, 0);
    assert_eq!(src0.len(), 2);
    assert_eq!(src0[0], src::MAIN_MEM, "cold line");
    assert_eq!(
        src0[1],
        src::REMOTE_L1,
        "owned by SM 1: forwarded, ownership revoked"
    );
    assert_eq!(sys.owner(9), None);
    assert!(trace.iter().any(|c| c[0].warps[0].sync_wait));
    assert!(trace.iter().all(|c| !c[0].warps[0].haz_load));
}

#[test]
fn acquire_invalidates_the_l1_but_denovo_keeps_owned_lines() {
    let prog = |x: u64| {
        vec![
            Op::St {
                src: NONE,
                at: Pat::one(x),
            },
            Op::Release,
            Op::Ld {
                dst: 1,
                at: Pat::one(x + 64 * LINE),
            },
            use_reg(1),
            Op::Acquire,
            Op::Ld {
                dst: 2,
                at: Pat::one(x),
            },
            use_reg(2),
            Op::Ld {
                dst: 3,
                at: Pat::one(x + 64 * LINE),
            },
            use_reg(3),
        ]
    };
    let (_, trace) = run(&params(1, Protocol::Gpu), vec![vec![prog(0)]]);
    assert_eq!(sources(&trace, 0, 0), [src::MAIN_MEM, src::L2, src::L2]);
    let (_, trace) = run(&params(1, Protocol::Denovo), vec![vec![prog(0)]]);
    assert_eq!(sources(&trace, 0, 0), [src::MAIN_MEM, src::L1, src::L2]);
}

/// A mixed program on 4 SMs: loads, stores, atomics, fences, scratchpad, stash and DMA.
fn mixed(s: u64, w: u64) -> Vec<Op> {
    let base = (s * 4 + w) * 16 * LINE;
    let mut ops = vec![];
    for i in 0..6 {
        ops.push(Op::Ld {
            dst: i,
            at: Pat::words(base + u64::from(i) * LINE / 2),
        });
        ops.push(Op::St {
            src: i,
            at: Pat::one(LINE * ((s + w + u64::from(i)) % 7)),
        });
    }
    ops.extend([
        Op::Release,
        Op::Atom {
            f: AtomF::Add,
            cmp: NONE,
            dst: 10,
            src: NONE,
            at: Pat::one(1 << 16),
        },
        Op::Acquire,
        Op::Ld {
            dst: 11,
            at: Pat::one(LINE * ((s + 3) % 7)),
        },
        use_reg(11),
        Op::Dma {
            spm: 4096 * w,
            global: 1 << 22,
            bytes: 1024,
            to_spm: true,
            reg: NONE,
        },
        Op::StashMap {
            spm: 8192 + 1024 * w,
            global: (1 << 23) + base,
            bytes: 1024,
            reg: NONE,
        },
        Op::StashLd {
            dst: 12,
            at: Pat::words(8192 + 1024 * w),
        },
        Op::SpLd {
            dst: 13,
            at: Pat::words(4096 * w),
        },
        use_reg(12),
        use_reg(13),
        Op::Barrier,
        Op::StashSt {
            src: 13,
            at: Pat::words(8192 + 1024 * w),
        },
        Op::Release,
    ]);
    ops
}

fn mixed_progs() -> Vec<Vec<Vec<Op>>> {
    (0..4)
        .map(|s| (0..4).map(|w| mixed(s, w)).collect())
        .collect()
}

#[test]
fn runs_are_deterministic_and_feed_the_inspector_consistently() {
    for protocol in [Protocol::Gpu, Protocol::Denovo] {
        let p = params(4, protocol);
        let (sys_a, a) = run(&p, mixed_progs());
        let (_, b) = run(&p, mixed_progs());
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{protocol:?}");
        let ip = Params {
            nw: p.warps,
            ..Params::default()
        };
        for s in 0..4 {
            let mut gsi = Gsi::new(&ip);
            let mut feed = probe::Feed::new(p.warps as usize);
            for c in &a {
                feed.step(&mut gsi, &c[s]);
            }
            assert_eq!(gsi.status(), 0, "{protocol:?} SM {s}: status");
            let total: u64 = Class::ALL.iter().map(|&c| gsi.top(c)).sum();
            assert_eq!(total, a.len() as u64, "I1");
            assert_eq!(gsi.top(Class::NoStall), sys_a.stats(s).issued, "I2");
            let md: u64 =
                (0..8).map(|k| gsi.md_sub(k)).sum::<u64>() + gsi.blame().iter().sum::<u64>();
            assert_eq!(md, gsi.top(Class::MemData), "I5");
            assert_eq!(gsi.blame().iter().sum::<u64>(), 0, "I5 at the end");
            if protocol == Protocol::Gpu {
                assert_eq!(gsi.md_sub(3), 0, "I6");
            }
        }
    }
}

#[test]
fn lines_of_one_load_in_one_l1_bank_serialise_as_bank_conflict() {
    let p = params(1, Protocol::Gpu);
    let same_bank = Pat {
        base: 0,
        stride: 8 * LINE,
        lanes: 4,
        reg: NONE,
    };
    let prog = vec![Op::Ld {
        dst: 0,
        at: same_bank,
    }];
    let (sys, trace) = run(&p, vec![vec![prog]]);
    assert_eq!(sys.stats(0).lsu_stuck[reason::BANK_CONFLICT as usize], 3);
    assert_eq!(
        sources(&trace, 0, 0),
        [src::MAIN_MEM],
        "one register, tagged by its last part"
    );
}

#[test]
fn barrier_holds_warps_as_sync_until_all_arrive() {
    let p = params(1, Protocol::Gpu);
    let early = vec![Op::Barrier, use_reg(0)];
    let late = vec![delay(1, 20), use_reg(1), Op::Barrier];
    let (_, trace) = run(&p, vec![vec![early, late]]);
    let sync = trace.iter().filter(|c| c[0].warps[0].sync_wait).count();
    assert!((18..=22).contains(&sync), "{sync}");
}

#[test]
fn kernel_end_flushes_the_store_buffer() {
    let p = params(1, Protocol::Denovo);
    let prog = vec![Op::St {
        src: NONE,
        at: Pat::one(3 * LINE),
    }];
    let (sys, trace) = run(&p, vec![vec![prog]]);
    assert!(
        trace.len() as u64 >= p.l2_latency(0),
        "{} cycles",
        trace.len()
    );
    assert_eq!(sys.owner(3), Some(0), "registered at kernel end");
    assert_eq!(sys.occupancy(0), (1, 0));
}

#[test]
fn denovo_registration_of_a_line_owned_elsewhere_moves_ownership() {
    let x = 12 * LINE;
    let write = |wait: u8| {
        vec![
            delay(1, wait),
            Op::St {
                src: 1,
                at: Pat::one(x),
            },
            Op::Release,
        ]
    };
    let p = params(2, Protocol::Denovo);
    let (sys, trace) = run(&p, vec![vec![write(1)], vec![write(150)]]);
    assert_eq!(sys.owner(12), Some(1));
    assert_eq!(sys.occupancy(0).0, 0, "SM 0 lost the line");
    assert_eq!(sys.occupancy(1).0, 1);
    // SM 1's release waits for the forwarded registration (remote latency).
    let sync1 = trace.iter().filter(|c| c[1].warps[0].sync_wait).count() as u64;
    assert!(sync1 >= p.remote_lat as u64, "{sync1}");
}

#[test]
fn a_load_needs_a_destination() {
    let p = params(1, Protocol::Gpu);
    let bad = vec![Op::Ld {
        dst: NONE,
        at: Pat::one(0),
    }];
    let err = CohSystem::new(&p, vec![vec![bad]]).err().expect("refused");
    assert!(err.contains("destination"), "{err}");
}

/// xorshift64*.
fn rand(s: &mut u64) -> u64 {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    s.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// A random program of `n` operations over a small address space (so lines are shared).
fn random_prog(s: &mut u64, n: usize) -> Vec<Op> {
    (0..n)
        .map(|_| {
            let r = (rand(s) % 8) as u8;
            let line = rand(s) % 48;
            let at = Pat {
                base: line * LINE + rand(s) % 4 * 4,
                stride: [0, 4, 8, 64, 128][(rand(s) % 5) as usize],
                lanes: 1 + (rand(s) % 32) as u8,
                reg: NONE,
            };
            let sp = Pat {
                base: rand(s) % 64 * 128,
                ..at
            };
            match rand(s) % 14 {
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
                _ => Op::Comp {
                    dst: r,
                    a: (rand(s) % 8) as u8,
                    b: NONE,
                    lat: 1 + (rand(s) % 8) as u8,
                    ii: 1 + (rand(s) % 2) as u8,
                },
            }
        })
        .collect()
}

#[test]
fn random_programs_finish_and_keep_the_inspector_invariants() {
    let mut seed = 0x5eed_u64;
    let mut collisions = 0;
    let cases = std::env::var("COH_FUZZ_CASES").map_or(24, |v| v.parse().unwrap_or(24));
    for case in 0..cases {
        let protocol = if case % 2 == 0 {
            Protocol::Gpu
        } else {
            Protocol::Denovo
        };
        let sms = 1 + case % 3;
        let p = CohParams {
            mshrs: [4, 32][case as usize % 2],
            sb_entries: [2, 32][case as usize / 2 % 2],
            ..params(sms, protocol)
        };
        // Half the cases leave out DMA, stores or releases in turn, under both protocols (I7).
        let without = [None, Some(0), None, Some(1), None, Some(2)][(case / 2) as usize % 6];
        let keep = |op: &Op| match without {
            Some(0) => !matches!(op, Op::Dma { .. }),
            Some(1) => !op.is_store(),
            Some(2) => *op != Op::Release,
            _ => true,
        };
        let progs: Vec<Vec<Vec<Op>>> = (0..sms)
            .map(|_| {
                (0..4)
                    .map(|_| {
                        let mut ops = random_prog(&mut seed, 40);
                        ops.retain(keep);
                        ops
                    })
                    .collect()
            })
            .collect();
        let (sys, trace) = run(&p, progs);
        for s in 0..sms as usize {
            let mut gsi = Gsi::new(&Params {
                nw: p.warps,
                ..Params::default()
            });
            let mut feed = probe::Feed::new(p.warps as usize);
            for c in &trace {
                feed.step(&mut gsi, &c[s]);
            }
            assert_eq!(gsi.status(), 0, "case {case} SM {s}");
            assert_eq!(gsi.top(Class::NoStall), sys.stats(s).issued, "case {case}");
            let md: u64 = (0..8).map(|k| gsi.md_sub(k)).sum();
            let left: u64 = gsi.blame().iter().sum();
            assert_eq!(md + left, gsi.top(Class::MemData), "case {case}: I5");
            if feed.collisions == 0 {
                assert_eq!(left, 0, "case {case}: blame left without a collision");
            }
            collisions += feed.collisions;
            if protocol == Protocol::Gpu {
                assert_eq!(gsi.md_sub(3), 0, "case {case}: I6");
            }
            let i7 = match without {
                Some(0) => reason::PENDING_DMA,
                Some(1) => reason::SB_FULL,
                Some(2) => reason::PENDING_RELEASE,
                _ => reason::NONE,
            };
            if i7 != reason::NONE {
                assert_eq!(gsi.ms_sub(u64::from(i7)), 0, "case {case}: I7");
            }
        }
    }
    eprintln!("{collisions} final writebacks with blame beyond one per cycle");
}
