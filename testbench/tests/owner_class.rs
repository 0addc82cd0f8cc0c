//! `OwnerClass` (docs/scratchpad-sharing.md §2.5): directed spec tests on the model and rusthdl
//! (A5's owner side, A16's three classes at once, the `FREE_CLASS` switch, ShSM = 0, the §0
//! out-of-range rules), then random co-simulation over both `FREE_CLASS` settings on rusthdl
//! and Verilator.

use smrtl_cosim::blocks::owner_class::Locks;
use smrtl_cosim::blocks::share_cfg::Table;
use smrtl_cosim::harness::backend::{rusthdl::RustHdl, verilator::VerilatorLib};
use smrtl_cosim::kernel::launch::{launch, Inputs};
use smrtl_hdl::blocks::owner_class::{port, Params};
use smrtl_hdl::blocks::sharing::Class;
use smrtl_hdl::BlockParams;
use smrtl_testbench::blocks::owner_class::{encode, Cycle, OwnerClassBench};
use smrtl_testbench::check::{self, run_vectors};
use smrtl_testbench::{external, Case, Design};

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).unwrap()
}

/// Per cycle, each warp's (owner_bit, class), on the model and on rusthdl (asserted equal).
fn run(p: &Params, cycles: &[Cycle]) -> Vec<Vec<(bool, Class)>> {
    let d = Design::old::<OwnerClassBench>(p);
    let case: Case = cycles.iter().map(|c| encode(p, &d.layout, c)).collect();
    let model = run_vectors(&d, None, &case, None);
    let mut rtl = RustHdl::new(d.module.clone());
    let both = run_vectors(&d, Some(&mut rtl), &case, None);
    assert!(both.mismatch.is_none(), "{:?}", both.mismatch);
    assert_eq!(model.outputs, both.outputs, "model and rusthdl");
    let (bits, classes) = (
        d.layout.out_slot(port::OWNER_BIT),
        d.layout.out_slot(port::WARP_CLASS),
    );
    both.outputs
        .iter()
        .map(|o| {
            (0..p.warps as usize)
                .map(|w| {
                    let code = classes.field(o, w * Class::BITS, Class::BITS);
                    (bits.field(o, w, 1) == 1, Class::of_code(code))
                })
                .collect()
        })
        .collect()
}

/// Example 3.3's table (DCT3 on the paper's SM): slot k pairs with slot 7 + k for k < 5;
/// slots 5 and 6 are unshared.
fn dct3() -> Table {
    let l = launch(&Inputs {
        smem: 16384,
        tb_smem: 2176,
        tb_threads: 128,
        max_tbs: 16,
        max_threads: 3072,
        t: "1/10".parse().unwrap(),
        reg_limit: None,
        align: 4,
    });
    Table::launched(&Params::default().shape(), &l, 2176)
}

/// Locks of `kp` pairs: `held[k] = Some(owner)` or free.
fn locks(held: &[Option<u64>]) -> Locks {
    Locks {
        valid: held.iter().map(Option::is_some).collect(),
        owner: held.iter().map(|h| h.unwrap_or(0)).collect(),
    }
}

/// Warp `w` of the paper's 96 sits in slot `slots[w % len]`, all valid.
fn warps(slots: &[u64]) -> Vec<(bool, u64)> {
    (0..Params::default().warps as usize)
        .map(|w| (true, slots[w % slots.len()]))
        .collect()
}

fn one(table: &Table, locks: Locks, warps: Vec<(bool, u64)>) -> Cycle {
    Cycle {
        table: table.clone(),
        locks,
        warps,
        reset: false,
    }
}

use Class::{Nonowner, Owner, Unshared};

#[test]
fn a5_owner_side_and_transfer() {
    let t = dct3();
    // Pair 0 = slots 0 (X) and 7 (Y). X holds the lock, then Y does (a transfer).
    let ws = warps(&[0, 7, 5]);
    let cycles = [
        one(
            &t,
            locks(&[Some(0), None, None, None, None, None, None, None]),
            ws.clone(),
        ),
        one(
            &t,
            locks(&[Some(7), None, None, None, None, None, None, None]),
            ws,
        ),
    ];
    let got = run(&Params::default(), &cycles);
    for (w, &(bit, class)) in got[0].iter().enumerate() {
        let want = [(true, Owner), (false, Nonowner), (false, Unshared)][w % 3];
        assert_eq!((bit, class), want, "X owns: warp {w}");
    }
    for (w, &(bit, class)) in got[1].iter().enumerate() {
        let want = [(false, Nonowner), (true, Owner), (false, Unshared)][w % 3];
        assert_eq!((bit, class), want, "Y owns: warp {w}");
    }
}

#[test]
fn a16_three_classes_at_once_and_free_class() {
    let t = dct3();
    // Slot 1 owns pair 1; pair 2 (slots 2, 9) is free; slot 6 is unshared; slot 8 is 1's
    // partner; an invalid warp of owner slot 1 has no owner bit.
    let held = locks(&[None, Some(1), None, None, Some(11), None, None, None]);
    let mut ws = warps(&[1, 8, 6, 2, 9, 4, 11]);
    ws[95] = (false, 1);
    let cycles = [one(&t, held, ws)];
    for (free_class, free) in [("NONOWNER", Nonowner), ("UNSHARED", Unshared)] {
        let got = &run(&params("paper", &[("FREE_CLASS", free_class)]), &cycles)[0];
        for (w, &got) in got.iter().enumerate().take(95) {
            let want = [
                (true, Owner),
                (false, Nonowner),
                (false, Unshared),
                (false, free),
                (false, free),
                (false, Nonowner),
                (true, Owner),
            ][w % 7];
            assert_eq!(got, want, "FREE_CLASS={free_class}: warp {w}");
        }
        assert_eq!(got[95], (false, Nonowner), "invalid warp of the owner slot");
        let classes: Vec<Class> = got.iter().map(|g| g.1).collect();
        for c in [Owner, Unshared, Nonowner] {
            assert!(classes.contains(&c), "{c:?} present");
        }
    }
}

#[test]
fn shsm_off_makes_every_warp_unshared() {
    let mut t = dct3();
    t.shsm = false;
    let got = run(
        &Params::default(),
        &[one(&t, locks(&[Some(0); 8]), warps(&[0, 7, 5, 13]))],
    );
    assert!(got[0].iter().all(|&g| g == (false, Unshared)));
}

#[test]
fn out_of_range_slots_partners_and_pairs() {
    // T = 6: SW = 3, TW = 3 (NONE = 7), KP = 3, KW = 2.
    let p = params("small", &[("T", "6"), ("W", "8")]);
    let mut t = Table::new(&p.shape());
    t.shsm = true;
    // 3 <-> 4: pair index min(3, 4) = 3 >= KP reads as a free lock; 1 -> 6: no such slot, still
    // shared (ShTB != NONE), pair 1.
    t.shtb[3] = 4;
    t.shtb[4] = 3;
    t.shtb[1] = 6;
    let held = locks(&[None, Some(1), Some(3)]);
    // Slots 6 and 7 do not exist: unshared.
    let ws = vec![
        (true, 3),
        (true, 4),
        (true, 1),
        (true, 6),
        (true, 7),
        (true, 0),
        (false, 3),
        (true, 1),
    ];
    let got = run(&p, &[one(&t, held, ws)]);
    let want = [
        (false, Nonowner), // FREE_CLASS of the out-of-range pair 3
        (false, Nonowner),
        (true, Owner),
        (false, Unshared),
        (false, Unshared),
        (false, Unshared),
        (false, Nonowner),
        (true, Owner),
    ];
    assert_eq!(got[0], want);
    let p = params(
        "small",
        &[("T", "6"), ("W", "8"), ("FREE_CLASS", "UNSHARED")],
    );
    let got = run(
        &p,
        &[one(
            &t,
            locks(&[None, Some(1), Some(3)]),
            vec![(true, 3); 8],
        )],
    );
    assert!(
        got[0].iter().all(|&g| g == (false, Unshared)),
        "pair 3 reads free"
    );
}

const CYCLES: u64 = 100_000;

fn random_rusthdl(p: &Params, cycles: u64, seed: u64) {
    check::assert_random_on_rusthdl(&Design::old::<OwnerClassBench>(p), cycles, seed);
}

#[test]
fn random_rusthdl_paper() {
    random_rusthdl(&Params::default(), CYCLES, 1);
}

#[test]
fn random_rusthdl_small_both_free_classes_and_odd_t() {
    for (i, free_class) in ["NONOWNER", "UNSHARED"].into_iter().enumerate() {
        random_rusthdl(
            &params("small", &[("FREE_CLASS", free_class)]),
            CYCLES,
            2 + i as u64,
        );
        // T = 6: slot ids 6, 7, ShTB value 6, pair index 3 >= KP.
        let odd = params("small", &[("FREE_CLASS", free_class), ("T", "6")]);
        random_rusthdl(&odd, CYCLES, 4 + i as u64);
    }
}

#[test]
fn random_verilator_small() {
    if !external("verilator") {
        return;
    }
    for free_class in ["NONOWNER", "UNSHARED"] {
        let d = Design::old::<OwnerClassBench>(&params("small", &[("FREE_CLASS", free_class)]));
        let lib = VerilatorLib::load(&d.module, &d.verilog()).unwrap();
        let factory = || Box::new(lib.instance().unwrap()) as Box<dyn smrtl_cosim::Rtl>;
        let r = check::random(&d, &factory, 3_000, 6);
        assert!(r.failure.is_none(), "{:?}", r.failure.map(|f| f.mismatch));
        assert!(r.cycles >= 3_000);
    }
}

/// The random cases give every class (and owner bits) a fair share of warp-cycles.
#[test]
fn random_stimulus_reaches_every_class() {
    for preset in ["paper", "small"] {
        let d = Design::old::<OwnerClassBench>(&params(preset, &[]));
        let case = check::first_cycles(&d, 9, 2_000);
        let mut model = d.model();
        let mut out = vec![0; d.layout.out_words];
        let classes = d.layout.out_slot(port::WARP_CLASS);
        let mut count = [0usize; 3];
        for c in &case {
            model.step(c, &mut out);
            for w in 0..d.layout.out_slot(port::OWNER_BIT).width {
                count[classes.field(&out, w * Class::BITS, Class::BITS) as usize] += 1;
            }
        }
        let total: usize = count.iter().sum();
        println!("{preset}: OWNER, UNSHARED, NONOWNER warp-cycles {count:?}");
        assert!(count.iter().all(|&c| c > total / 20), "{preset}: {count:?}");
    }
}
