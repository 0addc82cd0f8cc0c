//! `smrtl run BLOCK --stim FILE`: a user's per-cycle vectors through any block on any backend,
//! one JSON line of outputs per cycle. With an RTL backend the model runs beside it and every
//! output is compared every cycle; the first difference is exit 1 with cycle, port, expected
//! and actual. Bad stimulus is a one-line error naming cycle and port, exit 2, before any file
//! is written.

use crate::cosim::rtl_factory;
use crate::output::{read_text, Outputs};
use crate::RtlBackend;
use crate::{parse_sets, BlockArgs, Result, UsageError};
use smrtl_cosim::harness::backend::icarus;
use smrtl_cosim::{Layout, Simulator};
use smrtl_testbench::check::{self, Replayed};
use smrtl_testbench::stimulus_file::{params_as_sets, Stimulus};
use smrtl_testbench::Design;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Where `run` evaluates the vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// The behavioral model alone.
    Model,
    /// rust-hdl's simulator, in process, beside the model.
    Rusthdl,
    /// The emitted Verilog, verilated, beside the model.
    Verilator,
    /// The emitted Verilog on Icarus (batch replay), compared with the model afterwards.
    Icarus,
}

#[derive(clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub block: BlockArgs,
    /// Per-cycle input vectors: JSON lines (`{"port": value, ...}` per cycle) or a replay file
    /// (`{"block", "params", "cycles": [...]}`). A port not given keeps its previous value.
    #[arg(long, value_name = "FILE")]
    pub stim: PathBuf,
    #[arg(long, value_enum, default_value = "model")]
    pub backend: Backend,
    /// Write the outputs here instead of stdout.
    #[arg(long, value_name = "OUT.jsonl")]
    pub out: Option<PathBuf>,
    /// Write a VCD of the run (and a GTKWave save file beside it).
    #[arg(long, value_name = "OUT.vcd")]
    pub vcd: Option<PathBuf>,
}

/// Cycles kept in a VCD of a run.
const VCD_WINDOW: usize = 100_000;

/// Most bytes of a stimulus file, and most cycles in it (docs/cli.md "Limits").
pub const MAX_STIM_BYTES: u64 = 32 << 20;
pub const MAX_VECTORS: usize = 1_000_000;

pub fn run(a: RunArgs) -> Result<ExitCode> {
    let path = &a.stim;
    // Every output is checked (and reserved) before the stimulus is read.
    let mut outputs = Outputs::new();
    let out = a.out.as_deref().map(|p| outputs.add(p)).transpose()?;
    let vcd = a
        .vcd
        .as_deref()
        .map(|p| outputs.add_waveform(p))
        .transpose()?;
    outputs.input(path)?;
    let text = read_text(path, MAX_STIM_BYTES)?;
    let at = |e: String| UsageError(format!("{}: {e}", path.display()));
    let stim = Stimulus::parse(&text).map_err(at)?;
    let d =
        design(&a.block, &stim).map_err(|e| UsageError(format!("{}: {}", path.display(), e.0)))?;
    let case = stim.to_case(&d.layout).map_err(at)?;
    if case.is_empty() {
        return Err(at("no cycles (an empty stimulus proves nothing)".into()));
    }
    if case.len() > MAX_VECTORS {
        return Err(at(format!(
            "{} cycles; allowed: at most {MAX_VECTORS} per file",
            case.len()
        )));
    }
    let mut rtl = backend(&d, a.backend, &case)?;
    let record = vcd.as_ref().map(|_| VCD_WINDOW);
    let rtl = rtl.as_mut().map(|b| b.as_mut() as &mut dyn Simulator);
    let r = check::run_vectors(&d, rtl, &case, record);

    let mut lines = String::new();
    for (c, words) in r.outputs.iter().enumerate() {
        lines += &json_line(c, &d.layout, words);
    }
    match out {
        Some(out) => outputs.write(out, lines.as_bytes())?,
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(lines.as_bytes())?;
            stdout.flush()?;
        }
    }
    if let (Some(w), Some(t)) = (&vcd, r.rows()) {
        outputs.write_waveform(w, d.name, &d.layout, t)?;
    }
    outputs.commit()?;
    Ok(match &r.mismatch {
        None => ExitCode::SUCCESS,
        Some(m) => {
            eprintln!(
                "FAIL {} on {:?}: model and RTL differ: {m}",
                d.name, a.backend
            );
            ExitCode::from(1)
        }
    })
}

/// The block with the stimulus file's params (replay form), the preset and `--set` overrides.
fn design(args: &BlockArgs, stim: &Stimulus) -> Result<Design> {
    let entry = smrtl_testbench::block(&args.block).map_err(UsageError)?;
    let mut sets = vec![];
    if let Stimulus::Replay(file) = stim {
        if file.block != entry.name {
            return Err(UsageError(format!(
                "stimulus is for block `{}`, not `{}`",
                file.block, entry.name
            )));
        }
        sets = params_as_sets(&file.params);
    }
    sets.extend(parse_sets(&args.sets)?);
    Ok((entry.configure)(args.preset.as_deref(), &sets)?)
}

/// The RTL beside the model, if any; a missing tool is a usage error.
fn backend(d: &Design, b: Backend, case: &[Vec<u64>]) -> Result<Option<Box<dyn Simulator>>> {
    Ok(match b {
        Backend::Model => None,
        Backend::Rusthdl => Some(rtl_factory(d, RtlBackend::Rusthdl)?()),
        Backend::Verilator => Some(rtl_factory(d, RtlBackend::Verilator)?()),
        Backend::Icarus => {
            let run = icarus::run_batch(&d.module, &d.verilog(), case)?;
            Some(Box::new(Replayed::new("icarus", run.outputs)))
        }
    })
}

/// `{"cycle": c, "<port>": value, ...}`: every output by its spec name, values below 2^53 as
/// numbers, wider ones as `"0x..."` strings.
fn json_line(cycle: usize, layout: &Layout, out: &[u64]) -> String {
    let mut line = format!("{{\"cycle\":{cycle}");
    for s in &layout.outputs {
        let words = s.of(out);
        let small = words[1..].iter().all(|&w| w == 0) && words[0] < 1 << 53;
        if small {
            line += &format!(",\"{}\":{}", s.name, words[0]);
        } else {
            line += &format!(",\"{}\":\"{}\"", s.name, smrtl_cosim::harness::hex(words));
        }
    }
    line + "}\n"
}
