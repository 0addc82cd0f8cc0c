//! Programs with control flow on the thread-block-residency SM model
//! (docs/scratchpad-sharing.md §6.0): random CFGs with loops and per-warp coin branches finish,
//! each warp executes exactly the path a reference walk of the CFG gives, runs are
//! deterministic, and `sharing_core` in the loop agrees every cycle (shrunk on failure).

use proptest::strategy::{Strategy, ValueTree};
use smrtl_cosim::kernel::cfg::Program;
use smrtl_cosim::kernel::program::Op;
use smrtl_cosim::kernel::relssp_pass::{place, Mode, Options, Placed};
use smrtl_cosim::sm::sharing_sm::{CycleRecord, Outcome, SharingSm, SmError, SmStats};
use smrtl_hdl::blocks::sharing::Shape;
use smrtl_testbench::blocks::sharing_core::{cosim_kernel, programs, rusthdl, ProgramCase};
use smrtl_testbench::check::{self, runner};

fn shapes() -> Vec<Shape> {
    let small = Shape::small();
    vec![
        small.clone(),
        Shape {
            nsched: 1,
            ..small.clone()
        },
        Shape {
            nsched: 4,
            warps: 16,
            slots: 8,
            ..small
        },
    ]
}

/// Instructions warp `warp` (global id) executes, walking `p` as docs §6.0 defines it: each
/// block's instructions, then its terminator — `exit`, `cbra` and a `bra` that does not fall
/// through count one each.
fn path_length(p: &Program, seed: u64, warp: u64) -> u64 {
    let ids: Vec<u32> = p
        .blocks
        .iter()
        .scan(0u32, |n, b| {
            let id = *n;
            *n += u32::from(b.next.len() == 2);
            Some(id)
        })
        .collect();
    let mut visits = vec![0u32; p.blocks.len()];
    let (mut b, mut len) = (0usize, 0u64);
    loop {
        let blk = &p.blocks[b];
        len += blk.instrs.len() as u64 + p.terminator_len(b) as u64;
        b = match blk.next[..] {
            [] => return len,
            [t] => t,
            [x, y] => {
                let rule = blk.branch.unwrap_or_default();
                let first = rule.first(seed, warp, ids[b], visits[b]);
                visits[b] += 1;
                if first {
                    x
                } else {
                    y
                }
            }
            _ => unreachable!("at most two successors"),
        };
    }
}

fn expected_thread_instructions(c: &ProgramCase) -> u64 {
    let k = c.kernel();
    let lanes = c.params.shape.lanes;
    let wpt = k.warps_per_tb(lanes);
    (0..k.grid)
        .flat_map(|tb| (0..wpt).map(move |w| (tb, w)))
        .map(|(tb, w)| {
            let threads = k.live_mask(w, lanes).count_ones() as u64;
            threads * path_length(&c.program, k.seed, tb as u64 * wpt as u64 + w as u64)
        })
        .sum()
}

fn run(c: &ProgramCase) -> Result<(SmStats, Vec<CycleRecord>), SmError> {
    let mut recs = vec![];
    let mut each = |r: &CycleRecord| recs.push(r.clone());
    let k = c.kernel();
    let stats = SharingSm::new(&c.params, &k)
        .unwrap_or_else(|e| panic!("{e}\n{}", c.file()))
        .run(Some(&mut each))?;
    Ok((stats, recs))
}

#[test]
fn random_programs_follow_their_paths() {
    let mut r = runner(2026_1124);
    let strategy = programs(shapes());
    let (mut cycles, mut branches) = (0u64, 0usize);
    for _ in 0..300 {
        let c = strategy.new_tree(&mut r).unwrap().current();
        let (s, recs) = run(&c).unwrap_or_else(|e| panic!("{e}\n{}", c.file()));
        assert_eq!(s.tbs_completed, c.kernel().grid, "{}", c.file());
        assert_eq!(
            s.thread_instructions,
            expected_thread_instructions(&c),
            "{}",
            c.file()
        );
        assert!(s.resident_tbs_max as u64 <= s.launch.n, "{}", c.file());
        assert_eq!(run(&c).unwrap().1, recs, "deterministic");
        cycles += s.cycles;
        branches += c
            .program
            .blocks
            .iter()
            .filter(|b| b.next.len() == 2)
            .count();
    }
    assert!(cycles > 10_000, "the sweep ran only {cycles} cycles");
    assert!(branches > 300, "only {branches} branches");
}

/// Random programs, as written and with `relssp` placed by OPT or PostDom (so locks are
/// released early), with the core on rust-hdl until `cycles` kernel cycles ran; a divergence
/// shrinks to a minimal program file, which the panic shows.
#[test]
fn random_programs_with_sharing_core_on_rusthdl() {
    let mut r = runner(31);
    let strategy = programs(shapes());
    let in_the_loop = |c: &ProgramCase| -> Result<(SmStats, u64), String> {
        let modes = [Mode::None, Mode::Opt, Mode::PostDom];
        let t = ProgramCase {
            params: c.params.clone(),
            program: placed(c, modes[(c.program.seed % 3) as usize])
                .program()
                .clone(),
        };
        let mut dut = rusthdl(&t.params.core());
        let s = cosim_kernel(&t.params, &t.kernel(), Some(dut.as_mut()), None, None)
            .map_err(|e| format!("{e}\n{}", t.file()))?;
        let released = s.lock_releases.relssp;
        Ok((s, released))
    };
    let (mut ran, mut n, mut released) = (0u64, 0, 0u64);
    while ran < 40_000 {
        let mut tree = strategy.new_tree(&mut r).unwrap();
        let c = tree.current();
        match in_the_loop(&c) {
            Ok((s, rel)) => (ran, released) = (ran + s.cycles, released + rel),
            Err(e) => {
                let (_, e, steps) = check::shrink_tree(&mut tree, (c, e), |c| in_the_loop(c).err());
                panic!("shrunk in {steps} steps to:\n{e}");
            }
        }
        n += 1;
    }
    assert!(released > 20, "only {released} locks released by relssp");
    eprintln!("{n} programs, {ran} kernel cycles on rusthdl, {released} relssp releases");
}

/// The file a failure shows is the case: the same params and the same lowered kernel.
#[test]
fn a_case_file_runs_as_is() {
    let mut r = runner(3);
    let c = programs(shapes()).new_tree(&mut r).unwrap().current();
    let (k, p, lowered) = smrtl_cosim::sm::sharing_sm::load_kernel(&c.file(), &[]).unwrap();
    assert!(lowered.is_some());
    assert_eq!(p, c.params);
    let want = c.kernel();
    assert_eq!(
        (&k.warps, k.seed, k.grid),
        (&want.warps, want.seed, want.grid)
    );
}

/// The pass's placement on `c` (OPT or PostDom) at the SM's `t` and `ALIGN`.
fn placed(c: &ProgramCase, mode: Mode) -> Placed {
    let o = Options {
        mode,
        t: c.params.t,
        align: c.params.align,
    };
    place(&c.program, &o).unwrap_or_else(|e| panic!("{e}\n{}", c.file()))
}

/// Spec A19 extended to loops, on executed paths: with the program transformed by OPT or
/// PostDom, every warp the SM model runs executes exactly one `relssp` when the program has a
/// shared-region access (none otherwise), never accesses the shared region after it, and
/// executes the original program's path plus one or two instructions (Table 4: the `relssp`,
/// and a kept split block's `bra` or the jump to a kept `Exit`).
#[test]
fn a19_on_executed_paths_with_loops() {
    let mut r = runner(19);
    let strategy = programs(shapes());
    let (mut warps, mut with_access, mut extras) = (0u64, 0u64, [0u64; 3]);
    for i in 0..300 {
        let c = strategy.new_tree(&mut r).unwrap().current();
        let mode = if i % 2 == 0 { Mode::Opt } else { Mode::PostDom };
        let pl = placed(&c, mode);
        // The same program normalised without relssp (unreachable blocks dropped as the pass
        // drops them, so the two-way branches keep their numbers).
        let plain = placed(&c, Mode::None);
        let t = ProgramCase {
            params: c.params.clone(),
            program: pl.program().clone(),
        };
        let k = t.kernel();
        let stream = &k.warps[0];
        let region = |pc: u32| {
            let ins = &stream[pc as usize];
            ins.op.is_shared() && ins.off.as_ref().is_some_and(|o| o.max() >= pl.u)
        };
        let has_access = (0..stream.len() as u32).any(region);
        // Per (TB, warp of the TB): relssp count, and whether a region access followed one.
        let wpt = k.warps_per_tb(c.params.shape.lanes);
        let mut seen = std::collections::HashMap::<(u32, u32), (u32, bool)>::new();
        let mut each = |rec: &CycleRecord| {
            for p in rec.picks.iter().filter(|p| p.outcome == Outcome::Issue) {
                let e = seen.entry((p.tb, p.warp % wpt)).or_default();
                if region(p.pc) && e.0 > 0 {
                    e.1 = true;
                }
                e.0 += u32::from(p.op == Op::Relssp);
            }
        };
        SharingSm::new(&t.params, &k)
            .unwrap()
            .run(Some(&mut each))
            .unwrap_or_else(|e| panic!("{e}\n{}", t.file()));
        for (&(tb, w), &(relssp, after)) in &seen {
            let at = format!("TB {tb} warp {w} ({mode}):\n{}", c.file());
            assert_eq!(relssp, u32::from(has_access), "{at}");
            assert!(!after, "a shared-region access after relssp: {at}");
            let g = tb as u64 * wpt as u64 + w as u64;
            let extra =
                path_length(&t.program, k.seed, g) - path_length(plain.program(), k.seed, g);
            assert!(
                extra <= 2 && (extra >= 1) == has_access,
                "{extra} extra: {at}"
            );
            extras[extra as usize] += 1;
        }
        warps += seen.len() as u64;
        with_access += u64::from(has_access);
    }
    assert!(
        with_access > 100 && warps > 1000,
        "{with_access} programs with an access, {warps} warps"
    );
    assert!(
        extras[1] > 100 && extras[2] > 100,
        "extras 0/1/2: {extras:?}"
    );
}
