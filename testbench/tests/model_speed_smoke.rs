//! Smoke tests for the behavioral models' speed (issue "models fast enough to explore with"):
//! the port-level models of the elastic pipeline and the bank-conflict detector step without
//! allocating, and their rates on the `smrtl bench` stimulus are printed (no timing assertions:
//! the rates depend on the machine and its load; `smrtl bench <block>` is the measurement).
//!
//! Run with `--nocapture` to see the rates.

use proptest::strategy::{Strategy, ValueTree};
use smrtl_cosim::blocks::elastic_pipeline::{Entry, Model, Pipeline};
use smrtl_cosim::{BlockModel, Simulator};
use smrtl_hdl::blocks::elastic_pipeline::{Kind, Params, PipeMode};
use smrtl_testbench::blocks::elastic_pipeline;
use smrtl_testbench::check::runner;
use smrtl_testbench::{Case, Design};
use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::cell::Cell;
use std::time::Instant;

/// The system allocator, counting this thread's allocations (tests run on several threads).
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: AllocLayout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: AllocLayout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: AllocLayout, size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        System.realloc(ptr, layout, size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Allocations made by this thread while running `f`.
fn allocations(f: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

/// The first `n` cycles of the random cases from seed 1, as `smrtl bench` builds its stimulus.
fn stimulus(cases: proptest::strategy::BoxedStrategy<Case>, n: usize) -> Vec<Vec<u64>> {
    let mut runner = runner(1);
    let mut stim = vec![];
    while stim.len() < n {
        stim.extend(cases.new_tree(&mut runner).expect("case").current());
    }
    stim.truncate(n);
    stim
}

/// Steps `sim` over `stim` once; returns cycles per second.
fn rate(sim: &mut dyn Simulator, stim: &[Vec<u64>], out_words: usize) -> f64 {
    let mut out = vec![0; out_words];
    let start = Instant::now();
    for inputs in stim {
        sim.step(inputs, &mut out);
    }
    stim.len() as f64 / start.elapsed().as_secs_f64()
}

fn pipeline_params() -> Vec<Params> {
    [PipeMode::Unified, PipeMode::Split, PipeMode::Elastic]
        .into_iter()
        .map(|pipe_mode| Params {
            pipe_mode,
            ..Params::default()
        })
        .collect()
}

#[test]
fn the_counter_sees_allocations() {
    assert_eq!(allocations(|| {}), 0);
    assert!(allocations(|| drop(std::hint::black_box(vec![0u8; 8]))) > 0);
}

#[test]
fn pipeline_model_steps_without_allocating() {
    for p in pipeline_params() {
        let layout = elastic_pipeline::layout(&p);
        let stim = stimulus(Design::new(&p).cases(), 5000);
        let mut model = Model::new(&p, &layout);
        let mut out = vec![0; layout.out_words];
        let n = allocations(|| {
            for inputs in &stim {
                model.step(inputs, &mut out);
            }
        });
        assert_eq!(n, 0, "{:?}: allocations in 5000 steps", p.pipe_mode);
    }
}

#[test]
fn pipeline_steps_without_allocating() {
    // The SM model's path without records: entries through `step_with`, the detector on
    // address-carrying SMEM entries.
    for p in pipeline_params() {
        let mut pipe = Pipeline::new(&p);
        let lanes = p.lanes as usize;
        let entry = |i: u32| Entry {
            addrs: (0..lanes as u32).map(|l| (l * i) % 64).collect(),
            ..Entry::new(i, Kind::from_bits(i as u64 % 4), lanes)
        };
        let n = allocations(|| {
            for i in 0..5000 {
                let cfg = *pipe.cfg();
                let e = smrtl_cosim::blocks::elastic_pipeline::InFlight::of(&cfg, &entry(i));
                pipe.step_with(i % 9 == 0, |in_ready| in_ready.then_some(e));
            }
            pipe.reset();
        });
        assert_eq!(n, 0, "{:?}: allocations in 5000 cycles", p.pipe_mode);
    }
}

#[test]
fn detector_model_steps_without_allocating() {
    for (_, p) in
        <smrtl_hdl::blocks::bank_conflict_detector::Params as smrtl_hdl::BlockParams>::presets()
    {
        for reg_out in [false, true] {
            let p = smrtl_hdl::blocks::bank_conflict_detector::Params {
                reg_out,
                ..p.clone()
            };
            let d = Design::new(&p);
            let stim = stimulus(d.cases(), 2000);
            let mut model = d.model();
            let mut out = vec![0; d.layout.out_words];
            let n = allocations(|| {
                for inputs in &stim {
                    model.step(inputs, &mut out);
                }
            });
            assert_eq!(n, 0, "{p:?}: allocations in 2000 steps");
        }
    }
}

#[test]
fn model_rates() {
    let p = Params::default();
    let layout = elastic_pipeline::layout(&p);
    let stim = stimulus(Design::new(&p).cases(), 20_000);
    let r = rate(&mut Model::new(&p, &layout), &stim, layout.out_words);
    println!("elastic_pipeline model: {r:.0} cycles/s");
    let stream: Vec<Entry> = (0..20_000u32)
        .map(|i| match i % 4 {
            0 => Entry::smem_deg(i & 0xffff, 1 + i % 3, 8),
            1 => Entry {
                addrs: (0..8).map(|l| (l * i) % 64).collect(),
                ..Entry::new(i & 0xffff, Kind::Smem, 8)
            },
            _ => Entry::new(i & 0xffff, Kind::Alu, 8),
        })
        .collect();
    let mut pipe = Pipeline::new(&p);
    let (start, mut next) = (Instant::now(), 0);
    for t in 0..20_000u64 {
        let r = pipe.cycle(stream.get(next), t % 11 == 0);
        next += !r.fe_hold as usize;
    }
    let r = 20_000.0 / start.elapsed().as_secs_f64();
    println!("elastic_pipeline Pipeline::cycle (with records): {r:.0} cycles/s");

    let p = smrtl_hdl::blocks::bank_conflict_detector::Params::default();
    let d = Design::new(&p);
    let stim = stimulus(d.cases(), 20_000);
    let r = rate(d.model().as_mut(), &stim, d.layout.out_words);
    println!("bank_conflict_detector model: {r:.0} cycles/s");
}
