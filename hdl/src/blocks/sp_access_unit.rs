//! `SpAccessUnit` (docs/scratchpad-sharing.md §2.3, §1.4, §1.5; Jatala et al., "Scratchpad
//! Sharing in GPUs", seed 001, §3 Fig. 3 and §7.1): per issue port, whether a shared-memory
//! instruction needs its pair's lock, which lock, and every lane's physical byte address.
//! Combinational: all three outputs are Mealy, from this cycle's request and ShareCfg's
//! registered table.
//!
//! Structure per port (spec §7): the slot multiplexer reading ShTB[s] and base[s], one `NONE`
//! comparator, one slot-versus-partner comparator (the role in §1.4 and `min` in `pair`), one
//! adder forming `base[s] + u`, and per lane one comparator `off >= u` and one adder
//! `off + (base[s] or base[s] + u)`.

use crate::blocks::sharing::{bus, index_mux, Shape};
use crate::netlist::{or_tree, Expr, Module};
use crate::params::{declared_by, module_name, Allowed, BlockParams};

crate::block_params! {
    /// SpAccessUnit params (spec §0): the SM shape parameters it uses, declared by [`Shape`].
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct Params {
        slots: u32 = Shape::default().slots, "T", Allowed::As(declared_by::<Shape>);
        smem: u32 = Shape::default().smem, "R", Allowed::As(declared_by::<Shape>);
        lanes: u32 = Shape::default().lanes, "LANES", Allowed::As(declared_by::<Shape>);
        nsched: u32 = Shape::default().nsched, "NSCHED", Allowed::As(declared_by::<Shape>);
    }
}

impl Params {
    /// The block's params taken from an SM shape.
    pub fn of_shape(s: &Shape) -> Params {
        Params {
            slots: s.slots,
            smem: s.smem,
            lanes: s.lanes,
            nsched: s.nsched,
        }
    }

    /// The shape these params describe (W at its default), for the derived widths.
    pub fn shape(&self) -> Shape {
        Shape {
            slots: self.slots,
            smem: self.smem,
            lanes: self.lanes,
            nsched: self.nsched,
            ..Shape::default()
        }
    }
}

impl BlockParams for Params {
    const BLOCK: &'static str = "sp_access_unit";

    fn presets() -> Vec<(&'static str, Self)> {
        vec![
            ("paper", Params::default()),
            ("small", Params::of_shape(&Shape::small())),
        ]
    }
}

/// Port names (spec §2.3; the table inputs are ShareCfg's outputs, §2.2).
pub mod port {
    pub const RQ_VALID: &str = "rq_valid";
    pub const RQ_SLOT: &str = "rq_slot";
    pub const RQ_MASK: &str = "rq_mask";
    pub const RQ_OFF: &str = "rq_off";
    pub const SHSM: &str = "shsm";
    pub const U: &str = "u";
    pub const SHTB: &str = "shtb";
    pub const BASE: &str = "base";
    pub const NEEDS_LOCK: &str = "needs_lock";
    pub const PAIR: &str = "pair";
    pub const PHYS: &str = "phys";
}

/// A deliberate RTL bug, so tests can prove the harness catches one.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    None,
    /// The private check uses `off > u`, the Fig. 3 "≤" slip that §1.5 corrects.
    PrivateUpToU,
}

/// Builds SpAccessUnit's RTL from validated params (spec §2.3).
pub fn build(p: &Params) -> Module {
    build_with(p, Fault::None)
}

#[doc(hidden)]
pub fn build_with(p: &Params, fault: Fault) -> Module {
    let s = p.shape();
    let (t, lanes, ports) = (p.slots as usize, p.lanes as usize, p.nsched as usize);
    let (aw, sw, tw, kw) = (s.aw(), s.sw(), s.tw(), s.kw());
    let name = match fault {
        Fault::None => module_name(p),
        _ => format!("{}_fault", module_name(p)),
    };
    let mut m = Module::new(&name);
    // Present for a uniform interface; the block has no state (§2.1).
    m.input("clock", 1);
    m.input("reset", 1);
    let rq_valid = m.input(port::RQ_VALID, ports);
    let rq_slot = m.input(port::RQ_SLOT, ports * sw);
    let rq_mask = m.input(port::RQ_MASK, ports * lanes);
    let rq_off = m.input(port::RQ_OFF, ports * lanes * aw);
    let shsm = m.input(port::SHSM, 1);
    let u = m.input(port::U, aw);
    let shtb = m.input(port::SHTB, t * tw);
    let base = m.input(port::BASE, t * aw);
    let needs_lock = m.output(port::NEEDS_LOCK, ports);
    let pair = m.output(port::PAIR, ports * kw);
    let phys = m.output(port::PHYS, ports * lanes * aw);

    let entries: Vec<Expr> = (0..t).map(|i| shtb.slice(i * tw, tw)).collect();
    let bases: Vec<Expr> = (0..t).map(|i| base.slice(i * aw, aw)).collect();
    let none = Expr::lit(s.none(), tw);
    let zero = Expr::lit(0, aw);
    let (mut needs, mut pairs, mut addrs) = (vec![], vec![], vec![]);
    for q in 0..ports {
        m.section(&format!(
            "§2.3 port {q}: slot mux, NONE and role comparators"
        ));
        let slot = rq_slot.slice(q * sw, sw);
        // A slot id >= T reads ShTB as NONE (unshared) and base as 0 (spec §0).
        let partner = index_mux(&mut m, &format!("partner{q}"), &slot, &entries, &none);
        let partner = m.wire(&format!("partner_{q}"), partner);
        let base_s = index_mux(&mut m, &format!("bases{q}"), &slot, &bases, &zero);
        let base_s = m.wire(&format!("base_s_{q}"), base_s);
        let unsh = m.wire(&format!("unsh_{q}"), !&shsm | partner.equals(&none));
        // s < ShTB[s]: role 0 of its pair (§1.4), and min(s, ShTB[s]) = s.
        let lower = m.wire(&format!("lower_{q}"), slot.zext(tw).lt(&partner));
        pairs.push(m.wire(
            &format!("pair_{q}"),
            lower.mux(&slot.slice(0, kw), &partner.slice(0, kw)),
        ));
        // Role 0 skips its partner's private u bytes to reach the shared region (§1.4).
        let skip = m.wire(&format!("skip_{q}"), !&unsh & lower);
        let base_u = m.wire(&format!("base_u_{q}"), &base_s + &u);

        m.section(&format!(
            "§1.5, §1.4 port {q}: per lane off >= u and translation"
        ));
        let mut want = Vec::with_capacity(lanes);
        for l in 0..lanes {
            let off = rq_off.slice((q * lanes + l) * aw, aw);
            let private = match fault {
                Fault::None => off.lt(&u),
                Fault::PrivateUpToU => off.lt(&u) | off.equals(&u),
            };
            let shared = m.wire(&format!("shared_{q}_{l}"), !private);
            want.push(&rq_mask.bit(q * lanes + l) & &shared);
            let add = (&skip & &shared).mux(&base_u, &base_s);
            addrs.push(m.wire(&format!("phys_{q}_{l}"), &off + &add));
        }
        let value = &rq_valid.bit(q) & &(!&unsh & or_tree(want, 1));
        needs.push(m.wire(&format!("needs_lock_{q}"), value));
    }
    m.assign(&needs_lock, bus(&needs));
    m.assign(&pair, bus(&pairs));
    m.assign(&phys, bus(&addrs));
    m
}
