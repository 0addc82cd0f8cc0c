//! Behavioral model of the `LockTable` (docs/scratchpad-sharing.md §2.4; Jatala et al., seed
//! 001, §3–§4, §6.2), written from the spec's pseudo-code, independently of the RTL: plain
//! integers and arrays, one loop per line of the pseudo-code.
//!
//! [`LockTable`] is the state machine on typed [`Inputs`] / [`Outputs`] (reusable by an SM
//! model); [`Model`] puts it on the block's ports for co-simulation. Nothing allocates per cycle.

use crate::harness::layout::{Layout, Slot};
use crate::harness::sim::Simulator;
use smrtl_hdl::blocks::lock_table::{port, Params};
use smrtl_hdl::blocks::sharing::Policy;
use smrtl_hdl::netlist::mask;

/// One cycle's inputs (spec §2.4), per issue port `p` and per slot `s`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inputs {
    pub reset: bool,
    pub rq_valid: Vec<bool>,
    pub rq_slot: Vec<u64>,
    pub needs_lock: Vec<bool>,
    pub shsm: bool,
    /// ShTB: each slot's partner (TW bits), `NONE` = unshared.
    pub shtb: Vec<u64>,
    pub cpl_valid: Vec<bool>,
    pub cpl_slot: Vec<u64>,
    pub done: Vec<bool>,
    pub tb_empty: Vec<bool>,
    pub cfg_lock_we: bool,
    pub cfg_lock_k: u64,
    pub cfg_lock_valid: bool,
    pub cfg_lock_owner: u64,
}

impl Inputs {
    /// Quiet inputs of the right sizes: no request, no completion, every slot unshared, not
    /// done, not empty.
    pub fn idle(p: &Params) -> Inputs {
        let (n, t) = (p.nsched as usize, p.slots as usize);
        Inputs {
            rq_valid: vec![false; n],
            rq_slot: vec![0; n],
            needs_lock: vec![false; n],
            shtb: vec![p.shape().none(); t],
            cpl_valid: vec![false; n],
            cpl_slot: vec![0; n],
            done: vec![false; t],
            tb_empty: vec![false; t],
            ..Inputs::default()
        }
    }
}

/// One cycle's outputs (spec §2.4): Mealy per port and per slot, Moore lock state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outputs {
    pub gnt: Vec<bool>,
    pub nack: Vec<bool>,
    pub acq: Vec<bool>,
    pub rel_fire: Vec<bool>,
    pub xfer: Vec<bool>,
    pub slot_idle: Vec<bool>,
    pub lock_valid: Vec<bool>,
    pub lock_owner: Vec<u64>,
    pub pend: Vec<u64>,
    pub err_proto: bool,
    pub err_pend: bool,
}

impl Outputs {
    pub fn new(p: &Params) -> Outputs {
        let (n, t, kp) = (p.nsched as usize, p.slots as usize, p.shape().kp());
        Outputs {
            gnt: vec![false; n],
            nack: vec![false; n],
            acq: vec![false; n],
            rel_fire: vec![false; t],
            xfer: vec![false; t],
            slot_idle: vec![false; t],
            lock_valid: vec![false; kp],
            lock_owner: vec![0; kp],
            pend: vec![0; t],
            err_proto: false,
            err_pend: false,
        }
    }
}

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

/// The lock table's ports, resolved once from the layout; reads and writes typed cycles.
#[derive(Clone, Debug)]
pub struct Ports {
    t: usize,
    n: usize,
    kp: usize,
    sw: usize,
    tw: usize,
    pend_w: usize,
    layout: Layout,
}

impl Ports {
    pub fn new(p: &Params, layout: &Layout) -> Ports {
        let s = p.shape();
        Ports {
            t: p.slots as usize,
            n: p.nsched as usize,
            kp: s.kp(),
            sw: s.sw(),
            tw: s.tw(),
            pend_w: p.pend_w as usize,
            layout: layout.clone(),
        }
    }

    fn input(&self, name: &str) -> &Slot {
        self.layout.in_slot(name)
    }

    fn output(&self, name: &str) -> &Slot {
        self.layout.out_slot(name)
    }

    /// Decodes one input buffer into `i` (sized by [`Inputs::idle`]).
    pub fn read_inputs(&self, buf: &[u64], i: &mut Inputs) {
        let bit = |name: &str, at: usize| self.input(name).field(buf, at, 1) == 1;
        let field = |name: &str, at: usize, w: usize| self.input(name).field(buf, at * w, w);
        i.reset = bit("reset", 0);
        for p in 0..self.n {
            i.rq_valid[p] = bit(port::RQ_VALID, p);
            i.rq_slot[p] = field(port::RQ_SLOT, p, self.sw);
            i.needs_lock[p] = bit(port::NEEDS_LOCK, p);
            i.cpl_valid[p] = bit(port::CPL_VALID, p);
            i.cpl_slot[p] = field(port::CPL_SLOT, p, self.sw);
        }
        i.shsm = bit(port::SHSM, 0);
        for s in 0..self.t {
            i.shtb[s] = field(port::SHTB, s, self.tw);
            i.done[s] = bit(port::DONE, s);
            i.tb_empty[s] = bit(port::TB_EMPTY, s);
        }
        i.cfg_lock_we = bit(port::CFG_LOCK_WE, 0);
        i.cfg_lock_k = self.input(port::CFG_LOCK_K).get(buf);
        i.cfg_lock_valid = bit(port::CFG_LOCK_VALID, 0);
        i.cfg_lock_owner = self.input(port::CFG_LOCK_OWNER).get(buf);
    }

    /// Encodes `i` into an input buffer (values cut to the port widths).
    pub fn write_inputs(&self, i: &Inputs, buf: &mut [u64]) {
        let mut set = |name: &str, at: usize, w: usize, v: u64| {
            self.input(name).set_field(buf, at * w, w, v & mask(w));
        };
        set("reset", 0, 1, i.reset as u64);
        for p in 0..self.n {
            set(port::RQ_VALID, p, 1, i.rq_valid[p] as u64);
            set(port::RQ_SLOT, p, self.sw, i.rq_slot[p]);
            set(port::NEEDS_LOCK, p, 1, i.needs_lock[p] as u64);
            set(port::CPL_VALID, p, 1, i.cpl_valid[p] as u64);
            set(port::CPL_SLOT, p, self.sw, i.cpl_slot[p]);
        }
        set(port::SHSM, 0, 1, i.shsm as u64);
        for s in 0..self.t {
            set(port::SHTB, s, self.tw, i.shtb[s]);
            set(port::DONE, s, 1, i.done[s] as u64);
            set(port::TB_EMPTY, s, 1, i.tb_empty[s] as u64);
        }
        let kw = self.input(port::CFG_LOCK_K).width;
        set(port::CFG_LOCK_WE, 0, 1, i.cfg_lock_we as u64);
        set(port::CFG_LOCK_K, 0, kw, i.cfg_lock_k);
        set(port::CFG_LOCK_VALID, 0, 1, i.cfg_lock_valid as u64);
        set(port::CFG_LOCK_OWNER, 0, self.sw, i.cfg_lock_owner);
    }

    /// Encodes `o` into an output buffer.
    pub fn write_outputs(&self, o: &Outputs, buf: &mut [u64]) {
        let mut set = |name: &str, at: usize, w: usize, v: u64| {
            self.output(name).set_field(buf, at * w, w, v);
        };
        for p in 0..self.n {
            set(port::GNT, p, 1, o.gnt[p] as u64);
            set(port::NACK, p, 1, o.nack[p] as u64);
            set(port::ACQ, p, 1, o.acq[p] as u64);
        }
        for s in 0..self.t {
            set(port::REL_FIRE, s, 1, o.rel_fire[s] as u64);
            set(port::XFER, s, 1, o.xfer[s] as u64);
            set(port::SLOT_IDLE, s, 1, o.slot_idle[s] as u64);
            set(port::PEND, s, self.pend_w, o.pend[s]);
        }
        for k in 0..self.kp {
            set(port::LOCK_VALID, k, 1, o.lock_valid[k] as u64);
            set(port::LOCK_OWNER, k, self.sw, o.lock_owner[k]);
        }
        set(port::ERR_PROTO, 0, 1, o.err_proto as u64);
        set(port::ERR_PEND, 0, 1, o.err_pend as u64);
    }

    /// Decodes one output buffer into `o` (sized by [`Outputs::new`]).
    pub fn read_outputs(&self, buf: &[u64], o: &mut Outputs) {
        let field = |name: &str, at: usize, w: usize| self.output(name).field(buf, at * w, w);
        let bit = |name: &str, at: usize| field(name, at, 1) == 1;
        for p in 0..self.n {
            o.gnt[p] = bit(port::GNT, p);
            o.nack[p] = bit(port::NACK, p);
            o.acq[p] = bit(port::ACQ, p);
        }
        for s in 0..self.t {
            o.rel_fire[s] = bit(port::REL_FIRE, s);
            o.xfer[s] = bit(port::XFER, s);
            o.slot_idle[s] = bit(port::SLOT_IDLE, s);
            o.pend[s] = field(port::PEND, s, self.pend_w);
        }
        for k in 0..self.kp {
            o.lock_valid[k] = bit(port::LOCK_VALID, k);
            o.lock_owner[k] = field(port::LOCK_OWNER, k, self.sw);
        }
        o.err_proto = bit(port::ERR_PROTO, 0);
        o.err_pend = bit(port::ERR_PEND, 0);
    }
}

/// The lock table's behavioral model on its ports: the same buffers as the RTL backends.
pub struct Model {
    table: LockTable,
    ports: Ports,
    inputs: Inputs,
    outputs: Outputs,
}

impl Model {
    pub fn new(p: &Params, layout: &Layout) -> Model {
        Model {
            table: LockTable::new(p),
            ports: Ports::new(p, layout),
            inputs: Inputs::idle(p),
            outputs: Outputs::new(p),
        }
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        self.ports.read_inputs(inputs, &mut self.inputs);
        self.table.step(&self.inputs, &mut self.outputs);
        self.ports.write_outputs(&self.outputs, outputs);
    }
}
