//! Behavioral model of one warp scheduler (docs/scratchpad-sharing.md §4; Jatala et al., seed
//! 001, §4), written from the spec's rules, independently of the RTL: plain loops over the
//! warps, the two-level policy walked group by group.
//!
//! [`pick`] is the policy as a function (the SM model can call it directly); [`Model`] wraps it
//! with the `last` register on the block's ports for co-simulation.

use crate::blocks::bank_conflict_detector::{lane_field, Word};
use crate::harness::layout::{Layout, Slot};
use crate::harness::sim::Simulator;
use smrtl_hdl::blocks::sharing::{Class, Sched, TWO_LEVEL_GROUP};
use smrtl_hdl::blocks::warp_scheduler::{port, Params};

/// One warp as the scheduler sees it this cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Warp {
    pub ready: bool,
    /// 2-bit class code (`Class` encoding; 3 reads as NONOWNER).
    pub cls: u64,
    /// Dynamic warp id: smaller is older.
    pub age: u64,
}

/// The warp `p.sched` picks among `warps` (index = position in this scheduler), given the last
/// pick (`None` after reset); `None` when no warp is ready (spec §4).
pub fn pick(p: &Params, last: Option<usize>, warps: &[Warp]) -> Option<usize> {
    let ws = warps.len();
    let ready = |j: usize| warps[j].ready;
    let rank = |j: usize| p.rank.of(Class::of_code(warps[j].cls));
    let oldest = || {
        (0..ws)
            .filter(|&j| ready(j))
            .min_by_key(|&j| (warps[j].age, j))
    };
    match p.sched {
        Sched::Owf => {
            let best = (0..ws)
                .filter(|&j| ready(j))
                .min_by_key(|&j| (rank(j), warps[j].age, j))?;
            match last {
                Some(l) if p.greedy && ready(l) && rank(l) == rank(best) => Some(l),
                _ => Some(best),
            }
        }
        Sched::Lrr => {
            let start = last.map_or(0, |l| l + 1);
            (0..ws).map(|k| (start + k) % ws).find(|&j| ready(j))
        }
        Sched::Gto => match last {
            Some(l) if ready(l) => Some(l),
            _ => oldest(),
        },
        Sched::TwoLevel => {
            let groups = ws.div_ceil(TWO_LEVEL_GROUP);
            let members = |g: usize| g * TWO_LEVEL_GROUP..((g + 1) * TWO_LEVEL_GROUP).min(ws);
            let g = last.map_or(0, |l| l / TWO_LEVEL_GROUP);
            let cur = members(g);
            if cur.clone().any(ready) {
                // LRR inside the group, circular from last_idx + 1 (the group start after reset).
                let (lo, len) = (cur.start, cur.len());
                let from = last.map_or(0, |l| l + 1 - lo);
                return (0..len).map(|k| lo + (from + k) % len).find(|&j| ready(j));
            }
            (1..=groups)
                .map(|d| (g + d) % groups)
                .find_map(|h| members(h).find(|&j| ready(j)))
        }
    }
}

/// The block's ports, resolved once from the layout.
#[derive(Clone, Debug)]
struct Ports {
    reset: Word,
    ready: Slot,
    cls: Slot,
    age: Slot,
    iss_valid: Word,
    iss_idx: Word,
    last_valid: Word,
    last_idx: Word,
}

/// One scheduler on its ports: the same buffers as the RTL backends.
pub struct Model {
    params: Params,
    ports: Ports,
    warps: Vec<Warp>,
    /// The `last` register: the last pick since reset.
    last: Option<usize>,
}

impl Model {
    pub fn new(p: &Params, layout: &Layout) -> Model {
        let input = |name: &str| layout.in_slot(name).clone();
        let output = |name: &str| Word::of(layout.out_slot(name));
        Model {
            params: p.clone(),
            ports: Ports {
                reset: Word::of(layout.in_slot("reset")),
                ready: input(port::READY),
                cls: input(port::CLS),
                age: input(port::AGE),
                iss_valid: output(port::ISS_VALID),
                iss_idx: output(port::ISS_IDX),
                last_valid: output(port::LAST_VALID),
                last_idx: output(port::LAST_IDX),
            },
            warps: vec![Warp::default(); p.ws()],
            last: None,
        }
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        let ps = &self.ports;
        let age_w = self.params.age_w as usize;
        for (j, w) in self.warps.iter_mut().enumerate() {
            *w = Warp {
                ready: lane_field(ps.ready.of(inputs), j, 1) == 1,
                cls: lane_field(ps.cls.of(inputs), j, Class::BITS),
                age: lane_field(ps.age.of(inputs), j, age_w),
            };
        }
        let now = pick(&self.params, self.last, &self.warps);
        ps.iss_valid.set(outputs, now.is_some() as u64);
        ps.iss_idx.set(outputs, now.unwrap_or(0) as u64);
        ps.last_valid.set(outputs, self.last.is_some() as u64);
        ps.last_idx.set(outputs, self.last.unwrap_or(0) as u64);
        if ps.reset.get(inputs) == 1 {
            self.last = None;
        } else if now.is_some() {
            self.last = now;
        }
    }
}
