//! The `MemIssueCtl` top (docs/memory-issue-control.md §2, §5): directed scenarios for the
//! kernel-level claims of §4.5 (example 2: a closed gate blocks only its own kernel; example 4:
//! other kernels' requests never touch a kernel's MILG; example 7: SMIL limits (3, 1) hold) and
//! the grant of the non-BMI schemes, each on the model and rusthdl; random co-simulation of
//! legal SM cycles on rusthdl (10^6 cycles on each of 21 configurations: every scheme at every
//! N = 1..3, paper and small widths),
//! Verilator and Icarus; the hierarchical Verilog linted; a planted wiring bug caught and
//! shrunk; Yosys flip-flops equal to the inventory.

use smrtl_cosim::blocks::mem_issue_ctl::{CtlIn, MemIssueCtl};
use smrtl_cosim::harness::backend::icarus::run_batch;
use smrtl_cosim::harness::backend::{rusthdl::RustHdl, verilator::VerilatorLib};
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::mem_issue_ctl::{build_with, port, Fault, Params};
use smrtl_hdl::{BlockParams, Module};
use smrtl_testbench::blocks::mem_issue_ctl::{encode, Cycle, MemIssueCtlBench};
use smrtl_testbench::check;
use smrtl_testbench::{external, Case, Design, OldBench};
use std::time::Instant;

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).unwrap()
}

/// Per-kernel view of one cycle's outputs.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Out {
    grant: u64,
    mem_ok: u64,
    inflight: Vec<u64>,
    reqcnt: Vec<u64>,
    rsfail: Vec<u64>,
    mil: Vec<u64>,
    unl: Vec<u64>,
}

fn decode(p: &Params, layout: &Layout, o: &[u64]) -> Out {
    let n = p.kernels();
    let (ib, fb, qb) = (
        p.inflight_bits as usize,
        p.rsfail_bits as usize,
        p.reqcnt_bits as usize,
    );
    let each = |name: &str, w: usize| -> Vec<u64> {
        (0..n)
            .map(|k| layout.out_slot(name).field(o, k * w, w))
            .collect()
    };
    Out {
        grant: layout.read_out(o, port::GRANT),
        mem_ok: layout.read_out(o, port::MEM_OK),
        inflight: each(port::INFLIGHT, ib),
        reqcnt: each(port::REQCNT, qb),
        rsfail: each(port::RSFAIL, fb),
        mil: each(port::MIL, ib),
        unl: each(port::UNL, 1),
    }
}

/// `cycles` from reset on the model and rusthdl: equal outputs every cycle; returns them.
fn run(p: &Params, cycles: &[Cycle]) -> Vec<Out> {
    let d = Design::old::<MemIssueCtlBench>(p);
    let case: Case = cycles.iter().map(|c| encode(p, &d.layout, c)).collect();
    let sims: Vec<Box<dyn Simulator>> = vec![d.model(), Box::new(RustHdl::new(d.module.clone()))];
    let runs: Vec<Vec<Out>> = sims
        .into_iter()
        .map(|mut sim| {
            case.iter()
                .map(|inputs| {
                    let mut o = vec![0; d.layout.out_words];
                    sim.step(inputs, &mut o);
                    decode(p, &d.layout, &o)
                })
                .collect()
        })
        .collect();
    for (c, (m, r)) in runs[0].iter().zip(&runs[1]).enumerate() {
        assert_eq!(m, r, "model vs rusthdl at cycle {c}");
    }
    runs.into_iter().next().unwrap()
}

/// SM cycles of a closed loop: `each` sets the cycle's requests and events; the issue is cut to
/// the granted kernels and completions to what is in flight (legal stimulus, spec §5).
fn closed_loop(
    p: &Params,
    n: usize,
    base: CtlIn,
    mut each: impl FnMut(usize, &MemIssueCtl, &mut CtlIn),
) -> Vec<Cycle> {
    let mut ctl = MemIssueCtl::new(p);
    let mut out = vec![];
    for c in 0..n {
        let mut x = base;
        each(c, &ctl, &mut x);
        let grant = ctl.comb(x.mem_req, x.slot_free).grant;
        x.issue &= grant;
        for k in 0..ctl.kernels() {
            let can = ctl.inflight(k) + u32::from(x.issue >> k & 1);
            x.done[k] = u32::from(x.done[k]).min(can) as u8;
        }
        ctl.tick(&x);
        out.push(Cycle { reset: false, x });
    }
    out
}

/// Example 2 and 7 (Smil, limits (3, 1)): kernel 1's gate closes at one in flight and never
/// blocks kernel 0; kernel 0 never exceeds three, kernel 1 never one; `grant = elig`.
#[test]
fn ex2_ex7_smil_limits_per_kernel() {
    let p = params("smil", &[]);
    let base = CtlIn {
        mem_req: 0b11,
        slot_free: true,
        smil_limit: [3, 1, 0],
        ..CtlIn::default()
    };
    let cycles = closed_loop(&p, 400, base, |c, ctl, x| {
        // Alternate the issuing kernel among the granted; complete now and then.
        let grant = ctl.comb(x.mem_req, x.slot_free).grant;
        let want = if c % 2 == 0 { 0b10 } else { 0b01 };
        x.issue = if grant & want != 0 { want } else { 0 };
        if c % 7 == 0 {
            x.done = [1, 1, 0];
        }
    });
    let o = run(&p, &cycles);
    assert!(o[1..]
        .iter()
        .all(|x| x.inflight[0] <= 3 && x.inflight[1] <= 1));
    assert_eq!(o.iter().map(|x| x.inflight[0]).max(), Some(3));
    assert_eq!(o.iter().map(|x| x.inflight[1]).max(), Some(1));
    // Kernel 1 blocked while kernel 0 is granted: the gate is per kernel.
    let split = o
        .iter()
        .filter(|x| x.mem_ok & 0b10 == 0 && x.grant & 0b01 == 1)
        .count();
    assert!(split > 20, "{split}");
    for (c, x) in o.iter().enumerate() {
        assert_eq!(x.grant, x.mem_ok & 0b11, "cycle {c}: grant = elig");
    }
    assert_eq!(
        (o[1].mil.clone(), o[1].unl.clone()),
        (vec![3, 1], vec![0, 0])
    );
}

/// Example 4 at the top: only kernel 0's requests and failures: kernel 1's counters never
/// move; kernel 0's interval ends after 8 requests (small widths) and only its limit changes.
#[test]
fn ex4_other_kernels_requests_do_not_count() {
    let p = params("small", &[]);
    let base = CtlIn {
        mem_req: 0b11,
        slot_free: true,
        ..CtlIn::default()
    };
    let cycles = closed_loop(&p, 60, base, |c, _, x| {
        x.issue = if c < 6 { 0b01 } else { 0 };
        if (6..30).contains(&c) {
            x.fail = 0b01;
        } else if (30..38).contains(&c) {
            x.acc = 0b01;
        }
    });
    let o = run(&p, &cycles);
    assert!(o.iter().all(|x| x.reqcnt[1] == 0 && x.rsfail[1] == 0));
    assert!(o.iter().all(|x| x.mil[1] == 15 && x.unl[1] == 1));
    // P = 6, rs = 24 → r = 3 → mil = 2.
    assert_eq!((o[38].mil[0], o[38].unl[0]), (2, 0));
    assert_eq!(o[38].mem_ok & 1, 0, "six in flight, limit 2");
    assert_eq!(o[38].grant, 0b10, "kernel 1 still granted");
}

/// Baseline: MILGs are Off (no limit); the grant is exactly the requesting kernels while the
/// slot is free, and 0 while it is busy.
#[test]
fn baseline_grant_is_elig() {
    let p = params("baseline", &[("N", "3")]);
    let base = CtlIn::default();
    let cycles = closed_loop(&p, 64, base, |c, _, x| {
        x.mem_req = (c % 8) as u8;
        x.slot_free = c % 3 != 0;
        x.issue = 0;
    });
    let o = run(&p, &cycles);
    for (c, x) in o.iter().enumerate() {
        let want = if c % 3 != 0 { (c % 8) as u64 } else { 0 };
        assert_eq!((x.grant, x.mem_ok), (want, 0b111), "cycle {c}");
    }
}

/// §3.5 example 7 at the top (Rbmi): with every kernel eligible every cycle the grants rotate
/// 0, 1, 2, 0, … (N = 3) and 0, 1, 0, … (N = 2); an ineligible kernel is skipped; the grant is
/// one-hot and the issuing kernel's MILG counts the issue.
#[test]
fn rbmi_grants_rotate_and_skip() {
    for (n, want) in [
        ("2", vec![1u64, 2, 1, 2, 1, 2]),
        ("3", vec![1, 2, 4, 1, 2, 4]),
    ] {
        let p = params("rbmi", &[("N", n)]);
        let all = (1u8 << p.kernels()) - 1;
        let base = CtlIn {
            mem_req: all,
            slot_free: true,
            ..CtlIn::default()
        };
        let cycles = closed_loop(&p, 6, base, |_, _, x| {
            x.issue = all;
            x.done = [1, 1, 1];
        });
        let o = run(&p, &cycles);
        assert_eq!(
            o.iter().map(|x| x.grant).collect::<Vec<_>>(),
            want,
            "N = {n}"
        );
    }
    // N = 3, kernel 1 never requests: 0, 2, 0, 2.
    let p = params("rbmi", &[("N", "3")]);
    let base = CtlIn {
        mem_req: 0b101,
        slot_free: true,
        ..CtlIn::default()
    };
    let cycles = closed_loop(&p, 4, base, |_, _, x| x.issue = 0b111);
    let o = run(&p, &cycles);
    assert_eq!(o.iter().map(|x| x.grant).collect::<Vec<_>>(), [1, 4, 1, 4]);
    assert_eq!(o[3].inflight, [2, 0, 1]);
}

/// §3.5 example 5 at the top (QBMI + DMIL, small widths): MILG 0's `boundary` is QBMI's
/// `sample`: kernel 0's 8th request (first accesses of two instructions in the interval) sets
/// `rpm_0 = round(8 / 2) = 4` in the cycle after, together with `reqcnt_0 → 0`; kernel 1's rpm
/// never changes; `base = LCM(rpm) / rpm` follows; single eligible kernel granted (ex. 4).
#[test]
fn qbmi_sample_is_the_milg_boundary() {
    for preset in ["small_qbmi", "small_qbmi_dmil"] {
        let p = params(preset, &[]);
        let d = Design::old::<MemIssueCtlBench>(&p);
        let base = CtlIn {
            mem_req: 0b10,
            slot_free: true,
            ..CtlIn::default()
        };
        let cycles = closed_loop(&p, 10, base, |c, _, x| {
            if c < 8 {
                x.acc = 0b01;
                x.first = if c % 4 == 0 { 0b01 } else { 0 };
            }
            x.issue = 0b10;
            x.done = [0, 1, 0];
        });
        let o = run(&p, &cycles);
        let case: Case = cycles.iter().map(|c| encode(&p, &d.layout, c)).collect();
        let mut model = d.model();
        let (mut rpm, mut base_q) = (vec![], vec![]);
        for inputs in &case {
            let mut out = vec![0; d.layout.out_words];
            model.step(inputs, &mut out);
            let f = |name: &str, k: usize, w: usize| d.layout.out_slot(name).field(&out, k * w, w);
            rpm.push((f(port::RPM, 0, 6), f(port::RPM, 1, 6)));
            base_q.push((f(port::BASE, 0, 10), f(port::BASE, 1, 10)));
        }
        assert_eq!(rpm[7], (1, 1), "{preset}");
        assert_eq!(rpm[8], (4, 1), "{preset}");
        assert_eq!(base_q[8], (1, 4), "{preset}");
        assert_eq!((o[7].reqcnt[0], o[8].reqcnt[0]), (7, 0));
        assert!(
            o.iter().all(|x| x.grant == 0b10),
            "the only eligible kernel"
        );
    }
}

/// After reset every kernel's `unl = 1` and `mil` all ones (spec §4.3), in every non-BMI
/// scheme and for N = 1..3.
#[test]
fn reset_state() {
    for scheme in ["Baseline", "Smil", "Dmil"] {
        for n in ["1", "2", "3"] {
            let p = params("paper", &[("scheme", scheme), ("N", n)]);
            let o = run(&p, &[Cycle::default()]);
            let k = p.kernels();
            assert_eq!(o[0].unl, vec![1; k]);
            assert_eq!(o[0].mil, vec![127; k]);
            assert_eq!(o[0].mem_ok, (1 << k) - 1);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Random co-simulation
// ---------------------------------------------------------------------------------------------

fn random(p: &Params, n: u64, seed: u64) {
    let d = Design::old::<MemIssueCtlBench>(p);
    let t = Instant::now();
    check::assert_random_on_rusthdl(&d, n, seed);
    println!(
        "mem_issue_ctl {:?} N={} {} rusthdl: {n} cycles in {:.2} s",
        p.scheme,
        p.n,
        d.module.name,
        t.elapsed().as_secs_f64()
    );
}

/// 10^6 random legal cycles per configuration (issue 13's bar for every block configuration).
const MILLION: u64 = 1_000_000;

/// Runs each configuration (preset, overrides) for [`MILLION`] cycles, seeds from `seed`.
fn random_million(configs: &[(&str, &[(&str, &str)])], seed: u64) {
    for (i, (preset, sets)) in configs.iter().enumerate() {
        random(&params(preset, sets), MILLION, seed + i as u64);
    }
}

/// The MIL schemes and no control, each at N = 1, 2 and 3: the paper's Dmil, Baseline and Smil,
/// and small widths (boundaries every few cycles).
#[test]
fn random_rusthdl_mil_schemes_1m_each() {
    random_million(
        &[
            ("paper", &[]),
            ("baseline", &[]),
            ("smil", &[]),
            ("three", &[]),
            ("paper", &[("N", "1")]),
            ("small", &[]),
            ("small", &[("N", "3")]),
            ("small_smil", &[("N", "3")]),
            ("small_baseline", &[]),
            ("baseline", &[("N", "1")]),
            ("small_baseline", &[("N", "3")]),
            ("smil", &[("N", "1")]),
        ],
        10,
    );
}

/// RBMI at N = 1, 2 and 3 (small widths at 3).
#[test]
fn random_rusthdl_rbmi_1m_each() {
    random_million(
        &[
            ("rbmi", &[]),
            ("small_rbmi", &[("N", "3")]),
            ("rbmi", &[("N", "1")]),
        ],
        20,
    );
}

/// QBMI and QBMI + DMIL at N = 2 and 1, the paper's widths (the full top).
#[test]
fn random_rusthdl_qbmi_paper_1m_each() {
    random_million(
        &[
            ("qbmi", &[]),
            ("qbmi_dmil", &[]),
            ("qbmi", &[("N", "1")]),
            ("qbmi_dmil", &[("N", "1")]),
        ],
        30,
    );
}

/// QBMI and QBMI + DMIL at N = 3 with small widths (a sample every few requests), the second
/// with narrow saturating quotas.
#[test]
fn random_rusthdl_qbmi_small_three_1m_each() {
    random_million(
        &[
            ("small_qbmi", &[("N", "3")]),
            ("small_qbmi_dmil", &[("N", "3"), ("quota_bits", "3")]),
        ],
        40,
    );
}

#[test]
fn random_verilator() {
    if !external("verilator") {
        return;
    }
    for (preset, sets) in [
        ("paper", vec![]),
        ("small_smil", vec![("N", "3")]),
        ("small_rbmi", vec![("N", "3")]),
        ("small_qbmi_dmil", vec![("N", "3")]),
    ] {
        let d = Design::old::<MemIssueCtlBench>(&params(preset, &sets));
        let lib = VerilatorLib::load(&d.module, &d.verilog()).unwrap();
        let factory = || Box::new(lib.instance().unwrap()) as Box<dyn smrtl_cosim::Rtl>;
        let r = check::random(&d, &factory, 5_000, 4);
        assert!(
            r.failure.is_none(),
            "{preset}: {:?}",
            r.failure.map(|f| f.mismatch)
        );
        assert!(r.cycles >= 5_000);
    }
}

/// The hierarchical Verilog (the top and one `milg` module) lints clean and Icarus replays
/// random cycles like the model.
#[test]
fn verilog_lints_and_runs_on_icarus() {
    for (preset, sets) in [
        ("paper", vec![]),
        ("baseline", vec![("N", "1")]),
        ("small_smil", vec![("N", "3")]),
        ("rbmi", vec![("N", "3")]),
        ("qbmi_dmil", vec![]),
        ("small_qbmi", vec![("N", "1")]),
    ] {
        let d = Design::old::<MemIssueCtlBench>(&params(preset, &sets));
        let v = d.verilog();
        let modules = if preset.contains("bmi") { 3 } else { 2 };
        assert_eq!(v.matches("\nmodule ").count(), modules, "{preset}");
        assert!(v.contains("milg_0"), "instances in the Verilog");
        if external("verilator") {
            smrtl_synth::lint_verilator(&v, &d.module.name).unwrap();
        }
        if external("iverilog") {
            let case = check::first_cycles(&d, 8, 3_000);
            let want = check::run_vectors(&d, None, &case, None).outputs;
            let got = run_batch(&d.module, &v, &case).unwrap().outputs;
            assert!(got == want, "Icarus differs from the model on {preset}");
        }
    }
}

#[test]
fn synthesis_is_latch_free_with_the_inventory() {
    if !external("yosys") {
        return;
    }
    for (preset, want) in [
        ("paper", 88),
        ("baseline", 72),
        ("smil", 88),
        ("rbmi", 73),
        ("qbmi", 136),
        ("qbmi_dmil", 152),
    ] {
        let d = Design::old::<MemIssueCtlBench>(&params(preset, &[]));
        let cost = smrtl_synth::cost_of(&d.module, false).unwrap();
        assert_eq!(cost.generic.flip_flops, want, "{preset}");
        assert!(cost.generic.latches.is_empty(), "{preset}");
        let n = d.cost_notes().unwrap();
        assert!(
            n.lines[0].contains(&format!("{want} DFF bits")),
            "{}",
            n.lines[0]
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The planted bug
// ---------------------------------------------------------------------------------------------

struct Broken;

impl OldBench for Broken {
    type Params = Params;
    const SUMMARY: &'static str = "mem_issue_ctl with a deliberate wiring bug";
    fn module(p: &Params) -> Module {
        build_with(p, Fault::SharedAcc)
    }
    fn model(p: &Params, layout: &Layout) -> Box<dyn Simulator + Send> {
        MemIssueCtlBench::model(p, layout)
    }
    fn cases(p: &Params, layout: &Layout) -> proptest::strategy::BoxedStrategy<Case> {
        MemIssueCtlBench::cases(p, layout)
    }
}

/// Kernel 1's MILG counting kernel 0's requests is caught on `reqcnt`, shrunk to a couple of
/// cycles.
#[test]
fn planted_bug_is_caught_and_shrunk() {
    let d = Design::old::<Broken>(&params("small", &[]));
    let m = d.module.clone();
    let factory = move || Box::new(RustHdl::new(m.clone())) as Box<dyn smrtl_cosim::Rtl>;
    let r = check::random(&d, &factory, 100_000, 7);
    let f = r.failure.expect("the broken RTL must be caught");
    println!(
        "caught at cycle {} on {}: shrunk from {} to {} cycles in {} steps",
        f.mismatch.cycle,
        f.mismatch.port,
        f.original_cycles,
        f.minimal.len(),
        f.shrink_steps
    );
    assert_eq!(f.mismatch.port, port::REQCNT);
    assert!(
        f.mismatch.cycle <= 4,
        "one request of kernel 0, then the compare"
    );
    assert!(f.minimal.len() < f.original_cycles);
    let again = check::run_case(&d, &factory, &f.minimal, None);
    assert_eq!(again.mismatch, Some(f.mismatch));
}
