//! `sharing_core` at block level (docs/scratchpad-sharing.md §2.1, §5.3): the composition's
//! in-cycle order on its ports, directed, on the composed model AND the rusthdl RTL (every
//! output equal every cycle). Random co-simulation on every backend (the presets cover every
//! switch), lint, Icarus, synthesis, the §7 inventory and the lock table's planted drain fault
//! at the core's ports are the conformance suite's (`tests/conformance.rs`); the SM model with
//! the core in the loop is `sharing_sm.rs`, `sharing_scenarios.rs` and `sharing_programs.rs`.

use smrtl_hdl::blocks::sharing::Class;
use smrtl_hdl::blocks::sharing_core::port::Inputs;
use smrtl_hdl::blocks::sharing_core::Params;
use smrtl_hdl::BlockParams;
use smrtl_testbench::check;

/// The small shape (T 4, W 8, LANES 4, NSCHED 2, R 1024) with u = 60 and one pair, slot 0
/// (base 0) with slot 2 (base 60): the reset and the launch writes, then `run` cycles with
/// warp 0 in slot 0 (scheduler 0) and warp 1 in slot 2 (scheduler 1), both live.
fn launched(p: &Params, run: usize) -> Vec<Inputs> {
    let mut reset = Inputs::new(p);
    reset.reset = true;
    let write = |slot, partner, base| {
        let mut i = Inputs::new(p);
        i.cfg_slot_we = true;
        (i.cfg_slot, i.cfg_partner, i.cfg_base) = (slot, partner, base);
        i
    };
    let mut first = write(0, 2, 0);
    (
        first.cfg_shsm_we,
        first.cfg_shsm,
        first.cfg_u_we,
        first.cfg_u,
    ) = (true, true, true, 60);
    let mut warps = Inputs::new(p);
    for (w, slot) in [(0, 0), (1, 2)] {
        (warps.warp_valid[w], warps.warp_slot[w], warps.live[w]) = (true, slot, 0b1111);
        warps.age[w] = w as u64;
    }
    let mut cycles = vec![reset, first, write(2, 0, 60)];
    cycles.extend(std::iter::repeat_n(warps, run));
    cycles
}

/// Both partners pick a shared-region access (offset u) in one cycle: the schedulers pick, the
/// access unit needs the lock and translates, the lock table lets the lower slot acquire and
/// NACKs the other — all in that cycle (§2.1); the owner bit and classes follow the registered
/// lock from the next cycle, where the owner's access is in flight and the partner is NACKed
/// again.
#[test]
fn a13_race_through_the_composition() {
    let p = Params::resolve(Some("small"), &[]).unwrap();
    let mut cycles = launched(&p, 2);
    for c in &mut cycles[3..] {
        for q in 0..2 {
            c.ready[q] = true;
            (c.dsc_shared[q], c.dsc_mask[q]) = (true, 0b1111);
            c.dsc_off[q * 4..(q + 1) * 4].fill(60);
        }
    }
    let o = check::directed(&p, &cycles);
    let (race, after) = (&o[3], &o[4]);
    assert!(
        race.shsm && race.u == 60 && !race.err_cfg,
        "launched: {race:?}"
    );
    assert_eq!(race.iss_valid, [true, true]);
    assert_eq!(
        (race.iss_idx.clone(), race.rq_slot.clone()),
        (vec![0, 0], vec![0, 2])
    );
    assert_eq!(race.needs_lock, [true, true]);
    assert_eq!(race.pair, [0, 0]);
    // Slot 0 (role 0) skips its partner's private u bytes; slot 2 starts at base 60.
    assert_eq!(
        (race.phys[0], race.phys[4]),
        (120, 120),
        "the shared byte 120"
    );
    assert_eq!(
        (race.acq.clone(), race.nack.clone()),
        (vec![true, false], vec![false, true])
    );
    assert_eq!(race.issued, [true, false]);
    assert!(
        !race.lock_valid[0] && !race.owner_bit[0],
        "Moore: the lock at c + 1"
    );
    let class = |o: &smrtl_hdl::blocks::sharing_core::port::Outputs, w: usize| {
        Class::of_code(o.warp_class[w])
    };
    assert_eq!(
        (class(race, 0), class(race, 1)),
        (Class::Nonowner, Class::Nonowner)
    );
    assert_eq!((after.lock_valid[0], after.lock_owner[0]), (true, 0));
    assert_eq!(after.pend[0], 1);
    assert_eq!(after.owner_bit[..2], [true, false]);
    assert_eq!(
        (class(after, 0), class(after, 1)),
        (Class::Owner, Class::Nonowner)
    );
    assert_eq!(
        (after.gnt.clone(), after.nack.clone()),
        (vec![true, false], vec![false, true])
    );
}
