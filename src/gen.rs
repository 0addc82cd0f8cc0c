//! `smrtl list` and `smrtl gen`.

use crate::output::write_atomic;
use crate::{design, BlockArgs, Result};
use std::path::Path;
use std::process::ExitCode;

pub fn list(json: bool) -> Result<ExitCode> {
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
        let params = (b.params)();
        let name_w = params.iter().map(|p| p.name.len()).max().unwrap_or(0);
        let meaning_w = params.iter().map(|p| p.meaning.len()).max().unwrap_or(0);
        for p in params {
            let default = match &p.default {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Bool(b) => u8::from(*b).to_string(),
                v => v.to_string(),
            };
            println!(
                "    {:<name_w$}  {:<meaning_w$}  default {:<10} allowed: {}",
                p.name, p.meaning, default, p.allowed
            );
        }
        println!("  presets (first is the default):");
        for (name, params) in (b.presets)() {
            let text: Vec<String> = params
                .as_object()
                .map(|o| o.iter().map(|(k, v)| format!("{k}={v}")).collect())
                .unwrap_or_default();
            println!("    {:<8} {}", name, text.join(" ").replace('"', ""));
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn gen(args: &BlockArgs, output: &Path) -> Result<ExitCode> {
    let d = design(args)?;
    let verilog = d.verilog_for(Some(&output.display().to_string()));
    write_atomic(output, verilog.as_bytes())?;
    eprintln!(
        "wrote {} ({} lines, top module `{}`, {} ports)",
        output.display(),
        verilog.lines().count(),
        d.module.name,
        d.module.ports().len()
    );
    Ok(ExitCode::SUCCESS)
}
