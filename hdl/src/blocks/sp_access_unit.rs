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

    /// The paper's SM, the small shape, `odd_t` (T = 6 with 4 ports: slot ids 6 and 7 on the
    /// port, KP = 3 with KW = 2) and `t32` (the widest table).
    fn presets() -> Vec<(&'static str, Self)> {
        let small = Params::of_shape(&Shape::small());
        vec![
            ("paper", Params::default()),
            ("small", small.clone()),
            (
                "odd_t",
                Params {
                    slots: 6,
                    nsched: 4,
                    ..small
                },
            ),
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
    let (t, lanes, n, aw) = (p.slots as usize, p.lanes as usize, p.nsched as usize, s.aw());
    inputs {
        /// Per issue port: a shared-memory instruction is picked.
        rq_valid[1; n]: bool,
        /// Per issue port: its TB slot.
        rq_slot[s.sw(); n],
        /// Per issue port: its active lanes.
        rq_mask[lanes; n],
        /// Per issue port and lane (port-major): the TB-relative byte offset.
        rq_off[aw; n * lanes],
        /// ShareCfg's registered table (§2.2).
        shsm[1]: bool,
        u[aw],
        shtb[s.tw(); t],
        base[aw; t],
    }
    outputs {
        /// Per issue port (Mealy): the access needs its pair's lock.
        needs_lock[1; n]: bool,
        /// Per issue port (Mealy): the pair's lock index.
        pair[s.kw(); n],
        /// Per issue port and lane (Mealy): the physical byte address.
        phys[aw; n * lanes],
    }
}

impl crate::Block for Params {
    fn build(&self) -> Module {
        build(self)
    }
    #[cfg(feature = "faults")]
    const FAULTS: &'static [crate::faults::Fault] = &[faults::PRIVATE_UP_TO_U];
}

/// Planted faults (docs/blocks.md §4).
#[cfg(feature = "faults")]
pub mod faults {
    use crate::faults::Fault;

    /// The private check uses `off <= u`, the Fig. 3 "≤" slip that §1.5 corrects: an offset of
    /// exactly `u` is taken as private.
    pub const PRIVATE_UP_TO_U: Fault = Fault {
        block: "sp_access_unit",
        name: "private_up_to_u",
        what:
            "an offset of exactly u is private (the Fig. 3 <= slip; spec §1.5: private is off < u)",
        port: super::port::NEEDS_LOCK,
        // Combinational: one request with a lane at u.
        within: 1,
    };
}

/// Builds SpAccessUnit's RTL from validated params (spec §2.3).
pub fn build(p: &Params) -> Module {
    let s = p.shape();
    let (t, lanes, n) = (p.slots as usize, p.lanes as usize, p.nsched as usize);
    let (aw, sw, tw, kw) = (s.aw(), s.sw(), s.tw(), s.kw());
    let mut m = Module::new(&module_name(p));
    m.cites(crate::blocks::docs::SCRATCHPAD_SHARING);
    // `clock` and `reset` are there for a uniform interface; the block has no state (§2.1).
    let (inp, out) = m.declare_ports(&ports(p));
    let i = |name: &str| inp[name].clone();
    let (rq_valid, rq_slot, rq_mask, rq_off) = (
        i(port::RQ_VALID),
        i(port::RQ_SLOT),
        i(port::RQ_MASK),
        i(port::RQ_OFF),
    );
    let (shsm, u, shtb, base) = (i(port::SHSM), i(port::U), i(port::SHTB), i(port::BASE));
    let o = |name: &str| out[name].clone();
    let (needs_lock, pair, phys) = (o(port::NEEDS_LOCK), o(port::PAIR), o(port::PHYS));

    let entries: Vec<Expr> = (0..t).map(|i| shtb.slice(i * tw, tw)).collect();
    let bases: Vec<Expr> = (0..t).map(|i| base.slice(i * aw, aw)).collect();
    let none = Expr::lit(s.none(), tw);
    let zero = Expr::lit(0, aw);
    let (mut needs, mut pairs, mut addrs) = (vec![], vec![], vec![]);
    for q in 0..n {
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
            let private = crate::planted!(
                faults::PRIVATE_UP_TO_U,
                off.lt(&u) | off.equals(&u),
                off.lt(&u)
            );
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
