//! The `sm_core` RTL in the loop (spec elastic-pipeline.md §3.5, §5, §6): scheduler-mode
//! workloads co-simulated against the behavioral SM model on `rusthdl` and `verilator`.

use smrtl_cosim::backend::rusthdl::RustHdl;
use smrtl_cosim::sm_core::{Instr, SmParams};
use smrtl_hdl::sm_core::build;
use smrtl_testbench::sm_core::cosim;
use std::sync::Arc;

#[test]
fn smoke_micro() {
    let p = SmParams::micro();
    let warps = vec![
        vec![Instr::alu(0), Instr::smem(1, &[2, 1]), Instr::alu(2)],
        vec![Instr::smem(1, &[3, 3]), Instr::alu(5)],
        vec![Instr::alu(7)],
    ];
    let mut dut = RustHdl::new(Arc::new(build(&p)));
    let runs = cosim(&p, &[warps.clone(), warps], &mut dut, None)
        .unwrap_or_else(|d| panic!("{d}\n{:?}", d.model));
    assert!(runs[0].stats.cycles > 0);
}

fn rusthdl_factory() -> impl Fn(&SmParams) -> Box<dyn smrtl_cosim::Rtl> {
    let cache =
        std::sync::Mutex::new(std::collections::HashMap::<String, Arc<smrtl_hdl::Module>>::new());
    move |p: &SmParams| {
        let key = serde_json::to_string(p).unwrap();
        let m = cache
            .lock()
            .unwrap()
            .entry(key)
            .or_insert_with(|| Arc::new(build(p)))
            .clone();
        Box::new(RustHdl::new(m)) as Box<dyn smrtl_cosim::Rtl>
    }
}

#[test]
fn random_rusthdl() {
    let configs = smrtl_testbench::sm_core::random_configs();
    let f = rusthdl_factory();
    let t0 = std::time::Instant::now();
    let r = smrtl_testbench::sm_core::random(configs, &f, 20_000, 1);
    eprintln!(
        "{} cycles {} cases in {:?}",
        r.cycles,
        r.cases,
        t0.elapsed()
    );
    if let Some(fail) = &r.failure {
        panic!(
            "{}\nminimal: {:?}\nmodel: {:?}",
            fail.divergence, fail.minimal, fail.divergence.model
        );
    }
}
