//! Seed 001's evaluation (docs/scratchpad-sharing.md §8): spec A23 on the paper's own tables, the
//! synthetic Table 1 kernels (shape, launch, Table 4 pattern on the SM model) and the shipped
//! profile files.

use smrtl_cosim::sm::sharing_sm::SmParams;
use smrtl_testbench::studies::sharing_profiles::{profile, Extra, Set, PROFILES};
use smrtl_testbench::studies::sharing_repro::{geomean_gain, grid, paper, run_one, Config};

/// A23: the §8 metric (geomean of ratios) on Table 11 gives the paper's 19.01 %, 17.73 % and
/// 18.08 %; the arithmetic mean would be 21.4 %.
#[test]
fn a23_table11_geomean_gives_the_papers_averages() {
    let gain = |base: usize| geomean_gain(paper::TABLE11.iter().map(|(_, v)| (v[3], v[base])));
    let close = |x: f64, y: f64| (x - y).abs() < 5e-5;
    assert!(close(gain(0), paper::GAIN_VS_LRR), "{}", gain(0));
    assert!(close(gain(1), paper::GAIN_VS_GTO), "{}", gain(1));
    assert!(close(gain(2), paper::GAIN_VS_2LEVEL), "{}", gain(2));
    let arith = paper::TABLE11
        .iter()
        .map(|(_, v)| v[3] / v[0] - 1.0)
        .sum::<f64>()
        / 14.0;
    assert!((arith - 0.214).abs() < 5e-4, "{arith}");
    let (k, max) = paper::TABLE11
        .iter()
        .map(|(k, v)| (*k, v[3] / v[0] - 1.0))
        .fold(("", f64::MIN), |a, b| if b.1 > a.1 { b } else { a });
    assert_eq!(k, paper::GAIN_MAX_KERNEL);
    assert!(close(max, paper::GAIN_MAX), "{max}");
}

/// A23: Table 4's `extra` column follows from its numbers: (SO − U) / threads is exactly 1,
/// exactly 2, or mixed.
#[test]
fn a23_table4_delta_patterns() {
    let printed = [
        "m", "1", "1", "m", "m", "m", "1", "1", "2", "2", "2", "2", "1", "1",
    ];
    for ((k, [threads, u, so]), want) in paper::TABLE4.iter().zip(printed) {
        assert_eq!(Extra::classify(so - u, *threads).label(), want, "{k}");
        let prof = profile(k).unwrap();
        assert_eq!(prof.paper_extra.map(Extra::label), Some(want), "{k}");
    }
}

/// Every Table 1 kernel launches Table 1's resident TBs at 16 KB (A1's counts), and the Set-3
/// controls never share.
#[test]
fn profiles_launch_table1s_resident_tbs() {
    let sm = SmParams::default();
    for p in PROFILES {
        let l = sm.launch(p.r_tb, p.threads);
        if p.set == Set::Three {
            assert_eq!(l.shsm, 0, "{}", p.name);
        } else {
            assert_eq!((l.base as u32, l.n as u32), p.paper_tbs, "{}", p.name);
        }
    }
}

/// Table 4's pattern on the SM model: OPT adds exactly one instruction per thread to a
/// straight Set-1 kernel, a mix of one and two where some warps skip the shared phase, and
/// nothing under the unshared baseline.
#[test]
fn opt_adds_table4s_instructions_on_the_model() {
    for (name, want) in [("DCT1", Extra::One), ("DCT3", Extra::Mixed)] {
        let p = profile(name).unwrap();
        let g = grid(p, 1);
        let u = run_one(p, Config::UnsharedLrr, g, 1, &[]).unwrap();
        let so = run_one(p, Config::SharedOwfOpt, g, 1, &[]).unwrap();
        assert!(so.compiled && !u.compiled, "{name}");
        let threads = u64::from(g * p.threads);
        let extra = so.thread_instructions - u.thread_instructions;
        assert_eq!(
            Extra::classify(extra, threads),
            want,
            "{name}: {extra} over {threads}"
        );
        assert!(
            extra > 0 && extra < 2 * threads || want != Extra::Mixed,
            "{name}"
        );
    }
}

/// The shipped profile files are the generator's output at one wave and seed 1 (regenerate
/// with `SMRTL_BLESS=1`).
#[test]
fn shipped_profile_files_match_the_generator() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/sharing/profiles");
    for p in PROFILES {
        let text = p.program(grid(p, 1), 1);
        let path = dir.join(format!("{}.txt", p.name));
        if std::env::var_os("SMRTL_BLESS").is_some() {
            std::fs::write(&path, &text).unwrap();
        }
        let shipped =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(shipped, text, "{} is stale", path.display());
    }
}

/// The SM model's idle skip (docs/scratchpad-sharing.md §8.2) changes nothing but speed: every
/// profile under every configuration gives the same statistics, TB lifetimes included, with
/// the skip on and off (two waves, so TBs retire and launch while others wait).
#[test]
fn the_idle_skip_changes_no_statistic() {
    use smrtl_cosim::sm::sharing_sm::{load_kernel, SharingSm};
    let mut skipped = 0;
    for p in PROFILES {
        for c in Config::ALL {
            let (k, params, _) = load_kernel(&p.program(grid(p, 2), 3), &c.sets()).unwrap();
            let run = |skip: bool| {
                let mut sm = SharingSm::new(&params, &k).unwrap();
                sm.set_skip(skip);
                sm.run(None).unwrap()
            };
            let (on, off) = (run(true), run(false));
            assert_eq!(on, off, "{} {}", p.name, c.label());
            skipped += u64::from(on.cycles > 0);
        }
    }
    assert_eq!(skipped, (PROFILES.len() * Config::ALL.len()) as u64);
}

/// heartwall's touch is spread over the warps, not a coin: its runs are the same whatever the
/// seed (docs/scratchpad-sharing.md §8.1).
#[test]
fn heartwall_does_not_depend_on_the_seed() {
    let p = profile("heartwall").unwrap();
    assert!(!p.has_coin());
    let a = run_one(p, Config::SharedOwfOpt, grid(p, 2), 1, &[]).unwrap();
    let b = run_one(p, Config::SharedOwfOpt, grid(p, 2), 7, &[]).unwrap();
    assert_eq!(a, b);
    assert!(profile("backprop").unwrap().has_coin());
}
