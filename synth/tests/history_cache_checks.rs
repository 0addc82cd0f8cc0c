//! Checks on the emitted `history_cache`: short cycle-level runs of the RTL alone (accumulate,
//! write, hit, clear; 2-way replacement; the policy and counter-mode variants) and the Table 3
//! cost report (storage in registers and memories, the ready-mask gates). Lint, Icarus,
//! latch-free synthesis and the flip-flop inventory at every preset are the conformance suite's.
//!
//! A missing tool fails the tool tests when `SMRTL_REQUIRE_TOOLS=1`, and skips them otherwise.

use smrtl_hdl::blocks::history_cache::{build, port, Params};
use smrtl_hdl::{BlockParams, Module};
use std::collections::HashMap;

fn have_tools() -> bool {
    smrtl_hdl::tools::external(&["yosys"])
}

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).expect("valid params")
}

/// Cycle-level driver of the RTL through the netlist evaluator (the one rust-hdl's simulator
/// runs in the `rusthdl` backend): set inputs, read outputs of this cycle, clock.
struct Rtl {
    m: Module,
    v: Vec<u64>,
    ids: HashMap<String, usize>,
}

impl Rtl {
    fn new(p: &Params) -> Rtl {
        let m = build(p);
        let v = m.new_state();
        let ids = m
            .ports()
            .iter()
            .map(|q| (q.name.clone(), m.net_id(&q.name).expect("port")))
            .collect();
        let mut r = Rtl { m, v, ids };
        r.set(&[("reset", 1)]);
        r.step();
        r
    }

    /// Drives the given inputs, every other input 0.
    fn set(&mut self, values: &[(&str, u64)]) {
        for q in self.m.ports() {
            if q.dir == smrtl_hdl::Dir::In {
                let value = values.iter().find(|(n, _)| *n == q.name).map_or(0, |x| x.1);
                self.m.set_words(&mut self.v, self.ids[&q.name], &[value]);
            }
        }
        self.m.eval_comb(&mut self.v);
    }

    fn get(&self, name: &str) -> u64 {
        self.m.get(&self.v, self.ids[name])
    }

    fn step(&mut self) {
        self.m.eval_comb(&mut self.v);
        self.m.clock_edge(&mut self.v);
        self.m.eval_comb(&mut self.v);
    }
}

/// G5, G18/G19: sw 0..3 with svc_m1 (3, 0, 0, 0) at pc 5 gives acc_valid at sw 3 with value 3;
/// a later lookup of pc 5 hits with 3; `clear` makes it miss.
#[test]
fn accumulate_write_hit_clear() {
    let p = params("small", &[]);
    assert_eq!(p.subwarps(), 4);
    let mut r = Rtl::new(&p);
    for (sw, svc) in [(0, 3), (1, 0), (2, 0), (3, 0)] {
        r.set(&[
            (port::ACC_V, 1),
            (port::ACC_SW, sw),
            (port::ACC_SVC_M1, svc),
            (port::ACC_PC_IN, 5),
            (port::LK_PC, 5),
        ]);
        assert_eq!(r.get(port::ACC_VALID), u64::from(sw == 3), "sw {sw}");
        assert_eq!(
            r.get(port::LK_HIT),
            0,
            "same-cycle lookup sees the old contents"
        );
        if sw == 3 {
            assert_eq!(r.get(port::ACC_VALUE), 3);
            assert_eq!(r.get(port::ACC_PC), 5);
        }
        r.step();
    }
    r.set(&[(port::LK_PC, 5)]);
    assert_eq!(r.get(port::LK_HIT), 1);
    assert_eq!(r.get(port::LK_DATA), 3);
    assert_eq!(r.get(port::PRED), 3);
    // Another set / another tag miss.
    r.set(&[(port::LK_PC, 6)]);
    assert_eq!(r.get(port::LK_HIT), 0);
    r.set(&[(port::LK_PC, 5 + 4)]);
    assert_eq!(r.get(port::LK_HIT), 0);
    // Load the counter from pred and mask memory warps; it holds while SMEM subwarps pend.
    r.set(&[
        (port::LK_PC, 5),
        (port::LOAD, 1),
        (port::ENABLE, 1),
        (port::READY, 0b1111),
        (port::IS_MEM, 0b0101),
    ]);
    assert_eq!(r.get(port::MASK), 0);
    assert_eq!(r.get(port::READY_M), 0b1111);
    r.step();
    r.set(&[
        (port::ENABLE, 1),
        (port::READY, 0b1111),
        (port::IS_MEM, 0b0101),
        (port::SMEM_SW_PENDING, 1),
    ]);
    assert_eq!(r.get(port::COUNTER), 3);
    assert_eq!(r.get(port::MASK), 1);
    assert_eq!(r.get(port::READY_M), 0b1010);
    r.step();
    r.set(&[(port::ENABLE, 1)]);
    assert_eq!(r.get(port::COUNTER), 3);
    r.step();
    r.set(&[(port::ENABLE, 1), (port::FE_HOLD, 1)]);
    assert_eq!(r.get(port::COUNTER), 2);
    r.step();
    r.set(&[(port::CLEAR, 1), (port::LK_PC, 5)]);
    assert_eq!(r.get(port::COUNTER), 2, "frozen on fe_hold");
    assert_eq!(r.get(port::LK_HIT), 1, "clear acts at the edge");
    r.step();
    r.set(&[(port::LK_PC, 5)]);
    assert_eq!(r.get(port::LK_HIT), 0);
    assert_eq!(r.get(port::PRED), 0);
    assert_eq!(r.get(port::COUNTER), 0);
}

/// 2-way replacement: two tags of one set fill both ways; a third evicts the non-MRU way.
#[test]
fn two_way_replacement() {
    let p = params("small", &[]);
    let mut r = Rtl::new(&p);
    let write = |r: &mut Rtl, pc: u64, svc: u64| {
        for sw in 0..4 {
            r.set(&[
                (port::ACC_V, 1),
                (port::ACC_SW, sw),
                (port::ACC_SVC_M1, if sw == 0 { svc } else { 0 }),
                (port::ACC_PC_IN, pc),
            ]);
            r.step();
        }
    };
    let look = |r: &mut Rtl, pc: u64| {
        r.set(&[(port::LK_PC, pc)]);
        (r.get(port::LK_HIT), r.get(port::LK_DATA))
    };
    write(&mut r, 1, 1); // way 0, MRU 0
    write(&mut r, 5, 2); // way 1, MRU 1
    assert_eq!(look(&mut r, 1), (1, 1));
    assert_eq!(look(&mut r, 5), (1, 2));
    write(&mut r, 1, 3); // hit way 0: overwrite, MRU 0
    assert_eq!(look(&mut r, 1), (1, 3));
    write(&mut r, 9, 4); // miss: victim is non-MRU way 1 (pc 5)
    assert_eq!(look(&mut r, 9), (1, 4));
    assert_eq!(look(&mut r, 1), (1, 3));
    assert_eq!(look(&mut r, 5), (0, 0));
}

/// The Table 3 report on `small` (the `paper` one is `#[ignore]`d: about 25 s of Yosys).
#[test]
fn cost_report_small() {
    if !have_tools() {
        return;
    }
    cost_report("small");
}

#[test]
#[ignore]
fn cost_report_paper() {
    if !have_tools() {
        return;
    }
    cost_report("paper");
}

fn cost_report(preset: &str) {
    let p = params(preset, &[]);
    let c = smrtl_synth::blocks::history_cache::cost(&p).expect("cost");
    println!(
        "{preset}: {}",
        serde_json::to_string_pretty(&c.storage).unwrap()
    );
    println!(
        "{preset}: {}",
        serde_json::to_string_pretty(&c.mask_gates).unwrap()
    );
    println!(
        "{preset}: {} cells, {} FF, depth {:?}, {:.1} s",
        c.generic.cells, c.generic.flip_flops, c.generic.logic_depth, c.generic.seconds
    );
    assert_eq!(c.storage.measured_cache_bits, p.storage_bits_with_state());
    assert_eq!(c.mask_gates.paper, 2 * u64::from(p.warps));
    assert!(c.mask_gates.measured_cells <= c.mask_gates.paper);
}

/// `issue_if_no_non_mem` ignores the mask when only memory warps are ready; `load_pred_plus_sm1`
/// loads pred + S − 1 and decrements while SMEM subwarps pend.
#[test]
fn policy_and_counter_mode_variants() {
    let p = params(
        "small",
        &[
            ("bcaws_policy", "issue_if_no_non_mem"),
            ("counter_mode", "load_pred_plus_sm1"),
        ],
    );
    let mut r = Rtl::new(&p);
    r.set(&[(port::LOAD, 1)]); // miss: pred 0, counter ← 3
    r.step();
    r.set(&[
        (port::ENABLE, 1),
        (port::READY, 0b0101),
        (port::IS_MEM, 0b0101),
        (port::SMEM_SW_PENDING, 1),
    ]);
    assert_eq!(r.get(port::COUNTER), 3);
    assert_eq!(r.get(port::MASK), 1);
    assert_eq!(r.get(port::READY_M), 0b0101, "only memory warps ready");
    r.step();
    r.set(&[
        (port::ENABLE, 1),
        (port::READY, 0b0111),
        (port::IS_MEM, 0b0101),
    ]);
    assert_eq!(r.get(port::COUNTER), 2, "smem_sw_pending ignored");
    assert_eq!(r.get(port::READY_M), 0b0010);
}
