//! `QbmiArb` (docs/memory-issue-control.md §3.2–3.4, §5; Dai et al., seed 004, §3.2): QBMI,
//! the quota-based arbiter for the SM's one memory-issue slot. Each kernel k has a quota; the
//! eligible kernel with the largest quota is granted (tie → lowest k) and its quota drops by
//! one; when a quota reaches 0 every quota gets its base quota `base_k = LCM(rpm)/rpm_k` added
//! in the same cycle. `rpm_k`, the kernel's requests per memory instruction, is re-measured at
//! each `sample_k` as `round(2^reqcnt_bits / c)` from the memory-instruction counter `minst_k`.
//!
//! Registers per kernel (spec §6): `rpm` (⌈log2(rpm_max+1)⌉ bits), `quota` (`quota_bits`),
//! `minst` (`reqcnt_bits`). Everything else is combinational from the start-of-cycle registers
//! and this cycle's inputs:
//! - **base** (§3.3): each `rpm_k` is decoded one-hot (a ROM-like OR plane) into the exponents of
//!   its prime factors (primes ≤ rpm_max); per prime the largest exponent over the kernels is
//!   the LCM's; `base_k = ∏_p p^(max_e − e_k)` is a chain of multiplications by constants
//!   (shifts and adds), one per prime, each selected by the exponent difference. Every partial
//!   product divides `base_k < 1024` (rpm ≤ 32, N ≤ 3), so 10-bit arithmetic is exact.
//! - **grant** (§3.4): pairwise quota comparators, `≥` against lower kernels, `>` against higher.
//! - **quota** (§3.4): decrement of the granted quota; if a quota is then 0, every quota adds
//!   its base, saturating at `2^quota_bits − 1`.
//! - **rpm** (§3.3): a restoring divider per kernel with ⌈log2(rpm_max+1)⌉ quotient bits and an
//!   overflow check (the quotient is clamped to rpm_max anyway): `nearest` divides `2I + c` by
//!   `2c` (half up), `floor` divides `I` by `c`, where `I = 2^reqcnt_bits`.

use crate::blocks::sharing::bus;
use crate::netlist::{concat, or_all, replicate, Expr, Module};
use crate::params::{allowed_of, bits_for, Allowed, BlockParams, Gpgpusim, ParamError};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Width of a base quota: `base_k < 1024` for rpm ≤ 32 and N ≤ 3 (spec §3.3).
pub const BASE_BITS: usize = 10;

/// Most kernels.
pub const MAX_KERNELS: usize = 3;

/// How `rpm := round(I / c)` rounds (spec §3.3 `rpm_round`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RpmRound {
    /// To the nearest integer, halves up: `⌊(2I + c) / 2c⌋`; the default.
    Nearest,
    /// Down: `⌊I / c⌋`.
    Floor,
}

/// The rpm registers' reset values (`rpm_init`): one value for every kernel, or one per kernel
/// (kernel 0 first). On the command line `--set rpm_init=4` or `--set rpm_init=1,4,2`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RpmInit(pub Vec<u32>);

impl RpmInit {
    /// Kernel k's reset rpm.
    pub fn of(&self, k: usize) -> u32 {
        if self.0.len() == 1 {
            self.0[0]
        } else {
            self.0[k]
        }
    }
}

impl Default for RpmInit {
    /// Every kernel 1 (spec §3.3 reset: equal quotas until the first sample).
    fn default() -> RpmInit {
        RpmInit(vec![1])
    }
}

impl FromStr for RpmInit {
    type Err = String;

    fn from_str(s: &str) -> Result<RpmInit, String> {
        let bad = || {
            format!(
                "bad rpm_init `{}`; allowed: one value or {MAX_KERNELS} at most, comma-separated, e.g. 1,4,2",
                crate::shown(s)
            )
        };
        let values = s
            .split(',')
            .map(|t| {
                let t = t.trim();
                if t.is_empty() || t.len() > 9 || !t.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad());
                }
                t.parse::<u32>().map_err(|_| bad())
            })
            .collect::<Result<Vec<u32>, String>>()?;
        if values.len() > MAX_KERNELS {
            return Err(bad());
        }
        Ok(RpmInit(values))
    }
}

impl fmt::Display for RpmInit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text: Vec<String> = self.0.iter().map(u32::to_string).collect();
        f.write_str(&text.join(","))
    }
}

/// `rpm_init` in params and JSON: the text `"1,4,2"` (also read from a number or an array).
impl Serialize for RpmInit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RpmInit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RpmInit, D::Error> {
        use serde_json::Value;
        let text = match Value::deserialize(d)? {
            Value::String(s) => s,
            Value::Array(items) => items
                .iter()
                .map(|v| match v {
                    Value::Number(n) => n.to_string(),
                    other => format!("{other}"),
                })
                .collect::<Vec<_>>()
                .join(","),
            other => other.to_string(),
        };
        text.parse().map_err(serde::de::Error::custom)
    }
}

crate::block_params! {
    /// QbmiArb parameters (spec §3.3, §3.4, §5).
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct Params {
        /// Concurrent kernels (kernel slots) sharing the SM's memory-issue slot.
        n: u32 = 2, "N", Allowed::Range(1, 3) => Gpgpusim::KernelSlots;
        /// Largest requests-per-memory-instruction value an rpm register holds (clamp).
        rpm_max: u32 = 32, "rpm_max", Allowed::Range(1, 32);
        /// Rounding of rpm := round(2^reqcnt_bits / c).
        rpm_round: RpmRound = RpmRound::Nearest, "rpm_round", Allowed::Names(&["nearest", "floor"]);
        /// Width of each saturating quota register.
        quota_bits: u32 = 16, "quota_bits", Allowed::Range(1, 32);
        /// Sampling interval 2^reqcnt_bits requests (the MILG's request counter); minst is this wide.
        reqcnt_bits: u32 = 10, "reqcnt_bits", Allowed::Range(1, 16);
        /// Reset value of the rpm registers: one value for all kernels or one per kernel.
        rpm_init: RpmInit = RpmInit::default(), "rpm_init", Allowed::Json("one value, or N comma-separated values, each in 1..=rpm_max"), "e.g. --set rpm_init=1,4,2";
    }
}

impl Params {
    /// Kernels as a count.
    pub fn kernels(&self) -> usize {
        self.n as usize
    }

    /// Width of one rpm register: bits for 0..=rpm_max (6 for rpm_max 32).
    pub fn rpm_bits(&self) -> usize {
        bits_for(u64::from(self.rpm_max))
    }

    /// The largest quota, `2^quota_bits − 1` (saturation).
    pub fn quota_max(&self) -> u64 {
        crate::netlist::mask(self.quota_bits as usize)
    }

    /// Kernel k's rpm at reset.
    pub fn rpm_reset(&self, k: usize) -> u32 {
        self.rpm_init.of(k)
    }

    /// The quotas at reset: `base` of the reset rpm, saturated (spec §3.4).
    pub fn quota_reset(&self) -> Vec<u64> {
        let rpm: Vec<u32> = (0..self.kernels()).map(|k| self.rpm_reset(k)).collect();
        base_of(&rpm)
            .into_iter()
            .map(|b| u64::from(b).min(self.quota_max()))
            .collect()
    }

    /// Register bits per kernel: rpm + quota + minst (32 at the defaults, spec §6).
    pub fn register_bits_per_kernel(&self) -> u64 {
        (self.rpm_bits() as u64) + u64::from(self.quota_bits) + u64::from(self.reqcnt_bits)
    }

    /// Register bits: N × (rpm + quota + minst).
    pub fn register_bits(&self) -> u64 {
        u64::from(self.n) * self.register_bits_per_kernel()
    }

    /// A preset's params with `rpm_init` given as text.
    fn with(n: u32, rpm_init: &str) -> Params {
        Params {
            n,
            rpm_init: rpm_init.parse().expect("a preset's rpm_init"),
            ..Params::default()
        }
    }
}

impl BlockParams for Params {
    const BLOCK: &'static str = "qbmi_arb";

    /// Two kernels at the paper's settings; three; three kernels starting from Table 2's
    /// Req/Minst of bp, sv and ks (2, 3, 17); corners: short intervals at N = 3 (every rpm
    /// value reachable), `floor` rounding, narrow saturating quotas at N = 3 and at N = 1; and
    /// a small one (short interval, narrow quotas, unequal reset rpm), listed last.
    fn presets() -> Vec<(&'static str, Self)> {
        vec![
            ("paper", Params::default()),
            ("three", Params::with(3, "1")),
            ("bp_sv_ks", Params::with(3, "2,3,17")),
            (
                "short_three",
                Params {
                    reqcnt_bits: 5,
                    ..Params::with(3, "4,1,6")
                },
            ),
            (
                "floor",
                Params {
                    rpm_round: RpmRound::Floor,
                    reqcnt_bits: 6,
                    ..Params::default()
                },
            ),
            (
                "narrow_three",
                Params {
                    quota_bits: 5,
                    rpm_max: 13,
                    ..Params::with(3, "13,12,5")
                },
            ),
            (
                "one",
                Params {
                    quota_bits: 3,
                    ..Params::with(1, "1")
                },
            ),
            (
                "small",
                Params {
                    rpm_max: 8,
                    quota_bits: 6,
                    reqcnt_bits: 4,
                    ..Params::with(2, "1,3")
                },
            ),
        ]
    }

    fn check(&self) -> Result<(), ParamError> {
        let v = &self.rpm_init.0;
        let count_ok = v.len() == 1 || v.len() == self.kernels();
        let range_ok = v.iter().all(|&r| (1..=self.rpm_max).contains(&r));
        if count_ok && range_ok && !v.is_empty() {
            Ok(())
        } else {
            Err(ParamError::Range {
                name: "rpm_init".into(),
                value: self.rpm_init.to_string(),
                allowed: format!(
                    "{} (here N = {}, rpm_max = {})",
                    allowed_of::<Params>("rpm_init"),
                    self.n,
                    self.rpm_max
                ),
            })
        }
    }
}

/// The primes up to `max`.
pub fn primes_upto(max: u32) -> Vec<u32> {
    (2..=max)
        .filter(|&p| (2..p).take_while(|d| d * d <= p).all(|d| p % d != 0))
        .collect()
}

/// How often `p` divides `v` (v ≥ 1).
pub fn exponent(mut v: u32, p: u32) -> u32 {
    let mut e = 0;
    while v > 0 && v.is_multiple_of(p) {
        v /= p;
        e += 1;
    }
    e
}

/// `base_k = LCM(rpm)/rpm_k` the way the RTL computes it: `∏_p p^(max_j e_p(rpm_j) −
/// e_p(rpm_k))` over the primes ≤ 32 (generation-time constants: the quota reset values).
pub fn base_of(rpm: &[u32]) -> Vec<u32> {
    let primes = primes_upto(32);
    rpm.iter()
        .map(|&r| {
            primes
                .iter()
                .map(|&p| {
                    let top = rpm.iter().map(|&x| exponent(x, p)).max().unwrap_or(0);
                    p.pow(top - exponent(r, p))
                })
                .product()
        })
        .collect()
}

crate::ports! {
    Params as p;
    let n = p.kernels();
    inputs {
        /// Per kernel: a memory instruction of the kernel is ready to issue.
        mem_req[1; n]: bool,
        /// Per kernel: the MIL gate lets the kernel issue (all ones without MIL).
        mem_ok[1; n]: bool,
        /// The memory pipeline register is empty: a memory instruction may issue this cycle.
        slot_free[1]: bool,
        /// Per kernel: an instruction of the kernel had its first access accepted.
        first[1; n]: bool,
        /// Per kernel: the kernel's 1024th interval request is accepted this cycle (the
        /// MILG's `boundary`).
        sample[1; n]: bool,
    }
    outputs {
        /// Per kernel: the kernel issues this cycle (one-hot or none, combinational).
        grant[1; n]: bool,
        /// Debug: the quotas at the start of the cycle.
        quota[p.quota_bits as usize; n],
        /// Debug: the base quotas, LCM(rpm)/rpm_k of the start-of-cycle rpm.
        base[BASE_BITS; n],
        /// Debug: the rpm registers (⌈log2(rpm_max+1)⌉ bits each).
        rpm[p.rpm_bits(); n],
        /// Debug: the memory-instruction counters.
        minst[p.reqcnt_bits as usize; n],
    }
}

impl crate::Block for Params {
    fn build(&self) -> Module {
        build(self)
    }
    #[cfg(feature = "faults")]
    const FAULTS: &'static [crate::faults::Fault] = &[faults::REFILL_WITH_NEW_RPM];
}

/// Planted faults (docs/blocks.md §4).
#[cfg(feature = "faults")]
pub mod faults {
    use crate::faults::Fault;

    /// A refill adds the base quotas of the rpm being written this cycle instead of the
    /// start-of-cycle ones: wrong only when a sample changes an rpm in a refill cycle (§3.4).
    pub const REFILL_WITH_NEW_RPM: Fault = Fault {
        block: "qbmi_arb",
        name: "refill_with_new_rpm",
        what: "a refill adds the base quotas of the rpm sampled in the same cycle instead of the start-of-cycle ones (§3.4)",
        port: super::port::QUOTA,
        // From quotas of 1 (`three`, `small`): a refill with a sample, then the quotas read
        // back; presets with larger reset quotas need more grants first (`bp_sv_ks` 7 cycles,
        // `narrow_three` about 50). Built at N ≥ 2.
        within: 3,
    };
}

/// `x << s` cut to `x`'s width (`x` a net).
fn shl(x: &Expr, s: usize) -> Expr {
    let w = x.width();
    if s == 0 {
        x.clone()
    } else if s >= w {
        Expr::lit(0, w)
    } else {
        concat(&[x.slice(0, w - s), Expr::lit(0, s)])
    }
}

/// `x · c` modulo `2^width(x)` (`x` a net): a sum of shifted copies, one per set bit of `c`.
fn mul_const(x: &Expr, c: u64) -> Expr {
    let w = x.width();
    (0..w)
        .filter(|&i| c >> i & 1 == 1)
        .map(|i| shl(x, i))
        .reduce(|a, b| a + b)
        .unwrap_or_else(|| Expr::lit(0, w))
}

/// The larger of two equal-width values.
fn max(a: &Expr, b: &Expr) -> Expr {
    a.lt(b).mux(b, a)
}

/// `base_k = LCM(rpm)/rpm_k` for the rpm values `rpm` (nets), as 10-bit wires named
/// `{pre}base_{k}` (see the module doc).
fn base_circuit(m: &mut Module, pre: &str, rpm: &[Expr], rpm_max: u32) -> Vec<Expr> {
    let n = rpm.len();
    let rb = rpm[0].width();
    if n == 1 {
        // LCM(rpm_0)/rpm_0.
        return vec![m.wire(&format!("{pre}base_0"), Expr::lit(1, BASE_BITS))];
    }
    // One-hot decode of each rpm value 1..=rpm_max (values outside decode to nothing).
    let hot: Vec<Vec<Expr>> = (0..n)
        .map(|k| {
            (1..=rpm_max)
                .map(|v| {
                    m.wire(
                        &format!("{pre}rpm_is_{k}_{v}"),
                        rpm[k].equals(&Expr::lit(u64::from(v), rb)),
                    )
                })
                .collect()
        })
        .collect();
    let mut acc: Vec<Expr> = vec![Expr::lit(1, BASE_BITS); n];
    for p in primes_upto(rpm_max) {
        let top = (1..=rpm_max).map(|v| exponent(v, p)).max().unwrap_or(0);
        let ew = bits_for(u64::from(top));
        // e_p(rpm_k): bit j is the OR of the decoded values whose exponent has bit j.
        let e: Vec<Expr> = (0..n)
            .map(|k| {
                let bits: Vec<Expr> = (0..ew)
                    .rev()
                    .map(|j| {
                        let vs: Vec<Expr> = (1..=rpm_max)
                            .filter(|&v| exponent(v, p) >> j & 1 == 1)
                            .map(|v| hot[k][v as usize - 1].clone())
                            .collect();
                        or_all(&vs, 1)
                    })
                    .collect();
                m.wire(&format!("{pre}e{p}_{k}"), concat(&bits))
            })
            .collect();
        let lcm_e = e[1..].iter().fold(e[0].clone(), |a, b| max(&a, b));
        let lcm_e = m.wire(&format!("{pre}e{p}_lcm"), lcm_e);
        for (k, acc_k) in acc.iter_mut().enumerate() {
            let d = m.wire(&format!("{pre}d{p}_{k}"), &lcm_e - &e[k]);
            let x = m.wire(&format!("{pre}acc{p}_{k}"), acc_k.clone());
            // x · p^j for the exponent difference j = d (0 keeps x).
            let mut next = x.clone();
            for j in 1..=top {
                let hit = d.equals(&Expr::lit(u64::from(j), ew));
                next = hit.mux(&mul_const(&x, u64::from(p.pow(j))), &next);
            }
            *acc_k = next;
        }
    }
    acc.into_iter()
        .enumerate()
        .map(|(k, a)| m.wire(&format!("{pre}base_{k}"), a))
        .collect()
}

/// `clamp(round(I / c), 1, rpm_max)` for `c` in 1..=I (`c` a net of reqcnt_bits + 1 bits,
/// `I = 2^reqcnt_bits`): a restoring divider with `rb` quotient bits (see the module doc).
fn rpm_divider(m: &mut Module, pre: &str, c: &Expr, p: &Params) -> Expr {
    let rw = p.reqcnt_bits as usize;
    let rb = p.rpm_bits();
    let w = rw + 2;
    let ww = w + rb;
    let interval = 1u64 << rw;
    let (a, b) = match p.rpm_round {
        // ⌊(2I + c) / 2c⌋: half up.
        RpmRound::Nearest => (
            Expr::lit(2 * interval, w) + c.zext(w),
            concat(&[c.clone(), Expr::lit(0, 1)]),
        ),
        RpmRound::Floor => (Expr::lit(interval, w), c.zext(w)),
    };
    let a = m.wire(&format!("{pre}num"), a.zext(ww));
    let b = m.wire(&format!("{pre}den"), b.zext(ww));
    // The quotient needs more than rb bits: it is above rpm_max either way.
    let ovf = m.wire(&format!("{pre}ovf"), !a.lt(&shl(&b, rb)));
    let mut r = a;
    let mut q = vec![];
    for i in (0..rb).rev() {
        let t = shl(&b, i);
        let ge = m.wire(&format!("{pre}q{i}"), !r.lt(&t));
        r = m.wire(&format!("{pre}r{i}"), ge.mux(&(&r - &t), &r));
        q.push(ge);
    }
    let q = concat(&q);
    let qs = m.wire(
        &format!("{pre}quot"),
        ovf.mux(&Expr::lit(crate::netlist::mask(rb), rb), &q),
    );
    let hi = Expr::lit(u64::from(p.rpm_max), rb);
    let at_least_1 = qs.equals(&Expr::lit(0, rb)).mux(&Expr::lit(1, rb), &qs);
    // rpm_max = 2^rb - 1 (1, 3, 7, 15, 31): no rb-bit quotient exceeds it, and comparing with
    // it would be constant (Verilator's CMPCONST).
    let clamped = if u64::from(p.rpm_max) == crate::netlist::mask(rb) {
        at_least_1
    } else {
        hi.lt(&qs).mux(&hi, &at_least_1)
    };
    m.wire(&format!("{pre}rpm_new"), clamped)
}

/// Builds QbmiArb's RTL from validated params (spec §3.2–3.4).
pub fn build(p: &Params) -> Module {
    let n = p.kernels();
    let (rb, qb, rw) = (p.rpm_bits(), p.quota_bits as usize, p.reqcnt_bits as usize);
    let mut m = Module::new(&crate::params::module_name(p));
    m.cites(crate::blocks::docs::MEMORY_ISSUE_CONTROL);
    let (inp, out) = m.declare_ports(&ports(p));
    let i = |name: &str| inp[name].clone();
    let (first, sample) = (i(port::FIRST), i(port::SAMPLE));

    let quota_reset = p.quota_reset();
    let rpm: Vec<Expr> = (0..n)
        .map(|k| m.reg(&format!("rpm_{k}_q"), rb, u64::from(p.rpm_reset(k))))
        .collect();
    let quota: Vec<Expr> = (0..n)
        .map(|k| m.reg(&format!("quota_{k}_q"), qb, quota_reset[k]))
        .collect();
    let minst: Vec<Expr> = (0..n)
        .map(|k| m.reg(&format!("minst_{k}_q"), rw, 0))
        .collect();

    m.section("§3.3: base_k = LCM(rpm)/rpm_k, start-of-cycle rpm");
    let base = base_circuit(&mut m, "", &rpm, p.rpm_max);

    m.section(
        "§3.3 sampling: c = minst + first (mod I, 0 => I); rpm := clamp(round(I/c), 1, rpm_max)",
    );
    let mut rpm_next = vec![];
    for k in 0..n {
        let c_raw = m.wire(&format!("c_raw_{k}"), &minst[k] + &first.bit(k).zext(rw));
        // 0 means a full interval: {c_raw == 0, c_raw} is I then, c_raw otherwise.
        let c = m.wire(
            &format!("c_{k}"),
            concat(&[c_raw.equals(&Expr::lit(0, rw)), c_raw.clone()]),
        );
        let fresh = rpm_divider(&mut m, &format!("div_{k}_"), &c, p);
        let s = sample.bit(k);
        m.next(&minst[k], s.mux(&Expr::lit(0, rw), &c_raw));
        let nx = m.wire(&format!("rpm_nx_{k}"), s.mux(&fresh, &rpm[k]));
        m.next(&rpm[k], nx.clone());
        rpm_next.push(nx);
    }

    m.section(
        "§2, §3.4 grant: argmax quota over elig = mem_req & mem_ok & slot_free, tie -> lowest k",
    );
    let elig = m.wire(
        "elig",
        i(port::MEM_REQ) & i(port::MEM_OK) & replicate(&i(port::SLOT_FREE), n),
    );
    let wins: Vec<Expr> = (0..n)
        .map(|k| {
            let beaten: Vec<Expr> = (0..n)
                .filter(|&j| j != k)
                .map(|j| {
                    let better = if j < k {
                        !quota[j].lt(&quota[k])
                    } else {
                        quota[k].lt(&quota[j])
                    };
                    elig.bit(j) & better
                })
                .collect();
            elig.bit(k) & !or_all(&beaten, 1)
        })
        .collect();
    let grant = m.wire("grant_w", bus(&wins));
    m.assign(&out[port::GRANT], grant.clone());

    m.section("§3.4 quota: the grant decrements; any quota 0 after it => every quota += base (saturating)");
    // With one kernel every base is 1 whatever the rpm: the fault could not show, so it is
    // built only with two kernels or more.
    let refill_base = if n > 1 {
        crate::planted!(
            faults::REFILL_WITH_NEW_RPM,
            base_circuit(&mut m, "fault_", &rpm_next, p.rpm_max),
            base.clone()
        )
    } else {
        base.clone()
    };
    let dec: Vec<Expr> = (0..n)
        .map(|k| {
            m.wire(
                &format!("quota_dec_{k}"),
                &quota[k] - &grant.bit(k).zext(qb),
            )
        })
        .collect();
    let zeros: Vec<Expr> = dec.iter().map(|d| d.equals(&Expr::lit(0, qb))).collect();
    let refill = m.wire("refill", or_all(&zeros, 1));
    let sw = qb.max(BASE_BITS) + 1;
    let quota_max = Expr::lit(p.quota_max(), qb);
    for k in 0..n {
        let sum = m.wire(
            &format!("quota_sum_{k}"),
            dec[k].zext(sw) + refill_base[k].zext(sw),
        );
        let over = sum.slice(qb, sw - qb).any();
        let sat = over.mux(&quota_max, &sum.slice(0, qb));
        m.next(&quota[k], refill.mux(&sat, &dec[k]));
    }

    m.assign(&out[port::QUOTA], bus(&quota));
    m.assign(&out[port::BASE], bus(&base));
    m.assign(&out[port::RPM], bus(&rpm));
    m.assign(&out[port::MINST], bus(&minst));
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gcd(a: u32, b: u32) -> u32 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }

    /// The prime-exponent form equals LCM/rpm_k for every rpm triple, and stays below 1024.
    #[test]
    fn base_of_is_lcm_over_rpm() {
        let mut top = 0;
        for a in 1..=32 {
            for b in 1..=32 {
                for c in 1..=32 {
                    let lcm = [a, b, c].iter().fold(1, |l, &x| l / gcd(l, x) * x);
                    let want = [lcm / a, lcm / b, lcm / c];
                    assert_eq!(base_of(&[a, b, c]), want, "{a} {b} {c}");
                    top = top.max(want[0]);
                }
            }
        }
        assert_eq!(top, 992, "31 x 32");
        assert_eq!(base_of(&[2, 3]), [3, 2]);
    }

    #[test]
    fn registers_are_32_per_kernel_at_the_defaults() {
        let p = Params::default();
        assert_eq!((p.rpm_bits(), p.register_bits_per_kernel()), (6, 32));
        for (_, p) in Params::presets() {
            assert_eq!(build(&p).register_bits(), p.register_bits(), "{p:?}");
        }
    }

    #[test]
    fn rpm_init_forms_and_checks() {
        let p = Params::resolve_pairs(None, &[("N", "3"), ("rpm_init", "1,4,2")]).unwrap();
        assert_eq!((p.rpm_reset(0), p.rpm_reset(1), p.rpm_reset(2)), (1, 4, 2));
        assert_eq!(p.quota_reset(), [4, 1, 2]);
        let p = Params::resolve_pairs(None, &[("rpm_init", "5")]).unwrap();
        assert_eq!((p.rpm_reset(0), p.rpm_reset(1)), (5, 5));
        let p = Params::resolve_pairs(None, &[("N", "3"), ("rpm_init", "[3,2,1]")]).unwrap();
        assert_eq!(p.rpm_init, RpmInit(vec![3, 2, 1]));
        for bad in [
            vec![("rpm_init", "1,4,2")],               // N = 2
            vec![("rpm_init", "0")],                   // below 1
            vec![("rpm_init", "33")],                  // above rpm_max
            vec![("rpm_max", "8"), ("rpm_init", "9")], // above rpm_max
            vec![("rpm_init", "1,,2")],
            vec![("rpm_init", "x")],
            vec![("rpm_init", "1,2,3,4")],
        ] {
            let e = Params::resolve_pairs(None, &bad).unwrap_err();
            assert!(e.to_string().contains("rpm_init"), "{bad:?}: {e}");
        }
        let json = serde_json::to_value(Params::with(3, "2,3,17")).unwrap();
        assert_eq!(json["rpm_init"], "2,3,17");
    }

    #[test]
    fn quota_reset_saturates() {
        let p = Params::resolve_pairs(
            None,
            &[("N", "3"), ("quota_bits", "4"), ("rpm_init", "29,31,32")],
        )
        .unwrap();
        assert_eq!(p.quota_reset(), [15, 15, 15]);
    }
}
