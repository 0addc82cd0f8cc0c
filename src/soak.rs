//! `smrtl soak`: long random co-simulation on rust-hdl over a rotating part of every block ×
//! preset (docs/blocks.md "Conformance suite"); the logic is [`smrtl_testbench::soak`].

use crate::{Result, UsageError};
use smrtl_testbench::soak;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct SoakArgs {
    /// Only these blocks, comma-separated (default: every block of `smrtl list`).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub blocks: Vec<String>,
    /// Random cycles per block × preset.
    #[arg(value_parser = crate::cosim::cycles_arg, long, default_value_t = 1_000_000)]
    pub cycles: u64,
    /// Seed of every run's stimulus (CI derives it from the commit hash).
    #[arg(value_parser = smrtl_testbench::arg_values::any_u64, long, default_value_t = 1)]
    pub seed: u64,
    /// Soak part K (0-based) of the block × preset list split into M parts of about equal work
    /// (CI: K = the commit count mod M).
    #[arg(long, value_name = "K/M", default_value = "0/1")]
    pub part: String,
    /// Print the block × preset targets of the part and exit.
    #[arg(long)]
    pub list: bool,
}

pub fn run(a: SoakArgs) -> Result<ExitCode> {
    crate::cosim::check_cycles(a.cycles)?;
    let o = soak::Options {
        blocks: (!a.blocks.is_empty()).then_some(a.blocks),
        cycles: a.cycles,
        seed: a.seed,
        part: soak::parse_part(&a.part).map_err(UsageError)?,
    };
    let plan = soak::plan(&o).map_err(UsageError)?;
    let names: Vec<String> = plan.iter().map(|t| t.name()).collect();
    if a.list {
        println!("{}", names.join("\n"));
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "soak part {}/{}: {} cycles each on rusthdl, seed {}: {}",
        o.part.0,
        o.part.1,
        o.cycles,
        o.seed,
        names.join(", ")
    );
    let t0 = std::time::Instant::now();
    let out = soak::run(&plan, o.cycles, o.seed, |x| println!("{x}"));
    let failed = out.iter().filter(|x| x.failure.is_some()).count();
    let cycles: u64 = out.iter().map(|x| x.cycles).sum();
    println!(
        "soak: {} of {} targets passed, {cycles} cycles in {:.1} s",
        out.len() - failed,
        out.len(),
        t0.elapsed().as_secs_f64()
    );
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
