//! Behavioral model of the `MemIssueCtl` top (docs/memory-issue-control.md §2, §5): N
//! [`Milg`]s in the scheme's mode composed as the RTL top composes them, with the eligibility
//! of §2 and the scheme's grant.
//!
//! [`MemIssueCtl`] is what the SM memory-pipeline model drives each cycle: [`MemIssueCtl::comb`]
//! before issue (phase 6: `mem_ok` and `grant` from start-of-cycle state), [`MemIssueCtl::tick`]
//! with the cycle's events (phase 7). [`Model`] is the thin port-level adapter for
//! co-simulation. Nothing allocates per cycle.

use crate::layout::{Layout, Slot};
use crate::milg::{Milg, MilgCfg, MilgEvents};
use crate::qbmi_arb::{Qbmi, QbmiCfg};
use crate::rbmi_arb::Rbmi;
use crate::sim::Simulator;
use smrtl_hdl::mem_issue_ctl::{port, Params, Scheme};
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

/// The top's port slots.
struct Ports {
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

/// Reads a port-level cycle into [`CtlIn`] and writes the outputs.
pub struct Model {
    ctl: MemIssueCtl,
    p: Params,
    ports: Ports,
    input: CtlIn,
}

impl Model {
    pub fn new(p: &Params, layout: &Layout) -> Model {
        let i = |n: &str| layout.in_slot(n).clone();
        let o = |n: &str| layout.out_slot(n).clone();
        Model {
            ctl: MemIssueCtl::new(p),
            p: p.clone(),
            ports: Ports {
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
            },
            input: CtlIn::default(),
        }
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        let n = self.ctl.kernels();
        let (ib, fb, qb) = (
            self.p.inflight_bits as usize,
            self.p.rsfail_bits as usize,
            self.p.reqcnt_bits as usize,
        );
        let ps = &self.ports;
        let bits = |s: &Slot| s.field(inputs, 0, n) as u8;
        let x = &mut self.input;
        x.mem_req = bits(&ps.mem_req);
        x.issue = bits(&ps.issue);
        x.acc = bits(&ps.acc);
        x.first = bits(&ps.first);
        x.fail = bits(&ps.fail);
        x.smil_unl = bits(&ps.smil_unl);
        x.slot_free = ps.slot_free.field(inputs, 0, 1) == 1;
        for k in 0..n {
            x.done[k] = ps.done.field(inputs, 2 * k, 2) as u8;
            x.smil_limit[k] = ps.smil_limit.field(inputs, k * ib, ib) as u8;
        }
        let out = self.ctl.comb(x.mem_req, x.slot_free);
        ps.grant.set(outputs, u64::from(out.grant));
        ps.mem_ok.set(outputs, u64::from(out.mem_ok));
        for k in 0..n {
            let c = &self.ctl;
            ps.inflight
                .set_field(outputs, k * ib, ib, u64::from(c.inflight(k)));
            ps.peak.set_field(outputs, k * ib, ib, u64::from(c.peak(k)));
            ps.rsfail
                .set_field(outputs, k * fb, fb, u64::from(c.rsfail(k)));
            ps.reqcnt
                .set_field(outputs, k * qb, qb, u64::from(c.reqcnt(k)));
            ps.mil.set_field(outputs, k * ib, ib, u64::from(c.mil(k)));
            ps.unl.set_field(outputs, k, 1, c.unl(k) as u64);
        }
        if let (Some(s), Some(l)) = (&ps.last, self.ctl.last()) {
            s.set(outputs, l as u64);
        }
        if let (Some(slots), Some(q)) = (&ps.qbmi, self.ctl.qbmi()) {
            let base = q.base();
            let values = [&q.quota, &base, &q.rpm, &q.minst];
            for (s, v) in slots.iter().zip(values) {
                let w = s.width / n;
                for (k, &x) in v.iter().enumerate().take(n) {
                    s.set_field(outputs, k * w, w, u64::from(x));
                }
            }
        }
        if ps.reset.field(inputs, 0, 1) == 1 {
            self.ctl.reset();
        } else {
            self.ctl.tick(&self.input);
        }
    }
}
