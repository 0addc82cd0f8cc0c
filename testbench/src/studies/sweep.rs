//! Parameter sweeps: a grid of points (the cartesian product of named axes), cut into
//! deterministic shards, run on every core with the results in grid order, written as CSV or
//! JSON lines, and shard outputs merged back into exactly the bytes of an unsharded run.
//!
//! The engine ([`Grid`], [`Shard`], [`par_map`], [`run_grid`], [`Table`], [`merge`]) does not
//! know what a point runs. [`Sweep`] is the experiment of `smrtl sweep`: a system's model
//! ([`crate::systems`]) on its built-in profiles with its params overridden per point.
//!
//! # Output
//! Every row starts with three columns: `point` (its index in the grid), `points` (the grid's
//! size) and `spec` (the [`spec_id`] of the spec it came from), then the experiment's columns.
//! CSV has one header line; a JSON line is one object with its keys in column order. Rows are
//! in grid order and each depends on its point alone, so the bytes do not depend on the thread
//! count, and [`merge`] can order, check and join the outputs of the shards.

use crate::systems::{self, metric, sets_of, Input, InputKind, RunOptions, System};
use rayon::prelude::*;
use serde::de::{Deserializer, Error as _, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::num::NonZeroUsize;
use std::str::FromStr;

// ---------------------------------------------------------------------------------------------
// The engine.

/// One dimension of a grid: a name and the values it takes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Axis {
    pub name: String,
    pub values: Vec<Value>,
}

/// The cartesian product of its axes, the last axis varying fastest.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    axes: Vec<Axis>,
    len: usize,
}

/// One point of a grid: its index and its value on every axis (in axis order).
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub index: usize,
    pub coords: Vec<(String, Value)>,
}

impl Point {
    /// The point's value on axis `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.coords.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

impl Grid {
    /// A grid of `axes`; every axis needs a value and a name of its own.
    pub fn new(axes: Vec<Axis>) -> Result<Grid, String> {
        let mut len = 1usize;
        for (i, a) in axes.iter().enumerate() {
            if a.values.is_empty() {
                return Err(format!("{}: no values", a.name));
            }
            if axes[..i].iter().any(|b| b.name == a.name) {
                return Err(format!("{}: axis named twice", a.name));
            }
            len = len
                .checked_mul(a.values.len())
                .ok_or("the grid has too many points")?;
        }
        Ok(Grid { axes, len })
    }

    pub fn axes(&self) -> &[Axis] {
        &self.axes
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Point `index` (< [`Grid::len`]).
    pub fn point(&self, index: usize) -> Point {
        assert!(index < self.len, "point {index} of {}", self.len);
        let mut rest = index;
        let mut coords = vec![(String::new(), Value::Null); self.axes.len()];
        for (slot, a) in coords.iter_mut().zip(&self.axes).rev() {
            *slot = (a.name.clone(), a.values[rest % a.values.len()].clone());
            rest /= a.values.len();
        }
        Point { index, coords }
    }

    /// The points of `shard`, in grid order.
    pub fn points(&self, shard: Shard) -> Vec<Point> {
        (0..self.len)
            .filter(|&i| shard.contains(i))
            .map(|i| self.point(i))
            .collect()
    }
}

/// Slice `index` of `count` of a grid: the points whose index % `count` == `index` (0-based,
/// as Slurm's `SLURM_ARRAY_TASK_ID` with `--array=0-(count-1)`). Interleaving spreads the slow
/// and the fast corners of a grid evenly over the shards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// The whole grid.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    pub fn new(index: usize, count: usize) -> Result<Shard, String> {
        if count == 0 || index >= count {
            return Err(format!(
                "shard {index}/{count}: expected I/N with 0 <= I < N (0-based)"
            ));
        }
        Ok(Shard { index, count })
    }

    /// Whether point `index` belongs to this shard.
    pub fn contains(self, index: usize) -> bool {
        index % self.count == self.index
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `I/N`, e.g. `0/4` … `3/4`.
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || {
            let s = smrtl_hdl::shown(s);
            format!("--shard expects I/N with 0 <= I < N (0-based), got `{s}`")
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (i, n) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        Shard::new(i, n).map_err(|_| bad())
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The machine's cores (1 if unknown).
pub fn default_threads() -> NonZeroUsize {
    std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN)
}

/// `f` over `items` on `threads` threads (default: [`default_threads`]); results in item order,
/// whatever order the items finish in. Every item is its own task, so long and short items
/// balance over the threads.
pub fn par_map<T, R, F>(items: &[T], threads: Option<NonZeroUsize>, f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync + Send,
{
    let threads = threads.unwrap_or_else(default_threads).get();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool starts");
    pool.install(|| items.par_iter().with_max_len(1).map(f).collect())
}

/// One output row: its point and its cells (one per [`Table::columns`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub point: usize,
    pub cells: Vec<Value>,
}

/// Runs `f` on the points of `shard` on `threads` threads; rows in grid order. `progress` is
/// called once per finished point (from the worker threads). The first error in grid order
/// wins, prefixed with its point.
pub fn run_grid<F>(
    grid: &Grid,
    shard: Shard,
    threads: Option<NonZeroUsize>,
    progress: &(dyn Fn() + Sync),
    f: F,
) -> Result<Vec<Row>, String>
where
    F: Fn(&Point) -> Result<Vec<Value>, String> + Sync + Send,
{
    let points = grid.points(shard);
    par_map(&points, threads, |p| {
        let r = f(p);
        progress();
        r
    })
    .into_iter()
    .zip(&points)
    .map(|(r, p)| {
        r.map(|cells| Row {
            point: p.index,
            cells,
        })
        .map_err(|e| format!("point {} ({}): {e}", p.index, describe(&p.coords)))
    })
    .collect()
}

/// `name=value, …` with values as JSON.
pub fn describe(coords: &[(String, Value)]) -> String {
    coords
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The columns every row starts with.
pub const FIXED_COLUMNS: [&str; 3] = ["point", "points", "spec"];

/// A stable id of a spec: FNV-1a 64 of its canonical text, 16 hex digits.
pub fn spec_id(canonical: &str) -> String {
    let hash = canonical.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// How a table is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A header line, then one line per row (RFC 4180 quoting).
    Csv,
    /// One JSON object per row, keys in column order.
    Jsonl,
}

/// The rows of one run (a whole grid or a shard of it).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// [`spec_id`] of the spec.
    pub spec: String,
    /// Points in the whole grid.
    pub points: usize,
    /// The experiment's columns (after [`FIXED_COLUMNS`]).
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
}

impl Table {
    /// The table as text; every line ends in `\n`.
    pub fn render(&self, format: Format) -> String {
        let names: Vec<&str> = FIXED_COLUMNS
            .iter()
            .copied()
            .chain(self.columns.iter().map(String::as_str))
            .collect();
        let mut out = String::new();
        if format == Format::Csv {
            out += &names.join(",");
            out.push('\n');
        }
        for row in &self.rows {
            assert_eq!(row.cells.len(), self.columns.len(), "one cell per column");
            let fixed = [
                Value::from(row.point),
                Value::from(self.points),
                Value::from(self.spec.as_str()),
            ];
            let cells = fixed.iter().chain(&row.cells);
            match format {
                Format::Csv => {
                    out += &cells.map(csv_cell).collect::<Vec<_>>().join(",");
                }
                Format::Jsonl => {
                    let fields: Vec<String> = names
                        .iter()
                        .zip(cells)
                        .map(|(n, v)| format!("{}:{v}", Value::from(*n)))
                        .collect();
                    out += &format!("{{{}}}", fields.join(","));
                }
            }
            out.push('\n');
        }
        out
    }
}

/// A CSV cell: strings as they are, other values as compact JSON, `null` empty; quoted when
/// needed. A string with a line break is written as its JSON form so every row is one line.
fn csv_cell(v: &Value) -> String {
    let text = match v {
        Value::Null => String::new(),
        Value::String(s) if !s.contains(['\n', '\r']) => s.clone(),
        other => other.to_string(),
    };
    if text.contains([',', '"']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

/// The fields of one CSV line (RFC 4180 quotes); `None` if a quote is left open.
fn csv_fields(line: &str) -> Option<Vec<String>> {
    let mut fields = vec![String::new()];
    let (mut quoted, mut chars) = (false, line.chars().peekable());
    while let Some(c) = chars.next() {
        let field = fields.last_mut().expect("one field");
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(String::new()),
            _ => field.push(c),
        }
    }
    (!quoted).then_some(fields)
}

/// What a row says of itself: (point, points, spec).
fn row_id(format: Format, line: &str, width: usize) -> Result<(usize, usize, String), String> {
    let (point, points, spec) = match format {
        Format::Csv => {
            let f = csv_fields(line).ok_or("unbalanced quotes")?;
            if f.len() != width {
                return Err(format!("{} fields, the header has {width}", f.len()));
            }
            (
                f[0].parse::<usize>().ok(),
                f[1].parse::<usize>().ok(),
                Some(f[2].clone()),
            )
        }
        Format::Jsonl => {
            let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
            let n = |k: &str| v.get(k).and_then(Value::as_u64).map(|x| x as usize);
            let spec = v.get("spec").and_then(Value::as_str).map(str::to_string);
            (n("point"), n("points"), spec)
        }
    };
    match (point, points, spec) {
        (Some(p), Some(n), Some(s)) if p < n => Ok((p, n, s)),
        _ => Err("not a sweep row (point, points, spec)".into()),
    }
}

/// Merges shard outputs (`(name, text)`, any order) into the text an unsharded run writes.
/// Refuses, with a one-line error naming the file, outputs of different formats, columns,
/// specs or grid sizes, truncated files, overlapping shards and an incomplete set.
pub fn merge(shards: &[(String, String)]) -> Result<String, String> {
    merge_raw(shards).map_err(|e| smrtl_hdl::shown(&e))
}

/// [`merge`] before control characters in echoed text are escaped.
fn merge_raw(shards: &[(String, String)]) -> Result<String, String> {
    let (first, _) = shards.first().ok_or("no shard outputs to merge")?;
    let mut format = None;
    let mut header: Option<&str> = None;
    let mut id: Option<(usize, String, &str)> = None;
    let mut rows: Vec<(usize, &str, &str)> = Vec::new();
    for (name, text) in shards {
        if !text.is_empty() && !text.ends_with('\n') {
            return Err(format!("{name}: truncated (no line break at the end)"));
        }
        // An empty file is a JSON-lines shard without points; a CSV one has its header.
        let this = if text.is_empty() || text.starts_with('{') {
            Format::Jsonl
        } else {
            Format::Csv
        };
        if *format.get_or_insert(this) != this {
            return Err(format!("{name}: not in the format of {first}"));
        }
        let mut lines = text.lines();
        let mut width = 0;
        if this == Format::Csv {
            let h = lines.next().unwrap_or_default();
            if !h.starts_with(&FIXED_COLUMNS.join(",")) {
                return Err(format!(
                    "{name}: not a sweep output (its header does not start with {})",
                    FIXED_COLUMNS.join(",")
                ));
            }
            if *header.get_or_insert(h) != h {
                return Err(format!("{name}: columns differ from {first}'s"));
            }
            width = csv_fields(h).map_or(0, |f| f.len());
        }
        for (n, line) in lines.enumerate() {
            let at = n + 1 + usize::from(this == Format::Csv);
            let (point, points, spec) =
                row_id(this, line, width).map_err(|e| format!("{name}:{at}: {e}"))?;
            let (want_points, want_spec, from) = id.get_or_insert((points, spec.clone(), name));
            if (points, &spec) != (*want_points, &*want_spec) {
                return Err(format!(
                    "{name}: from another sweep (spec {spec}, {points} points) than {from} \
                     (spec {want_spec}, {want_points} points)"
                ));
            }
            rows.push((point, line, name));
        }
    }
    let (points, ..) = id.ok_or("the shard outputs hold no rows")?;
    rows.sort_by_key(|r| r.0);
    if let Some(w) = rows.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(format!(
            "point {} is in both {} and {}: overlapping shards",
            w[0].0, w[0].2, w[1].2
        ));
    }
    if rows.len() != points {
        let missing = (0..points)
            .find(|&i| rows.get(i).is_none_or(|r| r.0 != i))
            .unwrap_or(points);
        return Err(format!(
            "incomplete: {} of {points} points missing (the first is point {missing}); \
             is a shard missing?",
            points - rows.len()
        ));
    }
    let mut out = String::new();
    if let Some(h) = header {
        out += h;
        out.push('\n');
    }
    for (_, line, _) in rows {
        out += line;
        out.push('\n');
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// The sweep of `smrtl sweep`: any system's params × profiles × waves × seeds.

/// Largest `waves` of a point.
pub use crate::studies::profiles::MAX_WAVES;

/// Most points of a sweep's grid (README "Limits").
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
    /// Parses and checks a spec's JSON (names and shapes; [`Sweep::new`] checks the params'
    /// values). Errors are one line.
    pub fn parse(text: &str) -> Result<Spec, String> {
        Self::parse_raw(text).map_err(|e| smrtl_hdl::shown(&e))
    }

    /// [`Self::parse`] before control characters in echoed text are escaped.
    fn parse_raw(text: &str) -> Result<Spec, String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn axis(name: &str, values: Value) -> Axis {
        Axis {
            name: name.into(),
            values: values.as_array().unwrap().clone(),
        }
    }

    #[test]
    fn grid_last_axis_fastest() {
        let g = Grid::new(vec![
            axis("a", json!([1, 2])),
            axis("b", json!(["x", "y", "z"])),
        ])
        .unwrap();
        assert_eq!(g.len(), 6);
        let p = g.point(4);
        assert_eq!(p.get("a"), Some(&json!(2)));
        assert_eq!(p.get("b"), Some(&json!("y")));
        assert!(Grid::new(vec![axis("a", json!([]))]).is_err());
        assert!(Grid::new(vec![axis("a", json!([1])), axis("a", json!([2]))]).is_err());
    }

    #[test]
    fn shards_partition_the_grid() {
        let g = Grid::new(vec![axis("a", json!([0, 1, 2, 3, 4, 5, 6]))]).unwrap();
        let mut all: Vec<usize> = (0..3)
            .flat_map(|i| g.points(Shard::new(i, 3).unwrap()))
            .map(|p| p.index)
            .collect();
        all.sort();
        assert_eq!(all, (0..7).collect::<Vec<_>>());
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { index: 2, count: 3 }));
        for bad in ["3/3", "1", "a/2", "0/0", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn par_map_keeps_order() {
        let v: Vec<u64> = (0..50).collect();
        let f = |x: &u64| x * x;
        let one = par_map(&v, NonZeroUsize::new(1), f);
        assert_eq!(one, par_map(&v, NonZeroUsize::new(4), f));
        assert_eq!(one[7], 49);
    }

    fn table(rows: &[usize]) -> Table {
        Table {
            spec: spec_id("x"),
            points: 4,
            columns: vec!["name".into(), "v".into()],
            rows: rows
                .iter()
                .map(|&p| Row {
                    point: p,
                    cells: vec![json!(format!("a,\"b\" {p}")), json!({"icnt": p})],
                })
                .collect(),
        }
    }

    #[test]
    fn csv_and_jsonl_merge_back() {
        for format in [Format::Csv, Format::Jsonl] {
            let whole = table(&[0, 1, 2, 3]).render(format);
            let parts = [
                ("b".to_string(), table(&[1, 3]).render(format)),
                ("a".to_string(), table(&[0, 2]).render(format)),
            ];
            assert_eq!(merge(&parts).unwrap(), whole);
            let e = merge(&parts[..1]).unwrap_err();
            assert!(e.contains("incomplete") && e.contains("point 0"), "{e}");
            let twice = [parts[0].clone(), parts[1].clone(), parts[1].clone()];
            assert!(merge(&twice).unwrap_err().contains("overlapping"));
            let mut other = table(&[0, 2]);
            other.spec = spec_id("y");
            let mixed = [parts[0].clone(), ("c".into(), other.render(format))];
            assert!(merge(&mixed).unwrap_err().contains("another sweep"));
            let cut = &parts[0].1[..parts[0].1.len() - 3];
            assert!(merge(&[("t".into(), cut.into())])
                .unwrap_err()
                .contains("truncated"));
        }
        let csv = table(&[0]).render(Format::Csv);
        assert!(
            csv.contains(",\"a,\"\"b\"\" 0\",\"{\"\"icnt\"\":0}\"\n"),
            "{csv}"
        );
    }

    #[test]
    fn spec_errors_are_one_line() {
        let cases = [
            (
                r#"{"workloads": ["dct"], "bogus": 1}"#,
                "unknown field `bogus`",
            ),
            (r#"{"workloads": ["nope"]}"#, "unknown profile `nope`"),
            (
                r#"{"workloads": "dct", "params": {"x": 1}}"#,
                "unknown parameter `x`",
            ),
            (
                r#"{"workloads": "dct", "params": {"sched": []}}"#,
                "empty list",
            ),
            (r#"{"workloads": "dct", "waves": 0}"#, "waves"),
            (r#"{"workloads": "dct", "seeds": [1, 1]}"#, "twice"),
            (
                r#"{"workloads": "dct", "params": {"sched": "fifo"}}"#,
                "sched",
            ),
            (r#"{"workloads": "dct", "params": {"W": 2}}"#, "exceed W"),
        ];
        for (text, want) in cases {
            let e = Sweep::parse(text).unwrap_err();
            assert!(e.contains(want) && !e.contains('\n'), "{text}: {e}");
        }
    }

    #[test]
    fn the_default_system_keeps_spec_ids() {
        let plain = Spec::parse(r#"{"workloads": "dct", "seeds": [1, 2]}"#).unwrap();
        let named = Spec::parse(r#"{"system": "elastic_sm", "workloads": "dct", "seeds": [1, 2]}"#)
            .unwrap();
        assert_eq!(plain, named);
        assert_eq!(plain.id(), named.id());
        // The canonical form of a spec before systems, byte for byte.
        assert_eq!(
            serde_json::to_string(&plain).unwrap(),
            r#"{"params":[],"workloads":["dct"],"waves":[1],"seeds":[1,2]}"#
        );
        let mem = Spec::parse(r#"{"system": "mem_sm", "workloads": ["BP+sv"]}"#).unwrap();
        assert_eq!(mem.workloads, ["bp+sv"]);
        assert!(serde_json::to_string(&mem)
            .unwrap()
            .starts_with(r#"{"system":"mem_sm","#));
    }

    #[test]
    fn params_keep_file_order() {
        let s =
            Spec::parse(r#"{"workloads": "dct", "params": {"sched": "rr", "M": [2, 4]}}"#).unwrap();
        let grid = s.grid();
        let names: Vec<&str> = grid.axes().iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["workload", "sched", "M", "waves", "seed"]);
        let t =
            Spec::parse(r#"{"workloads": "dct", "params": {"M": [2, 4], "sched": "rr"}}"#).unwrap();
        assert_ne!(s.id(), t.id());
    }
}
