//! Spec §6 `FrontEnd<fe_depth>`: F, D1..Dk and EXE, advanced by §3.2 step 7
//! (docs/elastic-pipeline.md §3.2, §6).

use super::entry::{one, part, sub_module, Latch, Layout};
use super::stage_ports;
use crate::netlist::{Expr, Module};

/// Ports of [`front_end`].
pub(super) mod fe_port {
    pub const IN_VALID: &str = "in_valid";
    pub const IN_ENTRY: &str = "in_entry";
    /// EXE's entry leaves EXE at this edge (spec §6 `exe_accept`).
    pub const EXE_ACCEPT: &str = "exe_accept";
    pub const IN_READY: &str = "in_ready";
    pub const FE_HOLD: &str = "fe_hold";
    pub const EXE_VALID: &str = "exe_valid";
    pub const EXE_ENTRY: &str = "exe_entry";
}

/// Spec §6 `FrontEnd<fe_depth>`: the latches F, D1..Dk (k = `depth`) and EXE, advanced by step 7's
/// bubble-collapsing rule (D2). Besides the [`fe_port`] ports it taps F and every D latch for the
/// trace as `<stage>_valid` and `<stage>_tag` (0 when empty); EXE is visible at `exe_valid` and
/// `exe_entry`.
pub(super) fn front_end(lay: Layout, depth: usize) -> Module {
    use fe_port as fp;
    let parts = [vec![part("D", depth)], lay.parts()].concat();
    let mut m = sub_module(
        "frontend",
        &parts,
        &format!("FrontEnd<fe_depth = {depth}>, {}", lay.key()),
    );
    m.clock_reset();
    let in_valid = m.input(fp::IN_VALID, 1);
    let in_entry = m.input(fp::IN_ENTRY, lay.width());
    let exe_accept = m.input(fp::EXE_ACCEPT, 1);
    let in_ready = m.output(fp::IN_READY, 1);
    let fe_hold = m.output(fp::FE_HOLD, 1);
    let exe_valid = m.output(fp::EXE_VALID, 1);
    let exe_entry = m.output(fp::EXE_ENTRY, lay.width());
    // F, D1..Dk: the latches an entry passes before EXE.
    let names: Vec<String> = std::iter::once("f".to_string())
        .chain((1..=depth).map(|k| format!("d{k}")))
        .collect();
    let taps: Vec<(Expr, Expr)> = names
        .iter()
        .map(|s| {
            let (v, t) = stage_ports(s);
            (m.output(&v, 1), m.output(&t, lay.tag))
        })
        .collect();
    let chain: Vec<Latch> = names.iter().map(|s| Latch::new(&mut m, lay, s)).collect();
    let exe = Latch::new(&mut m, lay, "exe");

    m.section("§3.2 step 7: bubble-collapsing advance (D2), EXE first");
    let mut moves = vec![one(false); chain.len()];
    let mut next_free = m.wire("exe_free", !exe.valid.clone() | exe_accept.clone());
    for k in (0..chain.len()).rev() {
        moves[k] = m.wire(&format!("{}_moves", names[k]), &chain[k].valid & &next_free);
        next_free = m.wire(
            &format!("{}_free", names[k]),
            !chain[k].valid.clone() | moves[k].clone(),
        );
    }
    m.assign(&fe_hold, &chain[0].valid & &!moves[0].clone());
    m.assign(&in_ready, !fe_hold.clone());
    let f_load = m.wire("f_load", &in_valid & &in_ready);

    m.section("registers: F from the issue source, each later latch from its predecessor");
    chain[0].update(&mut m, &f_load, &lay.unpack(&in_entry), &moves[0]);
    for k in 1..chain.len() {
        chain[k].update(&mut m, &moves[k - 1], &chain[k - 1].e, &moves[k]);
    }
    let last = chain.len() - 1;
    exe.update(&mut m, &moves[last], &chain[last].e, &exe_accept);

    m.section("outputs: EXE and the trace taps");
    m.assign(&exe_valid, exe.valid.clone());
    m.assign(&exe_entry, exe.e.pack());
    for (latch, (v, t)) in chain.iter().zip(&taps) {
        m.assign(v, latch.valid.clone());
        m.assign(t, latch.shown_tag());
    }
    m
}
