//! The SM memory-pipeline model's hot path allocates nothing once warm, and its rate on a
//! two-kernel workload (bp+sv) is printed (run with `--nocapture`; `smrtl sim --mem-workload`
//! on a 2M-cycle file is the measurement in docs/memory-issue-control.md §5.6).

use smrtl_cosim::sm::mem_sm::{workload, MemPipeline};
use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::cell::Cell;
use std::time::Instant;

/// The system allocator, counting this thread's allocations.
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
static ALLOC: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

#[test]
fn two_kernel_run_allocates_nothing_when_warm() {
    let runs = [
        (
            r#"{"kernels": ["bp", "sv"], "tbs": [9, 4], "cycles": 1, "seed": 1}"#,
            "baseline",
        ),
        (
            r#"{"kernels": ["cp", "ks", "ax"], "cycles": 1, "seed": 1, "params": {"sched": "lrr"}}"#,
            "baseline",
        ),
    ];
    // Every control scheme on bp+sv (the control's tick and comb allocate nothing either).
    let bp_sv = runs[0].0;
    let schemes = ["rbmi", "qbmi", "smil", "dmil", "qbmi_dmil"].map(|s| (bp_sv, s));
    for (text, scheme) in runs.into_iter().chain(schemes) {
        // One SMIL limit per kernel (3, 1, 2).
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let n = v["kernels"].as_array().map_or(1, Vec::len);
        let limits = serde_json::to_string(&[3, 1, 2][..n]).unwrap();
        let sets = [
            ("scheme".to_string(), scheme.to_string()),
            ("smil_limit".to_string(), limits),
        ];
        let w = workload::parse(text, &sets).unwrap();
        let mut m = MemPipeline::new(&w).unwrap();
        for _ in 0..100_000 {
            m.step();
        }
        let before = allocations();
        let start = Instant::now();
        let cycles = 400_000;
        for _ in 0..cycles {
            m.step();
        }
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(
            allocations() - before,
            0,
            "{text} {scheme}: the hot path allocated"
        );
        println!(
            "{} {scheme}: {:.2} M cycles/s",
            w.kernels
                .iter()
                .map(|k| k.name.as_str())
                .collect::<Vec<_>>()
                .join("+"),
            cycles as f64 / secs / 1e6
        );
    }
}
