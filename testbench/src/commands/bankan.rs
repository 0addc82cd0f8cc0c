//! `smrtl bankan FILE`: the static bank-conflict analyzer (docs/bank-conflicts.md §3.4): per
//! access the degree per warp, replays, conflicts and wavefronts, and the kernel's totals.

use crate::output::read_text;
use smrtl_cosim::bankan::{self, input::MAX_FILE_BYTES, Overrides};
use std::path::PathBuf;
use std::process::ExitCode;

type Result<T> = std::result::Result<T, String>;

/// Static bank-conflict analysis of a kernel's shared-memory accesses (seed 002): degree per
/// warp, replays and conflicts per access, with loops and `if`s.
#[derive(clap::Parser)]
#[command(name = "bankan")]
pub struct BankanArgs {
    /// The kernel, JSON (docs/bank-conflicts.md §3.4).
    pub file: PathBuf,
    /// Print one JSON object: config, accesses (degree, replays, conflicts, ...), totals.
    #[arg(long)]
    pub json: bool,
    /// Broadcast mode instead of the file's: literal, multicast or gpgpusim-limited.
    #[arg(long)]
    pub mode: Option<String>,
    /// Bank mode N in bytes instead of the file's `bank_width`: 4 or 8 (up to layer_bytes).
    #[arg(long, value_parser = crate::arg_values::uint_named::<u32>(4, 32))]
    pub bank_width: Option<u32>,
    /// Evaluate every warp and iteration instead of each distinct case once.
    #[arg(long)]
    pub brute_force: bool,
}

pub fn run(a: BankanArgs) -> Result<ExitCode> {
    let mode = a
        .mode
        .as_deref()
        .map(bankan::parse_mode)
        .transpose()
        .map_err(|e| format!("--{e}"))?;
    let o = Overrides {
        mode,
        bank_width: a.bank_width,
    };
    let name = a.file.display().to_string();
    let text = read_text(&a.file, MAX_FILE_BYTES)?;
    let report = bankan::run(&text, o, a.brute_force).map_err(|e| format!("{name}: {e}"))?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string(&report).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", report.text());
    }
    Ok(ExitCode::SUCCESS)
}
