//! `smrtl bankan FILE`: the static bank-conflict analyzer (docs/bank-conflicts.md §3.4): per
//! access the degree per warp, replays, conflicts and wavefronts, and the kernel's totals.

use crate::output::read_text;
use crate::studies::conflict::{Backend, Batch};
use smrtl_cosim::bankan::optimize::{optimize_with, DEFAULT_BUDGET};
use smrtl_cosim::bankan::{self, analysis, input::MAX_FILE_BYTES, Kernel, Overrides, Raw};
use std::path::PathBuf;
use std::process::ExitCode;

type Result<T> = std::result::Result<T, String>;

/// Static bank-conflict analysis of a kernel's shared-memory accesses (seed 002): degree per
/// warp, replays and conflicts per access, with loops and `if`s.
#[derive(clap::Parser)]
#[command(name = "bankan")]
pub struct BankanArgs {
    /// The kernel: JSON, or the CUDA-like text form (docs/bank-conflicts.md §3.4).
    pub file: PathBuf,
    /// Print one JSON object: config, accesses (degree, replays, conflicts, ...), totals.
    #[arg(long)]
    pub json: bool,
    /// Broadcast mode instead of the file's: literal, multicast, gpgpusim-limited or
    /// gpgpusim4-limited.
    #[arg(long)]
    pub mode: Option<String>,
    /// Bank mode N in bytes instead of the file's `bank_width`: 4 or 8 (up to layer_bytes).
    #[arg(long, value_parser = crate::arg_values::uint_named::<u32>(4, 32))]
    pub bank_width: Option<u32>,
    /// Evaluate every warp and iteration instead of each distinct case once.
    #[arg(long)]
    pub brute_force: bool,
    /// Also evaluate every distinct case on the bank_conflict_detector RTL of the same
    /// configuration; exit 1 on any difference from the model.
    #[arg(long, value_enum)]
    pub verify: Option<Verify>,
    /// Propose a layout: bank width, intra-pad per array, dummies (docs/bank-conflicts.md
    /// §3.5); prints it instead of the analysis.
    #[arg(long)]
    pub optimize: bool,
    /// --optimize with padding alone, [002]'s optimizer (no XOR swizzle candidates).
    #[arg(long)]
    pub no_swizzle: bool,
    /// Memory budget of --optimize, in bytes.
    #[arg(long, value_parser = crate::arg_values::uint_named::<u64>(1, 1 << 32))]
    pub budget: Option<u64>,
}

/// `--verify`: the detector RTL's backends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Verify {
    /// The detector RTL in rust-hdl's simulator.
    Rusthdl,
    /// The detector's Verilog, verilated.
    Verilator,
}

impl Verify {
    fn name(self) -> &'static str {
        match self {
            Verify::Rusthdl => "rusthdl",
            Verify::Verilator => "verilator",
        }
    }
}

/// What `--verify` found: the distinct cases checked and the first difference.
struct Verified {
    cases: u64,
    mismatches: u64,
    first: Option<String>,
}

/// Every distinct case of every access of `k` on the detector RTL (docs/bank-conflicts.md
/// §3.4): the RTL's degree against the model's.
fn verify(k: &Kernel, backend: Verify) -> Result<Verified> {
    let at = |e: String| format!("--verify {}: {e}", backend.name());
    let mut batch = Batch::new(match backend {
        Verify::Rusthdl => Backend::Rusthdl,
        Verify::Verilator => Backend::Verilator,
    })
    .map_err(|e| at(e.to_string()))?;
    let mut v = Verified {
        cases: 0,
        mismatches: 0,
        first: None,
    };
    for (n, a) in k.accesses.iter().enumerate() {
        let cfg = k.cfg(a.array);
        for c in analysis::cases(k, a) {
            let (rtl, _) = batch.eval(&cfg, &c.active, &c.addrs).map_err(at)?;
            v.cases += 1;
            if rtl != c.degree {
                v.mismatches += 1;
                v.first.get_or_insert_with(|| {
                    format!(
                        "access {n}: addresses {:?}, active {:?}: model {}, RTL {rtl}",
                        c.addrs, c.active, c.degree
                    )
                });
            }
        }
    }
    Ok(v)
}

/// `FILE:LINE:COL: ...` for an error of the text form (`LINE:COL: ...`), else `FILE: ...`.
fn located(file: &str, e: &str) -> String {
    let mut parts = e.splitn(3, ':');
    let number =
        |s: Option<&str>| s.is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    if number(parts.next()) && number(parts.next()) {
        format!("{file}:{e}")
    } else {
        format!("{file}: {e}")
    }
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
    if a.optimize && (a.brute_force || a.verify.is_some()) {
        return Err("--brute-force and --verify do not apply with --optimize".into());
    }
    if a.budget.is_some() && !a.optimize {
        return Err("--budget applies only with --optimize".into());
    }
    if a.no_swizzle && !a.optimize {
        return Err("--no-swizzle applies only with --optimize".into());
    }
    if a.budget == Some(0) || a.budget.is_some_and(|b| b > 1 << 32) {
        return Err(format!(
            "--budget {} is out of range; allowed: 1..={}",
            a.budget.unwrap_or(0),
            1u64 << 32
        ));
    }
    let name = a.file.display().to_string();
    let text = read_text(&a.file, MAX_FILE_BYTES)?;
    let k = Raw::read_checked(&text, o).map_err(|e| located(&name, &e))?;
    if a.verify.is_some_and(|_| k.layer_bytes > 8) {
        return Err(format!(
            "--verify: layer_bytes = {} has no RTL; allowed: 4, 8 (the detector's W)",
            k.layer_bytes
        ));
    }
    if a.optimize {
        let l = optimize_with(&k, a.budget.unwrap_or(DEFAULT_BUDGET), !a.no_swizzle);
        if a.json {
            println!("{}", serde_json::to_string(&l).map_err(|e| e.to_string())?);
        } else {
            let list = |m: &std::collections::BTreeMap<String, u64>| {
                m.iter()
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let swizzled: Vec<String> = l
                .swizzles
                .iter()
                .filter_map(|(k, v)| v.map(|[b, m, s]| format!("{k} Swizzle<{b},{m},{s}>")))
                .collect();
            let swizzles = if swizzled.is_empty() {
                String::new()
            } else {
                format!("; swizzles {}", swizzled.join(", "))
            };
            println!(
                "optimize: bank width {} B; pads {}; dummies {}{swizzles}; {} bytes; replays {} \
                 -> {} ({} layouts scored)",
                l.bank_width,
                list(&l.pads),
                list(&l.dummies),
                l.bytes,
                l.replays_before,
                l.replays_after,
                l.evaluated
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let report = bankan::analyze(&k, a.brute_force);
    let checked = a
        .verify
        .map(|b| verify(&k, b).map(|v| (b, v)))
        .transpose()?;
    if a.json {
        let mut v = serde_json::to_value(&report).map_err(|e| e.to_string())?;
        if let Some((b, c)) = &checked {
            v["verify"] = serde_json::json!({
                "backend": b.name(), "cases": c.cases, "mismatches": c.mismatches
            });
        }
        println!("{v}");
    } else {
        print!("{}", report.text());
    }
    if let Some((b, c)) = checked {
        if let Some(first) = c.first {
            eprintln!(
                "FAIL: --verify {}: {} of {} distinct cases differ; first: {first}",
                b.name(),
                c.mismatches,
                c.cases
            );
            return Ok(ExitCode::from(1));
        }
        if !a.json {
            println!(
                "verify {}: {} distinct cases, every degree equal to the model's",
                b.name(),
                c.cases
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
