//! The behavioral `sm_core` block on its ports (docs/elastic-pipeline.md §5.6, §6):
//! [`PortModel`], the scheduler-mode SM core of [`crate::sm::elastic_sm`] with the input ports
//! as its issue source, and [`encode_record`], a cycle's [`SmRecord`] as the output ports show
//! it (the core's own ports through the block's typed `port::Outputs`, the pipeline's through
//! its record mapping).

use crate::blocks::elastic_pipeline::{Entry, RecordPorts};
use crate::harness::layout::Layout;
use crate::harness::sim::{BlockModel, Rtl, Simulator};
use crate::sm::elastic_sm::{Core, HcWrite, Outcome, SmParams, SmRecord, Source};
use smrtl_hdl::blocks::elastic_pipeline::Kind;
use smrtl_hdl::blocks::sm_core::port::{Inputs, Io, Outputs};

/// The `sm_core` output ports (spec §6) resolved once: a cycle's [`SmRecord`] onto them.
#[derive(Clone, Debug)]
pub struct SmPorts {
    io: Io,
    pipe: RecordPorts,
}

impl SmPorts {
    /// The ports of `p`'s core in `layout`.
    pub fn new(p: &SmParams, layout: &Layout) -> SmPorts {
        SmPorts {
            io: Io::new(p, layout),
            pipe: RecordPorts::new(&p.pipe, layout),
        }
    }

    /// Writes `r` onto the output ports: what the RTL must show in that cycle. Ports without
    /// an event read 0.
    pub fn write(&self, r: &SmRecord, o: &mut Outputs, out: &mut [u64]) {
        self.pipe.write(&r.pipe, out);
        let (iw, isw) = r.issue.unwrap_or((0, 0));
        let hw = r.hc_write.unwrap_or(HcWrite { pc: 0, value: 0 });
        let (rw, rsw) = r.icnt_req.unwrap_or((0, 0));
        o.issue_valid = r.issue.is_some();
        o.issue_warp = u64::from(iw);
        o.issue_sw = u64::from(isw);
        o.decide = r.decision.is_some();
        o.grant = u64::from(r.decision.unwrap_or(0));
        o.sched_fail = r.outcome == Outcome::SchedFail;
        o.mask = r.mask;
        o.counter = u64::from(r.counter);
        o.pred = u64::from(r.pred);
        o.hc_lookup = r.hc_lookup.is_some();
        o.hc_hit = r.hc_lookup == Some(true);
        o.hc_write = r.hc_write.is_some();
        o.hc_write_pc = u64::from(hw.pc);
        o.hc_write_value = u64::from(hw.value);
        o.warp_done = r.warp_done.is_some();
        o.warp_done_id = u64::from(r.warp_done.unwrap_or(0));
        o.icnt_req = r.icnt_req.is_some();
        o.icnt_req_warp = u64::from(rw);
        o.icnt_req_sw = u64::from(rsw);
        self.io.write_outputs(o, out);
    }
}

/// Writes `r` onto the `sm_core` RTL's output ports (spec §6): what the RTL must show in that
/// cycle. Ports without an event read 0. Resolves the ports on every call: per-cycle loops
/// keep an [`SmPorts`].
pub fn encode_record(p: &SmParams, layout: &Layout, r: &SmRecord, out: &mut [u64]) {
    SmPorts::new(p, layout).write(r, &mut Outputs::default(), out);
}

/// Port mode: the `sm_core` inputs of one cycle (spec §6) as the core's issue source.
#[derive(Clone, Debug)]
struct Ports {
    i: Inputs,
    has_next: u64,
    is_mem: u64,
    /// The descriptor answer for (`issue_warp`, `issue_sw`), tag and kind aside: `desc_deg`
    /// as `deg_override` (0 = the detector computes the degree), `desc_addr`, `desc_act`.
    desc: Entry,
}

impl Ports {
    /// The per-warp vectors and the descriptor of the inputs just read into `i`.
    fn update(&mut self) {
        let i = &self.i;
        (self.has_next, self.is_mem) = (0, 0);
        for (w, (&next, &kind)) in i.has_next.iter().zip(&i.kind).enumerate() {
            self.has_next |= (next as u64) << w;
            self.is_mem |= (Kind::from_bits(kind).is_mem() as u64) << w;
        }
        let desc = &mut self.desc;
        desc.deg_override = (i.desc_deg != 0).then_some(i.desc_deg as u32);
        for (a, &w) in desc.addrs.iter_mut().zip(&i.desc_addr) {
            *a = w as u32;
        }
        desc.act.copy_from_slice(&i.desc_act);
    }
}

impl Source for Ports {
    fn vectors(&self) -> (u64, u64) {
        (self.has_next, self.is_mem)
    }

    fn next(&self, w: usize) -> (Kind, u32) {
        (Kind::from_bits(self.i.kind[w]), self.i.pc[w] as u32)
    }

    fn decided(&mut self, _w: usize) {}

    fn entry(&self, tag: u32, kind: Kind, _warp: u32, _sw: u32) -> Entry {
        Entry {
            tag,
            kind,
            ..self.desc.clone()
        }
    }

    fn icnt_return(&mut self, _t: u64) -> Option<(u32, u32)> {
        let i = &self.i;
        i.icnt_valid
            .then_some((i.icnt_warp as u32, i.icnt_sw as u32))
    }

    fn icnt_request(&mut self, _t: u64, _warp: u32, _sw: u32) {}
}

/// The behavioral `sm_core` on its ports (spec §5.6, §6): driven by the input ports cycle by
/// cycle exactly as the RTL is, writing the output ports ([`SmPorts`]). The same core as
/// [`SmCore`](crate::sm::elastic_sm::SmCore), with the inputs as its issue source;
/// `kernel_start` is a cycle without a decision whose edge clears the BCAWS and scheduler state
/// (D21), and `reset` high returns everything to the reset state at the edge. Its reset state
/// is the RTL's.
///
/// As an [`Rtl`], [`Rtl::eval`] computes the cycle's outputs without committing it (the
/// testbench may answer the descriptor request and evaluate again) and [`Rtl::edge`] commits
/// the last evaluation.
#[derive(Clone, Debug)]
pub struct PortModel {
    io: Io,
    ports: SmPorts,
    outputs: Outputs,
    core: Core,
    src: Ports,
    /// The state after the last [`Rtl::eval`], committed by [`Rtl::edge`].
    evaluated: Option<Core>,
}

impl BlockModel for PortModel {
    type Params = SmParams;

    /// The model of the `sm_core` with params `p` (validated) on `layout` (its ports, spec §6),
    /// in its reset state.
    fn new(p: &SmParams, layout: &Layout) -> PortModel {
        PortModel {
            io: Io::new(p, layout),
            ports: SmPorts::new(p, layout),
            outputs: Outputs::new(p),
            core: Core::new(p),
            src: Ports {
                i: Inputs::new(p),
                has_next: 0,
                is_mem: 0,
                desc: Entry::new(0, Kind::Alu, p.pipe.lanes as usize),
            },
            evaluated: None,
        }
    }
}

impl PortModel {
    /// The params.
    pub fn params(&self) -> &SmParams {
        &self.core.p
    }

    /// One cycle of `core` on the inputs: writes the outputs, then takes the edge.
    fn cycle(&mut self, inputs: &[u64], outputs: &mut [u64], commit: bool) {
        self.io.read_inputs(inputs, &mut self.src.i);
        self.src.update();
        let (start, reset) = (self.src.i.kernel_start, self.src.i.reset);
        let mut next = if commit {
            None
        } else {
            Some(self.core.clone())
        };
        let core = next.as_mut().unwrap_or(&mut self.core);
        let (rec, ev) = core.cycle(&mut self.src, start, true);
        if reset {
            *core = Core::new(&core.p);
        }
        outputs.fill(0);
        let rec = SmRecord::new(rec.expect("record asked for"), &ev);
        self.ports.write(&rec, &mut self.outputs, outputs);
        self.evaluated = next;
    }
}

impl Simulator for PortModel {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        self.cycle(inputs, outputs, true);
    }
}

impl Rtl for PortModel {
    fn eval(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        self.cycle(inputs, outputs, false);
    }

    fn edge(&mut self) {
        if let Some(core) = self.evaluated.take() {
            self.core = core;
        }
    }
}
