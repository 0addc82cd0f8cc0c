//! Stimulus for the scratchpad-sharing `lock_table` (docs/scratchpad-sharing.md §2.4): a proptest
//! strategy of typed cycles biased towards the lock protocol's interesting
//! cases. Each case fixes a pairing (§1.3: slot `M+k` pairs with slot `k`), mostly consistent,
//! sometimes garbage; requests crowd on one hot pair and one warm pair so that same-cycle races
//! and NACKs happen; completions go mostly to slots that have accesses in flight, so drains
//! run (the generator steps the behavioral model to know `pend`); `done` / `tb_empty` toggle as
//! levels (mostly `tb_empty ⇒ done`); rare lock presets and resets.

use crate::coverage::Cover;
use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::lock_table::{LockTable, Model};
use smrtl_hdl::blocks::lock_table::port::{self, Inputs, Outputs};
use smrtl_hdl::blocks::lock_table::Params;
use smrtl_hdl::blocks::sharing::Policy;
use smrtl_hdl::netlist::mask;
use smrtl_hdl::BlockParams;
use smrtl_synth::prove::{field, pick, zext, Def, Proof, Property};

/// This block's coverpoints (docs/coverage.md).
type Point = Cover<Params>;

/// Longest random case; a failing case shrinks from at most this many cycles.
pub const CASE_CYCLES: usize = 64;

/// A case's configuration: `pairs` pairs over `originals` original slots (§1.3), the hot and
/// warm pairs' picks, ShSM, and garbage ShTB entries when drawn.
#[derive(Clone, Debug)]
struct Setup {
    pairs: usize,
    originals: usize,
    hot: usize,
    warm: usize,
    shsm: bool,
    garbage: Option<Vec<u64>>,
}

impl Setup {
    /// ShTB of the consistent pairing, or the garbage entries.
    fn shtb(&self, t: usize, none: u64) -> Vec<u64> {
        if let Some(g) = &self.garbage {
            return g.clone();
        }
        let mut shtb = vec![none; t];
        for k in 0..self.pairs {
            shtb[k] = (self.originals + k) as u64;
            shtb[self.originals + k] = k as u64;
        }
        shtb
    }

    /// The two slots of pair `pick` (pair `pick mod P`; slots 0 and 1 when nothing is shared).
    fn pair_slots(&self, pick: usize) -> [u64; 2] {
        if self.pairs == 0 {
            return [0, 1];
        }
        let k = pick % self.pairs;
        [k as u64, (self.originals + k) as u64]
    }
}

fn setup(p: &Params) -> impl Strategy<Value = Setup> {
    let s = p.shape();
    let (t, kp, tw, none) = (p.slots as usize, s.kp(), s.tw(), s.none());
    (
        0..=kp,
        any::<usize>(),
        any::<usize>(),
        any::<usize>(),
        prop::bool::weighted(0.9),
        prop::bool::weighted(0.1),
        prop::collection::vec((any::<u64>(), prop::bool::weighted(0.3)), t),
    )
        .prop_map(move |(pairs, m, hot, warm, shsm, bad, entries)| Setup {
            pairs,
            originals: pairs + m % (t - 2 * pairs + 1),
            hot,
            warm,
            shsm,
            garbage: bad.then(|| {
                entries
                    .iter()
                    .map(|&(v, unshared)| if unshared { none } else { v & mask(tw) })
                    .collect()
            }),
        })
}

/// One completion in this many goes to a random slot (an underflow unless it is busy).
const RANDOM_CPL_ODDS: u8 = 32;

/// One issue port's draws: valid, slot kind, a random word, needs_lock, completion, its kind.
type PortRaw = (bool, u8, u64, bool, bool, u8);
/// One cycle's draws: the ports, `done` / `tb_empty` toggles, a lock preset, reset.
type Raw = (
    Vec<PortRaw>,
    Vec<(bool, bool)>,
    (bool, u64, bool, u64),
    bool,
);

fn raw(p: &Params) -> impl Strategy<Value = Raw> {
    let port = (
        prop::bool::weighted(0.75),
        0..10u8,
        any::<u64>(),
        prop::bool::weighted(0.6),
        prop::bool::weighted(0.35),
        0..RANDOM_CPL_ODDS,
    );
    let toggles = (prop::bool::weighted(0.06), prop::bool::weighted(0.05));
    (
        prop::collection::vec(port, p.nsched as usize),
        prop::collection::vec(toggles, p.slots as usize),
        (
            prop::bool::weighted(0.03),
            any::<u64>(),
            any::<bool>(),
            any::<u64>(),
        ),
        prop::bool::weighted(0.004),
    )
}

/// A case of per-cycle inputs (see the module doc).
pub fn cycles(p: &Params, max: usize) -> impl Strategy<Value = Vec<Inputs>> {
    let p = p.clone();
    (setup(&p), prop::collection::vec(raw(&p), 1..=max)).prop_map(move |(setup, raws)| {
        let s = p.shape();
        let (t, sw, kw) = (p.slots as usize, s.sw(), s.kw());
        let shtb = setup.shtb(t, s.none());
        let consistent = setup.garbage.is_none();
        // The model tells which slots have accesses in flight.
        let mut table = LockTable::new(&p);
        let mut out = Outputs::new(&p);
        let (mut done, mut empty) = (vec![false; t], vec![false; t]);
        let mut left = vec![0u64; t];
        let mut cycles = Vec::with_capacity(raws.len());
        for (ports, toggles, cfg, reset) in raws {
            let mut c = Inputs::new(&p);
            c.shsm = setup.shsm;
            c.shtb.copy_from_slice(&shtb);
            for (s, &(flip_done, flip_empty)) in toggles.iter().enumerate() {
                done[s] ^= flip_done;
                empty[s] ^= flip_empty;
                // A TB with no live thread is done (§3); garbage cases may break it.
                if consistent {
                    if flip_done && !done[s] {
                        empty[s] = false;
                    }
                    if empty[s] {
                        done[s] = true;
                    }
                }
            }
            c.done.copy_from_slice(&done);
            c.tb_empty.copy_from_slice(&empty);
            for (s, l) in left.iter_mut().enumerate() {
                *l = table.pend(s as u64);
            }
            for (q, &(valid, kind, r, needs, cpl, cpl_kind)) in ports.iter().enumerate() {
                let hot = setup.pair_slots(setup.hot);
                let warm = setup.pair_slots(setup.warm);
                c.rq_valid[q] = valid;
                c.needs_lock[q] = needs;
                c.rq_slot[q] = match kind {
                    0..=2 => hot[0],
                    3..=5 => hot[1],
                    6 => warm[(r & 1) as usize],
                    7 | 8 => r % t as u64,
                    _ => r & mask(sw),
                };
                c.cpl_valid[q] = cpl;
                // Mostly a slot with an access in flight; sometimes any slot (underflow).
                let busy = (0..t).filter(|&s| left[s] > 0).count();
                c.cpl_slot[q] = if cpl_kind > 0 && busy > 0 {
                    let s = (0..t)
                        .filter(|&s| left[s] > 0)
                        .nth((r >> 8) as usize % busy)
                        .expect("a busy slot");
                    left[s] -= cpl as u64;
                    s as u64
                } else {
                    (r >> 8) & mask(sw)
                };
            }
            let (we, k, valid, owner) = cfg;
            c.cfg_lock_we = we;
            c.cfg_lock_k = k & mask(kw);
            c.cfg_lock_valid = valid;
            c.cfg_lock_owner = owner & mask(sw);
            c.reset = reset;
            table.step(&c, &mut out);
            cycles.push(c);
        }
        cycles
    })
}

impl Bench for Params {
    type Model = Model;
    const SUMMARY: &'static str = "scratchpad sharing: per-pair shared-region locks, FCFS grant/NACK, drain, release and transfer (seed 001)";

    fn stimulus(&self) -> BoxedStrategy<Vec<Inputs>> {
        cycles(self, CASE_CYCLES).boxed()
    }

    fn properties(&self) -> Option<Proof> {
        Some(proof(self))
    }

    /// `small` under both policies with the narrowest and the default counters, and T = 6
    /// (slot ids that name no slot, a pair index width that does not cover T).
    fn proof_configs() -> Vec<Params> {
        let small = Params::resolve(Some("small"), &[]).expect("small preset");
        let mut all = vec![];
        for policy in [Policy::Transfer, Policy::Free] {
            for pend_w in [2, 6] {
                all.push(Params {
                    policy,
                    pend_w,
                    ..small.clone()
                });
            }
        }
        all.push(Params { slots: 6, ..small });
        all
    }

    /// docs/scratchpad-sharing.md §2.4: acquire, a grant to the owner, an access needing no
    /// lock, NACK, a race for a free pair, one slot on two ports, the drain holding a release,
    /// release by freeing and by transfer, completions, `cfg_lock` writes, an idle slot, both
    /// error flags, reset.
    fn coverpoints(&self) -> Vec<Point> {
        let table = LockTable::new(self);
        let asks = |i: &Inputs, q: usize| i.rq_valid[q] && i.needs_lock[q];
        let mut v = vec![
            Point::point("acquire", "§2.4", |_, _, o, _| o.acq.iter().any(|&a| a)),
            Point::point("grant_to_owner", "§2.4", move |_, i, o, _| {
                (0..o.gnt.len()).any(|q| asks(i, q) && o.gnt[q] && !o.acq[q])
            }),
            Point::point("grant_without_lock", "§2.4", |_, i, o, _| {
                (0..o.gnt.len()).any(|q| i.rq_valid[q] && !i.needs_lock[q] && o.gnt[q])
            }),
            Point::point("nack", "§2.4", |_, _, o, _| o.nack.iter().any(|&n| n)),
            Point::point("drain_holds_release", "§2.4", |p, i, o, _| {
                (o.lock_valid.iter().zip(&o.lock_owner)).any(|(&held, &s)| {
                    let s = s as usize;
                    held && s < p.slots as usize && i.done[s] && o.pend[s] > 0 && !o.rel_fire[s]
                })
            }),
            Point::point("release_free", "§2.4", |_, _, o, _| {
                (o.rel_fire.iter().zip(&o.xfer)).any(|(&r, &x)| r && !x)
            }),
            Point::point("completion", "§2.4", |_, i, _, _| {
                i.cpl_valid.iter().any(|&c| c)
            }),
            Point::point("cfg_lock_write", "§2.4", |_, i, _, _| i.cfg_lock_we),
            Point::point("slot_idle", "§2.4", |_, _, o, _| {
                o.slot_idle.iter().any(|&s| s)
            }),
            Point::point("err_proto", "§2.4", |_, _, o, _| o.err_proto),
            Point::point("err_pend", "§2.4", |_, _, o, _| o.err_pend),
            Point::point("reset", "§2.1", |_, i, _, _| i.reset),
        ];
        v.push(match self.policy {
            Policy::Transfer => {
                Point::point("transfer", "§2.4", |_, _, o, _| o.xfer.iter().any(|&x| x))
            }
            Policy::Free => Point::unreachable("transfer", "§2.4", "POLICY = FREE always frees"),
        });
        if self.nsched == 1 {
            let why = "NSCHED = 1: one port, so no two requests meet";
            v.push(Point::unreachable("race_for_a_free_pair", "§2.4", why));
            v.push(Point::unreachable("one_slot_on_two_ports", "§2.4", why));
            return v;
        }
        v.push(Point::point(
            "race_for_a_free_pair",
            "§2.4",
            move |_, i, o, _| {
                let pair = |q: usize| table.pair(i, i.rq_slot[q]);
                let n = o.acq.len();
                (0..n).any(|a| o.acq[a] && (0..n).any(|q| o.nack[q] && pair(q) == pair(a)))
            },
        ));
        v.push(Point::point(
            "one_slot_on_two_ports",
            "§2.4",
            |_, i, o, _| {
                let n = o.acq.len();
                (0..n).any(|a| {
                    o.acq[a] && (a + 1..n).any(|b| o.acq[b] && i.rq_slot[a] == i.rq_slot[b])
                })
            },
        ));
        v
    }
}

/// The lock table's solver proof (docs/prove.md §3; docs/scratchpad-sharing.md §2.4).
///
/// Legal stimulus (what the SM around the table guarantees): ShTB is a valid pairing (§2.2,
/// `err_cfg` = 0) and stable; no `cfg_lock` write (tests and launch only); requests and
/// completions name real slots; only a shared slot of a ShSM SM needs the lock and a TB that
/// is `done` asks for none (§2.3, §3); completions are of accesses in flight, and a slot never
/// has more than 2^PEND_W − 1 in flight.
///
/// Invariants: no error flag rises; `pend` counts exactly, never wrapping; a held lock's owner
/// is a real slot of the pair it locks; two ports granted shared-region accesses of one pair
/// in a cycle are the same slot (mutual exclusion); a slot with accesses in flight holds its
/// pair's lock; a release leaves nothing in flight (drain). The lock state and error flags are
/// Moore outputs (registers only).
pub fn proof(p: &Params) -> Proof {
    let mut b = Builder::new(p);
    let sig = b.slots_and_locks();
    let sig = b.ports(sig);
    b.legal_stimulus(&sig);
    b.invariants(&sig);
    Proof {
        defs: b.defs,
        properties: b.props,
        // The planted drain fault fails at step 3; the induction closes at k = 1.
        bmc_depth: 8,
        induction_depth: 4,
    }
}

/// The proof's widths and what it has written so far: definitions and properties, in order.
struct Builder {
    t: usize,
    n: usize,
    sw: usize,
    tw: usize,
    kp: usize,
    kw: usize,
    pw: usize,
    /// Width of the exact next count ([`Params::pend_sum_bits`]).
    ew: usize,
    /// `NONE` as a Verilog literal.
    none: String,
    defs: Vec<Def>,
    props: Vec<Property>,
}

/// The named signals of the proof: per slot, per lock and per port.
struct Signals {
    /// Per slot: ShTB entry, pair index, in-flight count, `done`.
    sh: Vec<String>,
    pair: Vec<String>,
    pend: Vec<String>,
    done: Vec<String>,
    /// Per lock: its owner and the owner's pair.
    own: Vec<String>,
    own_pair: Vec<String>,
    /// Per port: slot, its pair, a granted shared-region access.
    slot: Vec<String>,
    rq_pair: Vec<String>,
    gl: Vec<String>,
    /// Per slot: granted lock accesses and completions this cycle (exact, EW bits).
    inc: Vec<String>,
    dec: Vec<String>,
}

/// `bus[i]`.
fn bit(bus: &str, i: usize) -> String {
    format!("{bus}[{i}]")
}

impl Builder {
    fn new(p: &Params) -> Builder {
        let s = p.shape();
        Builder {
            t: p.slots as usize,
            n: p.nsched as usize,
            sw: s.sw(),
            tw: s.tw(),
            kp: s.kp(),
            kw: s.kw(),
            pw: p.pend_w as usize,
            ew: p.pend_sum_bits(),
            none: format!("{}'d{}", s.tw(), s.none()),
            defs: vec![],
            props: vec![],
        }
    }

    /// Defines `name` (`width` bits) as `expr`; returns the name.
    fn def(&mut self, name: String, width: usize, expr: String) -> String {
        self.defs.push(Def::new(name.clone(), width, expr));
        name
    }

    /// Per slot: ShTB entry, pair index, in-flight count; per lock: its owner and the owner's
    /// pair. The per-port and per-count signals come with [`Builder::ports`].
    fn slots_and_locks(&mut self) -> Signals {
        let (t, sw, tw, kp, kw, pw) = (self.t, self.sw, self.tw, self.kp, self.kw, self.pw);
        let sh: Vec<String> = (0..t)
            .map(|x| self.def(format!("sh_{x}"), tw, field(port::SHTB, x, tw)))
            .collect();
        let pair: Vec<String> = (0..t)
            .map(|x| {
                let low = x % (1 << kw);
                let e = format!(
                    "({tw}'d{x} < {}) ? {kw}'d{low} : {}[{}:0]",
                    sh[x],
                    sh[x],
                    kw - 1
                );
                self.def(format!("pair_{x}"), kw, e)
            })
            .collect();
        let pend: Vec<String> = (0..t)
            .map(|x| self.def(format!("pend_{x}"), pw, field(port::PEND, x, pw)))
            .collect();
        let own: Vec<String> = (0..kp)
            .map(|k| self.def(format!("own_{k}"), sw, field(port::LOCK_OWNER, k, sw)))
            .collect();
        let own_pair: Vec<String> = (0..kp)
            .map(|k| {
                let e = pick(&own[k], sw, &pair, &format!("{}[{}:0]", own[k], kw - 1));
                self.def(format!("own_pair_{k}"), kw, e)
            })
            .collect();
        Signals {
            sh,
            pair,
            pend,
            done: (0..t).map(|x| bit(port::DONE, x)).collect(),
            own,
            own_pair,
            slot: vec![],
            rq_pair: vec![],
            gl: vec![],
            inc: vec![],
            dec: vec![],
        }
    }

    /// Per port: slot, its pair, its ShTB entry and `done`, a granted shared-region access, and
    /// what the SM guarantees of the request (a real slot; only a shared slot of a ShSM SM
    /// needs the lock; a `done` TB asks for none; completions name real slots). Then per slot
    /// the granted lock accesses and completions of the cycle.
    fn ports(&mut self, mut sig: Signals) -> Signals {
        let (t, n, sw, tw, kw, ew) = (self.t, self.n, self.sw, self.tw, self.kw, self.ew);
        let none = self.none.clone();
        for q in 0..n {
            let sq = self.def(format!("slot_{q}"), sw, field(port::RQ_SLOT, q, sw));
            let low = format!("{sq}[{}:0]", kw - 1);
            let e = pick(&sq, sw, &sig.pair, &low);
            sig.rq_pair.push(self.def(format!("rq_pair_{q}"), kw, e));
            let rq_sh = self.def(format!("rq_sh_{q}"), tw, pick(&sq, sw, &sig.sh, &none));
            let e = pick(&sq, sw, &sig.done, "1'b1");
            let rq_done = self.def(format!("rq_done_{q}"), 1, e);
            let want = format!("{} && {}", bit(port::RQ_VALID, q), bit(port::NEEDS_LOCK, q));
            let real = format!("{} < {}'d{t}", zext(&sq, sw, sw + 1), sw + 1);
            self.props.push(Property::assume(
                format!("rq_real_slot_{q}"),
                format!("!{} || {real}", bit(port::RQ_VALID, q)),
            ));
            self.props.push(Property::assume(
                format!("lock_only_when_shared_{q}"),
                format!("!({want}) || ({} && {rq_sh} != {none})", port::SHSM),
            ));
            self.props.push(Property::assume(
                format!("done_tb_needs_no_lock_{q}"),
                format!("!({want}) || !{rq_done}"),
            ));
            let cq = field(port::CPL_SLOT, q, sw);
            self.props.push(Property::assume(
                format!("cpl_real_slot_{q}"),
                format!(
                    "!{} || {} < {}'d{t}",
                    bit(port::CPL_VALID, q),
                    zext(&cq, sw, sw + 1),
                    sw + 1
                ),
            ));
            let e = format!("{} && {want}", bit(port::GNT, q));
            sig.gl.push(self.def(format!("granted_lock_{q}"), 1, e));
            sig.slot.push(sq);
        }
        let count = |terms: Vec<String>| {
            let sum: Vec<String> = terms.iter().map(|x| zext(x, 1, ew)).collect();
            sum.join(" + ")
        };
        for x in 0..t {
            let hit = |slot: &str| format!("({slot} == {sw}'d{x})");
            let i = (0..n)
                .map(|q| format!("({} && {})", sig.gl[q], hit(&sig.slot[q])))
                .collect();
            sig.inc.push(self.def(format!("inc_{x}"), ew, count(i)));
            let d = (0..n)
                .map(|q| {
                    let cq = field(port::CPL_SLOT, q, sw);
                    format!("({} && {})", bit(port::CPL_VALID, q), hit(&cq))
                })
                .collect();
            sig.dec.push(self.def(format!("dec_{x}"), ew, count(d)));
        }
        sig
    }

    /// Legal stimulus: ShTB is a valid pairing (§2.2, `err_cfg` = 0) and stable; no
    /// `cfg_lock` write; completions are of accesses in flight, and a slot never has more than
    /// 2^PEND_W − 1 in flight.
    fn legal_stimulus(&mut self, sig: &Signals) {
        let (t, tw, kp, pw, ew) = (self.t, self.tw, self.kp, self.pw, self.ew);
        let none = &self.none;
        let props = &mut self.props;
        props.push(Property::assume(
            "shtb_stable",
            format!("!f_past || {} == past_{}", port::SHTB, port::SHTB),
        ));
        for x in 0..t {
            let partners: Vec<String> = (0..t)
                .filter(|&e| e != x && x.min(e) < kp)
                .map(|e| format!("({} == {tw}'d{e} && {} == {tw}'d{x})", sig.sh[x], sig.sh[e]))
                .collect();
            let valid = if partners.is_empty() {
                "1'b0".to_string()
            } else {
                partners.join(" || ")
            };
            props.push(Property::assume(
                format!("pairing_{x}"),
                format!("{} == {none} || {valid}", sig.sh[x]),
            ));
        }
        props.push(Property::assume(
            "no_cfg_lock_write",
            format!("!{}", port::CFG_LOCK_WE),
        ));
        let max = format!("{ew}'d{}", (1u64 << pw) - 1);
        for x in 0..t {
            let pe = zext(&sig.pend[x], pw, ew);
            props.push(Property::assume(
                format!("completions_in_flight_{x}"),
                format!("{} <= {pe}", sig.dec[x]),
            ));
            props.push(Property::assume(
                format!("in_flight_fits_{x}"),
                format!("{pe} + {} <= {max} + {}", sig.inc[x], sig.dec[x]),
            ));
        }
    }

    /// Invariants: no error flag rises; `pend` counts exactly, never wrapping; a held lock's
    /// owner is a real slot of the pair it locks; two ports granted shared-region accesses of
    /// one pair in a cycle are the same slot (mutual exclusion); a slot with accesses in flight
    /// holds its pair's lock; a release leaves nothing in flight (drain). The lock state and
    /// error flags are Moore outputs (registers only).
    fn invariants(&mut self, sig: &Signals) {
        let (t, n, sw, kp, kw, pw, ew) =
            (self.t, self.n, self.sw, self.kp, self.kw, self.pw, self.ew);
        let props = &mut self.props;
        props.push(Property::assert(
            "no_err_pend",
            format!("!{}", port::ERR_PEND),
        ));
        props.push(Property::assert(
            "no_err_proto",
            format!("!{}", port::ERR_PROTO),
        ));
        for x in 0..t {
            let (pe, was) = (
                zext(&sig.pend[x], pw, ew),
                zext(&format!("past_{}", sig.pend[x]), pw, ew),
            );
            props.push(Property::assert(
                format!("pend_exact_{x}"),
                format!(
                    "!f_past || past_reset || {pe} == {was} + past_{} - past_{}",
                    sig.inc[x], sig.dec[x]
                ),
            ));
        }
        for k in 0..kp {
            let real = format!("{} < {}'d{t}", zext(&sig.own[k], sw, sw + 1), sw + 1);
            props.push(Property::assert(
                format!("owner_in_pair_{k}"),
                format!(
                    "!{} || ({real} && {} == {kw}'d{k})",
                    bit(port::LOCK_VALID, k),
                    sig.own_pair[k]
                ),
            ));
        }
        for a in 0..n {
            for b in a + 1..n {
                props.push(Property::assert(
                    format!("exclusive_{a}_{b}"),
                    format!(
                        "!({} && {} && {} == {}) || {} == {}",
                        sig.gl[a],
                        sig.gl[b],
                        sig.rq_pair[a],
                        sig.rq_pair[b],
                        sig.slot[a],
                        sig.slot[b]
                    ),
                ));
            }
        }
        let holds: Vec<String> = (0..kp)
            .map(|k| format!("{} && {}", bit(port::LOCK_VALID, k), sig.own[k]))
            .collect();
        for x in 0..t {
            let mine: Vec<String> = holds.iter().map(|h| format!("{h} == {sw}'d{x}")).collect();
            let held = pick(&sig.pair[x], kw, &mine, "1'b0");
            props.push(Property::assert(
                format!("in_flight_holds_lock_{x}"),
                format!("{} == {pw}'d0 || ({held})", sig.pend[x]),
            ));
            props.push(Property::assert(
                format!("drained_on_release_{x}"),
                format!(
                    "!f_past || past_reset || !past_{}[{x}] || {} == {pw}'d0",
                    port::REL_FIRE,
                    sig.pend[x]
                ),
            ));
        }
        for o in [
            port::LOCK_VALID,
            port::LOCK_OWNER,
            port::PEND,
            port::ERR_PROTO,
            port::ERR_PEND,
        ] {
            props.push(Property::registered(o));
        }
    }
}
