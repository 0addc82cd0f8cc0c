//! `smrtl list` and `smrtl gen`.

use crate::output::Outputs;
use crate::{design, BlockArgs, Result};
use smrtl_hdl::params::value_text;
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
        let mut rows = vec![[
            vec!["name".to_string()],
            vec!["default".to_string()],
            vec!["allowed".to_string()],
            vec!["meaning".to_string()],
        ]];
        for p in (b.params)() {
            // The allowed values, then the note (a limit or the `--set` form) on lines of
            // its own.
            let mut allowed = wrap(&p.values, ALLOWED_WIDTH);
            if let Some(note) = p.note {
                allowed.extend(wrap(&format!("({note})"), ALLOWED_WIDTH));
            }
            rows.push([
                vec![p.name.to_string()],
                vec![value_text(&p.default)],
                allowed,
                wrap(&p.meaning, MEANING_WIDTH),
            ]);
        }
        for line in table(&rows) {
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

/// Widths the long cells of `smrtl list` wrap at (a cell with a longer word is wider).
const ALLOWED_WIDTH: usize = 46;
const MEANING_WIDTH: usize = 52;
const PRESET_WIDTH: usize = 96;

/// `text` in lines of at most `width` characters, broken at spaces but never inside a
/// `--set KEY=VALUE` example (a longer word gets a line of its own).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut words: Vec<String> = vec![];
    for w in text.split_whitespace() {
        match words.last_mut() {
            Some(last) if last.ends_with("--set") => *last += &format!(" {w}"),
            _ => words.push(w.to_string()),
        }
    }
    let lines = wrap_words(&words, width);
    if lines.is_empty() {
        vec![String::new()]
    } else {
        lines
    }
}

fn wrap_words(words: &[String], width: usize) -> Vec<String> {
    let mut lines: Vec<String> = vec![];
    let mut line = String::new();
    for w in words {
        if !line.is_empty() && line.chars().count() + 1 + w.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Rows of multi-line cells as aligned text lines: each column as wide as its widest line,
/// two spaces between columns, the last column unpadded.
fn table<const N: usize>(rows: &[[Vec<String>; N]]) -> Vec<String> {
    let width = |c: usize| {
        rows.iter()
            .flat_map(|r| r[c].iter())
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..N).map(width).collect();
    let mut out = vec![];
    for row in rows {
        let height = row.iter().map(Vec::len).max().unwrap_or(1);
        for i in 0..height {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                let text = cell.get(i).map_or("", String::as_str);
                if c + 1 < N {
                    let pad = widths[c] - text.chars().count();
                    line += &format!("{text}{}  ", " ".repeat(pad));
                } else {
                    line += text;
                }
            }
            out.push(line.trim_end().to_string());
        }
    }
    out
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
