//! `smrtl run BLOCK --stim FILE`: a user's per-cycle vectors through any block on any backend,
//! one JSON line of outputs per cycle. With an RTL backend the model runs beside it and every
//! output is compared every cycle; the first difference is exit 1 with cycle, port, expected
//! and actual. Bad stimulus is a one-line error naming cycle and port, exit 2, before any file
//! is written.

use crate::cosim::rtl_factory;
use crate::output::{read_text, Outputs};
use crate::RtlBackend;
use crate::{block_sets, BlockArgs, Result, UsageError};
use smrtl_cosim::harness::backend::icarus;
use smrtl_cosim::{Layout, Simulator};
use smrtl_hdl::progress::Counter;
use smrtl_testbench::check::{Replayed, Stepper};
use smrtl_testbench::stimulus_file::params_as_sets;
use smrtl_testbench::stimulus_stream::{self, Form, Inputs};
use smrtl_testbench::Design;
use std::io::{BufWriter, Write};
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
/// Most cycles the Icarus backend replays: it runs them as one batch, holding every cycle's
/// inputs and outputs (docs/cli.md "Limits").
pub const MAX_ICARUS_CYCLES: usize = 100_000;

/// The run streams (docs/cli.md "Limits"): the stimulus text (at most [`MAX_STIM_BYTES`]) is
/// read once to check every cycle and count them, before any output is written, and once more
/// to run them, each cycle's outputs written as it is computed.
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
    let form = stimulus_stream::form(&text).map_err(at)?;
    let d =
        design(&a.block, &form).map_err(|e| UsageError(format!("{}: {}", path.display(), e.0)))?;
    let cycles = check_cycles(&text, &form, &d, a.backend).map_err(at)?;
    let case = match a.backend {
        Backend::Icarus => collect(&text, &form, &d).map_err(at)?,
        _ => vec![],
    };
    let mut rtl = backend(&d, a.backend, &case)?;
    drop(case);
    let record = vcd.as_ref().map(|_| VCD_WINDOW);
    let rtl = rtl.as_mut().map(|b| b.as_mut() as &mut dyn Simulator);
    let mut stepper = Stepper::new(&d, rtl, record);
    let mut progress = Counter::new(d.name, cycles as u64, "cycles");
    {
        let mut stdout = None;
        let sink: &mut dyn Write = match out {
            Some(out) => outputs.writer(out)?,
            None => stdout.insert(BufWriter::new(std::io::stdout().lock())),
        };
        let mut inputs = Inputs::new(&d.layout);
        let mut line = String::new();
        stimulus_stream::for_each(&text, &form, &mut |c, cycle| {
            let shown = stepper.step(inputs.apply(c, cycle)?);
            line.clear();
            json_line(&mut line, c, &d.layout, shown);
            sink.write_all(line.as_bytes())
                .map_err(|e| format!("cannot write the outputs: {e}"))?;
            progress.tick();
            match stepper.mismatch() {
                Some(_) => Err(STOP.into()),
                None => Ok(()),
            }
        })
        .or_else(|e| if e == STOP { Ok(()) } else { Err(e) })
        .map_err(UsageError)?;
        sink.flush()?;
    }
    progress.finish();
    let (mismatch, trace) = stepper.finish();
    if let (Some(w), Some(t)) = (&vcd, &trace) {
        outputs.write_waveform(w, d.name, &d.layout, t)?;
    }
    outputs.commit()?;
    Ok(match &mismatch {
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

/// Ends the read of the stimulus at the first difference (not an error).
const STOP: &str = "\0stop";

/// Checks every cycle of the stimulus against the block's ports and counts them, before any
/// work: none, more than [`MAX_VECTORS`], or more than Icarus replays is an error.
fn check_cycles(
    text: &str,
    form: &Form,
    d: &Design,
    b: Backend,
) -> std::result::Result<usize, String> {
    let mut inputs = Inputs::new(&d.layout);
    let mut n = 0;
    stimulus_stream::for_each(text, form, &mut |c, cycle| {
        if c >= MAX_VECTORS {
            return Err(format!(
                "more than {MAX_VECTORS} cycles; allowed: at most {MAX_VECTORS} per file"
            ));
        }
        inputs.apply(c, cycle)?;
        n = c + 1;
        Ok(())
    })?;
    if n == 0 {
        return Err("no cycles (an empty stimulus proves nothing)".into());
    }
    if b == Backend::Icarus && n > MAX_ICARUS_CYCLES {
        return Err(format!(
            "{n} cycles; the icarus backend replays at most {MAX_ICARUS_CYCLES} (it holds the \
             whole run; use --backend verilator for longer runs)"
        ));
    }
    Ok(n)
}

/// Every cycle's input buffer (the Icarus batch, at most [`MAX_ICARUS_CYCLES`]).
fn collect(text: &str, form: &Form, d: &Design) -> std::result::Result<Vec<Vec<u64>>, String> {
    let mut inputs = Inputs::new(&d.layout);
    let mut case = vec![];
    stimulus_stream::for_each(text, form, &mut |c, cycle| {
        case.push(inputs.apply(c, cycle)?.to_vec());
        Ok(())
    })?;
    Ok(case)
}

/// The block with the stimulus file's params (replay form), the preset and `--set` overrides.
fn design(args: &BlockArgs, form: &Form) -> Result<Design> {
    let entry = smrtl_testbench::block(&args.block).map_err(UsageError)?;
    let mut sets = vec![];
    if let Form::Replay { block, params } = form {
        if *block != entry.name {
            return Err(UsageError(format!(
                "stimulus is for block `{block}`, not `{}`",
                entry.name
            )));
        }
        sets = params_as_sets(params);
    }
    sets.extend(block_sets(args, &entry)?);
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

/// `{"cycle": c, "<port>": value, ...}` appended to `line`: every output by its spec name,
/// values below 2^53 as numbers, wider ones as `"0x..."` strings.
fn json_line(line: &mut String, cycle: usize, layout: &Layout, out: &[u64]) {
    use std::fmt::Write as _;
    let _ = write!(line, "{{\"cycle\":{cycle}");
    for s in &layout.outputs {
        let words = s.of(out);
        let small = words[1..].iter().all(|&w| w == 0) && words[0] < 1 << 53;
        if small {
            let _ = write!(line, ",\"{}\":{}", s.name, words[0]);
        } else {
            let _ = write!(
                line,
                ",\"{}\":\"{}\"",
                s.name,
                smrtl_cosim::harness::hex(words)
            );
        }
    }
    line.push_str("}\n");
}
