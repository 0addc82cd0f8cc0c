//! GTKWave save files (`.gtkw`) for the VCDs of [`crate::harness::vcd_out`], so a dump opens ready to
//! read: the `mismatch` flag first, each compared output as a `model.x` / `rtl.x` pair, then the
//! inputs, the RTL internals in a closed group, and the primary marker on the first mismatch.
//!
//! The format is GTKWave's own, one directive a line: `[key] value` settings; `*ZOOM MARKER A..Z`
//! sets the zoom (GTKWave shows `2^-ZOOM` time units per 200 pixels), the primary marker and the
//! 26 named markers (`-1`: unset); `@FLAGS` (hex bits of GTKWave's `TraceEntFlagBits`: radix,
//! groups) applies to the rows after it; a trace row is a signal's full hierarchical name, with
//! GTKWave's `[msb:lsb]` suffix on vectors, after an optional `+{alias} `; `-label` is a blank or
//! labelled row.

use crate::harness::layout::{Layout, Slot};
use crate::harness::vcd_out::{self, CYCLE_TIME};
use crate::harness::Trace;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Bits of GTKWave's trace flags (`@` lines).
mod flag {
    pub const HEX: u64 = 1 << 1;
    pub const DEC: u64 = 1 << 2;
    pub const BIN: u64 = 1 << 3;
    pub const RJUSTIFY: u64 = 1 << 5;
    pub const BLANK: u64 = 1 << 9;
    pub const COLLAPSED: u64 = 1 << 12;
    pub const CLOSED: u64 = 1 << 22;
    pub const GRP_BEGIN: u64 = 1 << 23;
    pub const GRP_END: u64 = 1 << 24;
}

/// GTKWave's colour index for yellow (`[color]` before a trace); red is taken by `x`.
const YELLOW: u32 = 3;

/// The initial view: `CYCLES_SHOWN` cycles, the marker `CYCLES_BEFORE` cycles in. GTKWave
/// honours `[timestart]` only when a whole view fits before the end of the dump, which the
/// dump's `x` tail ([`vcd_out::TAIL_CYCLES`]) leaves room for when the marker is on the last cycle.
const CYCLES_BEFORE: u64 = 20;
const CYCLES_SHOWN: u64 = 40;

/// Window geometry: the wave pane gets what is left of the width, about `WAVE_PIXELS`.
const WINDOW: (u32, u32) = (1400, 860);
const SST_WIDTH: u32 = 200;
const SIGNALS_WIDTH: u32 = 300;
const WAVE_PIXELS: f64 = 740.0;

/// GTKWave's zoom for a view of `CYCLES_SHOWN` cycles across `WAVE_PIXELS`.
fn zoom() -> f64 {
    let shown = (CYCLES_SHOWN * CYCLE_TIME) as f64;
    -(shown * 200.0 / WAVE_PIXELS).log2()
}

/// How a trace shows its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Radix {
    Bin,
    Dec,
    Hex,
}

impl Radix {
    /// Binary for single bits and masks, decimal for tag-like values (ids, counts, degrees: up
    /// to 32 bits), hex for wider packed buses.
    pub fn of(name: &str, width: usize) -> Radix {
        let leaf = name.rsplit('.').next().unwrap_or(name);
        match width {
            1 => Radix::Bin,
            w if w <= 32 && leaf.contains("mask") => Radix::Bin,
            w if w <= 32 => Radix::Dec,
            _ => Radix::Hex,
        }
    }

    /// The `@` flags of a trace in this radix.
    pub fn flags(self) -> u64 {
        flag::RJUSTIFY
            | match self {
                Radix::Bin => flag::BIN,
                Radix::Dec => flag::DEC,
                Radix::Hex => flag::HEX,
            }
    }
}

/// The save file's path for a VCD at `vcd`: the same path with extension `.gtkw`.
pub fn save_path(vcd: &Path) -> PathBuf {
    vcd.with_extension("gtkw")
}

/// The name GTKWave gives a VCD variable `name` of `width` bits in scope path `scope`: vectors
/// carry a `[width-1:0]` suffix (GTKWave adds it to a `$var` declared without a range).
pub fn signal_name(scope: &str, name: &str, width: usize) -> String {
    if width > 1 {
        format!("{scope}.{name}[{}:0]", width - 1)
    } else {
        format!("{scope}.{name}")
    }
}

/// One variable a viewer shows: its scope path in the VCD, its name (dotted for a net of a
/// nested instance), its width and the label GTKWave shows it by where its leaf is ambiguous.
#[derive(Clone, Debug)]
pub struct Shown {
    pub scope: String,
    pub name: String,
    pub width: usize,
    pub alias: Option<String>,
}

impl Shown {
    fn new(scope: String, name: &str, width: usize, alias: Option<String>) -> Shown {
        Shown {
            scope,
            name: name.to_string(),
            width,
            alias,
        }
    }

    /// The variable's full hierarchical path, scopes and name joined by dots.
    pub fn path(&self) -> String {
        format!("{}.{}", self.scope, self.name)
    }

    /// How its value is shown.
    pub fn radix(&self) -> Radix {
        Radix::of(&self.name, self.width)
    }
}

/// The rows both viewers' files show, in order (the `.gtkw` here, the `.sucl` of
/// [`crate::harness::surfer`]): the mismatch flag, each compared output's `model` / `rtl`
/// pair, the clock and the inputs, the RTL internals.
#[derive(Clone, Debug)]
pub struct View {
    pub flag: Shown,
    /// Per compared output, its name and its pair (the model alone on a model-only run).
    pub outputs: Vec<(String, Vec<Shown>)>,
    pub inputs: Vec<Shown>,
    pub internals: Vec<Shown>,
}

/// What a save file shows, for one VCD written by [`vcd_out::write`].
#[derive(Clone, Debug)]
pub struct SaveFile {
    /// The VCD's file name; the save file sits beside it.
    pub dump_file: String,
    /// The VCD's top scope: the block name.
    pub top: String,
    /// Compared outputs (name, width), shown as `model.NAME` / `rtl.NAME` pairs (aliased
    /// `model NAME` / `rtl NAME`: GTKWave shows a name after its last dot).
    pub outputs: Vec<(String, usize)>,
    /// Stimulus inputs (name, width), under `stim`.
    pub inputs: Vec<(String, usize)>,
    /// RTL internal nets (dotted instance path, width), in a closed group; a nested one aliased
    /// by its path with slashes.
    pub internals: Vec<(String, usize)>,
    /// Whether the VCD has an `rtl` scope (a model-only run has none).
    pub rtl: bool,
    /// VCD time of the first recorded cycle.
    pub start: u64,
    /// VCD time of the first mismatch, if any.
    pub mismatch: Option<u64>,
}

fn named(slots: &[Slot]) -> Vec<(String, usize)> {
    slots.iter().map(|s| (s.name.clone(), s.width)).collect()
}

impl SaveFile {
    /// The save file for the VCD named `dump_file` of `trace` (a block `top` with `layout`).
    pub fn new(dump_file: &str, top: &str, layout: &Layout, trace: &Trace) -> SaveFile {
        SaveFile {
            dump_file: dump_file.to_string(),
            top: top.to_string(),
            outputs: named(&layout.outputs),
            inputs: named(&layout.inputs),
            internals: vcd_out::internals(trace),
            rtl: vcd_out::has_rtl(trace),
            start: trace.rows.front().map_or(0, |r| vcd_out::time(r.cycle)),
            mismatch: trace
                .rows
                .iter()
                .find(|r| r.mismatch)
                .map(|r| vcd_out::time(r.cycle)),
        }
    }

    /// Where the primary marker goes: the first mismatch, else the start of the dump.
    pub fn marker(&self) -> u64 {
        self.mismatch.unwrap_or(self.start)
    }

    /// First time of the initial view: a few cycles before the marker, inside the dump.
    pub fn view_start(&self) -> u64 {
        self.marker()
            .saturating_sub(CYCLES_BEFORE * CYCLE_TIME)
            .max(self.start)
    }

    /// The rows to show, in order.
    pub fn view(&self) -> View {
        let top = &self.top;
        let scopes: &[&str] = if self.rtl {
            &["model", "rtl"]
        } else {
            &["model"]
        };
        let outputs = self
            .outputs
            .iter()
            .map(|(name, width)| {
                let pair = scopes
                    .iter()
                    .map(|scope| {
                        let alias = Some(format!("{scope} {name}"));
                        Shown::new(format!("{top}.{scope}"), name, *width, alias)
                    })
                    .collect();
                (name.clone(), pair)
            })
            .collect();
        let clock = Shown::new(top.clone(), "clock", 1, None);
        let stim = self
            .inputs
            .iter()
            .map(|(name, width)| Shown::new(format!("{top}.stim"), name, *width, None));
        // Nets of nested instances by their path: leaf names repeat across instances.
        let internals = self.internals.iter().map(|(path, width)| {
            let alias = path.contains('.').then(|| path.replace('.', "/"));
            Shown::new(format!("{top}.rtl"), path, *width, alias)
        });
        View {
            flag: Shown::new(top.clone(), "mismatch", 1, None),
            outputs,
            inputs: std::iter::once(clock).chain(stim).collect(),
            internals: internals.collect(),
        }
    }

    /// The save file's text.
    pub fn render(&self) -> String {
        let mut out = Rows::default();
        let top = &self.top;
        match self.mismatch {
            Some(t) => out.line(format!(
                "[*] smrtl {top}: first mismatch at cycle {} (time {t})",
                t / CYCLE_TIME
            )),
            None => out.line(format!("[*] smrtl {top}: no mismatch")),
        }
        out.line(format!("[dumpfile] \"{}\"", self.dump_file));
        // With both names relative, GTKWave finds the dump beside the save file from any cwd.
        let save = save_path(Path::new(&self.dump_file));
        out.line(format!("[savefile] \"{}\"", save.display()));
        out.line(format!("[timestart] {}", self.view_start()));
        out.line(format!("[size] {} {}", WINDOW.0, WINDOW.1));
        out.line("[pos] -1 -1".into());
        let named_a = self.mismatch.map_or(-1, |t| t as i64);
        let rest = " -1".repeat(25);
        out.line(format!("*{:.6} {} {named_a}{rest}", zoom(), self.marker()));
        if self.mismatch.is_some() {
            out.line("[markername] Afirst mismatch".into());
        }
        out.line(format!("[treeopen] {top}."));
        out.line(format!("[sst_width] {SST_WIDTH}"));
        out.line(format!("[signals_width] {SIGNALS_WIDTH}"));
        out.line("[sst_expanded] 1".into());

        // GTKWave shows a signal by its leaf name: aliases tell the model and RTL rows apart.
        let view = self.view();
        out.line(format!("[color] {YELLOW}"));
        out.shown(&view.flag);
        for (_, pair) in &view.outputs {
            out.label("");
            for v in pair {
                out.shown(v);
            }
        }
        out.label("inputs");
        for v in &view.inputs {
            out.shown(v);
        }
        if !view.internals.is_empty() {
            out.closed_group("rtl internals", |out| {
                for v in &view.internals {
                    out.shown(v);
                }
            });
        }
        out.text
    }
}

/// Save-file text being written; `@` flag lines only where the flags change.
#[derive(Default)]
struct Rows {
    text: String,
    flags: Option<u64>,
}

impl Rows {
    fn line(&mut self, line: String) {
        self.text += &line;
        self.text.push('\n');
    }

    fn flags(&mut self, flags: u64) {
        if self.flags != Some(flags) {
            let _ = writeln!(self.text, "@{flags:x}");
            self.flags = Some(flags);
        }
    }

    /// A trace of the variable `v`, under its alias if it has one.
    fn shown(&mut self, v: &Shown) {
        self.flags(v.radix().flags());
        let signal = signal_name(&v.scope, &v.name, v.width);
        match &v.alias {
            Some(a) => self.line(format!("+{{{a}}} {signal}")),
            None => self.line(signal),
        }
    }

    /// A blank row, showing `label`.
    fn label(&mut self, label: &str) {
        self.flags(flag::BLANK);
        self.line(format!("-{label}"));
    }

    /// A group of rows that starts folded, under `label`.
    fn closed_group(&mut self, label: &str, rows: impl FnOnce(&mut Rows)) {
        self.flags(flag::GRP_BEGIN | flag::BLANK | flag::CLOSED);
        self.line(format!("-{label}"));
        rows(self);
        self.flags(flag::GRP_END | flag::BLANK | flag::CLOSED | flag::COLLAPSED);
        self.line(format!("-{label}"));
    }
}
