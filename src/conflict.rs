//! `smrtl conflict --batch FILE.jsonl`: the bank-conflict degree of many accesses, on the model
//! or on an RTL backend. One JSON object in, one out, per line.

use crate::{Result, UsageError};
use smrtl_testbench::conflict::{self, Batch};
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::ExitCode;

/// `--backend`, with the library's help for each value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    #[value(help = conflict::help(conflict::Backend::Model))]
    Model,
    #[value(help = conflict::help(conflict::Backend::Rusthdl))]
    Rusthdl,
    #[value(help = conflict::help(conflict::Backend::Verilator))]
    Verilator,
}

impl From<Backend> for conflict::Backend {
    fn from(b: Backend) -> Self {
        match b {
            Backend::Model => conflict::Backend::Model,
            Backend::Rusthdl => conflict::Backend::Rusthdl,
            Backend::Verilator => conflict::Backend::Verilator,
        }
    }
}

pub fn run(batch: &Path, backend: Backend) -> Result<ExitCode> {
    let file = std::fs::File::open(batch)
        .map_err(|e| UsageError(format!("cannot read {}: {e}", batch.display())))?;
    let mut eval = Batch::new(backend.into())?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let (mut lines, mut bad) = (0, 0);
    for (i, text) in std::io::BufReader::new(file).lines().enumerate() {
        let text = text.map_err(|e| UsageError(format!("{}: {e}", batch.display())))?;
        if text.trim().is_empty() {
            continue;
        }
        lines += 1;
        let v = eval.eval_line(&text).unwrap_or_else(|e| {
            bad += 1;
            serde_json::json!({"error": format!("line {}: {e}", i + 1)})
        });
        writeln!(out, "{v}")?;
    }
    if bad > 0 {
        eprintln!(
            "error: {bad} of {lines} lines in {} were rejected (see their `error` fields)",
            batch.display()
        );
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}
