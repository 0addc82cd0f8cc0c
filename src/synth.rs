//! `smrtl synth`: hardware cost of a block from Yosys (generic gates and iCE40 LUT4 / carry),
//! with the block's own figures and the spec's expectations beside the measured ones.

use crate::{design, BlockArgs, Result};
use smrtl_hdl::bank_conflict_detector::Params as DetectorParams;
use smrtl_synth::bank_conflict_detector as detector;
use std::process::ExitCode;

pub fn run(args: &BlockArgs, json: bool, ice40: bool) -> Result<ExitCode> {
    let d = design(args)?;
    smrtl_hdl::tools::require("yosys")?;
    let cost = smrtl_synth::cost_of(&d.module, ice40)?;
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
