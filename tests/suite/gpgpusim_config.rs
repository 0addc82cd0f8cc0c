//! GPGPU-Sim configurations in (docs/gpgpusim.md), through the CLI: the shipped Fermi and
//! Kepler files map knob by knob, a mapped run equals the same run with the `--set` pairs the
//! mapping shows, every command that takes `--gpgpusim-config` takes it, an explicit `--set`
//! wins, and every contradiction is one line naming the knob, its line and the allowed values.

use crate::common;

use common::{assert_usage_error, files, smrtl, smrtl_in, stdout};
use serde_json::Value;
use std::fs;

const GTX480: &str = "examples/gpgpusim/gtx480.config";
const KEPLER: &str = "examples/gpgpusim/kepler.config";

/// `smrtl config --from-gpgpusim FILE NAME --json`: the target's settings as (param, value).
fn settings(file: &str, target: &str) -> Vec<(String, String)> {
    let o = smrtl(&["config", "--from-gpgpusim", file, target, "--json"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    v["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let text = |k: &str| s[k].as_str().unwrap().to_string();
            (text("parameter"), text("value"))
        })
        .collect()
}

fn sorted(mut v: Vec<(String, String)>) -> Vec<(String, String)> {
    v.sort();
    v
}

/// What `file` sets in `target` is exactly `expected` (in any order).
fn assert_sets(file: &str, target: &str, expected: &[(&str, &str)]) {
    let expected = expected
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(sorted(settings(file, target)), sorted(expected), "{target}");
}

#[test]
fn the_shipped_configurations_map_knob_by_knob() {
    // Fermi: 32 banks of GPGPU-Sim's 4-byte words, unlimited broadcast, whole-warp accesses.
    assert_sets(
        GTX480,
        "bank_conflict_detector",
        &[("B", "32"), ("L", "32"), ("MODE", "multicast"), ("W", "4")],
    );
    assert_sets(
        GTX480,
        "sharing_sm",
        &[
            ("LANES", "32"),
            ("NSCHED", "2"),
            ("R", "49152"),
            ("SCHED", "GTO"),
            ("T", "8"),
            ("W", "48"),
        ],
    );
    assert_sets(GTX480, "stall_inspector", &[("IW", "2"), ("NW", "48")]);
    // No -gpgpu_concurrent_kernel_sm: GPGPU-Sim's default runs one kernel per SM.
    assert_sets(GTX480, "mem_issue_ctl", &[("N", "1")]);
    assert_sets(
        GTX480,
        "coh_sm",
        &[
            ("l1_banks", "1"),
            ("l1_sets", "32"),
            ("l1_ways", "4"),
            ("max_merge", "8"),
            ("mq_depth", "8"),
            ("mshrs", "64"),
            ("sms", "15"),
            ("warps", "48"),
        ],
    );
    // Kepler: the sector L1D string with its fifth field, four schedulers issuing two each.
    assert_sets(
        KEPLER,
        "mem_sm",
        &[
            ("l1d_sets", "4"),
            ("l1d_ways", "32"),
            ("max_merge", "8"),
            ("max_regs", "65536"),
            ("max_smem", "49152"),
            ("max_threads", "2048"),
            ("max_tbs", "16"),
            ("max_warps", "64"),
            ("mq_depth", "16"),
            ("mshrs", "256"),
            ("sched", "gto"),
            ("set_index", "linear"),
        ],
    );
    assert_sets(KEPLER, "stall_inspector", &[("IW", "8"), ("NW", "64")]);
}

#[test]
fn the_listing_shows_knob_quantity_parameters_and_every_ignored_knob_with_its_reason() {
    let o = smrtl(&["config", "--from-gpgpusim", GTX480]);
    assert!(o.status.success());
    let text = stdout(&o);
    for needle in [
        "-gpgpu_shmem_num_banks 32 (line 100)",
        "-> bank_conflict_detector.B, elastic_pipeline.B, sm_core.B",
        "-gpgpu_concurrent_kernel_sm 0 (GPGPU-Sim's default)",
        "line 33   -gpgpu_clock_domains",
        "clock frequencies: smrtl counts cycles",
        "line 82   -gpgpu_cache:dl2",
    ] {
        assert!(text.contains(needle), "`{needle}` in:\n{text}");
    }
    // Every option of the file is accounted for: mapped, or ignored with a reason.
    let v: Value = serde_json::from_str(&stdout(&smrtl(&[
        "config",
        "--from-gpgpusim",
        GTX480,
        "--json",
    ])))
    .unwrap();
    let ignored = v["ignored"].as_array().unwrap();
    let stat = ignored
        .iter()
        .find(|i| i["knob"] == "-gpgpu_runtime_stat")
        .unwrap();
    assert_eq!(stat["line"], 156);
    assert!(
        stat["reason"].as_str().unwrap().starts_with("statistics"),
        "{stat}"
    );
    assert!(ignored
        .iter()
        .all(|i| !i["reason"].as_str().unwrap().is_empty()));
    let mapped_given = 13;
    assert_eq!(ignored.len() + mapped_given, 80, "80 options in {GTX480}");
}

#[test]
fn a_mapped_run_equals_the_run_with_the_sets_the_mapping_shows() {
    let dir = tempfile::tempdir().unwrap();
    let with = dir.path().join("with.v");
    let by_hand = dir.path().join("by_hand.v");
    let root = env!("CARGO_MANIFEST_DIR");
    let o = smrtl_in(
        dir.path(),
        &[
            "gen",
            "stall_inspector",
            "--gpgpusim-config",
            &format!("{root}/{KEPLER}"),
            "-o",
            with.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let o = smrtl_in(
        dir.path(),
        &[
            "gen",
            "stall_inspector",
            "--set",
            "NW=64",
            "--set",
            "IW=8",
            "-o",
            by_hand.to_str().unwrap(),
        ],
    );
    assert!(o.status.success());
    let strip = |p: &std::path::Path| -> String {
        // The header names the output file; the designs must be the same bytes otherwise.
        fs::read_to_string(p)
            .unwrap()
            .lines()
            .filter(|l| !l.contains(".v"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&with), strip(&by_hand));

    // A system: the model's report equals the one with the sets written out.
    let sets = settings(KEPLER, "mem_sm");
    let mut args: Vec<String> = ["sim", "--system", "mem_sm", "--profile", "bp", "--json"]
        .map(String::from)
        .to_vec();
    let mapped = stdout(&smrtl(
        &[&args[..], &["--gpgpusim-config".into(), KEPLER.into()]]
            .concat()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    ));
    for (k, v) in &sets {
        args.extend(["--set".into(), format!("{k}={v}")]);
    }
    let by_hand = stdout(&smrtl(&args.iter().map(String::as_str).collect::<Vec<_>>()));
    assert!(mapped.contains("\"cycles\": 100000"), "{mapped}");
    assert_eq!(mapped, by_hand);
}

#[test]
fn every_command_takes_it_and_an_explicit_set_wins() {
    // list: one line per block with what the file sets, or why it is refused.
    let text = stdout(&smrtl(&["list", "--gpgpusim-config", GTX480]));
    assert!(
        text.contains("  bank_conflict_detector  L=32 B=32 W=4 MODE=multicast"),
        "{text}"
    );
    assert!(
        text.contains("  sm_core                 refused: "),
        "{text}"
    );
    let text = stdout(&smrtl(&["list", "--systems", "--gpgpusim-config", KEPLER]));
    assert!(
        text.contains("  mem_sm      sched=gto l1d_sets=4"),
        "{text}"
    );
    let v: Value = serde_json::from_str(&stdout(&smrtl(&[
        "list",
        "--json",
        "--gpgpusim-config",
        GTX480,
    ])))
    .unwrap();
    assert_eq!(v[0]["gpgpusim"]["sets"][1], "B=32");

    // sweep: the mapped parameters as one-value axes, the spec's own axis winning.
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.json");
    fs::write(
        &spec,
        r#"{"system": "coh_sm", "inputs": ["examples/coh/small.coh"], "params": {"warps": [8]}}"#,
    )
    .unwrap();
    let o = smrtl(&["sweep", spec.to_str().unwrap(), "--gpgpusim-config", GTX480]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let csv = stdout(&o);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let at = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!((at("sms"), at("l1_ways"), at("warps")), ("15", "4", "8"));

    // An explicit --set wins over the file, and lifts a refusal.
    let o = smrtl(&[
        "sim",
        "--system",
        "mem_sm",
        "--profile",
        "bp",
        "--gpgpusim-config",
        GTX480,
    ]);
    assert_usage_error(
        &o,
        "gives mem_sm's set_index = fermi_hash; allowed: xor, linear",
    );
    let o = smrtl(&[
        "sim",
        "--system",
        "mem_sm",
        "--profile",
        "bp",
        "--gpgpusim-config",
        GTX480,
        "--set",
        "set_index=xor",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));

    // synth and cosim take it as gen does (one block argument set).
    for cmd in ["synth", "cosim", "run"] {
        let help = stdout(&smrtl(&[cmd, "--help"]));
        assert!(help.contains("--gpgpusim-config <FILE>"), "{cmd}: {help}");
    }
    let o = smrtl(&[
        "cosim",
        "bank_conflict_detector",
        "--gpgpusim-config",
        GTX480,
        "--set",
        "MODE=gpgpusim4-limited",
        "--cycles",
        "2000",
        "--json",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["cycles"].as_u64().unwrap() >= 2000, "{v}");
    assert_eq!(v["mismatches"], 0, "{v}");
    assert_eq!(v["params"]["B"], 32, "{v}");
}

/// `text` as a configuration in a scratch directory, and the directory.
fn config(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gpu.config");
    fs::write(&path, text).unwrap();
    let p = path.display().to_string();
    (dir, p)
}

#[test]
fn limited_broadcast_picks_the_4x_rule_and_contradictions_are_one_line() {
    let (_d, on) = config("-gpgpu_shmem_num_banks 16\n-gpgpu_shmem_limited_broadcast 1\n");
    let s = settings(&on, "bank_conflict_detector");
    assert!(
        s.contains(&("MODE".into(), "gpgpusim4-limited".into())),
        "{s:?}"
    );
    // GPGPU-Sim's default warp parts (2) halve the 32-thread warp.
    assert!(s.contains(&("L".into(), "16".into())), "{s:?}");

    let cases: &[(&str, &str, &str)] = &[
        (
            "-gpgpu_shmem_num_banks 64\n",
            "bank_conflict_detector",
            "(line 1: -gpgpu_shmem_num_banks 64) gives bank_conflict_detector's B = 64; allowed: 8, 16, 32 (or give --set B=VALUE)",
        ),
        (
            "# Fermi\n-gpgpu_shader_core_pipeline 1000:32\n",
            "mem_sm",
            "line 2: -gpgpu_shader_core_pipeline 1000:32: allowed: <threads per SM>:<warp size>",
        ),
        (
            "-gpgpu_shmem_limited_broadcast 2\n",
            "bank_conflict_detector",
            "line 1: -gpgpu_shmem_limited_broadcast 2: not a flag; allowed: 0, 1",
        ),
        (
            "-gpgpu_shmem_num_banks 3x\n",
            "bank_conflict_detector",
            "-gpgpu_shmem_num_banks 3x: not an unsigned integer",
        ),
        (
            "-gpgpu_n_clusters 15\n-gpgpu_n_cores_per_cluster 1\n-gpgpu_cache:dl1 N:64:64:4,L:L:m:N:L,A:32:8,8\n",
            "coh_sm",
            "coh_sm's l1_sets (L1D sets) has no value here: its L1D lines are 64 B",
        ),
        ("", "mem_sm", "has no value here: the GPU has no L1 data cache"),
        (
            "",
            "coh_sm",
            "(-gpgpu_n_clusters 10 (GPGPU-Sim's default), -gpgpu_n_cores_per_cluster 3 (GPGPU-Sim's default)) gives coh_sm's sms = 30; allowed: 1..=16",
        ),
        (
            "-gpgpu_scheduler two_level_active:0:0:1\n",
            "warp_scheduler",
            "allowed: two_level_active:<active warps>:<inner>:<outer>",
        ),
        (
            "-gpgpu_dram_timing_opt \"nbk=16:CCD=2\n",
            "mem_sm",
            "line 1: a quoted value is not closed",
        ),
        ("stray\n", "mem_sm", "line 1: `stray` is not an option"),
    ];
    for (text, target, needle) in cases {
        let (dir, path) = config(text);
        assert_usage_error(
            &smrtl(&["config", "--from-gpgpusim", &path, target]),
            needle,
        );
        // gen refuses it before writing anything.
        if smrtl_hdl_block(target) {
            let out = dir.path().join("out.v");
            let before = files(dir.path());
            assert_usage_error(
                &smrtl(&[
                    "gen",
                    target,
                    "--gpgpusim-config",
                    &path,
                    "-o",
                    out.to_str().unwrap(),
                ]),
                needle,
            );
            assert_eq!(files(dir.path()), before, "nothing written");
        }
    }
    // Two-level active with its warps.
    let (_d, tla) = config("-gpgpu_scheduler two_level_active:6:0:1\n");
    let s = settings(&tla, "warp_scheduler");
    assert!(
        s.contains(&("SCHED".into(), "TWO_LEVEL_ACTIVE".into())),
        "{s:?}"
    );
    assert!(s.contains(&("TL_ACTIVE".into(), "6".into())), "{s:?}");
    assert_usage_error(
        &smrtl(&["config", "--from-gpgpusim", GTX480, "no_such"]),
        "unknown block or system `no_such`; allowed: bank_conflict_detector,",
    );
    assert_usage_error(
        &smrtl(&["config", "--from-gpgpusim", "no/such.config"]),
        "cannot read no/such.config",
    );
}

/// Whether `name` is a block (`gen` takes it) rather than a system.
fn smrtl_hdl_block(name: &str) -> bool {
    !name.ends_with("_sm")
}
