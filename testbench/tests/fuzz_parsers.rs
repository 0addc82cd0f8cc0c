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
//!    sweep inputs: shard outputs ([`sweep::merge`]) and `--shard I/N` ([`Shard`]).
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
    include_str!("../../examples/traces/fig4_two_subwarps.json"),
    include_str!("../../examples/traces/mixed.json"),
];
const STIMULI: [&str; 4] = [
    include_str!("../../examples/run/detector-ep8.jsonl"),
    include_str!("../../examples/run/bad-line.jsonl"),
    include_str!("../../examples/run/bad-port.jsonl"),
    include_str!("../../examples/run/bad-width.jsonl"),
];
const BATCH: &str = include_str!("../../examples/conflict/batch.jsonl");
const SWEEPS: [&str; 2] = [
    include_str!("../../examples/sweep/small.json"),
    include_str!("../../examples/sweep/table5.json"),
];

// ---------------------------------------------------------------------------------------------
// Allocation counting: current and peak bytes per thread (what one parser call allocates), and
// for the whole process.
// ---------------------------------------------------------------------------------------------

struct Counting;

thread_local! {
    static CURRENT: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}
static PROCESS_CURRENT: AtomicUsize = AtomicUsize::new(0);
static PROCESS_PEAK: AtomicUsize = AtomicUsize::new(0);

fn track(delta: isize) {
    let _ = CURRENT.try_with(|c| {
        let now = c.get() + delta;
        c.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
    if delta >= 0 {
        let now = PROCESS_CURRENT.fetch_add(delta as usize, Ordering::Relaxed) + delta as usize;
        PROCESS_PEAK.fetch_max(now, Ordering::Relaxed);
    } else {
        PROCESS_CURRENT.fetch_sub(delta.unsigned_abs(), Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: AllocLayout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: AllocLayout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: AllocLayout) {
        System.dealloc(ptr, layout);
        track(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: AllocLayout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            track(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Runs `f` on this thread; returns its result and the growth of this thread's peak allocated
/// bytes while it ran (the result included). Not nested.
fn measure<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let start = CURRENT.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let r = f();
    let peak = PEAK.with(Cell::get);
    (r, (peak - start).max(0) as usize)
}

// ---------------------------------------------------------------------------------------------
// Panics: caught per call, reported with their location and the input.
// ---------------------------------------------------------------------------------------------

/// The payload of the deliberate unwind that stops a long run (see [`bounded_cycles`]).
struct RunCap;

thread_local! {
    static LAST_PANIC: RefCell<String> = const { RefCell::new(String::new()) };
}

fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().is::<RunCap>() {
                return;
            }
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let at = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            // The innermost project functions on the stack (the panic may be in a dependency).
            let trace = std::backtrace::Backtrace::force_capture().to_string();
            let frames: Vec<&str> = trace
                .lines()
                .map(str::trim)
                .filter_map(|l| l.split_once(": ").map(|(_, f)| f))
                .filter(|f| f.starts_with("smrtl") && !f.contains("fuzz_parsers"))
                .take(3)
                .collect();
            let _ = LAST_PANIC
                .try_with(|p| *p.borrow_mut() = format!("{at} (in {}): {msg}", frames.join(" < ")));
            previous(info);
        }));
    });
}

/// `f()`, or a test failure naming the call, the panic's location and message, and the input.
fn guard<R>(
    what: &str,
    input: &dyn std::fmt::Debug,
    f: impl FnOnce() -> R,
) -> Result<R, TestCaseError> {
    install_panic_hook();
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| {
        let at = LAST_PANIC.with(|p| p.borrow().clone());
        TestCaseError::fail(format!("{what} panicked at {at}; input: {input:?}"))
    })
}

/// [`guard`] and [`measure`]: also fails if the call allocated more than the bound for `len`
/// input bytes.
fn guard_mem<R>(
    what: &str,
    input: &dyn std::fmt::Debug,
    len: usize,
    f: impl FnOnce() -> R,
) -> Result<R, TestCaseError> {
    let (r, peak) = guard(what, input, || measure(f))?;
    let bound = MEM_PER_BYTE * len + MEM_BASE;
    if peak > bound {
        return Err(TestCaseError::fail(format!(
            "{what} allocated {peak} bytes (peak) for {len} input bytes (bound {bound}); input: {input:?}"
        )));
    }
    Ok(r)
}

/// An error must be one line.
fn one_line(what: &str, input: &dyn std::fmt::Debug, e: &str) -> Result<(), TestCaseError> {
    if e.contains(['\n', '\r']) {
        return Err(TestCaseError::fail(format!(
            "{what}: the error is not one line: {e:?}; input: {input:?}"
        )));
    }
    Ok(())
}

/// A fixed seed, so a run is reproduced bit for bit (`PROPTEST_RNG_SEED` overrides it to
/// explore further).
fn config(cases: u32) -> ProptestConfig {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261124);
    ProptestConfig {
        cases,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed),
        max_shrink_iters: 512,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Input strategies.
// ---------------------------------------------------------------------------------------------

/// What a parser reads: its field names and the strings and numbers it gives meaning to.
#[derive(Clone, Debug)]
struct Schema {
    keys: Vec<String>,
    strings: Vec<String>,
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Strings every parser here gives a meaning to (enum names of the params).
const NAMES: [&str; 22] = [
    "unified",
    "split",
    "elastic",
    "mem_first",
    "nonmem_first",
    "literal",
    "multicast",
    "gpgpusim-limited",
    "gpgpusim_limited",
    "rr",
    "bcaws",
    "strict",
    "issue_if_no_nonmem",
    "load_pred",
    "load_pred_plus_sm1",
    "at_writeback",
    "icnt",
    "true",
    "false",
    "0x",
    "0xff",
    "",
];

/// Numbers at and beyond the edges of what the parsers accept.
fn edge_numbers() -> Vec<Value> {
    let mut v: Vec<Value> = [
        0u64,
        1,
        2,
        3,
        4,
        7,
        8,
        9,
        15,
        16,
        17,
        31,
        32,
        33,
        63,
        64,
        65,
        100,
        255,
        256,
        1023,
        1024,
        1025,
        4096,
        65535,
        65536,
        100_000,
        100_001,
        1 << 20,
        10_000_000,
        u32::MAX as u64,
        1 << 32,
        i64::MAX as u64,
        u64::MAX,
    ]
    .into_iter()
    .map(Value::from)
    .collect();
    v.extend([-1i64, -2, -4294967296, i64::MIN].map(Value::from));
    v.extend([0.5f64, 1.0, 2.0, -0.0, 1e20, 1e300, -1e300, 4294967295.5].map(Value::from));
    v.push(serde_json::from_str("99999999999999999999").expect("a JSON number"));
    v
}

fn number() -> BoxedStrategy<Value> {
    prop_oneof![
        4 => select(edge_numbers()),
        3 => (0u64..70).prop_map(Value::from),
        1 => any::<u64>().prop_map(Value::from),
        1 => any::<i64>().prop_map(Value::from),
        1 => any::<f64>().prop_map(Value::from),
    ]
    .boxed()
}

/// Strings with control characters, quotes and backslashes among the usual ones.
fn wild_string() -> BoxedStrategy<String> {
    prop_oneof![
        "[\\n\\r\\t \"\\\\a-zA-Z0-9(){}_=,.-]{0,12}",
        any::<String>(),
        "[0-9]{0,25}",
        "0x[0-9a-fA-F_]{0,40}",
    ]
    .boxed()
}

fn string(s: &Schema) -> BoxedStrategy<String> {
    prop_oneof![
        4 => select(s.strings.clone()),
        2 => select(s.keys.clone()),
        1 => select(strings(&NAMES)),
        2 => wild_string(),
    ]
    .boxed()
}

fn key(s: &Schema) -> BoxedStrategy<String> {
    prop_oneof![5 => select(s.keys.clone()), 1 => wild_string()].boxed()
}

/// Arbitrary JSON values, keys mostly the schema's.
fn json_value(s: &Schema) -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        4 => number(),
        4 => string(s).prop_map(Value::String),
    ];
    let keys = key(s);
    leaf.prop_recursive(5, 64, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((keys.clone(), inner), 0..8)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
    .boxed()
}

/// Arbitrary JSON objects (the top level of every file here), as text.
fn json_object_text(s: &Schema) -> BoxedStrategy<String> {
    let keys = key(s);
    prop_oneof![
        1 => json_value(s).prop_map(|v| v.to_string()),
        4 => prop::collection::vec((keys, json_value(s)), 0..6)
            .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>()).to_string()),
    ]
    .boxed()
}

/// Arbitrary text: random bytes read as UTF-8 (invalid sequences become U+FFFD), and soup of
/// JSON's own characters.
fn any_text() -> BoxedStrategy<String> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..256)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        "[\\[\\]{}\":,0-9a-zA-Z_ .eE+\\-\\n\\\\]{0,200}",
        any::<String>(),
    ]
    .boxed()
}

/// One edit of a JSON value: at the node reached by following `path` (child `i % len` at each
/// level, stopping at a leaf), replace the node, remove a child, or add a child.
#[derive(Clone, Debug)]
enum Edit {
    Replace(Vec<Index>, Value),
    Remove(Vec<Index>, Index),
    Add(Vec<Index>, String, Value, Index),
}

fn edits(s: &Schema, values: BoxedStrategy<Value>) -> BoxedStrategy<Vec<Edit>> {
    let path = prop::collection::vec(any::<Index>(), 0..7);
    let edit = prop_oneof![
        4 => (path.clone(), values.clone()).prop_map(|(p, v)| Edit::Replace(p, v)),
        1 => (path.clone(), any::<Index>()).prop_map(|(p, i)| Edit::Remove(p, i)),
        2 => (path, key(s), values, any::<Index>()).prop_map(|(p, k, v, i)| Edit::Add(p, k, v, i)),
    ];
    prop::collection::vec(edit, 1..4).boxed()
}

fn walk<'a>(node: &'a mut Value, path: &[Index]) -> &'a mut Value {
    let Some((i, rest)) = path.split_first() else {
        return node;
    };
    let descend = match &*node {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    };
    if !descend {
        return node;
    }
    match node {
        Value::Object(m) => {
            let k = m.keys().nth(i.index(m.len())).expect("in range").clone();
            walk(m.get_mut(&k).expect("present"), rest)
        }
        Value::Array(a) => {
            let n = i.index(a.len());
            walk(&mut a[n], rest)
        }
        _ => unreachable!("checked above"),
    }
}

fn apply(v: &mut Value, edit: &Edit) {
    match edit {
        Edit::Replace(path, x) => *walk(v, path) = x.clone(),
        Edit::Remove(path, i) => match walk(v, path) {
            Value::Object(m) if !m.is_empty() => {
                let k = m.keys().nth(i.index(m.len())).expect("in range").clone();
                m.remove(&k);
            }
            Value::Array(a) if !a.is_empty() => {
                a.remove(i.index(a.len()));
            }
            _ => {}
        },
        Edit::Add(path, k, x, i) => match walk(v, path) {
            Value::Object(m) => {
                m.insert(k.clone(), x.clone());
            }
            Value::Array(a) => a.insert(i.index(a.len() + 1), x.clone()),
            leaf => *leaf = x.clone(),
        },
    }
}

/// Raw text edits of a valid input.
#[derive(Clone, Debug)]
enum TextEdit {
    Insert(Index, String),
    Delete(Index, usize),
    Truncate(Index),
}

const TOKENS: [&str; 24] = [
    "99999999999999999999",
    "-1",
    "1e300",
    "1e999",
    "-0",
    "0.5",
    "4294967295",
    "18446744073709551616",
    "null",
    "true",
    "\"\\n\"",
    "\"\\u0000\"",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\",
    "\n",
    "{}",
    "[]",
    "\u{feff}",
];

fn text_edits() -> BoxedStrategy<Vec<TextEdit>> {
    let edit = prop_oneof![
        3 => (any::<Index>(), prop_oneof![select(strings(&TOKENS)), wild_string()])
            .prop_map(|(i, s)| TextEdit::Insert(i, s)),
        2 => (any::<Index>(), 1usize..8).prop_map(|(i, n)| TextEdit::Delete(i, n)),
        1 => any::<Index>().prop_map(TextEdit::Truncate),
    ];
    prop::collection::vec(edit, 1..4).boxed()
}

fn floor_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply_text(text: &str, edits: &[TextEdit]) -> String {
    let mut t = text.to_string();
    for e in edits {
        match e {
            TextEdit::Insert(i, s) => {
                let at = floor_boundary(&t, i.index(t.len() + 1));
                t.insert_str(at, s);
            }
            TextEdit::Delete(i, n) => {
                let a = floor_boundary(&t, i.index(t.len() + 1));
                let b = floor_boundary(&t, a + n);
                t.replace_range(a..b, "");
            }
            TextEdit::Truncate(i) => {
                let at = floor_boundary(&t, i.index(t.len() + 1));
                t.truncate(at);
            }
        }
    }
    t
}

/// A valid JSON file of `bases` with one to three fields edited (values from `values`).
fn mutated_json(
    s: &Schema,
    bases: Vec<Value>,
    values: BoxedStrategy<Value>,
) -> BoxedStrategy<String> {
    (select(bases), edits(s, values))
        .prop_map(|(mut v, edits)| {
            for e in &edits {
                apply(&mut v, e);
            }
            v.to_string()
        })
        .boxed()
}

/// A valid JSON-lines file of `bases` with one to three lines edited.
fn mutated_lines(
    s: &Schema,
    bases: Vec<Vec<Value>>,
    values: BoxedStrategy<Value>,
) -> BoxedStrategy<String> {
    let line_edits = prop::collection::vec((any::<Index>(), edits(s, values)), 1..3);
    (select(bases), line_edits)
        .prop_map(|(mut lines, edits)| {
            for (i, es) in &edits {
                if lines.is_empty() {
                    break;
                }
                let n = i.index(lines.len());
                for e in es {
                    apply(&mut lines[n], e);
                }
            }
            lines
                .iter()
                .map(|l| l.to_string() + "\n")
                .collect::<String>()
        })
        .boxed()
}

/// A valid text with a few bytes edited.
fn mutated_text(bases: Vec<String>) -> BoxedStrategy<String> {
    (select(bases), text_edits())
        .prop_map(|(t, e)| apply_text(&t, &e))
        .boxed()
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("a shipped example is JSON")
}

fn parse_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// `--set` style overrides: names mostly from `names`, values from `values` or anything.
fn set_pairs(
    names: Vec<String>,
    values: Vec<String>,
    n: std::ops::Range<usize>,
) -> BoxedStrategy<Vec<(String, String)>> {
    let name = prop_oneof![6 => select(names), 1 => wild_string()];
    let value = prop_oneof![
        5 => select(values),
        2 => number().prop_map(|n| n.to_string()),
        1 => json_value(&value_schema()).prop_map(|v| v.to_string()),
        2 => wild_string(),
    ];
    prop::collection::vec((name, value), n).boxed()
}

/// Values for `--set`: numbers as text, the enum names, structured values.
fn set_values() -> Vec<String> {
    let mut v = strings(&NAMES);
    v.extend(
        [
            "0",
            "1",
            "2",
            "3",
            "4",
            "8",
            "12",
            "16",
            "30",
            "32",
            "33",
            "64",
            "65",
            "256",
            "1024",
            "100000",
            "100001",
            "4294967295",
            "4294967296",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
            "-1",
            "1e300",
            "0.5",
            "+1",
            " 1",
            "0x10",
            "yes",
            "TRUE",
            "Rr",
            "ELASTIC",
            "gpgpusim-Limited",
            "{\"icnt\": 400}",
            "{\"icnt\": 100000}",
            "{\"icnt\": 100001}",
            "{\"icnt\": 0}",
            "{\"icnt\": -1}",
            "{\"icnt\": 1e300}",
            "{\"icnt\": 4294967296}",
            "{\"icnt\": 1, \"x\": 2}",
            "\"at_writeback\"",
            "{\"at_writeback\": null}",
            "{}",
            "[]",
            "[1]",
            "null",
            "\"\"",
            "a\nb",
            "\u{0}",
        ]
        .map(String::from),
    );
    v
}

fn value_schema() -> Schema {
    Schema {
        keys: strings(&["icnt", "at_writeback", "x"]),
        strings: strings(&NAMES),
    }
}

// ---------------------------------------------------------------------------------------------
// Schemas and valid inputs of each parser.
// ---------------------------------------------------------------------------------------------

fn block_param_names() -> Vec<String> {
    let mut v: Vec<String> = smrtl_testbench::blocks()
        .iter()
        .flat_map(|b| (b.params)().into_iter().map(|p| p.name.to_string()))
        .collect();
    v.sort();
    v.dedup();
    v
}

fn sm_param_names() -> Vec<String> {
    let v = serde_json::to_value(SmParams::default()).expect("params serialize");
    v.as_object().expect("an object").keys().cloned().collect()
}

fn trace_schema() -> Schema {
    let mut keys = strings(&[
        "params",
        "stream",
        "icnt_valid_cycles",
        "kind",
        "addrs",
        "active",
        "deg",
    ]);
    keys.extend(block_param_names());
    let mut s = strings(&[
        "A",
        "G",
        "GST",
        "S(1)",
        "S(2)",
        "S(8)",
        "S(0)",
        "S(9)",
        "S(33)",
        "S(-1)",
        "S( 2 )",
        "S()",
        "S(99999999999999999999)",
        "alu",
        "smem",
        "gld",
        "gst",
    ]);
    s.extend(strings(&NAMES));
    Schema { keys, strings: s }
}

fn workload_schema() -> Schema {
    let mut keys = strings(&[
        "params",
        "warps",
        "op",
        "pc",
        "degrees",
        "addrs",
        "active",
        "icnt",
        "at_writeback",
    ]);
    keys.extend(sm_param_names());
    let mut s = strings(&["alu", "gld", "gst", "smem", "mul"]);
    s.extend(strings(&NAMES));
    Schema { keys, strings: s }
}

/// Small valid workloads (a profile's is long to run; these are cut short).
fn workloads() -> Vec<Value> {
    let micro = json!({
        "params": {"pipe_mode": "elastic", "M": 2, "N": 1, "Q": 2, "fe_depth": 1, "S": 2, "W": 4,
                   "hc_sets": 16, "gmem_return": "at_writeback", "sched": "bcaws"},
        "warps": [
            [{"op": "alu", "pc": 0}, {"op": "smem", "pc": 1, "degrees": [4, 1]},
             {"op": "smem", "pc": 2, "addrs": [[0, 8, 16, 24, 32, 40, 48, 56], [1, 2, 3, 4, 5, 6, 7, 8]],
              "active": [[true, true, true, true, true, true, true, false],
                         [true, true, true, true, true, true, true, true]]},
             {"op": "gld", "pc": 3}, {"op": "gst", "pc": 4}, {"op": "smem", "pc": 5}],
            [{"op": "alu", "pc": 0}, {"op": "smem", "pc": 1, "degrees": [2, 2]}, {"op": "gld", "pc": 6}]
        ]
    });
    let icnt = json!({
        "params": {"sched": "rr", "pipe_mode": "unified", "W": 2, "gmem_return": {"icnt": 20}},
        "warps": [[{"op": "gld", "pc": 0}, {"op": "smem", "pc": 1, "degrees": [1, 2, 3, 4]}, {"op": "alu", "pc": 2}],
                  [{"op": "gst", "pc": 0}]]
    });
    let mut profile = profiles::profile("transpose")
        .expect("a Table-5 profile")
        .workload(1, 1, profiles::LANES, profiles::SUBWARPS);
    let warps = profile["warps"].as_array_mut().expect("warps");
    warps.truncate(3);
    for w in warps {
        w.as_array_mut().expect("a warp").truncate(12);
    }
    vec![micro, icnt, profile, json!({"warps": []})]
}

/// Every registered block's input ports at its default params.
static LAYOUTS: LazyLock<Vec<(&'static str, smrtl_cosim::Layout)>> = LazyLock::new(|| {
    smrtl_testbench::blocks()
        .iter()
        .map(|b| {
            let d = (b.configure)(None, &[]).expect("default params configure");
            (b.name, d.layout.clone())
        })
        .collect()
});

fn stimulus_schema() -> Schema {
    let mut keys = strings(&["block", "params", "cycles"]);
    for (_, l) in LAYOUTS.iter() {
        keys.extend(l.inputs.iter().map(|s| s.name.clone()));
    }
    keys.extend(block_param_names());
    keys.sort();
    keys.dedup();
    let mut s: Vec<String> = smrtl_testbench::blocks()
        .iter()
        .map(|b| b.name.to_string())
        .collect();
    s.extend(strings(&[
        "0x0",
        "0xff",
        "0x3800c0028008001800400080000",
        "0x_1",
        "0xg",
        "0x1_0000_0000_0000_0000",
        "1",
        "18446744073709551616",
        "-1",
    ]));
    s.extend(strings(&NAMES));
    Schema { keys, strings: s }
}

/// Valid stimulus files: the examples, and a replay file per block.
fn stimuli() -> Vec<String> {
    let mut v = strings(&STIMULI);
    for b in smrtl_testbench::blocks() {
        let d = (b.configure)(None, &[]).expect("default params configure");
        let mut case = vec![vec![0u64; d.layout.in_words]; 3];
        for (c, buf) in case.iter_mut().enumerate() {
            for s in &d.layout.inputs {
                let w = s.width.min(64);
                s.set(
                    buf,
                    (c as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) & smrtl_hdl::netlist::mask(w),
                );
            }
        }
        let file = StimulusFile::new(b.name, &d.params, &d.layout, &case);
        v.push(serde_json::to_string_pretty(&file).expect("serializes"));
    }
    v
}

fn batch_schema() -> Schema {
    Schema {
        keys: strings(&[
            "lanes",
            "banks",
            "layer_bytes",
            "mode_bytes",
            "elem_bytes",
            "ports",
            "mode",
            "addrs",
            "active",
        ]),
        strings: strings(&NAMES),
    }
}

fn sweep_schema() -> Schema {
    let mut keys = strings(&["params", "workloads", "seeds", "waves"]);
    keys.extend(sm_param_names());
    let mut s: Vec<String> = profiles::names().iter().map(|n| n.to_string()).collect();
    s.extend(strings(&["DCT", "fft"]));
    s.extend(strings(&NAMES));
    Schema { keys, strings: s }
}

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
            "../../examples/sharing/three-phase.txt"
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
