//! The `MemIssueCtl` top (docs/memory-issue-control.md §2, §5): directed scenarios for the
//! kernel-level claims of §4.5 (example 2: a closed gate blocks only its own kernel; example 4:
//! other kernels' requests never touch a kernel's MILG; example 7: SMIL limits (3, 1) hold),
//! the grant of every scheme and QBMI's sample as the MILG boundary, each on the model and
//! rusthdl (outputs equal every cycle); the Verilog's hierarchy. Random co-simulation on every
//! backend, lint, Icarus, synthesis, the flip-flop inventory and the planted fault are the
//! conformance suite's (`tests/conformance.rs`).

use smrtl_cosim::blocks::mem_issue_ctl::{CtlIn, MemIssueCtl};
use smrtl_cosim::blocks::rbmi_arb::{kernels, mask};
use smrtl_hdl::blocks::mem_issue_ctl::port::Outputs;
use smrtl_hdl::blocks::mem_issue_ctl::Params;
use smrtl_hdl::BlockParams;
use smrtl_testbench::{check, Design};

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).unwrap()
}

/// `cycles` from reset on the model and rusthdl: equal outputs every cycle; returns them.
fn run(p: &Params, cycles: &[CtlIn]) -> Vec<Outputs> {
    check::directed(p, cycles)
}

/// A cycle of `p` in which the kernels of `mem_req` request and the slot is free.
fn requests(p: &Params, mem_req: u8) -> CtlIn {
    CtlIn {
        mem_req: kernels(p.kernels(), mem_req),
        slot_free: true,
        ..CtlIn::new(p)
    }
}

/// SM cycles of a closed loop: `each` sets the cycle's requests and events; the issue is cut to
/// the granted kernels and completions to what is in flight (legal stimulus, spec §5).
fn closed_loop(
    p: &Params,
    n: usize,
    base: CtlIn,
    mut each: impl FnMut(usize, &MemIssueCtl, &mut CtlIn),
) -> Vec<CtlIn> {
    let mut ctl = MemIssueCtl::new(p);
    let mut out = vec![];
    for c in 0..n {
        let mut x = base.clone();
        each(c, &ctl, &mut x);
        let grant = ctl.grant(mask(&x.mem_req), x.slot_free);
        for k in 0..ctl.kernels() {
            x.issue[k] &= grant >> k & 1 == 1;
            let can = ctl.inflight(k) + u32::from(x.issue[k]);
            x.done[k] = x.done[k].min(u64::from(can));
        }
        ctl.tick(&x);
        out.push(x);
    }
    out
}

/// Example 2 and 7 (Smil, limits (3, 1)): kernel 1's gate closes at one in flight and never
/// blocks kernel 0; kernel 0 never exceeds three, kernel 1 never one; `grant = elig`.
#[test]
fn ex2_ex7_smil_limits_per_kernel() {
    let p = params("smil", &[]);
    let base = CtlIn {
        smil_limit: vec![3, 1],
        ..requests(&p, 0b11)
    };
    let cycles = closed_loop(&p, 400, base, |c, ctl, x| {
        // Alternate the issuing kernel among the granted; complete now and then.
        let grant = ctl.grant(mask(&x.mem_req), x.slot_free);
        let want = if c % 2 == 0 { 0b10 } else { 0b01 };
        x.issue = kernels(2, if grant & want != 0 { want } else { 0 });
        if c % 7 == 0 {
            x.done = vec![1, 1];
        }
    });
    let o = run(&p, &cycles);
    assert!(o[1..]
        .iter()
        .all(|x| x.inflight[0] <= 3 && x.inflight[1] <= 1));
    assert_eq!(o.iter().map(|x| x.inflight[0]).max(), Some(3));
    assert_eq!(o.iter().map(|x| x.inflight[1]).max(), Some(1));
    // Kernel 1 blocked while kernel 0 is granted: the gate is per kernel.
    let split = o.iter().filter(|x| !x.mem_ok[1] && x.grant[0]).count();
    assert!(split > 20, "{split}");
    for (c, x) in o.iter().enumerate() {
        assert_eq!(x.grant, x.mem_ok, "cycle {c}: grant = elig");
    }
    assert_eq!(
        (o[1].mil.clone(), o[1].unl.clone()),
        (vec![3, 1], vec![false, false])
    );
}

/// Example 4 at the top: only kernel 0's requests and failures: kernel 1's counters never
/// move; kernel 0's interval ends after 8 requests (small widths) and only its limit changes.
#[test]
fn ex4_other_kernels_requests_do_not_count() {
    let p = params("small", &[]);
    let cycles = closed_loop(&p, 60, requests(&p, 0b11), |c, _, x| {
        x.issue[0] = c < 6;
        if (6..30).contains(&c) {
            x.fail[0] = true;
        } else if (30..38).contains(&c) {
            x.acc[0] = true;
        }
    });
    let o = run(&p, &cycles);
    assert!(o.iter().all(|x| x.reqcnt[1] == 0 && x.rsfail[1] == 0));
    assert!(o.iter().all(|x| x.mil[1] == 15 && x.unl[1]));
    // P = 6, rs = 24 → r = 3 → mil = 2.
    assert_eq!((o[38].mil[0], o[38].unl[0]), (2, false));
    assert!(!o[38].mem_ok[0], "six in flight, limit 2");
    assert_eq!(o[38].grant, [false, true], "kernel 1 still granted");
}

/// Baseline: MILGs are Off (no limit); the grant is exactly the requesting kernels while the
/// slot is free, and 0 while it is busy.
#[test]
fn baseline_grant_is_elig() {
    let p = params("baseline", &[("N", "3")]);
    let cycles = closed_loop(&p, 64, CtlIn::new(&p), |c, _, x| {
        x.mem_req = kernels(3, (c % 8) as u8);
        x.slot_free = c % 3 != 0;
    });
    let o = run(&p, &cycles);
    for (c, x) in o.iter().enumerate() {
        let want = if c % 3 != 0 { (c % 8) as u8 } else { 0 };
        assert_eq!(
            (mask(&x.grant), mask(&x.mem_ok)),
            (want, 0b111),
            "cycle {c}"
        );
    }
}

/// §3.5 example 7 at the top (Rbmi): with every kernel eligible every cycle the grants rotate
/// 0, 1, 2, 0, … (N = 3) and 0, 1, 0, … (N = 2); an ineligible kernel is skipped; the grant is
/// one-hot and the issuing kernel's MILG counts the issue.
#[test]
fn rbmi_grants_rotate_and_skip() {
    for (n, want) in [
        ("2", vec![1u8, 2, 1, 2, 1, 2]),
        ("3", vec![1, 2, 4, 1, 2, 4]),
    ] {
        let p = params("rbmi", &[("N", n)]);
        let k = p.kernels();
        let cycles = closed_loop(&p, 6, requests(&p, 0b111), |_, _, x| {
            x.issue = vec![true; k];
            x.done = vec![1; k];
        });
        let o = run(&p, &cycles);
        let grants: Vec<u8> = o.iter().map(|x| mask(&x.grant)).collect();
        assert_eq!(grants, want, "N = {n}");
    }
    // N = 3, kernel 1 never requests: 0, 2, 0, 2.
    let p = params("rbmi", &[("N", "3")]);
    let cycles = closed_loop(&p, 4, requests(&p, 0b101), |_, _, x| {
        x.issue = vec![true; 3];
    });
    let o = run(&p, &cycles);
    let grants: Vec<u8> = o.iter().map(|x| mask(&x.grant)).collect();
    assert_eq!(grants, [1, 4, 1, 4]);
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
        let cycles = closed_loop(&p, 10, requests(&p, 0b10), |c, _, x| {
            if c < 8 {
                x.acc[0] = true;
                x.first[0] = c % 4 == 0;
            }
            x.issue[1] = true;
            x.done[1] = 1;
        });
        let o = run(&p, &cycles);
        assert_eq!(o[7].rpm, [1, 1], "{preset}");
        assert_eq!(o[8].rpm, [4, 1], "{preset}");
        assert_eq!(o[8].base, [1, 4], "{preset}");
        assert_eq!((o[7].reqcnt[0], o[8].reqcnt[0]), (7, 0));
        assert!(
            o.iter().all(|x| x.grant == [false, true]),
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
            let o = run(&p, &[CtlIn::new(&p)]);
            let k = p.kernels();
            assert_eq!(o[0].unl, vec![true; k]);
            assert_eq!(o[0].mil, vec![127; k]);
            assert_eq!(o[0].mem_ok, vec![true; k]);
        }
    }
}

/// The Verilog is hierarchical: the top, one `milg` module instantiated per kernel, and the
/// arbiter's module under BMI.
#[test]
fn verilog_is_hierarchical() {
    for (preset, sets) in [
        ("paper", vec![]),
        ("baseline", vec![("N", "1")]),
        ("small_smil", vec![("N", "3")]),
        ("rbmi", vec![("N", "3")]),
        ("qbmi_dmil", vec![]),
        ("small_qbmi", vec![("N", "1")]),
    ] {
        let p = params(preset, &sets);
        let v = Design::new(&p).verilog();
        let modules = if preset.contains("bmi") { 3 } else { 2 };
        assert_eq!(v.matches("\nmodule ").count(), modules, "{preset}");
        for k in 0..p.kernels() {
            assert!(v.contains(&format!("milg_{k}")), "{preset}: instance {k}");
        }
    }
}
