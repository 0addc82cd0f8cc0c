//! Scratchpad-sharing `lock_table` (docs/scratchpad-sharing.md §2.4, acceptance tests A4–A7,
//! A10–A13 of §9 at block level): the spec's scenarios driven cycle by cycle through the ports
//! of the behavioral model AND the rusthdl RTL (every output equal), asserting the Mealy
//! outputs and the registered lock state; the reach and determinism of the random stimulus.
//! Random co-simulation on every backend (the presets cover POLICY × PEND_W × NSCHED and T = 6),
//! lint, Icarus, synthesis, the flip-flop inventory and the planted drain fault are the
//! conformance suite's (`tests/suite/conformance.rs`); the proofs are `tests/suite/prove.rs`'.

use proptest::strategy::{Strategy, ValueTree};
use smrtl_hdl::blocks::lock_table::port::{Inputs, Outputs};
use smrtl_hdl::blocks::lock_table::Params;
use smrtl_hdl::BlockParams;
use smrtl_testbench::blocks::lock_table::{cycles, CASE_CYCLES};
use smrtl_testbench::check;

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Directed tests
// ---------------------------------------------------------------------------------------------

/// The pairing of §1.3 with every slot shared: slot `KP + k` pairs with slot `k`.
fn pairing(p: &Params) -> Vec<u64> {
    let kp = p.shape().kp() as u64;
    (0..u64::from(p.slots))
        .map(|s| if s < kp { s + kp } else { s - kp })
        .collect()
}

/// Pair 0 of the `small` preset (T = 4): X = slot 0, its partner Y = slot 2. Slots 1 and 3
/// form pair 1.
const X: u64 = 0;
const Y: u64 = 2;

/// One cycle's inputs, built up field by field.
#[derive(Clone)]
struct Cyc(Inputs);

impl Cyc {
    /// ShSM = 1, every slot paired (see [`pairing`]), nothing else.
    fn new(p: &Params) -> Cyc {
        let mut i = Inputs::new(p);
        i.shsm = true;
        i.shtb = pairing(p);
        Cyc(i)
    }
    /// Issue port `q` requests for `slot`, with `needs` = the access touches the shared region.
    fn rq(mut self, q: usize, slot: u64, needs: bool) -> Cyc {
        self.0.rq_valid[q] = true;
        self.0.rq_slot[q] = slot;
        self.0.needs_lock[q] = needs;
        self
    }
    /// A granted shared-region access of `slot` completes on port `q`.
    fn cpl(mut self, q: usize, slot: u64) -> Cyc {
        self.0.cpl_valid[q] = true;
        self.0.cpl_slot[q] = slot;
        self
    }
    /// Every live thread of `slot` has run relssp.
    fn done(mut self, slot: u64) -> Cyc {
        self.0.done[slot as usize] = true;
        self
    }
    /// `slot`'s TB has no live thread left (so it is done too).
    fn empty(mut self, slot: u64) -> Cyc {
        self.0.tb_empty[slot as usize] = true;
        self.done(slot)
    }
    /// Presets lock `k` (the write wins over every other update of the entry).
    fn cfg(mut self, k: u64, valid: bool, owner: u64) -> Cyc {
        self.0.cfg_lock_we = true;
        self.0.cfg_lock_k = k;
        self.0.cfg_lock_valid = valid;
        self.0.cfg_lock_owner = owner;
        self
    }
    fn shtb(mut self, slot: usize, partner: u64) -> Cyc {
        self.0.shtb[slot] = partner;
        self
    }
    fn reset(mut self) -> Cyc {
        self.0.reset = true;
        self
    }
}

/// Runs `cycles` on the behavioral model and on the rusthdl RTL, each from reset (every output
/// asserted equal), and hands the per-cycle outputs to `check` (with a name for the messages).
fn on_both(p: &Params, cycles: &[Cyc], check: impl Fn(&str, &[Outputs])) {
    let cycles: Vec<Inputs> = cycles.iter().map(|c| c.0.clone()).collect();
    check("model and rusthdl", &check::directed(p, &cycles));
}

/// The small preset, with `sets` on top.
fn small(sets: &[(&str, &str)]) -> Params {
    params("small", sets)
}

/// Lock `k` as (valid, owner) in `o`.
fn lock(o: &Outputs, k: usize) -> (bool, u64) {
    (o.lock_valid[k], o.lock_owner[k])
}

/// Slots as a T-bit vector with `on` set.
fn slots(p: &Params, on: &[u64]) -> Vec<bool> {
    (0..u64::from(p.slots)).map(|s| on.contains(&s)).collect()
}

/// A4: with the partner X owning pair 0, Y's private access (off < u: needs_lock = 0) and an
/// access of an unshared TB are granted in the same cycle; the lock does not change.
#[test]
fn a4_private_access_while_partner_owns() {
    let p = small(&[]);
    let none = p.shape().none();
    let base = Cyc::new(&p).shtb(1, none).shtb(3, none);
    let run = [
        base.clone().cfg(0, true, X),
        base.clone().rq(0, Y, false).rq(1, 3, false),
        base.clone(),
    ];
    on_both(&p, &run, |sim, o| {
        assert_eq!(o[1].gnt, [true, true], "{sim}");
        assert_eq!(
            (o[1].nack.clone(), o[1].acq.clone()),
            (vec![false; 2], vec![false; 2])
        );
        for (c, x) in o.iter().enumerate().skip(1) {
            assert_eq!(lock(x, 0), (true, X), "{sim} cycle {c}");
            assert_eq!(x.pend, [0; 4], "{sim}: private accesses are not counted");
        }
    });
}

/// A5: a free lock and X's first shared-region access in c: acq and gnt in c; from c + 1 the
/// lock is X's and one access is in flight.
#[test]
fn a5_first_shared_access_acquires() {
    let p = small(&[]);
    let run = [Cyc::new(&p).rq(1, X, true), Cyc::new(&p)];
    on_both(&p, &run, |sim, o| {
        assert_eq!(
            (o[0].acq.clone(), o[0].gnt.clone()),
            (vec![false, true], vec![false, true]),
            "{sim}"
        );
        assert_eq!(
            lock(&o[0], 0),
            (false, 0),
            "{sim}: Moore outputs change at c + 1"
        );
        assert_eq!(lock(&o[1], 0), (true, X), "{sim}");
        assert_eq!(o[1].pend[X as usize], 1, "{sim}");
        assert!(!o[1].lock_valid[1], "{sim}: only pair 0");
    });
}

/// A6: while X owns, each of Y's shared-region picks is NACKed; Y's private requests on the
/// other port are still granted; nothing changes.
#[test]
fn a6_nonowner_is_nacked() {
    let p = small(&[]);
    let mut run = vec![Cyc::new(&p).cfg(0, true, X)];
    run.extend((0..4).map(|_| Cyc::new(&p).rq(0, Y, true).rq(1, Y, false)));
    on_both(&p, &run, |sim, o| {
        for (c, x) in o.iter().enumerate().skip(1) {
            assert_eq!(x.nack, [true, false], "{sim} cycle {c}");
            assert_eq!(x.gnt, [false, true], "{sim} cycle {c}");
            assert_eq!(x.acq, [false, false], "{sim} cycle {c}");
            assert_eq!(lock(x, 0), (true, X), "{sim} cycle {c}");
            assert_eq!(x.pend, [0; 4], "{sim} cycle {c}");
        }
    });
}

/// A7: X owns with nothing in flight; all its live threads run relssp in c (done): rel_fire in
/// c, the lock is free at the end of c, and Y's retry in c + 1 acquires.
#[test]
fn a7_relssp_releases_and_the_partner_acquires() {
    for policy in ["TRANSFER", "FREE"] {
        let p = small(&[("POLICY", policy)]);
        let run = [
            Cyc::new(&p).rq(0, X, true),
            Cyc::new(&p).rq(1, Y, true).cpl(0, X),
            Cyc::new(&p).rq(1, Y, true).done(X),
            Cyc::new(&p).rq(1, Y, true).done(X),
            Cyc::new(&p).done(X),
        ];
        on_both(&p, &run, |sim, o| {
            assert_eq!(o[1].nack, [false, true], "{sim} {policy}");
            assert_eq!(o[2].pend, [0; 4], "{sim} {policy}: drained");
            assert_eq!(o[2].rel_fire, slots(&p, &[X]), "{sim} {policy}");
            assert_eq!(
                o[2].xfer,
                slots(&p, &[]),
                "{sim} {policy}: a relssp release frees"
            );
            assert_eq!(
                o[2].nack,
                [false, true],
                "{sim} {policy}: freed only at the edge"
            );
            assert!(!o[3].lock_valid[0], "{sim} {policy}");
            assert_eq!(
                (o[3].acq.clone(), o[3].gnt.clone()),
                (vec![false, true], vec![false, true]),
                "{sim} {policy}"
            );
            assert_eq!(
                o[3].rel_fire,
                slots(&p, &[]),
                "{sim} {policy}: X no longer owns"
            );
            assert_eq!(lock(&o[4], 0), (true, Y), "{sim} {policy}");
        });
    }
}

/// A10: done of the non-owner, or of a TB that never acquired, changes nothing.
#[test]
fn a10_done_of_a_nonowner_changes_nothing() {
    let p = small(&[]);
    let run = [
        Cyc::new(&p).cfg(0, true, X),
        Cyc::new(&p).done(Y).done(1),
        Cyc::new(&p).empty(Y).empty(1),
        Cyc::new(&p),
    ];
    on_both(&p, &run, |sim, o| {
        for (c, x) in o.iter().enumerate().skip(1) {
            assert_eq!(lock(x, 0), (true, X), "{sim} cycle {c}");
            assert!(!x.lock_valid[1], "{sim} cycle {c}");
            assert_eq!(x.rel_fire, slots(&p, &[]), "{sim} cycle {c}");
            assert_eq!(x.xfer, slots(&p, &[]), "{sim} cycle {c}");
        }
        // Empty, drained slots that hold no lock may retire; the owner may not.
        assert_eq!(o[2].slot_idle, slots(&p, &[1, Y]), "{sim}");
    });
}

/// A11: the owner finishes (done and empty) while its partner is live. TRANSFER: the lock
/// passes to the partner (xfer), and the new TB in X's slot waits; FREE: the lock is freed and
/// the first requester wins (here the new TB in X's slot).
#[test]
fn a11_owner_finishes_with_a_live_partner() {
    for policy in ["TRANSFER", "FREE"] {
        let p = small(&[("POLICY", policy)]);
        let transfer = policy == "TRANSFER";
        let run = [
            Cyc::new(&p).cfg(0, true, X),
            Cyc::new(&p).empty(X),
            Cyc::new(&p).rq(0, X, true),
            Cyc::new(&p),
        ];
        on_both(&p, &run, |sim, o| {
            assert_eq!(o[1].rel_fire, slots(&p, &[X]), "{sim} {policy}");
            let handed = if transfer { vec![X] } else { vec![] };
            assert_eq!(o[1].xfer, slots(&p, &handed), "{sim} {policy}");
            assert_eq!(
                o[1].slot_idle,
                slots(&p, &[X]),
                "{sim} {policy}: X may retire"
            );
            if transfer {
                assert_eq!(lock(&o[2], 0), (true, Y), "{sim}");
                assert_eq!(o[2].nack, [true, false], "{sim}: X's new TB waits");
                assert_eq!(lock(&o[3], 0), (true, Y), "{sim}");
            } else {
                assert!(!o[2].lock_valid[0], "{sim}");
                assert_eq!(o[2].acq, [true, false], "{sim}: first requester wins");
                assert_eq!(lock(&o[3], 0), (true, X), "{sim}");
            }
        });
    }
    // TRANSFER with an empty partner, or an unshared owner (ShSM = 0), frees the lock.
    let p = small(&[]);
    for last in [Cyc::new(&p).empty(X).empty(Y), {
        let mut c = Cyc::new(&p).empty(X);
        c.0.shsm = false;
        c
    }] {
        let run = [Cyc::new(&p).cfg(0, true, X), last, Cyc::new(&p)];
        on_both(&p, &run, |sim, o| {
            assert_eq!(o[1].rel_fire, slots(&p, &[X]), "{sim}");
            assert_eq!(o[1].xfer, slots(&p, &[]), "{sim}");
            assert!(!o[2].lock_valid[0], "{sim}");
        });
    }
}

/// A12: the release condition holds while one of the owner's accesses is in flight: no
/// release (and the partner is NACKed) until the cycle its completion arrives.
#[test]
fn a12_release_waits_for_the_drain() {
    let p = small(&[]);
    let run = [
        Cyc::new(&p).rq(0, X, true),
        Cyc::new(&p).rq(0, X, true).empty(X),
        Cyc::new(&p).empty(X).rq(1, Y, true).cpl(0, X),
        Cyc::new(&p).empty(X).rq(1, Y, true),
        Cyc::new(&p).empty(X).rq(1, Y, true).cpl(1, X),
        Cyc::new(&p).empty(X).rq(1, Y, true),
    ];
    on_both(&p, &run, |sim, o| {
        assert_eq!(o[1].gnt, [true, false], "{sim}: the owner may still access");
        for (c, x) in o.iter().enumerate().take(4).skip(1) {
            assert_eq!(x.rel_fire, slots(&p, &[]), "{sim} cycle {c}");
            assert_eq!(x.slot_idle, slots(&p, &[]), "{sim} cycle {c}: X still busy");
        }
        assert_eq!(o[2].pend[X as usize], 2, "{sim}");
        assert_eq!(o[3].pend[X as usize], 1, "{sim}");
        assert_eq!(o[3].nack, [false, true], "{sim}");
        // The completion cycle: drained, released (to the live partner: TRANSFER).
        assert_eq!(o[4].rel_fire, slots(&p, &[X]), "{sim}");
        assert_eq!(o[4].xfer, slots(&p, &[X]), "{sim}");
        assert_eq!(o[4].slot_idle, slots(&p, &[X]), "{sim}");
        assert_eq!(
            o[4].nack,
            [false, true],
            "{sim}: the grant reads the registered lock"
        );
        assert_eq!(lock(&o[5], 0), (true, Y), "{sim}");
        assert_eq!(o[5].gnt, [false, true], "{sim}");
    });
}

/// A13: both partners want the free lock in one cycle: the lower slot wins and the other is
/// NACKed, whichever port carries it; two ports of the same slot both acquire.
#[test]
fn a13_same_cycle_race() {
    let p = small(&[]);
    for (first, second) in [(X, Y), (Y, X)] {
        let run = [
            Cyc::new(&p).rq(0, first, true).rq(1, second, true),
            Cyc::new(&p),
        ];
        on_both(&p, &run, |sim, o| {
            let won = [first == X, second == X];
            assert_eq!(o[0].acq, won, "{sim}");
            assert_eq!(o[0].gnt, won, "{sim}");
            assert_eq!(o[0].nack, [!won[0], !won[1]], "{sim}");
            assert_eq!(lock(&o[1], 0), (true, X), "{sim}");
            assert_eq!(o[1].pend, [1, 0, 0, 0], "{sim}");
        });
    }
    let run = [Cyc::new(&p).rq(0, Y, true).rq(1, Y, true), Cyc::new(&p)];
    on_both(&p, &run, |sim, o| {
        assert_eq!(o[0].acq, [true, true], "{sim}");
        assert_eq!(o[0].gnt, [true, true], "{sim}");
        assert_eq!(lock(&o[1], 0), (true, Y), "{sim}");
        assert_eq!(o[1].pend[Y as usize], 2, "{sim}");
    });
    // Four ports: Y, X, Y on pair 0 and slot 3 on pair 1 at once.
    let p = small(&[("NSCHED", "4")]);
    let run = [
        Cyc::new(&p)
            .rq(0, Y, true)
            .rq(1, X, true)
            .rq(2, Y, true)
            .rq(3, 3, true),
        Cyc::new(&p),
    ];
    on_both(&p, &run, |sim, o| {
        assert_eq!(o[0].acq, [false, true, false, true], "{sim}");
        assert_eq!(o[0].nack, [true, false, true, false], "{sim}");
        assert_eq!(
            (lock(&o[1], 0), lock(&o[1], 1)),
            ((true, X), (true, 3)),
            "{sim}"
        );
    });
}

/// err_proto: an acquire by a done TB still happens, flags the error (sticky), and the
/// level-true done releases again once drained.
#[test]
fn err_proto_on_acquire_by_a_done_tb() {
    let p = small(&[]);
    let run = [
        Cyc::new(&p).rq(0, X, true).done(X),
        Cyc::new(&p).done(X),
        Cyc::new(&p).done(X).cpl(1, X),
        Cyc::new(&p),
        Cyc::new(&p),
    ];
    on_both(&p, &run, |sim, o| {
        assert_eq!((o[0].acq[0], o[0].err_proto), (true, false), "{sim}");
        assert_eq!(lock(&o[1], 0), (true, X), "{sim}");
        assert_eq!(o[1].rel_fire, slots(&p, &[]), "{sim}: still in flight");
        assert_eq!(o[2].rel_fire, slots(&p, &[X]), "{sim}");
        assert!(!o[3].lock_valid[0], "{sim}");
        assert!((1..5).all(|c| o[c].err_proto), "{sim}: sticky");
        assert!(o.iter().all(|x| !x.err_pend), "{sim}");
    });
}

/// err_pend: with PEND_W = 2 a fourth access in flight wraps the counter to 0 (flagged), and
/// the release check reads the stored (wrapped) value; a completion without an access in
/// flight underflows to 3.
#[test]
fn err_pend_on_overflow_and_underflow() {
    let p = small(&[("PEND_W", "2")]);
    let two = |c: Cyc| c.rq(0, X, true).rq(1, X, true);
    let run = [
        two(Cyc::new(&p)),
        two(Cyc::new(&p)),
        Cyc::new(&p).done(X),
        Cyc::new(&p),
        Cyc::new(&p).cpl(0, 1),
        Cyc::new(&p),
    ];
    on_both(&p, &run, |sim, o| {
        assert_eq!(o[1].pend[0], 2, "{sim}");
        assert!(!o[1].err_pend, "{sim}");
        assert_eq!(
            (o[2].pend[0], o[2].err_pend),
            (0, true),
            "{sim}: 4 wraps to 0"
        );
        assert_eq!(
            o[2].rel_fire,
            slots(&p, &[X]),
            "{sim}: the wrapped count reads drained"
        );
        assert!(!o[3].lock_valid[0], "{sim}");
        assert_eq!(o[5].pend[1], 3, "{sim}: 0 - 1 wraps to 3");
        assert!(o[5].err_pend, "{sim}: sticky");
    });
    // Underflow alone, and an increment with a decrement in one cycle at the top (no error).
    let run = [
        Cyc::new(&p).rq(0, X, true).rq(1, X, true),
        Cyc::new(&p).rq(0, X, true),
        Cyc::new(&p).rq(0, X, true).cpl(1, X),
        Cyc::new(&p).cpl(0, 3),
        Cyc::new(&p),
    ];
    on_both(&p, &run, |sim, o| {
        assert_eq!(o[2].pend[0], 3, "{sim}");
        assert_eq!(
            (o[3].pend[0], o[3].err_pend),
            (3, false),
            "{sim}: 3 + 1 - 1 = 3"
        );
        assert_eq!((o[4].pend[3], o[4].err_pend), (3, true), "{sim}");
    });
}

/// cfg_lock: the write wins over an acquire and over a release of its entry; valid = 0
/// clears a lock; other entries update as usual.
#[test]
fn cfg_lock_wins_over_every_update() {
    let p = small(&[]);
    let run = [
        // X acquires pair 0 while the preset makes Y its owner; slot 1 acquires pair 1.
        Cyc::new(&p).rq(0, X, true).rq(1, 1, true).cfg(0, true, Y),
        // Y is done and drained: rel_fire, but the preset keeps its lock.
        Cyc::new(&p).done(Y).cfg(0, true, Y),
        // The preset clears pair 1 while slot 1 holds it.
        Cyc::new(&p).cfg(1, false, 0),
        Cyc::new(&p),
    ];
    on_both(&p, &run, |sim, o| {
        assert_eq!(
            o[0].acq,
            [true, true],
            "{sim}: the outputs still show the acquire"
        );
        assert_eq!(
            (lock(&o[1], 0), lock(&o[1], 1)),
            ((true, Y), (true, 1)),
            "{sim}"
        );
        assert_eq!(o[1].rel_fire, slots(&p, &[Y]), "{sim}");
        assert_eq!(lock(&o[2], 0), (true, Y), "{sim}");
        assert_eq!(
            (lock(&o[3], 0), lock(&o[3], 1).0),
            ((true, Y), false),
            "{sim}"
        );
    });
}

/// Reset clears every lock, counter and error flag at the edge of its cycle; that cycle's
/// outputs still show the state before it.
#[test]
fn reset_clears_the_state() {
    let p = small(&[("PEND_W", "1")]);
    let run = [
        Cyc::new(&p).rq(0, X, true).done(X).rq(1, 1, true),
        Cyc::new(&p).rq(0, X, true),
        Cyc::new(&p).reset(),
        Cyc::new(&p),
    ];
    on_both(&p, &run, |sim, o| {
        let c = &o[2];
        assert_eq!((lock(c, 0), lock(c, 1)), ((true, X), (true, 1)), "{sim}");
        assert_eq!(
            (c.pend[0], c.pend[1], c.err_proto, c.err_pend),
            (0, 1, true, true),
            "{sim}"
        );
        let r = &o[3];
        assert_eq!(r.lock_valid, [false, false], "{sim}");
        assert_eq!(r.lock_owner, [0, 0], "{sim}");
        assert_eq!(r.pend, [0; 4], "{sim}");
        assert_eq!((r.err_proto, r.err_pend), (false, false), "{sim}");
    });
}

/// The out-of-range rules, with T = 6 (SW = 3, KP = 3, KW = 2): pair index 3 reads as a free
/// lock (acquire granted, nothing stored) and a preset of it is dropped; slot 7 does not exist
/// (done 1: err_proto on its acquire); a lock owned by a nonexistent slot is released at once;
/// a ShTB entry ≥ T is a nonexistent partner (tb_empty 1), so TRANSFER frees.
#[test]
fn out_of_range_rules() {
    let p = params("small", &[("T", "6")]);
    let mut base = Cyc::new(&p);
    base.0.shtb = vec![7; 6]; // NONE everywhere: pair(s) = s mod 4
    let run = [
        base.clone().rq(0, 3, true).cfg(3, true, 1),
        base.clone().rq(0, 7, true).cfg(2, true, 6),
        base.clone(),
        base.clone().shtb(0, 6).cfg(0, true, 0),
        base.clone().shtb(0, 6).empty(0),
        base.clone(),
    ];
    on_both(&p, &run, |sim, o| {
        assert_eq!((o[0].acq[0], o[0].gnt[0]), (true, true), "{sim}");
        assert_eq!(o[1].lock_valid, [false; 3], "{sim}: pair 3 does not exist");
        assert_eq!(o[1].pend[3], 1, "{sim}: the granted access still counts");
        // Slot 7 maps to pair 3 (7 mod 4): granted, not stored, and flagged (done reads 1).
        assert!(o[1].acq[0], "{sim}");
        assert_eq!(lock(&o[2], 2), (true, 6), "{sim}");
        assert!(o[2].err_proto, "{sim}");
        assert_eq!(o[2].rel_fire, slots(&p, &[]), "{sim}: no slot 6 to flag");
        assert!(
            !o[3].lock_valid[2],
            "{sim}: a nonexistent owner is done and drained"
        );
        assert_eq!(o[4].rel_fire, slots(&p, &[0]), "{sim}");
        assert_eq!(o[4].xfer, slots(&p, &[]), "{sim}: partner 6 does not exist");
        assert!(!o[5].lock_valid[0], "{sim}");
    });
}

// ---------------------------------------------------------------------------------------------
// The random stimulus
// ---------------------------------------------------------------------------------------------

/// The stimulus is what the module doc promises: races, NACKs, drains, both kinds of release,
/// err_pend and err_proto all occur in a few thousand random cycles.
#[test]
fn stimulus_reaches_the_interesting_cases() {
    let p = small(&[("PEND_W", "2")]);
    let mut runner = check::runner(9);
    let strategy = cycles(&p, CASE_CYCLES);
    let (mut races, mut nacks, mut drains, mut xfers, mut frees) = (0, 0, 0, 0, 0);
    let (mut err_pend, mut err_proto) = (0, 0);
    for _ in 0..100 {
        let case = strategy.new_tree(&mut runner).unwrap().current();
        let mut table = smrtl_cosim::blocks::lock_table::LockTable::new(&p);
        let mut o = Outputs::new(&p);
        let mut held_back = false;
        for c in &case {
            table.step(c, &mut o);
            let wanting = (0..2).filter(|&q| c.rq_valid[q] && c.needs_lock[q]).count();
            races += (wanting == 2 && o.acq.iter().any(|&a| a)) as u32;
            nacks += o.nack.iter().filter(|&&n| n).count();
            let owner_waits = (0..2).any(|k| {
                o.lock_valid[k]
                    && c.done[o.lock_owner[k] as usize]
                    && o.pend[o.lock_owner[k] as usize] > 0
            });
            drains += (held_back && o.rel_fire.iter().any(|&f| f)) as u32;
            held_back = owner_waits;
            xfers += o.xfer.iter().filter(|&&x| x).count();
            frees += (o.rel_fire.iter().any(|&f| f) && !o.xfer.iter().any(|&x| x)) as u32;
        }
        err_pend += o.err_pend as u32;
        err_proto += o.err_proto as u32;
    }
    println!("races {races} nacks {nacks} drains {drains} xfers {xfers} frees {frees}");
    println!("cases ending with err_pend {err_pend}, with err_proto {err_proto}");
    for (what, n) in [
        ("races", races),
        ("nacks", nacks as u32),
        ("drains", drains),
        ("xfers", xfers as u32),
        ("frees", frees),
        ("err_pend", err_pend),
        ("err_proto", err_proto),
    ] {
        assert!(n >= 3, "{what}: {n}");
    }
}

/// A seed reproduces the stimulus bit for bit.
#[test]
fn seeds_are_deterministic() {
    let p = small(&[]);
    let draw = |seed| {
        let mut runner = check::runner(seed);
        let strategy = cycles(&p, CASE_CYCLES);
        (0..20)
            .map(|_| strategy.new_tree(&mut runner).unwrap().current())
            .collect::<Vec<_>>()
    };
    assert_eq!(draw(5), draw(5));
    assert_ne!(draw(5), draw(6));
}
