//! Behavioral model of `SpAccessUnit` (docs/scratchpad-sharing.md §2.3, §1.4, §1.5; Jatala et
//! al., seed 001, §3 Fig. 3), written from the spec, independently of the RTL: [`access`] is
//! one issue port's check and translation, [`Model`] runs it on every port of the block.

use crate::blocks::bank_conflict_detector::{lane_field, Word};
use crate::blocks::share_cfg::{Table, TablePorts};
use crate::harness::layout::{Layout, Slot};
use crate::harness::sim::Simulator;
use smrtl_hdl::blocks::sp_access_unit::{port, Params};
use smrtl_hdl::netlist::mask;

/// What one port answers (spec §2.3): whether the instruction needs its pair's lock, and the
/// pair's lock index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    pub needs_lock: bool,
    pub pair: u64,
}

/// One port's request `(valid, s, mask, off)` against `table`, with `aw`-bit offsets; writes
/// every lane's physical address (active or not) into `phys`.
///
/// ```text
/// needs_lock = valid && !unsh(s) && OR_l(mask[l] && off[l] >= u)
/// pair       = low KW bits of min(s, ShTB[s])
/// phys[l]    = (off[l] + base[s] + ((!unsh(s) && s < ShTB[s] && off[l] >= u) ? u : 0)) mod 2^AW
/// ```
pub fn access(
    table: &Table,
    aw: usize,
    valid: bool,
    s: u64,
    lane_mask: u64,
    off: &[u64],
    phys: &mut [u64],
) -> Access {
    let unsh = table.unsh(s);
    let lower = s < table.partner(s);
    let mut any_shared = false;
    for (l, (&o, p)) in off.iter().zip(phys.iter_mut()).enumerate() {
        let shared = o >= table.u;
        any_shared |= lane_mask >> l & 1 == 1 && shared;
        let skip = if !unsh && lower && shared { table.u } else { 0 };
        *p = (o + table.base_of(s) + skip) & mask(aw);
    }
    Access {
        needs_lock: valid && !unsh && any_shared,
        pair: table.pair(s),
    }
}

/// The block's request and answer ports.
#[derive(Clone, Debug)]
struct Ports {
    rq_valid: Word,
    rq_slot: Word,
    rq_mask: Slot,
    rq_off: Slot,
    needs_lock: Word,
    pair: Slot,
    phys: Slot,
}

/// SpAccessUnit on its ports (combinational: every output from this cycle's inputs).
pub struct Model {
    ports: Ports,
    table_ports: TablePorts,
    table: Table,
    lanes: usize,
    nsched: usize,
    aw: usize,
    sw: usize,
    kw: usize,
    off: Vec<u64>,
    phys: Vec<u64>,
}

impl Model {
    pub fn new(p: &Params, layout: &Layout) -> Model {
        let shape = p.shape();
        let lanes = p.lanes as usize;
        Model {
            ports: Ports {
                rq_valid: Word::of(layout.in_slot(port::RQ_VALID)),
                rq_slot: Word::of(layout.in_slot(port::RQ_SLOT)),
                rq_mask: layout.in_slot(port::RQ_MASK).clone(),
                rq_off: layout.in_slot(port::RQ_OFF).clone(),
                needs_lock: Word::of(layout.out_slot(port::NEEDS_LOCK)),
                pair: layout.out_slot(port::PAIR).clone(),
                phys: layout.out_slot(port::PHYS).clone(),
            },
            table_ports: TablePorts::inputs(&shape, layout),
            table: Table::new(&shape),
            lanes,
            nsched: p.nsched as usize,
            aw: shape.aw(),
            sw: shape.sw(),
            kw: shape.kw(),
            off: vec![0; lanes],
            phys: vec![0; lanes],
        }
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        self.table_ports.read(inputs, &mut self.table);
        let (lanes, aw) = (self.lanes, self.aw);
        let valid = self.ports.rq_valid.get(inputs);
        let slots = self.ports.rq_slot.get(inputs);
        let offs = self.ports.rq_off.of(inputs);
        let mut needs = 0;
        for q in 0..self.nsched {
            for (l, o) in self.off.iter_mut().enumerate() {
                *o = lane_field(offs, q * lanes + l, aw);
            }
            let a = access(
                &self.table,
                aw,
                valid >> q & 1 == 1,
                slots >> (q * self.sw) & mask(self.sw),
                self.ports.rq_mask.field(inputs, q * lanes, lanes),
                &self.off,
                &mut self.phys,
            );
            needs |= (a.needs_lock as u64) << q;
            self.ports
                .pair
                .set_field(outputs, q * self.kw, self.kw, a.pair);
            for (l, &p) in self.phys.iter().enumerate() {
                self.ports
                    .phys
                    .set_field(outputs, (q * lanes + l) * aw, aw, p);
            }
        }
        self.ports.needs_lock.set(outputs, needs);
    }
}
