//! Hardware cost of the BCAWS prediction and mask hardware (docs/elastic-pipeline.md §7,
//! Table 3): Yosys generic figures of `history_cache`, its storage against the paper's
//! 5632 bits (6400 with the project's valid and MRU bits), and the ready-mask gates against the
//! paper's 2 × W AND/NAND gates.
//!
//! The cache's tag and data arrays are memories (`reg [W-1:0] mem [0:D-1]`, read
//! asynchronously), its valid and MRU bits registers; the RTL's storage is therefore Yosys's
//! register bits plus its memory bits. The generic flow maps the memories to flip-flops, the
//! iCE40 flow too (an asynchronous read cannot use its block RAM), the Xilinx flow to LUT-RAM.
//! The register inventory ([`register_inventory`]) is the flip-flops alone.

use crate::yosys::GenericReport;
use serde::Serialize;
use smrtl_hdl::blocks::history_cache::{build, Params};
use smrtl_hdl::netlist::{replicate, Module};
use smrtl_hdl::tools::ToolError;
use std::sync::Arc;

/// Storage bits of `build(p)` (registers and memory words), counted from the params.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Registers {
    /// Cache lines: hc_sets × hc_ways.
    pub lines: u64,
    /// Bits of one line: valid 1 + tag (PCW − log2 sets) + data DW.
    pub line_bits: u64,
    /// MRU bits: one per set with 2 ways, else 0.
    pub mru_bits: u64,
    /// Accumulator, DW.
    pub acc_bits: u64,
    /// Distance counter, DW.
    pub counter_bits: u64,
    /// The flip-flops: valid bits (one per line), MRU bits, accumulator and counter. The tag and
    /// data arrays are memories, not among them (see [`register_inventory`]).
    pub flip_flops: u64,
    /// All storage bits: the flip-flops and the lines' tag and data words.
    pub total: u64,
}

impl Registers {
    /// Counts for `p`.
    pub fn of(p: &Params) -> Registers {
        let lines = u64::from(p.hc_sets * p.hc_ways);
        let line_bits = 1 + (p.tag_bits() + p.dw()) as u64;
        let mru_bits = if p.hc_ways == 2 {
            u64::from(p.hc_sets)
        } else {
            0
        };
        let dw = p.dw() as u64;
        Registers {
            lines,
            line_bits,
            mru_bits,
            acc_bits: dw,
            counter_bits: dw,
            flip_flops: lines + mru_bits + 2 * dw,
            total: lines * line_bits + mru_bits + 2 * dw,
        }
    }
}

impl crate::BlockCost for Params {
    fn cost_notes(&self) -> Result<crate::Notes, ToolError> {
        notes(self)
    }
    fn register_inventory(&self) -> Option<u64> {
        Some(register_inventory(self))
    }
}

/// The block's flip-flop bits (docs/elastic-pipeline.md §5.2–5.4): one valid bit per line, one
/// MRU bit per set with 2 ways, the accumulator and the distance counter (DW each): 778 for the
/// paper preset. The lines' tags and data are memories (asynchronous-read arrays, LUT-RAM), which
/// the IR and Yosys count as memory bits, not registers, so they are not in this inventory; the
/// whole storage against Table 3 is [`Storage`] in the notes.
pub fn register_inventory(p: &Params) -> u64 {
    Registers::of(p).flip_flops
}

/// Cache storage: the paper's count, the project's count and what the RTL holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Storage {
    /// Table 3: lines × (DW + tag) bits (5632 = 704 bytes for the paper preset).
    pub paper_bits: u64,
    /// With valid (one per line) and MRU (one per set, 2 ways) bits (6400 = 800 bytes).
    pub with_state_bits: u64,
    /// Storage bits of the cache in the Yosys RTL: `rtl_flip_flops` + `memory_bits` minus the
    /// accumulator and the counter (2 × DW). Equals `with_state_bits` when the RTL is as
    /// specified, except with one set: the netlist's memories are at least 2 words deep, so a
    /// 1-set cache holds one unused word per way.
    pub measured_cache_bits: u64,
    /// Flip-flops after generic synthesis (memories mapped to flip-flops) minus 2 × DW (Yosys
    /// may merge or drop constant bits).
    pub synthesized_cache_bits: i64,
}

/// The ready-mask gates (Table 3: 2 × W AND/NAND gates).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MaskGates {
    /// 2 × W (64 at W = 32).
    pub paper: u64,
    /// As built: `ready & ~({W{mask}} & is_mem)`, W NANDs + W ANDs.
    pub as_built: u64,
    /// Yosys generic cells of that expression alone (a separate W-bit module), by type.
    pub measured_cells: u64,
    pub measured_by_type: std::collections::BTreeMap<String, u64>,
    /// Logic depth of that module (cells, `ltp -noff`).
    pub measured_depth: Option<u64>,
}

/// Table 3 items beside the RTL.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HistoryCacheCost {
    pub params: Params,
    pub registers: Registers,
    /// Yosys generic report of the whole block.
    pub generic: GenericReport,
    pub storage: Storage,
    pub mask_gates: MaskGates,
    /// Table 3's DW-bit items (accumulator, counter, comparator, 2:1 MUX): DW each.
    pub table3_dw_items_bits: u64,
}

/// Just the ready-mask path of `W` warps: `ready_m = ready & ~({W{mask}} & is_mem)`.
pub fn mask_module(warps: usize) -> Module {
    let mut m = Module::new("bcaws_ready_mask");
    let ready = m.input("ready", warps);
    let is_mem = m.input("is_mem", warps);
    let mask = m.input("mask", 1);
    let out = m.output("ready_m", warps);
    m.assign(&out, &ready & &!(replicate(&mask, warps) & is_mem));
    m
}

/// Synthesizes `build(p)` (generic flow) and the mask path alone, and reports both against
/// Table 3.
pub fn cost(p: &Params) -> Result<HistoryCacheCost, ToolError> {
    let module = Arc::new(build(p));
    let mask = Arc::new(mask_module(p.warps as usize));
    let (whole, mask_report) = std::thread::scope(|s| {
        let mask_report = s.spawn(|| crate::cost_of(&mask, false));
        let whole = crate::cost_of(&module, false);
        (whole, mask_report.join().expect("mask synthesis thread"))
    });
    let generic = whole?.generic;
    let mask_report = mask_report?.generic;
    let registers = Registers::of(p);
    let dw = p.dw() as u64;
    let storage = Storage {
        paper_bits: p.storage_bits(),
        with_state_bits: p.storage_bits_with_state(),
        measured_cache_bits: (generic.rtl_flip_flops + generic.memory_bits).saturating_sub(2 * dw),
        synthesized_cache_bits: generic.flip_flops as i64 - 2 * dw as i64,
    };
    let w = u64::from(p.warps);
    Ok(HistoryCacheCost {
        params: p.clone(),
        registers,
        storage,
        mask_gates: MaskGates {
            paper: 2 * w,
            as_built: 2 * w,
            measured_cells: mask_report.cells,
            measured_by_type: mask_report.cells_by_type.clone(),
            measured_depth: mask_report.logic_depth,
        },
        table3_dw_items_bits: dw,
        generic,
    })
}

/// The history cache's lines in `smrtl synth`: storage and mask gates beside the paper's Table 3.
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let c = cost(p)?;
    let mut n = crate::Notes {
        generic: Some(c.generic.clone()),
        ..Default::default()
    };
    let s = &c.storage;
    n.add(
        format!(
            "cache storage: {} bits in the RTL, registers and memories ({} flip-flops after generic synthesis); paper Table 3: {} bits = {} bytes (lines x (DW + tag)), {} bits = {} bytes with valid and MRU bits",
            s.measured_cache_bits,
            s.synthesized_cache_bits,
            s.paper_bits,
            s.paper_bits / 8,
            s.with_state_bits,
            s.with_state_bits / 8
        ),
        "storage",
        s,
    );
    let m = &c.mask_gates;
    n.add(
        format!(
            "ready mask alone: {} cells (depth {}); paper Table 3: {} AND/NAND gates (2 x W)",
            m.measured_cells,
            m.measured_depth.map_or("n/a".into(), |x| x.to_string()),
            m.paper
        ),
        "mask_gates",
        m,
    );
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use smrtl_hdl::BlockParams;

    /// Table 3 (G23): 5632 bits = 704 bytes of lines × (DW + tag), 6400 = 800 bytes with valid
    /// and MRU bits; of the block's storage, 512 valid + 256 MRU + 2 × 5 bits are flip-flops.
    #[test]
    fn inventory_beside_table3() {
        let p = Params::default();
        let r = Registers::of(&p);
        assert_eq!(
            (p.storage_bits(), p.storage_bits_with_state()),
            (5632, 6400)
        );
        assert_eq!(r.total, 6400 + 2 * 5);
        assert_eq!(register_inventory(&p), 512 + 256 + 10);
        for (name, p) in Params::presets() {
            let m = build(&p);
            assert_eq!(m.register_bits(), register_inventory(&p), "{name}");
            // The netlist's memories are at least 2 words deep: one set leaves a word per way.
            let unused = match p.hc_sets {
                1 => u64::from(p.hc_ways) * (p.tag_bits() + p.dw()) as u64,
                _ => 0,
            };
            let storage = m.register_bits() + m.memory_bits();
            assert_eq!(storage, Registers::of(&p).total + unused, "{name}");
        }
    }
}
