//! The scheduler-mode record of a cycle (docs/elastic-pipeline.md §3.5), its events, and the
//! statistics of a run (§3.3).

use crate::blocks::elastic_pipeline::{Record, Wb, WbBubbles};
use serde::{Deserialize, Serialize};
use smrtl_hdl::blocks::elastic_pipeline::Cause;

/// Per-cycle outcome (spec §3.3 "Cycle outcomes").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Issue,
    BankConflict,
    Other,
    SchedFail,
    Idle,
}

/// A cache write at the end of the cycle (`acc_valid`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HcWrite {
    pub pc: u32,
    pub value: u32,
}

/// The scheduler-mode record of one cycle (§3.5): the pipeline record plus the BCAWS fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SmRecord {
    #[serde(flatten)]
    pub pipe: Record,
    /// The warp granted in this cycle (a decision), if any.
    pub decision: Option<u32>,
    /// `mask` during the cycle (0 under `rr`).
    pub mask: bool,
    /// The counter register during the cycle.
    pub counter: u32,
    /// The history-cache prediction for the decided warp's PC (0 without a decision).
    pub pred: u32,
    /// The cache write at the end of the cycle.
    pub hc_write: Option<HcWrite>,
    /// An SMEM decision's cache lookup: whether it hit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hc_lookup: Option<bool>,
    /// The subwarp `(warp, sw)` loaded into F at the end of the cycle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue: Option<(u32, u32)>,
    /// The warp whose busy bit clears at the end of the cycle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warp_done: Option<u32>,
    /// A GLD subwarp `(warp, sw)` sent to ICNT at the end of the cycle (`Icnt{lat}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icnt_req: Option<(u32, u32)>,
    pub outcome: Outcome,
}

impl SmRecord {
    /// The record of a cycle: the pipeline's latches plus what the core did.
    pub fn new(pipe: Record, ev: &SmEvents) -> SmRecord {
        SmRecord {
            pipe,
            decision: ev.decision,
            mask: ev.mask,
            counter: ev.counter,
            pred: ev.pred,
            hc_write: ev.hc_write,
            hc_lookup: ev.hc_lookup,
            issue: ev.issue,
            warp_done: ev.warp_done,
            icnt_req: ev.icnt_req,
            outcome: ev.outcome,
        }
    }
}

/// What one cycle did, without the pipeline's latch contents (no allocation): the
/// [`SmRecord`] fields plus the few pipeline facts the statistics and stall breakdowns use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmEvents {
    /// The cycle (the record's `t`).
    pub t: u64,
    /// WB during the cycle (§3.5 `WB`).
    pub wb: Wb,
    /// The EXE latch during the cycle (the held entry of a stall, §3.3 cause table).
    pub exe: Option<u32>,
    pub fe_hold: bool,
    pub cause: Cause,
    pub decision: Option<u32>,
    pub mask: bool,
    pub counter: u32,
    pub pred: u32,
    pub hc_write: Option<HcWrite>,
    pub hc_lookup: Option<bool>,
    pub issue: Option<(u32, u32)>,
    pub warp_done: Option<u32>,
    pub icnt_req: Option<(u32, u32)>,
    pub outcome: Outcome,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutcomeCounts {
    pub issue: u64,
    pub bank_conflict: u64,
    pub other: u64,
    pub sched_fail: u64,
    pub idle: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SmStats {
    pub cycles: u64,
    /// Decisions (warp instructions issued).
    pub issued_warp_instructions: u64,
    /// Subwarp issues (= `outcomes.issue`).
    pub issues: u64,
    pub outcomes: OutcomeCounts,
    pub wb_bubbles: u64,
    /// IPC per lane = issues / cycles (spec §3.3): subwarp issues per cycle.
    pub ipc: f64,
    /// History-cache lookups of SMEM decisions that hit / missed.
    pub hc_hits: u64,
    pub hc_misses: u64,
}

impl SmStats {
    /// The figures of a kernel's records (spec §3.3): every count comes from the records, so
    /// a co-simulated run that matches the model has identical stats.
    pub fn of(records: &[SmRecord]) -> SmStats {
        let mut acc = StatsAcc::default();
        for r in records {
            acc.record(r);
        }
        acc.finish()
    }
}

/// [`SmStats`] accumulated cycle by cycle, in cycle order.
#[derive(Clone, Debug, Default)]
pub struct StatsAcc {
    cycles: u64,
    decisions: u64,
    outcomes: OutcomeCounts,
    hc_hits: u64,
    hc_misses: u64,
    wb_bubbles: WbBubbles,
}

impl StatsAcc {
    /// Counts one cycle's record.
    pub fn record(&mut self, r: &SmRecord) {
        self.add(r.outcome, r.decision.is_some(), r.hc_lookup, r.pipe.wb);
    }

    pub(super) fn add(
        &mut self,
        outcome: Outcome,
        decision: bool,
        hc_lookup: Option<bool>,
        wb: Wb,
    ) {
        self.cycles += 1;
        let o = &mut self.outcomes;
        *match outcome {
            Outcome::Issue => &mut o.issue,
            Outcome::BankConflict => &mut o.bank_conflict,
            Outcome::Other => &mut o.other,
            Outcome::SchedFail => &mut o.sched_fail,
            Outcome::Idle => &mut o.idle,
        } += 1;
        self.decisions += decision as u64;
        match hc_lookup {
            Some(true) => self.hc_hits += 1,
            Some(false) => self.hc_misses += 1,
            None => {}
        }
        self.wb_bubbles.add(wb);
    }

    pub fn finish(self) -> SmStats {
        let issues = self.outcomes.issue;
        SmStats {
            cycles: self.cycles,
            issued_warp_instructions: self.decisions,
            issues,
            wb_bubbles: self.wb_bubbles.count(),
            ipc: if self.cycles == 0 {
                0.0
            } else {
                issues as f64 / self.cycles as f64
            },
            hc_hits: self.hc_hits,
            hc_misses: self.hc_misses,
            outcomes: self.outcomes,
        }
    }
}

#[derive(Clone, Debug)]
pub struct SmRun {
    pub records: Vec<SmRecord>,
    pub stats: SmStats,
}

impl SmRun {
    /// The pipeline records alone.
    pub fn pipe_records(&self) -> Vec<Record> {
        self.records.iter().map(|r| r.pipe.clone()).collect()
    }
}
