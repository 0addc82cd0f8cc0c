//! Counters, statistics and per-cycle records of the memory pipeline
//! (docs/memory-issue-control.md §1.4, §1.7; §5 records).

use super::l1d::Outcome;
use super::params::{Scheme, MAX_KERNELS, SCHEDULERS};
use super::MemPipeline;
use crate::blocks::rbmi_arb::mask;
use serde::Serialize;

/// The four reservation-failure causes (§1.4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Causes {
    pub line_alloc: u64,
    pub miss_queue: u64,
    pub mshr_merge: u64,
    pub mshr_entry: u64,
}

impl Causes {
    pub(super) fn add(&mut self, cause: usize) {
        *[
            &mut self.line_alloc,
            &mut self.miss_queue,
            &mut self.mshr_merge,
            &mut self.mshr_entry,
        ][cause] += 1;
    }
    pub fn total(&self) -> u64 {
        self.line_alloc + self.miss_queue + self.mshr_merge + self.mshr_entry
    }
}

/// Summary of a kernel's MILG limit registers over a run (read from the control each cycle).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MilHistory {
    /// Cycles with `unl = 1`.
    pub unl_cycles: u64,
    /// Smallest and largest `mil` while limited (`unl = 0`); none if never limited.
    pub mil_min: Option<u32>,
    pub mil_max: Option<u32>,
    /// Cycles in which `mil` or `unl` changed.
    pub changes: u64,
    /// Values at the end of the run.
    pub mil_final: u32,
    pub unl_final: bool,
    /// Largest `inflight` seen.
    pub inflight_max: u32,
}

/// Raw per-kernel counters (§1.7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub compute: u64,
    pub mem_issued: u64,
    pub mem_completed: u64,
    pub first_accesses: u64,
    pub hits: u64,
    pub hit_reserved: u64,
    pub misses: u64,
    pub writes: u64,
    pub causes: Causes,
    /// Cycles whose failed head access was this kernel's.
    pub lsu_stall_cycles: u64,
    pub tbs_completed: u64,
    pub mil: MilHistory,
}

impl Counters {
    pub fn accesses(&self) -> u64 {
        self.hits + self.hit_reserved + self.misses + self.writes
    }
}

/// A kernel's statistics at the end of a run (§1.7).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelStats {
    pub name: String,
    pub tbs: u32,
    pub warp_instructions: u64,
    pub compute_instructions: u64,
    pub mem_instructions: u64,
    pub mem_completed: u64,
    pub ipc: f64,
    pub accesses: u64,
    pub hits: u64,
    pub hit_reserved: u64,
    pub misses: u64,
    pub writes: u64,
    pub l1d_miss_rate: f64,
    pub rsfail: u64,
    pub l1d_rsfail_rate: f64,
    pub rsfail_by_cause: Causes,
    pub lsu_stall_cycles: u64,
    pub lsu_stall_pct: f64,
    pub compute_util: f64,
    /// Cinst/Minst and Req/Minst as run (§8.3 calibration).
    pub cinst_per_minst: f64,
    pub req_per_minst: f64,
    pub accesses_per_kcycle: f64,
    pub tbs_completed: u64,
    pub milg: MilHistory,
}

/// A run's statistics: the SM's and each kernel's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PipeStats {
    pub cycles: u64,
    pub scheme: Scheme,
    pub warp_instructions: u64,
    pub ipc: f64,
    pub lsu_stall_cycles: u64,
    pub lsu_stall_pct: f64,
    pub compute_util: f64,
    pub mem_issue_cycles: u64,
    pub kernels: Vec<KernelStats>,
}

/// One cycle as the records and the waveform show it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CycleRecord {
    pub t: u64,
    pub slot_free: bool,
    pub lsu_busy: bool,
    pub l1d_outcome: u8,
    pub mshr: u32,
    pub mq: u32,
    pub rq: u32,
    /// The control's inputs this cycle (bit k = kernel k).
    pub mem_req: u8,
    pub issue: u8,
    pub done: [u8; MAX_KERNELS],
    pub acc: u8,
    pub first: u8,
    pub fail: u8,
    /// The control's outputs before the edge.
    pub grant: u8,
    pub mem_ok: u8,
    /// The control's registers after the edge, per kernel.
    pub inflight: [u32; MAX_KERNELS],
    pub peak: [u32; MAX_KERNELS],
    pub rsfail: [u32; MAX_KERNELS],
    pub reqcnt: [u32; MAX_KERNELS],
    pub mil: [u32; MAX_KERNELS],
    pub unl: u8,
    /// Warp instructions issued this cycle (compute and memory), per kernel.
    pub issued: [u8; MAX_KERNELS],
}

/// What one scheduler saw and did in the cycle just run (for checks of §2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedView {
    /// It had a ready warp whose next instruction is a compute instruction.
    pub compute_ready: bool,
    /// The warp slot it issued from, and whether that was a memory instruction.
    pub issued: Option<(u16, bool)>,
}

/// The dispatch register's instruction: kernel, warp slot, sequence number, next access and
/// access count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DispatchView {
    pub kernel: u8,
    pub warp: u16,
    pub seq: u32,
    pub next: u8,
    pub n: u8,
}

impl MemPipeline {
    /// Keeps the MILG limit summary (§4.3 registers read from the control after the edge).
    pub(super) fn track_milg(&mut self) {
        for k in 0..self.n {
            let (mil, unl) = (self.ctl.mil(k), self.ctl.unl(k));
            let h = &mut self.counters[k].mil;
            if self.t > 0 && (mil != h.mil_final || unl != h.unl_final) {
                h.changes += 1;
            }
            h.mil_final = mil;
            h.unl_final = unl;
            if unl {
                h.unl_cycles += 1;
            } else {
                h.mil_min = Some(h.mil_min.map_or(mil, |m| m.min(mil)));
                h.mil_max = Some(h.mil_max.map_or(mil, |m| m.max(mil)));
            }
            h.inflight_max = h.inflight_max.max(self.ctl.inflight(k));
        }
    }

    /// The cycle just run as a record.
    pub fn record(&self) -> CycleRecord {
        let mut r = CycleRecord {
            t: self.t - 1,
            slot_free: self.ev.slot_free,
            lsu_busy: self.disp.is_some() || self.outcome != Outcome::Idle,
            l1d_outcome: self.outcome as u8,
            mshr: self.l1d.mshrs_used() as u32,
            mq: self.l1d.mq_len() as u32,
            rq: self.rq.len() as u32,
            mem_req: mask(&self.ev.mem_req),
            issue: mask(&self.ev.issue),
            acc: mask(&self.ev.acc),
            first: mask(&self.ev.first),
            fail: mask(&self.ev.fail),
            grant: mask(&self.out.grant),
            mem_ok: mask(&self.out.mem_ok),
            issued: self.issued,
            ..CycleRecord::default()
        };
        for k in 0..self.n {
            r.done[k] = self.ev.done[k] as u8;
            r.inflight[k] = self.ctl.inflight(k);
            r.peak[k] = self.ctl.peak(k);
            r.rsfail[k] = self.ctl.rsfail(k);
            r.reqcnt[k] = self.ctl.reqcnt(k);
            r.mil[k] = self.ctl.mil(k);
            r.unl |= u8::from(self.ctl.unl(k)) << k;
        }
        r
    }

    /// The statistics so far (§1.7).
    pub fn stats(&self) -> PipeStats {
        let cycles = self.t.max(1);
        let pct = |x: u64| 100.0 * x as f64 / cycles as f64;
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let kernels: Vec<KernelStats> = (0..self.n)
            .map(|k| {
                let c = &self.counters[k];
                let acc = c.accesses();
                let missed = c.misses
                    + if self.p.miss_counts_pending {
                        c.hit_reserved
                    } else {
                        0
                    };
                let wi = c.compute + c.mem_issued;
                KernelStats {
                    name: self.kernels[k].name.clone(),
                    tbs: self.tbs_of[k],
                    warp_instructions: wi,
                    compute_instructions: c.compute,
                    mem_instructions: c.mem_issued,
                    mem_completed: c.mem_completed,
                    ipc: wi as f64 / cycles as f64,
                    accesses: acc,
                    hits: c.hits,
                    hit_reserved: c.hit_reserved,
                    misses: c.misses,
                    writes: c.writes,
                    l1d_miss_rate: ratio(missed, acc - c.writes),
                    rsfail: c.causes.total(),
                    l1d_rsfail_rate: ratio(c.causes.total(), acc),
                    rsfail_by_cause: c.causes,
                    lsu_stall_cycles: c.lsu_stall_cycles,
                    lsu_stall_pct: pct(c.lsu_stall_cycles),
                    compute_util: c.compute as f64 / (SCHEDULERS as f64 * cycles as f64),
                    cinst_per_minst: ratio(c.compute, c.mem_issued),
                    req_per_minst: ratio(acc, c.first_accesses),
                    accesses_per_kcycle: 1000.0 * acc as f64 / cycles as f64,
                    tbs_completed: c.tbs_completed,
                    milg: c.mil,
                }
            })
            .collect();
        let wi: u64 = kernels.iter().map(|k| k.warp_instructions).sum();
        let compute: u64 = kernels.iter().map(|k| k.compute_instructions).sum();
        PipeStats {
            cycles: self.t,
            scheme: self.p.scheme,
            warp_instructions: wi,
            ipc: wi as f64 / cycles as f64,
            lsu_stall_cycles: self.lsu_stall_cycles,
            lsu_stall_pct: pct(self.lsu_stall_cycles),
            compute_util: compute as f64 / (SCHEDULERS as f64 * cycles as f64),
            mem_issue_cycles: self.mem_issue_cycles,
            kernels,
        }
    }
}
