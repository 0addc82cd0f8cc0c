//! Behavioral model of the `LockTable` (docs/scratchpad-sharing.md §2.4; Jatala et al., seed
//! 001, §3–§4, §6.2), written from the spec's pseudo-code, independently of the RTL: plain
//! integers and arrays, one loop per line of the pseudo-code.
//!
//! [`LockTable`] is the state machine on the block's typed cycle ([`Inputs`] / [`Outputs`], as
//! the port declaration gives them; the SM top drives it the same way); [`Model`] puts it on
//! the block's ports for co-simulation. Nothing allocates per cycle.

use crate::{BlockModel, Layout, Simulator};
use smrtl_hdl::blocks::lock_table::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::lock_table::Params;
use smrtl_hdl::blocks::sharing::Policy;
use smrtl_hdl::netlist::mask;

/// The lock table's registered state and the per-cycle scratch of the pseudo-code.
#[derive(Clone, Debug)]
pub struct LockTable {
    t: usize,
    kp: usize,
    kw: usize,
    none: u64,
    pend_w: u32,
    policy: Policy,
    lock_valid: Vec<bool>,
    lock_owner: Vec<u64>,
    pend: Vec<u64>,
    err_proto: bool,
    err_pend: bool,
    // Scratch, sized once.
    own: Vec<bool>,
    want: Vec<bool>,
    pend_nx: Vec<u64>,
    lock_valid_nx: Vec<bool>,
    lock_owner_nx: Vec<u64>,
}

impl LockTable {
    /// The lock table after reset: every lock free, every counter 0, no error.
    pub fn new(p: &Params) -> LockTable {
        let s = p.shape();
        let (n, t, kp) = (p.nsched as usize, p.slots as usize, s.kp());
        LockTable {
            t,
            kp,
            kw: s.kw(),
            none: s.none(),
            pend_w: p.pend_w,
            policy: p.policy,
            lock_valid: vec![false; kp],
            lock_owner: vec![0; kp],
            pend: vec![0; t],
            err_proto: false,
            err_pend: false,
            own: vec![false; n],
            want: vec![false; n],
            pend_nx: vec![0; t],
            lock_valid_nx: vec![false; kp],
            lock_owner_nx: vec![0; kp],
        }
    }

    /// Lock `k` as (valid, owner); a pair index ≥ KP reads as a free lock.
    pub fn lock(&self, k: usize) -> (bool, u64) {
        if k < self.kp {
            (self.lock_valid[k], self.lock_owner[k])
        } else {
            (false, 0)
        }
    }

    /// The registered locks: per pair index `k < KP`, valid and owner.
    pub fn locks(&self) -> (&[bool], &[u64]) {
        (&self.lock_valid, &self.lock_owner)
    }

    /// The in-flight count of slot `s` (0 for a slot that does not exist).
    pub fn pend(&self, s: u64) -> u64 {
        self.pend.get(s as usize).copied().unwrap_or(0)
    }

    /// ShTB[s]; a slot ≥ T reads `NONE`.
    fn shtb(&self, i: &Inputs, s: u64) -> u64 {
        if (s as usize) < self.t {
            i.shtb[s as usize]
        } else {
            self.none
        }
    }

    /// pair(s) = min(s, ShTB[s]), its low KW bits (§1.3 and the out-of-range rules).
    pub fn pair(&self, i: &Inputs, s: u64) -> usize {
        (s.min(self.shtb(i, s)) & mask(self.kw)) as usize
    }

    /// partner(o) = ShTB[o], `NONE` when o is unshared (`!shsm || ShTB[o] == NONE`).
    fn partner(&self, i: &Inputs, o: u64) -> u64 {
        let sh = self.shtb(i, o);
        if !i.shsm || sh == self.none {
            self.none
        } else {
            sh
        }
    }

    /// `done` of slot `s`; a nonexistent slot reads 1.
    fn done(&self, i: &Inputs, s: u64) -> bool {
        i.done.get(s as usize).copied().unwrap_or(true)
    }

    /// `tb_empty` of slot `s`; a nonexistent slot (`NONE` included) reads 1.
    fn tb_empty(&self, i: &Inputs, s: u64) -> bool {
        i.tb_empty.get(s as usize).copied().unwrap_or(true)
    }

    /// The stored next count of slot `s` (0 for a slot without a counter).
    fn pend_nx(&self, s: u64) -> u64 {
        self.pend_nx.get(s as usize).copied().unwrap_or(0)
    }

    /// This cycle's `acq`, `gnt` and `nack` alone: they read only the requests and the
    /// registered locks, not `done` / `tb_empty`, so an SM top can learn which instructions
    /// issue before their relssp / exit events are known (§2.1 in-cycle order).
    pub fn grant(&mut self, i: &Inputs, o: &mut Outputs) {
        let n = i.rq_valid.len();
        // own / want per port; an invalid port asks for nothing.
        for p in 0..n {
            let s = i.rq_slot[p];
            let (valid, owner) = self.lock(self.pair(i, s));
            let needs = i.rq_valid[p] && i.needs_lock[p];
            self.own[p] = needs && valid && owner == s;
            self.want[p] = needs && !valid;
        }
        // acq: the lowest slot among the ports wanting the same pair wins (same-cycle race).
        for p in 0..n {
            let (s, k) = (i.rq_slot[p], self.pair(i, i.rq_slot[p]));
            let lowest = (0..n)
                .filter(|&q| self.want[q] && self.pair(i, i.rq_slot[q]) == k)
                .map(|q| i.rq_slot[q])
                .min();
            o.acq[p] = self.want[p] && lowest == Some(s);
            o.gnt[p] = i.rq_valid[p] && (!i.needs_lock[p] || self.own[p] || o.acq[p]);
            o.nack[p] = i.rq_valid[p] && !o.gnt[p];
        }
    }

    /// One cycle: writes this cycle's outputs into `o`, then takes the clock edge.
    pub fn step(&mut self, i: &Inputs, o: &mut Outputs) {
        let n = i.rq_valid.len();
        // Moore outputs: the state at the start of the cycle.
        o.lock_valid.copy_from_slice(&self.lock_valid);
        o.lock_owner.copy_from_slice(&self.lock_owner);
        o.pend.copy_from_slice(&self.pend);
        o.err_proto = self.err_proto;
        o.err_pend = self.err_pend;

        self.grant(i, o);

        // pend_nx, exact, then stored modulo 2^PEND_W; err_pend on overflow or underflow.
        let mut err_pend = self.err_pend;
        for s in 0..self.t {
            let issued = (0..n)
                .filter(|&p| o.gnt[p] && i.needs_lock[p] && i.rq_slot[p] == s as u64)
                .count() as i64;
            let completed = (0..n)
                .filter(|&p| i.cpl_valid[p] && i.cpl_slot[p] == s as u64)
                .count() as i64;
            let exact = self.pend[s] as i64 + issued - completed;
            let modulus = 1i64 << self.pend_w;
            err_pend |= exact < 0 || exact >= modulus;
            self.pend_nx[s] = exact.rem_euclid(modulus) as u64;
        }

        // Release and drain, per held lock.
        self.lock_valid_nx.copy_from_slice(&self.lock_valid);
        self.lock_owner_nx.copy_from_slice(&self.lock_owner);
        o.rel_fire.fill(false);
        o.xfer.fill(false);
        for k in 0..self.kp {
            if !self.lock_valid[k] {
                continue;
            }
            let owner = self.lock_owner[k];
            let o2 = self.partner(i, owner);
            if self.done(i, owner) && self.pend_nx(owner) == 0 {
                if let Some(f) = o.rel_fire.get_mut(owner as usize) {
                    *f = true;
                }
                if self.tb_empty(i, owner)
                    && self.policy == Policy::Transfer
                    && !self.tb_empty(i, o2)
                {
                    self.lock_owner_nx[k] = o2;
                    if let Some(x) = o.xfer.get_mut(owner as usize) {
                        *x = true;
                    }
                } else {
                    self.lock_valid_nx[k] = false;
                }
            }
        }

        // Acquire (a pair index ≥ KP has no entry: the write is dropped).
        let mut err_proto = self.err_proto;
        for p in 0..n {
            if !o.acq[p] {
                continue;
            }
            let s = i.rq_slot[p];
            let k = self.pair(i, s);
            if k < self.kp {
                self.lock_valid_nx[k] = true;
                self.lock_owner_nx[k] = s;
            }
            if self.done(i, s) {
                err_proto = true;
            }
        }

        // The configuration write wins over every other update of its entry.
        let k = i.cfg_lock_k as usize;
        if i.cfg_lock_we && k < self.kp {
            self.lock_valid_nx[k] = i.cfg_lock_valid;
            self.lock_owner_nx[k] = i.cfg_lock_owner;
        }

        // slot_idle from the next lock state.
        for s in 0..self.t {
            let k = self.pair(i, s as u64);
            let holds = k < self.kp && self.lock_valid_nx[k] && self.lock_owner_nx[k] == s as u64;
            o.slot_idle[s] = i.tb_empty[s] && self.pend_nx[s] == 0 && !holds;
        }

        // The clock edge (synchronous, active-high reset).
        if i.reset {
            self.lock_valid.fill(false);
            self.lock_owner.fill(0);
            self.pend.fill(0);
            self.err_proto = false;
            self.err_pend = false;
        } else {
            self.lock_valid.copy_from_slice(&self.lock_valid_nx);
            self.lock_owner.copy_from_slice(&self.lock_owner_nx);
            self.pend.copy_from_slice(&self.pend_nx);
            self.err_proto = err_proto;
            self.err_pend = err_pend;
        }
    }
}

/// The lock table's behavioral model on its ports: the same buffers as the RTL backends.
pub struct Model {
    table: LockTable,
    io: Io,
    inputs: Inputs,
    outputs: Outputs,
}

impl BlockModel for Model {
    type Params = Params;
    fn new(p: &Params, layout: &Layout) -> Model {
        Model {
            table: LockTable::new(p),
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
        self.io.read_inputs(inputs, &mut self.inputs);
        self.table.step(&self.inputs, &mut self.outputs);
        self.io.write_outputs(&self.outputs, outputs);
    }
}
