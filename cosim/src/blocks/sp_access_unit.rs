//! Behavioral model of `SpAccessUnit` (docs/scratchpad-sharing.md §2.3, §1.4, §1.5; Jatala et
//! al., seed 001, §3 Fig. 3), written from the spec, independently of the RTL: [`access`] is
//! one issue port's check and translation, [`Model`] runs it on every port of the block.

use crate::blocks::share_cfg::Table;
use crate::{BlockModel, Layout, Simulator};
use smrtl_hdl::blocks::sp_access_unit::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::sp_access_unit::Params;
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

/// SpAccessUnit on its ports (combinational: every output from this cycle's inputs).
pub struct Model {
    table: Table,
    lanes: usize,
    aw: usize,
    io: Io,
    inputs: Inputs,
    outputs: Outputs,
}

impl BlockModel for Model {
    type Params = Params;
    fn new(p: &Params, layout: &Layout) -> Model {
        Model {
            table: Table::new(&p.shape()),
            lanes: p.lanes as usize,
            aw: p.shape().aw(),
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
        t.u = i.u;
        t.shtb.copy_from_slice(&i.shtb);
        t.base.copy_from_slice(&i.base);
        let lanes = self.lanes;
        for q in 0..i.rq_valid.len() {
            let at = q * lanes..(q + 1) * lanes;
            let a = access(
                t,
                self.aw,
                i.rq_valid[q],
                i.rq_slot[q],
                i.rq_mask[q],
                &i.rq_off[at.clone()],
                &mut o.phys[at],
            );
            o.needs_lock[q] = a.needs_lock;
            o.pair[q] = a.pair;
        }
        self.io.write_outputs(o, outputs);
    }
}
