//! Behavioral model of `OwnerClass` (docs/scratchpad-sharing.md §2.5; Jatala et al., seed 001,
//! §4), written from the spec, independently of the RTL: [`classify`] is one warp's owner bit
//! and class, [`Model`] runs it on every warp slot.

use crate::blocks::share_cfg::Table;
use crate::{BlockModel, Layout, Simulator};
use smrtl_hdl::blocks::owner_class::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::owner_class::Params;
use smrtl_hdl::blocks::sharing::{Class, FreeClass};

/// `(lock_valid[k], lock_owner[k])` of the lock table's registered locks (spec §2.4); an index
/// k ≥ KP reads as a free lock (spec §0).
pub fn lock(lock_valid: &[bool], lock_owner: &[u64], k: u64) -> (bool, u64) {
    let k = k as usize;
    match lock_valid.get(k) {
        Some(&v) => (v, lock_owner[k]),
        None => (false, 0),
    }
}

/// The owner bit and class of a warp of slot `s` (spec §2.5), given the table and the locks:
///
/// ```text
/// owner_bit  = warp_valid && !unsh(s) && lock_valid[pair(s)] && lock_owner[pair(s)] == s
/// warp_class = owner_bit ? OWNER : unsh(s) ? UNSHARED : !lock_valid[pair(s)] ? FREE_CLASS : NONOWNER
/// ```
pub fn classify(
    table: &Table,
    (lock_valid, lock_owner): (&[bool], &[u64]),
    free_class: FreeClass,
    warp_valid: bool,
    s: u64,
) -> (bool, Class) {
    let unsh = table.unsh(s);
    let (lock_valid, lock_owner) = lock(lock_valid, lock_owner, table.pair(s));
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

/// OwnerClass on its ports (combinational: every output from this cycle's inputs).
pub struct Model {
    table: Table,
    free_class: FreeClass,
    io: Io,
    inputs: Inputs,
    outputs: Outputs,
}

impl BlockModel for Model {
    type Params = Params;
    fn new(p: &Params, layout: &Layout) -> Model {
        Model {
            table: Table::new(&p.shape()),
            free_class: p.free_class,
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
        let (t, i, o) = (&mut self.table, &mut self.inputs, &mut self.outputs);
        self.io.read_inputs(inputs, i);
        t.shsm = i.shsm;
        t.shtb.copy_from_slice(&i.shtb);
        let locks = (&i.lock_valid[..], &i.lock_owner[..]);
        for w in 0..i.warp_valid.len() {
            let (bit, class) = classify(t, locks, self.free_class, i.warp_valid[w], i.warp_slot[w]);
            o.owner_bit[w] = bit;
            o.warp_class[w] = class.code();
        }
        self.io.write_outputs(o, outputs);
    }
}
