//! `SpAccessUnit` (docs/scratchpad-sharing.md §2.3, §1.4, §1.5): directed spec tests on the
//! model and rusthdl (A4's access side, `pair`, Example 3.3's translations), the §1.4 layout
//! property on launch-calculator tables, random co-simulation on rusthdl and Verilator, and a
//! planted `off <= u` bug that the random stimulus must catch.

use smrtl_cosim::blocks::share_cfg::Table;
use smrtl_cosim::blocks::sp_access_unit::Model;
use smrtl_cosim::harness::backend::{rusthdl::RustHdl, verilator::VerilatorLib};
use smrtl_cosim::kernel::launch::{launch, Inputs, Launch};
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::blocks::sp_access_unit::{build_with, port, Fault, Params};
use smrtl_hdl::netlist::mask;
use smrtl_hdl::{BlockParams, Module};
use smrtl_testbench::blocks::sp_access_unit::{encode, Cycle, Request, SpAccessUnitBench};
use smrtl_testbench::check::{self, run_vectors};
use smrtl_testbench::{external, Case, Design, OldBench};

fn design(preset: &str, sets: &[(&str, &str)]) -> Design {
    Design::old::<SpAccessUnitBench>(&Params::resolve_pairs(Some(preset), sets).unwrap())
}

/// One port's answer: needs_lock, pair, phys per lane.
type Answer = (bool, u64, Vec<u64>);

/// Every port's answer in each cycle, on the model and on rusthdl (asserted equal).
fn run(d: &Design, cycles: &[Cycle]) -> Vec<Vec<Answer>> {
    let p: Params = serde_json::from_value(d.params.clone()).unwrap();
    let s = p.shape();
    let (lanes, aw, kw) = (p.lanes as usize, s.aw(), s.kw());
    let case: Case = cycles.iter().map(|c| encode(&p, &d.layout, c)).collect();
    let model = run_vectors(d, None, &case, None);
    let mut rtl = RustHdl::new(d.module.clone());
    let both = run_vectors(d, Some(&mut rtl), &case, None);
    assert!(both.mismatch.is_none(), "{:?}", both.mismatch);
    assert_eq!(model.outputs, both.outputs, "model and rusthdl");
    let out = |n: &str| d.layout.out_slot(n).clone();
    let (needs, pair, phys) = (out(port::NEEDS_LOCK), out(port::PAIR), out(port::PHYS));
    both.outputs
        .iter()
        .map(|o| {
            (0..p.nsched as usize)
                .map(|q| {
                    (
                        needs.field(o, q, 1) == 1,
                        pair.field(o, q * kw, kw),
                        (0..lanes)
                            .map(|l| phys.field(o, (q * lanes + l) * aw, aw))
                            .collect(),
                    )
                })
                .collect()
        })
        .collect()
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

/// Example 3.3 (DCT3, R_tb = 2176): 5 pairs (slot k with slot 7 + k), unshared slots 5 and 6,
/// u = 220, on the paper-sized unit.
fn dct3() -> (Design, Table) {
    let d = design("paper", &[]);
    let table = Table::launched(&Params::default().shape(), &paper_launch(2176, 128), 2176);
    assert_eq!(table.u, 220);
    (d, table)
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
        reset: false,
    }
}

/// `n` lanes at `off` (the paper unit has 32).
fn lanes_at(off: u64) -> Vec<u64> {
    vec![off; Params::default().lanes as usize]
}

#[test]
fn a4_access_side_lock_need() {
    let (d, table) = dct3();
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
    let answers = run(&d, &cycles);
    for ((what, _, _, want), got) in cases.iter().zip(&answers) {
        assert_eq!(got[0].0, *want, "{what}");
        for (q, idle) in got.iter().enumerate().skip(1) {
            assert!(!idle.0, "{what}: idle port {q}");
        }
    }
}

#[test]
fn pair_is_min_of_slot_and_partner() {
    let (d, table) = dct3();
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
    let got: Vec<u64> = run(&d, &cycles).iter().flatten().map(|a| a.1).collect();
    assert_eq!(got, want);
}

#[test]
fn example_3_3_translations() {
    let (d, table) = dct3();
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
    let answers = run(&d, &cycles);
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
    let d = design("paper", &[]);
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
        run(&d, &cycles)
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
                smrtl_cosim::blocks::sp_access_unit::access(
                    &table, aw, true, r.slot, 0, &r.off, &mut phys,
                );
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
    // T = 6: slot ids 6, 7 exist on the port; KP = 3 with KW = 2.
    random_rusthdl(&design("small", &[("T", "6"), ("NSCHED", "4")]), 3);
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

/// The unit with the Fig. 3 "≤" slip planted: `off = u` is taken as private.
struct Broken;

impl OldBench for Broken {
    type Params = Params;
    const SUMMARY: &'static str = "sp_access_unit with off <= u private";
    fn module(p: &Params) -> Module {
        build_with(p, Fault::PrivateUpToU)
    }
    fn model(p: &Params, layout: &Layout) -> Box<dyn Simulator + Send> {
        Box::new(Model::new(p, layout))
    }
    fn cases(p: &Params, layout: &Layout) -> proptest::strategy::BoxedStrategy<Case> {
        SpAccessUnitBench::cases(p, layout)
    }
}

#[test]
fn planted_boundary_bug_is_caught_and_shrunk() {
    let d = Design::old::<Broken>(&Params::resolve(Some("small"), &[]).unwrap());
    let m = d.module.clone();
    let factory = move || Box::new(RustHdl::new(m.clone())) as Box<dyn smrtl_cosim::Rtl>;
    let r = check::random(&d, &factory, CYCLES, 5);
    let f = r.failure.expect("the off = u bug must be caught");
    assert!(r.cycles < 2_000, "caught late: {} cycles", r.cycles);
    assert_eq!(
        f.minimal.len(),
        1,
        "a combinational bug shrinks to one cycle"
    );
    assert!(
        f.mismatch.port == port::NEEDS_LOCK || f.mismatch.port == port::PHYS,
        "{}",
        f.mismatch
    );
}

/// The random cases need the lock often, but not mostly, and put lanes exactly at `u`.
#[test]
fn random_stimulus_reaches_both_sides_of_u() {
    for preset in ["paper", "small"] {
        let d = design(preset, &[]);
        let p: Params = serde_json::from_value(d.params.clone()).unwrap();
        let (lanes, aw) = (p.lanes as usize, p.shape().aw());
        let case = check::first_cycles(&d, 9, 5_000);
        let mut model = d.model();
        let mut out = vec![0; d.layout.out_words];
        let (mut needs, mut at_u, mut requests) = (0, 0, 0);
        let (off, u) = (d.layout.in_slot(port::RQ_OFF), d.layout.in_slot(port::U));
        for c in &case {
            model.step(c, &mut out);
            let n = d.layout.read_out(&out, port::NEEDS_LOCK);
            needs += n.count_ones() as usize;
            requests += p.nsched as usize;
            let u = u.get(c);
            at_u += (0..p.nsched as usize * lanes)
                .filter(|&i| off.field(c, i * aw, aw) == u)
                .count();
        }
        println!("{preset}: needs_lock {needs} of {requests} port-cycles, {at_u} lanes at u");
        assert!(needs > requests / 10 && needs < requests / 2, "{preset}");
        assert!(at_u > requests, "{preset}: lanes at off = u");
    }
}
