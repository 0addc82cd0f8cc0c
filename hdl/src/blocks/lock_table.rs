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
use crate::netlist::{concat_wide, or_all, or_tree, Expr, Module};
use crate::params::{bits_for, declared_by, Allowed, BlockParams};
use std::collections::HashMap;

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

    /// The paper's table and the small shape (T 4, NSCHED 2) under TRANSFER; then FREE at both,
    /// a 2-bit `pend` (it overflows: `err_pend`) with 2 and 4 issue ports, one issue port, and
    /// T = 6 (slot ids and a pair index that name nothing) under both policies.
    fn presets() -> Vec<(&'static str, Self)> {
        let at = |slots, nsched, pend_w, policy| Params {
            slots,
            nsched,
            pend_w,
            policy,
        };
        let (t, f) = (Policy::Transfer, Policy::Free);
        vec![
            ("paper", Params::default()),
            ("small", at(4, 2, 6, t)),
            ("paper_free", at(16, 4, 6, f)),
            ("small_free", at(4, 2, 2, f)),
            ("narrow", at(4, 4, 2, t)),
            ("one_port", at(4, 1, 6, f)),
            ("odd_t", at(6, 2, 6, t)),
            ("odd_t_free", at(6, 2, 6, f)),
        ]
    }
}

crate::ports! {
    Params as p;
    let s = p.shape();
    let (n, t, sw, kp) = (p.nsched as usize, p.slots as usize, s.sw(), s.kp());
    inputs {
        /// Per issue port: scheduler p picked a shared-memory instruction (§2.3).
        rq_valid[1; n]: bool,
        /// Per issue port: its TB slot.
        rq_slot[sw; n],
        /// Per issue port: the access touches the shared region (§2.3).
        needs_lock[1; n]: bool,
        shsm[1]: bool,
        /// ShTB: each slot's partner, `NONE` = unshared (§2.2).
        shtb[s.tw(); t],
        /// Per issue port: a granted shared-region access of `cpl_slot` completes this cycle.
        cpl_valid[1; n]: bool,
        cpl_slot[sw; n],
        /// Per slot: every live thread has run `relssp` (§3).
        done[1; t]: bool,
        /// Per slot: no live thread left (§3).
        tb_empty[1; t]: bool,
        /// Preset or clear lock `cfg_lock_k` (tests, launch); wins over every other update.
        cfg_lock_we[1]: bool,
        cfg_lock_k[s.kw()],
        cfg_lock_valid[1]: bool,
        cfg_lock_owner[sw],
    }
    outputs {
        /// Per issue port (Mealy): the request issues (granted, or needs no lock).
        gnt[1; n]: bool,
        /// Per issue port (Mealy): the request is refused (a held shared region).
        nack[1; n]: bool,
        /// Per issue port (Mealy): the request acquires its pair's free lock.
        acq[1; n]: bool,
        /// Per slot (Mealy): the lock it owns is released this cycle.
        rel_fire[1; t]: bool,
        /// Per slot (Mealy): the release hands the lock to the partner (TRANSFER).
        xfer[1; t]: bool,
        /// Per slot (Mealy, from the next lock state): empty, drained and holding no lock.
        slot_idle[1; t]: bool,
        /// Per pair (Moore): the lock is held.
        lock_valid[1; kp]: bool,
        /// Per pair (Moore): the holder's slot.
        lock_owner[sw; kp],
        /// Per slot (Moore): granted shared-region accesses in flight.
        pend[p.pend_w as usize; t],
        /// Sticky (Moore): an acquire by a TB that is already done.
        err_proto[1]: bool,
        /// Sticky (Moore): `pend` overflowed or underflowed.
        err_pend[1]: bool,
    }
}

impl crate::Block for Params {
    fn build(&self) -> Module {
        build(self)
    }
    #[cfg(feature = "faults")]
    const FAULTS: &'static [crate::faults::Fault] = &[faults::RELEASE_IGNORES_DRAIN];
}

/// Planted faults (docs/blocks.md §4).
#[cfg(feature = "faults")]
pub mod faults {
    use crate::faults::Fault;

    /// Release as soon as the owner is done, ignoring its accesses still in flight: the
    /// partner could then race the owner's last writes (the drain rule of §2.4 broken).
    pub const RELEASE_IGNORES_DRAIN: Fault = Fault {
        block: "lock_table",
        name: "release_ignores_drain",
        what: "the owner's lock is released while its shared-region accesses are in flight (spec §2.4 drain)",
        port: super::port::REL_FIRE,
        // Acquire with an access in flight, then done: released too early.
        within: 6,
    };
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

/// The widths every section uses (spec §0).
struct Dims {
    n: usize,
    t: usize,
    sw: usize,
    tw: usize,
    kp: usize,
    kw: usize,
    /// `PEND_W`, and the width of the exact next count ([`Params::pend_sum_bits`]).
    pw: usize,
    ew: usize,
}

/// The registers (§2.4 [D]: a lock is a valid bit + the owner's slot id).
struct State {
    lock_valid: Expr,
    lock_owner: Vec<Expr>,
    pend: Vec<Expr>,
    err_proto: Expr,
    err_pend: Expr,
}

/// What every section reads: the widths, the input ports, the registers, ShTB by slot and
/// each slot's pair.
struct Ctx<'a> {
    d: Dims,
    inp: &'a HashMap<String, Expr>,
    st: State,
    shtb_of: Vec<Expr>,
    pair_of: Vec<Expr>,
}

impl Ctx<'_> {
    fn i(&self, name: &str) -> Expr {
        self.inp[name].clone()
    }
}

/// Per issue port: the request's slot (as an id, one-hot and "names no slot"), its pair
/// (one-hot), whether it needs the lock, and the grant.
struct Grant {
    slot: Vec<Expr>,
    slot_hot: Vec<Expr>,
    slot_out: Vec<Option<Expr>>,
    k_hot: Vec<Expr>,
    nl: Vec<Expr>,
    acq: Vec<Expr>,
    gnt: Vec<Expr>,
    nack: Vec<Expr>,
}

/// Per held lock: released (`fire`), handed over (`hand`), freed; the owner one-hot; the
/// owner it keeps unless acquired or configured (o, or partner(o) on a transfer), as an id and
/// one-hot.
struct Release {
    fire: Vec<Expr>,
    hand: Vec<Expr>,
    free: Vec<Expr>,
    owner_hot: Vec<Expr>,
    kept: Vec<Expr>,
    kept_hot: Vec<Expr>,
}

/// Builds the lock table's RTL from validated params (spec §2.4), one function per section.
pub fn build(p: &Params) -> Module {
    let shape = p.shape();
    let d = Dims {
        n: p.nsched as usize,
        t: p.slots as usize,
        sw: shape.sw(),
        tw: shape.tw(),
        kp: shape.kp(),
        kw: shape.kw(),
        pw: p.pend_w as usize,
        ew: p.pend_sum_bits(),
    };
    let mut m = Module::new(&crate::params::module_name(p));
    m.cites(crate::blocks::docs::SCRATCHPAD_SHARING);
    let (inp, out) = m.declare_ports(&ports(p));
    let st = state(&mut m, &d);
    let shtb = inp[port::SHTB].clone();
    let shtb_of: Vec<Expr> = (0..d.t).map(|s| shtb.slice(s * d.tw, d.tw)).collect();
    let pair_of = pairs(&mut m, &d, &shtb_of);
    let c = Ctx {
        d,
        inp: &inp,
        st,
        shtb_of,
        pair_of,
    };
    let g = grant(&mut m, &c);
    let (pend_zero, pend_bad) = pend_next(&mut m, &c, &g);
    let r = release(&mut m, &c, p.policy, shape.none(), &pend_zero);
    let holds_nx = next_locks(&mut m, &c, &g, &r);
    errors(&mut m, &c, &g, &pend_bad);
    outputs(&mut m, &c, &out, &g, &r, &pend_zero, &holds_nx);
    m
}

/// The registers, all reset to 0.
fn state(m: &mut Module, d: &Dims) -> State {
    State {
        lock_valid: m.reg("lock_valid_q", d.kp, 0),
        lock_owner: (0..d.kp)
            .map(|k| m.reg(&format!("lock_owner_{k}_q"), d.sw, 0))
            .collect(),
        pend: (0..d.t)
            .map(|s| m.reg(&format!("pend_{s}_q"), d.pw, 0))
            .collect(),
        err_proto: m.reg("err_proto_q", 1, 0),
        err_pend: m.reg("err_pend_q", 1, 0),
    }
}

/// Per slot: pair(s) = low KW bits of min(s, ShTB[s]) (§1.3).
fn pairs(m: &mut Module, d: &Dims, shtb_of: &[Expr]) -> Vec<Expr> {
    m.section("§1.3, §2.4: pair(s) = low KW bits of min(s, ShTB[s])");
    shtb_of
        .iter()
        .enumerate()
        .map(|(s, sh)| {
            let me = Expr::lit(s as u64, d.tw);
            let low = m.wire(&format!("pair_min_{s}"), me.lt(sh).mux(&me, sh));
            m.wire(&format!("pair_{s}"), low.slice(0, d.kw))
        })
        .collect()
}

/// Grant: own / want / acquire race / NACK (§2.4).
fn grant(m: &mut Module, c: &Ctx) -> Grant {
    m.section("§2.4 grant: own, want, same-cycle race (lower slot wins), NACK");
    let Dims {
        n, t, sw, kp, kw, ..
    } = c.d;
    let (rq_valid, rq_slot, needs_lock) = (
        c.i(port::RQ_VALID),
        c.i(port::RQ_SLOT),
        c.i(port::NEEDS_LOCK),
    );
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
        let k = m.wire(
            &format!("k_{q}"),
            field_at(&slot_hot[q], &c.pair_of, default),
        );
        // A pair index ≥ KP decodes to nothing: a free lock.
        let hot = m.wire(&format!("k_hot_{q}"), decode(&k, kp));
        let held = (&hot & &c.st.lock_valid).any();
        let holder = field_at(&hot, &c.st.lock_owner, None);
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
    Grant {
        slot,
        slot_hot,
        slot_out,
        k_hot,
        nl,
        acq,
        gnt,
        nack,
    }
}

/// `pend_nx`: the exact next count, stored mod 2^PEND_W (§2.4). Returns per slot "the stored
/// next count is 0" (a T-bit wire) and "the exact count overflowed or underflowed".
fn pend_next(m: &mut Module, c: &Ctx, g: &Grant) -> (Expr, Vec<Expr>) {
    m.section("§2.4 pend_nx = pend + granted shared accesses - completions, mod 2^PEND_W");
    let Dims {
        n, t, sw, pw, ew, ..
    } = c.d;
    let (cpl_valid, cpl_slot) = (c.i(port::CPL_VALID), c.i(port::CPL_SLOT));
    let zero_t = Expr::lit(0, t);
    // Per port, the slot (one-hot) whose count it raises or lowers this cycle.
    let issued: Vec<Expr> = (0..n)
        .map(|q| {
            let counts = &g.gnt[q] & &g.nl[q];
            m.wire(&format!("inc_hot_{q}"), counts.mux(&g.slot_hot[q], &zero_t))
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
    for (s, count) in c.st.pend.iter().enumerate() {
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
    (m.wire("pend_zero", bus(&pend_zero)), pend_bad)
}

/// Release and drain, per held lock (§2.4): the owner is done and drained; TRANSFER hands the
/// lock to a live partner, else it is freed.
fn release(m: &mut Module, c: &Ctx, policy: Policy, none: u64, pend_zero: &Expr) -> Release {
    m.section("§2.4 release: owner done and drained; TRANSFER to a live partner or free");
    let Dims { t, tw, sw, .. } = c.d;
    let (shsm, done, tb_empty) = (c.i(port::SHSM), c.i(port::DONE), c.i(port::TB_EMPTY));
    let mut r = Release {
        fire: vec![],
        hand: vec![],
        free: vec![],
        owner_hot: vec![],
        kept: vec![],
        kept_hot: vec![],
    };
    for (k, o) in c.st.lock_owner.iter().enumerate() {
        let hot = m.wire(&format!("owner_hot_{k}"), decode(o, t));
        let out = beyond(o, t);
        let drained = crate::planted!(
            faults::RELEASE_IGNORES_DRAIN,
            Expr::lit(1, 1),
            bit_at(&hot, pend_zero, &out)
        );
        let f = m.wire(
            &format!("rel_{k}"),
            c.st.lock_valid.bit(k) & bit_at(&hot, &done, &out) & drained,
        );
        let x = match policy {
            Policy::Transfer => {
                // partner(o) = ShTB[o] (NONE when o names no slot). NONE and other ids ≥ T
                // decode to no slot, whose tb_empty reads 1; ShSM = 0 makes o unshared.
                let none = Expr::lit(none, tw);
                let o2 = m.wire(
                    &format!("partner_{k}"),
                    field_at(&hot, &c.shtb_of, out.as_ref().map(|b| (b, &none))),
                );
                let o2_hot = m.wire(&format!("partner_hot_{k}"), decode(&o2, t));
                let partner_live = &shsm & &(&o2_hot & &!tb_empty.clone()).any();
                let owner_empty = bit_at(&hot, &tb_empty, &out);
                let x = m.wire(&format!("xfer_{k}"), &f & &(owner_empty & partner_live));
                r.kept.push(x.mux(&o2.slice(0, sw), o));
                r.kept_hot.push(x.mux(&o2_hot, &hot));
                x
            }
            Policy::Free => {
                r.kept.push(o.clone());
                r.kept_hot.push(hot.clone());
                Expr::lit(0, 1)
            }
        };
        r.free.push(&f & &!x.clone());
        r.fire.push(f);
        r.hand.push(x);
        r.owner_hot.push(hot);
    }
    r
}

/// Acquire, the configuration write (which wins) and the next lock state (§2.4). Returns per
/// lock the slots (one-hot) that hold it after the edge.
fn next_locks(m: &mut Module, c: &Ctx, g: &Grant, r: &Release) -> Vec<Expr> {
    m.section("§2.4 acquire, cfg_lock write (wins), next lock state");
    let Dims { n, t, kp, .. } = c.d;
    let zero_t = Expr::lit(0, t);
    let cfg_we = c.i(port::CFG_LOCK_WE);
    let cfg_hot = m.wire("cfg_hot", decode(&c.i(port::CFG_LOCK_K), kp));
    let (cfg_valid, cfg_owner) = (c.i(port::CFG_LOCK_VALID), c.i(port::CFG_LOCK_OWNER));
    let cfg_owner_hot = m.wire("cfg_owner_hot", decode(&cfg_owner, t));
    let lock_valid = &c.st.lock_valid;
    let mut valid_nx = vec![];
    let mut holds_nx = vec![];
    for k in 0..kp {
        let takes: Vec<Expr> = (0..n).map(|q| &g.acq[q] & &g.k_hot[q].bit(k)).collect();
        // Every port that acquires pair k carries the same (lowest) slot.
        let takers = m.wire(&format!("takes_{k}"), bus(&takes));
        let taker = field_at(&takers, &g.slot, None);
        let taker_hot = field_at(&takers, &g.slot_hot, None);
        let taken = m.wire(&format!("take_{k}"), or_all(&takes, 1));
        let cfg_hit = m.wire(&format!("cfg_hit_{k}"), &cfg_we & &cfg_hot.bit(k));
        let v = m.wire(
            &format!("lock_valid_nx_{k}"),
            cfg_hit.mux(
                &cfg_valid,
                &(&taken | &(lock_valid.bit(k) & !r.free[k].clone())),
            ),
        );
        let o = cfg_hit.mux(&cfg_owner, &taken.mux(&taker, &r.kept[k]));
        m.next(&c.st.lock_owner[k], o);
        let hot = cfg_hit.mux(&cfg_owner_hot, &taken.mux(&taker_hot, &r.kept_hot[k]));
        holds_nx.push(m.wire(&format!("holds_nx_{k}"), v.mux(&hot, &zero_t)));
        valid_nx.push(v);
    }
    m.next(lock_valid, bus(&valid_nx));
    holds_nx
}

/// The sticky errors (§2.4): an acquire by a done TB, a `pend` overflow or underflow.
fn errors(m: &mut Module, c: &Ctx, g: &Grant, pend_bad: &[Expr]) {
    m.section("§2.4 errors: acquire by a done TB, pend overflow or underflow");
    let done = c.i(port::DONE);
    let late: Vec<Expr> = (0..c.d.n)
        .map(|q| &g.acq[q] & &bit_at(&g.slot_hot[q], &done, &g.slot_out[q]))
        .collect();
    let (err_proto, err_pend) = (&c.st.err_proto, &c.st.err_pend);
    m.next(err_proto, err_proto | &or_all(&late, 1));
    m.next(err_pend, err_pend | &or_all(pend_bad, 1));
}

/// The outputs: per port the grant, per slot `rel_fire` and `xfer` by owner and `slot_idle`
/// from the next lock state, and the registers.
fn outputs(
    m: &mut Module,
    c: &Ctx,
    out: &HashMap<String, Expr>,
    g: &Grant,
    r: &Release,
    pend_zero: &Expr,
    holds_nx: &[Expr],
) {
    m.section("§2.4 rel_fire, xfer by owner; slot_idle from the next lock state");
    let Dims { t, kp, kw, .. } = c.d;
    let zero_t = Expr::lit(0, t);
    let by_owner = |flags: &[Expr]| {
        let terms = (0..kp)
            .map(|k| flags[k].mux(&r.owner_hot[k], &zero_t))
            .collect();
        or_tree(terms, t)
    };
    let rel_fire = by_owner(&r.fire);
    let xfer = by_owner(&r.hand);
    // Slot s holds its own pair next: holds_nx[pair(s)] has bit s.
    let own_pair: Vec<Expr> = (0..kp)
        .map(|k| {
            let kl = Expr::lit(k as u64, kw);
            let members = bus(&c.pair_of.iter().map(|x| x.equals(&kl)).collect::<Vec<_>>());
            &holds_nx[k] & &members
        })
        .collect();
    let holding = m.wire("holding_nx", or_tree(own_pair, t));
    let idle = &c.i(port::TB_EMPTY) & &(pend_zero & &!holding);

    let o = |name: &str| out[name].clone();
    let st = &c.st;
    m.assign(&o(port::GNT), bus(&g.gnt));
    m.assign(&o(port::NACK), bus(&g.nack));
    m.assign(&o(port::ACQ), bus(&g.acq));
    m.assign(&o(port::REL_FIRE), rel_fire);
    m.assign(&o(port::XFER), xfer);
    m.assign(&o(port::SLOT_IDLE), idle);
    m.assign(&o(port::LOCK_VALID), st.lock_valid.clone());
    m.assign(&o(port::LOCK_OWNER), bus(&st.lock_owner));
    m.assign(&o(port::PEND), bus(&st.pend));
    m.assign(&o(port::ERR_PROTO), st.err_proto.clone());
    m.assign(&o(port::ERR_PEND), st.err_pend.clone());
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
