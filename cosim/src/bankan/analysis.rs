//! `bankan`'s analysis (docs/bank-conflicts.md §3.3, §3.4): every per-vector degree comes from
//! the bank model's [`degree_of`] (§1.4). Thread t = tx + ty·bdx, warp k holds
//! t ∈ [kL, kL+L), lanes past the block end inactive (§3.1). [`grouped`] evaluates each distinct
//! case (relative lane-address shape, active mask, base offset mod B·W bytes) once; [`brute`]
//! evaluates every warp and iteration; both give the same [`AccessResult`].

use super::input::{Access, Kernel};
use crate::blocks::bank_conflict_detector::degree_of;
use std::collections::HashMap;

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
    /// Calls of the degree function.
    pub evaluations: u64,
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
    degrees: HashMap<(usize, u64, i64), u32>,
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

/// The count of each byte offset mod `bw` that the loops `free` (no condition reads their
/// index) add, by residue classes: time independent of their trip counts ([002] §5.2).
fn free_offsets(a: &Access, free: &[usize], m: i64, pitch: i64, bw: i64) -> Vec<u64> {
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

fn gcd(a: i64, b: i64) -> i64 {
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
    grouped_with(k, a, &mut |_| {})
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
    grouped_with(k, a, &mut |c| v.push(c));
    v
}

/// [`grouped`], handing each distinct case to `sink` as it is evaluated.
fn grouped_with(k: &Kernel, a: &Access, sink: &mut dyn FnMut(Case)) -> AccessResult {
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
    let free_dist = free_offsets(a, &free, m, pitch, bw);
    let bound_trips: Vec<u64> = bound.iter().map(|&j| a.loops[j].trips).collect();
    // Element = α·tx + β·ty + γ.
    let alpha = a.col[0] + a.row[0] * pitch;
    let beta = a.col[1] + a.row[1] * pitch;
    let gamma = a.col[2] + a.row[2] * pitch;
    let mut cases = Cases {
        shapes: HashMap::new(),
        shape_list: vec![],
        degrees: HashMap::new(),
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
        // Per (mask, bound offset mod B·W): how many iterations of the bound loops.
        let mut per_mask: HashMap<(u64, i64), u64> = HashMap::new();
        for iv in iterations(&bound_trips) {
            let mut mask = 0u64;
            for (l, lane) in ls.iter().enumerate() {
                let Some((tx, ty)) = *lane else { continue };
                let holds = |c: &super::input::RawCond| {
                    let s: i64 = bound
                        .iter()
                        .zip(&iv)
                        .map(|(&j, &i)| c.i[j] * i as i64)
                        .sum();
                    c.tx * tx + c.ty * ty + s + c.c >= 0
                };
                if on[l] && a.conds.iter().all(holds) {
                    mask |= 1 << l;
                }
            }
            let off: i64 = bound
                .iter()
                .zip(&iv)
                .map(|(&j, &i)| m * (a.loops[j].inc[0] * pitch + a.loops[j].inc[1]) * i as i64)
                .sum();
            *per_mask.entry((mask, off.rem_euclid(bw))).or_default() += 1;
        }
        for ((mask, boff), n) in per_mask {
            if mask == 0 {
                continue;
            }
            for (rf, &nf) in free_dist.iter().enumerate().filter(|(_, &c)| c > 0) {
                let off = (warp_base + boff + rf as i64).rem_euclid(bw);
                let key = (id, mask, off);
                let d = match cases.degrees.get(&key) {
                    Some(&d) => d,
                    None => {
                        let c = evaluate(&cfg, &cases.shape_list[id], mask, off, bw);
                        let d = c.degree;
                        sink(c);
                        r.evaluations += 1;
                        cases.degrees.insert(key, d);
                        d
                    }
                };
                add(&mut r, warp as usize, d, n * nf);
            }
        }
    }
    r
}

/// The degree of the case: lane l at `off + shape[l]`, shifted by whole layers of all banks
/// (B·W bytes, which changes no degree, §3.3) so that every address is non-negative.
fn evaluate(
    cfg: &crate::blocks::bank_conflict_detector::Cfg,
    shape: &[i64],
    mask: u64,
    off: i64,
    bw: i64,
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
    let degree = degree_of(cfg, &active, &addrs).degree;
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
