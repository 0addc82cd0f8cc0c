//! Programs with control flow on the thread-block-residency SM model
//! (docs/scratchpad-sharing.md §6.0): random CFGs with loops and per-warp coin branches finish,
//! each warp executes exactly the path a reference walk of the CFG gives, runs are
//! deterministic, and `sharing_core` in the loop agrees every cycle (shrunk on failure).

use proptest::strategy::{Strategy, ValueTree};
use smrtl_cosim::cfg::Program;
use smrtl_cosim::sharing_core::{CycleRecord, SharingSm, SmError, SmStats};
use smrtl_hdl::sharing::Shape;
use smrtl_testbench::check::{self, runner};
use smrtl_testbench::sharing_core::{cosim_kernel, programs, rusthdl, ProgramCase};

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

/// Random programs with the core on rust-hdl until `cycles` kernel cycles ran; a divergence
/// shrinks to a minimal program file, which the panic shows.
#[test]
fn random_programs_with_sharing_core_on_rusthdl() {
    let mut r = runner(31);
    let strategy = programs(shapes());
    let in_the_loop = |c: &ProgramCase| -> Result<SmStats, String> {
        let mut dut = rusthdl(&c.params.core());
        cosim_kernel(&c.params, &c.kernel(), Some(dut.as_mut()), None, None)
            .map_err(|e| format!("{e}\n{}", c.file()))
    };
    let (mut ran, mut n) = (0u64, 0);
    while ran < 30_000 {
        let mut tree = strategy.new_tree(&mut r).unwrap();
        let c = tree.current();
        match in_the_loop(&c) {
            Ok(s) => ran += s.cycles,
            Err(e) => {
                let (_, e, steps) = check::shrink_tree(&mut tree, (c, e), |c| in_the_loop(c).err());
                panic!("shrunk in {steps} steps to:\n{e}");
            }
        }
        n += 1;
    }
    eprintln!("{n} programs, {ran} kernel cycles on rusthdl");
}

/// The file a failure shows is the case: the same params and the same lowered kernel.
#[test]
fn a_case_file_runs_as_is() {
    let mut r = runner(3);
    let c = programs(shapes()).new_tree(&mut r).unwrap().current();
    let (k, p, lowered) = smrtl_cosim::sharing_core::load_kernel(&c.file(), &[]).unwrap();
    assert!(lowered.is_some());
    assert_eq!(p, c.params);
    let want = c.kernel();
    assert_eq!(
        (&k.warps, k.seed, k.grid),
        (&want.warps, want.seed, want.grid)
    );
}
