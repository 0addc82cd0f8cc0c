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

use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;
use std::fmt;
use std::num::NonZeroUsize;
use std::str::FromStr;

mod spec;

pub use spec::{Spec, Sweep, DEFAULT_SYSTEM, MAX_POINTS, MAX_WAVES};

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
            smrtl_cosim::json::repeated_key(line)?;
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
