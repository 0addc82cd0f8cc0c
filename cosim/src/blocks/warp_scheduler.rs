//! Behavioral model of one warp scheduler (docs/scratchpad-sharing.md §4; Jatala et al., seed
//! 001, §4), written from the spec's rules, independently of the RTL: plain loops over the
//! warps, the two-level policy walked group by group.
//!
//! [`pick`] is a stateless policy as a function; [`State`] is one scheduler's state (the last
//! pick, and TWO_LEVEL_ACTIVE's lists, [`Lists`]) stepped a cycle at a time (the core model
//! calls it directly); [`Model`] puts it on the block's ports for co-simulation.

use crate::{BlockModel, Layout, Simulator};
use smrtl_hdl::blocks::sharing::{Class, Sched, TWO_LEVEL_GROUP};
use smrtl_hdl::blocks::warp_scheduler::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::warp_scheduler::Params;
use std::collections::VecDeque;

/// The warp `p.sched` picks among the scheduler's warps `i` (`ready`, `cls`, `age` per index in
/// this scheduler), given the last pick (`None` after reset); `None` when no warp is ready
/// (spec §4). TWO_LEVEL_ACTIVE keeps lists: see [`State::step`].
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
        Sched::TwoLevelActive => unreachable!("TWO_LEVEL_ACTIVE picks with its lists (State)"),
    }
}

/// TWO_LEVEL_ACTIVE's lists (docs/scratchpad-sharing.md §4.1), as GPGPU-Sim's
/// `two_level_active_scheduler` keeps them: `m_next_cycle_prioritized_warps` (the active list)
/// and `m_pending_warps` (a FIFO).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lists {
    /// At most `max` warps, first = highest priority.
    pub active: Vec<usize>,
    pub pending: VecDeque<usize>,
    pub max: usize,
}

impl Lists {
    /// `add_supervised_warp_id(0..ws)`: the first `max` warps active, the rest pending.
    pub fn new(max: usize, ws: usize) -> Lists {
        let mut l = Lists {
            active: vec![],
            pending: VecDeque::new(),
            max,
        };
        for w in 0..ws {
            match l.active.len() < max {
                true => l.active.push(w),
                false => l.pending.push_back(w),
            }
        }
        l
    }

    /// One cycle: `order_warps` (waiting active warps to the back of the pending FIFO, in order;
    /// refill from its front while the list is short and the FIFO is not empty — GPGPU-Sim
    /// would read an empty FIFO's front, which only a scheduler of fewer than `max` warps
    /// reaches), then the first ready active warp issues and the list restarts after it
    /// (`do_on_warp_issued`, `order_lrr`).
    pub fn cycle(
        &mut self,
        ready: impl Fn(usize) -> bool,
        wait: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let (kept, demoted): (Vec<usize>, Vec<usize>) =
            self.active.iter().partition(|&&w| !wait(w));
        self.active = kept;
        self.pending.extend(demoted);
        while self.active.len() < self.max {
            match self.pending.pop_front() {
                Some(w) => self.active.push(w),
                None => break,
            }
        }
        let at = self.active.iter().position(|&w| ready(w))?;
        let issued = self.active[at];
        self.active.rotate_left(at + 1);
        Some(issued)
    }
}

/// One scheduler's state: the last pick, and the lists under TWO_LEVEL_ACTIVE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    pub last: Option<usize>,
    pub lists: Option<Lists>,
}

impl State {
    /// The state after reset for `ws` warps.
    pub fn new(p: &Params, ws: usize) -> State {
        State {
            last: None,
            lists: (p.sched == Sched::TwoLevelActive).then(|| Lists::new(p.tl_active as usize, ws)),
        }
    }

    /// This cycle's pick from `i`, and the state after the clock edge (without reset).
    pub fn step(&self, p: &Params, i: &Inputs) -> (Option<usize>, State) {
        let mut next = self.clone();
        let now = match &mut next.lists {
            Some(l) => l.cycle(|j| i.ready[j], |j| i.waiting[j]),
            None => pick(p, self.last, i),
        };
        next.last = now.or(self.last);
        (now, next)
    }
}

/// One scheduler on its ports: its [`State`].
pub struct Model {
    params: Params,
    io: Io,
    inputs: Inputs,
    outputs: Outputs,
    state: State,
}

impl BlockModel for Model {
    type Params = Params;
    fn new(p: &Params, layout: &Layout) -> Model {
        Model {
            params: p.clone(),
            io: Io::new(p, layout),
            inputs: Inputs::new(p),
            outputs: Outputs::new(p),
            state: State::new(p, p.ws()),
        }
    }
}

impl Model {
    /// The state after the last edge.
    pub fn state(&self) -> &State {
        &self.state
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        let (i, o) = (&mut self.inputs, &mut self.outputs);
        self.io.read_inputs(inputs, i);
        let (now, next) = self.state.step(&self.params, i);
        o.iss_valid = now.is_some();
        o.iss_idx = now.unwrap_or(0) as u64;
        o.last_valid = self.state.last.is_some();
        o.last_idx = self.state.last.unwrap_or(0) as u64;
        self.io.write_outputs(o, outputs);
        self.state = match i.reset {
            true => State::new(&self.params, self.params.ws()),
            false => next,
        };
    }
}
