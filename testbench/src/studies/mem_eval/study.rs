//! `smrtl repro memory-issue-control` (docs/memory-issue-control.md §8.4; spec §7–§8; Dai et
//! al., HPCA 2018, §4): the kernels alone (IPC_alone), Warped-Slicer's scalability curves, then
//! every workload × scheme on the sweep engine, each point through the result cache, and the
//! rows with the §8.4 metrics computed from their NIPCs.

use super::metrics::{antt, fairness, nipc, weighted_speedup};
use super::partition::isolated;
use super::workloads::Mix;
use super::{run, EvalParams, EvalScheme, Partition};
use crate::studies::cache::{Cache, Tally};
use crate::studies::sweep::{self, Axis, Grid, Shard, Table};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use smrtl_cosim::sm::mem_sm::params::{PipeParams, Scheme};
use smrtl_cosim::sm::mem_sm::partition::{overflow, smk_p, smkw_quota, spatial_sms, sweet_point};
use smrtl_cosim::sm::mem_sm::workload::{Bench, KernelSpec};
use smrtl_cosim::sm::mem_sm::PipeStats;
use std::collections::BTreeMap;
use std::num::NonZeroUsize;

/// What one study runs.
#[derive(Clone, Debug)]
pub struct Options {
    pub cycles: u64,
    pub seed: u64,
    pub workloads: Vec<Mix>,
    pub schemes: Vec<&'static EvalScheme>,
    /// The WS-SMIL grid on pf+bp, bp+ks and sv+ks (spec §8.1, §8.5).
    pub smil_grid: bool,
    pub shard: Shard,
    pub threads: Option<NonZeroUsize>,
    /// The pipeline (`--set`) and the evaluation's params.
    pub pipe: PipeParams,
    pub eval: EvalParams,
}

/// What a kernel measured in one run (cached).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Measured {
    pub ipc: f64,
    pub miss_rate: f64,
    pub rsfail_rate: f64,
    pub lsu_stall: f64,
    pub accesses: u64,
}

/// What one point measured (cached): TBs, each kernel, the SM's compute utilisation.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PointRun {
    pub tbs: Vec<u32>,
    pub kernels: Vec<Measured>,
    /// None under Spatial (no shared SM is run).
    pub compute_util: Option<f64>,
    /// Warped-Slicer partitions: `Σ S_k(n_k)` of the sweet point.
    pub theoretical_ws: Option<f64>,
}

fn measured(s: &PipeStats) -> (Vec<Measured>, Option<f64>) {
    let k = s
        .kernels
        .iter()
        .map(|k| Measured {
            ipc: k.ipc,
            miss_rate: k.l1d_miss_rate,
            rsfail_rate: k.l1d_rsfail_rate,
            lsu_stall: k.lsu_stall_pct,
            accesses: k.accesses,
        })
        .collect();
    (k, Some(s.compute_util))
}

/// One kernel of a row (issue 23 item 3).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct KernelRow {
    pub name: String,
    pub ipc_alone: f64,
    pub ipc_shared: f64,
    pub nipc: f64,
    pub miss_rate: f64,
    pub rsfail_rate: f64,
    pub lsu_stall: f64,
    pub accesses: u64,
}

/// One workload × scheme (a WS-SMIL point's scheme is `ws-smil:A,B`, 0 = unlimited).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Row {
    pub workload: String,
    pub class: String,
    pub scheme: String,
    pub tbs: Vec<u32>,
    pub kernels: Vec<KernelRow>,
    pub ws: f64,
    /// `None` (JSON null) when a kernel made no progress (ANTT infinite).
    pub antt: Option<f64>,
    pub fairness: f64,
    pub compute_util: Option<f64>,
    pub theoretical_ws: Option<f64>,
    pub hash: String,
}

/// The row's keys in CSV column order.
pub const COLUMNS: [&str; 11] = [
    "workload",
    "class",
    "scheme",
    "tbs",
    "kernels",
    "ws",
    "antt",
    "fairness",
    "compute_util",
    "theoretical_ws",
    "hash",
];

impl Row {
    pub fn nipcs(&self) -> Vec<f64> {
        self.kernels.iter().map(|k| k.nipc).collect()
    }

    /// The SMIL limits of a `ws-smil:A,B` row.
    pub fn smil_limits(&self) -> Option<[u32; 2]> {
        let (a, b) = self.scheme.strip_prefix(SMIL_PREFIX)?.split_once(',')?;
        Some([a.parse().ok()?, b.parse().ok()?])
    }

    fn cells(&self) -> Result<Vec<Value>, String> {
        let v = serde_json::to_value(self).map_err(|e| e.to_string())?;
        Ok(COLUMNS.iter().map(|c| v[c].clone()).collect())
    }

    fn from_cells(cells: &[Value]) -> Result<Row, String> {
        let m: serde_json::Map<String, Value> = COLUMNS
            .iter()
            .map(|c| c.to_string())
            .zip(cells.iter().cloned())
            .collect();
        serde_json::from_value(Value::Object(m)).map_err(|e| e.to_string())
    }
}

/// The SMIL limits of each kernel: 1..=24, then unlimited (0) (spec §8.1).
pub fn smil_limits() -> Vec<u32> {
    (1..=24).chain([0]).collect()
}
/// The pairs §8.5 names for the SMIL surfaces.
pub const SMIL_PAIRS: [&str; 3] = ["pf+bp", "bp+ks", "sv+ks"];
/// The scheme name of a WS-SMIL point: `ws-smil:A,B`.
pub const SMIL_PREFIX: &str = "ws-smil:";

/// A study's results.
#[derive(Clone, Debug)]
pub struct Study {
    /// Every row of the shard in grid order (the SMIL points after the workload × scheme ones).
    pub rows: Vec<Row>,
    /// Each benchmark alone at isolated occupancy (IPC_alone and its rates).
    pub alone: BTreeMap<String, Measured>,
    /// Warped-Slicer's curves per benchmark, `IPC(n)` for n = 1..=n_max.
    pub curves: BTreeMap<String, Vec<f64>>,
    /// The sweep table of the rows (`--csv`, `--shard`, `smrtl merge`).
    pub table: Table,
    /// (reused, computed) cache entries of the isolated runs, the curve points and the grid
    /// points.
    pub tally: [(u64, u64); 3],
    pub grid_points: usize,
}

impl Study {
    /// The main rows (no SMIL point).
    pub fn main_rows(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.smil_limits().is_none())
    }

    pub fn row(&self, workload: &str, scheme: &str) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.workload == workload && r.scheme == scheme)
    }
}

/// The grid: one axis of `WORKLOAD/SCHEME` points, the workloads × schemes, then (with
/// `--smil-grid`) the SMIL pairs × limit pairs.
pub fn grid(o: &Options) -> Result<Grid, String> {
    let mut values: Vec<Value> = vec![];
    for m in &o.workloads {
        for s in &o.schemes {
            values.push(format!("{}/{}", m.name(), s.name).into());
        }
    }
    if o.smil_grid {
        for w in SMIL_PAIRS {
            for a in smil_limits() {
                for b in smil_limits() {
                    values.push(format!("{w}/{SMIL_PREFIX}{a},{b}").into());
                }
            }
        }
    }
    if values.is_empty() {
        return Err("no workload × scheme to run".into());
    }
    Grid::new(vec![Axis {
        name: "point".into(),
        values,
    }])
}

/// The study's id in its sweep table: the hash of what decides its rows.
pub fn spec_id(o: &Options, g: &Grid) -> String {
    let points: Vec<&Value> = g.axes()[0].values.iter().collect();
    let canon =
        json!({"study": "memory-issue-control", "base": base_key(o, o.cycles), "points": points});
    sweep::spec_id(&canon.to_string())
}

/// The key parts every cache entry shares: system params, cycles, seed.
fn base_key(o: &Options, cycles: u64) -> Value {
    json!({"pipe": o.pipe, "eval": o.eval, "cycles": cycles, "seed": o.seed})
}

/// The benchmarks the study's points use, in Table-2 order.
fn benches(o: &Options) -> Vec<&'static Bench> {
    let mut used: Vec<&'static Bench> = o.workloads.iter().flat_map(|m| m.0.clone()).collect();
    if o.smil_grid {
        for w in SMIL_PAIRS {
            used.extend(Mix::parse(w).expect("a Table-2 pair").0);
        }
    }
    smrtl_cosim::sm::mem_sm::workload::BENCHES
        .iter()
        .filter(|b| used.iter().any(|u| u.name == b.name))
        .collect()
}

/// What every point reads.
struct Ctx<'a> {
    o: &'a Options,
    cache: &'a Cache,
    tally: &'a Tally,
    alone: &'a BTreeMap<String, Measured>,
    curves: &'a BTreeMap<String, Vec<f64>>,
}

/// Runs the study; with a shard, only its points.
pub fn run_study(o: &Options, cache: &Cache) -> Result<Study, String> {
    let tally = Tally::default();
    let (profile_tally, point_tally) = (Tally::default(), Tally::default());
    let benches = benches(o);
    let g = grid(o)?;
    // 1. Each benchmark alone at isolated occupancy, `cycles` long.
    let alone: Vec<Measured> = sweep::par_map(&benches, o.threads, |b| {
        let key = json!({"run": "alone", "bench": b.name, "base": base_key(o, o.cycles)});
        cache
            .get_or(&key, &tally, || {
                let s = b.kernel();
                let tbs = [isolated(&s, &o.pipe)];
                let st = run(std::slice::from_ref(&s), &tbs, o.cycles, o.seed, &o.pipe)?;
                Ok(measured(&st).0.remove(0))
            })
            .map(|r| r.0)
    })
    .into_iter()
    .collect::<Result<_, String>>()?;
    let alone: BTreeMap<String, Measured> = benches
        .iter()
        .map(|b| b.name.to_string())
        .zip(alone)
        .collect();
    // 2. Warped-Slicer's static curves (spec §7), every (benchmark, n) point on its own.
    let curves = curves(o, cache, &profile_tally, &benches)?;
    // 3. Every point of the shard.
    let ctx = Ctx {
        o,
        cache,
        tally: &point_tally,
        alone: &alone,
        curves: &curves,
    };
    let table_rows = sweep::run_grid(&g, o.shard, o.threads, &|| {}, |p| {
        let id = p.get("point").and_then(Value::as_str).unwrap_or_default();
        ctx.point(id)?.cells()
    })?;
    let rows = table_rows
        .iter()
        .map(|r| Row::from_cells(&r.cells))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Study {
        rows,
        alone,
        curves,
        table: Table {
            spec: spec_id(o, &g),
            points: g.len(),
            columns: COLUMNS.iter().map(|c| c.to_string()).collect(),
            rows: table_rows,
        },
        tally: [tally.get(), profile_tally.get(), point_tally.get()],
        grid_points: g.len(),
    })
}

/// `IPC_k(n)` alone for n = 1..=n_max of every benchmark, `ws_profile_cycles` each.
fn curves(
    o: &Options,
    cache: &Cache,
    tally: &Tally,
    benches: &[&'static Bench],
) -> Result<BTreeMap<String, Vec<f64>>, String> {
    let ws_used = o.smil_grid || o.schemes.iter().any(|s| s.partition == Partition::Ws);
    if !ws_used {
        return Ok(BTreeMap::new());
    }
    let cycles = o.eval.ws_profile_cycles;
    let jobs: Vec<(&'static Bench, u32)> = benches
        .iter()
        .flat_map(|b| (1..=isolated(&b.kernel(), &o.pipe)).map(move |n| (*b, n)))
        .collect();
    let ipc = sweep::par_map(&jobs, o.threads, |&(b, n)| {
        let key = json!({"run": "profile", "bench": b.name, "tbs": n, "base": base_key(o, cycles)});
        cache
            .get_or(&key, tally, || {
                let s = b.kernel();
                let st = run(std::slice::from_ref(&s), &[n], cycles, o.seed, &o.pipe)?;
                Ok(st.kernels[0].ipc)
            })
            .map(|r| r.0)
    });
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (&(b, _), x) in jobs.iter().zip(ipc) {
        out.entry(b.name.to_string()).or_default().push(x?);
    }
    Ok(out)
}

impl Ctx<'_> {
    /// The row of point `WORKLOAD/SCHEME`.
    fn point(&self, id: &str) -> Result<Row, String> {
        let (w, s) = id.split_once('/').ok_or("a point is WORKLOAD/SCHEME")?;
        let mix = Mix::parse(w)?;
        let (scheme, limits) = match s.strip_prefix(SMIL_PREFIX) {
            Some(l) => {
                let (a, b) = l.split_once(',').ok_or("ws-smil:A,B")?;
                let lim = [a, b].map(|x| x.parse::<u32>().unwrap_or(0));
                (None, Some(lim))
            }
            None => (Some(super::scheme_named(s)?), None),
        };
        let key = json!({"run": "point", "workload": w, "scheme": s, "base": base_key(self.o, self.o.cycles)});
        let (pr, hash) = self
            .cache
            .get_or(&key, self.tally, || self.simulate(&mix, scheme, limits))?;
        Ok(self.row(&mix, s, pr, hash))
    }

    /// Partitions and runs one point.
    fn simulate(
        &self,
        mix: &Mix,
        scheme: Option<&EvalScheme>,
        smil: Option<[u32; 2]>,
    ) -> Result<PointRun, String> {
        let o = self.o;
        let specs: Vec<KernelSpec> = mix.0.iter().map(|b| b.kernel()).collect();
        let partition = scheme.map_or(Partition::Ws, |s| s.partition);
        let mut p = o.pipe.clone();
        p.scheme = scheme.map_or(Scheme::Smil, |s| s.ctl);
        if let Some(l) = smil {
            p.smil_limit = l.to_vec();
        }
        let alone: Vec<&Measured> = mix.0.iter().map(|b| &self.alone[b.name]).collect();
        match partition {
            Partition::Spatial => {
                // §7: each kernel at isolated occupancy on its SMs; the representative SM's
                // IPC is the kernel's alone (the lower memory scales with the SMs sharing it).
                let sms = spatial_sms(specs.len(), o.eval.sms);
                let kernels = alone
                    .iter()
                    .zip(&sms)
                    .map(|(a, &n)| Measured {
                        ipc: f64::from(n) / f64::from(o.eval.sms) * a.ipc,
                        ..(*a).clone()
                    })
                    .collect();
                Ok(PointRun {
                    tbs: specs.iter().map(|s| isolated(s, &o.pipe)).collect(),
                    kernels,
                    compute_util: None,
                    theoretical_ws: None,
                })
            }
            Partition::SmkP => {
                let tbs = smk_p(&specs, &o.pipe);
                if scheme.is_some_and(|s| s.smkw) {
                    p.smkw_quota = alone
                        .iter()
                        .map(|a| smkw_quota(a.ipc, o.eval.smkw_window))
                        .collect();
                }
                let st = run(&specs, &tbs, o.cycles, o.seed, &p)?;
                let (kernels, compute_util) = measured(&st);
                Ok(PointRun {
                    tbs,
                    kernels,
                    compute_util,
                    theoretical_ws: None,
                })
            }
            Partition::Ws => {
                let curves: Vec<Vec<f64>> =
                    mix.0.iter().map(|b| self.curves[b.name].clone()).collect();
                let sp = sweet_point(&curves, |t| overflow(&specs, t, &o.pipe).is_none())
                    .ok_or("no tuple with one TB of each kernel fits the SM")?;
                let st = run(&specs, &sp.tbs, o.cycles, o.seed, &p)?;
                let (kernels, compute_util) = measured(&st);
                Ok(PointRun {
                    tbs: sp.tbs,
                    kernels,
                    compute_util,
                    theoretical_ws: Some(sp.theoretical_ws),
                })
            }
        }
    }

    /// The row of a point: NIPC against IPC alone, and the §8.4 metrics from those NIPCs.
    fn row(&self, mix: &Mix, scheme: &str, pr: PointRun, hash: String) -> Row {
        let kernels: Vec<KernelRow> = mix
            .0
            .iter()
            .zip(&pr.kernels)
            .map(|(b, m)| {
                let alone = self.alone[b.name].ipc;
                KernelRow {
                    name: b.name.into(),
                    ipc_alone: alone,
                    ipc_shared: m.ipc,
                    nipc: nipc(m.ipc, alone),
                    miss_rate: m.miss_rate,
                    rsfail_rate: m.rsfail_rate,
                    lsu_stall: m.lsu_stall,
                    accesses: m.accesses,
                }
            })
            .collect();
        let n: Vec<f64> = kernels.iter().map(|k| k.nipc).collect();
        let a = antt(&n);
        Row {
            workload: mix.name(),
            class: mix.class(),
            scheme: scheme.into(),
            tbs: pr.tbs,
            ws: weighted_speedup(&n),
            antt: a.is_finite().then_some(a),
            fairness: fairness(&n),
            compute_util: pr.compute_util,
            theoretical_ws: pr.theoretical_ws,
            kernels,
            hash,
        }
    }
}
