//! `smrtl cosim`: block-level co-simulation of a block's RTL against its behavioral model.

use crate::output::{read_text, Outputs, WaveRows, Waveform};
use crate::{block_sets, design, BlockArgs, Result, RtlBackend, UsageError};
use smrtl_cosim::harness::backend::{rusthdl::RustHdl, verilator::VerilatorLib};
use smrtl_cosim::harness::Mismatch;
use smrtl_testbench::check::{self, RtlFactory};
use smrtl_testbench::coverage::{self, Coverage};
use smrtl_testbench::stimulus_file::{params_as_sets, StimulusFile};
use smrtl_testbench::{Case, Design};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Cycles kept in a VCD of a long run.
pub const VCD_WINDOW: usize = 10_000;

/// Most random cycles of one `smrtl cosim` (docs/cli.md "Limits"); memory does not grow with them.
pub const MAX_CYCLES: u64 = 1_000_000_000;

/// Most bytes of a replayed stimulus file (docs/cli.md "Limits").
pub const MAX_REPLAY_BYTES: u64 = 16 << 20;

pub struct Options {
    pub block: BlockArgs,
    pub backend: RtlBackend,
    pub cycles: u64,
    pub seed: u64,
    pub vcd: Option<PathBuf>,
    pub replay: Option<PathBuf>,
    pub save_failure: Option<PathBuf>,
    pub coverage: bool,
    pub json: bool,
}

/// A factory of fresh RTL instances for `backend`; a missing tool is a usage error.
pub fn rtl_factory(d: &Design, backend: RtlBackend) -> Result<Box<RtlFactory<'static>>> {
    match backend {
        RtlBackend::Rusthdl => {
            let module = d.module.clone();
            Ok(Box::new(move || {
                Box::new(RustHdl::new(module.clone())) as Box<dyn smrtl_cosim::Rtl>
            }))
        }
        RtlBackend::Verilator => {
            // Build (or find in the cache) and load once, up front, so errors surface here.
            let lib = VerilatorLib::load(&d.module, &d.verilog())?;
            lib.instance()?;
            Ok(Box::new(move || {
                Box::new(lib.instance().expect("a loaded model instantiates"))
                    as Box<dyn smrtl_cosim::Rtl>
            }))
        }
    }
}

fn backend_name(b: RtlBackend) -> &'static str {
    match b {
        RtlBackend::Rusthdl => "rusthdl",
        RtlBackend::Verilator => "verilator",
    }
}

/// Loads a replay file and the design it names.
fn load_replay(path: &Path, args: &BlockArgs) -> Result<(Design, Case)> {
    let text = read_text(path, MAX_REPLAY_BYTES)?;
    smrtl_cosim::json::repeated_key(&text)
        .map_err(|e| UsageError(format!("{}: {e}", path.display())))?;
    let file: StimulusFile = serde_json::from_str(&text)
        .map_err(|e| UsageError(format!("{}: malformed stimulus file: {e}", path.display())))?;
    if file.block != args.block.replace('-', "_") {
        return Err(UsageError(format!(
            "{}: stimulus is for block `{}`, not `{}`",
            path.display(),
            file.block,
            args.block
        )));
    }
    let entry = smrtl_testbench::block(&args.block).map_err(UsageError)?;
    let mut sets = params_as_sets(&file.params);
    sets.extend(block_sets(args, &entry)?);
    let d = (entry.configure)(None, &sets)
        .map_err(|e| UsageError(format!("{}: {e}", path.display())))?;
    let case = file
        .to_case(&d.layout)
        .map_err(|e| UsageError(format!("{}: {e}", path.display())))?;
    if case.is_empty() {
        return Err(UsageError(format!(
            "{}: no cycles to replay (an empty stimulus proves nothing)",
            path.display()
        )));
    }
    Ok((d, case))
}

fn write_vcd(
    outputs: &mut Outputs,
    w: &Waveform,
    d: &Design,
    factory: &RtlFactory,
    case: &Case,
) -> Result<()> {
    let rows = check::case_rows(d, factory, case, VCD_WINDOW);
    Ok(outputs.write_waveform(w, d.name, &d.layout, &rows)?)
}

/// `--cycles` as the command line gives it: any integer, refused naming 1..=[`MAX_CYCLES`]
/// (0 and too many are refused by [`check_cycles`], with why).
pub fn cycles_arg(s: &str) -> std::result::Result<u64, String> {
    smrtl_testbench::arg_values::any_u64(s)
        .map_err(|_| format!("expected an integer in 1..={MAX_CYCLES}"))
}

/// Refuses random `--cycles` outside 1..=[`MAX_CYCLES`].
pub fn check_cycles(cycles: u64) -> Result<()> {
    if (1..=MAX_CYCLES).contains(&cycles) {
        return Ok(());
    }
    let why = if cycles == 0 {
        " (a run of no cycles proves nothing)"
    } else {
        ""
    };
    Err(UsageError(format!(
        "--cycles must be in 1..={MAX_CYCLES}, got {cycles}{why}"
    )))
}

pub fn run(o: Options) -> Result<ExitCode> {
    if o.replay.is_none() {
        check_cycles(o.cycles)?;
    }
    // Every output named is checked (and reserved) before any work.
    let mut outputs = Outputs::new();
    let mut vcd = o
        .vcd
        .as_deref()
        .map(|p| outputs.add_waveform(p))
        .transpose()?;
    let mut save = o
        .save_failure
        .as_deref()
        .map(|p| outputs.add(p))
        .transpose()?;
    if let Some(replay) = &o.replay {
        outputs.input(replay)?;
    }
    let (d, replay_case) = match &o.replay {
        Some(path) => {
            let (d, case) = load_replay(path, &o.block)?;
            (d, Some(case))
        }
        None => (design(&o.block)?, None),
    };
    let factory = rtl_factory(&d, o.backend)?;
    let backend = backend_name(o.backend);

    let (cycles, cases, failure) = match &replay_case {
        Some(case) => {
            let out = check::run_case(&d, &factory, case, None);
            (out.cycles, 1, out.mismatch.map(|m| (m, case.clone(), None)))
        }
        None => {
            let r = check::random(&d, &factory, o.cycles, o.seed);
            let f = r.failure.map(|f| {
                (
                    f.mismatch,
                    f.minimal,
                    Some((f.original_cycles, f.shrink_steps)),
                )
            });
            (r.cycles, r.cases, f)
        }
    };

    let mut vcd_path = o.vcd.clone();
    let mut saved = None;
    match &failure {
        Some((_, minimal, _)) => {
            let vp = vcd_path
                .get_or_insert_with(|| PathBuf::from(format!("smrtl-failure-{}.vcd", d.name)))
                .clone();
            let w = match vcd.take() {
                Some(w) => w,
                None => outputs.add_waveform(&vp)?,
            };
            write_vcd(&mut outputs, &w, &d, &factory, minimal)?;
            if replay_case.is_none() {
                let sp = o
                    .save_failure
                    .clone()
                    .unwrap_or_else(|| PathBuf::from(format!("smrtl-failure-{}.json", d.name)));
                let out = match save.take() {
                    Some(out) => out,
                    None => outputs.add(&sp)?,
                };
                let file = StimulusFile::new(d.name, &d.params, &d.layout, minimal);
                outputs.write(out, serde_json::to_string_pretty(&file)?.as_bytes())?;
                saved = Some(sp);
            }
        }
        None => {
            if let Some(w) = &vcd {
                let case: Case = match &replay_case {
                    Some(c) => c.clone(),
                    None => {
                        // The first cycles of the run, as many as the waveform keeps.
                        let nets = factory().internal_nets();
                        let row = d.layout.in_words
                            + 2 * d.layout.out_words
                            + nets.iter().map(|(_, w)| w.div_ceil(64)).sum::<usize>();
                        let n = VCD_WINDOW
                            .min(o.cycles as usize)
                            .min(WaveRows::rows_within_budget(row));
                        check::first_cycles(&d, o.seed, n)
                    }
                };
                write_vcd(&mut outputs, w, &d, &factory, &case)?;
            }
        }
    }
    outputs.commit()?;
    // The stimulus's coverage, of a passing run (docs/coverage.md).
    let coverage = (o.coverage && failure.is_none()).then(|| match &replay_case {
        Some(case) => {
            let mut counter = d.coverage_counter();
            counter.observe(case);
            Coverage {
                cycles: case.len() as u64,
                points: counter.points(),
            }
        }
        None => coverage::measure(&d, o.cycles, o.seed),
    });

    let mismatch: Option<&Mismatch> = failure.as_ref().map(|f| &f.0);
    if o.json {
        let mut v = serde_json::json!({
            "block": d.name,
            "backend": backend,
            "params": d.params,
            "seed": o.seed,
            "cycles": cycles,
            "cases": cases,
            "mismatches": mismatch.is_some() as u32,
            "mismatch": mismatch,
            "shrunk_from_cycles": failure.as_ref().and_then(|f| f.2.map(|s| s.0)),
            "minimal_cycles": failure.as_ref().map(|f| f.1.len()),
            "failure_stimulus": saved,
            "vcd": vcd_path,
        });
        if let Some(c) = &coverage {
            let (hit, reachable) = c.score();
            v["coverage"] =
                serde_json::json!({"points": c.points, "hit": hit, "reachable": reachable});
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        match &failure {
            None => println!(
                "PASS {} on {backend}: {cycles} cycles in {cases} cases, model and RTL agree on every output",
                d.name
            ),
            Some((m, minimal, shrink)) => {
                println!("FAIL {} on {backend}: {m}", d.name);
                if let Some((from, steps)) = shrink {
                    println!(
                        "shrunk from {from} to {} cycle(s) in {steps} steps",
                        minimal.len()
                    );
                }
                if let Some(sp) = &saved {
                    println!("replay: smrtl cosim {} --backend {backend} --replay {}", d.name, sp.display());
                }
            }
        }
        if let Some(c) = &coverage {
            println!("{}", c.summary());
            c.unreachable_lines().for_each(|l| println!("{l}"));
        }
        if let Some(vp) = &vcd_path {
            println!("vcd: {}", vp.display());
        }
    }
    Ok(if failure.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
