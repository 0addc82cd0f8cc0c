//! `smrtl bench`: the speed of every backend on one stimulus, with the ratios, in one run.
//!
//! Block level (any block, through its [`Design`]): the block's random stimulus through
//! the model, rust-hdl, Verilator (alone, in the co-simulation harness and in a plain C++ loop)
//! and Icarus. System level (`--system NAME` with a FILE or a built-in input, or a deprecated
//! alias the registry keeps): the system's model alone and with its block's RTL in the loop on
//! rust-hdl and on Verilator ([`smrtl_testbench::systems::Loaded`]).

use crate::cosim::{rtl_factory, VCD_WINDOW};
use crate::{parse_sets, BlockArgs, Result, RtlBackend, UsageError};
use clap::ArgMatches;
use serde_json::{json, Value};
use smrtl_cosim::harness::backend::icarus;
use smrtl_cosim::harness::backend::verilator::PlainLoop;
use smrtl_cosim::harness::{self, CHUNK};
use smrtl_cosim::Simulator;
use smrtl_hdl::tools;
use smrtl_testbench::check::first_cycles;
use smrtl_testbench::systems::{cli, Backend, Loaded};
use smrtl_testbench::{Case, Design};
use std::process::ExitCode;
use std::time::Instant;

/// Rounds of a race: every contender runs once per round and its best round counts, so a
/// change of machine load hits all of them alike.
const ROUNDS: usize = 5;
/// Shortest timed run of one contender in one round, in seconds.
const ROUND_SECONDS: f64 = 0.1;
/// CPU seconds of a paired measurement ([`paired`]), and its fewest pairs.
const PAIRED_SECONDS: f64 = 1.0;
const MIN_PAIRS: usize = 11;

/// Everything `smrtl bench` takes beside the registry's input options ([`cli::args`]).
#[derive(clap::Args)]
pub struct Options {
    /// Block name (see `smrtl list`); with `--system`, the input FILE instead.
    #[arg(value_name = "BLOCK|FILE")]
    pub target: Option<String>,
    /// Start from a named preset (see `smrtl list`); default: the block's first preset.
    #[arg(long)]
    pub preset: Option<String>,
    /// Override one parameter (of the block, or of the system), e.g. `--set L=16`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Stimulus vectors of the block-level bench.
    #[arg(value_parser = smrtl_testbench::arg_values::uint::<usize>(0, usize::MAX as u64), long, default_value_t = 20_000)]
    pub vectors: usize,
    /// Seed of the block's random stimulus, or of the system's built-in input.
    #[arg(value_parser = smrtl_testbench::arg_values::any_u64, long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long)]
    pub json: bool,
}

/// The `bench` command: its own options and the registry's.
pub fn command(c: clap::Command) -> clap::Command {
    c.args(cli::args(cli::For::Bench))
}

/// The system-level bench when the options choose a system's input, else the block-level one.
pub fn run_with(o: &Options, m: &ArgMatches) -> Result<ExitCode> {
    if o.target.as_deref() == Some(ANALYZER) && m.get_one::<String>("system").is_none() {
        return analyzer(o);
    }
    let chosen =
        cli::choose_bench(m, o.target.as_deref(), o.preset.is_some()).map_err(UsageError)?;
    let report = match chosen {
        Some(chosen) => {
            let (system, loaded) = chosen
                .load(o.seed, &parse_sets(&o.sets)?, None)
                .map_err(UsageError)?;
            system_level(loaded.as_ref(), &chosen.label(), system.name())?
        }
        None => block_level(o)?,
    };
    report.print(o.json)?;
    Ok(ExitCode::SUCCESS)
}

/// `smrtl bench bankan`: the static analyzer's time, not a block's.
const ANALYZER: &str = "bankan";

/// The analyzer bench (docs/bank-conflicts.md §4.2): its own table; the block options are
/// refused.
fn analyzer(o: &Options) -> Result<ExitCode> {
    if o.preset.is_some() || !o.sets.is_empty() {
        return Err(UsageError(
            "bench bankan: --preset and --set are for blocks".into(),
        ));
    }
    let r = smrtl_testbench::studies::bank_bench::run();
    if o.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print!("{}", smrtl_testbench::studies::bank_bench::text(&r));
    }
    Ok(ExitCode::SUCCESS)
}

/// One measured (or derived) rate.
struct Rate {
    name: &'static str,
    per_second: f64,
    what: String,
}

/// A bench's result: rates, ratios between them and notes, as a table or one JSON object.
struct Report {
    /// First line of the table.
    title: String,
    /// What a rate counts: `vectors` or `cycles`.
    unit: &'static str,
    /// The rate the `x ...` column divides by.
    base: &'static str,
    /// JSON fields before the rates (block, params, seed, ...).
    head: Value,
    rates: Vec<Rate>,
    /// (label, value, what).
    ratios: Vec<(String, f64, String)>,
    notes: Vec<String>,
}

impl Report {
    fn new(title: String, unit: &'static str, base: &'static str, head: Value) -> Report {
        Report {
            title,
            unit,
            base,
            head,
            rates: vec![],
            ratios: vec![],
            notes: vec![],
        }
    }

    fn rate(&mut self, name: &'static str, per_second: f64, what: impl Into<String>) {
        self.rates.push(Rate {
            name,
            per_second,
            what: what.into(),
        });
    }

    fn get(&self, name: &str) -> Option<f64> {
        self.rates
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.per_second)
    }

    /// Adds `num / den` when both rates were measured.
    fn ratio(&mut self, num: &str, den: &str, what: impl Into<String>) {
        if let (Some(a), Some(b)) = (self.get(num), self.get(den)) {
            self.ratios
                .push((format!("{num} / {den}"), a / b, what.into()));
        }
    }

    fn print(&self, json: bool) -> Result<()> {
        let base = self.get(self.base).unwrap_or(1.0);
        if json {
            let mut v = self.head.clone();
            v["rates"] = self
                .rates
                .iter()
                .map(|r| {
                    json!({
                        "backend": r.name,
                        format!("{}_per_second", self.unit): r.per_second,
                        format!("vs_{}", self.base): r.per_second / base,
                        "what": r.what,
                    })
                })
                .collect();
            v["ratios"] = self
                .ratios
                .iter()
                .map(|(n, x, what)| json!({"ratio": n, "value": x, "what": what}))
                .collect();
            v["notes"] = json!(self.notes);
            println!("{}", serde_json::to_string_pretty(&v)?);
            return Ok(());
        }
        println!("{}", self.title);
        let (unit, x) = (format!("{}/s", self.unit), format!("x {}", self.base));
        println!("{:<22} {unit:>14} {x:>15}  what", "backend");
        for r in &self.rates {
            println!(
                "{:<22} {:>14.0} {:>15.2}  {}",
                r.name,
                r.per_second,
                r.per_second / base,
                r.what
            );
        }
        if !self.ratios.is_empty() {
            println!("{:<46} {:>7}  what", "ratio", "value");
            for (n, v, what) in &self.ratios {
                // Three significant digits down to 0.001 (the system-level ratios are small).
                let digits = if *v < 1.0 { 3 } else { 2 };
                println!("{n:<46} {v:>7.digits$}  {what}");
            }
        }
        for n in &self.notes {
            println!("{n}");
        }
        Ok(())
    }
}

/// Runs `pass` (one complete run from reset, returning the vectors or cycles it covered) until
/// at least `seconds` of CPU time have been timed; returns vectors or cycles per CPU second.
fn timed(seconds: f64, mut pass: impl FnMut() -> Result<u64>) -> Result<f64> {
    let start = smrtl_testbench::cpu_seconds();
    let mut done = 0u64;
    loop {
        done += pass()?;
        let s = smrtl_testbench::cpu_seconds() - start;
        if s >= seconds {
            return Ok(done as f64 / s);
        }
    }
}

/// [`timed`] on the wall clock: for a contender that uses more than one thread, whose work
/// the calling thread's CPU time would not see.
fn timed_wall(seconds: f64, mut pass: impl FnMut() -> Result<u64>) -> Result<f64> {
    let start = Instant::now();
    let mut done = 0u64;
    loop {
        done += pass()?;
        let s = start.elapsed().as_secs_f64();
        if s >= seconds {
            return Ok(done as f64 / s);
        }
    }
}

/// One contender of a race: `run(seconds)` times it for at least that long and returns its rate.
struct Contender<'a> {
    name: &'static str,
    what: String,
    run: Box<dyn FnMut(f64) -> Result<f64> + 'a>,
}

impl<'a> Contender<'a> {
    fn new(
        name: &'static str,
        what: impl Into<String>,
        run: impl FnMut(f64) -> Result<f64> + 'a,
    ) -> Contender<'a> {
        Contender {
            name,
            what: what.into(),
            run: Box::new(run),
        }
    }

    /// A contender timed by repeating `pass` (see [`timed`]).
    fn passes(
        name: &'static str,
        what: impl Into<String>,
        mut pass: impl FnMut() -> Result<u64> + 'a,
    ) -> Contender<'a> {
        Contender::new(name, what, move |s| timed(s, &mut pass))
    }

    /// A contender timed by repeating `pass` on the wall clock (see [`timed_wall`]).
    fn passes_wall(
        name: &'static str,
        what: impl Into<String>,
        mut pass: impl FnMut() -> Result<u64> + 'a,
    ) -> Contender<'a> {
        Contender::new(name, what, move |s| timed_wall(s, &mut pass))
    }
}

/// Times the contenders in [`ROUNDS`] interleaved rounds and adds each one's best rate to `r`,
/// in order. Each round starts one contender later, so none always runs right after the same
/// other (whose footprint in the caches it would inherit). A contender whose first round
/// outlasts all rounds' budget (one pass is that slow) runs only once.
fn race(r: &mut Report, mut contenders: Vec<Contender>) -> Result<()> {
    let n = contenders.len();
    let budget = ROUNDS as f64 * ROUND_SECONDS;
    let mut best = vec![0.0f64; n];
    let mut once = vec![false; n];
    for round in 0..ROUNDS {
        for i in (0..n).map(|k| (k + round) % n) {
            if round > 0 && once[i] {
                continue;
            }
            let start = Instant::now();
            best[i] = best[i].max((contenders[i].run)(ROUND_SECONDS)?);
            once[i] |= start.elapsed().as_secs_f64() > budget;
        }
    }
    for (c, rate) in contenders.into_iter().zip(best) {
        r.rate(c.name, rate, c.what);
    }
    Ok(())
}

/// How [`stepper`] steps a simulator.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stepping {
    /// [`Simulator::step_many`] over chunks of [`CHUNK`] cycles, as the harness does.
    Batched,
    /// One [`Simulator::step`] per cycle.
    PerCycle,
}

/// The block-level stimulus, also as one flat buffer, and the words per vector.
struct Stimulus {
    cases: Case,
    flat: Vec<u64>,
    iw: usize,
    ow: usize,
}

impl Stimulus {
    fn new(d: &Design, cases: Case) -> Stimulus {
        let iw = d.layout.in_words;
        Stimulus {
            flat: cases.iter().flat_map(|v| &v[..iw]).copied().collect(),
            cases,
            iw,
            ow: d.layout.out_words,
        }
    }

    fn vectors(&self) -> usize {
        self.cases.len()
    }

    /// A buffer for every vector's outputs.
    fn outputs(&self) -> Vec<u64> {
        vec![0; self.vectors() * self.ow]
    }
}

/// A pass over the whole stimulus on a fresh instance from `make` (its creation included),
/// writing every vector's outputs to `out`.
fn stepper<'a>(
    make: &'a dyn Fn() -> Box<dyn Simulator>,
    stim: &'a Stimulus,
    stepping: Stepping,
    out: &'a mut [u64],
) -> impl FnMut() -> Result<u64> + 'a {
    let (n, iw, ow) = (stim.vectors(), stim.iw, stim.ow);
    let batch = match stepping {
        Stepping::Batched => CHUNK,
        Stepping::PerCycle => 1,
    };
    move || {
        let mut sim = make();
        for start in (0..n).step_by(batch) {
            let k = batch.min(n - start);
            let (i, o) = (start * iw..(start + k) * iw, start * ow..(start + k) * ow);
            match stepping {
                Stepping::Batched => sim.step_many(&stim.flat[i], &mut out[o], k),
                Stepping::PerCycle => sim.step(&stim.flat[i], &mut out[o]),
            }
        }
        Ok(n as u64)
    }
}

/// The block-level bench of `o.block`: every backend raced on the same stimulus, all outputs
/// checked against the model's.
fn block_level(o: &Options) -> Result<Report> {
    if o.vectors == 0 {
        return Err(UsageError("--vectors must be at least 1".into()));
    }
    let block = o
        .target
        .clone()
        .ok_or_else(|| UsageError(cli::bench_needs()))?;
    let d = crate::design(&BlockArgs {
        block,
        preset: o.preset.clone(),
        sets: o.sets.clone(),
        gpgpusim_config: None,
    })?;
    let stim = Stimulus::new(&d, first_cycles(&d, o.seed, o.vectors));
    let mut r = Report::new(
        format!(
            "bench {} ({} vectors, seed {}; per CPU second, best of {ROUNDS} interleaved rounds); all backends produced identical outputs",
            d.name,
            stim.vectors(),
            o.seed
        ),
        "vectors",
        "rusthdl",
        json!({"block": d.name, "params": d.params, "vectors": stim.vectors(), "seed": o.seed, "rounds": ROUNDS}),
    );

    let model = || d.model() as Box<dyn Simulator>;
    let rusthdl = rtl_factory(&d, RtlBackend::Rusthdl)?;
    let rusthdl = || -> Box<dyn Simulator> { rusthdl() };
    let verilator = match rtl_factory(&d, RtlBackend::Verilator) {
        Ok(vf) => Some(vf),
        Err(e) => {
            r.notes.push(format!("verilator skipped: {}", e.0));
            None
        }
    };
    let verilator = verilator
        .as_ref()
        .map(|vf| move || -> Box<dyn Simulator> { vf() });
    let plain = match &verilator {
        Some(_) => Some(PlainLoop::new(&d.module, &d.verilog(), &stim.cases)?),
        None => None,
    };

    let [mut model_out, mut rusthdl_out, mut batched_out, mut per_cycle_out] =
        std::array::from_fn(|_| stim.outputs());
    let mut contenders = vec![
        Contender::passes(
            "model",
            "behavioral model alone",
            stepper(&model, &stim, Stepping::Batched, &mut model_out),
        ),
        Contender::passes(
            "rusthdl",
            "rust-hdl simulator alone",
            stepper(&rusthdl, &stim, Stepping::PerCycle, &mut rusthdl_out),
        ),
    ];
    if let (Some(v), Some(plain)) = (&verilator, &plain) {
        contenders.extend([
            Contender::passes(
                "verilator",
                format!("Verilator backend alone ({CHUNK} cycles per FFI call)"),
                stepper(v, &stim, Stepping::Batched, &mut batched_out),
            ),
            Contender::passes(
                "verilator:per-cycle",
                "Verilator backend alone (one FFI call per cycle)",
                stepper(v, &stim, Stepping::PerCycle, &mut per_cycle_out),
            ),
            Contender::passes_wall(
                "cosim:verilator",
                format!("harness: model (own thread) + Verilator + compare, {CHUNK}-cycle chunks; wall time"),
                || {
                    let (mut m, mut rtl) = (d.model(), v());
                    let cases = stim.cases.iter().map(|c| c.as_slice());
                    let out = harness::run(&d.layout, m.as_mut(), rtl.as_mut(), cases, None);
                    match out.mismatch {
                        Some(mm) => Err(UsageError(format!(
                            "bench stimulus does not co-simulate: {mm}"
                        ))),
                        None => Ok(out.cycles),
                    }
                },
            ),
            Contender::new(
                "verilator:plain-c++",
                "Verilated model in a plain C++ loop",
                |s| Ok(plain.rate(s)?),
            ),
        ]);
    }
    race(&mut r, contenders)?;
    check_same("rusthdl", &model_out, &rusthdl_out, stim.ow)?;
    if verilator.is_some() {
        check_same("verilator", &model_out, &batched_out, stim.ow)?;
        check_same("verilator", &model_out, &per_cycle_out, stim.ow)?;
        verilator_ratios(&mut r);
    }

    match tools::require("iverilog") {
        Ok(_) => {
            let n = stim.vectors().min(VCD_WINDOW);
            let run = icarus::run_batch(&d.module, &d.verilog(), &stim.cases[..n])?;
            check_same(
                "icarus",
                &model_out[..n * stim.ow],
                &run.outputs.concat(),
                stim.ow,
            )?;
            r.rate(
                "icarus",
                n as f64 / run.sim_seconds,
                "vvp batch replay (wall time of the simulation, one run)",
            );
        }
        Err(e) => r.notes.push(format!("icarus skipped: {e}")),
    }
    Ok(r)
}

/// How much faster the model is than its RTL, how close the harness comes to the plain C++ loop
/// and to its own bound, and what batching gains the backend.
fn verilator_ratios(r: &mut Report) {
    r.ratio(
        "model",
        "verilator",
        "the model against its Verilator backend alone (goal: at least 3)",
    );
    r.ratio(
        "cosim:verilator",
        "verilator:plain-c++",
        "co-simulation against the plain C++ loop",
    );
    r.ratio(
        "verilator",
        "verilator:per-cycle",
        "what batching gains the backend alone",
    );
    let rate = |name| r.get(name).expect("raced");
    let (model, rtl, cosim) = (rate("model"), rate("verilator"), rate("cosim:verilator"));
    // The harness runs the model, then the RTL: at zero overhead a cycle costs both times.
    let bound = 1.0 / (1.0 / model + 1.0 / rtl);
    r.ratios.push((
        "cosim:verilator / bound".into(),
        cosim / bound,
        format!("bound = 1/(1/model + 1/verilator) = {bound:.0}/s, the harness at zero overhead"),
    ));
    r.notes.push(format!(
        "harness overhead: {:.0} ns/cycle beyond the model ({:.0} ns) and Verilator ({:.0} ns)",
        1e9 * (1.0 / cosim - 1.0 / bound),
        1e9 / model,
        1e9 / rtl
    ));
}

/// The system-level bench of a loaded input: the model alone, then the model with the block's
/// RTL in the loop on each RTL backend (a divergence is an error, not a rate).
fn system_level(loaded: &dyn Loaded, label: &str, system: &str) -> Result<Report> {
    let plan = loaded.bench(label).map_err(UsageError)?;
    let mut head = plan.head;
    head["system"] = system.into();
    let mut r = Report::new(
        format!(
            "bench {} ({}; per CPU second, best of {ROUNDS} interleaved rounds); model and RTL agree on every cycle",
            plan.subject, plan.figures
        ),
        plan.unit,
        plan.base,
        head,
    );
    let mut contenders = vec![Contender::passes("model", plan.model, || {
        loaded.model_pass().map_err(UsageError)
    })];
    // The stall breakdown's cost (docs/stall-inspector.md §5): the model with the probe.
    let stalls = loaded.stalls_pass().map_err(UsageError)?.is_some();
    if stalls {
        contenders.push(Contender::passes(
            "model+stalls",
            "the model with the stall probe (smrtl sim --stalls)",
            || Ok(loaded.stalls_pass().map_err(UsageError)?.unwrap_or(0)),
        ));
    }
    contenders.extend([{
        let mut pass = loaded.rtl_passes(Backend::Rusthdl).map_err(UsageError)?;
        Contender::passes("cosim:rusthdl", plan.rusthdl, move || {
            pass().map_err(UsageError)
        })
    }]);
    // Build (or find in the cache) before the race.
    match loaded.rtl_passes(Backend::Verilator) {
        Ok(mut pass) => contenders.push(Contender::passes(
            "cosim:verilator",
            plan.verilator,
            move || pass().map_err(UsageError),
        )),
        Err(e) => r.notes.push(format!("verilator skipped: {e}")),
    }
    race(&mut r, contenders)?;
    in_loop_ratios(&mut r, plan.where_, plan.side);
    if stalls {
        let (ratio, pairs) = paired(&mut || loaded.model_pass().map_err(UsageError), &mut || {
            Ok(loaded.stalls_pass().map_err(UsageError)?.unwrap_or(0))
        })?;
        r.ratios.push((
            "model / model+stalls".into(),
            ratio,
            format!(
                "the model with the stall probe against the model alone, the median of {pairs} \
                 paired passes (at most 1.10: T-f)"
            ),
        ));
    }
    Ok(r)
}

/// Passes of `a` and `b` in pairs, alternating which goes first, until [`PAIRED_SECONDS`] and
/// at least [`MIN_PAIRS`] pairs: the median over the pairs of b's CPU time over a's, and the
/// number of pairs. Two passes a few milliseconds apart see the same machine, so a cost of a
/// few percent stands out of the drift that best-of-rounds rates carry.
fn paired(
    a: &mut dyn FnMut() -> Result<u64>,
    b: &mut dyn FnMut() -> Result<u64>,
) -> Result<(f64, usize)> {
    let time = |f: &mut dyn FnMut() -> Result<u64>| -> Result<f64> {
        let start = smrtl_testbench::cpu_seconds();
        f()?;
        Ok(smrtl_testbench::cpu_seconds() - start)
    };
    let (start, mut ratios) = (smrtl_testbench::cpu_seconds(), Vec::new());
    while ratios.len() < MIN_PAIRS || smrtl_testbench::cpu_seconds() - start < PAIRED_SECONDS {
        let (ta, tb) = if ratios.len() % 2 == 0 {
            let ta = time(a)?;
            (ta, time(b)?)
        } else {
            let tb = time(b)?;
            (time(a)?, tb)
        };
        ratios.push(tb / ta.max(f64::MIN_POSITIVE));
    }
    ratios.sort_by(f64::total_cmp);
    Ok((ratios[ratios.len() / 2], ratios.len()))
}

/// The ratios and per-cycle overheads of a system-level race (`model`, `cosim:rusthdl` and
/// perhaps `cosim:verilator`): `where_` says what the co-simulation is, `side` what its RTL side
/// does beyond the model.
fn in_loop_ratios(r: &mut Report, where_: &str, side: &str) {
    let model = r.get("model").expect("raced");
    r.ratio(
        "cosim:verilator",
        "cosim:rusthdl",
        format!("Verilator against rust-hdl {where_}"),
    );
    for backend in ["cosim:rusthdl", "cosim:verilator"] {
        r.ratio(backend, "model", "co-simulation against the model alone");
        if let Some(rate) = r.get(backend) {
            let ns = 1e9 * (1.0 / rate - 1.0 / model);
            r.notes.push(format!(
                "{backend}: {side} takes {ns:.0} ns/cycle beyond the model's {:.0} ns",
                1e9 / model
            ));
        }
    }
}

/// Fails unless `got` equals `reference`, naming the first differing vector of `ow` words.
fn check_same(name: &str, reference: &[u64], got: &[u64], ow: usize) -> Result<()> {
    if reference == got {
        return Ok(());
    }
    let at = reference
        .chunks(ow.max(1))
        .zip(got.chunks(ow.max(1)))
        .position(|(a, b)| a != b)
        .unwrap_or(got.len() / ow.max(1));
    Err(UsageError(format!(
        "{name} output differs from the model at vector {at}"
    )))
}
