//! Hardware cost of scratchpad sharing (docs/scratchpad-sharing.md §7; Jatala et al., seed 001,
//! §7.1): the storage smrtl implements, row by row, each checked against Yosys's flip-flop
//! count of the module that holds it, beside the paper's own count [`paper_cost_bits`].

use crate::yosys::GenericReport;
use serde::Serialize;
use smrtl_hdl::blocks::sharing::ceil_log2;
use smrtl_hdl::blocks::sharing_core::{build, Params};
use smrtl_hdl::blocks::{lock_table, relssp_unit, share_cfg, warp_scheduler};
use smrtl_hdl::tools::ToolError;
use std::sync::Arc;

/// The paper's storage per SM times `n` SMs (§7.1): ShSM, the ShTB table, `W` owner bits and
/// ⌊T/2⌋ lock variables of ⌈log2 T⌉ bits: `(1 + T·⌈log2(T+1)⌉ + W + ⌊T/2⌋·⌈log2 T⌉)·N`.
/// 209 bits for T = 16, W = 96 (the paper's `T·log2(T+1)` must be rounded up to give it).
pub fn paper_cost_bits(t: u64, w: u64, n: u64) -> u64 {
    let lg = |x: u64| ceil_log2(x as u32) as u64;
    (1 + t * lg(t + 1) + w + (t / 2) * lg(t)) * n
}

/// One row of the §7 inventory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Row {
    pub structure: &'static str,
    pub formula: &'static str,
    pub bits: u64,
    /// The paper's bits for the same structure (0: not in the paper).
    pub paper: u64,
    /// What the difference is made of.
    pub why: &'static str,
}

/// The storage smrtl implements for `p` (§7), row by row.
pub fn inventory(p: &Params) -> Vec<Row> {
    let s = &p.shape;
    let (t, w, lanes, ns) = (
        s.slots as u64,
        s.warps as u64,
        s.lanes as u64,
        s.nsched as u64,
    );
    let (aw, sw, tw, kp) = (s.aw() as u64, s.sw() as u64, s.tw() as u64, s.kp() as u64);
    let row = |structure, formula, bits, paper, why| Row {
        structure,
        formula,
        bits,
        paper,
        why,
    };
    vec![
        row(
            "ShSM, u",
            "1 + AW",
            1 + aw,
            1,
            "u is a configuration register (the paper keeps t·R_tb implicit)",
        ),
        row("ShTB", "T·TW", t * tw, t * tw, "the same table"),
        row(
            "base",
            "T·AW",
            t * aw,
            0,
            "per-slot translation base of the §1.4 layout (the paper gives no layout)",
        ),
        row(
            "locks",
            "KP·(1+SW)",
            kp * (1 + sw),
            kp * sw,
            "a valid bit per lock: a ⌈log2 T⌉-bit id cannot also encode free",
        ),
        row(
            "owner bits",
            "0 (paper: W)",
            0,
            w,
            "decoded from the locks combinationally (owner_class), so never stale",
        ),
        row(
            "pend",
            "T·PEND_W",
            t * p.pend_w as u64,
            0,
            "in-flight counters of the drain rule (§2.4)",
        ),
        row(
            "R bits",
            "W·LANES",
            w * lanes,
            0,
            "the relssp release bits per thread (§3); the paper counts no storage for them",
        ),
        row(
            "errors, scheduler last",
            "2 + NSCHED·(1+⌈log2 WS⌉)",
            // TWO_LEVEL_ACTIVE adds its lists (docs §4.1).
            2 + ns * p.child::<warp_scheduler::Params>().register_bits(),
            0,
            "sticky err_proto / err_pend, and each scheduler's last pick",
        ),
    ]
}

/// The inventory's total.
pub fn total(rows: &[Row]) -> u64 {
    rows.iter().map(|r| r.bits).sum()
}

impl crate::BlockCost for Params {
    fn cost_notes(&self) -> Result<crate::Notes, ToolError> {
        notes(self)
    }
    /// The §7 inventory's total (3,553 bits at the defaults).
    fn register_inventory(&self) -> Option<u64> {
        Some(total(&inventory(self)))
    }
}

/// Flip-flops Yosys counts in each block module of the core, against the inventory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ModuleCheck {
    pub module: String,
    pub instances: u64,
    pub inventory: u64,
    pub yosys: u64,
}

/// Synthesizes the core (generic flow) and checks each block module's flip-flops.
pub fn checks(p: &Params) -> Result<(GenericReport, Vec<ModuleCheck>), ToolError> {
    let module = Arc::new(build(p));
    let generic = crate::cost_of(&module, false)?.generic;
    let s = &p.shape;
    let (aw, tw, sw, kp) = (s.aw(), s.tw(), s.sw(), s.kp());
    let (t, w, lanes) = (s.slots as usize, s.warps as usize, s.lanes as usize);
    let expect = [
        (share_cfg::build(&p.child()).name, 1 + aw + t * tw + t * aw),
        (
            lock_table::build(&p.child()).name,
            kp * (1 + sw) + t * p.pend_w as usize + 2,
        ),
        (relssp_unit::build(&p.child()).name, w * lanes),
        (
            warp_scheduler::build(&p.child()).name,
            p.child::<warp_scheduler::Params>().register_bits() as usize,
        ),
    ];
    let checks = expect
        .into_iter()
        .map(|(name, bits)| {
            let m = generic.modules.iter().find(|m| m.name == name);
            ModuleCheck {
                instances: m.map_or(0, |m| m.instances),
                yosys: m.map_or(0, |m| m.flip_flops),
                module: name,
                inventory: bits as u64,
            }
        })
        .collect();
    Ok((generic, checks))
}

/// The core's lines in `smrtl synth`: the §7 inventory beside the paper, and Yosys's count.
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let rows = inventory(p);
    let (generic, checks) = checks(p)?;
    let mut n = crate::Notes {
        generic: Some(generic),
        ..Default::default()
    };
    let s = &p.shape;
    let paper = paper_cost_bits(s.slots as u64, s.warps as u64, 1);
    for r in &rows {
        n.lines.push(format!(
            "{:<24} {:<28} {:>6} bits (paper {:>4}): {}",
            r.structure, r.formula, r.bits, r.paper, r.why
        ));
    }
    let yosys: u64 = checks.iter().map(|c| c.yosys * c.instances).sum();
    n.add(
        format!(
            "total {} storage bits per SM (Yosys flip-flops in the blocks: {yosys}); paper §7.1: {paper} bits per SM, {} for 14 SMs",
            total(&rows),
            paper_cost_bits(s.slots as u64, s.warps as u64, 14)
        ),
        "inventory",
        &rows,
    );
    n.json.insert("paper_cost_bits".into(), paper.into());
    n.json.insert(
        "module_checks".into(),
        serde_json::to_value(&checks).expect("checks serialize"),
    );
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use smrtl_hdl::BlockParams;

    /// Spec §9 A3 and the §7 table.
    #[test]
    fn a3_paper_bits_and_the_inventory_at_the_defaults() {
        assert_eq!(paper_cost_bits(16, 96, 1), 209);
        assert_eq!(paper_cost_bits(16, 96, 14), 2926);
        let rows = inventory(&Params::default());
        let bits: Vec<u64> = rows.iter().map(|r| r.bits).collect();
        assert_eq!(bits, [15, 80, 224, 40, 0, 96, 3072, 26]);
        assert_eq!(total(&rows), 3553);
        for (name, p) in Params::presets() {
            assert_eq!(build(&p).register_bits(), total(&inventory(&p)), "{name}");
        }
    }
}
