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
use smrtl_hdl::progress::Counter;
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
    if out.iter().all(Vec::is_empty) {
        return Err(err(
            "warps",
            format!(
                "nothing to run (no warp has an instruction); allowed: 1..={} warps, at least one instruction",
                params.warps
            ),
        ));
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

use crate::coverage::Cover;
use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::sm_core::{PortModel, SmPorts};
use smrtl_cosim::harness::{Mismatch, Trace as WaveRows};
use smrtl_cosim::sm::elastic_sm::{
    GmemPath, GmemReturn, SmCore, SmRecord, SmRun, SmStats, StatsAcc,
};
use smrtl_cosim::{BlockModel, Layout, Rtl};
use smrtl_hdl::blocks::sm_core as core_rtl;
use smrtl_hdl::blocks::sm_core::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::sm_core::Sched;

/// The `sm_core` top's buffer layout.
pub fn layout(p: &SmParams) -> Layout {
    Layout::new(&core_rtl::ports(p))
}

/// What the testbench owns (spec §6): the programs, each warp's next instruction, the
/// instruction each warp has in flight, and the ICNT return FIFO.
struct Env<'a> {
    p: &'a SmParams,
    program: &'a [Vec<Instr>],
    next: Vec<usize>,
    inflight: Vec<usize>,
    /// The global-load return path (the model's own type: the same returns).
    icnt: GmemPath,
}

impl<'a> Env<'a> {
    fn new(p: &'a SmParams, program: &'a [Vec<Instr>]) -> Env<'a> {
        let w = p.warps as usize;
        Env {
            p,
            program,
            next: vec![0; w],
            inflight: vec![0; w],
            icnt: GmemPath::new(p),
        }
    }

    fn instr(&self, w: usize, k: usize) -> Option<&Instr> {
        self.program.get(w).and_then(|prog| prog.get(k))
    }

    /// Inputs of cycle `t` with zero descriptors; presents the ICNT return due by `t`.
    fn inputs(&mut self, t: u64, kernel_start: bool) -> Inputs {
        let mut i = Inputs {
            kernel_start,
            ..Inputs::new(self.p)
        };
        for w in 0..self.p.warps as usize {
            if let Some(ins) = self.instr(w, self.next[w]) {
                i.has_next[w] = true;
                i.kind[w] = ins.op as u64;
                i.pc[w] = u64::from(ins.pc);
            }
        }
        if kernel_start {
            return i;
        }
        if let Some((w, sw)) = self.icnt.pop(t) {
            i.icnt_valid = true;
            i.icnt_warp = u64::from(w);
            i.icnt_sw = u64::from(sw);
        }
        i
    }

    /// Answers the descriptor request of `(issue_warp, issue_sw)` in `o` (same cycle, spec §6):
    /// the subwarp's lane addresses and active mask, or its degree override.
    fn describe(&self, o: &Outputs, i: &mut Inputs) {
        let (w, sw) = (o.issue_warp as usize, o.issue_sw as usize);
        let k = if o.decide {
            self.next[w]
        } else {
            self.inflight[w]
        };
        let ins = self.instr(w, k).expect("issued instruction exists");
        for l in 0..self.p.pipe.lanes as usize {
            i.desc_act[l] = ins
                .active
                .as_ref()
                .is_none_or(|a| a[sw].get(l).copied().unwrap_or(true));
            i.desc_addr[l] = ins.addrs.as_ref().map_or(0, |a| u64::from(a[sw][l]));
        }
        let deg = match (ins.op, &ins.degrees, &ins.addrs) {
            (Kind::Smem, Some(d), _) => d[sw],
            (Kind::Smem, None, None) => 1,
            _ => 0,
        };
        i.desc_deg = u64::from(deg);
    }

    /// After the edge of cycle `t`: advance the decided warp, queue an ICNT request.
    fn after(&mut self, t: u64, o: &Outputs) {
        if o.decide {
            let w = o.grant as usize;
            self.inflight[w] = self.next[w];
            self.next[w] += 1;
        }
        if o.icnt_req && self.p.gld_via_icnt() {
            let (w, sw) = (o.icnt_req_warp as u32, o.icnt_req_sw as u32);
            self.icnt.request(t, w, sw);
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
/// cycle's outputs must equal the model's record, written with [`SmPorts`]. With `rows`, the
/// cycles are kept for a VCD (global cycle numbers, kernel starts included).
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

/// The buffers of one lock-step cycle: typed inputs and outputs, their encodings, and the
/// model's outputs.
struct Buffers {
    io: Io,
    ports: SmPorts,
    out: Outputs,
    inputs: Vec<u64>,
    expected: Vec<u64>,
    actual: Vec<u64>,
}

impl Buffers {
    fn new(p: &SmParams, layout: &Layout) -> Buffers {
        Buffers {
            io: Io::new(p, layout),
            ports: SmPorts::new(p, layout),
            out: Outputs::new(p),
            inputs: vec![0; layout.in_words],
            expected: vec![0; layout.out_words],
            actual: vec![0; layout.out_words],
        }
    }

    /// Evaluates `rtl` on `i`; the typed outputs are in `self.out`.
    fn eval(&mut self, rtl: &mut dyn Rtl, i: &Inputs) {
        self.inputs.fill(0);
        self.io.write_inputs(i, &mut self.inputs);
        rtl.eval(&self.inputs, &mut self.actual);
        self.io.read_outputs(&self.actual, &mut self.out);
    }

    /// The first port where the RTL's outputs differ from the model's.
    fn mismatch(&self, layout: &Layout, t: u64) -> Option<Mismatch> {
        let (e, a) = (&self.expected, &self.actual);
        let slot = layout.outputs.iter().find(|s| s.of(e) != s.of(a))?;
        Some(Mismatch {
            cycle: t,
            port: slot.name.clone(),
            width: slot.width,
            expected: slot.of(e).to_vec(),
            actual: slot.of(a).to_vec(),
        })
    }
}

/// [`cosim`] on the core's `layout`, showing each model record to `each` (with its kernel's
/// index) instead of keeping it; the statistics of each kernel.
pub fn cosim_each(
    p: &SmParams,
    layout: &Layout,
    kernels: &[Vec<Vec<Instr>>],
    rtl: &mut dyn Rtl,
    rows: Option<&mut WaveRows>,
    each: &mut dyn FnMut(usize, &SmRecord),
) -> Result<Vec<SmStats>, Box<SmDivergence>> {
    let mut model = SmCore::new(p).expect("validated params");
    cosim_each_on(&mut model, layout, kernels, rtl, rows, each)
}

/// [`cosim_each`] on core `model` (perhaps carrying a stall probe).
pub fn cosim_each_on(
    model: &mut SmCore,
    layout: &Layout,
    kernels: &[Vec<Vec<Instr>>],
    rtl: &mut dyn Rtl,
    mut rows: Option<&mut WaveRows>,
    each: &mut dyn FnMut(usize, &SmRecord),
) -> Result<Vec<SmStats>, Box<SmDivergence>> {
    let p = &model.params().clone();
    let mut b = Buffers::new(p, layout);
    let mut global = 0u64;
    let mut stats = Vec::new();
    if let Some(r) = rows.as_deref_mut() {
        r.nets_of(rtl);
    }
    for (k, program) in kernels.iter().enumerate() {
        let mut env = Env::new(p, program);
        model.kernel_start(program);
        b.eval(rtl, &env.inputs(0, true));
        rtl.edge();
        if let Some(r) = rows.as_deref_mut() {
            push_row(
                r,
                global,
                &b.inputs,
                &b.actual,
                Some((&b.actual, rtl)),
                false,
            );
        }
        global += 1;
        let mut acc = StatsAcc::default();
        let mut progress = Counter::watched("elastic_sm", 0, "cycles");
        while !model.done() {
            progress.tick();
            let rec = model.cycle();
            let t = rec.pipe.t;
            b.expected.fill(0);
            b.ports
                .write(&rec, &mut Outputs::default(), &mut b.expected);
            let mut i = env.inputs(t, false);
            b.eval(rtl, &i);
            if b.out.issue_valid {
                env.describe(&b.out, &mut i);
                b.eval(rtl, &i);
            }
            let mismatch = b.mismatch(layout, t);
            if let Some(r) = rows.as_deref_mut() {
                let differs = mismatch.is_some();
                push_row(
                    r,
                    global,
                    &b.inputs,
                    &b.expected,
                    Some((&b.actual, rtl)),
                    differs,
                );
            }
            rtl.edge();
            global += 1;
            if let Some(mismatch) = mismatch {
                return Err(Box::new(SmDivergence {
                    kernel: k,
                    mismatch,
                    model: rec,
                }));
            }
            env.after(t, &b.out);
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
    let mut b = Buffers::new(p, &layout);
    let mut env = Env::new(p, program);
    b.io.write_inputs(&env.inputs(0, true), &mut b.inputs);
    push_row(rows, 0, &b.inputs, &b.expected, None, false);
    let mut global = 1u64;
    SmCore::new(p)?.run_kernel_each(program, &mut |rec| {
        b.expected.fill(0);
        b.ports.write(rec, &mut b.out, &mut b.expected);
        let mut i = env.inputs(rec.pipe.t, false);
        if rec.issue.is_some() {
            env.describe(&b.out, &mut i);
        }
        b.inputs.fill(0);
        b.io.write_inputs(&i, &mut b.inputs);
        push_row(rows, global, &b.inputs, &b.expected, None, false);
        env.after(rec.pipe.t, &b.out);
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

/// Random cases over `configs`.
pub fn sm_cases(configs: Vec<SmParams>) -> impl Strategy<Value = SmCase> {
    proptest::sample::select(configs).prop_flat_map(|params| {
        kernels(&params).prop_map(move |kernels| SmCase {
            params: params.clone(),
            kernels,
        })
    })
}

/// Configurations for random workloads: every pipe mode and scheduler, both policies and
/// counter modes, ICNT returns, S ∈ {1, 2, 4}, M ∈ {1, 2, 4}, N ∈ {0, 1, 3}, P ∈ {1, 2}, all
/// broadcast modes, tiny caches (so lines are evicted) and W ∈ {3, 4, 8}.
pub fn random_configs() -> Vec<SmParams> {
    use smrtl_hdl::blocks::bank_conflict_detector::Mode;
    use smrtl_hdl::blocks::elastic_pipeline::{PipeMode, WbPriority};
    use smrtl_hdl::blocks::history_cache::{BcawsPolicy, CounterMode};
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
            // The DRAM model, scaled down so returns overtake each other within a kernel.
            p.gmem_return = GmemReturn::Dram(smrtl_cosim::sm::elastic_sm::Dram {
                seed: 5,
                base: 6,
                cores: 2,
                window: 4,
                ..Default::default()
            });
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
// Block level: per-cycle stimulus on the ports (spec §6)
// ---------------------------------------------------------------------------------------------

/// The typed per-cycle inputs of `kernels` on the `sm_core` ports, from reset: the testbench
/// ([`cosim`]'s `Env`) drives the [`PortModel`], so every descriptor answer and ICNT return
/// fits the core's outputs. Each kernel starts with its `kernel_start` cycle. Panics if the
/// port model diverges from [`SmCore`] (a model bug).
pub fn stimulus(p: &SmParams, kernels: &[Vec<Vec<Instr>>]) -> Vec<Inputs> {
    let layout = layout(p);
    let mut dut = PortModel::new(p, &layout);
    let mut rows = WaveRows::unbounded();
    if let Err(d) = cosim_each(
        p,
        &layout,
        kernels,
        &mut dut,
        Some(&mut rows),
        &mut |_, _| {},
    ) {
        panic!("sm_core port model diverges from SmCore: {d}");
    }
    let io = Io::new(p, &layout);
    rows.rows
        .into_iter()
        .map(|r| {
            let mut i = Inputs::new(p);
            io.read_inputs(&r.inputs, &mut i);
            i
        })
        .collect()
}

impl Bench for SmParams {
    type Model = PortModel;
    const SUMMARY: &'static str = "SM core, scheduler mode: RR scheduler + BCAWS mask, issue unit, history cache and the pipeline; block level on its ports, SM level with workloads (`smrtl sim --workload`) (seed 000)";

    /// [`stimulus`] of random [`kernels`] (1–3 launches); shrinking works on the workload.
    fn stimulus(&self) -> BoxedStrategy<Vec<Inputs>> {
        let p = self.clone();
        kernels(self).prop_map(move |k| stimulus(&p, &k)).boxed()
    }

    /// docs/elastic-pipeline.md §5.2–§5.6: a decision and a later subwarp's issue, a failed
    /// decision, a decision under the BCAWS mask, a cache lookup hit and miss and a write, a
    /// warp completing, the ICNT request and return (`Icnt{lat}`), `kernel_start`.
    fn coverpoints(&self) -> Vec<Cover<SmParams>> {
        type Point = Cover<SmParams>;
        let mut v = vec![
            Point::point("decision", "§5.6", |_, _, o, _| o.decide),
            Point::point("sched_fail", "§5.6", |_, _, o, _| o.sched_fail),
            Point::point("hc_lookup_hit", "§5.2", |_, _, o, _| {
                o.hc_lookup && o.hc_hit
            }),
            Point::point("hc_lookup_miss", "§5.2", |_, _, o, _| {
                o.hc_lookup && !o.hc_hit
            }),
            Point::point("hc_write", "§5.3", |_, _, o, _| o.hc_write),
            Point::point("warp_done", "§5.6", |_, _, o, _| o.warp_done),
            Point::point("kernel_start", "§5.2", |_, i, _, _| i.kernel_start),
        ];
        v.push(Point::unless(
            (self.pipe.subwarps == 1).then_some("S = 1: one subwarp"),
            "later_subwarp_issues",
            "§5.6",
            |_, _, o, _| o.issue_valid && o.issue_sw > 0,
        ));
        v.push(Point::unless(
            (self.sched == Sched::Rr).then_some("sched = rr: no mask"),
            "decision_under_mask",
            "§5.4",
            |_, _, o, _| o.decide && o.mask,
        ));
        if self.gld_via_icnt() {
            v.push(Point::point("icnt_request", "§5.6", |_, _, o, _| {
                o.icnt_req
            }));
            v.push(Point::point("icnt_return", "§5.6", |_, i, _, _| {
                i.icnt_valid
            }));
        } else {
            let why = "gmem_return = at_writeback: GLDs complete at WB";
            v.push(Point::unreachable("icnt_request", "§5.6", why));
            v.push(Point::unreachable("icnt_return", "§5.6", why));
        }
        v
    }
}
