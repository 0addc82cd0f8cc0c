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

    /// The paper's SM, the small shape, `odd_t` (T = 6: slot ids 6 and 7 on the port, ShTB
    /// values ≥ T besides NONE) and `t32` (the widest table).
    fn presets() -> Vec<(&'static str, Self)> {
        let small = Params::of_shape(&Shape::small());
        vec![
            ("paper", Params::default()),
            ("small", small.clone()),
            ("odd_t", Params { slots: 6, ..small }),
            (
                "t32",
                Params {
                    slots: 32,
                    ..Params::default()
                },
            ),
        ]
    }
}

crate::ports! {
    Params as p;
    let s = p.shape();
    let (t, aw, tw) = (p.slots as usize, s.aw(), s.tw());
    inputs {
        /// Write ShSM (`cfg_shsm`) at the edge.
        cfg_shsm_we[1]: bool,
        cfg_shsm[1]: bool,
        /// Write `u` (`cfg_u`) at the edge.
        cfg_u_we[1]: bool,
        cfg_u[aw],
        /// Write ShTB[`cfg_slot`] = `cfg_partner` and base[`cfg_slot`] = `cfg_base` at the edge
        /// (dropped for a slot id ≥ T).
        cfg_slot_we[1]: bool,
        cfg_slot[s.sw()],
        cfg_partner[tw],
        cfg_base[aw],
    }
    outputs {
        /// The registered ShSM (Moore, as every output).
        shsm[1]: bool,
        /// The private size of a shared TB.
        u[aw],
        /// Each slot's partner, `NONE` = unshared.
        shtb[tw; t],
        /// Each slot's §1.4 base byte.
        base[aw; t],
        /// The registered ShTB is not a valid pairing (§2.2).
        err_cfg[1]: bool,
    }
}

impl crate::Block for Params {
    fn build(&self) -> Module {
        build(self)
    }
}

/// Builds ShareCfg's RTL (spec §2.2): registers written at the edge, reset to ShSM 0, u 0,
/// ShTB all `NONE`, base 0 (§2.1); a slot write with `cfg_slot` ≥ T is dropped.
pub fn build(p: &Params) -> Module {
    let s = p.shape();
    let t = p.slots as usize;
    let (aw, sw, tw, kp) = (s.aw(), s.sw(), s.tw(), s.kp() as u64);
    let none = Expr::lit(s.none(), tw);
    let mut m = Module::new(&module_name(p));
    m.cites(crate::blocks::docs::SCRATCHPAD_SHARING);
    let (inp, outs) = m.declare_ports(&ports(p));
    let i = |name: &str| inp[name].clone();
    let o = |name: &str| outs[name].clone();
    let (shsm_we, cfg_shsm, u_we, cfg_u) = (
        i(port::CFG_SHSM_WE),
        i(port::CFG_SHSM),
        i(port::CFG_U_WE),
        i(port::CFG_U),
    );
    let (slot_we, cfg_slot, cfg_partner, cfg_base) = (
        i(port::CFG_SLOT_WE),
        i(port::CFG_SLOT),
        i(port::CFG_PARTNER),
        i(port::CFG_BASE),
    );
    let (shsm, u, shtb, base, err_cfg) = (
        o(port::SHSM),
        o(port::U),
        o(port::SHTB),
        o(port::BASE),
        o(port::ERR_CFG),
    );

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
