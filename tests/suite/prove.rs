//! `smrtl prove` on the command line (docs/prove.md): a proven block prints every property
//! and exits 0 without writing `--vcd`; bad input and blocks without properties are one-line
//! errors with exit 2, before any solver run; `stall_inspector` proven at NW = 4; `milg` proven
//! with `--engine smtbmc`.

use crate::common;

use common::{assert_usage_error, smrtl, stdout};

fn tools() -> bool {
    smrtl_hdl::tools::external(&smrtl_synth::prove::TOOLS)
}

#[test]
fn prove_lock_table_passes_and_writes_no_vcd() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cex = dir.path().join("cex.vcd");
    let o = smrtl(&[
        "prove",
        "lock_table",
        "--preset",
        "small",
        "--set",
        "PEND_W=2",
        "--vcd",
        cex.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.starts_with("prove lock_table ("), "{out}");
    for line in [
        "drained_on_release_0",
        "proven (BMC depth 8, induction k 1)",
        "pend_registered",
        "proven (no combinational path from an input)",
        "22 of 22 proven",
    ] {
        assert!(out.contains(line), "`{line}` in {out}");
    }
    assert!(!out.contains("FAILED"));
    assert!(!cex.exists(), "--vcd is written only on a failure");
    assert!(
        common::files(dir.path()).is_empty(),
        "no temporary file left"
    );
}

#[test]
fn prove_json_reports_each_property() {
    if !tools() {
        return;
    }
    let o = smrtl(&["prove", "lock_table", "--preset", "small", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["block"], "lock_table");
    assert_eq!(v["proven"], true);
    let outcomes = v["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 22);
    assert!(outcomes
        .iter()
        .all(|o| o["verdict"]["status"] == "proven" || o["verdict"]["status"] == "structural"));
    assert!(v["counterexample_vcd"].is_null());
}

#[test]
fn prove_rejects_bad_input_with_exit_2() {
    assert_usage_error(
        &smrtl(&["prove", "no_such_block"]),
        "unknown block `no_such_block`",
    );
    assert_usage_error(
        &smrtl(&["prove", "share_cfg"]),
        "block `share_cfg` declares no properties to prove at these params; blocks with properties: lock_table, rbmi_arb, qbmi_arb, milg, mem_issue_ctl, stall_inspector",
    );
    assert_usage_error(
        &smrtl(&["prove", "lock_table", "--set", "PEND_W=0"]),
        "PEND_W",
    );
    assert_usage_error(
        &smrtl(&["prove", "lock_table", "--vcd", "/no/such/dir/cex.vcd"]),
        "cannot write /no/such/dir/cex.vcd",
    );
    let o = smrtl(&["prove", "lock_table", "--all-configs", "--preset", "small"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "clap refuses --all-configs with --preset"
    );
}

/// `smrtl prove stall_inspector --preset nw4` (docs/prove.md §5.6): every property kind,
/// I9 included (NW ≤ 4), proven through the command (about 25 s; the default NW = 8, 32 s,
/// is the docs' slow tier, docs/stall-inspector.md §6).
#[test]
fn prove_stall_inspector_at_nw_4() {
    if !tools() {
        return;
    }
    let o = smrtl(&["prove", "stall_inspector", "--preset", "nw4", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["proven"], true);
    let outcomes = v["outcomes"].as_array().unwrap();
    let proven = |name: &str| {
        outcomes
            .iter()
            .any(|o| o["name"] == name && o["verdict"]["status"] == "proven")
    };
    for name in [
        "i1_top_sum",
        "i4_ms_sum",
        "i5_md_conservation",
        "i3_ready_not_issued",
        "i3_issued_not_ready",
        "i2_no_stall_is_inst",
        "step_top_4",
        "step_cyc_total",
        "step_md_7",
        "step_blame_3",
        "flush_amount",
        "counter_sat_meaning",
        "i9_swap_0",
        "i9_swap_1",
        "i9_swap_2",
    ] {
        assert!(proven(name), "{name} proven");
    }
    // 8 top, cyc, inst, 6 ms_sub, 6 md_sub, 4 blame, 2 flush, 4 sums, 5 status, I2, 3 I9,
    // and `status` registered.
    assert_eq!(outcomes.len(), 42);
}

/// `--engine smtbmc` (docs/prove.md §3): `milg` proven through `yosys-smtbmc` + z3 (the virtual
/// environment's z3 first), every property reported as under `sat`, and the JSON says which
/// engine; a bad `--engine` is a one-line error listing the engines, exit 2.
#[test]
fn prove_milg_with_the_smtbmc_engine() {
    assert_usage_error(
        &smrtl(&["prove", "milg", "--engine", "bogus"]),
        "invalid value 'bogus' for '--engine <ENGINE>'; allowed: sat, smtbmc",
    );
    if !smrtl_hdl::tools::external(&smrtl_synth::prove::SMTBMC_TOOLS) {
        return;
    }
    let o = smrtl(&["prove", "milg", "--engine", "smtbmc"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    for line in [
        "[yosys-smtbmc + z3]",
        "peak_restarts_at_boundary  proven (BMC depth 8, induction k",
        "mem_ok_registered          proven (no combinational path from an input)",
        "16 of 16 proven",
    ] {
        assert!(out.contains(line), "`{line}` in {out}");
    }
    let o = smrtl(&["prove", "milg", "--engine", "smtbmc", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (&v["engine"], &v["proven"]),
        (&"smtbmc".into(), &true.into())
    );
}

/// The virtual environment's z3 comes first (docs/prove.md §3): with `SMRTL_VENV` naming one
/// whose `bin/z3` is a fake that notes its arguments and fails, `--engine smtbmc` runs that z3
/// (yosys-smtbmc's PATH starts with the venv's bin) and stops with a one-line error, exit 2.
#[test]
fn smtbmc_takes_z3_from_smrtl_venv() {
    if !smrtl_hdl::tools::external(&["yosys", "yosys-smtbmc"]) {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("venv/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let z3 = bin.join("z3");
    std::fs::write(
        &z3,
        "#!/bin/sh\necho \"$@\" >> \"$(dirname \"$0\")/called\"\n\
         [ \"$1\" = --version ] && echo 'Z3 version 9.9.9 - 64 bit' && exit 0\nexit 3\n",
    )
    .unwrap();
    std::fs::set_permissions(&z3, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_smrtl"))
        .args(["prove", "rbmi_arb", "--engine", "smtbmc"])
        .env("SMRTL_VENV", dir.path().join("venv"))
        .output()
        .unwrap();
    assert_usage_error(&o, "yosys-smtbmc failed");
    let called = std::fs::read_to_string(bin.join("called")).unwrap();
    assert!(
        called.contains("-smt2"),
        "yosys-smtbmc ran the venv's z3: {called}"
    );
}
