//! The stall breakdown of each SM model (docs/stall-inspector.md §5; spec §3, §7.1 I8, §7.2):
//! the probe changes no cycle and no statistic (I8), its stacks are conserved on each model's
//! runs, and the `stall_inspector` RTL driven by the model's predicates equals the model's
//! inspector every cycle and in the read-out, on rust-hdl and (when installed) Verilator; a
//! planted RTL fault is caught at SM level.

use smrtl_cosim::sm::mem_sm::workload::{self, Workload};
use smrtl_cosim::sm::mem_sm::{self as mp, MemPipeline, PipeStats};
use smrtl_cosim::sm::stalls::{Breakdown, StallCheck, StallOptions, Stalls};
use smrtl_hdl::blocks::stall_inspector::{reason, src, Class};
use smrtl_testbench::external;
use smrtl_testbench::systems::stalls::{StallRequest, StallRtl};
use smrtl_testbench::systems::{system, Backend, Input, RunOptions};

/// Every model-only account on (snapshots every 1,000 cycles, per PC).
const OPTS: StallOptions = StallOptions {
    every: 1_000,
    per_pc: true,
};

/// Runs input `text` of `system` (its first input kind) on `backend` with the stall breakdown;
/// the run must pass, with the inspector's RTL checked on an RTL backend.
fn through_registry(system_name: &str, text: &str, backend: Backend) -> Breakdown {
    let s = system(system_name).unwrap();
    let kind = &s.inputs()[0];
    let input = Input::File {
        kind,
        name: "test",
        text,
    };
    let run = s
        .load(input, &[])
        .unwrap()
        .run(RunOptions {
            backend,
            waveform: false,
            records: None,
            stalls: Some(StallRequest { opts: OPTS }),
        })
        .unwrap();
    if let Err(f) = &run.result {
        panic!("{f}");
    }
    let b = run.stalls.expect("asked for");
    assert_eq!(b.checked, backend != Backend::Model);
    assert!(b.conserved(), "{b:?}");
    b
}

/// A memory workload: `body`, `cycles`, `scheme`.
fn mem_wl(body: &str, cycles: u64, scheme: &str) -> Workload {
    let text = format!(r#"{{{body}, "cycles": {cycles}, "seed": 1}}"#);
    let sets = [("scheme".to_string(), scheme.to_string())];
    workload::parse(&text, &sets).unwrap_or_else(|e| panic!("{e}"))
}

/// `w` on the model with a probe (and `check` beside it): its statistics and breakdown.
fn mem_probed(w: &Workload, check: Option<Box<dyn StallCheck>>) -> (PipeStats, Result<Breakdown, String>) {
    let mut m = MemPipeline::new(w).unwrap();
    let p = m.stall_params().unwrap();
    let probe = Stalls::new(&p, OPTS);
    m.attach_stalls(match check {
        Some(c) => probe.with_check(c),
        None => probe,
    });
    let stats = mp::run_on(&mut m, w, None, None);
    (stats, m.take_stalls().unwrap().finish())
}

/// I8 on the memory pipeline: the same statistics with and without the probe, under three
/// schemes and two kernel pairs; every stack conserved, and the memory classes, sources and
/// reasons this model has all seen (MEM_DATA only where few warps are blocked at the LSU:
/// Alg. 2 puts MEM_STRUCT first).
#[test]
fn mem_sm_stalls_change_no_cycle() {
    let mut seen = [0u64; 5];
    let bodies = [
        r#""kernels": ["bp", "sv"], "tbs": [9, 4]"#,
        r#""kernels": ["bp", "sv"], "tbs": [3, 2]"#,
        r#""kernels": ["sv", "ks"]"#,
    ];
    for body in bodies {
        for scheme in ["baseline", "qbmi", "dmil"] {
            let w = mem_wl(body, 30_000, scheme);
            let plain = mp::run(&w, None, None).unwrap();
            let (stats, b) = mem_probed(&w, None);
            let b = b.unwrap();
            assert_eq!(stats, plain, "{body} {scheme}: the probe changed the run");
            assert!(b.conserved(), "{body} {scheme}: {b:?}");
            assert_eq!(b.cyc_total, w.cycles);
            assert_eq!(b.inst_issued, stats.warp_instructions);
            assert_eq!(b.snapshots.len(), 30);
            let t = &b.totals;
            seen[0] += t.top[Class::MemData as usize];
            seen[1] += t.md_sub[src::MAIN_MEM as usize];
            seen[4] += t.md_sub[src::L1_COAL as usize];
            seen[2] += t.ms_sub[reason::MSHR_FULL as usize];
            seen[3] += t.md_sub[src::L1 as usize];
        }
    }
    assert!(seen[..4].iter().all(|&x| x > 0), "{seen:?}");
    eprintln!("MEM_DATA, MAIN_MEM, MSHR_FULL, L1, L1_COAL: {seen:?}");
}

/// The memory pipeline with both RTLs in the loop (`mem_issue_ctl` and `stall_inspector`) on
/// rust-hdl and, when installed, Verilator: every inspector output equal every cycle, the
/// read-out equal at the end.
#[test]
fn mem_sm_inspector_rtl_in_the_loop() {
    let text = r#"{"kernels": ["bp", "sv"], "tbs": [3, 2], "cycles": 4000, "seed": 2}"#;
    let model = through_registry("mem_sm", text, Backend::Model);
    assert!(model.totals.top[Class::MemData as usize] > 0);
    let rtl = through_registry("mem_sm", text, Backend::Rusthdl);
    assert_eq!(rtl.totals, model.totals);
    if external("verilator") {
        let v = through_registry("mem_sm", text, Backend::Verilator);
        assert_eq!(v.totals, model.totals);
    }
}

/// A planted inspector fault (a final writeback's flush misses its own cycle's charge) is
/// caught at SM level with its cycle and port.
#[test]
fn a_planted_inspector_fault_is_caught_at_sm_level() {
    use smrtl_cosim::harness::backend::rusthdl::RustHdl;
    use smrtl_hdl::blocks::stall_inspector::{build, faults};
    let w = mem_wl(r#""kernels": ["bp", "sv"], "tbs": [3, 2]"#, 4_000, "baseline");
    let p = MemPipeline::new(&w).unwrap().stall_params().unwrap();
    let faulty = smrtl_hdl::faults::plant_module(&faults::FLUSH_MISSES_SAME_CYCLE, || build(&p));
    let rtl = Box::new(RustHdl::new(std::sync::Arc::new(faulty)));
    let (_, b) = mem_probed(&w, Some(Box::new(StallRtl::on(&p, rtl))));
    let e = b.unwrap_err();
    assert!(e.starts_with("stall_inspector cycle "), "{e}");
    assert!(e.contains("port flush_"), "{e}");
}
