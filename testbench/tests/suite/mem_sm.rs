//! The memory-issue control at SM level (docs/memory-issue-control.md §1.3 phases 6–7, §2,
//! §3.5, §4.5, §5): the pipeline model drives `crate::mem_issue_ctl::MemIssueCtl` under every
//! scheme, and the `mem_issue_ctl` RTL runs in the loop on rust-hdl and Verilator, compared
//! every cycle (`grant` / `mem_ok` before the edge, every register after it). The §3.5 / §4.5
//! expectations are checked from each cycle's events and the spec's rules, not from the RTL.

use smrtl_cosim::harness::Trace as WaveRows;
use smrtl_cosim::sm::mem_sm::workload::{self, Workload};
use smrtl_cosim::sm::mem_sm::{CycleRecord, MemPipeline, PipeStats};
use smrtl_testbench::external;
use smrtl_testbench::studies::mem_sm::{self, MemLoopError};
use std::time::Instant;

const SCHEMES: [&str; 6] = ["baseline", "rbmi", "qbmi", "smil", "dmil", "qbmi_dmil"];

/// The §5 full-model workloads (a compute-heavy kernel with memory-heavy ones, two
/// memory-heavy ones): kernels, TBs (or SMK-P filling) and sched.
const PAIRS: [(&str, &str); 4] = [
    ("bp+sv", r#""kernels": ["bp", "sv"], "tbs": [9, 4]"#),
    ("bp+ks", r#""kernels": ["bp", "ks"]"#),
    ("sv+ks", r#""kernels": ["sv", "ks"]"#),
    (
        "cp+ks+ax",
        r#""kernels": ["cp", "ks", "ax"], "params": {"sched": "lrr"}"#,
    ),
];

/// Workload `body` for `cycles` under `scheme` (SMIL limits (3, 1, 2), one per kernel).
fn wl(body: &str, cycles: u64, scheme: &str) -> Workload {
    let text = format!(r#"{{{body}, "cycles": {cycles}, "seed": 1}}"#);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let n = v["kernels"].as_array().map_or(1, Vec::len);
    let limits = serde_json::to_string(&[3, 1, 2][..n]).unwrap();
    let sets = [
        ("scheme".to_string(), scheme.to_string()),
        ("smil_limit".to_string(), limits),
    ];
    workload::parse(&text, &sets).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `w` on the model, calling `f` with the pipeline after each cycle.
fn run_model(w: &Workload, mut f: impl FnMut(&MemPipeline)) -> PipeStats {
    let mut m = MemPipeline::new(w).unwrap();
    for _ in 0..w.cycles {
        m.step();
        f(&m);
    }
    m.stats()
}

/// Runs `w` with the RTL (rust-hdl) in the loop; `f` sees every cycle's record.
fn run_rusthdl(w: &Workload, f: &mut dyn FnMut(&CycleRecord)) -> PipeStats {
    let mut dut = mem_sm::rusthdl(&mem_sm::ctl_params(w));
    mem_sm::cosim_mem(w, &mut *dut, None, Some(f)).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `w` with the Verilated RTL in the loop (when Verilator is installed: `None` if not).
fn run_verilator(w: &Workload, f: &mut dyn FnMut(&CycleRecord)) -> Option<PipeStats> {
    if !external("verilator") {
        return None;
    }
    let mut dut = mem_sm::verilator(&mem_sm::ctl_params(w)).unwrap();
    Some(mem_sm::cosim_mem(w, &mut *dut, None, Some(f)).unwrap_or_else(|e| panic!("{e}")))
}

/// §4.5 / SMIL at SM level: limits (3, 1) keep kernel 1 at most one memory instruction in
/// flight and kernel 0 at most three, counted from the issue and completion events; both
/// limits are reached, and the gate closes exactly at the limit.
fn smil_check(n: usize) -> impl FnMut(&CycleRecord) -> [u32; 3] {
    let limits = [3u32, 1, 2];
    let mut flight = [0u32; 3];
    let mut most = [0u32; 3];
    move |r: &CycleRecord| {
        for k in 0..n {
            // mem_ok is the gate at the start of the cycle: closed exactly at the limit.
            assert_eq!(
                r.mem_ok >> k & 1 == 1,
                flight[k] < limits[k],
                "cycle {} kernel {k}: mem_ok with {} in flight",
                r.t,
                flight[k]
            );
            flight[k] = flight[k] + u32::from(r.issue >> k & 1) - u32::from(r.done[k]);
            assert!(
                flight[k] <= limits[k],
                "cycle {} kernel {k}: {}",
                r.t,
                flight[k]
            );
            assert_eq!(flight[k], r.inflight[k], "cycle {} kernel {k}", r.t);
            most[k] = most[k].max(flight[k]);
        }
        most
    }
}

#[test]
fn smil_limits_3_1_bound_what_is_in_flight() {
    let w = wl(PAIRS[0].1, 100_000, "smil");
    let mut check = smil_check(2);
    let mut most = [0; 3];
    run_model(&w, |m| most = check(&m.record()));
    assert_eq!(most[..2], [3, 1]);
    // The same with the RTL in the loop.
    let w = wl(PAIRS[0].1, 20_000, "smil");
    let mut check = smil_check(2);
    run_rusthdl(&w, &mut |r| most = check(r));
    assert_eq!(most[..2], [3, 1]);
    let w = wl(PAIRS[0].1, 5_000, "smil");
    let mut check = smil_check(2);
    if run_verilator(&w, &mut |r| most = check(r)).is_some() {
        assert_eq!(most[..2], [3, 1]);
    }
    // Three kernels, limits (3, 1, 2).
    let w = wl(PAIRS[3].1, 50_000, "smil");
    let mut check = smil_check(3);
    run_model(&w, |m| most = check(&m.record()));
    assert_eq!(most, [3, 1, 2]);
}

/// A run that hands each cycle's record to its argument.
type Records<'a> = dyn FnMut(&mut dyn FnMut(&CycleRecord)) + 'a;

/// §3.5 RBMI: the issue stage follows the one-hot grant, and whenever both kernels are
/// eligible the grant alternates (the kernel not granted last wins).
#[test]
fn rbmi_alternates_between_eligible_kernels() {
    let check = |records: &mut Records| {
        let mut last: Option<u8> = None;
        let (mut both, mut grants) = (0u64, 0u64);
        records(&mut |r| {
            let elig = if r.slot_free { r.mem_req & r.mem_ok } else { 0 };
            assert!(r.grant.count_ones() <= 1, "cycle {}", r.t);
            assert_eq!(r.grant & !elig, 0, "cycle {}", r.t);
            assert_eq!(r.issue, r.grant, "cycle {}: issue follows grant", r.t);
            assert_eq!(elig != 0, r.grant != 0, "cycle {}: work conserving", r.t);
            if elig == 0b11 {
                both += 1;
                if let Some(l) = last {
                    assert_ne!(r.grant, l, "cycle {}: granted twice in a row", r.t);
                }
            }
            if r.grant != 0 {
                grants += 1;
                last = Some(r.grant);
            }
        });
        assert!(
            both > 10 && grants > 100,
            "{both} contested, {grants} grants"
        );
    };
    let w = wl(PAIRS[0].1, 100_000, "rbmi");
    check(&mut |f| {
        run_model(&w, |m| f(&m.record()));
    });
    let w = wl(PAIRS[0].1, 20_000, "rbmi");
    check(&mut |f| {
        run_rusthdl(&w, f);
    });
    if external("verilator") {
        let w = wl(PAIRS[0].1, 5_000, "rbmi");
        check(&mut |f| {
            run_verilator(&w, f);
        });
    }
}

/// §3.5 QBMI at SM level: the grant is the largest quota among the eligible kernels (ties to
/// the lowest), only the granted quota drops by one, and when it reaches 0 every quota adds
/// its base (saturating); without a grant the quotas hold.
#[test]
fn qbmi_quotas_decrement_and_refill() {
    for scheme in ["qbmi", "qbmi_dmil"] {
        let w = wl(PAIRS[0].1, 100_000, scheme);
        let mut m = MemPipeline::new(&w).unwrap();
        let max = (1u64 << w.params.quota_bits) - 1;
        let (mut grants, mut refills) = (0u64, 0u64);
        for _ in 0..w.cycles {
            let q = m.ctl().qbmi().expect("a QBMI scheme").clone();
            m.step();
            let r = m.record();
            let after = m.ctl().qbmi().unwrap();
            let elig = if r.slot_free { r.mem_req & r.mem_ok } else { 0 };
            let best = (0..2)
                .filter(|&k| elig >> k & 1 == 1)
                .fold(None, |b: Option<usize>, k| match b {
                    Some(b) if q.quota[b] >= q.quota[k] => Some(b),
                    _ => Some(k),
                });
            assert_eq!(
                r.grant,
                best.map_or(0, |g| 1 << g),
                "cycle {}: quotas {:?}",
                r.t,
                q.quota
            );
            let mut want = q.quota;
            if let Some(g) = best {
                grants += 1;
                want[g] -= 1;
                if want[..2].contains(&0) {
                    refills += 1;
                    let base = q.base();
                    for k in 0..2 {
                        want[k] = (u64::from(want[k]) + u64::from(base[k])).min(max) as u32;
                    }
                }
            }
            assert_eq!(after.quota[..2], want[..2], "cycle {}", r.t);
        }
        assert!(
            grants > 1000 && refills > 10,
            "{scheme}: {grants} / {refills}"
        );
    }
}

/// §4.5 DMIL at SM level: a limited kernel's `mil` is ≥ 1, `mil` / `unl` change only in a
/// cycle that closes the kernel's interval (its 2^reqcnt_bits-th request: `acc` with
/// `reqcnt` wrapping to 0), the gate is `inflight < mil` when limited, and the limit does
/// change during the run.
fn dmil_check(n: usize, interval: u32) -> impl FnMut(&CycleRecord) -> u64 {
    let mut prev: Option<CycleRecord> = None;
    let mut changes = 0u64;
    move |r: &CycleRecord| {
        for k in 0..n {
            let unl = r.unl >> k & 1 == 1;
            assert!(unl || r.mil[k] >= 1, "cycle {} kernel {k}: mil 0", r.t);
            if let Some(p) = &prev {
                let (punl, pmil) = (p.unl >> k & 1 == 1, p.mil[k]);
                let boundary =
                    r.acc >> k & 1 == 1 && r.reqcnt[k] == 0 && p.reqcnt[k] == interval - 1;
                if (punl, pmil) != (unl, r.mil[k]) {
                    assert!(
                        boundary,
                        "cycle {} kernel {k}: limit changed off a boundary",
                        r.t
                    );
                    changes += 1;
                }
                // The gate of this cycle from the start-of-cycle registers.
                let open = punl || p.inflight[k] < pmil;
                assert_eq!(r.mem_ok >> k & 1 == 1, open, "cycle {} kernel {k}", r.t);
            }
        }
        prev = Some(r.clone());
        changes
    }
}

#[test]
fn dmil_limits_change_only_at_a_boundary() {
    for (name, body) in [PAIRS[0], PAIRS[3]] {
        let w = wl(body, 200_000, "dmil");
        let n = w.kernels.len();
        let interval = 1 << w.params.reqcnt_bits;
        let mut check = dmil_check(n, interval);
        let mut changes = 0;
        let s = run_model(&w, |m| changes = check(&m.record()));
        assert!(changes >= 2, "{name}: {changes} limit changes");
        assert!(
            s.kernels.iter().any(|k| k.milg.mil_min.is_some()),
            "{name}: never limited"
        );
    }
    let w = wl(PAIRS[0].1, 30_000, "dmil");
    let mut check = dmil_check(2, 1 << w.params.reqcnt_bits);
    let mut changes = 0;
    run_rusthdl(&w, &mut |r| changes = check(r));
    assert!(changes >= 1, "{changes}");
    let mut check = dmil_check(2, 1 << w.params.reqcnt_bits);
    let mut changes = 0;
    if run_verilator(&w, &mut |r| changes = check(r)).is_some() {
        assert!(changes >= 1, "{changes}");
    }
}

/// Cycles of each SM-level RTL run on rust-hdl (every scheme and workload; the whole set takes
/// about a minute on a shared 2-core machine). `SMRTL_MEM_SM_CYCLES` changes it.
fn loop_cycles() -> u64 {
    std::env::var("SMRTL_MEM_SM_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000)
}

/// Every scheme on every workload with `mem_issue_ctl` on rust-hdl in the loop: the RTL
/// agrees every cycle, and the model's statistics are the model-alone run's (the RTL never
/// decides).
#[test]
fn every_scheme_with_the_rtl_in_the_loop_on_rusthdl() {
    let mut total = 0.0;
    for (name, body) in PAIRS {
        for scheme in SCHEMES {
            let w = wl(body, loop_cycles(), scheme);
            let start = Instant::now();
            let with_rtl = run_rusthdl(&w, &mut |_| {});
            let secs = start.elapsed().as_secs_f64();
            total += secs;
            let alone = run_model(&w, |_| {});
            assert_eq!(with_rtl, alone, "{name} {scheme}");
            println!(
                "{name} {scheme}: {} cycles with the RTL on rust-hdl in {secs:.2} s, IPC {}",
                w.cycles,
                with_rtl
                    .kernels
                    .iter()
                    .map(|k| format!("{:.3}", k.ipc))
                    .collect::<Vec<_>>()
                    .join(" / ")
            );
        }
    }
    println!("total {total:.1} s");
}

/// A few thousand cycles per scheme with the Verilated RTL in the loop, the waveform kept.
#[test]
fn every_scheme_with_the_rtl_in_the_loop_on_verilator() {
    if !external("verilator") {
        return;
    }
    for (name, body) in [PAIRS[0], PAIRS[3]] {
        for scheme in SCHEMES {
            let w = wl(body, 5_000, scheme);
            let mut dut = mem_sm::verilator(&mem_sm::ctl_params(&w)).unwrap();
            let mut rows = WaveRows::new(1000);
            let s = mem_sm::cosim_mem(&w, &mut *dut, Some(&mut rows), None)
                .unwrap_or_else(|e| panic!("{name} {scheme}: {e}"));
            assert_eq!(s, run_model(&w, |_| {}), "{name} {scheme}");
            assert_eq!(rows.rows.len(), 1000);
            assert!(rows.rows.iter().all(|r| !r.mismatch));
        }
    }
}

/// A planted RTL bug (kernel 1's MILG counts kernel 0's requests) is caught at SM level, on
/// a register after the edge, with a waveform whose last row is the mismatch.
#[test]
fn a_planted_rtl_fault_is_caught_at_sm_level() {
    use smrtl_cosim::harness::backend::rusthdl::RustHdl;
    use smrtl_hdl::blocks::mem_issue_ctl::{build, faults};
    let w = wl(PAIRS[0].1, 20_000, "dmil");
    let p = mem_sm::ctl_params(&w);
    let faulty = smrtl_hdl::faults::plant_module(&faults::SHARED_ACC, || build(&p));
    let faulty = std::sync::Arc::new(faulty);
    let mut backends: Vec<Box<dyn smrtl_cosim::Rtl>> = vec![Box::new(RustHdl::new(faulty.clone()))];
    if external("verilator") {
        backends.push(smrtl_testbench::verilated(&faulty).unwrap());
    }
    for mut dut in backends {
        let mut rows = WaveRows::new(100);
        let e = mem_sm::cosim_mem(&w, &mut *dut, Some(&mut rows), None).unwrap_err();
        let MemLoopError::Diverged { cycle, edge, m } = &e else {
            panic!("{e}")
        };
        assert!(*edge, "{e}");
        assert_eq!(m.port, "reqcnt", "{e}");
        let c = cycle.expect("after a cycle");
        assert!(c < 1000, "{e}");
        let last = rows.rows.back().unwrap();
        assert!(last.mismatch && last.cycle == c + 1, "{e}");
        assert!(e.to_string().contains("port reqcnt expected"), "{e}");
    }
}
