//! `smrtl repro elastic-pipeline` (docs/elastic-pipeline.md §8 trend targets T1–T6, P §6
//! Figs. 6/7/9) at a small size: targets, the Fig.-6 SVG, determinism.

use smrtl_testbench::blocks::sm_core::workload_from_value;
use smrtl_testbench::studies::profiles::{profiles, LANES, SUBWARPS};
use smrtl_testbench::studies::repro::{self, conflict_free, Config, Options, Report};
use std::collections::BTreeMap;
use std::sync::OnceLock;

const SMALL: Options = Options { seed: 1, waves: 1 };

fn report() -> &'static Report {
    static R: OnceLock<Report> = OnceLock::new();
    R.get_or_init(|| repro::run(SMALL).expect("reproduction runs"))
}

fn holds(name: &str) {
    let t = report().target(name).expect("target present");
    assert!(t.holds, "{name}: {} | {}", t.detail, t.explanation);
    assert!(t.explanation.is_empty());
}

#[test]
fn every_kernel_has_four_configs() {
    let r = report();
    assert_eq!(r.rows.len(), profiles().len() * 4);
    assert_eq!(r.conflict_free.len(), profiles().len());
    for p in profiles() {
        let base = r.row(p.name, Config::UnifiedRr);
        assert_eq!(base.speedup, 1.0);
        assert_eq!(base.stall_reduction, 0.0);
        for c in Config::ALL {
            let x = r.row(p.name, c);
            assert_eq!(x.stalls, x.bank_conflict + x.other + x.sched_fail);
            assert_eq!(
                x.issue + x.stalls + x.idle,
                x.cycles,
                "{} {c:?}: outcomes partition the cycles",
                p.name
            );
            assert!(x.bank_conflict_first_wave <= x.bank_conflict);
            assert!((x.theoretic_speedup - p.theoretic_speedup()).abs() < 1e-12);
        }
    }
    let names: Vec<&str> = r.targets.iter().map(|t| t.name).collect();
    assert_eq!(names, ["T1", "T2", "T3", "T4", "T5", "T6"]);
    assert!(!r.notes.is_empty());
}

#[test]
fn t1_elastic_rr_gains_a_little_less_than_bcaws() {
    holds("T1");
}

/// T2 holds with the kernels' own global-memory mix (docs/elastic-pipeline.md §8.6); its verdict carries
/// the numbers; the seeds, the convergence run and the per-kernel comparison are reported.
#[test]
fn seeds_convergence_and_per_kernel_reported() {
    let r = report();
    let t2 = r.target("T2").expect("T2");
    assert!(t2.detail.contains("mean speedup") && t2.holds == t2.explanation.is_empty());
    let seeds: Vec<u64> = r.seeds.runs.iter().map(|h| h.seed).collect();
    assert_eq!(seeds, [1, 2, 3]);
    assert_eq!(r.seeds.half.waves, 1);
    let s = &r.seeds.speedup;
    assert!(s.min <= s.mean && s.mean <= s.max && s.min < s.max);
    let main = (r.summary.bcaws_speedup.mean - 1.0, r.seeds.runs[0].speedup);
    assert!((main.0 - main.1).abs() < 1e-12, "{main:?}");
    assert_eq!(r.per_kernel.kernels.len(), profiles().len());
    assert!(r.per_kernel.correlation_with_bound.abs() <= 1.0);
    assert_eq!(r.gmem_return["dram"]["seed"], 1);
}

/// T3 as a whole does not hold with the current model (see the report's explanation); its parts
/// that do hold are asserted here.
#[test]
fn t3_parts_irregular_residue_and_regular_reduction() {
    let r = report();
    for p in profiles() {
        let rr = r.row(p.name, Config::ElasticRr).bank_conflict;
        let b = r.row(p.name, Config::ElasticBcaws).bank_conflict;
        if p.irregular {
            assert!(b > 0, "{}: irregular profiles keep a residue", p.name);
        }
        assert!(
            b < rr,
            "{}: BCAWS lowers bank_conflict ({rr} -> {b})",
            p.name
        );
    }
}

/// T4 holds with the DRAM model; the masking's own effect, measured without GLD latency, too.
#[test]
fn t4_masking_raises_sched_fail() {
    holds("T4");
    let r = report();
    assert_eq!(r.sched_fail_no_icnt.len(), profiles().len());
    let rr: u64 = r.sched_fail_no_icnt.iter().map(|x| x.elastic_rr).sum();
    let b: u64 = r.sched_fail_no_icnt.iter().map(|x| x.elastic_bcaws).sum();
    assert!(b > rr, "at_writeback: Elastic+RR {rr}, Elastic+BCAWS {b}");
}

/// T5's cycle part fails with the DRAM model (warp order changes DRAM service, §8.5); its
/// trace identity holds.
#[test]
fn t5_conflict_free_bcaws_equals_rr() {
    for c in &report().conflict_free {
        assert!(c.trace_identical, "{}", c.kernel);
        assert_eq!(c.cycles_elastic_rr, c.cycles_elastic_bcaws);
    }
}

#[test]
fn t6_variant_trades_bank_conflict_for_sched_fail() {
    holds("T6");
}

#[test]
fn configs_and_conflict_free_edit_only_json() {
    let p = &profiles()[4];
    let mut w = p.workload(1, 1, LANES, SUBWARPS);
    assert_eq!(w["params"]["gmem_return"]["icnt"], 400);
    Config::ElasticBcawsVariant.apply(&mut w);
    assert_eq!(w["params"]["bcaws_policy"], "issue_if_no_nonmem");
    conflict_free(&mut w);
    let n_smem = w["warps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|x| x.as_array().unwrap())
        .filter(|i| i["op"] == "smem")
        .inspect(|i| {
            assert!(i["degrees"].as_array().unwrap().iter().all(|d| d == 1));
        })
        .count();
    assert!(n_smem > 0);
    for c in Config::ALL {
        let mut v = w.clone();
        c.apply(&mut v);
        workload_from_value(&v).expect("params accepted");
    }
}

#[test]
fn bad_waves_rejected() {
    for waves in [0, repro::MAX_WAVES + 1] {
        let e = repro::run(Options { seed: 1, waves }).unwrap_err();
        assert!(e.contains("waves") && !e.contains('\n'), "{e}");
    }
}

#[test]
fn deterministic_in_seed() {
    let again = repro::run(SMALL).expect("runs");
    assert_eq!(&again, report());
    assert_eq!(repro::text(&again), repro::text(report()));
    assert_eq!(repro::svg(&again), repro::svg(report()));
    assert_eq!(
        serde_json::to_string(&again).unwrap(),
        serde_json::to_string(report()).unwrap()
    );
}

/// Attribute `name` of one tag.
fn attr<'a>(tag: &'a str, name: &str) -> &'a str {
    let key = format!(" {name}=\"");
    let i = tag.find(&key).unwrap_or_else(|| panic!("{name} in {tag}")) + key.len();
    &tag[i..i + tag[i..].find('"').expect("closing quote")]
}

#[test]
fn svg_is_well_formed_fig6() {
    let r = report();
    let s = repro::svg(r);
    assert!(s.starts_with("<svg "));
    assert!(s.trim_end().ends_with("</svg>"));
    // Tags balance (a minimal XML check: no comments, CDATA or processing instructions here).
    let mut stack: Vec<String> = Vec::new();
    let mut rest = s.as_str();
    while let Some(i) = rest.find('<') {
        let j = rest[i..].find('>').expect("tag closes") + i;
        let tag = &rest[i + 1..j];
        assert!(!tag.contains('<'), "stray < in {tag}");
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name), "closing {name}");
        } else if !tag.ends_with('/') {
            let name = tag.split_whitespace().next().expect("tag name");
            stack.push(name.to_string());
        }
        rest = &rest[j + 1..];
    }
    assert!(stack.is_empty(), "unclosed {stack:?}");
    assert!(!s.contains("NaN") && !s.contains("inf"));

    // One <rect class="seg"> per kernel × config × category.
    let segs: Vec<&str> = s
        .split('<')
        .filter(|t| t.starts_with("rect class=\"seg\""))
        .collect();
    let kernels = r.kernels();
    assert_eq!(segs.len(), kernels.len() * 4 * 3);
    let mut sums: BTreeMap<(String, String), f64> = BTreeMap::new();
    for t in &segs {
        let v: f64 = attr(t, "data-value").parse().expect("number");
        let h: f64 = attr(t, "height").parse().expect("number");
        assert!(v >= 0.0 && h >= 0.0);
        *sums
            .entry((attr(t, "data-kernel").into(), attr(t, "data-config").into()))
            .or_default() += v;
    }
    for k in &kernels {
        let base = sums[&(k.to_string(), "unified_rr".to_string())];
        assert!((base - 1.0).abs() < 1e-5, "{k}: baseline bar {base}");
        let b = sums[&(k.to_string(), "elastic_bcaws".to_string())];
        let want = r.row(k, Config::ElasticBcaws).stalls as f64
            / r.row(k, Config::UnifiedRr).stalls as f64;
        assert!((b - want).abs() < 1e-5, "{k}: {b} vs {want}");
    }
}

/// Through the result cache: the first run computes every job, the second reuses all of them
/// and gives the same report (docs/elastic-pipeline.md §8).
#[test]
fn the_result_cache_gives_the_same_report() {
    let dir = tempfile::tempdir().unwrap();
    let first = repro::run_cached(SMALL, Some(dir.path())).unwrap();
    let again = repro::run_cached(SMALL, Some(dir.path())).unwrap();
    let (reused, computed) = first.cache;
    assert_eq!(reused, 0);
    assert!(computed > 0);
    assert_eq!(again.cache, (computed, 0));
    let json = |r: &Report| serde_json::to_string(r).unwrap();
    assert_eq!(json(&first), json(&again));
    assert_eq!(json(&first), json(report()));
}
