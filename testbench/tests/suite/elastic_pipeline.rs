//! docs/elastic-pipeline.md §9 acceptance examples on the trace-mode pipeline, through the port
//! level: every scenario builds a trace file, runs it with the closed-loop driver on a
//! [`Backend`] and checks whole per-cycle records.
//!
//! The tables are transcribed from §9 as the spec prints them (`W_i±k`, `–`, `W (rem)`,
//! `stall`, `bubble`), with one added column `src` (wb_src, derived by hand from §3.2; the spec's
//! tables don't show it). A `stall` mark sits on the cycle that shows the lost issue slot (F
//! repeats), so it stands for fe_hold in the cycle before (§3.3: "the lost issue slot is t+1").
//!
//! Every scenario runs on the model and on the rusthdl RTL. Random co-simulation of the block on
//! every backend is the conformance suite's.

use serde_json::{json, Value};
use smrtl_cosim::blocks::elastic_pipeline::{Model, Record, Summary, Wb};
use smrtl_cosim::harness::backend::rusthdl::RustHdl;
use smrtl_cosim::{BlockModel, Layout, Simulator};
use smrtl_hdl::blocks::elastic_pipeline::{build, Cause, Params, PipeMode, WbSrc};
use smrtl_testbench::blocks::elastic_pipeline::layout;
use smrtl_testbench::studies::trace::{cosim, run, DriveError, Trace, TraceFile};
use std::collections::BTreeSet;
use std::sync::Arc;

/// A fresh simulator in its reset state for `p`, with its buffer layout.
type Backend = fn(&Params) -> (Box<dyn Simulator>, Layout);

/// The behavioral model.
fn model(p: &Params) -> (Box<dyn Simulator>, Layout) {
    let l = layout(p);
    (Box::new(Model::new(p, &l)), l)
}

/// Scenarios as `#[test]`s in module `$backend`, each skipped when `$guard` is false.
macro_rules! tests {
    ($backend:ident, $guard:expr; $($name:ident),* $(,)?) => {
        mod $backend {
            $(
                #[test]
                fn $name() {
                    if !$guard {
                        return;
                    }
                    super::super::$name(super::super::$backend)
                }
            )*
        }
    };
}

/// The spec's tables and fixed scenarios on one backend.
macro_rules! acceptance {
    ($backend:ident, $guard:expr) => {
        tests!($backend, $guard;
            fig_2a_unified, fig_2b_split, fig_3_prefilled, fig_3_not_prefilled,
            sec_4_3_n1, sec_4_3_n0, g6_isolated_conflict, g7_unified_warp, g8_split,
            g9_out_of_order_commit, g10_premem_depth, g11_elastic_absorbs_warp,
            icnt_unified_other_stall, icnt_split_other_stall, icnt_elastic,
            elastic_stall_causes, detector_degree, nonmem_first, min_age_is_split_latency,
            trailing_icnt);
    };
}

mod tables {
    acceptance!(model, true);
    acceptance!(rusthdl, true);
}

mod random {
    tests!(model, true; random_invariants, cosim_self);
    tests!(rusthdl, true; random_invariants, cosim_self);
}

/// The pipeline RTL in rust-hdl's simulator.
fn rusthdl(p: &Params) -> (Box<dyn Simulator>, Layout) {
    let m = Arc::new(build(p));
    let l = Layout::new(&m.ports());
    (Box::new(RustHdl::new(m)), l)
}

// ---------------------------------------------------------------------------------------------
// Helpers (generic over the simulator)
// ---------------------------------------------------------------------------------------------

/// The driver on any simulator; panics with the driver's error.
fn records(sim: &mut dyn Simulator, layout: &Layout, trace: &Trace) -> Vec<Record> {
    run(sim, layout, trace, trace.cycle_budget()).unwrap_or_else(|e| panic!("{e}"))
}

fn run_on(backend: Backend, trace: &Trace) -> Vec<Record> {
    let (mut sim, layout) = backend(&trace.params);
    records(sim.as_mut(), &layout, trace)
}

/// `"A*4 S(2) A*6"` → `["A", "A", "A", "A", "S(2)", "A", ...]`.
fn stream(spec: &str) -> Vec<Value> {
    spec.split_whitespace()
        .flat_map(|item| {
            let (name, n) = item
                .split_once('*')
                .map_or((item, 1), |(name, n)| (name, n.parse().unwrap()));
            std::iter::repeat_n(json!(name), n)
        })
        .collect()
}

/// A micro-test configuration (§9 setup): fe_depth = 1, P = 1, Q = M.
fn micro(mode: &str, m: u32, n: u32) -> Value {
    json!({"pipe_mode": mode, "M": m, "N": n, "Q": m, "fe_depth": 1, "P": 1})
}

fn with(mut params: Value, key: &str, v: Value) -> Value {
    params[key] = v;
    params
}

/// Builds a trace through the trace-file parser.
fn trace(params: Value, stream: Vec<Value>, icnt: &[u64]) -> Trace {
    Trace::from_file(&TraceFile {
        params: params.as_object().unwrap().clone(),
        stream,
        icnt_valid_cycles: icnt.to_vec(),
    })
    .unwrap()
}

fn fe_hold_cycles(records: &[Record]) -> BTreeSet<u64> {
    records.iter().filter(|r| r.fe_hold).map(|r| r.t).collect()
}

/// The cycle in which `tag` occupies WB.
fn wb_cycle(records: &[Record], tag: u32) -> u64 {
    records
        .iter()
        .find(|r| r.wb == Wb::Entry(tag))
        .unwrap_or_else(|| panic!("entry {tag} never reaches WB"))
        .t
}

fn json_of(r: &Record) -> String {
    serde_json::to_string(r).unwrap()
}

/// An all-empty record of cycle t for `p`.
fn empty_record(p: &Params, t: u64) -> Record {
    let elastic = p.pipe_mode == PipeMode::Elastic;
    Record {
        t,
        f: None,
        d: vec![None; p.fe_depth as usize],
        exe: None,
        pre: elastic.then(Vec::new),
        mem0: None,
        rem: 0,
        mem: vec![None; p.mem_stages as usize - 1],
        nq: elastic.then(Vec::new),
        nm: (p.pipe_mode == PipeMode::Split).then(|| vec![None; p.mem_stages as usize]),
        wb: Wb::Empty,
        wb_src: WbSrc::None,
        fe_hold: false,
        cause: Cause::None,
    }
}

fn is_empty_cell(cell: &str) -> bool {
    matches!(cell, "–" | "-" | "")
}

/// `W_i`, `W_i+3`, `W_i−1` → the stream index, with W_i = entry `w`.
fn tag(w: u32, cell: &str) -> u32 {
    let cell = cell.replace('−', "-");
    let offset = cell
        .strip_prefix("W_i")
        .unwrap_or_else(|| panic!("bad cell `{cell}`"));
    let k: i64 = if offset.is_empty() {
        0
    } else {
        offset.parse().unwrap()
    };
    (w as i64 + k) as u32
}

fn latch(w: u32, cell: &str) -> Option<u32> {
    (!is_empty_cell(cell)).then(|| tag(w, cell))
}

fn list(w: u32, cell: &str) -> Vec<u32> {
    if is_empty_cell(cell) {
        return vec![];
    }
    cell.split(',').map(|c| tag(w, c.trim())).collect()
}

/// Checks a §9 table against `records`: each listed cycle's whole record, and that fe_hold is
/// set in exactly the cycles before the `stall` marks (all with `cause`), `stalls` in all.
/// W_i is stream entry `w`, in F during cycle i = w + 1 (§3.1: no stall before it).
fn check_table(records: &[Record], p: &Params, w: u32, table: &str, stalls: u64, cause: Cause) {
    let i = w as u64 + 1;
    let mut lines = table.lines().map(str::trim).filter(|l| !l.is_empty());
    let cells = |line: &str| -> Vec<String> {
        let line = line.trim().trim_matches('|');
        line.split('|').map(|c| c.trim().to_string()).collect()
    };
    let header = cells(lines.next().unwrap());
    let rows: Vec<Vec<String>> = lines.map(cells).collect();
    let cycle = |cell: &str| -> u64 {
        let k = cell.strip_prefix('i').unwrap().replace('−', "-");
        (i as i64 + if k.is_empty() { 0 } else { k.parse().unwrap() }) as u64
    };
    let marks: BTreeSet<u64> = rows
        .iter()
        .filter(|row| row.iter().any(|c| c.ends_with(" stall")))
        .map(|row| cycle(&row[0]))
        .collect();
    for row in &rows {
        let t = cycle(&row[0]);
        let mut want = empty_record(p, t);
        for (col, cell) in header.iter().zip(row).skip(1) {
            let cell = cell.trim_end_matches(" stall");
            match col.as_str() {
                "F" => want.f = latch(w, cell),
                "D" | "D1" => want.d[0] = latch(w, cell),
                "EXE" => want.exe = latch(w, cell),
                "PRE" => want.pre = Some(list(w, cell)),
                "NQ" | "NQ (old..new)" => want.nq = Some(list(w, cell)),
                "MEM0" => {
                    if let Some((x, rem)) = cell.split_once(" (") {
                        want.mem0 = Some(tag(w, x));
                        want.rem = rem.trim_end_matches(')').parse().unwrap();
                    } else {
                        assert!(is_empty_cell(cell), "MEM0 cell `{cell}` without rem");
                    }
                }
                "WB" => {
                    want.wb = match cell {
                        "bubble" => Wb::Empty,
                        "ICNT" => Wb::Icnt,
                        _ => latch(w, cell).map_or(Wb::Empty, Wb::Entry),
                    }
                }
                "src" => want.wb_src = serde_json::from_value(json!(cell)).unwrap(),
                other => {
                    if let Some(k) = other.strip_prefix("MEM") {
                        want.mem[k.parse::<usize>().unwrap() - 1] = latch(w, cell);
                    } else if let Some(k) = other.strip_prefix("NM") {
                        want.nm.as_mut().unwrap()[k.parse::<usize>().unwrap()] = latch(w, cell);
                    } else {
                        panic!("unknown column {other}");
                    }
                }
            }
        }
        want.fe_hold = marks.contains(&(t + 1));
        if want.fe_hold {
            want.cause = cause;
        }
        let got = records
            .get(t as usize)
            .unwrap_or_else(|| panic!("run ended before cycle {t}"));
        assert_eq!(
            got,
            &want,
            "cycle {} (row {}):\n  got  {}\n  want {}",
            t,
            row[0],
            json_of(got),
            json_of(&want)
        );
    }
    let expected_holds: BTreeSet<u64> = marks.iter().map(|m| m - 1).collect();
    assert_eq!(fe_hold_cycles(records), expected_holds, "fe_hold cycles");
    let s = Summary::of(records);
    assert_eq!(s.stalls, stalls, "stalls");
    let by_cause = match cause {
        Cause::BankConflict => s.stall_causes.bank_conflict,
        _ => s.stall_causes.other,
    };
    assert_eq!(by_cause, stalls, "stall causes {:?}", s.stall_causes);
}

// ---------------------------------------------------------------------------------------------
// §9 tables
// ---------------------------------------------------------------------------------------------

/// Fig. 2a: Unified, M = 2, A×4, W_i = S(2), A×6 (i = 5): 1 stall (`bank_conflict`).
pub fn fig_2a_unified(backend: Backend) {
    let t = trace(micro("unified", 2, 0), stream("A*4 S(2) A*6"), &[]);
    let r = run_on(backend, &t);
    check_table(
        &r,
        &t.params,
        4,
        "
        | cyc | F | D | EXE | MEM0 | MEM1 | WB | src |
        | i+2 | W_i+2 | W_i+1 | W_i | W_i−1 (1) | W_i−2 | W_i−3 | MEM |
        | i+3 | W_i+3 | W_i+2 | W_i+1 | W_i (2) | W_i−1 | W_i−2 | MEM |
        | i+4 | W_i+3 stall | W_i+2 | W_i+1 | W_i (1) | – | W_i−1 | MEM |
        | i+5 | W_i+4 | W_i+3 | W_i+2 | W_i+1 (1) | W_i | bubble | NONE |
        | i+6 | W_i+5 | W_i+4 | W_i+3 | W_i+2 (1) | W_i+1 | W_i | MEM |
        ",
        1,
        Cause::BankConflict,
    );
}

/// Fig. 2b: Split, M = 2, same stream: 1 stall. The table shows W_i+6 in F at i+7, so the
/// stream here has A×7 (with A×6, F is empty at i+7; nothing else changes).
pub fn fig_2b_split(backend: Backend) {
    let t = trace(micro("split", 2, 0), stream("A*4 S(2) A*7"), &[]);
    let r = run_on(backend, &t);
    check_table(
        &r,
        &t.params,
        4,
        "
        | cyc | F | D | EXE | MEM0 | MEM1 | NM0 | NM1 | WB | src |
        | i+3 | W_i+3 | W_i+2 | W_i+1 | W_i (2) | – | – | W_i−1 | W_i−2 | NM |
        | i+4 | W_i+4 | W_i+3 | W_i+2 | W_i (1) | – | W_i+1 | – | W_i−1 | NM |
        | i+5 | W_i+5 | W_i+4 | W_i+3 | – | W_i | W_i+2 | W_i+1 | bubble | NONE |
        | i+6 | W_i+5 stall | W_i+4 | W_i+3 | – | – | W_i+2 | W_i+1 | W_i | MEM |
        | i+7 | W_i+6 | W_i+5 | W_i+4 | – | – | W_i+3 | W_i+2 | W_i+1 | NM |
        ",
        1,
        Cause::BankConflict,
    );
}

/// Fig. 3: Elastic, M = 2, N = 0, NQ pre-filled: G, G, A×4, W_i = S(2), A×6 (i = 7). 0 stalls,
/// no WB bubble, W_i+1 commits before W_i.
pub fn fig_3_prefilled(backend: Backend) {
    let t = trace(micro("elastic", 2, 0), stream("G G A*4 S(2) A*6"), &[]);
    let r = run_on(backend, &t);
    check_table(
        &r,
        &t.params,
        6,
        "
        | cyc | F | D | EXE | MEM0 | MEM1 | NQ (old..new) | WB | src |
        | i+3 | W_i+3 | W_i+2 | W_i+1 | W_i (2) | – | W_i−1 | W_i−2 | NQ |
        | i+4 | W_i+4 | W_i+3 | W_i+2 | W_i (1) | – | W_i+1 | W_i−1 | NQ |
        | i+5 | W_i+5 | W_i+4 | W_i+3 | – | W_i | W_i+2 | W_i+1 | NQ |
        | i+6 | W_i+6 | W_i+5 | W_i+4 | – | – | W_i+2, W_i+3 | W_i | MEM |
        | i+7 | – | W_i+6 | W_i+5 | – | – | W_i+3, W_i+4 | W_i+2 | NQ |
        ",
        0,
        Cause::None,
    );
    assert_eq!(Summary::of(&r).wb_bubbles, 0);
}

/// Fig. 3 without the pre-fill: A×4, S(2), A×6 (i = 5). The spec gives WB for i+3..i+7 (bubble,
/// W_i+1, W_i+2, W_i, W_i+3) and 0 stalls; the other columns are derived by hand from §3.2.
pub fn fig_3_not_prefilled(backend: Backend) {
    let t = trace(micro("elastic", 2, 0), stream("A*4 S(2) A*6"), &[]);
    let r = run_on(backend, &t);
    check_table(
        &r,
        &t.params,
        4,
        "
        | cyc | F | D | EXE | MEM0 | MEM1 | NQ | WB | src |
        | i+3 | W_i+3 | W_i+2 | W_i+1 | W_i (2) | – | – | bubble | NONE |
        | i+4 | W_i+4 | W_i+3 | W_i+2 | W_i (1) | – | – | W_i+1 | EXE |
        | i+5 | W_i+5 | W_i+4 | W_i+3 | – | W_i | – | W_i+2 | EXE |
        | i+6 | W_i+6 | W_i+5 | W_i+4 | – | – | W_i+3 | W_i | MEM |
        | i+7 | – | W_i+6 | W_i+5 | – | – | W_i+4 | W_i+3 | NQ |
        ",
        0,
        Cause::None,
    );
}

/// §4.3 / Fig. 4: Elastic, M = 2, N = 1: A×4, W_i = S(2) (sw0), W_i+1 = S(1) (sw1), A×5 (i = 5).
/// 0 stalls; W_i+1 waits in PRE during i+4, W_i+2 goes EXE → WB at i+5.
pub fn sec_4_3_n1(backend: Backend) {
    let t = trace(micro("elastic", 2, 1), stream("A*4 S(2) S(1) A*5"), &[]);
    let r = run_on(backend, &t);
    check_table(
        &r,
        &t.params,
        4,
        "
        | cyc | F | D | EXE | PRE | MEM0 | MEM1 | NQ | WB | src |
        | i+3 | W_i+3 | W_i+2 | W_i+1 | – | W_i (2) | – | – | bubble | NONE |
        | i+4 | W_i+4 | W_i+3 | W_i+2 | W_i+1 | W_i (1) | – | – | bubble | NONE |
        | i+5 | W_i+5 | W_i+4 | W_i+3 | – | W_i+1 (1) | W_i | – | W_i+2 | EXE |
        | i+6 | W_i+6 | W_i+5 | W_i+4 | – | – | W_i+1 | W_i+3 | W_i | MEM |
        | i+7 | – | W_i+6 | W_i+5 | – | – | – | W_i+3, W_i+4 | W_i+1 | MEM |
        ",
        0,
        Cause::None,
    );
}

/// §4.3 with N = 0: 1 stall; W_i+1 held in EXE, the front end stalls in i+4. The spec gives
/// only that; the rows are derived by hand from §3.2.
pub fn sec_4_3_n0(backend: Backend) {
    let t = trace(micro("elastic", 2, 0), stream("A*4 S(2) S(1) A*5"), &[]);
    let r = run_on(backend, &t);
    check_table(
        &r,
        &t.params,
        4,
        "
        | cyc | F | D | EXE | PRE | MEM0 | MEM1 | NQ | WB | src |
        | i+3 | W_i+3 | W_i+2 | W_i+1 | – | W_i (2) | – | – | bubble | NONE |
        | i+4 | W_i+3 stall | W_i+2 | W_i+1 | – | W_i (1) | – | – | bubble | NONE |
        | i+5 | W_i+4 | W_i+3 | W_i+2 | – | W_i+1 (1) | W_i | – | bubble | NONE |
        | i+6 | W_i+5 | W_i+4 | W_i+3 | – | – | W_i+1 | W_i+2 | W_i | MEM |
        | i+7 | W_i+6 | W_i+5 | W_i+4 | – | – | – | W_i+2, W_i+3 | W_i+1 | MEM |
        ",
        1,
        Cause::BankConflict,
    );
}

// ---------------------------------------------------------------------------------------------
// §9 checks G6–G11
// ---------------------------------------------------------------------------------------------

/// G6: Unified, an isolated S(d) among A entries, t0 = its first MEM0 cycle: exactly c−1 stalls
/// (c = ⌈d/P⌉; d−1 at P = 1), lost slots t0+1 … t0+c−1 (fe_hold at t0 … t0+c−2), and c−1 WB
/// bubbles starting at t0+M.
pub fn g6_isolated_conflict(backend: Backend) {
    for m in [1, 2, 4] {
        for fe_depth in [1, 3] {
            for ports in [1, 2] {
                for d in 1..=8u32 {
                    let params =
                        json!({"pipe_mode": "unified", "M": m, "fe_depth": fe_depth, "P": ports});
                    let t = trace(params, stream(&format!("A*4 S({d}) A*8")), &[]);
                    let r = run_on(backend, &t);
                    let what = format!("M={m} fe_depth={fe_depth} P={ports} d={d}");
                    let t0 = r.iter().find(|x| x.mem0 == Some(4)).unwrap().t;
                    let c = d.div_ceil(ports) as u64;
                    let holds: BTreeSet<u64> = (t0..t0 + c - 1).collect();
                    assert_eq!(fe_hold_cycles(&r), holds, "{what}");
                    let s = Summary::of(&r);
                    assert_eq!(s.stall_causes.bank_conflict, c - 1, "{what}");
                    assert_eq!(s.wb_bubbles, c - 1, "{what}");
                    let bubbles: BTreeSet<u64> = r
                        .iter()
                        .filter(|x| x.wb == Wb::Empty && x.t > t0 && x.t < s.last_wb_cycle.unwrap())
                        .map(|x| x.t)
                        .collect();
                    let m = m as u64;
                    assert_eq!(bubbles, (t0 + m..t0 + m + c - 1).collect(), "{what}");
                }
            }
        }
    }
}

/// G7: Unified, M = 4, an SMEM warp (8, 8, 8, 8) as 4 subwarp entries, then A entries: 28
/// stalls, all `bank_conflict`.
pub fn g7_unified_warp(backend: Backend) {
    let t = trace(micro("unified", 4, 0), stream("S(8)*4 A*8"), &[]);
    let s = Summary::of(&run_on(backend, &t));
    assert_eq!((s.stalls, s.stall_causes.bank_conflict), (28, 28), "{s:?}");
}

/// G8: Split, M = 2, degree 2: WB bubble at i+5, stall seen at i+6 (fe_hold at i+5), 1 stall.
pub fn g8_split(backend: Backend) {
    let t = trace(micro("split", 2, 0), stream("A*4 S(2) A*6"), &[]);
    let r = run_on(backend, &t);
    let i = 5;
    assert_eq!(r[i + 5].wb, Wb::Empty);
    assert_eq!(fe_hold_cycles(&r), BTreeSet::from([i as u64 + 5]));
    assert_eq!(r[i + 6].f, r[i + 5].f, "F repeats in the lost slot");
    let s = Summary::of(&r);
    assert_eq!((s.stalls, s.wb_bubbles), (1, 1));
}

/// G9: Fig. 3: 0 stalls, out-of-order commit; with pre-fill W_i+1 in WB at i+5, W_i at i+6.
pub fn g9_out_of_order_commit(backend: Backend) {
    let pre = run_on(
        backend,
        &trace(micro("elastic", 2, 0), stream("G G A*4 S(2) A*6"), &[]),
    );
    let (i, w) = (7, 6);
    assert_eq!((wb_cycle(&pre, w + 1), wb_cycle(&pre, w)), (i + 5, i + 6));
    assert_eq!(Summary::of(&pre).stalls, 0);
    let plain = run_on(
        backend,
        &trace(micro("elastic", 2, 0), stream("A*4 S(2) A*6"), &[]),
    );
    assert!(wb_cycle(&plain, 5) < wb_cycle(&plain, 4));
    assert_eq!(Summary::of(&plain).stalls, 0);
}

/// G10: §4.3: N = 0 → 1 stall; N = 1 → 0.
pub fn g10_premem_depth(backend: Backend) {
    for (n, stalls) in [(0, 1), (1, 0)] {
        let t = trace(micro("elastic", 2, n), stream("A*4 S(2) S(1) A*5"), &[]);
        assert_eq!(Summary::of(&run_on(backend, &t)).stalls, stalls, "N = {n}");
    }
}

/// G11: Elastic, M = 4, N = 3: warp (8, 8, 8, 8) then ≥ 28 A entries → 0 stalls; Unified: 28.
pub fn g11_elastic_absorbs_warp(backend: Backend) {
    for fe_depth in [1, 17] {
        for a in [28, 40] {
            let s = stream(&format!("S(8)*4 A*{a}"));
            let elastic = with(micro("elastic", 4, 3), "fe_depth", json!(fe_depth));
            let unified = with(micro("unified", 4, 0), "fe_depth", json!(fe_depth));
            let e = Summary::of(&run_on(backend, &trace(elastic, s.clone(), &[])));
            let u = Summary::of(&run_on(backend, &trace(unified, s, &[])));
            assert_eq!((e.stalls, u.stalls), (0, 28), "fe_depth={fe_depth} A×{a}");
            assert_eq!(u.stall_causes.bank_conflict, 28);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// ICNT, stall causes, switches (expectations derived by hand from §3.2–3.3)
// ---------------------------------------------------------------------------------------------

/// Unified: an ICNT grant blocks MEM_last; MEM0 done but MEM1 full holds EXE → stall `other`.
/// A_k: F k+1 … MEM0 k+4, MEM1 k+5, WB k+6; icnt_valid(7) blocks A2 in MEM1.
pub fn icnt_unified_other_stall(backend: Backend) {
    let t = trace(micro("unified", 2, 0), stream("A*10"), &[7]);
    let r = run_on(backend, &t);
    assert_eq!(fe_hold_cycles(&r), BTreeSet::from([7]));
    assert_eq!(r[7].cause, Cause::Other);
    assert_eq!((r[8].wb, r[8].wb_src), (Wb::Icnt, WbSrc::Icnt));
    assert_eq!((r[8].mem0, r[8].rem, r[8].mem[0]), (Some(3), 1, Some(2)));
    assert_eq!((r[9].wb, r[9].wb_src), (Wb::Entry(2), WbSrc::Mem));
    let s = Summary::of(&r);
    assert_eq!((s.stalls, s.stall_causes.other, s.wb_bubbles), (1, 1, 0));
}

/// Split: an ICNT grant holds NM_last; the ALU entry in EXE stalls with cause `other`.
pub fn icnt_split_other_stall(backend: Backend) {
    let t = trace(micro("split", 2, 0), stream("A*10"), &[7]);
    let r = run_on(backend, &t);
    assert_eq!(fe_hold_cycles(&r), BTreeSet::from([7]));
    assert_eq!(r[7].cause, Cause::Other);
    assert_eq!(r[8].nm, Some(vec![Some(3), Some(2)]));
}

/// Elastic: the NONMEM FIFO absorbs the ICNT grant (no stall); with Q = 0 it cannot (`other`).
pub fn icnt_elastic(backend: Backend) {
    let t = trace(micro("elastic", 2, 0), stream("A*10"), &[7]);
    let r = run_on(backend, &t);
    assert_eq!(Summary::of(&r).stalls, 0);
    assert_eq!((r[8].wb, r[8].nq.clone()), (Wb::Icnt, Some(vec![4])));
    assert_eq!((r[9].wb, r[9].wb_src), (Wb::Entry(4), WbSrc::Nq));
    let q0 = with(micro("elastic", 2, 0), "Q", json!(0));
    let r = run_on(backend, &trace(q0, stream("A*10"), &[7]));
    assert_eq!(fe_hold_cycles(&r), BTreeSet::from([7]));
    assert_eq!(r[7].cause, Cause::Other);
}

/// Elastic causes: a full PRE (judged at cycle start, D11) stalls a memory entry as
/// `bank_conflict`; an ALU entry with no NQ room loses WB to MEM_last: `bank_conflict`.
pub fn elastic_stall_causes(backend: Backend) {
    // S0 in MEM0 during 4..7, S1 in PRE from 5, S2 held in EXE at 5, 6, 7 (PRE full at the
    // start of 7 although S1 leaves it that cycle).
    let t = trace(micro("elastic", 2, 1), stream("S(4)*3 A*4"), &[]);
    let r = run_on(backend, &t);
    assert_eq!(fe_hold_cycles(&r), BTreeSet::from([5, 6, 7]));
    assert_eq!(Summary::of(&r).stall_causes.bank_conflict, 3);
    // Q = 0: G0 reaches MEM1 at 5 and wins WB over the ALU entry in EXE.
    let q0 = with(micro("elastic", 2, 0), "Q", json!(0));
    let r = run_on(backend, &trace(q0, stream("G A*4"), &[]));
    assert_eq!(fe_hold_cycles(&r), BTreeSet::from([5]));
    assert_eq!(r[5].cause, Cause::BankConflict);
}

/// The detector computes the degree when there is no override (in_deg = 0): a stride-2 access
/// behaves exactly as S(2) (G1), one word for all lanes is 1 (DistinctWord) or 8 (Literal, G2),
/// inactive lanes don't count (D6).
pub fn detector_degree(backend: Backend) {
    let lanes: Vec<u32> = (0..8).collect();
    let smem = |addrs: Vec<u32>, active: Vec<u32>| json!({"kind": "smem", "addrs": addrs, "active": active});
    let with_item = |item: Value| {
        let mut s = stream("A*4");
        s.push(item);
        s.extend(stream("A*6"));
        s
    };
    let params = micro("unified", 2, 0);
    let by_override = run_on(backend, &trace(params.clone(), stream("A*4 S(2) A*6"), &[]));
    let stride2 = smem(lanes.iter().map(|l| 2 * l).collect(), vec![1; 8]);
    let by_detector = run_on(backend, &trace(params.clone(), with_item(stride2), &[]));
    assert_eq!(by_detector, by_override);
    let stalls = |params: &Value, item: Value| {
        Summary::of(&run_on(
            backend,
            &trace(params.clone(), with_item(item), &[]),
        ))
        .stalls
    };
    let same_word = smem(vec![5; 8], vec![1; 8]);
    assert_eq!(stalls(&params, same_word.clone()), 0);
    let literal = with(params.clone(), "broadcast", json!("literal"));
    assert_eq!(stalls(&literal, same_word), 7);
    let stride8 = lanes.iter().map(|l| 8 * l).collect::<Vec<_>>();
    assert_eq!(stalls(&params, smem(stride8.clone(), vec![1; 8])), 7);
    assert_eq!(
        stalls(&params, smem(stride8.clone(), vec![1, 1, 1, 0, 0, 0, 0, 0])),
        2
    );
    assert_eq!(stalls(&params, smem(stride8, vec![0; 8])), 0);
}

/// `wb_priority = nonmem_first`: the NQ head beats MEM_last. Stream G, G, A×6: A2 enters NQ
/// at the end of 5 (G0 wins WB); at the end of 6 A2 beats G1 in MEM1, and G1 waits until NQ
/// runs dry. With `mem_first`, G1 wins at the end of 6.
pub fn nonmem_first(backend: Backend) {
    let s = stream("G G A*6");
    let p = with(micro("elastic", 2, 0), "wb_priority", json!("nonmem_first"));
    let r = run_on(backend, &trace(p, s.clone(), &[]));
    assert_eq!(
        (r[7].wb, r[7].wb_src, r[7].mem[0]),
        (Wb::Entry(2), WbSrc::Nq, Some(1))
    );
    assert!(wb_cycle(&r, 1) > wb_cycle(&r, 7));
    assert_eq!(Summary::of(&r).stalls, 0);
    let r = run_on(backend, &trace(micro("elastic", 2, 0), s, &[]));
    assert_eq!((r[7].wb, r[7].wb_src), (Wb::Entry(1), WbSrc::Mem));
}

/// `nonmem_min_age = M` reproduces Split latency (§3.2 step 2): on conflict-free streams every
/// entry reaches WB in the same cycle as in Split.
pub fn min_age_is_split_latency(backend: Backend) {
    for m in [1, 2, 4] {
        let s = stream("A G A A GST G A*3 G G A");
        let split = run_on(backend, &trace(micro("split", m, 0), s.clone(), &[]));
        let aged = with(micro("elastic", m, 1), "nonmem_min_age", json!(m));
        let elastic = run_on(backend, &trace(aged, s, &[]));
        let wb = |r: &[Record]| r.iter().map(|x| x.wb).collect::<Vec<_>>();
        assert_eq!(wb(&elastic), wb(&split), "M = {m}");
    }
}

/// The driver runs until ICNT data granted after the last entry has shown in WB.
pub fn trailing_icnt(backend: Backend) {
    let r = run_on(
        backend,
        &trace(micro("elastic", 2, 0), stream("A S(3)"), &[30]),
    );
    assert_eq!(r.len(), 32);
    assert_eq!((r[31].wb, r[31].wb_src), (Wb::Icnt, WbSrc::Icnt));
    // A trace with nothing in it would run zero cycles: it is rejected, never a vacuous pass.
    let empty = Trace::from_file(&TraceFile {
        params: micro("elastic", 2, 0).as_object().unwrap().clone(),
        stream: vec![],
        icnt_valid_cycles: vec![],
    });
    assert!(
        empty.unwrap_err().to_string().contains("nothing to run"),
        "{backend:?}"
    );
}

/// Random traces in every mode: each entry leaves WB exactly once; memory entries retire in
/// stream order, and so do ALU entries; FIFOs stay within their depths; a cause is given
/// exactly when fe_hold.
pub fn random_invariants(backend: Backend) {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let item = prop_oneof![
        3 => Just("A".to_string()),
        1 => Just("G".to_string()),
        1 => Just("GST".to_string()),
        3 => (1..=8u32).prop_map(|d| format!("S({d})")),
    ];
    let case = (
        prop::sample::select(vec!["unified", "split", "elastic"]),
        1..=4u32,
        0..=3u32,
        0..=4u32,
        1..=3u32,
        prop::collection::vec(item, 1..40),
        prop::collection::btree_set(0..60u64, 0..8),
    );
    let mut runner = TestRunner::new(Config {
        cases: 200,
        ..Config::default()
    });
    runner
        .run(&case, |(mode, m, n, q, fe, items, icnt)| {
            let p = json!({"pipe_mode": mode, "M": m, "N": n, "Q": q, "fe_depth": fe});
            let icnt: Vec<u64> = icnt.into_iter().collect();
            let t = trace(p, items.iter().map(|s| json!(s)).collect(), &icnt);
            let r = run_on(backend, &t);
            let order: Vec<u32> = r
                .iter()
                .filter_map(|x| match x.wb {
                    Wb::Entry(tag) => Some(tag),
                    _ => None,
                })
                .collect();
            let mut sorted = order.clone();
            sorted.sort();
            prop_assert_eq!(sorted, (0..items.len() as u32).collect::<Vec<_>>());
            for mem in [true, false] {
                let of_kind: Vec<u32> = order
                    .iter()
                    .copied()
                    .filter(|&tag| (items[tag as usize] != "A") == mem)
                    .collect();
                prop_assert!(of_kind.windows(2).all(|w| w[0] < w[1]), "{:?}", order);
            }
            for x in &r {
                prop_assert_eq!(x.fe_hold, x.cause != Cause::None);
                prop_assert!(x.pre.as_ref().map_or(0, Vec::len) <= n as usize);
                prop_assert!(x.nq.as_ref().map_or(0, Vec::len) <= q as usize);
                prop_assert_eq!(x.mem0.is_some(), x.rem > 0);
                prop_assert!(x.rem <= 8);
            }
            Ok(())
        })
        .unwrap();
}

/// The lock-step driver on two instances of one backend agrees with the closed-loop run.
pub fn cosim_self(backend: Backend) {
    let t = trace(
        micro("elastic", 2, 1),
        stream("A*4 S(2) S(1) A*5 G S(3)"),
        &[3, 9],
    );
    let (mut a, layout) = backend(&t.params);
    let (mut b, _) = backend(&t.params);
    let together = cosim(a.as_mut(), b.as_mut(), &layout, &t, t.cycle_budget()).unwrap();
    assert_eq!(together, run_on(backend, &t));
}

// ---------------------------------------------------------------------------------------------
// The drivers themselves
// ---------------------------------------------------------------------------------------------

/// A simulator that corrupts one output port in one cycle.
struct Faulty {
    inner: Box<dyn Simulator>,
    layout: Layout,
    cycle: u64,
    port: &'static str,
    xor: u64,
    t: u64,
}

impl Simulator for Faulty {
    fn name(&self) -> &str {
        "faulty"
    }
    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        self.inner.step(inputs, outputs);
        if self.t == self.cycle {
            self.layout.output(self.port).unwrap().of_mut(outputs)[0] ^= self.xor;
        }
        self.t += 1;
    }
}

fn faulty_run(port: &'static str, cycle: u64, xor: u64) -> String {
    let t = trace(micro("unified", 2, 0), stream("A*4 S(2) A*6"), &[]);
    let (mut m, layout) = model(&t.params);
    let (inner, _) = model(&t.params);
    let mut rtl = Faulty {
        inner,
        layout: layout.clone(),
        cycle,
        port,
        xor,
        t: 0,
    };
    match cosim(m.as_mut(), &mut rtl, &layout, &t, 100) {
        Err(DriveError::Diverged(d)) => d.to_string(),
        other => panic!("expected a divergence, got {other:?}"),
    }
}

#[test]
fn cosim_names_the_first_differing_field() {
    assert_eq!(
        faulty_run("mem0_rem", 8, 1),
        "cycle 8: rem expected 2 (model) actual 3 (rtl)"
    );
    assert_eq!(
        faulty_run("exe_tag", 6, 8),
        "cycle 6: EXE expected 3 (model) actual 11 (rtl)"
    );
    assert_eq!(
        faulty_run("wb_valid", 7, 1),
        "cycle 7: WB expected 1 (model) actual \"-\" (rtl)"
    );
    // A tag on an empty latch is no record field: the port is named.
    assert_eq!(
        faulty_run("mem1_tag", 1, 5),
        "cycle 1: port mem1_tag expected 0x0 (model) actual 0x5 (rtl)"
    );
}

#[test]
fn cycle_limit_is_an_error() {
    let t = trace(micro("unified", 2, 0), stream("S(8)*4"), &[]);
    let (mut m, layout) = model(&t.params);
    let e = run(m.as_mut(), &layout, &t, 10).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cycle limit 10 reached: 0 of 4 stream entries left WB"
    );
}
