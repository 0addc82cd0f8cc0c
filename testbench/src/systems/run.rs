//! What a system's run gives, whatever the system: the backend it ran on, its report (text and
//! JSON), how the RTL in its loop failed, its waveform and its records (JSON lines, written as
//! the run goes).

use serde::ser::Error as _;
use serde::{Serialize, Serializer};
use serde_json::Value;
use smrtl_cosim::harness::Trace as WaveRows;
use smrtl_cosim::Layout;
use std::fmt;
use std::io::Write;

/// Cycles kept in a waveform.
pub const WAVE_WINDOW: usize = 100_000;

/// Where a run executes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    #[default]
    Model,
    Rusthdl,
    Verilator,
}

impl Backend {
    pub const ALL: [Backend; 3] = [Backend::Model, Backend::Rusthdl, Backend::Verilator];

    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Model => "model",
            Backend::Rusthdl => "rusthdl",
            Backend::Verilator => "verilator",
        }
    }

    /// One line of help on what the backend runs.
    pub fn help(self) -> &'static str {
        match self {
            Backend::Model => "The system's behavioral model alone",
            Backend::Rusthdl => {
                "The model with its block's RTL in the loop, in rust-hdl's simulator"
            }
            Backend::Verilator => "The model with its block's Verilog in the loop, verilated",
        }
    }

    /// The backend called `name`.
    pub fn named(name: &str) -> Option<Backend> {
        Backend::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// How to run a loaded input.
pub struct RunOptions<'a> {
    pub backend: Backend,
    /// Keep the cycles for a waveform (the last [`WAVE_WINDOW`] within the byte budget).
    pub waveform: bool,
    /// Where each cycle's record goes, as one JSON line, as the run goes (none is kept).
    pub records: Option<&'a mut dyn Write>,
    /// The stall breakdown, with the `stall_inspector` RTL in the loop on an RTL backend
    /// (docs/stall-inspector.md §5).
    pub stalls: Option<super::stalls::StallRequest>,
}

impl RunOptions<'_> {
    /// The model alone, no waveform, no records.
    pub fn model() -> RunOptions<'static> {
        RunOptions {
            backend: Backend::Model,
            waveform: false,
            records: None,
            stalls: None,
        }
    }
}

/// Writes records as JSON lines; the first write error stops it and is kept for the report.
pub struct Lines<'a> {
    out: Option<&'a mut dyn Write>,
    pub error: Option<std::io::Error>,
}

impl<'a> Lines<'a> {
    pub fn new(out: Option<&'a mut dyn Write>) -> Lines<'a> {
        Lines { out, error: None }
    }

    /// Whether records are written at all.
    pub fn recording(&self) -> bool {
        self.out.is_some()
    }

    pub fn put(&mut self, record: &impl Serialize) {
        if let (Some(out), None) = (self.out.as_deref_mut(), &self.error) {
            let written = serde_json::to_writer(&mut *out, record)
                .map_err(std::io::Error::from)
                .and_then(|_| out.write_all(b"\n"));
            self.error = written.err();
        }
    }
}

/// The cycles of a run, for a VCD of block `top`.
pub struct Waveform {
    pub top: &'static str,
    pub layout: Layout,
    pub rows: WaveRows,
}

/// The report of a passing run: text with `Display`, JSON with [`Report::json`].
pub trait Report: fmt::Display + Send {
    fn json(&self) -> Value;
}

impl<T: fmt::Display + Serialize + Send> Report for T {
    fn json(&self) -> Value {
        serde_json::to_value(self).expect("reports serialize")
    }
}

/// What a run gives: its report, or how the RTL failed; its waveform if asked for; and the
/// error that stopped the records, if one did.
pub struct Run {
    pub result: Result<Box<dyn Report>, Failure>,
    pub waveform: Option<Waveform>,
    pub records_error: Option<std::io::Error>,
    /// The stall breakdown, when asked for and the run passed (of a multi-SM system: the
    /// sum over its SMs).
    pub stalls: Option<smrtl_cosim::sm::stalls::Breakdown>,
    /// A multi-SM system's breakdown of each SM (empty for a one-SM system).
    pub stalls_per_sm: Vec<smrtl_cosim::sm::stalls::Breakdown>,
}

/// How a run failed: the RTL in the loop diverged from the model, or the run stopped (a cycle
/// budget, a protocol error of the model).
#[derive(Debug)]
pub struct Failure {
    /// The block that ran (in the loop, or the model's top).
    pub block: &'static str,
    pub backend: Backend,
    /// What happened, as the report shows it (may span lines: the records of the cycle).
    pub cause: String,
    /// Whether the RTL diverged from the model (a waveform then shows where).
    pub diverged: bool,
}

impl Failure {
    /// Whether the RTL diverged from the model (a waveform then shows where).
    pub fn diverged(&self) -> bool {
        self.diverged
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "FAIL {} on {}: {}",
            self.block,
            self.backend.name(),
            self.cause
        )
    }
}

/// A record as one line of JSON, inside a `Display`.
pub fn json(record: &impl Serialize) -> Result<String, fmt::Error> {
    serde_json::to_string(record).map_err(|_| fmt::Error)
}

/// `value` serialized with `fields` added (keys sorted, as in every JSON value).
pub fn with_fields<S: Serializer>(
    value: &impl Serialize,
    fields: impl IntoIterator<Item = (&'static str, Value)>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut v = serde_json::to_value(value).map_err(S::Error::custom)?;
    for (key, field) in fields {
        v[key] = field;
    }
    v.serialize(s)
}

/// A run's statistics as one JSON object, with its backend, its input's name, its params and
/// any `extra` fields of the system's own.
pub fn run_json<S: Serializer>(
    stats: &impl Serialize,
    backend: Backend,
    source: &str,
    params: &impl Serialize,
    extra: Vec<(&'static str, Value)>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let params = serde_json::to_value(params).map_err(S::Error::custom)?;
    let fields = [
        ("backend", backend.name().into()),
        ("source", source.into()),
        ("params", params),
    ];
    with_fields(stats, fields.into_iter().chain(extra), s)
}
