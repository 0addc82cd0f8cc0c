//! Stimulus for the scratchpad-sharing `lock_table` (docs/scratchpad-sharing.md §2.4): one
//! [`Inputs`] per cycle and a proptest strategy biased towards the lock protocol's interesting
//! cases. Each case fixes a pairing (§1.3: slot `M+k` pairs with slot `k`), mostly consistent,
//! sometimes garbage; requests crowd on one hot pair and one warm pair so that same-cycle races
//! and NACKs happen; completions go mostly to slots that have accesses in flight, so drains
//! run (the generator steps the behavioral model to know `pend`); `done` / `tb_empty` toggle as
//! levels (mostly `tb_empty ⇒ done`); rare lock presets and resets.

use crate::design::{Bench, Case};
use proptest::prelude::*;
use smrtl_cosim::lock_table::{Inputs, LockTable, Model, Outputs, Ports};
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::lock_table::{build, Params};
use smrtl_hdl::netlist::mask;
use smrtl_hdl::tools::ToolError;
use smrtl_hdl::Module;

pub use smrtl_cosim::lock_table::Inputs as Cycle;

/// The cycles as input buffers.
pub fn encode(p: &Params, layout: &Layout, cycles: &[Inputs]) -> Case {
    let ports = Ports::new(p, layout);
    cycles
        .iter()
        .map(|c| {
            let mut buf = vec![0u64; layout.in_words];
            ports.write_inputs(c, &mut buf);
            buf
        })
        .collect()
}

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
            let mut c = Inputs::idle(&p);
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

pub struct LockTableBench;

impl Bench for LockTableBench {
    type Params = Params;
    const SUMMARY: &'static str = "scratchpad sharing: per-pair shared-region locks, FCFS grant/NACK, drain, release and transfer (seed 001)";

    fn module(p: &Params) -> Module {
        build(p)
    }

    fn model(p: &Params, layout: &Layout) -> Box<dyn Simulator + Send> {
        Box::new(Model::new(p, layout))
    }

    fn cases(p: &Params, layout: &Layout) -> BoxedStrategy<Case> {
        let (p2, layout) = (p.clone(), layout.clone());
        cycles(p, CASE_CYCLES)
            .prop_map(move |cs| encode(&p2, &layout, &cs))
            .boxed()
    }

    fn cost_notes(p: &Params) -> Result<smrtl_synth::Notes, ToolError> {
        smrtl_synth::lock_table::notes(p)
    }
}
