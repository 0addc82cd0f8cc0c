//! `qbmi_arb` (docs/memory-issue-control.md §3.2–3.4, acceptance examples 1–6 of §3.5): directed
//! scenarios on the model AND the rusthdl RTL (outputs equal every cycle), reading the grant and
//! the debug registers; the invariants (at most one grant bit, every quota ≥ 1 at the start of
//! a cycle, `base_k × rpm_k` equal for all k, work conservation, rpm changes only on a sample)
//! on every cycle of random runs, with the corners the stimulus must reach; the SM model's
//! typed view against the ports. Random co-simulation on every backend, lint, Icarus,
//! synthesis, the flip-flop inventory and the planted fault are the conformance suite's
//! (`tests/conformance.rs`).

use proptest::strategy::{Strategy, ValueTree};
use smrtl_cosim::blocks::qbmi_arb::{eligible, Qbmi, QbmiCfg};
use smrtl_cosim::blocks::rbmi_arb::mask;
use smrtl_hdl::blocks::qbmi_arb::port::{Inputs, Outputs as Out};
use smrtl_hdl::blocks::qbmi_arb::Params;
use smrtl_hdl::BlockParams;
use smrtl_testbench::blocks::qbmi_arb::req;
use smrtl_testbench::{check, Bench};
use std::collections::BTreeSet;

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).unwrap()
}

/// Per cycle the outputs (the registers at the start of the cycle), on the model and on
/// rusthdl, asserted equal.
fn run(p: &Params, cycles: &[Inputs]) -> Vec<Out> {
    check::directed(p, cycles)
}

/// The granted kernel (`None` for no grant), checking one-hot.
fn grant(o: &Out) -> Option<usize> {
    let g = mask(&o.grant);
    assert!(g.count_ones() <= 1, "grant {g:#b} is not one-hot or 0");
    (g != 0).then(|| g.trailing_zeros() as usize)
}

/// A cycle of `p`: the kernels of `mask` request; `f` edits the rest.
fn cycle(p: &Params, mask: u8, f: impl Fn(&mut Inputs)) -> Inputs {
    let mut c = req(p, mask);
    f(&mut c);
    c
}

/// The N = 3 preset starting from Table 2's Req/Minst of bp, sv, ks: base (51, 34, 6).
fn bp_sv_ks() -> Params {
    params("bp_sv_ks", &[])
}

#[test]
fn reset_state_is_the_base_of_rpm_init() {
    let p = bp_sv_ks();
    let o = run(&p, &[req(&p, 0)]);
    assert_eq!(o[0].rpm, [2, 3, 17]);
    assert_eq!(o[0].base, [51, 34, 6]);
    assert_eq!(o[0].quota, [51, 34, 6]);
    assert_eq!(o[0].minst, [0, 0, 0]);
    let p = Params::default();
    let o = run(&p, &[req(&p, 0)]);
    assert_eq!(
        (o[0].rpm.clone(), o[0].quota.clone()),
        (vec![1, 1], vec![1, 1])
    );
}

#[test]
fn example_1_a_grant_decrements_only_the_granted_quota() {
    let p = bp_sv_ks();
    let busy = cycle(&p, 0b111, |c| c.slot_free = false);
    let gated = cycle(&p, 0b111, |c| c.mem_ok = vec![false; 3]);
    let all = req(&p, 0b111);
    let o = run(
        &p,
        &[all.clone(), busy, gated, req(&p, 0), req(&p, 0b100), all],
    );
    let grants: Vec<Option<usize>> = o.iter().map(grant).collect();
    assert_eq!(grants, [Some(0), None, None, None, Some(2), Some(0)]);
    assert_eq!(o[1].quota, [50, 34, 6], "kernel 0 granted: 51 - 1");
    assert_eq!(o[2].quota, o[1].quota, "busy slot: no change");
    assert_eq!(o[3].quota, o[1].quota, "MIL gate closed: no change");
    assert_eq!(o[4].quota, o[1].quota, "nobody requests: no change");
    assert_eq!(o[5].quota, [50, 34, 5], "kernel 2 alone");
}

#[test]
fn example_2_a_quota_reaching_0_refills_all_in_the_same_cycle() {
    // rpm (1, 4): base (4, 1), quotas (4, 1).
    let p = params("paper", &[("rpm_init", "1,4")]);
    let k1 = req(&p, 0b10);
    let o = run(&p, &[k1.clone(), k1, req(&p, 0b11)]);
    assert_eq!(o[0].quota, [4, 1]);
    assert_eq!(o[0].base, [4, 1]);
    // Kernel 1 goes 1 → 0 and every quota adds its base: (4 + 4, 0 + 1).
    assert_eq!(o[1].quota, [8, 1]);
    assert_eq!(o[2].quota, [12, 1]);
    // Both eligible: kernel 0 has more quota.
    assert_eq!(grant(&o[2]), Some(0));
}

#[test]
fn example_3_the_largest_quota_wins_ties_go_low() {
    let p = bp_sv_ks();
    // Quotas (51, 34, 6): kernel 0 wins until it falls to 34, then the tie goes to 0, then
    // kernel 1 wins at 34 against 33.
    let o = run(&p, &vec![req(&p, 0b111); 36]);
    let grants: Vec<usize> = o.iter().map(|x| grant(x).unwrap()).collect();
    assert!(grants[..18].iter().all(|&g| g == 0), "{grants:?}");
    assert_eq!(o[17].quota, [34, 34, 6]);
    assert_eq!(grants[17], 0, "a tie goes to the lowest kernel");
    assert_eq!(grants[18], 1, "34 against 33");
    assert_eq!(grants[19], 0, "33 against 33: the tie again");
    // Only kernels 1 and 2 eligible: 1 (34) beats 2 (6).
    let o = run(&p, &[req(&p, 0b110)]);
    assert_eq!(grant(&o[0]), Some(1));
}

#[test]
fn example_4_work_conservation_whatever_the_quota() {
    let p = bp_sv_ks();
    // Kernel 2 (quota 6, the smallest) alone is granted every cycle; its refills keep the
    // slot busy: after 6 grants quotas are (51 + 51, 34 + 34, 0 + 6).
    let o = run(&p, &vec![req(&p, 0b100); 8]);
    assert!(o.iter().all(|x| grant(x) == Some(2)));
    assert_eq!(o[6].quota, [102, 68, 6]);
    assert_eq!(o[7].quota, [102, 68, 5]);
}

#[test]
fn example_5_rpm_changes_only_on_a_sample() {
    let p = Params::default();
    // Kernel 0: 99 instructions with a first access, then the sample cycle with one more:
    // c = 100, rpm = round(1024 / 100) = 10. Kernel 1 counts firsts but never samples.
    let first = cycle(&p, 0, |c| c.first = vec![true, true]);
    let mut cycles = vec![first.clone(); 99];
    cycles.push(Inputs {
        sample: vec![true, false],
        ..first
    });
    cycles.push(req(&p, 0));
    let o = run(&p, &cycles);
    assert!(o[..100].iter().all(|x| x.rpm == [1, 1]));
    assert_eq!(o[99].minst, [99, 99]);
    assert_eq!(o[100].rpm, [10, 1]);
    assert_eq!(o[100].minst, [0, 100]);
    assert_eq!(o[100].base, [1, 10], "LCM 10: base (10/10, 10/1)");
}

/// Runs `firsts` cycles with a first access of kernel 0, then a sample cycle without one;
/// returns kernel 0's rpm after it.
fn rpm_after(p: &Params, firsts: usize) -> u64 {
    let first = cycle(p, 0, |c| c.first[0] = true);
    let mut cycles = vec![first; firsts];
    cycles.push(cycle(p, 0, |c| c.sample[0] = true));
    cycles.push(req(p, 0));
    run(p, &cycles).last().unwrap().rpm[0]
}

#[test]
fn rounding_clamping_and_the_full_interval() {
    let nearest = Params::default();
    let floor = params("paper", &[("rpm_round", "floor")]);
    // 1024 / 682 = 1.5015 → 2 (nearest), 1 (floor); 1024 / 683 = 1.4993 → 1.
    assert_eq!(rpm_after(&nearest, 682), 2);
    assert_eq!(rpm_after(&floor, 682), 1);
    assert_eq!(rpm_after(&nearest, 683), 1);
    // 1024 / 40 = 25.6 → 26 or 25; 1 first → 1024, clamped to rpm_max.
    assert_eq!(rpm_after(&nearest, 40), 26);
    assert_eq!(rpm_after(&floor, 40), 25);
    assert_eq!(rpm_after(&nearest, 1), 32);
    let max8 = params("paper", &[("rpm_max", "8")]);
    assert_eq!(rpm_after(&max8, 40), 8);
    // 1024 firsts: minst wraps to 0, which means a full interval: c = 1024, rpm 1.
    assert_eq!(rpm_after(&nearest, 1024), 1);
    // No first at all: also c = 1024.
    assert_eq!(rpm_after(&nearest, 0), 1);
}

#[test]
fn example_6_base_times_rpm_is_equal_for_all_kernels() {
    for (preset, rpm) in [
        ("bp_sv_ks", [2, 3, 17]),
        ("three", [29, 31, 32]),
        ("three", [12, 18, 8]),
        ("three", [7, 7, 7]),
    ] {
        let init = format!("{},{},{}", rpm[0], rpm[1], rpm[2]);
        let p = params(preset, &[("rpm_init", &init)]);
        let o = &run(&p, &[req(&p, 0)])[0];
        let products: Vec<u64> = (0..3).map(|k| o.base[k] * o.rpm[k]).collect();
        assert!(products.iter().all(|&x| x == products[0]), "{rpm:?}: {o:?}");
        println!("rpm {rpm:?}: base {:?}, LCM {}", o.base, products[0]);
    }
    let p = params("three", &[("rpm_init", "29,31,32")]);
    assert_eq!(run(&p, &[req(&p, 0)])[0].base, [992, 928, 899]);
}

/// Spec §3.4 (start-of-cycle rpm): a sample that changes rpm in a refill cycle leaves that
/// refill on the old base; the new base applies from the next cycle on.
#[test]
fn a_sample_in_a_refill_cycle_refills_with_the_old_rpm() {
    let p = Params::default();
    // Quotas (1, 1), rpm (1, 1). Cycle 0: kernel 0 granted (1 → 0: refill) and sampled with
    // one first (c = 1: rpm 32). The refill adds the old base (1, 1): quotas (1, 2).
    let c0 = cycle(&p, 0b01, |c| {
        c.first[0] = true;
        c.sample[0] = true;
    });
    let o = run(&p, &[c0, req(&p, 0b01), req(&p, 0)]);
    assert_eq!(grant(&o[0]), Some(0));
    assert_eq!(
        (o[1].rpm.clone(), o[1].quota.clone()),
        (vec![32, 1], vec![1, 2])
    );
    assert_eq!(o[1].base, [1, 32], "the new base from the next cycle");
    // The next refill adds it: (0 + 1, 2 + 32).
    assert_eq!(o[2].quota, [1, 34]);
}

#[test]
fn quotas_saturate() {
    // quota_bits 4: rpm (1, 15) gives base (15, 1), quotas (15, 1). Kernel 1 alone refills
    // every cycle; kernel 0 stays at 15 = 2^4 − 1.
    let p = params("paper", &[("quota_bits", "4"), ("rpm_init", "1,15")]);
    let o = run(&p, &vec![req(&p, 0b10); 4]);
    assert!(o.iter().all(|x| x.quota == [15, 1]), "{o:?}");
    // A reset base above the quota range starts saturated.
    let p = params("three", &[("quota_bits", "5"), ("rpm_init", "29,31,32")]);
    assert_eq!(run(&p, &[req(&p, 0)])[0].quota, [31, 31, 31]);
}

#[test]
fn reset_restores_rpm_init_and_quotas() {
    let p = bp_sv_ks();
    let s = cycle(&p, 0b111, |c| {
        c.first = vec![true; 3];
        c.sample = vec![true; 3];
    });
    let reset = cycle(&p, 0b111, |c| c.reset = true);
    let o = run(&p, &[s.clone(), s, reset, req(&p, 0)]);
    assert_eq!(o[2].rpm, [32, 32, 32]);
    assert_eq!(o[3].rpm, [2, 3, 17]);
    assert_eq!(o[3].quota, [51, 34, 6]);
    assert_eq!(o[3].minst, [0, 0, 0]);
}

#[test]
fn one_kernel_is_always_granted_when_eligible() {
    let p = params("paper", &[("N", "1")]);
    let o = run(&p, &[req(&p, 1), req(&p, 1), req(&p, 0)]);
    let grants: Vec<Option<usize>> = o.iter().map(grant).collect();
    assert_eq!(grants, [Some(0), Some(0), None]);
    assert!(o.iter().all(|x| x.quota == [1] && x.base == [1]));
}

/// What the random stimulus reached.
#[derive(Debug, Default)]
struct Coverage {
    grants: u64,
    samples: u64,
    refills: u64,
    /// Refill cycles in which a sample changed some rpm.
    refill_with_new_rpm: u64,
    saturated: u64,
    rpm_values: BTreeSet<u64>,
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

/// The invariants of §3.4 / §3.5 on every cycle of `cycles` random cycles of `p` (model and
/// rusthdl, equal), and what the stimulus reached.
fn invariants(p: &Params, cycles: usize, seed: u64) -> Coverage {
    let case = random_cycles(p, seed, cycles);
    let outs = check::directed(p, &case);
    let n = p.kernels();
    let mut cov = Coverage::default();
    for c in 0..case.len() {
        let (i, o) = (&case[c], &outs[c]);
        assert!(
            o.quota.iter().all(|&q| q >= 1),
            "cycle {c}: quota {:?}",
            o.quota
        );
        let lcm = o.base[0] * o.rpm[0];
        assert!(
            (0..n).all(|k| o.base[k] * o.rpm[k] == lcm),
            "cycle {c}: base {:?} rpm {:?}",
            o.base,
            o.rpm
        );
        let elig = eligible(mask(&i.mem_req), mask(&i.mem_ok), i.slot_free);
        let g = grant(o);
        assert_eq!(g.is_some(), elig != 0, "cycle {c}: work conservation");
        if let Some(g) = g {
            assert_eq!(elig >> g & 1, 1, "cycle {c}: grant to an ineligible kernel");
            cov.grants += 1;
        }
        cov.rpm_values.extend(o.rpm.iter().copied());
        cov.saturated += o.quota.iter().filter(|&&q| q == p.quota_max()).count() as u64;
        let Some(next) = outs.get(c + 1) else { break };
        if i.reset {
            continue;
        }
        cov.samples += i.sample.iter().filter(|&&s| s).count() as u64;
        for k in 0..n {
            if !i.sample[k] {
                assert_eq!(next.rpm[k], o.rpm[k], "cycle {c}: rpm {k} without a sample");
            }
        }
        let refill = g.is_some_and(|g| o.quota[g] == 1);
        cov.refills += u64::from(refill);
        cov.refill_with_new_rpm += u64::from(refill && next.rpm != o.rpm);
    }
    cov
}

#[test]
fn invariants_hold_every_random_cycle_and_stimulus_reaches_the_corners() {
    for (preset, sets) in [
        ("paper", vec![]),
        ("paper", vec![("reqcnt_bits", "5")]),
        ("bp_sv_ks", vec![]),
        ("small", vec![]),
        ("three", vec![("reqcnt_bits", "6"), ("quota_bits", "8")]),
    ] {
        let p = params(preset, &sets);
        let cov = invariants(&p, 50_000, 21);
        println!("{preset} {sets:?}: {cov:?}");
        assert!(cov.grants > 20_000 && cov.samples > 500, "{cov:?}");
        assert!(cov.refills > 500, "refills: {cov:?}");
        assert!(cov.refill_with_new_rpm > 50, "refill + rpm change: {cov:?}");
        let reachable = (p.rpm_max as usize).min(8) - 2;
        assert!(cov.rpm_values.len() >= reachable, "rpm values: {cov:?}");
    }
    let cov = invariants(&params("small", &[]), 50_000, 22);
    assert!(cov.saturated > 100, "saturated quotas: {cov:?}");
}

/// The SM model's view ([`Qbmi`]) and the port model agree on a random run: the port model is
/// a thin adapter.
#[test]
fn typed_api_matches_the_ports() {
    let p = bp_sv_ks();
    let case = random_cycles(&p, 12, 5_000);
    let outs = check::directed(&p, &case);
    let mut q = Qbmi::new(&QbmiCfg::of(&p));
    for (i, o) in case.iter().zip(&outs) {
        let g = q.grant(eligible(mask(&i.mem_req), mask(&i.mem_ok), i.slot_free));
        assert_eq!(g, grant(o));
        assert_eq!(q.quota.map(u64::from).to_vec(), o.quota);
        assert_eq!(q.base().map(u64::from).to_vec(), o.base);
        if i.reset {
            q = Qbmi::new(&QbmiCfg::of(&p));
        } else {
            q.tick(g, mask(&i.first), mask(&i.sample));
        }
    }
}
