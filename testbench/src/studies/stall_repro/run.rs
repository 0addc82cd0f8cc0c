//! Measuring the studies (docs/stall-inspector.md §11): every configuration's kernel (embedded
//! from `examples/coh/`) on the coherent system with a stall probe per SM — and, with an RTL
//! backend, every SM's `stall_inspector` RTL in the loop, compared every cycle and in the
//! read-out — and T-f's cost as CPU time of the UTS run with and without the probes.

use super::figures::Bar;
use super::points;
use super::report::{studies, Config, Report, Study};
use crate::studies::cache::{Cache, Tally};
use crate::studies::registry::{Failure, Opt, Outcome, Request, NO_CACHE, SHARD, THREADS};
use crate::studies::sweep::{Format, Shard};
use crate::systems::coh_sm::CohInput;
use crate::systems::stalls::StallRtl;
use crate::systems::{Backend, Loaded as _};
use serde_json::json;
use smrtl_hdl::shown;

/// The case-study kernels, embedded so the reproduction needs no file (docs §10.4).
const KERNELS: [(&str, &str); 5] = [
    ("uts", include_str!("../../../../examples/coh/uts.coh")),
    ("utsd", include_str!("../../../../examples/coh/utsd.coh")),
    (
        "implicit-spm",
        include_str!("../../../../examples/coh/implicit-spm.coh"),
    ),
    (
        "implicit-dma",
        include_str!("../../../../examples/coh/implicit-dma.coh"),
    ),
    (
        "implicit-stash",
        include_str!("../../../../examples/coh/implicit-stash.coh"),
    ),
];

/// Repetitions of each side of T-f's timing (the least CPU time of each side counts).
const COST_ROUNDS: usize = 2;

/// What `smrtl repro stall-inspector` takes beyond `--json`, `--plot` and `--strict`.
pub const OPTIONS: &[Opt] = &[
    Opt {
        flag: "--csv",
        help: "every SM's counters and the normalised bars (spec §5's CSV); with --shard the shard's rows of the study's sweep table",
    },
    Opt {
        flag: "--set",
        help: "one coherent-system parameter on every configuration (a study's own settings win), e.g. `--set sms=2`",
    },
    Opt {
        flag: "--backend",
        help: "every SM's stall_inspector RTL in the loop on this backend, compared every cycle and in the read-out [default: model]",
    },
    SHARD,
    NO_CACHE,
    THREADS,
];

/// A configuration's input: its kernel with `sets` (the command line's) and then the
/// configuration's own settings, which win for the keys a study fixes.
fn input(c: &Config, sets: &[(String, String)]) -> Result<CohInput, String> {
    let (_, text) = KERNELS
        .iter()
        .find(|k| k.0 == c.kernel)
        .ok_or_else(|| format!("no embedded kernel `{}`", c.kernel))?;
    let all: Vec<(String, String)> = sets.iter().chain(&c.sets).cloned().collect();
    CohInput::load(&format!("{}.coh", c.kernel), text, &all)
}

/// One bar: the configuration run to its end, each SM's counters at the end.
fn measure(c: &Config, sets: &[(String, String)], backend: Backend) -> Result<Bar, String> {
    let inp = input(c, sets)?;
    // Every SM's inspector RTL, built before the run.
    let mut rtls = (0..inp.params().sms)
        .map(|_| match backend {
            Backend::Model => Ok(None),
            b => StallRtl::new(inp.inspector(), b).map(Some),
        })
        .collect::<Result<Vec<_>, String>>()?;
    let (cycles, per_sm) = inp.checked_with(|s| rtls[s].take())?;
    let sms = per_sm
        .into_iter()
        .enumerate()
        .map(|(s, b)| {
            let b = b.map_err(|e| format!("{} ({}), SM {s}: {e}", c.label, c.kernel))?;
            if b.status != 0 {
                return Err(format!(
                    "{} ({}), SM {s}: inspector status {:#04x} (spec §7.1 waives its invariants)",
                    c.label, c.kernel, b.status
                ));
            }
            Ok(b.totals)
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Bar {
        config: c.label.clone(),
        cycles,
        sms,
    })
}

/// T-f: CPU time of UTS under GPU coherence with a probe per SM over the same run without
/// probes, minus one (the least of [`COST_ROUNDS`] runs each, interleaved).
fn cost(studies: &[Study], sets: &[(String, String)]) -> Result<f64, String> {
    let c = &studies[0].configs[0];
    let inp = input(c, sets)?;
    let (mut bare, mut probed) = (f64::MAX, f64::MAX);
    for _ in 0..COST_ROUNDS {
        let t = crate::cpu_seconds();
        inp.model_pass()?;
        bare = bare.min(crate::cpu_seconds() - t);
        let t = crate::cpu_seconds();
        inp.checked_with(|_| None)?;
        probed = probed.min(crate::cpu_seconds() - t);
    }
    Ok(probed / bare.max(1e-9) - 1.0)
}

/// Checks the request, then runs every study through the sweep engine and the cache.
pub fn run(q: &Request) -> Result<Outcome, Failure> {
    let all = studies();
    // Every configuration loads (its params checked) before any run.
    for c in all.iter().flat_map(|s| &s.configs) {
        input(c, &q.sets).map_err(|e| Failure::Refused(shown(&e)))?;
    }
    if q.shard.is_some() && !q.csv {
        return Err(Failure::Refused(
            "--shard needs --csv OUT: a shard writes its rows of the sweep table, joined by `smrtl merge`"
                .into(),
        ));
    }
    // With an RTL backend every point runs, the RTL in the loop: nothing is reused.
    let dir = (q.backend == Backend::Model)
        .then_some(q.cache.as_deref())
        .flatten();
    let cache = Cache::open(dir, points::CACHE_FOLDER).map_err(Failure::Refused)?;
    let tally = Tally::default();
    let run = points::Run {
        studies: &all,
        sets: &q.sets,
        backend: q.backend,
        shard: q.shard.unwrap_or(Shard::WHOLE),
        threads: q.threads,
        cache: &cache,
        tally: &tally,
    };
    let (bars, table) = run
        .bars(|c| measure(c, &q.sets, q.backend))
        .map_err(Failure::Run)?;
    let (reused, computed) = tally.get();
    let note = Some(format!(
        "stall-inspector: cache {}: reused {reused} of {} points",
        match (cache.enabled(), q.backend) {
            (true, _) => "on",
            (false, Backend::Model) => "off (--no-cache)",
            (false, _) => "off (an RTL backend runs every point)",
        },
        reused + computed
    ));
    if let Some(shard) = q.shard {
        let rows = table.rows.len();
        return Ok(Outcome {
            json: json!({"experiment": "stall-inspector", "shard": shard.to_string(), "points": rows, "grid_points": table.points}).to_string(),
            text: format!(
                "stall-inspector shard {shard}: {rows} of {} points in the --csv table (join the shards with `smrtl merge`)\n",
                table.points
            ),
            svgs: vec![],
            csv: Some(table.render(Format::Csv)),
            failed: vec![],
            note,
        });
    }
    let mut bars = bars.into_iter();
    let report = Report::of(
        &all,
        |_| {
            bars.next()
                .flatten()
                .ok_or_else(|| "a point of the whole grid is missing".to_string())
        },
        cost(&all, &q.sets).map_err(Failure::Run)?,
        q.sets.clone(),
    )
    .map_err(Failure::Run)?;
    Ok(Outcome {
        json: report.json().to_string(),
        text: report.text(),
        svgs: if q.plot { report.svgs() } else { vec![] },
        csv: q.csv.then(|| report.csv()),
        failed: report.failed(),
        note,
    })
}
