//! `ShareCfg` (docs/scratchpad-sharing.md §2.2): directed spec tests on the model and rusthdl
//! (reset values, writes at the edge, dropped writes to slot ids ≥ T, every `err_cfg` cause,
//! Example 3.3's launch table) and the reach of the random stimulus. Random co-simulation on
//! every backend, lint, Icarus, synthesis and the flip-flop inventory are the conformance
//! suite's (`tests/conformance.rs`).

use proptest::strategy::{Strategy, ValueTree};
use smrtl_cosim::blocks::share_cfg::Table;
use smrtl_cosim::kernel::launch::{launch, Inputs as LaunchInputs, Launch};
use smrtl_hdl::blocks::share_cfg::port::Inputs;
use smrtl_hdl::blocks::share_cfg::Params;
use smrtl_hdl::BlockParams;
use smrtl_testbench::blocks::share_cfg::{launch_writes, slot_write, writes};
use smrtl_testbench::check;

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).unwrap()
}

/// The registered table and `err_cfg` seen in each cycle of `writes`, on the model and on
/// rusthdl (every output asserted equal).
fn run(p: &Params, writes: &[Inputs]) -> Vec<(Table, bool)> {
    check::directed(p, writes)
        .into_iter()
        .map(|o| {
            let mut t = Table::new(&p.shape());
            (t.shsm, t.u) = (o.shsm, o.u);
            t.shtb.copy_from_slice(&o.shtb);
            t.base.copy_from_slice(&o.base);
            (t, o.err_cfg)
        })
        .collect()
}

fn idle() -> Inputs {
    Inputs::default()
}

fn reset() -> Inputs {
    Inputs {
        reset: true,
        ..Inputs::default()
    }
}

#[test]
fn reset_values_and_writes_at_the_edge() {
    let p = Params::default();
    let none = p.shape().none();
    let writes = [
        Inputs {
            cfg_shsm_we: true,
            cfg_shsm: true,
            cfg_u_we: true,
            cfg_u: 220,
            ..slot_write(3, 11, 7188)
        },
        idle(),
        // Enables low: the data ports are ignored.
        Inputs {
            cfg_shsm: false,
            cfg_u: 5,
            cfg_slot: 3,
            cfg_partner: 1,
            cfg_base: 1,
            ..Inputs::default()
        },
        reset(),
        idle(),
    ];
    let seen = run(&p, &writes);
    let reset_table = Table::new(&p.shape());
    assert_eq!(seen[0], (reset_table.clone(), false), "reset values (§2.1)");
    for (c, (t, err)) in seen.iter().enumerate().take(4).skip(1) {
        assert!(t.shsm, "cycle {c}");
        assert_eq!(t.u, 220);
        assert_eq!((t.shtb[3], t.base[3]), (11, 7188));
        assert!(t.shtb.iter().enumerate().all(|(s, &e)| s == 3 || e == none));
        assert!(*err, "3 -> 11 without 11 -> 3 is a half-built pairing");
    }
    assert_eq!(seen[4], (reset_table, false), "reset clears everything");
}

#[test]
fn writes_to_slot_ids_past_t_are_dropped() {
    // T = 6: SW = 3, so slot ids 6 and 7 exist on the port but not in the table.
    let p = params("small", &[("T", "6")]);
    let seen = run(&p, &[slot_write(6, 0, 9), slot_write(7, 1, 9), idle()]);
    let empty = Table::new(&p.shape());
    assert!(seen.iter().all(|x| *x == (empty.clone(), false)));
}

/// `err_cfg` after writing `entries` (slot, partner), T = 6 (KP = 3, NONE = 7).
fn err_after(entries: &[(u64, u64)]) -> bool {
    let p = params("small", &[("T", "6")]);
    let mut writes: Vec<Inputs> = entries.iter().map(|&(s, e)| slot_write(s, e, 0)).collect();
    writes.push(idle());
    run(&p, &writes).last().unwrap().1
}

#[test]
fn err_cfg_flags_every_invalid_pairing() {
    // ShSM stays 0 here: err_cfg checks the table whatever ShSM says.
    assert!(!err_after(&[]), "all NONE");
    assert!(!err_after(&[(0, 3), (3, 0)]), "0 <-> 3: pair 0");
    assert!(!err_after(&[(2, 5), (5, 2)]), "2 <-> 5: pair 2 < KP");
    assert!(
        !err_after(&[(0, 4), (4, 0), (1, 3), (3, 1), (2, 5), (5, 2)]),
        "three pairs"
    );
    assert!(err_after(&[(0, 3)]), "asymmetric: 3 is NONE");
    assert!(err_after(&[(0, 3), (3, 1)]), "asymmetric: 3 names 1");
    assert!(err_after(&[(1, 1)]), "paired with itself");
    assert!(err_after(&[(0, 6)]), "partner 6 >= T, not NONE");
    assert!(err_after(&[(3, 4), (4, 3)]), "min(3, 4) = 3 >= KP");
    assert!(
        !err_after(&[(4, 1), (1, 4)]),
        "pair 1 written from its upper slot first"
    );
}

/// The paper's 16 KB SM (16 slots, 3072 threads) at t = 1/10 for TBs of `r_tb` bytes.
fn paper_launch(r_tb: u64, threads: u64) -> Launch {
    launch(&LaunchInputs {
        smem: 16384,
        tb_smem: r_tb,
        tb_threads: threads,
        max_tbs: 16,
        max_threads: 3072,
        t: "1/10".parse().unwrap(),
        reg_limit: None,
        align: 4,
    })
}

#[test]
fn example_3_3_launch_table() {
    // DCT3: R_tb = 2176, 5 pairs + 2 unshared, u = 220 (spec §1.2, A2).
    let l = paper_launch(2176, 128);
    assert_eq!((l.m_sp, l.pairs, l.unshared, l.n, l.u), (7, 5, 2, 12, 220));
    let p = Params::default();
    let want = Table::launched(&p.shape(), &l, 2176);
    let mut writes = launch_writes(&want);
    writes.push(idle());
    let seen = run(&p, &writes);
    let (got, err) = seen.last().unwrap();
    assert_eq!(got, &want);
    assert!(!err);
    // §1.4: pair k at k·2396 (lower slot k) and k·2396 + 220 (upper slot 7 + k); unshared
    // slots 5 and 6 at 5·2396 + (j − 5)·2176.
    for k in 0..5 {
        assert_eq!((got.shtb[k], got.shtb[7 + k]), (7 + k as u64, k as u64));
        assert_eq!(got.base[k], k as u64 * 2396);
        assert_eq!(got.base[7 + k], k as u64 * 2396 + 220);
    }
    for j in 5..7 {
        assert_eq!(got.shtb[j], p.shape().none());
        assert_eq!(got.base[j], 5 * 2396 + (j as u64 - 5) * 2176);
    }
    assert_eq!(5 * 2396 + 2 * 2176, l.layout_bytes);
    assert_eq!(l.layout_bytes, 16332);
    // Half-way through the slot writes the table is half-built: err_cfg is up.
    assert!(seen[1 + 8].1, "slots 0..=7 written: 1 -> 8 without 8 -> 1");
}

/// The random cases reach valid pairings (with pairs and ShSM = 1) as well as the invalid
/// tables of half-built launches, at both presets.
#[test]
fn random_stimulus_reaches_valid_and_invalid_tables() {
    for preset in ["paper", "small"] {
        let p = params(preset, &[]);
        let n = 20_000;
        let mut runner = check::runner(9);
        let strategy = writes(&p.shape());
        let mut case = vec![];
        while case.len() < n {
            case.extend(strategy.new_tree(&mut runner).unwrap().current());
        }
        case.truncate(n);
        let seen = run(&p, &case);
        let invalid = seen.iter().filter(|(_, err)| *err).count();
        let sharing = seen
            .iter()
            .filter(|(t, err)| !err && t.shsm && t.shtb.iter().any(|&e| e != t.none))
            .count();
        println!("{preset}: {invalid} invalid, {sharing} valid sharing tables in {n} cycles");
        assert!(invalid > n / 10 && sharing > n / 20, "{preset}");
    }
}
