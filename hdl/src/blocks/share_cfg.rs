//! `ShareCfg` (docs/scratchpad-sharing.md §2.2; Jatala et al., "Scratchpad Sharing in GPUs",
//! seed 001, §4.2 and §7.1): the registers a kernel launch writes — the ShSM bit, the private
//! size `u`, the ShTB pairing table and the §1.4 base of every slot — read in parallel by the
//! access units, the lock table and the owner classifier.
//!
//! Every ShTB and base entry is its own register (each is read every cycle, as packed Moore
//! outputs). `err_cfg` is decoded from the registered table: it is high while the table is not
//! a valid pairing (§2.2), which random stimulus and a half-written launch both produce.

use crate::blocks::sharing::{bus, index_mux, Shape};
use crate::netlist::{or_all, Expr, Module};
use crate::params::{declared_by, module_name, Allowed, BlockParams};

crate::block_params! {
    /// ShareCfg params (spec §0): the SM shape parameters it uses, declared by [`Shape`].
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct Params {
        slots: u32 = Shape::default().slots, "T", Allowed::As(declared_by::<Shape>);
        smem: u32 = Shape::default().smem, "R", Allowed::As(declared_by::<Shape>);
    }
}

impl Params {
    /// The block's params taken from an SM shape.
    pub fn of_shape(s: &Shape) -> Params {
        Params {
            slots: s.slots,
            smem: s.smem,
        }
    }

    /// The shape these params describe (the parameters the block lacks at their defaults),
    /// for the derived widths.
    pub fn shape(&self) -> Shape {
        Shape {
            slots: self.slots,
            smem: self.smem,
            ..Shape::default()
        }
    }
}

impl BlockParams for Params {
    const BLOCK: &'static str = "share_cfg";

    fn presets() -> Vec<(&'static str, Self)> {
        vec![
            ("paper", Params::default()),
            ("small", Params::of_shape(&Shape::small())),
        ]
    }
}

/// Port names (spec §2.2).
pub mod port {
    pub const CFG_SHSM_WE: &str = "cfg_shsm_we";
    pub const CFG_SHSM: &str = "cfg_shsm";
    pub const CFG_U_WE: &str = "cfg_u_we";
    pub const CFG_U: &str = "cfg_u";
    pub const CFG_SLOT_WE: &str = "cfg_slot_we";
    pub const CFG_SLOT: &str = "cfg_slot";
    pub const CFG_PARTNER: &str = "cfg_partner";
    pub const CFG_BASE: &str = "cfg_base";
    pub const SHSM: &str = "shsm";
    pub const U: &str = "u";
    pub const SHTB: &str = "shtb";
    pub const BASE: &str = "base";
    pub const ERR_CFG: &str = "err_cfg";
}

/// Builds ShareCfg's RTL (spec §2.2): registers written at the edge, reset to ShSM 0, u 0,
/// ShTB all `NONE`, base 0 (§2.1); a slot write with `cfg_slot` ≥ T is dropped.
pub fn build(p: &Params) -> Module {
    let s = p.shape();
    let t = p.slots as usize;
    let (aw, sw, tw, kp) = (s.aw(), s.sw(), s.tw(), s.kp() as u64);
    let none = Expr::lit(s.none(), tw);
    let mut m = Module::new(&module_name(p));
    m.clock_reset();
    let shsm_we = m.input(port::CFG_SHSM_WE, 1);
    let cfg_shsm = m.input(port::CFG_SHSM, 1);
    let u_we = m.input(port::CFG_U_WE, 1);
    let cfg_u = m.input(port::CFG_U, aw);
    let slot_we = m.input(port::CFG_SLOT_WE, 1);
    let cfg_slot = m.input(port::CFG_SLOT, sw);
    let cfg_partner = m.input(port::CFG_PARTNER, tw);
    let cfg_base = m.input(port::CFG_BASE, aw);
    let shsm = m.output(port::SHSM, 1);
    let u = m.output(port::U, aw);
    let shtb = m.output(port::SHTB, t * tw);
    let base = m.output(port::BASE, t * aw);
    let err_cfg = m.output(port::ERR_CFG, 1);

    m.section("§2.2 ShSM and u");
    let shsm_q = m.reg("shsm_q", 1, 0);
    m.next(&shsm_q, shsm_we.mux(&cfg_shsm, &shsm_q));
    let u_q = m.reg("u_q", aw, 0);
    m.next(&u_q, u_we.mux(&cfg_u, &u_q));
    m.assign(&shsm, shsm_q);
    m.assign(&u, u_q);

    m.section("§2.2 ShTB[s] and base[s]: a write to slot s >= T matches no entry");
    let mut entries = Vec::with_capacity(t);
    let mut bases = Vec::with_capacity(t);
    for slot in 0..t {
        let we = m.wire(
            &format!("we_{slot}"),
            &slot_we & &cfg_slot.equals(&Expr::lit(slot as u64, sw)),
        );
        let e = m.reg(&format!("shtb_q{slot}"), tw, s.none());
        m.next(&e, we.mux(&cfg_partner, &e));
        let b = m.reg(&format!("base_q{slot}"), aw, 0);
        m.next(&b, we.mux(&cfg_base, &b));
        entries.push(e);
        bases.push(b);
    }
    m.assign(&shtb, bus(&entries));
    m.assign(&base, bus(&bases));

    m.section(
        "§2.2 err_cfg: the registered ShTB is not a symmetric pairing with min(s, partner) < KP",
    );
    let bad: Vec<Expr> = entries
        .iter()
        .enumerate()
        .map(|(slot, e)| {
            let me = Expr::lit(slot as u64, tw);
            // ShTB[e], read by e's low SW bits: e >= T is flagged on its own.
            let back = index_mux(
                &mut m,
                &format!("back_{slot}"),
                &e.slice(0, sw),
                &entries,
                &none,
            );
            let mut why = vec![
                !e.lt(&Expr::lit(t as u64, tw)), // no such partner
                e.equals(&me),                   // paired with itself
                !back.equals(&me),               // asymmetric
            ];
            // min(slot, e) >= KP  <=>  slot >= KP and e >= KP.
            if slot as u64 >= kp {
                why.push(!e.lt(&Expr::lit(kp, tw)));
            }
            m.wire(&format!("bad_{slot}"), !e.equals(&none) & or_all(&why, 1))
        })
        .collect();
    m.assign(&err_cfg, or_all(&bad, 1));
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spec §7: ShSM and u (15) + ShTB (80) + base (224) at the defaults.
    #[test]
    fn paper_registers_are_319_bits() {
        assert_eq!(build(&Params::default()).register_bits(), 319);
    }
}
