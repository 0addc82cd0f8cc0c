//! The studies as a grid of the sweep engine (docs/stall-inspector.md §11.2): one point per
//! configuration of every figure, run on `--threads` threads, sliced by `--shard I/N`, each
//! point's bar kept in the result cache so an interrupted or sharded study resumes where it
//! stopped.

use super::figures::Bar;
use super::report::{Config, Study};
use crate::studies::cache::{Cache, Tally};
use crate::studies::sweep::{self, Axis, Grid, Shard, Table};
use crate::systems::Backend;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use smrtl_cosim::sm::stalls::Snapshot;
use std::num::NonZeroUsize;

/// The study's folder in the result cache.
pub const CACHE_FOLDER: &str = "stall-inspector";

/// The columns of the study's sweep table (after the sweep engine's fixed ones): the figure,
/// the bar, its kernel, the run's cycles and every SM's counters at the end (JSON).
pub const COLUMNS: [&str; 5] = ["figure", "config", "kernel", "cycles", "sms"];

/// A measured bar as the cache keeps it: its cycles and every SM's stacks at the end.
#[derive(Serialize, Deserialize)]
struct Stored {
    cycles: u64,
    sms: Vec<Snapshot>,
}

impl Stored {
    fn of(b: &Bar) -> Stored {
        Stored {
            cycles: b.cycles,
            sms: b.sms.clone(),
        }
    }

    fn bar(self, config: &str) -> Bar {
        Bar {
            config: config.to_string(),
            cycles: self.cycles,
            sms: self.sms,
        }
    }
}

/// Every configuration of `studies` in figure order, with its figure's id.
pub fn configs(studies: &[Study]) -> Vec<(&'static str, &Config)> {
    studies
        .iter()
        .flat_map(|s| s.configs.iter().map(move |c| (s.id, c)))
        .collect()
}

/// The grid: one axis, `figure/config` per point.
pub fn grid(studies: &[Study]) -> Result<Grid, String> {
    let values = configs(studies)
        .iter()
        .map(|(f, c)| Value::from(format!("{f}/{}", c.label)))
        .collect();
    Grid::new(vec![Axis {
        name: "point".into(),
        values,
    }])
}

/// What the study's rows depend on beyond the code: the settings and the backend.
fn base_key(sets: &[(String, String)], backend: Backend) -> Value {
    json!({"study": CACHE_FOLDER, "sets": sets, "backend": backend.name()})
}

/// One run of the studies' grid: which points, on how many threads, with which cache.
pub struct Run<'a> {
    pub studies: &'a [Study],
    pub sets: &'a [(String, String)],
    pub backend: Backend,
    pub shard: Shard,
    pub threads: Option<NonZeroUsize>,
    pub cache: &'a Cache,
    pub tally: &'a Tally,
}

impl Run<'_> {
    /// The bars of the shard's points (`None` for a point outside it), each from the cache
    /// when an entry of this code, configuration, settings and backend is there, else from
    /// `measure` (and stored); with the shard's sweep table.
    pub fn bars<M>(&self, measure: M) -> Result<(Vec<Option<Bar>>, Table), String>
    where
        M: Fn(&Config) -> Result<Bar, String> + Sync + Send,
    {
        let all = configs(self.studies);
        let g = grid(self.studies)?;
        let base = base_key(self.sets, self.backend);
        let rows = sweep::run_grid(&g, self.shard, self.threads, &|| {}, |p| {
            let (figure, c) = all[p.index];
            let key = json!({"base": base, "kernel": c.kernel, "config": c.sets});
            let (stored, _) = self
                .cache
                .get_or(&key, self.tally, || measure(c).map(|b| Stored::of(&b)))?;
            Ok(vec![
                figure.into(),
                c.label.as_str().into(),
                c.kernel.into(),
                stored.cycles.into(),
                serde_json::to_value(&stored.sms).map_err(|e| e.to_string())?,
            ])
        })?;
        let mut bars: Vec<Option<Bar>> = (0..all.len()).map(|_| None).collect();
        for r in &rows {
            let stored = Stored {
                cycles: r.cells[3].as_u64().unwrap_or_default(),
                sms: serde_json::from_value(r.cells[4].clone()).map_err(|e| e.to_string())?,
            };
            bars[r.point] = Some(stored.bar(&all[r.point].1.label));
        }
        let canon = json!({"base": base, "points": g.axes()[0].values});
        let table = Table {
            spec: sweep::spec_id(&canon.to_string()),
            points: g.len(),
            columns: COLUMNS.iter().map(|c| c.to_string()).collect(),
            rows,
        };
        Ok((bars, table))
    }
}
