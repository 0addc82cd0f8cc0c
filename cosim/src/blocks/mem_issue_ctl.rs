//! Behavioral model of the `MemIssueCtl` top (docs/memory-issue-control.md §2, §5): N
//! [`Milg`]s in the scheme's mode composed as the RTL top composes them, with the eligibility
//! of §2 and the scheme's grant.
//!
//! [`MemIssueCtl`] is what the SM memory-pipeline model drives each cycle: [`MemIssueCtl::comb`]
//! before issue (phase 6: `mem_ok` and `grant` from start-of-cycle state), [`MemIssueCtl::tick`]
//! with the cycle's events (phase 7). [`Model`] is the thin port-level adapter for
//! co-simulation. Nothing allocates per cycle.

use crate::blocks::milg::{Milg, MilgCfg, MilgEvents};
use crate::blocks::qbmi_arb::{Qbmi, QbmiCfg};
use crate::blocks::rbmi_arb::Rbmi;
use crate::harness::layout::{Layout, Slot};
use crate::harness::sim::Simulator;
use smrtl_hdl::blocks::mem_issue_ctl::{port, Params, Scheme};
use smrtl_hdl::netlist::mask;

/// Most kernel slots per SM (spec §0: N ≤ 3).
pub const MAX_KERNELS: usize = 3;

/// One cycle's inputs, bit (or element) k = kernel k.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct CtlIn {
    pub mem_req: u8,
    pub slot_free: bool,
    pub issue: u8,
    pub done: [u8; MAX_KERNELS],
    pub acc: u8,
    pub first: u8,
    pub fail: u8,
    pub smil_limit: [u8; MAX_KERNELS],
    pub smil_unl: u8,
}

/// The combinational outputs read before issue.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct CtlOut {
    /// BMI schemes: one-hot or 0. Baseline / Smil / Dmil: the eligible kernels (a mask; the
    /// issue stage picks the warp, spec §2).
    pub grant: u8,
    pub mem_ok: u8,
}

/// The memory-issue control of one SM.
#[derive(Clone, Debug)]
pub struct MemIssueCtl {
    n: usize,
    scheme: Scheme,
    milgs: Vec<Milg>,
    /// The RBMI arbiter (Rbmi scheme).
    rbmi: Option<Rbmi>,
    /// The QBMI arbiter (Qbmi, QbmiDmil).
    qbmi: Option<Qbmi>,
}

/// Bit `k` of `v`.
fn bit(v: u8, k: usize) -> bool {
    v >> k & 1 == 1
}

impl MemIssueCtl {
    /// The reset state.
    pub fn new(p: &Params) -> MemIssueCtl {
        let cfg = MilgCfg::of(&p.milg());
        MemIssueCtl {
            n: p.kernels(),
            scheme: p.scheme,
            milgs: (0..p.kernels()).map(|_| Milg::new(&cfg)).collect(),
            rbmi: (p.scheme == Scheme::Rbmi).then(|| Rbmi::new(p.kernels())),
            qbmi: p.has_qbmi().then(|| Qbmi::new(&QbmiCfg::of(&p.qbmi()))),
        }
    }

    pub fn kernels(&self) -> usize {
        self.n
    }

    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The MIL gates, bit k = kernel k (start-of-cycle registers).
    pub fn mem_ok(&self) -> u8 {
        (0..self.n).fold(0, |v, k| v | (self.milgs[k].mem_ok() as u8) << k)
    }

    /// Spec §2: `elig[k] = mem_req[k] ∧ mem_ok[k] ∧ slot_free`.
    pub fn eligible(&self, mem_req: u8, slot_free: bool) -> u8 {
        if slot_free {
            mem_req & self.mem_ok() & mask(self.n) as u8
        } else {
            0
        }
    }

    /// The granted kernel of a BMI arbiter (`None`: no grant, or no arbiter).
    fn pick(&self, elig: u8) -> Option<usize> {
        match (&self.rbmi, &self.qbmi) {
            (Some(a), _) => a.grant(elig),
            (_, Some(q)) => q.grant(elig),
            _ => None,
        }
    }

    /// The QBMI arbiter (Qbmi, QbmiDmil).
    pub fn qbmi(&self) -> Option<&Qbmi> {
        self.qbmi.as_ref()
    }

    /// Phase 6: the gates and the grant, from start-of-cycle state and this cycle's requests.
    /// Without a BMI arbiter the grant is `elig` (a mask).
    pub fn comb(&self, mem_req: u8, slot_free: bool) -> CtlOut {
        let elig = self.eligible(mem_req, slot_free);
        let grant = if self.scheme.has_arbiter() {
            self.pick(elig).map_or(0, |g| 1 << g)
        } else {
            elig
        };
        CtlOut {
            grant,
            mem_ok: self.mem_ok(),
        }
    }

    /// RBMI's pointer (Rbmi scheme).
    pub fn last(&self) -> Option<usize> {
        self.rbmi.as_ref().map(|a| a.last)
    }

    /// Phase 7: the clock edge with the cycle's events (the arbiter's grant is recomputed
    /// from `mem_req` / `slot_free` and the start-of-cycle gates, as in [`MemIssueCtl::comb`]).
    pub fn tick(&mut self, ev: &CtlIn) {
        let g = self.pick(self.eligible(ev.mem_req, ev.slot_free));
        if let Some(a) = self.rbmi.as_mut() {
            a.tick(g);
        }
        // QBMI's sample is each MILG's boundary, from start-of-cycle reqcnt (spec §5).
        let sample = (0..self.n).fold(0u8, |v, k| {
            v | (self.milgs[k].boundary(bit(ev.acc, k)) as u8) << k
        });
        if let Some(q) = self.qbmi.as_mut() {
            q.tick(g, ev.first, sample);
        }
        for (k, g) in self.milgs.iter_mut().enumerate() {
            let e = MilgEvents {
                issue: bit(ev.issue, k),
                done: ev.done[k],
                acc: bit(ev.acc, k),
                fail: bit(ev.fail, k),
            };
            g.tick(e, u32::from(ev.smil_limit[k]), bit(ev.smil_unl, k));
        }
    }

    /// Back to the reset state (in place).
    pub fn reset(&mut self) {
        for g in &mut self.milgs {
            *g = Milg::new(g.cfg());
        }
        if let Some(a) = self.rbmi.as_mut() {
            *a = Rbmi::new(self.n);
        }
        if let Some(q) = self.qbmi.as_mut() {
            *q = Qbmi::new(q.cfg());
        }
    }

    /// Kernel k's MILG.
    pub fn milg(&self, k: usize) -> &Milg {
        &self.milgs[k]
    }
    pub fn inflight(&self, k: usize) -> u32 {
        self.milgs[k].inflight
    }
    pub fn peak(&self, k: usize) -> u32 {
        self.milgs[k].peak
    }
    pub fn rsfail(&self, k: usize) -> u32 {
        self.milgs[k].rsfail
    }
    pub fn reqcnt(&self, k: usize) -> u32 {
        self.milgs[k].reqcnt
    }
    pub fn mil(&self, k: usize) -> u32 {
        self.milgs[k].mil
    }
    pub fn unl(&self, k: usize) -> bool {
        self.milgs[k].unl
    }
}

/// The top's port places in the flat buffers, and the one encoding of [`CtlIn`], [`CtlOut`] and
/// the registers of a [`MemIssueCtl`] on them: the port-level model and the SM model's RTL loop
/// (`testbench/src/mem_sm.rs`) both go through it.
pub struct CtlPorts {
    n: usize,
    ib: usize,
    fb: usize,
    qb: usize,
    reset: Slot,
    mem_req: Slot,
    issue: Slot,
    done: Slot,
    acc: Slot,
    first: Slot,
    fail: Slot,
    smil_limit: Slot,
    smil_unl: Slot,
    slot_free: Slot,
    grant: Slot,
    mem_ok: Slot,
    inflight: Slot,
    peak: Slot,
    rsfail: Slot,
    reqcnt: Slot,
    mil: Slot,
    unl: Slot,
    /// Present with RBMI.
    last: Option<Slot>,
    /// quota, base, rpm, minst: present with QBMI.
    qbmi: Option<[Slot; 4]>,
}

impl CtlPorts {
    /// The slots of `p`'s ports in `layout` (which may hold further ports).
    pub fn new(p: &Params, layout: &Layout) -> CtlPorts {
        let i = |n: &str| layout.in_slot(n).clone();
        let o = |n: &str| layout.out_slot(n).clone();
        CtlPorts {
            n: p.kernels(),
            ib: p.inflight_bits as usize,
            fb: p.rsfail_bits as usize,
            qb: p.reqcnt_bits as usize,
            reset: i("reset"),
            mem_req: i(port::MEM_REQ),
            issue: i(port::ISSUE),
            done: i(port::DONE),
            acc: i(port::ACC),
            first: i(port::FIRST),
            fail: i(port::FAIL),
            smil_limit: i(port::SMIL_LIMIT),
            smil_unl: i(port::SMIL_UNL),
            slot_free: i(port::SLOT_FREE),
            grant: o(port::GRANT),
            mem_ok: o(port::MEM_OK),
            inflight: o(port::INFLIGHT),
            peak: o(port::PEAK),
            rsfail: o(port::RSFAIL),
            reqcnt: o(port::REQCNT),
            mil: o(port::MIL),
            unl: o(port::UNL),
            last: (p.scheme == Scheme::Rbmi).then(|| o(port::LAST)),
            qbmi: p
                .has_qbmi()
                .then(|| [port::QUOTA, port::BASE, port::RPM, port::MINST].map(o)),
        }
    }

    /// Whether `reset` is high in `buf`.
    pub fn reset(&self, buf: &[u64]) -> bool {
        self.reset.field(buf, 0, 1) == 1
    }

    /// Drives `reset` in `buf`.
    pub fn set_reset(&self, buf: &mut [u64], on: bool) {
        self.reset.set(buf, u64::from(on));
    }

    /// One cycle's inputs read from `buf` into `x`.
    pub fn read_inputs(&self, buf: &[u64], x: &mut CtlIn) {
        let n = self.n;
        let bits = |s: &Slot| s.field(buf, 0, n) as u8;
        x.mem_req = bits(&self.mem_req);
        x.issue = bits(&self.issue);
        x.acc = bits(&self.acc);
        x.first = bits(&self.first);
        x.fail = bits(&self.fail);
        x.smil_unl = bits(&self.smil_unl);
        x.slot_free = self.slot_free.field(buf, 0, 1) == 1;
        for k in 0..n {
            x.done[k] = self.done.field(buf, 2 * k, 2) as u8;
            x.smil_limit[k] = self.smil_limit.field(buf, k * self.ib, self.ib) as u8;
        }
    }

    /// One cycle's inputs written to `buf` (`reset` low).
    pub fn write_inputs(&self, x: &CtlIn, buf: &mut [u64]) {
        self.reset.set(buf, 0);
        self.mem_req.set(buf, u64::from(x.mem_req));
        self.issue.set(buf, u64::from(x.issue));
        self.acc.set(buf, u64::from(x.acc));
        self.first.set(buf, u64::from(x.first));
        self.fail.set(buf, u64::from(x.fail));
        self.smil_unl.set(buf, u64::from(x.smil_unl));
        self.slot_free.set(buf, u64::from(x.slot_free));
        for k in 0..self.n {
            self.done.set_field(buf, 2 * k, 2, u64::from(x.done[k]));
            self.smil_limit
                .set_field(buf, k * self.ib, self.ib, u64::from(x.smil_limit[k]));
        }
    }

    /// The outputs read before the edge (Mealy `grant`, Moore `mem_ok`).
    pub fn write_comb(&self, o: &CtlOut, buf: &mut [u64]) {
        self.grant.set(buf, u64::from(o.grant));
        self.mem_ok.set(buf, u64::from(o.mem_ok));
    }

    /// The debug registers of `c`.
    pub fn write_regs(&self, c: &MemIssueCtl, buf: &mut [u64]) {
        let (ib, fb, qb) = (self.ib, self.fb, self.qb);
        for k in 0..self.n {
            self.inflight
                .set_field(buf, k * ib, ib, u64::from(c.inflight(k)));
            self.peak.set_field(buf, k * ib, ib, u64::from(c.peak(k)));
            self.rsfail
                .set_field(buf, k * fb, fb, u64::from(c.rsfail(k)));
            self.reqcnt
                .set_field(buf, k * qb, qb, u64::from(c.reqcnt(k)));
            self.mil.set_field(buf, k * ib, ib, u64::from(c.mil(k)));
            self.unl.set_field(buf, k, 1, u64::from(c.unl(k)));
        }
        if let (Some(s), Some(l)) = (&self.last, c.last()) {
            s.set(buf, l as u64);
        }
        if let (Some(slots), Some(q)) = (&self.qbmi, c.qbmi()) {
            let base = q.base();
            for (s, v) in slots.iter().zip([&q.quota, &base, &q.rpm, &q.minst]) {
                let w = s.width / self.n;
                for (k, &x) in v.iter().enumerate().take(self.n) {
                    s.set_field(buf, k * w, w, u64::from(x));
                }
            }
        }
    }
}

/// Reads a port-level cycle into [`CtlIn`] and writes the outputs.
pub struct Model {
    ctl: MemIssueCtl,
    ports: CtlPorts,
    input: CtlIn,
}

impl Model {
    pub fn new(p: &Params, layout: &Layout) -> Model {
        Model {
            ctl: MemIssueCtl::new(p),
            ports: CtlPorts::new(p, layout),
            input: CtlIn::default(),
        }
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        let ps = &self.ports;
        ps.read_inputs(inputs, &mut self.input);
        let out = self.ctl.comb(self.input.mem_req, self.input.slot_free);
        ps.write_comb(&out, outputs);
        ps.write_regs(&self.ctl, outputs);
        if ps.reset(inputs) {
            self.ctl.reset();
        } else {
            self.ctl.tick(&self.input);
        }
    }
}
