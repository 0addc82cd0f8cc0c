//! `bankan`'s layout optimizer (docs/bank-conflicts.md §3.3, §3.5; [002] Ch. 6): one bank
//! width N per kernel, an intra-pad per array and a dummy before each array but the first,
//! searched progressively over pad ranges, with the objective "fewest replays, then fewest
//! extra bytes, then N = 4". Every candidate is scored by the analysis itself (§3.3 "Degree
//! source").

use super::analysis;
use super::input::Kernel;
use super::swizzle::Swizzle;
use serde::Serialize;
use std::collections::BTreeMap;

/// Default memory budget: Kepler's shared memory per SM.
pub const DEFAULT_BUDGET: u64 = 49152;

/// Exhaustive combination of the per-array option lists up to this many combinations.
const EXHAUSTIVE: u64 = 4096;

/// The progressive pad ranges of [002] §6.4 (inclusive), capped at B·W/M − 1.
const RANGES: [(u64, u64); 6] = [(0, 2), (3, 6), (7, 14), (15, 30), (31, 62), (63, 63)];

/// The layout the optimizer proposes.
#[derive(Debug, Clone, Serialize)]
pub struct Layout {
    pub bank_width: u32,
    /// Array name → intra-pad (elements).
    pub pads: BTreeMap<String, u64>,
    /// Array name → dummy elements before it.
    pub dummies: BTreeMap<String, u64>,
    /// Array name → its XOR swizzle `[B, M, S]` (CuTe's `Swizzle<B, M, S>`), or null.
    pub swizzles: BTreeMap<String, Option<[u32; 3]>>,
    /// Bytes of the layout.
    pub bytes: u64,
    pub replays_before: u64,
    pub replays_after: u64,
    /// Layouts scored.
    pub evaluated: u64,
}

/// Total replays of `k`.
fn replays(k: &Kernel) -> u64 {
    k.accesses
        .iter()
        .map(|a| analysis::grouped(k, a).replays)
        .sum()
}

/// A scored candidate: (replays, extra bytes, N ≠ 4) orders them (§3.3 objective).
#[derive(Debug, Clone)]
struct Candidate {
    n: u32,
    pads: Vec<u64>,
    dummies: Vec<u64>,
    swizzles: Vec<Option<Swizzle>>,
    replays: u64,
    bytes: u64,
}

impl Candidate {
    /// Fewest replays, then fewest extra bytes, then no swizzle (it changes the kernel's index
    /// arithmetic, a bank width only a launch parameter), then N = 4.
    fn key(&self, base_bytes: u64) -> (u64, u64, bool, bool) {
        (
            self.replays,
            self.bytes.saturating_sub(base_bytes),
            self.swizzles.iter().any(Option::is_some),
            self.n != 4,
        )
    }
}

struct Search<'a> {
    k: &'a Kernel,
    budget: u64,
    /// Bytes with no pad and no dummy, N's bytes do not matter.
    base_bytes: u64,
    evaluated: u64,
    /// The swizzles [`Search::score`] lays out (none while padding).
    swizzles: Vec<Option<Swizzle>>,
}

impl Search<'_> {
    /// Scores a layout; `None` if it does not fit the layout limit or the budget.
    fn score(&mut self, n: u32, pads: &[u64], dummies: &[u64]) -> Option<Candidate> {
        let mut k = self.k.relayout(n, pads, dummies)?;
        for (a, &sw) in k.arrays.iter_mut().zip(&self.swizzles) {
            a.swizzle = sw;
        }
        let bytes = k.bytes();
        if bytes > self.budget {
            return None;
        }
        self.evaluated += 1;
        Some(Candidate {
            n,
            pads: pads.to_vec(),
            dummies: dummies.to_vec(),
            swizzles: self.swizzles.clone(),
            replays: replays(&k),
            bytes,
        })
    }

    /// Per array, the pads of `0..=hi` in rising order whose replays never rise (§3.3 step 2):
    /// the array's pad varied, the others at 0.
    fn options(&mut self, n: u32, hi: u64) -> Vec<Vec<u64>> {
        let arrays = self.k.arrays.len();
        let zero = vec![0u64; arrays];
        (0..arrays)
            .map(|j| {
                let mut list: Vec<(u64, u64)> = vec![];
                for pad in 0..=hi {
                    let mut pads = zero.clone();
                    pads[j] = pad;
                    let Some(c) = self.score(n, &pads, &zero) else {
                        break;
                    };
                    if list.last().is_none_or(|&(_, r)| c.replays < r) {
                        list.push((pad, c.replays));
                    }
                }
                list.into_iter().map(|(p, _)| p).collect()
            })
            .collect()
    }

    /// The best combination of the option lists: exhaustive when at most [`EXHAUSTIVE`], else
    /// [`Search::greedy`] (§3.3 step 3).
    fn combine(&mut self, n: u32, options: &[Vec<u64>]) -> Option<Candidate> {
        if options.iter().any(Vec::is_empty) {
            return None; // an array has no pad that fits the budget
        }
        let zero = vec![0u64; options.len()];
        let product = options
            .iter()
            .try_fold(1u64, |p, o| p.checked_mul(o.len() as u64));
        let mut best: Option<Candidate> = None;
        let better = |c: &Candidate, b: &Option<Candidate>, base| {
            b.as_ref().is_none_or(|b| c.key(base) < b.key(base))
        };
        if product.is_some_and(|p| p <= EXHAUSTIVE) {
            let mut idx = vec![0usize; options.len()];
            loop {
                let pads: Vec<u64> = idx.iter().zip(options).map(|(&i, o)| o[i]).collect();
                if let Some(c) = self.score(n, &pads, &zero) {
                    if better(&c, &best, self.base_bytes) {
                        best = Some(c);
                    }
                }
                // Odometer over the lists.
                let Some(j) = (0..idx.len())
                    .rev()
                    .find(|&j| idx[j] + 1 < options[j].len())
                else {
                    break;
                };
                idx[j] += 1;
                idx[j + 1..].iter_mut().for_each(|i| *i = 0);
            }
            return best;
        }
        self.greedy(n, options)
    }

    /// [002] §6.2's Method Two: from every array at its first option, advance one array, or two
    /// arrays together, by one option at a time: the step that cuts the most replays (a pair
    /// only when it cuts more than every single step, e.g. two arrays that conflict with each
    /// other; ties to fewer bytes), until no step cuts any.
    fn greedy(&mut self, n: u32, options: &[Vec<u64>]) -> Option<Candidate> {
        let zero = vec![0u64; options.len()];
        let pads_of =
            |idx: &[usize]| -> Vec<u64> { idx.iter().zip(options).map(|(&i, o)| o[i]).collect() };
        let mut idx = vec![0usize; options.len()];
        let mut best = self.score(n, &pads_of(&idx), &zero);
        let movable = |idx: &[usize], j: usize| idx[j] + 1 < options[j].len();
        loop {
            let singles: Vec<Vec<usize>> = (0..idx.len())
                .filter(|&j| movable(&idx, j))
                .map(|j| vec![j])
                .collect();
            let pairs: Vec<Vec<usize>> = (0..idx.len())
                .flat_map(|a| (a + 1..idx.len()).map(move |b| vec![a, b]))
                .filter(|p| p.iter().all(|&j| movable(&idx, j)))
                .collect();
            let mut step: Option<(Vec<usize>, Candidate)> = None;
            for group in [singles, pairs] {
                let beaten = step.as_ref().map(|(_, c)| c.replays);
                for moved in group {
                    let mut next = idx.clone();
                    moved.iter().for_each(|&j| next[j] += 1);
                    let Some(c) = self.score(n, &pads_of(&next), &zero) else {
                        continue;
                    };
                    if beaten.is_some_and(|r| c.replays >= r) {
                        continue; // a pair must cut more than the best single step
                    }
                    let better = step
                        .as_ref()
                        .is_none_or(|(_, s)| (c.replays, c.bytes) < (s.replays, s.bytes));
                    if better {
                        step = Some((moved, c));
                    }
                }
            }
            match step {
                Some((moved, c)) if best.as_ref().is_none_or(|b| c.replays < b.replays) => {
                    moved.iter().for_each(|&j| idx[j] += 1);
                    best = Some(c);
                }
                _ => return best,
            }
        }
    }

    /// Inter-padding after intra-padding (§3.3 step 4): in declaration order, the smallest
    /// dummy of 0…B·W/M − 1 elements with the fewest replays before each array but the first.
    fn dummies(&mut self, mut c: Candidate) -> Candidate {
        for j in 1..self.k.arrays.len() {
            let q = self.layer_elems(j);
            for d in 0..q {
                let mut dummies = c.dummies.clone();
                dummies[j] = d;
                if let Some(t) = self.score(c.n, &c.pads, &dummies) {
                    if t.replays < c.replays {
                        c = t;
                    }
                }
            }
        }
        c
    }

    /// XOR swizzles instead of pads (docs/bank-conflicts.md §4.3): per array, unpadded, the
    /// [`Swizzle::candidates`] that tile it, each scored with the other arrays unswizzled; the
    /// one with the fewest replays (none if none cuts any) for every array at once.
    fn swizzled(&mut self, n: u32) -> Option<Candidate> {
        let arrays = self.k.arrays.len();
        let zero = vec![0u64; arrays];
        let mut chosen: Vec<Option<Swizzle>> = vec![None; arrays];
        let elems: Vec<u64> = self.k.arrays.iter().map(|a| a.rows * a.cols).collect();
        for (j, &elems) in elems.iter().enumerate() {
            self.swizzles = vec![None; arrays];
            let mut best = self.score(n, &zero, &zero)?.replays;
            for sw in Swizzle::candidates().filter(|sw| elems.is_multiple_of(sw.period())) {
                self.swizzles[j] = Some(sw);
                if let Some(c) = self.score(n, &zero, &zero) {
                    if c.replays < best {
                        (best, chosen[j]) = (c.replays, Some(sw));
                    }
                }
            }
        }
        self.swizzles = chosen;
        let c = self.score(n, &zero, &zero).map(|c| self.dummies(c));
        self.swizzles = vec![None; arrays];
        c
    }

    /// B·W/M for array `j`: elements in one layer of all banks.
    fn layer_elems(&self, j: usize) -> u64 {
        (self.k.banks * self.k.layer_bytes / self.k.arrays[j].elem_bytes) as u64
    }
}

/// The optimizer: bank widths N ∈ {4, 8} when W = 8 (else the file's), progressive pad ranges
/// until a zero-replay layout fits `budget` bytes, then dummies.
pub fn optimize(k: &Kernel, budget: u64) -> Layout {
    optimize_with(k, budget, true)
}

/// [`optimize`], with the XOR swizzle candidates (§4.3) or, `swizzles` false, padding alone
/// as [002]'s optimizer (the kernel study's choice).
pub fn optimize_with(k: &Kernel, budget: u64, swizzles: bool) -> Layout {
    let widths: Vec<u32> = if k.layer_bytes == 8 {
        vec![4, 8]
    } else {
        vec![k.bank_width]
    };
    let arrays = k.arrays.len();
    let mut s = Search {
        k,
        budget,
        base_bytes: k
            .relayout(4, &vec![0; arrays], &vec![0; arrays])
            .map_or(0, |z| z.bytes()),
        evaluated: 0,
        swizzles: vec![None; arrays],
    };
    let before = replays(k);
    let cap = (0..arrays).map(|j| s.layer_elems(j)).max().unwrap_or(1) - 1;
    let mut best: Option<Candidate> = None;
    for &n in widths.iter().filter(|_| swizzles) {
        if let Some(c) = s.swizzled(n) {
            if best
                .as_ref()
                .is_none_or(|b| c.key(s.base_bytes) < b.key(s.base_bytes))
            {
                best = Some(c);
            }
        }
    }
    for &(_, hi) in RANGES.iter().filter(|(lo, _)| *lo <= cap) {
        for &n in &widths {
            let options = s.options(n, hi.min(cap));
            let Some(c) = s.combine(n, &options) else {
                continue;
            };
            let c = s.dummies(c);
            if best
                .as_ref()
                .is_none_or(|b| c.key(s.base_bytes) < b.key(s.base_bytes))
            {
                best = Some(c);
            }
        }
        if best.as_ref().is_some_and(|b| b.replays == 0) {
            break;
        }
    }
    let name = |j: usize| k.arrays[j].name.clone();
    match best {
        Some(b) if b.replays < before || (b.replays == before && b.bytes <= k.bytes()) => Layout {
            bank_width: b.n,
            pads: (0..arrays).map(|j| (name(j), b.pads[j])).collect(),
            dummies: (0..arrays).map(|j| (name(j), b.dummies[j])).collect(),
            swizzles: (0..arrays)
                .map(|j| (name(j), b.swizzles[j].map(Swizzle::b_m_s)))
                .collect(),
            bytes: b.bytes,
            replays_before: before,
            replays_after: b.replays,
            evaluated: s.evaluated,
        },
        // Nothing better fits the budget: the file's own layout.
        _ => Layout {
            bank_width: k.bank_width,
            pads: (0..arrays).map(|j| (name(j), k.arrays[j].pad)).collect(),
            dummies: (0..arrays).map(|j| (name(j), k.arrays[j].dummy)).collect(),
            swizzles: (0..arrays)
                .map(|j| (name(j), k.arrays[j].swizzle.map(Swizzle::b_m_s)))
                .collect(),
            bytes: k.bytes(),
            replays_before: before,
            replays_after: before,
            evaluated: s.evaluated,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bankan::{Overrides, Raw};

    /// `n` arrays of 15×32 floats, each read down a column by 15 threads (stride 32: 15-way; no
    /// swizzle tiles 480 elements with bits above the row's 32).
    fn columns(n: usize) -> Kernel {
        let arrays: Vec<String> = (0..n)
            .map(|j| format!(r#"{{"name": "a{j}", "elem_bytes": 4, "rows": 15, "cols": 32}}"#))
            .collect();
        let accesses: Vec<String> = (0..n)
            .map(|j| format!(r#"{{"array": "a{j}", "row": [1, 0, 0], "col": [0, 0, 0]}}"#))
            .collect();
        let text = format!(
            r#"{{"layer_bytes": 4, "block": [15, 1], "arrays": [{}], "accesses": [{}]}}"#,
            arrays.join(", "),
            accesses.join(", ")
        );
        Raw::parse(&text)
            .and_then(|r| r.validate(Overrides::default()))
            .unwrap()
    }

    #[test]
    fn many_arrays_take_the_greedy_method_two_to_zero_replays() {
        // 13 arrays with options {0, 1} each: 2^13 = 8192 combinations > EXHAUSTIVE.
        let k = columns(13);
        let l = optimize(&k, DEFAULT_BUDGET);
        assert_eq!(l.replays_before, 13 * 14);
        assert_eq!(l.replays_after, 0);
        assert!(l.pads.values().all(|&p| p == 1), "{:?}", l.pads);
        assert!(
            l.evaluated < 1 << 13,
            "greedy, not exhaustive: {}",
            l.evaluated
        );
        // The same verdict as the exhaustive search on a small instance.
        let small = optimize(&columns(3), DEFAULT_BUDGET);
        assert_eq!((small.replays_after, small.bytes), (0, 3 * 15 * 33 * 4));
    }

    #[test]
    fn a_transpose_takes_a_swizzle_for_no_byte_and_3dfd_keeps_8b_mode() {
        // tile[tx][ty] read by 32×8 threads: a column per warp, 16-way in 4B mode (T7).
        let text = r#"{"block": [32, 8], "arrays": [{"name": "tile", "elem_bytes": 4,
            "rows": 32, "cols": 32}], "accesses": [{"array": "tile", "row": [1, 0, 0],
            "col": [0, 1, 0]}]}"#;
        let k = Raw::parse(text)
            .and_then(|r| r.validate(Overrides::default()))
            .unwrap();
        let l = optimize(&k, DEFAULT_BUDGET);
        assert_eq!(
            (l.replays_before, l.replays_after),
            (8 * 15, 0),
            "16-way (T7)"
        );
        assert_eq!(l.bytes, 32 * 32 * 4, "no byte added");
        assert_eq!(l.pads["tile"], 0);
        let sw = Swizzle::new(l.swizzles["tile"].expect("a swizzle")).unwrap();
        // The chosen swizzle permutes each row's 32 columns by its row (XOR of 5 bits).
        assert_eq!((sw.to_string(), l.bank_width), ("Swizzle<4,0,6>".into(), 4));
        // Padding by one element also removes every replay, for 128 bytes more: not chosen.
        let padded = k.relayout(4, &[1], &[0]).unwrap();
        assert_eq!(replays(&padded), 0);
    }
}
