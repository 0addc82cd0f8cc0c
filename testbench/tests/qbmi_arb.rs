//! `qbmi_arb` (docs/memory-issue-control.md §3.2–3.4, acceptance examples 1–6 of §3.5): directed
//! tests driven through the ports of the model AND the rusthdl RTL (asserted equal), reading
//! the grant and the debug registers; the invariants (at most one grant bit, every quota ≥ 1 at
//! the start of a cycle, `base_k × rpm_k` equal for all k, work conservation, rpm changes only
//! on a sample) checked every cycle of random runs; random co-simulation on rusthdl (10^6
//! cycles for each of 7 configurations: N = 1..3, both roundings, short intervals, narrow
//! quotas, preset rpm), Verilator and Icarus; lint, Icarus compile and latch-free
//! synthesis with the inventory's flip-flops; and a planted refill-timing bug that the random
//! run catches and shrinks.

use smrtl_cosim::blocks::qbmi_arb::{eligible, Qbmi, QbmiCfg};
use smrtl_cosim::harness::backend::{icarus::run_batch, rusthdl::RustHdl, verilator::VerilatorLib};
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::qbmi_arb::{build_with, port, Fault, Params, BASE_BITS};
use smrtl_hdl::{BlockParams, Module};
use smrtl_testbench::blocks::qbmi_arb::{encode, Cycle, QbmiArbBench, CASE_CYCLES};
use smrtl_testbench::check::{self, run_vectors};
use smrtl_testbench::{external, Case, Design, OldBench};
use std::collections::BTreeSet;
use std::time::Instant;

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).unwrap()
}

/// One cycle's outputs, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Out {
    grant: Option<usize>,
    quota: Vec<u64>,
    base: Vec<u64>,
    rpm: Vec<u64>,
    minst: Vec<u64>,
}

fn decode(p: &Params, layout: &Layout, o: &[u64]) -> Out {
    let n = p.kernels();
    let field = |name: &str, w: usize| -> Vec<u64> {
        let s = layout.out_slot(name);
        (0..n).map(|k| s.field(o, k * w, w)).collect()
    };
    let g = layout.read_out(o, port::GRANT);
    assert!(g.count_ones() <= 1, "grant {g:#b} is not one-hot or 0");
    Out {
        grant: (g != 0).then(|| g.trailing_zeros() as usize),
        quota: field(port::QUOTA, p.quota_bits as usize),
        base: field(port::BASE, BASE_BITS),
        rpm: field(port::RPM, p.rpm_bits()),
        minst: field(port::MINST, p.reqcnt_bits as usize),
    }
}

/// Per cycle the decoded outputs (the registers at the start of the cycle), on the model and
/// on rusthdl, asserted equal.
fn run(p: &Params, cycles: &[Cycle]) -> Vec<Out> {
    let d = Design::old::<QbmiArbBench>(p);
    let case = encode(&d.layout, cycles);
    let model = run_vectors(&d, None, &case, None);
    let mut rtl = RustHdl::new(d.module.clone());
    let both = run_vectors(&d, Some(&mut rtl), &case, None);
    assert!(both.mismatch.is_none(), "{:?}", both.mismatch);
    assert_eq!(model.outputs, both.outputs, "model and rusthdl");
    both.outputs
        .iter()
        .map(|o| decode(p, &d.layout, o))
        .collect()
}

/// The N = 3 preset starting from Table 2's Req/Minst of bp, sv, ks: base (51, 34, 6).
fn bp_sv_ks() -> Params {
    params("bp_sv_ks", &[])
}

#[test]
fn reset_state_is_the_base_of_rpm_init() {
    let o = run(&bp_sv_ks(), &[Cycle::req(0)]);
    assert_eq!(o[0].rpm, [2, 3, 17]);
    assert_eq!(o[0].base, [51, 34, 6]);
    assert_eq!(o[0].quota, [51, 34, 6]);
    assert_eq!(o[0].minst, [0, 0, 0]);
    let o = run(&Params::default(), &[Cycle::req(0)]);
    assert_eq!(
        (o[0].rpm.clone(), o[0].quota.clone()),
        (vec![1, 1], vec![1, 1])
    );
}

#[test]
fn example_1_a_grant_decrements_only_the_granted_quota() {
    let p = bp_sv_ks();
    let busy = Cycle {
        slot_free: false,
        ..Cycle::all(3)
    };
    let gated = Cycle {
        mem_ok: 0,
        ..Cycle::all(3)
    };
    let o = run(
        &p,
        &[
            Cycle::all(3),
            busy,
            gated,
            Cycle::req(0),
            Cycle::req(0b100),
            Cycle::all(3),
        ],
    );
    let grants: Vec<Option<usize>> = o.iter().map(|x| x.grant).collect();
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
    let k1 = Cycle::req(0b10);
    let o = run(&p, &[k1, k1, Cycle::all(2)]);
    assert_eq!(o[0].quota, [4, 1]);
    assert_eq!(o[0].base, [4, 1]);
    // Kernel 1 goes 1 → 0 and every quota adds its base: (4 + 4, 0 + 1).
    assert_eq!(o[1].quota, [8, 1]);
    assert_eq!(o[2].quota, [12, 1]);
    // Both eligible: kernel 0 has more quota.
    assert_eq!(o[2].grant, Some(0));
}

#[test]
fn example_3_the_largest_quota_wins_ties_go_low() {
    let p = bp_sv_ks();
    // Quotas (51, 34, 6): kernel 0 wins until it falls to 34, then the tie goes to 0, then
    // kernel 1 wins at 34 against 33.
    let o = run(&p, &vec![Cycle::all(3); 36]);
    let grants: Vec<usize> = o.iter().map(|x| x.grant.unwrap()).collect();
    assert!(grants[..18].iter().all(|&g| g == 0), "{grants:?}");
    assert_eq!(o[17].quota, [34, 34, 6]);
    assert_eq!(grants[17], 0, "a tie goes to the lowest kernel");
    assert_eq!(grants[18], 1, "34 against 33");
    assert_eq!(grants[19], 0, "33 against 33: the tie again");
    // Only kernels 1 and 2 eligible: 1 (34) beats 2 (6).
    let o = run(&p, &[Cycle::req(0b110)]);
    assert_eq!(o[0].grant, Some(1));
}

#[test]
fn example_4_work_conservation_whatever_the_quota() {
    let p = bp_sv_ks();
    // Kernel 2 (quota 6, the smallest) alone is granted every cycle; its refills keep the
    // slot busy: after 6 grants quotas are (51 + 51, 34 + 34, 0 + 6).
    let o = run(&p, &[Cycle::req(0b100); 8]);
    assert!(o.iter().all(|x| x.grant == Some(2)));
    assert_eq!(o[6].quota, [102, 68, 6]);
    assert_eq!(o[7].quota, [102, 68, 5]);
}

#[test]
fn example_5_rpm_changes_only_on_a_sample() {
    let p = Params::default();
    // Kernel 0: 99 instructions with a first access, then the sample cycle with one more:
    // c = 100, rpm = round(1024 / 100) = 10. Kernel 1 counts firsts but never samples.
    let first = Cycle {
        first: 0b11,
        ..Cycle::req(0)
    };
    let mut cycles = vec![first; 99];
    cycles.push(Cycle {
        sample: 0b01,
        ..first
    });
    cycles.push(Cycle::req(0));
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
    let first = Cycle {
        first: 0b01,
        ..Cycle::req(0)
    };
    let mut cycles = vec![first; firsts];
    cycles.push(Cycle {
        sample: 0b01,
        ..Cycle::req(0)
    });
    cycles.push(Cycle::req(0));
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
        let o = &run(&p, &[Cycle::req(0)])[0];
        let products: Vec<u64> = (0..3).map(|k| o.base[k] * o.rpm[k]).collect();
        assert!(products.iter().all(|&x| x == products[0]), "{rpm:?}: {o:?}");
        println!("rpm {rpm:?}: base {:?}, LCM {}", o.base, products[0]);
    }
    let p = params("three", &[("rpm_init", "29,31,32")]);
    assert_eq!(run(&p, &[Cycle::req(0)])[0].base, [992, 928, 899]);
}

/// Spec §3.4 (start-of-cycle rpm): a sample that changes rpm in a refill cycle leaves that
/// refill on the old base; the new base applies from the next cycle on.
#[test]
fn a_sample_in_a_refill_cycle_refills_with_the_old_rpm() {
    let p = Params::default();
    // Quotas (1, 1), rpm (1, 1). Cycle 0: kernel 0 granted (1 → 0: refill) and sampled with
    // one first (c = 1: rpm 32). The refill adds the old base (1, 1): quotas (1, 2).
    let c0 = Cycle {
        first: 0b01,
        sample: 0b01,
        ..Cycle::req(0b01)
    };
    let o = run(&p, &[c0, Cycle::req(0b01), Cycle::req(0)]);
    assert_eq!(o[0].grant, Some(0));
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
    let o = run(&p, &[Cycle::req(0b10); 4]);
    assert!(o.iter().all(|x| x.quota == [15, 1]), "{o:?}");
    // A reset base above the quota range starts saturated.
    let p = params("three", &[("quota_bits", "5"), ("rpm_init", "29,31,32")]);
    assert_eq!(run(&p, &[Cycle::req(0)])[0].quota, [31, 31, 31]);
}

#[test]
fn reset_restores_rpm_init_and_quotas() {
    let p = bp_sv_ks();
    let s = Cycle {
        first: 0b111,
        sample: 0b111,
        ..Cycle::all(3)
    };
    let reset = Cycle {
        reset: true,
        ..Cycle::all(3)
    };
    let o = run(&p, &[s, s, reset, Cycle::req(0)]);
    assert_eq!(o[2].rpm, [32, 32, 32]);
    assert_eq!(o[3].rpm, [2, 3, 17]);
    assert_eq!(o[3].quota, [51, 34, 6]);
    assert_eq!(o[3].minst, [0, 0, 0]);
}

#[test]
fn one_kernel_is_always_granted_when_eligible() {
    let p = params("paper", &[("N", "1")]);
    let o = run(&p, &[Cycle::req(1), Cycle::req(1), Cycle::req(0)]);
    let grants: Vec<Option<usize>> = o.iter().map(|x| x.grant).collect();
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

/// The invariants of §3.4 / §3.5 on every cycle of `cycles` random cycles of `p`, on the RTL's
/// outputs (also compared with the model).
fn invariants(p: &Params, cycles: usize, seed: u64) -> Coverage {
    let d = Design::old::<QbmiArbBench>(p);
    let case = check::first_cycles(&d, seed, cycles);
    let mut rtl = RustHdl::new(d.module.clone());
    let r = run_vectors(&d, Some(&mut rtl), &case, None);
    assert!(r.mismatch.is_none(), "{:?}", r.mismatch);
    let outs: Vec<Out> = r.outputs.iter().map(|o| decode(p, &d.layout, o)).collect();
    let i = |buf: &[u64], name: &str| d.layout.in_slot(name).get(buf) as u8;
    let n = p.kernels();
    let mut cov = Coverage::default();
    for c in 0..case.len() {
        let (inp, o) = (&case[c], &outs[c]);
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
        let elig = eligible(
            i(inp, port::MEM_REQ),
            i(inp, port::MEM_OK),
            i(inp, port::SLOT_FREE) == 1,
        );
        assert_eq!(o.grant.is_some(), elig != 0, "cycle {c}: work conservation");
        if let Some(g) = o.grant {
            assert_eq!(elig >> g & 1, 1, "cycle {c}: grant to an ineligible kernel");
            cov.grants += 1;
        }
        cov.rpm_values.extend(o.rpm.iter().copied());
        cov.saturated += o.quota.iter().filter(|&&q| q == p.quota_max()).count() as u64;
        let Some(next) = outs.get(c + 1) else { break };
        if i(inp, "reset") == 1 {
            continue;
        }
        let sample = i(inp, port::SAMPLE);
        cov.samples += u64::from(sample.count_ones());
        for k in 0..n {
            if sample >> k & 1 == 0 {
                assert_eq!(next.rpm[k], o.rpm[k], "cycle {c}: rpm {k} without a sample");
            }
        }
        let refill = o.grant.is_some_and(|g| o.quota[g] == 1);
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

const MILLION: u64 = 1_000_000;

fn random_rusthdl(p: &Params, cycles: u64, seed: u64) {
    let d = Design::old::<QbmiArbBench>(p);
    let t = Instant::now();
    check::assert_random_on_rusthdl(&d, cycles, seed);
    println!(
        "{}: {cycles} random cycles on rusthdl in {:.1} s",
        d.params,
        t.elapsed().as_secs_f64()
    );
}

#[test]
fn random_rusthdl_paper_million() {
    random_rusthdl(&Params::default(), MILLION, 1);
}

/// The presets at N = 3 (bp+sv+ks's rpm_init 2, 3, 17).
#[test]
fn random_rusthdl_bp_sv_ks_million() {
    random_rusthdl(&bp_sv_ks(), MILLION, 2);
}

#[test]
fn random_rusthdl_small_million() {
    random_rusthdl(&params("small", &[]), MILLION, 3);
}

/// Short intervals (every rpm value reachable) at N = 3 with a preset rpm.
#[test]
fn random_rusthdl_short_interval_million() {
    random_rusthdl(
        &params("three", &[("reqcnt_bits", "5"), ("rpm_init", "4,1,6")]),
        MILLION,
        4,
    );
}

/// `floor` rounding with a 64-request interval.
#[test]
fn random_rusthdl_floor_million() {
    random_rusthdl(
        &params("paper", &[("rpm_round", "floor"), ("reqcnt_bits", "6")]),
        MILLION,
        5,
    );
}

/// Narrow saturating quotas: N = 1, and N = 3 at rpm_max 13 from a preset rpm.
#[test]
fn random_rusthdl_narrow_quotas_million() {
    random_rusthdl(
        &params("paper", &[("N", "1"), ("quota_bits", "3")]),
        MILLION,
        6,
    );
    random_rusthdl(
        &params(
            "three",
            &[
                ("quota_bits", "5"),
                ("rpm_max", "13"),
                ("rpm_init", "13,12,5"),
            ],
        ),
        MILLION,
        7,
    );
}

#[test]
fn random_verilator() {
    if !external("verilator") {
        return;
    }
    for p in [Params::default(), bp_sv_ks(), params("small", &[])] {
        let d = Design::old::<QbmiArbBench>(&p);
        let lib = VerilatorLib::load(&d.module, &d.verilog()).unwrap();
        let factory = || Box::new(lib.instance().unwrap()) as Box<dyn smrtl_cosim::Rtl>;
        let r = check::random(&d, &factory, 5_000, 8);
        assert!(
            r.failure.is_none(),
            "{p:?}: {:?}",
            r.failure.map(|f| f.mismatch)
        );
        assert!(r.cycles >= 5_000);
    }
}

/// Every preset (and `floor`) lints under `verilator --lint-only -Wall` (the project's
/// waivers), runs on Icarus exactly as the model does, and synthesizes without latches to the
/// inventory's flip-flops.
#[test]
fn verilog_lints_runs_on_icarus_and_synthesizes() {
    let mut all: Vec<Params> = Params::presets().into_iter().map(|(_, p)| p).collect();
    all.push(params("small", &[("rpm_round", "floor")]));
    all.push(params("small", &[("N", "1"), ("rpm_init", "2")]));
    for p in all {
        let d = Design::old::<QbmiArbBench>(&p);
        let v = d.verilog();
        if external("verilator") {
            smrtl_synth::lint_verilator(&v, &d.module.name).unwrap();
        }
        if external("iverilog") {
            smrtl_synth::compile_icarus(&v, &d.module.name).unwrap();
            let case = check::first_cycles(&d, 8, 2_000);
            let want = run_vectors(&d, None, &case, None).outputs;
            let got = run_batch(&d.module, &v, &case).unwrap().outputs;
            assert!(got == want, "Icarus differs from the model on {p:?}");
        }
        if external("yosys") {
            let (r, g) = smrtl_synth::blocks::qbmi_arb::cost(&p).unwrap();
            println!(
                "{}: {} flip-flops (inventory {} = {} x {}), {} cells, paper +{}",
                d.params, r.yosys, r.inventory, p.n, r.per_kernel, g.cells, r.paper
            );
            assert_eq!(r.yosys, r.inventory, "{p:?}");
            assert!(g.latches.is_empty(), "{:?}", g.latches);
        }
    }
}

#[test]
fn typed_api_matches_the_ports() {
    // The SM model's view (Qbmi) and the port model agree on a random run: the port model is
    // a thin adapter.
    let p = bp_sv_ks();
    let d = Design::old::<QbmiArbBench>(&p);
    let case = check::first_cycles(&d, 12, 5_000);
    let outs = run_vectors(&d, None, &case, None).outputs;
    let mut q = Qbmi::new(&QbmiCfg::of(&p));
    for (inp, o) in case.iter().zip(&outs) {
        let i = |name: &str| d.layout.in_slot(name).get(inp) as u8;
        let o = decode(&p, &d.layout, o);
        let g = q.grant(eligible(
            i(port::MEM_REQ),
            i(port::MEM_OK),
            i(port::SLOT_FREE) == 1,
        ));
        assert_eq!(g, o.grant);
        assert_eq!(q.quota.map(u64::from).to_vec(), o.quota);
        assert_eq!(q.base().map(u64::from).to_vec(), o.base);
        if i("reset") == 1 {
            q = Qbmi::new(&QbmiCfg::of(&p));
        } else {
            q.tick(g, i(port::FIRST), i(port::SAMPLE));
        }
    }
}

/// QbmiArb with the refill-timing bug of [`Fault::RefillWithNewRpm`].
struct Broken;

impl OldBench for Broken {
    type Params = Params;
    const SUMMARY: &'static str = "qbmi_arb with a deliberate refill-timing bug";
    fn module(p: &Params) -> Module {
        build_with(p, Fault::RefillWithNewRpm)
    }
    fn model(p: &Params, layout: &Layout) -> Box<dyn Simulator + Send> {
        QbmiArbBench::model(p, layout)
    }
    fn cases(p: &Params, layout: &Layout) -> proptest::strategy::BoxedStrategy<Case> {
        QbmiArbBench::cases(p, layout)
    }
}

/// A refill that uses the rpm sampled in the same cycle: caught, shrunk to a couple of cycles
/// (a refill with a sample), and the minimal case fails again the same way.
#[test]
fn planted_refill_bug_is_caught_and_shrunk() {
    let d = Design::old::<Broken>(&Params::default());
    let m = d.module.clone();
    let factory = move || Box::new(RustHdl::new(m.clone())) as Box<dyn smrtl_cosim::Rtl>;
    let r = check::random(&d, &factory, 200_000, 9);
    let f = r.failure.expect("the broken RTL must be caught");
    println!(
        "{}; after {} random cycles; shrunk from {} to {} cycles in {} steps",
        f.mismatch,
        r.cycles,
        f.original_cycles,
        f.minimal.len(),
        f.shrink_steps
    );
    assert_eq!(f.mismatch.port, port::QUOTA);
    assert!(f.original_cycles <= CASE_CYCLES);
    assert!(f.minimal.len() <= 3, "{} cycles", f.minimal.len());
    let again = check::run_case(&d, &factory, &f.minimal, None);
    assert_eq!(again.mismatch, Some(f.mismatch));
    // The cycle before the mismatch sampled a kernel.
    let before = &f.minimal[f.minimal.len() - 2];
    assert_ne!(d.layout.in_slot(port::SAMPLE).get(before), 0);
}
