//! The `StallInspector` (docs/stall-inspector.md): the spec's directed scenarios (the §2 blame
//! example, one per Alg. 1 / Alg. 2 rule and sub-class rule, the read-out map, the status bits,
//! `clear`), each run on the behavioral model AND the rusthdl RTL (outputs equal every cycle),
//! the §7.1 invariants on 10^5-cycle random predicate streams of the model and the RTL, the
//! reach of the random stimulus, and the planted faults caught by random co-simulation. Random
//! co-simulation on every backend, lint, Icarus, synthesis and the flip-flop inventory at
//! every preset are the conformance suite's.

use smrtl_cosim::blocks::stall_inspector::{cycle_of, write_cycle, CycleIn, Gsi, WarpPreds};
use smrtl_hdl::blocks::stall_inspector::port::{Inputs, Outputs};
use smrtl_hdl::blocks::stall_inspector::{addr, reason, src, status, Class, Params};
use smrtl_hdl::BlockParams;
use smrtl_testbench::blocks::stall_inspector::stream;
use smrtl_testbench::check;

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).unwrap()
}

/// One warp's predicates by shorthand: `R` ready, `I` inactive, `C` control, `S` sync, `MD`,
/// `MS` (memory structural, `reason` 1), `CD`, `CS`.
fn warp(kind: &str) -> WarpPreds {
    let r = WarpPreds {
        active: true,
        inst_avail: true,
        ..WarpPreds::default()
    };
    match kind {
        "R" => r,
        "I" => WarpPreds::default(),
        "C" => WarpPreds {
            inst_avail: false,
            ..r
        },
        "S" => WarpPreds {
            sync_wait: true,
            ..r
        },
        "MD" => WarpPreds {
            haz_load: true,
            ..r
        },
        "MS" => WarpPreds {
            is_mem: true,
            ms_block: true,
            ms_reason: reason::MSHR_FULL as u8,
            ..r
        },
        "CD" => WarpPreds {
            haz_comp: true,
            ..r
        },
        "CS" => WarpPreds {
            fu_block: true,
            ..r
        },
        _ => panic!("{kind}"),
    }
}

/// A cycle's port inputs from typed warps and cycle inputs, reading `rd_addr`.
fn inputs(p: &Params, warps: &[WarpPreds], c: &CycleIn, rd_addr: u64) -> Inputs {
    let mut i = Inputs::new(p);
    write_cycle(&mut i, warps, c);
    i.rd_addr = rd_addr;
    i
}

/// A counted cycle issuing `n`, without writeback.
fn counted(n: u64) -> CycleIn {
    CycleIn {
        en: true,
        clear: false,
        n_issued: n,
        ldwb: None,
    }
}

/// Every read-out address of `p`.
fn all_addresses(p: &Params) -> Vec<u64> {
    (0..1u64 << p.addr_bits()).collect()
}

/// Runs `cycles` on the model and rusthdl (asserted equal every cycle), then reads every
/// address in uncounted idle cycles; returns the outputs of `cycles` and the read-out map.
fn run_and_read(p: &Params, cycles: &[Inputs]) -> (Vec<Outputs>, Vec<u64>) {
    let mut all = cycles.to_vec();
    let idle = vec![WarpPreds::default(); p.nw as usize];
    for a in all_addresses(p) {
        all.push(inputs(p, &idle, &CycleIn::default(), a));
    }
    let out = check::directed(p, &all);
    let map = out[cycles.len()..].iter().map(|o| o.rd_data).collect();
    (out[..cycles.len()].to_vec(), map)
}

/// Spec §3.3's example (docs §2), NW = 2: W0 is blamed for two MEM_DATA cycles, then its
/// final writeback (L2) in a cycle charged to it flushes 3; W1's (MAIN_MEM) flushes 2.
#[test]
fn blame_example() {
    let p = params("default", &[("NW", "2")]);
    let wb = |w, s: u64| smrtl_cosim::blocks::stall_inspector::Writeback {
        warp: w,
        src: s as u8,
        is_final: true,
    };
    type Row = (
        [&'static str; 2],
        u64,
        Option<(usize, u64)>,
        Class,
        [u64; 2],
    );
    let rows: [Row; 7] = [
        (["MD", "CD"], 0, None, Class::MemData, [1, 0]),
        (["MD", "CD"], 0, None, Class::MemData, [2, 0]),
        (["MD", "R"], 1, None, Class::NoStall, [2, 0]),
        (["MD", "MD"], 0, Some((0, src::L2)), Class::MemData, [0, 0]),
        (["R", "MD"], 1, None, Class::NoStall, [0, 0]),
        (["CD", "MD"], 0, None, Class::MemData, [0, 1]),
        (
            ["CD", "MD"],
            0,
            Some((1, src::MAIN_MEM)),
            Class::MemData,
            [0, 0],
        ),
    ];
    let mut cycles = vec![];
    for (t, (w, n, ldwb, cls, blame)) in rows.iter().enumerate() {
        let c = CycleIn {
            ldwb: ldwb.map(|(w, s)| wb(w, s)),
            ..counted(*n)
        };
        cycles.push(inputs(&p, &[warp(w[0]), warp(w[1])], &c, 0));
        // The blame after row t, read in the state after it.
        let (out, map) = run_and_read(&p, &cycles);
        assert_eq!(out[t].cls, cls.code(), "t = {t}");
        assert_eq!([map[0x40], map[0x41]], *blame, "blame after t = {t}");
    }
    let (out, map) = run_and_read(&p, &cycles);
    let flushes: Vec<(usize, u64, u64)> = out
        .iter()
        .enumerate()
        .filter(|(_, o)| o.flush_valid)
        .map(|(t, o)| (t, o.flush_src, o.flush_amt))
        .collect();
    assert_eq!(flushes, [(3, src::L2, 3), (6, src::MAIN_MEM, 2)]);
    assert_eq!(map[(addr::MD_SUB + src::L2) as usize], 3);
    assert_eq!(map[(addr::MD_SUB + src::MAIN_MEM) as usize], 2);
    assert_eq!(map[Class::MemData.code() as usize], 5);
    assert_eq!(map[Class::NoStall.code() as usize], 2);
    assert_eq!((map[0x18], map[0x19], map[0x1a]), (7, 2, 0));
}

/// The warp class of one warp (NW = 1) with `preds`, on the model and the RTL.
fn warp_class(p: &Params, preds: WarpPreds) -> u64 {
    let out = check::directed(p, &[inputs(p, &[preds], &counted(0), 0)]);
    out[0].wcls[0]
}

/// Alg. 1, one rule at a time: each test wins over every weaker one (all set), loses to every
/// stronger one; inactive is IDLE whatever else holds; nothing holding is NO_STALL. MEM_STRUCT
/// needs a memory instruction, COMP_STRUCT a compute one.
#[test]
fn alg1_rules() {
    let p = params("nw1", &[]);
    let all = WarpPreds {
        active: true,
        inst_avail: false,
        sync_wait: true,
        haz_load: true,
        haz_comp: true,
        is_mem: true,
        ms_block: true,
        fu_block: true,
        ms_reason: 1,
    };
    assert_eq!(warp_class(&p, all), Class::Control.code());
    let a = WarpPreds {
        inst_avail: true,
        ..all
    };
    assert_eq!(warp_class(&p, a), Class::Sync.code());
    let a = WarpPreds {
        sync_wait: false,
        ..a
    };
    assert_eq!(warp_class(&p, a), Class::MemData.code());
    let a = WarpPreds {
        haz_load: false,
        ..a
    };
    assert_eq!(warp_class(&p, a), Class::MemStruct.code());
    let no_lsu = WarpPreds {
        ms_block: false,
        ..a
    };
    assert_eq!(warp_class(&p, no_lsu), Class::CompData.code());
    let a = WarpPreds {
        haz_comp: false,
        is_mem: false,
        ..a
    };
    // A compute instruction: ms_block does not apply, fu_block does.
    assert_eq!(warp_class(&p, a), Class::CompStruct.code());
    let mem = WarpPreds {
        is_mem: true,
        ms_block: false,
        ..a
    };
    assert_eq!(
        warp_class(&p, mem),
        Class::NoStall.code(),
        "fu_block needs !is_mem"
    );
    let inactive = WarpPreds {
        active: false,
        ..all
    };
    assert_eq!(warp_class(&p, inactive), Class::Idle.code());
    assert_eq!(warp_class(&p, warp("R")), Class::NoStall.code());
}

/// The cycle class of warps `kinds` issuing `n` (model and RTL).
fn cycle_class(p: &Params, kinds: &[&str], n: u64) -> (u64, Outputs) {
    let warps: Vec<WarpPreds> = kinds.iter().map(|k| warp(k)).collect();
    let out = check::directed(p, &[inputs(p, &warps, &counted(n), 0)]);
    (out[0].cls, out[0].clone())
}

/// Alg. 2, row by row: with one warp of each class from row r down, the cycle takes row r;
/// an issue is NO_STALL whatever the warps; no active warp is IDLE; an active SM whose warps are
/// all ready but issue nothing falls through to IDLE (and status bit 2, below).
#[test]
fn alg2_rules() {
    let p = params("default", &[]);
    let rows = [
        ("MS", Class::MemStruct),
        ("MD", Class::MemData),
        ("S", Class::Sync),
        ("CS", Class::CompStruct),
        ("CD", Class::CompData),
        ("C", Class::Control),
    ];
    for r in 0..rows.len() {
        let mut kinds: Vec<&str> = rows[r..].iter().rev().map(|(k, _)| *k).collect();
        kinds.resize(8, "I");
        assert_eq!(cycle_class(&p, &kinds, 0).0, rows[r].1.code(), "row {r}");
        assert_eq!(cycle_class(&p, &kinds, 1).0, Class::NoStall.code(), "issue");
    }
    assert_eq!(cycle_class(&p, &["I"; 8], 0).0, Class::Idle.code());
    let mut ready = ["I"; 8];
    ready[5] = "R";
    assert_eq!(cycle_class(&p, &ready, 0).0, Class::Idle.code());
    assert_eq!(cycle_class(&p, &ready, 1).0, Class::NoStall.code());
}

/// Non-default orders (D8): `compute_first` takes compute before memory in both algorithms;
/// `reversed` puts COMP_STRUCT first in Alg. 1 and IDLE first in Alg. 2 (IDLE still means "no
/// warp active", so its place changes nothing).
#[test]
fn other_orders() {
    let p = params("compute_first", &[]);
    assert_eq!(
        cycle_class(&p, &["MS", "MD", "CD", "S", "I", "I", "I", "I"], 0).0,
        Class::CompData.code()
    );
    let both = WarpPreds {
        haz_comp: true,
        ..warp("MD")
    };
    let p1 = Params { nw: 1, ..p.clone() };
    assert_eq!(warp_class(&p1, both), Class::CompData.code());
    let r = params("reversed", &[]);
    assert_eq!(
        cycle_class(&r, &["MS", "C", "I", "I"], 0).0,
        Class::Control.code()
    );
    assert_eq!(cycle_class(&r, &["I"; 4], 0).0, Class::Idle.code());
    let cs_and_c = WarpPreds {
        fu_block: true,
        ..warp("C")
    };
    let r1 = Params { nw: 1, ..r };
    assert_eq!(warp_class(&r1, cs_and_c), Class::CompStruct.code());
}

/// Selections and sub-classes: `md_sel` / `ms_sel` are the lowest warps of their class (0 if
/// none); `ms_cyc_reason` is the reason of `ms_sel`, OTHER for 0 and 7, and 0 unless the cycle
/// is MEM_STRUCT; `ms_sub` counts it.
#[test]
fn selections_and_ms_sub() {
    let p = params("default", &[]);
    let (_, o) = cycle_class(&p, &["R", "CD", "MD", "MS", "MD", "MS", "I", "I"], 1);
    assert_eq!((o.md_sel, o.ms_sel, o.ms_cyc_reason), (2, 3, 0));
    let (_, o) = cycle_class(&p, &["R", "CD", "S", "S", "I", "I", "I", "I"], 0);
    assert_eq!((o.cls, o.md_sel, o.ms_sel), (Class::Sync.code(), 0, 0));
    let mut cycles = vec![];
    for r in 0..8u64 {
        let mut w = vec![warp("MS"); 8];
        w[0] = warp("CD");
        w[1].ms_reason = r as u8;
        w[2].ms_reason = ((r + 1) % 8) as u8;
        cycles.push(inputs(&p, &w, &counted(0), 0));
    }
    let (out, map) = run_and_read(&p, &cycles);
    let reasons: Vec<u64> = out.iter().map(|o| o.ms_cyc_reason).collect();
    assert_eq!(reasons, [6, 1, 2, 3, 4, 5, 6, 6]);
    assert!(out.iter().all(|o| o.ms_sel == 1));
    let ms: Vec<u64> = (0x10..0x18).map(|a| map[a]).collect();
    assert_eq!(ms, [0, 1, 1, 1, 1, 1, 3, 0]);
    assert_eq!(map[Class::MemStruct.code() as usize], 8);
    assert_eq!(map[0x1a], 1 << status::BAD_REASON);
}

/// `flush_src` normalisation: 6 counts as UNKNOWN (7); LOCAL_SPM (5) as L1 unless
/// `split_local`; a flush of 0 is no flush; a writeback that is not final, or for a warp ≥ NW,
/// flushes nothing.
#[test]
fn md_sub_sources() {
    for split in [false, true] {
        let p = params(
            "default",
            &[("NW", "5"), ("split_local", &split.to_string())],
        );
        let mut cycles = vec![];
        let mut flush_cycles = vec![];
        for s in 0..8u64 {
            let mut w = vec![warp("I"); 5];
            w[0] = warp("MD");
            cycles.push(inputs(&p, &w, &counted(0), 0));
            let ldwb = Some(smrtl_cosim::blocks::stall_inspector::Writeback {
                warp: 0,
                src: s as u8,
                is_final: true,
            });
            flush_cycles.push(cycles.len());
            cycles.push(inputs(&p, &w, &CycleIn { ldwb, ..counted(0) }, 0));
        }
        // Not final; warp 6 ≥ NW; warp 1 with blame 0: no flush.
        let w = [warp("MD"), warp("I"), warp("I"), warp("I"), warp("I")];
        for (warp_, fin) in [(0, false), (6, true), (1, true)] {
            let ldwb = Some(smrtl_cosim::blocks::stall_inspector::Writeback {
                warp: warp_,
                src: 2,
                is_final: fin,
            });
            cycles.push(inputs(&p, &w, &CycleIn { ldwb, ..counted(0) }, 0));
        }
        let (out, map) = run_and_read(&p, &cycles);
        let srcs: Vec<u64> = flush_cycles.iter().map(|&t| out[t].flush_src).collect();
        let local = if split { 5 } else { 0 };
        assert_eq!(srcs, [0, 1, 2, 3, 4, local, 7, 7], "split_local {split}");
        assert!(flush_cycles.iter().all(|&t| out[t].flush_amt == 2));
        let n = out.len();
        assert!(out[n - 3..]
            .iter()
            .all(|o| !o.flush_valid && o.flush_amt == 0));
        let md: Vec<u64> = (0x08..0x10).map(|a| map[a]).collect();
        let want = if split {
            [2, 2, 2, 2, 2, 2, 0, 4]
        } else {
            [4, 2, 2, 2, 2, 0, 0, 4]
        };
        assert_eq!(md, want, "split_local {split}");
        // The last three cycles: MEM_DATA charged to warp 0, not flushed.
        assert_eq!(map[0x40], 3);
        assert_eq!(map[Class::MemData.code() as usize], 19);
    }
}

/// The read-out map (spec §4.4): every address of the map after a known run, zeros where no
/// register is (0x10, 0x17, LOCAL_SPM without `split_local`, reserved, 0x1B–0x1F, `wc` without
/// `warp_counters`, 0x28–0x3F, blame of warps ≥ NW); above NW = 64 the blame moves to 0x80 + w
/// and 0x40–0x7F read 0 (docs §4).
#[test]
fn read_out_map() {
    for (preset, sets) in [
        ("default", vec![("NW", "3")]),
        ("small", vec![]),
        ("nw96", vec![]),
    ] {
        let p = params(preset, &sets);
        let nw = p.nw as usize;
        let mut cycles = vec![];
        let mut g = Gsi::new(&p);
        for t in 0..40usize {
            let mut w = vec![warp("I"); nw];
            w[t % nw] = warp(["MD", "MS", "R", "CD", "C", "S", "CS"][t % 7]);
            w[(t + 1) % nw] = warp("MD");
            let n = u64::from(w.iter().any(|x| g.warp_class(x) == Class::NoStall));
            let ldwb = (t % 5 == 4).then_some(smrtl_cosim::blocks::stall_inspector::Writeback {
                warp: (t + 1) % nw,
                src: (t % 8) as u8,
                is_final: true,
            });
            let c = CycleIn { ldwb, ..counted(n) };
            cycles.push(inputs(&p, &w, &c, 0));
            g.step(&w, &c);
        }
        let (_, map) = run_and_read(&p, &cycles);
        for (a, v) in map.iter().enumerate() {
            assert_eq!(*v, g.read(a as u64), "{preset} address {a:#x}");
        }
        let base = p.blame_base() as usize;
        let mapped: Vec<usize> = (0..map.len())
            .filter(|&a| match a {
                0..=0x07 | 0x18..=0x1a => true,
                0x08..=0x0f => p.md_sources().contains(&(a as u64 - 8)),
                0x11..=0x16 => true,
                0x20..=0x27 => p.warp_counters,
                _ => a >= base && a < base + nw,
            })
            .collect();
        for (a, v) in map.iter().enumerate() {
            if !mapped.contains(&a) {
                assert_eq!(*v, 0, "{preset}: address {a:#x} holds no register");
            }
        }
        let total: u64 = map[..8].iter().sum();
        assert_eq!((total, map[0x18]), (40, 40), "{preset}");
        if p.warp_counters {
            let wc: u64 = map[0x20..0x28].iter().sum();
            assert_eq!(wc, 40 * nw as u64);
        }
    }
}

/// Status bits (docs §3.5): each raised by its condition and sticky; bits 2–4 only in
/// counted cycles, bit 5 also in uncounted ones; `clear` zeroes them (and every counter) and
/// the clearing cycle is not counted.
#[test]
fn status_bits_and_clear() {
    let p = params("default", &[("NW", "2")]);
    let st = |cycles: &[Inputs]| run_and_read(&p, cycles).1[0x1a];
    let mk = |kinds: [&str; 2], c: CycleIn| inputs(&p, &[warp(kinds[0]), warp(kinds[1])], &c, 0);
    let off = CycleIn {
        en: false,
        ..counted(0)
    };
    assert_eq!(
        st(&[mk(["R", "I"], counted(0))]),
        1 << status::READY_NOT_ISSUED
    );
    assert_eq!(st(&[mk(["R", "I"], off)]), 0);
    assert_eq!(
        st(&[mk(["C", "S"], counted(1))]),
        1 << status::ISSUED_NOT_READY
    );
    assert_eq!(
        st(&[mk(
            ["C", "S"],
            CycleIn {
                en: false,
                ..counted(1)
            }
        )]),
        0
    );
    let mut bad = [warp("MS"), warp("I")];
    bad[0].ms_reason = 0;
    let bad_cycle = inputs(&p, &bad, &counted(0), 0);
    assert_eq!(
        st(std::slice::from_ref(&bad_cycle)),
        1 << status::BAD_REASON
    );
    let final_wb = |en| CycleIn {
        en,
        ldwb: Some(smrtl_cosim::blocks::stall_inspector::Writeback {
            warp: 1,
            src: 0,
            is_final: true,
        }),
        ..counted(0)
    };
    assert_eq!(
        st(&[mk(["C", "R"], final_wb(false))]),
        1 << status::FINAL_WITHOUT_HAZARD
    );
    assert_eq!(st(&[mk(["C", "MD"], final_wb(true))]), 0);
    // Sticky, then cleared; the clearing cycle counts nothing.
    let mut cycles = vec![mk(["R", "I"], counted(0)), mk(["C", "S"], counted(0))];
    assert_eq!(st(&cycles), 1 << status::READY_NOT_ISSUED);
    cycles.push(mk(
        ["MD", "S"],
        CycleIn {
            clear: true,
            ..counted(0)
        },
    ));
    let (out, map) = run_and_read(&p, &cycles);
    assert!(map.iter().all(|&v| v == 0), "clear zeroes everything");
    assert_eq!(
        out[2].status,
        1 << status::READY_NOT_ISSUED,
        "status is registered"
    );
    cycles.push(mk(["MD", "S"], counted(0)));
    let map = run_and_read(&p, &cycles).1;
    assert_eq!((map[0x18], map[4], map[0x40]), (1, 1, 1));
}

/// Saturation (spec §4.3): counters stop at 2^CW − 1 and blame at 2^BW − 1, each raising its
/// status bit; a saturated blame flushes its clipped value.
#[test]
fn saturation() {
    let p = params("default", &[("NW", "1"), ("CW", "8"), ("BW", "3")]);
    let md = [warp("MD")];
    let mut cycles = vec![inputs(&p, &md, &counted(0), 0); 300];
    let ldwb = Some(smrtl_cosim::blocks::stall_inspector::Writeback {
        warp: 0,
        src: 2,
        is_final: true,
    });
    cycles.push(inputs(&p, &md, &CycleIn { ldwb, ..counted(0) }, 0));
    let (out, map) = run_and_read(&p, &cycles);
    assert_eq!(out[7].status, 0, "blame 7 after 7 cycles: not clipped yet");
    assert_eq!(out[8].status, 1 << status::BLAME_SAT);
    assert_eq!((out[300].flush_amt, map[0x0a]), (7, 7));
    assert_eq!((map[0x18], map[4]), (255, 255));
    assert_eq!(
        map[0x1a],
        (1 << status::BLAME_SAT) | (1 << status::COUNTER_SAT)
    );
}

/// The §7.1 invariant state of one boundary: every counter of the read-out map.
struct Snap {
    top: Vec<u64>,
    md: Vec<u64>,
    ms: Vec<u64>,
    cyc: u64,
    inst: u64,
    status: u64,
    blame: Vec<u64>,
}

impl Snap {
    fn of(p: &Params, read: impl Fn(u64) -> u64) -> Snap {
        Snap {
            top: (0..8).map(&read).collect(),
            md: (0x08..0x10).map(&read).collect(),
            ms: (0x10..0x18).map(&read).collect(),
            cyc: read(addr::CYC_TOTAL),
            inst: read(addr::INST_ISSUED),
            status: read(addr::STATUS),
            blame: (0..u64::from(p.nw))
                .map(|w| read(p.blame_base() + w))
                .collect(),
        }
    }

    /// I1, I2 (`issue_cycles` counted cycles with an issue since the last clear), I4, I5,
    /// unless a saturation flag waives them; whether they were checked.
    fn check(&self, p: &Params, issue_cycles: u64, at: &str) -> bool {
        if self.status & 3 != 0 {
            return false;
        }
        let s = |v: &[u64]| v.iter().sum::<u64>();
        assert_eq!(s(&self.top), self.cyc, "I1 at {at}");
        assert_eq!(self.top[0], issue_cycles, "I2 at {at}");
        if p.iw == 1 {
            assert_eq!(self.top[0], self.inst, "I2 (IW = 1) at {at}");
        }
        assert_eq!(s(&self.ms), self.top[5], "I4 at {at}");
        assert_eq!(s(&self.md) + s(&self.blame), self.top[4], "I5 at {at}");
        true
    }
}

/// The model on `cycles`, checking I1–I5 after every cycle (I3: status bits 2 and 3 are set
/// exactly when a counted cycle broke "a ready warp ⇔ an issue"); returns the boundaries checked.
fn model_invariants(p: &Params, cycles: &[Inputs]) -> usize {
    let mut g = Gsi::new(p);
    let mut warps = vec![WarpPreds::default(); p.nw as usize];
    let (mut issue_cycles, mut broke, mut checked) = (0u64, 0u64, 0);
    for (t, i) in cycles.iter().enumerate() {
        let c = cycle_of(i, &mut warps);
        let o = g.evaluate(&warps, &c);
        let ready = g.wcls().contains(&Class::NoStall);
        if i.reset || c.clear {
            g.zero();
            (issue_cycles, broke) = (0, 0);
            continue;
        }
        g.update(&c, &o);
        if c.en {
            issue_cycles += u64::from(c.n_issued != 0);
            if ready && c.n_issued == 0 {
                broke |= 1 << status::READY_NOT_ISSUED;
            }
            if !ready && c.n_issued != 0 {
                broke |= 1 << status::ISSUED_NOT_READY;
            }
        }
        assert_eq!(u64::from(g.status()) & 0b1100, broke, "I3 at cycle {t}");
        let snap = Snap::of(p, |a| g.read(a));
        checked += snap.check(p, issue_cycles, &format!("model cycle {t}")) as usize;
    }
    checked
}

/// `cycles` with a read of the whole map (uncounted, no writeback) every `every` cycles.
fn with_sweeps(p: &Params, cycles: &[Inputs], every: usize) -> (Vec<Inputs>, Vec<usize>) {
    let mut all = vec![];
    let mut sweeps = vec![];
    for chunk in cycles.chunks(every) {
        all.extend_from_slice(chunk);
        sweeps.push(all.len());
        let mut idle = chunk.last().expect("chunk").clone();
        (idle.en, idle.clear, idle.reset, idle.ldwb_valid) = (false, false, false, false);
        for a in all_addresses(p) {
            all.push(Inputs {
                rd_addr: a,
                ..idle.clone()
            });
        }
    }
    (all, sweeps)
}

/// The RTL on `cycles` (outputs equal to the model's every cycle), I1–I5 checked at every read
/// sweep from the RTL's `rd_data`; returns the boundaries checked.
fn rtl_invariants(p: &Params, cycles: &[Inputs], every: usize) -> usize {
    let (all, sweeps) = with_sweeps(p, cycles, every);
    let out = check::directed(p, &all);
    let n = 1usize << p.addr_bits();
    let mut issue_cycles = 0;
    let mut checked = 0;
    let mut t = 0;
    for &s in &sweeps {
        while t < s {
            if all[t].reset || all[t].clear {
                issue_cycles = 0;
            } else if all[t].en && all[t].n_issued != 0 {
                issue_cycles += 1;
            }
            t += 1;
        }
        let map: Vec<u64> = out[s..s + n].iter().map(|o| o.rd_data).collect();
        let snap = Snap::of(p, |a| map[a as usize]);
        checked += snap.check(p, issue_cycles, &format!("RTL sweep at {s}")) as usize;
        t = s + n;
    }
    checked
}

/// §7.1 I1–I5 on 10^5 random cycles, on the model (every boundary) and the RTL (outputs equal
/// to the model's every cycle, the map read every 2,000 cycles), for the default preset and the
/// small widths (where saturation waives them now and then).
#[test]
fn invariants_on_random_streams() {
    for (preset, n, seed) in [
        ("default", 100_000, 1),
        ("small", 20_000, 2),
        ("paper", 10_000, 3),
    ] {
        let p = params(preset, &[]);
        let cycles = stream(&p, seed, n);
        let m = model_invariants(&p, &cycles);
        let r = rtl_invariants(&p, &cycles, 2000);
        println!("{preset}: {n} cycles, {m} model boundaries and {r} RTL sweeps checked");
        assert!(
            m > n / 4 && r >= 1,
            "{preset}: too few unsaturated boundaries"
        );
    }
}

/// I7 on 10^5 random cycles (model and RTL): sub-classes the stream never causes stay 0:
/// without DMA, stores or releases (no warp ever has reason PENDING_DMA, SB_FULL or
/// PENDING_RELEASE) those `ms_sub` counters are 0;
/// without `split_local` LOCAL_SPM is 0; and I5 at kernel end: once every warp's last load
/// returned (final writebacks, sources 0..=5) Σ blame = 0 and UNKNOWN = 0.
#[test]
fn i7_and_kernel_end() {
    let p = params("default", &[]);
    let mut cycles = stream(&p, 7, 100_000);
    for c in &mut cycles {
        for r in &mut c.ms_reason {
            if [
                reason::SB_FULL,
                reason::PENDING_RELEASE,
                reason::PENDING_DMA,
            ]
            .contains(r)
            {
                *r = reason::MSHR_FULL;
            }
        }
        c.ldwb_src %= 6;
        c.reset = false;
        c.clear = false;
    }
    let mut end = cycles.last().unwrap().clone();
    (end.en, end.n_issued) = (false, 0);
    for w in 0..p.nw as u64 {
        cycles.push(Inputs {
            ldwb_valid: true,
            ldwb_final: true,
            ldwb_warp: w,
            ldwb_src: w % 6,
            ..end.clone()
        });
    }
    let (_, map) = run_and_read(&p, &cycles);
    for r in [
        reason::SB_FULL,
        reason::PENDING_RELEASE,
        reason::PENDING_DMA,
    ] {
        assert_eq!(map[(addr::MS_SUB + r) as usize], 0, "reason {r}");
    }
    assert!(map[(addr::MS_SUB + reason::MSHR_FULL) as usize] > 0);
    assert_eq!(map[(addr::MD_SUB + src::LOCAL_SPM) as usize], 0);
    assert_eq!(map[(addr::MD_SUB + src::UNKNOWN) as usize], 0);
    let blame: u64 = map[0x40..0x48].iter().sum();
    assert_eq!(blame, 0, "Σ blame at kernel end");
    let md: u64 = map[0x08..0x10].iter().sum();
    assert_eq!((md, map[0x1a] & 3), (map[4], 0), "I5 at kernel end");
}

/// I9: `cls` is the same when the warps are permuted (10^5 cycles at the default; model and
/// RTL; `md_sel`, `ms_sel` and the attribution move with the warps by design).
#[test]
fn i9_cls_ignores_warp_order() {
    for (preset, n) in [
        ("default", 100_000),
        ("nw4", 10_000),
        ("compute_first", 10_000),
    ] {
        let p = params(preset, &[]);
        let nw = p.nw as usize;
        let cycles = stream(&p, 11, n);
        let perm: Vec<usize> = (0..nw).map(|w| (w * 5 + 3) % nw).collect();
        let permuted: Vec<Inputs> = cycles
            .iter()
            .map(|c| {
                let mut x = c.clone();
                for (w, &from) in perm.iter().enumerate() {
                    x.active[w] = c.active[from];
                    x.inst_avail[w] = c.inst_avail[from];
                    x.sync_wait[w] = c.sync_wait[from];
                    x.haz_load[w] = c.haz_load[from];
                    x.haz_comp[w] = c.haz_comp[from];
                    x.is_mem[w] = c.is_mem[from];
                    x.ms_block[w] = c.ms_block[from];
                    x.fu_block[w] = c.fu_block[from];
                    x.ms_reason[w] = c.ms_reason[from];
                }
                x
            })
            .collect();
        let a = check::directed(&p, &cycles);
        let b = check::directed(&p, &permuted);
        for t in 0..n {
            assert_eq!(a[t].cls, b[t].cls, "{preset} cycle {t}");
            for (w, &from) in perm.iter().enumerate() {
                assert_eq!(b[t].wcls[w], a[t].wcls[from]);
            }
        }
    }
}

/// I10: with one active warp (and the issue following it), `cls` is that warp's class in every
/// one of 10^5 cycles (model and RTL).
#[test]
fn i10_one_active_warp() {
    let p = params("default", &[]);
    let g = Gsi::new(&p);
    let mut warps = vec![WarpPreds::default(); p.nw as usize];
    let mut cycles = stream(&p, 13, 100_000);
    for (t, c) in cycles.iter_mut().enumerate() {
        let only = (t / 97) % p.nw as usize;
        for w in 0..p.nw as usize {
            c.active[w] = w == only;
        }
        cycle_of(c, &mut warps);
        let ready = g.warp_class(&warps[only]) == Class::NoStall;
        c.n_issued = u64::from(ready);
    }
    let out = check::directed(&p, &cycles);
    for (t, o) in out.iter().enumerate() {
        let only = (t / 97) % p.nw as usize;
        assert_eq!(o.cls, o.wcls[only], "cycle {t}");
    }
    // Every class but IDLE (a warp is always active).
    let classes: std::collections::BTreeSet<u64> = out.iter().map(|o| o.cls).collect();
    assert_eq!(classes.len(), 7, "every class reached: {classes:?}");
    assert!(!classes.contains(&Class::Idle.code()));
}

/// The random stimulus reaches what its doc promises: every warp and cycle class, every
/// `ms_cyc_reason` and flush source, flushes charged in their own cycle, saturation of both
/// kinds (small widths), every status bit, writebacks for warps ≥ NW, `clear` and `reset`.
#[test]
fn stimulus_reaches_every_class_and_boundary() {
    for preset in ["small", "nw96"] {
        let p = params(preset, &[]);
        let cycles = stream(&p, 5, 60_000);
        let mut g = Gsi::new(&p);
        let mut warps = vec![WarpPreds::default(); p.nw as usize];
        let (mut wcls, mut cls, mut reasons, mut srcs) =
            ([0u32; 8], [0u32; 8], [0u32; 8], [0u32; 8]);
        let (mut same_cycle, mut beyond, mut status_seen) = (0, 0, 0u8);
        for i in &cycles {
            let c = cycle_of(i, &mut warps);
            let o = g.evaluate(&warps, &c);
            for k in g.wcls() {
                wcls[*k as usize] += 1;
            }
            cls[o.cls as usize] += 1;
            reasons[o.ms_cyc_reason as usize] += 1;
            if let Some(f) = o.flush {
                srcs[f.src as usize] += 1;
                same_cycle += (c.en && o.cls == Class::MemData && f.warp == o.md_sel) as u32;
            }
            beyond += (i.ldwb_valid && i.ldwb_warp >= u64::from(p.nw)) as u32;
            status_seen |= g.status();
            if i.reset {
                g.zero();
            } else {
                g.update(&c, &o);
            }
        }
        println!("{preset}: wcls {wcls:?} cls {cls:?} reasons {reasons:?} srcs {srcs:?} same-cycle flushes {same_cycle} beyond {beyond} status {status_seen:#b}");
        assert!(wcls.iter().all(|&n| n > 100), "{preset} wcls {wcls:?}");
        assert!(cls.iter().all(|&n| n > 50), "{preset} cls {cls:?}");
        assert!(
            reasons[1..7].iter().all(|&n| n > 20),
            "{preset} {reasons:?}"
        );
        let wanted_srcs: Vec<u64> = p.md_sources();
        assert!(
            wanted_srcs.iter().all(|&s| srcs[s as usize] > 20),
            "{preset} {srcs:?}"
        );
        assert!(same_cycle > 20 && beyond > 5, "{preset}");
        let want_status = if preset == "small" {
            0b11_1111
        } else {
            0b11_1100
        };
        assert_eq!(
            status_seen & want_status,
            want_status,
            "{preset} {status_seen:#b}"
        );
        let resets = cycles.iter().filter(|c| c.reset).count();
        let clears = cycles.iter().filter(|c| c.clear).count();
        assert!(resets > 0 && clears > 0, "{preset}");
    }
}
