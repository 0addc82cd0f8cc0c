//! Trace files of the elastic pipeline (docs/elastic-pipeline.md §3, §9, "Trace file"): the
//! format and its parsing, the closed-loop trace driver over any [`Simulator`], the lock-step
//! co-simulation of model and RTL on per-cycle [`Record`]s, and random trace files shrunk to a
//! minimal one. The block's own bench is in [`crate::blocks::elastic_pipeline`].
//!
//! Trace file (JSON):
//!
//! ```json
//! {"params": {"pipe_mode": "unified", "M": 2, "N": 0, "fe_depth": 1},
//!  "stream": ["A", "A", "S(2)", "G", "GST",
//!             {"kind": "smem", "addrs": [0, 8, 16, 24, 1, 2, 3, 4], "active": [1, 1, 1, 1, 1, 1, 1, 0]}],
//!  "icnt_valid_cycles": [12, 13]}
//! ```
//!
//! - `params`: any subset of the spec names (`smrtl list elastic_pipeline`), the rest from
//!   `Params::default()`; checked exactly as the CLI's `--set` overrides.
//! - `stream`: entries in issue order; tag = index. `"A"` ALU, `"G"` GLD, `"GST"` GST, `"S(d)"`
//!   SMEM with `deg_override` d ∈ 1..=L; or an object with `kind` (`alu`, `smem`, `gld`, `gst`),
//!   `addrs` (L word addresses < 2^AW, default 0), `active` (L values 0/1, default all 1) and
//!   `deg` (override, 1..=L). An `smem` object needs `addrs` or `deg`.
//! - `icnt_valid_cycles`: cycles t with `icnt_valid(t)`: ICNT data occupies WB during t+1.

use crate::blocks::elastic_pipeline::{encode_inputs, layout};
use crate::stimulus_file::params_as_sets;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use smrtl_cosim::blocks::elastic_pipeline::{record_from_outputs, Entry, Lanes, Model, Record, Wb};
use smrtl_cosim::harness::{hex, Trace as WaveRows};
use smrtl_cosim::{BlockModel, Layout, Simulator};
use smrtl_hdl::blocks::elastic_pipeline::{port, Kind, Params, PipeMode};
use smrtl_hdl::netlist::mask;
use smrtl_hdl::{BlockParams, ParamError};
use std::collections::BTreeSet;
use std::fmt;
use thiserror::Error;

/// The trace file as written (see the module doc).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a trace object {\"params\", \"stream\", \"icnt_valid_cycles\"}"
)]
pub struct TraceFile {
    #[serde(default)]
    pub params: Map<String, Value>,
    pub stream: Vec<Value>,
    #[serde(default)]
    pub icnt_valid_cycles: Vec<u64>,
}

/// A checked trace: resolved params, the stream as entries, the ICNT cycles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    pub params: Params,
    pub stream: Stream,
    pub icnt_valid_cycles: BTreeSet<u64>,
}

/// A trace's entries in issue order (tag = index), 8 bytes each plus the lane data of the
/// entries that carry their own: a 10^6-entry trace takes a few MB.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stream {
    lanes: usize,
    items: Vec<Packed>,
    lane_data: Vec<(Lanes<u32>, Lanes<bool>)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Packed {
    kind: Kind,
    /// The degree override, 0 for none (d ≤ L ≤ 32).
    deg: u8,
    /// 1 + the index of the entry's lane data; 0: all lanes active at address 0.
    data: u32,
}

impl Stream {
    pub fn new(lanes: usize) -> Stream {
        Stream {
            lanes,
            ..Stream::default()
        }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Appends `e` (its tag becomes its index).
    pub fn push(&mut self, e: &Entry) {
        let default = e.addrs.iter().all(|&a| a == 0) && e.act.iter().all(|&a| a);
        let data = if default {
            0
        } else {
            self.lane_data.push((e.addrs, e.act));
            self.lane_data.len() as u32
        };
        self.items.push(Packed {
            kind: e.kind,
            deg: e.deg_override.unwrap_or(0) as u8,
            data,
        });
    }

    /// Entry `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<Entry> {
        let p = self.items.get(i)?;
        let mut e = Entry::new(i as u32, p.kind, self.lanes);
        e.deg_override = (p.deg > 0).then_some(p.deg as u32);
        if p.data > 0 {
            (e.addrs, e.act) = self.lane_data[p.data as usize - 1];
        }
        Some(e)
    }

    pub fn iter(&self) -> impl Iterator<Item = Entry> + '_ {
        (0..self.len()).map(|i| self.get(i).expect("in range"))
    }
}

/// Why a trace file was rejected; each names the field and what is allowed.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum TraceError {
    #[error("trace file: {0}")]
    Syntax(String),
    #[error(transparent)]
    Params(#[from] ParamError),
    #[error("{at}: {msg}")]
    Field { at: String, msg: String },
}

fn field_err(at: impl Into<String>, msg: impl Into<String>) -> TraceError {
    TraceError::Field {
        at: at.into(),
        msg: msg.into(),
    }
}

const ALLOWED_ITEMS: &str = r#""A", "G", "GST", "S(d)", {"kind": ...}"#;
const ALLOWED_KINDS: &str = r#""alu", "smem", "gld", "gst""#;
const OBJECT_KEYS: [&str; 4] = ["kind", "addrs", "active", "deg"];

/// Most cycles a trace may name or run (`icnt_valid_cycles` values, the run's cycle budget):
/// a documented bound (docs/cli.md "Limits") that keeps a run within minutes.
pub const MAX_TRACE_CYCLES: u64 = 100_000_000;

/// Most `icnt_valid_cycles` of a trace (docs/cli.md "Limits"): each costs tens of bytes.
pub const MAX_ICNT_CYCLES: usize = 1_000_000;

/// A trace file's first pass: everything but the stream, which is only counted.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a trace object {\"params\", \"stream\", \"icnt_valid_cycles\"}"
)]
struct Head {
    #[serde(default)]
    params: Map<String, Value>,
    stream: Count,
    #[serde(default)]
    icnt_valid_cycles: Vec<u64>,
}

/// The length of a JSON array, read without keeping its elements.
struct Count(usize);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Count, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Count;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of stream entries")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Count, A::Error> {
                let mut n = 0;
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(Count(n))
            }
        }
        d.deserialize_seq(V)
    }
}

/// The second pass: each stream item parsed into `stream` as it is read, the first error kept.
struct Items<'a> {
    params: &'a Params,
    stream: &'a mut Stream,
    error: &'a mut Option<TraceError>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Items<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Items<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key != "stream" {
                map.next_value::<serde::de::IgnoredAny>()?;
                continue;
            }
            map.next_value_seed(ItemSeq {
                params: self.params,
                stream: &mut *self.stream,
                error: &mut *self.error,
            })?;
        }
        Ok(())
    }
}

struct ItemSeq<'a> {
    params: &'a Params,
    stream: &'a mut Stream,
    error: &'a mut Option<TraceError>,
}

impl<'de> serde::de::DeserializeSeed<'de> for ItemSeq<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for ItemSeq<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of stream entries")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(v) = seq.next_element::<Value>()? {
            match parse_item(self.params, self.stream.len(), &v) {
                Ok(e) => self.stream.push(&e),
                Err(e) => {
                    *self.error = Some(e);
                    return Err(serde::de::Error::custom("bad stream item"));
                }
            }
        }
        Ok(())
    }
}

impl Trace {
    /// Parses and checks a trace file's text in two passes, so memory is the text plus the
    /// packed [`Stream`]: the params, the ICNT cycles and the stream's length first, checked;
    /// then each stream item, parsed as it is read.
    pub fn from_json(text: &str) -> Result<Trace, TraceError> {
        Trace::from_json_with(text, &[])
    }

    /// [`Trace::from_json`] with the file's params overridden by `sets` (as the CLI's `--set`).
    pub fn from_json_with(text: &str, sets: &[(String, String)]) -> Result<Trace, TraceError> {
        smrtl_cosim::json::repeated_key(text).map_err(TraceError::Syntax)?;
        let head: Head = serde_json::from_str(text)
            .map_err(|e| TraceError::Syntax(smrtl_hdl::shown(&e.to_string())))?;
        // An override replaces the file's value (which is then never checked).
        let mut all = params_as_sets(&head.params);
        all.retain(|(k, _)| !sets.iter().any(|(s, _)| s.eq_ignore_ascii_case(k)));
        all.extend(sets.iter().cloned());
        let params = Params::resolve(None, &all)?;
        check_sizes(&params, head.stream.0, &head.icnt_valid_cycles)?;
        let mut stream = Stream::new(params.lanes as usize);
        stream.items.reserve_exact(head.stream.0);
        let mut error = None;
        let items = Items {
            params: &params,
            stream: &mut stream,
            error: &mut error,
        };
        let parsed = serde::de::DeserializeSeed::deserialize(
            items,
            &mut serde_json::Deserializer::from_str(text),
        );
        if let Some(e) = error {
            return Err(e);
        }
        parsed.map_err(|e| TraceError::Syntax(smrtl_hdl::shown(&e.to_string())))?;
        Trace::new(params, stream, &head.icnt_valid_cycles)
    }

    /// Checks a trace file: params as the CLI resolves them, then every stream item.
    pub fn from_file(file: &TraceFile) -> Result<Trace, TraceError> {
        let params = Params::resolve(None, &params_as_sets(&file.params))?;
        check_sizes(&params, file.stream.len(), &file.icnt_valid_cycles)?;
        let mut stream = Stream::new(params.lanes as usize);
        for (i, v) in file.stream.iter().enumerate() {
            stream.push(&parse_item(&params, i, v)?);
        }
        Trace::new(params, stream, &file.icnt_valid_cycles)
    }

    fn new(params: Params, stream: Stream, icnt: &[u64]) -> Result<Trace, TraceError> {
        let trace = Trace {
            params,
            stream,
            icnt_valid_cycles: icnt.iter().copied().collect(),
        };
        if trace.cycle_budget() > MAX_TRACE_CYCLES {
            return Err(field_err(
                "stream",
                format!(
                    "the trace could run {} cycles; allowed: at most {MAX_TRACE_CYCLES} (fewer entries or ICNT cycles)",
                    trace.cycle_budget()
                ),
            ));
        }
        Ok(trace)
    }

    /// A cycle budget no correct pipeline reaches: every entry served for at most L cycles,
    /// every ICNT grant blocking WB once, plus the pipeline depth.
    pub fn cycle_budget(&self) -> u64 {
        let p = &self.params;
        let depth = (p.fe_depth + p.mem_stages + p.premem_depth + p.nonmem_depth) as u64 + 8;
        let icnt_end = self.icnt_valid_cycles.last().map_or(0, |c| c + 2);
        (self.stream.len() as u64 + 1) * (p.lanes as u64 + 2)
            + self.icnt_valid_cycles.len() as u64
            + icnt_end
            + depth
    }
}

/// The limits checked before a trace's stream is parsed: something to run, its length fits
/// the tags, and every
/// ICNT cycle is below [`MAX_TRACE_CYCLES`].
fn check_sizes(p: &Params, entries: usize, icnt: &[u64]) -> Result<(), TraceError> {
    if entries == 0 && icnt.is_empty() {
        return Err(field_err(
            "stream",
            "empty, and no icnt_valid_cycles: nothing to run (a run of no cycles proves nothing)",
        ));
    }
    let max = 1u64 << p.tag_bits;
    if entries as u64 > max {
        return Err(field_err(
            "stream",
            format!(
                "{entries} entries do not fit tag_bits = {}; allowed: at most {max} entries",
                p.tag_bits
            ),
        ));
    }
    if icnt.len() > MAX_ICNT_CYCLES {
        return Err(field_err(
            "icnt_valid_cycles",
            format!("{} cycles; allowed: at most {MAX_ICNT_CYCLES}", icnt.len()),
        ));
    }
    if let Some((i, c)) = icnt
        .iter()
        .enumerate()
        .find(|(_, &c)| c >= MAX_TRACE_CYCLES)
    {
        return Err(field_err(
            format!("icnt_valid_cycles[{i}]"),
            format!("cycle {c} is out of range; allowed: 0..{MAX_TRACE_CYCLES}"),
        ));
    }
    Ok(())
}

/// One stream item: a short string or an object.
fn parse_item(p: &Params, i: usize, v: &Value) -> Result<Entry, TraceError> {
    let at = format!("stream[{i}]");
    let lanes = p.lanes as usize;
    let tag = i as u32;
    match v {
        Value::String(s) => match s.as_str() {
            "A" => Ok(Entry::new(tag, Kind::Alu, lanes)),
            "G" => Ok(Entry::new(tag, Kind::Gld, lanes)),
            "GST" => Ok(Entry::new(tag, Kind::Gst, lanes)),
            _ => match s.strip_prefix("S(").and_then(|r| r.strip_suffix(')')) {
                Some(d) => {
                    let d = d.trim().parse::<u64>().map_err(|_| {
                        field_err(
                            &at,
                            format!(
                                "bad degree in {s:?}; allowed: \"S(d)\" with d in 1..={}",
                                p.lanes
                            ),
                        )
                    })?;
                    Ok(Entry::smem_deg(tag, degree(p, &at, d)?, lanes))
                }
                None => Err(field_err(
                    &at,
                    format!("unknown entry {s:?}; allowed: {ALLOWED_ITEMS}"),
                )),
            },
        },
        Value::Object(o) => parse_object(p, &at, tag, o),
        other => Err(field_err(
            &at,
            format!("unknown entry {other}; allowed: {ALLOWED_ITEMS}"),
        )),
    }
}

/// A degree override d ∈ 1..=L.
fn degree(p: &Params, at: &str, d: u64) -> Result<u32, TraceError> {
    if (1..=p.lanes as u64).contains(&d) {
        Ok(d as u32)
    } else {
        Err(field_err(
            at,
            format!("degree {d} is out of range; allowed: 1..={}", p.lanes),
        ))
    }
}

fn parse_object(
    p: &Params,
    at: &str,
    tag: u32,
    o: &Map<String, Value>,
) -> Result<Entry, TraceError> {
    if let Some(k) = o.keys().find(|k| !OBJECT_KEYS.contains(&k.as_str())) {
        return Err(field_err(
            at,
            format!("unknown field {k:?}; allowed: {}", OBJECT_KEYS.join(", ")),
        ));
    }
    let kind = match o.get("kind") {
        None => {
            return Err(field_err(
                at,
                format!("missing \"kind\"; allowed: {ALLOWED_KINDS}"),
            ))
        }
        Some(v) => match v.as_str() {
            Some("alu") => Kind::Alu,
            Some("smem") => Kind::Smem,
            Some("gld") => Kind::Gld,
            Some("gst") => Kind::Gst,
            _ => {
                return Err(field_err(
                    format!("{at}.kind"),
                    format!("unknown kind {v}; allowed: {ALLOWED_KINDS}"),
                ))
            }
        },
    };
    let lanes = p.lanes as usize;
    let mut e = Entry::new(tag, kind, lanes);
    let list = |key: &str| -> Result<Option<&Vec<Value>>, TraceError> {
        match o.get(key) {
            None => Ok(None),
            Some(Value::Array(a)) if a.len() == lanes => Ok(Some(a)),
            Some(other) => Err(field_err(
                format!("{at}.{key}"),
                format!("got {other}; allowed: an array of exactly L = {lanes} values"),
            )),
        }
    };
    if let Some(addrs) = list("addrs")? {
        let top = mask(p.addr_bits as usize);
        e.addrs = addrs
            .iter()
            .enumerate()
            .map(|(l, v)| match v.as_u64() {
                Some(a) if a <= top => Ok(a as u32),
                _ => Err(field_err(
                    format!("{at}.addrs[{l}]"),
                    format!(
                        "{v} does not fit AW = {} bits; allowed: 0..={top}",
                        p.addr_bits
                    ),
                )),
            })
            .collect::<Result<_, _>>()?;
    }
    if let Some(active) = list("active")? {
        e.act = active
            .iter()
            .enumerate()
            .map(|(l, v)| match v {
                Value::Bool(b) => Ok(*b),
                _ if v.as_u64() == Some(0) => Ok(false),
                _ if v.as_u64() == Some(1) => Ok(true),
                _ => Err(field_err(
                    format!("{at}.active[{l}]"),
                    format!("{v}; allowed: 0, 1"),
                )),
            })
            .collect::<Result<_, _>>()?;
    }
    if let Some(v) = o.get("deg") {
        let d = v.as_u64().ok_or_else(|| {
            field_err(
                format!("{at}.deg"),
                format!("{v}; allowed: 1..={}", p.lanes),
            )
        })?;
        e.deg_override = Some(degree(p, &format!("{at}.deg"), d)?);
    }
    if kind == Kind::Smem && e.deg_override.is_none() && !o.contains_key("addrs") {
        return Err(field_err(at, "an smem entry needs \"addrs\" (or \"deg\")"));
    }
    Ok(e)
}

// ---------------------------------------------------------------------------------------------
// Drivers
// ---------------------------------------------------------------------------------------------

/// The first difference between the model's and the RTL's record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Divergence {
    pub cycle: u64,
    /// A record field by its spec §3.5 name (`F`, `D1`, `MEM0`, `rem`, `NQ`, `WB`, ...), or
    /// `port <name>` for an output difference no record field shows.
    pub field: String,
    /// The model's value (JSON text, or hex for a port).
    pub expected: String,
    pub actual: String,
    /// Both records of that cycle, for context.
    pub model: Record,
    pub rtl: Record,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cycle {}: {} expected {} (model) actual {} (rtl)",
            self.cycle, self.field, self.expected, self.actual
        )
    }
}

#[derive(Debug, Error)]
pub enum DriveError {
    #[error("cycle limit {limit} reached: {retired} of {total} stream entries left WB")]
    CycleLimit {
        limit: u64,
        retired: usize,
        total: usize,
    },
    #[error("{0}")]
    Diverged(Box<Divergence>),
}

/// The closed loop shared by both drivers: offer the next entry, drive `icnt_valid`, step,
/// advance on acceptance (in_valid ∧ in_ready), stop after the last stream entry's WB cycle
/// once every ICNT grant has shown in WB. `step` returns the cycle's record and `in_ready`;
/// `each` sees every record (none is kept). Returns the cycles run.
fn drive(
    trace: &Trace,
    layout: &Layout,
    limit: u64,
    mut step: impl FnMut(u64, &[u64]) -> Result<(Record, bool), DriveError>,
    each: &mut dyn FnMut(&Record),
) -> Result<u64, DriveError> {
    let total = trace.stream.len();
    let icnt_end = trace.icnt_valid_cycles.last().map_or(0, |c| c + 2);
    let (mut next, mut retired) = (0, 0);
    let mut icnt = trace.icnt_valid_cycles.iter().peekable();
    let mut t = 0u64;
    loop {
        if retired == total && t >= icnt_end {
            return Ok(t);
        }
        if t >= limit {
            return Err(DriveError::CycleLimit {
                limit,
                retired,
                total,
            });
        }
        let offer = trace.stream.get(next);
        let icnt_valid = icnt.next_if_eq(&&t).is_some();
        let inputs = encode_inputs(&trace.params, layout, offer.as_ref(), icnt_valid);
        let (record, in_ready) = step(t, &inputs)?;
        if offer.is_some() && in_ready {
            next += 1;
        }
        if matches!(record.wb, Wb::Entry(_)) {
            retired += 1;
        }
        each(&record);
        t += 1;
    }
}

fn in_ready(layout: &Layout, outputs: &[u64]) -> bool {
    layout
        .output(port::IN_READY)
        .is_some_and(|s| s.of(outputs)[0] == 1)
}

/// Runs `trace` on `sim` (the model or any RTL backend) from reset; one record per cycle.
pub fn run(
    sim: &mut dyn Simulator,
    layout: &Layout,
    trace: &Trace,
    limit: u64,
) -> Result<Vec<Record>, DriveError> {
    let mut records = vec![];
    run_traced(sim, layout, trace, limit, None, &mut |r| {
        records.push(r.clone())
    })?;
    Ok(records)
}

/// [`run`], showing each record to `each` instead of keeping it, and keeping each cycle's
/// inputs and outputs in `rows` (as the model's) for a VCD. Returns the cycles run.
pub fn run_traced(
    sim: &mut dyn Simulator,
    layout: &Layout,
    trace: &Trace,
    limit: u64,
    mut rows: Option<&mut WaveRows>,
    each: &mut dyn FnMut(&Record),
) -> Result<u64, DriveError> {
    let mut out = vec![0u64; layout.out_words];
    let step = |t, inputs: &[u64]| {
        sim.step(inputs, &mut out);
        if let Some(rows) = rows.as_deref_mut() {
            rows.push_with(t, false, |row| {
                row.inputs.extend_from_slice(inputs);
                row.model.extend_from_slice(&out);
            });
        }
        let record = record_from_outputs(&trace.params, layout, t, &out);
        Ok((record, in_ready(layout, &out)))
    };
    drive(trace, layout, limit, step, each)
}

/// Runs `trace` on a fresh behavioral [`Model`] within [`Trace::cycle_budget`].
pub fn run_model(trace: &Trace) -> Result<Vec<Record>, DriveError> {
    let layout = layout(&trace.params);
    let mut model = Model::new(&trace.params, &layout);
    run(&mut model, &layout, trace, trace.cycle_budget())
}

/// Lock-step co-simulation: `model` and `rtl` get the same inputs every cycle (the model's
/// in_ready advances the stream); the first record field (or output port) that differs stops
/// the run. Returns the model's records.
pub fn cosim(
    model: &mut dyn Simulator,
    rtl: &mut dyn Simulator,
    layout: &Layout,
    trace: &Trace,
    limit: u64,
) -> Result<Vec<Record>, DriveError> {
    let mut records = vec![];
    cosim_traced(model, rtl, layout, trace, limit, None, &mut |r| {
        records.push(r.clone())
    })?;
    Ok(records)
}

/// [`cosim`], showing each model record to `each` instead of keeping it, and keeping each
/// cycle's inputs, both outputs and the RTL's internal nets in `rows` for a VCD (up to and
/// including a divergence). Returns the cycles run.
pub fn cosim_traced(
    model: &mut dyn Simulator,
    rtl: &mut dyn Simulator,
    layout: &Layout,
    trace: &Trace,
    limit: u64,
    mut rows: Option<&mut WaveRows>,
    each: &mut dyn FnMut(&Record),
) -> Result<u64, DriveError> {
    let mut expected = vec![0u64; layout.out_words];
    let mut actual = vec![0u64; layout.out_words];
    let p = &trace.params;
    if let Some(rows) = rows.as_deref_mut() {
        rows.nets_of(rtl);
    }
    let step = |t, inputs: &[u64]| {
        model.step(inputs, &mut expected);
        rtl.step(inputs, &mut actual);
        let m = record_from_outputs(p, layout, t, &expected);
        let r = record_from_outputs(p, layout, t, &actual);
        let diff = if m == r && expected == actual {
            None
        } else {
            first_difference(layout, &m, &r, &expected, &actual)
        };
        if let Some(rows) = rows.as_deref_mut() {
            rows.push_with(t, diff.is_some(), |row| {
                row.inputs.extend_from_slice(inputs);
                row.model.extend_from_slice(&expected);
                row.rtl.extend_from_slice(&actual);
                rtl.internal_values(&mut row.internals);
            });
        }
        if let Some((field, e, a)) = diff {
            return Err(DriveError::Diverged(Box::new(Divergence {
                cycle: t,
                field,
                expected: e,
                actual: a,
                model: m,
                rtl: r,
            })));
        }
        Ok((m, in_ready(layout, &expected)))
    };
    drive(trace, layout, limit, step, each)
}

/// The first record field that differs, in record order; else the first output port.
fn first_difference(
    layout: &Layout,
    m: &Record,
    r: &Record,
    expected: &[u64],
    actual: &[u64],
) -> Option<(String, String, String)> {
    let by_field = m
        .fields()
        .into_iter()
        .zip(r.fields())
        .find(|((_, e), (_, a))| e != a)
        .map(|((name, e), (_, a))| (name, e.to_string(), a.to_string()));
    by_field.or_else(|| {
        layout
            .outputs
            .iter()
            .find(|s| s.of(expected) != s.of(actual))
            .map(|s| {
                (
                    format!("port {}", s.name),
                    hex(s.of(expected)),
                    hex(s.of(actual)),
                )
            })
    })
}

// ---------------------------------------------------------------------------------------------
// Random traces (closed loop, shrinkable to a minimal trace file)
// ---------------------------------------------------------------------------------------------

/// One random stream item: A, G, GST, S(d) or an address-carrying SMEM object whose lanes draw
/// word addresses from a small pool (so the detector sees merges and conflicts).
fn stream_item(lanes: usize) -> impl Strategy<Value = Value> {
    let smem = (
        prop::collection::vec(0u64..64, 1..4),
        prop::collection::vec((0usize..4, any::<bool>()), lanes),
    )
        .prop_map(|(pool, picks)| {
            let addrs: Vec<u64> = picks.iter().map(|(i, _)| pool[i % pool.len()]).collect();
            let active: Vec<u8> = picks.iter().map(|(_, a)| *a as u8).collect();
            serde_json::json!({"kind": "smem", "addrs": addrs, "active": active})
        });
    prop_oneof![
        4 => Just(Value::from("A")),
        1 => Just(Value::from("G")),
        1 => Just(Value::from("GST")),
        2 => (1..=lanes as u32).prop_map(|d| Value::from(format!("S({d})"))),
        2 => smem,
    ]
}

/// Random params of one pipe mode (issue scope: M ∈ {1, 2, 4}, N ∈ 0..=4, Q ∈ 0..=M+1).
pub fn random_params(mode: PipeMode) -> impl Strategy<Value = Map<String, Value>> {
    (
        prop::sample::select(vec![1u32, 2, 4]),
        0u32..=4,
        0u32..=5,
        1u32..=3,
        prop::sample::select(vec![1u32, 2]),
        prop::sample::select(vec![
            "multicast",
            "literal",
            "gpgpusim-limited",
            "gpgpusim4-limited",
        ]),
        prop::sample::select(vec!["mem_first", "nonmem_first"]),
    )
        .prop_map(move |(m, n, q, fe, ports, broadcast, prio)| {
            let q = q.min(m + 1);
            let json = serde_json::json!({
                "pipe_mode": mode_name(mode), "M": m, "N": n, "Q": q, "fe_depth": fe,
                "P": ports, "broadcast": broadcast, "wb_priority": prio,
            });
            json.as_object().cloned().expect("object")
        })
}

fn mode_name(mode: PipeMode) -> &'static str {
    match mode {
        PipeMode::Unified => "unified",
        PipeMode::Split => "split",
        PipeMode::Elastic => "elastic",
    }
}

/// Random trace files with `params` (a fixed map, or [`random_params`]): up to 48 entries and
/// ICNT grants in the first 96 cycles.
pub fn trace_files(
    params: impl Strategy<Value = Map<String, Value>>,
    lanes: usize,
) -> impl Strategy<Value = TraceFile> {
    (
        params,
        prop::collection::vec(stream_item(lanes), 1..48),
        prop::collection::btree_set(0u64..96, 0..12),
    )
        .prop_map(|(params, stream, icnt)| TraceFile {
            params,
            stream,
            icnt_valid_cycles: icnt.into_iter().collect(),
        })
}

/// The outcome of a random trace campaign; `failure` holds the shrunk trace file.
#[derive(Debug)]
pub struct TraceReport {
    pub cycles: u64,
    pub traces: u64,
    pub failure: Option<(TraceFile, String, u32)>,
}

/// Co-simulates random traces from `files` (model vs `rtl(params)`) until `cycles` cycles have
/// run; the first failing trace is shrunk by proptest to a minimal trace file.
pub fn random_traces(
    files: impl Strategy<Value = TraceFile>,
    rtl: &dyn Fn(&Params) -> Box<dyn Simulator>,
    cycles: u64,
    seed: u64,
) -> TraceReport {
    let check_one = |file: &TraceFile| -> Result<u64, String> {
        let trace =
            Trace::from_file(file).map_err(|e| format!("generated an invalid trace: {e}"))?;
        let layout = layout(&trace.params);
        let mut model = Model::new(&trace.params, &layout);
        let mut dut = rtl(&trace.params);
        cosim(
            &mut model,
            dut.as_mut(),
            &layout,
            &trace,
            trace.cycle_budget(),
        )
        .map(|r| r.len() as u64)
        .map_err(|e| e.to_string())
    };
    let mut runner = crate::check::runner(seed);
    let (mut total, mut traces) = (0, 0);
    while total < cycles {
        let mut tree = files.new_tree(&mut runner).expect("trace strategy");
        let file = tree.current();
        traces += 1;
        match check_one(&file) {
            Ok(n) => total += n,
            Err(first) => {
                let (minimal, why, steps) =
                    crate::check::shrink_tree(&mut tree, (file, first), |f| check_one(f).err());
                return TraceReport {
                    cycles: total,
                    traces,
                    failure: Some((minimal, why, steps)),
                };
            }
        }
    }
    TraceReport {
        cycles: total,
        traces,
        failure: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        Trace::from_json(text).unwrap_err().to_string()
    }

    #[test]
    fn parses_every_item_form() {
        let t = Trace::from_json(
            r#"{"params": {"pipe_mode": "split", "M": 2, "fe_depth": 1},
                "stream": ["A", "G", "GST", "S(3)",
                           {"kind": "smem", "addrs": [0,8,16,24,1,2,3,4], "active": [1,1,1,1,0,0,0,true]},
                           {"kind": "gld"}],
                "icnt_valid_cycles": [4, 2]}"#,
        )
        .unwrap();
        assert_eq!(t.params.mem_stages, 2);
        let kinds: Vec<Kind> = t.stream.iter().map(|e| e.kind).collect();
        use Kind::*;
        assert_eq!(kinds, [Alu, Gld, Gst, Smem, Smem, Gld]);
        assert_eq!(t.stream.get(3).unwrap().deg_override, Some(3));
        assert_eq!(t.stream.get(4).unwrap().addrs[3], 24);
        assert_eq!(
            t.stream.get(4).unwrap().act,
            [true, true, true, true, false, false, false, true]
        );
        assert_eq!(t.stream.get(5).unwrap().tag, 5);
        assert_eq!(
            t.icnt_valid_cycles.iter().copied().collect::<Vec<_>>(),
            [2, 4]
        );
    }

    #[test]
    fn errors_name_field_and_allowed_values() {
        assert_eq!(
            err(r#"{"stream": ["A", "A", "A", "X"]}"#),
            r#"stream[3]: unknown entry "X"; allowed: "A", "G", "GST", "S(d)", {"kind": ...}"#
        );
        assert_eq!(
            err(r#"{"stream": ["S(9)"]}"#),
            "stream[0]: degree 9 is out of range; allowed: 1..=8"
        );
        assert_eq!(
            err(r#"{"stream": ["S(x)"]}"#),
            r#"stream[0]: bad degree in "S(x)"; allowed: "S(d)" with d in 1..=8"#
        );
        assert_eq!(
            err(r#"{"stream": [{"kind": "tex"}]}"#),
            r#"stream[0].kind: unknown kind "tex"; allowed: "alu", "smem", "gld", "gst""#
        );
        assert_eq!(
            err(r#"{"stream": [{"kind": "smem", "addrs": [1, 2]}]}"#),
            "stream[0].addrs: got [1,2]; allowed: an array of exactly L = 8 values"
        );
        assert_eq!(
            err(r#"{"stream": [{"kind": "smem", "addrs": [0,0,0,0,0,0,0,4096]}]}"#),
            "stream[0].addrs[7]: 4096 does not fit AW = 12 bits; allowed: 0..=4095"
        );
        assert_eq!(
            err(r#"{"stream": [{"kind": "alu", "active": [0,0,2,0,0,0,0,0]}]}"#),
            "stream[0].active[2]: 2; allowed: 0, 1"
        );
        assert_eq!(
            err(r#"{"stream": [{"kind": "smem"}]}"#),
            r#"stream[0]: an smem entry needs "addrs" (or "deg")"#
        );
        assert_eq!(
            err(r#"{"stream": [{"kind": "smem", "deg": 0}]}"#),
            "stream[0].deg: degree 0 is out of range; allowed: 1..=8"
        );
        assert_eq!(
            err(r#"{"stream": [{"kind": "alu", "pc": 3}]}"#),
            r#"stream[0]: unknown field "pc"; allowed: kind, addrs, active, deg"#
        );
        assert_eq!(
            err(r#"{"params": {"M": 9}, "stream": []}"#),
            "parameter M = 9 is out of range; allowed: 1..=8"
        );
        assert_eq!(
            err(r#"{"params": {"pipe_mode": "fast"}, "stream": []}"#),
            "bad value `fast` for parameter pipe_mode; allowed: unified, split, elastic"
        );
        let long = format!(
            r#"{{"params": {{"tag_bits": 4}}, "stream": [{}]}}"#,
            vec![r#""A""#; 17].join(",")
        );
        assert_eq!(
            err(&long),
            "stream: 17 entries do not fit tag_bits = 4; allowed: at most 16 entries"
        );
        assert!(
            err(r#"{"stream": [], "icnt": []}"#).starts_with("trace file: unknown field `icnt`")
        );
    }
}
