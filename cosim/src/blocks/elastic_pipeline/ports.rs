//! The pipeline on the trace-mode ports (docs/elastic-pipeline.md §6): the record ⇄
//! output-buffer mapping ([`RecordPorts`]: the declared ports through the block's typed
//! `port::Outputs`, the latch taps named at run time) and the port [`Model`].

use super::components::{Latch, Nonmem, Stall};
use super::entry::{Entry, InFlight};
use super::pipeline::Pipeline;
use super::record::{Record, Wb};
use crate::blocks::bank_conflict_detector::Word;
use crate::harness::layout::Layout;
use crate::harness::sim::{BlockModel, Simulator};
use smrtl_hdl::blocks::elastic_pipeline::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::elastic_pipeline::{stage_ports, Cause, Kind, Params, PipeMode, WbSrc};

/// One latch's taps `<stage>_valid` / `<stage>_tag` (spec §6), as `Some(tag)` or `None`.
#[derive(Clone, Copy, Debug)]
struct Tap {
    valid: Word,
    tag: Word,
}

impl Tap {
    fn new(layout: &Layout, stage: &str) -> Tap {
        let (valid, tag) = stage_ports(stage);
        Tap {
            valid: Word::of(layout.out_slot(&valid)),
            tag: Word::of(layout.out_slot(&tag)),
        }
    }

    fn get(&self, buf: &[u64]) -> Option<u32> {
        (self.valid.get(buf) == 1).then(|| self.tag.get(buf) as u32)
    }

    fn set(&self, buf: &mut [u64], tag: Option<u32>) {
        self.valid.set(buf, tag.is_some() as u64);
        self.tag.set(buf, tag.unwrap_or(0) as u64);
    }
}

/// Latch taps in order, one tag each.
fn set_latches(taps: &[Tap], tags: impl Iterator<Item = Option<u32>>, buf: &mut [u64]) {
    for (tap, tag) in taps.iter().zip(tags) {
        tap.set(buf, tag);
    }
}

/// A FIFO's slot taps (oldest first, the rest empty); returns its count.
fn set_fifo(taps: &[Tap], tags: impl ExactSizeIterator<Item = u32>, buf: &mut [u64]) -> u64 {
    let count = tags.len() as u64;
    let mut tags = tags;
    for tap in taps {
        tap.set(buf, tags.next());
    }
    count
}

/// in_ready = ¬fe_hold, fe_hold and cause of `s`.
fn show_stall(s: Stall, o: &mut Outputs) {
    o.in_ready = !s.fe_hold;
    o.fe_hold = s.fe_hold;
    o.cause = s.cause as u64;
}

/// The WB content and its source.
fn show_wb(wb: Wb, src: WbSrc, o: &mut Outputs) {
    o.wb_valid = wb != Wb::Empty;
    o.wb_icnt = wb == Wb::Icnt;
    o.wb_tag = match wb {
        Wb::Entry(tag) => u64::from(tag),
        _ => 0,
    };
    o.wb_src = src as u64;
}

/// The trace-mode top's output ports (spec §3.5, §6) resolved once: the record ⇄ output-buffer
/// mapping. FIFO contents are the valid slots in slot order.
#[derive(Clone, Debug)]
pub struct RecordPorts {
    mode: PipeMode,
    /// The declared ports.
    io: Io,
    f: Tap,
    /// D1..Dk.
    d: Vec<Tap>,
    exe: Tap,
    pre: Vec<Tap>,
    /// MEM0..MEM(M−1).
    mem: Vec<Tap>,
    nq: Vec<Tap>,
    nm: Vec<Tap>,
}

impl RecordPorts {
    /// The output ports of `p`'s trace-mode top in `layout`, the top's or one that contains
    /// the pipeline (panics on a missing output).
    pub fn new(p: &Params, layout: &Layout) -> RecordPorts {
        let taps = |prefix: &str, range: std::ops::Range<usize>| -> Vec<Tap> {
            range
                .map(|i| Tap::new(layout, &format!("{prefix}{i}")))
                .collect()
        };
        // The record maps outputs only. A top that contains the pipeline (`sm_core`) has its
        // outputs under the same names but not its inputs: those take the places of the
        // pipeline's own layout here, and are never read.
        let own = Layout::new(&smrtl_hdl::blocks::elastic_pipeline::ports(p));
        let outputs = Layout {
            inputs: own.inputs,
            in_words: own.in_words,
            ..layout.clone()
        };
        RecordPorts {
            mode: p.pipe_mode,
            io: Io::new(p, &outputs),
            f: Tap::new(layout, "f"),
            d: taps("d", 1..p.fe_depth as usize + 1),
            exe: Tap::new(layout, "exe"),
            pre: taps("pre", 0..p.pre_slots()),
            mem: taps("mem", 0..p.mem_stages as usize),
            nq: taps("nq", 0..p.nq_slots()),
            nm: taps("nm", 0..p.nm_slots()),
        }
    }

    /// Decodes one cycle's output buffer into its record (see [`record_from_outputs`]).
    pub fn record(&self, t: u64, outputs: &[u64]) -> Record {
        let latches = |taps: &[Tap]| -> Vec<Option<u32>> {
            taps.iter().map(|tap| tap.get(outputs)).collect()
        };
        let fifo =
            |taps: &[Tap]| -> Vec<u32> { taps.iter().filter_map(|tap| tap.get(outputs)).collect() };
        // Every declared output is a scalar: no allocation.
        let mut o = Outputs::default();
        self.io.read_outputs(outputs, &mut o);
        let mode = self.mode;
        let wb = match (o.wb_valid, o.wb_icnt) {
            (false, _) => Wb::Empty,
            (_, true) => Wb::Icnt,
            _ => Wb::Entry(o.wb_tag as u32),
        };
        Record {
            t,
            f: self.f.get(outputs),
            d: latches(&self.d),
            exe: self.exe.get(outputs),
            pre: (mode == PipeMode::Elastic).then(|| fifo(&self.pre)),
            mem0: self.mem[0].get(outputs),
            rem: o.mem0_rem as u32,
            mem: latches(&self.mem[1..]),
            nq: (mode == PipeMode::Elastic).then(|| fifo(&self.nq)),
            nm: (mode == PipeMode::Split).then(|| latches(&self.nm)),
            wb,
            wb_src: WbSrc::from_bits(o.wb_src).unwrap_or(WbSrc::None),
            fe_hold: o.fe_hold,
            cause: Cause::from_bits(o.cause).unwrap_or(Cause::Other),
        }
    }

    /// Writes `r` onto the output ports (see [`encode_record`]).
    pub fn write(&self, r: &Record, outputs: &mut [u64]) {
        let mut o = Outputs::default();
        let stall = Stall {
            fe_hold: r.fe_hold,
            cause: r.cause,
        };
        show_stall(stall, &mut o);
        show_wb(r.wb, r.wb_src, &mut o);
        o.mem0_rem = u64::from(r.rem);
        let pre = r.pre.as_deref().unwrap_or_default();
        let nq = r.nq.as_deref().unwrap_or_default();
        o.pre_count = set_fifo(&self.pre, pre.iter().copied(), outputs);
        o.nq_count = set_fifo(&self.nq, nq.iter().copied(), outputs);
        self.io.write_outputs(&o, outputs);
        self.f.set(outputs, r.f);
        set_latches(&self.d, r.d.iter().copied(), outputs);
        self.exe.set(outputs, r.exe);
        self.mem[0].set(outputs, r.mem0);
        set_latches(&self.mem[1..], r.mem.iter().copied(), outputs);
        set_latches(&self.nm, r.nm.iter().flatten().copied(), outputs);
    }

    /// What the outputs show of `pipe` during its coming cycle: the latch taps into `outputs`,
    /// every declared output of the record [`Pipeline::cycle`] would return into `o` except
    /// in_ready, fe_hold and cause, without building the record.
    fn write_state(&self, pipe: &Pipeline, o: &mut Outputs, outputs: &mut [u64]) {
        let tag = |e: &Latch| e.map(|e| e.tag);
        show_wb(pipe.wb_shown(), pipe.wb_src, o);
        o.mem0_rem = u64::from(pipe.mem.mem0().map_or(0, |(_, rem)| rem));
        o.pre_count = set_fifo(&self.pre, pipe.pre.entries().map(|e| e.tag), outputs);
        o.nq_count = match &pipe.nonmem {
            Nonmem::Fifo(nq) => set_fifo(&self.nq, nq.entries().map(|e| e.tag), outputs),
            _ => 0,
        };
        if let Nonmem::Latches(nm) = &pipe.nonmem {
            set_latches(&self.nm, nm.iter().map(tag), outputs);
        }
        self.f.set(outputs, pipe.fe.f().map(|e| e.tag));
        set_latches(&self.d, pipe.fe.d().iter().map(tag), outputs);
        self.exe.set(outputs, pipe.fe.exe().map(|e| e.tag));
        set_latches(&self.mem, pipe.mem.stages().iter().map(tag), outputs);
    }
}

/// Decodes one cycle's output buffer into its record. Model and RTL records both come from
/// here. FIFO contents are the valid slots in slot order. Bit patterns no record can express (a
/// tag on an empty latch, `pre_count` disagreeing with the valid bits, unused `cause`/`wb_src`
/// codes, which decode as `other`/`NONE`) vanish here: compare the buffers as well.
/// Resolves the ports on every call: per-cycle loops keep a [`RecordPorts`] instead.
pub fn record_from_outputs(p: &Params, layout: &Layout, t: u64, outputs: &[u64]) -> Record {
    RecordPorts::new(p, layout).record(t, outputs)
}

/// Writes `r` onto the output ports (the inverse of [`record_from_outputs`]; `in_ready` =
/// ¬fe_hold). Resolves the ports on every call, as [`record_from_outputs`] does.
pub fn encode_record(p: &Params, layout: &Layout, r: &Record, outputs: &mut [u64]) {
    RecordPorts::new(p, layout).write(r, outputs)
}

/// The entry offered on `in_*`, if `in_valid`.
fn offer(i: &Inputs) -> Option<Entry> {
    i.in_valid.then(|| Entry {
        tag: i.in_tag as u32,
        kind: Kind::from_bits(i.in_kind),
        deg_override: (i.in_deg != 0).then_some(i.in_deg as u32),
        addrs: i.in_addr.iter().map(|&a| a as u32).collect(),
        act: i.in_act.iter().copied().collect(),
    })
}

/// The pipeline on the trace-mode ports (contract: outputs show cycle t's latches and fe_hold,
/// then the edge; `reset` high empties everything at the edge). Steps without building records.
pub struct Model {
    pipe: Pipeline,
    io: Io,
    inputs: Inputs,
    outputs: Outputs,
    ports: RecordPorts,
}

impl BlockModel for Model {
    type Params = Params;
    fn new(p: &Params, layout: &Layout) -> Model {
        Model {
            pipe: Pipeline::new(p),
            io: Io::new(p, layout),
            inputs: Inputs::new(p),
            outputs: Outputs::new(p),
            ports: RecordPorts::new(p, layout),
        }
    }
}

impl Model {
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipe
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        let (i, o) = (&mut self.inputs, &mut self.outputs);
        self.io.read_inputs(inputs, i);
        // The latches during t (§3.5), then the cycle's fe_hold and cause.
        self.ports.write_state(&self.pipe, o, outputs);
        let (i, cfg) = (&*i, self.pipe.cfg);
        let stall = self.pipe.step_with(i.icnt_valid, |in_ready| {
            let e = in_ready.then(|| offer(i)).flatten()?;
            Some(InFlight::of(&cfg, &e))
        });
        show_stall(stall, o);
        self.io.write_outputs(o, outputs);
        if i.reset {
            self.pipe.reset();
        }
    }
}
