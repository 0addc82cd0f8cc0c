//! The launch calculator of scratchpad sharing (seed 001, Jatala et al.; the project's rule,
//! docs/scratchpad-sharing.md §1.2): how many thread blocks an SM holds with and without sharing,
//! as pairs and unshared blocks, and the private bytes `u` of a shared block. Exact arithmetic:
//! the threshold `t` is a rational.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// An exact fraction `num / den` in (0, 1), written `1/10`, `109/147` or `0.1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ratio {
    pub num: u64,
    pub den: u64,
}

impl FromStr for Ratio {
    type Err = String;

    fn from_str(s: &str) -> Result<Ratio, String> {
        let bad = || {
            format!(
                "bad threshold `{}`; allowed: a fraction in (0, 1) written N/D (1/10, 109/147) or as a decimal (0.1)",
                smrtl_hdl::shown(s)
            )
        };
        let digits =
            |t: &str| !t.is_empty() && t.len() <= 18 && t.bytes().all(|b| b.is_ascii_digit());
        let (num, den) = match (s.split_once('/'), s.split_once('.')) {
            (Some((n, d)), None) if digits(n) && digits(d) => {
                (n.parse().map_err(|_| bad())?, d.parse().map_err(|_| bad())?)
            }
            (None, Some((i, f))) if (i.is_empty() || digits(i)) && digits(f) => {
                let den = 10u64.pow(f.len() as u32);
                let int: u64 = if i.is_empty() {
                    0
                } else {
                    i.parse().map_err(|_| bad())?
                };
                let frac: u64 = f.parse().map_err(|_| bad())?;
                let num = int.checked_mul(den).and_then(|n| n.checked_add(frac));
                (num.ok_or_else(bad)?, den)
            }
            _ => return Err(bad()),
        };
        if den == 0 || num == 0 || num >= den {
            return Err(bad());
        }
        Ok(Ratio { num, den })
    }
}

/// `t` in params and JSON: the text `"1/10"` (or a decimal, as a number or a string).
impl serde::Serialize for Ratio {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Ratio {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Ratio, D::Error> {
        let text = match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) => s,
            serde_json::Value::Number(n) => n.to_string(),
            other => other.to_string(),
        };
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.num, self.den)
    }
}

/// What the calculator reads: the SM's limits and one kernel's thread-block shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inputs {
    /// Scratchpad bytes per SM (`R`).
    pub smem: u64,
    /// Scratchpad bytes per thread block (`R_tb`).
    pub tb_smem: u64,
    /// Threads per thread block.
    pub tb_threads: u64,
    /// TB slots per SM (`T`).
    pub max_tbs: u64,
    /// Resident threads per SM.
    pub max_threads: u64,
    /// The threshold `t`: a shared block's private fraction.
    pub t: Ratio,
    /// Blocks the register file allows (none: no limit).
    pub reg_limit: Option<u64>,
    /// Granule of the private size `u`, in bytes.
    pub align: u64,
}

/// The calculator's answer (docs/scratchpad-sharing.md §1.2, §1.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Launch {
    /// Blocks the scratchpad holds unshared: `floor(R / R_tb)`.
    pub m_sp: u64,
    /// Blocks the other limits allow: slots, threads, registers.
    pub cap: u64,
    /// Resident blocks without sharing: `min(m_sp, cap)`.
    pub base: u64,
    /// Resident blocks with sharing.
    pub n: u64,
    /// Shared pairs.
    pub pairs: u64,
    /// Unshared blocks.
    pub unshared: u64,
    /// The SM shares (1) or not (0): exactly when `n > base`.
    pub shsm: u8,
    /// Private bytes of a shared block: `ceil(t·R_tb)` rounded up to the granule.
    pub u: u64,
    /// Bytes of the §1.4 layout: `unshared·R_tb + pairs·(R_tb + u)`.
    pub layout_bytes: u64,
    /// Bytes the unshared launch leaves unused: `R − base·R_tb`.
    pub unused_bytes_base: u64,
}

impl Launch {
    /// The same kernel (`tb_smem` bytes per TB) launched without sharing: `base` unshared
    /// TBs, ShSM = 0.
    pub fn unshared(self, tb_smem: u64) -> Launch {
        Launch {
            n: self.base,
            pairs: 0,
            unshared: self.base,
            shsm: 0,
            layout_bytes: self.base * tb_smem,
            ..self
        }
    }
}

/// Runs the rule of docs/scratchpad-sharing.md §1.2 on checked inputs (`tb_smem` ≥ 1,
/// `tb_threads` ≥ 1, `align` ≥ 1, `t` in (0, 1)).
pub fn launch(i: &Inputs) -> Launch {
    let r_tb = i.tb_smem;
    let m_sp = i.smem / r_tb;
    let cap = i
        .max_tbs
        .min(i.max_threads / i.tb_threads)
        .min(i.reg_limit.unwrap_or(u64::MAX));
    let base = m_sp.min(cap);
    let left = i.smem - m_sp * r_tb;
    // Each pair costs t·R_tb more bytes: floor(L / (t·R_tb)) = floor(L·den / (num·R_tb)).
    let extra = m_sp.min(mul_div(left, i.t.den, i.t.num * r_tb));
    let mut n = (m_sp + extra).min(cap);
    let (mut pairs, mut unshared) = if n > base && n > m_sp {
        (n - m_sp, m_sp - (n - m_sp))
    } else {
        n = base;
        (0, base)
    };
    let private = (i.t.num * r_tb).div_ceil(i.t.den);
    let u = private.div_ceil(i.align) * i.align;
    // Rounding guard: the layout uses the rounded u.
    while pairs > 0 && pairs * (r_tb + u) + (m_sp - pairs) * r_tb > i.smem {
        pairs -= 1;
        n -= 1;
        unshared += 1;
    }
    if pairs == 0 {
        n = base;
        unshared = base;
    }
    Launch {
        m_sp,
        cap,
        base,
        n,
        pairs,
        unshared,
        shsm: (pairs > 0) as u8,
        u,
        layout_bytes: unshared * r_tb + pairs * (r_tb + u),
        unused_bytes_base: i.smem - base * r_tb,
    }
}

/// `floor(a·b / c)` without overflow (the inputs are bounded well below 2^32).
fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    (a as u128 * b as u128 / c as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's SM (16 KB, 16 slots, 3072 threads) at t = 1/10.
    fn paper(tb_smem: u64, tb_threads: u64, t: &str) -> Launch {
        launch(&Inputs {
            smem: 16384,
            tb_smem,
            tb_threads,
            max_tbs: 16,
            max_threads: 3072,
            t: t.parse().unwrap(),
            reg_limit: None,
            align: 4,
        })
    }

    /// A1: the Table 1 kernels.
    #[test]
    fn table_1_counts() {
        let dct12 = paper(2112, 64, "1/10");
        assert_eq!((dct12.n, dct12.pairs, dct12.unshared), (14, 7, 0));
        let dct34 = paper(2176, 128, "0.1");
        assert_eq!(
            (dct34.base, dct34.n, dct34.pairs, dct34.unshared),
            (7, 12, 5, 2)
        );
        let fdtd = paper(3840, 128, "1/10");
        assert_eq!((fdtd.base, fdtd.n, fdtd.pairs, fdtd.unshared), (4, 6, 2, 2));
        for (r_tb, block) in [
            (9408, 256),
            (10496, 64),
            (13824, 576),
            (11520, 576),
            (11872, 128),
            (9216, 192),
            (9216, 32),
            (8452, 32),
        ] {
            let l = paper(r_tb, block, "1/10");
            assert_eq!((l.base, l.n, l.pairs, l.shsm), (1, 2, 1, 1), "R_tb {r_tb}");
        }
    }

    /// A2: Examples 3.1–3.3.
    #[test]
    fn examples_3_1_to_3_3() {
        let backprop = paper(9408, 256, "1/10");
        assert_eq!(backprop.unused_bytes_base, 6976);
        let split = paper(9408, 256, "109/147");
        assert_eq!((split.u, split.n), (6976, 2));
        assert_eq!(9408 - split.u, 2432, "shared bytes");
        let dct3 = paper(2176, 128, "1/10");
        assert_eq!((dct3.pairs, dct3.unshared, dct3.u), (5, 2, 220));
        assert_eq!(dct3.layout_bytes, 16332);
    }

    #[test]
    fn no_sharing_when_other_limits_bind() {
        // Threads cap the SM at 2 blocks of 1024 threads: sharing cannot add one.
        let l = paper(2176, 1024, "1/10");
        assert_eq!((l.cap, l.base, l.n, l.pairs, l.shsm), (3, 3, 3, 0, 0));
        assert_eq!(l.unshared, 3);
    }

    #[test]
    fn thresholds_parse_exactly() {
        assert_eq!("1/10".parse::<Ratio>().unwrap(), Ratio { num: 1, den: 10 });
        assert_eq!(
            "0.25".parse::<Ratio>().unwrap(),
            Ratio { num: 25, den: 100 }
        );
        assert_eq!(".5".parse::<Ratio>().unwrap(), Ratio { num: 5, den: 10 });
        for bad in [
            "0", "1", "1/1", "3/2", "0/5", "1/0", "-1/10", "0.", "1e-1", "", "a/b", "1.5",
        ] {
            assert!(bad.parse::<Ratio>().is_err(), "{bad}");
        }
    }
}
