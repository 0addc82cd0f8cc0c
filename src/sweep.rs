//! `smrtl sweep` and `smrtl merge`: a grid of a system's (params × workloads × waves × seeds)
//! from a JSON spec on every core, and the join of its shards (engine and spec format in
//! [`smrtl_testbench::studies::sweep`]).

use crate::output::{read_text, Outputs};

/// Most bytes of a sweep spec, and of one shard's output given to `merge` (docs/cli.md "Limits").
pub const MAX_SPEC_BYTES: u64 = 1 << 20;
pub const MAX_SHARD_BYTES: u64 = 256 << 20;
/// Most `--threads` (docs/cli.md "Limits"); a run uses no more threads than it has points.
pub const MAX_THREADS: usize = 1024;
use crate::{Result, UsageError};
use indicatif::{ProgressBar, ProgressStyle};
use smrtl_testbench::studies::sweep::{self, Shard, Spec, Sweep};
use std::io::{IsTerminal, Write};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// How rows are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A header line, then one line per point.
    Csv,
    /// One JSON object per point, keys in column order.
    Jsonl,
}

impl From<Format> for sweep::Format {
    fn from(f: Format) -> Self {
        match f {
            Format::Csv => sweep::Format::Csv,
            Format::Jsonl => sweep::Format::Jsonl,
        }
    }
}

#[derive(clap::Args)]
pub struct SweepArgs {
    /// Spec file: {"system": NAME, "params": {KEY: [values]}, "workloads": [built-in
    /// inputs], "seeds": [...], "waves": [...]} (see examples/sweep/ and `smrtl list --systems`).
    pub spec: PathBuf,
    #[arg(long, value_enum, default_value = "csv")]
    pub format: Format,
    /// Output file [default: stdout].
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Worker threads, 1..=1024 [default: every core]; never more than the points to run.
    /// The output does not depend on it.
    #[arg(long, value_parser = smrtl_testbench::arg_values::uint::<usize>(1, MAX_THREADS as u64))]
    pub threads: Option<usize>,
    /// Run only slice I of N, 0-based (0 <= I < N): the points whose grid index % N == I, as
    /// Slurm's SLURM_ARRAY_TASK_ID with --array=0-(N-1). Join the slices with `smrtl merge`.
    #[arg(long, value_name = "I/N", allow_hyphen_values = true)]
    pub shard: Option<String>,
    /// Take the parameters a GPGPU-Sim configuration maps for the spec's system, as one-value
    /// params axes ahead of the spec's (which win over them; docs/gpgpusim.md).
    #[arg(long, value_name = "FILE")]
    pub gpgpusim_config: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct MergeArgs {
    /// Merged output: the bytes an unsharded `smrtl sweep` writes.
    pub output: PathBuf,
    /// The outputs of `smrtl sweep --shard I/N` for every I, in any order.
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
}

/// A progress bar on stderr, hidden unless stderr is a terminal.
fn progress_bar(len: usize) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len as u64);
    let style = ProgressStyle::with_template(
        "{elapsed_precise} [{wide_bar}] {pos}/{len} points, eta {eta}",
    )
    .expect("a valid template");
    bar.set_style(style);
    bar
}

pub fn run(args: SweepArgs) -> Result<ExitCode> {
    let path = &args.spec;
    let mut outputs = Outputs::new();
    let out = args.output.as_deref().map(|p| outputs.add(p)).transpose()?;
    outputs.input(path)?;
    let text = read_text(path, MAX_SPEC_BYTES)?;
    let at = |e: String| UsageError(format!("{}: {e}", path.display()));
    let mut spec = Spec::parse(&text).map_err(at)?;
    if let Some(file) = &args.gpgpusim_config {
        let cfg = smrtl_testbench::gpgpusim::Config::read(file)?;
        spec = spec.with_gpgpusim(&cfg)?;
    }
    let sweep = Sweep::new(spec).map_err(at)?;
    // The spec's input files are inputs too (read now, written never).
    outputs.inputs(&sweep.spec().inputs)?;
    let shard = match &args.shard {
        Some(s) => s.parse::<Shard>().map_err(UsageError)?,
        None => Shard::WHOLE,
    };
    let todo = (0..sweep.grid().len())
        .filter(|&i| shard.contains(i))
        .count();
    // Capped at the points to run: a thread more than points would only idle.
    let wanted = args
        .threads
        .unwrap_or_else(|| sweep::default_threads().get());
    let threads = NonZeroUsize::new(wanted.min(todo).max(1)).expect("at least 1");
    let start = Instant::now();
    let bar = progress_bar(todo);
    let table = sweep.run(shard, Some(threads), &|| bar.inc(1));
    bar.finish_and_clear();
    let text = table.map_err(UsageError)?.render(args.format.into());
    match out {
        Some(out) => outputs.write(out, text.as_bytes())?,
        None => std::io::stdout().write_all(text.as_bytes())?,
    }
    outputs.commit()?;
    eprintln!(
        "smrtl sweep: {todo} of {} points (shard {shard}) on {threads} thread{} in {:.1} s",
        sweep.grid().len(),
        if threads.get() == 1 { "" } else { "s" },
        start.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

pub fn merge(args: MergeArgs) -> Result<ExitCode> {
    let mut outputs = Outputs::new();
    let out = outputs.add(&args.output)?;
    outputs.inputs(&args.shards)?;
    let shards = args
        .shards
        .iter()
        .map(|p| Ok((p.display().to_string(), read_text(p, MAX_SHARD_BYTES)?)))
        .collect::<Result<Vec<_>>>()?;
    let merged = sweep::merge(&shards).map_err(UsageError)?;
    outputs.write(out, merged.as_bytes())?;
    outputs.commit()?;
    Ok(ExitCode::SUCCESS)
}
