//! The coherent memory system's cycle allocates nothing (docs/stall-inspector.md §10.1): a
//! counting allocator around the steps of a run with every kind of access on 4 SMs.

use smrtl_cosim::sm::coh_sm::params::{CohParams, Protocol};
use smrtl_cosim::sm::coh_sm::prog::{AtomF, Op, Pat, NONE};
use smrtl_cosim::sm::coh_sm::CohSystem;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Counting on this thread (the test harness's own threads allocate meanwhile).
    static ON: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    if ON.with(Cell::get) {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn prog(s: u64, w: u64) -> Vec<Op> {
    let base = (s * 8 + w) * 4096;
    let mut ops = vec![];
    for i in 0..40u64 {
        let r = (i % 60) as u8;
        ops.push(Op::Ld {
            dst: r,
            at: Pat {
                base: base + i * 512,
                stride: 64,
                lanes: 32,
                reg: NONE,
            },
        });
        ops.push(Op::St {
            src: r,
            at: Pat::words(base + i * 256 + (1 << 24)),
        });
        if i % 8 == 7 {
            ops.extend([
                Op::Release,
                Op::Atom {
                    f: AtomF::Add,
                    cmp: NONE,
                    dst: 61,
                    src: NONE,
                    at: Pat::one(1 << 20),
                },
                Op::Acquire,
            ]);
        }
    }
    ops.extend([
        Op::Dma {
            spm: 2048 * w,
            global: 1 << 22,
            bytes: 2048,
            to_spm: true,
            reg: NONE,
        },
        Op::StashMap {
            spm: 8192,
            global: 1 << 23,
            bytes: 8192,
            reg: NONE,
        },
        Op::StashLd {
            dst: 62,
            at: Pat::words(8192 + 512 * w),
        },
        Op::SpLd {
            dst: 63,
            at: Pat::words(2048 * w),
        },
        Op::StashSt {
            src: 63,
            at: Pat::words(8192 + 512 * w),
        },
    ]);
    ops
}

#[test]
fn a_cycle_allocates_nothing() {
    for protocol in [Protocol::Gpu, Protocol::Denovo] {
        let p = CohParams {
            sms: 4,
            warps: 8,
            protocol,
            ..CohParams::default()
        };
        let progs = (0..4)
            .map(|s| (0..8).map(|w| prog(s, w)).collect())
            .collect();
        let mut sys = CohSystem::new(&p, progs).expect("valid");
        let before = ALLOCS.load(Ordering::Relaxed);
        ON.with(|on| on.set(true));
        let cycles = sys.run(1_000_000);
        ON.with(|on| on.set(false));
        let cycles = cycles.expect("finishes");
        let n = ALLOCS.load(Ordering::Relaxed) - before;
        assert!(cycles > 1000, "{cycles}");
        assert_eq!(n, 0, "{protocol:?}: {n} allocations in {cycles} cycles");
    }
}

/// Kernels with control flow and values allocate nothing per cycle either: the example
/// kernels (loops, a CAS spin lock, every instruction family, the case studies) on 2 SMs under
/// both protocols, the
/// functional memory's table reserved when the system is built (docs §10.4).
#[test]
fn a_kernel_cycle_allocates_nothing() {
    use smrtl_cosim::sm::coh_sm::text;
    let dir = format!("{}/../examples/coh", env!("CARGO_MANIFEST_DIR"));
    for name in [
        "lock.coh",
        "loop.coh",
        "global.coh",
        "dma.coh",
        "stash.coh",
        "compute.coh",
    ] {
        let src = std::fs::read_to_string(format!("{dir}/{name}")).expect("example");
        let k = text::parse(&src).expect("parses");
        for protocol in ["gpu", "denovo"] {
            let set = [("protocol", protocol), ("sms", "2")];
            let p = k.params(None, &set).expect("params");
            let mut sys = CohSystem::from_kernel(&p, &k).expect("builds");
            let before = ALLOCS.load(Ordering::Relaxed);
            ON.with(|on| on.set(true));
            let cycles = sys.run(1_000_000);
            ON.with(|on| on.set(false));
            let cycles = cycles.expect("finishes");
            let n = ALLOCS.load(Ordering::Relaxed) - before;
            assert_eq!(
                n, 0,
                "{name} {protocol}: {n} allocations in {cycles} cycles"
            );
        }
    }
}

/// The rate of the model alone and with an inspector model fed from every SM's views on 15
/// SMs × 48 warps (docs/stall-inspector.md §10.6):
/// `cargo test --release -p smrtl-cosim --test coh_sm_alloc -- --ignored --nocapture`.
#[test]
#[ignore]
fn rate_on_fifteen_sms() {
    use smrtl_cosim::blocks::stall_inspector::{Gsi, Params};
    use smrtl_cosim::sm::coh_sm::probe::Feed;
    for protocol in [Protocol::Gpu, Protocol::Denovo] {
        let p = CohParams {
            protocol,
            ..CohParams::default()
        };
        let progs = || {
            (0..15)
                .map(|s| (0..48).map(|w| prog(s, w)).collect())
                .collect()
        };
        let best = |with_gsi: bool| {
            (0..3)
                .map(|_| {
                    let mut sys = CohSystem::new(&p, progs()).expect("valid");
                    let ip = Params {
                        nw: p.warps,
                        ..Params::default()
                    };
                    let mut gsi: Vec<Gsi> = (0..15).map(|_| Gsi::new(&ip)).collect();
                    let mut feed: Vec<Feed> = (0..15).map(|_| Feed::new(48)).collect();
                    let t0 = std::time::Instant::now();
                    let cycles = sys
                        .run_with(10_000_000, |s| {
                            if with_gsi {
                                for i in 0..15 {
                                    feed[i].step(&mut gsi[i], s.view(i));
                                }
                            }
                        })
                        .expect("finishes");
                    (t0.elapsed().as_secs_f64(), cycles, sys.stats(0).clone())
                })
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .expect("three runs")
        };
        let (alone, cycles, st) = best(false);
        let (with, _, _) = best(true);
        eprintln!(
            "{protocol:?}: {cycles} cycles; model {:.2} M SM-cycles/s, with the inspector \
             {:.2} (x{:.2}); SM 0 issued {}, served {:?}, LSU stuck {:?}",
            15.0 * cycles as f64 / alone / 1e6,
            15.0 * cycles as f64 / with / 1e6,
            with / alone,
            st.issued,
            st.served,
            st.lsu_stuck
        );
    }
}
