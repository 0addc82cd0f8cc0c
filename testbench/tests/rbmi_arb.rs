//! `rbmi_arb` (docs/memory-issue-control.md §3.1, §3.5 example 7 and the grant rules): directed
//! tests driven through the ports of the model AND the rusthdl RTL (asserted equal); the
//! invariants (at most one grant bit, grants only to eligible kernels, work conservation)
//! checked every cycle of random runs; random co-simulation for N = 1, 2, 3 on rusthdl (10^6
//! cycles each), on Verilator and on Icarus; lint, Icarus compile, latch-free synthesis with
//! the pointer's flip-flops; and a planted pointer bug that the random run catches and shrinks.

use smrtl_cosim::blocks::rbmi_arb::eligible;
use smrtl_cosim::harness::backend::{icarus::run_batch, rusthdl::RustHdl, verilator::VerilatorLib};
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::rbmi_arb::{build_with, port, Fault, Params};
use smrtl_hdl::Module;
use smrtl_testbench::blocks::rbmi_arb::{encode, Cycle, RbmiArbBench, CASE_CYCLES};
use smrtl_testbench::check::{self, run_vectors};
use smrtl_testbench::{external, Case, Design, OldBench};
use std::time::Instant;

fn design(n: u32) -> Design {
    Design::old::<RbmiArbBench>(&Params { n })
}

/// Per cycle (grant, last) on the model and on rusthdl, asserted equal.
fn run(n: u32, cycles: &[Cycle]) -> Vec<(u64, u64)> {
    let d = design(n);
    let case = encode(&d.layout, cycles);
    let model = run_vectors(&d, None, &case, None);
    let mut rtl = RustHdl::new(d.module.clone());
    let both = run_vectors(&d, Some(&mut rtl), &case, None);
    assert!(both.mismatch.is_none(), "{:?}", both.mismatch);
    assert_eq!(model.outputs, both.outputs, "model and rusthdl");
    both.outputs
        .iter()
        .map(|o| {
            (
                d.layout.read_out(o, port::GRANT),
                d.layout.read_out(o, port::LAST),
            )
        })
        .collect()
}

/// The granted kernel of each cycle (`None` for no grant), checking one-hot.
fn granted(out: &[(u64, u64)]) -> Vec<Option<u32>> {
    out.iter()
        .map(|&(g, _)| {
            assert!(g.count_ones() <= 1, "grant {g:#b} is not one-hot or 0");
            (g != 0).then(|| g.trailing_zeros())
        })
        .collect()
}

#[test]
fn example_7_all_eligible_rotates() {
    let got = run(2, &[Cycle::all(2); 6]);
    assert_eq!(
        granted(&got),
        [0, 1, 0, 1, 0, 1].map(Some),
        "N = 2: 0, 1, 0, 1, …"
    );
    // `last` is the pointer at the start of the cycle: reset N − 1, then the previous grant.
    let last: Vec<u64> = got.iter().map(|x| x.1).collect();
    assert_eq!(last, [1, 0, 1, 0, 1, 0]);
    let got = run(3, &[Cycle::all(3); 7]);
    assert_eq!(granted(&got), [0, 1, 2, 0, 1, 2, 0].map(Some), "N = 3");
    assert_eq!(got[0].1, 2, "reset value N − 1");
    let got = run(1, &[Cycle::all(1); 3]);
    assert_eq!(granted(&got), [Some(0); 3], "N = 1");
    assert!(got.iter().all(|x| x.1 == 0), "N = 1: last is 0");
}

#[test]
fn example_7_an_ineligible_kernel_is_skipped() {
    // N = 3, kernel 1 never requests: 0, 2, 0, 2.
    let c = Cycle {
        mem_req: 0b101,
        ..Cycle::all(3)
    };
    assert_eq!(granted(&run(3, &[c; 4])), [0, 2, 0, 2].map(Some));
    // Kernel 1 gated by MIL (mem_ok) is skipped just the same, and gets its turn back.
    let gated = Cycle {
        mem_ok: 0b101,
        ..Cycle::all(3)
    };
    let all = Cycle::all(3);
    assert_eq!(
        granted(&run(3, &[gated, gated, all, all, all])),
        [0, 2, 0, 1, 2].map(Some)
    );
    // After 2 is granted alone, the order continues from 2: 0 next, then 1.
    let only2 = Cycle {
        mem_req: 0b100,
        ..Cycle::all(3)
    };
    assert_eq!(
        granted(&run(3, &[only2, all, all, all])),
        [2, 0, 1, 2].map(Some)
    );
}

#[test]
fn example_4_work_conservation_and_a_busy_slot() {
    // A single eligible kernel is granted whatever the pointer says; a busy slot grants nobody
    // and keeps the pointer.
    let k1 = Cycle {
        mem_req: 0b10,
        ..Cycle::all(2)
    };
    let busy = Cycle {
        slot_free: false,
        ..Cycle::all(2)
    };
    let idle = Cycle {
        mem_req: 0,
        ..Cycle::all(2)
    };
    let got = run(2, &[k1, k1, k1, busy, idle, Cycle::all(2)]);
    assert_eq!(
        granted(&got),
        [Some(1), Some(1), Some(1), None, None, Some(0)]
    );
    let last: Vec<u64> = got.iter().map(|x| x.1).collect();
    assert_eq!(last, [1, 1, 1, 1, 1, 1], "no grant keeps the pointer");
}

#[test]
fn reset_puts_the_pointer_back() {
    let all = Cycle::all(3);
    let reset = Cycle { reset: true, ..all };
    // Grant 0, 1, then a reset cycle (still grants 2 from the pointer 1), then 0 again.
    let got = run(3, &[all, all, reset, all, all]);
    assert_eq!(granted(&got), [0, 1, 2, 0, 1].map(Some));
    assert_eq!(got[3].1, 2);
}

/// The invariants of §3.1 on every cycle of `cycles` random cycles, on the RTL's outputs (which
/// the harness also compares with the model): the grant is one-hot or 0, only to an eligible
/// kernel, and never 0 when one is eligible (work conservation). Returns the grants per kernel.
fn invariants(n: u32, cycles: usize, seed: u64) -> Vec<u64> {
    let d = design(n);
    let case = check::first_cycles(&d, seed, cycles);
    let mut rtl = RustHdl::new(d.module.clone());
    let r = run_vectors(&d, Some(&mut rtl), &case, None);
    assert!(r.mismatch.is_none(), "{:?}", r.mismatch);
    let i = |buf: &[u64], name: &str| d.layout.in_slot(name).get(buf) as u8;
    let mut per_kernel = vec![0u64; n as usize];
    let mut skips = 0;
    for (c, (inp, out)) in case.iter().zip(&r.outputs).enumerate() {
        let elig = eligible(
            i(inp, port::MEM_REQ),
            i(inp, port::MEM_OK),
            i(inp, port::SLOT_FREE) == 1,
        );
        let g = d.layout.read_out(out, port::GRANT) as u8;
        assert!(g.count_ones() <= 1, "cycle {c}: grant {g:#b}");
        assert_eq!(
            g & !elig,
            0,
            "cycle {c}: grant {g:#b} outside elig {elig:#b}"
        );
        assert_eq!(g != 0, elig != 0, "cycle {c}: work conservation");
        if g != 0 {
            per_kernel[g.trailing_zeros() as usize] += 1;
            let last = d.layout.read_out(out, port::LAST) as u32;
            let next = (last + 1) % n;
            skips += u64::from(g.trailing_zeros() != next);
        }
    }
    println!("N = {n}: grants per kernel {per_kernel:?}, grants that skipped a kernel {skips}");
    if n > 1 {
        assert!(skips > cycles as u64 / 50, "skips {skips}");
    }
    per_kernel
}

#[test]
fn invariants_hold_every_random_cycle() {
    for n in 1..=3 {
        let per = invariants(n, 20_000, 11);
        assert!(per.iter().all(|&g| g > 1_000), "N = {n}: {per:?}");
    }
}

const MILLION: u64 = 1_000_000;

fn random_rusthdl(n: u32, cycles: u64, seed: u64) {
    let d = design(n);
    let t = Instant::now();
    check::assert_random_on_rusthdl(&d, cycles, seed);
    println!(
        "N = {n}: {cycles} random cycles on rusthdl in {:.1} s",
        t.elapsed().as_secs_f64()
    );
}

#[test]
fn random_rusthdl_n2_million() {
    random_rusthdl(2, MILLION, 1);
}

#[test]
fn random_rusthdl_n3_million() {
    random_rusthdl(3, MILLION, 2);
}

#[test]
fn random_rusthdl_n1_million() {
    random_rusthdl(1, MILLION, 3);
}

#[test]
fn random_verilator() {
    if !external("verilator") {
        return;
    }
    for n in 1..=3 {
        let d = design(n);
        let lib = VerilatorLib::load(&d.module, &d.verilog()).unwrap();
        let factory = || Box::new(lib.instance().unwrap()) as Box<dyn smrtl_cosim::Rtl>;
        let r = check::random(&d, &factory, 5_000, 4);
        assert!(
            r.failure.is_none(),
            "N = {n}: {:?}",
            r.failure.map(|f| f.mismatch)
        );
        assert!(r.cycles >= 5_000);
    }
}

/// The Verilog lints (`verilator --lint-only -Wall`, the project's waivers), runs on Icarus
/// exactly as the model does, and synthesizes without latches to ⌈log2 N⌉ flip-flops.
#[test]
fn verilog_lints_runs_on_icarus_and_synthesizes() {
    for n in 1..=3 {
        let d = design(n);
        let v = d.verilog();
        if external("verilator") {
            smrtl_synth::lint_verilator(&v, &d.module.name).unwrap();
        }
        if external("iverilog") {
            smrtl_synth::compile_icarus(&v, &d.module.name).unwrap();
            let case = check::first_cycles(&d, 8, 2_000);
            let want = run_vectors(&d, None, &case, None).outputs;
            let got = run_batch(&d.module, &v, &case).unwrap().outputs;
            assert!(got == want, "Icarus differs from the model for N = {n}");
        }
        if external("yosys") {
            let (s, g) = smrtl_synth::blocks::rbmi_arb::cost(&Params { n }).unwrap();
            println!(
                "N = {n}: {} flip-flops (inventory {}), {} cells",
                s.yosys_bits, s.inventory_bits, g.cells
            );
            assert_eq!(
                s.yosys_bits,
                u64::from(n).next_power_of_two().trailing_zeros() as u64
            );
            assert!(g.latches.is_empty(), "{:?}", g.latches);
        }
    }
}

/// RbmiArb with the pointer bug of [`Fault::PointerSteps`].
struct Broken;

impl OldBench for Broken {
    type Params = Params;
    const SUMMARY: &'static str = "rbmi_arb with a deliberate pointer bug";
    fn module(p: &Params) -> Module {
        build_with(p, Fault::PointerSteps)
    }
    fn model(p: &Params, layout: &Layout) -> Box<dyn Simulator + Send> {
        RbmiArbBench::model(p, layout)
    }
    fn cases(p: &Params, layout: &Layout) -> proptest::strategy::BoxedStrategy<Case> {
        RbmiArbBench::cases(p, layout)
    }
}

/// With N = 3 the pointer bug shows after a skip: caught, shrunk to a few cycles (a grant that
/// skips a kernel, then the pointer read back), and the minimal case fails again the same way.
#[test]
fn planted_pointer_bug_is_caught_and_shrunk() {
    let d = Design::old::<Broken>(&Params { n: 3 });
    let m = d.module.clone();
    let factory = move || Box::new(RustHdl::new(m.clone())) as Box<dyn smrtl_cosim::Rtl>;
    let r = check::random(&d, &factory, 100_000, 5);
    let f = r.failure.expect("the broken RTL must be caught");
    println!(
        "{} at cycle {}; shrunk from {} to {} cycles in {} steps",
        f.mismatch,
        f.mismatch.cycle,
        f.original_cycles,
        f.minimal.len(),
        f.shrink_steps
    );
    assert!([port::GRANT, port::LAST].contains(&f.mismatch.port.as_str()));
    assert!(f.original_cycles <= CASE_CYCLES);
    assert!(f.minimal.len() <= 3, "{} cycles", f.minimal.len());
    let again = check::run_case(&d, &factory, &f.minimal, None);
    assert_eq!(again.mismatch, Some(f.mismatch));
}
