//! `smrtl list` (blocks, or with `--systems` the systems) and `smrtl gen`.

use crate::output::Outputs;
use crate::{design, BlockArgs, Result};
use smrtl_hdl::params::value_text;
use smrtl_hdl::ParamInfo;
use smrtl_testbench::gpgpusim::{self, Config};
use smrtl_testbench::listing::{params_table, wrap_words, PRESET_WIDTH};
use std::path::Path;
use std::process::ExitCode;

/// What `cfg` sets in target `name` (with `params`): `--set` pairs, or why it cannot.
fn gpgpusim_sets(
    cfg: &Config,
    name: &str,
    params: &[ParamInfo],
) -> std::result::Result<Vec<String>, String> {
    let m = gpgpusim::map(cfg, name, params, &[])?;
    Ok(m.settings
        .iter()
        .map(|s| format!("{}={}", s.param, s.value))
        .collect())
}

/// [`gpgpusim_sets`] as `smrtl list --json` shows it.
fn gpgpusim_json(cfg: &Config, name: &str, params: &[ParamInfo]) -> serde_json::Value {
    match gpgpusim_sets(cfg, name, params) {
        Ok(sets) => serde_json::json!({"file": cfg.file, "sets": sets}),
        Err(e) => serde_json::json!({"file": cfg.file, "refused": e}),
    }
}

/// The section of `smrtl list --gpgpusim-config` after the listing: one line per target.
fn gpgpusim_text(cfg: &Config, targets: &[(&str, Vec<ParamInfo>)]) -> String {
    let mut out = format!(
        "with {} (`smrtl config --from-gpgpusim {} NAME` shows one in full):\n",
        cfg.file, cfg.file
    );
    let w = targets.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (name, params) in targets {
        let text = match gpgpusim_sets(cfg, name, params) {
            Ok(sets) if sets.is_empty() => "(no parameter it maps)".to_string(),
            Ok(sets) => sets.join(" "),
            Err(e) => format!("refused: {e}"),
        };
        out += &format!("  {name:<w$}  {text}\n");
    }
    out
}

pub fn list(json: bool, systems: bool, gpgpusim: Option<&Path>) -> Result<ExitCode> {
    let cfg = gpgpusim.map(Config::read).transpose()?;
    if systems {
        use smrtl_testbench::systems::{cli, systems};
        let targets: Vec<(&str, Vec<ParamInfo>)> =
            systems().iter().map(|s| (s.name(), s.params())).collect();
        if json {
            let mut all = cli::list_json();
            if let (Some(cfg), Some(items)) = (&cfg, all.as_array_mut()) {
                for (item, (name, params)) in items.iter_mut().zip(&targets) {
                    item["gpgpusim"] = gpgpusim_json(cfg, name, params);
                }
            }
            println!("{}", serde_json::to_string_pretty(&all)?);
        } else {
            print!("{}", cli::list_text());
            if let Some(cfg) = &cfg {
                print!("{}", gpgpusim_text(cfg, &targets));
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let blocks = smrtl_testbench::blocks();
    if json {
        let all: Vec<serde_json::Value> = blocks
            .iter()
            .map(|b| {
                let mut v = serde_json::json!({
                    "block": b.name,
                    "summary": b.summary,
                    "params": (b.params)(),
                    "presets": (b.presets)().into_iter().map(|(n, p)| serde_json::json!({"name": n, "params": p})).collect::<Vec<_>>(),
                });
                if let Some(cfg) = &cfg {
                    v["gpgpusim"] = gpgpusim_json(cfg, b.name, &(b.params)());
                }
                v
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&all)?);
        return Ok(ExitCode::SUCCESS);
    }
    for b in &blocks {
        println!("{}\n  {}\n  parameters:", b.name, b.summary);
        for line in params_table(&(b.params)()) {
            println!("    {line}");
        }
        println!("  presets (first is the default):");
        let (presets, infos) = ((b.presets)(), (b.params)());
        let name_w = presets.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        for (name, params) in presets {
            let shown = |k: &str, v| match infos.iter().find(|i| i.name == k) {
                Some(info) => info.shown_value(v),
                None => value_text(v),
            };
            let words: Vec<String> = params
                .as_object()
                .map(|o| {
                    o.iter()
                        .map(|(k, v)| format!("{k}={}", shown(k, v)))
                        .collect()
                })
                .unwrap_or_default();
            for (i, line) in wrap_words(&words, PRESET_WIDTH).iter().enumerate() {
                let label = if i == 0 { name } else { "" };
                println!("    {label:<name_w$}  {line}");
            }
        }
    }
    if let Some(cfg) = &cfg {
        let targets: Vec<(&str, Vec<ParamInfo>)> =
            blocks.iter().map(|b| (b.name, (b.params)())).collect();
        print!("{}", gpgpusim_text(cfg, &targets));
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
