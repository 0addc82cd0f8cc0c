//! The `Milg` (docs/memory-issue-control.md §4, §5): the spec's §4.5 acceptance examples as
//! directed scenarios, each run on the behavioral model AND the rusthdl RTL (outputs equal every
//! cycle, then the example's claims checked), and the reach of the random stimulus. Random
//! co-simulation on every backend, lint, Icarus, synthesis, the flip-flop inventory and the
//! planted fault are the conformance suite's (`tests/conformance.rs`).

use smrtl_cosim::blocks::milg::{Milg, MilgCfg, MilgEvents};
use smrtl_hdl::blocks::milg::port::{Inputs, Outputs as Out};
use smrtl_hdl::blocks::milg::Params;
use smrtl_hdl::BlockParams;
use smrtl_testbench::blocks::milg::{case_cycles, cycles};
use smrtl_testbench::check;

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).unwrap()
}

/// Runs `cycles` from reset on the model and on rusthdl; asserts equal outputs every cycle and
/// returns them.
fn run(p: &Params, cycles: &[Inputs]) -> Vec<Out> {
    check::directed(p, cycles)
}

/// Builds a cycle list event by event.
#[derive(Default)]
struct Script {
    cycles: Vec<Inputs>,
    smil: (u32, bool),
}

impl Script {
    fn smil(limit: u32, unl: bool) -> Script {
        Script {
            smil: (limit, unl),
            ..Script::default()
        }
    }
    fn push(&mut self, n: usize, issue: bool, done: u8, acc: bool, fail: bool) -> &mut Self {
        for _ in 0..n {
            self.cycles.push(Inputs {
                reset: false,
                issue,
                done: u64::from(done),
                acc,
                fail,
                smil_limit: u64::from(self.smil.0),
                smil_unl: self.smil.1,
            });
        }
        self
    }
    fn issue(&mut self, n: usize) -> &mut Self {
        self.push(n, true, 0, false, false)
    }
    fn done(&mut self, n: usize, k: u8) -> &mut Self {
        self.push(n, false, k, false, false)
    }
    fn acc(&mut self, n: usize) -> &mut Self {
        self.push(n, false, 0, true, false)
    }
    fn fail(&mut self, n: usize) -> &mut Self {
        self.push(n, false, 0, false, true)
    }
    fn idle(&mut self, n: usize) -> &mut Self {
        self.push(n, false, 0, false, false)
    }
    fn reset(&mut self) -> &mut Self {
        self.idle(1);
        self.cycles.last_mut().unwrap().reset = true;
        self
    }
    fn len(&self) -> usize {
        self.cycles.len()
    }
}

// ---------------------------------------------------------------------------------------------
// §4.5 acceptance examples
// ---------------------------------------------------------------------------------------------

/// Example 1 (Smil): with limit 3 and `unl = 0` the gate is open at 0, 1, 2 in flight and
/// closed at 3; an issue at `mil - 1` closes it for the next cycle; a completion reopens it
/// from the cycle after.
#[test]
fn ex1_gate_at_the_limit_smil() {
    let p = params("smil", &[]);
    let mut s = Script::smil(3, false);
    s.idle(1).issue(3).idle(2).done(1, 1).idle(1);
    let o = run(&p, &s.cycles);
    // Cycle 0 is the reset state (unl = 1, mil = 127); the config is loaded at its edge.
    assert!(o[0].unl && o[0].mil == 127);
    assert!(!o[1].unl && o[1].mil == 3);
    let gate: Vec<(u64, bool)> = o.iter().map(|x| (x.inflight, x.mem_ok)).collect();
    assert_eq!(
        gate,
        [
            (0, true),
            (0, true),
            (1, true),
            (2, true),
            (3, false),
            (3, false),
            (3, false),
            (2, true)
        ]
    );
}

/// Example 1 (Dmil, paper widths): 10 instructions in flight, 2048 failures and 1024 requests
/// in the interval: r = 2048 >> 10 = 2, `mil = 10 div 2 = 5`, `unl = 0` from the cycle after
/// the 1024th request; the gate stays closed until the count drains to 4.
#[test]
fn ex1_gate_at_the_dmil_limit_paper() {
    let p = Params::default();
    let mut s = Script::default();
    s.issue(10).fail(2048).acc(1024);
    let b = s.len() - 1;
    s.done(6, 1).idle(1);
    let o = run(&p, &s.cycles);
    assert!(o[b].boundary && o[b].rsfail == 2048 && o[b].reqcnt == 1023);
    assert_eq!((o[b].mil, o[b].unl), (127, true));
    assert_eq!((o[b + 1].mil, o[b + 1].unl, o[b + 1].peak), (5, false, 10));
    assert_eq!((o[b + 1].reqcnt, o[b + 1].rsfail), (0, 0));
    let gate: Vec<(u64, bool)> = o[b + 1..].iter().map(|x| (x.inflight, x.mem_ok)).collect();
    assert_eq!(
        gate,
        [
            (10, false),
            (9, false),
            (8, false),
            (7, false),
            (6, false),
            (5, false),
            (4, true)
        ]
    );
    // Exactly one boundary.
    assert_eq!(o.iter().filter(|x| x.boundary).count(), 1);
}

/// Example 1 with `r` odd: P = 7, 23 failures in an 8-request interval (r = 23 >> 3 = 2):
/// `mil = 7 div 2 = 3` (floor); with r = 3 (24..31 failures) `mil = 2`.
#[test]
fn ex1_floor_division_small() {
    let p = params("small", &[]);
    for (fails, want) in [(23, 3), (24, 2), (31, 2), (8, 7), (63, 1)] {
        let mut s = Script::default();
        s.issue(7).fail(fails).acc(8).idle(1);
        let o = run(&p, &s.cycles);
        let last = o.last().unwrap();
        assert_eq!((last.mil, last.unl), (want, false), "{fails} failures");
    }
}

/// Example 3: `mil ≥ 1` whenever `unl = 0`: an interval with nothing in flight (P = 0) and
/// r ≥ 1 gives `mil = max(0 div r, 1) = 1`.
#[test]
fn ex3_limit_never_below_one() {
    let p = params("small", &[]);
    let mut s = Script::default();
    s.fail(40).acc(8).idle(1);
    let o = run(&p, &s.cycles);
    let last = o.last().unwrap();
    assert_eq!((last.mil, last.unl, last.peak), (1, false, 0));
    assert!(o.iter().all(|x| x.unl || x.mil >= 1));
}

/// Example 4: `mil` / `unl` change only at the interval's last request (`reqcnt` 1023 → 0);
/// failures never advance `reqcnt`; r = 0 at a later boundary restores `unl = 1` (policy
/// unlimited) or sets `mil = min(P + 1, max)` (increment).
#[test]
fn ex4_limit_changes_only_at_the_boundary() {
    for (preset, after_quiet) in [("small", (15, true)), ("small_increment", (4, false))] {
        let p = params(preset, &[]);
        let mut s = Script::default();
        s.issue(3).fail(30).acc(7);
        let before = s.len();
        s.fail(20).acc(1).idle(2).acc(8).idle(1);
        let o = run(&p, &s.cycles);
        // Failures between the 7th and 8th request do not move reqcnt.
        assert!(o[before..before + 20].iter().all(|x| x.reqcnt == 7));
        let changes: Vec<usize> = (1..o.len())
            .filter(|&c| (o[c].mil, o[c].unl) != (o[c - 1].mil, o[c - 1].unl))
            .collect();
        let boundaries: Vec<usize> = (0..o.len()).filter(|&c| o[c].boundary).collect();
        assert_eq!(boundaries.len(), 2, "{preset}");
        assert_eq!(
            changes,
            boundaries.iter().map(|b| b + 1).collect::<Vec<_>>(),
            "{preset}: changes one cycle after each boundary"
        );
        // First interval: P = 3, rs = 50 → r = 6 → 3 div 6 = 0 → 1.
        let first = &o[boundaries[0] + 1];
        assert_eq!((first.mil, first.unl), (1, false), "{preset}");
        // Second interval: no failure, r = 0; P = 3 (still in flight).
        let second = o.last().unwrap();
        assert_eq!((second.mil, second.unl), after_quiet, "{preset}");
    }
}

/// Example 5: `rsfail` holds at its maximum once saturated and clears at the boundary; `peak`
/// restarts at the in-flight count after the boundary and stays ≥ `inflight`.
#[test]
fn ex5_rsfail_saturates_and_peak_covers_inflight() {
    let p = params("small", &[]);
    let mut s = Script::default();
    s.issue(5).done(2, 2).fail(70).acc(8).issue(1).idle(1);
    let o = run(&p, &s.cycles);
    let b = o.iter().position(|x| x.boundary).unwrap();
    assert_eq!(o[b].rsfail, 63);
    assert!(o[b - 5..=b].iter().all(|x| x.rsfail == 63));
    assert_eq!(
        (o[b + 1].rsfail, o[b + 1].peak, o[b + 1].inflight),
        (0, 1, 1)
    );
    assert_eq!((o[b].peak, o[b].inflight), (5, 1));
    // r = 63 >> 3 = 7: mil = 5 div 7 = 0 → 1.
    assert_eq!((o[b + 1].mil, o[b + 1].unl), (1, false));
    assert_eq!(o.last().unwrap().peak, 2);
    assert!(o.iter().all(|x| x.peak >= x.inflight));
}

/// Example 6: with `unl = 1` and an issue every cycle, `mem_ok` falls when `inflight` reaches
/// 127 (the 7-bit counter's top); two completions a cycle drain it.
#[test]
fn ex6_guard_at_127() {
    for preset in ["paper", "off"] {
        let p = params(preset, &[]);
        let mut s = Script::default();
        s.issue(127).idle(2).done(63, 2).done(1, 1).idle(1);
        let o = run(&p, &s.cycles);
        assert!(o[..127].iter().all(|x| x.mem_ok && x.unl), "{preset}");
        assert_eq!((o[127].inflight, o[127].mem_ok), (127, false), "{preset}");
        assert_eq!(o[127].peak, 127);
        assert_eq!((o[130].inflight, o[130].mem_ok), (125, true));
        assert_eq!(o.last().unwrap().inflight, 0);
    }
}

/// Example 7: after reset `unl = 1`; with SMIL limits 3 and 1, issuing whenever the gate is
/// open never has more than 3 (resp. 1) in flight, whatever the completions; Off never limits.
#[test]
fn ex7_smil_limits_hold() {
    for (limit, most) in [(3u32, 3u32), (1, 1)] {
        let p = params("smil", &[]);
        let cfg = MilgCfg::of(&p);
        let mut g = Milg::new(&cfg);
        let mut s = Script::smil(limit, false);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for c in 0..3000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let issue = g.mem_ok();
            let done = ((seed % 3) as u32).min(g.inflight + issue as u32) as u8;
            let ev = MilgEvents {
                issue,
                done: if c % 5 == 0 { done } else { 0 },
                acc: seed >> 8 & 1 == 1,
                fail: false,
            };
            s.push(1, ev.issue, ev.done, ev.acc, ev.fail);
            g.tick(ev, limit, false);
        }
        s.reset().idle(1);
        let o = run(&p, &s.cycles);
        let peak = o.iter().map(|x| x.inflight).max().unwrap();
        assert_eq!(peak, u64::from(most), "limit {limit}");
        let n = o.len();
        assert!(o[n - 1].unl && o[n - 1].mil == 127 && o[n - 1].inflight == 0);
    }
}

/// The Off mode: `unl = 1` and `mil` all ones always, while the counters run (QBMI shares the
/// request counter) and the boundary fires.
#[test]
fn off_mode_counters_run() {
    let p = params("off", &[]);
    let mut s = Script::default();
    s.issue(4).fail(3000).acc(1024).idle(1);
    let o = run(&p, &s.cycles);
    assert!(o.iter().all(|x| x.unl && x.mil == 127));
    assert_eq!(o.iter().filter(|x| x.boundary).count(), 1);
    let b = o.iter().position(|x| x.boundary).unwrap();
    assert_eq!((o[b].rsfail, o[b].peak, o[b].reqcnt), (3000, 4, 1023));
    assert_eq!((o[b + 1].rsfail, o[b + 1].reqcnt), (0, 0));
}

// ---------------------------------------------------------------------------------------------
// Random co-simulation
// ---------------------------------------------------------------------------------------------

/// The stimulus reaches what the module doc promises: boundaries, every ratio 0..7 of the
/// small widths, saturation, the guard, the gate closed by a limit, and all of it legal.
#[test]
fn stimulus_reaches_the_interesting_cases() {
    use proptest::strategy::{Strategy, ValueTree};
    let p = params("small", &[]);
    let mut runner = check::runner(9);
    let strategy = cycles(&p, case_cycles(&p));
    let mut ratios = [0u32; 8];
    let (mut guard, mut limited, mut saturated, mut n) = (0, 0, 0, 0);
    for _ in 0..200 {
        let case = strategy.new_tree(&mut runner).unwrap().current();
        let mut g = Milg::new(&MilgCfg::of(&p));
        for c in &case {
            let ev = MilgEvents {
                issue: c.issue,
                done: c.done as u8,
                acc: c.acc,
                fail: c.fail,
            };
            assert!(!(ev.acc && ev.fail));
            assert!(!ev.issue || g.mem_ok() || c.reset);
            assert!(u32::from(ev.done) <= g.inflight + ev.issue as u32);
            if g.boundary(ev.acc) {
                let rs = (g.rsfail + ev.fail as u32).min(63);
                ratios[(rs >> 3) as usize] += 1;
            }
            guard += (g.inflight == 15) as u32;
            limited += (!g.unl && g.inflight >= g.mil) as u32;
            saturated += (g.rsfail == 63) as u32;
            n += 1;
            if c.reset {
                g = Milg::new(&MilgCfg::of(&p));
            } else {
                g.tick(ev, c.smil_limit as u32, c.smil_unl);
            }
            assert!(g.inflight <= 15 && g.peak >= g.inflight);
        }
    }
    println!("{n} cycles: boundaries by ratio {ratios:?}, guard {guard}, limited {limited}, saturated {saturated}");
    assert!(ratios.iter().all(|&k| k >= 10), "{ratios:?}");
    assert!(guard >= 50 && limited >= 1000 && saturated >= 100);
}
