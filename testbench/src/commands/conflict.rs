//! `smrtl conflict --batch FILE.jsonl`: the bank-conflict degree of many accesses, on the model
//! or on an RTL backend. One JSON object in, one out, per line.

use crate::studies::conflict::{self, Batch};
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

type Result<T> = std::result::Result<T, String>;

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

/// Evaluate bank-conflict degree for a batch of accesses (JSON lines).
#[derive(clap::Parser)]
#[command(name = "conflict")]
pub struct ConflictArgs {
    /// One JSON object per line (see docs/bank-conflicts.md, "Commands and file formats").
    #[arg(long)]
    pub batch: PathBuf,
    #[arg(long, value_enum, default_value = "model")]
    pub backend: Backend,
}

/// Longest batch line (docs/cli.md "Limits"): an access of 32 lanes takes a few hundred bytes.
pub const MAX_LINE_BYTES: usize = 64 << 10;

/// Evaluates every line of `batch`: one output line per input line, always, in order; a line
/// that is empty, not UTF-8, too long or rejected gives an `error` line naming its number.
pub fn run(a: ConflictArgs) -> Result<ExitCode> {
    eval(&a.batch, a.backend)
}

fn eval(batch: &Path, backend: Backend) -> Result<ExitCode> {
    let file =
        std::fs::File::open(batch).map_err(|e| format!("cannot read {}: {e}", batch.display()))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(format!(
            "cannot read {}: it is a directory",
            batch.display()
        ));
    }
    let mut eval = Batch::new(backend.into()).map_err(|e| e.to_string())?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut reader = std::io::BufReader::new(file);
    let (mut lines, mut bad) = (0usize, 0usize);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = (&mut reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| format!("cannot read {}: {e}", batch.display()))?;
        if n == 0 {
            break;
        }
        lines += 1;
        let complete = buf.last() == Some(&b'\n') || n <= MAX_LINE_BYTES;
        if !complete {
            // Skip the rest of an overlong line.
            let mut rest = Vec::new();
            reader
                .read_until(b'\n', &mut rest)
                .map_err(|e| format!("cannot read {}: {e}", batch.display()))?;
        }
        let line = lines;
        let result = if !complete {
            Err(format!("longer than {MAX_LINE_BYTES} bytes"))
        } else {
            match std::str::from_utf8(&buf) {
                Err(e) => Err(format!(
                    "not UTF-8 (invalid byte at column {})",
                    e.valid_up_to() + 1
                )),
                Ok(text) if text.trim().is_empty() => {
                    Err("empty line; expected one JSON object".into())
                }
                Ok(text) => eval.eval_line(text.trim_end_matches(['\n', '\r'])),
            }
        };
        let v = result.unwrap_or_else(|e| {
            bad += 1;
            serde_json::json!({"error": format!("line {line}: {e}")})
        });
        writeln!(out, "{v}").map_err(|e| e.to_string())?;
    }
    if lines == 0 {
        return Err(format!(
            "{}: no lines (one JSON object per line expected)",
            batch.display()
        ));
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
