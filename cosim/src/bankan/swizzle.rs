//! XOR swizzles in CuTe's `Swizzle<B, M, S>` form (docs/bank-conflicts.md §3.6; CUTLASS
//! `cute/swizzle.hpp`): an array's element offset x is stored at
//! x ^ ((x & ((2^B − 1) << (M + S))) >> S), i.e. B bits from position M + S are XORed into the
//! B bits from position M. Layouts a compiler chooses (Triton, CuTe) that cost no byte; the
//! analysis keeps its bound on distinct cases because a swizzle commutes with shifts by whole
//! periods of 2^(B+M+S) elements.

use super::analysis::{self, AccessResult, Case, CaseCount};
use super::input::{Access, Kernel};
use std::collections::HashMap;
use std::fmt;

/// Largest B + M + S: the swizzled bits stay inside the model's 32-bit addresses.
pub const MAX_SPAN: u32 = 20;

/// `Swizzle<B, M, S>` with S ≥ B (a bijection on each period).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Swizzle {
    /// B: bits XORed.
    pub bits: u32,
    /// M: low bits kept (2^M elements move together).
    pub base: u32,
    /// S: distance from the source bits down to the XORed bits.
    pub shift: u32,
}

impl Swizzle {
    /// Checks `[B, M, S]` as a file gives it.
    pub fn new([bits, base, shift]: [u32; 3]) -> Result<Swizzle, String> {
        let span = bits as u64 + base as u64 + shift as u64;
        if bits == 0 || shift < bits || span > MAX_SPAN as u64 {
            return Err(format!(
                "swizzle [{bits}, {base}, {shift}] is out of range; allowed: [B, M, S] with \
                 B ≥ 1, S ≥ B and B + M + S ≤ {MAX_SPAN} (CuTe's Swizzle<B, M, S>)"
            ));
        }
        Ok(Swizzle { bits, base, shift })
    }

    /// `[B, M, S]`, as a file gives it.
    pub fn b_m_s(self) -> [u32; 3] {
        [self.bits, self.base, self.shift]
    }

    /// The stored element offset of element offset `x`.
    pub fn apply(self, x: u64) -> u64 {
        let source = ((1u64 << self.bits) - 1) << (self.base + self.shift);
        x ^ ((x & source) >> self.shift)
    }

    /// 2^(B+M+S) elements: `apply(x + k·period) = apply(x) + k·period`.
    pub fn period(self) -> u64 {
        1 << (self.bits + self.base + self.shift)
    }

    /// The candidates the optimizer tries (§4.3): B = 1…5 (up to 32 banks' worth of bits),
    /// M = 0…3 (up to 8 elements kept together), S = B…7.
    pub fn candidates() -> impl Iterator<Item = Swizzle> {
        (1..=5u32).flat_map(|bits| {
            (0..=3u32)
                .flat_map(move |base| (bits..=7u32).map(move |shift| Swizzle { bits, base, shift }))
        })
    }
}

impl fmt::Display for Swizzle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Swizzle<{},{},{}>", self.bits, self.base, self.shift)
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    analysis::gcd(a as i64, b as i64) as u64
}

/// [`analysis::grouped`] for an access to a swizzled array: a case is (the lanes' element
/// offsets relative to the first active lane, the active mask, the first lane's element offset
/// mod P) with P the least multiple of the swizzle's period whose bytes are whole layers of all
/// banks, so a shift by P changes neither the swizzle nor any bank. The loops an `if` reads
/// are enumerated; the others fold in as counts of element offsets mod P. A case's `offset` in
/// [`AccessResult::cases`] is its first lane's byte offset (unswizzled) mod P elements.
pub fn grouped(
    k: &Kernel,
    a: &Access,
    sw: Swizzle,
    mut sink: Option<&mut dyn FnMut(Case)>,
) -> AccessResult {
    let cfg = k.cfg(a.array);
    let arr = &k.arrays[a.array];
    let (pitch, m) = (arr.pitch() as i64, arr.elem_bytes as u64);
    let bw = (k.banks * k.layer_bytes) as u64;
    let per_bw = bw / gcd(m, bw);
    let p = (sw.period() / gcd(sw.period(), per_bw) * per_bw) as i64;
    let bound: Vec<usize> = (0..a.loops.len())
        .filter(|&j| a.conds.iter().any(|c| c.i[j] != 0))
        .collect();
    let free_loops: Vec<usize> = (0..a.loops.len()).filter(|j| !bound.contains(j)).collect();
    let free = analysis::free_offsets(a, &free_loops, 1, pitch, p);
    let bound_trips: Vec<u64> = bound.iter().map(|&j| a.loops[j].trips).collect();
    let mut r = analysis::empty(k);
    // Per case: its degree and the warp accesses it stands for.
    let mut degrees: HashMap<(Vec<i64>, u64, i64), (u32, u64)> = HashMap::new();
    for warp in 0..k.warps() {
        for iv in analysis::iterations(&bound_trips) {
            let mut full = vec![0u64; a.loops.len()];
            bound.iter().zip(&iv).for_each(|(&j, &i)| full[j] = i);
            let (active, elems) = analysis::lane_elements(k, a, warp, &full);
            let Some(first) = active.iter().position(|&x| x) else {
                continue;
            };
            let mask = active
                .iter()
                .enumerate()
                .fold(0u64, |mk, (l, &on)| mk | (on as u64) << l);
            let shape: Vec<i64> = (0..active.len())
                .map(|l| {
                    if active[l] {
                        elems[l] - elems[first]
                    } else {
                        0
                    }
                })
                .collect();
            for (rf, &nf) in free.iter().enumerate().filter(|(_, &c)| c > 0) {
                let off = (elems[first] + rf as i64).rem_euclid(p);
                let key = (shape.clone(), mask, off);
                let entry = match degrees.get_mut(&key) {
                    Some(e) => e,
                    None => {
                        let c = evaluate(k, a, sw, &active, &shape, off, p);
                        let d = analysis::degree_of_case(&cfg, &c);
                        if let Some(sink) = sink.as_mut() {
                            sink(Case { degree: d, ..c });
                        }
                        r.evaluations += 1;
                        degrees.entry(key).or_insert((d, 0))
                    }
                };
                entry.1 += nf;
                let d = entry.0;
                analysis::add(&mut r, warp as usize, d, nf);
            }
        }
    }
    let mut cases: Vec<_> = degrees.into_iter().collect();
    cases.sort_unstable_by(|(a, _), (b, _)| (a.2, a.1, &a.0).cmp(&(b.2, b.1, &b.0)));
    r.cases = cases
        .into_iter()
        .map(|((_, mask, off), (degree, count))| CaseCount {
            lanes: mask.count_ones(),
            offset: off as u64 * m,
            degree,
            count,
        })
        .collect();
    r
}

/// The case's byte addresses: lane l at element `off + shape[l]`, shifted by whole periods P
/// so that every element offset is non-negative, swizzled, from the array's base.
fn evaluate(
    k: &Kernel,
    a: &Access,
    sw: Swizzle,
    active: &[bool],
    shape: &[i64],
    off: i64,
    p: i64,
) -> Case {
    let arr = &k.arrays[a.array];
    let low = (0..shape.len())
        .filter(|&l| active[l])
        .map(|l| off + shape[l])
        .min()
        .unwrap_or(0);
    let lift = if low < 0 { (-low + p - 1) / p * p } else { 0 };
    let addrs = (0..shape.len())
        .map(|l| {
            if active[l] {
                arr.base + arr.elem_bytes as u64 * sw.apply((off + lift + shape[l]) as u64)
            } else {
                0
            }
        })
        .collect();
    Case {
        active: active.to_vec(),
        addrs,
        degree: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bankan::{analysis, Overrides, Raw};

    fn kernel(swizzle: &str, access: &str) -> Kernel {
        let text = format!(
            r#"{{"layer_bytes": 4, "block": [32, 8], "arrays": [{{"name": "s", "elem_bytes": 4,
            "rows": 32, "cols": 32, "swizzle": {swizzle}}}], "accesses": [{access}]}}"#
        );
        Raw::parse(&text)
            .and_then(|r| r.validate(Overrides::default()))
            .unwrap()
    }

    #[test]
    fn apply_is_cutes_xor_and_a_bijection_on_each_period() {
        let sw = Swizzle::new([2, 0, 3]).unwrap();
        // Bits 3..5 XORed into bits 0..2: 0b01_000 → 0b01_001.
        assert_eq!(sw.apply(0b01000), 0b01001);
        assert_eq!(sw.apply(0b11101), 0b11110);
        for sw in Swizzle::candidates() {
            let p = sw.period();
            let mut seen: Vec<u64> = (0..p).map(|x| sw.apply(x)).collect();
            seen.sort_unstable();
            assert!(seen.iter().copied().eq(0..p), "{sw}");
            assert_eq!(sw.apply(p + 3), p + sw.apply(3), "{sw}");
        }
        assert!(Swizzle::new([3, 0, 2]).is_err());
        assert!(Swizzle::new([0, 0, 0]).is_err());
    }

    #[test]
    fn a_column_read_is_conflict_free_under_swizzle_5_0_5_and_grouped_equals_brute() {
        // s[tx][ty + 4·i]: a column of 32 rows, 32 floats apart (32-way unswizzled).
        let access = r#"{"array": "s", "row": [1, 0, 0], "col": [0, 1, 0],
                         "for": [{"trips": 3, "inc": [0, 4]}]}"#;
        let plain = kernel("null", access);
        let swz = kernel("[5, 0, 5]", access);
        let a = &swz.accesses[0];
        let g = analysis::grouped(&swz, a);
        let b = analysis::brute(&swz, a);
        assert_eq!(
            (&g.degree, g.replays, g.conflicts),
            (&b.degree, b.replays, b.conflicts)
        );
        assert_eq!(g.degree, vec![1; 8]);
        assert_eq!(
            analysis::grouped(&plain, &plain.accesses[0]).degree,
            vec![32; 8]
        );
        // A partial swizzle, with an `if` reading the loop: still equal to brute force.
        let access = r#"{"array": "s", "row": [1, 0, 0], "col": [0, 1, 0],
                         "for": [{"trips": 6, "inc": [0, 4]}], "if": [{"tx": -1, "i": [4], "c": 3}]}"#;
        for sw in ["[2, 0, 3]", "[3, 1, 3]", "[1, 2, 5]"] {
            let k = kernel(sw, access);
            let (g, b) = (
                analysis::grouped(&k, &k.accesses[0]),
                analysis::brute(&k, &k.accesses[0]),
            );
            assert_eq!((&g.degree, g.replays), (&b.degree, b.replays), "{sw}");
            assert!(g.evaluations <= b.evaluations, "{sw}");
        }
    }

    #[test]
    fn a_swizzle_must_tile_the_array() {
        let text = r#"{"block": [32], "arrays": [{"name": "s", "elem_bytes": 4, "rows": 3,
            "cols": 32, "swizzle": [3, 2, 3]}], "accesses": [{"array": "s", "row": [0, 0, 0],
            "col": [1, 0, 0]}]}"#;
        let e = Raw::parse(text)
            .and_then(|r| r.validate(Overrides::default()))
            .unwrap_err();
        assert!(e.contains("Swizzle<3,2,3>") && e.contains("96"), "{e}");
    }
}
