//! Scheduler-mode SM model (docs/elastic-pipeline.md §5, §9 G17–G22, G28): behavioral checks,
//! each workload also run with the `sm_core` RTL in the loop (rusthdl, and Verilator when
//! available) and with the port-level model in its place, which must reproduce every record.
//! The port-level model ([`PortModel`], spec §6) drives the lock-step loop in the RTL's place,
//! returns to the RTL's reset state mid-run, and equals the RTL on arbitrary (off-protocol)
//! inputs. Random co-simulation of the block on its protocol stimulus is the conformance
//! suite's.

use smrtl_cosim::blocks::sm_core::PortModel;
use smrtl_cosim::sm::elastic_sm::{
    run, Instr, Outcome, Sched, SmCore, SmParams, SmRecord, SmRun, Workload,
};
use smrtl_cosim::{BlockModel, Rtl};
use smrtl_hdl::blocks::elastic_pipeline::{Kind, PipeMode};
use smrtl_hdl::blocks::history_cache::BcawsPolicy;
use smrtl_testbench::blocks::sm_core::{cosim, parse_workload};

fn go(params: &SmParams, warps: &[Vec<Instr>]) -> SmRun {
    let r = run(&Workload {
        params: params.clone(),
        warps: warps.to_vec(),
    })
    .expect("valid workload");
    check_accounting(&r);
    let kernels = [warps.to_vec()];
    let port_model = PortModel::new(params, &smrtl_testbench::blocks::sm_core::layout(params));
    let mut duts: Vec<Box<dyn Rtl>> = vec![
        smrtl_testbench::blocks::sm_core::rusthdl(params),
        Box::new(port_model),
    ];
    if smrtl_testbench::external("verilator") {
        duts.push(smrtl_testbench::blocks::sm_core::verilator(params).expect("verilator build"));
    }
    for mut dut in duts {
        let rtl = cosim(params, &kernels, dut.as_mut(), None)
            .unwrap_or_else(|d| panic!("{} in the loop: {d}", dut.name()));
        assert_eq!(rtl[0].records, r.records);
        assert_eq!(rtl[0].stats, r.stats);
    }
    r
}

fn check_accounting(r: &SmRun) {
    let o = &r.stats.outcomes;
    assert_eq!(
        o.issue + o.bank_conflict + o.other + o.sched_fail + o.idle,
        r.stats.cycles
    );
    assert_eq!(r.records.len() as u64, r.stats.cycles);
    for (t, rec) in r.records.iter().enumerate() {
        assert_eq!(rec.pipe.t, t as u64);
    }
}

/// (t, warp, instruction) of every decision.
fn decisions<'a>(r: &SmRun, warps: &'a [Vec<Instr>]) -> Vec<(u64, u32, &'a Instr)> {
    let mut next = vec![0usize; warps.len()];
    r.records
        .iter()
        .filter_map(|rec| {
            let w = rec.decision?;
            let i = &warps[w as usize][next[w as usize]];
            next[w as usize] += 1;
            Some((rec.pipe.t, w, i))
        })
        .collect()
}

fn stalls(recs: &[SmRecord]) -> usize {
    recs.iter()
        .filter(|r| matches!(r.outcome, Outcome::BankConflict | Outcome::Other))
        .count()
}

fn alus(pc0: u32, n: u32) -> Vec<Instr> {
    (0..n).map(|k| Instr::alu(pc0 + k)).collect()
}

fn s4() -> SmParams {
    SmParams {
        pipe: smrtl_hdl::blocks::elastic_pipeline::Params {
            mem_stages: 4,
            premem_depth: 3,
            nonmem_depth: 4,
            fe_depth: 1,
            subwarps: 4,
            ..Default::default()
        },
        warps: 8,
        hc_sets: 16,
        gmem_return: smrtl_cosim::sm::elastic_sm::GmemReturn::AtWriteback,
        ..SmParams::default()
    }
}

#[test]
fn g17_conflict_free_bcaws_equals_rr() {
    let p = SmParams::micro();
    let warps = vec![
        vec![
            Instr::alu(0),
            Instr::smem(1, &[1, 1]),
            Instr::alu(2),
            Instr::smem(1, &[1, 1]),
        ],
        vec![
            Instr::of(Kind::Gld, 10),
            Instr::alu(11),
            Instr::smem(12, &[1, 1]),
        ],
        vec![
            Instr::smem(20, &[1, 1]),
            Instr::of(Kind::Gst, 21),
            Instr::alu(22),
        ],
        alus(30, 5),
    ];
    let b = go(&p, &warps);
    let r = go(
        &SmParams {
            sched: Sched::Rr,
            ..p.clone()
        },
        &warps,
    );
    assert_eq!(b.records, r.records);
    assert!(b.records.iter().all(|x| x.pred == 0 && !x.mask));
    assert!(b.records.iter().any(|x| x.hc_write.is_some()));
    assert_eq!(b.stats.issued_warp_instructions, 15);
    // Every warp is eligible again within W·S cycles here, so Unified+RR issues in the same
    // order.
    let u = go(
        &SmParams {
            sched: Sched::Rr,
            ..p
        }
        .with_pipe_mode(PipeMode::Unified),
        &warps,
    );
    let order = |r: &SmRun| {
        r.records
            .iter()
            .filter_map(|x| x.decision)
            .collect::<Vec<_>>()
    };
    assert_eq!(order(&u), order(&b));
}

#[test]
fn g18_kernel_start_clears() {
    let p = SmParams::micro();
    let warps = vec![vec![Instr::smem(3, &[4, 2]), Instr::alu(4)], alus(8, 3)];
    let mut core = SmCore::new(&p).unwrap();
    let r1 = core.run_kernel(&warps).unwrap();
    check_accounting(&r1);
    assert_eq!(core.cache().lookup(3), Some(4));
    core.kernel_start(&[]);
    assert_eq!(core.cache().valid_lines(), 0);
    assert_eq!(core.counter().counter(), 0);
    assert_eq!(core.accumulator().acc(), 0);
    // A second kernel misses again on its first SMEM decision.
    let r2 = core.run_kernel(&warps).unwrap();
    assert_eq!(r1.records, r2.records);
    assert_eq!((r2.stats.hc_hits, r2.stats.hc_misses), (0, 1));
}

#[test]
fn g19_first_execution_misses_then_writes() {
    let p = SmParams::micro();
    let warps = vec![
        vec![Instr::smem(7, &[3, 2])],
        alus(20, 4),
        vec![Instr::of(Kind::Gld, 30)],
    ];
    let r = go(&p, &warps);
    let d = decisions(&r, &warps);
    let (t_w, _, _) = d.iter().find(|(_, w, _)| *w == 0).unwrap();
    assert_eq!(r.records[*t_w as usize].pred, 0);
    assert!(r.records.iter().all(|x| !x.mask && x.counter == 0));
    let writes: Vec<_> = r.records.iter().filter(|x| x.hc_write.is_some()).collect();
    assert_eq!(writes.len(), 1);
    let w = writes[0];
    let hc = w.hc_write.unwrap();
    assert_eq!((hc.pc, hc.value), (7, (3 - 1) + (2 - 1)));
    // The write comes at the edge where sw S−1 leaves MEM0 (its last service cycle).
    let tag = r
        .records
        .iter()
        .find_map(|x| x.pipe.mem0.filter(|_| x.pipe.t == w.pipe.t));
    let tags = smrtl_cosim::sm::elastic_sm::SmCore::new(&p).unwrap().tags();
    assert_eq!(tags.unpack(tag.unwrap()), (0, 0, 1));
    assert_eq!(w.pipe.rem, 1);
    let next = &r.records[w.pipe.t as usize + 1];
    assert_ne!(next.pipe.mem0, tag);
    assert_eq!(r.stats.hc_misses, 1);
}

/// Warp 0 runs SMEM p twice (E = stored value), the others mix ALU and memory work.
fn g20_program(first: &[u32], second: &[u32]) -> Vec<Vec<Instr>> {
    let mut w0 = vec![Instr::smem(100, first)];
    w0.extend(alus(101, 3));
    w0.push(Instr::smem(100, second));
    w0.extend(alus(105, 3));
    let mut warps = vec![w0];
    for k in 1..6u32 {
        let mut prog = Vec::new();
        for j in 0..8u32 {
            let pc = 200 + 16 * k + j;
            prog.push(match (k + j) % 3 {
                0 => Instr::of(Kind::Gld, pc),
                1 => Instr::alu(pc),
                _ => Instr::alu(pc),
            });
        }
        warps.push(prog);
    }
    warps
}

#[test]
fn g20_mask_window_after_second_decision() {
    let p = s4();
    let warps = g20_program(&[2, 2, 1, 1], &[2, 2, 1, 1]);
    let r = go(&p, &warps);
    let d = decisions(&r, &warps);
    let (t_w, _, _) = *d
        .iter()
        .filter(|(_, w, i)| *w == 0 && i.pc == 100)
        .nth(1)
        .unwrap();
    let e = r.records[t_w as usize].pred;
    assert_eq!(e, 2);
    let s = p.pipe.subwarps as u64;
    let end = t_w + s + e as u64;
    assert_eq!(stalls(&r.records[t_w as usize..end as usize + 1]), 0);
    for x in &r.records[t_w as usize + 1..end as usize] {
        assert!(x.mask, "t = {} should be masked", x.pipe.t);
    }
    assert!(!r.records[end as usize].mask);
    let mut masked_alu = 0;
    for &(t, _, i) in &d {
        if t > t_w && t < end {
            assert!(!i.op.is_mem(), "memory warp decided at {t} < {end}");
            masked_alu += 1;
        }
    }
    assert!(masked_alu > 0, "an ALU warp issues under the mask");
    // Decisions come at warp boundaries: the first one from t_W + S + E on sees no mask.
    let (t_next, _, _) = *d.iter().find(|(t, _, _)| *t >= end).unwrap();
    assert!(r.records[end as usize..=t_next as usize]
        .iter()
        .all(|x| !x.mask));
}

fn g21_program() -> Vec<Vec<Instr>> {
    let mut warps = vec![vec![Instr::smem(5, &[3, 3]), Instr::smem(5, &[3, 3])]];
    for w in 1..4 {
        warps.push((0..4).map(|k| Instr::of(Kind::Gld, 8 * w + k)).collect());
    }
    warps
}

#[test]
fn g21_strict_vs_issue_if_no_nonmem() {
    let warps = g21_program();
    let p = SmParams::micro();
    let strict = go(&p, &warps);
    let d = decisions(&strict, &warps);
    let (t_w, _, _) = *d.iter().filter(|(_, w, _)| *w == 0).nth(1).unwrap();
    assert_eq!(strict.records[t_w as usize].pred, 4);
    let masked: Vec<_> = strict.records.iter().filter(|x| x.mask).collect();
    assert!(!masked.is_empty());
    assert!(masked.iter().all(|x| x.decision.is_none()));
    assert!(masked.iter().any(|x| x.outcome == Outcome::SchedFail));

    let loose = go(
        &SmParams {
            bcaws_policy: BcawsPolicy::IssueIfNoNonMem,
            ..p
        },
        &warps,
    );
    let issued_masked = loose
        .records
        .iter()
        .filter(|x| x.mask)
        .filter_map(|x| x.decision)
        .collect::<Vec<_>>();
    assert!(
        issued_masked.contains(&1),
        "a memory warp issues under the mask"
    );
    assert!(loose.stats.outcomes.sched_fail < strict.stats.outcomes.sched_fail);
}

#[test]
fn g22_under_prediction_stalls() {
    // PC 9 stores 0 on its first run, then conflicts (8, 8): pred 0, no mask, and a memory warp
    // right behind it stalls on the bank conflict.
    let p = SmParams::micro();
    let mut warps = vec![vec![Instr::smem(9, &[1, 1]), Instr::smem(9, &[8, 8])]];
    for w in 1..4 {
        warps.push((0..4).map(|k| Instr::smem(16 * w + k, &[1, 1])).collect());
    }
    let r = go(&p, &warps);
    let d = decisions(&r, &warps);
    let (t_w, _, _) = *d.iter().filter(|(_, w, _)| *w == 0).nth(1).unwrap();
    assert_eq!(r.records[t_w as usize].pred, 0);
    assert!(r.records.iter().all(|x| !x.mask));
    let after = &r.records[t_w as usize..];
    assert!(after.iter().any(|x| x.outcome == Outcome::BankConflict));
}

#[test]
fn g22_over_prediction_masks_without_stalls() {
    let p = s4();
    let warps = g20_program(&[8, 8, 8, 8], &[1, 1, 1, 1]);
    let r = go(&p, &warps);
    let d = decisions(&r, &warps);
    let (t_w, _, _) = *d
        .iter()
        .filter(|(_, w, i)| *w == 0 && i.pc == 100)
        .nth(1)
        .unwrap();
    assert_eq!(r.records[t_w as usize].pred, 28);
    assert_eq!(stalls(&r.records[t_w as usize..]), 0);
    let end = t_w + 32;
    for x in &r.records[t_w as usize + 1..end as usize] {
        assert!(x.mask, "t = {}", x.pipe.t);
    }
    assert!(d
        .iter()
        .all(|&(t, _, i)| !(t > t_w && t < end && i.op.is_mem())));
    assert!(!r.records[end as usize].mask);
    // The cache now holds the actual (conflict-free) value.
    let last = r.records.iter().rev().find_map(|x| x.hc_write).unwrap();
    assert_eq!((last.pc, last.value), (100, 0));
}

#[test]
fn rr_order_all_alu() {
    let p = SmParams::micro();
    let warps: Vec<_> = (0..4).map(|w| alus(10 * w, 3)).collect();
    let r = go(&p, &warps);
    let order: Vec<u32> = r.records.iter().filter_map(|x| x.decision).collect();
    assert_eq!(order, [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
    assert_eq!(r.stats.outcomes.issue, 24);
    assert_eq!(r.stats.outcomes.sched_fail, 0);
    assert_eq!(stalls(&r.records), 0);
    // Issue every cycle from t = 0 to 23.
    assert!(r.records[..24].iter().all(|x| x.outcome == Outcome::Issue));
    assert_eq!(r.stats.ipc, 24.0 / r.stats.cycles as f64);
    // One warp with three instructions: it must wait for its previous one (D3).
    let one = go(&p, &[alus(0, 3)]);
    assert!(one.stats.outcomes.sched_fail > 0);
    assert_eq!(
        one.stats.outcomes.idle,
        one.stats.cycles - 6 - one.stats.outcomes.sched_fail
    );
}

#[test]
fn elastic_fewer_stalls_than_unified() {
    let warps: Vec<_> = (0..4u32)
        .map(|w| {
            (0..6u32)
                .map(|j| match (w + j) % 4 {
                    0 => Instr::smem(16 * w + j, &[4, 3]),
                    _ => Instr::alu(16 * w + j),
                })
                .collect()
        })
        .collect();
    for sched in [Sched::Rr, Sched::Bcaws] {
        let base = SmParams {
            sched,
            ..SmParams::micro()
        }
        .with_pipe_mode(PipeMode::Unified);
        let u = go(&base, &warps);
        let e = go(&base.clone().with_pipe_mode(PipeMode::Elastic), &warps);
        let (su, se) = (stalls(&u.records), stalls(&e.records));
        assert!(se < su, "{sched:?}: elastic {se} vs unified {su}");
        assert!(e.stats.cycles <= u.stats.cycles);
    }
}

#[test]
fn icnt_return_gates_gld_warp() {
    let p = SmParams {
        gmem_return: smrtl_cosim::sm::elastic_sm::GmemReturn::Icnt(20),
        ..SmParams::micro()
    };
    let warps = vec![vec![Instr::of(Kind::Gld, 0), Instr::alu(1)]];
    let r = go(&p, &warps);
    let icnt = r
        .records
        .iter()
        .filter(|x| x.pipe.wb == smrtl_cosim::blocks::elastic_pipeline::Wb::Icnt)
        .count();
    assert_eq!(icnt, 2);
    let d: Vec<u64> = decisions(&r, &warps).iter().map(|x| x.0).collect();
    assert!(d[1] > 20, "{d:?}");
}

#[test]
fn json_workload_and_errors() {
    let ok = r#"{"params": {"pipe_mode": "elastic", "M": 2, "N": 1, "Q": 2, "fe_depth": 1,
        "S": 2, "W": 4, "hc_sets": 16, "sched": "bcaws", "gmem_return": {"icnt": 30}},
        "warps": [[{"op": "alu", "pc": 0}, {"op": "smem", "pc": 1, "degrees": [2, 1]}],
                  [{"op": "smem", "pc": 2}, {"op": "smem", "pc": 3,
                    "addrs": [[0, 8, 16, 24, 1, 2, 3, 4], [0, 1, 2, 3, 4, 5, 6, 7]]}]]}"#;
    let w = parse_workload(ok).unwrap();
    assert_eq!(w.warps[1][0].degrees, Some(vec![1, 1]));
    let r = run(&w).unwrap();
    check_accounting(&r);
    let writes: Vec<_> = r.records.iter().filter_map(|x| x.hc_write).collect();
    assert!(
        writes.iter().any(|h| h.pc == 3 && h.value == 3),
        "{writes:?}"
    );
    let json = serde_json::to_string(&r.records[0]).unwrap();
    assert!(
        json.contains("\"outcome\":") && json.contains("\"decision\":"),
        "{json}"
    );

    let bad = |warps: &str| {
        parse_workload(&format!(
            r#"{{"params": {{"S": 2, "L": 8}}, "warps": {warps}}}"#
        ))
        .unwrap_err()
    };
    let e = parse_workload(r#"{"params": {"W": 2}, "warps": [[], [], []]}"#).unwrap_err();
    assert_eq!(e, "warps: 3 warps exceed W = 2");
    let e = bad(
        r#"[[], [], [{"op":"alu","pc":0},{"op":"alu","pc":1},{"op":"alu","pc":2},{"op":"alu","pc":3},{"op":"alu","pc":4},{"op":"x","pc":5}]]"#,
    );
    assert_eq!(
        e,
        r#"warps[2][5].op: unknown op "x"; allowed: "alu", "gld", "gst", "smem""#
    );
    assert_eq!(
        bad(r#"[[{"op":"smem","pc":1,"degrees":[1,9]}]]"#),
        "warps[0][0].degrees[1]: 9 out of range; allowed: 1..=8 (L)"
    );
    assert_eq!(
        bad(r#"[[{"op":"alu","pc":16384}]]"#),
        "warps[0][0].pc: 16384 out of range; allowed: 0..16384 (PCW = 14)"
    );
    assert_eq!(
        bad(r#"[[{"op":"alu","pc":1,"degrees":[1,1]}]]"#),
        "warps[0][0].degrees: only smem instructions take this field"
    );
    let e = parse_workload(r#"{"params": {"sched": "fifo"}, "warps": []}"#).unwrap_err();
    assert!(
        e.starts_with("params: bad value `fifo` for parameter sched; allowed: rr, bcaws"),
        "{e}"
    );
    let e = parse_workload(r#"{"params": {"W": 65}, "warps": []}"#).unwrap_err();
    assert!(
        e.starts_with("params: parameter W = 65 is out of range; allowed: 1..=64"),
        "{e}"
    );
}

/// G28 (Eq. 7): Elastic, M = 4, N = 3, RR. An SMEM warp of degrees (8, 8, 8, 8) (Σ⌈dᵢ/P⌉ =
/// 32 service cycles), ALU warps, then a memory warp decided Δ = 4·k cycles later: no stall
/// once Δ ≥ 32; a memory warp directly behind the conflicting one stalls.
#[test]
fn g28_safe_distance() {
    let p = SmParams {
        warps: 10,
        sched: Sched::Rr,
        ..s4()
    };
    let program = |gap: usize| -> Vec<Vec<Instr>> {
        let mut w = vec![vec![Instr::smem(1, &[8, 8, 8, 8])]];
        w.extend((0..gap).map(|k| vec![Instr::alu(10 + k as u32)]));
        w.push(vec![Instr::smem(2, &[1, 1, 1, 1])]);
        w
    };
    let run = |gap| {
        let prog = program(gap);
        let r = go(&p, &prog);
        let d = decisions(&r, &prog);
        let delta = d.last().unwrap().0 - d[0].0;
        (delta, stalls(&r.records))
    };
    let (delta, s) = run(7);
    assert_eq!(delta, 32);
    assert_eq!(s, 0, "Δ = {delta} ≥ Σd = 32: no stall");
    let (delta, s) = run(0);
    assert_eq!(delta, 4);
    assert!(
        s > 0,
        "Δ = 4 directly behind the conflicting warp must stall"
    );
    // Between the two: the stalls fall as Δ grows and vanish at Σd.
    let counts: Vec<usize> = (0..=7).map(|g| run(g).1).collect();
    assert!(counts.windows(2).all(|w| w[1] <= w[0]), "{counts:?}");
}

// ---------------------------------------------------------------------------------------------
// The port-level model (spec §6): driven by the `sm_core` input ports, like the RTL
// ---------------------------------------------------------------------------------------------

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, TestCaseError, TestRng, TestRunner};
use smrtl_hdl::blocks::sm_core::port;
use smrtl_testbench::blocks::sm_core::{
    kernels, layout, random_configs, rusthdl, sm_cases, stimulus, SmCase,
};
use smrtl_testbench::check;
use std::cell::Cell;

/// A deterministic runner of `n` proptest cases (failures shrink).
fn runner(n: u32) -> TestRunner {
    let config = Config {
        cases: n,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::deterministic_rng(config.rng_algorithm);
    TestRunner::new_with_rng(config, rng)
}

/// The port model in the RTL's place: the testbench (`Env`) drives it through [`Rtl`] (eval,
/// the same-cycle descriptor answer, eval again, edge) and every output agrees with the
/// program-driven model's record.
#[test]
fn port_model_in_the_cosim_loop() {
    runner(400)
        .run(&sm_cases(random_configs()), |case: SmCase| {
            let p = &case.params;
            let mut dut = PortModel::new(p, &layout(p));
            let runs = cosim(p, &case.kernels, &mut dut, None)
                .map_err(|d| TestCaseError::fail(d.to_string()))?;
            for (run, program) in runs.iter().zip(&case.kernels) {
                let alone = smrtl_cosim::sm::elastic_sm::run(&Workload {
                    params: p.clone(),
                    warps: program.clone(),
                })
                .unwrap();
                assert_eq!(run.records, alone.records);
            }
            Ok(())
        })
        .unwrap();
}

/// `reset` mid-run returns the port model to the RTL's reset state: a workload's inputs up to
/// a cycle, that cycle again with `reset` high, then the whole workload from its first cycle.
#[test]
fn port_model_reset_matches_the_rtl() {
    let p = random_configs()[1].clone();
    let mut rng = runner(1);
    for _ in 0..8 {
        let k = kernels(&p).new_tree(&mut rng).unwrap().current();
        let base = stimulus(&p, &k);
        let cut = base.len() / 2;
        let mut hit = base[cut].clone();
        hit.reset = true;
        let case: Vec<_> = base[..cut]
            .iter()
            .chain(std::iter::once(&hit))
            .chain(&base)
            .cloned()
            .collect();
        check::directed(&p, &case);
    }
}

/// Random inputs of one cycle: every port uniformly random within its width, except `reset`
/// and `kernel_start` (each high one cycle in 64) and `desc_deg` (0..=L, the degrees the
/// RTL's pipeline takes; beyond L its MEM0 differs from the pipeline model's).
fn any_inputs(p: &SmParams) -> impl Strategy<Value = Vec<u64>> {
    use proptest::prelude::*;
    let lay = layout(p);
    let lanes = u64::from(p.pipe.lanes);
    (
        proptest::collection::vec(any::<u64>(), lay.in_words),
        0..64u32,
        0..64u32,
    )
        .prop_map(move |(mut buf, reset, start)| {
            for s in &lay.inputs {
                if s.width % 64 != 0 {
                    buf[s.offset + s.words() - 1] &= (1 << (s.width % 64)) - 1;
                }
            }
            let deg = lay.in_slot(port::DESC_DEG);
            let d = deg.get(&buf) % (lanes + 1);
            deg.set(&mut buf, d);
            lay.in_slot(port::RESET).set(&mut buf, (reset == 0) as u64);
            lay.in_slot(port::KERNEL_START)
                .set(&mut buf, (start == 0) as u64);
            buf
        })
}

/// Beyond the protocol: on arbitrary inputs (random descriptors, ICNT returns of warps with
/// nothing in flight, `kernel_start` with the pipeline busy, `reset` at any cycle) the port
/// model still equals the RTL in every output of every cycle, on every random configuration.
#[test]
fn port_model_matches_the_rtl_on_arbitrary_inputs() {
    for p in random_configs() {
        let lay = layout(&p);
        let stimulus = proptest::collection::vec(any_inputs(&p), 1..300);
        runner(32)
            .run(&stimulus, |case: Vec<Vec<u64>>| {
                let out = smrtl_cosim::harness::run(
                    &lay,
                    &mut PortModel::new(&p, &lay),
                    rusthdl(&p).as_mut(),
                    case.iter().map(|v| v.as_slice()),
                    None,
                );
                match out.mismatch {
                    None => Ok(()),
                    Some(m) => Err(TestCaseError::fail(m.to_string())),
                }
            })
            .unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// Records only when asked (the statistics path builds none and allocates nothing per cycle)
// ---------------------------------------------------------------------------------------------

/// Counts the heap allocations of the calling thread (tests run on several threads).
struct CountingAlloc;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

fn count_allocation() {
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl std::alloc::GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        count_allocation();
        std::alloc::System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        std::alloc::System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        count_allocation();
        std::alloc::System.realloc(ptr, layout, size)
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Runs a kernel cycle by cycle with [`SmCore::step`]; the allocations made by the cycles.
fn step_allocations(p: &SmParams, warps: &[Vec<Instr>]) -> (u64, u64) {
    let mut core = SmCore::new(p).unwrap();
    core.kernel_start(warps);
    let before = allocations();
    std::hint::black_box(Vec::<u64>::with_capacity(4));
    assert_eq!(allocations(), before + 1, "the allocation counter counts");
    let (before, mut cycles) = (allocations(), 0);
    while !core.done() {
        core.step();
        cycles += 1;
    }
    (allocations() - before, cycles)
}

/// The statistics path allocates nothing per cycle: a full-size Table 4 core on a profile
/// (ICNT returns, irregular degrees) and random workloads (address-driven SMEM, every
/// configuration).
#[test]
fn stepping_does_not_allocate() {
    use smrtl_testbench::studies::profiles::{profile, LANES, SUBWARPS};
    let v = profile("aes_encrypt")
        .unwrap()
        .workload(1, 1, LANES, SUBWARPS);
    let w = smrtl_testbench::blocks::sm_core::workload_from_value(&v).unwrap();
    let (n, cycles) = step_allocations(&w.params, &w.warps);
    assert_eq!(n, 0, "{n} allocations in {cycles} cycles");
    let mut rng = runner(1);
    let strategy = sm_cases(random_configs());
    for _ in 0..100 {
        let case = strategy.new_tree(&mut rng).unwrap().current();
        for k in &case.kernels {
            let (n, cycles) = step_allocations(&case.params, k);
            assert_eq!(n, 0, "{n} allocations in {cycles} cycles: {case:?}");
        }
    }
}

/// [`SmCore::run_stats`] and [`SmCore::run_kernel_with`] (no records) give the statistics of
/// the records, and every cycle's events agree with its record.
#[test]
fn stats_without_records_equal_records() {
    runner(300)
        .run(&sm_cases(random_configs()), |case: SmCase| {
            let mut core = SmCore::new(&case.params).unwrap();
            for k in &case.kernels {
                let r = core.run_kernel(k).unwrap();
                assert_eq!(core.run_stats(k).unwrap(), r.stats);
                let mut events = vec![];
                let stats = core.run_kernel_with(k, |ev| events.push(*ev)).unwrap();
                assert_eq!(stats, r.stats);
                assert_eq!(events.len(), r.records.len());
                for (ev, rec) in events.iter().zip(&r.records) {
                    let view = (ev.t, ev.wb, ev.exe, ev.fe_hold, ev.cause);
                    let p = &rec.pipe;
                    assert_eq!(view, (p.t, p.wb, p.exe, p.fe_hold, p.cause));
                    assert_eq!(SmRecord::new(p.clone(), ev), *rec);
                }
            }
            Ok(())
        })
        .unwrap();
}

/// Speed of the scheduler-mode SM model on Table 4 profile workloads, in cycles per second
/// (no assertion; `cargo test --release -p smrtl-testbench --test sm_core_model sm_model_speed
/// -- --ignored --nocapture`): with records ([`run`]) and statistics only ([`SmCore::run_stats`]).
#[test]
#[ignore]
fn sm_model_speed() {
    use smrtl_testbench::blocks::sm_core::workload_from_value;
    use smrtl_testbench::studies::profiles::{profile, LANES, SUBWARPS};
    for (name, waves) in [("aes_encrypt", 8), ("transpose", 16), ("dct", 4)] {
        let v = profile(name).unwrap().workload(1, waves, LANES, SUBWARPS);
        let w = workload_from_value(&v).unwrap();
        let t0 = std::time::Instant::now();
        let r = run(&w).unwrap();
        let records = t0.elapsed().as_secs_f64();
        let t0 = std::time::Instant::now();
        let s = smrtl_cosim::sm::elastic_sm::run_stats(&w).unwrap();
        let stats = t0.elapsed().as_secs_f64();
        assert_eq!(s, r.stats);
        let c = r.stats.cycles as f64;
        println!(
            "{name} ×{waves}: {c} cycles; records {:.0} cycles/s, stats only {:.0} cycles/s",
            c / records,
            c / stats
        );
    }
}
