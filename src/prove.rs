//! `smrtl prove`: solver proofs of a block's invariants on its emitted Verilog (docs/prove.md):
//! BMC from reset and k-induction with Yosys's SAT solver (`--engine sat`, the default) or
//! `yosys-smtbmc` + z3 (`--engine smtbmc`), per the properties the block declares
//! ([`smrtl_testbench::Bench::properties`]). Exit 0 when every property is proven, 1
//! when one fails or is not proven, 2 on bad input or a missing tool.

use crate::output::Outputs;
use crate::{design, BlockArgs, Result, UsageError};
use smrtl_hdl::params::value_text;
use smrtl_synth::prove::{self, Engine, Kind, Report, Run};
use smrtl_testbench::Design;
use std::path::PathBuf;
use std::process::ExitCode;

/// `--engine`: the solver flow (docs/prove.md §3).
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum EngineArg {
    /// Yosys's built-in SAT solver.
    Sat,
    /// yosys-smtbmc with z3 (a current z3: see docs/prove.md §3).
    Smtbmc,
}

#[derive(clap::Args)]
pub struct ProveArgs {
    #[command(flatten)]
    pub block: BlockArgs,
    /// Prove every configuration the block lists for proofs (its mode / N grid) instead of one.
    /// (Not with --preset or --set.)
    #[arg(long)]
    pub all_configs: bool,
    /// On a failure, write the counterexample waveform there (nothing is written when all
    /// pass).
    #[arg(long, value_name = "CEX.vcd")]
    pub vcd: Option<PathBuf>,
    /// The solver flow: Yosys's `sat`, or `yosys-smtbmc` with z3 (z3 from the virtual
    /// environment SMRTL_VENV, default the nearest .venv, before PATH).
    #[arg(long, value_enum, default_value = "sat")]
    pub engine: EngineArg,
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &ProveArgs) -> Result<ExitCode> {
    if args.all_configs && (args.block.preset.is_some() || !args.block.sets.is_empty()) {
        return Err(UsageError(
            "--all-configs does not apply with --preset or --set: it proves the block's own configurations".into(),
        ));
    }
    let entry = smrtl_testbench::block(&args.block.block).map_err(UsageError)?;
    let designs = if args.all_configs {
        (entry.proof_configs)()
    } else {
        vec![design(&args.block)?]
    };
    if designs.iter().all(|d| d.proof.is_none()) {
        // Only on this error path: it configures every block's proof configurations.
        let with_proofs: Vec<&'static str> = smrtl_testbench::blocks()
            .iter()
            .filter(|b| (b.proof_configs)().iter().any(|d| d.proof.is_some()))
            .map(|b| b.name)
            .collect();
        return Err(UsageError(format!(
            "block `{}` declares no properties to prove{}; blocks with properties: {}",
            entry.name,
            if args.all_configs {
                ""
            } else {
                " at these params"
            },
            with_proofs.join(", ")
        )));
    }
    let engine = match args.engine {
        EngineArg::Sat => Engine::Sat,
        EngineArg::Smtbmc => Engine::Smtbmc,
    };
    for tool in engine.tools() {
        smrtl_hdl::tools::require(tool)?;
    }
    if engine == Engine::Smtbmc {
        warn_old_z3();
    }
    let mut outputs = Outputs::new();
    let vcd = args.vcd.as_deref().map(|p| outputs.add(p)).transpose()?;
    let mut all_proven = true;
    let mut cex_written = false;
    let mut json = vec![];
    for d in &designs {
        let Some(proof) = &d.proof else {
            if !args.json {
                println!("prove {} ({}): no properties here", d.name, params_text(d));
            }
            continue;
        };
        let report = prove::prove_with(
            engine,
            &d.verilog(),
            &d.module.name,
            &d.module.ports(),
            proof,
        )?;
        all_proven &= report.proven();
        let mut cex_path = None;
        if let (Some(out), Some(cex)) = (vcd, &report.counterexample) {
            if !cex_written {
                outputs.write(out, &cex.vcd)?;
                cex_written = true;
                cex_path = Some(outputs.path(out).display().to_string());
            }
        }
        if args.json {
            let mut v = serde_json::to_value(&report)?;
            v["block"] = d.name.into();
            v["params"] = d.params.clone();
            v["proven"] = report.proven().into();
            v["counterexample_vcd"] = cex_path.clone().into();
            json.push(v);
        } else {
            print_report(d, &report, cex_path.as_deref());
        }
    }
    outputs.commit()?;
    if args.json {
        let v = if args.all_configs {
            serde_json::json!({
                "block": entry.name,
                "engine": engine,
                "proven": all_proven,
                "configs": json,
            })
        } else {
            json.pop().unwrap_or_default()
        };
        println!("{}", serde_json::to_string_pretty(&v)?);
    }
    Ok(if all_proven {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// On stderr, when the z3 found is older than [`prove::Z3_MIN`]: it may not finish.
fn warn_old_z3() {
    if let Some((major, minor, patch)) = prove::z3_version() {
        let (min_major, min_minor) = prove::Z3_MIN;
        if (major, minor) < prove::Z3_MIN {
            eprintln!(
                "warning: z3 {major}.{minor}.{patch} is older than {min_major}.{min_minor} and may \
                 not finish these proofs (docs/prove.md §4); a current one: python3 -m venv .venv \
                 && .venv/bin/pip install z3-solver"
            );
        }
    }
}

fn params_text(d: &Design) -> String {
    d.params
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| format!("{k}={}", value_text(v)))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

fn print_report(d: &Design, r: &Report, cex_path: Option<&str>) {
    smrtl_hdl::progress::done();
    let count = |k: Kind| r.outcomes.iter().filter(|o| o.kind == k).count();
    let engine = match r.engine {
        Engine::Sat => "",
        Engine::Smtbmc => " [yosys-smtbmc + z3]",
    };
    println!(
        "prove {} ({}){engine}: {} assumptions, {} invariants, {} registered-only outputs",
        d.name,
        params_text(d),
        r.assumptions,
        count(Kind::Assert),
        count(Kind::Registered)
    );
    let width = r.outcomes.iter().map(|o| o.name.len()).max().unwrap_or(0);
    for o in &r.outcomes {
        println!("  {:<width$}  {}", o.name, o.verdict);
    }
    let proven = r.outcomes.iter().filter(|o| o.verdict.is_proven()).count();
    println!(
        "  {proven} of {} proven  (yosys {:.1} s, BMC depth {} {:.1} s, induction up to k {} {:.1} s)",
        r.outcomes.len(),
        r.yosys_seconds,
        r.bmc_depth,
        r.bmc_seconds,
        r.induction_depth,
        r.induction_seconds
    );
    if let Some(cex) = &r.counterexample {
        let what = match cex.run {
            Run::Bmc => "counterexample from reset",
            Run::Induction => "induction counterexample (from an arbitrary state)",
        };
        let to = match cex_path {
            Some(p) => format!("written to {p}"),
            None => "pass --vcd CEX.vcd to write it".to_string(),
        };
        println!(
            "  {what}: {} fail(s) at step {}; waveform {to}",
            cex.properties.join(", "),
            cex.step
        );
    }
}
