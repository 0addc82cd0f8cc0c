//! `RelsspUnit` (docs/scratchpad-sharing.md §3; Jatala et al., seed 001, §6.2, Fig. 10–11): the
//! per-thread release bits `R` set by `relssp`, and per TB slot the `done` condition
//! `∀i: A_i → R_i` that lets the lock table release the shared region, plus `tb_empty` (every
//! thread of the slot has exited).
//!
//! Structure (spec §3 "Gates"): per warp, the exit and relssp lane masks of this cycle's issue
//! ports (`exm`, `rsm`), the active lanes `A = live & ~exm`, the next release bits `Rn` and a
//! LANES-input AND `ok = AND_l(!A_l | Rn_l)`; per slot, an AND over the slot's warps. The slot
//! AND is built bit-sliced: each warp decodes its slot id into a T-bit one-hot `member` vector,
//! and `done = ~OR_w(member_w & {T{!ok_w}})`, which is `AND_w(!member_w[s] | ok_w)` for every
//! slot `s` at once.

use crate::blocks::sharing::Shape;
use crate::netlist::{concat, concat_wide, or_tree, Expr, Module};
use crate::params::{declared_by, Allowed, BlockParams, ParamError};

crate::block_params! {
    /// RelsspUnit parameters (spec §0, §3): the SM shape parts it needs, declared once in
    /// [`Shape`].
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct Params {
        slots: u32 = Shape::default().slots, "T", Allowed::As(declared_by::<Shape>);
        warps: u32 = Shape::default().warps, "W", Allowed::As(declared_by::<Shape>);
        lanes: u32 = Shape::default().lanes, "LANES", Allowed::As(declared_by::<Shape>);
        nsched: u32 = Shape::default().nsched, "NSCHED", Allowed::As(declared_by::<Shape>);
    }
}

impl Params {
    /// The SM shape these params describe (R at its default: the block does not use it), the
    /// one place the derived widths come from.
    pub fn shape(&self) -> Shape {
        Shape {
            slots: self.slots,
            warps: self.warps,
            lanes: self.lanes,
            nsched: self.nsched,
            ..Shape::default()
        }
    }

    /// The block's params for an SM of shape `s`.
    pub fn of_shape(s: &Shape) -> Params {
        Params {
            slots: s.slots,
            warps: s.warps,
            lanes: s.lanes,
            nsched: s.nsched,
        }
    }

    /// Register bits: one release bit per thread of every warp slot, W·LANES (spec §7).
    pub fn register_bits(&self) -> u64 {
        u64::from(self.warps) * u64::from(self.lanes)
    }
}

impl BlockParams for Params {
    const BLOCK: &'static str = "relssp_unit";

    /// The paper's shape and the small one; `medium` (slot ids 6, 7 and warp ids 12..15 that
    /// name nothing, 8 lanes, 4 ports), `tiny` (one lane, one port, T = 2) and `wide` (128
    /// warps, T = 32: buses wider than two words).
    fn presets() -> Vec<(&'static str, Self)> {
        let at = |slots, warps, lanes, nsched| Params {
            slots,
            warps,
            lanes,
            nsched,
        };
        vec![
            ("paper", Params::default()),
            ("small", Params::of_shape(&Shape::small())),
            ("medium", at(6, 12, 8, 4)),
            ("tiny", at(2, 3, 1, 1)),
            ("wide", at(32, 128, 2, 4)),
        ]
    }

    fn check(&self) -> Result<(), ParamError> {
        self.shape().check()
    }
}

crate::ports! {
    Params as p;
    let s = p.shape();
    let (t, w, l, n) = (p.slots as usize, p.warps as usize, p.lanes as usize, p.nsched as usize);
    inputs {
        /// Per warp slot: it holds a warp.
        warp_valid[1; w]: bool,
        /// Per warp slot: its TB slot id.
        warp_slot[s.sw(); w],
        /// Per warp slot: its launched, not yet exited lanes at the start of the cycle.
        live[l; w],
        /// Per warp slot: a new warp is launched there; clears its release bits.
        warp_launch[1; w]: bool,
        /// Per issue port: an issued instruction this cycle.
        ev_valid[1; n]: bool,
        /// Per issue port: it is a `relssp`.
        ev_rel[1; n]: bool,
        /// Per issue port: it carries the exit flag.
        ev_exit[1; n]: bool,
        /// Per issue port: the issuing warp slot.
        ev_warp[s.ww(); n],
        /// Per issue port: the lanes that execute it.
        ev_mask[l; n],
    }
    outputs {
        /// Per TB slot (Mealy): every active thread has executed `relssp`.
        done[1; t]: bool,
        /// Per TB slot (Mealy): no thread of the slot is active.
        tb_empty[1; t]: bool,
        /// Per warp slot: the release bits `R` at the start of the cycle (Moore).
        rbits[l; w],
    }
}

impl crate::Block for Params {
    fn build(&self) -> Module {
        build(self)
    }
    #[cfg(feature = "faults")]
    const FAULTS: &'static [crate::faults::Fault] = &[faults::LAUNCH_KEEPS_R];
}

/// Planted faults (docs/blocks.md §4).
#[cfg(feature = "faults")]
pub mod faults {
    use crate::faults::Fault;

    /// `warp_launch` does not clear the warp's release bits: a new warp inherits the relssp
    /// of the one before it (spec §3: launch clears `R`).
    pub const LAUNCH_KEEPS_R: Fault = Fault {
        block: "relssp_unit",
        name: "launch_keeps_r",
        what: "warp_launch does not clear the warp's release bits (spec §3: a launch clears R)",
        port: super::port::RBITS,
        // A relssp, then a launch of the same warp; the next cycle shows the stale bits.
        within: 3,
    };
}

/// Builds the unit's RTL from validated params (spec §3).
pub fn build(p: &Params) -> Module {
    let s = p.shape();
    let (t, l, n) = (p.slots as usize, p.lanes as usize, p.nsched as usize);
    let (sw, ww) = (s.sw(), s.ww());
    let mut m = Module::new(&crate::params::module_name(p));
    m.cites(crate::blocks::docs::SCRATCHPAD_SHARING);
    let (inp, out) = m.declare_ports(&ports(p));
    let i = |name: &str| inp[name].clone();
    let (valid, slot, live, launch) = (
        i(port::WARP_VALID),
        i(port::WARP_SLOT),
        i(port::LIVE),
        i(port::WARP_LAUNCH),
    );
    let no_lanes = Expr::lit(0, l);
    let all_lanes = Expr::lit(crate::netlist::mask(l), l);
    let no_slots = Expr::lit(0, t);

    m.section("Issue-port events: relssp and exit, qualified by ev_valid (§3)");
    let (ev_valid, ev_warp, ev_mask) = (i(port::EV_VALID), i(port::EV_WARP), i(port::EV_MASK));
    let (ev_rel, ev_exit) = (i(port::EV_REL), i(port::EV_EXIT));
    // Per port: the lanes that exit and the lanes that release (0 without the event).
    let mut rel_mask = vec![];
    let mut exit_mask = vec![];
    for q in 0..n {
        let lanes = m.wire(&format!("ev_lanes_{q}"), ev_mask.slice(q * l, l));
        let rel = ev_valid.bit(q) & ev_rel.bit(q);
        let exit = ev_valid.bit(q) & ev_exit.bit(q);
        rel_mask.push(m.wire(&format!("rel_mask_{q}"), rel.mux(&lanes, &no_lanes)));
        exit_mask.push(m.wire(&format!("exit_mask_{q}"), exit.mux(&lanes, &no_lanes)));
    }
    let ev_warp: Vec<Expr> = (0..n)
        .map(|q| m.wire(&format!("ev_warp_{q}"), ev_warp.slice(q * ww, ww)))
        .collect();

    m.section("Per warp: exm, rsm, A, Rn (the R register's next value), ok, empty (§3)");
    let mut regs = vec![];
    let mut not_ok = vec![];
    let mut not_empty = vec![];
    for w in 0..p.warps as usize {
        // A warp index ≥ W on ev_warp matches no warp: it is ignored.
        let mut exm = vec![];
        let mut rsm = vec![];
        for q in 0..n {
            let hit = m.wire(
                &format!("hit{q}_{w}"),
                ev_warp[q].equals(&Expr::lit(w as u64, ww)),
            );
            exm.push(hit.mux(&exit_mask[q], &no_lanes));
            rsm.push(hit.mux(&rel_mask[q], &no_lanes));
        }
        let exm = m.wire(&format!("exm_{w}"), or_tree(exm, l));
        let rsm = m.wire(&format!("rsm_{w}"), or_tree(rsm, l));
        let a = m.wire(&format!("a_{w}"), live.slice(w * l, l) & !exm);
        let r = m.reg(&format!("r{w}_q"), l, 0);
        let set = &r | &rsm;
        let rn = crate::planted!(
            faults::LAUNCH_KEEPS_R,
            set,
            launch.bit(w).mux(&no_lanes, &set)
        );
        let rn = m.wire(&format!("rn_{w}"), rn);
        m.next(&r, rn.clone());
        // ok_w = AND_l(!A_l | Rn_l): the LANES-input AND of the paper's NAND outputs.
        let ok = m.wire(&format!("ok_{w}"), (!&a | rn).equals(&all_lanes));
        let empty = m.wire(&format!("empty_{w}"), !a.any());
        let id = m.wire(&format!("slot_{w}"), slot.slice(w * sw, sw));
        let onehot = decode(&mut m, &format!("slot_dec_{w}"), &id);
        // The low T bits: a slot id ≥ T matches no slot.
        let member = m.wire(
            &format!("member_{w}"),
            valid.bit(w).mux(&onehot.slice(0, t), &no_slots),
        );
        not_ok.push(ok.mux(&no_slots, &member));
        not_empty.push(empty.mux(&no_slots, &member));
        regs.push(r);
    }

    m.section("Per slot: AND over the slot's warps (§3 done, tb_empty)");
    let done = m.wire("done_w", !or_tree(not_ok, t));
    let tb_empty = m.wire("tb_empty_w", !or_tree(not_empty, t));
    m.assign(&out[port::DONE], done);
    m.assign(&out[port::TB_EMPTY], tb_empty);
    regs.reverse();
    m.assign(&out[port::RBITS], concat_wide(&regs));
    m
}

/// One-hot decode of `id` (a net) into 2^width bits, bit `v` set for value `v`: a tree that
/// doubles the decoded width with each id bit from the lowest (two muxes and a concatenation per
/// bit). Returns a net.
fn decode(m: &mut Module, name: &str, id: &Expr) -> Expr {
    let mut dec = Expr::lit(1, 1);
    for b in 0..id.width() {
        let zero = Expr::lit(0, dec.width());
        let bit = id.bit(b);
        let hi = bit.mux(&dec, &zero);
        let lo = bit.mux(&zero, &dec);
        dec = m.wire(&format!("{name}_{b}"), concat(&[hi, lo]));
    }
    dec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_are_w_times_lanes() {
        for (_, p) in Params::presets() {
            assert_eq!(build(&p).register_bits(), p.register_bits());
        }
        assert_eq!(Params::default().register_bits(), 3072);
    }

    #[test]
    fn w_must_be_a_multiple_of_nsched() {
        let e = Params::resolve_pairs(Some("small"), &[("W", "7")]).unwrap_err();
        assert!(e.to_string().contains("multiple of NSCHED"), "{e}");
    }
}
