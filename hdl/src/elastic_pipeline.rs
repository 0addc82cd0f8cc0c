//! The SM pipeline of seed 000 (spec elastic-pipeline.md §1–4, §6): front end F → D1..Dk → EXE,
//! then the `Unified`, `Split` or `Elastic` backend (PREMEM FIFO, MEM0 with the bank-conflict
//! detector, MEM1..M−1, NONMEM FIFO or NM latches, WB priority mux).
//!
//! This file holds the params (single source of every width) and the port list of the
//! trace-mode top `elastic_pipeline`; the RTL builder follows in [`build`].

use crate::bank_conflict_detector::Mode;
use crate::netlist::{Dir, Port};
use crate::params::{bits_for, in_range, one_of, BlockParams, ParamError, ParamInfo};
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

/// Pipeline parameters (spec §1, §10), by their spec names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    pub pipe_mode: PipeMode,
    /// Memory stages.
    #[serde(rename = "M")]
    pub mem_stages: u32,
    /// PREMEM depth (Elastic); 0 = no PREMEM FIFO.
    #[serde(rename = "N")]
    pub premem_depth: u32,
    /// NONMEM depth (Elastic).
    #[serde(rename = "Q")]
    pub nonmem_depth: u32,
    /// D stages between F and EXE.
    pub fe_depth: u32,
    /// Ports per bank.
    #[serde(rename = "P")]
    pub ports: u32,
    /// Subwarps per warp.
    #[serde(rename = "S")]
    pub subwarps: u32,
    /// SIMD lanes.
    #[serde(rename = "L")]
    pub lanes: u32,
    /// Shared-memory banks.
    #[serde(rename = "B")]
    pub banks: u32,
    pub wb_priority: WbPriority,
    /// Debug: NQ head eligible for WB only at this age; EXE never writes back directly.
    pub nonmem_min_age: u32,
    /// Detector broadcast mode (`multicast` = the paper's DistinctWord).
    pub broadcast: Mode,
    /// Word-address bits per lane.
    #[serde(rename = "AW")]
    pub addr_bits: u32,
    /// Entry tag bits (trace mode: stream index).
    pub tag_bits: u32,
}

impl Default for Params {
    /// The paper's evaluated core (`table4`), Elastic with Q = M.
    fn default() -> Self {
        Params {
            pipe_mode: PipeMode::Elastic,
            mem_stages: 4,
            premem_depth: 3,
            nonmem_depth: 4,
            fe_depth: 17,
            ports: 1,
            subwarps: 4,
            lanes: 8,
            banks: 8,
            wb_priority: WbPriority::MemFirst,
            nonmem_min_age: 0,
            broadcast: Mode::Multicast,
            addr_bits: 12,
            tag_bits: 16,
        }
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
    pub fn detector(&self) -> crate::bank_conflict_detector::Params {
        crate::bank_conflict_detector::Params {
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
            ("micro", micro),
        ]
    }

    fn describe() -> Vec<ParamInfo> {
        vec![
            ParamInfo {
                name: "pipe_mode",
                meaning: "backend wiring",
                allowed: "unified, split, elastic".into(),
            },
            ParamInfo {
                name: "M",
                meaning: "memory stages",
                allowed: "1..=8".into(),
            },
            ParamInfo {
                name: "N",
                meaning: "PREMEM FIFO depth (elastic; 0 = none)",
                allowed: "0..=8".into(),
            },
            ParamInfo {
                name: "Q",
                meaning: "NONMEM FIFO depth (elastic)",
                allowed: "0..=16".into(),
            },
            ParamInfo {
                name: "fe_depth",
                meaning: "D stages between F and EXE",
                allowed: "1..=32".into(),
            },
            ParamInfo {
                name: "P",
                meaning: "ports per bank",
                allowed: "1, 2, 4".into(),
            },
            ParamInfo {
                name: "S",
                meaning: "subwarps per warp",
                allowed: "1, 2, 4".into(),
            },
            ParamInfo {
                name: "L",
                meaning: "SIMD lanes",
                allowed: "8, 16, 32".into(),
            },
            ParamInfo {
                name: "B",
                meaning: "shared-memory banks",
                allowed: "8, 16, 32".into(),
            },
            ParamInfo {
                name: "wb_priority",
                meaning: "MEM_last vs NONMEM head at WB",
                allowed: "mem_first, nonmem_first".into(),
            },
            ParamInfo {
                name: "nonmem_min_age",
                meaning: "debug: NQ head eligible at this age (0 = ASAP)",
                allowed: "0..=16".into(),
            },
            ParamInfo {
                name: "broadcast",
                meaning: "detector mode (multicast = DistinctWord)",
                allowed: "literal, multicast, gpgpusim-limited".into(),
            },
            ParamInfo {
                name: "AW",
                meaning: "word-address bits",
                allowed: "log2(B)+1..=30".into(),
            },
            ParamInfo {
                name: "tag_bits",
                meaning: "entry tag bits (trace stream index)",
                allowed: "4..=32".into(),
            },
        ]
    }

    fn validate(&self) -> Result<(), ParamError> {
        in_range("M", self.mem_stages, 1, 8)?;
        in_range("N", self.premem_depth, 0, 8)?;
        in_range("Q", self.nonmem_depth, 0, 16)?;
        in_range("fe_depth", self.fe_depth, 1, 32)?;
        one_of("P", self.ports, &[1, 2, 4])?;
        one_of("S", self.subwarps, &[1, 2, 4])?;
        one_of("L", self.lanes, &[8, 16, 32])?;
        one_of("B", self.banks, &[8, 16, 32])?;
        in_range("nonmem_min_age", self.nonmem_min_age, 0, 16)?;
        if self.pipe_mode == PipeMode::Elastic && self.nonmem_min_age > 0 && self.nonmem_depth == 0
        {
            // EXE is no WB source then, so ALU entries could never leave.
            return Err(ParamError::Range {
                name: "Q".into(),
                value: "0".into(),
                allowed: "1..=16 when nonmem_min_age > 0 (elastic)".into(),
            });
        }
        in_range("AW", self.addr_bits, self.banks.trailing_zeros() + 1, 30)?;
        in_range("tag_bits", self.tag_bits, 4, 32)
    }
}

/// Port names of the trace-mode top.
pub mod port {
    pub const IN_VALID: &str = "in_valid";
    pub const IN_TAG: &str = "in_tag";
    pub const IN_KIND: &str = "in_kind";
    /// Degree override (`deg_override`); 0 = the detector computes the degree.
    pub const IN_DEG: &str = "in_deg";
    pub const IN_ADDR: &str = "in_addr";
    pub const IN_ACT: &str = "in_act";
    pub const ICNT_VALID: &str = "icnt_valid";
    pub const IN_READY: &str = "in_ready";
    pub const FE_HOLD: &str = "fe_hold";
    pub const CAUSE: &str = "cause";
    pub const WB_VALID: &str = "wb_valid";
    /// WB holds ICNT data (not a pipeline entry).
    pub const WB_ICNT: &str = "wb_icnt";
    pub const WB_TAG: &str = "wb_tag";
    pub const WB_SRC: &str = "wb_src";
    pub const MEM0_REM: &str = "mem0_rem";
    pub const PRE_COUNT: &str = "pre_count";
    pub const NQ_COUNT: &str = "nq_count";
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

/// The trace-mode top's ports, derived from the params (spec §6 `FrontEnd` + `ElasticBackend`,
/// with every latch tapped for the per-cycle record of spec §3.5).
pub fn ports(p: &Params) -> Vec<Port> {
    let tw = p.tag_bits as usize;
    let l = p.lanes as usize;
    let count = |n: usize| bits_for(n as u64);
    let mut v = vec![
        Port {
            name: "clock".into(),
            dir: Dir::In,
            width: 1,
        },
        Port {
            name: "reset".into(),
            dir: Dir::In,
            width: 1,
        },
    ];
    let mut add = |name: &str, dir: Dir, width: usize| {
        v.push(Port {
            name: name.into(),
            dir,
            width,
        })
    };
    add(port::IN_VALID, Dir::In, 1);
    add(port::IN_TAG, Dir::In, tw);
    add(port::IN_KIND, Dir::In, 2);
    add(port::IN_DEG, Dir::In, p.rem_bits());
    add(port::IN_ADDR, Dir::In, l * p.addr_bits as usize);
    add(port::IN_ACT, Dir::In, l);
    add(port::ICNT_VALID, Dir::In, 1);
    add(port::IN_READY, Dir::Out, 1);
    add(port::FE_HOLD, Dir::Out, 1);
    add(port::CAUSE, Dir::Out, 2);
    add(port::WB_VALID, Dir::Out, 1);
    add(port::WB_ICNT, Dir::Out, 1);
    add(port::WB_TAG, Dir::Out, tw);
    add(port::WB_SRC, Dir::Out, 3);
    add(port::MEM0_REM, Dir::Out, p.rem_bits());
    add(port::PRE_COUNT, Dir::Out, count(p.pre_slots()));
    add(port::NQ_COUNT, Dir::Out, count(p.nq_slots()));
    for stage in stages(p) {
        let (valid, tag) = stage_ports(&stage);
        add(&valid, Dir::Out, 1);
        add(&tag, Dir::Out, tw);
    }
    v
}

// ---------------------------------------------------------------------------------------------
// RTL (spec §3.2 end-of-cycle evaluation, §3.3 causes, §4 structures, §6 blocks)
// ---------------------------------------------------------------------------------------------

use crate::bank_conflict_detector::{self as detector, Fault};
use crate::netlist::{concat, or_all, Expr, Module};
use crate::params::log2;

/// One pipeline entry's fields as nets (spec §2 "Entry"; co-simulation build, D23).
#[derive(Clone)]
pub struct Entry {
    pub tag: Expr,
    pub kind: Expr,
    /// Degree override (0 = the detector computes the degree).
    pub deg: Expr,
    pub act: Expr,
    pub addr: Vec<Expr>,
    /// The instruction's PC (scheduler mode: the history cache's key, §5.3); absent in trace
    /// mode.
    pub pc: Option<Expr>,
}

impl Entry {
    fn fields(&self) -> Vec<&Expr> {
        let mut f = vec![&self.tag, &self.kind, &self.deg, &self.act];
        f.extend(self.addr.iter());
        f.extend(self.pc.iter());
        f
    }

    /// `sel ? a : b`, field by field.
    fn mux(sel: &Expr, a: &Entry, b: &Entry) -> Entry {
        let pick = |x: &Expr, y: &Expr| sel.mux(x, y);
        Entry {
            tag: pick(&a.tag, &b.tag),
            kind: pick(&a.kind, &b.kind),
            deg: pick(&a.deg, &b.deg),
            act: pick(&a.act, &b.act),
            addr: a
                .addr
                .iter()
                .zip(&b.addr)
                .map(|(x, y)| pick(x, y))
                .collect(),
            pc: a.pc.as_ref().zip(b.pc.as_ref()).map(|(x, y)| pick(x, y)),
        }
    }
}

/// A pipeline latch: a valid bit and an entry, all registers.
#[derive(Clone)]
struct Latch {
    valid: Expr,
    e: Entry,
}

impl Latch {
    /// A latch named `stage`; entries carry a PC of `pcw` bits when `pcw` > 0.
    fn new(m: &mut Module, p: &Params, pcw: usize, stage: &str) -> Latch {
        let mut reg = |field: &str, width: usize| m.reg(&format!("{stage}_{field}_q"), width, 0);
        Latch {
            valid: reg("valid", 1),
            e: Entry {
                tag: reg("tag", p.tag_bits as usize),
                kind: reg("kind", 2),
                deg: reg("deg", p.rem_bits()),
                act: reg("act", p.lanes as usize),
                addr: (0..p.lanes)
                    .map(|l| reg(&format!("addr{l}"), p.addr_bits as usize))
                    .collect(),
                pc: (pcw > 0).then(|| reg("pc", pcw)),
            },
        }
    }

    /// Next state: `load ? (1, input) : (leave ? (0, held) : held)`.
    fn update(&self, m: &mut Module, load: &Expr, input: &Entry, leave: &Expr) {
        let stay = !(load | leave);
        let valid = load | &(&self.valid & &stay);
        m.next(&self.valid, valid);
        let next = Entry::mux(load, input, &self.e);
        for (r, v) in self.e.fields().into_iter().zip(next.fields()) {
            m.next(r, v.clone());
        }
    }

    /// The tag as the trace shows it: 0 when the latch is empty.
    fn shown_tag(&self) -> Expr {
        let w = self.e.tag.width();
        self.valid.mux(&self.e.tag, &Expr::lit(0, w))
    }

    fn is_alu(&self) -> Expr {
        self.e.kind.equals(&Expr::lit(Kind::Alu as u64, 2))
    }
}

fn one(x: bool) -> Expr {
    Expr::lit(x as u64, 1)
}

/// A FIFO of latches, slot 0 oldest (spec §4 PREMEM / NONMEM queues). Dequeue shifts every slot
/// down; an enqueue lands in the first empty slot after that shift (D12). With `ages`, each
/// slot carries its age in the queue (1 in its first cycle), saturating at `max_age`.
struct Fifo {
    name: String,
    slots: Vec<Latch>,
    ages: Vec<Expr>,
    max_age: u64,
}

impl Fifo {
    fn new(m: &mut Module, p: &Params, pcw: usize, name: &str, n: usize, max_age: u64) -> Fifo {
        let slots: Vec<Latch> = (0..n)
            .map(|i| Latch::new(m, p, pcw, &format!("{name}{i}")))
            .collect();
        let ages = if max_age > 0 {
            (0..n)
                .map(|i| m.reg(&format!("{name}{i}_age_q"), bits_for(max_age), 0))
                .collect()
        } else {
            vec![]
        };
        Fifo {
            name: name.to_string(),
            slots,
            ages,
            max_age,
        }
    }

    fn empty(&self) -> Expr {
        self.slots.first().map_or(one(true), |s| !s.valid.clone())
    }

    /// Occupancy is the depth (the last slot is valid).
    fn full(&self) -> Expr {
        self.slots.last().map_or(one(true), |s| s.valid.clone())
    }

    fn count(&self) -> Expr {
        let w = bits_for(self.slots.len() as u64);
        if self.slots.is_empty() {
            return Expr::lit(0, w);
        }
        let bits: Vec<Expr> = self.slots.iter().map(|s| s.valid.clone()).collect();
        detector::popcount(&bits).zext(w)
    }

    fn update(&self, m: &mut Module, deq: &Expr, enq: &Expr, input: &Entry) {
        let n = self.slots.len();
        let shifted: Vec<(Expr, Entry)> = (0..n)
            .map(|i| {
                let here = &self.slots[i];
                match self.slots.get(i + 1) {
                    Some(next) => (
                        deq.mux(&next.valid, &here.valid),
                        Entry::mux(deq, &next.e, &here.e),
                    ),
                    None => (&!deq.clone() & &here.valid, here.e.clone()),
                }
            })
            .collect();
        for i in 0..n {
            let slot = &self.slots[i];
            let below = if i == 0 {
                one(true)
            } else {
                shifted[i - 1].0.clone()
            };
            let lands = m.wire(
                &format!("{}{i}_enq_here", self.name),
                enq & &(!shifted[i].0.clone() & below),
            );
            m.next(&slot.valid, &shifted[i].0 | &lands);
            let next = Entry::mux(&lands, input, &shifted[i].1);
            for (r, v) in slot.e.fields().into_iter().zip(next.fields()) {
                m.next(r, v.clone());
            }
            if let Some(age) = self.ages.get(i) {
                let w = age.width();
                let older = match self.ages.get(i + 1) {
                    Some(next) => deq.mux(next, age),
                    None => age.clone(),
                };
                let max = Expr::lit(self.max_age, w);
                let grown = older.lt(&max).mux(&(&older + &Expr::lit(1, w)), &max);
                m.next(age, lands.mux(&Expr::lit(1, w), &grown));
            }
        }
    }
}

/// What drives the pipeline (spec §6 `FrontEnd` `in_*`, `ElasticBackend` `icnt_valid`).
/// `in_valid` may depend on [`PipeOut::in_ready`] (declare it with [`Module::forward`]).
pub struct PipeIn {
    pub in_valid: Expr,
    pub entry: Entry,
    pub icnt_valid: Expr,
}

/// The pipeline's nets a surrounding block reads.
pub struct PipeOut {
    pub in_ready: Expr,
    pub fe_hold: Expr,
    pub cause: Expr,
    pub wb_valid: Expr,
    pub wb_icnt: Expr,
    pub wb_tag: Expr,
    pub wb_src: Expr,
    /// `rem` of the MEM0 entry, 0 when MEM0 is empty.
    pub mem0_rem: Expr,
    pub pre_count: Expr,
    pub nq_count: Expr,
    /// Every traced latch: (stage name, valid, tag shown as 0 when empty).
    pub taps: Vec<(String, Expr, Expr)>,
    /// The MEM0 entry leaves MEM0 at this edge (§5.3); `mem0_c` is its service time c.
    pub mem0_leave: Expr,
    pub mem0: Entry,
    pub mem0_c: Expr,
    /// A pipeline entry (not ICNT data) is loaded into WB at this edge, with its tag and kind.
    pub wb_load: Expr,
    pub wb_load_tag: Expr,
    pub wb_load_kind: Expr,
}

impl PipeOut {
    /// Drives the trace-mode outputs of [`ports`] (present under the same names in every top
    /// that contains the pipeline).
    pub fn drive(&self, m: &mut Module, out: &std::collections::HashMap<String, Expr>) {
        let o = |name: &str| out[name].clone();
        m.assign(&o(port::IN_READY), self.in_ready.clone());
        m.assign(&o(port::FE_HOLD), self.fe_hold.clone());
        m.assign(&o(port::CAUSE), self.cause.clone());
        m.assign(&o(port::WB_VALID), self.wb_valid.clone());
        m.assign(&o(port::WB_ICNT), self.wb_icnt.clone());
        m.assign(&o(port::WB_TAG), self.wb_tag.clone());
        m.assign(&o(port::WB_SRC), self.wb_src.clone());
        m.assign(&o(port::MEM0_REM), self.mem0_rem.clone());
        m.assign(&o(port::PRE_COUNT), self.pre_count.clone());
        m.assign(&o(port::NQ_COUNT), self.nq_count.clone());
        for (stage, valid, tag) in &self.taps {
            let (vn, tn) = stage_ports(stage);
            m.assign(&o(&vn), valid.clone());
            m.assign(&o(&tn), tag.clone());
        }
    }
}

/// Builds the trace-mode top `elastic_pipeline` (front end + backend) from validated params.
pub fn build(p: &Params) -> Module {
    let mut m = Module::new(Params::BLOCK);
    let (inp, out) = m.declare_ports(&ports(p));
    let i = |name: &str| inp[name].clone();
    let aw = p.addr_bits as usize;
    let entry = Entry {
        tag: i(port::IN_TAG),
        kind: i(port::IN_KIND),
        deg: i(port::IN_DEG),
        act: i(port::IN_ACT),
        addr: (0..p.lanes as usize)
            .map(|l| i(port::IN_ADDR).slice(l * aw, aw))
            .collect(),
        pc: None,
    };
    let io = PipeIn {
        in_valid: i(port::IN_VALID),
        entry,
        icnt_valid: i(port::ICNT_VALID),
    };
    logic(&mut m, p, 0, io).drive(&mut m, &out);
    m
}

/// The pipeline's logic inside `m` (spec §3.2 steps 1–8, §3.3 causes); entries carry a PC of
/// `pcw` bits when `pcw` > 0.
pub fn logic(m: &mut Module, p: &Params, pcw: usize, io: PipeIn) -> PipeOut {
    let mm = p.mem_stages as usize;
    let elastic = p.pipe_mode == PipeMode::Elastic;
    let rw = p.rem_bits();
    let incoming = io.entry;
    // --- State -----------------------------------------------------------------------------
    let f = Latch::new(m, p, pcw, "f");
    let d: Vec<Latch> = (1..=p.fe_depth)
        .map(|k| Latch::new(m, p, pcw, &format!("d{k}")))
        .collect();
    let exe = Latch::new(m, p, pcw, "exe");
    let pre = Fifo::new(m, p, pcw, "pre", p.pre_slots(), 0);
    let mem: Vec<Latch> = (0..mm)
        .map(|k| Latch::new(m, p, pcw, &format!("mem{k}")))
        .collect();
    let elapsed = m.reg("mem0_elapsed_q", rw, 0);
    let nq = Fifo::new(m, p, pcw, "nq", p.nq_slots(), p.nonmem_min_age as u64);
    let nm: Vec<Latch> = (0..p.nm_slots())
        .map(|k| Latch::new(m, p, pcw, &format!("nm{k}")))
        .collect();
    let wb_valid = m.reg("wb_valid_q", 1, 0);
    let wb_icnt = m.reg("wb_icnt_q", 1, 0);
    let wb_tag = m.reg("wb_tag_q", p.tag_bits as usize, 0);
    let wb_src = m.reg("wb_src_q", 3, 0);

    // --- Step 1: MEM0 service (the project's detector, W = N = M = 4) -------------------------
    let mem0 = &mem[0];
    let det = m.scoped("det", |m| {
        let lanes: Vec<Expr> = mem0
            .e
            .addr
            .iter()
            .enumerate()
            .map(|(l, a)| {
                m.wire(
                    &format!("byte_addr{l}"),
                    concat(&[a.clone(), Expr::lit(0, 2)]),
                )
            })
            .collect();
        detector::logic(
            m,
            &p.detector(),
            Fault::None,
            &mem0.valid,
            &mem0.e.act,
            &lanes,
            None,
            None,
        )
    });
    let sh = log2(p.ports) as usize;
    let ovr = m.wire(
        "deg_plus_p1",
        &mem0.e.deg + &Expr::lit(p.ports as u64 - 1, rw),
    );
    let ovr_cycles = ovr.slice(sh, rw - sh).zext(rw);
    let is_smem = mem0.e.kind.equals(&Expr::lit(Kind::Smem as u64, 2));
    let has_ovr = mem0.e.deg.any();
    let smem_c = has_ovr.mux(&ovr_cycles, &det.cycles);
    let c = m.wire("mem0_c", is_smem.mux(&smem_c, &Expr::lit(1, rw)));
    let rem = m.wire("mem0_rem_now", &c - &elapsed);
    let mem0_done = m.wire("mem0_done", &mem0.valid & &rem.equals(&Expr::lit(1, rw)));

    // --- Step 2: WB select ---------------------------------------------------------------------
    let a = p.nonmem_min_age as u64;
    let mem_last = &mem[mm - 1];
    let mem_avail = if mm > 1 {
        mem_last.valid.clone()
    } else {
        mem0_done.clone()
    };
    let mut sources: Vec<(WbSrc, Expr, Option<Entry>)> =
        vec![(WbSrc::Icnt, io.icnt_valid.clone(), None)];
    let mem_src = (WbSrc::Mem, mem_avail, Some(mem_last.e.clone()));
    let nq_src = nq.slots.first().map(|head| {
        let eligible = match nq.ages.first() {
            Some(age) => &head.valid & &!age.lt(&Expr::lit(a, age.width())),
            None => head.valid.clone(),
        };
        (WbSrc::Nq, eligible, Some(head.e.clone()))
    });
    match p.pipe_mode {
        PipeMode::Unified => sources.push(mem_src),
        PipeMode::Split => {
            sources.push(mem_src);
            let last = &nm[mm - 1];
            sources.push((WbSrc::Nm, last.valid.clone(), Some(last.e.clone())));
        }
        PipeMode::Elastic => {
            if p.wb_priority == WbPriority::NonmemFirst {
                sources.extend(nq_src);
                sources.push(mem_src);
            } else {
                sources.push(mem_src);
                sources.extend(nq_src);
            }
            if a == 0 {
                sources.push((WbSrc::Exe, &exe.valid & &exe.is_alu(), Some(exe.e.clone())));
            }
        }
    }
    let mut taken = one(false);
    let mut sel = std::collections::HashMap::new();
    for (src, avail, _) in &sources {
        let s = m.wire(
            &format!("sel_{:?}", src).to_lowercase(),
            avail & &!taken.clone(),
        );
        taken = m.wire(&format!("taken_{:?}", src).to_lowercase(), &taken | &s);
        sel.insert(*src, s);
    }
    let sel_of = |s: WbSrc| sel.get(&s).cloned().unwrap_or_else(|| one(false));

    // --- Step 3: MEM advance (ripple from the end) ---------------------------------------------
    let mut moves = vec![one(false); mm];
    let mut free = vec![one(false); mm];
    moves[mm - 1] = sel_of(WbSrc::Mem);
    for k in (0..mm).rev() {
        if k < mm - 1 {
            let cond = if k == 0 {
                mem0_done.clone()
            } else {
                mem[k].valid.clone()
            };
            moves[k] = m.wire(&format!("mem{k}_moves"), &cond & &free[k + 1]);
        }
        free[k] = m.wire(
            &format!("mem{k}_free"),
            !mem[k].valid.clone() | moves[k].clone(),
        );
    }
    let mem0_free = free[0].clone();

    // --- Step 4: NONMEM dequeue (Elastic) or NM shift (Split) ---------------------------------
    let nq_deq = sel_of(WbSrc::Nq);
    let nq_room = if nq.slots.is_empty() {
        one(false)
    } else {
        m.wire("nq_room", !(nq.full() & !nq_deq.clone()))
    };
    let mut nm_moves = vec![one(false); nm.len()];
    let mut nm_free = vec![one(false); nm.len()];
    for k in (0..nm.len()).rev() {
        nm_moves[k] = if k == nm.len() - 1 {
            sel_of(WbSrc::Nm)
        } else {
            m.wire(&format!("nm{k}_moves"), &nm[k].valid & &nm_free[k + 1])
        };
        nm_free[k] = m.wire(
            &format!("nm{k}_free"),
            !nm[k].valid.clone() | nm_moves[k].clone(),
        );
    }

    // --- Step 5: EXE output ----------------------------------------------------------------------
    let exe_mem = m.wire("exe_is_mem", &exe.valid & &!exe.is_alu());
    let exe_alu = m.wire("exe_is_alu", &exe.valid & &exe.is_alu());
    let pre_empty = pre.empty();
    let (to_mem0, to_pre, to_nq, to_nm, to_wb) = match p.pipe_mode {
        PipeMode::Unified => (
            &exe.valid & &mem0_free,
            one(false),
            one(false),
            one(false),
            one(false),
        ),
        PipeMode::Split => (
            &exe_mem & &mem0_free,
            one(false),
            one(false),
            &exe_alu & &nm_free[0],
            one(false),
        ),
        PipeMode::Elastic => {
            let bypass = m.wire("exe_bypass", &exe_mem & &(&pre_empty & &mem0_free));
            let to_pre = &exe_mem & &(!bypass.clone() & !pre.full());
            let to_wb = &exe_alu & &sel_of(WbSrc::Exe);
            let to_nq = &exe_alu & &(!to_wb.clone() & nq_room.clone());
            (bypass, to_pre, to_nq, one(false), to_wb)
        }
    };
    let to_mem0 = m.wire("exe_to_mem0", to_mem0);
    let to_pre = m.wire("exe_to_pre", to_pre);
    let to_nq = m.wire("exe_to_nq", to_nq);
    let to_nm = m.wire("exe_to_nm0", to_nm);
    let exe_leaves = m.wire(
        "exe_leaves",
        or_all(
            &[
                to_mem0.clone(),
                to_pre.clone(),
                to_nq.clone(),
                to_nm.clone(),
                to_wb,
            ],
            1,
        ),
    );

    // --- Step 6: PRE head → MEM0 (EXE never bypasses a non-empty PRE, D11) --------------------
    let pre_deq = m.wire("pre_deq", &!pre_empty.clone() & &mem0_free);
    let mem0_load = m.wire("mem0_load", &to_mem0 | &pre_deq);
    let mem0_in = match pre.slots.first() {
        Some(head) => Entry::mux(&pre_deq, &head.e, &exe.e),
        None => exe.e.clone(),
    };

    // --- Step 7: front end (bubble-collapsing, D2) ---------------------------------------------
    let mut chain: Vec<&Latch> = vec![&f];
    chain.extend(d.iter());
    let exe_free = m.wire("exe_free", !exe.valid.clone() | exe_leaves.clone());
    let mut fe_moves = vec![one(false); chain.len()];
    let mut next_free = exe_free.clone();
    for k in (0..chain.len()).rev() {
        let name = if k == 0 {
            "f".to_string()
        } else {
            format!("d{k}")
        };
        fe_moves[k] = m.wire(&format!("{name}_moves"), &chain[k].valid & &next_free);
        next_free = m.wire(
            &format!("{name}_free"),
            !chain[k].valid.clone() | fe_moves[k].clone(),
        );
    }
    let fe_hold = m.wire("fe_hold_now", &f.valid & &!fe_moves[0].clone());
    let in_ready = m.wire("in_ready_now", !fe_hold.clone());
    let f_load = m.wire("f_load", &io.in_valid & &in_ready);

    // --- Step 8 and the register updates --------------------------------------------------------
    f.update(m, &f_load, &incoming, &fe_moves[0]);
    for k in 0..d.len() {
        d[k].update(m, &fe_moves[k], &chain[k].e, &fe_moves[k + 1].clone());
    }
    let last_d = chain.len() - 1;
    exe.update(m, &fe_moves[last_d], &chain[last_d].e, &exe_leaves);
    if !pre.slots.is_empty() {
        pre.update(m, &pre_deq, &to_pre, &exe.e);
    }
    mem[0].update(m, &mem0_load, &mem0_in, &moves[0]);
    // §3.2 step 1: rem counts down while > 1; a finished entry that cannot move stays at rem 1.
    let busy = &mem0.valid & &!mem0_done.clone();
    let restart = &mem0_load | &moves[0];
    let next_elapsed = restart.mux(
        &Expr::lit(0, rw),
        &busy.mux(&(&elapsed + &Expr::lit(1, rw)), &elapsed),
    );
    m.next(&elapsed, next_elapsed);
    for k in 1..mm {
        mem[k].update(m, &moves[k - 1], &mem[k - 1].e.clone(), &moves[k]);
    }
    if !nq.slots.is_empty() {
        nq.update(m, &nq_deq, &to_nq, &exe.e);
    }
    for k in 0..nm.len() {
        let (load, input) = if k == 0 {
            (to_nm.clone(), exe.e.clone())
        } else {
            (nm_moves[k - 1].clone(), nm[k - 1].e.clone())
        };
        nm[k].update(m, &load, &input, &nm_moves[k]);
    }
    let tw = p.tag_bits as usize;
    let mut next_tag = Expr::lit(0, tw);
    let mut next_kind = Expr::lit(0, 2);
    let mut next_src = Expr::lit(WbSrc::None as u64, 3);
    for (src, _, entry) in sources.iter().rev() {
        let s = sel_of(*src);
        let (tag, kind) = entry
            .as_ref()
            .map_or((Expr::lit(0, tw), Expr::lit(0, 2)), |e| {
                (e.tag.clone(), e.kind.clone())
            });
        next_tag = s.mux(&tag, &next_tag);
        next_kind = s.mux(&kind, &next_kind);
        next_src = s.mux(&Expr::lit(*src as u64, 3), &next_src);
    }
    let next_tag_w = m.wire("wb_load_tag", next_tag);
    let next_kind = m.wire("wb_load_kind", next_kind);
    m.next(&wb_valid, taken.clone());
    m.next(&wb_icnt, sel_of(WbSrc::Icnt));
    m.next(&wb_tag, next_tag_w.clone());
    m.next(&wb_src, next_src);

    // --- Cause (§3.3) ---------------------------------------------------------------------------
    let memlike = if p.pipe_mode == PipeMode::Unified {
        exe.valid.clone()
    } else {
        exe_mem.clone()
    };
    let pre_full_stall = if elastic && p.premem_depth > 0 {
        pre.full()
    } else {
        one(false)
    };
    let conflict_busy = m.wire(
        "mem0_busy",
        &(&mem0.valid & &!mem0_done.clone()) | &pre_full_stall,
    );
    let code = |c: Cause| Expr::lit(c as u64, 2);
    let mem_cause = conflict_busy.mux(&code(Cause::BankConflict), &code(Cause::Other));
    let alu_cause = sel_of(WbSrc::Mem).mux(&code(Cause::BankConflict), &code(Cause::Other));
    let cause = fe_hold.mux(&memlike.mux(&mem_cause, &alu_cause), &code(Cause::None));

    // --- Outputs ----------------------------------------------------------------------------------
    let all: Vec<&Latch> = std::iter::once(&f)
        .chain(d.iter())
        .chain(std::iter::once(&exe))
        .chain(pre.slots.iter())
        .chain(mem.iter())
        .chain(nq.slots.iter())
        .chain(nm.iter())
        .collect();
    let taps = stages(p)
        .into_iter()
        .zip(all)
        .map(|(stage, latch)| (stage, latch.valid.clone(), latch.shown_tag()))
        .collect();
    let loads_entry = m.wire("wb_load", &taken & &!sel_of(WbSrc::Icnt));
    PipeOut {
        in_ready,
        fe_hold,
        cause,
        wb_valid,
        wb_icnt,
        wb_tag,
        wb_src,
        mem0_rem: mem0.valid.mux(&rem, &Expr::lit(0, rw)),
        pre_count: pre.count(),
        nq_count: nq.count(),
        taps,
        mem0_leave: moves[0].clone(),
        mem0: mem0.e.clone(),
        mem0_c: c,
        wb_load: loads_entry,
        wb_load_tag: next_tag_w,
        wb_load_kind: next_kind,
    }
}
