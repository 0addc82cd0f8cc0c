//! What makes the scratchpad-sharing figures trustworthy (docs/scratchpad-sharing.md §8.2): the
//! headline gains per seed, the same at half the run length, and every kernel beside the
//! paper's Table 11 with the correlation and the kernels furthest off.

use super::{geomean, mean, paper, table1, Config};
use serde::Serialize;

/// The headline: Shared-OWF-OPT over the three baselines.
const HEADLINE: Config = Config::SharedOwfOpt;
/// Converged: the headline geomeans move by at most this from half the run length — the
/// tolerance they are judged against the paper with, so the length cannot decide that verdict.
pub const CONVERGED: f64 = 0.02;
/// How many kernels the comparison names as furthest from the paper.
const FURTHEST: usize = 3;

/// Shared-OWF-OPT's geomean gain over one baseline, seed by seed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Spread {
    pub baseline: Config,
    pub per_seed: Vec<f64>,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// [001] §8.1 / Fig. 20's geomean.
    pub paper: f64,
}

/// Shared-OWF-OPT's geomean gain over one baseline (mean over the seeds) at the run length
/// and at half of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Convergence {
    pub baseline: Config,
    pub full: f64,
    pub half: f64,
    /// `full − half`.
    pub moved: f64,
    /// `|moved| ≤` [`CONVERGED`].
    pub converged: bool,
    /// The kernels whose gain moved most (full − half, mean over the seeds), most first.
    pub movers: Vec<(&'static str, f64)>,
}

/// One kernel beside Table 11.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelCompare {
    pub kernel: &'static str,
    /// Shared-OWF-OPT's IPC gain over Unshared-LRR, -GTO and -2Level: ours (mean over the
    /// seeds) and the paper's.
    pub ours: [f64; 3],
    pub paper: [f64; 3],
    /// Ours over LRR: the least and the largest over the seeds.
    pub ours_lrr_min: f64,
    pub ours_lrr_max: f64,
    /// Unshared-2Level's IPC over Unshared-LRR − 1: ours, the paper's.
    pub two_level_vs_lrr: (f64, f64),
}

/// Every kernel beside Table 11.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Comparison {
    pub kernels: Vec<KernelCompare>,
    /// Pearson correlation of ours and the paper's per-kernel gains over each baseline.
    pub correlation: [f64; 3],
    /// The kernels furthest from the paper's gain over LRR (ours − paper), furthest first.
    pub furthest: Vec<(&'static str, f64)>,
}

/// The paper's geomean gain over `b`.
fn paper_geomean(b: Config) -> f64 {
    match b {
        Config::UnsharedGto => paper::GAIN_VS_GTO,
        Config::Unshared2Level => paper::GAIN_VS_2LEVEL,
        _ => paper::GAIN_VS_LRR,
    }
}

/// `geomean over kernels (IPC_headline / IPC_b) − 1` of one seed's `ipc[kernel][config]`.
fn headline(ipc: &[[f64; 7]], b: Config) -> f64 {
    let (h, b) = (super::at(HEADLINE), super::at(b));
    geomean(ipc.iter().map(|k| k[h] / k[b])) - 1.0
}

/// The headline per seed over each baseline (`ipc[seed][kernel][config]`).
pub fn spread(seeds: &[u64], ipc: &[Vec<[f64; 7]>]) -> Vec<Spread> {
    debug_assert_eq!(seeds.len(), ipc.len());
    Config::BASELINES
        .iter()
        .map(|&b| {
            let per_seed: Vec<f64> = ipc.iter().map(|s| headline(s, b)).collect();
            Spread {
                baseline: b,
                mean: mean(per_seed.iter().copied()),
                min: per_seed.iter().copied().fold(f64::INFINITY, f64::min),
                max: per_seed.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                per_seed,
                paper: paper_geomean(b),
            }
        })
        .collect()
}

/// The headline at the run length and at half of it, each the mean over the seeds.
pub fn convergence(full: &[Vec<[f64; 7]>], half: &[Vec<[f64; 7]>]) -> Vec<Convergence> {
    Config::BASELINES
        .iter()
        .map(|&b| {
            let f = mean(full.iter().map(|s| headline(s, b)));
            let h = mean(half.iter().map(|s| headline(s, b)));
            let (hi, bi) = (super::at(HEADLINE), super::at(b));
            let gain = |t: &[Vec<[f64; 7]>], k: usize| mean(t.iter().map(|s| s[k][hi] / s[k][bi]));
            let mut movers: Vec<(&'static str, f64)> = table1()
                .enumerate()
                .map(|(k, p)| (p.name, gain(full, k) - gain(half, k)))
                .collect();
            movers.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
            movers.truncate(FURTHEST);
            Convergence {
                baseline: b,
                full: f,
                half: h,
                moved: f - h,
                converged: (f - h).abs() <= CONVERGED,
                movers,
            }
        })
        .collect()
}

/// Every kernel's gains beside Table 11's, from `ipc[seed][kernel][config]`.
pub fn comparison(ipc: &[Vec<[f64; 7]>]) -> Comparison {
    let (h, lrr) = (super::at(HEADLINE), super::at(Config::UnsharedLrr));
    let two = super::at(Config::Unshared2Level);
    let kernels: Vec<KernelCompare> = table1()
        .enumerate()
        .map(|(k, p)| {
            let t = paper::TABLE11
                .iter()
                .find(|(n, _)| *n == p.name)
                .map(|(_, v)| *v)
                .expect("every Table 1 kernel is in Table 11");
            let gain = |b: Config| mean(ipc.iter().map(|s| s[k][h] / s[k][super::at(b)] - 1.0));
            let vs_lrr: Vec<f64> = ipc.iter().map(|s| s[k][h] / s[k][lrr] - 1.0).collect();
            KernelCompare {
                kernel: p.name,
                ours: Config::BASELINES.map(gain),
                paper: [t[3] / t[0] - 1.0, t[3] / t[1] - 1.0, t[3] / t[2] - 1.0],
                ours_lrr_min: vs_lrr.iter().copied().fold(f64::INFINITY, f64::min),
                ours_lrr_max: vs_lrr.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                two_level_vs_lrr: (
                    mean(ipc.iter().map(|s| s[k][two] / s[k][lrr] - 1.0)),
                    t[2] / t[0] - 1.0,
                ),
            }
        })
        .collect();
    let correlation = [0, 1, 2].map(|b| {
        pearson(
            &kernels.iter().map(|x| x.ours[b]).collect::<Vec<_>>(),
            &kernels.iter().map(|x| x.paper[b]).collect::<Vec<_>>(),
        )
    });
    let mut furthest: Vec<(&'static str, f64)> = kernels
        .iter()
        .map(|x| (x.kernel, x.ours[0] - x.paper[0]))
        .collect();
    furthest.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
    furthest.truncate(FURTHEST);
    Comparison {
        kernels,
        correlation,
        furthest,
    }
}

/// Pearson's correlation coefficient of `x` and `y` (0 when either is constant).
pub fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let (mx, my) = (mean(x.iter().copied()), mean(y.iter().copied()));
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx == 0.0 || syy == 0.0 {
        0.0
    } else {
        sxy / (sxx * syy).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pearson_of_a_line_is_one_and_of_its_mirror_minus_one() {
        let x = [1.0, 2.0, 3.0, 5.0];
        let y: Vec<f64> = x.iter().map(|v| 2.0 * v + 1.0).collect();
        let z: Vec<f64> = x.iter().map(|v| -v).collect();
        assert!((pearson(&x, &y) - 1.0).abs() < 1e-12);
        assert!((pearson(&x, &z) + 1.0).abs() < 1e-12);
        assert_eq!(pearson(&x, &[1.0; 4]), 0.0);
    }
}
