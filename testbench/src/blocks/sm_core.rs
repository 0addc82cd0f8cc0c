//! Scheduler-mode workloads (docs/elastic-pipeline.md §5.6; model in
//! [`smrtl_cosim::sm::elastic_sm`]): JSON parsing with one-line errors naming the field, and small
//! builders for the acceptance tests.
//!
//! JSON shape:
//! ```json
//! {"params": {"pipe_mode": "elastic", "M": 2, "S": 2, "W": 4, "sched": "bcaws", ...},
//!  "warps": [[{"op": "alu", "pc": 0},
//!             {"op": "smem", "pc": 1, "degrees": [4, 1]},
//!             {"op": "smem", "pc": 2, "addrs": [[0, 8, ...], [1, 2, ...]],
//!              "active": [[true, ...], [...]]}],
//!            ...]}
//! ```
//! `params` may be omitted (all defaults, [`SmParams::default`]); unknown keys are errors.
//! `degrees` (S values in 1..=L, default all 1) and `addrs` (S × L word addresses < 2^AW, with
//! optional `active`, S × L booleans) apply to `smem` only and exclude each other.

use serde_json::Value;
use smrtl_cosim::sm::elastic_sm::{Instr, SmParams, Workload};
use smrtl_hdl::blocks::elastic_pipeline::Kind;
use smrtl_hdl::BlockParams;

fn err(at: &str, msg: impl std::fmt::Display) -> String {
    format!("{at}: {msg}")
}

/// Parses a workload; errors are one line, `field: problem`.
pub fn parse_workload(text: &str) -> Result<Workload, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| err("workload", e))?;
    workload_from_value(&v)
}

/// Core params from a JSON object of spec names over the defaults; unknown names are errors
/// (serde cannot reject them through the flattened pipeline params).
pub fn params_from_value(v: &Value) -> Result<SmParams, String> {
    params_from_value_raw(v).map_err(|e| smrtl_hdl::shown(&e))
}

/// [`params_from_value`] before control characters in echoed text are escaped.
fn params_from_value_raw(v: &Value) -> Result<SmParams, String> {
    let obj = v
        .as_object()
        .ok_or_else(|| err("params", "expected an object of parameters"))?;
    let known = serde_json::to_value(SmParams::default()).expect("params serialize");
    let known = known.as_object().expect("params are an object");
    if let Some(k) = obj.keys().find(|k| !known.contains_key(*k)) {
        let allowed: Vec<&str> = known.keys().map(String::as_str).collect();
        return Err(err(
            "params",
            format!("unknown parameter `{k}`; allowed: {}", allowed.join(", ")),
        ));
    }
    let params: SmParams = serde_json::from_value(v.clone()).map_err(|e| err("params", e))?;
    params.validate().map_err(|e| err("params", e))?;
    Ok(params)
}

pub fn workload_from_value(v: &Value) -> Result<Workload, String> {
    workload_from_value_raw(v).map_err(|e| smrtl_hdl::shown(&e))
}

/// [`workload_from_value`] before control characters in echoed text are escaped.
fn workload_from_value_raw(v: &Value) -> Result<Workload, String> {
    let obj = v
        .as_object()
        .ok_or_else(|| err("workload", "expected an object {\"params\", \"warps\"}"))?;
    if let Some(k) = obj.keys().find(|k| *k != "params" && *k != "warps") {
        return Err(err(k, "unknown field; allowed: \"params\", \"warps\""));
    }
    let params = match obj.get("params") {
        None => SmParams::default(),
        Some(p) => params_from_value(p)?,
    };
    let warps = obj
        .get("warps")
        .ok_or_else(|| err("warps", "missing"))?
        .as_array()
        .ok_or_else(|| err("warps", "expected an array of warps"))?;
    if warps.len() > params.warps as usize {
        return Err(err(
            "warps",
            format!("{} warps exceed W = {}", warps.len(), params.warps),
        ));
    }
    let mut out = Vec::new();
    for (i, w) in warps.iter().enumerate() {
        let at = format!("warps[{i}]");
        let list = w
            .as_array()
            .ok_or_else(|| err(&at, "expected an array of instructions"))?;
        let mut prog = Vec::new();
        for (j, ins) in list.iter().enumerate() {
            prog.push(parse_instr(&params, &format!("warps[{i}][{j}]"), ins)?);
        }
        out.push(prog);
    }
    Ok(Workload { params, warps: out })
}

fn uint(at: &str, v: &Value) -> Result<u64, String> {
    v.as_u64()
        .ok_or_else(|| err(at, format!("expected a non-negative integer, got {v}")))
}

fn rows<'a>(at: &str, v: &'a Value, s: usize, l: usize) -> Result<Vec<&'a Value>, String> {
    let outer = v
        .as_array()
        .filter(|a| a.len() == s)
        .ok_or_else(|| err(at, format!("expected {s} arrays (one per subwarp)")))?;
    let mut cells = Vec::new();
    for (k, row) in outer.iter().enumerate() {
        let row = row.as_array().filter(|a| a.len() == l).ok_or_else(|| {
            err(
                &format!("{at}[{k}]"),
                format!("expected {l} values (one per lane)"),
            )
        })?;
        cells.extend(row.iter());
    }
    Ok(cells)
}

fn parse_instr(p: &SmParams, at: &str, v: &Value) -> Result<Instr, String> {
    let obj = v
        .as_object()
        .ok_or_else(|| err(at, "expected an object {\"op\", \"pc\", ...}"))?;
    const KEYS: [&str; 5] = ["op", "pc", "degrees", "addrs", "active"];
    if let Some(k) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(err(
            &format!("{at}.{k}"),
            "unknown field; allowed: \"op\", \"pc\", \"degrees\", \"addrs\", \"active\"",
        ));
    }
    let op_at = format!("{at}.op");
    let op = match obj.get("op").ok_or_else(|| err(&op_at, "missing"))? {
        Value::String(s) => match s.as_str() {
            "alu" => Kind::Alu,
            "gld" => Kind::Gld,
            "gst" => Kind::Gst,
            "smem" => Kind::Smem,
            other => {
                return Err(err(
                    &op_at,
                    format!("unknown op \"{other}\"; allowed: \"alu\", \"gld\", \"gst\", \"smem\""),
                ))
            }
        },
        other => return Err(err(&op_at, format!("expected a string, got {other}"))),
    };
    let pc_at = format!("{at}.pc");
    let pc = uint(&pc_at, obj.get("pc").ok_or_else(|| err(&pc_at, "missing"))?)?;
    let pc_max = 1u64 << p.pc_bits;
    if pc >= pc_max {
        return Err(err(
            &pc_at,
            format!(
                "{pc} out of range; allowed: 0..{pc_max} (PCW = {})",
                p.pc_bits
            ),
        ));
    }
    let mut ins = Instr::of(op, pc as u32);
    let (s, l) = (p.pipe.subwarps as usize, p.pipe.lanes as usize);
    for key in ["degrees", "addrs", "active"] {
        if op != Kind::Smem && obj.contains_key(key) {
            return Err(err(
                &format!("{at}.{key}"),
                "only smem instructions take this field",
            ));
        }
    }
    if obj.contains_key("degrees") && obj.contains_key("addrs") {
        return Err(err(
            &format!("{at}.degrees"),
            "give either degrees or addrs, not both",
        ));
    }
    if obj.contains_key("active") && !obj.contains_key("addrs") {
        return Err(err(&format!("{at}.active"), "needs addrs"));
    }
    if let Some(d) = obj.get("degrees") {
        let dat = format!("{at}.degrees");
        let arr = d
            .as_array()
            .filter(|a| a.len() == s)
            .ok_or_else(|| err(&dat, format!("expected {s} degrees (one per subwarp)")))?;
        let mut ds = Vec::new();
        for (k, x) in arr.iter().enumerate() {
            let kat = format!("{dat}[{k}]");
            let d = uint(&kat, x)?;
            if !(1..=p.pipe.lanes as u64).contains(&d) {
                return Err(err(
                    &kat,
                    format!("{d} out of range; allowed: 1..={} (L)", p.pipe.lanes),
                ));
            }
            ds.push(d as u32);
        }
        ins.degrees = Some(ds);
    } else if op == Kind::Smem && !obj.contains_key("addrs") {
        ins.degrees = Some(vec![1; s]);
    }
    if let Some(a) = obj.get("addrs") {
        let aat = format!("{at}.addrs");
        let cells = rows(&aat, a, s, l)?;
        let amax = 1u64 << p.pipe.addr_bits;
        let mut out = vec![Vec::new(); s];
        for (n, c) in cells.iter().enumerate() {
            let cat = format!("{aat}[{}][{}]", n / l, n % l);
            let w = uint(&cat, c)?;
            if w >= amax {
                return Err(err(
                    &cat,
                    format!(
                        "{w} out of range; allowed: 0..{amax} (AW = {})",
                        p.pipe.addr_bits
                    ),
                ));
            }
            out[n / l].push(w as u32);
        }
        ins.addrs = Some(out);
    }
    if let Some(a) = obj.get("active") {
        let aat = format!("{at}.active");
        let cells = rows(&aat, a, s, l)?;
        let mut out = vec![Vec::new(); s];
        for (n, c) in cells.iter().enumerate() {
            let b = c.as_bool().ok_or_else(|| {
                err(
                    &format!("{aat}[{}][{}]", n / l, n % l),
                    "expected true or false",
                )
            })?;
            out[n / l].push(b);
        }
        ins.active = Some(out);
    }
    Ok(ins)
}

// ---------------------------------------------------------------------------------------------
// Co-simulation with the `sm_core` RTL in the loop (spec §3.5, §6)
// ---------------------------------------------------------------------------------------------

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use smrtl_cosim::blocks::sm_core::{encode_record, PortModel};
use smrtl_cosim::harness::{Mismatch, Trace as WaveRows};
use smrtl_cosim::sm::elastic_sm::{GmemReturn, SmCore, SmRecord, SmRun, SmStats, StatsAcc};
use smrtl_cosim::{Layout, Rtl, Simulator};
use smrtl_hdl::blocks::sm_core::{self as core_rtl, port};
use std::collections::VecDeque;

/// The `sm_core` top's buffer layout.
pub fn layout(p: &SmParams) -> Layout {
    Layout::new(&core_rtl::ports(p))
}

/// What the testbench owns (spec §6): the programs, each warp's next instruction, the
/// instruction each warp has in flight, and the ICNT return FIFO.
struct Env<'a> {
    p: &'a SmParams,
    layout: &'a Layout,
    program: &'a [Vec<Instr>],
    next: Vec<usize>,
    inflight: Vec<usize>,
    /// Returns: (first cycle it may be presented, warp, sw).
    icnt: VecDeque<(u64, u32, u32)>,
}

impl<'a> Env<'a> {
    fn new(p: &'a SmParams, layout: &'a Layout, program: &'a [Vec<Instr>]) -> Env<'a> {
        let w = p.warps as usize;
        Env {
            p,
            layout,
            program,
            next: vec![0; w],
            inflight: vec![0; w],
            icnt: VecDeque::new(),
        }
    }

    fn instr(&self, w: usize, k: usize) -> Option<&Instr> {
        self.program.get(w).and_then(|prog| prog.get(k))
    }

    fn set(&self, buf: &mut [u64], name: &str, lo: usize, width: usize, v: u64) {
        self.layout.in_slot(name).set_field(buf, lo, width, v);
    }

    /// Inputs of cycle `t` with zero descriptors; presents the ICNT return due by `t`.
    fn inputs(&mut self, t: u64, kernel_start: bool, buf: &mut [u64]) {
        buf.fill(0);
        let pcw = self.p.pc_bits as usize;
        self.layout
            .write_in(buf, port::KERNEL_START, kernel_start as u64);
        for w in 0..self.p.warps as usize {
            if let Some(ins) = self.instr(w, self.next[w]) {
                self.set(buf, port::HAS_NEXT, w, 1, 1);
                self.set(buf, port::KIND, 2 * w, 2, ins.op as u64);
                self.set(buf, port::PC, pcw * w, pcw, ins.pc as u64);
            }
        }
        if kernel_start {
            return;
        }
        if let Some(&(at, w, sw)) = self.icnt.front() {
            if at <= t {
                self.icnt.pop_front();
                self.layout.write_in(buf, port::ICNT_VALID, 1);
                self.layout.write_in(buf, port::ICNT_WARP, w as u64);
                self.layout.write_in(buf, port::ICNT_SW, sw as u64);
            }
        }
    }

    /// Answers the descriptor request of `(warp, sw)` (same cycle, spec §6): the subwarp's lane
    /// addresses and active mask, or its degree override.
    fn describe(&self, out: &[u64], buf: &mut [u64]) {
        let read = |name| self.layout.read_out(out, name);
        let (w, sw) = (
            read(port::ISSUE_WARP) as usize,
            read(port::ISSUE_SW) as usize,
        );
        let k = if read(port::DECIDE) == 1 {
            self.next[w]
        } else {
            self.inflight[w]
        };
        let ins = self.instr(w, k).expect("issued instruction exists");
        let (lanes, aw) = (self.p.pipe.lanes as usize, self.p.pipe.addr_bits as usize);
        for l in 0..lanes {
            let act = ins
                .active
                .as_ref()
                .is_none_or(|a| a[sw].get(l).copied().unwrap_or(true));
            self.set(buf, port::DESC_ACT, l, 1, act as u64);
            let addr = ins.addrs.as_ref().map_or(0, |a| a[sw][l]);
            self.set(buf, port::DESC_ADDR, l * aw, aw, addr as u64);
        }
        let deg = match (ins.op, &ins.degrees, &ins.addrs) {
            (Kind::Smem, Some(d), _) => d[sw],
            (Kind::Smem, None, None) => 1,
            _ => 0,
        };
        self.layout.write_in(buf, port::DESC_DEG, deg as u64);
    }

    /// After the edge of cycle `t`: advance the decided warp, queue an ICNT request.
    fn after(&mut self, t: u64, out: &[u64]) {
        let read = |name| self.layout.read_out(out, name);
        if read(port::DECIDE) == 1 {
            let w = read(port::GRANT) as usize;
            self.inflight[w] = self.next[w];
            self.next[w] += 1;
        }
        if let (1, GmemReturn::Icnt(lat)) = (read(port::ICNT_REQ), self.p.gmem_return) {
            let (w, sw) = (read(port::ICNT_REQ_WARP), read(port::ICNT_REQ_SW));
            self.icnt.push_back((t + lat as u64, w as u32, sw as u32));
        }
    }
}

/// The first cycle where the RTL's outputs differ from the model's record.
#[derive(Debug)]
pub struct SmDivergence {
    /// Kernel index within the run.
    pub kernel: usize,
    /// Cycle within that kernel (the record's `t`), port, expected and actual value.
    pub mismatch: Mismatch,
    pub model: SmRecord,
}

impl std::fmt::Display for SmDivergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "kernel {}: {}", self.kernel, self.mismatch)
    }
}

/// Runs `kernels` back to back on the model and on `rtl` in lock step (docs/elastic-pipeline.md
/// §3.5, §6). Each kernel starts with one `kernel_start` cycle on the RTL (no decision; not
/// compared) while the model's [`SmCore::kernel_start`] clears the same state; then every
/// cycle's outputs must equal the model's record, encoded with [`encode_record`]. With `rows`,
/// the cycles are kept for a VCD (global cycle numbers, kernel starts included).
pub fn cosim(
    p: &SmParams,
    kernels: &[Vec<Vec<Instr>>],
    rtl: &mut dyn Rtl,
    rows: Option<&mut WaveRows>,
) -> Result<Vec<SmRun>, Box<SmDivergence>> {
    let mut records: Vec<Vec<SmRecord>> = vec![vec![]; kernels.len()];
    let stats = cosim_each(p, &layout(p), kernels, rtl, rows, &mut |k, rec| {
        records[k].push(rec.clone())
    })?;
    Ok(records
        .into_iter()
        .zip(stats)
        .map(|(records, stats)| SmRun { records, stats })
        .collect())
}

/// [`cosim`] on the core's `layout`, showing each model record to `each` (with its kernel's index) instead of keeping
/// it; the statistics of each kernel.
pub fn cosim_each(
    p: &SmParams,
    layout: &Layout,
    kernels: &[Vec<Vec<Instr>>],
    rtl: &mut dyn Rtl,
    mut rows: Option<&mut WaveRows>,
    each: &mut dyn FnMut(usize, &SmRecord),
) -> Result<Vec<SmStats>, Box<SmDivergence>> {
    let mut model = SmCore::new(p).expect("validated params");
    let mut inputs = vec![0u64; layout.in_words];
    let (mut expected, mut actual) = (vec![0u64; layout.out_words], vec![0u64; layout.out_words]);
    let mut global = 0u64;
    let mut stats = Vec::new();
    if let Some(r) = rows.as_deref_mut() {
        r.nets_of(rtl);
    }
    for (k, program) in kernels.iter().enumerate() {
        let mut env = Env::new(p, layout, program);
        model.kernel_start(program);
        env.inputs(0, true, &mut inputs);
        rtl.eval(&inputs, &mut actual);
        rtl.edge();
        if let Some(r) = rows.as_deref_mut() {
            push_row(r, global, &inputs, &actual, Some((&actual, rtl)), false);
        }
        global += 1;
        let mut acc = StatsAcc::default();
        while !model.done() {
            let rec = model.cycle();
            let t = rec.pipe.t;
            expected.fill(0);
            encode_record(p, layout, &rec, &mut expected);
            env.inputs(t, false, &mut inputs);
            rtl.eval(&inputs, &mut actual);
            if layout.read_out(&actual, port::ISSUE_VALID) == 1 {
                env.describe(&actual, &mut inputs);
                rtl.eval(&inputs, &mut actual);
            }
            let differs = expected != actual;
            if let Some(r) = rows.as_deref_mut() {
                push_row(r, global, &inputs, &expected, Some((&actual, rtl)), differs);
            }
            rtl.edge();
            global += 1;
            if differs {
                let slot = layout
                    .outputs
                    .iter()
                    .find(|s| s.of(&expected) != s.of(&actual))
                    .expect("buffers differ in some port");
                return Err(Box::new(SmDivergence {
                    kernel: k,
                    mismatch: Mismatch {
                        cycle: t,
                        port: slot.name.clone(),
                        width: slot.width,
                        expected: slot.of(&expected).to_vec(),
                        actual: slot.of(&actual).to_vec(),
                    },
                    model: rec,
                }));
            }
            env.after(t, &actual);
            acc.record(&rec);
            each(k, &rec);
        }
        stats.push(acc.finish());
    }
    Ok(stats)
}

/// Appends a cycle's row: inputs, the model's outputs and, with an RTL, its outputs and nets.
fn push_row(
    rows: &mut WaveRows,
    cycle: u64,
    inputs: &[u64],
    model: &[u64],
    rtl: Option<(&[u64], &dyn Rtl)>,
    mismatch: bool,
) {
    rows.push_with(cycle, mismatch, |row| {
        row.inputs.extend_from_slice(inputs);
        row.model.extend_from_slice(model);
        if let Some((outputs, dut)) = rtl {
            row.rtl.extend_from_slice(outputs);
            dut.internal_values(&mut row.internals);
        }
    });
}

/// Model-only rows for a VCD of a `--backend model` run of `program` (one kernel, run again on
/// a fresh model): inputs as the testbench would drive them and the model's outputs.
pub fn model_rows(p: &SmParams, program: &[Vec<Instr>], rows: &mut WaveRows) -> Result<(), String> {
    let layout = layout(p);
    let mut inputs = vec![0u64; layout.in_words];
    let mut out = vec![0u64; layout.out_words];
    let mut env = Env::new(p, &layout, program);
    env.inputs(0, true, &mut inputs);
    push_row(rows, 0, &inputs, &out, None, false);
    let mut global = 1u64;
    SmCore::new(p)?.run_kernel_each(program, &mut |rec| {
        out.fill(0);
        encode_record(p, &layout, rec, &mut out);
        env.inputs(rec.pipe.t, false, &mut inputs);
        if rec.issue.is_some() {
            env.describe(&out, &mut inputs);
        }
        push_row(rows, global, &inputs, &out, None, false);
        env.after(rec.pipe.t, &out);
        global += 1;
    })?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Random scheduler-mode stimulus (proptest; shrinks to a minimal case)
// ---------------------------------------------------------------------------------------------

/// One random case: params and 1–3 kernels.
#[derive(Clone, Debug)]
pub struct SmCase {
    pub params: SmParams,
    pub kernels: Vec<Vec<Vec<Instr>>>,
}

/// Random instructions for params `p`: PCs from a small range (so the cache hits, conflicts
/// and evicts), degrees biased to 1 and to high values, some address-driven SMEM.
fn instr(p: &SmParams) -> impl Strategy<Value = Instr> {
    let (s, l) = (p.pipe.subwarps as usize, p.pipe.lanes);
    let pcs = 0..24u32.min(1 << p.pc_bits);
    let deg = prop_oneof![3 => Just(1u32), 2 => 1..=l, 1 => Just(l)];
    let amax = (1u32 << p.pipe.addr_bits) - 1;
    let addr = prop_oneof![0..=amax, (0..8u32).prop_map(|k| k * 8), Just(0u32)];
    prop_oneof![
        4 => pcs.clone().prop_map(Instr::alu),
        4 => (pcs.clone(), proptest::collection::vec(deg, s))
            .prop_map(|(pc, d)| Instr::smem(pc, &d)),
        1 => (
            pcs.clone(),
            proptest::collection::vec(proptest::collection::vec(addr, l as usize), s),
            proptest::collection::vec(proptest::collection::vec(prop::bool::weighted(0.85), l as usize), s),
        )
            .prop_map(|(pc, addrs, act)| Instr {
                addrs: Some(addrs),
                active: Some(act),
                ..Instr::of(Kind::Smem, pc)
            }),
        1 => pcs.clone().prop_map(|pc| Instr::of(Kind::Gld, pc)),
        1 => pcs.prop_map(|pc| Instr::of(Kind::Gst, pc)),
    ]
}

/// Kernels for params `p`: each warp 0–10 instructions.
pub fn kernels(p: &SmParams) -> impl Strategy<Value = Vec<Vec<Vec<Instr>>>> {
    let warp = proptest::collection::vec(instr(p), 0..=10);
    let kernel = proptest::collection::vec(warp, 1..=p.warps as usize);
    proptest::collection::vec(kernel, 1..=3)
}

/// Random cases over `configs` (each config is built once per backend by the caller).
pub fn sm_cases(configs: Vec<SmParams>) -> impl Strategy<Value = SmCase> {
    proptest::sample::select(configs).prop_flat_map(|params| {
        kernels(&params).prop_map(move |kernels| SmCase {
            params: params.clone(),
            kernels,
        })
    })
}

/// Builds a fresh RTL instance of the `sm_core` for params (in reset state).
pub type SmRtlFactory<'a> = dyn Fn(&SmParams) -> Box<dyn Rtl> + 'a;

/// A failure after shrinking.
#[derive(Debug)]
pub struct SmFailure {
    pub divergence: Box<SmDivergence>,
    pub minimal: SmCase,
    pub shrink_steps: u32,
}

#[derive(Debug)]
pub struct SmReport {
    /// Compared cycles (kernel-start cycles excluded).
    pub cycles: u64,
    pub cases: u64,
    pub failure: Option<SmFailure>,
}

fn run_sm_case(rtl: &SmRtlFactory, case: &SmCase) -> Result<u64, Box<SmDivergence>> {
    let mut dut = rtl(&case.params);
    let runs = cosim(&case.params, &case.kernels, dut.as_mut(), None)?;
    Ok(runs.iter().map(|r| r.stats.cycles).sum())
}

/// Co-simulates random scheduler-mode cases over `configs` until `cycles` cycles are compared;
/// the first failure is shrunk by proptest to a minimal case. Deterministic per `seed`.
pub fn random(configs: Vec<SmParams>, rtl: &SmRtlFactory, cycles: u64, seed: u64) -> SmReport {
    let mut runner = crate::check::runner(seed);
    let strategy = sm_cases(configs);
    let (mut total, mut n) = (0, 0);
    while total < cycles {
        let mut tree = strategy.new_tree(&mut runner).expect("case strategy");
        let case = tree.current();
        n += 1;
        match run_sm_case(rtl, &case) {
            Ok(c) => total += c,
            Err(d) => {
                let (minimal, divergence, shrink_steps) =
                    crate::check::shrink_tree(&mut tree, (case, d), |c| run_sm_case(rtl, c).err());
                return SmReport {
                    cycles: total,
                    cases: n,
                    failure: Some(SmFailure {
                        divergence,
                        minimal,
                        shrink_steps,
                    }),
                };
            }
        }
    }
    SmReport {
        cycles: total,
        cases: n,
        failure: None,
    }
}

/// Configurations for random co-simulation: every pipe mode and scheduler, both policies and
/// counter modes, ICNT returns, S ∈ {1, 2, 4}, M ∈ {1, 2, 4}, N ∈ {0, 1, 3}, P ∈ {1, 2}, all
/// broadcast modes, tiny caches (so lines are evicted) and W ∈ {3, 4, 8}.
pub fn random_configs() -> Vec<SmParams> {
    use smrtl_hdl::blocks::bank_conflict_detector::Mode;
    use smrtl_hdl::blocks::elastic_pipeline::{PipeMode, WbPriority};
    use smrtl_hdl::blocks::history_cache::{BcawsPolicy, CounterMode};
    use smrtl_hdl::blocks::sm_core::Sched;
    let micro = SmParams {
        hc_sets: 4,
        pc_bits: 5,
        ..SmParams::micro()
    };
    let with = |f: &dyn Fn(&mut SmParams)| {
        let mut p = micro.clone();
        f(&mut p);
        p
    };
    vec![
        micro.clone(),
        with(&|p| p.gmem_return = GmemReturn::Icnt(7)),
        with(&|p| {
            p.pipe.pipe_mode = PipeMode::Unified;
            p.sched = Sched::Rr;
        }),
        with(&|p| {
            p.pipe.pipe_mode = PipeMode::Split;
            p.bcaws_policy = BcawsPolicy::IssueIfNoNonMem;
            p.gmem_return = GmemReturn::Icnt(3);
        }),
        with(&|p| {
            p.pipe.mem_stages = 4;
            p.pipe.premem_depth = 3;
            p.pipe.nonmem_depth = 4;
            p.pipe.subwarps = 4;
            p.warps = 8;
            p.hc_ways = 1;
            p.counter_mode = CounterMode::LoadPredPlusSm1;
        }),
        with(&|p| {
            p.pipe.subwarps = 4;
            p.pipe.premem_depth = 0;
            p.bcaws_freeze_on_stall = false;
            p.pipe.wb_priority = WbPriority::NonmemFirst;
            p.warps = 3;
        }),
        with(&|p| {
            p.pipe.subwarps = 1;
            p.pipe.mem_stages = 1;
            p.pipe.nonmem_depth = 1;
            p.pipe.ports = 2;
            p.pipe.broadcast = Mode::Literal;
            p.gmem_return = GmemReturn::Icnt(1);
        }),
        with(&|p| {
            p.pipe.lanes = 16;
            p.pipe.banks = 16;
            p.pipe.broadcast = Mode::GpgpusimLimited;
            p.pipe.fe_depth = 3;
            p.hc_sets = 1;
        }),
    ]
}

/// The `sm_core` RTL of `p` in rust-hdl's simulator, in its reset state.
pub fn rusthdl(p: &SmParams) -> Box<dyn Rtl> {
    Box::new(smrtl_cosim::harness::backend::rusthdl::RustHdl::new(
        std::sync::Arc::new(core_rtl::build(p)),
    ))
}

/// The `sm_core` RTL of `p` verilated (built once per design and process, cached on disk
/// across processes), in its reset state.
pub fn verilator(p: &SmParams) -> Result<Box<dyn Rtl>, smrtl_hdl::tools::ToolError> {
    crate::verilated(&std::sync::Arc::new(core_rtl::build(p)))
}

// ---------------------------------------------------------------------------------------------
// Block level: the port model and per-cycle stimulus (spec §6)
// ---------------------------------------------------------------------------------------------

/// The behavioral `sm_core` on its ports ([`PortModel`]), in its reset state: the block-level
/// model that the block's random [`cases`] drive.
pub fn port_model(p: &SmParams) -> Box<dyn Simulator + Send> {
    Box::new(PortModel::new(p, &layout(p)).expect("validated params"))
}

/// The per-cycle inputs of `kernels` on the `sm_core` ports (`layout`), from reset: the
/// testbench ([`cosim`]'s `Env`) drives the [`PortModel`], so every descriptor answer and ICNT
/// return fits the core's outputs. Each kernel starts with its `kernel_start` cycle. Panics if
/// the port model diverges from [`SmCore`] (a model bug).
pub fn stimulus(p: &SmParams, layout: &Layout, kernels: &[Vec<Vec<Instr>>]) -> Vec<Vec<u64>> {
    let mut dut = PortModel::new(p, layout).expect("validated params");
    let mut rows = WaveRows::unbounded();
    if let Err(d) = cosim_each(
        p,
        layout,
        kernels,
        &mut dut,
        Some(&mut rows),
        &mut |_, _| {},
    ) {
        panic!("sm_core port model diverges from SmCore: {d}");
    }
    rows.rows.into_iter().map(|r| r.inputs).collect()
}

/// Random block-level cases for params `p`: [`stimulus`] of random [`kernels`] (1–3 launches);
/// shrinking works on the workload.
pub fn cases(p: &SmParams, layout: &Layout) -> BoxedStrategy<Vec<Vec<u64>>> {
    let (p2, layout) = (p.clone(), layout.clone());
    kernels(p)
        .prop_map(move |k| stimulus(&p2, &layout, &k))
        .boxed()
}

/// The `sm_core` block's descriptor (see [`crate::registry`]).
pub struct SmCoreBench;

impl crate::design::OldBench for SmCoreBench {
    type Params = SmParams;
    const SUMMARY: &'static str = "SM core, scheduler mode: RR scheduler + BCAWS mask, issue unit, history cache and the pipeline; block level on its ports, SM level with workloads (`smrtl sim --workload`) (seed 000)";

    fn module(p: &SmParams) -> smrtl_hdl::Module {
        core_rtl::build(p)
    }

    fn model(p: &SmParams, _layout: &Layout) -> Box<dyn Simulator + Send> {
        port_model(p)
    }

    fn cases(p: &SmParams, layout: &Layout) -> BoxedStrategy<crate::Case> {
        cases(p, layout)
    }

    fn cost_notes(p: &SmParams) -> Result<smrtl_synth::Notes, smrtl_hdl::tools::ToolError> {
        smrtl_synth::blocks::sm_core::notes(p)
    }
}
