//! Spec §6 `PremFifo<N>` and `NonmemFifo<Q>`: the PREMEM and NONMEM queues
//! (docs/elastic-pipeline.md §4, §6).

use super::entry::{one, part, sub_module, Entry, Latch, Layout};
use crate::blocks::bank_conflict_detector as detector;
use crate::netlist::{Expr, Module};
use crate::params::bits_for;

/// Ports of [`fifo`] (both kinds unless noted).
pub(super) mod fifo_port {
    pub const ENQ: &str = "enq";
    pub const ENQ_ENTRY: &str = "enq_entry";
    pub const DEQ: &str = "deq";
    pub const COUNT: &str = "count";
    pub const HEAD_VALID: &str = "head_valid";
    /// PremFifo: the occupancy is N (at the start of the cycle).
    pub const FULL: &str = "full";
    /// PremFifo: the head entry (slot 0, the oldest).
    pub const HEAD: &str = "head";
    /// NonmemFifo: an entry can be enqueued after this cycle's dequeue (D12).
    pub const ROOM: &str = "room";
    /// NonmemFifo: the head is a WB candidate: valid and, with `nonmem_min_age` = a > 0, of age
    /// ≥ a (else equal to `head_valid`).
    pub const HEAD_ELIGIBLE: &str = "head_eligible";
    /// NonmemFifo: the head's tag and (when the parent needs it) kind, all WB reads of an NQ
    /// entry.
    pub const HEAD_TAG: &str = "head_tag";
    pub const HEAD_KIND: &str = "head_kind";

    /// The trace taps of slot `i`: `slot<i>_valid`, `slot<i>_tag` (0 when empty).
    pub fn slot(i: usize) -> (String, String) {
        (format!("slot{i}_valid"), format!("slot{i}_tag"))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FifoKind {
    /// Spec §6 `PremFifo<N>`: PRE, before MEM0.
    Prem,
    /// Spec §6 `NonmemFifo<Q>`: NQ, beside the MEM path; with the age counters of the
    /// `nonmem_min_age` = `max_age` debug mode when > 0, and a `head_kind` output when
    /// `head_kind`.
    Nonmem { max_age: u64, head_kind: bool },
}

/// A FIFO of latches, slot 0 oldest (spec §4 PREMEM / NONMEM queues). Dequeue shifts every slot
/// down; an enqueue lands in the first empty slot after that shift (D12). With `ages`, each
/// slot carries its age in the queue (1 in its first cycle), saturating at `max_age`.
struct Fifo {
    name: String,
    slots: Vec<Latch>,
    ages: Vec<Expr>,
    max_age: u64,
}

impl Fifo {
    fn new(m: &mut Module, lay: Layout, name: &str, n: usize, max_age: u64) -> Fifo {
        let slots: Vec<Latch> = (0..n)
            .map(|i| Latch::new(m, lay, &format!("{name}{i}")))
            .collect();
        let ages = if max_age > 0 {
            (0..n)
                .map(|i| m.reg(&format!("{name}{i}_age_q"), bits_for(max_age), 0))
                .collect()
        } else {
            vec![]
        };
        Fifo {
            name: name.to_string(),
            slots,
            ages,
            max_age,
        }
    }

    /// Occupancy is the depth (the last slot is valid).
    fn full(&self) -> Expr {
        self.slots.last().expect("a FIFO has slots").valid.clone()
    }

    fn count(&self) -> Expr {
        let bits: Vec<Expr> = self.slots.iter().map(|s| s.valid.clone()).collect();
        detector::popcount(&bits).zext(bits_for(self.slots.len() as u64))
    }

    /// The head is a WB candidate (valid and old enough, when ages are kept).
    fn head_eligible(&self) -> Expr {
        let head = &self.slots[0];
        match self.ages.first() {
            Some(age) => &head.valid & &!age.lt(&Expr::lit(self.max_age, age.width())),
            None => head.valid.clone(),
        }
    }

    fn update(&self, m: &mut Module, deq: &Expr, enq: &Expr, input: &Entry) {
        let n = self.slots.len();
        let shifted: Vec<(Expr, Entry)> = (0..n)
            .map(|i| {
                let here = &self.slots[i];
                match self.slots.get(i + 1) {
                    Some(next) => (
                        deq.mux(&next.valid, &here.valid),
                        Entry::mux(deq, &next.e, &here.e),
                    ),
                    None => (&!deq.clone() & &here.valid, here.e.clone()),
                }
            })
            .collect();
        for i in 0..n {
            let slot = &self.slots[i];
            let below = if i == 0 {
                one(true)
            } else {
                shifted[i - 1].0.clone()
            };
            let lands = m.wire(
                &format!("{}{i}_enq_here", self.name),
                enq & &(!shifted[i].0.clone() & below),
            );
            m.next(&slot.valid, &shifted[i].0 | &lands);
            let next = Entry::mux(&lands, input, &shifted[i].1);
            for (r, v) in slot.e.fields().into_iter().zip(next.fields()) {
                m.next(r, v.clone());
            }
            if let Some(age) = self.ages.get(i) {
                let w = age.width();
                let older = match self.ages.get(i + 1) {
                    Some(next) => deq.mux(next, age),
                    None => age.clone(),
                };
                let max = Expr::lit(self.max_age, w);
                let grown = older.lt(&max).mux(&(&older + &Expr::lit(1, w)), &max);
                m.next(age, lands.mux(&Expr::lit(1, w), &grown));
            }
        }
    }
}

/// Spec §6 `PremFifo<N>` or `NonmemFifo<Q>` of `n` ≥ 1 slots: the [`fifo_port`] ports, and every
/// slot tapped for the trace.
pub(super) fn fifo(kind: FifoKind, lay: Layout, n: usize) -> Module {
    use fifo_port as qp;
    assert!(n >= 1, "an absent FIFO is not instantiated");
    let (stem, slot, max_age, head_kind) = match kind {
        FifoKind::Prem => ("premem", "pre", 0, false),
        FifoKind::Nonmem { max_age, head_kind } => ("nonmem", "nq", max_age, head_kind),
    };
    let block = match kind {
        FifoKind::Prem => format!("PremFifo<N = {n}>"),
        FifoKind::Nonmem { .. } => format!("NonmemFifo<Q = {n}>"),
    };
    let ages = if max_age > 0 {
        format!(", ages up to {max_age}")
    } else {
        String::new()
    };
    let kind_out = if head_kind { ", head kind" } else { "" };
    let depth = match kind {
        FifoKind::Prem => "N",
        FifoKind::Nonmem { .. } => "Q",
    };
    let mut parts = vec![part(depth, n)];
    if max_age > 0 {
        parts.push(part("AGE", max_age));
    }
    if head_kind {
        parts.push(part("HK", true));
    }
    parts.extend(lay.parts());
    let key = format!("{block}{ages}{kind_out}, {}", lay.key());
    let mut m = sub_module(stem, &parts, &key);
    m.clock_reset();
    let enq = m.input(qp::ENQ, 1);
    let enq_entry = m.input(qp::ENQ_ENTRY, lay.width());
    let deq = m.input(qp::DEQ, 1);
    let count = m.output(qp::COUNT, bits_for(n as u64));
    let head_valid = m.output(qp::HEAD_VALID, 1);
    let mut own: Vec<(&str, usize)> = match kind {
        FifoKind::Prem => vec![(qp::FULL, 1), (qp::HEAD, lay.width())],
        FifoKind::Nonmem { .. } => vec![
            (qp::ROOM, 1),
            (qp::HEAD_ELIGIBLE, 1),
            (qp::HEAD_TAG, lay.tag),
        ],
    };
    if head_kind {
        own.push((qp::HEAD_KIND, 2));
    }
    let own: std::collections::HashMap<&str, Expr> = own
        .into_iter()
        .map(|(name, width)| (name, m.output(name, width)))
        .collect();
    let taps: Vec<(Expr, Expr)> = (0..n)
        .map(|i| {
            let (v, t) = qp::slot(i);
            (m.output(&v, 1), m.output(&t, lay.tag))
        })
        .collect();
    let q = Fifo::new(&mut m, lay, slot, n, max_age);
    let head = &q.slots[0];
    match kind {
        FifoKind::Prem => {
            m.section("§3.2 steps 5-6: full at the start of the cycle; head to the MEM0 MUX");
            m.assign(&own[qp::FULL], q.full());
            m.assign(&own[qp::HEAD], head.e.pack());
        }
        FifoKind::Nonmem { .. } => {
            m.section("§3.2 steps 2, 4-5: the head as a WB source; room after the dequeue");
            m.assign(&own[qp::HEAD_ELIGIBLE], q.head_eligible());
            m.assign(&own[qp::HEAD_TAG], head.e.tag.clone());
            if let Some(kind) = own.get(qp::HEAD_KIND) {
                m.assign(kind, head.e.kind.clone());
            }
            m.assign(&own[qp::ROOM], !(q.full() & !deq.clone()));
        }
    }
    m.assign(&head_valid, head.valid.clone());
    m.assign(&count, q.count());
    m.section("registers: dequeue shifts down, enqueue fills the first empty slot (D12)");
    q.update(&mut m, &deq, &enq, &lay.unpack(&enq_entry));
    m.section("trace taps, oldest first");
    for (latch, (v, t)) in q.slots.iter().zip(&taps) {
        m.assign(v, latch.valid.clone());
        m.assign(t, latch.shown_tag());
    }
    m
}
