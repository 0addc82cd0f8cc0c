//! Waveforms of a co-simulation run: scopes `stim` (inputs), `model` and `rtl` (outputs; `rtl`
//! also holds the backend's internal nets), a `clock` and a `mismatch` flag, so a viewer (GTKWave,
//! Surfer) shows model and RTL side by side and the first divergence at a glance. Cycle `c` is at
//! time `c * CYCLE_TIME`; [`crate::harness::gtkw`] writes the GTKWave save file that opens on it.

use crate::harness::layout::{Layout, Slot};
use crate::harness::Trace;
use std::io::{self, Write};
use vcd::{IdCode, TimescaleUnit, Value, VarType};

/// Time units per cycle; the clock rises in the middle of each cycle.
pub const CYCLE_TIME: u64 = 10;

/// Cycles a dump runs on past its last recorded cycle, every signal `x` (nothing was recorded):
/// room for a viewer to show the last cycle, often the divergence, away from the end of time.
pub const TAIL_CYCLES: u64 = 40;

/// VCD time at which `cycle`'s values appear (cycle `c` spans `[c, c + 1) * CYCLE_TIME`).
pub fn time(cycle: u64) -> u64 {
    cycle * CYCLE_TIME
}

/// Whether the VCD of `trace` has an `rtl` scope (a model-only run records no RTL outputs).
pub fn has_rtl(trace: &Trace) -> bool {
    trace.rows.front().is_some_and(|r| !r.rtl.is_empty())
}

/// The RTL internal nets (dotted instance path, width) the VCD of `trace` shows under `rtl`.
pub fn internals(trace: &Trace) -> Vec<(String, usize)> {
    if has_rtl(trace) {
        trace.nets.clone()
    } else {
        vec![]
    }
}

fn bits(words: &[u64], width: usize) -> Vec<Value> {
    (0..width)
        .rev()
        .map(|b| {
            if words[b / 64] >> (b % 64) & 1 == 1 {
                Value::V1
            } else {
                Value::V0
            }
        })
        .collect()
}

struct Var {
    id: IdCode,
    width: usize,
    last: Option<Vec<u64>>,
}

impl Var {
    fn emit<W: Write>(&mut self, w: &mut vcd::Writer<W>, words: &[u64]) -> io::Result<()> {
        if self.last.as_deref() == Some(words) {
            return Ok(());
        }
        if self.width == 1 {
            w.change_scalar(
                self.id,
                if words[0] & 1 == 1 {
                    Value::V1
                } else {
                    Value::V0
                },
            )?;
        } else {
            w.change_vector(self.id, &bits(words, self.width))?;
        }
        self.last = Some(words.to_vec());
        Ok(())
    }

    /// Sets the variable to `x`.
    fn unknown<W: Write>(&mut self, w: &mut vcd::Writer<W>) -> io::Result<()> {
        self.last = None;
        if self.width == 1 {
            w.change_scalar(self.id, Value::X)
        } else {
            w.change_vector(self.id, &vec![Value::X; self.width])
        }
    }
}

/// Declares `slots` in a scope named `scope`. A slot named `inst.sub.net` (a net inside an
/// instance of the RTL hierarchy) goes into nested scopes `inst` / `sub`, so a viewer shows the
/// hierarchy. The returned variables are in the order of `slots`.
fn add_vars<W: Write>(
    w: &mut vcd::Writer<W>,
    scope: &str,
    slots: &[(String, usize)],
) -> io::Result<Vec<Var>> {
    w.add_module(scope)?;
    let path = |i: usize| slots[i].0.rsplit_once('.').map_or("", |(p, _)| p);
    // Identifier characters sort after '.', so sorting by path visits the scope tree depth first.
    let mut order: Vec<usize> = (0..slots.len()).collect();
    order.sort_by(|&a, &b| path(a).cmp(path(b)));
    let mut vars: Vec<Option<Var>> = (0..slots.len()).map(|_| None).collect();
    let mut open: Vec<&str> = vec![];
    for i in order {
        let (name, width) = &slots[i];
        let (dirs, leaf) = name.rsplit_once('.').unwrap_or(("", name.as_str()));
        let comps: Vec<&str> = dirs.split('.').filter(|c| !c.is_empty()).collect();
        let keep = open.iter().zip(&comps).take_while(|(a, b)| a == b).count();
        for _ in keep..open.len() {
            w.upscope()?;
        }
        open.truncate(keep);
        for c in &comps[keep..] {
            w.add_module(c)?;
            open.push(c);
        }
        let id = w.add_var(VarType::Wire, *width as u32, leaf, None)?;
        vars[i] = Some(Var {
            id,
            width: *width,
            last: None,
        });
    }
    for _ in 0..open.len() {
        w.upscope()?;
    }
    w.upscope()?;
    Ok(vars
        .into_iter()
        .map(|v| v.expect("every slot declared"))
        .collect())
}

/// The (name, width) of every variable shown for `slots`, in order: an array port's elements
/// `<name>_<k>`, then the port itself ([`Slot::shown`]).
pub fn named(slots: &[Slot]) -> Vec<(String, usize)> {
    slots
        .iter()
        .flat_map(|s| s.shown().map(|(name, _, width)| (name, width)))
        .collect()
}

/// Where each variable of [`named`] reads its value: (slot, lowest bit, width).
fn sources(slots: &[Slot]) -> Vec<(&Slot, usize, usize)> {
    slots
        .iter()
        .flat_map(|s| s.shown().map(move |(_, lo, w)| (s, lo, w)))
        .collect()
}

/// Emits each of `vars` from its source in `buf`.
fn emit_all<W: Write>(
    w: &mut vcd::Writer<W>,
    vars: &mut [Var],
    sources: &[(&Slot, usize, usize)],
    buf: &[u64],
) -> io::Result<()> {
    for (var, &(slot, lo, width)) in vars.iter_mut().zip(sources) {
        if width == slot.width {
            var.emit(w, slot.of(buf))?;
        } else {
            var.emit(w, &[slot.field(buf, lo, width)])?;
        }
    }
    Ok(())
}

/// Writes `trace` of a block with `layout` as VCD text.
pub fn write<W: Write>(out: W, block: &str, layout: &Layout, trace: &Trace) -> io::Result<()> {
    let mut w = vcd::Writer::new(out);
    w.timescale(1, TimescaleUnit::NS)?;
    w.add_module(block)?;
    let clock = w.add_wire(1, "clock")?;
    let mismatch = w.add_wire(1, "mismatch")?;
    let (ins, outs) = (sources(&layout.inputs), sources(&layout.outputs));
    let mut stim = add_vars(&mut w, "stim", &named(&layout.inputs))?;
    let mut model = add_vars(&mut w, "model", &named(&layout.outputs))?;
    // A model-only run (rows without RTL outputs) has no `rtl` scope.
    let has_rtl = has_rtl(trace);
    let mut rtl_slots = named(&layout.outputs);
    rtl_slots.extend(internals(trace));
    let mut rtl = if has_rtl {
        add_vars(&mut w, "rtl", &rtl_slots)?
    } else {
        vec![]
    };
    w.upscope()?;
    w.enddefinitions()?;
    let mut flag = Var {
        id: mismatch,
        width: 1,
        last: None,
    };
    for row in &trace.rows {
        w.timestamp(time(row.cycle))?;
        w.change_scalar(clock, Value::V0)?;
        emit_all(&mut w, &mut stim, &ins, &row.inputs)?;
        emit_all(&mut w, &mut model, &outs, &row.model)?;
        if has_rtl {
            let n_out = outs.len();
            emit_all(&mut w, &mut rtl[..n_out], &outs, &row.rtl)?;
            let mut at = 0;
            for (var, (_, width)) in rtl[n_out..].iter_mut().zip(&trace.nets) {
                let n = width.div_ceil(64);
                if let Some(words) = row.internals.get(at..at + n) {
                    var.emit(&mut w, words)?;
                }
                at += n;
            }
        }
        flag.emit(&mut w, &[row.mismatch as u64])?;
        w.timestamp(time(row.cycle) + CYCLE_TIME / 2)?;
        w.change_scalar(clock, Value::V1)?;
    }
    if let Some(last) = trace.rows.back() {
        w.timestamp(time(last.cycle + 1))?;
        w.change_scalar(clock, Value::X)?;
        for var in stim.iter_mut().chain(&mut model).chain(&mut rtl) {
            var.unknown(&mut w)?;
        }
        flag.unknown(&mut w)?;
        w.timestamp(time(last.cycle + 1 + TAIL_CYCLES))?;
    }
    Ok(())
}
