//! BCAWS block `history_cache` (docs/elastic-pipeline.md §5.2–5.4, §5.6, §9 G5, G18–G21, G23):
//! the spec's checks driven through the ports, on the behavioral model and on the rusthdl RTL
//! backend, the 2-way replacement order, and random co-simulation on the `small` and `paper`
//! presets.

use smrtl_cosim::blocks::history_cache::{HistoryCache, Inputs, Model, Outputs};
use smrtl_cosim::harness::backend::rusthdl::RustHdl;
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::history_cache::{build, port, ports, BcawsPolicy, CounterMode, Params};
use smrtl_hdl::BlockParams;
use smrtl_testbench::blocks::history_cache::{encode, HistoryCacheBench};
use smrtl_testbench::check;
use smrtl_testbench::Design;
use std::sync::Arc;

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).unwrap()
}

/// The port-level model and the RTL on rusthdl and (when installed) Verilator, each in its
/// reset state.
fn sims(p: &Params) -> (Layout, Vec<Box<dyn Simulator>>) {
    let layout = Layout::new(&ports(p));
    let module = Arc::new(build(p));
    let mut sims: Vec<Box<dyn Simulator>> = vec![
        Box::new(Model::new(p, &layout)),
        Box::new(RustHdl::new(module.clone())),
    ];
    if smrtl_testbench::external("verilator") {
        let verilog = smrtl_hdl::rusthdl::emit_verilog(&module);
        sims.push(Box::new(
            smrtl_cosim::harness::backend::verilator::Verilator::new(&module, &verilog).unwrap(),
        ));
    }
    (layout, sims)
}

/// Runs `check` on every simulator.
fn on_all(p: &Params, check: impl Fn(&mut Drv)) {
    let (layout, sims) = sims(p);
    for mut sim in sims {
        let mut d = Drv {
            layout: &layout,
            sim: sim.as_mut(),
            p: p.clone(),
        };
        check(&mut d);
    }
}

/// Drives one simulator through the ports.
struct Drv<'a> {
    layout: &'a Layout,
    sim: &'a mut dyn Simulator,
    p: Params,
}

/// Idle inputs: everything 0 except `enable`.
fn idle() -> Inputs {
    Inputs {
        enable: true,
        ..Inputs::default()
    }
}

impl Drv<'_> {
    fn name(&self) -> String {
        self.sim.name().to_string()
    }

    fn s(&self) -> u32 {
        self.p.warp_size / self.p.lanes
    }

    /// One cycle: this cycle's outputs (before the edge).
    fn step(&mut self, c: &Inputs) -> Outputs {
        let inputs = encode(self.layout, c);
        let mut out = vec![0; self.layout.out_words];
        self.sim.step(&inputs, &mut out);
        let get = |n: &str| self.layout.output(n).unwrap().of(&out)[0];
        Outputs {
            acc_valid: get(port::ACC_VALID) == 1,
            acc_value: get(port::ACC_VALUE) as u32,
            acc_pc: get(port::ACC_PC),
            lk_hit: get(port::LK_HIT) == 1,
            lk_data: get(port::LK_DATA) as u32,
            pred: get(port::PRED) as u32,
            ready_m: get(port::READY_M),
            mask: get(port::MASK) == 1,
            counter: get(port::COUNTER) as u32,
        }
    }

    /// A cycle that only looks `pc` up.
    fn lookup(&mut self, pc: u64) -> Outputs {
        self.step(&Inputs {
            lk_pc: pc,
            ..idle()
        })
    }

    /// One SMEM warp instruction at `pc` leaving MEM0, one subwarp per cycle with `svc_m1[i]`;
    /// returns the outputs of every cycle.
    fn warp(&mut self, pc: u64, svc_m1: &[u32]) -> Vec<Outputs> {
        assert_eq!(svc_m1.len() as u32, self.s());
        svc_m1
            .iter()
            .enumerate()
            .map(|(sw, &svc)| {
                self.step(&Inputs {
                    acc_v: true,
                    acc_sw: sw as u32,
                    acc_svc_m1: svc,
                    acc_pc_in: pc,
                    ..idle()
                })
            })
            .collect()
    }

    /// Stores `value` (at most S·(L−1)) for `pc`: one warp through the accumulator.
    fn store(&mut self, pc: u64, value: u32) {
        let s = self.s() as usize;
        let top = self.p.lanes - 1;
        let mut left = value;
        let svc: Vec<u32> = (0..s)
            .map(|_| {
                let v = left.min(top);
                left -= v;
                v
            })
            .collect();
        assert_eq!(left, 0, "{value} is not reachable in {s} subwarps");
        let outs = self.warp(pc, &svc);
        assert!(outs[s - 1].acc_valid);
        assert_eq!(outs[s - 1].acc_value, value);
    }

    fn clear(&mut self) -> Outputs {
        self.step(&Inputs {
            clear: true,
            ..idle()
        })
    }
}

#[test]
fn g5_accumulator_sequences() {
    let p = params("paper", &[]);
    assert_eq!((p.lanes, p.subwarps()), (8, 4));
    on_all(&p, |d| {
        let n = d.name();
        for (k, (svc, want)) in [([3, 0, 0, 0], 3), ([7, 7, 7, 7], 28), ([0, 0, 0, 0], 0)]
            .into_iter()
            .enumerate()
        {
            let pc = 0x100 + k as u64;
            let outs = d.warp(pc, &svc);
            for (sw, o) in outs.iter().enumerate() {
                assert_eq!(o.acc_valid, sw == 3, "{n}: acc_valid at sw {sw} of {svc:?}");
                if sw == 3 {
                    assert_eq!((o.acc_value, o.acc_pc), (want, pc), "{n}: {svc:?}");
                } else {
                    assert_eq!((o.acc_value, o.acc_pc), (0, 0), "{n}: {svc:?} sw {sw}");
                }
            }
            // The sum landed in the cache at the sw 3 edge.
            let o = d.lookup(pc);
            assert!(o.lk_hit, "{n}: {svc:?} not stored");
            assert_eq!((o.lk_data, o.pred), (want, want), "{n}: {svc:?}");
        }
    });
}

#[test]
fn g5_accumulator_restarts_at_sw0_and_holds_when_idle() {
    let p = params("paper", &[]);
    on_all(&p, |d| {
        let n = d.name();
        // A stray partial warp (sw 0, 1), then idle cycles, then a full warp: sw 0 restarts.
        d.warp_partial(0x7, &[5, 6]);
        d.step(&idle());
        let outs = d.warp(0x8, &[1, 1, 1, 1]);
        assert_eq!(outs[3].acc_value, 4, "{n}");
        // Idle cycles between subwarps keep the partial sum.
        d.warp_partial(0x9, &[2, 3]);
        d.step(&idle());
        d.step(&idle());
        let o = d.step(&Inputs {
            acc_v: true,
            acc_sw: 2,
            acc_svc_m1: 4,
            acc_pc_in: 0x9,
            ..idle()
        });
        assert!(!o.acc_valid);
        let o = d.step(&Inputs {
            acc_v: true,
            acc_sw: 3,
            acc_svc_m1: 7,
            acc_pc_in: 0x9,
            ..idle()
        });
        assert_eq!((o.acc_valid, o.acc_value, o.acc_pc), (true, 16, 0x9), "{n}");
    });
}

impl Drv<'_> {
    fn warp_partial(&mut self, pc: u64, svc_m1: &[u32]) {
        for (sw, &svc) in svc_m1.iter().enumerate() {
            let o = self.step(&Inputs {
                acc_v: true,
                acc_sw: sw as u32,
                acc_svc_m1: svc,
                acc_pc_in: pc,
                ..idle()
            });
            assert!(!o.acc_valid);
        }
    }
}

#[test]
fn g18_clear_and_reset() {
    for preset in ["paper", "small"] {
        let p = params(preset, &[]);
        on_all(&p, |d| {
            let n = d.name();
            let pcs = [0x1, 0x5, 0x103, 0x10, 0x2];
            for (i, &pc) in pcs.iter().enumerate() {
                d.store(pc, 1 + i as u32);
            }
            // Load the counter from a hit.
            d.step(&Inputs {
                lk_pc: 0x5,
                load: true,
                ..idle()
            });
            assert_eq!(d.lookup(0x5).counter, 2, "{n}");
            // Half a warp in the accumulator, then clear; a warp written in the clear cycle is
            // dropped.
            d.warp_partial(0x3, &[7, 7]);
            let o = d.step(&Inputs {
                clear: true,
                acc_v: true,
                acc_sw: d.s() - 1,
                acc_svc_m1: 7,
                acc_pc_in: 0x77,
                lk_pc: 0x1,
                ..idle()
            });
            assert!(
                o.lk_hit && o.acc_valid,
                "{n}: the clear cycle still shows the old state"
            );
            for &pc in pcs.iter().chain([0x77].iter()) {
                let o = d.lookup(pc);
                assert!(!o.lk_hit && o.pred == 0, "{n}: {pc:#x} hits after clear");
                assert_eq!((o.counter, o.mask), (0, false), "{n}");
            }
            // The accumulator restarted from 0 (sw 1.. would add to 0, not 14).
            let o = d.step(&Inputs {
                acc_v: true,
                acc_sw: d.s() - 1,
                acc_svc_m1: 1,
                acc_pc_in: 0x3,
                ..idle()
            });
            assert_eq!(o.acc_value, 1, "{n}: accumulator not cleared");
            // `reset` does the same.
            d.store(0x4, 3);
            d.step(&Inputs {
                lk_pc: 0x4,
                load: true,
                ..idle()
            });
            d.step(&Inputs {
                reset: true,
                ..idle()
            });
            let o = d.lookup(0x4);
            assert!(!o.lk_hit && o.counter == 0, "{n}: reset");
            d.clear();
        });
    }
}

#[test]
fn g19_first_execution_misses_then_hits() {
    let p = params("paper", &[]);
    on_all(&p, |d| {
        let n = d.name();
        let pc = 0x2A5;
        let ready = 0b1111;
        let is_mem = 0b0110;
        // Decision for p: miss → pred 0 → counter 0 → no mask.
        let o = d.step(&Inputs {
            lk_pc: pc,
            load: true,
            ready,
            is_mem,
            ..idle()
        });
        assert!(!o.lk_hit && o.pred == 0 && o.lk_data == 0, "{n}");
        let o = d.step(&Inputs {
            ready,
            is_mem,
            smem_sw_pending: true,
            ..idle()
        });
        assert_eq!((o.counter, o.mask, o.ready_m), (0, false, ready), "{n}");
        // Degrees (2, 3, 1, 4): Σ(dᵢ−1) = 6. A lookup in the write cycle sees the old contents.
        d.warp_partial(pc, &[1, 2, 0]);
        let o = d.step(&Inputs {
            acc_v: true,
            acc_sw: 3,
            acc_svc_m1: 3,
            acc_pc_in: pc,
            lk_pc: pc,
            ..idle()
        });
        assert!(o.acc_valid && o.acc_value == 6, "{n}");
        assert!(!o.lk_hit && o.pred == 0, "{n}: same-cycle lookup must miss");
        let o = d.lookup(pc);
        assert_eq!((o.lk_hit, o.lk_data, o.pred), (true, 6, 6), "{n}");
        // The second execution overwrites the line (hit).
        d.store(pc, 2);
        assert_eq!(d.lookup(pc).pred, 2, "{n}");
    });
}

/// G20: the counter loaded with E at t_W masks memory warps (only) at t′ < t_W + S + E.
fn counter_run(d: &mut Drv, e: u32, hold_at: Option<u32>, expect_unmask: u32) {
    let n = d.name();
    let s = d.s();
    let pc = 0x40;
    d.clear();
    d.store(pc, e);
    let (ready, is_mem) = (0b1111_0000u64, 0b1010_1010u64);
    // t_W = 0: the SMEM warp at pc is scheduled.
    let o = d.step(&Inputs {
        lk_pc: pc,
        load: true,
        ready,
        is_mem,
        ..idle()
    });
    assert_eq!((o.pred, o.mask), (e, false), "{n}");
    for t in 1..expect_unmask + 3 {
        let hold = hold_at == Some(t);
        let o = d.step(&Inputs {
            ready,
            is_mem,
            smem_sw_pending: t < s,
            fe_hold: hold,
            ..idle()
        });
        let masked = t < expect_unmask;
        assert_eq!(o.mask, masked, "{n}: mask at t_W+{t} (E = {e})");
        assert_eq!(o.counter != 0, masked, "{n}: counter at t_W+{t}");
        let want = if masked { ready & !is_mem } else { ready };
        assert_eq!(o.ready_m, want, "{n}: ready_m at t_W+{t}");
    }
}

#[test]
fn g20_counter_masks_until_tw_plus_s_plus_e() {
    let p = params("paper", &[]);
    let s = p.subwarps();
    on_all(&p, |d| {
        for e in [1, 5, 28] {
            counter_run(d, e, None, s + e);
            // A front-end stall (after the subwarps issued) freezes the counter for a cycle.
            counter_run(d, e, Some(s), s + e + 1);
        }
    });
    // Without freezing, a stall does not delay the unmask.
    let p = params("paper", &[("bcaws_freeze_on_stall", "0")]);
    on_all(&p, |d| counter_run(d, 5, Some(s), s + 5));
    // LoadPredPlusSm1: counter = E + S − 1, ignores smem_sw_pending; the same unmask cycle.
    let p = params("paper", &[("counter_mode", "load_pred_plus_sm1")]);
    on_all(&p, |d| {
        counter_run(d, 5, None, s + 5);
        d.clear();
        d.store(0x40, 5);
        d.step(&Inputs {
            lk_pc: 0x40,
            load: true,
            ..idle()
        });
        assert_eq!(d.lookup(0).counter, 5 + s - 1, "{}", d.name());
    });
}

#[test]
fn g20_enable_and_reload() {
    let p = params("small", &[]);
    on_all(&p, |d| {
        let n = d.name();
        d.store(0x1, 3);
        d.step(&Inputs {
            lk_pc: 0x1,
            load: true,
            ..idle()
        });
        // enable = 0: no mask although the counter runs.
        let o = d.step(&Inputs {
            ready: 0xF,
            is_mem: 0xF,
            enable: false,
            ..Inputs::default()
        });
        assert_eq!((o.counter, o.mask, o.ready_m), (3, false, 0xF), "{n}");
        // A load overwrites a running counter; a miss loads 0.
        let o = d.step(&Inputs {
            lk_pc: 0x2,
            load: true,
            ..idle()
        });
        assert_eq!(o.counter, 2, "{n}");
        let o = d.lookup(0);
        assert_eq!((o.counter, o.mask), (0, false), "{n}");
    });
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
        on_all(&p, |d| {
            let n = d.name();
            d.store(0x6, 9);
            d.step(&Inputs {
                lk_pc: 0x6,
                load: true,
                ..idle()
            });
            let o = d.step(&Inputs {
                ready: 0b0101,
                is_mem: 0b0111,
                ..idle()
            });
            assert!(o.mask, "{n}");
            assert_eq!(o.ready_m, only_mem_result, "{n} {policy}");
            // A non-memory warp ready: the mask applies under both policies.
            let o = d.step(&Inputs {
                ready: 0b1101,
                is_mem: 0b0111,
                ..idle()
            });
            assert_eq!(o.ready_m, 0b1000, "{n} {policy}");
            // Nothing ready: nothing eligible.
            let o = d.step(&Inputs {
                ready: 0,
                is_mem: 0b0111,
                ..idle()
            });
            assert_eq!(o.ready_m, 0, "{n} {policy}");
        });
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

#[test]
fn two_way_replacement_evicts_the_non_mru_way() {
    let p = params("small", &[]);
    assert_eq!((p.hc_sets, p.hc_ways), (4, 2));
    // Three PCs of set 1.
    let (a, b, c) = (0b00_01u64, 0b01_01, 0b10_01);
    on_all(&p, |d| {
        let n = d.name();
        // Fill both ways (a → way 0, b → way 1), touch a (MRU = way 0), c evicts b.
        d.store(a, 1);
        d.store(b, 2);
        d.store(a, 3);
        d.store(c, 4);
        let got: Vec<Option<u32>> = [a, b, c]
            .iter()
            .map(|&pc| {
                let o = d.lookup(pc);
                o.lk_hit.then_some(o.lk_data)
            })
            .collect();
        assert_eq!(got, vec![Some(3), None, Some(4)], "{n}: touched");
        // Other sets are untouched; a PC of set 2 with a's tag misses.
        assert!(!d.lookup(0b00_10).lk_hit, "{n}");
        // Untouched: after a, b the MRU is b, so c evicts a.
        d.clear();
        d.store(a, 1);
        d.store(b, 2);
        d.store(c, 4);
        let got: Vec<bool> = [a, b, c].iter().map(|&pc| d.lookup(pc).lk_hit).collect();
        assert_eq!(got, vec![false, true, true], "{n}: untouched");
        // Then MRU = c's way (0): a evicts b (way 1).
        d.store(a, 5);
        let got: Vec<bool> = [a, b, c].iter().map(|&pc| d.lookup(pc).lk_hit).collect();
        assert_eq!(got, vec![true, false, true], "{n}: ping-pong");
        // After a clear the first invalid way (0) is used again, MRU back to 0.
        d.clear();
        d.store(b, 6);
        d.store(c, 7);
        d.store(a, 8);
        let got: Vec<bool> = [a, b, c].iter().map(|&pc| d.lookup(pc).lk_hit).collect();
        assert_eq!(got, vec![true, false, true], "{n}: after clear");
    });
}

#[test]
fn direct_mapped_replaces_on_every_miss() {
    let p = params("small", &[("hc_ways", "1")]);
    let (a, b) = (0b00_11u64, 0b01_11);
    on_all(&p, |d| {
        let n = d.name();
        d.store(a, 1);
        d.store(b, 2);
        assert!(!d.lookup(a).lk_hit, "{n}");
        assert_eq!(d.lookup(b).lk_data, 2, "{n}");
    });
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

fn design(preset: &str) -> Design {
    Design::old::<HistoryCacheBench>(&params(preset, &[]))
}

fn random(preset: &str, sets: &[(&str, &str)], seed: u64) {
    let d = Design::old::<HistoryCacheBench>(&params(preset, sets));
    let m = d.module.clone();
    let factory = move || Box::new(RustHdl::new(m.clone())) as Box<dyn smrtl_cosim::Rtl>;
    let r = check::random(&d, &factory, 100_000, seed);
    if let Some(f) = &r.failure {
        panic!(
            "{preset} {sets:?}: mismatch {:?}\nminimal case ({} cycles, from {}): {:?}",
            f.mismatch,
            f.minimal.len(),
            f.original_cycles,
            f.minimal
        );
    }
    assert!(r.cycles >= 100_000);
}

#[test]
fn random_cosim_small() {
    random("small", &[], 11);
}

#[test]
fn random_cosim_paper() {
    random("paper", &[], 12);
}

#[test]
fn random_cosim_variants() {
    random(
        "small",
        &[
            ("counter_mode", "load_pred_plus_sm1"),
            ("bcaws_policy", "issue_if_no_nonmem"),
            ("bcaws_freeze_on_stall", "0"),
        ],
        13,
    );
    random("small", &[("hc_ways", "1"), ("L", "16"), ("W", "7")], 14);
}

#[test]
fn design_registered() {
    let d = design("small");
    assert_eq!(d.name, "history_cache");
    assert!(smrtl_testbench::block("history-cache").is_ok());
}

/// The random stimulus reaches what it is meant to: lookup hits, write hits, evictions of a
/// valid line, masked decisions, counter loads of nonzero predictions, only-memory-ready cycles.
#[test]
fn random_stimulus_coverage() {
    use proptest::strategy::{Strategy, ValueTree};
    use smrtl_cosim::blocks::history_cache::Bcaws;
    let p = params("small", &[]);
    let strategy = smrtl_testbench::blocks::history_cache::cycles(&p, 64);
    let mut runner = check::runner(5);
    let mut n = [0u32; 6];
    for _ in 0..300 {
        let case = strategy.new_tree(&mut runner).unwrap().current();
        let mut m = Bcaws::new(&p);
        for c in &case {
            let o = m.eval(c);
            if o.acc_valid && !c.clear && !c.reset {
                let set = m.cache.index(o.acc_pc);
                let way = m.cache.victim(o.acc_pc);
                if m.cache.lookup(o.acc_pc).is_some() {
                    n[1] += 1;
                } else if m.cache.line(set, way).valid {
                    n[2] += 1;
                }
            }
            n[0] += o.lk_hit as u32;
            n[3] += (o.mask && c.ready & c.is_mem != 0) as u32;
            n[4] += (c.load && o.pred != 0) as u32;
            n[5] += (o.mask && c.ready != 0 && c.ready & !c.is_mem == 0) as u32;
            m.step(c);
        }
    }
    eprintln!("lookup hits, write hits, evictions, masked, nonzero loads, only-mem: {n:?}");
    assert!(n.iter().all(|&k| k >= 50), "{n:?}");
}

/// A few thousand random cycles on Verilator (the wide sweeps run on rusthdl above).
#[test]
fn random_cosim_verilator() {
    if !smrtl_testbench::external("verilator") {
        return;
    }
    for preset in ["small", "paper"] {
        let d = design(preset);
        let lib =
            smrtl_cosim::harness::backend::verilator::VerilatorLib::load(&d.module, &d.verilog())
                .unwrap();
        let factory = || Box::new(lib.instance().unwrap()) as Box<dyn smrtl_cosim::Rtl>;
        let r = smrtl_testbench::check::random(&d, &factory, 5_000, 21);
        assert!(
            r.failure.is_none(),
            "{preset}: {:?}",
            r.failure.map(|f| f.mismatch)
        );
    }
}
