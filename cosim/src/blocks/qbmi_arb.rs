//! Behavioral model of QBMI (docs/memory-issue-control.md §3.2–3.4; Dai et al., seed 004,
//! §3.2), written from the spec with plain integers: [`Qbmi`] is the control state the SM
//! memory-pipeline model drives (one [`Qbmi::grant`] before issue, one [`Qbmi::tick`] at the
//! edge); [`Model`] puts it on the block's ports for co-simulation. `base` comes from Euclid's
//! GCD here, independently of the RTL's prime-exponent circuit. Nothing allocates per cycle.

use crate::blocks::rbmi_arb::mask;
use crate::{BlockModel, Layout, Simulator};
use smrtl_hdl::blocks::qbmi_arb::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::qbmi_arb::{Params, RpmRound};

/// Most kernels (array sizes of the typed API).
pub const MAX_KERNELS: usize = 3;

/// QBMI's configuration (the block's params as plain values).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QbmiCfg {
    /// Kernels, 1..=3.
    pub n: usize,
    /// Clamp of the rpm registers (≤ 32).
    pub rpm_max: u32,
    pub rpm_round: RpmRound,
    /// Quota width: quotas saturate at `2^quota_bits − 1`.
    pub quota_bits: u32,
    /// The sampling interval is `2^reqcnt_bits` requests; `minst` counts modulo it.
    pub reqcnt_bits: u32,
    /// Reset rpm per kernel (entries ≥ n unused).
    pub rpm_init: [u32; MAX_KERNELS],
}

impl QbmiCfg {
    /// The configuration of validated params.
    pub fn of(p: &Params) -> QbmiCfg {
        let mut rpm_init = [1; MAX_KERNELS];
        for (k, r) in rpm_init.iter_mut().enumerate().take(p.kernels()) {
            *r = p.rpm_init.of(k);
        }
        QbmiCfg {
            n: p.kernels(),
            rpm_max: p.rpm_max,
            rpm_round: p.rpm_round,
            quota_bits: p.quota_bits,
            reqcnt_bits: p.reqcnt_bits,
            rpm_init,
        }
    }
}

impl Default for QbmiCfg {
    /// The block's default params (N = 2, rpm_max 32, nearest, 16-bit quotas, 1024 requests).
    fn default() -> QbmiCfg {
        QbmiCfg::of(&Params::default())
    }
}

impl From<&Params> for QbmiCfg {
    fn from(p: &Params) -> QbmiCfg {
        QbmiCfg::of(p)
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// `round(num / den)` by `rule` (`den` ≥ 1): nearest rounds halves up.
pub fn divide(num: u32, den: u32, rule: RpmRound) -> u32 {
    let (q, r) = (num / den, num % den);
    match rule {
        RpmRound::Floor => q,
        RpmRound::Nearest => q + u32::from(2 * r >= den),
    }
}

/// QBMI's registers (pub, read-only by convention): per kernel `rpm`, `quota`, `minst`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Qbmi {
    pub n: usize,
    pub rpm: [u32; MAX_KERNELS],
    pub quota: [u32; MAX_KERNELS],
    pub minst: [u32; MAX_KERNELS],
    cfg: QbmiCfg,
}

impl Qbmi {
    /// QBMI after reset (spec §3.3, §3.4): `rpm = rpm_init`, `minst = 0`, `quota = base` of
    /// the reset rpm (saturated).
    pub fn new(cfg: &QbmiCfg) -> Qbmi {
        assert!(
            (1..=MAX_KERNELS).contains(&cfg.n),
            "QBMI takes 1..=3 kernels"
        );
        let mut q = Qbmi {
            n: cfg.n,
            rpm: cfg.rpm_init,
            quota: [0; MAX_KERNELS],
            minst: [0; MAX_KERNELS],
            cfg: cfg.clone(),
        };
        let (base, max) = (q.base(), q.quota_max());
        for (quota, b) in q.quota.iter_mut().zip(base).take(q.n) {
            *quota = b.min(max);
        }
        q
    }

    /// The configuration.
    pub fn cfg(&self) -> &QbmiCfg {
        &self.cfg
    }

    /// The largest quota, `2^quota_bits − 1`.
    pub fn quota_max(&self) -> u32 {
        ((1u64 << self.cfg.quota_bits) - 1) as u32
    }

    /// `base_k = LCM(rpm_0, …, rpm_{N−1}) / rpm_k` of the current rpm registers (spec §3.2,
    /// §3.3); entries ≥ n are 0.
    pub fn base(&self) -> [u32; MAX_KERNELS] {
        let rpm = &self.rpm[..self.n];
        let lcm = rpm.iter().fold(1, |l, &r| l / gcd(l, r) * r);
        let mut base = [0; MAX_KERNELS];
        for (b, &r) in base.iter_mut().zip(rpm) {
            *b = lcm / r;
        }
        base
    }

    /// The kernel granted this cycle (spec §3.4): the eligible kernel (bit k of `elig`) with
    /// the largest quota, the lowest such k on a tie; `None` when none is eligible.
    pub fn grant(&self, elig: u8) -> Option<usize> {
        let mut best: Option<usize> = None;
        for k in 0..self.n {
            if elig >> k & 1 == 1 && best.is_none_or(|b| self.quota[k] > self.quota[b]) {
                best = Some(k);
            }
        }
        best
    }

    /// The clock edge (spec §3.3, §3.4): the granted quota drops by 1; if any quota is then 0,
    /// every quota adds its base of the start-of-cycle rpm (saturating); then each kernel's
    /// sample (bit k of `sample`) sets its rpm from `c = minst + first` (mod I, 0 ⇒ I) and
    /// clears minst, or minst counts `first`.
    pub fn tick(&mut self, grant: Option<usize>, first: u8, sample: u8) {
        let base = self.base();
        if let Some(g) = grant {
            assert!(
                g < self.n && self.quota[g] >= 1,
                "grant {g} with quota {:?}",
                self.quota
            );
            self.quota[g] -= 1;
            if self.quota[..self.n].contains(&0) {
                let max = self.quota_max();
                for (quota, b) in self.quota.iter_mut().zip(base).take(self.n) {
                    *quota = (u64::from(*quota) + u64::from(b)).min(u64::from(max)) as u32;
                }
            }
        }
        let interval = 1u32 << self.cfg.reqcnt_bits;
        for k in 0..self.n {
            let counted = (self.minst[k] + u32::from(first >> k & 1)) % interval;
            if sample >> k & 1 == 1 {
                let c = if counted == 0 { interval } else { counted };
                self.rpm[k] = divide(interval, c, self.cfg.rpm_round).clamp(1, self.cfg.rpm_max);
                self.minst[k] = 0;
            } else {
                self.minst[k] = counted;
            }
        }
    }
}

/// Eligibility (spec §2): `mem_req & mem_ok`, nobody when the slot is busy.
pub use crate::blocks::rbmi_arb::eligible;

/// QBMI on its ports: `grant` from this cycle's inputs and the registers, the debug outputs
/// the registers at the start of the cycle (and `base` of them); then the edge (synchronous
/// reset wins).
pub struct Model {
    arb: Qbmi,
    io: Io,
    inputs: Inputs,
    outputs: Outputs,
}

impl BlockModel for Model {
    type Params = Params;
    fn new(p: &Params, layout: &Layout) -> Model {
        Model {
            arb: Qbmi::new(&QbmiCfg::of(p)),
            io: Io::new(p, layout),
            inputs: Inputs::new(p),
            outputs: Outputs::new(p),
        }
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        let (a, i, o) = (&self.arb, &mut self.inputs, &mut self.outputs);
        self.io.read_inputs(inputs, i);
        let g = a.grant(eligible(mask(&i.mem_req), mask(&i.mem_ok), i.slot_free));
        for (k, b) in a.base().into_iter().enumerate().take(a.n) {
            o.grant[k] = g == Some(k);
            o.quota[k] = u64::from(a.quota[k]);
            o.base[k] = u64::from(b);
            o.rpm[k] = u64::from(a.rpm[k]);
            o.minst[k] = u64::from(a.minst[k]);
        }
        self.io.write_outputs(o, outputs);
        if i.reset {
            self.arb = Qbmi::new(&self.arb.cfg);
        } else {
            self.arb.tick(g, mask(&i.first), mask(&i.sample));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_half_up_and_floor() {
        assert_eq!(divide(1024, 3, RpmRound::Nearest), 341);
        assert_eq!(divide(1024, 683, RpmRound::Nearest), 1, "1.4993");
        assert_eq!(divide(1024, 682, RpmRound::Nearest), 2, "1.5015");
        assert_eq!(divide(3, 2, RpmRound::Nearest), 2, "1.5 rounds up");
        assert_eq!(divide(1024, 683, RpmRound::Floor), 1);
        assert_eq!(divide(1024, 1024, RpmRound::Floor), 1);
    }

    #[test]
    fn reset_quotas_are_the_reset_base() {
        let cfg = QbmiCfg {
            n: 3,
            rpm_init: [2, 3, 17],
            ..QbmiCfg::default()
        };
        let q = Qbmi::new(&cfg);
        assert_eq!(q.base(), [51, 34, 6]);
        assert_eq!(q.quota, [51, 34, 6]);
    }

    #[test]
    fn sample_counts_the_same_cycles_first() {
        let mut q = Qbmi::new(&QbmiCfg::default());
        // 99 firsts, then a sample with a first: c = 100, rpm = round(10.24) = 10.
        for _ in 0..99 {
            q.tick(None, 0b01, 0);
        }
        assert_eq!(q.minst[0], 99);
        q.tick(None, 0b01, 0b01);
        assert_eq!((q.rpm[0], q.minst[0]), (10, 0));
        // minst 0 and no first: c = 1024, rpm 1; one first: c = 1, rpm clamps at 32.
        q.tick(None, 0, 0b01);
        assert_eq!(q.rpm[0], 1);
        q.tick(None, 0b01, 0b01);
        assert_eq!(q.rpm[0], 32);
    }
}
