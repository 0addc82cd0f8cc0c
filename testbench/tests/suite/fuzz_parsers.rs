//! Fuzz tests for every input parser (proptest, a few seconds in release mode):
//!
//! 1. trace files: [`Trace::from_json`] and [`sim::run_trace`] on the model;
//! 2. scheduler-mode workload ("kernel") files: [`sim::Workload::parse`],
//!    [`sm_core::parse_workload`] / [`sm_core::workload_from_value`] and [`sim::run_workload`]
//!    on the model (with `--set` overrides);
//! 3. stimulus files: [`Stimulus::parse`] (JSON lines or the replay form), `to_case` against every
//!    registered block's ports, and the replay form's own block and params as `smrtl run` reads
//!    them;
//! 4. conflict batch lines: [`Batch::eval_line`] on the model;
//! 5. `--set` values and presets: every registered block's `configure`, with arbitrary keys and
//!    values and with the declared parameter names;
//! 6. sweep specs: [`Spec::parse`], [`Spec::grid`], [`SmSweep::new`]; and, beside them, the other
//!    sweep inputs: shard outputs ([`sweep::merge`]) and `--shard I/N` ([`Shard`]);
//! 7. `smrtl bankan` kernels in the CUDA-like text form: `Raw::read` and `Raw::validate`
//!    (arbitrary text, token soup of the form's own words, the `.cu` examples edited; in
//!    tests/fuzz/bankan.rs).
//!
//! Each parser gets three kinds of input: arbitrary text (random bytes read lossily as UTF-8,
//! and JSON-ish character soup), arbitrary JSON values (nested, with keys drawn both at random
//! and from the parser's real field names, numbers such as 1e300, -1, 99999999999999999999 or
//! 4294967295), and valid inputs (the shipped examples) with one to three fields replaced,
//! removed or added, or a few bytes edited.
//!
//! Properties: no input panics; an error is one line (no `\n` or `\r`); parsing allocates at
//! most [`MEM_PER_BYTE`] bytes per input byte plus [`MEM_BASE`] (peak growth, counted per thread
//! by the allocator below, so tests running in parallel do not disturb each other); and an
//! accepted input runs within bounds: a trace's cycle budget and a workload's cycles stay below
//! [`MAX_RUN_CYCLES`], a sweep's grid can be built. Runs that would be long are not run (so no
//! property hangs); accepted inputs that are short are run, and must succeed.

use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::test_runner::TestCaseError;
use serde_json::{json, Map, Value};
use smrtl_cosim::harness::backend::rusthdl::RustHdl;
use smrtl_cosim::sm::elastic_sm::{SmCore, SmParams};
use smrtl_testbench::blocks::sm_core;
use smrtl_testbench::check;
use smrtl_testbench::stimulus_file::{params_as_sets, Stimulus, StimulusFile};
use smrtl_testbench::studies::conflict::Batch;
use smrtl_testbench::studies::profiles;
use smrtl_testbench::studies::sweep::{self, Shard, Spec, Sweep as SmSweep};
use smrtl_testbench::studies::trace::{Trace, TraceFile};
use smrtl_testbench::systems::{self, Backend, Input, RunOptions};
use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, Once};
use std::time::{Duration, Instant};

mod fuzz;
use fuzz::harness::*;
use fuzz::schemas::*;
use fuzz::strategies::*;

// ---------------------------------------------------------------------------------------------
// Bounds the properties check (edit here when the project documents its own).
// ---------------------------------------------------------------------------------------------

/// Parsing may allocate (peak growth) at most this many bytes per input byte ...
const MEM_PER_BYTE: usize = 64;
/// ... plus this much.
const MEM_BASE: usize = 16 << 20;
/// An accepted trace or workload must finish within this many cycles: the documented limits
/// (`trace::MAX_TRACE_CYCLES`, `elastic_sm::MAX_KERNEL_CYCLES`, docs/cli.md "Limits"). A
/// workload that cannot is rejected only after the model has run this many cycles (~30 s).
const MAX_RUN_CYCLES: u64 = 100_000_000;
/// Accepted inputs that finish within this many cycles are run (longer ones are only checked
/// against [`MAX_RUN_CYCLES`], so that no property runs for long).
const RUN_CAP: u64 = 200_000;
/// [`SmSweep::new`] builds and checks one profile workload per workload × params combination;
/// it is called on specs with at most this many combinations.
const SWEEP_CHECK_CAP: usize = 32;

const TRACES: [&str; 2] = [
    include_str!("../../../examples/traces/fig4_two_subwarps.json"),
    include_str!("../../../examples/traces/mixed.json"),
];
const STIMULI: [&str; 5] = [
    include_str!("../../../examples/run/detector-ep8.jsonl"),
    include_str!("../../../examples/run/stall-blame.jsonl"),
    include_str!("../../../examples/run/bad-line.jsonl"),
    include_str!("../../../examples/run/bad-port.jsonl"),
    include_str!("../../../examples/run/bad-width.jsonl"),
];
const BATCH: &str = include_str!("../../../examples/conflict/batch.jsonl");
const SWEEPS: [&str; 2] = [
    include_str!("../../../examples/sweep/small.json"),
    include_str!("../../../examples/sweep/table5.json"),
];

// ---------------------------------------------------------------------------------------------
// The checks, one per parser.
// ---------------------------------------------------------------------------------------------

/// 1. A trace file: parsed and checked.
fn check_trace(text: &str) -> Result<(), TestCaseError> {
    let r = guard_mem("Trace::from_json", &text, text.len(), || {
        Trace::from_json(text)
    })?;
    if let Err(e) = r {
        one_line("Trace::from_json", &text, &e.to_string())?;
    }
    Ok(())
}

/// Property 1: A trace file run on the model with `sets`: rejected in one line, or run within its cycle
/// budget, which must stay below [`MAX_RUN_CYCLES`].
fn check_trace_run(text: &str, sets: &[(String, String)]) -> Result<(), TestCaseError> {
    let input = (text, sets);
    // What `run_trace` will run: the file with `sets` applied (as `sim::load_trace` does).
    let trace = guard("TraceFile + Trace::from_file", &input, || {
        let mut file: TraceFile = serde_json::from_str(text).ok()?;
        for (key, value) in sets {
            let v = value
                .parse::<u64>()
                .map_or_else(|_| Value::from(value.as_str()), Value::from);
            file.params.insert(key.clone(), v);
        }
        Trace::from_file(&file).ok()
    })?;
    let Some(trace) = trace else {
        let r = guard("sim::run_trace", &input, || {
            sim::run_trace("t.json", text, sets).map(|_| ())
        })?;
        let e = r.err().ok_or_else(|| {
            TestCaseError::fail(format!(
                "run_trace accepted a trace Trace::from_file rejects: {input:?}"
            ))
        })?;
        return one_line("sim::run_trace", &input, &e);
    };
    let budget = guard("Trace::cycle_budget", &input, || trace.cycle_budget())?;
    prop_assert!(
        budget <= MAX_RUN_CYCLES,
        "an accepted trace runs up to {budget} cycles (> {MAX_RUN_CYCLES}); \
         {} entries, icnt_valid_cycles {:?}; input: {input:?}",
        trace.stream.len(),
        trace.icnt_valid_cycles.iter().take(8).collect::<Vec<_>>()
    );
    if budget <= RUN_CAP {
        let run = guard("sim::run_trace", &input, || {
            sim::run_trace("t.json", text, sets)
        })?;
        let run = run.map_err(|e| {
            TestCaseError::fail(format!(
                "run_trace rejected an accepted trace: {e}; input: {input:?}"
            ))
        })?;
        if let Err(f) = run.result {
            return Err(TestCaseError::fail(format!(
                "the model did not finish an accepted trace within its budget: {f}; input: {input:?}"
            )));
        }
    }
    Ok(())
}

/// 2. A workload file: parsed, then checked against its params.
fn check_workload(text: &str) -> Result<(), TestCaseError> {
    let r = guard_mem("sim::Workload::parse", &text, text.len(), || {
        sim::Workload::parse("w.json", text).map(|_| ())
    })?;
    if let Err(e) = r {
        one_line("sim::Workload::parse", &text, &e)?;
    }
    let r = guard_mem("sm_core::parse_workload", &text, text.len(), || {
        sm_core::parse_workload(text)
    })?;
    if let Err(e) = r {
        one_line("sm_core::parse_workload", &text, &e)?;
    }
    Ok(())
}

/// The runs of `smrtl sim` on elastic_sm's input kinds, through its system descriptor.
mod sim {
    use super::*;
    pub use smrtl_testbench::systems::elastic_sm::Workload;

    /// File `text` of elastic_sm's kind `kind` (named `name`) with `sets`, on the model, its
    /// records written to a sink (as `smrtl sim --records`).
    fn run(
        kind: &str,
        name: &str,
        text: &str,
        sets: &[(String, String)],
    ) -> Result<systems::Run, String> {
        let system = systems::system("elastic_sm").expect("registered");
        let kind = system
            .inputs()
            .iter()
            .find(|k| k.name == kind)
            .expect("a kind");
        let loaded = system.load(Input::File { kind, name, text }, sets)?;
        let mut sink = std::io::sink();
        loaded.run(RunOptions {
            backend: Backend::Model,
            waveform: false,
            records: Some(&mut sink),
            stalls: None,
        })
    }

    pub fn run_trace(
        name: &str,
        text: &str,
        sets: &[(String, String)],
    ) -> Result<systems::Run, String> {
        run("trace", name, text, sets)
    }

    pub fn run_workload(
        name: &str,
        text: &str,
        sets: &[(String, String)],
    ) -> Result<systems::Run, String> {
        run("workload", name, text, sets)
    }
}

/// Cycles of `w` on the model (events only, no records), or `None` beyond `cap` cycles.
fn bounded_cycles(
    w: &smrtl_cosim::sm::elastic_sm::Workload,
    cap: u64,
) -> Result<Option<u64>, String> {
    let mut core = SmCore::new(&w.params).expect("validated params");
    let mut n = 0u64;
    let r = catch_unwind(AssertUnwindSafe(|| {
        core.run_kernel_with(&w.warps, |_| {
            n += 1;
            if n > cap {
                std::panic::panic_any(RunCap);
            }
        })
    }));
    match r {
        Ok(stats) => stats.map(|s| Some(s.cycles)),
        Err(p) if p.is::<RunCap>() => Ok(None),
        Err(p) => std::panic::resume_unwind(p),
    }
}

/// Property 2: A workload file run on the model with `sets`: rejected in one line, or run to completion
/// within [`MAX_RUN_CYCLES`].
fn check_workload_run(text: &str, sets: &[(String, String)]) -> Result<(), TestCaseError> {
    let input = (text, sets);
    let run = |input: &dyn std::fmt::Debug| -> Result<Result<(), String>, TestCaseError> {
        guard("sim::run_workload", input, || {
            let run = sim::run_workload("w.json", text, sets)?;
            run.result
                .map(|_| ())
                .map_err(|f| format!("run failed: {f}"))
        })
    };
    // What `run_workload` will run: the file with `sets` applied (as `sim::Workload::resolve`
    // does, JSON values else text, into `params`).
    let Ok(mut value) = serde_json::from_str::<Value>(text) else {
        let e = run(&input)?
            .err()
            .ok_or_else(|| TestCaseError::fail(format!("accepted malformed JSON: {input:?}")))?;
        return one_line("sim::run_workload", &input, &e);
    };
    let indexable = |v: &Value| v.is_null() || v.is_object();
    if !sets.is_empty() && (!indexable(&value) || !indexable(&value["params"])) {
        // Overrides cannot go into this workload's params: the library must say so (this
        // runs nothing, so it cannot hang).
        let r = run(&input)?;
        if let Err(e) = r {
            one_line("sim::run_workload", &input, &e)?;
        }
        return Ok(());
    }
    for (key, val) in sets {
        let v = serde_json::from_str(val).unwrap_or_else(|_| Value::from(val.as_str()));
        value["params"][key] = v;
    }
    let w = guard("sm_core::workload_from_value", &input, || {
        sm_core::workload_from_value(&value)
    })?;
    let w = match w {
        Err(_) => {
            let e = run(&input)?.err().ok_or_else(|| {
                TestCaseError::fail(format!(
                    "run_workload accepted a workload workload_from_value rejects: {input:?}"
                ))
            })?;
            return one_line("sim::run_workload", &input, &e);
        }
        Ok(w) => w,
    };
    let least = w.min_cycles();
    if least > MAX_RUN_CYCLES {
        // It cannot finish within the kernel limit: refused before it runs, in one line.
        let e = run(&input)?.err().ok_or_else(|| {
            TestCaseError::fail(format!(
                "accepted a workload that needs at least {least} cycles: {input:?}"
            ))
        })?;
        prop_assert!(e.contains("needs at least"), "{e}");
        return one_line("sim::run_workload", &input, &e);
    }
    if least > RUN_CAP {
        return Ok(());
    }
    let cycles = guard("SmCore::run_kernel_with", &input, || {
        bounded_cycles(&w, RUN_CAP)
    })?;
    let cycles = cycles.map_err(|e| {
        TestCaseError::fail(format!(
            "the model failed on an accepted workload: {e}; input: {input:?}"
        ))
    })?;
    if cycles.is_some() {
        if let Err(e) = run(&input)? {
            return Err(TestCaseError::fail(format!(
                "run_workload failed on an accepted workload: {e}; input: {input:?}"
            )));
        }
    }
    Ok(())
}

/// Property 3: A stimulus file: parsed, read against every block's ports, and in the replay form, read
/// against its own block with its own params (as `smrtl run` / `smrtl cosim --replay`).
fn check_stimulus(text: &str) -> Result<(), TestCaseError> {
    let stim = guard_mem("Stimulus::parse", &text, text.len(), || {
        Stimulus::parse(text)
    })?;
    let stim = match stim {
        Err(e) => return one_line("Stimulus::parse", &text, &e),
        Ok(s) => s,
    };
    for (name, layout) in LAYOUTS.iter() {
        let what = format!("Stimulus::to_case ({name})");
        let r = guard_mem(&what, &text, text.len(), || stim.to_case(layout))?;
        match r {
            Err(e) => one_line(&what, &text, &e)?,
            Ok(case) => DESIGNS.with(|ds| {
                let d = ds.iter().find(|d| d.name == *name).expect("every block");
                run_vectors(text, d, &case)
            })?,
        }
    }
    if let Stimulus::Replay(file) = &stim {
        check_replay(text, file)?;
    }
    // The replay form as `smrtl cosim --replay` reads it: the struct straight from the text.
    if let Ok(file) = guard("serde StimulusFile", &text, || {
        serde_json::from_str::<StimulusFile>(text)
    })? {
        check_replay(text, &file)?;
    }
    Ok(())
}

fn check_replay(text: &str, file: &StimulusFile) -> Result<(), TestCaseError> {
    let entry = match smrtl_testbench::block(&file.block) {
        Err(e) => return one_line("block", &text, &e),
        Ok(b) => b,
    };
    let sets = params_as_sets(&file.params);
    let d = guard("configure (replay params)", &text, || {
        (entry.configure)(None, &sets)
    })?;
    let d = match d {
        Err(e) => return one_line("configure (replay params)", &text, &e.to_string()),
        Ok(d) => d,
    };
    let r = guard("StimulusFile::to_case", &text, || file.to_case(&d.layout))?;
    match r {
        Err(e) => one_line("StimulusFile::to_case", &text, &e),
        Ok(case) => run_vectors(text, &d, &case),
    }
}

thread_local! {
    /// Every registered block at its default params (a `Design` is not `Sync`).
    static DESIGNS: Vec<smrtl_testbench::Design> = smrtl_testbench::blocks()
        .iter()
        .map(|b| (b.configure)(None, &[]).expect("default params configure"))
        .collect();
}

/// Cycles of a stimulus run by the model alone ...
const VECTORS_MODEL: usize = 10_000;
/// ... and with the RTL (rust-hdl) beside it, as `smrtl run` does.
const VECTORS_RTL: usize = 16;

/// Property 3 (runs): Accepted vectors run as `smrtl run` runs them: through the block's model, and through
/// the model with the RTL beside it (a difference is reported by `smrtl run`, not a panic).
fn run_vectors(
    text: &str,
    d: &smrtl_testbench::Design,
    case: &smrtl_testbench::Case,
) -> Result<(), TestCaseError> {
    if case.len() <= VECTORS_MODEL {
        let what = format!("check::run_vectors ({} model)", d.name);
        guard(&what, &text, || check::run_vectors(d, None, case, None))?;
    }
    if case.len() <= VECTORS_RTL {
        let what = format!("check::run_vectors ({} model + rusthdl)", d.name);
        guard(&what, &text, || {
            let mut rtl = RustHdl::new(d.module.clone());
            check::run_vectors(d, Some(&mut rtl), case, Some(8))
        })?;
    }
    Ok(())
}

/// 4. A conflict batch: every line evaluated on the model.
fn check_batch(text: &str) -> Result<(), TestCaseError> {
    let mut batch = Batch::new(Backend::Model).expect("the model needs no tool");
    for line in text.lines() {
        let r = guard_mem("Batch::eval_line", &line, line.len(), || {
            batch.eval_line(line)
        })?;
        if let Err(e) = r {
            one_line("Batch::eval_line", &line, &e)?;
        }
    }
    Ok(())
}

/// 5. `--preset` and `--set` overrides on every block.
fn check_sets(preset: &Option<String>, sets: &[(String, String)]) -> Result<(), TestCaseError> {
    let input = (preset, sets);
    let len = sets.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>()
        + preset.as_ref().map_or(0, String::len);
    for b in smrtl_testbench::blocks() {
        let what = format!("configure {}", b.name);
        let r = guard_mem(&what, &input, len, || {
            (b.configure)(preset.as_deref(), sets).map(|_| ())
        })?;
        if let Err(e) = r {
            one_line(&what, &input, &e.to_string())?;
        }
    }
    Ok(())
}

/// Parameter-axis combinations × workloads of a spec (what [`SmSweep::new`] checks).
fn sweep_checks(spec: &Spec) -> Option<usize> {
    spec.params
        .iter()
        .try_fold(spec.workloads.len(), |n, a| n.checked_mul(a.values.len()))
}

/// 6. A sweep spec: parsed, its grid built, and (when small) every combination checked.
fn check_sweep(text: &str) -> Result<(), TestCaseError> {
    let spec = guard_mem("Spec::parse", &text, text.len(), || Spec::parse(text))?;
    let spec = match spec {
        Err(e) => return one_line("Spec::parse", &text, &e),
        Ok(s) => s,
    };
    let points = guard("Spec::grid", &text, || spec.grid().len())?;
    guard("Spec::id", &text, || spec.id())?;
    prop_assert!(points > 0, "an accepted spec has an empty grid: {text:?}");
    if sweep_checks(&spec).is_some_and(|n| n <= SWEEP_CHECK_CAP) {
        let r = guard("SmSweep::new", &text, || {
            SmSweep::new(spec.clone()).map(|_| ())
        })?;
        if let Err(e) = r {
            one_line("SmSweep::new", &text, &e)?;
        }
    }
    Ok(())
}

/// 6. Shard outputs to merge.
fn check_merge(shards: &[(String, String)]) -> Result<(), TestCaseError> {
    let len = shards.iter().map(|(n, t)| n.len() + t.len()).sum();
    let r = guard_mem("sweep::merge", &shards, len, || sweep::merge(shards))?;
    if let Err(e) = r {
        one_line("sweep::merge", &shards, &e)?;
    }
    Ok(())
}

/// Valid shard outputs: a small table cut into shards, as CSV and JSON lines.
fn shard_outputs() -> Vec<Vec<(String, String)>> {
    let table = |rows: &[usize]| sweep::Table {
        spec: sweep::spec_id("fuzz"),
        points: 4,
        columns: strings(&["workload", "cycles"]),
        rows: rows
            .iter()
            .map(|&p| sweep::Row {
                point: p,
                cells: vec![json!(format!("w,\"{p}\"")), json!(p * 100)],
            })
            .collect(),
    };
    [sweep::Format::Csv, sweep::Format::Jsonl]
        .into_iter()
        .map(|f| {
            vec![
                ("a.out".to_string(), table(&[0, 2]).render(f)),
                ("b.out".to_string(), table(&[1, 3]).render(f)),
            ]
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The properties.
// ---------------------------------------------------------------------------------------------

fn trace_values() -> BoxedStrategy<Value> {
    json_value(&trace_schema())
}

/// Replacement values for inputs that are to run: mostly single values (numbers at the edges,
/// the names the parser knows), so that many edited inputs are still accepted.
fn run_values(s: &Schema) -> BoxedStrategy<Value> {
    prop_oneof![
        4 => (0u64..40).prop_map(Value::from),
        2 => select(edge_numbers()),
        3 => select(s.strings.clone()).prop_map(Value::String),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => json_value(s),
    ]
    .boxed()
}

/// Workloads of global-load chains: each warp waits for every load's return in turn, so the
/// cycles grow with loads × latency.
fn load_chains() -> BoxedStrategy<String> {
    let lat = prop_oneof![
        Just(json!("at_writeback")),
        select(vec![1u64, 400, 4096, 65535, 99_999, 100_000]).prop_map(|l| json!({"icnt": l})),
    ];
    (lat, prop::collection::vec(0usize..1500, 1..3))
        .prop_map(|(lat, loads)| {
            let warps: Vec<Value> = loads
                .iter()
                .map(|&n| (0..n).map(|i| json!({"op": "gld", "pc": i % 64})).collect())
                .collect();
            json!({"params": {"gmem_return": lat, "W": 2}, "warps": warps}).to_string()
        })
        .boxed()
}

proptest! {
    #![proptest_config(config(1024))]

    #[test]
    fn trace_any_text(text in any_text()) {
        check_trace(&text)?;
    }

    #[test]
    fn trace_any_json(text in json_object_text(&trace_schema())) {
        check_trace(&text)?;
    }

    #[test]
    fn trace_mutated(text in prop_oneof![
        3 => mutated_json(&trace_schema(), TRACES.map(parse).to_vec(), trace_values()),
        1 => mutated_text(strings(&TRACES)),
    ]) {
        check_trace(&text)?;
    }
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn trace_run_mutated(
        text in prop_oneof![
            4 => mutated_json(&trace_schema(), TRACES.map(parse).to_vec(), run_values(&trace_schema())),
            1 => mutated_text(strings(&TRACES)),
            1 => json_object_text(&trace_schema()),
        ],
        sets in prop_oneof![
            3 => Just(vec![]),
            1 => set_pairs(block_param_names(), set_values(), 1..3),
        ],
    ) {
        check_trace_run(&text, &sets)?;
    }
}

proptest! {
    #![proptest_config(config(1024))]

    #[test]
    fn workload_any_text(text in any_text()) {
        check_workload(&text)?;
    }

    #[test]
    fn workload_any_json(text in json_object_text(&workload_schema())) {
        check_workload(&text)?;
    }

    #[test]
    fn workload_mutated(text in prop_oneof![
        3 => mutated_json(&workload_schema(), workloads(), json_value(&workload_schema())),
        1 => mutated_text(workloads().iter().map(Value::to_string).collect()),
    ]) {
        check_workload(&text)?;
    }
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn workload_run(
        text in prop_oneof![
            6 => mutated_json(&workload_schema(), workloads(), run_values(&workload_schema())),
            1 => mutated_text(workloads().iter().map(Value::to_string).collect()),
            1 => json_object_text(&workload_schema()),
            1 => any_text(),
            1 => load_chains(),
        ],
        sets in prop_oneof![
            3 => Just(vec![]),
            2 => set_pairs(sm_param_names(), set_values(), 1..3),
        ],
    ) {
        check_workload_run(&text, &sets)?;
    }
}

proptest! {
    #![proptest_config(config(1024))]

    #[test]
    fn stimulus_any_text(text in any_text()) {
        check_stimulus(&text)?;
    }

    #[test]
    fn stimulus_any_json(text in prop_oneof![
        json_object_text(&stimulus_schema()),
        prop::collection::vec(json_object_text(&stimulus_schema()), 1..6).prop_map(|l| l.join("\n")),
    ]) {
        check_stimulus(&text)?;
    }

    #[test]
    fn stimulus_mutated(text in prop_oneof![
        2 => mutated_json(
            &stimulus_schema(),
            stimuli().iter().filter(|s| s.starts_with('{') && s.contains("\"cycles\"")).map(|s| parse(s)).collect(),
            json_value(&stimulus_schema()),
        ),
        2 => mutated_lines(&stimulus_schema(), STIMULI.map(parse_lines).to_vec(), json_value(&stimulus_schema())),
        1 => mutated_text(stimuli()),
    ]) {
        check_stimulus(&text)?;
    }
}

proptest! {
    #![proptest_config(config(1024))]

    #[test]
    fn batch_any_text(text in any_text()) {
        check_batch(&text)?;
    }

    #[test]
    fn batch_any_json(text in json_object_text(&batch_schema())) {
        check_batch(&text)?;
    }

    #[test]
    fn batch_mutated(text in prop_oneof![
        3 => mutated_lines(&batch_schema(), vec![parse_lines(BATCH)], json_value(&batch_schema())),
        1 => mutated_text(vec![BATCH.to_string()]),
    ]) {
        check_batch(&text)?;
    }
}

fn presets() -> Vec<String> {
    let mut v: Vec<String> = smrtl_testbench::blocks()
        .iter()
        .flat_map(|b| (b.presets)().into_iter().map(|(n, _)| n.to_string()))
        .collect();
    v.extend(strings(&["KEPLER", "", "nope"]));
    v
}

/// Every preset's params as `--set` pairs (valid for its block), to mutate.
fn preset_sets() -> Vec<Vec<(String, String)>> {
    smrtl_testbench::blocks()
        .iter()
        .flat_map(|b| (b.presets)())
        .map(|(_, p)| params_as_sets(p.as_object().expect("params are an object")))
        .collect()
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn sets_any(
        preset in prop::option::of(prop_oneof![select(presets()), wild_string()]),
        sets in prop::collection::vec((wild_string(), wild_string()), 0..3),
    ) {
        check_sets(&preset, &sets)?;
    }

    #[test]
    fn sets_declared_names(
        preset in prop::option::weighted(0.2, select(presets())),
        sets in set_pairs(block_param_names(), set_values(), 1..4),
    ) {
        check_sets(&preset, &sets)?;
    }

    #[test]
    fn sets_mutated_presets(
        base in select(preset_sets()),
        edits in prop::collection::vec((any::<Index>(), prop_oneof![select(set_values()), wild_string()]), 1..3),
    ) {
        let mut sets = base;
        for (i, v) in edits {
            let n = i.index(sets.len());
            sets[n].1 = v;
        }
        check_sets(&None, &sets)?;
    }
}

proptest! {
    // SmSweep::new builds a profile workload per combination (~1-20 ms each).
    #![proptest_config(config(128))]

    #[test]
    fn sweep_mutated(text in prop_oneof![
        3 => mutated_json(&sweep_schema(), SWEEPS.map(parse).to_vec(), json_value(&sweep_schema())),
        1 => mutated_text(strings(&SWEEPS)),
    ]) {
        check_sweep(&text)?;
    }
}

proptest! {
    #![proptest_config(config(1024))]

    #[test]
    fn sweep_any_text(text in any_text()) {
        check_sweep(&text)?;
    }

    #[test]
    fn sweep_any_json(text in json_object_text(&sweep_schema())) {
        check_sweep(&text)?;
    }

    #[test]
    fn sweep_many_axes(
        axes in proptest::sample::subsequence(sm_param_names(), 1..=22),
        counts in prop::collection::vec(1usize..16, 22),
        workloads in proptest::sample::subsequence(profiles::names(), 1..=3),
    ) {
        let params: Map<String, Value> = axes
            .iter()
            .zip(&counts)
            .map(|(a, &n)| (a.clone(), Value::from((0..n as u64).collect::<Vec<_>>())))
            .collect();
        let text = json!({"params": params, "workloads": workloads}).to_string();
        check_sweep(&text)?;
    }

    #[test]
    fn merge_any(shards in prop::collection::vec((wild_string(), any_text()), 1..4)) {
        check_merge(&shards)?;
    }

    #[test]
    fn merge_mutated(
        (i, shards) in select(shard_outputs()).prop_flat_map(|s| (any::<Index>(), Just(s))),
        edits in text_edits(),
    ) {
        let mut shards = shards;
        let n = i.index(shards.len());
        shards[n].1 = apply_text(&shards[n].1, &edits);
        check_merge(&shards)?;
    }

    #[test]
    fn shard_any(text in prop_oneof![wild_string(), "[0-9 ]{0,22}/[0-9 -]{0,22}"]) {
        let r = guard("Shard::from_str", &text, || text.parse::<Shard>())?;
        if let Err(e) = r {
            one_line("Shard::from_str", &text, &e)?;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The shipped examples: accepted (or rejected, for the bad ones) as documented, and what parsing
// them allocates.
// ---------------------------------------------------------------------------------------------

#[test]
fn examples_parse_within_the_memory_bound() {
    let mut report = vec![];
    let mut row = |what: &str, len: usize, peak: usize| {
        report.push(format!(
            "{what:<44} {len:>8} B in {peak:>10} B peak  {:>6.1} B/B",
            peak as f64 / len as f64
        ));
        assert!(
            peak <= MEM_PER_BYTE * len + MEM_BASE,
            "{what}: {peak} bytes for {len}"
        );
    };
    for (i, t) in TRACES.iter().enumerate() {
        let (r, peak) = measure(|| Trace::from_json(t));
        r.expect("example trace");
        row(&format!("Trace::from_json traces[{i}]"), t.len(), peak);
    }
    // A long trace: one short entry after another.
    let long = format!(
        "{{\"params\": {{\"L\": 32}}, \"stream\": [{}\"A\"], \"icnt_valid_cycles\": [{}0]}}",
        "\"A\",".repeat(60_000),
        (1..20_000).map(|c| format!("{c},")).collect::<String>()
    );
    let (r, peak) = measure(|| Trace::from_json(&long));
    r.expect("long trace");
    row("Trace::from_json 60000 x \"A\", L = 32", long.len(), peak);
    for (i, w) in workloads().iter().enumerate() {
        let t = w.to_string();
        let (r, peak) = measure(|| sm_core::parse_workload(&t));
        r.expect("valid workload");
        row(
            &format!("sm_core::parse_workload workloads[{i}]"),
            t.len(),
            peak,
        );
    }
    let aes = profiles::profile("aes_encrypt")
        .unwrap()
        .workload(1, 16, profiles::LANES, profiles::SUBWARPS)
        .to_string();
    let (r, peak) = measure(|| sm_core::parse_workload(&aes));
    r.expect("profile workload");
    row("sm_core::parse_workload aes_encrypt x16", aes.len(), peak);
    for (i, s) in stimuli().iter().enumerate() {
        let (r, peak) = measure(|| Stimulus::parse(s));
        if r.is_ok() {
            row(&format!("Stimulus::parse stimuli[{i}]"), s.len(), peak);
        }
    }
    let cycles = 100_000;
    let lines = "{}\n".repeat(cycles);
    for (name, layout) in LAYOUTS.iter() {
        let (r, peak) = measure(|| Stimulus::parse(&lines).and_then(|s| s.to_case(layout)));
        r.expect("empty cycles");
        // The case itself holds every input of every cycle, however short the text (a
        // relssp_unit at the defaults takes 520 bytes a cycle): bound what parsing takes
        // beyond it.
        let case = cycles * (layout.in_words * 8 + std::mem::size_of::<Vec<u64>>());
        row(
            &format!("Stimulus::parse + to_case {cycles} x {{}} ({name}), beyond the case"),
            lines.len(),
            peak.saturating_sub(case),
        );
    }
    let mut batch = Batch::new(Backend::Model).unwrap();
    for (i, l) in BATCH.lines().enumerate() {
        let (r, peak) = measure(|| batch.eval_line(l));
        if r.is_ok() {
            row(&format!("Batch::eval_line batch[{i}]"), l.len(), peak);
        }
    }
    for (i, s) in SWEEPS.iter().enumerate() {
        let (r, peak) = measure(|| Spec::parse(s));
        r.expect("example spec");
        row(&format!("Spec::parse sweeps[{i}]"), s.len(), peak);
    }
    for b in smrtl_testbench::blocks() {
        let (r, peak) = measure(|| (b.configure)(None, &[]).map(|_| ()));
        r.expect("defaults");
        row(&format!("configure {} (defaults)", b.name), 0, peak);
    }
    println!("{}", report.join("\n"));
    println!(
        "process: {} B now, {} B peak",
        PROCESS_CURRENT.load(Ordering::Relaxed),
        PROCESS_PEAK.load(Ordering::Relaxed)
    );
}

/// A spec's lists are checked for repeats in linear time: 16 times the seeds take at most ~16
/// times as long to parse (a quadratic check takes ~256 times: a 340 KB list of 50 000 seeds
/// took 9 s).
#[test]
fn sweep_spec_parse_time_is_linear() {
    let spec =
        |n: u64| json!({"workloads": "transpose", "seeds": (0..n).collect::<Vec<_>>()}).to_string();
    let time = |n: u64| {
        let text = spec(n);
        let start = Instant::now();
        Spec::parse(&text).expect("a valid spec");
        start.elapsed()
    };
    let small = (0..3).map(|_| time(1000)).min().expect("three runs");
    let large = time(16_000);
    assert!(
        large < small * 64 + Duration::from_millis(50),
        "Spec::parse: 1000 seeds in {small:?}, 16000 seeds in {large:?} (quadratic in the list length)"
    );
}

/// Scratchpad-sharing kernel files (docs/scratchpad-sharing.md §5.1, §6.0): the shipped
/// examples (straight-line kernels and programs with control flow in both forms), their text
/// mutated, parsed, lowered, resolved against their params and launched on the SM model (not
/// run: a mutated grid may ask for 10^6 TBs). Every refusal is one line; nothing panics.
fn check_kernel(text: &str) -> Result<(), TestCaseError> {
    use smrtl_cosim::sm::sharing_sm::{load_kernel, SharingSm};
    use smrtl_hdl::BlockParams as _;
    let parsed = guard_mem("sharing_core::load_kernel", &text, text.len(), || {
        load_kernel(text, &[])
    })?;
    let (k, p) = match parsed {
        Ok((k, p, _)) => (k, p),
        Err(e) => return one_line("sharing_core::load_kernel", &text, &e),
    };
    let launched = guard("sharing_core::SharingSm::new", &text, || {
        p.validate().map_err(|e| e.to_string())?;
        SharingSm::new(&p, &k)
            .map(|_| ())
            .map_err(|e| e.to_string())
    })?;
    match launched {
        Ok(()) => Ok(()),
        Err(e) => one_line("sharing_core::SharingSm::new", &text, &e),
    }
}

fn kernels() -> Vec<String> {
    ["fig5-owf.json", "fig5-uwf.json", "three-phase.txt"]
        .iter()
        .map(|f| {
            let path = format!("{}/../examples/sharing/{f}", env!("CARGO_MANIFEST_DIR"));
            std::fs::read_to_string(path).unwrap()
        })
        .chain([smrtl_cosim::kernel::cfg::Program::parse(include_str!(
            "../../../examples/sharing/three-phase.txt"
        ))
        .map(|p| serde_json::to_string_pretty(&p.to_file()).unwrap())
        .unwrap()])
        .collect()
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn kernel_any_text(text in any_text()) {
        check_kernel(&text)?;
    }

    #[test]
    fn kernel_mutated(text in mutated_text(kernels())) {
        check_kernel(&text)?;
    }
}
