//! `smrtl partition`: the TB partition of one to three Table-2 kernels under Spatial,
//! Warped-Slicer or SMK-P, or the feasibility of a given tuple (docs/memory-issue-control.md
//! §8.2; spec §7; Dai et al., HPCA 2018, §1, §2.5, §4.1).

use super::calibrate::pairs;
use crate::studies::mem_eval::partition::{check, choose, of_caps, words, Choice, Feasibility};
use crate::studies::mem_eval::workloads::Mix;
use crate::studies::mem_eval::{EvalParams, Partition};
use smrtl_cosim::sm::mem_sm::params::PipeParams;
use smrtl_cosim::sm::mem_sm::workload::MAX_CYCLES;
use smrtl_hdl::BlockParams;
use std::fmt::Write as _;
use std::process::ExitCode;

type Result<T> = std::result::Result<T, String>;

/// The TBs per kernel that Spatial, Warped-Slicer (ws) or SMK-P (smk-p) give one to three
/// Table-2 kernels of the memory pipeline (seed 004), or whether a tuple (--tbs) fits the SM.
#[derive(clap::Parser)]
#[command(name = "partition")]
pub struct PartitionArgs {
    /// One to three Table-2 kernels, kernel 0 first (`bp sv` or `bp+sv`).
    #[arg(required = true, value_name = "KERNEL")]
    pub kernels: Vec<String>,
    /// The partition: spatial, ws or smk-p.
    #[arg(long)]
    pub scheme: Option<String>,
    /// Check this tuple instead, one TB count per kernel, e.g. `--tbs 9,4`.
    #[arg(long, value_name = "N,N")]
    pub tbs: Option<String>,
    /// Cycles of each point of a Warped-Slicer curve [default: ws_profile_cycles, 200000].
    #[arg(long, value_name = "N")]
    pub profile_cycles: Option<u64>,
    /// Override one pipeline parameter (mem_pipeline), e.g. `--set max_regs=32768`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Print one JSON object (`tbs`: a list in kernel order; with --tbs: `feasible`).
    #[arg(long)]
    pub json: bool,
}

fn tuple(text: &str, n: usize) -> Result<Vec<u32>> {
    let bad = || {
        format!(
            "--tbs `{}`: expected {n} TB counts ≥ 1 separated by commas, one per kernel",
            smrtl_hdl::shown(text)
        )
    };
    let v: Vec<u32> = text
        .split(',')
        .map(|x| x.trim().parse::<u32>().map_err(|_| bad()))
        .collect::<Result<_>>()?;
    if v.len() != n || v.contains(&0) || v.iter().any(|&x| x > 1024) {
        return Err(bad());
    }
    Ok(v)
}

pub fn run(a: PartitionArgs) -> Result<ExitCode> {
    let joined = a.kernels.join("+");
    let mix = Mix::parse(&joined)?;
    let p = PipeParams::resolve(None, &pairs(&a.sets)?).map_err(|e| e.to_string())?;
    let mut e = EvalParams::default();
    if let Some(c) = a.profile_cycles {
        if !(1..=MAX_CYCLES).contains(&c) {
            return Err(format!(
                "--profile-cycles {c} is out of range; allowed: 1..={MAX_CYCLES}"
            ));
        }
        e.ws_profile_cycles = c;
    }
    match (&a.scheme, &a.tbs) {
        (Some(_), Some(_)) => Err("--scheme and --tbs exclude each other; give one".into()),
        (None, None) => Err(format!(
            "give --scheme ({}) or --tbs N,N",
            Partition::NAMES.join(", ")
        )),
        (None, Some(t)) => {
            let f = check(&mix, &tuple(t, mix.0.len())?, &p);
            print_out(a.json, &f, feasibility_text)
        }
        (Some(s), None) => {
            let kind = Partition::parse(s)?;
            let c = choose(kind, &mix, &p, &e)?;
            print_out(a.json, &c, choice_text)
        }
    }
}

fn print_out<T: serde::Serialize>(json: bool, v: &T, text: fn(&T) -> String) -> Result<ExitCode> {
    if json {
        println!("{}", serde_json::to_string(v).map_err(|e| e.to_string())?);
    } else {
        print!("{}", text(v));
    }
    Ok(ExitCode::SUCCESS)
}

fn tbs_line(kernels: &[&str], tbs: &[u32]) -> String {
    kernels
        .iter()
        .zip(tbs)
        .map(|(k, n)| format!("{k} {n} TBs"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn choice_text(c: &Choice) -> String {
    let mut s = format!("{}: {}\n", c.scheme, tbs_line(&c.kernels, &c.tbs));
    for (i, h) in c.held.iter().enumerate() {
        let sms = c
            .sms
            .as_ref()
            .map_or(String::new(), |v| format!(" on each of its {} SMs", v[i]));
        let _ = writeln!(s, "  {}{sms}: {}", h.name, words(&h.used));
    }
    if let Some(t) = &c.total {
        let _ = writeln!(s, "  SM: {}", of_caps(t, &c.caps));
    }
    if let (Some(curves), Some(sc), Some(ws)) = (&c.curves, &c.scaled, c.theoretical_ws) {
        let _ = writeln!(
            s,
            "  scalability curves, alone, {} cycles per point (n = 1, 2, …):",
            c.profile_cycles.unwrap_or(0)
        );
        for cv in curves {
            let f = |v: &[f64]| {
                v.iter()
                    .map(|x| format!("{x:.3}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let _ = writeln!(s, "    {} IPC(n): {}", cv.name, f(&cv.ipc));
            let _ = writeln!(s, "    {} S(n):   {}", cv.name, f(&cv.scaled));
        }
        let tuple: Vec<String> = c.tbs.iter().map(u32::to_string).collect();
        let sv: Vec<String> = sc.iter().map(|x| format!("{x:.3}")).collect();
        let _ = writeln!(
            s,
            "  sweet point ({}): S = {}, theoretical weighted speedup {ws:.3}",
            tuple.join(", "),
            sv.join(", ")
        );
    }
    s
}

fn feasibility_text(f: &Feasibility) -> String {
    let mut s = format!(
        "{}: {}\n",
        tbs_line(&f.kernels, &f.tbs),
        match (&f.overflow, f.used, f.cap) {
            (Some(r), Some(u), Some(c)) => format!("infeasible, {r} {u} > {c}"),
            _ => "feasible".into(),
        }
    );
    for h in &f.held {
        let _ = writeln!(s, "  {}: {}", h.name, words(&h.used));
    }
    let _ = writeln!(s, "  SM: {}", of_caps(&f.total, &f.caps));
    s
}
