//! The `ReqCounter` (docs/memory-issue-control.md §3.3, §5): the interval boundary on the
//! 1024th accepted request, directed, on the model and rusthdl. Random co-simulation, lint,
//! Icarus, synthesis and the flip-flop inventory are the conformance suite's
//! (`tests/conformance.rs`).

use smrtl_cosim::harness::backend::rusthdl::RustHdl;
use smrtl_cosim::Simulator;
use smrtl_hdl::blocks::req_counter::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::req_counter::Params;
use smrtl_testbench::Design;

/// (boundary, reqcnt) per cycle of `(reset, acc)` on the model and rusthdl (asserted equal).
fn run(p: &Params, cycles: &[(bool, bool)]) -> Vec<(bool, u64)> {
    let d = Design::new(p);
    let io = Io::new(p, &d.layout);
    let sims: Vec<Box<dyn Simulator>> = vec![d.model(), Box::new(RustHdl::new(d.module.clone()))];
    let runs: Vec<Vec<(bool, u64)>> = sims
        .into_iter()
        .map(|mut sim| {
            let (mut i, mut o) = (vec![0; d.layout.in_words], vec![0; d.layout.out_words]);
            let mut out = Outputs::new(p);
            cycles
                .iter()
                .map(|&(reset, acc)| {
                    io.write_inputs(&Inputs { reset, acc }, &mut i);
                    sim.step(&i, &mut o);
                    io.read_outputs(&o, &mut out);
                    (out.boundary, out.reqcnt)
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
    let b: Vec<usize> = (0..o.len()).filter(|&c| o[c].0).collect();
    assert_eq!(b, [1523], "request 1000 + 24 = the 1024th");
    assert_eq!((o[1523].1, o[1524].1), (1023, 0));
    assert_eq!(o.last().unwrap().1, 0, "reset");
    assert_eq!(o[1530].1, 6);
}
