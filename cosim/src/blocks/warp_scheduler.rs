//! Behavioral model of one warp scheduler (docs/scratchpad-sharing.md §4; Jatala et al., seed
//! 001, §4), written from the spec's rules, independently of the RTL: plain loops over the
//! warps, the two-level policy walked group by group.
//!
//! [`pick`] is the policy as a function (the SM model can call it directly); [`Model`] wraps it
//! with the `last` register on the block's ports for co-simulation.

use crate::{BlockModel, Layout, Simulator};
use smrtl_hdl::blocks::sharing::{Class, Sched, TWO_LEVEL_GROUP};
use smrtl_hdl::blocks::warp_scheduler::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::warp_scheduler::Params;

/// The warp `p.sched` picks among the scheduler's warps `i` (`ready`, `cls`, `age` per index in
/// this scheduler), given the last pick (`None` after reset); `None` when no warp is ready
/// (spec §4).
pub fn pick(p: &Params, last: Option<usize>, i: &Inputs) -> Option<usize> {
    let ws = i.ready.len();
    let ready = |j: usize| i.ready[j];
    let rank = |j: usize| p.rank.of(Class::of_code(i.cls[j]));
    let oldest = || (0..ws).filter(|&j| ready(j)).min_by_key(|&j| (i.age[j], j));
    match p.sched {
        Sched::Owf => {
            let best = (0..ws)
                .filter(|&j| ready(j))
                .min_by_key(|&j| (rank(j), i.age[j], j))?;
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

/// One scheduler on its ports: the `last` register around [`pick`].
pub struct Model {
    params: Params,
    io: Io,
    inputs: Inputs,
    outputs: Outputs,
    /// The `last` register: the last pick since reset.
    last: Option<usize>,
}

impl BlockModel for Model {
    type Params = Params;
    fn new(p: &Params, layout: &Layout) -> Model {
        Model {
            params: p.clone(),
            io: Io::new(p, layout),
            inputs: Inputs::new(p),
            outputs: Outputs::new(p),
            last: None,
        }
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        let (i, o) = (&mut self.inputs, &mut self.outputs);
        self.io.read_inputs(inputs, i);
        let now = pick(&self.params, self.last, i);
        o.iss_valid = now.is_some();
        o.iss_idx = now.unwrap_or(0) as u64;
        o.last_valid = self.last.is_some();
        o.last_idx = self.last.unwrap_or(0) as u64;
        self.io.write_outputs(o, outputs);
        if i.reset {
            self.last = None;
        } else if now.is_some() {
            self.last = now;
        }
    }
}
