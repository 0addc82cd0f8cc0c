//! The scheduler-mode SM core of seed 000 (docs/elastic-pipeline.md §5.6, §6 `SmCore`): the
//! round-robin scheduler with the BCAWS ready mask, the issue unit that feeds a warp
//! instruction's S subwarps back to back, the per-warp busy bits and sequence numbers, the
//! history cache with its accumulator and distance counter, and the pipeline — one co-simulation
//! top. The testbench owns the programs (per-warp next-instruction descriptors) and the ICNT
//! return FIFO.
//!
//! This file holds the params (the single source of every width; the pipeline's are nested),
//! the ports (declared once; the pipeline's outputs follow) and the RTL builder [`build`].

use crate::blocks::elastic_pipeline::{self as pipe, Kind, PipeMode};
use crate::blocks::history_cache::{self as hc, BcawsPolicy, CounterMode};
use crate::netlist::{concat, or_all, select_onehot, Dir, Expr, Module, Port};
use crate::params::{allowed_of, declared_by, Allowed, BlockParams, Gpgpusim, ParamError};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The warp scheduler (spec §1 `sched`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sched {
    Rr,
    Bcaws,
}

/// How global-load data returns (D26). JSON: `"at_writeback"` or `{"icnt": lat}`; on the
/// command line `--set gmem_return=at_writeback` or `--set 'gmem_return={"icnt":400}'`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GmemReturn {
    /// A GLD completes when its pipeline entry is loaded into WB (micro tests).
    AtWriteback,
    /// A GLD subwarp leaving MEM_last returns over ICNT `lat` cycles later (≤ 1 per cycle).
    Icnt(u32),
    /// A GLD subwarp is one 32-byte request to a banked DRAM model with row buffers and
    /// FR-FCFS service (docs/elastic-pipeline.md §8.2; seed 000 Table 4). JSON
    /// `{"dram":{"seed":1}}`; every other field defaults to its Table-4 derivation.
    Dram(Dram),
}

/// The DRAM latency model's params (docs/elastic-pipeline.md §8.2): seed 000 Table 4
/// (4 GDDR3 channels, 8 banks, 2 chips x 2 KB pages, 800 MHz bus, 32-entry FR-FCFS buffer,
/// 16 cores) and GDDR3 timings in DRAM cycles; the rest is the SM's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Dram {
    /// Seeds the synthetic global addresses (one 128-byte segment per warp load).
    pub seed: u32,
    /// Fixed ICNT round trip plus controller pipeline, core cycles (both ways together).
    pub base: u32,
    /// Memory channels, banks per channel, row bytes per channel (2 chips x 2 KB).
    pub channels: u32,
    pub banks: u32,
    pub row_bytes: u32,
    /// Cores sharing the channels (symmetric SPMD load: this SM gets 1/cores of each).
    pub cores: u32,
    /// Request-buffer entries per channel the FR-FCFS scheduler looks at.
    pub window: u32,
    /// GDDR3 timings in DRAM cycles: precharge + activate (row miss), CAS, burst of 32 bytes.
    pub t_rp_rcd: u32,
    pub t_cl: u32,
    pub t_burst: u32,
    /// Core and DRAM clocks (MHz): DRAM cycles convert to core cycles by core/dram.
    pub core_mhz: u32,
    pub dram_mhz: u32,
}

impl Default for Dram {
    fn default() -> Dram {
        Dram {
            seed: 1,
            base: 403,
            channels: 4,
            banks: 8,
            row_bytes: 4096,
            cores: 16,
            window: 32,
            t_rp_rcd: 25,
            t_cl: 9,
            t_burst: 2,
            core_mhz: 1296,
            dram_mhz: 800,
        }
    }
}

impl Dram {
    /// Core cycles of `dram_cycles` DRAM cycles (rounded up).
    pub fn core_cycles(&self, dram_cycles: u32) -> u64 {
        (u64::from(dram_cycles) * u64::from(self.core_mhz)).div_ceil(u64::from(self.dram_mhz))
    }

    /// Peak bandwidth of all channels in bytes per core cycle: a 32-byte burst per `t_burst`
    /// DRAM cycles per channel (Table 4: 51.2 GB/s at the defaults).
    pub fn peak_bytes_per_core_cycle(&self) -> f64 {
        let per_dram_cycle = f64::from(self.channels) * 32.0 / f64::from(self.t_burst);
        per_dram_cycle * f64::from(self.dram_mhz) / f64::from(self.core_mhz)
    }

    /// Least latency of a request (a row miss on an idle channel), core cycles.
    pub fn min_latency(&self) -> u64 {
        u64::from(self.base) + self.core_cycles(self.t_cl + self.t_burst)
    }

    fn check(&self) -> Result<(), String> {
        let pos = [
            ("base", self.base),
            ("channels", self.channels),
            ("banks", self.banks),
            ("cores", self.cores),
            ("window", self.window),
            ("t_burst", self.t_burst),
            ("core_mhz", self.core_mhz),
            ("dram_mhz", self.dram_mhz),
        ];
        for (n, v) in pos {
            if !(1..=100_000).contains(&v) {
                return Err(format!("dram.{n} = {v}"));
            }
        }
        if self.row_bytes < 128 || !self.row_bytes.is_power_of_two() {
            return Err(format!("dram.row_bytes = {}", self.row_bytes));
        }
        Ok(())
    }
}

crate::block_params! {
    /// SM core params by their spec names (§1, §10): the pipeline's, flattened, plus the
    /// scheduler's and the history cache's (declared there). WS = S·L is derived. The defaults
    /// are `table4` with BCAWS and `Icnt{400}` global-load returns (D26).
    #[derive(Eq)]
    #[serde(default)]
    pub struct Params {
        ..pipe: pipe::Params;
        /// Warp scheduler.
        sched: Sched = Sched::Bcaws, "sched", Allowed::Names(&["rr", "bcaws"]) => Gpgpusim::Scheduler;
        bcaws_policy: BcawsPolicy = BcawsPolicy::Strict, "bcaws_policy", Allowed::As(declared_by::<hc::Params>);
        counter_mode: CounterMode = CounterMode::LoadPred, "counter_mode", Allowed::As(declared_by::<hc::Params>);
        bcaws_freeze_on_stall: bool = true, "bcaws_freeze_on_stall", Allowed::As(declared_by::<hc::Params>);
        hc_sets: u32 = 256, "hc_sets", Allowed::As(declared_by::<hc::Params>);
        hc_ways: u32 = 2, "hc_ways", Allowed::As(declared_by::<hc::Params>);
        pc_bits: u32 = 14, "PCW", Allowed::As(declared_by::<hc::Params>);
        /// Warp contexts.
        warps: u32 = 32, "W", Allowed::Range(1, 64), "tag_bits at least lg W + lg S + 1" => Gpgpusim::WarpSlots;
        /// Global-load completion.
        gmem_return: GmemReturn = GmemReturn::Icnt(400), "gmem_return", Allowed::Json("at_writeback, {\"icnt\":N} with N in 1..=100000, {\"dram\":{...}} with base, channels, banks, cores, window, t_burst, core_mhz, dram_mhz in 1..=100000 (seed, t_rp_rcd, t_cl any), row_bytes a power of 2 >= 128"), "e.g. --set 'gmem_return={\"dram\":{\"seed\":2}}'";
    }
}

/// lg(x) = max(1, ⌈log2 x⌉) (spec §1 notation).
pub fn lg(x: u32) -> u32 {
    (32 - x.saturating_sub(1).leading_zeros()).max(1)
}

impl Params {
    /// Micro-test core (§9): fe_depth 1, M = 2, N = 1, Q = 2, S = 2, W = 4, a 16-set cache,
    /// GLDs complete at writeback.
    pub fn micro() -> Params {
        Params {
            pipe: pipe::Params {
                mem_stages: 2,
                premem_depth: 1,
                nonmem_depth: 2,
                fe_depth: 1,
                subwarps: 2,
                ..pipe::Params::default()
            },
            warps: 4,
            hc_sets: 16,
            gmem_return: GmemReturn::AtWriteback,
            ..Params::default()
        }
    }

    /// The same core with another backend wiring.
    pub fn with_pipe_mode(mut self, mode: PipeMode) -> Params {
        self.pipe.pipe_mode = mode;
        self
    }

    /// WS = S·L.
    pub fn warp_size(&self) -> u32 {
        self.pipe.subwarps * self.pipe.lanes
    }

    /// DW = ⌈log2 WS⌉: stored degree, counter and pred width.
    pub fn dw(&self) -> u32 {
        lg(self.warp_size())
    }

    /// Bits of a warp index (lg W) and of a subwarp index (lg S).
    pub fn warp_bits(&self) -> usize {
        lg(self.warps) as usize
    }
    pub fn sw_bits(&self) -> usize {
        lg(self.pipe.subwarps) as usize
    }

    /// Sequence bits of a tag: tag_bits − lg W − lg S.
    pub fn seq_bits(&self) -> usize {
        self.pipe.tag_bits as usize - self.warp_bits() - self.sw_bits()
    }

    /// The history-cache block's params.
    pub fn history_cache(&self) -> hc::Params {
        hc::Params {
            hc_sets: self.hc_sets,
            hc_ways: self.hc_ways,
            pc_bits: self.pc_bits,
            warp_size: self.warp_size(),
            warps: self.warps,
            lanes: self.pipe.lanes,
            counter_mode: self.counter_mode,
            bcaws_freeze_on_stall: self.bcaws_freeze_on_stall,
            bcaws_policy: self.bcaws_policy,
        }
    }

    /// Whether GLDs complete on an ICNT return (`Icnt{lat}`) rather than at writeback.
    pub fn gld_via_icnt(&self) -> bool {
        !matches!(self.gmem_return, GmemReturn::AtWriteback)
    }
}

impl BlockParams for Params {
    const BLOCK: &'static str = "sm_core";

    fn presets() -> Vec<(&'static str, Self)> {
        let table4 = Params::default();
        let micro = Params::micro();
        vec![
            ("table4", table4.clone()),
            (
                "table4_rr",
                Params {
                    sched: Sched::Rr,
                    ..table4.clone()
                },
            ),
            (
                "unified_rr",
                Params {
                    pipe: pipe::Params {
                        pipe_mode: PipeMode::Unified,
                        ..table4.pipe.clone()
                    },
                    sched: Sched::Rr,
                    ..table4
                },
            ),
            ("micro", micro.clone()),
            // Micro cores with small caches (lines are evicted) over the other backends,
            // policies, counter modes and ICNT returns.
            (
                "micro_split",
                Params {
                    pipe: pipe::Params {
                        pipe_mode: PipeMode::Split,
                        subwarps: 4,
                        ..micro.pipe.clone()
                    },
                    bcaws_policy: BcawsPolicy::IssueIfNoNonMem,
                    gmem_return: GmemReturn::Icnt(3),
                    hc_sets: 4,
                    hc_ways: 1,
                    pc_bits: 5,
                    warps: 3,
                    ..micro.clone()
                },
            ),
            (
                "micro_deep",
                Params {
                    pipe: pipe::Params {
                        mem_stages: 4,
                        premem_depth: 3,
                        nonmem_depth: 4,
                        subwarps: 4,
                        wb_priority: pipe::WbPriority::NonmemFirst,
                        ..micro.pipe.clone()
                    },
                    counter_mode: CounterMode::LoadPredPlusSm1,
                    bcaws_freeze_on_stall: false,
                    hc_sets: 4,
                    pc_bits: 5,
                    warps: 8,
                    ..micro.clone()
                },
            ),
            (
                "micro_s1_l16",
                Params {
                    pipe: pipe::Params {
                        subwarps: 1,
                        mem_stages: 1,
                        nonmem_depth: 1,
                        fe_depth: 3,
                        ports: 2,
                        lanes: 16,
                        banks: 16,
                        broadcast: crate::blocks::bank_conflict_detector::Mode::Literal,
                        ..micro.pipe.clone()
                    },
                    gmem_return: GmemReturn::Icnt(1),
                    hc_sets: 2,
                    pc_bits: 5,
                    ..micro
                },
            ),
        ]
    }

    fn check(&self) -> Result<(), ParamError> {
        self.pipe.check()?;
        self.history_cache().validate()?;
        let need = (lg(self.warps) + lg(self.pipe.subwarps) + 1) as usize;
        if (self.pipe.tag_bits as usize) < need {
            return Err(ParamError::Range {
                name: "tag_bits".into(),
                value: self.pipe.tag_bits.to_string(),
                allowed: format!("{need}..=32 (lg W + lg S + 1 seq bit)"),
            });
        }
        let bad = match self.gmem_return {
            GmemReturn::Icnt(lat) => !(1..=100_000).contains(&lat),
            GmemReturn::Dram(d) => d.check().is_err(),
            GmemReturn::AtWriteback => false,
        };
        if bad {
            return Err(ParamError::Range {
                name: "gmem_return".into(),
                value: serde_json::to_string(&self.gmem_return).expect("params serialize"),
                allowed: allowed_of::<Params>("gmem_return"),
            });
        }
        Ok(())
    }
}

crate::ports! {
    Params as p;
    let (w, wb, swb) = (p.warps as usize, p.warp_bits(), p.sw_bits());
    let (pcw, dw, l) = (p.pc_bits as usize, p.dw() as usize, p.pipe.lanes as usize);
    inputs {
        /// Kernel launch (pipeline empty): clears the cache's valid and MRU bits, the counter,
        /// the accumulator, busy bits, sequence numbers and the RR pointer; no decision in this
        /// cycle.
        kernel_start[1]: bool,
        /// Per warp: it has a next instruction, of this kind and PC.
        has_next[1; w]: bool,
        kind[2; w],
        pc[pcw; w],
        /// Descriptor of subwarp (`issue_warp`, `issue_sw`), answered in the same cycle: per
        /// lane its word address and whether it is active.
        desc_addr[p.pipe.addr_bits as usize; l],
        desc_act[1; l]: bool,
        /// Degree override of that subwarp (`deg_override`, 0 = the detector computes it).
        desc_deg[p.pipe.rem_bits()],
        /// An ICNT return of (`icnt_warp`, `icnt_sw`) this cycle.
        icnt_valid[1]: bool,
        icnt_warp[wb],
        icnt_sw[swb],
    }
    outputs {
        /// A subwarp enters F at the end of this cycle.
        issue_valid[1]: bool,
        issue_warp[wb],
        issue_sw[swb],
        /// A scheduling decision in this cycle, and the granted warp.
        decide[1]: bool,
        grant[wb],
        sched_fail[1]: bool,
        mask[1]: bool,
        counter[dw],
        /// History-cache prediction for the granted warp's PC (0 without a decision).
        pred[dw],
        /// An SMEM decision looked the cache up, and whether it hit.
        hc_lookup[1]: bool,
        hc_hit[1]: bool,
        /// The cache is written at the end of this cycle (`acc_valid`).
        hc_write[1]: bool,
        hc_write_pc[pcw],
        hc_write_value[dw],
        /// A warp's busy bit clears at the end of this cycle.
        warp_done[1]: bool,
        warp_done_id[wb],
        /// A GLD subwarp leaves MEM_last for ICNT at the end of this cycle (`Icnt{lat}` only).
        icnt_req[1]: bool,
        icnt_req_warp[wb],
        icnt_req_sw[swb],
    }
    extra pipe_outputs(&p.pipe);
}

/// The pipeline's outputs (the trace-mode top's, same names): the core's last ports.
pub fn pipe_outputs(p: &pipe::Params) -> Vec<Port> {
    pipe::ports(p)
        .into_iter()
        .filter(|q| q.dir == Dir::Out)
        .collect()
}

impl crate::Block for Params {
    fn build(&self) -> Module {
        build(self)
    }
    #[cfg(feature = "faults")]
    const FAULTS: &'static [crate::faults::Fault] = &[faults::MASK_NEVER_ENABLED];
}

/// Planted faults (docs/blocks.md §4).
#[cfg(feature = "faults")]
pub mod faults {
    use crate::faults::Fault;

    /// `sched = bcaws`, but the history cache's mask enable is 0: the RR scheduler's RTL
    /// (§5.6: memory warps are masked while the distance counter runs).
    pub const MASK_NEVER_ENABLED: Fault = Fault {
        block: "sm_core",
        name: "mask_never_enabled",
        what: "sched = bcaws with the BCAWS mask never enabled: memory warps issue while the distance counter runs (§5.4, §5.6)",
        port: super::port::MASK,
        // An SMEM warp through the pipeline into the cache, then its PC decided again: 57
        // cycles shrunk at table4 (fe_depth 17), 13 to 25 at the micro presets.
        within: 96,
    };
}

/// Bits `bits[0..n]` as one vector, bit 0 lowest.
fn pack(bits: &[Expr]) -> Expr {
    let rev: Vec<Expr> = bits.iter().rev().cloned().collect();
    concat(&rev)
}

/// The round-robin scheduler (§5.6, D20): one-hot grant of the first eligible warp in
/// last+1 … last+W (mod W). Warps above `last` take priority; else the lowest eligible.
fn round_robin(m: &mut Module, eligible: &[Expr], last: &Expr) -> Vec<Expr> {
    let n = eligible.len();
    let wb = last.width();
    // Warp 0 is never above `last`.
    let above: Vec<Expr> = (0..n)
        .map(|w| match w {
            0 => Expr::lit(0, 1),
            _ => {
                let gt = last.lt(&Expr::lit(w as u64, wb));
                m.wire(&format!("rr_hi{w}"), &eligible[w] & &gt)
            }
        })
        .collect();
    let any_hi = m.wire("rr_any_hi", or_all(&above, 1));
    let cand: Vec<Expr> = (0..n)
        .map(|w| any_hi.mux(&above[w], &eligible[w]))
        .collect();
    // Lowest set bit of `cand`.
    let mut seen = Expr::lit(0, 1);
    let mut grant = vec![];
    for (w, c) in cand.into_iter().enumerate() {
        let c = m.wire(&format!("rr_cand{w}"), c);
        grant.push(m.wire(&format!("rr_grant{w}"), &c & &!seen.clone()));
        seen = m.wire(&format!("rr_seen{w}"), &seen | &c);
    }
    grant
}

/// Binary index of a one-hot vector.
fn encode(onehot: &[Expr], width: usize) -> Expr {
    let idx: Vec<Expr> = (0..onehot.len())
        .map(|w| Expr::lit(w as u64, width))
        .collect();
    select_onehot(onehot, &idx, width)
}

/// Ports of the `sched` instance: the round-robin scheduler, the issue unit, the busy bits and
/// sequence numbers, and the completion logic (spec §6 `RrScheduler`, `IssueUnit`).
pub mod sched_port {
    pub const IN_READY: &str = "in_ready";
    pub const READY_M: &str = "ready_m";
    pub const WB_LOAD: &str = "wb_load";
    pub const WB_TAG: &str = "wb_tag";
    pub const WB_KIND: &str = "wb_kind";
    pub const READY: &str = "ready";
    pub const IS_MEM: &str = "is_mem";
    pub const LK_PC: &str = "lk_pc";
    pub const HC_LOAD: &str = "hc_load";
    pub const SMEM_SW_PENDING: &str = "smem_sw_pending";
    pub const ISSUE_TAG: &str = "issue_tag";
    pub const ISSUE_KIND: &str = "issue_kind";
    pub const ISSUE_PC: &str = "issue_pc";
}

/// The `sched` instance's ports.
fn sched_ports(p: &Params) -> Vec<Port> {
    use sched_port as sp;
    let (w, wb, swb) = (p.warps as usize, p.warp_bits(), p.sw_bits());
    let (pcw, tw) = (p.pc_bits as usize, p.pipe.tag_bits as usize);
    let spec = [
        ("clock", Dir::In, 1),
        ("reset", Dir::In, 1),
        (port::KERNEL_START, Dir::In, 1),
        (port::HAS_NEXT, Dir::In, w),
        (port::KIND, Dir::In, 2 * w),
        (port::PC, Dir::In, pcw * w),
        (sp::IN_READY, Dir::In, 1),
        (sp::READY_M, Dir::In, w),
        (sp::WB_LOAD, Dir::In, 1),
        (sp::WB_TAG, Dir::In, tw),
        (sp::WB_KIND, Dir::In, 2),
        (port::ICNT_VALID, Dir::In, 1),
        (port::ICNT_WARP, Dir::In, wb),
        (port::ICNT_SW, Dir::In, swb),
        (sp::READY, Dir::Out, w),
        (sp::IS_MEM, Dir::Out, w),
        (sp::LK_PC, Dir::Out, pcw),
        (sp::HC_LOAD, Dir::Out, 1),
        (sp::SMEM_SW_PENDING, Dir::Out, 1),
        (port::ISSUE_VALID, Dir::Out, 1),
        (sp::ISSUE_TAG, Dir::Out, tw),
        (sp::ISSUE_KIND, Dir::Out, 2),
        (sp::ISSUE_PC, Dir::Out, pcw),
        (port::ISSUE_WARP, Dir::Out, wb),
        (port::ISSUE_SW, Dir::Out, swb),
        (port::DECIDE, Dir::Out, 1),
        (port::GRANT, Dir::Out, wb),
        (port::SCHED_FAIL, Dir::Out, 1),
        (port::WARP_DONE, Dir::Out, 1),
        (port::WARP_DONE_ID, Dir::Out, wb),
        (port::ICNT_REQ, Dir::Out, 1),
        (port::ICNT_REQ_WARP, Dir::Out, wb),
        (port::ICNT_REQ_SW, Dir::Out, swb),
    ];
    crate::netlist::port_list(&spec)
}

/// The scheduler and issue unit (spec §5.6, D20, D25, D26): round-robin over the masked ready
/// set, the issue unit that feeds a decision's S subwarps back to back, busy bits cleared when a
/// warp's last subwarp completes, and per-warp sequence numbers for unique tags.
fn scheduler(p: &Params) -> Module {
    use sched_port as sp;
    let mut m = Module::new(&format!("{}_sched", crate::params::module_name(p)));
    m.cites(crate::blocks::docs::ELASTIC_PIPELINE);
    let (inp, out) = m.declare_ports(&sched_ports(p));
    let i = |name: &str| inp[name].clone();
    let n = p.warps as usize;
    let (wb, swb, seqb) = (p.warp_bits(), p.sw_bits(), p.seq_bits());
    let pcw = p.pc_bits as usize;
    let s_m1 = u64::from(p.pipe.subwarps - 1);
    let kind_lit = |k: Kind| Expr::lit(k as u64, 2);
    let zero = |w: usize| Expr::lit(0, w);
    let start = i(port::KERNEL_START);
    let in_ready = i(sp::IN_READY);

    m.section("Per-warp descriptors from the testbench");
    let (has_next, kind, pc) = (i(port::HAS_NEXT), i(port::KIND), i(port::PC));
    let kind_w: Vec<Expr> = (0..n).map(|w| kind.slice(2 * w, 2)).collect();
    let pc_w: Vec<Expr> = (0..n).map(|w| pc.slice(pcw * w, pcw)).collect();

    m.section("State: RR pointer, busy bits, sequence numbers, the issuing instruction");
    let last = m.reg("rr_last_q", wb, (n - 1) as u64);
    let busy = m.reg("busy_q", n, 0);
    let seq: Vec<Expr> = (0..n)
        .map(|w| m.reg(&format!("seq{w}_q"), seqb, 0))
        .collect();
    let pending = m.reg("iss_pending_q", 1, 0);
    let cur_warp = m.reg("iss_warp_q", wb, 0);
    let cur_kind = m.reg("iss_kind_q", 2, 0);
    let cur_pc = m.reg("iss_pc_q", pcw, 0);
    let cur_seq = m.reg("iss_seq_q", seqb, 0);
    let next_sw = m.reg("iss_sw_q", swb, 0);

    m.section("Ready set for the BCAWS mask (§5.4)");
    let ready = m.wire("ready_w", &has_next & &!busy.clone());
    let is_mem: Vec<Expr> = kind_w
        .iter()
        .map(|k| !k.equals(&kind_lit(Kind::Alu)))
        .collect();
    let is_mem = m.wire("is_mem_w", pack(&is_mem));
    let smem_pending = m.wire(
        "smem_pending_w",
        &pending & &cur_kind.equals(&kind_lit(Kind::Smem)),
    );

    m.section("Round-robin decision over the masked ready set (§5.6, D20, D25)");
    let ready_m = i(sp::READY_M);
    let eligible: Vec<Expr> = (0..n).map(|w| ready_m.bit(w)).collect();
    let onehot = round_robin(&mut m, &eligible, &last);
    let grant_valid = m.wire("grant_valid", ready_m.any());
    let grant = m.wire("grant_w", encode(&onehot, wb));
    let try_decide = m.wire("try_decide", &in_ready & &!(&pending | &start));
    let decide = m.wire("decide_w", &try_decide & &grant_valid);
    let sched_fail = &try_decide & &(!grant_valid.clone() & has_next.any());
    let g_kind = m.wire("grant_kind", select_onehot(&onehot, &kind_w, 2));
    let g_pc = m.wire("grant_pc", select_onehot(&onehot, &pc_w, pcw));
    let g_seq = m.wire("grant_seq", select_onehot(&onehot, &seq, seqb));
    let load = m.wire("hc_load_w", &decide & &g_kind.equals(&kind_lit(Kind::Smem)));

    m.section("Issue unit: subwarp 0 at the decision, 1..S-1 whenever F accepts (§5.6)");
    let iv = m.wire("issue_now", &in_ready & &(&pending | &decide));
    let warp = pending.mux(&cur_warp, &grant);
    let sw = pending.mux(&next_sw, &Expr::lit(0, swb));
    let warp = m.wire("issue_warp_w", warp);
    let sw = m.wire("issue_sw_w", sw);
    let iseq = pending.mux(&cur_seq, &g_seq);
    let tag = m.wire("issue_tag_w", concat(&[warp.clone(), iseq, sw.clone()]));
    let ipc = m.wire("issue_pc_w", pending.mux(&cur_pc, &g_pc));
    let ikind = m.wire("issue_kind_w", pending.mux(&cur_kind, &g_kind));
    let last_sw = m.wire("issue_last_sw", sw.equals(&Expr::lit(s_m1, swb)));
    m.next(
        &pending,
        start.mux(&zero(1), &iv.mux(&!last_sw.clone(), &pending)),
    );
    m.next(&next_sw, iv.mux(&(&sw + &Expr::lit(1, swb)), &next_sw));
    m.next(&cur_warp, decide.mux(&grant, &cur_warp));
    m.next(&cur_kind, decide.mux(&g_kind, &cur_kind));
    m.next(&cur_pc, decide.mux(&g_pc, &cur_pc));
    m.next(&cur_seq, decide.mux(&g_seq, &cur_seq));
    m.next(
        &last,
        start.mux(&Expr::lit((n - 1) as u64, wb), &decide.mux(&grant, &last)),
    );
    for (w, s) in seq.iter().enumerate() {
        let inc = &decide & &onehot[w];
        let next = start.mux(&zero(seqb), &inc.mux(&(s + &Expr::lit(1, seqb)), s));
        m.next(s, next);
    }

    m.section("Completion: busy clears when the last subwarp completes (§5.6, D3, D26)");
    let tag_bits = p.pipe.tag_bits as usize;
    let wtag = i(sp::WB_TAG);
    let wb_warp = wtag.slice(tag_bits - wb, wb);
    let wb_sw = wtag.slice(0, swb);
    let wb_load = i(sp::WB_LOAD);
    let wb_gld = i(sp::WB_KIND).equals(&kind_lit(Kind::Gld));
    let via_icnt = Expr::lit(p.gld_via_icnt() as u64, 1);
    let to_icnt = m.wire("icnt_req_w", &wb_load & &(&wb_gld & &via_icnt));
    let wb_last = wb_sw.equals(&Expr::lit(s_m1, swb));
    let wb_done = m.wire("wb_done", &wb_load & &(&wb_last & &!to_icnt.clone()));
    let icnt_done = m.wire(
        "icnt_done",
        i(port::ICNT_VALID) & i(port::ICNT_SW).equals(&Expr::lit(s_m1, swb)),
    );
    let done = m.wire("warp_done_w", &wb_done | &icnt_done);
    let done_id = m.wire(
        "warp_done_id_w",
        wb_done.mux(&wb_warp, &icnt_done.mux(&i(port::ICNT_WARP), &zero(wb))),
    );
    let clear_bits: Vec<Expr> = (0..n)
        .map(|w| &done & &done_id.equals(&Expr::lit(w as u64, wb)))
        .collect();
    let set_bits: Vec<Expr> = onehot.iter().map(|g| &decide & g).collect();
    let next_busy = (&busy & &!pack(&clear_bits)) | pack(&set_bits);
    m.next(&busy, start.mux(&zero(n), &next_busy));

    m.section("Outputs");
    let outs = [
        (sp::READY, ready),
        (sp::IS_MEM, is_mem),
        (sp::LK_PC, g_pc),
        (sp::HC_LOAD, load),
        (sp::SMEM_SW_PENDING, smem_pending),
        (port::ISSUE_VALID, iv.clone()),
        (sp::ISSUE_TAG, tag),
        (sp::ISSUE_KIND, ikind),
        (sp::ISSUE_PC, ipc),
        (port::ISSUE_WARP, iv.mux(&warp, &zero(wb))),
        (port::ISSUE_SW, iv.mux(&sw, &zero(swb))),
        (port::DECIDE, decide.clone()),
        (port::GRANT, decide.mux(&grant, &zero(wb))),
        (port::SCHED_FAIL, sched_fail),
        (port::WARP_DONE, done),
        (port::WARP_DONE_ID, done_id),
        (port::ICNT_REQ, to_icnt.clone()),
        (port::ICNT_REQ_WARP, to_icnt.mux(&wb_warp, &zero(wb))),
        (port::ICNT_REQ_SW, to_icnt.mux(&wb_sw, &zero(swb))),
    ];
    for (name, value) in outs {
        m.assign(&out[name], value);
    }
    m
}

/// The history cache's mask enable: 1 under BCAWS, 0 under RR (the cache, accumulator and
/// counter still run, so the trace fields stay comparable, §5.6).
fn mask_enable(p: &Params) -> Expr {
    match p.sched {
        Sched::Bcaws => {
            crate::planted!(faults::MASK_NEVER_ENABLED, Expr::lit(0, 1), Expr::lit(1, 1))
        }
        Sched::Rr => Expr::lit(0, 1),
    }
}

/// Builds the `sm_core` top (spec §5.6, §6) from validated params: three instances — `pipe`
/// (the pipeline, entries carrying the PC), `hc` (the `history_cache` block: accumulator, cache,
/// counter and mask) and `sched` (scheduler and issue unit) — wired as the spec draws them.
pub fn build(p: &Params) -> Module {
    use crate::blocks::elastic_pipeline::sched_port as pp;
    use sched_port as sp;
    let mut m = Module::new(&crate::params::module_name(p));
    m.cites(crate::blocks::docs::ELASTIC_PIPELINE);
    let (inp, out) = m.declare_ports(&ports(p));
    let i = |name: &str| inp[name].clone();
    let o = |name: &str| out[name].clone();
    let (pcw, swb) = (p.pc_bits as usize, p.sw_bits());
    let kind_lit = |k: Kind| Expr::lit(k as u64, 2);
    let start = i(port::KERNEL_START);
    let hp = p.history_cache();

    m.section("Instances: pipeline, BCAWS history cache, scheduler and issue unit (§6)");
    let pipe_i = m.instance("pipe", &Arc::new(pipe::build_with_pc(&p.pipe, pcw)));
    let hc_i = m.instance("hc", &Arc::new(hc::build(&hp)));
    let sched = m.instance("sched", &Arc::new(scheduler(p)));

    m.section("Scheduler and issue unit: descriptors in, the pipeline's F and WB back");
    for name in [
        port::KERNEL_START,
        port::HAS_NEXT,
        port::KIND,
        port::PC,
        port::ICNT_VALID,
        port::ICNT_WARP,
        port::ICNT_SW,
    ] {
        m.assign(&sched.input(name), i(name));
    }
    m.assign(
        &sched.input(sp::IN_READY),
        pipe_i.output(pipe::port::IN_READY),
    );
    m.assign(&sched.input(sp::READY_M), hc_i.output(hc::port::READY_M));
    m.assign(&sched.input(sp::WB_LOAD), pipe_i.output(pp::WB_LOAD));
    m.assign(&sched.input(sp::WB_TAG), pipe_i.output(pp::WB_TAG));
    m.assign(&sched.input(sp::WB_KIND), pipe_i.output(pp::WB_KIND));

    m.section("Pipeline: fed by the issue unit and the descriptor answer (§2, §3)");
    let bind = [
        (pipe::port::IN_VALID, sched.output(port::ISSUE_VALID)),
        (pipe::port::IN_TAG, sched.output(sp::ISSUE_TAG)),
        (pipe::port::IN_KIND, sched.output(sp::ISSUE_KIND)),
        (pp::IN_PC, sched.output(sp::ISSUE_PC)),
        (pipe::port::IN_DEG, i(port::DESC_DEG)),
        (pipe::port::IN_ADDR, i(port::DESC_ADDR)),
        (pipe::port::IN_ACT, i(port::DESC_ACT)),
        (pipe::port::ICNT_VALID, i(port::ICNT_VALID)),
    ];
    for (name, value) in bind {
        m.assign(&pipe_i.input(name), value);
    }

    m.section("History cache: the MEM0 entry that leaves feeds the accumulator (§5.2-5.4)");
    let mem0_smem = pipe_i.output(pp::MEM0_KIND).equals(&kind_lit(Kind::Smem));
    let mem0_c = pipe_i.output(pp::MEM0_C);
    let svc = m.wire("mem0_svc_m1", &mem0_c - &Expr::lit(1, mem0_c.width()));
    let bind = [
        (hc::port::CLEAR, start.clone()),
        (hc::port::ACC_V, pipe_i.output(pp::MEM0_LEAVE) & mem0_smem),
        (hc::port::ACC_SW, pipe_i.output(pp::MEM0_TAG).slice(0, swb)),
        (hc::port::ACC_SVC_M1, svc.slice(0, hp.svc_bits())),
        (hc::port::ACC_PC_IN, pipe_i.output(pp::MEM0_PC)),
        (hc::port::LK_PC, sched.output(sp::LK_PC)),
        (hc::port::READY, sched.output(sp::READY)),
        (hc::port::IS_MEM, sched.output(sp::IS_MEM)),
        (hc::port::LOAD, sched.output(sp::HC_LOAD)),
        (hc::port::SMEM_SW_PENDING, sched.output(sp::SMEM_SW_PENDING)),
        (hc::port::FE_HOLD, pipe_i.output(pipe::port::FE_HOLD)),
        (hc::port::ENABLE, mask_enable(p)),
    ];
    for (name, value) in bind {
        m.assign(&hc_i.input(name), value);
    }

    m.section("Outputs");
    let decide = sched.output(port::DECIDE);
    let load = sched.output(sp::HC_LOAD);
    let dw = p.dw() as usize;
    for name in [
        port::ISSUE_VALID,
        port::ISSUE_WARP,
        port::ISSUE_SW,
        port::DECIDE,
        port::GRANT,
        port::SCHED_FAIL,
        port::WARP_DONE,
        port::WARP_DONE_ID,
        port::ICNT_REQ,
        port::ICNT_REQ_WARP,
        port::ICNT_REQ_SW,
    ] {
        m.assign(&o(name), sched.output(name));
    }
    let outs = [
        (port::MASK, hc_i.output(hc::port::MASK)),
        (port::COUNTER, hc_i.output(hc::port::COUNTER)),
        (
            port::PRED,
            decide.mux(&hc_i.output(hc::port::PRED), &Expr::lit(0, dw)),
        ),
        (port::HC_LOOKUP, load.clone()),
        (port::HC_HIT, &load & &hc_i.output(hc::port::LK_HIT)),
        (port::HC_WRITE, hc_i.output(hc::port::ACC_VALID)),
        (port::HC_WRITE_PC, hc_i.output(hc::port::ACC_PC)),
        (port::HC_WRITE_VALUE, hc_i.output(hc::port::ACC_VALUE)),
    ];
    for (name, value) in outs {
        m.assign(&o(name), value);
    }
    for q in pipe_outputs(&p.pipe) {
        m.assign(&o(&q.name), pipe_i.output(&q.name));
    }
    m
}
