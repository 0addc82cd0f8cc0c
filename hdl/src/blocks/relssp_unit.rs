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
use crate::netlist::{concat, concat_wide, or_tree, Dir, Expr, Module, Port};
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

    fn presets() -> Vec<(&'static str, Self)> {
        vec![
            ("paper", Params::default()),
            ("small", Params::of_shape(&Shape::small())),
        ]
    }

    fn check(&self) -> Result<(), ParamError> {
        self.shape().check()
    }
}

/// Port names (spec §3).
pub mod port {
    /// Per warp slot: it holds a warp (W bits).
    pub const WARP_VALID: &str = "warp_valid";
    /// Per warp slot: its TB slot id (W·SW bits).
    pub const WARP_SLOT: &str = "warp_slot";
    /// Per warp slot: its launched, not yet exited lanes at the start of the cycle (W·LANES).
    pub const LIVE: &str = "live";
    /// Per warp slot: a new warp is launched there; clears its release bits (W bits).
    pub const WARP_LAUNCH: &str = "warp_launch";
    /// Per issue port: an issued instruction this cycle (NSCHED bits).
    pub const EV_VALID: &str = "ev_valid";
    /// Per issue port: it is a `relssp` (NSCHED bits).
    pub const EV_REL: &str = "ev_rel";
    /// Per issue port: it carries the exit flag (NSCHED bits).
    pub const EV_EXIT: &str = "ev_exit";
    /// Per issue port: the issuing warp slot (NSCHED·WW bits).
    pub const EV_WARP: &str = "ev_warp";
    /// Per issue port: the lanes that execute it (NSCHED·LANES bits).
    pub const EV_MASK: &str = "ev_mask";
    /// Per TB slot (Mealy): every active thread has executed `relssp` (T bits).
    pub const DONE: &str = "done";
    /// Per TB slot (Mealy): no thread of the slot is active (T bits).
    pub const TB_EMPTY: &str = "tb_empty";
    /// The release bits `R` at the start of the cycle (Moore, W·LANES bits).
    pub const RBITS: &str = "rbits";
}

/// The block's ports (spec §3), in declaration order.
pub fn ports(p: &Params) -> Vec<Port> {
    let s = p.shape();
    let (t, w, l, n) = (
        p.slots as usize,
        p.warps as usize,
        p.lanes as usize,
        p.nsched as usize,
    );
    crate::netlist::port_list(&[
        ("clock", Dir::In, 1),
        ("reset", Dir::In, 1),
        (port::WARP_VALID, Dir::In, w),
        (port::WARP_SLOT, Dir::In, w * s.sw()),
        (port::LIVE, Dir::In, w * l),
        (port::WARP_LAUNCH, Dir::In, w),
        (port::EV_VALID, Dir::In, n),
        (port::EV_REL, Dir::In, n),
        (port::EV_EXIT, Dir::In, n),
        (port::EV_WARP, Dir::In, n * s.ww()),
        (port::EV_MASK, Dir::In, n * l),
        (port::DONE, Dir::Out, t),
        (port::TB_EMPTY, Dir::Out, t),
        (port::RBITS, Dir::Out, w * l),
    ])
}

/// A deliberate RTL bug, so tests can prove the harness catches one.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    None,
    /// `warp_launch` does not clear the warp's release bits.
    LaunchKeepsR,
}

/// Builds the unit's RTL from validated params (spec §3).
pub fn build(p: &Params) -> Module {
    build_with(p, Fault::None)
}

#[doc(hidden)]
pub fn build_with(p: &Params, fault: Fault) -> Module {
    let s = p.shape();
    let (t, l, n) = (p.slots as usize, p.lanes as usize, p.nsched as usize);
    let (sw, ww) = (s.sw(), s.ww());
    let name = match fault {
        Fault::None => crate::params::module_name(p),
        _ => format!("{}_fault", crate::params::module_name(p)),
    };
    let mut m = Module::new(&name);
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

    m.section("Issue-port events: relssp and exit, qualified by ev_valid (spec §3)");
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

    m.section("Per warp: exm, rsm, A, Rn (the R register's next value), ok, empty (spec §3)");
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
        let rn = match fault {
            Fault::LaunchKeepsR => set,
            Fault::None => launch.bit(w).mux(&no_lanes, &set),
        };
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

    m.section("Per slot: AND over the slot's warps (spec §3 done, tb_empty)");
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
