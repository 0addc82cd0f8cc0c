//! `smrtl synth`: hardware cost of a block from Yosys (generic gates, iCE40 LUT4 / carry / block
//! RAM, optionally Xilinx LUT / LUT-RAM), per module of the hierarchy, the iCE40 Fmax from
//! nextpnr on request, with the block's own figures and the spec's expectations beside the
//! measured ones.

use crate::{design, BlockArgs, Result};
use smrtl_hdl::bank_conflict_detector::Params as DetectorParams;
use smrtl_hdl::elastic_pipeline::{Params as PipelineParams, PipeMode};
use smrtl_synth::bank_conflict_detector as detector;
use smrtl_synth::{Cost, Flows, FmaxOptions};
use std::process::ExitCode;
use std::time::Duration;

/// The optional flows of `smrtl synth`.
#[derive(clap::Args, Clone, Debug)]
pub struct FlowArgs {
    /// Also run Yosys's synth_xilinx (7 series): LUTs, LUT-RAM, block RAM and flip-flops per
    /// module (no timing: Yosys has no Xilinx timing model).
    #[arg(long)]
    pub xilinx: bool,
    /// Skip the Fmax estimate (by default nextpnr-ice40, when installed, places and routes the
    /// iCE40 netlist on a UP5K, else an HX8K: about a minute for a few thousand logic cells).
    #[arg(long)]
    pub no_fmax: bool,
    /// Seconds allowed to one nextpnr run.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub fmax_timeout: u64,
}

pub fn run(args: &BlockArgs, json: bool, ice40: bool, flow_args: &FlowArgs) -> Result<ExitCode> {
    let d = design(args)?;
    smrtl_hdl::tools::require("yosys")?;
    // Fmax comes with the iCE40 flow unless skipped; without nextpnr the report says why.
    let nextpnr = ice40 && !flow_args.no_fmax && smrtl_synth::nextpnr::require_nextpnr().is_ok();
    let flows = Flows {
        ice40,
        xilinx: flow_args.xilinx,
        fmax: nextpnr.then(|| FmaxOptions {
            timeout: Duration::from_secs(flow_args.fmax_timeout),
            ..FmaxOptions::default()
        }),
    };
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
                "cache storage: {} bits in the RTL, registers and memories ({} flip-flops after generic synthesis); paper Table 3: {} bits = {} bytes (lines x (DW + tag)), {} bits = {} bytes with valid and MRU bits",
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
                "storage bits: pipeline {} (entries carry a {}-bit PC), BCAWS {} (history cache, accumulator, counter), scheduler + issue unit {} = {} (netlist: {} register + {} memory bits)",
                r.pipeline, p.pc_bits, r.bcaws, r.scheduler, r.total, c.built_register_bits, c.built_memory_bits
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
    let cost = smrtl_synth::cost_of_verilog(&d.verilog(), &d.module.name, &flows, generic)?;
    if json {
        let mut v = serde_json::to_value(&cost)?;
        v["block"] = d.name.into();
        v["params"] = d.params.clone();
        v["modules"] = serde_json::to_value(cost.modules())?;
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
            "  yosys synth_ice40: {} SB_LUT4, {} SB_CARRY, {} flip-flops, {} SB_RAM40_4K, {} cells, depth {}  ({:.1} s)",
            i.lut4,
            i.carry,
            i.flip_flops,
            i.brams,
            i.cells,
            depth(i.logic_depth),
            i.seconds
        );
    }
    if let Some(x) = &cost.xilinx {
        let by_inputs: Vec<String> = x.luts_by_inputs.iter().map(u64::to_string).collect();
        println!(
            "  yosys synth_xilinx: {} LUT (LUT1..LUT6 {}), {} LUT-RAM ({} LUTs), {} SRL, {} flip-flops, {} RAMB, {} CARRY4, {} cells, depth {}  ({:.1} s)",
            x.luts,
            by_inputs.join("/"),
            x.lut_ram,
            x.lut_ram_luts,
            x.srl,
            x.flip_flops,
            x.brams,
            x.carry,
            x.cells,
            depth(x.logic_depth),
            x.seconds
        );
        println!("    {}", smrtl_synth::yosys::XILINX_TIMING);
    }
    print_modules(&cost);
    match &cost.fmax {
        Some(f) => println!("  {f}"),
        None if !ice40 => println!("  Fmax: not measured (--no-ice40)"),
        None if flow_args.no_fmax => println!("  Fmax: not measured (--no-fmax)"),
        None => println!(
            "  Fmax: not measured: nextpnr-ice40 is not installed (Debian: apt-get install -y nextpnr-ice40)"
        ),
    }
    for (line, _) in extra {
        println!("  {line}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The per-module table: per-instance figures of each flow that ran, then the design's totals.
fn print_modules(cost: &Cost) {
    let rows = cost.modules();
    let opt = |x: Option<u64>| x.map_or("-".to_string(), |x| x.to_string());
    let ice40 = cost.ice40.is_some();
    let xilinx = cost.xilinx.is_some();
    let width = rows
        .iter()
        .map(|r| r.name.len())
        .chain([22])
        .max()
        .unwrap_or(22);
    let mut header = format!(
        "    {:<width$} {:>5} {:>8} {:>7} {:>9}",
        "module", "inst", "cells", "FF", "mem bits"
    );
    if ice40 {
        header += &format!(" {:>7} {:>5}", "LUT4", "BRAM");
    }
    if xilinx {
        header += &format!(" {:>8} {:>7} {:>7}", "xc7 LUT", "LUT-RAM", "xc7 FF");
    }
    println!("  modules (per instance; cells and FF: generic flow; memory bits before mapping):");
    println!("{header}");
    for r in &rows {
        let mut line = format!(
            "    {:<width$} {:>5} {:>8} {:>7} {:>9}",
            r.name, r.instances, r.cells, r.flip_flops, r.memory_bits
        );
        if ice40 {
            line += &format!(" {:>7} {:>5}", opt(r.lut4), opt(r.brams));
        }
        if xilinx {
            line += &format!(
                " {:>8} {:>7} {:>7}",
                opt(r.xilinx_luts),
                opt(r.xilinx_lut_ram),
                opt(r.xilinx_flip_flops)
            );
        }
        println!("{line}");
    }
    let g = &cost.generic;
    let mut line = format!(
        "    {:<width$} {:>5} {:>8} {:>7} {:>9}",
        "total (whole design)", "", g.cells, g.flip_flops, g.memory_bits
    );
    if let Some(i) = &cost.ice40 {
        line += &format!(" {:>7} {:>5}", i.lut4, i.brams);
    }
    if let Some(x) = &cost.xilinx {
        line += &format!(" {:>8} {:>7} {:>7}", x.luts, x.lut_ram, x.flip_flops);
    }
    println!("{line}");
}
