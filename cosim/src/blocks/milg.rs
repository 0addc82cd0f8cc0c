//! Behavioral model of the `Milg` (docs/memory-issue-control.md §4.3–§4.4; Dai et al., seed
//! 004, §3.3), written from the spec's per-cycle pseudo-code with plain integers, independently
//! of the RTL.
//!
//! [`Milg`] is the typed state machine the SM memory-pipeline model drives (spec §1.3 phases 6
//! and 7: [`Milg::mem_ok`] before issue, [`Milg::tick`] with the cycle's events); [`Model`] puts
//! it on the block's ports for co-simulation. Nothing allocates per cycle.

use crate::{BlockModel, Layout, Simulator};
use smrtl_hdl::blocks::milg::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::milg::Params;
pub use smrtl_hdl::blocks::milg::{Mode, Ratio0Policy};

/// The Milg's configuration (the block's params as the SM model holds them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MilgCfg {
    pub mode: Mode,
    pub ratio0: Ratio0Policy,
    pub inflight_bits: u32,
    pub rsfail_bits: u32,
    pub reqcnt_bits: u32,
}

impl Default for MilgCfg {
    /// The paper's DMIL MILG (7 / 12 / 10 bits, r = 0 unlimited).
    fn default() -> MilgCfg {
        MilgCfg::of(&Params::default())
    }
}

impl MilgCfg {
    /// The configuration of the block's params.
    pub fn of(p: &Params) -> MilgCfg {
        MilgCfg {
            mode: p.mode,
            ratio0: p.ratio0_policy,
            inflight_bits: p.inflight_bits,
            rsfail_bits: p.rsfail_bits,
            reqcnt_bits: p.reqcnt_bits,
        }
    }
}

/// One kernel's events of one cycle (spec §4.4 inputs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MilgEvents {
    /// A memory instruction of the kernel issued.
    pub issue: bool,
    /// Memory instructions of the kernel completed (0..=2).
    pub done: u8,
    /// One of its accesses was accepted (a request).
    pub acc: bool,
    /// Its head access failed (a reservation failure); never with `acc`.
    pub fail: bool,
}

/// The MILG registers (spec §4.3). Fields are public for reading; change them only through
/// [`Milg::tick`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Milg {
    pub inflight: u32,
    pub rsfail: u32,
    pub reqcnt: u32,
    pub peak: u32,
    pub mil: u32,
    pub unl: bool,
    cfg: MilgCfg,
    /// 2^inflight_bits - 1 (127): the counter's top and `mil`'s reset value.
    in_max: u32,
    /// 2^rsfail_bits - 1 (4095): where `rsfail` saturates.
    fail_max: u32,
    /// 2^reqcnt_bits - 1 (1023): the last request of an interval.
    req_max: u32,
}

impl Milg {
    /// The reset state: counters 0, `mil` all ones, `unl` 1.
    pub fn new(cfg: &MilgCfg) -> Milg {
        let ones = |bits: u32| ((1u64 << bits) - 1) as u32;
        let in_max = ones(cfg.inflight_bits);
        Milg {
            inflight: 0,
            rsfail: 0,
            reqcnt: 0,
            peak: 0,
            mil: in_max,
            unl: true,
            cfg: *cfg,
            in_max,
            fail_max: ones(cfg.rsfail_bits),
            req_max: ones(cfg.reqcnt_bits),
        }
    }

    pub fn cfg(&self) -> &MilgCfg {
        &self.cfg
    }

    /// The gate: `(unl | inflight < mil) & (inflight < max)`, start-of-cycle registers only.
    pub fn mem_ok(&self) -> bool {
        (self.unl || self.inflight < self.mil) && self.inflight < self.in_max
    }

    /// Whether an accepted request this cycle is the interval's last (`reqcnt` all ones).
    pub fn boundary(&self, acc: bool) -> bool {
        acc && self.reqcnt == self.req_max
    }

    /// The clock edge (spec §4.4): absorbs the cycle's events. `smil_limit` / `smil_unl` are
    /// the SMIL configuration, read in Smil mode only. `inflight` is kept modulo
    /// 2^inflight_bits (the environment keeps it in range).
    pub fn tick(&mut self, ev: MilgEvents, smil_limit: u32, smil_unl: bool) {
        let modulus = self.in_max as i64 + 1;
        let inflight_nx =
            (self.inflight as i64 + ev.issue as i64 - ev.done as i64).rem_euclid(modulus) as u32;
        let rs = (self.rsfail + ev.fail as u32).min(self.fail_max);
        if self.boundary(ev.acc) {
            let p = self.peak.max(inflight_nx);
            let r = rs >> self.cfg.reqcnt_bits;
            if self.cfg.mode == Mode::Dmil {
                // P div r; r = 0 (fewer failures than requests) follows ratio0_policy.
                match (p.checked_div(r), self.cfg.ratio0) {
                    (Some(q), _) => {
                        self.unl = false;
                        self.mil = q.max(1);
                    }
                    (None, Ratio0Policy::Unlimited) => {
                        self.unl = true;
                        self.mil = self.in_max;
                    }
                    (None, Ratio0Policy::Increment) => {
                        self.unl = false;
                        self.mil = (p + 1).min(self.in_max);
                    }
                }
            }
            self.reqcnt = 0;
            self.rsfail = 0;
            self.peak = inflight_nx;
        } else {
            self.reqcnt = (self.reqcnt + ev.acc as u32) & self.req_max;
            self.rsfail = rs;
            self.peak = self.peak.max(inflight_nx);
        }
        if self.cfg.mode == Mode::Smil {
            self.mil = smil_limit & self.in_max;
            self.unl = smil_unl;
        }
        self.inflight = inflight_nx;
    }
}

/// The Milg on its ports: the same buffers as the RTL backends.
pub struct Model {
    milg: Milg,
    io: Io,
    inputs: Inputs,
    outputs: Outputs,
}

impl BlockModel for Model {
    type Params = Params;
    fn new(p: &Params, layout: &Layout) -> Model {
        Model {
            milg: Milg::new(&MilgCfg::of(p)),
            io: Io::new(p, layout),
            inputs: Inputs::new(p),
            outputs: Outputs::new(p),
        }
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        let (g, i, o) = (&self.milg, &mut self.inputs, &mut self.outputs);
        self.io.read_inputs(inputs, i);
        let ev = MilgEvents {
            issue: i.issue,
            done: i.done as u8,
            acc: i.acc,
            fail: i.fail,
        };
        *o = Outputs {
            mem_ok: g.mem_ok(),
            mil: u64::from(g.mil),
            unl: g.unl,
            boundary: g.boundary(ev.acc),
            inflight: u64::from(g.inflight),
            peak: u64::from(g.peak),
            rsfail: u64::from(g.rsfail),
            reqcnt: u64::from(g.reqcnt),
        };
        self.io.write_outputs(o, outputs);
        if i.reset {
            self.milg = Milg::new(&self.milg.cfg);
        } else {
            self.milg.tick(ev, i.smil_limit as u32, i.smil_unl);
        }
    }
}
