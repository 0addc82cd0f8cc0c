//! `coh_sm` as a system (docs/stall-inspector.md §10.8; issue 25's acceptance): the stall
//! classes of the directed programs through the inspector, one per sub-class; I1–I7 at the
//! end of every run with status 0; I8 (the inspector strips without changing a cycle); and
//! the CI's reduced run: 2 SMs, both protocols, DMA and stash, every SM's `stall_inspector`
//! RTL in the loop on rust-hdl and Verilator (a missing Verilator fails under
//! `SMRTL_REQUIRE_TOOLS=1`). The model's own view-level tests are cosim/tests/coh_sm.rs.

use serde_json::Value;
use smrtl_cosim::sm::coh_sm::params::{CohParams, Protocol};
use smrtl_cosim::sm::coh_sm::prog::{AtomF, Op, Pat, NONE};
use smrtl_cosim::sm::stalls::Breakdown;
use smrtl_hdl::blocks::stall_inspector::{reason, src, Class};
use smrtl_testbench::external;
use smrtl_testbench::systems::coh_sm::CohInput;
use smrtl_testbench::systems::stalls::{StallRequest, StallRtl};
use smrtl_testbench::systems::{system, Backend, Input, Loaded, RunOptions};

const LINE: u64 = 128;

fn params(sms: u32, warps: u32, protocol: Protocol) -> CohParams {
    CohParams {
        sms,
        warps,
        protocol,
        ..CohParams::default()
    }
}

fn input(p: CohParams, progs: Vec<Vec<Vec<Op>>>) -> CohInput {
    CohInput::of_ops("test", p, progs).expect("valid")
}

/// A run on `backend` with `--stalls`: the report and each SM's breakdown, which must hold
/// I1–I5 with status 0 (and their sum too).
fn run(i: &CohInput, backend: Backend) -> (Value, Vec<Breakdown>) {
    let run = i
        .run(RunOptions {
            backend,
            waveform: false,
            records: None,
            stalls: Some(StallRequest::SIM),
        })
        .expect("runs");
    let report = match run.result {
        Ok(r) => r.json(),
        Err(f) => panic!("{f}"),
    };
    let total = run.stalls.expect("asked for");
    assert!(total.conserved(), "{total:?}");
    assert_eq!(run.stalls_per_sm.len(), i.params().sms as usize);
    for (s, b) in run.stalls_per_sm.iter().enumerate() {
        assert!(b.conserved(), "SM {s}: {b:?}");
        assert_eq!(b.blame_pending, 0, "SM {s}: I5 at the end");
        assert_eq!(b.totals.md_sub[src::UNKNOWN as usize], 0, "SM {s}: I5");
        assert_eq!(b.checked, backend != Backend::Model);
        assert_eq!(b.cyc_total, report["cycles"].as_u64().unwrap(), "D3");
        if i.params().protocol == Protocol::Gpu {
            assert_eq!(b.totals.md_sub[src::REMOTE_L1 as usize], 0, "SM {s}: I6");
        }
    }
    (report, run.stalls_per_sm)
}

fn top(b: &Breakdown, c: Class) -> u64 {
    b.totals.top[c as usize]
}

fn use_reg(r: u8) -> Op {
    Op::Comp {
        dst: 63,
        a: r,
        b: NONE,
        lat: 1,
        ii: 1,
    }
}

fn delay(dst: u8, lat: u8) -> Op {
    Op::Comp {
        dst,
        a: NONE,
        b: NONE,
        lat,
        ii: 1,
    }
}

/// A dependent ADD after a scratchpad load is MEM_DATA / L1 (LOCAL_SPM folded in) for exactly
/// the load-to-use latency minus one: 1 cycle.
#[test]
fn add_after_scratchpad_load_is_mem_data_l1_for_load_to_use_minus_one() {
    let prog = vec![
        Op::SpLd {
            dst: 1,
            at: Pat::words(0),
        },
        use_reg(1),
    ];
    let (_, b) = run(
        &input(params(1, 1, Protocol::Gpu), vec![vec![prog]]),
        Backend::Model,
    );
    assert_eq!(top(&b[0], Class::MemData), 1);
    assert_eq!(b[0].totals.md_sub[src::L1 as usize], 1);
}

/// Independent loads to cold lines: 33 fit the 32 MSHRs and the LSU register, no MSHR_FULL;
/// the 34th waits as MSHR_FULL until an entry frees.
#[test]
fn thirty_four_cold_loads_give_mshr_full_only_after_the_33rd() {
    let loads = |n: u64| {
        (0..n)
            .map(|i| Op::Ld {
                dst: i as u8,
                at: Pat::one(i * LINE),
            })
            .collect::<Vec<_>>()
    };
    let full = |n| {
        let (_, b) = run(
            &input(params(1, 1, Protocol::Gpu), vec![vec![loads(n)]]),
            Backend::Model,
        );
        b[0].totals.ms_sub[reason::MSHR_FULL as usize]
    };
    assert_eq!(full(33), 0);
    assert!(full(34) > 100, "{}", full(34));
}

/// A store behind a release flush is PENDING_RELEASE while the releasing warp is SYNC.
#[test]
fn store_behind_a_release_flush_is_pending_release_while_the_releaser_is_sync() {
    let releaser = vec![
        Op::St {
            src: 1,
            at: Pat::words(0),
        },
        Op::Release,
    ];
    let storer = vec![
        delay(1, 3),
        use_reg(1),
        Op::St {
            src: 2,
            at: Pat::words(8 * LINE),
        },
    ];
    let (_, b) = run(
        &input(params(1, 2, Protocol::Gpu), vec![vec![releaser, storer]]),
        Backend::Model,
    );
    let pending = b[0].totals.ms_sub[reason::PENDING_RELEASE as usize];
    assert!(pending > 0, "{b:?}");
    // MEM_STRUCT outranks SYNC (Alg. 2): every PENDING_RELEASE cycle had the releaser SYNC,
    // and the flush outlasts the store's wait.
    assert!(top(&b[0], Class::Sync) > 0, "{b:?}");
}

/// SM 1 writes line 5 and releases; SM 0 reads it 200 cycles later.
fn remote_read(protocol: Protocol) -> Vec<Breakdown> {
    let x = 5 * LINE;
    let reader = vec![
        delay(1, 200),
        use_reg(1),
        Op::Ld {
            dst: 2,
            at: Pat::one(x),
        },
        use_reg(2),
    ];
    let writer = vec![
        Op::St {
            src: 1,
            at: Pat::one(x),
        },
        Op::Release,
    ];
    run(
        &input(params(2, 1, protocol), vec![vec![reader], vec![writer]]),
        Backend::Model,
    )
    .1
}

/// A DeNovo load of a line owned by another SM is REMOTE_L1; the same program under GPU
/// coherence is L2 with REMOTE_L1 = 0 (I6).
#[test]
fn denovo_load_of_a_line_owned_elsewhere_is_remote_l1_and_l2_under_gpu() {
    let d = remote_read(Protocol::Denovo);
    let g = remote_read(Protocol::Gpu);
    let md = |b: &Breakdown, s: u64| b.totals.md_sub[s as usize];
    assert!(md(&d[0], src::REMOTE_L1) > 0, "{:?}", d[0]);
    assert_eq!(md(&d[0], src::L2), 0);
    assert!(md(&g[0], src::L2) > 0, "{:?}", g[0]);
    assert_eq!(md(&g[0], src::REMOTE_L1) + md(&g[1], src::REMOTE_L1), 0);
    // The load-to-use wait is the whole round trip minus one.
    assert_eq!(md(&d[0], src::REMOTE_L1), top(&d[0], Class::MemData));
}

/// A store to a line the SM owns is written in place under DeNovo: the second release of
/// `st X; rel; st X; rel` has nothing to register (spec §6 "takes ownership at release";
/// [P §VI-D] "owned data does not need to be written back on a release"), while GPU coherence
/// writes X through again and waits for the L2.
#[test]
fn denovo_release_of_an_owned_line_has_nothing_to_write_back() {
    let sync = |protocol, twice: bool| {
        let x = 3 * LINE;
        let mut prog = vec![
            Op::St {
                src: 1,
                at: Pat::one(x),
            },
            Op::Release,
        ];
        if twice {
            prog.extend(prog.clone());
        }
        let (_, b) = run(
            &input(params(1, 1, protocol), vec![vec![prog]]),
            Backend::Model,
        );
        top(&b[0], Class::Sync)
    };
    let (d1, d2) = (sync(Protocol::Denovo, false), sync(Protocol::Denovo, true));
    let (g1, g2) = (sync(Protocol::Gpu, false), sync(Protocol::Gpu, true));
    assert!(
        d1 >= 29,
        "the first registration is a round trip to the L2: {d1}"
    );
    assert!(
        d2 <= d1 + 1,
        "DeNovo: the owned line needs no second flush ({d1} -> {d2})"
    );
    assert!(
        g2 >= g1 + 29,
        "GPU: the second release writes through again ({g1} -> {g2})"
    );
}

/// The reduced study of the CI (issue 25's acceptance): 2 SMs × 8 warps, loads, stores,
/// releases and acquires on shared lines, atomics, DMA in and out, stash maps with misses and
/// hits; a few thousand cycles.
fn reduced(protocol: Protocol) -> CohInput {
    let sm = |s: u64| -> Vec<Vec<Op>> {
        let shared = |k: u64| Pat {
            base: (k % 6) * LINE,
            stride: 4,
            lanes: 32,
            reg: NONE,
        };
        let mut w0 = vec![];
        for k in 0..6 {
            w0.extend([
                Op::Ld {
                    dst: 1,
                    at: shared(k + s),
                },
                use_reg(1),
                Op::St {
                    src: 1,
                    at: shared(k + 3 * s),
                },
                Op::Release,
                Op::Acquire,
            ]);
        }
        let mut w1 = vec![];
        for k in 0..3 {
            let global = (64 + 16 * (k + 4 * s)) * LINE;
            w1.extend([
                Op::Dma {
                    spm: 0,
                    global,
                    bytes: 512,
                    to_spm: true,
                    reg: NONE,
                },
                Op::SpLd {
                    dst: 1,
                    at: Pat::words(k * 128),
                },
                use_reg(1),
                Op::Dma {
                    spm: 0,
                    global: global + (1 << 20),
                    bytes: 1024,
                    to_spm: false,
                    reg: NONE,
                },
            ]);
        }
        let mut w2 = vec![Op::StashMap {
            spm: 8192,
            global: (1 << 21) + s * 4096,
            bytes: 2048,
            reg: NONE,
        }];
        for k in 0..8 {
            let at = Pat {
                base: 8192 + (k % 4) * 512,
                stride: 4,
                lanes: 32,
                reg: NONE,
            };
            w2.extend([
                Op::StashLd { dst: 1, at },
                use_reg(1),
                Op::StashSt { src: 1, at },
            ]);
        }
        let w3: Vec<Op> = (0..4)
            .flat_map(|k| {
                [
                    Op::Atom {
                        f: AtomF::Add,
                        dst: 2,
                        src: NONE,
                        cmp: NONE,
                        at: Pat::one(7 * LINE + 4 * k),
                    },
                    use_reg(2),
                ]
            })
            .collect();
        let stream = |w: u64| -> Vec<Op> {
            (0..10)
                .flat_map(|k| {
                    let base = (1 << 22) + ((s * 4 + w) * 64 + k) * 8 * LINE;
                    [
                        Op::Ld {
                            dst: 1,
                            at: Pat {
                                base,
                                stride: LINE,
                                lanes: 8,
                                reg: NONE,
                            },
                        },
                        use_reg(1),
                        Op::St {
                            src: 1,
                            at: Pat {
                                base: base + (1 << 23),
                                stride: 4,
                                lanes: 32,
                                reg: NONE,
                            },
                        },
                    ]
                })
                .collect()
        };
        let mut all = vec![w0, w1, w2, w3];
        all.extend((0..4).map(stream));
        all
    };
    input(params(2, 8, protocol), vec![sm(0), sm(1)])
}

/// I8: the inspector observes only: the report is the same with and without it.
#[test]
fn the_inspector_strips_without_changing_a_cycle() {
    for protocol in [Protocol::Gpu, Protocol::Denovo] {
        let i = reduced(protocol);
        let plain = i.run(RunOptions::model()).unwrap();
        let plain = plain.result.map(|r| r.json()).unwrap_or_default();
        let (probed, _) = run(&i, Backend::Model);
        assert_eq!(plain, probed, "{protocol:?}");
    }
}

/// The reduced run exercises what the CI must: both protocols (REMOTE_L1 only under DeNovo),
/// DMA (PENDING_DMA), stash, releases, a few thousand cycles; I7 on programs without DMA,
/// stores or releases.
#[test]
fn the_reduced_run_exercises_both_protocols_dma_and_stash() {
    for protocol in [Protocol::Gpu, Protocol::Denovo] {
        let (r, per_sm) = run(&reduced(protocol), Backend::Model);
        let cycles = r["cycles"].as_u64().unwrap();
        assert!((1_000..10_000).contains(&cycles), "{protocol:?}: {cycles}");
        let remote = r["served"]["REMOTE_L1"].as_u64().unwrap();
        assert_eq!(remote > 0, protocol == Protocol::Denovo, "{r}");
        assert!(r["lsu_stuck"]["PENDING_DMA"].as_u64().unwrap() > 0, "{r}");
        assert!(r["served"]["LOCAL_SPM"].as_u64().unwrap() > 0, "{r}");
        for b in &per_sm {
            // SYNC hides under the memory classes in the exclusive stack (Alg. 2).
            let sync = b.totals.fractional[Class::Sync as usize];
            assert!(sync > 0.0 && top(b, Class::MemData) > 0, "{b:?}");
        }
    }
    // I7: no DMA, no stores, no releases → no PENDING_DMA, SB_FULL, PENDING_RELEASE.
    let loads: Vec<Op> = (0..40)
        .flat_map(|k| {
            [
                Op::Ld {
                    dst: 1,
                    at: Pat::one(k * LINE),
                },
                use_reg(1),
            ]
        })
        .collect();
    let (_, b) = run(
        &input(
            params(2, 2, Protocol::Denovo),
            vec![vec![loads.clone(), loads.clone()], vec![loads]],
        ),
        Backend::Model,
    );
    for x in &b {
        for r in [
            reason::PENDING_DMA,
            reason::SB_FULL,
            reason::PENDING_RELEASE,
        ] {
            assert_eq!(x.totals.ms_sub[r as usize], 0);
        }
    }
}

/// Every SM's `stall_inspector` RTL in the loop on `backend`: the breakdowns equal the
/// model's, SM by SM.
fn rtl_in_the_loop(backend: Backend) {
    for protocol in [Protocol::Gpu, Protocol::Denovo] {
        let i = reduced(protocol);
        let (_, model) = run(&i, Backend::Model);
        let (_, rtl) = run(&i, backend);
        for (m, r) in model.iter().zip(&rtl) {
            assert_eq!(m.totals, r.totals, "{protocol:?}");
        }
    }
}

#[test]
fn reduced_run_with_every_sms_inspector_rtl_on_rusthdl() {
    rtl_in_the_loop(Backend::Rusthdl);
}

#[test]
fn reduced_run_with_every_sms_inspector_rtl_on_verilator() {
    if external("verilator") {
        rtl_in_the_loop(Backend::Verilator);
    }
}

/// A planted inspector fault in SM 1's RTL is caught with its SM, cycle and port; SM 0's
/// inspector stays equal.
#[test]
fn a_planted_fault_in_one_sms_inspector_is_caught_with_its_sm() {
    use smrtl_cosim::harness::backend::rusthdl::RustHdl;
    use smrtl_hdl::blocks::stall_inspector::{build, faults};
    let i = reduced(Protocol::Denovo);
    let p = i.inspector().clone();
    let (_, per_sm) = i
        .checked_with(|s| {
            let m = match s {
                1 => {
                    smrtl_hdl::faults::plant_module(&faults::FLUSH_MISSES_SAME_CYCLE, || build(&p))
                }
                _ => build(&p),
            };
            Some(StallRtl::on(
                &p,
                Box::new(RustHdl::new(std::sync::Arc::new(m))),
            ))
        })
        .unwrap();
    assert!(per_sm[0].is_ok());
    let e = per_sm[1].as_ref().unwrap_err();
    assert!(e.starts_with("stall_inspector SM 1 cycle "), "{e}");
    assert!(e.contains("port flush_"), "{e}");
}

/// The file path: the kind is recognised, the header's params apply before `--set`, a
/// waveform needs an RTL backend, bad params are refused before any run.
#[test]
fn kernel_files_load_with_header_params_then_sets() {
    let s = system("coh_sm").unwrap();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/coh/small.coh"
    ))
    .unwrap();
    let file = |sets: &[(&str, &str)]| {
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        s.load(
            Input::File {
                kind: &s.inputs()[0],
                name: "small.coh",
                text: &text,
            },
            &sets,
        )
    };
    let loaded = file(&[("protocol", "denovo")]).unwrap();
    let r = loaded
        .run(RunOptions::model())
        .unwrap()
        .result
        .map(|r| r.json())
        .unwrap_or_default();
    assert_eq!(
        (r["sms"].as_u64(), r["params"]["protocol"].as_str()),
        (Some(2), Some("denovo"))
    );
    let e = file(&[("sms", "17")]).err().expect("refused");
    assert!(e.contains("sms") && !e.contains('\n'), "{e}");
    let e = loaded
        .run(RunOptions {
            waveform: true,
            ..RunOptions::model()
        })
        .err()
        .expect("refused");
    assert!(e.contains("--backend"), "{e}");
    let run = loaded
        .run(RunOptions {
            backend: Backend::Rusthdl,
            waveform: true,
            ..RunOptions::model()
        })
        .unwrap();
    let w = run.waveform.expect("asked for");
    assert_eq!(w.top, "stall_inspector");
    assert!(!w.rows.rows.is_empty());
}
