//! `SpAccessUnit` (docs/scratchpad-sharing.md §2.3, §1.4, §1.5): directed spec tests on the
//! model and rusthdl (A4's access side, `pair`, Example 3.3's translations), the §1.4 layout
//! property on launch-calculator tables, and the reach of the random stimulus. Random
//! co-simulation on every backend, lint, Icarus, synthesis and the planted `off <= u` fault
//! are the conformance suite's (`tests/conformance.rs`).

use proptest::strategy::{Strategy, ValueTree};
use smrtl_cosim::blocks::share_cfg::Table;
use smrtl_cosim::blocks::sp_access_unit::access;
use smrtl_cosim::kernel::launch::{launch, Inputs as LaunchInputs, Launch};
use smrtl_hdl::blocks::sp_access_unit::port::Inputs;
use smrtl_hdl::blocks::sp_access_unit::Params;
use smrtl_hdl::netlist::mask;
use smrtl_hdl::BlockParams;
use smrtl_testbench::blocks::sp_access_unit::{cycles, with_table};
use smrtl_testbench::check;

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).unwrap()
}

/// One port's request.
#[derive(Clone, Debug, Default)]
struct Request {
    valid: bool,
    slot: u64,
    mask: u64,
    /// TB-relative byte offset per lane.
    off: Vec<u64>,
}

/// One cycle of the paper-sized unit: `table` and `requests` on the first ports, the others
/// idle.
struct Cycle {
    table: Table,
    requests: Vec<Request>,
}

/// One port's answer: needs_lock, pair, phys per lane.
type Answer = (bool, u64, Vec<u64>);

/// Every port's answer in each cycle, on the model and on rusthdl (every output asserted
/// equal).
fn run(p: &Params, cycles: &[Cycle]) -> Vec<Vec<Answer>> {
    let lanes = p.lanes as usize;
    let inputs: Vec<Inputs> = cycles
        .iter()
        .map(|c| {
            let mut i = with_table(p, &c.table);
            for (q, r) in c.requests.iter().enumerate() {
                (i.rq_valid[q], i.rq_slot[q], i.rq_mask[q]) = (r.valid, r.slot, r.mask);
                i.rq_off[q * lanes..(q + 1) * lanes].copy_from_slice(&r.off);
            }
            i
        })
        .collect();
    check::directed(p, &inputs)
        .into_iter()
        .map(|o| {
            (0..p.nsched as usize)
                .map(|q| {
                    let phys = o.phys[q * lanes..(q + 1) * lanes].to_vec();
                    (o.needs_lock[q], o.pair[q], phys)
                })
                .collect()
        })
        .collect()
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

/// Example 3.3 (DCT3, R_tb = 2176): 5 pairs (slot k with slot 7 + k), unshared slots 5 and 6,
/// u = 220, on the paper-sized unit.
fn dct3() -> (Params, Table) {
    let p = Params::default();
    let table = Table::launched(&p.shape(), &paper_launch(2176, 128), 2176);
    assert_eq!(table.u, 220);
    (p, table)
}

/// A valid request of `slot` with every lane at `off` and lanes `mask` active.
fn req(slot: u64, mask: u64, off: &[u64]) -> Request {
    Request {
        valid: true,
        slot,
        mask,
        off: off.to_vec(),
    }
}

/// One cycle: `requests` on the first ports, the others idle.
fn cycle(table: &Table, requests: Vec<Request>) -> Cycle {
    let p = Params::default();
    let mut requests = requests;
    requests.resize(
        p.nsched as usize,
        Request {
            off: vec![0; p.lanes as usize],
            ..Request::default()
        },
    );
    Cycle {
        table: table.clone(),
        requests,
    }
}

/// `n` lanes at `off` (the paper unit has 32).
fn lanes_at(off: u64) -> Vec<u64> {
    vec![off; Params::default().lanes as usize]
}

#[test]
fn a4_access_side_lock_need() {
    let (p, table) = dct3();
    let all = mask(Params::default().lanes as usize);
    let u = table.u;
    let mut one_high = lanes_at(0);
    one_high[17] = u;
    let mut unshared_sm = table.clone();
    unshared_sm.shsm = false;
    let cases: Vec<(&str, Table, Request, bool)> = vec![
        (
            "unshared TB, offset 0",
            table.clone(),
            req(5, all, &lanes_at(0)),
            false,
        ),
        (
            "unshared TB, last byte",
            table.clone(),
            req(6, all, &lanes_at(2175)),
            false,
        ),
        (
            "unshared TB, top offset",
            table.clone(),
            req(5, all, &lanes_at(16383)),
            false,
        ),
        (
            "shared TB, off = u - 1",
            table.clone(),
            req(0, all, &lanes_at(u - 1)),
            false,
        ),
        (
            "shared TB (upper), off = u - 1",
            table.clone(),
            req(7, all, &lanes_at(u - 1)),
            false,
        ),
        (
            "shared TB, off = u",
            table.clone(),
            req(0, all, &lanes_at(u)),
            true,
        ),
        (
            "shared TB (upper), off = u",
            table.clone(),
            req(11, all, &lanes_at(u)),
            true,
        ),
        (
            "one active lane >= u",
            table.clone(),
            req(2, 1 << 17, &one_high),
            true,
        ),
        (
            "one lane >= u among all",
            table.clone(),
            req(2, all, &one_high),
            true,
        ),
        (
            "the lane >= u inactive",
            table.clone(),
            req(2, all & !(1 << 17), &one_high),
            false,
        ),
        (
            "no active lane",
            table.clone(),
            req(2, 0, &lanes_at(u)),
            false,
        ),
        ("ShSM = 0", unshared_sm, req(0, all, &lanes_at(u)), false),
        (
            "not valid",
            table.clone(),
            Request {
                valid: false,
                ..req(0, all, &lanes_at(u))
            },
            false,
        ),
    ];
    let cycles: Vec<Cycle> = cases
        .iter()
        .map(|(_, t, r, _)| cycle(t, vec![r.clone()]))
        .collect();
    let answers = run(&p, &cycles);
    for ((what, _, _, want), got) in cases.iter().zip(&answers) {
        assert_eq!(got[0].0, *want, "{what}");
        for (q, idle) in got.iter().enumerate().skip(1) {
            assert!(!idle.0, "{what}: idle port {q}");
        }
    }
}

#[test]
fn pair_is_min_of_slot_and_partner() {
    let (p, table) = dct3();
    // Slots 0..4 pair with 7..11; unshared slots 5, 6 and unused 12..15 keep their own id's
    // low KW = 3 bits; ports carry any slot, valid or not.
    let slots = [0u64, 7, 4, 11, 5, 6, 12, 15];
    let want = [0u64, 0, 4, 4, 5, 6, 4, 7];
    let cycles: Vec<Cycle> = slots
        .chunks(4)
        .map(|ss| {
            let requests = ss
                .iter()
                .map(|&s| Request {
                    valid: s % 2 == 0,
                    ..req(s, 0, &lanes_at(0))
                })
                .collect();
            cycle(&table, requests)
        })
        .collect();
    let got: Vec<u64> = run(&p, &cycles).iter().flatten().map(|a| a.1).collect();
    assert_eq!(got, want);
}

#[test]
fn example_3_3_translations() {
    let (p, table) = dct3();
    let u = table.u;
    let offs: Vec<u64> = [0, 1, u - 1, u, u + 1, 1000, 2175]
        .iter()
        .cycle()
        .take(Params::default().lanes as usize)
        .copied()
        .collect();
    let all = mask(offs.len());
    // Pair k: lower slot k at k·2396, upper slot 7 + k at k·2396 + 220; the shared region
    // starts at k·2396 + 440 for both. Unshared slot j at 5·2396 + (j − 5)·2176.
    let expect = |slot: u64, o: u64| match slot {
        0..=4 if o < u => slot * 2396 + o,
        0..=4 => slot * 2396 + u + o,
        5 | 6 => 5 * 2396 + (slot - 5) * 2176 + o,
        _ => (slot - 7) * 2396 + u + o,
    };
    let slots: Vec<u64> = (0..12).collect();
    let cycles: Vec<Cycle> = slots
        .chunks(4)
        .map(|c| cycle(&table, c.iter().map(|&s| req(s, all, &offs)).collect()))
        .collect();
    let answers = run(&p, &cycles);
    for (i, &slot) in slots.iter().enumerate() {
        let got = &answers[i / 4][i % 4].2;
        let want: Vec<u64> = offs.iter().map(|&o| expect(slot, o)).collect();
        assert_eq!(got, &want, "slot {slot}");
    }
    // Offset u (lane 3) of pair 0 is the shared byte 440 from slot 0 and from slot 7.
    assert_eq!(offs[3], u);
    assert_eq!(answers[0][0].2[3], 440);
    assert_eq!(answers[1][3].2[3], 440);
}

/// §1.4: with the launch calculator's table, every byte of every resident slot maps to a byte
/// inside the layout; private bytes (all of an unshared slot's, `off < u` of a shared one) to a
/// byte of that slot alone, shared offsets `off ≥ u` to a byte common to exactly the pair.
fn layout_property(l: &Launch, r_tb: u64, on_rtl: bool) {
    let p = Params::default();
    let (lanes, ports) = (p.lanes as usize, p.nsched as usize);
    let table = Table::launched(&p.shape(), l, r_tb);
    let slots: Vec<u64> = (0..l.n).collect();
    // (slot, first offset) of each port request, LANES offsets each.
    let chunks: Vec<(u64, u64)> = slots
        .iter()
        .flat_map(|&s| (0..r_tb).step_by(lanes).map(move |o| (s, o)))
        .collect();
    let top = mask(p.shape().aw());
    let requests: Vec<Request> = chunks
        .iter()
        .map(|&(s, o)| {
            req(
                s,
                0,
                &(o..o + lanes as u64).map(|x| x & top).collect::<Vec<_>>(),
            )
        })
        .collect();
    let phys_of: Vec<Vec<u64>> = if on_rtl {
        let cycles: Vec<Cycle> = requests
            .chunks(ports)
            .map(|rs| cycle(&table, rs.to_vec()))
            .collect();
        run(&p, &cycles)
            .into_iter()
            .flatten()
            .map(|a| a.2)
            .collect()
    } else {
        requests
            .iter()
            .map(|r| {
                let mut phys = vec![0; lanes];
                let aw = p.shape().aw();
                access(&table, aw, true, r.slot, 0, &r.off, &mut phys);
                phys
            })
            .collect()
    };
    // Who maps onto each physical byte.
    let mut users: Vec<Vec<(u64, u64)>> = vec![vec![]; l.layout_bytes as usize];
    for (&(s, first), phys) in chunks.iter().zip(&phys_of) {
        for (i, &b) in phys.iter().enumerate() {
            let off = first + i as u64;
            if off >= r_tb {
                continue;
            }
            assert!(
                b < l.layout_bytes,
                "slot {s} offset {off} -> {b}: outside the layout"
            );
            users[b as usize].push((s, off));
        }
    }
    for (b, who) in users.iter().enumerate() {
        match who.as_slice() {
            [(s, off)] => assert!(
                table.unsh(*s) || *off < table.u,
                "byte {b}: slot {s}'s shared offset {off} is not shared with its partner"
            ),
            [(s1, o1), (s2, o2)] => {
                assert_eq!(o1, o2, "byte {b}: the pair's offsets differ");
                assert!(*o1 >= table.u, "byte {b}: a private offset is shared");
                assert_eq!(table.partner(*s1), *s2, "byte {b}: not a pair");
            }
            other => panic!("byte {b} used by {other:?}"),
        }
    }
    // Every byte of the layout is used: pairs take R_tb + u, unshared slots R_tb.
    assert!(users.iter().all(|w| !w.is_empty()), "holes in the layout");
}

/// (R_tb, threads): Table 1's DCT1, DCT3, FDTD3d and backprop, which share at 16 KB, and a
/// 4 KB TB, which does not (4 unshared TBs fill the SM).
const LAUNCHES: &[(u64, u64)] = &[
    (2112, 64),
    (2176, 128),
    (3840, 128),
    (9408, 256),
    (4096, 64),
];

#[test]
fn layout_property_on_the_model() {
    for &(r_tb, threads) in LAUNCHES {
        layout_property(&paper_launch(r_tb, threads), r_tb, false);
    }
}

#[test]
fn layout_property_on_rusthdl() {
    for &(r_tb, threads) in LAUNCHES {
        layout_property(&paper_launch(r_tb, threads), r_tb, true);
    }
}

/// The random cases need the lock often, but not mostly, and put lanes exactly at `u`.
#[test]
fn random_stimulus_reaches_both_sides_of_u() {
    for preset in ["paper", "small"] {
        let p = params(preset, &[]);
        let (lanes, aw) = (p.lanes as usize, p.shape().aw());
        let mut runner = check::runner(9);
        let strategy = cycles(&p);
        let (mut needs, mut at_u, mut requests) = (0, 0, 0);
        let mut table = Table::new(&p.shape());
        let mut phys = vec![0; lanes];
        while requests < 5_000 * p.nsched as usize {
            for c in strategy.new_tree(&mut runner).unwrap().current() {
                (table.shsm, table.u) = (c.shsm, c.u);
                table.shtb.copy_from_slice(&c.shtb);
                table.base.copy_from_slice(&c.base);
                for q in 0..p.nsched as usize {
                    let off = &c.rq_off[q * lanes..(q + 1) * lanes];
                    let a = access(
                        &table,
                        aw,
                        c.rq_valid[q],
                        c.rq_slot[q],
                        c.rq_mask[q],
                        off,
                        &mut phys,
                    );
                    needs += a.needs_lock as usize;
                    at_u += off.iter().filter(|&&o| o == c.u).count();
                    requests += 1;
                }
            }
        }
        println!("{preset}: needs_lock {needs} of {requests} port-cycles, {at_u} lanes at u");
        assert!(needs > requests / 10 && needs < requests / 2, "{preset}");
        assert!(at_u > requests, "{preset}: lanes at off = u");
    }
}
