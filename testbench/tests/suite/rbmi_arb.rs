//! `rbmi_arb` (docs/memory-issue-control.md §3.1, §3.5 example 7 and the grant rules): directed
//! scenarios on the model AND the rusthdl RTL (outputs equal every cycle, then the example's
//! claims checked), and the §3.1 invariants (at most one grant bit, grants only to eligible
//! kernels, work conservation) on every cycle of random runs, with the skips the stimulus must
//! reach. Random co-simulation on every backend, lint, Icarus, synthesis, the flip-flop
//! inventory and the planted fault are the conformance suite's (`tests/conformance.rs`).

use proptest::strategy::{Strategy, ValueTree};
use smrtl_cosim::blocks::rbmi_arb::{eligible, mask};
use smrtl_hdl::blocks::rbmi_arb::port::{Inputs, Outputs};
use smrtl_hdl::blocks::rbmi_arb::Params;
use smrtl_testbench::blocks::rbmi_arb::{all, req};
use smrtl_testbench::{check, Bench};

/// Outputs per cycle of `cycles` from reset on the model and rusthdl (asserted equal).
fn run(n: u32, cycles: &[Inputs]) -> Vec<Outputs> {
    check::directed(&Params { n }, cycles)
}

/// Cycles for `n` kernels: `f` edits the all-requesting cycle.
fn with(n: u32, f: impl Fn(&mut Inputs)) -> Inputs {
    let mut c = all(&Params { n });
    f(&mut c);
    c
}

/// The granted kernel of each cycle (`None` for no grant), checking one-hot.
fn granted(out: &[Outputs]) -> Vec<Option<usize>> {
    out.iter()
        .map(|o| {
            let g = mask(&o.grant);
            assert!(g.count_ones() <= 1, "grant {g:#b} is not one-hot or 0");
            (g != 0).then(|| g.trailing_zeros() as usize)
        })
        .collect()
}

fn last(out: &[Outputs]) -> Vec<u64> {
    out.iter().map(|o| o.last).collect()
}

#[test]
fn example_7_all_eligible_rotates() {
    let got = run(2, &vec![all(&Params { n: 2 }); 6]);
    assert_eq!(
        granted(&got),
        [0, 1, 0, 1, 0, 1].map(Some),
        "N = 2: 0, 1, 0, 1, …"
    );
    // `last` is the pointer at the start of the cycle: reset N − 1, then the previous grant.
    assert_eq!(last(&got), [1, 0, 1, 0, 1, 0]);
    let got = run(3, &vec![all(&Params { n: 3 }); 7]);
    assert_eq!(granted(&got), [0, 1, 2, 0, 1, 2, 0].map(Some), "N = 3");
    assert_eq!(got[0].last, 2, "reset value N − 1");
    let got = run(1, &vec![all(&Params { n: 1 }); 3]);
    assert_eq!(granted(&got), [Some(0); 3], "N = 1");
    assert!(got.iter().all(|x| x.last == 0), "N = 1: last is 0");
}

#[test]
fn example_7_an_ineligible_kernel_is_skipped() {
    let p = Params { n: 3 };
    // N = 3, kernel 1 never requests: 0, 2, 0, 2.
    assert_eq!(
        granted(&run(3, &vec![req(&p, 0b101); 4])),
        [0, 2, 0, 2].map(Some)
    );
    // Kernel 1 gated by MIL (mem_ok) is skipped just the same, and gets its turn back.
    let gated = with(3, |c| c.mem_ok[1] = false);
    let a = all(&p);
    assert_eq!(
        granted(&run(
            3,
            &[gated.clone(), gated, a.clone(), a.clone(), a.clone()]
        )),
        [0, 2, 0, 1, 2].map(Some)
    );
    // After 2 is granted alone, the order continues from 2: 0 next, then 1.
    assert_eq!(
        granted(&run(3, &[req(&p, 0b100), a.clone(), a.clone(), a])),
        [2, 0, 1, 2].map(Some)
    );
}

#[test]
fn example_4_work_conservation_and_a_busy_slot() {
    // A single eligible kernel is granted whatever the pointer says; a busy slot grants nobody
    // and keeps the pointer.
    let p = Params { n: 2 };
    let k1 = req(&p, 0b10);
    let busy = with(2, |c| c.slot_free = false);
    let got = run(2, &[k1.clone(), k1.clone(), k1, busy, req(&p, 0), all(&p)]);
    assert_eq!(
        granted(&got),
        [Some(1), Some(1), Some(1), None, None, Some(0)]
    );
    assert_eq!(last(&got), [1, 1, 1, 1, 1, 1], "no grant keeps the pointer");
}

#[test]
fn reset_puts_the_pointer_back() {
    let a = all(&Params { n: 3 });
    let reset = with(3, |c| c.reset = true);
    // Grant 0, 1, then a reset cycle (still grants 2 from the pointer 1), then 0 again.
    let got = run(3, &[a.clone(), a.clone(), reset, a.clone(), a]);
    assert_eq!(granted(&got), [0, 1, 2, 0, 1].map(Some));
    assert_eq!(got[3].last, 2);
}

/// The first `cycles` cycles of the random stimulus of `p` drawn with `seed`.
fn random_cycles(p: &Params, seed: u64, cycles: usize) -> Vec<Inputs> {
    let mut runner = check::runner(seed);
    let strategy = p.stimulus();
    let mut out = vec![];
    while out.len() < cycles {
        out.extend(strategy.new_tree(&mut runner).unwrap().current());
    }
    out.truncate(cycles);
    out
}

/// The invariants of §3.1 on every cycle of `cycles` random cycles (model and rusthdl, equal):
/// the grant is one-hot or 0, only to an eligible kernel, and never 0 when one is eligible
/// (work conservation). Returns the grants per kernel; the stimulus must skip kernels often.
fn invariants(n: u32, cycles: usize, seed: u64) -> Vec<u64> {
    let p = Params { n };
    let case = random_cycles(&p, seed, cycles);
    let outs = check::directed(&p, &case);
    let mut per_kernel = vec![0u64; n as usize];
    let mut skips = 0;
    for (c, (i, o)) in case.iter().zip(&outs).enumerate() {
        let elig = eligible(mask(&i.mem_req), mask(&i.mem_ok), i.slot_free);
        let g = mask(&o.grant);
        assert!(g.count_ones() <= 1, "cycle {c}: grant {g:#b}");
        assert_eq!(
            g & !elig,
            0,
            "cycle {c}: grant {g:#b} outside elig {elig:#b}"
        );
        assert_eq!(g != 0, elig != 0, "cycle {c}: work conservation");
        if g != 0 {
            per_kernel[g.trailing_zeros() as usize] += 1;
            let next = (o.last as u32 + 1) % n;
            skips += u64::from(g.trailing_zeros() != next);
        }
    }
    println!("N = {n}: grants per kernel {per_kernel:?}, grants that skipped a kernel {skips}");
    if n > 1 {
        assert!(skips > cycles as u64 / 50, "skips {skips}");
    }
    per_kernel
}

#[test]
fn invariants_hold_every_random_cycle() {
    for n in 1..=3 {
        let per = invariants(n, 20_000, 11);
        assert!(per.iter().all(|&g| g > 1_000), "N = {n}: {per:?}");
    }
}
