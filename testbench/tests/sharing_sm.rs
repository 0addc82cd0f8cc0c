//! The thread-block-residency SM model of scratchpad sharing on random kernels
//! (docs/scratchpad-sharing.md §5): every kernel finishes without deadlock or protocol error,
//! every instruction issues exactly once with its warp's threads, residency stays within the
//! launch calculator's count, runs are deterministic, and with nothing shared OWF with
//! GREEDY = true is GTO cycle for cycle (spec §8, trend 4).

use proptest::strategy::{Strategy, ValueTree};
use smrtl_cosim::kernel::Kernel;
use smrtl_cosim::sharing_core::params_for;
use smrtl_cosim::sharing_core::{CycleRecord, SharingSm, SmError, SmParams, SmStats};
use smrtl_hdl::sharing::{Rank, Sched, Shape};
use smrtl_testbench::check::runner;
use smrtl_testbench::sharing_core::{cases, cosim_kernel, rusthdl, KernelCase};

/// Shapes of the random sweeps: NSCHED 1, 2 and 4, small and paper-sized SMs.
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
        Shape {
            warps: 24,
            slots: 8,
            lanes: 32,
            nsched: 4,
            smem: 16384,
        },
    ]
}

fn try_run(p: &SmParams, c: &KernelCase) -> Result<(SmStats, Vec<CycleRecord>), SmError> {
    let mut recs = vec![];
    let mut each = |r: &CycleRecord| recs.push(r.clone());
    let stats = SharingSm::new(p, &c.kernel)
        .unwrap_or_else(|e| panic!("{e}\n{}", c.file()))
        .run(Some(&mut each))?;
    Ok((stats, recs))
}

fn run(p: &SmParams, c: &KernelCase) -> (SmStats, Vec<CycleRecord>) {
    try_run(p, c).unwrap_or_else(|e| panic!("{e}\n{}", c.file()))
}

/// Thread-instructions the kernel must issue: every instruction once, with its warp's threads.
fn expected_thread_instructions(c: &KernelCase) -> u64 {
    let k = &c.kernel;
    let lanes = c.params.shape.lanes;
    let per_tb: u64 = (0..k.warps_per_tb(lanes))
        .map(|w| k.live_mask(w, lanes).count_ones() as u64 * k.stream(w as usize).len() as u64)
        .sum();
    per_tb * k.grid as u64
}

#[test]
fn random_kernels_finish_and_issue_every_instruction_once() {
    let mut r = runner(20261124);
    let strategy = cases(shapes());
    let mut cycles = 0u64;
    let mut livelocks = 0;
    for _ in 0..400 {
        let c = strategy.new_tree(&mut r).unwrap().current();
        // A NACKed pick becomes the scheduler's `last` (§4), so a greedy baseline can keep
        // picking a non-owner that never gets the lock while the owner starves on the same
        // scheduler: GTO and TWO_LEVEL may livelock under sharing, OWF and LRR never do.
        let (s, recs) = match try_run(&c.params, &c) {
            Err(SmError::Deadlock { .. })
                if matches!(c.params.sched, Sched::Gto | Sched::TwoLevel) =>
            {
                livelocks += 1;
                continue;
            }
            other => other.unwrap_or_else(|e| panic!("{e}\n{}", c.file())),
        };
        assert_eq!(s.tbs_completed, c.kernel.grid, "{}", c.file());
        assert_eq!(
            s.thread_instructions,
            expected_thread_instructions(&c),
            "{}",
            c.file()
        );
        assert!(s.resident_tbs_max as u64 <= s.launch.n, "{}", c.file());
        assert!(s.tbs.iter().all(|t| t.finish > t.launch), "{}", c.file());
        // Deterministic: the same kernel gives the same records.
        assert_eq!(run(&c.params, &c).1, recs);
        cycles += s.cycles;
    }
    assert!(cycles > 20_000, "the sweep ran only {cycles} cycles");
    assert!(livelocks < 100, "{livelocks} livelocks");
}

#[test]
fn unshared_owf_greedy_is_gto() {
    let mut r = runner(7);
    let strategy = cases(shapes());
    let mut compared = 0;
    for _ in 0..400 {
        let mut c = strategy.new_tree(&mut r).unwrap().current();
        // One TB per SM's worth of scratchpad: M_sp = 1 and no room for a pair, so ShSM = 0.
        c.kernel.smem = c.params.shape.smem;
        let mut gto = c.params.clone();
        gto.sched = Sched::Gto;
        let mut owf = c.params.clone();
        (owf.sched, owf.greedy, owf.rank) = (Sched::Owf, true, Rank::Owf3);
        let (a, ra) = run(&gto, &c);
        let (b, rb) = run(&owf, &c);
        assert_eq!(a.launch.shsm, 0);
        assert_eq!(ra, rb, "{}", c.file());
        assert_eq!(a.cycles, b.cycles);
        compared += 1;
    }
    assert_eq!(compared, 400);
}

/// Runs case `c` with `sharing_core` on `rtl` beside the model; the stats, or the divergence
/// with the kernel file that shows it.
fn in_the_loop(c: &KernelCase, rtl: &mut dyn smrtl_cosim::Rtl) -> Result<SmStats, String> {
    cosim_kernel(&c.params, &c.kernel, Some(rtl), None, None)
        .map_err(|e| format!("{e}\n{}", c.file()))
}

#[test]
fn fig5_with_sharing_core_in_the_loop() {
    for file in ["fig5-owf.json", "fig5-uwf.json"] {
        let path = format!("{}/../examples/sharing/{file}", env!("CARGO_MANIFEST_DIR"));
        let kernel = Kernel::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
        let params = params_for(&kernel, &[]).unwrap();
        let model = SharingSm::new(&params, &kernel).unwrap().run(None).unwrap();
        let c = KernelCase { params, kernel };
        let mut dut = rusthdl(&c.params.core());
        assert_eq!(in_the_loop(&c, dut.as_mut()).unwrap(), model, "{file}");
    }
}

#[test]
fn random_kernels_with_sharing_core_on_rusthdl() {
    let mut r = runner(11);
    let strategy = cases(shapes());
    let (mut cycles, mut kernels) = (0u64, 0);
    while cycles < 100_000 {
        let c = strategy.new_tree(&mut r).unwrap().current();
        let mut dut = rusthdl(&c.params.core());
        match in_the_loop(&c, dut.as_mut()) {
            Ok(s) => cycles += s.cycles,
            Err(e) if e.contains("deadlock") => continue,
            Err(e) => panic!("{e}"),
        }
        kernels += 1;
    }
    eprintln!("{kernels} kernels, {cycles} kernel cycles on rusthdl");
}
