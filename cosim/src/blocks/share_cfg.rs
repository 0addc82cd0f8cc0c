//! Behavioral model of `ShareCfg` (docs/scratchpad-sharing.md §2.2; Jatala et al., seed 001),
//! written from the spec, independently of the RTL, and the sharing table every
//! scratchpad-sharing model reads ([`Table`]: ShSM, `u`, ShTB, bases, with the spec's `unsh`,
//! `pair` and the §0 out-of-range rules).

use crate::kernel::launch::Launch;
use crate::{BlockModel, Layout, Simulator};
use smrtl_hdl::blocks::share_cfg::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::share_cfg::Params;
use smrtl_hdl::blocks::sharing::Shape;
use smrtl_hdl::netlist::mask;

/// ShareCfg's state (spec §2.2), as every sharing block sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    /// ShSM: the SM shares.
    pub shsm: bool,
    /// `u`: private bytes of a shared TB.
    pub u: u64,
    /// `ShTB[s]`: the partner slot of `s`, or `none` for an unshared slot.
    pub shtb: Vec<u64>,
    /// `base[s]`: the §1.4 base byte of slot `s`.
    pub base: Vec<u64>,
    /// `NONE` (all ones in TW bits).
    pub none: u64,
    /// KP, lock entries.
    kp: u64,
    /// KW, bits of a pair index.
    kw: usize,
}

impl Table {
    /// The table after reset (spec §2.1): ShSM 0, u 0, ShTB all `NONE`, base 0.
    pub fn new(shape: &Shape) -> Table {
        let t = shape.slots as usize;
        Table {
            shsm: false,
            u: 0,
            shtb: vec![shape.none(); t],
            base: vec![0; t],
            none: shape.none(),
            kp: shape.kp() as u64,
            kw: shape.kw(),
        }
    }

    /// Back to the reset values.
    pub fn reset(&mut self) {
        self.shsm = false;
        self.u = 0;
        self.shtb.fill(self.none);
        self.base.fill(0);
    }

    /// `ShTB[s]`; a slot id ≥ T reads `NONE` (spec §0).
    pub fn partner(&self, s: u64) -> u64 {
        self.shtb.get(s as usize).copied().unwrap_or(self.none)
    }

    /// `base[s]`; a slot id ≥ T reads 0 (docs: the spec gives such a slot no base).
    pub fn base_of(&self, s: u64) -> u64 {
        self.base.get(s as usize).copied().unwrap_or(0)
    }

    /// `unsh(s) = !ShSM || ShTB[s] == NONE` (spec §2.3).
    pub fn unsh(&self, s: u64) -> bool {
        !self.shsm || self.partner(s) == self.none
    }

    /// `pair(s)`: the low KW bits of `min(s, ShTB[s])` (spec §1.3, §0); may be ≥ KP.
    pub fn pair(&self, s: u64) -> u64 {
        smrtl_hdl::blocks::sharing::pair(s, self.partner(s)) & mask(self.kw)
    }

    /// KP, lock entries: a pair index at or above it reads as a free lock (spec §0).
    pub fn kp(&self) -> u64 {
        self.kp
    }

    /// `err_cfg` (spec §2.2): some slot `s` with `ShTB[s] ≠ NONE` has no such partner, is
    /// paired with itself, is not its partner's partner, or `min(s, ShTB[s]) ≥ KP`.
    pub fn err_cfg(&self) -> bool {
        let t = self.shtb.len() as u64;
        (0..t).any(|s| {
            let e = self.shtb[s as usize];
            e != self.none
                && (e >= t || e == s || self.shtb[e as usize] != s || s.min(e) >= self.kp)
        })
    }

    /// The table a launch writes (spec §1.3 pairing, §1.4 bases) for TBs of `r_tb` bytes; see
    /// [`Table::layout`].
    pub fn launched(shape: &Shape, l: &Launch, r_tb: u64) -> Table {
        assert!(
            l.n <= u64::from(shape.slots),
            "{} TBs in {} slots",
            l.n,
            shape.slots
        );
        // Unshared launches fill slots 0..n with unshared TBs.
        let originals = if l.pairs > 0 { l.m_sp } else { l.n };
        Table::layout(shape, l.shsm == 1, originals, l.pairs, l.u, r_tb)
    }

    /// The §1.3 / §1.4 table of `originals` original slots of which the first `pairs` are
    /// shared: slot `originals + k` pairs with slot `k` for `k < pairs` (bases `k·(R_tb+u)`
    /// and that plus `u`), slots `pairs..originals` are unshared (base
    /// `pairs·(R_tb+u) + (j−pairs)·R_tb`), every other slot stays `NONE` with base 0. Bases
    /// wrap at 2^AW (random stimulus may overflow the scratchpad).
    pub fn layout(
        shape: &Shape,
        shsm: bool,
        originals: u64,
        pairs: u64,
        u: u64,
        r_tb: u64,
    ) -> Table {
        let mut table = Table::new(shape);
        let wrap = mask(shape.aw());
        table.shsm = shsm;
        table.u = u & wrap;
        let pair_bytes = r_tb + u;
        for k in 0..pairs {
            let (lower, upper) = (k as usize, (originals + k) as usize);
            table.shtb[lower] = originals + k;
            table.shtb[upper] = k;
            table.base[lower] = (k * pair_bytes) & wrap;
            table.base[upper] = (k * pair_bytes + u) & wrap;
        }
        for j in pairs..originals {
            table.base[j as usize] = (pairs * pair_bytes + (j - pairs) * r_tb) & wrap;
        }
        table
    }
}

impl Table {
    /// The configuration writes' effect at the edge (spec §2.2 `cfg_*`): ShSM, `u`, and one
    /// slot's `(slot, partner, base)`, each where written; a slot write to a slot id ≥ T is
    /// dropped.
    pub fn write(&mut self, shsm: Option<bool>, u: Option<u64>, slot: Option<(u64, u64, u64)>) {
        if let Some(v) = shsm {
            self.shsm = v;
        }
        if let Some(u) = u {
            self.u = u;
        }
        if let Some((slot, partner, base)) = slot {
            if let (Some(e), Some(b)) = (
                self.shtb.get_mut(slot as usize),
                self.base.get_mut(slot as usize),
            ) {
                *e = partner;
                *b = base;
            }
        }
    }
}

/// ShareCfg on its ports: Moore outputs from the registered table, `err_cfg` decoded from it,
/// then the edge.
pub struct Model {
    table: Table,
    io: Io,
    inputs: Inputs,
    outputs: Outputs,
}

impl BlockModel for Model {
    type Params = Params;
    fn new(p: &Params, layout: &Layout) -> Model {
        Model {
            table: Table::new(&p.shape()),
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
        o.shsm = t.shsm;
        o.u = t.u;
        o.shtb.copy_from_slice(&t.shtb);
        o.base.copy_from_slice(&t.base);
        o.err_cfg = t.err_cfg();
        self.io.write_outputs(o, outputs);
        if i.reset {
            t.reset();
            return;
        }
        t.write(
            i.cfg_shsm_we.then_some(i.cfg_shsm),
            i.cfg_u_we.then_some(i.cfg_u),
            i.cfg_slot_we
                .then_some((i.cfg_slot, i.cfg_partner, i.cfg_base)),
        );
    }
}
