//! `LockTable` (docs/scratchpad-sharing.md §2.4; Jatala et al., seed 001, §3–4, §6.2, §7.1):
//! one lock per pair of shared TB slots, granted first come, first served; a request for a held
//! shared region is NACKed; per-slot counters of granted shared-region accesses in flight
//! (`pend`) hold a release back until the owner's last access completes (drain); when the owner
//! is done the lock is freed, or with `POLICY = TRANSFER` handed to a live partner.
//!
//! In-cycle order (§2.1): the grant reads only registered lock state, so there is no
//! combinational loop; `pend_nx`, release and acquire build the next lock state, and
//! `slot_idle` reads that next state.

use crate::blocks::bank_conflict_detector::popcount;
use crate::blocks::sharing::{Policy, Shape};
use crate::netlist::{concat_wide, or_all, or_tree, Dir, Expr, Module, Port};
use crate::params::{bits_for, declared_by, Allowed, BlockParams};

crate::block_params! {
    /// LockTable parameters (spec §0, §2.4): the SM shape's T and NSCHED, the width of the
    /// in-flight counters and the owner-finish policy.
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct Params {
        slots: u32 = Shape::default().slots, "T", Allowed::As(declared_by::<Shape>);
        nsched: u32 = Shape::default().nsched, "NSCHED", Allowed::As(declared_by::<Shape>);
        /// Width of the per-slot in-flight counter `pend` (drain, spec §2.4).
        pend_w: u32 = 6, "PEND_W", Allowed::Range(1, 16);
        /// Lock action when the owner finishes: hand it to a live partner, or free it.
        policy: Policy = Policy::Transfer, "POLICY", Allowed::Names(&["TRANSFER", "FREE"]);
    }
}

impl Params {
    /// The SM shape these params describe (W, LANES and R at their defaults: the lock table
    /// does not depend on them), the one source of the derived widths.
    pub fn shape(&self) -> Shape {
        Shape {
            slots: self.slots,
            nsched: self.nsched,
            ..Shape::default()
        }
    }

    /// Width of `pend_nx` before it is stored: `PEND_W` plus room for NSCHED increments, so
    /// the exact next count and its overflow are both visible.
    pub fn pend_sum_bits(&self) -> usize {
        self.pend_w as usize + bits_for(self.nsched as u64)
    }

    /// Register bits: locks `KP·(1+SW)`, counters `T·PEND_W`, the two error flags (spec §7).
    pub fn register_bits(&self) -> u64 {
        let s = self.shape();
        (s.kp() * (1 + s.sw())) as u64 + u64::from(self.slots * self.pend_w) + 2
    }
}

impl BlockParams for Params {
    const BLOCK: &'static str = "lock_table";

    fn presets() -> Vec<(&'static str, Self)> {
        let paper = Params::default();
        vec![
            ("paper", paper.clone()),
            (
                "small",
                Params {
                    slots: 4,
                    nsched: 2,
                    ..paper
                },
            ),
        ]
    }
}

/// Names of the ports (spec §2.4), shared by the RTL, the model and the stimulus.
pub mod port {
    /// Per issue port: scheduler p picked a shared-memory instruction (§2.3).
    pub const RQ_VALID: &str = "rq_valid";
    /// Per issue port: its TB slot, SW bits.
    pub const RQ_SLOT: &str = "rq_slot";
    /// Per issue port: the access touches the shared region (§2.3).
    pub const NEEDS_LOCK: &str = "needs_lock";
    pub const SHSM: &str = "shsm";
    /// ShTB: each slot's partner, TW bits, `NONE` = unshared (§2.2).
    pub const SHTB: &str = "shtb";
    /// Per issue port: a granted shared-region access of `cpl_slot` completes this cycle.
    pub const CPL_VALID: &str = "cpl_valid";
    pub const CPL_SLOT: &str = "cpl_slot";
    /// Per slot: every live thread has run `relssp` (§3).
    pub const DONE: &str = "done";
    /// Per slot: no live thread left (§3).
    pub const TB_EMPTY: &str = "tb_empty";
    /// Preset or clear lock `cfg_lock_k` (tests, launch); wins over every other update.
    pub const CFG_LOCK_WE: &str = "cfg_lock_we";
    pub const CFG_LOCK_K: &str = "cfg_lock_k";
    pub const CFG_LOCK_VALID: &str = "cfg_lock_valid";
    pub const CFG_LOCK_OWNER: &str = "cfg_lock_owner";
    pub const GNT: &str = "gnt";
    pub const NACK: &str = "nack";
    pub const ACQ: &str = "acq";
    pub const REL_FIRE: &str = "rel_fire";
    pub const XFER: &str = "xfer";
    pub const SLOT_IDLE: &str = "slot_idle";
    pub const LOCK_VALID: &str = "lock_valid";
    pub const LOCK_OWNER: &str = "lock_owner";
    pub const PEND: &str = "pend";
    pub const ERR_PROTO: &str = "err_proto";
    pub const ERR_PEND: &str = "err_pend";
}

/// The block's ports (spec §2.4), packed buses element 0 lowest.
pub fn ports(p: &Params) -> Vec<Port> {
    let s = p.shape();
    let (n, t) = (p.nsched as usize, p.slots as usize);
    let (sw, tw, kp, kw, pw) = (s.sw(), s.tw(), s.kp(), s.kw(), p.pend_w as usize);
    let spec: Vec<(&str, Dir, usize)> = vec![
        ("clock", Dir::In, 1),
        ("reset", Dir::In, 1),
        (port::RQ_VALID, Dir::In, n),
        (port::RQ_SLOT, Dir::In, n * sw),
        (port::NEEDS_LOCK, Dir::In, n),
        (port::SHSM, Dir::In, 1),
        (port::SHTB, Dir::In, t * tw),
        (port::CPL_VALID, Dir::In, n),
        (port::CPL_SLOT, Dir::In, n * sw),
        (port::DONE, Dir::In, t),
        (port::TB_EMPTY, Dir::In, t),
        (port::CFG_LOCK_WE, Dir::In, 1),
        (port::CFG_LOCK_K, Dir::In, kw),
        (port::CFG_LOCK_VALID, Dir::In, 1),
        (port::CFG_LOCK_OWNER, Dir::In, sw),
        (port::GNT, Dir::Out, n),
        (port::NACK, Dir::Out, n),
        (port::ACQ, Dir::Out, n),
        (port::REL_FIRE, Dir::Out, t),
        (port::XFER, Dir::Out, t),
        (port::SLOT_IDLE, Dir::Out, t),
        (port::LOCK_VALID, Dir::Out, kp),
        (port::LOCK_OWNER, Dir::Out, kp * sw),
        (port::PEND, Dir::Out, t * pw),
        (port::ERR_PROTO, Dir::Out, 1),
        (port::ERR_PEND, Dir::Out, 1),
    ];
    crate::netlist::port_list(&spec)
}

/// A deliberate lock-protocol bug, so tests can prove the harness catches, shrinks and shows
/// one.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    None,
    /// Release as soon as the owner is done, ignoring its accesses still in flight: the
    /// partner could then race the owner's last writes (the drain rule of §2.4 broken).
    ReleaseIgnoresDrain,
}

/// Builds the lock table's RTL from validated params (spec §2.4).
pub fn build(p: &Params) -> Module {
    build_with(p, Fault::None)
}

/// The `n`-bit one-hot decode of `sel`: bit `i` is `sel == i`; a value ≥ `n` decodes to 0.
fn decode(sel: &Expr, n: usize) -> Expr {
    let w = sel.width();
    let bits: Vec<Expr> = (0..n)
        .map(|i| {
            if i < 1 << w {
                sel.equals(&Expr::lit(i as u64, w))
            } else {
                Expr::lit(0, 1)
            }
        })
        .collect();
    bus(&bits)
}

/// `sel ≥ n` when `sel` can hold such a value: an index that names no slot (or pair).
fn beyond(sel: &Expr, n: usize) -> Option<Expr> {
    (n < 1 << sel.width()).then(|| !sel.lt(&Expr::lit(n as u64, sel.width())))
}

/// The bit of `bits` that the one-hot `hot` selects; 1 when `out` (the index names no slot:
/// a nonexistent slot reads `done` / `tb_empty` 1 and has nothing in flight, spec §2.4).
fn bit_at(hot: &Expr, bits: &Expr, out: &Option<Expr>) -> Expr {
    let found = (hot & bits).any();
    match out {
        Some(out) => found | out.clone(),
        None => found,
    }
}

/// The item that the one-hot `hot` selects (an AND-OR tree); `default.1` when `default.0`.
fn field_at(hot: &Expr, items: &[Expr], default: Option<(&Expr, &Expr)>) -> Expr {
    let w = items[0].width();
    let zero = Expr::lit(0, w);
    let mut terms: Vec<Expr> = items
        .iter()
        .enumerate()
        .map(|(i, x)| hot.bit(i).mux(x, &zero))
        .collect();
    if let Some((when, value)) = default {
        terms.push(when.mux(value, &zero));
    }
    or_tree(terms, w)
}

/// A packed bus of equal-width elements, element 0 in the lowest bits.
fn bus(items: &[Expr]) -> Expr {
    let msb_first: Vec<Expr> = items.iter().rev().cloned().collect();
    concat_wide(&msb_first)
}

/// [`build`], with a planted [`Fault`] (tests only).
#[doc(hidden)]
pub fn build_with(p: &Params, fault: Fault) -> Module {
    let shape = p.shape();
    let (n, t) = (p.nsched as usize, p.slots as usize);
    let (sw, tw, kp, kw) = (shape.sw(), shape.tw(), shape.kp(), shape.kw());
    let (pw, ew) = (p.pend_w as usize, p.pend_sum_bits());
    let name = crate::params::module_name(p);
    // A planted fault (tests only) never shares a name with the real design.
    let name = match fault {
        Fault::None => name,
        _ => format!("{name}_fault"),
    };
    let mut m = Module::new(&name);
    let (inp, out) = m.declare_ports(&ports(p));
    let i = |name: &str| inp[name].clone();
    let (rq_valid, rq_slot, needs_lock) =
        (i(port::RQ_VALID), i(port::RQ_SLOT), i(port::NEEDS_LOCK));
    let (shsm, shtb) = (i(port::SHSM), i(port::SHTB));
    let (cpl_valid, cpl_slot) = (i(port::CPL_VALID), i(port::CPL_SLOT));
    let (done, tb_empty) = (i(port::DONE), i(port::TB_EMPTY));
    let zero_t = Expr::lit(0, t);

    // --- State (§2.4 [D]: a lock is a valid bit + the owner's slot id) -------------------------
    let lock_valid = m.reg("lock_valid_q", kp, 0);
    let lock_owner: Vec<Expr> = (0..kp)
        .map(|k| m.reg(&format!("lock_owner_{k}_q"), sw, 0))
        .collect();
    let pend: Vec<Expr> = (0..t)
        .map(|s| m.reg(&format!("pend_{s}_q"), pw, 0))
        .collect();
    let err_proto = m.reg("err_proto_q", 1, 0);
    let err_pend = m.reg("err_pend_q", 1, 0);

    // --- Per slot: pair(s) = low KW bits of min(s, ShTB[s]) (§1.3) -----------------------------
    m.section("spec §1.3, §2.4: pair(s) = low KW bits of min(s, ShTB[s])");
    let shtb_of: Vec<Expr> = (0..t).map(|s| shtb.slice(s * tw, tw)).collect();
    let pair_of: Vec<Expr> = shtb_of
        .iter()
        .enumerate()
        .map(|(s, sh)| {
            let me = Expr::lit(s as u64, tw);
            let low = m.wire(&format!("pair_min_{s}"), me.lt(sh).mux(&me, sh));
            m.wire(&format!("pair_{s}"), low.slice(0, kw))
        })
        .collect();

    // --- Grant: own / want / acquire race / NACK (§2.4) ----------------------------------------
    m.section("spec §2.4 grant: own, want, same-cycle race (lower slot wins), NACK");
    let slot: Vec<Expr> = (0..n).map(|q| rq_slot.slice(q * sw, sw)).collect();
    let slot_hot: Vec<Expr> = (0..n)
        .map(|q| m.wire(&format!("rq_hot_{q}"), decode(&slot[q], t)))
        .collect();
    let slot_out: Vec<Option<Expr>> = slot.iter().map(|s| beyond(s, t)).collect();
    let mut k_of = vec![];
    let mut k_hot = vec![];
    let mut nl = vec![];
    let mut own = vec![];
    let mut want = vec![];
    for q in 0..n {
        // A slot beyond T reads ShTB as NONE, so its pair is its own low bits.
        let low = slot[q].slice(0, kw);
        let default = slot_out[q].as_ref().map(|o| (o, &low));
        let k = m.wire(&format!("k_{q}"), field_at(&slot_hot[q], &pair_of, default));
        // A pair index ≥ KP decodes to nothing: a free lock.
        let hot = m.wire(&format!("k_hot_{q}"), decode(&k, kp));
        let held = (&hot & &lock_valid).any();
        let holder = field_at(&hot, &lock_owner, None);
        let needs = m.wire(&format!("nl_{q}"), rq_valid.bit(q) & needs_lock.bit(q));
        own.push(&needs & &(held.clone() & holder.equals(&slot[q])));
        want.push(m.wire(&format!("want_{q}"), &needs & &!held));
        nl.push(needs);
        k_of.push(k);
        k_hot.push(hot);
    }
    let mut acq = vec![];
    let mut gnt = vec![];
    let mut nack = vec![];
    for q in 0..n {
        // Pair indices compare as numbers: two requests for the same nonexistent pair race too.
        let same_pair = |r: usize| k_of[r].equals(&k_of[q]);
        let beaten: Vec<Expr> = (0..n)
            .filter(|&r| r != q)
            .map(|r| &want[r] & &(same_pair(r) & slot[r].lt(&slot[q])))
            .collect();
        let a = m.wire(&format!("acq_{q}"), &want[q] & &!or_all(&beaten, 1));
        let g = m.wire(
            &format!("gnt_{q}"),
            rq_valid.bit(q) & (!needs_lock.bit(q) | own[q].clone() | a.clone()),
        );
        nack.push(rq_valid.bit(q) & !g.clone());
        acq.push(a);
        gnt.push(g);
    }

    // --- pend_nx: exact next count, stored mod 2^PEND_W (§2.4) ---------------------------------
    m.section("spec §2.4 pend_nx = pend + granted shared accesses - completions, mod 2^PEND_W");
    // Per port, the slot (one-hot) whose count it raises or lowers this cycle.
    let issued: Vec<Expr> = (0..n)
        .map(|q| {
            let counts = &gnt[q] & &nl[q];
            m.wire(&format!("inc_hot_{q}"), counts.mux(&slot_hot[q], &zero_t))
        })
        .collect();
    let completed: Vec<Expr> = (0..n)
        .map(|q| {
            let hot = decode(&cpl_slot.slice(q * sw, sw), t);
            m.wire(&format!("dec_hot_{q}"), cpl_valid.bit(q).mux(&hot, &zero_t))
        })
        .collect();
    let mut pend_zero = vec![];
    let mut pend_bad = vec![];
    for (s, count) in pend.iter().enumerate() {
        let bits = |hot: &[Expr]| hot.iter().map(|h| h.bit(s)).collect::<Vec<_>>();
        let up = popcount(&bits(&issued)).zext(ew);
        let down = m.wire(
            &format!("pend_dec_{s}"),
            popcount(&bits(&completed)).zext(ew),
        );
        let sum = m.wire(&format!("pend_sum_{s}"), count.zext(ew) + up);
        let exact = m.wire(&format!("pend_exact_{s}"), &sum - &down);
        let under = sum.lt(&down);
        let over = !under.clone() & exact.slice(pw, ew - pw).any();
        pend_bad.push(under | over);
        let stored = exact.slice(0, pw);
        pend_zero.push(stored.equals(&Expr::lit(0, pw)));
        m.next(count, stored);
    }
    let pend_zero = m.wire("pend_zero", bus(&pend_zero));

    // --- Release and drain, per held lock (§2.4) -----------------------------------------------
    m.section("spec §2.4 release: owner done and drained; TRANSFER to a live partner or free");
    let mut fire = vec![];
    let mut hand = vec![];
    let mut free = vec![];
    let mut owner_hot = vec![];
    // The owner each lock keeps unless acquired or configured: o, or partner(o) on a transfer
    // (as an id and one-hot).
    let mut kept = vec![];
    let mut kept_hot = vec![];
    for (k, o) in lock_owner.iter().enumerate() {
        let hot = m.wire(&format!("owner_hot_{k}"), decode(o, t));
        let out = beyond(o, t);
        let drained = match fault {
            Fault::ReleaseIgnoresDrain => Expr::lit(1, 1),
            Fault::None => bit_at(&hot, &pend_zero, &out),
        };
        let f = m.wire(
            &format!("rel_{k}"),
            lock_valid.bit(k) & bit_at(&hot, &done, &out) & drained,
        );
        let x = match p.policy {
            Policy::Transfer => {
                // partner(o) = ShTB[o] (NONE when o names no slot). NONE and other ids ≥ T
                // decode to no slot, whose tb_empty reads 1; ShSM = 0 makes o unshared.
                let none = Expr::lit(shape.none(), tw);
                let o2 = m.wire(
                    &format!("partner_{k}"),
                    field_at(&hot, &shtb_of, out.as_ref().map(|b| (b, &none))),
                );
                let o2_hot = m.wire(&format!("partner_hot_{k}"), decode(&o2, t));
                let partner_live = &shsm & &(&o2_hot & &!tb_empty.clone()).any();
                let owner_empty = bit_at(&hot, &tb_empty, &out);
                let x = m.wire(&format!("xfer_{k}"), &f & &(owner_empty & partner_live));
                kept.push(x.mux(&o2.slice(0, sw), o));
                kept_hot.push(x.mux(&o2_hot, &hot));
                x
            }
            Policy::Free => {
                kept.push(o.clone());
                kept_hot.push(hot.clone());
                Expr::lit(0, 1)
            }
        };
        free.push(&f & &!x.clone());
        fire.push(f);
        hand.push(x);
        owner_hot.push(hot);
    }

    // --- Acquire, configuration write, next lock state (§2.4) ----------------------------------
    m.section("spec §2.4 acquire, cfg_lock write (wins), next lock state");
    let cfg_we = i(port::CFG_LOCK_WE);
    let cfg_hot = m.wire("cfg_hot", decode(&i(port::CFG_LOCK_K), kp));
    let (cfg_valid, cfg_owner) = (i(port::CFG_LOCK_VALID), i(port::CFG_LOCK_OWNER));
    let cfg_owner_hot = m.wire("cfg_owner_hot", decode(&cfg_owner, t));
    let mut valid_nx = vec![];
    // Per lock, the slots (one-hot) that hold it after the edge.
    let mut holds_nx = vec![];
    for k in 0..kp {
        let takes: Vec<Expr> = (0..n).map(|q| &acq[q] & &k_hot[q].bit(k)).collect();
        // Every port that acquires pair k carries the same (lowest) slot.
        let takers = m.wire(&format!("takes_{k}"), bus(&takes));
        let taker = field_at(&takers, &slot, None);
        let taker_hot = field_at(&takers, &slot_hot, None);
        let taken = m.wire(&format!("take_{k}"), or_all(&takes, 1));
        let cfg_hit = m.wire(&format!("cfg_hit_{k}"), &cfg_we & &cfg_hot.bit(k));
        let v = m.wire(
            &format!("lock_valid_nx_{k}"),
            cfg_hit.mux(
                &cfg_valid,
                &(&taken | &(lock_valid.bit(k) & !free[k].clone())),
            ),
        );
        let o = cfg_hit.mux(&cfg_owner, &taken.mux(&taker, &kept[k]));
        m.next(&lock_owner[k], o);
        let hot = cfg_hit.mux(&cfg_owner_hot, &taken.mux(&taker_hot, &kept_hot[k]));
        holds_nx.push(m.wire(&format!("holds_nx_{k}"), v.mux(&hot, &zero_t)));
        valid_nx.push(v);
    }
    m.next(&lock_valid, bus(&valid_nx));

    // --- Errors (sticky) -----------------------------------------------------------------------
    m.section("spec §2.4 errors: acquire by a done TB, pend overflow or underflow");
    let late: Vec<Expr> = (0..n)
        .map(|q| &acq[q] & &bit_at(&slot_hot[q], &done, &slot_out[q]))
        .collect();
    m.next(&err_proto, &err_proto | &or_all(&late, 1));
    m.next(&err_pend, &err_pend | &or_all(&pend_bad, 1));

    // --- Per-slot outputs ----------------------------------------------------------------------
    m.section("spec §2.4 rel_fire, xfer by owner; slot_idle from the next lock state");
    let by_owner = |flags: &[Expr]| {
        let terms = (0..kp)
            .map(|k| flags[k].mux(&owner_hot[k], &zero_t))
            .collect();
        or_tree(terms, t)
    };
    let rel_fire = by_owner(&fire);
    let xfer = by_owner(&hand);
    // Slot s holds its own pair next: holds_nx[pair(s)] has bit s.
    let own_pair: Vec<Expr> = (0..kp)
        .map(|k| {
            let kl = Expr::lit(k as u64, kw);
            let members = bus(&pair_of.iter().map(|x| x.equals(&kl)).collect::<Vec<_>>());
            &holds_nx[k] & &members
        })
        .collect();
    let holding = m.wire("holding_nx", or_tree(own_pair, t));
    let idle = &tb_empty & &(&pend_zero & &!holding);

    let o = |name: &str| out[name].clone();
    m.assign(&o(port::GNT), bus(&gnt));
    m.assign(&o(port::NACK), bus(&nack));
    m.assign(&o(port::ACQ), bus(&acq));
    m.assign(&o(port::REL_FIRE), rel_fire);
    m.assign(&o(port::XFER), xfer);
    m.assign(&o(port::SLOT_IDLE), idle);
    m.assign(&o(port::LOCK_VALID), lock_valid);
    m.assign(&o(port::LOCK_OWNER), bus(&lock_owner));
    m.assign(&o(port::PEND), bus(&pend));
    m.assign(&o(port::ERR_PROTO), err_proto);
    m.assign(&o(port::ERR_PEND), err_pend);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_registers_are_138_bits() {
        let p = Params::default();
        assert_eq!(p.register_bits(), 138);
        assert_eq!(build(&p).register_bits(), 138);
        let small = Params::resolve(Some("small"), &[]).unwrap();
        assert_eq!(build(&small).register_bits(), small.register_bits());
    }

    #[test]
    fn ports_follow_the_spec_widths() {
        let p = Params::default();
        let width = |name: &str| {
            ports(&p)
                .into_iter()
                .find(|x| x.name == name)
                .unwrap()
                .width
        };
        assert_eq!(width(port::SHTB), 80);
        assert_eq!(width(port::RQ_SLOT), 16);
        assert_eq!(width(port::CFG_LOCK_K), 3);
        assert_eq!(width(port::LOCK_OWNER), 32);
        assert_eq!(width(port::PEND), 96);
        assert_eq!(build(&p).ports(), ports(&p));
    }

    #[test]
    fn policy_and_pend_w_are_settable() {
        let p = Params::resolve_pairs(None, &[("POLICY", "free"), ("PEND_W", "2")]).unwrap();
        assert_eq!((p.policy, p.pend_w), (Policy::Free, 2));
        assert!(Params::resolve_pairs(None, &[("PEND_W", "0")]).is_err());
        assert!(Params::resolve_pairs(None, &[("T", "33")]).is_err());
    }
}
