//! Waveforms that open ready to read: beside each VCD, a GTKWave save file naming the mismatch
//! flag, the model / RTL output pairs and the inputs, with the marker on the first mismatch.
//! The files are read back with wellen (the loader of the Surfer viewer) and with the vcd crate:
//! every signal the save file names is in the VCD, the marker sits on the first mismatch, values
//! round-trip, and a run that diverges late keeps the cycles just before the divergence. The
//! Surfer command file beside them (`.sucl`) is parsed as Surfer does and checked against the
//! save file and wellen's view of the VCD.

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use smrtl_cosim::blocks::bank_conflict_detector::Model;
use smrtl_cosim::harness::backend::rusthdl::RustHdl;
use smrtl_cosim::harness::vcd_out::{self, CYCLE_TIME, TAIL_CYCLES};
use smrtl_cosim::harness::{self, Outcome, Row, Trace};
use smrtl_cosim::harness::{gtkw, surfer};
use smrtl_cosim::{BlockModel, Layout};
use smrtl_hdl::blocks::bank_conflict_detector::port::{Inputs, Io};
use smrtl_hdl::blocks::bank_conflict_detector::{build, faults, Params};
use smrtl_hdl::layout::Slot;
use smrtl_hdl::BlockParams;
use smrtl_testbench::blocks::bank_conflict_detector::{access, words};
use smrtl_testbench::check::run_case;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const BLOCK: &str = "bank_conflict_detector";

/// `@` flags: decimal and binary (both right-justified), a group's first and last row.
const DEC: u64 = 0x24;
const BIN: u64 = 0x28;
const GRP_BEGIN: u64 = 1 << 23;
const GRP_END: u64 = 1 << 24;

// ---------------------------------------------------------------------------------------------
// Writing, as the CLI's `output::write_waveform` does.

/// Writes the VCD of `trace` and its save file into `dir`; returns their paths.
fn write_waves(dir: &Path, name: &str, layout: &Layout, trace: &Trace) -> (PathBuf, PathBuf) {
    let vcd = dir.join(format!("{name}.vcd"));
    let mut buf = vec![];
    vcd_out::write(&mut buf, BLOCK, layout, trace).unwrap();
    std::fs::write(&vcd, buf).unwrap();
    let save = gtkw::save_path(&vcd);
    assert_eq!(save, dir.join(format!("{name}.gtkw")));
    let s = gtkw::SaveFile::new(&format!("{name}.vcd"), BLOCK, layout, trace);
    std::fs::write(&save, s.render()).unwrap();
    let sucl = surfer::command_path(&vcd);
    assert_eq!(sucl, dir.join(format!("{name}.sucl")));
    std::fs::write(&sucl, surfer::command_file(&s)).unwrap();
    (vcd, save)
}

/// The Surfer command file beside `vcd`, read as Surfer runs it: every line a known command;
/// every added variable in the VCD (by wellen, whose hierarchy Surfer shows) and in the save
/// file, in its order; every `item_focus` names the row it points at in Surfer's letters;
/// formats are Surfer translator names; the marker and cursor sit where the save file's do.
fn check_surfer(vcd: &Path, save: &SaveFile, wl: &Wellen) {
    let text = std::fs::read_to_string(surfer::command_path(vcd)).unwrap();
    let lines: Vec<(&str, &str)> = text
        .lines()
        .map(|l| l.split_once(' ').unwrap_or((l, "")))
        .collect();
    let rows: Vec<&str> = lines
        .iter()
        .filter(|(c, _)| matches!(*c, "variable_add" | "divider_add"))
        .map(|(_, a)| *a)
        .collect();
    let h = wl.wave.hierarchy();
    let mut vars = vec![];
    for (cmd, arg) in &lines {
        match *cmd {
            "variable_add" => {
                let (scope, leaf) = arg.rsplit_once('.').expect("a scoped path");
                let scopes: Vec<&str> = scope.split('.').collect();
                assert!(h.lookup_var(&scopes, leaf).is_some(), "wellen: {arg}");
                vars.push(*arg);
            }
            "divider_add" => assert!(!arg.is_empty() && !arg.contains(' '), "{arg}"),
            "item_focus" => {
                let (idx, name) = arg.split_once('_').expect("<index>_<name>");
                let digits: String = idx
                    .chars()
                    .map(|c| char::from_digit(c as u32 - 'a' as u32, 16).unwrap())
                    .collect();
                let row = usize::from_str_radix(&digits, 16).unwrap();
                assert_eq!(idx, surfer::alpha_index(row, rows.len()));
                assert_eq!(rows[row], name, "item_focus {arg}");
            }
            "item_set_format" => {
                assert!(["Binary", "Unsigned", "Hexadecimal"].contains(arg), "{arg}")
            }
            "item_set_color" => assert_eq!(*arg, "Yellow"),
            "marker_set" => {
                let (name, t) = arg.split_once(' ').unwrap();
                assert_eq!(name, "first_mismatch");
                assert_eq!(t.parse::<i64>().unwrap(), save.named[0]);
            }
            "cursor_set" => assert_eq!(arg.parse::<i64>().unwrap(), save.marker),
            "item_unfocus" => {}
            other => panic!("unknown Surfer command {other}"),
        }
    }
    let gtkw_vars: Vec<String> = save
        .names()
        .iter()
        .map(|n| n.split('[').next().unwrap().to_string())
        .collect();
    assert_eq!(vars, gtkw_vars, "the same variables in the same order");
    assert_eq!(lines.last().unwrap().0, "cursor_set");
}

// ---------------------------------------------------------------------------------------------
// Reading a save file.

/// The directives of a save file that these tests check.
#[derive(Debug, Default)]
struct SaveFile {
    dumpfile: String,
    timestart: u64,
    zoom: f64,
    marker: i64,
    /// Named markers A..Z (-1: unset).
    named: Vec<i64>,
    /// Trace rows in order, with the `@` flags in force.
    traces: Vec<(String, u64)>,
    /// Aliases of the traces that have one, by signal name.
    aliases: HashMap<String, String>,
    /// Labels of the blank rows and of the groups, in order.
    labels: Vec<String>,
    groups: Vec<String>,
}

impl SaveFile {
    fn read(path: &Path) -> SaveFile {
        let text = std::fs::read_to_string(path).unwrap();
        let mut s = SaveFile::default();
        let mut flags = 0;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix('[') {
                let (key, value) = rest.split_once(']').unwrap();
                match key {
                    "dumpfile" => s.dumpfile = value.trim().trim_matches('"').into(),
                    "timestart" => s.timestart = value.trim().parse().unwrap(),
                    _ => {}
                }
            } else if let Some(rest) = line.strip_prefix('*') {
                let mut fields = rest.split_whitespace();
                s.zoom = fields.next().unwrap().parse().unwrap();
                s.marker = fields.next().unwrap().parse().unwrap();
                s.named = fields.map(|f| f.parse().unwrap()).collect();
            } else if let Some(hex) = line.strip_prefix('@') {
                flags = u64::from_str_radix(hex, 16).unwrap();
            } else if let Some(label) = line.strip_prefix('-') {
                if flags & GRP_BEGIN != 0 {
                    s.groups.push(label.into());
                } else if flags & GRP_END == 0 {
                    s.labels.push(label.into());
                }
            } else if let Some(rest) = line.strip_prefix("+{") {
                let (alias, name) = rest.split_once("} ").expect("+{alias} name");
                s.aliases.insert(name.into(), alias.into());
                s.traces.push((name.into(), flags));
            } else if !line.is_empty() {
                s.traces.push((line.into(), flags));
            }
        }
        s
    }

    fn names(&self) -> Vec<&str> {
        self.traces.iter().map(|(n, _)| n.as_str()).collect()
    }

    fn flags(&self, name: &str) -> u64 {
        let found = self.traces.iter().find(|(n, _)| n == name);
        found.unwrap_or_else(|| panic!("{name} in save file")).1
    }
}

/// A GTKWave signal name split into scope path, leaf and width (`a.b.x[7:0]`: 8 bits).
fn split_name(name: &str) -> (Vec<&str>, &str, u32) {
    let (base, width) = match name.strip_suffix(']').and_then(|n| n.rsplit_once('[')) {
        Some((base, range)) => {
            let (msb, lsb) = range.split_once(':').expect("[msb:lsb]");
            assert_eq!(lsb, "0", "{name}");
            (base, msb.parse::<u32>().unwrap() + 1)
        }
        None => (name, 1),
    };
    let (scope, leaf) = base.rsplit_once('.').expect("a scoped name");
    (scope.split('.').collect(), leaf, width)
}

/// A port's value as the VCD writes it: `width` bits, most significant first.
fn bits(words: &[u64], width: usize) -> String {
    (0..width)
        .rev()
        .map(|b| {
            if words[b / 64] >> (b % 64) & 1 == 1 {
                '1'
            } else {
                '0'
            }
        })
        .collect()
}

/// Left-extends a VCD vector value to `width` bits, as VCD readers do.
fn extend(v: String, width: u32) -> String {
    format!("{v:0>width$}", width = width as usize)
}

// ---------------------------------------------------------------------------------------------
// Reading a VCD with wellen.

struct Wellen {
    wave: wellen::simple::Waveform,
}

impl Wellen {
    fn load(path: &Path) -> Wellen {
        Wellen {
            wave: wellen::simple::read(path).unwrap(),
        }
    }

    /// The variable GTKWave calls `name`, checked to have the width the name says.
    fn var(&self, name: &str) -> Option<wellen::VarRef> {
        let h = self.wave.hierarchy();
        let (scopes, leaf, width) = split_name(name);
        let var = h.lookup_var(&scopes, leaf)?;
        assert_eq!(h[var].length(h), Some(width), "width of {name}");
        Some(var)
    }

    fn signal(&mut self, name: &str) -> &wellen::Signal {
        let var = self.var(name).unwrap_or_else(|| panic!("{name} in VCD"));
        let signal = self.wave.hierarchy()[var].signal_ref();
        self.wave.load_signals(&[signal]);
        self.wave.get_signal(signal).unwrap()
    }

    /// The first and the last time of the dump.
    fn span(&self) -> (u64, u64) {
        let t = self.wave.time_table();
        (t[0], *t.last().unwrap())
    }

    /// `name`'s value at `time`, most significant bit first.
    fn value_at(&mut self, name: &str, time: u64) -> String {
        let idx = self.wave.time_table().partition_point(|&t| t <= time) - 1;
        let signal = self.signal(name);
        let offset = signal.get_offset(idx as u32).expect("a value by then");
        signal.get_value_at(&offset, 0).to_bit_string().unwrap()
    }

    /// Every change of `name`: (time, value).
    fn changes(&mut self, name: &str) -> Vec<(u64, String)> {
        let signal = self.signal(name);
        let changes: Vec<(u32, String)> = signal
            .iter_changes()
            .map(|(i, v)| (i, v.to_bit_string().unwrap()))
            .collect();
        let table = self.wave.time_table();
        changes
            .into_iter()
            .map(|(i, v)| (table[i as usize], v))
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Reading a VCD with the vcd crate.

/// Every change of every variable, by the name GTKWave gives it.
struct VcdFile {
    vars: HashMap<String, (vcd::IdCode, u32)>,
    changes: HashMap<vcd::IdCode, Vec<(u64, String)>>,
}

impl VcdFile {
    fn load(path: &Path) -> VcdFile {
        use vcd::{Command, ScopeItem, Value};
        let text = std::fs::read(path).unwrap();
        let mut parser = vcd::Parser::new(&text[..]);
        let header = parser.parse_header().unwrap();
        let mut vars = HashMap::new();
        fn walk(items: &[ScopeItem], path: &str, out: &mut HashMap<String, (vcd::IdCode, u32)>) {
            for it in items {
                match it {
                    ScopeItem::Var(v) => {
                        // GTKWave names a vector declared without a range `name[size-1:0]`.
                        let name = match v.size {
                            1 => format!("{path}.{}", v.reference),
                            n => format!("{path}.{}[{}:0]", v.reference, n - 1),
                        };
                        out.insert(name, (v.code, v.size));
                    }
                    ScopeItem::Scope(s) => {
                        let inner = match path {
                            "" => s.identifier.clone(),
                            p => format!("{p}.{}", s.identifier),
                        };
                        walk(&s.children, &inner, out);
                    }
                }
            }
        }
        walk(&header.items, "", &mut vars);
        let bit = |v: &Value| match v {
            Value::V0 => '0',
            Value::V1 => '1',
            Value::X => 'x',
            Value::Z => 'z',
        };
        let mut changes: HashMap<vcd::IdCode, Vec<(u64, String)>> = HashMap::new();
        let mut now = 0;
        for cmd in parser {
            match cmd.unwrap() {
                Command::Timestamp(t) => now = t,
                Command::ChangeScalar(id, v) => {
                    changes.entry(id).or_default().push((now, bit(&v).into()))
                }
                Command::ChangeVector(id, v) => changes
                    .entry(id)
                    .or_default()
                    .push((now, v.iter().map(bit).collect())),
                _ => {}
            }
        }
        VcdFile { vars, changes }
    }

    fn has(&self, name: &str) -> bool {
        self.vars.contains_key(name)
    }

    fn value_at(&self, name: &str, time: u64) -> String {
        let (id, width) = self.vars[name];
        let changes = &self.changes[&id];
        let i = changes.partition_point(|(t, _)| *t <= time);
        extend(changes[i - 1].1.clone(), width)
    }
}

// ---------------------------------------------------------------------------------------------
// Checks.

/// Every trace the save file names is a VCD variable (by both loaders), with its width.
fn check_names_exist(save: &SaveFile, wl: &Wellen, vf: &VcdFile) {
    assert!(!save.traces.is_empty());
    for name in save.names() {
        assert!(wl.var(name).is_some(), "wellen: {name} in VCD");
        assert!(vf.has(name), "vcd crate: {name} in VCD");
    }
}

/// The save file's layout: the mismatch flag, then a `model.x` / `rtl.x` pair per output (after
/// a blank row each, tag-like values in decimal), then the inputs; the dump named by file name.
fn check_layout(save: &SaveFile, vcd: &Path, layout: &Layout, rtl: bool) {
    let file = vcd.file_name().unwrap().to_str().unwrap();
    assert_eq!(save.dumpfile, file);
    let names = save.names();
    assert_eq!(names[0], format!("{BLOCK}.mismatch"));
    let mut at = 1;
    let outputs = vcd_out::named(&layout.outputs);
    for (name, width) in &outputs {
        let model = gtkw::signal_name(&format!("{BLOCK}.model"), name, *width);
        assert_eq!(names[at], model);
        assert_eq!(save.aliases[&model], format!("model {name}"));
        at += 1;
        if rtl {
            let rtl = gtkw::signal_name(&format!("{BLOCK}.rtl"), name, *width);
            assert_eq!(names[at], rtl);
            assert_eq!(save.aliases[&rtl], format!("rtl {name}"));
            assert_eq!(save.flags(&model), save.flags(&rtl), "{name} pair");
            at += 1;
        }
    }
    assert_eq!(names[at], format!("{BLOCK}.clock"));
    // An array input (lane_mask, addr: per lane) shows each element, then the whole bus.
    let inputs = vcd_out::named(&layout.inputs);
    assert!(
        inputs.iter().any(|(n, w)| n == "addr_7" && *w == 14),
        "{inputs:?}"
    );
    for (name, width) in &inputs {
        at += 1;
        assert_eq!(
            names[at],
            gtkw::signal_name(&format!("{BLOCK}.stim"), name, *width)
        );
    }
    let mut labels = vec![""; outputs.len()];
    labels.push("inputs");
    assert_eq!(
        save.labels, labels,
        "a blank row before each pair, a label on the inputs"
    );
    assert!(save.groups.len() <= 1, "at most the internals' group");
    // Tag-like values (the detector's degree and service cycles) in decimal, masks in binary.
    assert_eq!(save.flags(&format!("{BLOCK}.model.degree[3:0]")), DEC);
    assert_eq!(save.flags(&format!("{BLOCK}.stim.lane_mask[7:0]")), BIN);
}

/// Every value of every recorded cycle reads back at that cycle's time, from both loaders.
fn check_round_trip(layout: &Layout, trace: &Trace, wl: &mut Wellen, vf: &VcdFile) {
    let scoped = |scope: &str, name: &str, width: usize| {
        gtkw::signal_name(&format!("{BLOCK}.{scope}"), name, width)
    };
    let internals = vcd_out::internals(trace);
    for row in &trace.rows {
        let mut expected = vec![(
            format!("{BLOCK}.mismatch"),
            (row.mismatch as u8).to_string(),
        )];
        // Every shown variable: an array's elements `<name>_<k>` are the bus's fields.
        let value = |s: &Slot, buf: &[u64], lo: usize, width: usize| {
            if width == s.width {
                bits(s.of(buf), width)
            } else {
                bits(&[s.field(buf, lo, width)], width)
            }
        };
        for s in &layout.inputs {
            for (name, lo, width) in s.shown() {
                let v = value(s, &row.inputs, lo, width);
                expected.push((scoped("stim", &name, width), v));
            }
        }
        for s in &layout.outputs {
            for (name, lo, width) in s.shown() {
                let v = value(s, &row.model, lo, width);
                expected.push((scoped("model", &name, width), v));
                if !row.rtl.is_empty() {
                    let v = value(s, &row.rtl, lo, width);
                    expected.push((scoped("rtl", &name, width), v));
                }
            }
        }
        let mut at = 0;
        for (name, width) in &internals {
            let words = &row.internals[at..at + width.div_ceil(64)];
            at += width.div_ceil(64);
            expected.push((scoped("rtl", name, *width), bits(words, *width)));
        }
        let t = vcd_out::time(row.cycle);
        for (name, value) in expected {
            let width = split_name(&name).2;
            assert_eq!(
                extend(wl.value_at(&name, t), width),
                value,
                "wellen: {name} at {t}"
            );
            assert_eq!(vf.value_at(&name, t), value, "vcd crate: {name} at {t}");
        }
    }
}

/// The primary marker and marker A on the first mismatch, and a view that shows it.
fn check_marker(save: &SaveFile, mismatch_cycle: u64, wl: &Wellen) {
    let t = vcd_out::time(mismatch_cycle);
    assert_eq!(
        save.marker, t as i64,
        "primary marker on the first mismatch"
    );
    assert_eq!(save.named.len(), 26);
    assert_eq!(save.named[0], t as i64, "marker A on the first mismatch");
    assert!(save.named[1..].iter().all(|&m| m == -1));
    let (start, end) = wl.span();
    assert!(start <= save.timestart && save.timestart <= t && t < end);
    // GTKWave shows 2^-zoom time units per 200 pixels; in a wave pane of about 740 pixels the
    // view holds the marker's cycle, and fits before the end of the dump (else GTKWave would
    // ignore `[timestart]`), with room for a pane a third narrower or wider.
    let shown = 2f64.powf(-save.zoom) * 740.0 / 200.0;
    let (from, cycle_end) = (save.timestart as f64, (t + CYCLE_TIME) as f64);
    assert!(
        from + shown * 0.66 >= cycle_end,
        "zoom {} shows the marker",
        save.zoom
    );
    assert!(
        from + shown * 1.33 <= end as f64,
        "the view fits in the dump"
    );
}

/// After the last recorded cycle the dump runs on `TAIL_CYCLES` cycles, every signal `x`.
fn check_tail(trace: &Trace, wl: &mut Wellen) {
    let last = trace.rows.back().unwrap().cycle;
    let end = vcd_out::time(last + 1 + TAIL_CYCLES);
    assert_eq!(wl.span().1, end);
    for name in [
        format!("{BLOCK}.clock"),
        format!("{BLOCK}.mismatch"),
        format!("{BLOCK}.model.degree[3:0]"),
        format!("{BLOCK}.stim.lane_mask[7:0]"),
    ] {
        let unknown = "x".repeat(split_name(&name).2 as usize);
        assert_eq!(
            wl.value_at(&name, vcd_out::time(last + 1)),
            unknown,
            "{name}"
        );
        assert_eq!(wl.value_at(&name, end), unknown, "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// Stimulus for the detector with a planted fault: lane 1 ignores layers.

/// The ep8 detector's params, port layout, model and RTL, with the planted fault if `fault`.
fn ep8(fault: bool) -> (Params, Layout, Model, RustHdl) {
    let p = Params::resolve(Some("ep8"), &[]).unwrap();
    let module = match fault {
        true => smrtl_hdl::faults::plant_module(&faults::LANE1_IGNORES_LAYER, || build(&p)),
        false => build(&p),
    };
    let layout = Layout::new(&module.ports());
    let model = Model::new(&p, &layout);
    (p, layout, model, RustHdl::new(Arc::new(module)))
}

/// `n` random accesses with lane 1 idle, so the planted fault stays silent.
fn quiet(p: &Params, layout: &Layout, n: usize) -> Vec<Vec<u64>> {
    let mut runner = TestRunner::deterministic();
    let strategy = access(p);
    (0..n)
        .map(|_| {
            let mut a = strategy.new_tree(&mut runner).unwrap().current();
            a.lane_mask[1] = false;
            encode(p, layout, &a)
        })
        .collect()
}

/// Lane 1 in lane 0's bank group, one layer up: the model counts degree 2, the fault merges.
fn trigger(p: &Params, layout: &Layout) -> Vec<u64> {
    let layer_words = (p.banks * p.layer_bytes / 4) as u64;
    let mut lanes = vec![None; p.lanes as usize];
    lanes[..2].copy_from_slice(&[Some(0), Some(layer_words)]);
    encode(p, layout, &words(&lanes))
}

/// One cycle's input buffer.
fn encode(p: &Params, layout: &Layout, a: &Inputs) -> Vec<u64> {
    let mut buf = vec![0; layout.in_words];
    Io::new(p, layout).write_inputs(a, &mut buf);
    buf
}

/// Co-simulates `quiet_cycles` quiet cycles (a pool of random ones, repeated), then the trigger,
/// recording the last `window` cycles.
fn diverge_after(quiet_cycles: u64, window: usize) -> (Layout, Outcome) {
    let (p, layout, mut model, mut rtl) = ep8(true);
    let pool = quiet(&p, &layout, 1024);
    let fire = trigger(&p, &layout);
    let stimulus = (0..quiet_cycles)
        .map(|c| pool[c as usize % pool.len()].as_slice())
        .chain(std::iter::once(fire.as_slice()));
    let outcome = harness::run(&layout, &mut model, &mut rtl, stimulus, Some(window));
    (layout, outcome)
}

// ---------------------------------------------------------------------------------------------
// Tests.

#[test]
fn passing_run_opens_at_the_start() {
    let entry = smrtl_testbench::block(BLOCK).unwrap();
    let d = (entry.configure)(Some("ep8"), &[]).unwrap();
    let mut runner = TestRunner::deterministic();
    let case = d.cases().new_tree(&mut runner).unwrap().current();
    let module = d.module.clone();
    let factory = move || Box::new(RustHdl::new(module.clone())) as Box<dyn smrtl_cosim::Rtl>;
    let out = run_case(&d, &factory, &case, Some(1000));
    assert!(out.mismatch.is_none());
    let trace = out.trace.unwrap();

    let dir = tempfile::tempdir().unwrap();
    let (vcd, gtkw) = write_waves(dir.path(), "pass", &d.layout, &trace);
    let save = SaveFile::read(&gtkw);
    let (mut wl, vf) = (Wellen::load(&vcd), VcdFile::load(&vcd));
    check_layout(&save, &vcd, &d.layout, true);
    check_names_exist(&save, &wl, &vf);
    check_round_trip(&d.layout, &trace, &mut wl, &vf);
    assert_eq!(save.marker, 0, "no mismatch: the marker at the start");
    assert!(save.named.iter().all(|&m| m == -1));
    assert_eq!(save.timestart, 0);
    let end = vcd_out::time(trace.rows.back().unwrap().cycle + 1);
    assert_eq!(
        wl.changes(&format!("{BLOCK}.mismatch")),
        [(0, "0".into()), (end, "x".into())]
    );
    check_tail(&trace, &mut wl);
}

#[test]
fn faulty_run_opens_on_the_first_mismatch() {
    let (layout, out) = diverge_after(40, 1000);
    let m = out.mismatch.expect("the planted fault fires");
    assert_eq!((m.cycle, m.port.as_str()), (40, "degree"));
    assert_eq!((m.expected[0], m.actual[0]), (2, 1));
    let trace = out.trace.unwrap();
    assert_eq!(trace.rows.len(), 41);

    let dir = tempfile::tempdir().unwrap();
    let (vcd, gtkw) = write_waves(dir.path(), "fail", &layout, &trace);
    let save = SaveFile::read(&gtkw);
    let (mut wl, vf) = (Wellen::load(&vcd), VcdFile::load(&vcd));
    check_layout(&save, &vcd, &layout, true);
    check_names_exist(&save, &wl, &vf);
    check_round_trip(&layout, &trace, &mut wl, &vf);
    check_marker(&save, m.cycle, &wl);
    check_surfer(&vcd, &save, &wl);
    // The RTL's internal nets are in the VCD and in a closed group of the save file.
    assert!(save.groups.iter().any(|g| g == "rtl internals"));
    assert!(save
        .names()
        .iter()
        .any(|n| n.starts_with(&format!("{BLOCK}.rtl.lead_"))));

    let t = vcd_out::time(m.cycle);
    assert_eq!(
        wl.changes(&format!("{BLOCK}.mismatch")),
        [
            (0, "0".into()),
            (t, "1".into()),
            (t + CYCLE_TIME, "x".into())
        ],
        "the flag rises exactly at the first mismatch"
    );
    check_tail(&trace, &mut wl);
    let degree = |scope: &str| format!("{BLOCK}.{scope}.degree[3:0]");
    assert_eq!(wl.value_at(&degree("model"), t), "0010");
    assert_eq!(wl.value_at(&degree("rtl"), t), "0001");
}

/// A divergence after 200 000 cycles: the VCD holds the 1000 cycles up to and including it.
#[test]
fn late_divergence_keeps_the_cycles_before_it() {
    const LATE: u64 = 200_000;
    const WINDOW: usize = 1000;
    let (layout, out) = diverge_after(LATE, WINDOW);
    let m = out.mismatch.expect("the planted fault fires");
    assert_eq!((m.cycle, out.cycles), (LATE, LATE + 1));
    let trace = out.trace.unwrap();
    let first = LATE + 1 - WINDOW as u64;
    let cycles: Vec<u64> = trace.rows.iter().map(|r| r.cycle).collect();
    assert_eq!(cycles, (first..=LATE).collect::<Vec<_>>());

    let dir = tempfile::tempdir().unwrap();
    let (vcd, gtkw) = write_waves(dir.path(), "late", &layout, &trace);
    let save = SaveFile::read(&gtkw);
    let (mut wl, vf) = (Wellen::load(&vcd), VcdFile::load(&vcd));
    // Times are cycle * CYCLE_TIME: the dump starts WINDOW cycles before the divergence's end.
    assert_eq!(wl.span().0, vcd_out::time(first));
    assert_eq!(
        vcd_out::time(LATE + 1) - wl.span().0,
        WINDOW as u64 * CYCLE_TIME
    );
    check_tail(&trace, &mut wl);
    let t = vcd_out::time(LATE);
    assert_eq!(
        wl.changes(&format!("{BLOCK}.mismatch")),
        [
            (vcd_out::time(first), "0".into()),
            (t, "1".into()),
            (t + CYCLE_TIME, "x".into())
        ],
        "the flag rises exactly at cycle {LATE}"
    );
    check_names_exist(&save, &wl, &vf);
    check_marker(&save, LATE, &wl);
    assert_eq!(
        save.timestart,
        t - 20 * CYCLE_TIME,
        "the view opens just before the divergence"
    );
    check_round_trip(&layout, &trace, &mut wl, &vf);
}

/// A model-only dump (no `rtl` scope) names no RTL signal; internal nets of nested instances
/// resolve through their scopes.
#[test]
fn model_only_and_nested_internals() {
    let (p, layout, mut model, _) = ep8(false);
    let stimulus = quiet(&p, &layout, 20);
    let mut outputs = vec![0; layout.out_words];
    let mut rows = |internals: &dyn Fn(u64) -> Vec<(String, usize, Vec<u64>)>, rtl: bool| {
        let mut trace = Trace::new(100);
        trace.nets = internals(0).into_iter().map(|(n, w, _)| (n, w)).collect();
        for (cycle, inputs) in stimulus.iter().enumerate() {
            smrtl_cosim::Simulator::step(&mut model, inputs, &mut outputs);
            trace.push(Row {
                cycle: cycle as u64,
                inputs: inputs.clone(),
                model: outputs.clone(),
                rtl: if rtl { outputs.clone() } else { vec![] },
                internals: internals(cycle as u64)
                    .into_iter()
                    .flat_map(|(_, _, words)| words)
                    .collect(),
                mismatch: false,
            });
        }
        trace
    };
    let model_only = rows(&|_| vec![], false);
    let nested = rows(
        &|c| {
            vec![
                ("pipe.det.count".into(), 3, vec![c % 8]),
                ("pipe.valid_q".into(), 1, vec![c % 2]),
                ("top_net".into(), 70, vec![c, 1]),
            ]
        },
        true,
    );

    let dir = tempfile::tempdir().unwrap();
    for (name, trace, rtl) in [("model", &model_only, false), ("nested", &nested, true)] {
        let (vcd, gtkw) = write_waves(dir.path(), name, &layout, trace);
        let save = SaveFile::read(&gtkw);
        let (mut wl, vf) = (Wellen::load(&vcd), VcdFile::load(&vcd));
        check_layout(&save, &vcd, &layout, rtl);
        check_names_exist(&save, &wl, &vf);
        check_round_trip(&layout, trace, &mut wl, &vf);
        check_surfer(&vcd, &save, &wl);
        let rtl_names = save.names().iter().filter(|n| n.contains(".rtl.")).count();
        assert_eq!(rtl_names > 0, rtl, "{name}");
    }
    let save = SaveFile::read(&dir.path().join("nested.gtkw"));
    for n in [
        "rtl.pipe.det.count[2:0]",
        "rtl.pipe.valid_q",
        "rtl.top_net[69:0]",
    ] {
        assert!(
            save.names().contains(&format!("{BLOCK}.{n}").as_str()),
            "{n}"
        );
    }
    assert_eq!(save.groups, ["rtl internals"]);
    // Nested nets show their instance path; the leaf names may repeat across instances.
    let alias = |n: &str| {
        save.aliases
            .get(&format!("{BLOCK}.{n}"))
            .map(String::as_str)
    };
    assert_eq!(alias("rtl.pipe.det.count[2:0]"), Some("pipe/det/count"));
    assert_eq!(alias("rtl.top_net[69:0]"), None);
}
