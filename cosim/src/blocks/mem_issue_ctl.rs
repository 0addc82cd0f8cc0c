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
use crate::blocks::rbmi_arb::{mask, Rbmi};
use crate::{BlockModel, Layout, Simulator};
use smrtl_hdl::blocks::mem_issue_ctl::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::mem_issue_ctl::{Params, Scheme};

/// Most kernel slots per SM (spec §0: N ≤ 3).
pub const MAX_KERNELS: usize = 3;

/// One cycle's inputs of the control: the block's typed port cycle (per-kernel buses element
/// k = kernel k), what the SM memory-pipeline model fills and an RTL in the loop is driven with.
pub type CtlIn = Inputs;

/// The control's outputs: `grant` and `mem_ok` before the edge ([`MemIssueCtl::comb`]), the
/// registers ([`MemIssueCtl::registers`]).
pub type CtlOut = Outputs;

/// Clears a cycle's events in place (requests, issues, completions, L1D outcomes, `slot_free`,
/// `reset`); the SMIL configuration stays.
pub fn idle(x: &mut CtlIn) {
    for v in [
        &mut x.mem_req,
        &mut x.issue,
        &mut x.acc,
        &mut x.first,
        &mut x.fail,
    ] {
        v.fill(false);
    }
    x.done.fill(0);
    x.slot_free = false;
    x.reset = false;
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
            mem_req & self.mem_ok() & ((1u16 << self.n) - 1) as u8
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

    /// The grant from start-of-cycle state and this cycle's requests (bit k = kernel k): the
    /// BMI arbiter's one-hot pick, or without one `elig` itself (a mask).
    pub fn grant(&self, mem_req: u8, slot_free: bool) -> u8 {
        let elig = self.eligible(mem_req, slot_free);
        if self.scheme.has_arbiter() {
            self.pick(elig).map_or(0, |g| 1 << g)
        } else {
            elig
        }
    }

    /// Phase 6: the gates and the grant of `i`'s requests into `o` (its other outputs stay).
    pub fn comb(&self, i: &CtlIn, o: &mut CtlOut) {
        let (grant, mem_ok) = (self.grant(mask(&i.mem_req), i.slot_free), self.mem_ok());
        for k in 0..self.n {
            o.grant[k] = bit(grant, k);
            o.mem_ok[k] = bit(mem_ok, k);
        }
    }

    /// The registers into `o`: each MILG's, RBMI's pointer, QBMI's (and `base` of its rpm).
    pub fn registers(&self, o: &mut CtlOut) {
        for (k, g) in self.milgs.iter().enumerate() {
            o.inflight[k] = u64::from(g.inflight);
            o.peak[k] = u64::from(g.peak);
            o.rsfail[k] = u64::from(g.rsfail);
            o.reqcnt[k] = u64::from(g.reqcnt);
            o.mil[k] = u64::from(g.mil);
            o.unl[k] = g.unl;
        }
        if let Some(a) = &self.rbmi {
            o.last = a.last as u64;
        }
        if let Some(q) = &self.qbmi {
            for (k, b) in q.base().into_iter().enumerate().take(self.n) {
                o.quota[k] = u64::from(q.quota[k]);
                o.base[k] = u64::from(b);
                o.rpm[k] = u64::from(q.rpm[k]);
                o.minst[k] = u64::from(q.minst[k]);
            }
        }
    }

    /// RBMI's pointer (Rbmi scheme).
    pub fn last(&self) -> Option<usize> {
        self.rbmi.as_ref().map(|a| a.last)
    }

    /// Phase 7: the clock edge with the cycle's events (the arbiter's grant is recomputed
    /// from `mem_req` / `slot_free` and the start-of-cycle gates, as in [`MemIssueCtl::comb`]).
    pub fn tick(&mut self, ev: &CtlIn) {
        let g = self.pick(self.eligible(mask(&ev.mem_req), ev.slot_free));
        if let Some(a) = self.rbmi.as_mut() {
            a.tick(g);
        }
        // QBMI's sample is each MILG's boundary, from start-of-cycle reqcnt (spec §5).
        let sample = (0..self.n).fold(0u8, |v, k| {
            v | (self.milgs[k].boundary(ev.acc[k]) as u8) << k
        });
        if let Some(q) = self.qbmi.as_mut() {
            q.tick(g, mask(&ev.first), sample);
        }
        for (k, g) in self.milgs.iter_mut().enumerate() {
            let e = MilgEvents {
                issue: ev.issue[k],
                done: ev.done[k] as u8,
                acc: ev.acc[k],
                fail: ev.fail[k],
            };
            g.tick(e, ev.smil_limit[k] as u32, ev.smil_unl[k]);
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

/// The control on its ports: [`MemIssueCtl::comb`] and [`MemIssueCtl::registers`] before
/// the edge, then the edge (synchronous reset wins).
pub struct Model {
    ctl: MemIssueCtl,
    io: Io,
    inputs: CtlIn,
    outputs: CtlOut,
}

impl BlockModel for Model {
    type Params = Params;
    fn new(p: &Params, layout: &Layout) -> Model {
        Model {
            ctl: MemIssueCtl::new(p),
            io: Io::new(p, layout),
            inputs: CtlIn::new(p),
            outputs: CtlOut::new(p),
        }
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        let (i, o) = (&mut self.inputs, &mut self.outputs);
        self.io.read_inputs(inputs, i);
        self.ctl.comb(i, o);
        self.ctl.registers(o);
        self.io.write_outputs(o, outputs);
        if i.reset {
            self.ctl.reset();
        } else {
            self.ctl.tick(i);
        }
    }
}
