//! BCAWS block `history_cache` (docs/elastic-pipeline.md §5.2–5.4, §5.6, §9 G5, G18–G21, G23):
//! the spec's checks as directed scripts of typed cycles, each run on the behavioral model AND
//! the rusthdl RTL (every output equal every cycle, then the script's claims checked), the 2-way
//! replacement order, and the reach of the random stimulus. Random co-simulation on every
//! backend, lint, Icarus, synthesis, the flip-flop inventory and the planted fault are the
//! conformance suite's.

use smrtl_cosim::blocks::history_cache::{Bcaws, HistoryCache};
use smrtl_hdl::blocks::history_cache::port::{Inputs, Outputs};
use smrtl_hdl::blocks::history_cache::{BcawsPolicy, CounterMode, Params};
use smrtl_hdl::BlockParams;
use smrtl_testbench::check;

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).unwrap()
}

/// A per-warp bus as a bit vector, warp 0 lowest.
fn bits(v: &[bool]) -> u64 {
    v.iter().rev().fold(0, |m, &b| m << 1 | b as u64)
}

/// A check of one cycle's outputs.
type Check = Box<dyn Fn(&Outputs)>;

/// A directed scenario: cycles from reset, and checks on the outputs of chosen cycles.
struct Script {
    p: Params,
    cycles: Vec<Inputs>,
    checks: Vec<(usize, Check)>,
}

impl Script {
    fn new(p: &Params) -> Script {
        Script {
            p: p.clone(),
            cycles: vec![],
            checks: vec![],
        }
    }

    /// S = WS / L.
    fn s(&self) -> u32 {
        self.p.subwarps()
    }

    /// Idle inputs: everything 0 except `enable`.
    fn idle(&self) -> Inputs {
        Inputs {
            enable: true,
            ..Inputs::new(&self.p)
        }
    }

    /// The per-warp bus of bit vector `v`.
    fn warps(&self, v: u64) -> Vec<bool> {
        (0..self.p.warps).map(|w| v >> w & 1 == 1).collect()
    }

    /// Idle inputs with the ready and memory-warp vectors `ready`, `is_mem`.
    fn ready(&self, ready: u64, is_mem: u64) -> Inputs {
        Inputs {
            ready: self.warps(ready),
            is_mem: self.warps(is_mem),
            ..self.idle()
        }
    }

    /// Appends one cycle; returns its index.
    fn step(&mut self, c: Inputs) -> usize {
        self.cycles.push(c);
        self.cycles.len() - 1
    }

    /// Checks the outputs of cycle `at` after the run.
    fn on(&mut self, at: usize, check: impl Fn(&Outputs) + 'static) {
        self.checks.push((at, Box::new(check)));
    }

    /// A cycle that only looks `pc` up.
    fn lookup(&mut self, pc: u64) -> usize {
        let c = Inputs {
            lk_pc: pc,
            ..self.idle()
        };
        self.step(c)
    }

    /// A decision cycle: look `pc` up and load the counter.
    fn load(&mut self, pc: u64) -> usize {
        let c = Inputs {
            lk_pc: pc,
            load: true,
            ..self.idle()
        };
        self.step(c)
    }

    /// Subwarp `sw` of the instruction at `pc` leaving MEM0 with `svc_m1`.
    fn acc(&self, sw: u32, svc_m1: u32, pc: u64) -> Inputs {
        Inputs {
            acc_v: true,
            acc_sw: u64::from(sw),
            acc_svc_m1: u64::from(svc_m1),
            acc_pc_in: pc,
            ..self.idle()
        }
    }

    /// One SMEM warp instruction at `pc` leaving MEM0, one subwarp per cycle with `svc_m1[i]`;
    /// returns the cycles.
    fn warp(&mut self, pc: u64, svc_m1: &[u32]) -> Vec<usize> {
        assert_eq!(svc_m1.len() as u32, self.s());
        (0..svc_m1.len())
            .map(|sw| self.step(self.acc(sw as u32, svc_m1[sw], pc)))
            .collect()
    }

    /// The first subwarps of a warp: no `acc_valid` in any of them.
    fn warp_partial(&mut self, pc: u64, svc_m1: &[u32]) {
        for (sw, &svc) in svc_m1.iter().enumerate() {
            let at = self.step(self.acc(sw as u32, svc, pc));
            self.on(at, |o| assert!(!o.acc_valid));
        }
    }

    /// Stores `value` (at most S·(L−1)) for `pc`: one warp through the accumulator.
    fn store(&mut self, pc: u64, value: u32) {
        let (s, top) = (self.s() as usize, self.p.lanes - 1);
        let mut left = value;
        let svc: Vec<u32> = (0..s)
            .map(|_| {
                let v = left.min(top);
                left -= v;
                v
            })
            .collect();
        assert_eq!(left, 0, "{value} is not reachable in {s} subwarps");
        let last = *self.warp(pc, &svc).last().unwrap();
        self.on(last, move |o| {
            assert!(o.acc_valid);
            assert_eq!(o.acc_value, u64::from(value));
        });
    }

    fn clear(&mut self) -> usize {
        let c = Inputs {
            clear: true,
            ..self.idle()
        };
        self.step(c)
    }

    /// Runs the cycles on the model and rusthdl (every output equal), then the checks.
    fn run(self) -> Vec<Outputs> {
        let o = check::directed(&self.p, &self.cycles);
        for (at, check) in &self.checks {
            check(&o[*at]);
        }
        o
    }
}

#[test]
fn g5_accumulator_sequences() {
    let p = params("paper", &[]);
    assert_eq!((p.lanes, p.subwarps()), (8, 4));
    let mut d = Script::new(&p);
    for (k, (svc, want)) in [([3, 0, 0, 0], 3), ([7, 7, 7, 7], 28), ([0, 0, 0, 0], 0)]
        .into_iter()
        .enumerate()
    {
        let pc = 0x100 + k as u64;
        for (sw, at) in d.warp(pc, &svc).into_iter().enumerate() {
            d.on(at, move |o| {
                assert_eq!(o.acc_valid, sw == 3, "acc_valid at sw {sw} of {svc:?}");
                let shown = if sw == 3 { (want, pc) } else { (0, 0) };
                assert_eq!((o.acc_value, o.acc_pc), shown, "{svc:?} sw {sw}");
            });
        }
        // The sum landed in the cache at the sw 3 edge.
        let at = d.lookup(pc);
        d.on(at, move |o| {
            assert!(o.lk_hit, "{svc:?} not stored");
            assert_eq!((o.lk_data, o.pred), (want, want), "{svc:?}");
        });
    }
    d.run();
}

#[test]
fn g5_accumulator_restarts_at_sw0_and_holds_when_idle() {
    let mut d = Script::new(&params("paper", &[]));
    // A stray partial warp (sw 0, 1), then idle cycles, then a full warp: sw 0 restarts.
    d.warp_partial(0x7, &[5, 6]);
    d.step(d.idle());
    let outs = d.warp(0x8, &[1, 1, 1, 1]);
    d.on(outs[3], |o| assert_eq!(o.acc_value, 4));
    // Idle cycles between subwarps keep the partial sum.
    d.warp_partial(0x9, &[2, 3]);
    d.step(d.idle());
    d.step(d.idle());
    let at = d.step(d.acc(2, 4, 0x9));
    d.on(at, |o| assert!(!o.acc_valid));
    let at = d.step(d.acc(3, 7, 0x9));
    d.on(at, |o| {
        assert_eq!((o.acc_valid, o.acc_value, o.acc_pc), (true, 16, 0x9))
    });
    d.run();
}

#[test]
fn g18_clear_and_reset() {
    for preset in ["paper", "small"] {
        let mut d = Script::new(&params(preset, &[]));
        let s = d.s();
        let pcs = [0x1, 0x5, 0x103, 0x10, 0x2];
        for (i, &pc) in pcs.iter().enumerate() {
            d.store(pc, 1 + i as u32);
        }
        // Load the counter from a hit.
        d.load(0x5);
        let at = d.lookup(0x5);
        d.on(at, |o| assert_eq!(o.counter, 2));
        // Half a warp in the accumulator, then clear; a warp written in the clear cycle is
        // dropped.
        d.warp_partial(0x3, &[7, 7]);
        let at = d.step(Inputs {
            clear: true,
            lk_pc: 0x1,
            ..d.acc(s - 1, 7, 0x77)
        });
        d.on(at, |o| {
            assert!(
                o.lk_hit && o.acc_valid,
                "the clear cycle still shows the old state"
            )
        });
        for &pc in pcs.iter().chain([0x77].iter()) {
            let at = d.lookup(pc);
            d.on(at, move |o| {
                assert!(!o.lk_hit && o.pred == 0, "{pc:#x} hits after clear");
                assert_eq!((o.counter, o.mask), (0, false));
            });
        }
        // The accumulator restarted from 0 (sw 1.. would add to 0, not 14).
        let at = d.step(d.acc(s - 1, 1, 0x3));
        d.on(at, |o| {
            assert_eq!(o.acc_value, 1, "accumulator not cleared")
        });
        // `reset` does the same.
        d.store(0x4, 3);
        d.load(0x4);
        d.step(Inputs {
            reset: true,
            ..d.idle()
        });
        let at = d.lookup(0x4);
        d.on(at, |o| assert!(!o.lk_hit && o.counter == 0, "reset"));
        d.clear();
        d.run();
    }
}

#[test]
fn g19_first_execution_misses_then_hits() {
    let mut d = Script::new(&params("paper", &[]));
    let (pc, ready, is_mem) = (0x2A5, 0b1111, 0b0110);
    // Decision for p: miss → pred 0 → counter 0 → no mask.
    let at = d.step(Inputs {
        lk_pc: pc,
        load: true,
        ..d.ready(ready, is_mem)
    });
    d.on(at, |o| assert!(!o.lk_hit && o.pred == 0 && o.lk_data == 0));
    let at = d.step(Inputs {
        smem_sw_pending: true,
        ..d.ready(ready, is_mem)
    });
    d.on(at, move |o| {
        assert_eq!((o.counter, o.mask, bits(&o.ready_m)), (0, false, ready))
    });
    // Degrees (2, 3, 1, 4): Σ(dᵢ−1) = 6. A lookup in the write cycle sees the old contents.
    d.warp_partial(pc, &[1, 2, 0]);
    let at = d.step(Inputs {
        lk_pc: pc,
        ..d.acc(3, 3, pc)
    });
    d.on(at, |o| {
        assert!(o.acc_valid && o.acc_value == 6);
        assert!(!o.lk_hit && o.pred == 0, "same-cycle lookup must miss");
    });
    let at = d.lookup(pc);
    d.on(at, |o| {
        assert_eq!((o.lk_hit, o.lk_data, o.pred), (true, 6, 6))
    });
    // The second execution overwrites the line (hit).
    d.store(pc, 2);
    let at = d.lookup(pc);
    d.on(at, |o| assert_eq!(o.pred, 2));
    d.run();
}

/// G20: the counter loaded with E at t_W masks memory warps (only) at t′ < t_W + S + E.
fn counter_run(d: &mut Script, e: u32, hold_at: Option<u32>, expect_unmask: u32) {
    let (s, pc) = (d.s(), 0x40);
    d.clear();
    d.store(pc, e);
    let (ready, is_mem) = (0b1111_0000u64, 0b1010_1010u64);
    // t_W = 0: the SMEM warp at pc is scheduled.
    let at = d.step(Inputs {
        lk_pc: pc,
        load: true,
        ..d.ready(ready, is_mem)
    });
    d.on(at, move |o| {
        assert_eq!((o.pred, o.mask), (u64::from(e), false))
    });
    for t in 1..expect_unmask + 3 {
        let at = d.step(Inputs {
            smem_sw_pending: t < s,
            fe_hold: hold_at == Some(t),
            ..d.ready(ready, is_mem)
        });
        let masked = t < expect_unmask;
        d.on(at, move |o| {
            assert_eq!(o.mask, masked, "mask at t_W+{t} (E = {e})");
            assert_eq!(o.counter != 0, masked, "counter at t_W+{t}");
            let want = if masked { ready & !is_mem } else { ready };
            assert_eq!(bits(&o.ready_m), want, "ready_m at t_W+{t}");
        });
    }
}

#[test]
fn g20_counter_masks_until_tw_plus_s_plus_e() {
    let p = params("paper", &[]);
    let s = p.subwarps();
    let mut d = Script::new(&p);
    for e in [1, 5, 28] {
        counter_run(&mut d, e, None, s + e);
        // A front-end stall (after the subwarps issued) freezes the counter for a cycle.
        counter_run(&mut d, e, Some(s), s + e + 1);
    }
    d.run();
    // Without freezing, a stall does not delay the unmask.
    let mut d = Script::new(&params("paper", &[("bcaws_freeze_on_stall", "0")]));
    counter_run(&mut d, 5, Some(s), s + 5);
    d.run();
    // LoadPredPlusSm1: counter = E + S − 1, ignores smem_sw_pending; the same unmask cycle.
    let mut d = Script::new(&params("paper", &[("counter_mode", "load_pred_plus_sm1")]));
    counter_run(&mut d, 5, None, s + 5);
    d.clear();
    d.store(0x40, 5);
    d.load(0x40);
    let at = d.lookup(0);
    d.on(at, move |o| assert_eq!(o.counter, u64::from(5 + s - 1)));
    d.run();
}

#[test]
fn g20_enable_and_reload() {
    let mut d = Script::new(&params("small", &[]));
    d.store(0x1, 3);
    d.load(0x1);
    // enable = 0: no mask although the counter runs.
    let at = d.step(Inputs {
        enable: false,
        ..d.ready(0xF, 0xF)
    });
    d.on(at, |o| {
        assert_eq!((o.counter, o.mask, bits(&o.ready_m)), (3, false, 0xF))
    });
    // A load overwrites a running counter; a miss loads 0.
    let at = d.load(0x2);
    d.on(at, |o| assert_eq!(o.counter, 2));
    let at = d.lookup(0);
    d.on(at, |o| assert_eq!((o.counter, o.mask), (0, false)));
    d.run();
}

#[test]
fn g21_policy_when_only_memory_warps_are_ready() {
    for (policy, only_mem_result) in [("strict", 0u64), ("issue_if_no_nonmem", 0b0101)] {
        let p = params("small", &[("bcaws_policy", policy)]);
        assert_eq!(
            p.bcaws_policy,
            if policy == "strict" {
                BcawsPolicy::Strict
            } else {
                BcawsPolicy::IssueIfNoNonMem
            }
        );
        let mut d = Script::new(&p);
        d.store(0x6, 9);
        d.load(0x6);
        let at = d.step(d.ready(0b0101, 0b0111));
        d.on(at, move |o| {
            assert!(o.mask);
            assert_eq!(bits(&o.ready_m), only_mem_result, "{policy}");
        });
        // A non-memory warp ready: the mask applies under both policies.
        let at = d.step(d.ready(0b1101, 0b0111));
        d.on(at, move |o| {
            assert_eq!(bits(&o.ready_m), 0b1000, "{policy}")
        });
        // Nothing ready: nothing eligible.
        let at = d.step(d.ready(0, 0b0111));
        d.on(at, move |o| assert_eq!(bits(&o.ready_m), 0, "{policy}"));
        d.run();
    }
}

#[test]
fn g23_storage_bits() {
    let p = Params::default();
    assert_eq!(p.storage_bits(), 5632);
    assert_eq!(p.storage_bits() / 8, 704);
    assert_eq!(p.storage_bits_with_state(), 6400);
    assert_eq!(p.storage_bits_with_state() / 8, 800);
    assert_eq!(p.counter_mode, CounterMode::LoadPred);
}

/// Whether each of `pcs` hits, and its data, looked up in one cycle each.
fn hits(d: &mut Script, pcs: &[u64], want: &[Option<u64>], what: &'static str) {
    for (&pc, &want) in pcs.iter().zip(want) {
        let at = d.lookup(pc);
        d.on(at, move |o| {
            assert_eq!(o.lk_hit.then_some(o.lk_data), want, "{what}: {pc:#x}")
        });
    }
}

#[test]
fn two_way_replacement_evicts_the_non_mru_way() {
    let p = params("small", &[]);
    assert_eq!((p.hc_sets, p.hc_ways), (4, 2));
    // Three PCs of set 1.
    let (a, b, c) = (0b00_01u64, 0b01_01, 0b10_01);
    let mut d = Script::new(&p);
    // Fill both ways (a → way 0, b → way 1), touch a (MRU = way 0), c evicts b.
    d.store(a, 1);
    d.store(b, 2);
    d.store(a, 3);
    d.store(c, 4);
    hits(&mut d, &[a, b, c], &[Some(3), None, Some(4)], "touched");
    // Other sets are untouched; a PC of set 2 with a's tag misses.
    hits(&mut d, &[0b00_10], &[None], "other set");
    // Untouched: after a, b the MRU is b, so c evicts a.
    d.clear();
    d.store(a, 1);
    d.store(b, 2);
    d.store(c, 4);
    hits(&mut d, &[a, b, c], &[None, Some(2), Some(4)], "untouched");
    // Then MRU = c's way (0): a evicts b (way 1).
    d.store(a, 5);
    hits(&mut d, &[a, b, c], &[Some(5), None, Some(4)], "ping-pong");
    // After a clear the first invalid way (0) is used again, MRU back to 0.
    d.clear();
    d.store(b, 6);
    d.store(c, 7);
    d.store(a, 8);
    hits(&mut d, &[a, b, c], &[Some(8), None, Some(7)], "after clear");
    d.run();
}

#[test]
fn direct_mapped_replaces_on_every_miss() {
    let (a, b) = (0b00_11u64, 0b01_11);
    let mut d = Script::new(&params("small", &[("hc_ways", "1")]));
    d.store(a, 1);
    d.store(b, 2);
    hits(&mut d, &[a, b], &[None, Some(2)], "direct-mapped");
    d.run();
}

#[test]
fn model_components_api() {
    let p = params("small", &[]);
    let mut hc = HistoryCache::of_params(&p);
    assert_eq!((hc.index(0x1235), hc.tag(0x1235)), (1, 0x1235 >> 2));
    assert_eq!(hc.lookup(0x11), None);
    assert_eq!(hc.write(0x11, 5), 0);
    assert_eq!(hc.write(0x21, 6), 1);
    assert_eq!(hc.mru(1), 1);
    assert_eq!(hc.write(0x11, 7), 0);
    assert_eq!(hc.victim(0x31), 1);
    assert_eq!(
        (hc.lookup(0x11), hc.pred(0x21), hc.pred(0x31)),
        (Some(7), 6, 0)
    );
    hc.clear();
    assert_eq!((hc.valid_lines(), hc.mru(1)), (0, 0));
}

/// The random stimulus reaches what it is meant to: lookup hits, write hits, evictions of a
/// valid line, masked decisions, counter loads of nonzero predictions, only-memory-ready cycles.
#[test]
fn random_stimulus_coverage() {
    use proptest::strategy::{Strategy, ValueTree};
    let p = params("small", &[]);
    let strategy = smrtl_testbench::blocks::history_cache::cycles(&p, 64);
    let mut runner = check::runner(5);
    let mut n = [0u32; 6];
    let mut o = Outputs::new(&p);
    for _ in 0..300 {
        let case = strategy.new_tree(&mut runner).unwrap().current();
        let mut m = Bcaws::new(&p);
        for c in &case {
            m.eval(c, &mut o);
            if o.acc_valid && !c.clear && !c.reset {
                let set = m.cache.index(o.acc_pc);
                let way = m.cache.victim(o.acc_pc);
                if m.cache.lookup(o.acc_pc).is_some() {
                    n[1] += 1;
                } else if m.cache.line(set, way).valid {
                    n[2] += 1;
                }
            }
            let (ready, is_mem) = (bits(&c.ready), bits(&c.is_mem));
            n[0] += o.lk_hit as u32;
            n[3] += (o.mask && ready & is_mem != 0) as u32;
            n[4] += (c.load && o.pred != 0) as u32;
            n[5] += (o.mask && ready != 0 && ready & !is_mem == 0) as u32;
            m.step(c, &mut o);
        }
    }
    eprintln!("lookup hits, write hits, evictions, masked, nonzero loads, only-mem: {n:?}");
    assert!(n.iter().all(|&k| k >= 50), "{n:?}");
}
