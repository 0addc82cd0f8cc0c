//! The thread-block-residency SM model of scratchpad sharing on random kernels
//! (docs/scratchpad-sharing.md §5): every kernel finishes without deadlock or protocol error,
//! every instruction issues exactly once with its warp's threads, residency stays within the
//! launch calculator's count, runs are deterministic, and with nothing shared OWF with
//! GREEDY = true is GTO cycle for cycle (spec §8, trend 4).

use proptest::strategy::{Strategy, ValueTree};
use smrtl_cosim::kernel::program::Kernel;
use smrtl_cosim::sm::sharing_sm::params_for;
use smrtl_cosim::sm::sharing_sm::{CycleRecord, SharingSm, SmError, SmParams, SmStats};
use smrtl_hdl::blocks::sharing::{Rank, Sched, Shape};
use smrtl_testbench::blocks::sharing_core::{cases, cosim_kernel, rusthdl, verilator, KernelCase};
use smrtl_testbench::check::{self, runner};

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

/// Random kernels with the core on the RTL `factory` until `cycles` kernel cycles ran; a
/// divergence shrinks to a minimal kernel file, which the panic shows.
fn random_in_the_loop(
    seed: u64,
    shapes: Vec<Shape>,
    fixed_switches: bool,
    cycles: u64,
    factory: &dyn Fn(&SmParams) -> Box<dyn smrtl_cosim::Rtl>,
) -> (u64, u64) {
    let mut r = runner(seed);
    let strategy = cases(shapes);
    let (mut ran, mut kernels) = (0u64, 0u64);
    while ran < cycles {
        let mut tree = strategy.new_tree(&mut r).unwrap();
        let mut c = tree.current();
        let fix = |c: &mut KernelCase| {
            if fixed_switches {
                let shape = c.params.shape.clone();
                c.params = SmParams {
                    shape,
                    lat_global: 20,
                    ..SmParams::default()
                };
            }
        };
        fix(&mut c);
        let failure = |c: &KernelCase| match in_the_loop(c, factory(&c.params).as_mut()) {
            Err(e) if !e.contains("deadlock") => Some(e),
            _ => None,
        };
        match in_the_loop(&c, factory(&c.params).as_mut()) {
            Ok(s) => ran += s.cycles,
            Err(e) if e.contains("deadlock") => continue,
            Err(e) => {
                let (_, e, steps) = check::shrink_tree(&mut tree, (c, e), |c| {
                    let mut c = c.clone();
                    fix(&mut c);
                    failure(&c)
                });
                panic!("shrunk in {steps} steps to:\n{e}");
            }
        }
        kernels += 1;
    }
    (kernels, ran)
}

#[test]
fn random_kernels_with_sharing_core_on_rusthdl() {
    let (kernels, cycles) =
        random_in_the_loop(11, shapes(), false, 100_000, &|p| rusthdl(&p.core()));
    eprintln!("{kernels} kernels, {cycles} kernel cycles on rusthdl");
}

/// A few thousand kernel cycles on Verilator: one shape and the default switches, so one
/// verilated build serves every kernel.
#[test]
fn random_kernels_with_sharing_core_on_verilator() {
    if !smrtl_testbench::external("verilator") {
        return;
    }
    let (kernels, cycles) = random_in_the_loop(12, vec![Shape::small()], true, 3_000, &|p| {
        verilator(&p.core()).unwrap()
    });
    eprintln!("{kernels} kernels, {cycles} kernel cycles on verilator");
}

/// A planted lock-protocol bug (the lock table releases while the owner's accesses are still
/// in flight) is caught at SM level, shrunk to a small kernel, and shown in a VCD whose lock
/// signals differ between the model and the RTL.
#[test]
fn planted_lock_bug_is_caught_shrunk_and_shown() {
    use smrtl_hdl::blocks::lock_table::faults::RELEASE_IGNORES_DRAIN;
    let faulty = |p: &SmParams| -> Box<dyn smrtl_cosim::Rtl> {
        // The core built with the lock table's drain fault planted gets the faulty table.
        let m = smrtl_hdl::faults::plant_module(&RELEASE_IGNORES_DRAIN, || {
            smrtl_hdl::blocks::sharing_core::build(&p.core())
        });
        Box::new(smrtl_cosim::harness::backend::rusthdl::RustHdl::new(
            std::sync::Arc::new(m),
        ))
    };
    let caught = std::panic::catch_unwind(|| {
        random_in_the_loop(5, vec![Shape::small()], true, 100_000, &faulty)
    });
    let message = match caught {
        Ok(_) => panic!("the planted bug was not caught in 100k kernel cycles"),
        Err(e) => e
            .downcast_ref::<String>()
            .cloned()
            .expect("a panic message"),
    };
    assert!(message.contains("shrunk"), "{message}");
    let file = &message[message.find('{').expect("a kernel file")..];
    let k = Kernel::parse(file).unwrap();
    let instructions: usize = k.warps.iter().map(Vec::len).sum();
    assert!(k.grid <= 2 && instructions <= 6, "not minimal: {file}");
    // The shrunk kernel, again, with its waveform.
    let p = params_for(&k, &[]).unwrap();
    let mut dut = faulty(&p);
    let mut rows = smrtl_cosim::harness::Trace::new(1000);
    let e = cosim_kernel(&p, &k, Some(dut.as_mut()), Some(&mut rows), None).unwrap_err();
    let mut vcd = vec![];
    let layout = smrtl_testbench::blocks::sharing_core::layout(&p.core());
    smrtl_cosim::harness::vcd_out::write(&mut vcd, "sharing_core", &layout, &rows).unwrap();
    let text = String::from_utf8(vcd).unwrap();
    for signal in ["lock_valid", "lock_owner", "pend", "rel_fire"] {
        assert!(text.contains(signal), "{signal} in the VCD");
    }
    eprintln!("{e}\n{file}");
}
