//! `smrtl`: GPU SM mechanisms from research papers as synthesizable RTL, co-simulated
//! cycle-exact against behavioral models. Bad input is a one-line error and exit code 2.

mod bench;
mod conflict;
mod cosim;
mod gen;
mod launch;
mod output;
mod prove;
mod relssp;
mod repro;
mod run;
mod sim;
mod soak;
mod sweep;
mod synth;

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "smrtl",
    version,
    about = "GPU SM mechanisms as RTL, proven cycle-exact against a behavioral model"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Replace existing read-only output files (they are refused otherwise).
    #[arg(long, global = true)]
    force: bool,
}

/// Which block and with what params.
#[derive(Args, Clone)]
pub struct BlockArgs {
    /// Block name (see `smrtl list`).
    pub block: String,
    /// Start from a named preset (see `smrtl list`); default: the block's first preset.
    #[arg(long)]
    pub preset: Option<String>,
    /// Override one parameter, e.g. `--set L=16 --set MODE=literal`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
}

/// The RTL backends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RtlBackend {
    /// rust-hdl's simulator, in process (no external tool).
    Rusthdl,
    /// The emitted Verilog, verilated into a cached shared library.
    Verilator,
}

#[derive(Subcommand)]
enum Command {
    /// List blocks, their parameters, ranges and presets.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Write a block's Verilog.
    Gen {
        #[command(flatten)]
        block: BlockArgs,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Co-simulate a block's RTL against its behavioral model on random or replayed stimulus.
    Cosim {
        #[command(flatten)]
        block: BlockArgs,
        #[arg(long, value_enum, default_value = "rusthdl")]
        backend: RtlBackend,
        /// Random cycles to run.
        #[arg(long, default_value_t = 100_000)]
        cycles: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Write a VCD of the run (the last cycles before a mismatch, or of the replayed file) and
        /// a GTKWave save file beside it (OUT.gtkw).
        #[arg(long)]
        vcd: Option<PathBuf>,
        /// Replay a stimulus file (as written for a failure) instead of random stimulus.
        #[arg(long)]
        replay: Option<PathBuf>,
        /// Where to save the shrunk failing stimulus [default: smrtl-failure-BLOCK.json].
        #[arg(long, conflicts_with = "replay")]
        save_failure: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Drive a block with your own per-cycle vectors; one JSON line of outputs per cycle, and
    /// with an RTL backend every output compared with the model every cycle.
    Run(run::RunArgs),
    /// Evaluate bank-conflict degree for a batch of accesses (JSON lines).
    Conflict {
        /// One JSON object per line (see README).
        #[arg(long)]
        batch: PathBuf,
        #[arg(long, value_enum, default_value = "model")]
        backend: conflict::Backend,
    },
    /// Run the SM pipeline on a trace of subwarp entries, or the SM core on a workload or a
    /// profile, with the RTL in the loop if asked.
    #[command(group(clap::ArgGroup::new("input").required(true).args(["trace", "workload", "profile", "kernel", "kernel_profile", "mem_workload"])))]
    Sim {
        /// Trace file: {"params": {...}, "stream": [...], "icnt_valid_cycles": [...]}.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Scheduler-mode workload: {"params": {...}, "warps": [[{"op": ..., "pc": ...}, ...], ...]}.
        #[arg(long)]
        workload: Option<PathBuf>,
        /// Scratchpad-sharing kernel (seed 001): {"threads", "smem", "grid", "warps": [[...]], "params"}.
        #[arg(long)]
        kernel: Option<PathBuf>,
        /// SM memory-pipeline workload (seed 004): {"kernels": ["bp", "sv"], "cycles": N, "seed", "tbs", "params"}.
        #[arg(long)]
        mem_workload: Option<PathBuf>,
        /// A synthetic kernel profile of seed 000's Table 5 (aes_encrypt, dct, transpose, ...).
        #[arg(long)]
        profile: Option<String>,
        /// A synthetic scratchpad-sharing kernel of seed 001's Table 1 (backprop, DCT1, ...,
        /// heartwall, ...; docs/scratchpad-sharing.md §8.1), `--waves` waves of its shared launch.
        #[arg(long, value_name = "NAME")]
        kernel_profile: Option<String>,
        /// Seed of a profile's workload (of a kernel profile: its branch coins).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Repetitions per warp context of a profile's body (successive CTAs); of a kernel
        /// profile, waves of its shared launch; 1..=256.
        #[arg(long, default_value_t = 1)]
        waves: u32,
        #[arg(long, value_enum, default_value = "model")]
        backend: sim::Backend,
        #[arg(long)]
        json: bool,
        /// Write the per-cycle records (docs/elastic-pipeline.md §3.5) as JSON lines, as the run
        /// goes (`-` for standard output).
        #[arg(long)]
        records: Option<PathBuf>,
        /// Write a VCD: inputs, model outputs and (with an RTL backend) RTL outputs and nets, and
        /// a GTKWave save file beside it (OUT.gtkw).
        #[arg(long)]
        vcd: Option<PathBuf>,
        /// Override a parameter of the trace file, e.g. `--set pipe_mode=unified`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
    },
    /// Hardware cost from Yosys per module: flip-flops, cells, iCE40 LUT4 / carry / BRAM, Fmax.
    Synth {
        #[command(flatten)]
        block: BlockArgs,
        /// Skip the iCE40 flow (it takes minutes on the largest configurations).
        #[arg(long)]
        no_ice40: bool,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        flows: synth::FlowArgs,
    },
    /// Speed of model, rust-hdl, Verilator and Icarus on one stimulus, with the ratios;
    /// `--profile NAME` benches the SM core on a workload.
    Bench(bench::Options),
    /// Reproduce a paper's evaluation trends on the behavioral model (table, targets, plot).
    Repro {
        /// The experiment.
        #[arg(value_enum)]
        experiment: repro::Experiment,
        /// Print one JSON object (rows, summary, paper figures, targets, notes).
        #[arg(long)]
        json: bool,
        /// Write an SVG bar chart (elastic-pipeline: stall categories, cf. seed 000 Fig. 6;
        /// scratchpad-sharing: IPC improvement per kernel and configuration).
        #[arg(long, value_name = "OUT.svg")]
        plot: Option<PathBuf>,
        /// Seed of the synthetic profiles' workloads.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Repetitions per warp context of each profile's body (elastic-pipeline), or waves of
        /// each kernel's shared launch (scratchpad-sharing); 1..=256.
        #[arg(long, default_value_t = smrtl_testbench::studies::repro::Options::default().waves)]
        waves: u32,
        /// Exit 1 when a trend target fails (by default a failed target is reported, exit 0).
        #[arg(long)]
        strict: bool,
    },
    /// Run a grid of params × workloads × seeds from a JSON spec on every core.
    ///
    /// One CSV or JSON-lines row per point, in grid order whatever the thread count;
    /// `--shard I/N` runs one slice of the grid (see examples/sweep/ and examples/slurm/).
    Sweep(sweep::SweepArgs),
    /// Join the outputs of `smrtl sweep --shard I/N` into the bytes of an unsharded run.
    Merge(sweep::MergeArgs),
    /// Scratchpad sharing's launch calculator (seed 001): thread blocks per SM without and
    /// with sharing, as pairs and unshared blocks.
    Launch(launch::LaunchArgs),
    /// Prove a block's invariants on its emitted Verilog with a SAT solver (Yosys `sat`): BMC
    /// from reset and k-induction under the block's legal-stimulus assumptions.
    Prove(prove::ProveArgs),
    /// Long random co-simulation on rust-hdl of a rotating part of every block × preset; each
    /// failure prints the `smrtl cosim` command that reproduces it.
    Soak(soak::SoakArgs),
    /// Scratchpad sharing's compiler pass (seed 001): the shared-region variables, their
    /// layout and the relssp placement (opt, postdom), and with -o the transformed kernel.
    Relssp(relssp::RelsspArgs),
}

/// A user-facing failure: one line on stderr and exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl<E: std::fmt::Display> From<E> for UsageError {
    fn from(e: E) -> Self {
        UsageError(e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, UsageError>;

/// Parses `KEY=VALUE` overrides.
pub fn parse_sets(sets: &[String]) -> Result<Vec<(String, String)>> {
    sets.iter()
        .map(|s| {
            s.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| UsageError(format!("--set expects KEY=VALUE, got `{s}`")))
        })
        .collect()
}

/// Resolves a block with its preset and overrides.
pub fn design(args: &BlockArgs) -> Result<smrtl_testbench::Design> {
    let entry = smrtl_testbench::block(&args.block).map_err(UsageError)?;
    Ok((entry.configure)(
        args.preset.as_deref(),
        &parse_sets(&args.sets)?,
    )?)
}

/// A CLI in a pipeline (`smrtl list | head`) ends quietly when the reader goes away, and an
/// internal error is one line, never a backtrace.
fn install_process_hooks() {
    // SAFETY: restoring the default SIGPIPE action before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("error: internal error{at}: {msg} (please report this)");
    }));
}

fn main() -> ExitCode {
    install_process_hooks();
    let cli = Cli::parse();
    output::set_force(cli.force);
    if let Err(e) = output::install_signal_cleanup() {
        eprintln!("error: cannot install the signal handlers: {e}");
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::List { json } => gen::list(json),
        Command::Gen { block, output } => gen::gen(&block, &output),
        Command::Cosim {
            block,
            backend,
            cycles,
            seed,
            vcd,
            replay,
            save_failure,
            json,
        } => cosim::run(cosim::Options {
            block,
            backend,
            cycles,
            seed,
            vcd,
            replay,
            save_failure,
            json,
        }),
        Command::Run(args) => run::run(args),
        Command::Conflict { batch, backend } => conflict::run(&batch, backend),
        Command::Sim {
            trace,
            backend,
            json,
            records,
            vcd,
            sets,
            workload,
            kernel,
            mem_workload,
            profile,
            kernel_profile,
            seed,
            waves,
        } => sim::run(sim::Options {
            trace,
            workload,
            kernel,
            mem_workload,
            profile,
            kernel_profile,
            seed,
            waves,
            backend,
            json,
            records,
            vcd,
            sets,
        }),
        Command::Synth {
            block,
            no_ice40,
            json,
            flows,
        } => synth::run(&block, json, !no_ice40, &flows),
        Command::Bench(o) => bench::run_with(&o),
        Command::Repro {
            experiment,
            json,
            plot,
            seed,
            waves,
            strict,
        } => repro::run(repro::Options {
            experiment,
            json,
            plot,
            seed,
            waves,
            strict,
        }),
        Command::Sweep(args) => sweep::run(args),
        Command::Merge(args) => sweep::merge(args),
        Command::Launch(args) => launch::run(args),
        Command::Relssp(args) => relssp::run(args),
        Command::Prove(args) => prove::run(&args),
        Command::Soak(args) => soak::run(args),
    };
    match result {
        Ok(code) => code,
        Err(UsageError(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}
