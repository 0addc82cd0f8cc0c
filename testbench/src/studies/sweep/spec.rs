//! The sweep of `smrtl sweep`: a spec (a system's params × profiles × waves × seeds, or × input
//! files) checked before any point runs, and its points run on the engine ([`super`]).

use super::{describe, run_grid, spec_id, Axis, Grid, Point, Shard, Table};
use crate::systems::{self, metric, sets_of, Input, InputKind, RunOptions, System};
use serde::de::{Deserializer, Error as _, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::num::NonZeroUsize;

/// Largest `waves` of a point.
pub use crate::studies::profiles::MAX_WAVES;

/// Most points of a sweep's grid (docs/cli.md "Limits").
pub const MAX_POINTS: usize = 1_000_000;

/// The system of a spec without a `"system"` field (every spec before systems had one).
pub const DEFAULT_SYSTEM: &str = "elastic_sm";

/// A JSON object read with its keys in file order (serde_json's map sorts them).
#[derive(Default)]
struct Ordered(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Ordered, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object {\"name\": value or [values], ...}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut out: Vec<(String, Value)> = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Value>()? {
                    if out.iter().any(|(n, _)| *n == k) {
                        return Err(A::Error::custom(format!("parameter `{k}` named twice")));
                    }
                    out.push((k, v));
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// The spec file as written.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a sweep spec {\"system\", \"params\", \"workloads\" or \"inputs\", \"seeds\", \"waves\"}"
)]
struct SpecFile {
    #[serde(default)]
    system: Option<String>,
    #[serde(default)]
    params: Ordered,
    workloads: Option<Value>,
    inputs: Option<Value>,
    seeds: Option<Value>,
    waves: Option<Value>,
}

fn is_default_system(s: &str) -> bool {
    s == DEFAULT_SYSTEM
}

/// A sweep spec, every field a list (its canonical JSON identifies the spec).
///
/// File format (JSON; every value but `system` may be one value or a list of values):
/// ```json
/// {"system": "elastic_sm",
///  "params": {"sched": ["rr", "bcaws"], "pipe_mode": ["unified", "elastic"]},
///  "workloads": ["aes_encrypt", "dct"], "seeds": [1, 2], "waves": 1}
/// ```
/// * `system`: the system (`smrtl list --systems`), default `elastic_sm`.
/// * `params`: the system's params by their names (as `smrtl sim --set` takes them), each
///   overriding the profile's; default none.
/// * `workloads`: the system's profile names; or
/// * `inputs`: input files of the system, all of one kind (paths from the working directory;
///   each file carries its own seed, so neither `seeds` nor `waves` apply).
/// * `seeds`: profile seeds, default 1; `waves`: 1..=256, default 1 (what a wave is depends on
///   the system's profiles).
///
/// The grid's axes, slowest first: `workload`, the params in file order, `waves`, `seed`; or
/// `input` and the params.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Spec {
    /// Left out of the canonical form when it is the default, so a spec written before systems
    /// keeps its id.
    #[serde(skip_serializing_if = "is_default_system")]
    pub system: String,
    pub params: Vec<Axis>,
    pub workloads: Vec<String>,
    /// Left out of the canonical form when empty (a spec of profiles).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    pub waves: Vec<u32>,
    pub seeds: Vec<u64>,
}

/// A value or a list of values as a non-empty list without repeats.
fn list(at: &str, v: Value) -> Result<Vec<Value>, String> {
    let values = match v {
        Value::Array(a) => a,
        one => vec![one],
    };
    if values.is_empty() {
        return Err(format!("{at}: empty list"));
    }
    let mut seen = std::collections::HashSet::with_capacity(values.len());
    if let Some((i, v)) = values
        .iter()
        .enumerate()
        .find(|(_, v)| !seen.insert(v.to_string()))
    {
        return Err(format!("{at}: {v} listed twice (entry {i})"));
    }
    Ok(values)
}

fn uints(at: &str, v: Value, range: std::ops::RangeInclusive<u64>) -> Result<Vec<u64>, String> {
    list(at, v)?
        .into_iter()
        .map(|x| {
            x.as_u64().filter(|n| range.contains(n)).ok_or_else(|| {
                format!(
                    "{at}: expected integers in {}..={}, got {x}",
                    range.start(),
                    range.end()
                )
            })
        })
        .collect()
}

impl Spec {
    /// The spec with the parameters `cfg` maps for its system as one-value axes ahead of its
    /// own params, which win over them (`smrtl sweep --gpgpusim-config`, docs/gpgpusim.md).
    pub fn with_gpgpusim(mut self, cfg: &crate::gpgpusim::Config) -> Result<Spec, String> {
        let system = self.system();
        let own: Vec<String> = self.params.iter().map(|a| a.name.clone()).collect();
        let m = crate::gpgpusim::map(cfg, system.name(), &system.params(), &own)?;
        let axes = m.settings.into_iter().map(|s| Axis {
            name: s.param.to_string(),
            values: vec![s
                .value
                .parse::<u64>()
                .map_or_else(|_| Value::String(s.value.clone()), Value::from)],
        });
        self.params = axes.chain(self.params).collect();
        Ok(self)
    }

    /// Parses and checks a spec's JSON (names and shapes; [`Sweep::new`] checks the params'
    /// values). Errors are one line.
    pub fn parse(text: &str) -> Result<Spec, String> {
        Self::parse_raw(text).map_err(|e| smrtl_hdl::shown(&e))
    }

    /// [`Self::parse`] before control characters in echoed text are escaped.
    fn parse_raw(text: &str) -> Result<Spec, String> {
        smrtl_cosim::json::repeated_key(text).map_err(|e| format!("spec: {e}"))?;
        let file: SpecFile = serde_json::from_str(text).map_err(|e| format!("spec: {e}"))?;
        let system = match &file.system {
            Some(name) => systems::system(name).map_err(|e| format!("system: {e}"))?,
            None => systems::system(DEFAULT_SYSTEM).expect("the default system is registered"),
        };
        let params = Self::axes_of(system, file.params)?;
        let (workloads, inputs, waves, seeds) = match (file.workloads, file.inputs) {
            (Some(w), None) => {
                let seeds = uints("seeds", file.seeds.unwrap_or(1.into()), 0..=u64::MAX)?;
                let waves = uints(
                    "waves",
                    file.waves.unwrap_or(1.into()),
                    1..=u64::from(MAX_WAVES),
                )?;
                let waves = waves.into_iter().map(|w| w as u32).collect();
                (Self::profiles_of(system, w)?, vec![], waves, seeds)
            }
            (None, Some(i)) => {
                if let Some(key) = [("seeds", &file.seeds), ("waves", &file.waves)]
                    .iter()
                    .find_map(|(k, v)| v.is_some().then_some(k))
                {
                    return Err(format!(
                        "{key}: apply to `workloads` (built-in profiles); an input file carries its own"
                    ));
                }
                (vec![], Self::paths_of(i)?, vec![], vec![])
            }
            (Some(_), Some(_)) => {
                return Err(
                    "give `workloads` (built-in profiles) or `inputs` (files), not both".into(),
                )
            }
            (None, None) => {
                return Err(
                    "spec: missing field `workloads` (built-in profiles) or `inputs` (files)"
                        .into(),
                )
            }
        };
        let spec = Spec {
            system: system.name().to_string(),
            params,
            workloads,
            inputs,
            waves,
            seeds,
        };
        let points = Grid::new(spec.axes())?.len();
        if points > MAX_POINTS {
            return Err(format!(
                "the grid has {points} points; allowed: at most {MAX_POINTS}"
            ));
        }
        Ok(spec)
    }

    /// The params axes: each a param of `system` by its exact name.
    fn axes_of(system: &dyn System, params: Ordered) -> Result<Vec<Axis>, String> {
        let mut known: Vec<&str> = system.params().iter().map(|p| p.name).collect();
        known.sort_unstable();
        params
            .0
            .into_iter()
            .map(|(name, v)| {
                if !known.contains(&name.as_str()) {
                    return Err(format!(
                        "params: unknown parameter `{name}`; allowed: {}",
                        known.join(", ")
                    ));
                }
                let values = list(&format!("params.{name}"), v)?;
                Ok(Axis { name, values })
            })
            .collect()
    }

    /// The profiles of `workloads`, by their canonical names.
    fn profiles_of(system: &dyn System, workloads: Value) -> Result<Vec<String>, String> {
        let profiles = system
            .profiles()
            .ok_or_else(|| format!("workloads: {} has no built-in profiles", system.name()))?;
        let names = list("workloads", workloads)?
            .iter()
            .map(|w| {
                let name = w
                    .as_str()
                    .ok_or_else(|| format!("workloads: expected profile names, got {w}"))?;
                (profiles.lookup)(name).map_err(|e| format!("workloads: {e}"))
            })
            .collect::<Result<Vec<_>, String>>()?;
        if let Some(w) = names
            .iter()
            .enumerate()
            .find(|(i, w)| names[..*i].contains(w))
        {
            return Err(format!("workloads: {} listed twice", w.1));
        }
        Ok(names)
    }

    /// The paths of `inputs`.
    fn paths_of(inputs: Value) -> Result<Vec<String>, String> {
        list("inputs", inputs)?
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("inputs: expected file paths, got {v}"))
            })
            .collect()
    }

    /// The spec's system.
    pub fn system(&self) -> &'static dyn System {
        systems::system(&self.system).expect("checked by Spec::parse")
    }

    /// [`spec_id`] of the canonical form.
    pub fn id(&self) -> String {
        spec_id(&serde_json::to_string(self).expect("spec serializes"))
    }

    /// Axes slowest first: `workload`, the params, `waves`, `seed`.
    pub fn grid(&self) -> Grid {
        Grid::new(self.axes()).expect("axes checked by Spec::parse")
    }

    fn axes(&self) -> Vec<Axis> {
        if !self.inputs.is_empty() {
            let mut axes = vec![Axis {
                name: "input".into(),
                values: self.inputs.iter().map(|i| i.as_str().into()).collect(),
            }];
            axes.extend(self.params.iter().cloned());
            return axes;
        }
        let mut axes = vec![Axis {
            name: "workload".into(),
            values: self.workloads.iter().map(|w| w.as_str().into()).collect(),
        }];
        axes.extend(self.params.iter().cloned());
        axes.push(Axis {
            name: "waves".into(),
            values: self.waves.iter().map(|&w| w.into()).collect(),
        });
        axes.push(Axis {
            name: "seed".into(),
            values: self.seeds.iter().map(|&s| s.into()).collect(),
        });
        axes
    }
}

/// A checked sweep: a run of the spec's system's model per point ([`System::sweep_point`]),
/// its profile with the point's params over the profile's, so a row is reproduced by
/// `smrtl sim --system S --profile W --seed S --waves N --set k=v …`.
/// With `inputs`, a point is the system's model on its file with the point's params, so a
/// row is reproduced by `smrtl sim FILE --set k=v …`.
#[derive(Clone, Debug)]
pub struct Sweep {
    spec: Spec,
    grid: Grid,
    /// The input files: their one kind and their texts (in `inputs` order).
    files: Option<(&'static InputKind, Vec<String>)>,
}

impl Sweep {
    /// A checked sweep: every workload × params combination is built and checked once (by
    /// the system's [`System::sweep_checker`]), so a bad value fails here, before any point
    /// runs.
    pub fn new(spec: Spec) -> Result<Sweep, String> {
        let grid = spec.grid();
        let params = Grid::new(spec.params.clone()).expect("params axes are checked");
        if !spec.inputs.is_empty() {
            let files = Self::read_inputs(&spec, &params)?;
            return Ok(Sweep {
                spec,
                grid,
                files: Some(files),
            });
        }
        let mut check = spec.system().sweep_checker();
        for w in &spec.workloads {
            for i in 0..params.len() {
                let coords = params.point(i).coords;
                check(w, &coords, spec.seeds[0]).map_err(|e| {
                    let with = if coords.is_empty() {
                        String::new()
                    } else {
                        format!(" with {}", describe(&coords))
                    };
                    format!("workload {w}{with}: {e}")
                })?;
            }
        }
        Ok(Sweep {
            spec,
            grid,
            files: None,
        })
    }

    /// Reads the spec's input files (each of the spec's system, all of one kind) and checks
    /// every input × params combination.
    fn read_inputs(
        spec: &Spec,
        params: &Grid,
    ) -> Result<(&'static InputKind, Vec<String>), String> {
        let system = spec.system();
        let mut kind: Option<(&'static InputKind, &str)> = None;
        let mut texts = vec![];
        for path in &spec.inputs {
            let (_, k, text) = systems::cli::read_input(path.as_ref(), Some(system))
                .map_err(|e| format!("inputs: {e}"))?;
            match kind {
                Some((first, at)) if first.name != k.name => {
                    return Err(format!(
                        "inputs: {at} is a {} file and {path} a {} file; one kind per sweep (its metrics are the columns)",
                        first.name, k.name
                    ))
                }
                _ => kind = Some((k, path)),
            }
            for i in 0..params.len() {
                let coords = params.point(i).coords;
                let input = Input::File {
                    kind: k,
                    name: path,
                    text: &text,
                };
                system.load(input, &sets_of(&coords)).map_err(|e| {
                    let with = if coords.is_empty() {
                        String::new()
                    } else {
                        format!(" with {}", describe(&coords))
                    };
                    format!("input {path}{with}: {e}")
                })?;
            }
            texts.push(text);
        }
        Ok((kind.expect("inputs are not empty").0, texts))
    }

    /// The id of the sweep: its spec's, and with input files, their contents' too.
    pub fn id(&self) -> String {
        match &self.files {
            None => self.spec.id(),
            Some((_, texts)) => {
                let mut canonical = serde_json::to_string(&self.spec).expect("spec serializes");
                for t in texts {
                    canonical += &format!("\n{:016x}", smrtl_hdl::params::fnv1a(t.as_bytes()));
                }
                spec_id(&canonical)
            }
        }
    }

    /// Parses, checks and builds a sweep from a spec file's text.
    pub fn parse(text: &str) -> Result<Sweep, String> {
        Sweep::new(Spec::parse(text)?)
    }

    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The experiment's columns: the grid's axes, then the system's metrics.
    pub fn columns(&self) -> Vec<String> {
        let axes = self.grid.axes().iter().map(|a| a.name.clone());
        let metrics = match &self.files {
            Some((kind, _)) => kind.metrics.iter().map(|m| m.0).collect(),
            None => self.spec.system().sweep_metrics(),
        };
        axes.chain(metrics.into_iter().map(String::from)).collect()
    }

    /// Runs one point: its coordinates, then its metrics.
    pub fn run_point(&self, point: &Point) -> Result<Vec<Value>, String> {
        let at = |name: &str| point.get(name).expect("every point has the spec's axes");
        let overrides: Vec<(String, Value)> = self
            .spec
            .params
            .iter()
            .map(|a| (a.name.clone(), at(&a.name).clone()))
            .collect();
        let metrics = match &self.files {
            Some((kind, texts)) => {
                let name = at("input").as_str().expect("inputs are paths");
                let i = self.spec.inputs.iter().position(|p| p == name);
                let text = &texts[i.expect("an input of the spec")];
                let input = Input::File { kind, name, text };
                let loaded = self.spec.system().load(input, &sets_of(&overrides))?;
                let report = match loaded.run(RunOptions::model())?.result {
                    Ok(r) => r.json(),
                    Err(f) => return Err(f.to_string()),
                };
                kind.metrics
                    .iter()
                    .map(|(_, at)| metric(&report, at))
                    .collect()
            }
            None => {
                let seed = at("seed").as_u64().expect("seeds are integers");
                let waves = at("waves").as_u64().expect("waves are integers") as u32;
                let name = at("workload").as_str().expect("workloads are names");
                self.spec
                    .system()
                    .sweep_point(name, &overrides, seed, waves)?
            }
        };
        let mut cells: Vec<Value> = point.coords.iter().map(|(_, v)| v.clone()).collect();
        cells.extend(metrics);
        Ok(cells)
    }

    /// Runs the points of `shard` on `threads` threads (see [`run_grid`]).
    pub fn run(
        &self,
        shard: Shard,
        threads: Option<NonZeroUsize>,
        progress: &(dyn Fn() + Sync),
    ) -> Result<Table, String> {
        let rows = run_grid(&self.grid, shard, threads, progress, |p| self.run_point(p))?;
        Ok(Table {
            spec: self.id(),
            points: self.grid.len(),
            columns: self.columns(),
            rows,
        })
    }
}
