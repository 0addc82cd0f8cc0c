//! `OwnerClass` (docs/scratchpad-sharing.md §2.5; Jatala et al., "Scratchpad Sharing in GPUs",
//! seed 001, §4 and §7.1): each warp's owner bit and its Owner Warp First class, decoded from
//! ShareCfg's table and the lock table's registered locks. Combinational: the paper stores W
//! owner bits (§7.1); the project decodes them (§2.5 [D]), so the block has no registers.
//!
//! Structure: per slot, its pair's lock is looked up once and reduced to "owns the lock" and
//! the class it has when it does not; per warp, a T:1 multiplexer on its slot picks those
//! three bits.

use crate::blocks::sharing::{bus, index_mux, Class, FreeClass, Shape};
use crate::netlist::{concat, mask, Expr, Module};
use crate::params::{declared_by, module_name, Allowed, BlockParams};

crate::block_params! {
    /// OwnerClass params (spec §0, §2.5): the SM shape parameters it uses, declared by
    /// [`Shape`], and the class of a shared TB whose lock is free.
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct Params {
        slots: u32 = Shape::default().slots, "T", Allowed::As(declared_by::<Shape>);
        warps: u32 = Shape::default().warps, "W", Allowed::As(declared_by::<Shape>);
        /// OWF class of a shared TB whose pair lock is free (spec §2.5 [C]).
        free_class: FreeClass = FreeClass::Nonowner, "FREE_CLASS", Allowed::Names(&["NONOWNER", "UNSHARED"]);
    }
}

impl Params {
    /// The block's params taken from an SM shape (FREE_CLASS at its default).
    pub fn of_shape(s: &Shape) -> Params {
        Params {
            slots: s.slots,
            warps: s.warps,
            ..Params::default()
        }
    }

    /// The shape these params describe (the parameters the block lacks at their defaults),
    /// for the derived widths.
    pub fn shape(&self) -> Shape {
        Shape {
            slots: self.slots,
            warps: self.warps,
            ..Shape::default()
        }
    }
}

impl BlockParams for Params {
    const BLOCK: &'static str = "owner_class";

    /// The paper's SM and the small shape, each FREE_CLASS at the small shape and at T = 6
    /// (slot ids 6 and 7, a ShTB value 6, the pair index 3 ≥ KP), and the widest table (T = 32)
    /// with FREE_CLASS = UNSHARED.
    fn presets() -> Vec<(&'static str, Self)> {
        let small = Params::of_shape(&Shape::small());
        let unshared = FreeClass::Unshared;
        let odd_t = Params { slots: 6, ..small };
        vec![
            ("paper", Params::default()),
            ("small", small.clone()),
            (
                "small_unshared",
                Params {
                    free_class: unshared,
                    ..small
                },
            ),
            ("odd_t", odd_t.clone()),
            (
                "odd_t_unshared",
                Params {
                    free_class: unshared,
                    ..odd_t
                },
            ),
            (
                "t32_unshared",
                Params {
                    slots: 32,
                    free_class: unshared,
                    ..Params::default()
                },
            ),
        ]
    }
}

crate::ports! {
    Params as p;
    let s = p.shape();
    let (t, w, sw, kp) = (p.slots as usize, p.warps as usize, s.sw(), s.kp());
    inputs {
        /// Per warp slot: it holds a warp.
        warp_valid[1; w]: bool,
        /// Per warp slot: its TB slot.
        warp_slot[sw; w],
        /// ShareCfg's registered ShSM and ShTB (§2.2).
        shsm[1]: bool,
        shtb[s.tw(); t],
        /// The lock table's registered locks (§2.4): per pair, held and by whom.
        lock_valid[1; kp]: bool,
        lock_owner[sw; kp],
    }
    outputs {
        /// Per warp (Mealy): its TB holds its pair's lock.
        owner_bit[1; w]: bool,
        /// Per warp (Mealy): its OWF class (`Class` codes).
        warp_class[Class::BITS; w],
    }
}

impl crate::Block for Params {
    fn build(&self) -> Module {
        build(self)
    }
}

/// Builds OwnerClass's RTL from validated params (spec §2.5).
pub fn build(p: &Params) -> Module {
    let s = p.shape();
    let (t, w) = (p.slots as usize, p.warps as usize);
    let (sw, tw, kp, kw) = (s.sw(), s.tw(), s.kp(), s.kw());
    let cw = Class::BITS;
    let class = |c: Class| Expr::lit(c.code(), cw);
    let mut m = Module::new(&module_name(p));
    m.cites(crate::blocks::docs::SCRATCHPAD_SHARING);
    // `clock` and `reset` are there for a uniform interface; the block has no state (§2.1).
    let (inp, out) = m.declare_ports(&ports(p));
    let i = |name: &str| inp[name].clone();
    let (warp_valid, warp_slot, shsm, shtb) = (
        i(port::WARP_VALID),
        i(port::WARP_SLOT),
        i(port::SHSM),
        i(port::SHTB),
    );
    let (lock_valid, lock_owner) = (i(port::LOCK_VALID), i(port::LOCK_OWNER));
    let (owner_bit, warp_class) = (out[port::OWNER_BIT].clone(), out[port::WARP_CLASS].clone());

    let valids: Vec<Expr> = (0..kp).map(|k| lock_valid.bit(k)).collect();
    let owners: Vec<Expr> = (0..kp).map(|k| lock_owner.slice(k * sw, sw)).collect();
    let none = Expr::lit(s.none(), tw);
    // Per slot: {owns its pair's lock, class when not the owner} (1 + 2 bits).
    let mut info = Vec::with_capacity(t);
    for i in 0..t {
        m.section(&format!("§2.5 slot {i}: its pair's lock"));
        let partner = shtb.slice(i * tw, tw);
        let me = i as u64;
        let unsh = m.wire(&format!("unsh_{i}"), !&shsm | partner.equals(&none));
        // pair(i) = low KW bits of min(i, ShTB[i]); an index >= KP reads as a free lock.
        let k = Expr::lit(me, tw)
            .lt(&partner)
            .mux(&Expr::lit(me & mask(kw), kw), &partner.slice(0, kw));
        let k = m.wire(&format!("k_{i}"), k);
        let free = Expr::lit(0, 1);
        let lv = index_mux(&mut m, &format!("lv{i}"), &k, &valids, &free);
        let lv = m.wire(&format!("lv_{i}"), lv);
        let lo = index_mux(&mut m, &format!("lo{i}"), &k, &owners, &Expr::lit(0, sw));
        let owns = !&unsh & (&lv & &lo.equals(&Expr::lit(me, sw)));
        let other = unsh.mux(
            &class(Class::Unshared),
            &lv.mux(&class(Class::Nonowner), &class(p.free_class.class())),
        );
        info.push(m.wire(&format!("info_{i}"), concat(&[owns, other])));
    }

    m.section("§2.5 per warp: its slot's owner bit and class");
    // A slot id >= T is unshared (spec §0): never the owner, class UNSHARED.
    let out_of_range = concat(&[Expr::lit(0, 1), class(Class::Unshared)]);
    let (mut bits, mut classes) = (Vec::with_capacity(w), Vec::with_capacity(w));
    for j in 0..w {
        let slot = warp_slot.slice(j * sw, sw);
        let got = index_mux(&mut m, &format!("info{j}"), &slot, &info, &out_of_range);
        let got = m.wire(&format!("info_w{j}"), got);
        let own = m.wire(&format!("owner_bit_{j}"), &warp_valid.bit(j) & &got.bit(cw));
        classes.push(m.wire(
            &format!("warp_class_{j}"),
            own.mux(&class(Class::Owner), &got.slice(0, cw)),
        ));
        bits.push(own);
    }
    m.assign(&owner_bit, bus(&bits));
    m.assign(&warp_class, bus(&classes));
    m
}
