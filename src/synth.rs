//! `smrtl synth`: hardware cost of a block from Yosys (generic gates and iCE40 LUT4 / carry),
//! with the block's own figures and the spec's expectations beside the measured ones.

use crate::{design, BlockArgs, Result};
use smrtl_hdl::bank_conflict_detector::Params as DetectorParams;
use smrtl_hdl::elastic_pipeline::{Params as PipelineParams, PipeMode};
use smrtl_synth::bank_conflict_detector as detector;
use std::process::ExitCode;

pub fn run(args: &BlockArgs, json: bool, ice40: bool) -> Result<ExitCode> {
    let d = design(args)?;
    smrtl_hdl::tools::require("yosys")?;
    // The generic flow, unless a block report below already ran it.
    let mut generic = None;
    // Block-specific lines: (label, JSON) pairs shown after the generic figures.
    let mut extra: Vec<(String, serde_json::Value)> = vec![];
    if d.name == "bank_conflict_detector" {
        let p: DetectorParams = serde_json::from_value(d.params.clone())?;
        let s = detector::Structure::of(&p);
        extra.push((
            format!(
                "structure: {} lane pairs x {} compare bits (layer tag {} bits), {} popcount inputs, {} max compares",
                s.lane_pairs, s.compare_bits_per_pair, s.layer_tag_bits, s.popcount_inputs, s.max_compares
            ),
            serde_json::json!({"structure": s}),
        ));
        let expect: Vec<String> = detector::EXPECTATIONS
            .iter()
            .map(|e| format!("\n    - {e}"))
            .collect();
        extra.push((
            format!("spec bank-conflicts.md §2.3 expects:{}", expect.concat()),
            serde_json::json!({"expectations": detector::EXPECTATIONS}),
        ));
    }
    if d.name == "elastic_pipeline" {
        let p: PipelineParams = serde_json::from_value(d.params.clone())?;
        if p.pipe_mode == PipeMode::Elastic {
            let o = smrtl_synth::elastic_pipeline::overhead(&p)?;
            extra.push((
                format!(
                    "Elastic minus Unified (same params): +{} register bits in the RTL = {:.1} lane latches of {:.3} bits, +{} flip-flops after synthesis, +{} cells ({} 2:1 MUX cells)\n  paper Table 2 for M = {}, N = {}, L = {}: {} SIMD latches = {} lane latches, a {}:1 WB MUX and a {}:1 MEM0 MUX",
                    o.rtl_ff_bits.difference,
                    o.rtl_lane_latches,
                    o.entry_bits_per_lane,
                    o.ff_bits.difference,
                    o.cells.difference,
                    o.mux_cells.difference,
                    p.mem_stages,
                    p.premem_depth,
                    p.lanes,
                    o.paper.simd_latches,
                    o.paper.lane_latches,
                    o.paper.wb_mux_inputs,
                    p.premem_depth + 1,
                ),
                serde_json::json!({"overhead": o}),
            ));
            for n in &o.notes {
                extra.push((format!("  - {n}"), serde_json::json!({})));
            }
        }
    }
    if d.name == "history_cache" {
        let p: smrtl_hdl::history_cache::Params = serde_json::from_value(d.params.clone())?;
        let c = smrtl_synth::history_cache::cost(&p)?;
        generic = Some(c.generic.clone());
        let s = &c.storage;
        extra.push((
            format!(
                "cache storage: {} register bits in the RTL ({} after synthesis); paper Table 3: {} bits = {} bytes (lines x (DW + tag)), {} bits = {} bytes with valid and MRU bits",
                s.measured_cache_bits,
                s.synthesized_cache_bits,
                s.paper_bits,
                s.paper_bits / 8,
                s.with_state_bits,
                s.with_state_bits / 8
            ),
            serde_json::json!({"storage": s}),
        ));
        let m = &c.mask_gates;
        extra.push((
            format!(
                "ready mask alone: {} cells (depth {}); paper Table 3: {} AND/NAND gates (2 x W)",
                m.measured_cells,
                m.measured_depth.map_or("n/a".into(), |x| x.to_string()),
                m.paper
            ),
            serde_json::json!({"mask_gates": m}),
        ));
    }
    if d.name == "sm_core" {
        let p: smrtl_hdl::sm_core::Params = serde_json::from_value(d.params.clone())?;
        let c = smrtl_synth::sm_core::cost(&p)?;
        generic = Some(c.generic.clone());
        let r = &c.registers;
        extra.push((
            format!(
                "register bits: pipeline {} (entries carry a {}-bit PC), BCAWS {} (history cache, accumulator, counter), scheduler + issue unit {} = {} (netlist: {})",
                r.pipeline, p.pc_bits, r.bcaws, r.scheduler, r.total, c.built_register_bits
            ),
            serde_json::json!({"registers": r}),
        ));
        let hp = p.history_cache();
        let dw = u64::from(p.dw());
        extra.push((
            format!(
                "cache storage: {} bits in the RTL; paper Table 3: {} bits = {} bytes, {} bits = {} bytes with valid and MRU bits",
                r.bcaws - 2 * dw,
                hp.storage_bits(),
                hp.storage_bits() / 8,
                hp.storage_bits_with_state(),
                hp.storage_bits_with_state() / 8
            ),
            serde_json::json!({"cache_storage_bits": r.bcaws - 2 * dw, "paper_storage_bits": hp.storage_bits()}),
        ));
    }
    let cost = match generic {
        Some(generic) => {
            let ice40 = if ice40 {
                Some(smrtl_synth::yosys::ice40(&d.verilog(), &d.module.name)?)
            } else {
                None
            };
            smrtl_synth::Cost { generic, ice40 }
        }
        None => smrtl_synth::cost_of(&d.module, ice40)?,
    };
    if json {
        let mut v = serde_json::to_value(&cost)?;
        v["block"] = d.name.into();
        v["params"] = d.params.clone();
        for (_, j) in &extra {
            for (k, x) in j.as_object().into_iter().flatten() {
                v[k] = x.clone();
            }
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    let params: Vec<String> = d
        .params
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| format!("{k}={v}").replace('"', ""))
                .collect()
        })
        .unwrap_or_default();
    println!("synth {} ({})", d.name, params.join(" "));
    let g = &cost.generic;
    let depth = |x: Option<u64>| x.map_or("n/a".into(), |x| x.to_string());
    println!(
        "  yosys synth:       {} cells, {} flip-flops, {} latches, logic depth {}  ({:.1} s)",
        g.cells,
        g.flip_flops,
        g.latches.values().sum::<u64>(),
        depth(g.logic_depth),
        g.seconds
    );
    if let Some(i) = &cost.ice40 {
        println!(
            "  yosys synth_ice40: {} SB_LUT4, {} SB_CARRY, {} flip-flops, {} cells, depth {}  ({:.1} s)",
            i.lut4,
            i.carry,
            i.flip_flops,
            i.cells,
            depth(i.logic_depth),
            i.seconds
        );
    }
    for (line, _) in extra {
        println!("  {line}");
    }
    Ok(ExitCode::SUCCESS)
}
