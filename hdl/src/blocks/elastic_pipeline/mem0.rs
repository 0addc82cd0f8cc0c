//! Spec §6 `Mem0Stage`: MEM0, its service counter and the bank-conflict detector, §3.2 step 1
//! (docs/elastic-pipeline.md §3.2, §6).

use super::entry::{part, sub_module, Latch, Layout, Part};
use super::{Kind, Params};
use crate::blocks::bank_conflict_detector as detector;
use crate::netlist::{concat, concat_wide, Expr, Module};
use crate::params::log2;
use std::sync::Arc;

/// Ports of [`mem0_stage`].
pub(super) mod mem0_port {
    /// MEM0 loads `in_entry` at this edge (EXE bypass or PRE head).
    pub const IN_VALID: &str = "in_valid";
    pub const IN_ENTRY: &str = "in_entry";
    /// The successor can take a finished entry (MEM1 free; with M = 1, WB selected MEM_last).
    pub const OUT_READY: &str = "out_ready";
    pub const VALID: &str = "valid";
    pub const ENTRY: &str = "entry";
    /// Service cycles left including this one, 0 when MEM0 is empty.
    pub const REM: &str = "rem";
    /// MEM0 valid ∧ rem = 1 (`mem0_done`).
    pub const DONE: &str = "done";
    /// MEM0 valid ∧ rem > 1 (the bank-conflict half of the §3.3 cause).
    pub const CONFLICT_BUSY: &str = "conflict_busy";
    /// The entry leaves MEM0 at this edge: `done` ∧ `out_ready`.
    pub const LEAVE: &str = "leave";
    /// The entry's service time c.
    pub const C: &str = "c";
}

/// What a [`mem0_stage`] is built from; its key spells out every field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Mem0Key {
    lay: Layout,
    det: detector::Params,
}

impl Mem0Key {
    pub(super) fn of(p: &Params, pcw: usize) -> Mem0Key {
        let (lay, det) = (Layout::of(p, pcw), p.detector());
        // Lanes and address width are the layout's; W = 4, combinational.
        assert_eq!(det.lanes as usize, lay.lanes);
        assert_eq!(det.addr_bits as usize, lay.addr + 2);
        assert!(det.layer_bytes == 4 && !det.reg_out);
        Mem0Key { lay, det }
    }

    /// The name's parts: the layout's, and the detector's banks, mode and ports (its lanes and
    /// address width are the layout's, W = 4).
    fn parts(&self) -> Vec<Part> {
        let mode = serde_json::to_value(self.det.mode).expect("mode serializes");
        let det = [
            part("B", self.det.banks),
            part("MODE", mode),
            part("P", self.det.ports),
        ];
        [self.lay.parts(), det.to_vec()].concat()
    }

    /// The detector module's name is unique per detector configuration (P included).
    fn key(&self, detector: &Module) -> String {
        format!(
            "Mem0Stage, {}, detector {} (P {})",
            self.lay.key(),
            detector.name,
            self.det.ports
        )
    }
}

/// Spec §6 `Mem0Stage`: the MEM0 latch, its elapsed-service counter (rem = c − elapsed) and the
/// bank-conflict detector instance `det` (W = N = M = 4, byte address = word address × 4),
/// with the [`mem0_port`] ports.
pub(super) fn mem0_stage(key: &Mem0Key) -> Module {
    use mem0_port as mp;
    let lay = key.lay;
    let rw = lay.deg();
    let det_module = Arc::new(detector::build(&key.det));
    let mut m = sub_module("mem0", &key.parts(), &key.key(&det_module));
    m.clock_reset();
    let in_valid = m.input(mp::IN_VALID, 1);
    let in_entry = m.input(mp::IN_ENTRY, lay.width());
    let out_ready = m.input(mp::OUT_READY, 1);
    let valid_o = m.output(mp::VALID, 1);
    let entry_o = m.output(mp::ENTRY, lay.width());
    let rem_o = m.output(mp::REM, rw);
    let done = m.output(mp::DONE, 1);
    let conflict_busy = m.output(mp::CONFLICT_BUSY, 1);
    let leave = m.output(mp::LEAVE, 1);
    let c = m.output(mp::C, rw);
    let mem0 = Latch::new(&mut m, lay, "mem0");
    let elapsed = m.reg("mem0_elapsed_q", rw, 0);

    m.section("§3.2 step 1: service time c = ceil(d/P) for SMEM, else 1");
    let det = m.instance("det", &det_module);
    m.assign(&det.input(detector::port::VALID), mem0.valid.clone());
    m.assign(&det.input(detector::port::LANE_MASK), mem0.e.act.clone());
    // Lane l's byte address (word address × 4) at bits [l·A +: A], lane 0 lowest.
    let lanes: Vec<Expr> = mem0
        .e
        .addr
        .iter()
        .rev()
        .map(|a| concat(&[a.clone(), Expr::lit(0, 2)]))
        .collect();
    m.assign(&det.input(detector::port::ADDR), concat_wide(&lanes));
    let det_cycles = det.output(detector::port::CYCLES);
    let sh = log2(key.det.ports) as usize;
    let ovr = m.wire(
        "deg_plus_p1",
        &mem0.e.deg + &Expr::lit(u64::from(key.det.ports) - 1, rw),
    );
    let ovr_cycles = ovr.slice(sh, rw - sh).zext(rw);
    let is_smem = mem0.e.kind.equals(&Expr::lit(Kind::Smem as u64, 2));
    let has_ovr = mem0.e.deg.any();
    let smem_c = has_ovr.mux(&ovr_cycles, &det_cycles);
    m.assign(&c, is_smem.mux(&smem_c, &Expr::lit(1, rw)));

    m.section("§3.2 step 1: rem = c - elapsed; done at rem = 1, else the entry stays");
    let rem = m.wire("mem0_rem_now", &c - &elapsed);
    m.assign(&done, &mem0.valid & &rem.equals(&Expr::lit(1, rw)));
    m.assign(&conflict_busy, &mem0.valid & &!done.clone());
    m.assign(&leave, &done & &out_ready);

    m.section("registers: rem counts down while > 1; a blocked finished entry stays at 1");
    mem0.update(&mut m, &in_valid, &lay.unpack(&in_entry), &leave);
    let restart = &in_valid | &leave;
    let next_elapsed = restart.mux(
        &Expr::lit(0, rw),
        &conflict_busy.mux(&(&elapsed + &Expr::lit(1, rw)), &elapsed),
    );
    m.next(&elapsed, next_elapsed);

    m.section("outputs");
    m.assign(&valid_o, mem0.valid.clone());
    m.assign(&entry_o, mem0.e.pack());
    m.assign(&rem_o, mem0.valid.mux(&rem, &Expr::lit(0, rw)));
    m
}
