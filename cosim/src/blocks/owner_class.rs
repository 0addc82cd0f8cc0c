//! Behavioral model of `OwnerClass` (docs/scratchpad-sharing.md §2.5; Jatala et al., seed 001,
//! §4), written from the spec, independently of the RTL: [`classify`] is one warp's owner bit
//! and class, [`Model`] runs it on every warp slot.

use crate::blocks::share_cfg::{Table, TablePorts};
use crate::harness::layout::{Layout, Slot};
use crate::harness::sim::Simulator;
use smrtl_hdl::blocks::owner_class::{port, Params};
use smrtl_hdl::blocks::sharing::{Class, FreeClass};

/// The lock table's registered state (spec §2.4): per pair index `k < KP`, valid and owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Locks {
    pub valid: Vec<bool>,
    pub owner: Vec<u64>,
}

impl Locks {
    /// `(lock_valid[k], lock_owner[k])`; an index k ≥ KP reads as a free lock (spec §0).
    pub fn get(&self, k: u64) -> (bool, u64) {
        let k = k as usize;
        match self.valid.get(k) {
            Some(&v) => (v, self.owner[k]),
            None => (false, 0),
        }
    }
}

/// The owner bit and class of a warp of slot `s` (spec §2.5):
///
/// ```text
/// owner_bit  = warp_valid && !unsh(s) && lock_valid[pair(s)] && lock_owner[pair(s)] == s
/// warp_class = owner_bit ? OWNER : unsh(s) ? UNSHARED : !lock_valid[pair(s)] ? FREE_CLASS : NONOWNER
/// ```
pub fn classify(
    table: &Table,
    locks: &Locks,
    free_class: FreeClass,
    warp_valid: bool,
    s: u64,
) -> (bool, Class) {
    let unsh = table.unsh(s);
    let (lock_valid, lock_owner) = locks.get(table.pair(s));
    let owner_bit = warp_valid && !unsh && lock_valid && lock_owner == s;
    let class = if owner_bit {
        Class::Owner
    } else if unsh {
        Class::Unshared
    } else if !lock_valid {
        free_class.class()
    } else {
        Class::Nonowner
    };
    (owner_bit, class)
}

#[derive(Clone, Debug)]
struct Ports {
    warp_valid: Slot,
    warp_slot: Slot,
    lock_valid: Slot,
    lock_owner: Slot,
    owner_bit: Slot,
    warp_class: Slot,
}

/// OwnerClass on its ports (combinational: every output from this cycle's inputs).
pub struct Model {
    ports: Ports,
    table_ports: TablePorts,
    table: Table,
    locks: Locks,
    free_class: FreeClass,
    warps: usize,
    sw: usize,
}

impl Model {
    pub fn new(p: &Params, layout: &Layout) -> Model {
        let shape = p.shape();
        let kp = shape.kp();
        let input = |name: &str| layout.in_slot(name).clone();
        let output = |name: &str| layout.out_slot(name).clone();
        Model {
            ports: Ports {
                warp_valid: input(port::WARP_VALID),
                warp_slot: input(port::WARP_SLOT),
                lock_valid: input(port::LOCK_VALID),
                lock_owner: input(port::LOCK_OWNER),
                owner_bit: output(port::OWNER_BIT),
                warp_class: output(port::WARP_CLASS),
            },
            table_ports: TablePorts::inputs(&shape, layout),
            table: Table::new(&shape),
            locks: Locks {
                valid: vec![false; kp],
                owner: vec![0; kp],
            },
            free_class: p.free_class,
            warps: p.warps as usize,
            sw: shape.sw(),
        }
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        let (ports, sw) = (&self.ports, self.sw);
        self.table_ports.read(inputs, &mut self.table);
        for k in 0..self.locks.valid.len() {
            self.locks.valid[k] = ports.lock_valid.field(inputs, k, 1) == 1;
            self.locks.owner[k] = ports.lock_owner.field(inputs, k * sw, sw);
        }
        for w in 0..self.warps {
            let valid = ports.warp_valid.field(inputs, w, 1) == 1;
            let s = ports.warp_slot.field(inputs, w * sw, sw);
            let (owner_bit, class) = classify(&self.table, &self.locks, self.free_class, valid, s);
            ports.owner_bit.set_field(outputs, w, 1, owner_bit as u64);
            ports
                .warp_class
                .set_field(outputs, w * Class::BITS, Class::BITS, class.code());
        }
    }
}
