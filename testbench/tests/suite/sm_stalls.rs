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

/// Every model-only account on (snapshots every 1,000 cycles, per PC), and the predicates the
/// models keep at their events audited against their per-warp derivation every cycle.
const OPTS: StallOptions = StallOptions {
    every: 1_000,
    per_pc: true,
    audit: true,
};

/// What a test runs: a system, its input (a file's text of its first kind, or a profile)
/// and `--set`s.
struct Case {
    system: &'static str,
    file: Option<&'static str>,
    profile: &'static str,
    sets: &'static [(&'static str, &'static str)],
}

impl Case {
    /// One run on `backend`, with the stall breakdown if `stalls`: the report's JSON and the
    /// breakdown. The run must pass.
    fn run(&self, backend: Backend, stalls: bool) -> (serde_json::Value, Option<Breakdown>) {
        let s = system(self.system).unwrap();
        let input = match self.file {
            Some(text) => Input::File {
                kind: &s.inputs()[0],
                name: "test",
                text,
            },
            None => Input::Profile {
                name: self.profile,
                seed: 1,
                waves: 1,
            },
        };
        let sets: Vec<(String, String)> = self
            .sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let run = s
            .load(input, &sets)
            .unwrap()
            .run(RunOptions {
                backend,
                waveform: false,
                records: None,
                stalls: stalls.then_some(StallRequest { opts: OPTS }),
            })
            .unwrap();
        match run.result {
            Ok(r) => (r.json(), run.stalls),
            Err(f) => panic!("{} {}: {f}", self.system, self.profile),
        }
    }

    /// The breakdown on `backend`: conserved, no status bit, the RTL checked on an RTL
    /// backend, cycles counted.
    fn breakdown(&self, backend: Backend) -> Breakdown {
        let b = self.run(backend, true).1.expect("asked for");
        assert_eq!(b.checked, backend != Backend::Model);
        assert!(b.conserved(), "{} {}: {b:?}", self.system, self.profile);
        assert!(b.cyc_total > 0 && b.inst_issued > 0);
        model_only_accounts(&b);
        b
    }

    /// I8: the report (cycles and every statistic) is the same with and without the probe.
    fn same_with_and_without(&self) {
        let (plain, _) = self.run(Backend::Model, false);
        let (probed, b) = self.run(Backend::Model, true);
        assert_eq!(
            probed, plain,
            "{} {}: the probe changed the run",
            self.system, self.profile
        );
        assert!(b.expect("asked for").conserved());
    }

    /// The `stall_inspector` RTL in the loop beside the system's own RTL on rust-hdl and (when
    /// installed) Verilator: the breakdown equals the model's.
    fn rtl_in_the_loop(&self) -> Breakdown {
        let model = self.breakdown(Backend::Model);
        assert_eq!(self.breakdown(Backend::Rusthdl).totals, model.totals);
        if external("verilator") {
            assert_eq!(self.breakdown(Backend::Verilator).totals, model.totals);
        }
        model
    }
}

const ELASTIC: [Case; 2] = [
    Case {
        system: "elastic_sm",
        file: None,
        profile: "transpose",
        sets: &[],
    },
    Case {
        system: "elastic_sm",
        file: None,
        profile: "dct",
        sets: &[("sched", "rr")],
    },
];

const SHARING: [Case; 2] = [
    Case {
        system: "sharing_sm",
        file: None,
        profile: "histogram",
        sets: &[("lat_global", "40")],
    },
    Case {
        system: "sharing_sm",
        file: None,
        profile: "NQU",
        sets: &[("lat_global", "40"), ("share", "false")],
    },
];

/// I8 on the seed-000 SM core (BCAWS and round robin).
#[test]
fn elastic_sm_stalls_change_no_cycle() {
    for c in &ELASTIC {
        c.same_with_and_without();
    }
}

/// I8 on the seed-001 SM, with and without scratchpad sharing.
#[test]
fn sharing_sm_stalls_change_no_cycle() {
    for c in &SHARING {
        c.same_with_and_without();
    }
}

/// The seed-000 core with `sm_core` and `stall_inspector` in the loop: bank-conflict
/// structural stalls (replays and BCAWS-withheld heads) and scratchpad data stalls seen.
#[test]
fn elastic_sm_inspector_rtl_in_the_loop() {
    let b = ELASTIC[0].rtl_in_the_loop();
    let t = &b.totals;
    assert!(t.ms_sub[reason::BANK_CONFLICT as usize] > 0, "{b:?}");
    assert!(t.md_sub[src::L1 as usize] > 0, "{b:?}");
}

/// The seed-001 SM with `sharing_core` and `stall_inspector` in the loop: lock NACKs seen as
/// SYNC warps (the fractional stack shows them; Alg. 2 puts MEM_DATA first), global loads
/// attributed to MAIN_MEM.
#[test]
fn sharing_sm_inspector_rtl_in_the_loop() {
    let b = SHARING[0].rtl_in_the_loop();
    let t = &b.totals;
    assert!(t.fractional[Class::Sync as usize] > 0.0, "{b:?}");
    assert!(t.md_sub[src::MAIN_MEM as usize] > 0, "{b:?}");
}

/// The model-only accounts add up: the fractional stack to the counted cycles (NO_STALL and
/// IDLE equal to the exclusive ones), the per-PC table to every cycle but IDLE ones, the
/// snapshots every 1,000 cycles cumulative and within the totals.
fn model_only_accounts(b: &Breakdown) {
    let t = &b.totals;
    let frac: f64 = t.fractional.iter().sum();
    assert!(
        (frac - b.cyc_total as f64).abs() < 1e-6 * b.cyc_total as f64,
        "{frac}"
    );
    for c in [Class::NoStall, Class::Idle] {
        assert_eq!(t.fractional[c as usize], t.top[c as usize] as f64);
    }
    let per_pc: u64 = b.per_pc.iter().flat_map(|(_, v)| v.iter()).sum();
    assert_eq!(per_pc, b.cyc_total - t.top[Class::Idle as usize]);
    assert_eq!(b.snapshots.len() as u64, b.cyc_total / OPTS.every);
    for (k, s) in b.snapshots.iter().enumerate() {
        assert_eq!(s.cycle, (k as u64 + 1) * OPTS.every);
        assert_eq!(s.top.iter().sum::<u64>(), s.cycle);
        assert!(s.top.iter().zip(&t.top).all(|(a, b)| a <= b));
    }
}

/// A memory workload: `body`, `cycles`, `scheme`.
fn mem_wl(body: &str, cycles: u64, scheme: &str) -> Workload {
    let text = format!(r#"{{{body}, "cycles": {cycles}, "seed": 1}}"#);
    let sets = [("scheme".to_string(), scheme.to_string())];
    workload::parse(&text, &sets).unwrap_or_else(|e| panic!("{e}"))
}

/// `w` on the model with a probe (and `check` beside it): its statistics and breakdown.
fn mem_probed(
    w: &Workload,
    check: Option<Box<dyn StallCheck>>,
) -> (PipeStats, Result<Breakdown, String>) {
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
    let c = Case {
        system: "mem_sm",
        file: Some(r#"{"kernels": ["bp", "sv"], "tbs": [3, 2], "cycles": 4000, "seed": 2}"#),
        profile: "bp+sv",
        sets: &[],
    };
    let b = c.rtl_in_the_loop();
    assert!(b.totals.top[Class::MemData as usize] > 0, "{b:?}");
}

/// A planted inspector fault (a final writeback's flush misses its own cycle's charge) is
/// caught at SM level with its cycle and port.
#[test]
fn a_planted_inspector_fault_is_caught_at_sm_level() {
    use smrtl_cosim::harness::backend::rusthdl::RustHdl;
    use smrtl_hdl::blocks::stall_inspector::{build, faults};
    let w = mem_wl(
        r#""kernels": ["bp", "sv"], "tbs": [3, 2]"#,
        4_000,
        "baseline",
    );
    let p = MemPipeline::new(&w).unwrap().stall_params().unwrap();
    let faulty = smrtl_hdl::faults::plant_module(&faults::FLUSH_MISSES_SAME_CYCLE, || build(&p));
    let rtl = Box::new(RustHdl::new(std::sync::Arc::new(faulty)));
    let (_, b) = mem_probed(&w, Some(Box::new(StallRtl::on(&p, rtl))));
    let e = b.unwrap_err();
    assert!(e.starts_with("stall_inspector cycle "), "{e}");
    assert!(e.contains("port flush_"), "{e}");
}
