//! The `RelsspUnit` (docs/scratchpad-sharing.md §3): directed spec scenarios (A8, A9, A10's
//! relssp side, warp launch, idempotence, several ports in one cycle, same-cycle `done`, the
//! out-of-range rules), each checked on the model and on rusthdl. Random co-simulation on every
//! backend (the presets cover one lane and one port, 8 lanes and 4 ports, 128 warps), lint,
//! Icarus, synthesis, the W·LANES flip-flops and the planted launch fault are the conformance
//! suite's (`tests/conformance.rs`).

use smrtl_hdl::blocks::relssp_unit::port::{Inputs, Outputs};
use smrtl_hdl::blocks::relssp_unit::Params;
use smrtl_hdl::BlockParams;
use smrtl_testbench::check;

fn params(preset: &str, sets: &[(&str, &str)]) -> Params {
    Params::resolve_pairs(Some(preset), sets).unwrap()
}

/// A per-slot flag bus as a bit mask, bit `s` for slot `s`.
fn bits(v: &[bool]) -> u64 {
    v.iter().enumerate().map(|(s, &b)| (b as u64) << s).sum()
}

/// Every cycle's outputs, on the model and on rusthdl (asserted equal).
struct Runs(Vec<Outputs>);

impl Runs {
    /// Asserts `done` of every cycle, as slot bit masks.
    fn done(&self, want: &[u64]) {
        let got: Vec<u64> = self.0.iter().map(|o| bits(&o.done)).collect();
        assert_eq!(got, want, "done");
    }

    /// Asserts `tb_empty` of every cycle, as slot bit masks.
    fn tb_empty(&self, want: &[u64]) {
        let got: Vec<u64> = self.0.iter().map(|o| bits(&o.tb_empty)).collect();
        assert_eq!(got, want, "tb_empty");
    }

    /// Asserts warp `w`'s release bits (`rbits`) of every cycle.
    fn rbits(&self, w: usize, want: &[u64]) {
        let got: Vec<u64> = self.0.iter().map(|o| o.rbits[w]).collect();
        assert_eq!(got, want, "rbits of warp {w}");
    }
}

/// Builds cycles on top of a fixed warp map.
struct Script {
    p: Params,
    base: Inputs,
    cycles: Vec<Inputs>,
}

impl Script {
    /// Warps `(w, slot, live)`, valid, on an otherwise idle unit.
    fn new(p: &Params, warps: &[(usize, u64, u64)]) -> Script {
        let mut base = Inputs::new(p);
        for &(w, slot, live) in warps {
            (base.warp_valid[w], base.warp_slot[w], base.live[w]) = (true, slot, live);
        }
        Script {
            p: p.clone(),
            base,
            cycles: vec![],
        }
    }

    /// One cycle with `events` (port, rel, exit, warp, mask), after `edit` on the warp map.
    fn cycle(
        &mut self,
        events: &[(usize, bool, bool, u64, u64)],
        edit: impl FnOnce(&mut Inputs),
    ) -> &mut Self {
        let mut c = self.base.clone();
        for &(q, rel, exit, warp, mask) in events {
            c.ev_valid[q] = true;
            (c.ev_rel[q], c.ev_exit[q], c.ev_warp[q], c.ev_mask[q]) = (rel, exit, warp, mask);
        }
        edit(&mut c);
        self.cycles.push(c);
        self
    }

    /// A cycle with events and the warp map unchanged.
    fn events(&mut self, events: &[(usize, bool, bool, u64, u64)]) -> &mut Self {
        self.cycle(events, |_| {})
    }

    /// Changes the warp map from now on.
    fn set_live(&mut self, w: usize, live: u64) -> &mut Self {
        self.base.live[w] = live;
        self
    }

    fn run(&self) -> Runs {
        Runs(check::directed(&self.p, &self.cycles))
    }
}

const REL: bool = true;
const NO: bool = false;
const EXIT: bool = true;

/// The small shape: T 4, W 8, LANES 4, NSCHED 2; done/tb_empty of slots without warps read 1.
fn small() -> Params {
    params("small", &[])
}

/// A8: relssp by part of a TB's live threads keeps done at 0; the rest later sets it in that
/// very cycle, and it stays (the bits are held).
#[test]
fn a8_partial_relssp_then_the_rest() {
    let p = small();
    let mut s = Script::new(&p, &[(0, 0, 0b1111), (1, 0, 0b1111)]);
    s.events(&[(0, REL, NO, 0, 0b1111), (1, REL, NO, 1, 0b0011)])
        .events(&[])
        .events(&[(1, REL, NO, 1, 0b1100)])
        .events(&[]);
    let r = s.run();
    r.done(&[0b1110, 0b1110, 0b1111, 0b1111]);
    r.tb_empty(&[0b1110; 4]);
    r.rbits(0, &[0, 0b1111, 0b1111, 0b1111]);
    r.rbits(1, &[0, 0b0011, 0b0011, 0b1111]);
}

/// A9: threads exit without relssp; unlaunched lanes never block; done and tb_empty rise in the
/// cycle the last live thread exits.
#[test]
fn a9_exits_without_relssp_finish_the_tb() {
    let p = small();
    // Warp 3 launched only lanes 0-1.
    let mut s = Script::new(&p, &[(2, 1, 0b1111), (3, 1, 0b0011)]);
    s.events(&[(0, NO, EXIT, 2, 0b0101)]);
    s.set_live(2, 0b1010)
        .events(&[(0, NO, EXIT, 2, 0b1010), (1, NO, EXIT, 3, 0b0011)]);
    s.set_live(2, 0).set_live(3, 0).events(&[]);
    let r = s.run();
    r.done(&[0b1101, 0b1111, 0b1111]);
    r.tb_empty(&[0b1101, 0b1111, 0b1111]);
    r.rbits(2, &[0, 0, 0]);
}

/// A partly exited TB: the exited lanes no longer need relssp, the remaining ones do.
#[test]
fn exited_lanes_do_not_block_the_rest() {
    let p = small();
    let mut s = Script::new(&p, &[(0, 2, 0b1111)]);
    s.events(&[(0, NO, EXIT, 0, 0b0011)]);
    s.set_live(0, 0b1100).events(&[(1, REL, NO, 0, 0b1100)]);
    let r = s.run();
    r.done(&[0b1011, 0b1111]);
    r.tb_empty(&[0b1011, 0b1011]);
}

/// A10, relssp side: relssp by a warp of another slot changes only that slot's done.
#[test]
fn a10_relssp_changes_only_its_own_slot() {
    let p = small();
    let mut s = Script::new(&p, &[(0, 0, 0b1111), (5, 2, 0b1111)]);
    s.events(&[]).events(&[(1, REL, NO, 5, 0b1111)]).events(&[]);
    let r = s.run();
    r.done(&[0b1010, 0b1110, 0b1110]);
    r.rbits(0, &[0, 0, 0]);
    r.rbits(5, &[0, 0, 0b1111]);
}

/// warp_launch clears the warp's release bits, and wins over a relssp of the same cycle.
#[test]
fn warp_launch_clears_r_and_wins_over_relssp() {
    let p = small();
    let mut s = Script::new(&p, &[(4, 3, 0b1111)]);
    s.events(&[(0, REL, NO, 4, 0b1111)])
        .events(&[])
        .cycle(&[(1, REL, NO, 4, 0b0001)], |c| c.warp_launch[4] = true)
        .events(&[])
        .cycle(&[], |c| c.warp_launch[4] = true);
    let r = s.run();
    r.done(&[0b1111, 0b1111, 0b0111, 0b0111, 0b0111]);
    r.rbits(4, &[0, 0b1111, 0b1111, 0, 0]);
}

/// Idempotence: a repeated relssp sets the same bits again (a counter would count 2 + 2 = 4
/// lanes and release).
#[test]
fn repeated_relssp_is_idempotent() {
    let p = small();
    let mut s = Script::new(&p, &[(0, 0, 0b1111)]);
    s.events(&[(0, REL, NO, 0, 0b0011)])
        .events(&[(0, REL, NO, 0, 0b0011)])
        .events(&[(0, REL, NO, 0, 0b0011), (1, REL, NO, 0, 0b0011)])
        .events(&[(1, REL, NO, 0, 0b1000)])
        .events(&[(1, REL, NO, 0, 0b0100)]);
    let r = s.run();
    r.done(&[0b1110, 0b1110, 0b1110, 0b1110, 0b1111]);
    r.rbits(0, &[0, 0b0011, 0b0011, 0b0011, 0b1011]);
}

/// Several ports in one cycle: their masks OR per warp (relssp on two ports, relssp and exit of
/// the same warp, one instruction carrying both), all counted in done in that cycle.
#[test]
fn events_of_several_ports_in_one_cycle() {
    let p = params("small", &[("NSCHED", "4")]);
    let mut s = Script::new(&p, &[(0, 0, 0b1111), (1, 1, 0b1111), (2, 2, 0b1111)]);
    s.events(&[
        (0, REL, NO, 0, 0b0011),
        (1, REL, NO, 0, 0b1100),
        (2, REL, NO, 1, 0b0110),
        (3, NO, EXIT, 1, 0b1001),
    ]);
    // Next cycle the SM has cleared warp 1's exited lanes; warp 2's one instruction both
    // releases and exits.
    s.set_live(1, 0b0110).events(&[(0, REL, EXIT, 2, 0b1111)]);
    let r = s.run();
    r.done(&[0b1011, 0b1111]);
    r.tb_empty(&[0b1000, 0b1100]);
}

/// "A relssp or exit issued in cycle c counts in done in c": done follows the event in the
/// same cycle, not the next.
#[test]
fn done_in_the_cycle_of_the_event() {
    let p = small();
    let mut s = Script::new(&p, &[(6, 1, 0b0110)]);
    s.events(&[])
        .events(&[(0, REL, NO, 6, 0b0110)])
        .cycle(&[], |c| c.warp_launch[6] = true)
        .events(&[(1, NO, EXIT, 6, 0b0110)]);
    let r = s.run();
    r.done(&[0b1101, 0b1111, 0b1101, 0b1111]);
    r.tb_empty(&[0b1101, 0b1101, 0b1101, 0b1111]);
}

/// Out-of-range rules: a warp whose slot id is ≥ T belongs to no slot; an event on a warp id ≥ W
/// is ignored; ev_valid = 0 ignores rel and exit; invalid warps do not count.
#[test]
fn out_of_range_ids_and_invalid_inputs_are_ignored() {
    // T = 3 (slot ids 0..3 in 2 bits), W = 6 (warp ids 0..7 in 3 bits).
    let p = params("small", &[("T", "3"), ("W", "6")]);
    let mut s = Script::new(&p, &[(0, 3, 0b1111), (1, 1, 0b1111), (5, 2, 0b1111)]);
    s.events(&[(0, REL, NO, 7, 0b1111), (1, REL, NO, 6, 0b1111)])
        .cycle(&[(0, REL, EXIT, 1, 0b1111)], |c| c.ev_valid[0] = false)
        .cycle(&[], |c| c.warp_valid[5] = false)
        .events(&[(0, REL, NO, 1, 0b1111)]);
    let r = s.run();
    r.done(&[0b001, 0b001, 0b101, 0b011]);
    r.tb_empty(&[0b001, 0b001, 0b101, 0b001]);
    r.rbits(1, &[0, 0, 0, 0]);
}

/// The paper's shape: a TB of four 32-lane warps releases when its last live thread runs
/// relssp; reset clears R.
#[test]
fn paper_shape_tb_of_four_warps() {
    let p = Params::default();
    let full = u64::from(u32::MAX);
    let warps: Vec<(usize, u64, u64)> = (0..4).map(|w| (40 + w, 9, full)).collect();
    let mut s = Script::new(&p, &warps);
    let all: Vec<(usize, bool, bool, u64, u64)> =
        (0..4).map(|q| (q, REL, NO, 40 + q as u64, full)).collect();
    let slot9 = 1u64 << 9;
    let others = u64::from(u16::MAX) & !slot9;
    s.events(&all[..3])
        .events(&[(0, REL, NO, 43, full >> 1)])
        .events(&[(2, REL, NO, 43, 1 << 31)])
        .cycle(&[], |c| c.reset = true)
        .events(&[]);
    let r = s.run();
    r.done(&[others, others, others | slot9, others | slot9, others]);
    r.rbits(43, &[0, 0, full >> 1, full, 0]);
}
