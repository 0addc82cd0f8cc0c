//! `OwfScheduler` (docs/scratchpad-sharing.md §4; Jatala et al., seed 001, §4): one warp
//! scheduler of the SM (the SM top instantiates NSCHED of them), picking one ready warp per
//! cycle by Owner Warp First or one of the paper's baselines (LRR, GTO, two-level).
//!
//! Only the selected `SCHED`'s logic is built (a parameter, not a runtime input):
//! - OWF and GTO: an argmin tree over the ready warps' keys (OWF: `(RANK[cls], age)`, GTO:
//!   `age`); equal keys keep the left (lower-index) subtree, which is the index tie-break.
//!   OWF with `GREEDY` and GTO keep `last_idx` when it qualifies.
//! - LRR and TWO_LEVEL: a "first ready after `last_idx`" search in the round-robin pattern
//!   (candidates above `last_idx` first, else the lowest candidate), each as a first-valid tree.
//!   TWO_LEVEL restricts the candidates to the current group when it has a ready warp; when it
//!   has none, the first group after it with a ready warp and that group's lowest ready warp is
//!   exactly the first ready warp after `last_idx`, so the same search serves both cases.
//! - TWO_LEVEL_ACTIVE: GPGPU-Sim's two-level active scheduler ([`two_level_active`]).

use crate::blocks::sharing::{Class, Rank, Sched, Shape, TWO_LEVEL_GROUP};
mod two_level_active;

use crate::netlist::{concat, or_tree, select_onehot, Expr, Module};
use crate::params::{bits_for, declared_by, Allowed, BlockParams, Gpgpusim, ParamError};

crate::block_params! {
    /// Scheduler parameters (spec §0, §4): W and NSCHED from [`Shape`] (WS = W/NSCHED warps
    /// per scheduler), the policy and its switches.
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct Params {
        warps: u32 = Shape::default().warps, "W", Allowed::As(declared_by::<Shape>);
        nsched: u32 = Shape::default().nsched, "NSCHED", Allowed::As(declared_by::<Shape>);
        /// Scheduling policy: Owner Warp First or a baseline.
        sched: Sched = Sched::Owf, "SCHED", Allowed::Names(&["OWF", "LRR", "GTO", "TWO_LEVEL", "TWO_LEVEL_ACTIVE"]) => Gpgpusim::Scheduler;
        /// OWF's class → priority map.
        rank: Rank = Rank::Owf3, "RANK", Allowed::Names(&["OWF3", "OWF2", "UWF"]);
        /// OWF keeps the last warp while it is ready and in the best ready class.
        greedy: bool = false, "GREEDY", Allowed::Bool;
        /// Width of a dynamic warp id (`age`; oldest = smallest, no wraparound).
        age_w: u32 = 16, "AGE_W", Allowed::Range(2, 32);
        /// TWO_LEVEL_ACTIVE: active warps per scheduler (GPGPU-Sim's `two_level_active:N`; a
        /// scheduler of fewer warps keeps all of them active).
        tl_active: u32 = 6, "TL_ACTIVE", Allowed::Range(1, 128) => Gpgpusim::TwoLevelActive;
    }
}

impl Params {
    /// The SM shape these params describe (T, LANES and R at their defaults: unused here).
    pub fn shape(&self) -> Shape {
        Shape {
            warps: self.warps,
            nsched: self.nsched,
            ..Shape::default()
        }
    }

    /// WS = W/NSCHED: the warps this scheduler picks from.
    pub fn ws(&self) -> usize {
        self.shape().ws()
    }

    /// Width of `iss_idx` and `last_idx`: ⌈log2 WS⌉, at least 1.
    pub fn idx_bits(&self) -> usize {
        self.shape().wsw()
    }

    /// Register bits: `last_valid` and `last_idx` (spec §7: 1 + ⌈log2 WS⌉ per scheduler);
    /// TWO_LEVEL_ACTIVE adds its lists ([`Params::tl_list_bits`]).
    pub fn register_bits(&self) -> u64 {
        let lists = match self.sched {
            Sched::TwoLevelActive => self.tl_list_bits(),
            _ => 0,
        };
        1 + self.idx_bits() as u64 + lists
    }

    /// TWO_LEVEL_ACTIVE's active list length: min(TL_ACTIVE, WS).
    pub fn tl_slots(&self) -> usize {
        (self.tl_active as usize).min(self.ws())
    }

    /// TWO_LEVEL_ACTIVE's list registers: the active slots' indices, and when some warps are
    /// pending, the FIFO ring (2^⌈log2 WS⌉ entries) and its head pointer, each an index.
    pub fn tl_list_bits(&self) -> u64 {
        let ib = self.idx_bits();
        let ring = match self.tl_slots() < self.ws() {
            true => (1 << ib) + 1,
            false => 0,
        };
        ((self.tl_slots() + ring) * ib) as u64
    }

    /// Bits of a rank under `RANK` (enough for its largest value).
    pub fn rank_bits(&self) -> usize {
        let max = [Class::Owner, Class::Unshared, Class::Nonowner]
            .into_iter()
            .map(|c| self.rank.of(c))
            .max()
            .expect("three classes");
        bits_for(max)
    }
}

impl BlockParams for Params {
    const BLOCK: &'static str = "warp_scheduler";

    /// The paper's scheduler and the small shape, then one preset per policy switch, each at
    /// its own scheduler size (WS = W / NSCHED: 1 to 128 warps; buses wider than 64 bits at
    /// 128) with 3-bit ages, so equal keys are common.
    fn presets() -> Vec<(&'static str, Self)> {
        let small = Shape::small();
        let at = |warps, nsched, sched, rank, greedy| Params {
            warps,
            nsched,
            sched,
            rank,
            greedy,
            age_w: 3,
            tl_active: 6,
        };
        vec![
            ("paper", Params::default()),
            (
                "small",
                Params {
                    warps: small.warps,
                    nsched: small.nsched,
                    ..Params::default()
                },
            ),
            ("greedy", at(96, 4, Sched::Owf, Rank::Owf3, true)),
            ("owf2_greedy", at(4, 2, Sched::Owf, Rank::Owf2, true)),
            ("uwf_wide", at(128, 1, Sched::Owf, Rank::Uwf, false)),
            ("one_warp", at(4, 4, Sched::Owf, Rank::Owf2, false)),
            ("lrr", at(3, 1, Sched::Lrr, Rank::Owf3, false)),
            ("gto", at(8, 1, Sched::Gto, Rank::Owf3, false)),
            ("two_level", at(20, 1, Sched::TwoLevel, Rank::Owf3, false)),
            (
                "two_level_wide",
                at(128, 4, Sched::TwoLevel, Rank::Owf3, false),
            ),
            (
                "two_level_active",
                at(20, 1, Sched::TwoLevelActive, Rank::Owf3, false),
            ),
            (
                "two_level_active_few",
                at(4, 1, Sched::TwoLevelActive, Rank::Owf3, false),
            ),
            (
                "two_level_active_wide",
                Params {
                    tl_active: 7,
                    ..at(128, 2, Sched::TwoLevelActive, Rank::Owf3, false)
                },
            ),
        ]
    }

    fn check(&self) -> Result<(), ParamError> {
        self.shape().check()
    }
}

crate::ports! {
    Params as p;
    let (ws, ib) = (p.ws(), p.idx_bits());
    inputs {
        /// Per warp of this scheduler: its next instruction can issue.
        ready[1; ws]: bool,
        /// Per warp: its OWF class (`Class` codes; 3 reads as NONOWNER).
        cls[Class::BITS; ws],
        /// Per warp: its dynamic warp id (smaller = older).
        age[p.age_w as usize; ws],
        /// Per warp: waiting (GPGPU-Sim's `waiting()` or a long-op operand): TWO_LEVEL_ACTIVE
        /// demotes it from the active list; the other policies ignore it.
        waiting[1; ws]: bool,
    }
    outputs {
        /// A warp is picked this cycle (Mealy): OR of `ready` (TWO_LEVEL_ACTIVE: of the
        /// active warps').
        iss_valid[1]: bool,
        /// The picked warp's index (Mealy; 0 when `iss_valid` is 0).
        iss_idx[ib],
        /// State: a warp was picked since reset (Moore).
        last_valid[1]: bool,
        /// State: the last picked warp (Moore).
        last_idx[ib],
    }
}

impl crate::Block for Params {
    fn build(&self) -> Module {
        build(self)
    }
    #[cfg(feature = "faults")]
    const FAULTS: &'static [crate::faults::Fault] = &[faults::TIE_TAKES_HIGHER_INDEX];
}

/// Planted faults (docs/blocks.md §4).
#[cfg(feature = "faults")]
pub mod faults {
    use crate::faults::Fault;

    /// The argmin tree (OWF, GTO) breaks key ties towards the higher index (spec §4: equal
    /// keys go to the lower index); built only where the policy has the tree.
    pub const TIE_TAKES_HIGHER_INDEX: Fault = Fault {
        block: "warp_scheduler",
        name: "tie_takes_higher_index",
        what: "the OWF / GTO argmin breaks key ties towards the higher warp index (spec §4: the lower wins)",
        port: super::port::ISS_IDX,
        // Two ready warps of equal key, nothing to keep: one cycle.
        within: 1,
    };
}

/// A candidate in a selection tree: valid, its sort key (if any) and its index.
#[derive(Clone)]
struct Cand {
    valid: Expr,
    key: Option<Expr>,
    idx: Expr,
}

/// Reduces `leaves` pairwise, as a balanced tree, to one winner: the right (higher-index)
/// candidate of a pair replaces the left one where `right_wins(a, b)` (a rule that looks at
/// both valid bits); the winner is valid if either is.
fn tree(
    m: &mut Module,
    name: &str,
    mut level: Vec<Cand>,
    right_wins: &dyn Fn(&Cand, &Cand) -> Expr,
) -> Cand {
    let mut depth = 0;
    while level.len() > 1 {
        let mut next = vec![];
        for (k, pair) in level.chunks(2).enumerate() {
            let [a, b] = pair else {
                next.push(pair[0].clone());
                continue;
            };
            let tag = format!("{name}{depth}_{k}");
            let take_b = m.wire(&format!("{tag}_b"), right_wins(a, b));
            let key = match (&a.key, &b.key) {
                (Some(ka), Some(kb)) => Some(m.wire(&format!("{tag}_key"), take_b.mux(kb, ka))),
                _ => None,
            };
            next.push(Cand {
                valid: m.wire(&format!("{tag}_v"), &a.valid | &b.valid),
                key,
                idx: m.wire(&format!("{tag}_idx"), take_b.mux(&b.idx, &a.idx)),
            });
        }
        level = next;
        depth += 1;
    }
    level.pop().expect("at least one candidate")
}

/// The lowest-index valid candidate among `valid` (its index, and whether there is one).
fn first_valid(m: &mut Module, name: &str, valid: &[Expr], ib: usize) -> Cand {
    let leaves = valid
        .iter()
        .enumerate()
        .map(|(j, v)| Cand {
            valid: v.clone(),
            key: None,
            idx: Expr::lit(j as u64, ib),
        })
        .collect();
    tree(m, name, leaves, &|a, _| !a.valid.clone())
}

/// Builds one scheduler's RTL from validated params (spec §4).
pub fn build(p: &Params) -> Module {
    let (ws, ib) = (p.ws(), p.idx_bits());
    let mut m = Module::new(&crate::params::module_name(p));
    m.cites(crate::blocks::docs::SCRATCHPAD_SHARING);
    let (inp, out) = m.declare_ports(&ports(p));
    let (ready_bus, cls, age) = (
        inp[port::READY].clone(),
        inp[port::CLS].clone(),
        inp[port::AGE].clone(),
    );
    let ready: Vec<Expr> = (0..ws).map(|j| ready_bus.bit(j)).collect();

    m.section("State: the last picked warp (§4 last_valid, last_idx)");
    let last_valid = m.reg("last_valid_q", 1, 0);
    let last_idx = m.reg("last_idx_q", ib, 0);
    let (iss_valid, pick) = match p.sched {
        Sched::TwoLevelActive => {
            let wait: Vec<Expr> = (0..ws).map(|j| inp[port::WAITING].bit(j)).collect();
            two_level_active::build(&mut m, p, &ready, &wait)
        }
        _ => {
            m.section("Issue: some warp is ready (§4 iss_valid = OR ready)");
            // 64 ready bits at a time (an expression is at most 64 bits wide).
            let chunks = (0..ws)
                .step_by(64)
                .map(|lo| ready_bus.slice(lo, (ws - lo).min(64)).any())
                .collect();
            let iss_valid = m.wire("iss_valid_w", or_tree(chunks, 1));
            let pick = pick_one(&mut m, p, &ready, &[cls, age], [&last_valid, &last_idx]);
            (iss_valid, pick)
        }
    };
    let pick = m.wire("pick", pick);

    m.section("Outputs and the state update (last <= pick whenever iss_valid)");
    let zero = Expr::lit(0, ib);
    m.assign(&out[port::ISS_VALID], iss_valid.clone());
    m.assign(&out[port::ISS_IDX], iss_valid.mux(&pick, &zero));
    m.assign(&out[port::LAST_VALID], last_valid.clone());
    m.assign(&out[port::LAST_IDX], last_idx.clone());
    m.next(&last_valid, &last_valid | &iss_valid);
    m.next(&last_idx, iss_valid.mux(&pick, &last_idx));
    m
}

/// OWF, GTO, LRR and TWO_LEVEL's pick among the ready warps (§4), from the inputs `cls`,
/// `age` and the state `last_valid`, `last_idx`.
fn pick_one(
    m: &mut Module,
    p: &Params,
    ready: &[Expr],
    [cls, age]: &[Expr; 2],
    [last_valid, last_idx]: [&Expr; 2],
) -> Expr {
    let (ws, ib, aw) = (p.ws(), p.idx_bits(), p.age_w as usize);
    let idx = |j: usize| Expr::lit(j as u64, ib);
    // at_last[j]: warp j is the last picked one (a one-hot decode of last_idx).
    let last_ready = |m: &mut Module| {
        let at_last: Vec<Expr> = (0..ws)
            .map(|j| m.wire(&format!("at_last_{j}"), last_idx.equals(&idx(j))))
            .collect();
        let hits = at_last.iter().zip(ready).map(|(h, r)| h & r).collect();
        let keep = m.wire("last_ready", last_valid & &or_tree(hits, 1));
        (at_last, keep)
    };

    match p.sched {
        Sched::Owf | Sched::Gto => {
            m.section("Argmin over the ready warps of (rank, age, index) (§4 OWF, GTO)");
            let rb = p.rank_bits();
            // GTO ignores the classes: no rank logic.
            let ranks: Vec<Expr> = match p.sched {
                Sched::Owf => (0..ws)
                    .map(|j| {
                        let code = cls.slice(j * Class::BITS, Class::BITS);
                        let rank = rank_of(p, &code, rb);
                        m.wire(&format!("rank_{j}"), rank)
                    })
                    .collect(),
                _ => vec![],
            };
            let leaves = (0..ws)
                .map(|j| {
                    let a = age.slice(j * aw, aw);
                    let key = match ranks.get(j) {
                        Some(r) => concat(&[r.clone(), a]),
                        None => a,
                    };
                    Cand {
                        valid: ready[j].clone(),
                        key: Some(key),
                        idx: idx(j),
                    }
                })
                .collect();
            let best = tree(m, "min", leaves, &|a, b| {
                let (ka, kb) = (a.key.as_ref().expect("key"), b.key.as_ref().expect("key"));
                let better = crate::planted!(faults::TIE_TAKES_HIGHER_INDEX, !ka.lt(kb), kb.lt(ka));
                &b.valid & &(!a.valid.clone() | better)
            });
            match (p.sched, p.greedy) {
                (Sched::Gto, _) => {
                    m.section("GTO: keep the last warp while it is ready");
                    let (_, keep) = last_ready(m);
                    keep.mux(last_idx, &best.idx)
                }
                (_, true) => {
                    m.section("GREEDY: keep the last warp while ready and of the best ready rank");
                    let (at_last, ready_last) = last_ready(m);
                    let rank_last = m.wire("rank_last", select_onehot(&at_last, &ranks, rb));
                    let best_key = m.wire("best_key", best.key.expect("key"));
                    let best_rank = best_key.slice(aw, rb);
                    let keep = m.wire("keep_last", ready_last & rank_last.equals(&best_rank));
                    keep.mux(last_idx, &best.idx)
                }
                _ => best.idx,
            }
        }
        _ => {
            let cand: Vec<Expr> = if p.sched == Sched::TwoLevel {
                m.section("TWO_LEVEL: the current group's ready warps, else all (§4)");
                two_level_candidates(m, ready, last_valid, last_idx)
            } else {
                ready.to_vec()
            };
            m.section("First candidate after last_idx, circularly (§4 LRR)");
            let above: Vec<Expr> = (0..ws)
                .map(|j| match j {
                    0 => Expr::lit(0, 1),
                    _ => m.wire(
                        &format!("above_{j}"),
                        &cand[j] & &(last_valid & &last_idx.lt(&idx(j))),
                    ),
                })
                .collect();
            let hi = first_valid(m, "hi", &above, ib);
            let lo = first_valid(m, "lo", &cand, ib);
            hi.valid.mux(&hi.idx, &lo.idx)
        }
    }
}

/// `RANK[cls]` for a 2-bit class code, as a mux chain over the codes (code 3 reads as
/// NONOWNER, [`Class::of_code`]).
fn rank_of(p: &Params, code: &Expr, rb: usize) -> Expr {
    let codes = 1u64 << Class::BITS;
    let rank = |c: u64| Expr::lit(p.rank.of(Class::of_code(c)), rb);
    (0..codes - 1).rev().fold(rank(codes - 1), |acc, c| {
        code.equals(&Expr::lit(c, Class::BITS)).mux(&rank(c), &acc)
    })
}

/// TWO_LEVEL's candidates (spec §4): the ready warps of the current group
/// `g = last_valid ? last_idx / 8 : 0` if it has any, else every ready warp.
fn two_level_candidates(
    m: &mut Module,
    ready: &[Expr],
    last_valid: &Expr,
    last_idx: &Expr,
) -> Vec<Expr> {
    let ws = ready.len();
    let ib = last_idx.width();
    let groups = ws.div_ceil(TWO_LEVEL_GROUP);
    // cur[k]: group k is the current group (last_idx lies in it; group 0 after reset).
    let cur: Vec<Expr> = (0..groups)
        .map(|k| {
            let lo = k * TWO_LEVEL_GROUP;
            let hi = lo + TWO_LEVEL_GROUP;
            let from = match k {
                0 => Expr::lit(1, 1),
                _ => !last_idx.lt(&Expr::lit(lo as u64, ib)),
            };
            // last_idx < WS always, so the last group has no upper bound.
            let below = match hi >= ws {
                true => Expr::lit(1, 1),
                false => last_idx.lt(&Expr::lit(hi as u64, ib)),
            };
            let in_group = from & below;
            let value = match k {
                0 => !last_valid.clone() | in_group,
                _ => last_valid & &in_group,
            };
            m.wire(&format!("group_cur_{k}"), value)
        })
        .collect();
    let in_cur: Vec<Expr> = (0..ws)
        .map(|j| {
            m.wire(
                &format!("in_cur_{j}"),
                &ready[j] & &cur[j / TWO_LEVEL_GROUP],
            )
        })
        .collect();
    let any_cur = m.wire("any_cur", or_tree(in_cur.clone(), 1));
    (0..ws)
        .map(|j| {
            let c = any_cur.mux(&in_cur[j], &ready[j]);
            m.wire(&format!("cand_{j}"), c)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_are_one_plus_index_bits() {
        assert_eq!(Params::default().register_bits(), 6);
        for sched in ["OWF", "LRR", "GTO", "TWO_LEVEL", "TWO_LEVEL_ACTIVE"] {
            for greedy in ["false", "true"] {
                let p =
                    Params::resolve_pairs(None, &[("SCHED", sched), ("GREEDY", greedy)]).unwrap();
                assert_eq!(build(&p).register_bits(), p.register_bits(), "{sched}");
            }
        }
    }

    #[test]
    fn names_parse_in_either_case() {
        let p = Params::resolve_pairs(None, &[("SCHED", "two_level"), ("RANK", "uwf")]).unwrap();
        assert_eq!((p.sched, p.rank), (Sched::TwoLevel, Rank::Uwf));
        let p = Params::resolve_pairs(None, &[("SCHED", "TWO_LEVEL"), ("RANK", "OWF2")]).unwrap();
        assert_eq!((p.sched, p.rank), (Sched::TwoLevel, Rank::Owf2));
        assert_eq!(p.rank_bits(), 1);
    }
}
