//! The evaluation's metrics (docs/memory-issue-control.md §8.3; spec §8.4; Dai et al., HPCA
//! 2018, §2.3 and §4.1.1): normalized IPC, weighted speedup, ANTT, fairness, the improvements
//! of a scheme over a base, and the arithmetic and geometric means of a class.

/// `NIPC_k = IPC_k^shared / IPC_k^alone` [P §2.3]; 0 when the kernel has no IPC alone.
pub fn nipc(shared: f64, alone: f64) -> f64 {
    if alone > 0.0 {
        shared / alone
    } else {
        0.0
    }
}

/// Weighted speedup `Σ NIPC_k` [P].
pub fn weighted_speedup(nipc: &[f64]) -> f64 {
    nipc.iter().sum()
}

/// ANTT `(1/N) Σ 1/NIPC_k`, lower is better (spec §8.4); infinite if a kernel made no progress.
pub fn antt(nipc: &[f64]) -> f64 {
    if nipc.is_empty() {
        return f64::NAN;
    }
    nipc.iter().map(|&x| 1.0 / x).sum::<f64>() / nipc.len() as f64
}

/// Fairness `min NIPC / max NIPC`, higher is better [P §4.1.1]; 0 if no kernel progressed.
pub fn fairness(nipc: &[f64]) -> f64 {
    let max = nipc.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = nipc.iter().copied().fold(f64::INFINITY, f64::min);
    if max > 0.0 {
        min / max
    } else {
        0.0
    }
}

/// Improvement of a higher-is-better metric (weighted speedup, fairness): `new/base − 1`.
pub fn gain(new: f64, base: f64) -> f64 {
    new / base - 1.0
}

/// ANTT improvement, primary form: `(base − new)/base` (the reduction).
pub fn antt_reduction(new: f64, base: f64) -> f64 {
    (base - new) / base
}

/// ANTT improvement, second form: `base/new − 1` (`antt_improvement`; the paper does not define
/// its percentage).
pub fn antt_ratio(new: f64, base: f64) -> f64 {
    base / new - 1.0
}

/// Arithmetic mean; NaN for no values.
pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Geometric mean (Fig. 4 [P]); NaN for no values, 0 if a value is 0.
pub fn geomean(xs: &[f64]) -> f64 {
    (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }

    #[test]
    fn two_kernels_by_hand() {
        // IPC alone 0.5 / 0.2, shared 0.4 / 0.05 → NIPC 0.8 / 0.25.
        let n = [nipc(0.4, 0.5), nipc(0.05, 0.2)];
        close(n[0], 0.8);
        close(n[1], 0.25);
        close(weighted_speedup(&n), 1.05);
        // (1/0.8 + 1/0.25) / 2 = (1.25 + 4) / 2 = 2.625.
        close(antt(&n), 2.625);
        close(fairness(&n), 0.3125);
    }

    #[test]
    fn three_kernels_by_hand() {
        let n = [0.5, 1.0, 0.25];
        close(weighted_speedup(&n), 1.75);
        // (2 + 1 + 4) / 3 = 7/3.
        close(antt(&n), 7.0 / 3.0);
        close(fairness(&n), 0.25);
    }

    #[test]
    fn improvements_in_both_antt_forms() {
        close(gain(1.49, 1.20), 0.29 / 1.20);
        close(gain(0.5, 0.4), 0.25);
        // ANTT 4 → 2.5: reduction 37.5 %, ratio 60 %.
        close(antt_reduction(2.5, 4.0), 0.375);
        close(antt_ratio(2.5, 4.0), 0.6);
    }

    #[test]
    fn means() {
        close(mean(&[1.0, 2.0, 6.0]), 3.0);
        close(geomean(&[1.0, 2.0, 4.0]), 2.0);
        assert!(mean(&[]).is_nan());
        close(nipc(1.0, 0.0), 0.0);
        close(fairness(&[0.0, 0.0]), 0.0);
        assert!(antt(&[0.0, 1.0]).is_infinite());
    }
}
