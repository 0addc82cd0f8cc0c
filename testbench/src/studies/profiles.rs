//! Synthetic kernel profiles (docs/elastic-pipeline.md §8, Table 5, D27): one [`Profile`] per
//! kernel of the paper's evaluation, the paper's figures (Table 5, Eq. 2, the theoretic speedup
//! `1 + r·(d̄ − 1)`, Little's law) and a seeded generator of scheduler-mode workloads.
//!
//! # Workload construction (D27)
//!
//! * **Warps.** `min(W, CTAs/core × ⌈CTA threads / warp size⌉)` warp contexts (W = 32, warp size 32).
//! * **Body.** A straight-line body of the paper's *static* instruction count, PCs `0..static`.
//!   Reduction loops: its body is repeated [`Profile::loop_iters`] = 2 times (same PCs), the
//!   rounded ratio of its dynamic per-thread count (≈ 99) to its static count (49). Every other
//!   kernel's dynamic per-thread count is at most its static count, so it runs the body once.
//! * **Waves.** Each warp context runs the body `waves` times (successive CTAs on that context).
//! * **SMEM.** `round(r · static)` SMEM PCs spread evenly through the body, r = dynamic SMEM /
//!   dynamic instructions of Table 5. This equals the static SMEM count where Table 5 is
//!   consistent (AES, DCT/IDCT, Transpose); for DCT/IDCT_short (40 static, r = 10.3 %) it is 35 and
//!   for Reduction (5 static, r = 4.0 %) it is 2, so the *dynamic* SMEM fraction is r.
//! * **GMEM.** [`Profile::gmem`] GLD and GST PCs per body, spread evenly over the non-SMEM PCs;
//!   the rest are ALU. The counts are each kernel's global loads and stores per thread in the
//!   source the paper ran (CUDA SDK 2.2, Manavski's AES; docs/elastic-pipeline.md §8.6), so the
//!   required DRAM bandwidth ranks the kernels as [000] Fig. 10 does (DCT/IDCT high, the rest
//!   low). The spec's D27 `gmem_frac` = 0.05 for every kernel put all eight in Fig. 10's high
//!   group; it is kept as [`GMEM_FRAC`] for `Gmem::Frac`.
//! * **Degrees (regular).** Each SMEM PC has a fixed word stride s ∈ {1, 2, 4, 8}; with 8 banks and
//!   8 lanes per subwarp a stride s gives degree gcd(s, 8) = s in every subwarp (clamped to the lane
//!   count). The strides are the two neighbours of d̄ in {1, 2, 4, 8}, mixed in the count that
//!   brings the mean closest to d̄; the seed shuffles which PC gets which stride. Transpose is
//!   fixed: a stride-1 PC (tile store) then a stride-8 PC (column read), mean 4.5.
//! * **Degrees (irregular: AES, Reduction).** Each SMEM execution is, with probability
//!   [`Profile::irregular_fraction`], *random*: every subwarp's lanes read uniformly random words
//!   of a 256-word table (8 banks × 32 words) and the degree is the largest number of distinct
//!   words in one bank (`DistinctWord`). Otherwise the PC's regular degree `b` applies, with
//!   `b` = 1 if d̄ ≤ E (E = expected random degree, [`random_degree_mean`]) and else the smallest
//!   stride ≥ d̄. The fraction is fitted: f = (d̄ − b) / (E − b), so the mean degree is d̄.
//!
//! At `waves` = 1 a workload holds 1.7 k (Transpose) to 9.4 k (DCT_short) warp instructions.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

/// SMEM banks (Table 4).
pub const BANKS: u32 = 8;
/// Words in the table read by random (irregular) SMEM accesses (D27).
pub const TABLE_WORDS: u32 = 256;
/// Fraction of instructions that are global loads in the spec's D27 mix (`gmem_frac`).
pub const GMEM_FRAC: f64 = 0.05;

/// A profile's global-memory PCs per body (docs/elastic-pipeline.md §8.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gmem {
    /// The spec's D27 mix: `max(1, round(GMEM_FRAC · static))` GLD PCs and `max(1, GLDs / 4)`
    /// GST PCs.
    Frac,
    /// The kernel's own loads and stores per thread (32-bit words; half-warp accesses counted
    /// in full-warp equivalents of the same bytes).
    Source { loads: u32, stores: u32 },
}
/// Warp contexts per core (D22).
pub const WARP_CONTEXTS: u32 = 32;
/// Threads per warp (Table 4).
pub const WARP_SIZE: u32 = 32;
/// SIMD lanes (Table 4).
pub const LANES: u32 = 8;
/// Subwarps per warp, ⌈WS / L⌉.
pub const SUBWARPS: u32 = 4;
/// Global-load return latency over ICNT in cycles (D26 `gmem_return` = `Icnt{400}`).
pub const ICNT_LATENCY: u32 = 400;

/// Most repetitions of a profile's body per warp context (`--waves`, a sweep's `waves`): a
/// documented bound (docs/cli.md "Limits") that keeps the longest profile within seconds to minutes
/// and its workload within a few MB.
pub const MAX_WAVES: u32 = 256;

/// `waves` if it is in 1..=[`MAX_WAVES`]; else the one-line error.
pub fn check_waves(waves: u32) -> Result<u32, String> {
    if (1..=MAX_WAVES).contains(&waves) {
        Ok(waves)
    } else {
        Err(format!("waves must be in 1..={MAX_WAVES}, got {waves}"))
    }
}

/// One kernel of Table 5 (P §6) and its synthetic-workload shape (D27).
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// Lower-case kernel name: `aes_encrypt`, …, `idct_short`.
    pub name: &'static str,
    /// Grid dimensions (CTAs).
    pub grid: [u32; 3],
    /// CTA dimensions (threads).
    pub cta: [u32; 3],
    /// CTAs resident per core.
    pub ctas_per_core: u32,
    /// Dynamic thread-level instruction count.
    pub insns_dyn: u64,
    /// Static instruction count.
    pub insns_static: u32,
    /// Dynamic thread-level SMEM instruction count.
    pub smem_dyn: u64,
    /// Static SMEM instruction count.
    pub smem_static: u32,
    /// Table 5 "r %" / 100 (as printed; [`Profile::r_dyn`] is the exact ratio).
    pub r: f64,
    /// Mean cycles per SIMD SMEM access on the baseline.
    pub d_bar: f64,
    /// Table 5 "Theor. speedup" as printed.
    pub theoretic_speedup_paper: f64,
    /// Eq. 2 value r·d̄ as printed in §8.
    pub eq2_paper: f64,
    /// Table 5 "Irreg." column.
    pub irregular: bool,
    /// Table 5 `*`: the hand-optimisation against conflicts was undone.
    pub unoptimised: bool,
    /// Times the static body runs per wave (Reduction loops: 2; else 1).
    pub loop_iters: u32,
    /// Fixed per-PC strides overriding the d̄ mix (Transpose: `[1, 8]`).
    pub fixed_strides: Option<&'static [u32]>,
    /// Global loads and stores per body.
    pub gmem: Gmem,
}

#[allow(clippy::too_many_arguments)]
const fn p(
    name: &'static str,
    grid: [u32; 3],
    cta: [u32; 3],
    ctas_per_core: u32,
    (insns_dyn, insns_static): (u64, u32),
    (smem_dyn, smem_static): (u64, u32),
    r_pct: f64,
    d_bar: f64,
    theoretic_speedup_paper: f64,
    eq2_paper: f64,
    irregular: bool,
    unoptimised: bool,
) -> Profile {
    Profile {
        name,
        grid,
        cta,
        ctas_per_core,
        insns_dyn,
        insns_static,
        smem_dyn,
        smem_static,
        r: r_pct / 100.0,
        d_bar,
        theoretic_speedup_paper,
        eq2_paper,
        irregular,
        unoptimised,
        loop_iters: 1,
        fixed_strides: None,
        gmem: Gmem::Frac,
    }
}

/// Global loads and stores per thread and body in the kernels' sources (docs/elastic-pipeline.md
/// §8.6): AES (Manavski [21]) loads its state word and stages 4 T-table words into shared
/// memory, stores the state word; Reduction (SDK `reduce`) loads one element per body (two per
/// thread, its body runs twice; one thread per CTA stores, counted as none); Transpose one
/// element in, one out; DCT/IDCT (`CUDAkernel2DCT`) 8 floats in and out; DCT/IDCT_short (`CUDAkernelShortDCT`) 8 `int`s in and out on half the
/// lanes, 4 full-warp equivalents.
const SOURCE_GMEM: [(&str, u32, u32); 8] = [
    ("aes_encrypt", 5, 1),
    ("aes_decrypt", 5, 1),
    ("reduction", 1, 0),
    ("transpose", 1, 1),
    ("dct", 8, 8),
    ("idct", 8, 8),
    ("dct_short", 4, 4),
    ("idct_short", 4, 4),
];

/// The eight profiles of Table 5, in its order, with their sources' global-memory mix.
pub fn profiles() -> Vec<Profile> {
    table5()
        .into_iter()
        .zip(SOURCE_GMEM)
        .map(|(p, (name, loads, stores))| {
            debug_assert_eq!(p.name, name);
            Profile {
                gmem: Gmem::Source { loads, stores },
                ..p
            }
        })
        .collect()
}

/// Table 5's figures per kernel, in its order.
fn table5() -> Vec<Profile> {
    vec![
        p(
            "aes_encrypt",
            [257, 1, 1],
            [256, 1, 1],
            2,
            (35132928, 534),
            (12697856, 193),
            36.1,
            1.54,
            1.19,
            0.56,
            true,
            false,
        ),
        p(
            "aes_decrypt",
            [257, 1, 1],
            [256, 1, 1],
            2,
            (35527680, 540),
            (12763648, 194),
            35.9,
            1.53,
            1.19,
            0.55,
            true,
            false,
        ),
        Profile {
            loop_iters: 2,
            ..p(
                "reduction",
                [16384, 1, 1],
                [256, 1, 1],
                4,
                (415170560, 49),
                (16744448, 5),
                4.0,
                3.07,
                1.09,
                0.12,
                true,
                false,
            )
        },
        Profile {
            fixed_strides: Some(&[1, 8]),
            ..p(
                "transpose",
                [16, 16, 1],
                [16, 16, 1],
                4,
                (3538944, 54),
                (131072, 2),
                3.7,
                4.50,
                1.13,
                0.17,
                false,
                true,
            )
        },
        p(
            "dct",
            [16, 32, 1],
            [8, 4, 2],
            7,
            (7274496, 222),
            (1572864, 48),
            21.6,
            3.33,
            1.50,
            0.72,
            false,
            true,
        ),
        p(
            "idct",
            [16, 32, 1],
            [8, 4, 2],
            7,
            (7405568, 226),
            (1572864, 48),
            21.2,
            3.33,
            1.50,
            0.71,
            false,
            true,
        ),
        p(
            "dct_short",
            [16, 16, 1],
            [8, 4, 4],
            7,
            (10223616, 337),
            (1048576, 40),
            10.3,
            2.75,
            1.18,
            0.28,
            false,
            true,
        ),
        p(
            "idct_short",
            [16, 16, 1],
            [8, 4, 4],
            7,
            (10190848, 336),
            (1048576, 40),
            10.3,
            2.75,
            1.18,
            0.28,
            false,
            true,
        ),
    ]
}

/// The allowed profile names, in Table 5 order.
pub fn names() -> Vec<&'static str> {
    profiles().iter().map(|p| p.name).collect()
}

/// The profile called `name` (case-insensitive); the error lists the allowed names.
pub fn profile(name: &str) -> Result<Profile, String> {
    profile_raw(name).map_err(|e| smrtl_hdl::shown(&e))
}

/// [`profile`] before control characters in echoed text are escaped.
fn profile_raw(name: &str) -> Result<Profile, String> {
    profiles()
        .into_iter()
        .find(|p| p.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| format!("unknown profile `{name}`; allowed: {}", names().join(", ")))
}

/// Little's law (Eq. 1): threads needed to fill `stages` stages of `lanes` lanes.
pub fn littles_law_threads(stages: u32, lanes: u32) -> u32 {
    stages * lanes
}

/// Expected degree of one subwarp of `lanes` lanes reading uniformly random words of a
/// [`TABLE_WORDS`]-word table over [`BANKS`] banks, counting distinct words per bank
/// (`DistinctWord`). Exact: P(max ≤ k) from the exponential generating function of one bank.
pub fn random_degree_mean(lanes: u32) -> f64 {
    let n = lanes as usize;
    let per_bank = (TABLE_WORDS / BANKS) as usize;
    // Stirling numbers of the second kind S(j, m), j, m ≤ n.
    let mut st = vec![vec![0f64; n + 1]; n + 1];
    st[0][0] = 1.0;
    for j in 1..=n {
        for m in 1..=j {
            st[j][m] = m as f64 * st[j - 1][m] + st[j - 1][m - 1];
        }
    }
    // Falling factorial (per_bank)_m: injective choices of m distinct words.
    let falling = |m: usize| (0..m).map(|i| (per_bank - i) as f64).product::<f64>();
    let fact = |m: usize| (1..=m).map(|i| i as f64).product::<f64>();
    let total = (TABLE_WORDS as f64).powi(lanes as i32);
    let mut mean = 0.0;
    for k in 0..n {
        // EGF coefficients of one bank holding ≤ k distinct words.
        let a: Vec<f64> = (0..=n)
            .map(|j| {
                let s: f64 = (0..=j.min(k)).map(|m| falling(m) * st[j][m]).sum();
                s / fact(j)
            })
            .collect();
        let mut poly = vec![0f64; n + 1];
        poly[0] = 1.0;
        for _ in 0..BANKS {
            let mut next = vec![0f64; n + 1];
            for (i, pi) in poly.iter().enumerate() {
                for (j, aj) in a.iter().enumerate().take(n + 1 - i) {
                    next[i + j] += pi * aj;
                }
            }
            poly = next;
        }
        let p_le_k = poly[n] * fact(n) / total;
        mean += 1.0 - p_le_k;
    }
    mean
}

/// Degree of one subwarp of `lanes` random words of the table (`DistinctWord`).
fn random_degree(rng: &mut ChaCha8Rng, lanes: u32) -> u32 {
    let mut words: Vec<u32> = (0..lanes).map(|_| rng.gen_range(0..TABLE_WORDS)).collect();
    words.sort_unstable();
    words.dedup();
    let mut per_bank = [0u32; BANKS as usize];
    for w in words {
        per_bank[(w % BANKS) as usize] += 1;
    }
    per_bank.iter().copied().max().unwrap_or(1).max(1)
}

/// Degree of a word stride `s` over `lanes` lanes and [`BANKS`] banks: gcd(s, B), at most `lanes`.
pub fn stride_degree(stride: u32, lanes: u32) -> u32 {
    fn gcd(a: u32, b: u32) -> u32 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    gcd(stride, BANKS).min(lanes).max(1)
}

/// Indices of `k` of `n` slots spread evenly (Bresenham), ascending.
fn spread(n: usize, k: usize) -> Vec<usize> {
    (0..n)
        .filter(|&i| (i + 1) * k / n.max(1) > i * k / n.max(1))
        .collect()
}

/// One static instruction of the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Alu,
    Gld,
    Gst,
    Smem { stride: u32 },
}

impl Profile {
    /// Exact r = dynamic SMEM / dynamic instructions.
    pub fn r_dyn(&self) -> f64 {
        self.smem_dyn as f64 / self.insns_dyn as f64
    }

    /// The project's theoretic speedup `1 + r·(d̄ − 1)`, r from the dynamic counts.
    pub fn theoretic_speedup(&self) -> f64 {
        1.0 + self.r_dyn() * (self.d_bar - 1.0)
    }

    /// Eq. 2: r·d̄ (SMEM bandwidth bound iff > 1).
    pub fn eq2(&self) -> f64 {
        self.r_dyn() * self.d_bar
    }

    /// Threads per CTA.
    pub fn cta_threads(&self) -> u32 {
        self.cta.iter().product()
    }

    /// Resident warps per core: min(W, CTAs/core × ⌈CTA threads / warp size⌉).
    pub fn warps_per_core(&self, warp_contexts: u32, warp_size: u32) -> u32 {
        let per_cta = self.cta_threads().div_ceil(warp_size);
        warp_contexts.min(self.ctas_per_core * per_cta)
    }

    /// SMEM PCs in the body: round(r · static).
    pub fn smem_pcs(&self) -> u32 {
        (self.r_dyn() * self.insns_static as f64).round() as u32
    }

    /// GLD PCs in the body ([`Gmem`]).
    pub fn gld_pcs(&self) -> u32 {
        match self.gmem {
            Gmem::Frac => ((GMEM_FRAC * self.insns_static as f64).round() as u32).max(1),
            Gmem::Source { loads, .. } => loads,
        }
    }

    /// GST PCs in the body ([`Gmem`]).
    pub fn gst_pcs(&self) -> u32 {
        match self.gmem {
            Gmem::Frac => (self.gld_pcs() / 4).max(1),
            Gmem::Source { stores, .. } => stores,
        }
    }

    /// [000] Fig. 10's required DRAM bandwidth as a fraction of `dram`'s peak: global bytes
    /// (loads and stores, 4 bytes per thread each) over the time at IPC = 1 per SIMD lane, on
    /// `dram.cores` cores at `dram.core_mhz` (docs/elastic-pipeline.md §8.6).
    pub fn required_dram_bw(&self, dram: &smrtl_hdl::blocks::sm_core::Dram) -> f64 {
        let bytes = f64::from((self.gld_pcs() + self.gst_pcs()) * WARP_SIZE * 4);
        let cycles = f64::from(self.insns_static * WARP_SIZE / LANES);
        bytes / cycles * f64::from(dram.cores) / dram.peak_bytes_per_core_cycle()
    }

    /// The same profile with the spec's D27 global-memory mix.
    pub fn with_spec_gmem(self) -> Profile {
        Profile {
            gmem: Gmem::Frac,
            ..self
        }
    }

    /// Regular degree of the non-random executions of an irregular profile (`b`, see module doc).
    pub fn irregular_base_degree(&self, lanes: u32) -> u32 {
        let e = random_degree_mean(lanes);
        if self.d_bar <= e {
            1
        } else {
            [1u32, 2, 4, 8]
                .into_iter()
                .map(|s| stride_degree(s, lanes))
                .find(|&d| d as f64 >= self.d_bar)
                .unwrap_or(lanes)
        }
    }

    /// Fraction of SMEM executions with random degrees: (d̄ − b)/(E − b) for irregular profiles,
    /// 0 for regular ones.
    pub fn irregular_fraction(&self, lanes: u32) -> f64 {
        if !self.irregular {
            return 0.0;
        }
        let e = random_degree_mean(lanes);
        let b = self.irregular_base_degree(lanes) as f64;
        ((self.d_bar - b) / (e - b)).clamp(0.0, 1.0)
    }

    /// The per-PC strides of the SMEM PCs, in PC order.
    fn strides(&self, rng: &mut ChaCha8Rng, lanes: u32) -> Vec<u32> {
        let n = self.smem_pcs() as usize;
        if let Some(f) = self.fixed_strides {
            return (0..n).map(|i| f[i % f.len()]).collect();
        }
        if self.irregular {
            return vec![self.irregular_base_degree(lanes); n];
        }
        // The two neighbours of d̄ among the strides; the high count bringing the mean nearest d̄.
        let set = [1u32, 2, 4, 8];
        let deg = |s: u32| stride_degree(s, lanes) as f64;
        let (lo, hi) = set
            .windows(2)
            .map(|w| (w[0], w[1]))
            .find(|&(_, h)| deg(h) >= self.d_bar)
            .unwrap_or((4, 8));
        let f = ((self.d_bar - deg(lo)) / (deg(hi) - deg(lo))).clamp(0.0, 1.0);
        let n_hi = (f * n as f64).round() as usize;
        let mut s: Vec<u32> = (0..n).map(|i| if i < n_hi { hi } else { lo }).collect();
        s.shuffle(rng);
        s
    }

    /// The static body, PC order.
    fn body(&self, rng: &mut ChaCha8Rng, lanes: u32) -> Vec<Op> {
        let len = self.insns_static as usize;
        let mut ops = vec![Op::Alu; len];
        let smem = spread(len, self.smem_pcs() as usize);
        for (pc, stride) in smem.iter().zip(self.strides(rng, lanes)) {
            ops[*pc] = Op::Smem { stride };
        }
        let free: Vec<usize> = (0..len).filter(|i| ops[*i] == Op::Alu).collect();
        let n_gld = self.gld_pcs() as usize;
        let n_gst = self.gst_pcs() as usize;
        let gmem = spread(free.len(), n_gld + n_gst);
        // Every (n_gld + n_gst)/n_gst-th GMEM slot is a store, the rest loads.
        let gst = spread(gmem.len(), n_gst);
        for (k, &slot) in gmem.iter().enumerate() {
            ops[free[slot]] = if gst.binary_search(&k).is_ok() {
                Op::Gst
            } else {
                Op::Gld
            };
        }
        ops
    }

    /// A scheduler-mode workload (D27): `{"params": {"sched": "bcaws", "pipe_mode": "elastic",
    /// "W": warps, "gmem_return": {"icnt": 400}}, "warps": [[{"op", "pc", "degrees"?}, …], …]}`,
    /// one list per warp context; `degrees` (one per subwarp, 1..=`lanes`) only on `smem`.
    /// Deterministic in `seed`.
    pub fn workload(&self, seed: u64, waves: u32, lanes: u32, subwarps: u32) -> Value {
        let lanes = lanes.max(1);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let body = self.body(&mut rng, lanes);
        let frac = self.irregular_fraction(lanes);
        let warps = self.warps_per_core(WARP_CONTEXTS, WARP_SIZE);
        let list: Vec<Value> = (0..warps)
            .map(|_| {
                let mut v = Vec::with_capacity(body.len() * (waves * self.loop_iters) as usize);
                for _ in 0..waves * self.loop_iters {
                    for (pc, op) in body.iter().enumerate() {
                        v.push(match *op {
                            Op::Alu => json!({"op": "alu", "pc": pc}),
                            Op::Gld => json!({"op": "gld", "pc": pc}),
                            Op::Gst => json!({"op": "gst", "pc": pc}),
                            Op::Smem { stride } => {
                                let random = frac > 0.0 && rng.gen_bool(frac);
                                let d: Vec<u32> = (0..subwarps)
                                    .map(|_| {
                                        if random {
                                            random_degree(&mut rng, lanes)
                                        } else {
                                            stride_degree(stride, lanes)
                                        }
                                    })
                                    .collect();
                                json!({"op": "smem", "pc": pc, "degrees": d})
                            }
                        });
                    }
                }
                Value::Array(v)
            })
            .collect();
        json!({
            "params": {
                "sched": "bcaws",
                "pipe_mode": "elastic",
                "W": warps,
                "gmem_return": {"icnt": ICNT_LATENCY},
            },
            "warps": list,
        })
    }
}

/// Figures measured on a generated workload.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    /// Warp contexts.
    pub warps: usize,
    /// Warp instructions in all.
    pub instructions: usize,
    pub smem: usize,
    pub gld: usize,
    pub gst: usize,
    /// SMEM / instructions.
    pub r: f64,
    /// Mean degree over all SMEM subwarp accesses (= mean cycles per SIMD SMEM access, P = 1).
    pub d_bar: f64,
    /// Smallest and largest degree seen (0, 0 without SMEM).
    pub min_degree: u64,
    pub max_degree: u64,
}

/// Measures a workload produced by [`Profile::workload`].
pub fn stats(w: &Value) -> Stats {
    let warps = w["warps"].as_array().map(|a| a.as_slice()).unwrap_or(&[]);
    let (mut n, mut smem, mut gld, mut gst) = (0, 0, 0, 0);
    let (mut deg_sum, mut deg_n, mut lo, mut hi) = (0u64, 0u64, u64::MAX, 0u64);
    for i in warps.iter().filter_map(|w| w.as_array()).flatten() {
        n += 1;
        match i["op"].as_str() {
            Some("smem") => {
                smem += 1;
                for d in i["degrees"].as_array().into_iter().flatten() {
                    let d = d.as_u64().unwrap_or(0);
                    deg_sum += d;
                    deg_n += 1;
                    lo = lo.min(d);
                    hi = hi.max(d);
                }
            }
            Some("gld") => gld += 1,
            Some("gst") => gst += 1,
            _ => {}
        }
    }
    Stats {
        warps: warps.len(),
        instructions: n,
        smem,
        gld,
        gst,
        r: smem as f64 / n.max(1) as f64,
        d_bar: deg_sum as f64 / deg_n.max(1) as f64,
        min_degree: if deg_n == 0 { 0 } else { lo },
        max_degree: hi,
    }
}
