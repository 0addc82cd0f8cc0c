//! The SM memory pipeline's parameters (docs/memory-issue-control.md §1, §2, §9), declared once:
//! `--set` parsing, `smrtl list`-style errors and range checks all come from this declaration.

use serde::{Deserialize, Serialize};
use smrtl_hdl::blocks::mem_issue_ctl::Params as CtlParams;
pub use smrtl_hdl::blocks::mem_issue_ctl::Scheme;
use smrtl_hdl::blocks::milg::Ratio0Policy;
use smrtl_hdl::blocks::qbmi_arb::{RpmInit, RpmRound};
use smrtl_hdl::netlist::mask;
use smrtl_hdl::params::{declared_by, Allowed, BlockParams, Gpgpusim, ParamError};

/// Warp order within a scheduler (§2 `sched`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sched {
    /// Greedy then oldest: the last-issued warp first, then oldest by launch order.
    Gto,
    /// Loose round robin: warp slots in order, starting after the last-issued one.
    Lrr,
}

/// L1D set index (§1.1 `set_index`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SetIndex {
    /// `(L ^ L>>b ^ L>>2b) & (sets-1)`, `b = log2(sets)` (`(L ^ L>>5 ^ L>>10) & 31` at 32 sets).
    Xor,
    /// `L & (sets-1)`.
    Linear,
}

smrtl_hdl::block_params! {
    /// The behavioural SM memory pipeline (§1–§2) and the memory-issue control it drives (§3–§5).
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct PipeParams {
        /// Memory-issue scheme (§5): who grants the memory-issue slot and gates kernels.
        scheme: Scheme = Scheme::Baseline, "scheme", Allowed::As(declared_by::<CtlParams>);
        /// Warp order within each of the 4 schedulers (§2).
        sched: Sched = Sched::Gto, "sched", Allowed::Names(&["gto", "lrr"]) => Gpgpusim::Scheduler;
        /// Compute-instruction latency: a dependent instruction issues alu_lat cycles later (§8.3).
        alu_lat: u32 = 4, "alu_lat", Allowed::Range(1, 64);
        /// L1D sets (§1.1: 24 KB / 128 B / 6 ways = 32).
        l1d_sets: u32 = 32, "l1d_sets", Allowed::Pow2(1, 1024) => Gpgpusim::L1dSets;
        /// L1D ways (§1.1).
        l1d_ways: u32 = 6, "l1d_ways", Allowed::Range(1, 32) => Gpgpusim::L1dWays;
        /// L1D set-index function (§1.1).
        set_index: SetIndex = SetIndex::Xor, "set_index", Allowed::Names(&["xor", "linear"]) => Gpgpusim::L1dSetIndex;
        /// MSHR entries (§1.1).
        mshrs: u32 = 128, "mshrs", Allowed::Range(1, 4096) => Gpgpusim::L1dMshrs;
        /// Accesses per MSHR entry, the allocating one included (§1.1).
        max_merge: u32 = 8, "max_merge", Allowed::Range(1, 64) => Gpgpusim::L1dMerge;
        /// Miss-queue slots (§1.1).
        mq_depth: u32 = 8, "mq_depth", Allowed::Range(1, 1024) => Gpgpusim::L1dMissQueue;
        /// Miss-queue slots a read must leave free: fails when occupancy + mq_reserve ≥ mq_depth (§1.4).
        mq_reserve: u32 = 1, "mq_reserve", Allowed::Range(0, 1023), "less than mq_depth";
        /// Lower-memory read latency from service start to fill (§1.6).
        lm_latency: u32 = 300, "lm_latency", Allowed::Range(1, 100_000);
        /// Cycles between lower-memory service starts (§1.6).
        lm_interval: u32 = 8, "lm_interval", Allowed::Range(1, 10_000);
        /// Whether HIT_RESERVED counts as a miss in l1d_miss_rate (§1.7).
        miss_counts_pending: bool = false, "miss_counts_pending", Allowed::Bool;
        /// Threads per SM (§1.1).
        max_threads: u32 = 3072, "max_threads", Allowed::Range(32, 65_536) => Gpgpusim::ThreadsPerSm;
        /// Warp slots per SM (§1.1).
        max_warps: u32 = 96, "max_warps", Allowed::Range(1, 1024) => Gpgpusim::WarpSlots;
        /// TB slots per SM (§1.1).
        max_tbs: u32 = 16, "max_tbs", Allowed::Range(1, 256) => Gpgpusim::TbSlots;
        /// 32-bit registers per SM (§1.1).
        max_regs: u32 = 65_536, "max_regs", Allowed::Range(1, 1 << 24) => Gpgpusim::Registers;
        /// Shared-memory bytes per SM (§1.1: 96 KB).
        max_smem: u32 = 98_304, "max_smem", Allowed::Range(0, 1 << 24) => Gpgpusim::ShmemBytes;
        /// MILG in-flight counter width (§4.3).
        inflight_bits: u32 = 7, "inflight_bits", Allowed::As(declared_by::<CtlParams>);
        /// MILG failure counter width, saturating (§4.3).
        rsfail_bits: u32 = 12, "rsfail_bits", Allowed::As(declared_by::<CtlParams>);
        /// Request counter width: the interval is 2^reqcnt_bits requests (§4.3).
        reqcnt_bits: u32 = 10, "reqcnt_bits", Allowed::As(declared_by::<CtlParams>);
        /// DMIL with fewer failures than requests in an interval (§4.2).
        ratio0_policy: Ratio0Policy = Ratio0Policy::Unlimited, "ratio0_policy", Allowed::As(declared_by::<CtlParams>);
        /// QBMI: largest sampled Req/Minst (§3.3).
        rpm_max: u32 = 32, "rpm_max", Allowed::As(declared_by::<CtlParams>);
        /// QBMI: rounding of 1024 / c (§3.3).
        rpm_round: RpmRound = RpmRound::Nearest, "rpm_round", Allowed::As(declared_by::<CtlParams>);
        /// QBMI quota register width, saturating (§3.4).
        quota_bits: u32 = 16, "quota_bits", Allowed::As(declared_by::<CtlParams>);
        /// QBMI: rpm of every kernel at reset (§3.3).
        rpm_init: RpmInit = RpmInit::default(), "rpm_init", Allowed::As(declared_by::<CtlParams>);
        /// SMIL per-kernel limits, kernel 0 first; 0 = unlimited, missing = unlimited (§4.1).
        smil_limit: Vec<u32> = vec![], "smil_limit", Allowed::Json("a list of at most 3 limits, each fitting inflight_bits (0: unlimited)"), "e.g. --set smil_limit=[3,1]";
        /// SMK-W warp-instruction quotas, kernel 0 first; empty = SMK-W off (spec §7, [P §4]).
        smkw_quota: Vec<u32> = vec![], "smkw_quota", Allowed::Json("a list of at most 3 quotas, each at least 1 (empty: SMK-W off)"), "e.g. --set smkw_quota=[549,217]";
    }
}

/// Most kernels sharing the SM (§0).
pub const MAX_KERNELS: usize = 3;
/// Schedulers per SM (§1.1).
pub const SCHEDULERS: usize = 4;
/// L1D line bytes (§1.1).
pub const LINE_BYTES: u64 = 128;
/// Most coalesced accesses of one instruction (§1.5).
pub const MAX_ACCESSES: usize = 32;

impl PipeParams {
    /// The memory-issue control's params for `n` kernels: the fields above are declared by
    /// `mem_issue_ctl` and passed through unchanged.
    pub fn ctl(&self, n: usize) -> CtlParams {
        CtlParams {
            n: n as u32,
            scheme: self.scheme,
            ratio0_policy: self.ratio0_policy,
            inflight_bits: self.inflight_bits,
            rsfail_bits: self.rsfail_bits,
            reqcnt_bits: self.reqcnt_bits,
            rpm_max: self.rpm_max,
            rpm_round: self.rpm_round,
            quota_bits: self.quota_bits,
            rpm_init: self.rpm_init.clone(),
        }
    }
}

impl BlockParams for PipeParams {
    const BLOCK: &'static str = "mem_pipeline";

    fn presets() -> Vec<(&'static str, Self)> {
        vec![("table1", PipeParams::default())]
    }

    fn check(&self) -> Result<(), ParamError> {
        let range = |name: &str, value: String, allowed: &str| ParamError::Range {
            name: name.into(),
            value,
            allowed: allowed.into(),
        };
        if self.mq_reserve >= self.mq_depth {
            return Err(range(
                "mq_reserve",
                self.mq_reserve.to_string(),
                "less than mq_depth",
            ));
        }
        // The kernel count is the workload's; here only as many as rpm_init lists (its count
        // is checked against the kernels when the pipeline is built).
        self.ctl(self.rpm_init.0.len().clamp(1, MAX_KERNELS))
            .check()?;
        if self.smil_limit.len() > MAX_KERNELS
            || self
                .smil_limit
                .iter()
                .any(|&l| u64::from(l) > mask(self.inflight_bits as usize))
        {
            return Err(range(
                "smil_limit",
                serde_json::to_string(&self.smil_limit).unwrap_or_default(),
                "a list of at most 3 limits, each fitting inflight_bits (0: unlimited)",
            ));
        }
        if self.smkw_quota.len() > MAX_KERNELS || self.smkw_quota.contains(&0) {
            return Err(range(
                "smkw_quota",
                serde_json::to_string(&self.smkw_quota).unwrap_or_default(),
                "a list of at most 3 quotas, each at least 1 (empty: SMK-W off)",
            ));
        }
        Ok(())
    }
}
