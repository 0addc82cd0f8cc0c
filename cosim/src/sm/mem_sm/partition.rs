//! Thread-block partitions of the evaluation's baselines (docs/memory-issue-control.md §8.2;
//! spec §7; Dai et al., HPCA 2018, §1, §2.5, §4): the SM's per-TB resources and
//! feasibility, Spatial's SM split, Warped-Slicer's sweet point on static scalability curves,
//! SMK-P's Dominant Resource Fairness filling and SMK-W's warp-instruction quotas.
//!
//! Everything here is arithmetic on the kernels' shapes and given curves; the runs that produce
//! the curves live with the study.

use super::params::PipeParams;
use super::workload::KernelSpec;

/// The SM resources a TB holds, in [`Usage`] order (spec §7 "Feasible").
pub const RESOURCES: [&str; 5] = ["threads", "warps", "TBs", "registers", "shared memory"];

/// Resources DRF shares (SMK [P §1]: registers, shared memory, threads, TB slots), as indices
/// into [`RESOURCES`].
pub const DRF_RESOURCES: [usize; 4] = [3, 4, 0, 2];

/// Per-SM use `[threads, warps, TBs, registers, shared-memory bytes]`.
pub type Usage = [u64; 5];

/// What one TB of `spec` holds.
pub fn per_tb(spec: &KernelSpec) -> Usage {
    [
        spec.threads.into(),
        spec.warps().into(),
        1,
        u64::from(spec.threads) * u64::from(spec.regs),
        spec.smem.into(),
    ]
}

/// What `tbs[k]` TBs of each kernel hold together.
pub fn usage(kernels: &[KernelSpec], tbs: &[u32]) -> Usage {
    let mut u = [0u64; 5];
    for (spec, &n) in kernels.iter().zip(tbs) {
        for (total, one) in u.iter_mut().zip(per_tb(spec)) {
            *total += u64::from(n) * one;
        }
    }
    u
}

/// The SM's capacities, in [`RESOURCES`] order (§1.1: 3072, 96, 16, 65,536, 96 KB).
pub fn caps(p: &PipeParams) -> Usage {
    [
        p.max_threads.into(),
        p.max_warps.into(),
        p.max_tbs.into(),
        p.max_regs.into(),
        p.max_smem.into(),
    ]
}

/// A resource the partition exceeds: its index in [`RESOURCES`], what is asked and the cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow {
    pub resource: usize,
    pub used: u64,
    pub cap: u64,
}

impl std::fmt::Display for Overflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} > {}",
            RESOURCES[self.resource], self.used, self.cap
        )
    }
}

/// The first resource (in [`RESOURCES`] order) that `tbs` overflows, none if feasible.
pub fn overflow(kernels: &[KernelSpec], tbs: &[u32], p: &PipeParams) -> Option<Overflow> {
    let used = usage(kernels, tbs);
    let cap = caps(p);
    (0..5).find(|&r| used[r] > cap[r]).map(|r| Overflow {
        resource: r,
        used: used[r],
        cap: cap[r],
    })
}

/// Isolated occupancy (§8.2 "TBs/SM"): most TBs of `spec` alone on the SM.
pub fn isolated(spec: &KernelSpec, p: &PipeParams) -> u32 {
    let one = per_tb(spec);
    caps(p)
        .iter()
        .zip(one)
        .filter(|&(_, need)| need > 0)
        .map(|(&cap, need)| (cap / need) as u32)
        .min()
        .unwrap_or(0)
}

/// SMK-P (spec §7, [P §1] DRF): repeatedly one more TB to the kernel with the smallest
/// dominant share `max_r used_r / cap_r` (over [`DRF_RESOURCES`]) of what it holds before the
/// addition, among the kernels whose next TB still fits; ties to the lowest index; stop when no
/// next TB fits. Alone, a kernel gets its isolated occupancy.
pub fn smk_p(kernels: &[KernelSpec], p: &PipeParams) -> Vec<u32> {
    let cap = caps(p);
    let mut tbs = vec![0u32; kernels.len()];
    loop {
        let mut best: Option<(f64, usize)> = None;
        for k in 0..kernels.len() {
            let mut next = tbs.clone();
            next[k] += 1;
            if overflow(kernels, &next, p).is_some() {
                continue;
            }
            let share = dominant_share(&kernels[k], tbs[k], &cap);
            if best.is_none_or(|(s, _)| share < s) {
                best = Some((share, k));
            }
        }
        match best {
            Some((_, k)) => tbs[k] += 1,
            None => return tbs,
        }
    }
}

/// `max_r (n × per-TB_r) / cap_r` over the DRF resources.
pub fn dominant_share(spec: &KernelSpec, n: u32, cap: &Usage) -> f64 {
    let one = per_tb(spec);
    DRF_RESOURCES
        .iter()
        .filter(|&&r| cap[r] > 0)
        .map(|&r| (u64::from(n) * one[r]) as f64 / cap[r] as f64)
        .fold(0.0, f64::max)
}

/// Spatial (spec §7, [P §4.1]): SMs per kernel out of `sms`, split evenly, the remainder to the
/// lowest kernels (16: 8/8; 6/5/5).
pub fn spatial_sms(n: usize, sms: u32) -> Vec<u32> {
    let n32 = n as u32;
    (0..n32)
        .map(|k| sms / n32 + u32::from(k < sms % n32))
        .collect()
}

/// A Warped-Slicer choice: the TBs per kernel, each kernel's `S_k(n_k)`, and the theoretical
/// weighted speedup `Σ S_k(n_k)` [P §2.5].
#[derive(Clone, Debug, PartialEq)]
pub struct SweetPoint {
    pub tbs: Vec<u32>,
    pub scaled: Vec<f64>,
    pub theoretical_ws: f64,
}

/// `S_k(n) = IPC_k(n) / IPC_k(n_max_k)` of a scalability curve `ipc[n - 1] = IPC_k(n)`,
/// `n = 1..=n_max_k` (spec §7). A curve whose last point is 0 scales to 0 everywhere.
pub fn scaled(ipc: &[f64]) -> Vec<f64> {
    let last = ipc.last().copied().unwrap_or(0.0);
    ipc.iter()
        .map(|&x| if last > 0.0 { x / last } else { 0.0 })
        .collect()
}

/// Warped-Slicer's sweet point (spec §7): among the tuples `1 ≤ n_k ≤ n_max_k` that `fits`,
/// the one maximising `min_k S_k(n_k)`, ties to the larger `Σ S_k(n_k)`, then to the
/// lexicographically larger tuple. `curves[k]` is kernel k's IPC for 1..=n_max_k TBs. None when
/// no tuple fits.
pub fn sweet_point(curves: &[Vec<f64>], fits: impl Fn(&[u32]) -> bool) -> Option<SweetPoint> {
    let s: Vec<Vec<f64>> = curves.iter().map(|c| scaled(c)).collect();
    let mut best: Option<(f64, f64, Vec<u32>)> = None;
    let mut tuple = vec![1u32; curves.len()];
    if curves.iter().any(|c| c.is_empty()) {
        return None;
    }
    loop {
        if fits(&tuple) {
            let vals = tuple.iter().enumerate().map(|(k, &n)| s[k][n as usize - 1]);
            let min = vals.clone().fold(f64::INFINITY, f64::min);
            let sum: f64 = vals.sum();
            let better = match &best {
                None => true,
                Some((bmin, bsum, bt)) => {
                    (min, sum) > (*bmin, *bsum) || ((min, sum) == (*bmin, *bsum) && tuple > *bt)
                }
            };
            if better {
                best = Some((min, sum, tuple.clone()));
            }
        }
        // Next tuple, odometer order (last kernel fastest).
        let mut k = curves.len();
        loop {
            if k == 0 {
                return best.map(|(_, sum, tbs)| SweetPoint {
                    scaled: tbs
                        .iter()
                        .enumerate()
                        .map(|(k, &n)| s[k][n as usize - 1])
                        .collect(),
                    tbs,
                    theoretical_ws: sum,
                });
            }
            k -= 1;
            if (tuple[k] as usize) < curves[k].len() {
                tuple[k] += 1;
                break;
            }
            tuple[k] = 1;
        }
    }
}

/// SMK-W's warp-instruction quota of a kernel (spec §7, [P §4]):
/// `max(1, round(IPC_alone × window))`.
pub fn smkw_quota(ipc_alone: f64, window: u32) -> u32 {
    (ipc_alone * f64::from(window)).round().max(1.0) as u32
}

#[cfg(test)]
mod tests {
    use super::super::workload::bench_named;
    use super::*;

    fn k(n: &str) -> KernelSpec {
        bench_named(n).unwrap().kernel()
    }

    #[test]
    fn isolated_occupancy_of_table2() {
        let p = PipeParams::default();
        let want = [16, 7, 16, 12, 12, 6, 6, 12, 16, 16, 16, 12, 12];
        for (b, w) in super::super::workload::BENCHES.iter().zip(want) {
            assert_eq!(isolated(&b.kernel(), &p), w, "{}", b.name);
        }
    }

    #[test]
    fn bp_sv_9_4_fits_and_10_4_overflows_threads() {
        let p = PipeParams::default();
        let ks = [k("bp"), k("sv")];
        assert_eq!(overflow(&ks, &[9, 4], &p), None);
        let o = overflow(&ks, &[10, 4], &p).unwrap();
        assert_eq!(
            (RESOURCES[o.resource], o.used, o.cap),
            ("threads", 3328, 3072)
        );
    }

    #[test]
    fn spatial_splits_16_sms() {
        assert_eq!(spatial_sms(1, 16), [16]);
        assert_eq!(spatial_sms(2, 16), [8, 8]);
        assert_eq!(spatial_sms(3, 16), [6, 5, 5]);
    }

    #[test]
    fn sweet_point_maximises_the_minimum_then_the_sum_then_the_tuple() {
        // Two kernels of at most 3 TBs each, any tuple with ≤ 4 TBs fits.
        let a = vec![0.5, 0.8, 1.0];
        let b = vec![0.6, 1.0, 1.0];
        let sp = sweet_point(&[a.clone(), b.clone()], |t| t.iter().sum::<u32>() <= 4).unwrap();
        // (2, 2): min 0.8, sum 1.8; (3, 1): min 0.6; (1, 3): min 0.5.
        assert_eq!(sp.tbs, [2, 2]);
        assert!((sp.theoretical_ws - 1.8).abs() < 1e-12);
        // Equal minimum and sum: the lexicographically larger tuple.
        let flat = vec![1.0, 1.0];
        let sp = sweet_point(&[flat.clone(), flat], |t| t.iter().sum::<u32>() <= 3).unwrap();
        assert_eq!(sp.tbs, [2, 1]);
        assert!(sweet_point(&[a, b], |_| false).is_none());
    }

    #[test]
    fn smk_p_takes_the_smallest_dominant_share_before_the_addition() {
        let p = PipeParams::default();
        // bp: 256 thr, 3072 regs, 1088 B per TB → dominant threads 1/12 per TB; sv: 192 thr,
        // 3072 regs → dominant TB slots 1/16 per TB. Shares before adding: bp n/12, sv m/16,
        // filled until 256·n + 192·m > 3072 or n + m > 16.
        assert_eq!(smk_p(&[k("bp"), k("sv")], &p), [6, 8]);
        // Alone: the isolated occupancy.
        assert_eq!(smk_p(&[k("hs")], &p), [7]);
        for ks in [[k("bp"), k("sv")], [k("sv"), k("ks")]] {
            let tbs = smk_p(&ks, &p);
            assert!(overflow(&ks, &tbs, &p).is_none());
            for extra in 0..2 {
                let mut more = tbs.clone();
                more[extra] += 1;
                assert!(overflow(&ks, &more, &p).is_some());
            }
        }
    }

    #[test]
    fn smkw_quota_rounds_with_a_floor_of_one() {
        assert_eq!(smkw_quota(0.5494, 1000), 549);
        assert_eq!(smkw_quota(0.0004, 1000), 1);
        assert_eq!(smkw_quota(1.2345, 1000), 1235);
    }
}
