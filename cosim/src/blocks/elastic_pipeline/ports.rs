//! The pipeline on the trace-mode ports (docs/elastic-pipeline.md §6): the record ⇄
//! output-buffer mapping ([`RecordPorts`]) and the port [`Model`].

use super::components::{Latch, Nonmem, Stall};
use super::entry::{Entry, InFlight};
use super::pipeline::Pipeline;
use super::record::{Record, Wb};
use crate::blocks::bank_conflict_detector::{lane_field, Word};
use crate::harness::layout::{Layout, Slot};
use crate::harness::sim::Simulator;
use smrtl_hdl::blocks::elastic_pipeline::{
    port, stage_ports, Cause, Kind, Params, PipeMode, WbSrc,
};

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

/// A FIFO's slot taps (oldest first, the rest empty) and its count.
fn set_fifo(taps: &[Tap], count: Word, tags: impl ExactSizeIterator<Item = u32>, buf: &mut [u64]) {
    count.set(buf, tags.len() as u64);
    let mut tags = tags;
    for tap in taps {
        tap.set(buf, tags.next());
    }
}

/// The trace-mode top's output ports (spec §3.5, §6) resolved once: the record ⇄ output-buffer
/// mapping. FIFO contents are the valid slots in slot order.
#[derive(Clone, Debug)]
pub struct RecordPorts {
    mode: PipeMode,
    in_ready: Word,
    fe_hold: Word,
    cause: Word,
    wb_valid: Word,
    wb_icnt: Word,
    wb_tag: Word,
    wb_src: Word,
    mem0_rem: Word,
    pre_count: Word,
    nq_count: Word,
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
    /// The output ports of `p`'s trace-mode top in `layout` (panics on a missing port).
    pub fn new(p: &Params, layout: &Layout) -> RecordPorts {
        let word = |name: &str| Word::of(layout.out_slot(name));
        let taps = |prefix: &str, range: std::ops::Range<usize>| -> Vec<Tap> {
            range
                .map(|i| Tap::new(layout, &format!("{prefix}{i}")))
                .collect()
        };
        RecordPorts {
            mode: p.pipe_mode,
            in_ready: word(port::IN_READY),
            fe_hold: word(port::FE_HOLD),
            cause: word(port::CAUSE),
            wb_valid: word(port::WB_VALID),
            wb_icnt: word(port::WB_ICNT),
            wb_tag: word(port::WB_TAG),
            wb_src: word(port::WB_SRC),
            mem0_rem: word(port::MEM0_REM),
            pre_count: word(port::PRE_COUNT),
            nq_count: word(port::NQ_COUNT),
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
        let mode = self.mode;
        let wb = match (self.wb_valid.get(outputs), self.wb_icnt.get(outputs)) {
            (0, _) => Wb::Empty,
            (_, 1) => Wb::Icnt,
            _ => Wb::Entry(self.wb_tag.get(outputs) as u32),
        };
        Record {
            t,
            f: self.f.get(outputs),
            d: latches(&self.d),
            exe: self.exe.get(outputs),
            pre: (mode == PipeMode::Elastic).then(|| fifo(&self.pre)),
            mem0: self.mem[0].get(outputs),
            rem: self.mem0_rem.get(outputs) as u32,
            mem: latches(&self.mem[1..]),
            nq: (mode == PipeMode::Elastic).then(|| fifo(&self.nq)),
            nm: (mode == PipeMode::Split).then(|| latches(&self.nm)),
            wb,
            wb_src: WbSrc::from_bits(self.wb_src.get(outputs)).unwrap_or(WbSrc::None),
            fe_hold: self.fe_hold.get(outputs) == 1,
            cause: Cause::from_bits(self.cause.get(outputs)).unwrap_or(Cause::Other),
        }
    }

    /// Writes `r` onto the output ports (see [`encode_record`]).
    pub fn write(&self, r: &Record, outputs: &mut [u64]) {
        self.write_stall(
            Stall {
                fe_hold: r.fe_hold,
                cause: r.cause,
            },
            outputs,
        );
        self.write_wb(r.wb, r.wb_src, outputs);
        self.mem0_rem.set(outputs, r.rem as u64);
        let pre = r.pre.as_deref().unwrap_or_default();
        let nq = r.nq.as_deref().unwrap_or_default();
        set_fifo(&self.pre, self.pre_count, pre.iter().copied(), outputs);
        set_fifo(&self.nq, self.nq_count, nq.iter().copied(), outputs);
        self.f.set(outputs, r.f);
        set_latches(&self.d, r.d.iter().copied(), outputs);
        self.exe.set(outputs, r.exe);
        self.mem[0].set(outputs, r.mem0);
        set_latches(&self.mem[1..], r.mem.iter().copied(), outputs);
        set_latches(&self.nm, r.nm.iter().flatten().copied(), outputs);
    }

    /// Writes what the outputs show of `pipe` during its coming cycle: every port of the record
    /// [`Pipeline::cycle`] would return except in_ready, fe_hold and cause
    /// ([`RecordPorts::write_stall`]), without building the record.
    pub fn write_state(&self, pipe: &Pipeline, outputs: &mut [u64]) {
        let tag = |e: &Latch| e.map(|e| e.tag);
        self.write_wb(pipe.wb_shown(), pipe.wb_src, outputs);
        let rem = pipe.mem.mem0().map_or(0, |(_, rem)| rem);
        self.mem0_rem.set(outputs, rem as u64);
        set_fifo(
            &self.pre,
            self.pre_count,
            pipe.pre.entries().map(|e| e.tag),
            outputs,
        );
        match &pipe.nonmem {
            Nonmem::Fifo(nq) => set_fifo(
                &self.nq,
                self.nq_count,
                nq.entries().map(|e| e.tag),
                outputs,
            ),
            _ => self.nq_count.set(outputs, 0),
        }
        if let Nonmem::Latches(nm) = &pipe.nonmem {
            set_latches(&self.nm, nm.iter().map(tag), outputs);
        }
        self.f.set(outputs, pipe.fe.f().map(|e| e.tag));
        set_latches(&self.d, pipe.fe.d().iter().map(tag), outputs);
        self.exe.set(outputs, pipe.fe.exe().map(|e| e.tag));
        set_latches(&self.mem, pipe.mem.stages().iter().map(tag), outputs);
    }

    /// Writes in_ready = ¬fe_hold, fe_hold and cause.
    pub fn write_stall(&self, s: Stall, outputs: &mut [u64]) {
        self.in_ready.set(outputs, !s.fe_hold as u64);
        self.fe_hold.set(outputs, s.fe_hold as u64);
        self.cause.set(outputs, s.cause as u64);
    }

    fn write_wb(&self, wb: Wb, src: WbSrc, outputs: &mut [u64]) {
        self.wb_valid.set(outputs, (wb != Wb::Empty) as u64);
        self.wb_icnt.set(outputs, (wb == Wb::Icnt) as u64);
        let tag = match wb {
            Wb::Entry(tag) => tag as u64,
            _ => 0,
        };
        self.wb_tag.set(outputs, tag);
        self.wb_src.set(outputs, src as u64);
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

/// The trace-mode top's input ports (spec §6) resolved once.
#[derive(Clone, Debug)]
struct OfferPorts {
    reset: Word,
    in_valid: Word,
    in_tag: Word,
    in_kind: Word,
    in_deg: Word,
    in_addr: Slot,
    in_act: Word,
    icnt_valid: Word,
    lanes: usize,
    addr_bits: usize,
}

impl OfferPorts {
    fn new(p: &Params, layout: &Layout) -> OfferPorts {
        let word = |name: &str| Word::of(layout.in_slot(name));
        OfferPorts {
            reset: word("reset"),
            in_valid: word(port::IN_VALID),
            in_tag: word(port::IN_TAG),
            in_kind: word(port::IN_KIND),
            in_deg: word(port::IN_DEG),
            in_addr: layout.in_slot(port::IN_ADDR).clone(),
            in_act: word(port::IN_ACT),
            icnt_valid: word(port::ICNT_VALID),
            lanes: p.lanes as usize,
            addr_bits: p.addr_bits as usize,
        }
    }

    /// The entry offered on `in_*`, if `in_valid`.
    fn offer(&self, inputs: &[u64]) -> Option<Entry> {
        if self.in_valid.get(inputs) == 0 {
            return None;
        }
        let addr = self.in_addr.of(inputs);
        let act = self.in_act.get(inputs);
        let deg = self.in_deg.get(inputs) as u32;
        Some(Entry {
            tag: self.in_tag.get(inputs) as u32,
            kind: Kind::from_bits(self.in_kind.get(inputs)),
            deg_override: (deg != 0).then_some(deg),
            addrs: (0..self.lanes)
                .map(|l| lane_field(addr, l, self.addr_bits) as u32)
                .collect(),
            act: (0..self.lanes).map(|l| act >> l & 1 == 1).collect(),
        })
    }
}

/// The pipeline on the trace-mode ports (contract: outputs show cycle t's latches and fe_hold,
/// then the edge; `reset` high empties everything at the edge). Steps without building records.
pub struct Model {
    pipe: Pipeline,
    inputs: OfferPorts,
    outputs: RecordPorts,
}

impl Model {
    pub fn new(params: &Params, layout: &Layout) -> Model {
        Model {
            pipe: Pipeline::new(params),
            inputs: OfferPorts::new(params, layout),
            outputs: RecordPorts::new(params, layout),
        }
    }

    pub fn pipeline(&self) -> &Pipeline {
        &self.pipe
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        // The latches during t (§3.5), then the cycle's fe_hold and cause.
        self.outputs.write_state(&self.pipe, outputs);
        let icnt = self.inputs.icnt_valid.get(inputs) == 1;
        let (offer, cfg) = (&self.inputs, self.pipe.cfg);
        // The offer is decoded only when the front end accepts it.
        let stall = self.pipe.step_with(icnt, |in_ready| {
            let e = in_ready.then(|| offer.offer(inputs)).flatten()?;
            Some(InFlight::of(&cfg, &e))
        });
        self.outputs.write_stall(stall, outputs);
        if self.inputs.reset.get(inputs) == 1 {
            self.pipe.reset();
        }
    }
}
