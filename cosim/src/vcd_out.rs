//! Waveforms of a co-simulation run: scopes `stim` (inputs), `model` and `rtl` (outputs; `rtl`
//! also holds the backend's internal nets), a `clock` and a `mismatch` flag, so a viewer (GTKWave,
//! Surfer) shows model and RTL side by side and the first divergence at a glance.

use crate::harness::Trace;
use crate::layout::{Layout, Slot};
use std::io::{self, Write};
use vcd::{IdCode, TimescaleUnit, Value, VarType};

/// Time units per cycle; the clock rises in the middle of each cycle.
pub const CYCLE_TIME: u64 = 10;

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

fn named(slots: &[Slot]) -> Vec<(String, usize)> {
    slots.iter().map(|s| (s.name.clone(), s.width)).collect()
}

/// Writes `trace` of a block with `layout` as VCD text.
pub fn write<W: Write>(out: W, block: &str, layout: &Layout, trace: &Trace) -> io::Result<()> {
    let mut w = vcd::Writer::new(out);
    w.timescale(1, TimescaleUnit::NS)?;
    w.add_module(block)?;
    let clock = w.add_wire(1, "clock")?;
    let mismatch = w.add_wire(1, "mismatch")?;
    let mut stim = add_vars(&mut w, "stim", &named(&layout.inputs))?;
    let mut model = add_vars(&mut w, "model", &named(&layout.outputs))?;
    let internal_names: Vec<(String, usize)> = trace
        .rows
        .front()
        .map(|r| {
            r.internals
                .iter()
                .map(|(n, wd, _)| (n.clone(), *wd))
                .collect()
        })
        .unwrap_or_default();
    // A model-only run (rows without RTL outputs) has no `rtl` scope.
    let has_rtl = trace.rows.front().is_some_and(|r| !r.rtl.is_empty());
    let mut rtl_slots = named(&layout.outputs);
    rtl_slots.extend(internal_names);
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
        w.timestamp(row.cycle * CYCLE_TIME)?;
        w.change_scalar(clock, Value::V0)?;
        for (var, slot) in stim.iter_mut().zip(&layout.inputs) {
            var.emit(&mut w, slot.of(&row.inputs))?;
        }
        for (var, slot) in model.iter_mut().zip(&layout.outputs) {
            var.emit(&mut w, slot.of(&row.model))?;
        }
        if has_rtl {
            let n_out = layout.outputs.len();
            for (var, slot) in rtl.iter_mut().zip(&layout.outputs) {
                var.emit(&mut w, slot.of(&row.rtl))?;
            }
            for (var, (_, _, words)) in rtl[n_out..].iter_mut().zip(&row.internals) {
                var.emit(&mut w, words)?;
            }
        }
        flag.emit(&mut w, &[row.mismatch as u64])?;
        w.timestamp(row.cycle * CYCLE_TIME + CYCLE_TIME / 2)?;
        w.change_scalar(clock, Value::V1)?;
    }
    if let Some(last) = trace.rows.back() {
        w.timestamp((last.cycle + 1) * CYCLE_TIME)?;
        w.change_scalar(clock, Value::V0)?;
    }
    Ok(())
}
