//! `sharing_core`'s block model on its ports (docs/scratchpad-sharing.md §2.1, §6): [`Core`], its
//! blocks' models (`share_cfg`, `owner_class`, `warp_scheduler`, `sp_access_unit`,
//! `lock_table`, `relssp_unit`) composed in the spec's in-cycle order (§2.1: class → pick →
//! access check → grant/NACK → relssp/exit events of issued instructions → `done` → release →
//! edge), behind one typed interface ([`CoreIn`] / [`CoreOut`], encoded to the port buffers by
//! [`CorePorts`]). [`Model`] puts it on the ports. The SM around it is
//! [`crate::sm::sharing_sm`].

use crate::blocks::lock_table::{self, LockTable};
use crate::blocks::owner_class::{classify, Locks};
use crate::blocks::relssp_unit::{Event, Relssp, WarpIn};
use crate::blocks::share_cfg::{CfgWrite, Table};
use crate::blocks::sp_access_unit::access;
use crate::blocks::warp_scheduler;
use crate::harness::layout::Layout;
use crate::harness::sim::Simulator;
use smrtl_hdl::blocks::lock_table::port as lt_port;
use smrtl_hdl::blocks::owner_class::port as oc_port;
use smrtl_hdl::blocks::relssp_unit::port as rs_port;
use smrtl_hdl::blocks::share_cfg;
use smrtl_hdl::blocks::sharing::Class;
use smrtl_hdl::blocks::sharing_core::{port, Params as CoreParams};
use smrtl_hdl::blocks::sp_access_unit::port as sa_port;
use smrtl_hdl::blocks::warp_scheduler::port as ws_port;

/// What the SM side tells the core about a scheduler's pick, in the same cycle (§5): the
/// instruction is a shared access, a relssp, carries the exit flag; its lanes and offsets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dsc {
    pub shared: bool,
    pub rel: bool,
    pub exit: bool,
    pub mask: u64,
    /// One byte offset per lane (LANES of them).
    pub off: Vec<u64>,
}

/// One cycle's inputs of `sharing_core` (hdl/src/sharing_core.rs), typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreIn {
    pub reset: bool,
    pub cfg: CfgWrite,
    /// `cfg_lock_*`: preset or clear lock `k` as `(k, valid, owner)`.
    pub lock_cfg: Option<(u64, bool, u64)>,
    pub warps: Vec<WarpIn>,
    pub ready: Vec<bool>,
    pub age: Vec<u64>,
    /// Per scheduler.
    pub dsc: Vec<Dsc>,
    /// Per scheduler: `(cpl_valid, cpl_slot)`.
    pub cpl: Vec<(bool, u64)>,
}

impl CoreIn {
    /// Quiet inputs sized for `p`.
    pub fn new(p: &CoreParams) -> CoreIn {
        let s = &p.shape;
        let (w, ns) = (s.warps as usize, s.nsched as usize);
        CoreIn {
            reset: false,
            cfg: CfgWrite::default(),
            lock_cfg: None,
            warps: vec![WarpIn::default(); w],
            ready: vec![false; w],
            age: vec![0; w],
            dsc: vec![
                Dsc {
                    off: vec![0; s.lanes as usize],
                    ..Dsc::default()
                };
                ns
            ],
            cpl: vec![(false, 0); ns],
        }
    }
}

/// One cycle's outputs of `sharing_core`, typed: Moore values are the state at the start of
/// the cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoreOut {
    pub iss_valid: Vec<bool>,
    pub iss_idx: Vec<u64>,
    pub issued: Vec<bool>,
    pub rq_slot: Vec<u64>,
    pub last_valid: Vec<bool>,
    pub last_idx: Vec<u64>,
    pub table: Table,
    pub err_cfg: bool,
    pub owner_bit: Vec<bool>,
    pub warp_class: Vec<Class>,
    pub needs_lock: Vec<bool>,
    pub pair: Vec<u64>,
    /// Per scheduler, per lane.
    pub phys: Vec<u64>,
    pub lock: lock_table::Outputs,
    /// Bit `s` for slot `s`.
    pub done: u64,
    pub tb_empty: u64,
    pub rbits: Vec<u64>,
}

/// `sharing_core` as its blocks' models wired in the spec's in-cycle order (§2.1): the same
/// composition as the RTL top, so the SM model and every RTL backend see one interface.
pub struct Core {
    p: CoreParams,
    sched: smrtl_hdl::blocks::warp_scheduler::Params,
    table: Table,
    locks: LockTable,
    relssp: Relssp,
    last: Vec<Option<usize>>,
    // Scratch, sized once.
    lock_view: Locks,
    views: Vec<warp_scheduler::Warp>,
    lock_in: lock_table::Inputs,
    events: Vec<Event>,
}

impl Core {
    /// The core after reset.
    pub fn new(p: &CoreParams) -> Core {
        let s = &p.shape;
        let lt: smrtl_hdl::blocks::lock_table::Params = p.child();
        Core {
            p: p.clone(),
            sched: p.child(),
            table: Table::new(s),
            locks: LockTable::new(&lt),
            relssp: Relssp::new(&p.child()),
            last: vec![None; s.nsched as usize],
            lock_view: Locks {
                valid: vec![false; s.kp()],
                owner: vec![0; s.kp()],
            },
            views: vec![warp_scheduler::Warp::default(); s.ws()],
            lock_in: lock_table::Inputs::idle(&lt),
            events: vec![Event::default(); s.nsched as usize],
        }
    }

    /// Outputs sized for the core.
    pub fn outputs(&self) -> CoreOut {
        let s = &self.p.shape;
        let (w, ns, lanes) = (s.warps as usize, s.nsched as usize, s.lanes as usize);
        CoreOut {
            iss_valid: vec![false; ns],
            iss_idx: vec![0; ns],
            issued: vec![false; ns],
            rq_slot: vec![0; ns],
            last_valid: vec![false; ns],
            last_idx: vec![0; ns],
            table: self.table.clone(),
            err_cfg: false,
            owner_bit: vec![false; w],
            warp_class: vec![Class::Unshared; w],
            needs_lock: vec![false; ns],
            pair: vec![0; ns],
            phys: vec![0; ns * lanes],
            lock: lock_table::Outputs::new(&self.p.child()),
            done: 0,
            tb_empty: 0,
            rbits: vec![0; w],
        }
    }

    /// First half of a cycle: the Moore outputs, the warp classes from the registered locks
    /// (§2.5) and each scheduler's pick (§4). Reads `warps`, `ready` and `age` only.
    pub fn pick(&mut self, i: &CoreIn, o: &mut CoreOut) {
        let ns = self.p.shape.nsched as usize;
        o.table.clone_from(&self.table);
        o.err_cfg = self.table.err_cfg();
        for k in 0..self.lock_view.valid.len() {
            let (v, owner) = self.locks.lock(k);
            self.lock_view.valid[k] = v;
            self.lock_view.owner[k] = owner;
        }
        for (w, x) in i.warps.iter().enumerate() {
            let (bit, class) = classify(
                &self.table,
                &self.lock_view,
                self.p.free_class,
                x.valid,
                x.slot as u64,
            );
            o.owner_bit[w] = bit;
            o.warp_class[w] = class;
        }
        for q in 0..ns {
            o.last_valid[q] = self.last[q].is_some();
            o.last_idx[q] = self.last[q].unwrap_or(0) as u64;
            for (j, v) in self.views.iter_mut().enumerate() {
                let w = j * ns + q;
                *v = warp_scheduler::Warp {
                    ready: i.ready[w],
                    cls: o.warp_class[w].code(),
                    age: i.age[w],
                };
            }
            let pick = warp_scheduler::pick(&self.sched, self.last[q], &self.views);
            o.iss_valid[q] = pick.is_some();
            o.iss_idx[q] = pick.unwrap_or(0) as u64;
            let w = o.iss_idx[q] as usize * ns + q;
            o.rq_slot[q] = i.warps[w].slot as u64;
        }
    }

    /// Second half: access check (§2.3), grant / NACK (§2.4), the relssp and exit events of the
    /// issued instructions (§3), `done`, release and drain; then the clock edge.
    pub fn finish(&mut self, i: &CoreIn, o: &mut CoreOut) {
        let s = &self.p.shape;
        let (ns, lanes, aw) = (s.nsched as usize, s.lanes as usize, s.aw());
        let li = &mut self.lock_in;
        li.reset = i.reset;
        li.shsm = self.table.shsm;
        li.shtb.copy_from_slice(&self.table.shtb);
        for q in 0..ns {
            let d = &i.dsc[q];
            let valid = o.iss_valid[q] && d.shared;
            let a = access(
                &self.table,
                aw,
                valid,
                o.rq_slot[q],
                d.mask,
                &d.off,
                &mut o.phys[q * lanes..(q + 1) * lanes],
            );
            o.needs_lock[q] = a.needs_lock;
            o.pair[q] = a.pair;
            li.rq_valid[q] = valid;
            li.rq_slot[q] = o.rq_slot[q];
            li.needs_lock[q] = a.needs_lock;
            (li.cpl_valid[q], li.cpl_slot[q]) = i.cpl[q];
        }
        self.locks.grant(li, &mut o.lock);
        for q in 0..ns {
            let d = &i.dsc[q];
            o.issued[q] = o.iss_valid[q] && (!li.rq_valid[q] || o.lock.gnt[q]);
            self.events[q] = Event {
                valid: o.issued[q] && (d.rel || d.exit),
                rel: d.rel,
                exit: d.exit,
                warp: o.iss_idx[q] as usize * ns + q,
                mask: d.mask,
            };
        }
        let slots = self.relssp.eval(&i.warps, &self.events);
        (o.done, o.tb_empty) = (slots.done, slots.tb_empty);
        for sl in 0..li.done.len() {
            li.done[sl] = slots.done >> sl & 1 == 1;
            li.tb_empty[sl] = slots.tb_empty >> sl & 1 == 1;
        }
        (
            li.cfg_lock_we,
            li.cfg_lock_k,
            li.cfg_lock_valid,
            li.cfg_lock_owner,
        ) = match i.lock_cfg {
            Some((k, v, owner)) => (true, k, v, owner),
            None => (false, 0, false, 0),
        };
        for (w, r) in o.rbits.iter_mut().enumerate() {
            *r = self.relssp.rbits(w);
        }
        self.locks.step(li, &mut o.lock);
        // --- the edge ---
        self.relssp.tick(i.reset);
        if i.reset {
            self.table.reset();
            self.last.fill(None);
        } else {
            self.table.write(&i.cfg);
            for q in 0..ns {
                if o.iss_valid[q] {
                    self.last[q] = Some(o.iss_idx[q] as usize);
                }
            }
        }
    }

    /// The registered configuration.
    pub fn table(&self) -> &Table {
        &self.table
    }
}

/// Where each of the core's ports sits in the flat buffers of the RTL backends.
pub struct CorePorts {
    layout: Layout,
    p: CoreParams,
}

impl CorePorts {
    pub fn new(p: &CoreParams, layout: &Layout) -> CorePorts {
        CorePorts {
            layout: layout.clone(),
            p: p.clone(),
        }
    }

    fn put(&self, buf: &mut [u64], name: &str, i: usize, width: usize, v: u64) {
        self.layout
            .in_slot(name)
            .set_field(buf, i * width, width, v);
    }

    fn get(&self, buf: &[u64], name: &str, i: usize, width: usize) -> u64 {
        self.layout.in_slot(name).field(buf, i * width, width)
    }

    /// Writes `i` into an input buffer (every input port).
    pub fn write_inputs(&self, i: &CoreIn, buf: &mut [u64]) {
        let s = &self.p.shape;
        let (sw, tw, aw, kw, lanes) = (s.sw(), s.tw(), s.aw(), s.kw(), s.lanes as usize);
        let age_w = self.p.age_w as usize;
        buf.fill(0);
        let b = |v: bool| v as u64;
        self.put(buf, "reset", 0, 1, b(i.reset));
        if let Some(v) = i.cfg.shsm {
            self.put(buf, share_cfg::port::CFG_SHSM_WE, 0, 1, 1);
            self.put(buf, share_cfg::port::CFG_SHSM, 0, 1, b(v));
        }
        if let Some(u) = i.cfg.u {
            self.put(buf, share_cfg::port::CFG_U_WE, 0, 1, 1);
            self.put(buf, share_cfg::port::CFG_U, 0, aw, u);
        }
        if let Some((slot, partner, base)) = i.cfg.slot {
            self.put(buf, share_cfg::port::CFG_SLOT_WE, 0, 1, 1);
            self.put(buf, share_cfg::port::CFG_SLOT, 0, sw, slot);
            self.put(buf, share_cfg::port::CFG_PARTNER, 0, tw, partner);
            self.put(buf, share_cfg::port::CFG_BASE, 0, aw, base);
        }
        if let Some((k, v, owner)) = i.lock_cfg {
            self.put(buf, lt_port::CFG_LOCK_WE, 0, 1, 1);
            self.put(buf, lt_port::CFG_LOCK_K, 0, kw, k);
            self.put(buf, lt_port::CFG_LOCK_VALID, 0, 1, b(v));
            self.put(buf, lt_port::CFG_LOCK_OWNER, 0, sw, owner);
        }
        for (w, x) in i.warps.iter().enumerate() {
            self.put(buf, rs_port::WARP_VALID, w, 1, b(x.valid));
            self.put(buf, rs_port::WARP_SLOT, w, sw, x.slot as u64);
            self.put(buf, rs_port::LIVE, w, lanes, x.live);
            self.put(buf, rs_port::WARP_LAUNCH, w, 1, b(x.launch));
            self.put(buf, port::READY, w, 1, b(i.ready[w]));
            self.put(buf, port::AGE, w, age_w, i.age[w]);
        }
        for (q, d) in i.dsc.iter().enumerate() {
            self.put(buf, port::DSC_SHARED, q, 1, b(d.shared));
            self.put(buf, port::DSC_REL, q, 1, b(d.rel));
            self.put(buf, port::DSC_EXIT, q, 1, b(d.exit));
            self.put(buf, port::DSC_MASK, q, lanes, d.mask);
            for (l, &o) in d.off.iter().enumerate() {
                self.put(buf, port::DSC_OFF, q * lanes + l, aw, o);
            }
            self.put(buf, lt_port::CPL_VALID, q, 1, b(i.cpl[q].0));
            self.put(buf, lt_port::CPL_SLOT, q, sw, i.cpl[q].1);
        }
    }

    /// Reads an input buffer into `i` (what the port-level model does each cycle).
    pub fn read_inputs(&self, buf: &[u64], i: &mut CoreIn) {
        let s = &self.p.shape;
        let (sw, tw, aw, kw, lanes) = (s.sw(), s.tw(), s.aw(), s.kw(), s.lanes as usize);
        let age_w = self.p.age_w as usize;
        let on = |name: &str, k: usize| self.get(buf, name, k, 1) == 1;
        i.reset = on("reset", 0);
        i.cfg = CfgWrite {
            shsm: on(share_cfg::port::CFG_SHSM_WE, 0).then(|| on(share_cfg::port::CFG_SHSM, 0)),
            u: on(share_cfg::port::CFG_U_WE, 0)
                .then(|| self.get(buf, share_cfg::port::CFG_U, 0, aw)),
            slot: on(share_cfg::port::CFG_SLOT_WE, 0).then(|| {
                (
                    self.get(buf, share_cfg::port::CFG_SLOT, 0, sw),
                    self.get(buf, share_cfg::port::CFG_PARTNER, 0, tw),
                    self.get(buf, share_cfg::port::CFG_BASE, 0, aw),
                )
            }),
        };
        i.lock_cfg = on(lt_port::CFG_LOCK_WE, 0).then(|| {
            (
                self.get(buf, lt_port::CFG_LOCK_K, 0, kw),
                on(lt_port::CFG_LOCK_VALID, 0),
                self.get(buf, lt_port::CFG_LOCK_OWNER, 0, sw),
            )
        });
        for w in 0..i.warps.len() {
            i.warps[w] = WarpIn {
                valid: on(rs_port::WARP_VALID, w),
                slot: self.get(buf, rs_port::WARP_SLOT, w, sw) as usize,
                live: self.get(buf, rs_port::LIVE, w, lanes),
                launch: on(rs_port::WARP_LAUNCH, w),
            };
            i.ready[w] = on(port::READY, w);
            i.age[w] = self.get(buf, port::AGE, w, age_w);
        }
        for q in 0..i.dsc.len() {
            let d = &mut i.dsc[q];
            d.shared = on(port::DSC_SHARED, q);
            d.rel = on(port::DSC_REL, q);
            d.exit = on(port::DSC_EXIT, q);
            d.mask = self.get(buf, port::DSC_MASK, q, lanes);
            for l in 0..lanes {
                d.off[l] = self.get(buf, port::DSC_OFF, q * lanes + l, aw);
            }
            i.cpl[q] = (
                on(lt_port::CPL_VALID, q),
                self.get(buf, lt_port::CPL_SLOT, q, sw),
            );
        }
    }

    /// Writes `o` into an output buffer (every output port).
    pub fn write_outputs(&self, o: &CoreOut, buf: &mut [u64]) {
        let s = &self.p.shape;
        let (sw, tw, aw, kw, lanes) = (s.sw(), s.tw(), s.aw(), s.kw(), s.lanes as usize);
        let (wsw, pend_w) = (s.wsw(), self.p.pend_w as usize);
        let slot = |name: &str| self.layout.out_slot(name);
        buf.fill(0);
        let bits = |buf: &mut [u64], name: &str, v: &[bool]| {
            let sl = slot(name);
            for (k, &x) in v.iter().enumerate() {
                sl.set_field(buf, k, 1, x as u64);
            }
        };
        let words = |buf: &mut [u64], name: &str, v: &[u64], width: usize| {
            let sl = slot(name);
            for (k, &x) in v.iter().enumerate() {
                sl.set_field(buf, k * width, width, x);
            }
        };
        bits(buf, ws_port::ISS_VALID, &o.iss_valid);
        words(buf, ws_port::ISS_IDX, &o.iss_idx, wsw);
        bits(buf, port::ISSUED, &o.issued);
        words(buf, port::RQ_SLOT, &o.rq_slot, sw);
        bits(buf, ws_port::LAST_VALID, &o.last_valid);
        words(buf, ws_port::LAST_IDX, &o.last_idx, wsw);
        slot(share_cfg::port::SHSM).set(buf, o.table.shsm as u64);
        slot(share_cfg::port::U).set(buf, o.table.u);
        words(buf, share_cfg::port::SHTB, &o.table.shtb, tw);
        words(buf, share_cfg::port::BASE, &o.table.base, aw);
        slot(share_cfg::port::ERR_CFG).set(buf, o.err_cfg as u64);
        bits(buf, oc_port::OWNER_BIT, &o.owner_bit);
        let cls = slot(oc_port::WARP_CLASS);
        for (w, c) in o.warp_class.iter().enumerate() {
            cls.set_field(buf, w * Class::BITS, Class::BITS, c.code());
        }
        bits(buf, sa_port::NEEDS_LOCK, &o.needs_lock);
        words(buf, sa_port::PAIR, &o.pair, kw);
        words(buf, sa_port::PHYS, &o.phys, aw);
        let l = &o.lock;
        bits(buf, lt_port::GNT, &l.gnt);
        bits(buf, lt_port::NACK, &l.nack);
        bits(buf, lt_port::ACQ, &l.acq);
        bits(buf, lt_port::REL_FIRE, &l.rel_fire);
        bits(buf, lt_port::XFER, &l.xfer);
        bits(buf, lt_port::SLOT_IDLE, &l.slot_idle);
        bits(buf, lt_port::LOCK_VALID, &l.lock_valid);
        words(buf, lt_port::LOCK_OWNER, &l.lock_owner, sw);
        words(buf, lt_port::PEND, &l.pend, pend_w);
        slot(lt_port::ERR_PROTO).set(buf, l.err_proto as u64);
        slot(lt_port::ERR_PEND).set(buf, l.err_pend as u64);
        slot(rs_port::DONE).set(buf, o.done);
        slot(rs_port::TB_EMPTY).set(buf, o.tb_empty);
        words(buf, rs_port::RBITS, &o.rbits, lanes);
    }
}

/// `sharing_core`'s model on its ports: the core on the same buffers as the RTL backends.
pub struct Model {
    core: Core,
    ports: CorePorts,
    inp: CoreIn,
    out: CoreOut,
}

impl Model {
    pub fn new(p: &CoreParams, layout: &Layout) -> Model {
        let core = Core::new(p);
        let out = core.outputs();
        Model {
            core,
            ports: CorePorts::new(p, layout),
            inp: CoreIn::new(p),
            out,
        }
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        self.ports.read_inputs(inputs, &mut self.inp);
        self.core.pick(&self.inp, &mut self.out);
        self.core.finish(&self.inp, &mut self.out);
        self.ports.write_outputs(&self.out, outputs);
    }
}
