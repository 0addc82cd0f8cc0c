//! `smrtl synth`: hardware cost of a block from Yosys (generic gates and iCE40 LUT4 / carry),
//! with the spec's and paper's expectations beside the measured figures.

use crate::{design, BlockArgs, Result, UsageError};
use smrtl_hdl::bank_conflict_detector::Params as DetectorParams;
use smrtl_synth::bank_conflict_detector as detector;
use std::process::ExitCode;

pub fn run(args: &BlockArgs, json: bool, ice40: bool) -> Result<ExitCode> {
    let d = design(args)?;
    smrtl_hdl::tools::require("yosys")?;
    match d.name {
        "bank_conflict_detector" => {
            let p: DetectorParams = serde_json::from_value(d.params.clone())?;
            let cost = detector::cost_with(&p, ice40)?;
            if json {
                let mut v = serde_json::to_value(&cost)?;
                v["block"] = d.name.into();
                v["expectations"] = serde_json::to_value(detector::EXPECTATIONS)?;
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
            println!(
                "  yosys synth:      {} cells, {} flip-flops, {} latches, logic depth {}  ({:.1} s)",
                g.cells,
                g.flip_flops,
                g.latches.values().sum::<u64>(),
                g.logic_depth.map_or("n/a".into(), |x| x.to_string()),
                g.seconds
            );
            if let Some(i) = &cost.ice40 {
                println!(
                    "  yosys synth_ice40: {} SB_LUT4, {} SB_CARRY, {} flip-flops, {} cells, depth {}  ({:.1} s)",
                    i.lut4,
                    i.carry,
                    i.flip_flops,
                    i.cells,
                    i.logic_depth.map_or("n/a".into(), |x| x.to_string()),
                    i.seconds
                );
            }
            let s = &cost.structure;
            println!(
                "  structure: {} lane pairs x {} compare bits (layer tag {} bits), {} popcount inputs, {} max compares",
                s.lane_pairs, s.compare_bits_per_pair, s.layer_tag_bits, s.popcount_inputs, s.max_compares
            );
            println!("  spec bank-conflicts.md §2.3 expects:");
            for e in detector::EXPECTATIONS {
                println!("    - {e}");
            }
            Ok(ExitCode::SUCCESS)
        }
        other => Err(UsageError(format!(
            "no cost report for block `{other}` yet"
        ))),
    }
}
