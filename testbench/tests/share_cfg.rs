//! `ShareCfg` (docs/scratchpad-sharing.md §2.2): directed spec tests on the model and rusthdl
//! (reset values, writes at the edge, dropped writes to slot ids ≥ T, every `err_cfg` cause,
//! Example 3.3's launch table), then random co-simulation on rusthdl and Verilator.

use smrtl_cosim::blocks::share_cfg::{Table, TablePorts};
use smrtl_cosim::harness::backend::{rusthdl::RustHdl, verilator::VerilatorLib};
use smrtl_cosim::kernel::launch::{launch, Inputs, Launch};
use smrtl_hdl::blocks::share_cfg::{port, Params};
use smrtl_hdl::BlockParams;
use smrtl_testbench::blocks::share_cfg::{encode, ShareCfgBench, Write};
use smrtl_testbench::check::{self, run_vectors};
use smrtl_testbench::{external, Design};

fn design(preset: &str, sets: &[(&str, &str)]) -> Design {
    Design::old::<ShareCfgBench>(&Params::resolve_pairs(Some(preset), sets).unwrap())
}

/// The registered table and `err_cfg` seen in each cycle of `writes`, on the model and on
/// rusthdl (asserted equal).
fn run(d: &Design, writes: &[Write]) -> Vec<(Table, bool)> {
    let case: Vec<Vec<u64>> = writes.iter().map(|w| encode(&d.layout, w)).collect();
    let model = run_vectors(d, None, &case, None);
    let mut rtl = RustHdl::new(d.module.clone());
    let both = run_vectors(d, Some(&mut rtl), &case, None);
    assert!(both.mismatch.is_none(), "{:?}", both.mismatch);
    assert_eq!(model.outputs, both.outputs, "model and rusthdl");
    let p: Params = serde_json::from_value(d.params.clone()).unwrap();
    let outs = TablePorts::new(&p.shape(), |n| d.layout.output(n).cloned());
    both.outputs
        .iter()
        .map(|o| {
            let mut t = Table::new(&p.shape());
            outs.read(o, &mut t);
            (t, d.layout.read_out(o, port::ERR_CFG) == 1)
        })
        .collect()
}

fn idle() -> Write {
    Write::default()
}

fn reset() -> Write {
    Write {
        reset: true,
        ..Write::default()
    }
}

#[test]
fn reset_values_and_writes_at_the_edge() {
    let d = design("paper", &[]);
    let p = Params::default();
    let none = p.shape().none();
    let writes = [
        Write {
            shsm_we: true,
            shsm: true,
            u_we: true,
            u: 220,
            ..Write::slot(3, 11, 7188)
        },
        idle(),
        // Enables low: the data ports are ignored.
        Write {
            shsm: false,
            u: 5,
            slot: 3,
            partner: 1,
            base: 1,
            ..Write::default()
        },
        reset(),
        idle(),
    ];
    let seen = run(&d, &writes);
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
    let d = design("small", &[("T", "6")]);
    let seen = run(&d, &[Write::slot(6, 0, 9), Write::slot(7, 1, 9), idle()]);
    let empty = Table::new(
        &Params::resolve_pairs(Some("small"), &[("T", "6")])
            .unwrap()
            .shape(),
    );
    assert!(seen.iter().all(|x| *x == (empty.clone(), false)));
}

/// `err_cfg` after writing `entries` (slot, partner), T = 6 (KP = 3, NONE = 7).
fn err_after(entries: &[(u64, u64)]) -> bool {
    let d = design("small", &[("T", "6")]);
    let mut writes: Vec<Write> = entries.iter().map(|&(s, e)| Write::slot(s, e, 0)).collect();
    writes.push(idle());
    run(&d, &writes).last().unwrap().1
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
    launch(&Inputs {
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
    let mut writes = Write::table(&want);
    writes.push(idle());
    let seen = run(&design("paper", &[]), &writes);
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

const CYCLES: u64 = 100_000;

fn random_rusthdl(d: &Design, seed: u64) {
    check::assert_random_on_rusthdl(d, CYCLES, seed);
}

#[test]
fn random_rusthdl_paper() {
    random_rusthdl(&design("paper", &[]), 1);
}

#[test]
fn random_rusthdl_small_and_odd_t() {
    random_rusthdl(&design("small", &[]), 2);
    // T = 6: slot ids 6, 7 on the port, ShTB values 6 (no such slot) besides NONE = 7.
    random_rusthdl(&design("small", &[("T", "6")]), 3);
}

#[test]
fn random_verilator_small() {
    if !external("verilator") {
        return;
    }
    let d = design("small", &[]);
    let lib = VerilatorLib::load(&d.module, &d.verilog()).unwrap();
    let factory = || Box::new(lib.instance().unwrap()) as Box<dyn smrtl_cosim::Rtl>;
    let r = check::random(&d, &factory, 5_000, 4);
    assert!(r.failure.is_none(), "{:?}", r.failure.map(|f| f.mismatch));
    assert!(r.cycles >= 5_000);
}

/// The random cases reach valid pairings (with pairs and ShSM = 1) as well as the invalid
/// tables of half-built launches, at both presets.
#[test]
fn random_stimulus_reaches_valid_and_invalid_tables() {
    for preset in ["paper", "small"] {
        let d = design(preset, &[]);
        let n = 20_000;
        let case = check::first_cycles(&d, 9, n);
        let seen = run(&d, &case_writes(&d, &case));
        let invalid = seen.iter().filter(|(_, err)| *err).count();
        let sharing = seen
            .iter()
            .filter(|(t, err)| !err && t.shsm && t.shtb.iter().any(|&e| e != t.none))
            .count();
        println!("{preset}: {invalid} invalid, {sharing} valid sharing tables in {n} cycles");
        assert!(invalid > n / 10 && sharing > n / 20, "{preset}");
    }
}

/// `case`'s input buffers read back as writes (for [`run`]).
fn case_writes(d: &Design, case: &[Vec<u64>]) -> Vec<Write> {
    let get = |buf: &[u64], n: &str| d.layout.in_slot(n).get(buf);
    case.iter()
        .map(|b| Write {
            reset: get(b, "reset") == 1,
            shsm_we: get(b, port::CFG_SHSM_WE) == 1,
            shsm: get(b, port::CFG_SHSM) == 1,
            u_we: get(b, port::CFG_U_WE) == 1,
            u: get(b, port::CFG_U),
            slot_we: get(b, port::CFG_SLOT_WE) == 1,
            slot: get(b, port::CFG_SLOT),
            partner: get(b, port::CFG_PARTNER),
            base: get(b, port::CFG_BASE),
        })
        .collect()
}
