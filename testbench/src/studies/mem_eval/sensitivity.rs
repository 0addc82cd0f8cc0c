//! The sensitivity runs of the study (docs/memory-issue-control.md §8.4; spec §8.1, §8.5;
//! Dai et al., HPCA 2018, §4.3): WS, WS-QBMI and WS-DMIL again with a 48 KB and a 96 KB L1D,
//! the LRR scheduler and more MSHRs, each a study of its own (its own isolated runs, curves
//! and cache keys), and the gains over WS beside the paper's.

use super::metrics::{antt_reduction, gain};
use super::scheme_named;
use super::study::{run_study, Options};
use super::summary::{find, summarize, PAIRS, TRIPLES};
use crate::studies::cache::Cache;
use crate::studies::sweep::Shard;
use serde::Serialize;
use smrtl_cosim::sm::mem_sm::params::{PipeParams, Sched};

/// One pipeline variant of §8.1 and the paper's gains under it [P §4.3] (WS gain and ANTT
/// better-by of WS-QBMI and WS-DMIL over WS; none for more MSHRs).
pub struct Variant {
    pub name: &'static str,
    pub apply: fn(&mut PipeParams),
    pub paper_ws: Option<[f64; 2]>,
    pub paper_antt: Option<[f64; 2]>,
}

/// MSHR entries of the "more MSHRs" variant (twice §1.1's 128).
pub const MORE_MSHRS: u32 = 256;

/// L1D 48 KB / 96 KB (64 / 128 sets of 6 × 128 B lines), LRR, more MSHRs.
pub const VARIANTS: [Variant; 4] = [
    Variant {
        name: "l1d-48kb",
        apply: |p| p.l1d_sets = 64,
        paper_ws: Some([0.021, 0.185]),
        paper_antt: Some([0.321, 0.226]),
    },
    Variant {
        name: "l1d-96kb",
        apply: |p| p.l1d_sets = 128,
        paper_ws: Some([0.015, 0.035]),
        paper_antt: Some([0.308, 0.101]),
    },
    Variant {
        name: "lrr",
        apply: |p| p.sched = Sched::Lrr,
        paper_ws: Some([0.032, 0.258]),
        paper_antt: Some([0.164, 0.343]),
    },
    Variant {
        name: "more-mshrs",
        apply: |p| p.mshrs = MORE_MSHRS,
        paper_ws: None,
        paper_antt: None,
    },
];

/// One variant's gains over WS on the main group (pairs if run, else triples).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SensRow {
    pub variant: &'static str,
    pub group: &'static str,
    /// WS gain of WS-QBMI and WS-DMIL over WS (of the arithmetic means).
    pub ws_gain: [f64; 2],
    /// ANTT better by, `(base − new)/base`; None when a kernel made no progress.
    pub antt_reduction: [Option<f64>; 2],
    pub paper_ws: Option<[f64; 2]>,
    pub paper_antt: Option<[f64; 2]>,
}

/// Runs every variant on the study's workloads; returns the rows and the points it reused and
/// ran.
pub fn run_sensitivity(o: &Options, cache: &Cache) -> Result<(Vec<SensRow>, (u64, u64)), String> {
    let schemes = ["ws", "ws-qbmi", "ws-dmil"];
    let mut out = vec![];
    let mut tally = (0, 0);
    for v in &VARIANTS {
        let mut ov = o.clone();
        (v.apply)(&mut ov.pipe);
        ov.schemes = schemes
            .iter()
            .map(|s| scheme_named(s))
            .collect::<Result<_, _>>()?;
        ov.smil_grid = false;
        ov.shard = Shard::WHOLE;
        let s = run_study(&ov, cache)?;
        tally.0 += s.tally[2].0;
        tally.1 += s.tally[2].1;
        let c = summarize(&s, &schemes);
        let group = if c.iter().any(|x| x.group == PAIRS) {
            PAIRS
        } else {
            TRIPLES
        };
        let get = |sc: &str| find(&c, group, sc).ok_or_else(|| format!("{}: no {sc} rows", v.name));
        let (w, q, d) = (get("ws")?, get("ws-qbmi")?, get("ws-dmil")?);
        let red = |x: Option<f64>| Some(antt_reduction(x?, w.antt_mean?));
        out.push(SensRow {
            variant: v.name,
            group,
            ws_gain: [gain(q.ws_mean, w.ws_mean), gain(d.ws_mean, w.ws_mean)],
            antt_reduction: [red(q.antt_mean), red(d.antt_mean)],
            paper_ws: v.paper_ws,
            paper_antt: v.paper_antt,
        });
    }
    Ok((out, tally))
}
