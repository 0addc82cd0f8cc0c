//! Progress of long runs, from any crate to the one line the CLI shows on stderr (docs/cli.md,
//! "Progress"): a library says what it is doing now ([`status`]) or how far a counted run has
//! come ([`count`]); the binary installs the sink ([`set_sink`]), which draws only when stderr
//! is a terminal. Without a sink (libraries, tests) nothing is drawn.

use std::sync::OnceLock;

/// What a run reports.
pub enum Event<'a> {
    /// What it is doing now (e.g. "lock_table: property p, BMC depth 8").
    Status(&'a str),
    /// `done` of `total` units (`unit`: "cycles", "TBs", ...).
    Count {
        what: &'a str,
        done: u64,
        total: u64,
        unit: &'a str,
    },
    /// The run is over: the line is cleared.
    Done,
}

type Sink = Box<dyn Fn(Event) + Send + Sync>;

static SINK: OnceLock<Sink> = OnceLock::new();

/// Installs the sink (once per process; later calls are ignored).
pub fn set_sink(sink: Sink) {
    let _ = SINK.set(sink);
}

/// Reports what the run is doing now.
pub fn status(text: &str) {
    if let Some(s) = SINK.get() {
        s(Event::Status(text));
    }
}

/// Reports `done` of `total` `unit`s of `what`.
pub fn count(what: &str, done: u64, total: u64, unit: &str) {
    if let Some(s) = SINK.get() {
        s(Event::Count {
            what,
            done,
            total,
            unit,
        });
    }
}

/// Clears the progress line.
pub fn done() {
    if let Some(s) = SINK.get() {
        s(Event::Done);
    }
}

/// Counts cycles (or any unit) cheaply: reports every 2^14 ticks and at the end.
pub struct Counter {
    what: String,
    unit: &'static str,
    done: u64,
    total: u64,
}

impl Counter {
    pub fn new(what: &str, total: u64, unit: &'static str) -> Counter {
        Counter {
            what: what.into(),
            unit,
            done: 0,
            total,
        }
    }

    pub fn tick(&mut self) {
        self.done += 1;
        if self.done & 0x3fff == 0 {
            count(&self.what, self.done, self.total, self.unit);
        }
    }

    /// Clears the line.
    pub fn finish(self) {
        done();
    }
}
