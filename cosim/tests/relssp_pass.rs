//! Spec §9 A18–A22: the relssp compiler pass (docs/scratchpad-sharing.md §6, [001] §6) on the
//! paper's examples, the issue's shapes and random CFGs.

use proptest::prelude::*;
use smrtl_cosim::kernel::cfg::{Ins, Program};
use smrtl_cosim::kernel::program::{Branch, Kernel, Op};
use smrtl_cosim::kernel::relssp_pass::{access_ranges, place, Mode, Options, Placed, Position};
use smrtl_cosim::sm::sharing_sm::{params_for, SharingSm};

fn example(file: &str) -> Program {
    let path = format!("{}/../examples/relssp/{file}", env!("CARGO_MANIFEST_DIR"));
    Program::parse(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn run(p: &Program, mode: Mode) -> Placed {
    place(
        p,
        &Options {
            mode,
            ..Options::default()
        },
    )
    .unwrap()
}

/// The insertions as `(block, "in" | "after", index)`.
fn inserts(r: &Placed) -> Vec<(String, &'static str, usize)> {
    r.relssp
        .iter()
        .map(|i| {
            let pos = match i.position {
                Position::In => "in",
                Position::After => "after",
            };
            (i.block.clone(), pos, i.index)
        })
        .collect()
}

fn ins(block: &str, pos: &'static str, index: usize) -> (String, &'static str, usize) {
    (block.to_string(), pos, index)
}

/// Whether instruction `i` of a laid-out program touches `[u, R_tb)` (§6.3).
fn in_region(p: &Program, u: u32, i: &Ins) -> bool {
    let off = p.offsets();
    i.var
        .is_some_and(|v| off[v] < p.tb_smem && off[v] + p.vars[v].bytes > u)
}

/// Every path from the entry of an acyclic program, as the instructions it runs.
fn paths(p: &Program) -> Vec<Vec<Ins>> {
    fn walk(p: &Program, b: usize, acc: &mut Vec<Ins>, out: &mut Vec<Vec<Ins>>) {
        let n = acc.len();
        acc.extend(p.blocks[b].instrs.iter().cloned());
        if p.blocks[b].next.is_empty() {
            out.push(acc.clone());
        }
        for &s in &p.blocks[b].next {
            walk(p, s, acc, out);
        }
        acc.truncate(n);
    }
    let mut out = vec![];
    walk(p, 0, &mut vec![], &mut out);
    out
}

/// Instructions a lowered one-warp kernel runs, taking `cbra` targets from `choices` in order
/// (true = the first target), terminators included.
fn dynamic(k: &Kernel, choices: &[bool]) -> usize {
    let code = &k.warps[0];
    let (mut pc, mut n, mut c) = (0usize, 0, choices.iter());
    loop {
        let i = &code[pc];
        n += 1;
        pc = match i.op {
            Op::Exit => return n,
            Op::Bra => i.to[0] as usize,
            Op::Cbra => i.to[usize::from(!*c.next().expect("a choice per branch"))] as usize,
            _ => pc + 1,
        };
    }
}

/// Spec A18, [001] Fig. 13(b): `Entry→BB1→{BB2,BB3}→BB4→Exit`, the last access L2 in BB2.
#[test]
fn a18_fig13b_opt_after_l2_and_in_bb3_postdom_in_bb4() {
    let p = example("fig13b.json");
    let opt = run(&p, Mode::Opt);
    // π5 right after L2 (instruction 2 of BB2), π7 at IN(BB3); not π8 in BB1, not π6 before L2.
    assert_eq!(inserts(&opt), [ins("BB2", "after", 2), ins("BB3", "in", 0)]);
    assert!(opt.split_blocks.is_empty(), "BB3 has a single predecessor");
    assert_eq!(opt.program.blocks[1].instrs[3], "relssp");
    assert_eq!(opt.program.blocks[2].instrs[0], "relssp");
    let post = run(&p, Mode::PostDom);
    assert_eq!(inserts(&post), [ins("BB4", "in", 0)]);
    let none = run(&p, Mode::None);
    assert!(none.relssp.is_empty() && none.split_blocks.is_empty());
    assert_eq!(none.selected, ["A"]);
}

/// Spec A20: a loop `B1→B2→{B2,B3}`: an access in the loop releases at IN(B3), never inside;
/// an access in B1 only releases right after it, before the loop.
#[test]
fn a20_loops_release_outside() {
    let json = |b1: &str, b2: &str| {
        format!(
            r#"{{"shared": [{{"name": "A", "bytes": 64}}], "tb_smem": 64, "t": "1/2",
                "blocks": [{{"name": "B1", "instrs": [{b1}], "next": ["B2"]}},
                           {{"name": "B2", "instrs": [{b2}], "next": ["B2", "B3"],
                             "branch": {{"trips": 3}}}},
                           {{"name": "B3", "instrs": ["alu"], "next": []}}]}}"#
        )
    };
    let in_loop = Program::parse(&json(r#""alu""#, r#""alu", "ld.shared A", "alu""#)).unwrap();
    for mode in [Mode::Opt, Mode::PostDom] {
        let r = run(&in_loop, mode);
        assert_eq!(inserts(&r), [ins("B3", "in", 0)], "{mode}");
        assert!(r.split_blocks.is_empty());
    }
    let before = Program::parse(&json(r#""alu", "st.shared A", "alu""#, r#""alu""#)).unwrap();
    for mode in [Mode::Opt, Mode::PostDom] {
        assert_eq!(
            inserts(&run(&before, mode)),
            [ins("B1", "after", 1)],
            "{mode}"
        );
    }
    // The text-form example: the layout puts the loop's variable in the private region.
    let text = run(&example("a20-loop.txt"), Mode::Opt);
    assert_eq!(text.selected, ["P"]);
    assert_eq!(inserts(&text), [ins("B1", "after", 1)]);
}

/// One thread block of one warp on the SM model; its thread instructions.
fn sm_thread_instructions(p: &Program) -> u64 {
    let k = p.lower(1).kernel;
    let params = params_for(&k, &[]).unwrap();
    SharingSm::new(&params, &k)
        .unwrap()
        .run(None)
        .unwrap()
        .thread_instructions
}

/// Spec A21: `B1→{B2,B3}`, `B2→B3`, the access in B2. OPT: after it in B2 and the split
/// B1→B3 kept as `{relssp; bra B3}` (extras 1 and 2); PostDom: IN(B3) (extra 1).
#[test]
fn a21_split_block_costs_two() {
    let p = example("a21.json");
    let opt = run(&p, Mode::Opt);
    assert_eq!(
        inserts(&opt),
        [ins("B2", "after", 0), ins("split_B1_B3", "in", 0)]
    );
    assert_eq!(opt.split_blocks.len(), 1);
    let s = &opt.split_blocks[0];
    assert_eq!(
        (&s.name[..], &s.from[..], &s.to[..]),
        ("split_B1_B3", "B1", "B3")
    );
    let last = opt.program.blocks.last().unwrap();
    assert_eq!(
        (&last.instrs[..], &last.next[..]),
        (&["relssp".to_string()][..], &["B3".to_string()][..])
    );
    assert_eq!(opt.program.blocks[0].next, ["B2", "split_B1_B3"]);
    let post = run(&p, Mode::PostDom);
    assert_eq!(inserts(&post), [ins("B3", "in", 0)]);

    // Lowered dynamic counts per path (true = via B2).
    let base = p.lower(1).kernel;
    let (k_opt, k_post) = (
        opt.program().lower(1).kernel,
        post.program().lower(1).kernel,
    );
    for (via_b2, opt_extra, post_extra) in [(true, 1, 1), (false, 2, 1)] {
        let b = dynamic(&base, &[via_b2]);
        assert_eq!(
            dynamic(&k_opt, &[via_b2]) - b,
            opt_extra,
            "via B2: {via_b2}"
        );
        assert_eq!(
            dynamic(&k_post, &[via_b2]) - b,
            post_extra,
            "via B2: {via_b2}"
        );
    }

    // The same on the SM model, the branch fixed per run: `trips 2` takes B2, `trips 1` B3.
    for (trips, opt_extra) in [(2, 1), (1, 2)] {
        let with = |q: &Program| {
            let mut q = q.clone();
            q.blocks[0].branch = Some(Branch::Trips(trips));
            sm_thread_instructions(&q)
        };
        let threads = p.threads.unwrap() as u64;
        assert_eq!(
            with(opt.program()) - with(&p),
            opt_extra * threads,
            "trips {trips}"
        );
        assert_eq!(with(post.program()) - with(&p), threads, "trips {trips}");
    }
}

/// A CFG consistent with [001] Fig. 8: A from BB1 to BB4, B in the loop BB2–BB3, C in BB5 and
/// BB6; every block two instructions long, the variables of equal size.
fn fig8() -> Program {
    Program::parse(
        r#"{"shared": [{"name": "A", "bytes": 64}, {"name": "B", "bytes": 64},
                       {"name": "C", "bytes": 64}], "tb_smem": 192, "t": "1/3",
            "blocks": [{"name": "BB1", "instrs": ["st.shared A", "alu"], "next": ["BB2"]},
                       {"name": "BB2", "instrs": ["st.shared B", "alu"], "next": ["BB3"]},
                       {"name": "BB3", "instrs": ["ld.shared B", "alu"], "next": ["BB2", "BB4"]},
                       {"name": "BB4", "instrs": ["ld.shared A", "alu"], "next": ["BB5"]},
                       {"name": "BB5", "instrs": ["st.shared C", "alu"], "next": ["BB6"]},
                       {"name": "BB6", "instrs": ["ld.shared C", "alu"], "next": []}]}"#,
    )
    .unwrap()
}

/// Spec A22: [001] Fig. 9's table (per variable and per pair, IN and OUT) and Example 6.5's
/// choice of {A, B}.
#[test]
fn a22_fig9_access_ranges_and_example_6_5() {
    let p = fig8();
    let r = access_ranges(&p);
    // Rows of Fig. 9: IN A B C, OUT A B C, IN AB BC CA, OUT AB BC CA.
    let table = [
        ("Entry", "fff fff fff fff"),
        ("BB1", "fff tff fff tft"),
        ("BB2", "ttf ttf ttt ttt"),
        ("BB3", "ttf ttf ttt ttt"),
        ("BB4", "tff fff ttt ftt"),
        ("BB5", "fff fft ftt ftt"),
        ("BB6", "fft fff ftt fff"),
        ("Exit", "fff fff fff fff"),
    ];
    let singles: [&[&str]; 3] = [&["A"], &["B"], &["C"]];
    let pairs: [&[&str]; 3] = [&["A", "B"], &["B", "C"], &["C", "A"]];
    for (block, row) in table {
        let b = |x: bool| if x { 't' } else { 'f' };
        let cols = |sets: &[&[&str]; 3], out: bool| -> String {
            sets.iter()
                .map(|s| {
                    b(if out {
                        r.acc_out(block, s).unwrap()
                    } else {
                        r.acc_in(block, s).unwrap()
                    })
                })
                .collect()
        };
        let got = [
            cols(&singles, false),
            cols(&singles, true),
            cols(&pairs, false),
            cols(&pairs, true),
        ]
        .join(" ");
        assert_eq!(got, row, "{block}");
    }
    assert_eq!(r.blocks().len(), 8);
    // Example 6.5: room for one private variable; {A, B} has the smallest range.
    let (ab, bc, ca) = (
        r.cost(&["A", "B"]).unwrap(),
        r.cost(&["B", "C"]).unwrap(),
        r.cost(&["C", "A"]).unwrap(),
    );
    assert!(ab < bc && ab < ca, "{ab} {bc} {ca}");
    let placed = run(&p, Mode::None);
    assert_eq!(placed.u, 64);
    assert_eq!(placed.selected, ["A", "B"]);
    assert_eq!(placed.cost, ab);
    assert_eq!(
        placed.layout,
        [("C".into(), 0), ("A".into(), 64), ("B".into(), 128)]
    );
}

/// Spec A22, [001] Example 5.2: V1 and V4 are accessed at the start and the end (P1 … P8), V2
/// and V3 in the middle (P3 … P6): {V2, V3} is preferred to {V1, V4}.
#[test]
fn a22_example_5_2_prefers_v2_v3() {
    let p = Program::parse(
        r#"{"shared": [{"name": "V1", "bytes": 32}, {"name": "V2", "bytes": 32},
                       {"name": "V3", "bytes": 32}, {"name": "V4", "bytes": 32}],
            "tb_smem": 128, "t": "1/2",
            "blocks": [{"name": "P1", "instrs": ["st.shared V1", "st.shared V4"], "next": ["P3"]},
                       {"name": "P3", "instrs": ["st.shared V2", "st.shared V3", "alu"],
                        "next": ["P6"]},
                       {"name": "P6", "instrs": ["ld.shared V2", "ld.shared V3", "alu"],
                        "next": ["P8"]},
                       {"name": "P8", "instrs": ["ld.shared V1", "ld.shared V4"], "next": []}]}"#,
    )
    .unwrap();
    let r = access_ranges(&p);
    assert!(r.cost(&["V2", "V3"]).unwrap() < r.cost(&["V1", "V4"]).unwrap());
    let placed = run(&p, Mode::Opt);
    assert_eq!(placed.selected, ["V2", "V3"]);
    assert_eq!(placed.cost, 5);
    assert_eq!(inserts(&placed), [ins("P6", "after", 1)]);
}

/// Ties go to fewer bytes in `S`, then to the earlier declared variables.
#[test]
fn ties_fewer_bytes_then_declaration_order() {
    let p = Program::parse(
        r#"{"shared": [{"name": "X", "bytes": 32}, {"name": "Y", "bytes": 32},
                       {"name": "Z", "bytes": 64}], "tb_smem": 128, "t": "1/2",
            "blocks": [{"name": "B", "instrs": ["alu"], "next": []}]}"#,
    )
    .unwrap();
    // Nothing is accessed: every feasible set costs 0; {Z} and {X, Y} both have 64 bytes.
    let r = run(&p, Mode::Opt);
    assert_eq!(
        (r.cost, &r.selected[..]),
        (0, &["X".to_string(), "Y".to_string()][..])
    );
    assert!(r.relssp.is_empty());
}

/// Bad inputs are refused with one line.
#[test]
fn refuses_relssp_in_the_input_and_too_many_variables() {
    let p = Program::parse(
        r#"{"shared": [{"name": "A", "bytes": 8}],
            "blocks": [{"name": "B", "instrs": ["relssp"], "next": []}]}"#,
    )
    .unwrap();
    let e = place(&p, &Options::default()).unwrap_err().0;
    assert!(e.contains("already holds a relssp"), "{e}");
    let vars: Vec<String> = (0..21)
        .map(|i| format!(r#"{{"name": "V{i}", "bytes": 4}}"#))
        .collect();
    let p = Program::parse(&format!(
        r#"{{"shared": [{}], "blocks": [{{"name": "B", "instrs": ["alu"], "next": []}}]}}"#,
        vars.join(",")
    ))
    .unwrap();
    let e = place(&p, &Options::default()).unwrap_err().0;
    assert!(e.contains("at most 20"), "{e}");
}

/// A random block: instructions as (kind, var), successor count, successor picks.
type RawBlock = (Vec<(u8, usize)>, usize, (usize, usize));

/// A random acyclic program from `blocks`; edges only go forward.
fn build(sizes: &[u32], t: &str, blocks: &[RawBlock]) -> Program {
    let nb = blocks.len();
    let bs: Vec<String> = blocks
        .iter()
        .enumerate()
        .map(|(i, (instrs, k, (a, b)))| {
            let instrs: Vec<String> = instrs
                .iter()
                .map(|&(kind, v)| {
                    let v = v % sizes.len();
                    match kind {
                        0 => "\"alu\"".to_string(),
                        1 => "\"ld.global\"".to_string(),
                        2 => format!("\"ld.shared V{v}\""),
                        _ => format!("\"st.shared V{v}\""),
                    }
                })
                .collect();
            let left = nb - i - 1;
            let next: Vec<String> = match (left, k) {
                (0, _) | (_, 0) => vec![],
                // A back edge as the second successor: a loop that can always be left.
                (_, 3) => vec![
                    format!("\"B{}\"", i + 1 + a % left),
                    format!("\"B{}\"", b % (i + 1)),
                ],
                (_, 1) => vec![format!("\"B{}\"", i + 1 + a % left)],
                _ => vec![
                    format!("\"B{}\"", i + 1 + a % left),
                    format!("\"B{}\"", i + 1 + b % left),
                ],
            };
            format!(
                r#"{{"name": "B{i}", "instrs": [{}], "next": [{}]}}"#,
                instrs.join(","),
                next.join(",")
            )
        })
        .collect();
    let vars: Vec<String> = sizes
        .iter()
        .enumerate()
        .map(|(i, s)| format!(r#"{{"name": "V{i}", "bytes": {s}}}"#))
        .collect();
    Program::parse(&format!(
        r#"{{"shared": [{}], "t": "{t}", "blocks": [{}]}}"#,
        vars.join(","),
        bs.join(",")
    ))
    .unwrap()
}

/// A walk of `p` from its entry to an exit, branching by `rng` (a 64-bit LCG state); `None`
/// if it takes more than 500 blocks.
fn walk(p: &Program, rng: &mut u64) -> Option<Vec<Ins>> {
    let (mut b, mut out) = (0, vec![]);
    for _ in 0..500 {
        out.extend(p.blocks[b].instrs.iter().cloned());
        *rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        match p.blocks[b].next[..] {
            [] => return Some(out),
            [t] => b = t,
            [x, y] => b = if *rng >> 63 == 1 { x } else { y },
            _ => unreachable!(),
        }
    }
    None
}

/// The paths of `p` as instruction texts, relssp left out, sorted.
fn plain_paths(p: &Program) -> Vec<Vec<String>> {
    let mut v: Vec<Vec<String>> = paths(p)
        .iter()
        .map(|path| {
            path.iter()
                .filter(|i| i.op != Op::Relssp)
                .map(|i| i.text(&p.vars))
                .collect()
        })
        .collect();
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Spec A19: on random acyclic CFGs, OPT and PostDom make every Entry→Exit path run
    /// exactly one relssp with no shared-region access after it when the program has a
    /// shared-region access, and none otherwise; the paths are otherwise unchanged.
    #[test]
    fn a19_every_path_releases_once_after_its_last_access(
        sizes in prop::collection::vec(prop_oneof![Just(4u32), Just(8), Just(16), Just(32)], 1..=4),
        t in prop_oneof![Just("1/4"), Just("1/2"), Just("3/4")],
        blocks in prop::collection::vec(
            (prop::collection::vec((0u8..4, 0usize..4), 0..4), 0usize..3, (0usize..8, 0usize..8)),
            1..=7),
    ) {
        let p = build(&sizes, t, &blocks);
        for mode in [Mode::Opt, Mode::PostDom, Mode::None] {
            let r = run(&p, mode);
            let q = r.program();
            prop_assert_eq!(&Program::from_file(r.program.clone()).unwrap(), q);
            let any_access = q.blocks.iter().flat_map(|b| &b.instrs).any(|i| in_region(q, r.u, i));
            let want = usize::from(any_access && mode != Mode::None);
            for path in paths(q) {
                let rel: Vec<usize> = (0..path.len()).filter(|&i| path[i].op == Op::Relssp).collect();
                prop_assert_eq!(rel.len(), want, "{} {:?}", mode, r.relssp);
                if let Some(&k) = rel.first() {
                    prop_assert!(!path[k..].iter().any(|i| in_region(q, r.u, i)), "access after relssp");
                }
            }
            prop_assert_eq!(plain_paths(q), plain_paths(&p));
        }
    }

    /// Spec A19 with loops: every walk from entry to exit of the transformed program runs
    /// exactly one relssp (none without shared-region accesses), with no shared-region access
    /// after it.
    #[test]
    fn a19_with_loops_every_walk_releases_once(
        sizes in prop::collection::vec(prop_oneof![Just(4u32), Just(8), Just(16), Just(32)], 1..=4),
        t in prop_oneof![Just("1/4"), Just("1/2"), Just("3/4")],
        blocks in prop::collection::vec(
            (prop::collection::vec((0u8..4, 0usize..4), 0..4), 0usize..4, (0usize..8, 0usize..8)),
            1..=7),
        seed in any::<u64>(),
    ) {
        let p = build(&sizes, t, &blocks);
        for mode in [Mode::Opt, Mode::PostDom] {
            let r = run(&p, mode);
            let q = r.program();
            let any_access = q.blocks.iter().flat_map(|b| &b.instrs).any(|i| in_region(q, r.u, i));
            let mut rng = seed;
            for _ in 0..20 {
                let Some(path) = walk(q, &mut rng) else { continue };
                let rel: Vec<usize> = (0..path.len()).filter(|&i| path[i].op == Op::Relssp).collect();
                prop_assert_eq!(rel.len(), usize::from(any_access), "{} {:?}", mode, r.relssp);
                if let Some(&k) = rel.first() {
                    prop_assert!(!path[k..].iter().any(|i| in_region(q, r.u, i)), "access after relssp");
                }
            }
        }
    }
}
