//! The `icarus` batch runner against the `rusthdl` reference on random vectors.

use smrtl_cosim::harness::backend::icarus::run_batch;
use smrtl_cosim::harness::backend::rusthdl::RustHdl;
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::bank_conflict_detector::{build, Params};
use smrtl_hdl::netlist::mask;
use smrtl_hdl::tools::{tools_required, ToolError};
use smrtl_hdl::{BlockParams, Module};
use std::sync::Arc;

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

fn check(preset: &str, sets: &[(&str, &str)], seed: u64) {
    let m = module(preset, sets);
    let verilog = smrtl_hdl::rusthdl::emit_verilog(&m);
    let layout = Layout::new(&m.ports());
    let stim = stimulus(&layout, VECTORS, seed);
    let run = match run_batch(&m, &verilog, &stim) {
        Ok(run) => run,
        Err(e @ ToolError::Missing { .. }) if !tools_required() => {
            eprintln!("skipped: icarus missing ({e})");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    eprintln!(
        "{preset} {sets:?}: vvp ran {VECTORS} cycles in {:.2} s",
        run.sim_seconds
    );
    assert_eq!(run.outputs.len(), stim.len());
    let mut reference = RustHdl::new(m.clone());
    let mut want = vec![0; layout.out_words];
    for (cycle, (v, got)) in stim.iter().zip(&run.outputs).enumerate() {
        reference.step(v, &mut want);
        for s in &layout.outputs {
            assert_eq!(
                s.of(got),
                s.of(&want),
                "{preset} {sets:?}: cycle {cycle}, output {} differs; inputs {v:x?}",
                s.name
            );
        }
    }
}

#[test]
fn ep8_matches_rusthdl() {
    check("ep8", &[], 11);
}

#[test]
fn ep8_registered_matches_rusthdl() {
    check("ep8", &[("REG_OUT", "true")], 12);
}

#[test]
fn kepler_matches_rusthdl() {
    check("kepler", &[], 14);
}

#[test]
fn fermi_registered_matches_rusthdl() {
    check(
        "fermi",
        &[("REG_OUT", "true"), ("MODE", "gpgpusim-limited")],
        15,
    );
}
