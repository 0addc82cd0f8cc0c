//! The elastic pipeline's block bench (docs/elastic-pipeline.md §6, §9): the trace-mode top's
//! typed inputs of an offered entry and random open-loop cases for the block harness. Trace
//! files, their driver and the lock-step co-simulation on records are in
//! [`crate::studies::trace`].

use crate::coverage::Cover;
use crate::design::Bench;
use proptest::prelude::*;
use smrtl_cosim::blocks::elastic_pipeline::{Entry, Model};
use smrtl_cosim::Layout;
use smrtl_hdl::blocks::elastic_pipeline::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::elastic_pipeline::{
    ports, Cause, Kind, Params, PipeMode, WbPriority, WbSrc,
};
use smrtl_hdl::netlist::mask;

/// The trace-mode top's buffer layout for `p` (its declared ports and latch taps).
pub fn layout(p: &Params) -> Layout {
    Layout::new(&ports(p))
}

/// One cycle's inputs: `offer` on `in_*` (in_valid = 1), `icnt_valid`, reset low.
pub fn inputs(p: &Params, offer: Option<&Entry>, icnt_valid: bool) -> Inputs {
    let mut i = Inputs {
        icnt_valid,
        ..Inputs::new(p)
    };
    if let Some(e) = offer {
        i.in_valid = true;
        i.in_tag = u64::from(e.tag);
        i.in_kind = e.kind as u64;
        i.in_deg = u64::from(e.deg_override.unwrap_or(0));
        for (a, &w) in i.in_addr.iter_mut().zip(e.addrs.iter()) {
            *a = u64::from(w);
        }
        for (a, &on) in i.in_act.iter_mut().zip(e.act.iter()) {
            *a = on;
        }
    }
    i
}

/// [`inputs`] as one cycle's input buffer of `layout`.
pub fn encode_inputs(
    p: &Params,
    layout: &Layout,
    offer: Option<&Entry>,
    icnt_valid: bool,
) -> Vec<u64> {
    let mut buf = vec![0u64; layout.in_words];
    Io::new(p, layout).write_inputs(&inputs(p, offer, icnt_valid), &mut buf);
    buf
}

/// Longest random case.
pub const CASE_CYCLES: usize = 96;

/// Random per-cycle inputs for the block harness: an entry offered most cycles whatever
/// `in_ready` says (F loads only when ready), every kind, overrides 0..=L, addresses from small
/// strided pools so the detector sees real conflicts, ICNT grants and rare resets. Tags are
/// the cycle number.
pub fn cycles(p: &Params) -> impl Strategy<Value = Vec<Inputs>> {
    let p = p.clone();
    let lanes = p.lanes as usize;
    let cycle = (
        prop::bool::weighted(0.85),
        0..4u64,
        prop_oneof![2 => Just(0u32), 1 => 1..=p.lanes],
        (prop::sample::select(vec![0u32, 1, 2, 4, 8, 16]), 0..64u32),
        any::<u64>(),
        prop::bool::weighted(0.12),
        prop::bool::weighted(0.005),
    );
    prop::collection::vec(cycle, 1..=CASE_CYCLES).prop_map(move |cycles| {
        cycles
            .into_iter()
            .enumerate()
            .map(
                |(t, (valid, kind, deg, (stride, base), act, icnt, reset))| {
                    let e = Entry {
                        tag: (t as u64 & mask(p.tag_bits as usize)) as u32,
                        kind: Kind::from_bits(kind),
                        deg_override: (deg != 0).then_some(deg),
                        addrs: (0..lanes as u32)
                            .map(|l| (base + l * stride) & mask(p.addr_bits as usize) as u32)
                            .collect(),
                        // Bit 63 set: all lanes active (half the cases).
                        act: (0..lanes)
                            .map(|l| act >> 63 == 1 || act >> l & 1 == 1)
                            .collect(),
                    };
                    Inputs {
                        reset,
                        ..inputs(&p, valid.then_some(&e), icnt)
                    }
                },
            )
            .collect()
    })
}

impl Bench for Params {
    type Model = Model;
    const SUMMARY: &'static str = "SM pipeline, trace mode: front end + unified / split / elastic backend (PREMEM, NONMEM FIFOs, WB priority) (seed 000)";

    fn stimulus(&self) -> BoxedStrategy<Vec<Inputs>> {
        cycles(self).boxed()
    }

    /// docs/elastic-pipeline.md §3.2–§3.3: F loading an offer, MEM0 held, every WB source of
    /// the mode and a WB bubble, each PRE / NQ FIFO full and empty, ICNT data taking WB while
    /// NQ is full, each row of the §3.3 stall-cause table, reset.
    fn coverpoints(&self) -> Vec<Point> {
        let mut v = vec![
            Point::point("offer_loaded", "§3.2", |_, i, o, _| {
                i.in_valid && o.in_ready
            }),
            Point::point("mem0_held", "§3.2", |_, _, o, _| o.mem0_rem > 1),
            Point::point("wb_icnt", "§3.2", wb_from(WbSrc::Icnt)),
            Point::point("wb_mem_last", "§3.2", wb_from(WbSrc::Mem)),
            Point::point("wb_bubble", "§3.2", |_, _, o, _| !o.wb_valid),
            Point::point("reset", "§3.1", |_, i, _, _| i.reset),
        ];
        v.extend(nonmem_points(self));
        v.extend(fifo_points(self));
        v.extend(stall_points(self));
        v
    }
}

/// This block's coverpoints (docs/coverage.md).
type Point = Cover<Params>;

/// WB holds content from `s` in this cycle.
fn wb_from(s: WbSrc) -> impl Fn(&Params, &Inputs, &Outputs, &Model) -> bool + Send + Sync {
    move |_, _, o, _| o.wb_src == s as u64
}

/// WB from the mode's ALU side: NM_last (Split), the NQ head or EXE (Elastic).
fn nonmem_points(p: &Params) -> Vec<Point> {
    let (split, elastic) = (
        p.pipe_mode == PipeMode::Split,
        p.pipe_mode == PipeMode::Elastic,
    );
    let point = |name, why: Option<&'static str>, s| Point::unless(why, name, "§3.2", wb_from(s));
    vec![
        point(
            "wb_nm_last",
            (!split).then_some("only Split has NM latches"),
            WbSrc::Nm,
        ),
        point(
            "wb_nq_head",
            (!elastic).then_some("only Elastic has the NONMEM FIFO"),
            WbSrc::Nq,
        ),
        point(
            "wb_exe",
            (!elastic || p.nonmem_min_age > 0)
                .then_some("EXE writes back directly only in Elastic with nonmem_min_age = 0"),
            WbSrc::Exe,
        ),
    ]
}

/// Each FIFO full and empty, and ICNT taking WB while NQ is full (§3.2 steps 2, 5).
fn fifo_points(p: &Params) -> Vec<Point> {
    let (pre, nq) = (p.pre_slots() as u64, p.nq_slots() as u64);
    let mut v = vec![];
    if pre > 0 {
        v.push(Point::point("pre_full", "§3.2", move |_, _, o, _| {
            o.pre_count == pre
        }));
        v.push(Point::point("pre_empty", "§3.2", |_, _, o, _| {
            o.pre_count == 0
        }));
    } else {
        let why = "no PREMEM FIFO (not Elastic, or N = 0)";
        v.push(Point::unreachable("pre_full", "§3.2", why));
        v.push(Point::unreachable("pre_empty", "§3.2", why));
    }
    if nq > 0 {
        v.push(Point::point("nq_full", "§3.2", move |_, _, o, _| {
            o.nq_count == nq
        }));
        v.push(Point::point("nq_empty", "§3.2", |_, _, o, _| {
            o.nq_count == 0
        }));
        v.push(Point::point(
            "icnt_while_nq_full",
            "§3.2",
            move |_, i, o, _| i.icnt_valid && o.nq_count == nq,
        ));
    } else {
        let why = "no NONMEM FIFO (not Elastic, or Q = 0)";
        for name in ["nq_full", "nq_empty", "icnt_while_nq_full"] {
            v.push(Point::unreachable(name, "§3.2", why));
        }
    }
    v
}

/// The four rows of the §3.3 cause table, told apart by the entry EXE holds.
fn stall_points(p: &Params) -> Vec<Point> {
    let unified = p.pipe_mode == PipeMode::Unified;
    let held = move |o: &Outputs, m: &Model, alu: bool, cause: Cause| {
        let exe = m.pipeline().front_end().exe();
        o.fe_hold
            && o.cause == cause as u64
            && exe.is_some_and(|e| (e.kind == Kind::Alu && !unified) == alu)
    };
    let mut v = vec![Point::point(
        "stall_mem_conflict",
        "§3.3",
        move |_, _, o, m| held(o, m, false, Cause::BankConflict),
    )];
    v.push(if p.pre_slots() > 0 {
        Point::unreachable(
            "stall_mem_behind_icnt",
            "§3.3",
            "Elastic with N > 0: a memory entry waits only on a full PRE, which is bank_conflict",
        )
    } else {
        Point::point("stall_mem_behind_icnt", "§3.3", move |_, _, o, m| {
            held(o, m, false, Cause::Other)
        })
    });
    if unified {
        let why = "Unified: ALU entries take the MEM path (the memory rows)";
        v.push(Point::unreachable("stall_alu_wb_to_icnt", "§3.3", why));
        v.push(Point::unreachable("stall_alu_wb_to_mem", "§3.3", why));
        return v;
    }
    v.push(Point::point(
        "stall_alu_wb_to_icnt",
        "§3.3",
        move |_, _, o, m| held(o, m, true, Cause::Other),
    ));
    // A full NQ's head entered at least Q cycles ago (one entry a cycle), so its age is ≥ Q.
    let nq_outranks_mem = p.pipe_mode == PipeMode::Elastic
        && p.wb_priority == WbPriority::NonmemFirst
        && p.nonmem_depth > 0
        && p.nonmem_depth >= p.nonmem_min_age;
    v.push(if nq_outranks_mem {
        Point::unreachable(
            "stall_alu_wb_to_mem",
            "§3.3",
            "nonmem_first, Q ≥ nonmem_min_age: a full NQ's head is eligible and outranks MEM_last, so NQ has room after its dequeue",
        )
    } else {
        Point::point("stall_alu_wb_to_mem", "§3.3", move |_, _, o, m| {
            held(o, m, true, Cause::BankConflict)
        })
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::ValueTree;
    use smrtl_cosim::{BlockModel, Simulator};

    #[test]
    fn random_cases_run_on_the_model() {
        let p = Params {
            fe_depth: 2,
            mem_stages: 2,
            ..Params::default()
        };
        let d = crate::Design::new(&p);
        let mut runner = crate::check::runner(1);
        for _ in 0..20 {
            let case = d.cases().new_tree(&mut runner).unwrap().current();
            let mut model = Model::new(&p, &d.layout);
            let mut out = vec![0; d.layout.out_words];
            for inputs in &case {
                model.step(inputs, &mut out);
            }
        }
    }
}
