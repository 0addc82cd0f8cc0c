//! `smrtl repro memory-issue-control` (docs/memory-issue-control.md §8.4; issue 23 item 3):
//! the request read and checked before any work, the study run through the cache, and the
//! report, figures and sweep table handed to the CLI.

use super::report::{failed, report, text};
use super::sensitivity::run_sensitivity;
use super::study::{run_study, Options};
use super::workloads::{pairs, triples, Mix};
use super::{scheme_named, EvalParams, SCHEMES};
use crate::studies::cache::Cache;
use crate::studies::registry::{Failure, Opt, Outcome, Request, NO_CACHE, SHARD, THREADS};
use crate::studies::sweep::{Format, Shard};
use serde_json::json;
use smrtl_cosim::sm::mem_sm::params::PipeParams;
use smrtl_cosim::sm::mem_sm::workload::{BENCHES, MAX_CYCLES};
use smrtl_hdl::BlockParams;

/// The options this experiment takes beyond `--json`, `--plot`, `--seed`, `--strict`.
pub const OPTIONS: &[Opt] = &[
    Opt {
        flag: "--cycles",
        help: "cycles per run [default: 2000000 (run_cycles)]",
    },
    Opt {
        flag: "--workloads",
        help: "pairs, triples, all [default], or a comma-separated list (bp+sv,cp+ks+ax)",
    },
    Opt {
        flag: "--schemes",
        help: "comma-separated schemes [default: all nine]: spatial, ws, ws-rbmi, ws-qbmi, ws-dmil, ws-qbmi-dmil, smk-p-w, smk-p-qbmi, smk-p-dmil",
    },
    Opt {
        flag: "--smil-grid",
        help: "also the WS-SMIL grid (limits 1..24 and unlimited per kernel) on pf+bp, bp+ks and sv+ks",
    },
    Opt {
        flag: "--sensitivity",
        help: "also WS, WS-QBMI and WS-DMIL with a 48 KB and a 96 KB L1D, the LRR scheduler and 256 MSHRs (target 10)",
    },
    Opt {
        flag: "--csv",
        help: "write the rows as a sweep table (CSV; `smrtl merge` joins shards)",
    },
    SHARD,
    NO_CACHE,
    THREADS,
    Opt {
        flag: "--set",
        help: "override one pipeline parameter (mem_pipeline), e.g. `--set l1d_sets=64`",
    },
];

/// `pairs`, `triples`, `all` or a comma-separated list of `bp+sv`-style workloads.
pub fn parse_workloads(s: &str) -> Result<Vec<Mix>, String> {
    match s {
        "pairs" => return Ok(pairs()),
        "triples" => return Ok(triples()),
        "all" => return Ok(pairs().into_iter().chain(triples()).collect()),
        _ => {}
    }
    let mut out: Vec<Mix> = vec![];
    for w in s.split(',') {
        let mut m = Mix::parse(w.trim()).map_err(|e| format!("--workloads: {e}"))?;
        // Kernel 0 first in Table-2 order, as in the pairs and triples (`sv+bp` is `bp+sv`).
        m.0.sort_by_key(|b| BENCHES.iter().position(|x| x.name == b.name));
        if m.0.len() < 2 {
            return Err(format!(
                "--workloads: `{}` has one kernel; allowed: pairs, triples, all, or workloads of 2 or 3 kernels such as bp+sv",
                smrtl_hdl::shown(w)
            ));
        }
        if out.iter().any(|o| o.name() == m.name()) {
            return Err(format!("--workloads: `{}` twice", m.name()));
        }
        out.push(m);
    }
    Ok(out)
}

/// A comma-separated list of the nine scheme spellings.
pub fn parse_schemes(s: &str) -> Result<Vec<&'static super::EvalScheme>, String> {
    let mut out: Vec<&'static super::EvalScheme> = vec![];
    for name in s.split(',') {
        let e = scheme_named(name.trim()).map_err(|e| format!("--schemes: {e}"))?;
        if out.iter().any(|o| o.name == e.name) {
            return Err(format!("--schemes: `{}` twice", e.name));
        }
        out.push(e);
    }
    Ok(out)
}

/// The study's options from a request; every error is one line, before any work.
pub fn options(q: &Request) -> Result<Options, String> {
    let eval = EvalParams {
        seed: q.seed,
        ..EvalParams::default()
    };
    let cycles = q.cycles.unwrap_or(eval.run_cycles);
    if !(1..=MAX_CYCLES).contains(&cycles) {
        return Err(format!(
            "--cycles {cycles} is out of range; allowed: 1..={MAX_CYCLES}"
        ));
    }
    let workloads = parse_workloads(q.workloads.as_deref().unwrap_or("all"))?;
    let schemes = match &q.schemes {
        Some(s) => parse_schemes(s)?,
        None => SCHEMES.iter().collect(),
    };
    if q.shard.is_some() && q.sensitivity {
        return Err("--sensitivity runs whole studies of its own; it does not take --shard".into());
    }
    if q.shard.is_some() && !q.csv {
        return Err(
            "--shard needs --csv OUT: a shard writes its rows of the sweep table, joined by `smrtl merge`"
                .into(),
        );
    }
    let pipe = PipeParams::resolve(None, &q.sets).map_err(|e| e.to_string())?;
    Ok(Options {
        cycles,
        seed: q.seed,
        workloads,
        schemes,
        smil_grid: q.smil_grid,
        shard: q.shard.unwrap_or(Shard::WHOLE),
        threads: q.threads,
        pipe,
        eval,
    })
}

/// Runs the study of `q`.
pub fn run(q: &Request) -> Result<Outcome, Failure> {
    let o = options(q).map_err(Failure::Refused)?;
    let cache =
        Cache::open(q.cache.as_deref(), "memory-issue-control").map_err(Failure::Refused)?;
    let s = run_study(&o, &cache).map_err(Failure::Run)?;
    let [a, p, g] = s.tally;
    let mut note = Some(format!(
        "memory-issue-control: cache {}: reused {} of {} points, {} of {} isolated runs, {} of {} profile points",
        if cache.enabled() { "on" } else { "off (--no-cache)" },
        g.0,
        g.0 + g.1,
        a.0,
        a.0 + a.1,
        p.0,
        p.0 + p.1
    ));
    let csv = q.csv.then(|| s.table.render(Format::Csv));
    if o.shard != Shard::WHOLE {
        let rows = s.table.rows.len();
        return Ok(Outcome {
            json: json!({"experiment": "memory-issue-control", "shard": o.shard.to_string(), "points": rows, "grid_points": s.grid_points}).to_string(),
            text: format!(
                "memory-issue-control shard {}: {rows} of {} points in the --csv table (join the shards with `smrtl merge`)\n",
                o.shard, s.grid_points
            ),
            svgs: vec![],
            csv,
            failed: vec![],
            note,
        });
    }
    let sens = if q.sensitivity {
        let (rows, (reused, computed)) = run_sensitivity(&o, &cache).map_err(Failure::Run)?;
        if let Some(n) = note.as_mut() {
            n.push_str(&format!(
                "; sensitivity: reused {reused} of {} points",
                reused + computed
            ));
        }
        Some(rows)
    } else {
        None
    };
    let r = report(&o, &s, sens);
    Ok(Outcome {
        json: serde_json::to_string_pretty(&r).map_err(|e| Failure::Run(e.to_string()))?,
        text: text(&r),
        svgs: if q.plot {
            super::plots::figures(&r)
        } else {
            vec![]
        },
        csv,
        failed: failed(&r),
        note,
    })
}
