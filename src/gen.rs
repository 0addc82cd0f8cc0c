//! `smrtl list` (blocks, or with `--systems` the systems) and `smrtl gen`.

use crate::output::Outputs;
use crate::{design, BlockArgs, Result};
use smrtl_hdl::params::value_text;
use smrtl_testbench::listing::{params_table, wrap_words, PRESET_WIDTH};
use std::path::Path;
use std::process::ExitCode;

pub fn list(json: bool, systems: bool) -> Result<ExitCode> {
    if systems {
        use smrtl_testbench::systems::cli;
        match json {
            true => println!("{}", serde_json::to_string_pretty(&cli::list_json())?),
            false => print!("{}", cli::list_text()),
        }
        return Ok(ExitCode::SUCCESS);
    }
    let blocks = smrtl_testbench::blocks();
    if json {
        let all: Vec<serde_json::Value> = blocks
            .iter()
            .map(|b| {
                serde_json::json!({
                    "block": b.name,
                    "summary": b.summary,
                    "params": (b.params)(),
                    "presets": (b.presets)().into_iter().map(|(n, p)| serde_json::json!({"name": n, "params": p})).collect::<Vec<_>>(),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&all)?);
        return Ok(ExitCode::SUCCESS);
    }
    for b in blocks {
        println!("{}\n  {}\n  parameters:", b.name, b.summary);
        for line in params_table(&(b.params)()) {
            println!("    {line}");
        }
        println!("  presets (first is the default):");
        let presets = (b.presets)();
        let name_w = presets.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        for (name, params) in presets {
            let words: Vec<String> = params
                .as_object()
                .map(|o| {
                    o.iter()
                        .map(|(k, v)| format!("{k}={}", value_text(v)))
                        .collect()
                })
                .unwrap_or_default();
            for (i, line) in wrap_words(&words, PRESET_WIDTH).iter().enumerate() {
                let label = if i == 0 { name } else { "" };
                println!("    {label:<name_w$}  {line}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn gen(args: &BlockArgs, output: &Path) -> Result<ExitCode> {
    let mut outputs = Outputs::new();
    let out = outputs.add(output)?;
    let d = design(args)?;
    let verilog = d.verilog_for(Some(&output.display().to_string()));
    outputs.write(out, verilog.as_bytes())?;
    outputs.commit()?;
    eprintln!(
        "wrote {} ({} lines, top module `{}`, {} ports)",
        output.display(),
        verilog.lines().count(),
        d.module.name,
        d.module.ports().len()
    );
    Ok(ExitCode::SUCCESS)
}
