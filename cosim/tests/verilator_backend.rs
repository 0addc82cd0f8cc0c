//! The `verilator` backend against the `rusthdl` reference on random vectors.

use smrtl_cosim::harness::backend::rusthdl::RustHdl;
use smrtl_cosim::harness::backend::verilator::{plain_loop_rate, Verilator};
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::bank_conflict_detector::{build, Params};
use smrtl_hdl::netlist::mask;
use smrtl_hdl::tools::{tools_required, ToolError};
use smrtl_hdl::{BlockParams, Module};
use std::sync::Arc;
use std::time::Instant;

const VECTORS: usize = 4000;

fn module(preset: &str, sets: &[(&str, &str)]) -> Arc<Module> {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let p = Params::resolve(Some(preset), &sets).expect("params");
    Arc::new(build(&p))
}

/// Tiny xorshift64, so the test needs no RNG crate.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Random input vectors, each slot masked to its width. Half the vectors have sparse bits so that
/// lanes often share addresses; `reset` (if any) is high about one cycle in sixteen.
fn stimulus(layout: &Layout, n: usize, seed: u64) -> Vec<Vec<u64>> {
    let mut rng = XorShift(seed);
    (0..n)
        .map(|_| {
            let sparse = rng.next() & 1 == 1;
            let mut v = vec![0; layout.in_words];
            for s in &layout.inputs {
                for (i, w) in s.of_mut(&mut v).iter_mut().enumerate() {
                    let bits = (s.width - 64 * i).min(64);
                    let r = if sparse {
                        rng.next() & rng.next() & rng.next()
                    } else {
                        rng.next()
                    };
                    *w = r & mask(bits);
                }
                if s.name == "reset" {
                    s.of_mut(&mut v)[0] = u64::from(rng.next().is_multiple_of(16));
                }
            }
            v
        })
        .collect()
}

/// The backend, or `None` when a tool is missing and the environment allows skipping.
fn verilator(m: &Module, verilog: &str) -> Option<Verilator> {
    match Verilator::new(m, verilog) {
        Ok(v) => Some(v),
        Err(e @ ToolError::Missing { .. }) if !tools_required() => {
            eprintln!("skipped: verilator missing ({e})");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn check(preset: &str, sets: &[(&str, &str)], seed: u64) {
    let m = module(preset, sets);
    let verilog = smrtl_hdl::rusthdl::emit_verilog(&m);
    let t0 = Instant::now();
    let Some(mut dut) = verilator(&m, &verilog) else {
        return;
    };
    eprintln!("{preset} {sets:?}: verilator ready in {:.1?}", t0.elapsed());
    let layout = Layout::new(&m.ports());
    let mut reference = RustHdl::new(m.clone());
    let mut want = vec![0; layout.out_words];
    let mut got = vec![0; layout.out_words];
    for (cycle, v) in stimulus(&layout, VECTORS, seed).iter().enumerate() {
        reference.step(v, &mut want);
        dut.step(v, &mut got);
        for s in &layout.outputs {
            assert_eq!(
                s.of(&got),
                s.of(&want),
                "{preset} {sets:?}: cycle {cycle}, output {} differs; inputs {v:x?}",
                s.name
            );
        }
    }
}

#[test]
fn ep8_matches_rusthdl() {
    check("ep8", &[], 1);
}

#[test]
fn ep8_registered_matches_rusthdl() {
    check("ep8", &[("REG_OUT", "true")], 2);
}

#[test]
fn ep8_literal_registered_matches_rusthdl() {
    check("ep8", &[("REG_OUT", "true"), ("MODE", "literal")], 3);
}

#[test]
fn kepler_matches_rusthdl() {
    check("kepler", &[], 4);
}

#[test]
fn fermi_gpgpusim_registered_matches_rusthdl() {
    check(
        "fermi",
        &[("REG_OUT", "true"), ("MODE", "gpgpusim-limited")],
        7,
    );
}

#[test]
fn two_models_of_one_design_are_independent() {
    let m = module("ep8", &[("REG_OUT", "true")]);
    let verilog = smrtl_hdl::rusthdl::emit_verilog(&m);
    let (Some(mut a), Some(mut b)) = (verilator(&m, &verilog), verilator(&m, &verilog)) else {
        return;
    };
    let layout = Layout::new(&m.ports());
    let stim = stimulus(&layout, 200, 5);
    let (mut oa, mut ob) = (vec![0; layout.out_words], vec![0; layout.out_words]);
    for v in &stim {
        a.step(v, &mut oa);
    }
    for v in &stim {
        b.step(v, &mut ob);
    }
    assert_eq!(oa, ob);
}

/// One `step_many` FFI call per batch gives the outputs of per-cycle `step`s, batch sizes
/// mixed, a registered design continuing across batches.
#[test]
fn step_many_matches_step() {
    let m = module("kepler", &[("REG_OUT", "true")]);
    let verilog = smrtl_hdl::rusthdl::emit_verilog(&m);
    let (Some(mut one), Some(mut many)) = (verilator(&m, &verilog), verilator(&m, &verilog)) else {
        return;
    };
    let layout = Layout::new(&m.ports());
    let (iw, ow) = (layout.in_words, layout.out_words);
    let stim = stimulus(&layout, 700, 8);
    let mut want = vec![0; stim.len() * ow];
    for (v, out) in stim.iter().zip(want.chunks_exact_mut(ow)) {
        one.step(v, out);
    }
    let flat: Vec<u64> = stim.iter().flat_map(|v| v[..iw].iter().copied()).collect();
    let mut got = vec![0; stim.len() * ow];
    let mut at = 0;
    for n in [1, 0, 2, 300, 397] {
        many.step_many(
            &flat[at * iw..(at + n) * iw],
            &mut got[at * ow..(at + n) * ow],
            n,
        );
        at += n;
    }
    assert_eq!(at, stim.len());
    assert!(got == want, "step_many differs from step");
}

/// `cargo test --release -p smrtl-cosim --test verilator_backend -- --ignored --nocapture`
#[test]
#[ignore = "benchmark"]
fn kepler_step_rate_vs_plain_loop() {
    let m = module("kepler", &[]);
    let verilog = smrtl_hdl::rusthdl::emit_verilog(&m);
    let Some(mut dut) = verilator(&m, &verilog) else {
        return;
    };
    let layout = Layout::new(&m.ports());
    let stim = stimulus(&layout, 10_000, 6);
    let mut out = vec![0; layout.out_words];
    let mut sum = 0u64;
    let mut pass = |dut: &mut Verilator| {
        for v in &stim {
            dut.step(v, &mut out);
            sum = out
                .iter()
                .fold(sum, |s, &w| s.wrapping_mul(31).wrapping_add(w));
        }
    };
    pass(&mut dut);
    let t0 = Instant::now();
    let mut vectors = 0;
    while t0.elapsed().as_secs_f64() < 0.5 {
        pass(&mut dut);
        vectors += stim.len();
    }
    let step_rate = vectors as f64 / t0.elapsed().as_secs_f64();
    let plain = plain_loop_rate(&m, &verilog, &stim).expect("plain loop");
    eprintln!(
        "kepler: step loop {step_rate:.0} vectors/s, plain loop {plain:.0} vectors/s ({:.0}%) [{sum:x}]",
        100.0 * step_rate / plain
    );
    assert!(step_rate >= 0.5 * plain);
}
