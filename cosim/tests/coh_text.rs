//! The coherent system's kernel language (docs/stall-inspector.md §10.4): the parser (every
//! mnemonic, every error), control flow (loops, CONTROL for the fetch redirect), values
//! (special registers, functional loads and stores, atomics at the L2, a CAS spin lock), and
//! the example kernels under examples/coh/.

use smrtl_cosim::blocks::stall_inspector::{Class, Gsi, Params};
use smrtl_cosim::kernel::cfg::Program;
use smrtl_cosim::sm::coh_sm::params::CohParams;
use smrtl_cosim::sm::coh_sm::prog::{AtomF, Cond, Func, Op, IMM, NONE, SR_NWARP, SR_SM};
use smrtl_cosim::sm::coh_sm::text::{self, CohKernel};
use smrtl_cosim::sm::coh_sm::{probe, CohSystem, SmView};

/// A kernel's system with its own params (and `extra` on top).
fn system(src: &str, extra: &[(&str, &str)]) -> (CohKernel, CohSystem) {
    let k = text::parse(src).unwrap_or_else(|e| panic!("parses: {e}"));
    let p = k.params(None, extra).expect("params");
    let sys = CohSystem::from_kernel(&p, &k).expect("builds");
    (k, sys)
}

/// Runs to the end; every cycle's views.
fn run(sys: &mut CohSystem) -> Vec<Vec<SmView>> {
    let mut trace = vec![];
    sys.run_with(2_000_000, |s| {
        trace.push((0..s.sms()).map(|i| s.view(i).clone()).collect())
    })
    .expect("finishes");
    trace
}

fn example(name: &str) -> String {
    let path = format!("{}/../examples/coh/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn every_mnemonic_parses_to_its_op() {
    let k = text::parse(
        "kernel all\nwarps 3\nseed 9\nparam protocol=denovo\nA:\n\
         ld.global [r3 + 4*lane] -> r1\n st.global [0x1000 + 128*lane] lanes 1 r2\n\
         atom.add [r4] r1 -> r5\n atom.exch [8] %warp -> r6\n atom.cas [16] r1 r2 -> r7\n\
         fence.acq\n fence.rel\n bar\n ld.shared [lane*8] -> r8\n st.shared [64] r8\n\
         ld.stash [%sm + 4*lane] -> r9\n st.stash [0] r9\n stash.map 0 0x4000 512\n\
         dma.ld 0 0x8000 256\n dma.st 256 0x9000 128\n alu r1 r2 -> r10\n mul r1 3 -> r11\n\
         sfu r1 -> r12\n mov 5 -> r13\n add r1 r2 -> r14\n sub r1 1 -> r14\n and r1 1 -> r14\n\
         or r1 1 -> r14\n xor r1 1 -> r14\n shl r1 1 -> r14\n shr r1 1 -> r14\n min r1 1 -> r14\n\
         max r1 1 -> r14\n setlt r1 1 -> r14\n seteq r1 1 -> r14\n setne r1 1 -> r14\n\
         hash r1 -> r14\n cbra.nz r1 A B\nB:\n cbra.z %nwarp A C\nC:\n cbra A D trips 3\nD:\n\
         bra A\nE:\n exit\n",
    )
    .expect("parses");
    assert_eq!((k.name.as_str(), k.warps, k.seed), ("all", 3, 9));
    assert_eq!(k.sets, vec![("protocol".to_string(), "denovo".to_string())]);
    let ops = &k.ops;
    assert_eq!(ops.len(), 37);
    match ops[0] {
        Op::Ld { dst: 1, at } => assert_eq!((at.reg, at.base, at.stride, at.lanes), (3, 0, 4, 32)),
        o => panic!("{o:?}"),
    }
    match ops[1] {
        Op::St { src: 2, at } => assert_eq!((at.base, at.stride, at.lanes), (0x1000, 128, 1)),
        o => panic!("{o:?}"),
    }
    assert!(matches!(
        ops[4],
        Op::Atom {
            f: AtomF::Cas,
            cmp: 1,
            src: 2,
            dst: 7,
            ..
        }
    ));
    assert_eq!(
        ops[6..8],
        [Op::Release, Op::Barrier],
        "fence.rel, bar in place"
    );
    match ops[10] {
        Op::StashLd { dst: 9, at } => assert_eq!((at.reg, at.stride), (SR_SM, 4)),
        o => panic!("{o:?}"),
    }
    assert_eq!(
        ops[13],
        Op::Dma {
            spm: 0,
            global: 0x8000,
            bytes: 256,
            to_spm: true,
            reg: NONE,
        }
    );
    assert_eq!(
        ops[16],
        Op::Calc {
            f: Func::Mul,
            dst: 11,
            a: 1,
            b: IMM,
            imm: 3
        }
    );
    assert!(matches!(
        ops[17],
        Op::Calc {
            f: Func::Sfu,
            a: 1,
            b: NONE,
            ..
        }
    ));
    assert!(matches!(
        ops[32],
        Op::Cbra {
            to: [0, 33],
            cond: Cond::Nz(1),
            id: 0
        }
    ));
    assert!(matches!(
        ops[33],
        Op::Cbra {
            to: [0, 34],
            cond: Cond::Z(SR_NWARP),
            id: 0
        }
    ));
    assert!(matches!(
        ops[34],
        Op::Cbra {
            to: [0, 35],
            cond: Cond::Rule(_),
            id: 0
        }
    ));
    assert_eq!(ops[35..], [Op::Bra { to: 0 }, Op::Exit]);
}

#[test]
fn bad_input_gives_one_line_naming_the_line_and_what_is_allowed() {
    let cases: &[(&str, &str)] = &[
        (
            "A:\n frob r1\n",
            "line 2: unknown instruction `frob`; allowed: ld.global",
        ),
        (
            "A:\n ld.global [r1] \n",
            "line 2: `ld.global` needs `-> rD`",
        ),
        (
            "A:\n ld.global -> r1\n",
            "line 2: `ld.global` needs an address",
        ),
        (
            "A:\n st.global [0] r1 -> r2\n",
            "line 2: `st.global` writes no register",
        ),
        (
            "A:\n st.global [0] 5\n",
            "`st.global` operand `5`: a register",
        ),
        (
            "A:\n add r1 -> r2\n",
            "line 2: `add` takes 2 operands, got 1",
        ),
        (
            "A:\n alu r1 r2 r3 -> r4\n",
            "`alu` takes 0..=2 operands, got 3",
        ),
        (
            "A:\n add r1 r2 -> %sm\n",
            "destination `%sm`; allowed: r0..r63",
        ),
        (
            "A:\n add r64 r2 -> r1\n",
            "register `r64`; allowed: r0..r63",
        ),
        (
            "A:\n add r1 q -> r1\n",
            "operand `q`; allowed: r0..r63, %sm, %warp, %nsm, %nwarp",
        ),
        (
            "A:\n add 1 2 -> r1\n",
            "one immediate per instruction at most",
        ),
        ("A:\n ld.global [r1 + r2] -> r3\n", "one register at most"),
        (
            "A:\n ld.global [4*lane + 8*lane] -> r3\n",
            "one lane term at most",
        ),
        (
            "A:\n ld.global [x*lane] -> r3\n",
            "address term `x*lane`; allowed",
        ),
        (
            "A:\n ld.global [0] lanes 33 -> r3\n",
            "lanes 33; allowed: 1..=32",
        ),
        ("A:\n ld.global [0] lanes -> r3\n", "`lanes` needs 1..=32"),
        ("A:\n ld.global [0 -> r3\n", "`[` without `]`"),
        ("A:\n fence.acq r1\n", "`fence.acq` takes 0 operands, got 1"),
        ("A:\n bar [0]\n", "`bar` takes no address"),
        (
            "A:\n dma.ld 0 x 4\n",
            "`dma.ld` operand `x`; allowed: SPM GLOBAL BYTES, numbers (decimal or 0x hex), GLOBAL also `[rX + N]`",
        ),
        (
            "A:\n dma.st 0 [r1 + 4*lane] 128\n",
            "`dma.st`: GLOBAL `[r1 + 4*lane]` takes no lane term",
        ),
        (
            "A:\n stash.map 0 [r1] 128 5\n",
            "`stash.map` takes 2 operands, got 3",
        ),
        (
            "A:\n dma.ld 0 0 4096 lanes 2\n",
            "`dma.ld` takes no `lanes`",
        ),
        (
            "A:\n stash.map 0 0 2000000\n",
            "`stash.map`: scratchpad range 0 + 2000000 bytes; allowed: SPM + BYTES at most 1048576",
        ),
        (
            "A:\n dma.st 0 0xffffffffffff 4\n",
            "global range 0xffffffffffff + 4 bytes; allowed: below",
        ),
        (
            "A:\n cbra.nz r1 A\n",
            "line 2: `cbra.nz` needs a register and two labels",
        ),
        ("A:\n cbra.nz r1 A B C\n", "unexpected `C`"),
        (
            "A:\n cbra.z 7 A A\n",
            "line 2: branch register `7`; allowed: r0..r63, %sm",
        ),
        ("A:\n bra NOWHERE\n", "line 2: unknown label `NOWHERE`"),
        (
            "A:\n cbra A A trips 0\n",
            "line 2: `trips` 0; allowed: at least 1",
        ),
        (
            "A:\n cbra A A sometimes\n",
            "`cbra` rule `sometimes`; allowed: `trips N`, `p F` or `frac F`",
        ),
        (
            "threads 64\nA:\n exit\n",
            "line 1: header `threads` is for seed-001 kernels",
        ),
        ("frob 3\nA:\n exit\n", "unknown header `frob`"),
        (
            "warps x\nA:\n exit\n",
            "line 1: `warps` needs a non-negative integer",
        ),
        ("param nope=3\nA:\n exit\n", "line 1: "),
        ("param mshrs=0\nA:\n exit\n", "mshrs"),
        ("A:\n exit\nA:\n exit\n", "line 3: block `A` declared twice"),
        ("kernel x\n", "no blocks"),
        (
            "A:\n exit\n add r1 r1 -> r1\n",
            "follows block `A`'s terminator",
        ),
    ];
    for (src, want) in cases {
        let e = text::parse(src).expect_err(src);
        assert!(e.contains(want), "{src:?}: got `{e}`, want `{want}`");
        assert!(!e.contains('\n'), "one line: {e}");
    }
    let k = text::parse("warps 9\nA:\n exit\n").expect("parses");
    let p = CohParams {
        warps: 8,
        ..CohParams::default()
    };
    let e = CohSystem::from_kernel(&p, &k)
        .err()
        .expect("too many warps");
    assert!(e.contains("warps 9; allowed: 1..=8"), "{e}");
}

#[test]
fn seed_001_parser_refuses_the_coherent_kernels_items_and_reads_its_own_files() {
    let e = Program::parse("A:\n alu\n cbra.nz r1 A A\n").expect_err("register branch");
    assert!(e.0.contains("line 3: `cbra.nz` / `cbra.z`"), "{e}");
    let e = Program::parse("warps 4\ntb_smem 64\nA:\n alu\n").expect_err("warps");
    assert!(e.0.contains("line 1: unknown header `warps`"), "{e}");
    let ok = "tb_smem 64\nA:\n alu\n cbra A B trips 2\nB:\n exit\n";
    Program::parse(ok).expect("seed-001 text still parses");
}

#[test]
fn loops_run_their_trips_and_values_reach_memory() {
    let (k, mut sys) = system(&example("loop.coh"), &[]);
    run(&mut sys);
    let n = u64::from(k.warps);
    let p = sys.params().clone();
    for s in 0..u64::from(p.sms) {
        for w in 0..n {
            assert_eq!(sys.word(0x10000 + 8 * (s * n + w)), 20, "SM {s} warp {w}");
        }
    }
}

/// Cycles warp 0 of SM 0 was active without an instruction (CONTROL), and taken branches.
fn control_cycles(src: &str, redirect: &str) -> (usize, u64) {
    let (_, mut sys) = system(src, &[("redirect", redirect)]);
    let trace = run(&mut sys);
    let ctrl = trace
        .iter()
        .filter(|c| c[0].warps[0].active && !c[0].warps[0].inst_avail)
        .count();
    (ctrl, sys.reg(0, 0, 2))
}

#[test]
fn a_taken_branch_is_control_for_the_redirect_cycles() {
    // 6 trips: 5 taken back edges, the last falls through; then one taken `bra` to the end.
    let src = "warps 1\nparam sms=1\nparam warps=1\nL:\n add r2 1 -> r2\n cbra L N trips 6\n\
               N:\n bra E\nX:\n exit\nE:\n exit\n";
    for r in ["0", "1", "3"] {
        let (ctrl, trips) = control_cycles(src, r);
        assert_eq!(trips, 6);
        assert_eq!(ctrl, 6 * r.parse::<usize>().unwrap(), "redirect {r}");
    }
    // Running out of an inner `cbra` into the next block is not taken: no CONTROL.
    let (ctrl, _) = control_cycles(
        "warps 1\nparam sms=1\nparam warps=1\nL:\n add r2 1 -> r2\n cbra N L p 1/2\nN:\n exit\n",
        "2",
    );
    assert_eq!(ctrl, 0, "`p 1/2` to the next block first");
}

#[test]
fn a_cas_spin_lock_gives_mutual_exclusion_and_sync_stalls() {
    for protocol in ["gpu", "denovo"] {
        let (k, mut sys) = system(&example("lock.coh"), &[("protocol", protocol)]);
        let p = sys.params().clone();
        let mut feeds: Vec<_> = (0..sys.sms())
            .map(|_| {
                let ip = Params {
                    nw: p.warps,
                    ..Params::default()
                };
                (Gsi::new(&ip), probe::Feed::new(p.warps as usize))
            })
            .collect();
        let mut sync = 0u64;
        sys.run_with(2_000_000, |s| {
            for (i, (g, f)) in feeds.iter_mut().enumerate() {
                let v = s.view(i);
                sync += v.warps.iter().filter(|w| w.sync_wait).count() as u64;
                f.step(g, v);
            }
        })
        .expect("finishes");
        let total = u64::from(p.sms) * u64::from(k.warps) * 3;
        assert_eq!(sys.word(0x4000), total, "{protocol}: every increment kept");
        assert_eq!(sys.word(0x3000), 0, "{protocol}: nobody inside twice");
        assert_eq!((sys.word(0x1000), sys.word(0x2000)), (0, 0), "{protocol}");
        assert!(sync > 0, "{protocol}: atomics are SYNC");
        for (s, (g, _)) in feeds.iter().enumerate() {
            assert_eq!(g.status(), 0, "{protocol}");
            let total: u64 = Class::ALL.iter().map(|&c| g.top(c)).sum();
            assert_eq!(total, sys.cycle(), "{protocol}: I1");
            assert_eq!(g.top(Class::NoStall), sys.stats(s).issued, "{protocol}: I2");
        }
    }
}

#[test]
fn atomics_return_the_value_at_the_l2_in_order() {
    // Every warp of 3 SMs adds 1 to one counter; the old values are 0..N-1, each once.
    let src = "warps 4\nparam sms=3\nparam warps=4\nA:\n mov 1 -> r1\n\
               atom.add [0x100] r1 -> r2\n mul %sm %nwarp -> r3\n add r3 %warp -> r3\n\
               shl r3 3 -> r3\n add r2 100 -> r4\n st.global [r3 + 0x8000] r4\n exit\n";
    let (_, mut sys) = system(src, &[]);
    run(&mut sys);
    let mut got: Vec<u64> = (0..12).map(|i| sys.word(0x8000 + 8 * i)).collect();
    got.sort();
    assert_eq!(got, (100..112).collect::<Vec<_>>());
    assert_eq!(sys.word(0x100), 12);
}

#[test]
fn every_example_runs_to_the_end_under_both_protocols() {
    let dir = format!("{}/../examples/coh", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples/coh")
        .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
        .filter(|n| n.ends_with(".coh"))
        .collect();
    names.sort();
    assert!(names.len() >= 12, "{names:?}");
    for n in &names {
        for protocol in ["gpu", "denovo"] {
            let set = [("protocol", protocol), ("sms", "2")];
            let (_, mut sys) = system(&example(n), &set);
            sys.run(5_000_000)
                .unwrap_or_else(|e| panic!("{n} {protocol}: {e}"));
        }
    }
}

#[test]
fn the_compute_example_computes() {
    let (_, mut sys) = system(&example("compute.coh"), &[]);
    run(&mut sys);
    // setne(r12, seteq(r12, r12) = 1): 1 unless r12 is 1.
    assert!(sys.word(0x2000) <= 1);
    let (_, mut sys) = system(&example("dma.coh"), &[]);
    run(&mut sys);
    // Scratchpad words were 0: the copy back holds 1 in every word of the first 128 bytes.
    assert_eq!(sys.word(0x30000), 1);
    assert_eq!(sys.word(0x30000 + 124), 1);
}

/// A deterministic generator for the mutations.
fn rand(s: &mut u64) -> u64 {
    *s = s
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *s >> 33
}

#[test]
fn mutated_examples_never_panic() {
    // Lines dropped, duplicated or swapped, tokens replaced by others of the corpus: parse
    // gives a one-line error or a kernel that runs (or reports its cycle limit).
    let dir = format!("{}/../examples/coh", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("examples/coh")
        .map(|e| std::fs::read_to_string(e.expect("entry").path()).expect("text"))
        .collect();
    files.sort();
    let words: Vec<String> = files
        .iter()
        .flat_map(|f| f.split_whitespace().map(str::to_string))
        .chain(["0xffffffffffffffff", "r63", "lanes", "[", "]", "->", "%nsm"].map(String::from))
        .collect();
    let cases: u64 = std::env::var("COH_TEXT_FUZZ")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let mut s = 7u64;
    let (mut ok, mut refused) = (0, 0);
    for _ in 0..cases {
        let f = &files[(rand(&mut s) % files.len() as u64) as usize];
        let mut lines: Vec<String> = f.lines().map(str::to_string).collect();
        for _ in 0..1 + rand(&mut s) % 3 {
            let i = (rand(&mut s) % lines.len() as u64) as usize;
            match rand(&mut s) % 4 {
                0 => {
                    lines.remove(i);
                }
                1 => lines.insert(i, lines[i].clone()),
                2 => {
                    let j = (rand(&mut s) % lines.len() as u64) as usize;
                    lines.swap(i, j);
                }
                _ => {
                    let mut t: Vec<String> =
                        lines[i].split_whitespace().map(str::to_string).collect();
                    if !t.is_empty() {
                        let k = (rand(&mut s) % t.len() as u64) as usize;
                        t[k] = words[(rand(&mut s) % words.len() as u64) as usize].clone();
                    }
                    lines[i] = t.join(" ");
                }
            }
            if lines.is_empty() {
                lines.push("A:".into());
            }
        }
        let src = lines.join("\n");
        match text::parse(&src) {
            Err(e) => {
                assert!(!e.contains('\n'), "{e}");
                refused += 1;
            }
            Ok(k) => {
                let built = k
                    .params(None, &[("sms", "2")])
                    .and_then(|p| CohSystem::from_kernel(&p, &k));
                if let Ok(mut sys) = built {
                    let _ = sys.run(50_000);
                }
                ok += 1;
            }
        }
    }
    assert!(ok > 0 && refused > 0, "{ok} ran, {refused} refused");
}

/// Nodes of the UTS tree of examples/coh/uts.coh and utsd.coh with `workers` workers.
fn uts_nodes(workers: u64) -> u64 {
    use smrtl_cosim::sm::coh_sm::prog::mix;
    let children = |n: u64| {
        if n == 0 {
            4 * workers
        } else if mix(mix(n) ^ n) & 15 < 6 {
            2
        } else {
            0
        }
    };
    let (mut stack, mut count) = (vec![0u64], 0);
    while let Some(n) = stack.pop() {
        count += 1;
        stack.extend((0..children(n)).map(|k| mix(n + k + 1)));
    }
    count
}

/// Runs a UTS kernel on 2 SMs; (cycles, nodes processed, expected nodes).
fn uts(file: &str, protocol: &str) -> (u64, u64, u64) {
    let (k, mut sys) = system(&example(file), &[("sms", "2"), ("protocol", protocol)]);
    let workers = 2 * u64::from(k.warps);
    let cycles = sys.run(20_000_000).expect("finishes");
    let done: u64 = (0..workers).map(|i| sys.word(0x8000 + 8 * i)).sum();
    (cycles, done, uts_nodes(workers))
}

#[test]
fn uts_and_utsd_process_every_node_once() {
    for protocol in ["gpu", "denovo"] {
        let (t_uts, done, want) = uts("uts.coh", protocol);
        assert_eq!(done, want, "uts {protocol}");
        let (t_utsd, done, want) = uts("utsd.coh", protocol);
        assert_eq!(done, want, "utsd {protocol}");
        eprintln!("{protocol}: {want} nodes; uts {t_uts} cycles, utsd {t_utsd}");
    }
}

#[test]
fn the_implicit_kernels_compute_every_element_under_the_mshr_sweep() {
    for file in ["implicit-spm.coh", "implicit-dma.coh", "implicit-stash.coh"] {
        for n in ["32", "256"] {
            let (_, mut sys) = system(&example(file), &[("mshrs", n), ("sb_entries", n)]);
            let cycles = sys.run(20_000_000).expect("finishes");
            // 16,384 elements of 8 bytes (the kernels' derivation), each computed once.
            let bad = (0..16 * 1024u64).find(|i| sys.word(0x100000 + 8 * i) != 1);
            assert_eq!(bad, None, "{file} mshrs {n}: an element not computed");
            let st = sys.stats(0);
            eprintln!(
                "{file} mshrs {n}: {cycles} cycles, issued {}, LSU stuck {:?}",
                st.issued, st.lsu_stuck
            );
        }
    }
}

/// The case studies at their own sizes (15 SMs for UTS / UTSD), each SM's inspector summed:
/// cycles and the top-level classes (docs/stall-inspector.md §10.4):
/// `cargo test --release -p smrtl-cosim --test coh_text -- --ignored --nocapture`.
#[test]
#[ignore]
fn case_study_profiles() {
    let runs = [
        ("uts.coh", "gpu"),
        ("uts.coh", "denovo"),
        ("utsd.coh", "gpu"),
        ("utsd.coh", "denovo"),
        ("implicit-spm.coh", "denovo"),
        ("implicit-dma.coh", "denovo"),
        ("implicit-stash.coh", "denovo"),
    ];
    for (file, protocol) in runs {
        let (_, mut sys) = system(&example(file), &[("protocol", protocol)]);
        let p = sys.params().clone();
        let ip = Params {
            nw: p.warps,
            ..Params::default()
        };
        let mut g: Vec<(Gsi, probe::Feed)> = (0..p.sms)
            .map(|_| (Gsi::new(&ip), probe::Feed::new(p.warps as usize)))
            .collect();
        let t0 = std::time::Instant::now();
        let cycles = sys
            .run_with(50_000_000, |s| {
                for (i, (gsi, f)) in g.iter_mut().enumerate() {
                    f.step(gsi, s.view(i));
                }
            })
            .expect("finishes");
        let tops: Vec<String> = Class::ALL
            .iter()
            .map(|&c| {
                let n: u64 = g.iter().map(|(gsi, _)| gsi.top(c)).sum();
                format!("{c:?} {:.3}", n as f64 / (cycles * u64::from(p.sms)) as f64)
            })
            .collect();
        eprintln!(
            "{file} {protocol}: {cycles} cycles ({:.1} s): {}",
            t0.elapsed().as_secs_f64(),
            tops.join(", ")
        );
    }
}

#[test]
fn compute_units_keep_their_latency_and_initiation_interval() {
    // Cycles between the two instructions' issues, and the cycles the second waited as
    // COMP_STRUCT (unit busy) or COMP_DATA (result not ready).
    let gap = |body: &str| {
        let src = format!("warps 1\nparam sms=1\nparam warps=1\nA:\n{body}\n exit\n");
        let (_, mut sys) = system(&src, &[]);
        let trace = run(&mut sys);
        let at: Vec<usize> = (0..trace.len())
            .filter(|&c| trace[c][0].issued == 1)
            .collect();
        let w = |c: usize| trace[c][0].warps[0];
        let fu = (at[0] + 1..at[1]).filter(|&c| w(c).fu_block).count();
        let data = (at[0] + 1..at[1]).filter(|&c| w(c).haz_comp).count();
        (at[1] - at[0], fu, data)
    };
    let p = CohParams::default();
    let (mul_ii, sfu_ii, alu_lat) = (p.mul_ii as usize, p.sfu_ii as usize, p.alu_lat as usize);
    assert_eq!(
        gap(" mul r1 r2 -> r3\n mul r4 r5 -> r6"),
        (mul_ii, mul_ii - 1, 0)
    );
    assert_eq!(gap(" sfu r1 -> r3\n sfu r4 -> r6"), (sfu_ii, sfu_ii - 1, 0));
    assert_eq!(
        gap(" sfu r1 -> r3\n add r4 1 -> r6"),
        (1, 0, 0),
        "units are apart"
    );
    assert_eq!(
        gap(" add r1 1 -> r1\n add r1 1 -> r1"),
        (alu_lat, 0, alu_lat - 1)
    );
}
