//! `sharing_core`'s block model on its ports (docs/scratchpad-sharing.md §2.1, §6): [`Core`], its
//! blocks' models (`share_cfg`, `owner_class`, `warp_scheduler`, `sp_access_unit`,
//! `lock_table`, `relssp_unit`) composed in the spec's in-cycle order (§2.1: class → pick →
//! access check → grant/NACK → relssp/exit events of issued instructions → `done` → release →
//! edge), on the core's typed cycle ([`Inputs`] / [`Outputs`], as the port declaration gives
//! them; the SM model and every RTL backend see this one interface). Each block model is driven
//! through its own typed inputs, filled from the core's the way the RTL top wires them.
//! [`Model`] puts the core on the ports. The SM around it is [`crate::sm::sharing_sm`].

use crate::blocks::lock_table::LockTable;
use crate::blocks::owner_class::classify;
use crate::blocks::relssp_unit::Relssp;
use crate::blocks::share_cfg::Table;
use crate::blocks::sp_access_unit::access;
use crate::blocks::warp_scheduler;
use crate::{BlockModel, Layout, Simulator};
use smrtl_hdl::blocks::lock_table::port as lt;
use smrtl_hdl::blocks::relssp_unit::port as rs;
pub use smrtl_hdl::blocks::sharing_core::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::sharing_core::Params as CoreParams;
use smrtl_hdl::blocks::warp_scheduler::port as ws;

/// `sharing_core` as its blocks' models wired in the spec's in-cycle order (§2.1): the same
/// composition as the RTL top.
pub struct Core {
    p: CoreParams,
    sched: smrtl_hdl::blocks::warp_scheduler::Params,
    table: Table,
    locks: LockTable,
    relssp: Relssp,
    /// Each scheduler's state, and the state after this cycle's edge.
    sched_state: Vec<warp_scheduler::State>,
    sched_next: Vec<warp_scheduler::State>,
    // The blocks' typed cycles, sized once.
    /// One scheduler's warps, as its ports see them.
    sched_in: ws::Inputs,
    lock_in: lt::Inputs,
    lock_out: lt::Outputs,
    rel_in: rs::Inputs,
    rel_out: rs::Outputs,
}

impl Core {
    /// The core after reset.
    pub fn new(p: &CoreParams) -> Core {
        let s = &p.shape;
        let (lock, rel) = (p.child(), p.child());
        let fresh = warp_scheduler::State::new(&p.child(), s.ws());
        Core {
            p: p.clone(),
            sched: p.child(),
            table: Table::new(s),
            locks: LockTable::new(&lock),
            relssp: Relssp::new(&rel),
            sched_state: vec![fresh.clone(); s.nsched as usize],
            sched_next: vec![fresh; s.nsched as usize],
            sched_in: ws::Inputs::new(&p.child()),
            lock_in: lt::Inputs::new(&lock),
            lock_out: lt::Outputs::new(&lock),
            rel_in: rs::Inputs::new(&rel),
            rel_out: rs::Outputs::new(&rel),
        }
    }

    /// First half of a cycle: the Moore outputs, the warp classes from the registered locks
    /// (§2.5) and each scheduler's pick (§4). Reads the warps, `ready` and `age` only.
    pub fn pick(&mut self, i: &Inputs, o: &mut Outputs) {
        let ns = self.p.shape.nsched as usize;
        let t = &self.table;
        o.shsm = t.shsm;
        o.u = t.u;
        o.shtb.copy_from_slice(&t.shtb);
        o.base.copy_from_slice(&t.base);
        o.err_cfg = t.err_cfg();
        for w in 0..i.warp_valid.len() {
            let locks = self.locks.locks();
            let free = self.p.free_class;
            let (bit, class) = classify(t, locks, free, i.warp_valid[w], i.warp_slot[w]);
            o.owner_bit[w] = bit;
            o.warp_class[w] = class.code();
        }
        for q in 0..ns {
            let last = self.sched_state[q].last;
            o.last_valid[q] = last.is_some();
            o.last_idx[q] = last.unwrap_or(0) as u64;
            let si = &mut self.sched_in;
            for j in 0..si.ready.len() {
                let w = j * ns + q;
                si.ready[j] = i.ready[w];
                si.cls[j] = o.warp_class[w];
                si.age[j] = i.age[w];
                si.waiting[j] = i.waiting[w];
            }
            let (pick, next) = self.sched_state[q].step(&self.sched, si);
            self.sched_next[q] = next;
            o.iss_valid[q] = pick.is_some();
            o.iss_idx[q] = pick.unwrap_or(0) as u64;
            let w = o.iss_idx[q] as usize * ns + q;
            o.rq_slot[q] = i.warp_slot[w];
        }
    }

    /// Second half: access check (§2.3), grant / NACK (§2.4), the relssp and exit events of the
    /// issued instructions (§3), `done`, release and drain; then the clock edge.
    pub fn finish(&mut self, i: &Inputs, o: &mut Outputs) {
        self.access(i, o);
        self.locks.grant(&self.lock_in, &mut self.lock_out);
        self.events(i, o);
        let (li, ro) = (&mut self.lock_in, &self.rel_out);
        li.done.copy_from_slice(&ro.done);
        li.tb_empty.copy_from_slice(&ro.tb_empty);
        o.done.copy_from_slice(&ro.done);
        o.tb_empty.copy_from_slice(&ro.tb_empty);
        o.rbits.copy_from_slice(&ro.rbits);
        li.cfg_lock_we = i.cfg_lock_we;
        li.cfg_lock_k = i.cfg_lock_k;
        li.cfg_lock_valid = i.cfg_lock_valid;
        li.cfg_lock_owner = i.cfg_lock_owner;
        self.locks.step(li, &mut self.lock_out);
        self.lock_outputs(o);
        self.edge(i);
    }

    /// Each scheduler's pick checked and translated (§2.3), as the lock table's requests.
    fn access(&mut self, i: &Inputs, o: &mut Outputs) {
        let s = &self.p.shape;
        let (lanes, aw) = (s.lanes as usize, s.aw());
        let li = &mut self.lock_in;
        li.reset = i.reset;
        li.shsm = self.table.shsm;
        li.shtb.copy_from_slice(&self.table.shtb);
        for q in 0..o.iss_valid.len() {
            let valid = o.iss_valid[q] && i.dsc_shared[q];
            let at = q * lanes..(q + 1) * lanes;
            let a = access(
                &self.table,
                aw,
                valid,
                o.rq_slot[q],
                i.dsc_mask[q],
                &i.dsc_off[at.clone()],
                &mut o.phys[at],
            );
            o.needs_lock[q] = a.needs_lock;
            o.pair[q] = a.pair;
            li.rq_valid[q] = valid;
            li.rq_slot[q] = o.rq_slot[q];
            li.needs_lock[q] = a.needs_lock;
            li.cpl_valid[q] = i.cpl_valid[q];
            li.cpl_slot[q] = i.cpl_slot[q];
        }
    }

    /// The issued instructions (picked, and granted if shared) and their relssp / exit events
    /// on the release unit (§3): this cycle's `done`, `tb_empty` and `rbits`.
    fn events(&mut self, i: &Inputs, o: &mut Outputs) {
        let ns = o.iss_valid.len();
        let ri = &mut self.rel_in;
        ri.warp_valid.copy_from_slice(&i.warp_valid);
        ri.warp_slot.copy_from_slice(&i.warp_slot);
        ri.live.copy_from_slice(&i.live);
        ri.warp_launch.copy_from_slice(&i.warp_launch);
        for q in 0..ns {
            o.issued[q] = o.iss_valid[q] && (!self.lock_in.rq_valid[q] || self.lock_out.gnt[q]);
            ri.ev_valid[q] = o.issued[q] && (i.dsc_rel[q] || i.dsc_exit[q]);
            ri.ev_rel[q] = i.dsc_rel[q];
            ri.ev_exit[q] = i.dsc_exit[q];
            ri.ev_warp[q] = o.iss_idx[q] * ns as u64 + q as u64;
            ri.ev_mask[q] = i.dsc_mask[q];
        }
        self.relssp.eval(ri, &mut self.rel_out);
    }

    /// The lock table's outputs of the cycle, under the core's names.
    fn lock_outputs(&self, o: &mut Outputs) {
        let l = &self.lock_out;
        o.gnt.copy_from_slice(&l.gnt);
        o.nack.copy_from_slice(&l.nack);
        o.acq.copy_from_slice(&l.acq);
        o.rel_fire.copy_from_slice(&l.rel_fire);
        o.xfer.copy_from_slice(&l.xfer);
        o.slot_idle.copy_from_slice(&l.slot_idle);
        o.lock_valid.copy_from_slice(&l.lock_valid);
        o.lock_owner.copy_from_slice(&l.lock_owner);
        o.pend.copy_from_slice(&l.pend);
        o.err_proto = l.err_proto;
        o.err_pend = l.err_pend;
    }

    /// The clock edge of the configuration table, the release bits and the schedulers' last
    /// picks (the lock table took its own in [`LockTable::step`]).
    fn edge(&mut self, i: &Inputs) {
        self.relssp.tick(i.reset);
        if i.reset {
            self.table.reset();
            let fresh = warp_scheduler::State::new(&self.sched, self.p.shape.ws());
            self.sched_state.fill(fresh);
            return;
        }
        self.table.write(
            i.cfg_shsm_we.then_some(i.cfg_shsm),
            i.cfg_u_we.then_some(i.cfg_u),
            i.cfg_slot_we
                .then_some((i.cfg_slot, i.cfg_partner, i.cfg_base)),
        );
        self.sched_state.clone_from(&self.sched_next);
    }

    /// The registered configuration.
    pub fn table(&self) -> &Table {
        &self.table
    }
}

/// `sharing_core`'s model on its ports: the core on the same buffers as the RTL backends.
pub struct Model {
    core: Core,
    io: Io,
    inputs: Inputs,
    outputs: Outputs,
}

impl BlockModel for Model {
    type Params = CoreParams;
    fn new(p: &CoreParams, layout: &Layout) -> Model {
        Model {
            core: Core::new(p),
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
        self.core.pick(&self.inputs, &mut self.outputs);
        self.core.finish(&self.inputs, &mut self.outputs);
        self.io.write_outputs(&self.outputs, outputs);
    }
}
