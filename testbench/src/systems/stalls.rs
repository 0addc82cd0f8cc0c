//! A system's stall breakdown (docs/stall-inspector.md §5; spec §5, §7.2): the
//! `stall_inspector` RTL in the loop beside the model's inspector ([`StallRtl`]), and the
//! breakdown as text (the three stacks of spec §5 and the conservation checks), CSV and JSON.
//! The plot is `stall_plot.rs`'s.

use super::{Backend, Failure};
use serde_json::{json, Value};
use smrtl_cosim::blocks::stall_inspector::{write_cycle, CycleIn, CycleOut, Gsi, WarpPreds};
use smrtl_cosim::harness::backend::rusthdl::RustHdl;
use smrtl_cosim::harness::Trace as WaveRows;
use smrtl_cosim::harness::{first_difference, hex};
use smrtl_cosim::sm::stalls::{Breakdown, Snapshot, StallCheck, StallOptions, Stalls, CLASSES};
use smrtl_cosim::{Layout, Rtl};
use smrtl_hdl::blocks::stall_inspector::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::stall_inspector::{build, ports, reason, src, Class, Params};
use std::cell::RefCell;
use std::fmt::Write as _;
use std::rc::Rc;
use std::sync::Arc;

/// The block in the loop.
pub const BLOCK: &str = "stall_inspector";

/// What `smrtl sim --stalls` asks of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StallRequest {
    /// The model-only accounts (snapshots, per PC).
    pub opts: StallOptions,
}

impl StallRequest {
    /// What `smrtl sim --stalls` asks for its text alone: no snapshots, no per-PC table (the
    /// CSV and the JSON add it).
    pub const SIM: StallRequest = StallRequest {
        opts: StallOptions {
            every: 0,
            per_pc: false,
            audit: false,
        },
    };
}

/// The probe for inspector `p` on `backend`: the model alone, or with the RTL in the loop
/// (and then the predicates the model keeps at its events audited every cycle too).
pub fn probe(p: &Params, req: &StallRequest, backend: Backend) -> Result<Stalls, String> {
    let rtl = match backend {
        Backend::Model => None,
        b => Some(StallRtl::new(p, b)?),
    };
    Ok(probe_of(p, req, rtl))
}

/// The probe for inspector `p` with `rtl` (built by the caller: labelled, recording) beside it,
/// or the model alone; with the RTL the predicates kept at the model's events are audited too.
pub fn probe_of(p: &Params, req: &StallRequest, rtl: Option<StallRtl>) -> Stalls {
    let audit = rtl.is_some();
    let s = Stalls::new(p, StallOptions { audit, ..req.opts });
    match rtl {
        None => s,
        Some(r) => s.with_check(Box::new(r)),
    }
}

/// A run's result with its probe's breakdown: a divergence of the inspector's RTL fails the
/// run (as the system's own RTL does), a failed run keeps its own failure.
pub fn finish<T>(
    result: Result<T, Failure>,
    probe: Option<Stalls>,
    backend: Backend,
) -> (Result<T, Failure>, Option<Breakdown>) {
    match (result, probe.map(Stalls::finish)) {
        (Err(f), _) => (Err(f), None),
        (Ok(r), None) => (Ok(r), None),
        (Ok(r), Some(Ok(b))) => (Ok(r), Some(b)),
        (Ok(_), Some(Err(cause))) => (
            Err(Failure {
                block: BLOCK,
                backend,
                cause,
                diverged: true,
            }),
            None,
        ),
    }
}

/// Where a [`StallRtl`] records its cycles for a waveform (shared with the run that writes it).
pub type SharedRows = Rc<RefCell<WaveRows>>;

/// The `stall_inspector` RTL driven by the model's predicates: every output compared every
/// cycle (`rd_data` reads `top[NO_STALL]`), the whole read-out map after the last cycle. One
/// per SM of a multi-SM system ([`StallRtl::labelled`]: its messages name the SM).
pub struct StallRtl {
    /// What the messages call this inspector beside the block's name (`SM 3`), or empty.
    label: String,
    /// Each compared cycle's ports, for a waveform (docs/stall-inspector.md §10.8).
    rows: Option<SharedRows>,
    rtl: Box<dyn Rtl>,
    p: Params,
    io: Io,
    layout: Layout,
    inputs: Inputs,
    outputs: Outputs,
    buf: Vec<u64>,
    expected: Vec<u64>,
    actual: Vec<u64>,
}

impl StallRtl {
    /// The RTL of `p` on `backend` (rusthdl or verilator), after a reset cycle.
    pub fn new(p: &Params, backend: Backend) -> Result<StallRtl, String> {
        let module = Arc::new(build(p));
        let rtl: Box<dyn Rtl> = match backend {
            Backend::Model => return Err("the model alone has no RTL".into()),
            Backend::Rusthdl => Box::new(RustHdl::new(module)),
            Backend::Verilator => crate::verilated(&module).map_err(|e| e.to_string())?,
        };
        Ok(StallRtl::on(p, rtl))
    }

    /// `rtl` (the block of `p`, perhaps with a planted fault) in the loop, after a reset cycle.
    pub fn on(p: &Params, rtl: Box<dyn Rtl>) -> StallRtl {
        let layout = Layout::new(&ports(p));
        let mut r = StallRtl {
            label: String::new(),
            rows: None,
            rtl,
            p: p.clone(),
            io: Io::new(p, &layout),
            inputs: Inputs::new(p),
            outputs: Outputs::new(p),
            buf: vec![0; layout.in_words],
            expected: vec![0; layout.out_words],
            actual: vec![0; layout.out_words],
            layout,
        };
        r.inputs.reset = true;
        r.io.write_inputs(&r.inputs, &mut r.buf);
        r.rtl.eval(&r.buf, &mut r.actual);
        r.rtl.edge();
        r.inputs.reset = false;
        r
    }

    /// Names this inspector in its messages (`stall_inspector SM 3 cycle T: ...`).
    pub fn labelled(mut self, label: impl Into<String>) -> StallRtl {
        self.label = label.into();
        self
    }

    /// Records every compared cycle (inputs, model and RTL outputs) into `rows`.
    pub fn recording(mut self, rows: SharedRows) -> StallRtl {
        self.rows = Some(rows);
        self
    }

    /// The ports, for a waveform of the rows it records.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    fn drive(&mut self, warps: &[WarpPreds], c: &CycleIn) {
        let i = &mut self.inputs;
        write_cycle(i, warps, c);
        self.io.write_inputs(i, &mut self.buf);
    }

    /// Evaluates and compares; the first differing port as one line.
    fn compare(&mut self, when: &str, t: u64) -> Result<(), String> {
        self.io.write_outputs(&self.outputs, &mut self.expected);
        self.rtl.eval(&self.buf, &mut self.actual);
        let same = self.expected == self.actual;
        if let Some(rows) = &self.rows {
            let (i, e, a) = (&self.buf, &self.expected, &self.actual);
            rows.borrow_mut().push_with(t, !same, |r| {
                r.inputs.extend_from_slice(i);
                r.model.extend_from_slice(e);
                r.rtl.extend_from_slice(a);
            });
        }
        if same {
            return Ok(());
        }
        let d = first_difference(&self.layout, 0, &self.expected, &self.actual);
        let label = match self.label.as_str() {
            "" => String::new(),
            l => format!(" {l}"),
        };
        Err(format!(
            "{BLOCK}{label} {when}: port {} expected {} (model) actual {} (rtl)",
            d.port,
            hex(&d.expected),
            hex(&d.actual)
        ))
    }
}

impl StallRtl {
    /// The model's outputs of the cycle on the ports: `o` and `gsi`'s warp classes, its
    /// register at this cycle's `rd_addr` and its status.
    fn expect(&mut self, o: &CycleOut, gsi: &Gsi) {
        let e = &mut self.outputs;
        e.cls = o.cls.code();
        for (w, x) in e.wcls.iter_mut().enumerate() {
            *x = gsi.wcls_of(w).code();
        }
        e.md_sel = o.md_sel as u64;
        e.ms_sel = o.ms_sel as u64;
        e.ms_cyc_reason = u64::from(o.ms_cyc_reason);
        e.flush_valid = o.flush.is_some();
        e.flush_src = o.flush.map_or(0, |f| u64::from(f.src));
        e.flush_amt = o.flush.map_or(0, |f| f.amt);
        e.rd_data = gsi.read(self.inputs.rd_addr);
        e.status = u64::from(gsi.status());
    }
}

impl StallCheck for StallRtl {
    fn cycle(
        &mut self,
        t: u64,
        warps: &[WarpPreds],
        c: &CycleIn,
        o: &CycleOut,
        gsi: &Gsi,
    ) -> Result<(), String> {
        self.drive(warps, c);
        self.expect(o, gsi);
        self.compare(&format!("cycle {t}"), t)?;
        self.rtl.edge();
        Ok(())
    }

    /// Reads every address in uncounted idle cycles (`en` = 0, no writeback: nothing
    /// changes), every port compared.
    fn finish(&mut self, gsi: &Gsi) -> Result<(), String> {
        let idle = vec![WarpPreds::default(); self.p.nw as usize];
        let t = gsi.cyc_total();
        let mut g = gsi.clone();
        let c = CycleIn::default();
        let o = g.evaluate(&idle, &c);
        self.drive(&idle, &c);
        for a in 0..1u64 << self.p.addr_bits() {
            self.inputs.rd_addr = a;
            self.io.write_inputs(&self.inputs, &mut self.buf);
            self.expect(&o, &g);
            self.compare(&format!("read-out rd_addr 0x{a:02x}"), t + a)?;
        }
        Ok(())
    }
}

/// Names of the memory-data sources of spec §5 (b) and the memory-structural reasons of (c).
pub const SOURCES: [(u64, &str); 7] = [
    (src::L1, "L1"),
    (src::L1_COAL, "L1_COAL"),
    (src::L2, "L2"),
    (src::REMOTE_L1, "REMOTE_L1"),
    (src::MAIN_MEM, "MAIN_MEM"),
    (src::LOCAL_SPM, "LOCAL_SPM"),
    (src::UNKNOWN, "UNKNOWN"),
];
pub const REASONS: [(u64, &str); 6] = [
    (reason::MSHR_FULL, "MSHR_FULL"),
    (reason::SB_FULL, "SB_FULL"),
    (reason::BANK_CONFLICT, "BANK_CONFLICT"),
    (reason::PENDING_RELEASE, "PENDING_RELEASE"),
    (reason::PENDING_DMA, "PENDING_DMA"),
    (reason::OTHER, "OTHER"),
];

fn name(c: Class) -> String {
    c.to_string()
}

fn pct(part: f64, whole: u64) -> f64 {
    100.0 * part / whole.max(1) as f64
}

/// The breakdown as text: the three stacks and the conservation checks (spec §5, §7.1).
pub fn text(b: &Breakdown, backend: Backend) -> String {
    let s = &b.totals;
    let n = b.cyc_total;
    let mut o = String::new();
    let rtl = match (b.checked, backend) {
        (true, b) => format!(
            "; {BLOCK} RTL ({}) equal every cycle and in the read-out",
            b.name()
        ),
        _ => String::new(),
    };
    let _ = writeln!(o, "stalls ({BLOCK} NW = {}, {n} cycles{rtl}):", b.nw);
    let _ = writeln!(
        o,
        "  classes (exclusive, Alg. 1/2)   cycles   share   fractional (GCStack)"
    );
    for c in CLASSES {
        let (x, f) = (s.top[c as usize], s.fractional[c as usize]);
        let _ = writeln!(
            o,
            "    {:<14} {:>15} {:>6.1}%  {:>12.1} {:>6.1}%",
            name(c),
            x,
            pct(x as f64, n),
            f,
            pct(f, n)
        );
    }
    let _ = writeln!(
        o,
        "  memory-data sources (MEM_DATA by where the load was served)"
    );
    for (k, label) in SOURCES {
        let x = s.md_sub[k as usize];
        if x != 0 || k != src::UNKNOWN && k != src::LOCAL_SPM {
            let _ = writeln!(o, "    {label:<14} {x:>15} {:>6.1}%", pct(x as f64, n));
        }
    }
    let _ = writeln!(
        o,
        "    (pending)      {:>15}  blame of loads not back at the end",
        b.blame_pending
    );
    let _ = writeln!(
        o,
        "  memory-structural reasons (MEM_STRUCT by what blocked the LSU)"
    );
    for (r, label) in REASONS {
        let x = s.ms_sub[r as usize];
        let _ = writeln!(o, "    {label:<14} {x:>15} {:>6.1}%", pct(x as f64, n));
    }
    for (what, l, r) in b.conservation() {
        let ok = if l == r { "holds" } else { "FAILS" };
        let _ = writeln!(o, "  conservation: {what}: {l} = {r} {ok}");
    }
    let _ = write!(
        o,
        "  status 0x{:02x}; {} final writebacks with blame beyond one per cycle",
        b.status, b.collisions
    );
    o
}

fn classes_json(v: &[u64; 8]) -> Value {
    CLASSES
        .iter()
        .map(|&c| (name(c), json!(v[c as usize])))
        .collect()
}

fn fractional_json(v: &[f64; 8]) -> Value {
    CLASSES
        .iter()
        .map(|&c| (name(c), json!(v[c as usize])))
        .collect()
}

fn named_json(v: &[u64; 8], names: &[(u64, &str)]) -> Value {
    names
        .iter()
        .map(|&(k, n)| (n.to_string(), json!(v[k as usize])))
        .collect()
}

fn snapshot_json(s: &Snapshot) -> Value {
    json!({
        "cycle": s.cycle,
        "classes": classes_json(&s.top),
        "fractional": fractional_json(&s.fractional),
        "mem_data": named_json(&s.md_sub, &SOURCES),
        "mem_struct": named_json(&s.ms_sub, &REASONS),
    })
}

/// The breakdown as JSON: totals, conservation, snapshots and per-PC rows.
pub fn json(b: &Breakdown) -> Value {
    let conservation: Vec<Value> = b
        .conservation()
        .iter()
        .map(|(what, l, r)| json!({"check": what, "left": l, "right": r, "holds": l == r}))
        .collect();
    let per_pc: Vec<Value> = b
        .per_pc
        .iter()
        .map(|(pc, v)| json!({"kernel": pc >> 32, "pc": pc & 0xffff_ffff, "classes": classes_json(v)}))
        .collect();
    json!({
        "nw": b.nw,
        "cycles": b.cyc_total,
        "inst_issued": b.inst_issued,
        "issue_cycles": b.issue_cycles,
        "status": b.status,
        "blame_pending": b.blame_pending,
        "collisions": b.collisions,
        "rtl_checked": b.checked,
        "totals": snapshot_json(&b.totals),
        "conservation": conservation,
        "snapshots": b.snapshots.iter().map(snapshot_json).collect::<Vec<_>>(),
        "per_pc": per_pc,
    })
}

/// The breakdown as CSV: `table,cycle,kernel,pc,category,cycles`; tables `classes`,
/// `fractional`, `mem_data`, `mem_struct` (totals at the last cycle, then each snapshot) and
/// `per_pc`.
pub fn csv(b: &Breakdown) -> String {
    let mut o = String::from("table,cycle,kernel,pc,category,cycles\n");
    let snaps = b.snapshots.iter().chain(std::iter::once(&b.totals));
    let last = b.snapshots.last().map(|s| s.cycle);
    for s in snaps {
        if std::ptr::eq(s, &b.totals) && last == Some(s.cycle) {
            continue;
        }
        for c in CLASSES {
            let _ = writeln!(o, "classes,{},,,{},{}", s.cycle, name(c), s.top[c as usize]);
        }
        for c in CLASSES {
            let f = s.fractional[c as usize];
            let _ = writeln!(o, "fractional,{},,,{},{f:.3}", s.cycle, name(c));
        }
        for (k, n) in SOURCES {
            let _ = writeln!(o, "mem_data,{},,,{n},{}", s.cycle, s.md_sub[k as usize]);
        }
        for (r, n) in REASONS {
            let _ = writeln!(o, "mem_struct,{},,,{n},{}", s.cycle, s.ms_sub[r as usize]);
        }
    }
    for (pc, v) in &b.per_pc {
        for c in CLASSES.iter().filter(|&&c| v[c as usize] != 0) {
            let (k, p) = (pc >> 32, pc & 0xffff_ffff);
            let _ = writeln!(
                o,
                "per_pc,{},{k},{p},{},{}",
                b.cyc_total,
                name(*c),
                v[*c as usize]
            );
        }
    }
    o
}

/// The sum of SMs' breakdowns (spec §5: the average over S SMs is this sum / S; the shares are
/// the same). Every SM counts every cycle (spec D3), so their snapshots fall on the same cycles.
pub fn sum(per_sm: &[Breakdown]) -> Option<Breakdown> {
    let mut it = per_sm.iter();
    let mut s = it.next()?.clone();
    s.per_pc.clear();
    let add = |a: &mut Snapshot, b: &Snapshot| {
        a.cycle += b.cycle;
        for (x, y) in a.top.iter_mut().zip(&b.top) {
            *x += y;
        }
        for (x, y) in a.md_sub.iter_mut().zip(&b.md_sub) {
            *x += y;
        }
        for (x, y) in a.ms_sub.iter_mut().zip(&b.ms_sub) {
            *x += y;
        }
        for (x, y) in a.fractional.iter_mut().zip(&b.fractional) {
            *x += y;
        }
    };
    for b in it {
        s.cyc_total += b.cyc_total;
        s.inst_issued += b.inst_issued;
        s.status |= b.status;
        s.blame_pending += b.blame_pending;
        s.collisions += b.collisions;
        s.issue_cycles += b.issue_cycles;
        s.checked &= b.checked;
        add(&mut s.totals, &b.totals);
        for (x, y) in s.snapshots.iter_mut().zip(&b.snapshots) {
            add(x, y);
        }
    }
    Some(s)
}

/// The breakdown as text: of one SM ([`text`]), or of each SM of a multi-SM system then their
/// sum (`per_sm` non-empty; docs/stall-inspector.md §10.8).
pub fn text_all(total: &Breakdown, per_sm: &[Breakdown], backend: Backend) -> String {
    if per_sm.is_empty() {
        return text(total, backend);
    }
    let mut o = String::new();
    for (s, b) in per_sm.iter().enumerate() {
        let _ = writeln!(o, "SM {s}: {}", text(b, backend));
    }
    let n = per_sm.len();
    let _ = write!(
        o,
        "all {n} SMs (sum; the spec-§5 average is the sum / {n}, the shares are the same): {}",
        text(total, backend)
    );
    o
}

/// The breakdown as JSON: [`json`] of the total, with each SM's under `"per_sm"` when given.
pub fn json_all(total: &Breakdown, per_sm: &[Breakdown]) -> Value {
    let mut v = json(total);
    if !per_sm.is_empty() {
        v["per_sm"] = per_sm.iter().map(json).collect();
    }
    v
}

/// The breakdown as CSV: [`csv`], or with `per_sm` given, `sm,` before every row (`all` for
/// the sum, then each SM's index).
pub fn csv_all(total: &Breakdown, per_sm: &[Breakdown]) -> String {
    if per_sm.is_empty() {
        return csv(total);
    }
    let mut o = String::from("sm,table,cycle,kernel,pc,category,cycles\n");
    let all = std::iter::once(("all".to_string(), total));
    let each = per_sm.iter().enumerate().map(|(s, b)| (s.to_string(), b));
    for (sm, b) in all.chain(each) {
        for line in csv(b).lines().skip(1) {
            let _ = writeln!(o, "{sm},{line}");
        }
    }
    o
}
