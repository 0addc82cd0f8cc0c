//! `bankan`'s analysis (docs/bank-conflicts.md §3.3, §3.4): every per-vector degree comes from
//! the bank model's [`degree_of`] (§1.4). Thread t = tx + ty·bdx, warp k holds
//! t ∈ [kL, kL+L), lanes past the block end inactive (§3.1). [`grouped`] evaluates each distinct
//! case (relative lane-address shape, active mask, base offset mod B·W bytes) once; [`brute`]
//! evaluates every warp and iteration; both give the same [`AccessResult`].

use super::closed;
use super::input::{Access, Kernel};
use crate::blocks::bank_conflict_detector::degree_of;
use std::hash::{BuildHasherDefault, Hasher};

/// A multiply-rotate hasher for the analysis's small integer keys: the distinct-case tables are
/// hit once per case, and SipHash's cost per case would make `for-if`'s time follow its case
/// count (docs/bank-conflicts.md §4.4).
#[derive(Default)]
struct Fx(u64);

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_i64(&mut self, x: i64) {
        self.write_u64(x as u64);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type HashMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<Fx>>;

/// One access over the block and its loop nest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessResult {
    /// Per warp, the largest degree over the iterations it executes (0: never executes).
    pub degree: Vec<u32>,
    /// Per warp, Σd over its executed iterations.
    pub warp_conflicts: Vec<u64>,
    /// Σ(d − 1) over executed warp accesses.
    pub replays: u64,
    /// Σd, [002]'s conflict number (the shared-memory wavefronts of this model).
    pub conflicts: u64,
    /// Warp accesses executed (at least one active lane): the ideal wavefront count.
    pub executed: u64,
    /// Distinct cases evaluated: calls of the degree function, or of a closed form where one
    /// applies (every warp access with [`brute`]).
    pub evaluations: u64,
    /// Of [`Self::evaluations`], those a closed form answered ([`closed::degree`]).
    pub closed: u64,
    /// Each distinct case with the warp accesses it stands for ([`grouped`] only; empty with
    /// [`brute`]): [002] §5.2's per-case iteration counts and Alg. 5.1's C_i.
    pub cases: Vec<CaseCount>,
}

/// One distinct case of [`AccessResult::cases`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CaseCount {
    /// Active lanes.
    pub lanes: u32,
    /// Byte offset mod B·W of the warp's first lane in range (its origin, §3.3).
    pub offset: u64,
    pub degree: u32,
    /// Warp accesses (warps × iterations) of this case.
    pub count: u64,
}

/// The worst warp access: its warp, loop indices, active lanes and byte addresses.
#[derive(Debug, Clone)]
pub struct Worst {
    pub warp: u64,
    pub iteration: Vec<u64>,
    pub degree: u32,
    pub active: Vec<bool>,
    pub addrs: Vec<u64>,
}

/// Thread coordinates of each lane of `warp`; `None` past the block end.
fn lanes(k: &Kernel, warp: u64) -> Vec<Option<(i64, i64)>> {
    (0..k.lanes as u64)
        .map(|l| {
            let t = warp * k.lanes as u64 + l;
            (t < k.bdx * k.bdy).then(|| ((t % k.bdx) as i64, (t / k.bdx) as i64))
        })
        .collect()
}

/// Whether thread (tx, ty) is inside the access's `tx` / `ty` ranges.
fn in_ranges(a: &Access, tx: i64, ty: i64) -> bool {
    (a.tx[0] as i64..a.tx[1] as i64).contains(&tx) && (a.ty[0] as i64..a.ty[1] as i64).contains(&ty)
}

/// Every iteration vector of `trips`, outermost index first, in lexicographic order.
pub(super) fn iterations(trips: &[u64]) -> impl Iterator<Item = Vec<u64>> + '_ {
    let total: u64 = trips.iter().product();
    (0..total).map(move |mut n| {
        let mut v = vec![0; trips.len()];
        for (j, t) in trips.iter().enumerate().rev() {
            v[j] = n % t;
            n /= t;
        }
        v
    })
}

/// Active lanes and element offsets (col + row·pitch) of `warp` at loop indices `iv`.
pub(super) fn lane_elements(
    k: &Kernel,
    a: &Access,
    warp: u64,
    iv: &[u64],
) -> (Vec<bool>, Vec<i64>) {
    let pitch = k.arrays[a.array].pitch() as i64;
    let mut active = vec![false; k.lanes as usize];
    let mut elems = vec![0i64; k.lanes as usize];
    for (l, lane) in lanes(k, warp).into_iter().enumerate() {
        let Some((tx, ty)) = lane else { continue };
        let cond = |c: &super::input::RawCond| {
            let s: i64 = c.i.iter().zip(iv).map(|(x, &i)| x * i as i64).sum();
            c.tx * tx + c.ty * ty + s + c.c >= 0
        };
        if !in_ranges(a, tx, ty) || !a.conds.iter().all(cond) {
            continue;
        }
        let idx = |f: [i64; 3], w: usize| {
            let s: i64 = a
                .loops
                .iter()
                .zip(iv)
                .map(|(lp, &i)| lp.inc[w] * i as i64)
                .sum();
            f[0] * tx + f[1] * ty + f[2] + s
        };
        active[l] = true;
        elems[l] = idx(a.col, 1) + idx(a.row, 0) * pitch;
    }
    (active, elems)
}

/// Active lanes and byte addresses of `warp` at loop indices `iv`, computed directly (through
/// the array's swizzle, if any).
pub fn lane_addresses(k: &Kernel, a: &Access, warp: u64, iv: &[u64]) -> (Vec<bool>, Vec<u64>) {
    let arr = &k.arrays[a.array];
    let m = arr.elem_bytes as i64;
    let (active, elems) = lane_elements(k, a, warp, iv);
    let addrs = active
        .iter()
        .zip(&elems)
        .map(|(&on, &e)| match (on, arr.swizzle) {
            (false, _) => 0,
            (true, None) => (arr.base as i64 + m * e) as u64,
            (true, Some(sw)) => arr.base + m as u64 * sw.apply(e as u64),
        })
        .collect();
    (active, addrs)
}

/// The degree of a case through the bank model's function.
pub(super) fn degree_of_case(cfg: &crate::blocks::bank_conflict_detector::Cfg, c: &Case) -> u32 {
    degree_of(cfg, &c.active, &c.addrs).degree
}

/// Adds one executed case of degree `d`, `n` times, to warp `w`'s figures.
pub(super) fn add(r: &mut AccessResult, w: usize, d: u32, n: u64) {
    r.degree[w] = r.degree[w].max(d);
    r.warp_conflicts[w] += d as u64 * n;
    r.conflicts += d as u64 * n;
    r.replays += (d as u64 - 1) * n;
    r.executed += n;
}

pub(super) fn empty(k: &Kernel) -> AccessResult {
    let w = k.warps() as usize;
    AccessResult {
        degree: vec![0; w],
        warp_conflicts: vec![0; w],
        replays: 0,
        conflicts: 0,
        executed: 0,
        evaluations: 0,
        closed: 0,
        cases: vec![],
    }
}

/// Every warp at every iteration, each through the degree function.
pub fn brute(k: &Kernel, a: &Access) -> AccessResult {
    let cfg = k.cfg(a.array);
    let trips: Vec<u64> = a.loops.iter().map(|l| l.trips).collect();
    let mut r = empty(k);
    for warp in 0..k.warps() {
        for iv in iterations(&trips) {
            let (active, addrs) = lane_addresses(k, a, warp, &iv);
            if !active.contains(&true) {
                continue;
            }
            r.evaluations += 1;
            add(
                &mut r,
                warp as usize,
                degree_of(&cfg, &active, &addrs).degree,
                1,
            );
        }
    }
    r
}

/// The distinct cases of one access (§3.3): the degree of each (shape, mask, offset mod B·W)
/// once.
struct Cases {
    shapes: HashMap<Vec<i64>, usize>,
    shape_list: Vec<Vec<i64>>,
    /// Per case key: its degree and the warp accesses it stands for.
    degrees: HashMap<(usize, u64, i64), (u32, u64)>,
}

impl Cases {
    fn shape(&mut self, s: Vec<i64>) -> usize {
        if let Some(&id) = self.shapes.get(&s) {
            return id;
        }
        self.shape_list.push(s.clone());
        self.shapes.insert(s, self.shape_list.len() - 1);
        self.shape_list.len() - 1
    }
}

/// The count of each byte offset mod `bw` (element offset with `m` = 1) that the loops `free`
/// (no condition reads their index) add, by residue classes: time independent of their trip counts ([002] §5.2).
pub(super) fn free_offsets(a: &Access, free: &[usize], m: i64, pitch: i64, bw: i64) -> Vec<u64> {
    let mut dist = vec![0u64; bw as usize];
    dist[0] = 1;
    for &j in free {
        let lp = &a.loops[j];
        let step = (m * (lp.inc[0] * pitch + lp.inc[1])).rem_euclid(bw);
        let period = (bw / gcd(step, bw)) as u64;
        let mut next = vec![0u64; bw as usize];
        for r in 0..period.min(lp.trips) {
            let count = (lp.trips - r).div_ceil(period);
            let res = (r as i64 * step).rem_euclid(bw) as usize;
            for (x, &c) in dist.iter().enumerate().filter(|(_, &c)| c > 0) {
                next[(x + res) % bw as usize] += c * count;
            }
        }
        dist = next;
    }
    dist
}

/// gcd(|a|, |b|), at least 1.
pub(super) fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.abs().max(1)
    } else {
        gcd(b, a % b)
    }
}

/// Each distinct case once: per warp the relative lane-address shape; per iteration of the
/// loops that an `if` reads, the active mask and offset; the other loops folded in as offset
/// counts mod B·W bytes.
pub fn grouped(k: &Kernel, a: &Access) -> AccessResult {
    grouped_with(k, a, None)
}

/// One distinct case: the active lanes and byte addresses it was evaluated on (shifted by whole
/// layers of all banks from a real warp access), and its degree.
#[derive(Debug, Clone)]
pub struct Case {
    pub active: Vec<bool>,
    pub addrs: Vec<u64>,
    pub degree: u32,
}

/// The distinct cases of an access, each as evaluated (for checking them on the detector RTL,
/// docs/bank-conflicts.md §3.4).
pub fn cases(k: &Kernel, a: &Access) -> Vec<Case> {
    let mut v = vec![];
    grouped_with(k, a, Some(&mut |c| v.push(c)));
    v
}

/// [`grouped`], handing each distinct case to `sink` (if any) as it is evaluated.
fn grouped_with(k: &Kernel, a: &Access, mut sink: Option<&mut dyn FnMut(Case)>) -> AccessResult {
    let cfg = k.cfg(a.array);
    let arr = &k.arrays[a.array];
    if let Some(sw) = arr.swizzle {
        return super::swizzle::grouped(k, a, sw, sink);
    }
    let (pitch, m) = (arr.pitch() as i64, arr.elem_bytes as i64);
    let bw = (k.banks * k.layer_bytes) as i64;
    let bound: Vec<usize> = (0..a.loops.len())
        .filter(|&j| a.conds.iter().any(|c| c.i[j] != 0))
        .collect();
    let free: Vec<usize> = (0..a.loops.len()).filter(|j| !bound.contains(j)).collect();
    let free_dist: Vec<(i64, u64)> = free_offsets(a, &free, m, pitch, bw)
        .into_iter()
        .enumerate()
        .filter(|&(_, c)| c > 0)
        .map(|(r, c)| (r as i64, c))
        .collect();
    // Element = α·tx + β·ty + γ.
    let alpha = a.col[0] + a.row[0] * pitch;
    let beta = a.col[1] + a.row[1] * pitch;
    let gamma = a.col[2] + a.row[2] * pitch;
    let mut cases = Cases {
        shapes: HashMap::default(),
        shape_list: vec![],
        degrees: HashMap::default(),
    };
    let mut r = empty(k);
    for warp in 0..k.warps() {
        let ls = lanes(k, warp);
        let on: Vec<bool> = ls
            .iter()
            .map(|x| x.is_some_and(|(tx, ty)| in_ranges(a, tx, ty)))
            .collect();
        let Some(first) = on.iter().position(|&x| x) else {
            continue;
        };
        let rel = |l: usize| ls[l].map_or(0, |(tx, ty)| m * (alpha * tx + beta * ty));
        let origin = rel(first);
        let shape: Vec<i64> = (0..ls.len())
            .map(|l| if on[l] { rel(l) - origin } else { 0 })
            .collect();
        let id = cases.shape(shape);
        let warp_base = arr.base as i64 + m * gamma + origin;
        let per_mask = bound_counts(a, &bound, &ls, &on, m * pitch, m, bw);
        for ((mask, boff), n) in per_mask {
            if mask == 0 {
                continue;
            }
            for &(rf, nf) in &free_dist {
                let off = (warp_base + boff + rf).rem_euclid(bw);
                let key = (id, mask, off);
                let d = match cases.degrees.get_mut(&key) {
                    Some(e) => {
                        e.1 += n * nf;
                        e.0
                    }
                    None => {
                        let shape = &cases.shape_list[id];
                        let fast = strided(shape, mask, m).and_then(|(s, o)| {
                            closed::degree(&cfg, s, (off + o) / m, mask.count_ones())
                        });
                        let d = match (fast, sink.as_mut()) {
                            (Some(d), None) => d,
                            (fast, sink) => {
                                let c = evaluate(&cfg, shape, mask, off, bw, fast);
                                let d = c.degree;
                                if let Some(f) = sink {
                                    f(c);
                                }
                                d
                            }
                        };
                        r.evaluations += 1;
                        r.closed += u64::from(fast.is_some());
                        cases.degrees.insert(key, (d, n * nf));
                        d
                    }
                };
                add(&mut r, warp as usize, d, n * nf);
            }
        }
    }
    let mut keys: Vec<_> = cases.degrees.into_iter().collect();
    keys.sort_unstable_by_key(|&((id, mask, off), _)| (id, off, mask));
    r.cases = keys
        .into_iter()
        .map(|((_, mask, off), (degree, count))| CaseCount {
            lanes: mask.count_ones(),
            offset: off as u64,
            degree,
            count,
        })
        .collect();
    r
}

/// When the lanes of `mask` read `shape` as one stride (lane l at l·S + o bytes from the
/// case's offset), S and o in elements and bytes: the input of [`closed::degree`].
fn strided(shape: &[i64], mask: u64, m: i64) -> Option<(i64, i64)> {
    let mut it = (0..shape.len()).filter(|&l| mask >> l & 1 == 1);
    let f = it.next()?;
    let d = match it.next() {
        None => 0,
        Some(g) => {
            let span = shape[g] - shape[f];
            let gap = (g - f) as i64;
            if span % (gap * m) != 0 {
                return None;
            }
            span / gap
        }
    };
    let linear = (0..shape.len())
        .filter(|&l| mask >> l & 1 == 1)
        .all(|l| shape[l] - shape[f] == (l - f) as i64 * d);
    linear.then_some((d / m, shape[f] - f as i64 * d))
}

/// Per warp: how many iterations of the `bound` loops (those an `if` reads) give each (active
/// mask, byte offset mod `bw`) ([002] Alg. 5.1, docs/bank-conflicts.md §3.4). The outer bound
/// loops are enumerated; the innermost in closed form: each lane's conditions are linear in
/// its index i, so the lane is active on one interval of i, the mask is constant between the
/// at most 2L interval ends, and each segment's iterations are counted per offset residue.
/// Time does not grow with the innermost trip count.
fn bound_counts(
    a: &Access,
    bound: &[usize],
    ls: &[Option<(i64, i64)>],
    on: &[bool],
    row_bytes: i64,
    m: i64,
    bw: i64,
) -> HashMap<(u64, i64), u64> {
    let step = |j: usize| a.loops[j].inc[0] * row_bytes + m * a.loops[j].inc[1];
    let mut per_mask: HashMap<(u64, i64), u64> = HashMap::default();
    let Some((&inner, outer)) = bound.split_last() else {
        let mask = mask_at(a, ls, on, &[], &[]);
        per_mask.insert((mask, 0), 1);
        return per_mask;
    };
    let trips = a.loops[inner].trips as i64;
    let inner_step = step(inner).rem_euclid(bw);
    let period = bw / gcd(inner_step, bw);
    let outer_trips: Vec<u64> = outer.iter().map(|&j| a.loops[j].trips).collect();
    for ov in iterations(&outer_trips) {
        let ooff: i64 = outer
            .iter()
            .zip(&ov)
            .map(|(&j, &i)| step(j) * i as i64)
            .sum();
        // Per lane, its interval [lo, hi) of the inner index (empty: lo ≥ hi).
        let spans: Vec<(i64, i64)> = (0..ls.len())
            .map(|l| lane_span(a, ls[l].filter(|_| on[l]), outer, &ov, inner, trips))
            .collect();
        let mut ends: Vec<i64> = vec![0, trips];
        ends.extend(
            spans
                .iter()
                .filter(|(lo, hi)| lo < hi)
                .flat_map(|&(lo, hi)| [lo, hi]),
        );
        ends.sort_unstable();
        ends.dedup();
        for w in ends.windows(2) {
            let (s, e) = (w[0], w[1]);
            let mask = spans
                .iter()
                .enumerate()
                .filter(|(_, &(lo, hi))| lo <= s && e <= hi)
                .fold(0u64, |acc, (l, _)| acc | 1 << l);
            for r in 0..period.min(e - s) {
                let count = (e - s - r + period - 1) / period;
                let res = ((s + r) * inner_step + ooff).rem_euclid(bw);
                *per_mask.entry((mask, res)).or_default() += count as u64;
            }
        }
    }
    per_mask
}

/// The interval [lo, hi) ⊆ [0, trips) of the inner loop index where every condition holds for
/// the lane at (tx, ty), the outer bound indices `ov` fixed; `None` lanes are never active.
fn lane_span(
    a: &Access,
    lane: Option<(i64, i64)>,
    outer: &[usize],
    ov: &[u64],
    inner: usize,
    trips: i64,
) -> (i64, i64) {
    let Some((tx, ty)) = lane else {
        return (0, 0);
    };
    let (mut lo, mut hi) = (0i64, trips);
    for c in &a.conds {
        let s: i64 = outer.iter().zip(ov).map(|(&j, &i)| c.i[j] * i as i64).sum();
        let b = c.tx * tx + c.ty * ty + s + c.c;
        let k = c.i[inner];
        // k·i + b ≥ 0.
        if k > 0 {
            lo = lo.max(-b.div_euclid(k));
        } else if k < 0 {
            hi = hi.min(b.div_euclid(-k) + 1);
        } else if b < 0 {
            hi = lo;
        }
    }
    (lo, hi)
}

/// The active mask of the lanes at bound indices `iv` of the loops `bound`.
fn mask_at(a: &Access, ls: &[Option<(i64, i64)>], on: &[bool], bound: &[usize], iv: &[u64]) -> u64 {
    let mut mask = 0u64;
    for (l, lane) in ls.iter().enumerate() {
        let Some((tx, ty)) = *lane else { continue };
        let holds = |c: &super::input::RawCond| {
            let s: i64 = bound.iter().zip(iv).map(|(&j, &i)| c.i[j] * i as i64).sum();
            c.tx * tx + c.ty * ty + s + c.c >= 0
        };
        if on[l] && a.conds.iter().all(holds) {
            mask |= 1 << l;
        }
    }
    mask
}

/// The degree of the case (`known`: from a closed form): lane l at `off + shape[l]`, shifted by whole layers of all banks
/// (B·W bytes, which changes no degree, §3.3) so that every address is non-negative.
fn evaluate(
    cfg: &crate::blocks::bank_conflict_detector::Cfg,
    shape: &[i64],
    mask: u64,
    off: i64,
    bw: i64,
    known: Option<u32>,
) -> Case {
    let lanes = shape.len();
    let mut active = vec![false; lanes];
    let mut addrs = vec![0u64; lanes];
    let low = (0..lanes)
        .filter(|&l| mask >> l & 1 == 1)
        .map(|l| shape[l])
        .min()
        .unwrap_or(0);
    let shift = if low < 0 {
        (-low + bw - 1) / bw * bw
    } else {
        0
    };
    for l in 0..lanes {
        if mask >> l & 1 == 1 {
            active[l] = true;
            addrs[l] = (off + shift + shape[l]) as u64;
        }
    }
    let degree = known.unwrap_or_else(|| degree_of(cfg, &active, &addrs).degree);
    Case {
        active,
        addrs,
        degree,
    }
}

/// The first warp with the access's largest degree and its first iteration (lexicographic)
/// reaching it, with its lanes; `None` if no warp executes the access.
pub fn worst(k: &Kernel, a: &Access, r: &AccessResult) -> Option<Worst> {
    let d = *r.degree.iter().max()?;
    if d == 0 {
        return None;
    }
    let warp = r.degree.iter().position(|&x| x == d)? as u64;
    let cfg = k.cfg(a.array);
    let trips: Vec<u64> = a.loops.iter().map(|l| l.trips).collect();
    let found = iterations(&trips).find_map(|iv| {
        let (active, addrs) = lane_addresses(k, a, warp, &iv);
        (active.contains(&true) && degree_of(&cfg, &active, &addrs).degree == d).then_some(Worst {
            warp,
            iteration: iv,
            degree: d,
            active,
            addrs,
        })
    });
    found
}
