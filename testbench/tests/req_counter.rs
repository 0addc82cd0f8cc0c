//! The `ReqCounter` (docs/memory-issue-control.md §3.3, §5): the interval boundary on the
//! 1024th accepted request (directed, on the model and rusthdl), random co-simulation on rusthdl
//! (10^6 cycles per width) and Verilator, lint / Icarus / latch-free synthesis with 10
//! flip-flops.

use smrtl_cosim::harness::backend::icarus::run_batch;
use smrtl_cosim::harness::backend::{rusthdl::RustHdl, verilator::VerilatorLib};
use smrtl_cosim::Simulator;
use smrtl_hdl::blocks::req_counter::{port, Params};
use smrtl_hdl::BlockParams;
use smrtl_testbench::blocks::req_counter::{encode, ReqCounterBench};
use smrtl_testbench::check;
use smrtl_testbench::{external, Design};

/// (boundary, reqcnt) per cycle on the model and rusthdl (asserted equal).
fn run(p: &Params, cycles: &[(bool, bool)]) -> Vec<(u64, u64)> {
    let d = Design::new::<ReqCounterBench>(p);
    let sims: Vec<Box<dyn Simulator>> = vec![d.model(), Box::new(RustHdl::new(d.module.clone()))];
    let runs: Vec<Vec<(u64, u64)>> = sims
        .into_iter()
        .map(|mut sim| {
            cycles
                .iter()
                .map(|&c| {
                    let mut o = vec![0; d.layout.out_words];
                    sim.step(&encode(&d.layout, c), &mut o);
                    (
                        d.layout.read_out(&o, port::BOUNDARY),
                        d.layout.read_out(&o, port::REQCNT),
                    )
                })
                .collect()
        })
        .collect();
    assert_eq!(runs[0], runs[1], "model vs rusthdl");
    runs.into_iter().next().unwrap()
}

/// The boundary is the cycle of the 1024th request (counter 1023 with `acc`), and only that
/// one; idle cycles do not count; the counter wraps to 0; reset clears it.
#[test]
fn boundary_on_the_1024th_request() {
    let p = Params::default();
    let mut cycles = vec![];
    for i in 0..1500 {
        cycles.push((false, i % 3 != 2)); // 1000 requests
    }
    cycles.extend(std::iter::repeat_n((false, true), 30));
    cycles.push((true, true));
    cycles.push((false, false));
    let o = run(&p, &cycles);
    let b: Vec<usize> = (0..o.len()).filter(|&c| o[c].0 == 1).collect();
    assert_eq!(b, [1523], "request 1000 + 24 = the 1024th");
    assert_eq!((o[1523].1, o[1524].1), (1023, 0));
    assert_eq!(o.last().unwrap().1, 0, "reset");
    assert_eq!(o[1530].1, 6);
}

#[test]
fn random_rusthdl_1m_per_width() {
    for p in [
        Params::default(),
        Params { reqcnt_bits: 3 },
        Params { reqcnt_bits: 1 },
    ] {
        let d = Design::new::<ReqCounterBench>(&p);
        let t = std::time::Instant::now();
        check::assert_random_on_rusthdl(&d, 1_000_000, 1);
        println!(
            "req_counter {} rusthdl: 10^6 cycles in {:.2} s",
            p.reqcnt_bits,
            t.elapsed().as_secs_f64()
        );
    }
}

#[test]
fn random_verilator_and_icarus() {
    let d = Design::new::<ReqCounterBench>(&Params { reqcnt_bits: 3 });
    let v = d.verilog();
    if external("verilator") {
        smrtl_synth::lint_verilator(&v, &d.module.name).unwrap();
        let lib = VerilatorLib::load(&d.module, &v).unwrap();
        let factory = || Box::new(lib.instance().unwrap()) as Box<dyn smrtl_cosim::Rtl>;
        let r = check::random(&d, &factory, 5_000, 4);
        assert!(r.failure.is_none(), "{:?}", r.failure.map(|f| f.mismatch));
    }
    if external("iverilog") {
        let case = check::first_cycles(&d, 8, 2_000);
        let want = check::run_vectors(&d, None, &case, None).outputs;
        let got = run_batch(&d.module, &v, &case).unwrap().outputs;
        assert!(got == want, "Icarus differs from the model");
    }
}

#[test]
fn synthesis_has_ten_flip_flops_and_no_latch() {
    if !external("yosys") {
        return;
    }
    let d = Design::new::<ReqCounterBench>(&Params::resolve(None, &[]).unwrap());
    let cost = smrtl_synth::cost_of(&d.module, false).unwrap();
    assert_eq!(cost.generic.flip_flops, 10);
    assert!(cost.generic.latches.is_empty());
}
