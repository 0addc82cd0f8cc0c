//! The behavioral `sm_core` block on its ports (docs/elastic-pipeline.md §5.6, §6):
//! [`PortModel`], the scheduler-mode SM core of [`crate::sm::elastic_sm`] with the input ports
//! as its issue source, and [`encode_record`], a cycle's [`SmRecord`] as the output ports show
//! it.

use crate::blocks::elastic_pipeline::Entry;
use crate::harness::layout::{Layout, Slot};
use crate::harness::sim::{Rtl, Simulator};
use crate::sm::elastic_sm::{Core, HcWrite, Outcome, SmParams, SmRecord, Source};
use smrtl_hdl::blocks::elastic_pipeline::Kind;
use smrtl_hdl::blocks::sm_core::port;
use smrtl_hdl::BlockParams;

/// Writes `r` onto the `sm_core` RTL's output ports (spec §6): what the RTL must show in that
/// cycle. Ports without an event read 0.
pub fn encode_record(p: &SmParams, layout: &Layout, r: &SmRecord, out: &mut [u64]) {
    crate::blocks::elastic_pipeline::encode_record(&p.pipe, layout, &r.pipe, out);
    let mut w = |name: &str, v: u64| layout.write_out(out, name, v);
    let (iw, isw) = r.issue.unwrap_or((0, 0));
    w(port::ISSUE_VALID, r.issue.is_some() as u64);
    w(port::ISSUE_WARP, iw as u64);
    w(port::ISSUE_SW, isw as u64);
    w(port::DECIDE, r.decision.is_some() as u64);
    w(port::GRANT, r.decision.unwrap_or(0) as u64);
    w(port::SCHED_FAIL, (r.outcome == Outcome::SchedFail) as u64);
    w(port::MASK, r.mask as u64);
    w(port::COUNTER, r.counter as u64);
    w(port::PRED, r.pred as u64);
    w(port::HC_LOOKUP, r.hc_lookup.is_some() as u64);
    w(port::HC_HIT, (r.hc_lookup == Some(true)) as u64);
    let hw = r.hc_write.unwrap_or(HcWrite { pc: 0, value: 0 });
    w(port::HC_WRITE, r.hc_write.is_some() as u64);
    w(port::HC_WRITE_PC, hw.pc as u64);
    w(port::HC_WRITE_VALUE, hw.value as u64);
    w(port::WARP_DONE, r.warp_done.is_some() as u64);
    w(port::WARP_DONE_ID, r.warp_done.unwrap_or(0) as u64);
    let (rw, rsw) = r.icnt_req.unwrap_or((0, 0));
    w(port::ICNT_REQ, r.icnt_req.is_some() as u64);
    w(port::ICNT_REQ_WARP, rw as u64);
    w(port::ICNT_REQ_SW, rsw as u64);
}

/// Port mode: the `sm_core` inputs of one cycle, decoded (spec §6).
#[derive(Clone, Debug)]
struct Ports {
    has_next: u64,
    is_mem: u64,
    kind: Vec<Kind>,
    pc: Vec<u32>,
    /// The descriptor answer for (`issue_warp`, `issue_sw`), tag and kind aside: `desc_deg`
    /// as `deg_override` (0 = the detector computes the degree), `desc_addr`, `desc_act`.
    desc: Entry,
    icnt: Option<(u32, u32)>,
}

impl Source for Ports {
    fn vectors(&self) -> (u64, u64) {
        (self.has_next, self.is_mem)
    }

    fn next(&self, w: usize) -> (Kind, u32) {
        (self.kind[w], self.pc[w])
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
        self.icnt
    }

    fn icnt_request(&mut self, _t: u64, _warp: u32, _sw: u32) {}
}

/// The input slots of the `sm_core` layout, looked up once.
#[derive(Clone, Debug)]
struct InSlots {
    reset: Slot,
    kernel_start: Slot,
    has_next: Slot,
    kind: Slot,
    pc: Slot,
    desc_addr: Slot,
    desc_act: Slot,
    desc_deg: Slot,
    icnt_valid: Slot,
    icnt_warp: Slot,
    icnt_sw: Slot,
}

/// The behavioral `sm_core` on its ports (spec §5.6, §6): driven by the input ports cycle by
/// cycle exactly as the RTL is, writing the output ports ([`encode_record`]). The same core as
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
    layout: Layout,
    slots: InSlots,
    core: Core,
    ports: Ports,
    /// The state after the last [`Rtl::eval`], committed by [`Rtl::edge`].
    evaluated: Option<Core>,
}

impl PortModel {
    /// The model of the `sm_core` with params `p` (validated) on `layout` (its ports, spec §6),
    /// in its reset state.
    pub fn new(p: &SmParams, layout: &Layout) -> Result<PortModel, String> {
        p.validate().map_err(|e| e.to_string())?;
        let slot = |name: &str| layout.find_input(name).cloned();
        let slots = InSlots {
            reset: slot("reset")?,
            kernel_start: slot(port::KERNEL_START)?,
            has_next: slot(port::HAS_NEXT)?,
            kind: slot(port::KIND)?,
            pc: slot(port::PC)?,
            desc_addr: slot(port::DESC_ADDR)?,
            desc_act: slot(port::DESC_ACT)?,
            desc_deg: slot(port::DESC_DEG)?,
            icnt_valid: slot(port::ICNT_VALID)?,
            icnt_warp: slot(port::ICNT_WARP)?,
            icnt_sw: slot(port::ICNT_SW)?,
        };
        let (w, l) = (p.warps as usize, p.pipe.lanes as usize);
        Ok(PortModel {
            layout: layout.clone(),
            slots,
            core: Core::new(p),
            ports: Ports {
                has_next: 0,
                is_mem: 0,
                kind: vec![Kind::Alu; w],
                pc: vec![0; w],
                desc: Entry::new(0, Kind::Alu, l),
                icnt: None,
            },
            evaluated: None,
        })
    }

    /// The params.
    pub fn params(&self) -> &SmParams {
        &self.core.p
    }

    /// Decodes `inputs` into the issue source; returns (`kernel_start`, `reset`).
    fn decode(&mut self, inputs: &[u64]) -> (bool, bool) {
        let (s, p, ports) = (&self.slots, &self.core.p, &mut self.ports);
        // A port's value; bits beyond its width are not part of it.
        let val = |slot: &Slot| slot.field(inputs, 0, slot.width.min(64));
        let bit = |slot: &Slot| val(slot) == 1;
        let w = p.warps as usize;
        let (pcw, aw) = (p.pc_bits as usize, p.pipe.addr_bits as usize);
        ports.has_next = s.has_next.field(inputs, 0, w);
        ports.is_mem = 0;
        for k in 0..w {
            ports.kind[k] = Kind::from_bits(s.kind.field(inputs, 2 * k, 2));
            ports.pc[k] = s.pc.field(inputs, pcw * k, pcw) as u32;
            ports.is_mem |= (ports.kind[k].is_mem() as u64) << k;
        }
        let desc = &mut ports.desc;
        let deg = val(&s.desc_deg) as u32;
        desc.deg_override = (deg != 0).then_some(deg);
        for l in 0..desc.addrs.len() {
            desc.addrs[l] = s.desc_addr.field(inputs, l * aw, aw) as u32;
            desc.act[l] = s.desc_act.field(inputs, l, 1) == 1;
        }
        ports.icnt = bit(&s.icnt_valid).then(|| (val(&s.icnt_warp) as u32, val(&s.icnt_sw) as u32));
        (bit(&s.kernel_start), bit(&s.reset))
    }

    /// One cycle of `core` on the decoded inputs: writes the outputs, then takes the edge.
    fn cycle(&mut self, inputs: &[u64], outputs: &mut [u64], commit: bool) {
        let (start, reset) = self.decode(inputs);
        let mut next = if commit {
            None
        } else {
            Some(self.core.clone())
        };
        let core = next.as_mut().unwrap_or(&mut self.core);
        let (rec, ev) = core.cycle(&mut self.ports, start, true);
        if reset {
            *core = Core::new(&core.p);
        }
        outputs.fill(0);
        let rec = SmRecord::new(rec.expect("record asked for"), &ev);
        encode_record(&self.core.p, &self.layout, &rec, outputs);
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
