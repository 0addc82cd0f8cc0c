//! Progress of long runs, from any crate to the one line the CLI shows on stderr (docs/cli.md,
//! "Progress"): a library says what it is doing now ([`status`]) or how far a counted run has
//! come ([`count`]); the binary installs the sink ([`set_sink`]), which draws only when stderr
//! is a terminal. Without a sink (libraries, tests) nothing is drawn.

use std::cell::Cell;
use std::sync::OnceLock;

/// What a run reports.
pub enum Event<'a> {
    /// What it is doing now (e.g. "lock_table: property p, BMC depth 8").
    Status(&'a str),
    /// `done` of `total` units (`unit`: "cycles", "TBs", ...); `total` 0: not known ahead.
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

thread_local! {
    /// Whether this thread runs under [`watch`].
    static WATCHED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with the [`Counter::watched`] counters of its loops reporting (on this thread only):
/// a command that runs one long simulation (`sim`) watches it, while the same loops running by
/// the thousand in a sweep's workers stay silent.
pub fn watch<T>(f: impl FnOnce() -> T) -> T {
    let before = WATCHED.with(|w| w.replace(true));
    let result = f();
    WATCHED.with(|w| w.set(before));
    if !before {
        done();
    }
    result
}

/// Counts cycles (or any unit) cheaply: reports every 2^14 ticks and at the end.
pub struct Counter {
    what: String,
    unit: &'static str,
    done: u64,
    total: u64,
    active: bool,
}

impl Counter {
    /// A counter of `total` units (0: a run whose length is not known ahead, such as a
    /// kernel running until its last TB finishes).
    pub fn new(what: &str, total: u64, unit: &'static str) -> Counter {
        Counter {
            what: what.into(),
            unit,
            done: 0,
            total,
            active: true,
        }
    }

    /// A counter inside a model's loop: it reports only when the loop runs under [`watch`].
    pub fn watched(what: &str, total: u64, unit: &'static str) -> Counter {
        Counter {
            active: WATCHED.with(Cell::get) && SINK.get().is_some(),
            ..Counter::new(if WATCHED.with(Cell::get) { what } else { "" }, total, unit)
        }
    }

    pub fn tick(&mut self) {
        self.done += 1;
        if self.active && self.done & 0x3fff == 0 {
            count(&self.what, self.done, self.total, self.unit);
        }
    }

    /// Clears the line (if this counter drew it).
    pub fn finish(self) {
        if self.active {
            done();
        }
    }
}
