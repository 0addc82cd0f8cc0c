//! The SM pipeline of seed 000 (docs/elastic-pipeline.md §1–4, §6): front end F → D1..Dk → EXE,
//! then the `Unified`, `Split` or `Elastic` backend (PREMEM FIFO, MEM0 with the bank-conflict
//! detector, MEM1..M−1, NONMEM FIFO or NM latches, WB priority mux).
//!
//! This module holds the params (single source of every width) and the ports of the trace-mode
//! top `elastic_pipeline` (declared once; the latch taps are named at run time). The RTL is in its parts: the entry bus and latches
//! (`entry.rs`), the spec §6 sub-blocks (`front_end.rs`, `fifo.rs`, `mem0.rs`, `wb_mux.rs`),
//! the pipeline's logic, one function per section (`logic.rs`), and the tops [`build`] and
//! [`build_with_pc`] (`top.rs`).

mod entry;
mod fifo;
mod front_end;
mod logic;
mod mem0;
mod top;
mod wb_mux;

pub use entry::{Entry, Layout};
pub use logic::logic;
pub use top::{build, build_with_pc, sched_port, PipeIn, PipeOut};

use crate::blocks::bank_conflict_detector::{Mode, MODE_NAMES};
use crate::netlist::{Dir, Port};
use crate::params::{bits_for, in_range, Allowed, BlockParams, Gpgpusim, ParamError};
use serde::{Deserialize, Serialize};

/// Backend wiring (spec §2 table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PipeMode {
    /// Every entry goes through MEM0..MEM(M−1) (P Fig. 2a, the baseline).
    Unified,
    /// Memory entries take the MEM path, ALU entries fixed latches NM0..NM(M−1) (P Fig. 2b).
    Split,
    /// PREMEM FIFO before MEM0, NONMEM FIFO beside it, ASAP writeback (P §4).
    Elastic,
}

/// WB priority between MEM_last and the NONMEM head (spec §3.2 step 2, D9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WbPriority {
    MemFirst,
    NonmemFirst,
}

/// Entry kinds (spec §2 "Entry"), as encoded on `in_kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Alu = 0,
    Smem = 1,
    Gld = 2,
    Gst = 3,
}

impl Kind {
    pub fn is_mem(self) -> bool {
        self != Kind::Alu
    }
    pub fn from_bits(x: u64) -> Kind {
        match x & 3 {
            0 => Kind::Alu,
            1 => Kind::Smem,
            2 => Kind::Gld,
            _ => Kind::Gst,
        }
    }
}

/// `wb_src` encoding (spec §6 WbMux, plus NM for Split).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum WbSrc {
    None = 0,
    Icnt = 1,
    Mem = 2,
    Nq = 3,
    Exe = 4,
    Nm = 5,
}

impl WbSrc {
    pub fn from_bits(x: u64) -> Option<WbSrc> {
        [
            WbSrc::None,
            WbSrc::Icnt,
            WbSrc::Mem,
            WbSrc::Nq,
            WbSrc::Exe,
            WbSrc::Nm,
        ]
        .get(x as usize)
        .copied()
    }
}

/// Stall cause (spec §3.3), as encoded on `cause`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    None = 0,
    BankConflict = 1,
    Other = 2,
}

impl Cause {
    pub fn from_bits(x: u64) -> Option<Cause> {
        [Cause::None, Cause::BankConflict, Cause::Other]
            .get(x as usize)
            .copied()
    }
}

crate::block_params! {
    /// Generator parameters (spec §1, §4); the defaults are the paper's evaluated core
    /// (`table4`), Elastic with Q = M.
    #[derive(Eq)]
    #[serde(deny_unknown_fields, default)]
    pub struct Params {
        /// Backend wiring.
        pipe_mode: PipeMode = PipeMode::Elastic, "pipe_mode", Allowed::Names(&["unified", "split", "elastic"]);
        /// Memory stages.
        mem_stages: u32 = 4, "M", Allowed::Range(1, 8);
        /// PREMEM FIFO depth (elastic; 0 = none).
        premem_depth: u32 = 3, "N", Allowed::Range(0, 8);
        /// NONMEM FIFO depth (elastic).
        nonmem_depth: u32 = 4, "Q", Allowed::Range(0, 16), "at least 1 when nonmem_min_age > 0 (elastic)";
        /// D stages between F and EXE.
        fe_depth: u32 = 17, "fe_depth", Allowed::Range(1, 32);
        /// Ports per bank.
        ports: u32 = 1, "P", Allowed::OneOf(&[1, 2, 4]);
        /// Subwarps per warp.
        subwarps: u32 = 4, "S", Allowed::OneOf(&[1, 2, 4]) => Gpgpusim::WarpParts;
        /// SIMD lanes.
        lanes: u32 = 8, "L", Allowed::OneOf(&[8, 16, 32]) => Gpgpusim::LanesPerAccess;
        /// Shared-memory banks.
        banks: u32 = 8, "B", Allowed::OneOf(&[8, 16, 32]) => Gpgpusim::ShmemBanks;
        /// MEM_last vs NONMEM head at WB.
        wb_priority: WbPriority = WbPriority::MemFirst, "wb_priority", Allowed::Names(&["mem_first", "nonmem_first"]);
        /// Debug: NQ head eligible for WB only at this age (0 = ASAP); EXE never writes back
        /// directly.
        nonmem_min_age: u32 = 0, "nonmem_min_age", Allowed::Range(0, 16);
        /// Detector broadcast mode (multicast = the paper's DistinctWord).
        broadcast: Mode = Mode::Multicast, "broadcast", Allowed::Names(MODE_NAMES) => Gpgpusim::Broadcast;
        /// Word-address bits per lane.
        addr_bits: u32 = 12, "AW", Allowed::Range(2, 30), "at least log2(B)+1";
        /// Entry tag bits (trace mode: stream index).
        tag_bits: u32 = 16, "tag_bits", Allowed::Range(4, 32);
    }
}

impl Params {
    /// Bits of `mem0_rem` and of a degree override: values up to L.
    pub fn rem_bits(&self) -> usize {
        bits_for(self.lanes as u64)
    }
    /// PREMEM FIFO entries (0 unless Elastic).
    pub fn pre_slots(&self) -> usize {
        if self.pipe_mode == PipeMode::Elastic {
            self.premem_depth as usize
        } else {
            0
        }
    }
    /// NONMEM FIFO entries (0 unless Elastic).
    pub fn nq_slots(&self) -> usize {
        if self.pipe_mode == PipeMode::Elastic {
            self.nonmem_depth as usize
        } else {
            0
        }
    }
    /// NM latches (M in Split, else 0).
    pub fn nm_slots(&self) -> usize {
        if self.pipe_mode == PipeMode::Split {
            self.mem_stages as usize
        } else {
            0
        }
    }
    /// Parameters of the one detector block MEM0 instantiates (W = N = M = 4, byte address =
    /// word address × 4).
    pub fn detector(&self) -> crate::blocks::bank_conflict_detector::Params {
        crate::blocks::bank_conflict_detector::Params {
            lanes: self.lanes,
            banks: self.banks,
            layer_bytes: 4,
            addr_bits: self.addr_bits + 2,
            ports: self.ports,
            mode: self.broadcast,
            reg_out: false,
        }
    }
}

impl BlockParams for Params {
    const BLOCK: &'static str = "elastic_pipeline";

    fn presets() -> Vec<(&'static str, Self)> {
        let table4 = Params::default();
        let micro = Params {
            mem_stages: 2,
            premem_depth: 0,
            nonmem_depth: 2,
            fe_depth: 1,
            ..table4.clone()
        };
        vec![
            ("table4", table4.clone()),
            (
                "unified",
                Params {
                    pipe_mode: PipeMode::Unified,
                    ..table4.clone()
                },
            ),
            ("micro", micro.clone()),
            // Split, two ports, Literal broadcast.
            (
                "micro_split",
                Params {
                    pipe_mode: PipeMode::Split,
                    ports: 2,
                    broadcast: Mode::Literal,
                    ..micro.clone()
                },
            ),
            // One MEM stage behind a deep PREMEM FIFO, Q = M + 1, NQ first at WB, GPGPU-Sim
            // broadcast.
            (
                "m1_elastic",
                Params {
                    mem_stages: 1,
                    premem_depth: 4,
                    nonmem_depth: 2,
                    fe_depth: 3,
                    ports: 2,
                    broadcast: Mode::GpgpusimLimited,
                    wb_priority: WbPriority::NonmemFirst,
                    ..micro.clone()
                },
            ),
            // NQ entries aged before WB (the debug knob: Split latency in Elastic).
            (
                "micro_aged",
                Params {
                    nonmem_min_age: 2,
                    wb_priority: WbPriority::NonmemFirst,
                    ..micro
                },
            ),
        ]
    }

    fn check(&self) -> Result<(), ParamError> {
        if self.pipe_mode == PipeMode::Elastic && self.nonmem_min_age > 0 && self.nonmem_depth == 0
        {
            // EXE is no WB source then, so ALU entries could never leave.
            return Err(ParamError::Range {
                name: "Q".into(),
                value: "0".into(),
                allowed: "1..=16 when nonmem_min_age > 0 (elastic)".into(),
            });
        }
        in_range("AW", self.addr_bits, self.banks.trailing_zeros() + 1, 30)
    }
}

crate::ports! {
    Params as p;
    let (tw, l, aw) = (p.tag_bits as usize, p.lanes as usize, p.addr_bits as usize);
    inputs {
        /// An entry is offered on `in_*` (F loads it when `in_ready`).
        in_valid[1]: bool,
        in_tag[tw],
        /// The entry's [`Kind`].
        in_kind[2],
        /// Degree override (`deg_override`); 0 = the detector computes the degree.
        in_deg[p.rem_bits()],
        /// Per lane: its word address and whether it is active.
        in_addr[aw; l],
        in_act[1; l]: bool,
        /// ICNT data arrives for WB this cycle (it always wins, §3.2 step 2).
        icnt_valid[1]: bool,
    }
    outputs {
        /// ¬`fe_hold`: F takes the offer at this edge.
        in_ready[1]: bool,
        fe_hold[1]: bool,
        /// The stall [`Cause`].
        cause[2],
        wb_valid[1]: bool,
        /// WB holds ICNT data (not a pipeline entry).
        wb_icnt[1]: bool,
        wb_tag[tw],
        /// Where the WB content came from ([`WbSrc`]).
        wb_src[3],
        /// Service cycles left in MEM0 including this one, 0 when empty.
        mem0_rem[p.rem_bits()],
        pre_count[bits_for(p.pre_slots() as u64)],
        nq_count[bits_for(p.nq_slots() as u64)],
    }
    extra stage_taps(p);
}

impl crate::Block for Params {
    fn build(&self) -> crate::Module {
        build(self)
    }
    #[cfg(feature = "faults")]
    const FAULTS: &'static [crate::faults::Fault] = &[faults::NQ_BEATS_MEM];
}

/// Planted faults (docs/blocks.md §4).
#[cfg(feature = "faults")]
pub mod faults {
    use crate::faults::Fault;

    /// Elastic with `wb_priority = mem_first`: the NQ head wins WB over MEM_last (§3.2 step 2,
    /// D9).
    pub const NQ_BEATS_MEM: Fault = Fault {
        block: "elastic_pipeline",
        name: "nq_beats_mem",
        what: "Elastic, mem_first: the NONMEM head wins WB over MEM_last (§3.2 step 2, D9)",
        port: super::port::WB_TAG,
        // An ALU entry into NQ beside a memory entry reaching MEM_last: 26 cycles shrunk at
        // table4 (fe_depth 17), 12 at micro.
        within: 40,
    };
}

/// Names of one stage latch's taps: `<stage>_valid`, `<stage>_tag`.
pub fn stage_ports(stage: &str) -> (String, String) {
    (format!("{stage}_valid"), format!("{stage}_tag"))
}

/// The latches visible in the trace, in record order: `f`, `d1..dk`, `exe`, `pre0..`, `mem0..`,
/// `nq0..` (Elastic, oldest first) or `nm0..` (Split).
pub fn stages(p: &Params) -> Vec<String> {
    let mut s = vec!["f".to_string()];
    s.extend((1..=p.fe_depth).map(|k| format!("d{k}")));
    s.push("exe".into());
    s.extend((0..p.pre_slots()).map(|i| format!("pre{i}")));
    s.extend((0..p.mem_stages).map(|i| format!("mem{i}")));
    s.extend((0..p.nq_slots()).map(|i| format!("nq{i}")));
    s.extend((0..p.nm_slots()).map(|i| format!("nm{i}")));
    s
}

/// The latch taps of the trace-mode top (spec §6 `FrontEnd` + `ElasticBackend`, every latch
/// tapped for the per-cycle record of §3.5): `<stage>_valid` and `<stage>_tag` per stage of
/// [`stages`], after the declared ports.
pub fn stage_taps(p: &Params) -> Vec<Port> {
    let tw = p.tag_bits as usize;
    let mut v = vec![];
    for stage in stages(p) {
        let (valid, tag) = stage_ports(&stage);
        v.push(Port::new(&valid, Dir::Out, 1));
        v.push(Port::new(&tag, Dir::Out, tw));
    }
    v
}
