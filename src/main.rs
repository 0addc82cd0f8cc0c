//! `smrtl`: GPU SM mechanisms from research papers as synthesizable RTL, co-simulated
//! cycle-exact against behavioral models. Bad input is a one-line error and exit code 2.

mod bench;
mod cosim;
mod gen;
mod progress;
mod prove;
mod repro;
mod run;
mod sim;
mod soak;
mod sweep;
mod synth;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use smrtl_testbench::{gpgpusim, output};
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
    /// Take the parameters a GPGPU-Sim configuration maps (`smrtl config --from-gpgpusim
    /// FILE NAME` shows them); a `--set` of the same parameter wins.
    #[arg(long, value_name = "FILE")]
    pub gpgpusim_config: Option<PathBuf>,
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
    /// List blocks, their parameters, ranges and presets; or, with --systems, the systems,
    /// their input kinds, parameters and built-in inputs.
    List {
        #[arg(long)]
        json: bool,
        /// List the systems (what `smrtl sim`, `bench` and `sweep` run) instead of the blocks.
        #[arg(long)]
        systems: bool,
        /// Also show what a GPGPU-Sim configuration sets in each (docs/gpgpusim.md).
        #[arg(long, value_name = "FILE")]
        gpgpusim_config: Option<PathBuf>,
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
        #[arg(value_parser = cosim::cycles_arg, long, default_value_t = smrtl_testbench::check::COSIM_CYCLES)]
        cycles: u64,
        #[arg(value_parser = smrtl_testbench::arg_values::any_u64, long, default_value_t = 1)]
        seed: u64,
        /// Write a VCD of the run (the last cycles before a mismatch, or of the replayed file) and
        /// a GTKWave save file beside it (OUT.gtkw).
        #[arg(long)]
        vcd: Option<PathBuf>,
        /// Replay a stimulus file (as written for a failure) instead of random stimulus.
        #[arg(long)]
        replay: Option<PathBuf>,
        /// Where to save the shrunk failing stimulus [default: smrtl-failure-BLOCK.json]
        /// (not with --replay).
        #[arg(long)]
        save_failure: Option<PathBuf>,
        /// Count the block's coverpoints over the run's stimulus and list those never hit
        /// (docs/coverage.md).
        #[arg(long)]
        coverage: bool,
        #[arg(long)]
        json: bool,
    },
    /// Drive a block with your own per-cycle vectors; one JSON line of outputs per cycle, and
    /// with an RTL backend every output compared with the model every cycle.
    Run(run::RunArgs),
    /// Run a system's model on an input FILE (its kind recognised) or a built-in input, with
    /// its block's RTL in the loop if asked (see `smrtl list --systems`).
    Sim(sim::SimArgs),
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
    /// `--system NAME` benches a system's model alone and with its RTL in the loop.
    Bench(bench::Options),
    /// Reproduce a paper's evaluation trends on the behavioral model (table, targets, plot).
    Repro(repro::ReproArgs),
    /// Run a grid of a system's params × workloads × seeds from a JSON spec on every core.
    ///
    /// One CSV or JSON-lines row per point, in grid order whatever the thread count;
    /// `--shard I/N` runs one slice of the grid (see examples/sweep/ and examples/slurm/).
    Sweep(sweep::SweepArgs),
    /// Join the outputs of `smrtl sweep --shard I/N` into the bytes of an unsharded run.
    Merge(sweep::MergeArgs),
    /// Prove a block's invariants on its emitted Verilog with a SAT solver (Yosys `sat`): BMC
    /// from reset and k-induction under the block's legal-stimulus assumptions.
    Prove(prove::ProveArgs),
    /// Long random co-simulation on rust-hdl of a rotating part of every block × preset; each
    /// failure prints the `smrtl cosim` command that reproduces it.
    Soak(soak::SoakArgs),
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

/// Parses `KEY=VALUE` overrides; a name given twice is refused (the last would silently win).
pub fn parse_sets(sets: &[String]) -> Result<Vec<(String, String)>> {
    let pairs = sets
        .iter()
        .map(|s| {
            s.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| UsageError(format!("--set expects KEY=VALUE, got `{s}`")))
        })
        .collect::<Result<Vec<_>>>()?;
    for (i, (key, _)) in pairs.iter().enumerate() {
        if pairs[..i].iter().any(|(k, _)| k == key) {
            return Err(UsageError(format!(
                "--set {key} is given more than once; allowed: one --set per name"
            )));
        }
    }
    Ok(pairs)
}

/// A block's `--set` pairs after those its `--gpgpusim-config` gives, which they win over.
pub fn block_sets(
    args: &BlockArgs,
    entry: &smrtl_testbench::BlockEntry,
) -> Result<Vec<(String, String)>> {
    let sets = parse_sets(&args.sets)?;
    match &args.gpgpusim_config {
        None => Ok(sets),
        Some(path) => {
            let cfg = gpgpusim::Config::read(path)?;
            Ok(gpgpusim::with_sets(
                &cfg,
                entry.name,
                &(entry.params)(),
                &sets,
            )?)
        }
    }
}

/// Resolves a block with its preset and overrides.
pub fn design(args: &BlockArgs) -> Result<smrtl_testbench::Design> {
    let entry = smrtl_testbench::block(&args.block).map_err(UsageError)?;
    let sets = block_sets(args, &entry)?;
    Ok((entry.configure)(args.preset.as_deref(), &sets)?)
}

/// A CLI in a pipeline (`smrtl list | head`) ends quietly when the reader goes away, and an
/// internal error is one line, never a stack dump.
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

/// A command-line error as one line on stderr and exit 2, as every other usage error (clap's
/// own rendering runs over several lines); help and version print as clap prints them.
fn parse_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => e.exit(),
        // `smrtl` alone: clap would print the whole help as an error.
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let cmd = cli();
            let names: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
            eprintln!(
                "error: no command given; allowed: {} (`smrtl --help` describes them)",
                names.join(", ")
            );
        }
        _ => eprintln!("error: {}", one_line(&e.render().to_string())),
    }
    ExitCode::from(2)
}

/// clap's rendered error `text` in one line: its message, the allowed values and any tip,
/// without the usage and the pointer to `--help`.
fn one_line(text: &str) -> String {
    let mut parts: Vec<String> = vec![];
    for line in text.lines().map(str::trim) {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        let line = line.strip_prefix("error: ").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let part = match line
            .strip_prefix("[possible values: ")
            .and_then(|l| l.strip_suffix(']'))
        {
            Some(values) => format!("; allowed: {values}"),
            None if line.starts_with("tip:") => format!(" ({line})"),
            None if parts.is_empty() => line.to_string(),
            None => format!(" {line}"),
        };
        parts.push(part);
    }
    parts.concat()
}

/// The command line: the derived commands, the registries' options on `sim` and `bench`, and
/// every command the crates register ([`smrtl_testbench::commands`]).
fn cli() -> clap::Command {
    let mut cmd = Cli::command()
        .mut_subcommand("sim", sim::command)
        .mut_subcommand("bench", bench::command);
    for c in smrtl_testbench::commands::commands() {
        cmd = cmd.subcommand((c.command)());
    }
    // `--t -1/3`, `--cycles -5`: a negative value is a value (refused by its range check,
    // which names the range), not an unknown flag.
    cmd.mut_subcommands(|s| s.allow_negative_numbers(true))
}

fn main() -> ExitCode {
    install_process_hooks();
    let matches = match cli().try_get_matches() {
        Ok(m) => m,
        Err(e) => return parse_error(e),
    };
    output::set_force(matches.get_flag("force"));
    if let Err(e) = output::install_signal_cleanup() {
        eprintln!("error: cannot install the signal handlers: {e}");
        return ExitCode::from(2);
    }
    progress::install();
    let registered = smrtl_testbench::commands::commands();
    let result = match matches.subcommand() {
        Some((name, m)) if registered.iter().any(|c| c.name == name) => {
            let c = registered.iter().find(|c| c.name == name).expect("found");
            (c.run)(m).map_err(UsageError)
        }
        _ => match Cli::from_arg_matches(&matches) {
            Ok(cli) => dispatch(cli.command, &matches),
            Err(e) => e.exit(),
        },
    };
    smrtl_hdl::progress::done();
    match result {
        Ok(code) => code,
        Err(UsageError(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}

/// Runs a derived command; `matches` are the whole command line's (for the registries'
/// options).
fn dispatch(command: Command, matches: &clap::ArgMatches) -> Result<ExitCode> {
    let sub = |name: &str| matches.subcommand_matches(name).expect("the command ran");
    match command {
        Command::List {
            json,
            systems,
            gpgpusim_config,
        } => gen::list(json, systems, gpgpusim_config.as_deref()),
        Command::Gen { block, output } => gen::gen(&block, &output),
        Command::Cosim {
            block,
            backend,
            cycles,
            seed,
            vcd,
            replay,
            save_failure,
            coverage,
            json,
        } => {
            if replay.is_some() && save_failure.is_some() {
                return Err(UsageError(
                    "--save-failure does not apply with --replay".into(),
                ));
            }
            cosim::run(cosim::Options {
                block,
                backend,
                cycles,
                seed,
                vcd,
                replay,
                save_failure,
                coverage,
                json,
            })
        }
        Command::Run(args) => run::run(args),
        Command::Sim(args) => sim::run(args, sub("sim")),
        Command::Synth {
            block,
            no_ice40,
            json,
            flows,
        } => synth::run(&block, json, !no_ice40, &flows),
        Command::Bench(o) => bench::run_with(&o, sub("bench")),
        Command::Repro(args) => repro::run(args),
        Command::Sweep(args) => sweep::run(args),
        Command::Merge(args) => sweep::merge(args),
        Command::Prove(args) => prove::run(&args),
        Command::Soak(args) => soak::run(args),
    }
}
