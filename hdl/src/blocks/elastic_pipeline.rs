//! The SM pipeline of seed 000 (docs/elastic-pipeline.md §1–4, §6): front end F → D1..Dk → EXE,
//! then the `Unified`, `Split` or `Elastic` backend (PREMEM FIFO, MEM0 with the bank-conflict
//! detector, MEM1..M−1, NONMEM FIFO or NM latches, WB priority mux).
//!
//! This file holds the params (single source of every width) and the port list of the
//! trace-mode top `elastic_pipeline`; the RTL builder follows in [`build`].

use crate::blocks::bank_conflict_detector::Mode;
use crate::netlist::{Dir, Port};
use crate::params::{bits_for, in_range, Allowed, BlockParams, ParamError};
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
        subwarps: u32 = 4, "S", Allowed::OneOf(&[1, 2, 4]);
        /// SIMD lanes.
        lanes: u32 = 8, "L", Allowed::OneOf(&[8, 16, 32]);
        /// Shared-memory banks.
        banks: u32 = 8, "B", Allowed::OneOf(&[8, 16, 32]);
        /// MEM_last vs NONMEM head at WB.
        wb_priority: WbPriority = WbPriority::MemFirst, "wb_priority", Allowed::Names(&["mem_first", "nonmem_first"]);
        /// Debug: NQ head eligible for WB only at this age (0 = ASAP); EXE never writes back
        /// directly.
        nonmem_min_age: u32 = 0, "nonmem_min_age", Allowed::Range(0, 16);
        /// Detector broadcast mode (multicast = the paper's DistinctWord).
        broadcast: Mode = Mode::Multicast, "broadcast", Allowed::Names(&["literal", "multicast", "gpgpusim-limited"]);
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
            ("micro", micro),
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
//
// The pipeline module ([`build`], [`build_with_pc`], both through [`logic`]) instantiates the
// spec §6 sub-blocks, each its own Verilog module:
//
//   instance     module (spec §6)        holds
//   front_end    FrontEnd<fe_depth>      F, D1..Dk, EXE; step 7 (bubble-collapsing)
//   mem0_stage   Mem0Stage               MEM0, its elapsed counter, the detector `det`; step 1
//   nonmem       NonmemFifo<Q>           NQ (Elastic, Q > 0), with the nonmem_min_age ages
//   wb_mux       WbMux<M>                step 2 (fixed-priority select)
//   premem       PremFifo<N>             PRE (Elastic, N > 0)
//
// and keeps the backend glue itself: MEM1..MEM(M−1) (step 3), the NM latches (Split, step 4),
// the EXE routing (step 5), the MEM0 input MUX (step 6), the WB registers (step 8) and the stall
// cause (§3.3). Entries cross module ports as packed buses ([`Layout`]).
// ---------------------------------------------------------------------------------------------

use crate::blocks::bank_conflict_detector as detector;
use crate::netlist::{concat, concat_wide, or_all, Expr, InstanceRef, Module};
use crate::params::log2;
use std::sync::Arc;

/// A sub-module named `ep_<stem>_<hash of key>`: `key` spells out everything the module's text
/// depends on (so equal keys give equal modules, different keys different names), and opens the
/// module as a comment. Names stay short because a generated file's header lists them all.
fn sub_module(stem: &str, key: &str) -> Module {
    let hash = crate::params::fnv1a(key.as_bytes()) as u32;
    let mut m = Module::new(&format!("ep_{stem}_{hash:08x}"));
    m.section(key);
    m
}

/// The packed entry bus: how an entry crosses a module port. Fields, least significant first:
///
/// | field  | width                | bits                                  |
/// |--------|----------------------|---------------------------------------|
/// | `tag`  | T = `tag_bits`       | `[0, T)`                              |
/// | `kind` | 2                    | `[T, T+2)`                            |
/// | `deg`  | R = lg(L+1)          | `[T+2, T+2+R)`                        |
/// | `act`  | L, lane 0 lowest     | `[T+2+R, T+2+R+L)`                    |
/// | `addr` | L × AW               | lane l at `T+2+R+L + l·AW`            |
/// | `pc`   | PCW (scheduler mode) | the top PCW bits (absent when PCW = 0) |
///
/// The layout is fixed by (T, L, AW, PCW), which [`Layout::key`] spells out for the names of the
/// sub-modules whose ports carry entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    tag: usize,
    lanes: usize,
    addr: usize,
    pc: usize,
}

impl Layout {
    /// The layout of `p`'s entries, with a `pcw`-bit PC when `pcw` > 0.
    pub fn of(p: &Params, pcw: usize) -> Layout {
        Layout {
            tag: p.tag_bits as usize,
            lanes: p.lanes as usize,
            addr: p.addr_bits as usize,
            pc: pcw,
        }
    }

    /// Bits of `deg` (values up to L), as [`Params::rem_bits`].
    pub fn deg(&self) -> usize {
        bits_for(self.lanes as u64)
    }

    /// EW: the bus width.
    pub fn width(&self) -> usize {
        self.tag + 2 + self.deg() + self.lanes * (1 + self.addr) + self.pc
    }

    /// `entry: tag T, L lanes, AW A, PC P`: the part of a sub-module key the layout fixes.
    fn key(&self) -> String {
        let pc = if self.pc > 0 {
            format!(", PC {}", self.pc)
        } else {
            String::new()
        };
        format!(
            "entry: tag {}, {} lanes, AW {}{pc}",
            self.tag, self.lanes, self.addr
        )
    }

    /// The fields of a packed bus `bus` (a net or a slice of one), as slices.
    fn unpack(&self, bus: &Expr) -> Entry {
        assert_eq!(bus.width(), self.width(), "entry bus width");
        let (t, r, l, aw) = (self.tag, self.deg(), self.lanes, self.addr);
        let act = t + 2 + r;
        let addr = act + l;
        Entry {
            tag: bus.slice(0, t),
            kind: bus.slice(t, 2),
            deg: bus.slice(t + 2, r),
            act: bus.slice(act, l),
            addr: (0..l).map(|k| bus.slice(addr + k * aw, aw)).collect(),
            pc: (self.pc > 0).then(|| bus.slice(addr + l * aw, self.pc)),
        }
    }
}

/// The packed bus of [`Layout`] from its fields; `addr` is most significant lane first (one
/// part per lane, or a single L·AW-bit net holding lane l at `l·AW`).
fn pack_fields(
    tag: &Expr,
    kind: &Expr,
    deg: &Expr,
    act: &Expr,
    addr: &[Expr],
    pc: Option<&Expr>,
) -> Expr {
    let mut parts: Vec<Expr> = pc.into_iter().cloned().collect();
    parts.extend(addr.iter().cloned());
    parts.extend([act.clone(), deg.clone(), kind.clone(), tag.clone()]);
    concat_wide(&parts)
}

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
    /// The entry as one packed bus (layout in [`Layout`]): the whole value assigned to a bus net
    /// such as a sub-module's entry input.
    pub fn pack(&self) -> Expr {
        let addr: Vec<Expr> = self.addr.iter().rev().cloned().collect();
        pack_fields(
            &self.tag,
            &self.kind,
            &self.deg,
            &self.act,
            &addr,
            self.pc.as_ref(),
        )
    }

    /// The fields of a packed bus net `bus` of `p`'s entries with a `pcw`-bit PC (layout in
    /// [`Layout`]).
    pub fn unpack(bus: &Expr, p: &Params, pcw: usize) -> Entry {
        Layout::of(p, pcw).unpack(bus)
    }

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

    fn is_alu(&self) -> Expr {
        self.kind.equals(&Expr::lit(Kind::Alu as u64, 2))
    }
}

/// The tag as the trace shows it: 0 when the latch is empty.
fn shown_tag(valid: &Expr, tag: &Expr) -> Expr {
    valid.mux(tag, &Expr::lit(0, tag.width()))
}

/// A pipeline latch: a valid bit and an entry, all registers.
#[derive(Clone)]
struct Latch {
    valid: Expr,
    e: Entry,
}

impl Latch {
    /// A latch named `stage` (registers `<stage>_<field>_q`) holding entries of `lay`.
    fn new(m: &mut Module, lay: Layout, stage: &str) -> Latch {
        let mut reg = |field: &str, width: usize| m.reg(&format!("{stage}_{field}_q"), width, 0);
        Latch {
            valid: reg("valid", 1),
            e: Entry {
                tag: reg("tag", lay.tag),
                kind: reg("kind", 2),
                deg: reg("deg", lay.deg()),
                act: reg("act", lay.lanes),
                addr: (0..lay.lanes)
                    .map(|l| reg(&format!("addr{l}"), lay.addr))
                    .collect(),
                pc: (lay.pc > 0).then(|| reg("pc", lay.pc)),
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

    fn shown_tag(&self) -> Expr {
        shown_tag(&self.valid, &self.e.tag)
    }
}

fn one(x: bool) -> Expr {
    Expr::lit(x as u64, 1)
}

// --- FrontEnd<fe_depth> (spec §6; §3.2 step 7) ---------------------------------------------------

/// Ports of [`front_end`].
mod fe_port {
    pub const IN_VALID: &str = "in_valid";
    pub const IN_ENTRY: &str = "in_entry";
    /// EXE's entry leaves EXE at this edge (spec §6 `exe_accept`).
    pub const EXE_ACCEPT: &str = "exe_accept";
    pub const IN_READY: &str = "in_ready";
    pub const FE_HOLD: &str = "fe_hold";
    pub const EXE_VALID: &str = "exe_valid";
    pub const EXE_ENTRY: &str = "exe_entry";
}

/// Spec §6 `FrontEnd<fe_depth>`: the latches F, D1..Dk (k = `depth`) and EXE, advanced by step 7's
/// bubble-collapsing rule (D2). Besides the [`fe_port`] ports it taps F and every D latch for the
/// trace as `<stage>_valid` and `<stage>_tag` (0 when empty); EXE is visible at `exe_valid` and
/// `exe_entry`.
fn front_end(lay: Layout, depth: usize) -> Module {
    use fe_port as fp;
    let mut m = sub_module(
        "frontend",
        &format!("FrontEnd<fe_depth = {depth}>, {}", lay.key()),
    );
    m.clock_reset();
    let in_valid = m.input(fp::IN_VALID, 1);
    let in_entry = m.input(fp::IN_ENTRY, lay.width());
    let exe_accept = m.input(fp::EXE_ACCEPT, 1);
    let in_ready = m.output(fp::IN_READY, 1);
    let fe_hold = m.output(fp::FE_HOLD, 1);
    let exe_valid = m.output(fp::EXE_VALID, 1);
    let exe_entry = m.output(fp::EXE_ENTRY, lay.width());
    // F, D1..Dk: the latches an entry passes before EXE.
    let names: Vec<String> = std::iter::once("f".to_string())
        .chain((1..=depth).map(|k| format!("d{k}")))
        .collect();
    let taps: Vec<(Expr, Expr)> = names
        .iter()
        .map(|s| {
            let (v, t) = stage_ports(s);
            (m.output(&v, 1), m.output(&t, lay.tag))
        })
        .collect();
    let chain: Vec<Latch> = names.iter().map(|s| Latch::new(&mut m, lay, s)).collect();
    let exe = Latch::new(&mut m, lay, "exe");

    m.section("spec §3.2 step 7: bubble-collapsing advance (D2), EXE first");
    let mut moves = vec![one(false); chain.len()];
    let mut next_free = m.wire("exe_free", !exe.valid.clone() | exe_accept.clone());
    for k in (0..chain.len()).rev() {
        moves[k] = m.wire(&format!("{}_moves", names[k]), &chain[k].valid & &next_free);
        next_free = m.wire(
            &format!("{}_free", names[k]),
            !chain[k].valid.clone() | moves[k].clone(),
        );
    }
    m.assign(&fe_hold, &chain[0].valid & &!moves[0].clone());
    m.assign(&in_ready, !fe_hold.clone());
    let f_load = m.wire("f_load", &in_valid & &in_ready);

    m.section("registers: F from the issue source, each later latch from its predecessor");
    chain[0].update(&mut m, &f_load, &lay.unpack(&in_entry), &moves[0]);
    for k in 1..chain.len() {
        chain[k].update(&mut m, &moves[k - 1], &chain[k - 1].e, &moves[k]);
    }
    let last = chain.len() - 1;
    exe.update(&mut m, &moves[last], &chain[last].e, &exe_accept);

    m.section("outputs: EXE and the trace taps");
    m.assign(&exe_valid, exe.valid.clone());
    m.assign(&exe_entry, exe.e.pack());
    for (latch, (v, t)) in chain.iter().zip(&taps) {
        m.assign(v, latch.valid.clone());
        m.assign(t, latch.shown_tag());
    }
    m
}

// --- PremFifo<N>, NonmemFifo<Q> (spec §4, §6) ----------------------------------------------------

/// Ports of [`fifo`] (both kinds unless noted).
mod fifo_port {
    pub const ENQ: &str = "enq";
    pub const ENQ_ENTRY: &str = "enq_entry";
    pub const DEQ: &str = "deq";
    pub const COUNT: &str = "count";
    pub const HEAD_VALID: &str = "head_valid";
    /// PremFifo: the occupancy is N (at the start of the cycle).
    pub const FULL: &str = "full";
    /// PremFifo: the head entry (slot 0, the oldest).
    pub const HEAD: &str = "head";
    /// NonmemFifo: an entry can be enqueued after this cycle's dequeue (D12).
    pub const ROOM: &str = "room";
    /// NonmemFifo: the head is a WB candidate: valid and, with `nonmem_min_age` = a > 0, of age
    /// ≥ a (else equal to `head_valid`).
    pub const HEAD_ELIGIBLE: &str = "head_eligible";
    /// NonmemFifo: the head's tag and (when the parent needs it) kind, all WB reads of an NQ
    /// entry.
    pub const HEAD_TAG: &str = "head_tag";
    pub const HEAD_KIND: &str = "head_kind";

    /// The trace taps of slot `i`: `slot<i>_valid`, `slot<i>_tag` (0 when empty).
    pub fn slot(i: usize) -> (String, String) {
        (format!("slot{i}_valid"), format!("slot{i}_tag"))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FifoKind {
    /// Spec §6 `PremFifo<N>`: PRE, before MEM0.
    Prem,
    /// Spec §6 `NonmemFifo<Q>`: NQ, beside the MEM path; with the age counters of the
    /// `nonmem_min_age` = `max_age` debug mode when > 0, and a `head_kind` output when
    /// `head_kind`.
    Nonmem { max_age: u64, head_kind: bool },
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
    fn new(m: &mut Module, lay: Layout, name: &str, n: usize, max_age: u64) -> Fifo {
        let slots: Vec<Latch> = (0..n)
            .map(|i| Latch::new(m, lay, &format!("{name}{i}")))
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

    /// Occupancy is the depth (the last slot is valid).
    fn full(&self) -> Expr {
        self.slots.last().expect("a FIFO has slots").valid.clone()
    }

    fn count(&self) -> Expr {
        let bits: Vec<Expr> = self.slots.iter().map(|s| s.valid.clone()).collect();
        detector::popcount(&bits).zext(bits_for(self.slots.len() as u64))
    }

    /// The head is a WB candidate (valid and old enough, when ages are kept).
    fn head_eligible(&self) -> Expr {
        let head = &self.slots[0];
        match self.ages.first() {
            Some(age) => &head.valid & &!age.lt(&Expr::lit(self.max_age, age.width())),
            None => head.valid.clone(),
        }
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

/// Spec §6 `PremFifo<N>` or `NonmemFifo<Q>` of `n` ≥ 1 slots: the [`fifo_port`] ports, and every
/// slot tapped for the trace.
fn fifo(kind: FifoKind, lay: Layout, n: usize) -> Module {
    use fifo_port as qp;
    assert!(n >= 1, "an absent FIFO is not instantiated");
    let (stem, slot, max_age, head_kind) = match kind {
        FifoKind::Prem => ("premem", "pre", 0, false),
        FifoKind::Nonmem { max_age, head_kind } => ("nonmem", "nq", max_age, head_kind),
    };
    let block = match kind {
        FifoKind::Prem => format!("PremFifo<N = {n}>"),
        FifoKind::Nonmem { .. } => format!("NonmemFifo<Q = {n}>"),
    };
    let ages = if max_age > 0 {
        format!(", ages up to {max_age}")
    } else {
        String::new()
    };
    let kind_out = if head_kind { ", head kind" } else { "" };
    let mut m = sub_module(stem, &format!("{block}{ages}{kind_out}, {}", lay.key()));
    m.clock_reset();
    let enq = m.input(qp::ENQ, 1);
    let enq_entry = m.input(qp::ENQ_ENTRY, lay.width());
    let deq = m.input(qp::DEQ, 1);
    let count = m.output(qp::COUNT, bits_for(n as u64));
    let head_valid = m.output(qp::HEAD_VALID, 1);
    let mut own: Vec<(&str, usize)> = match kind {
        FifoKind::Prem => vec![(qp::FULL, 1), (qp::HEAD, lay.width())],
        FifoKind::Nonmem { .. } => vec![
            (qp::ROOM, 1),
            (qp::HEAD_ELIGIBLE, 1),
            (qp::HEAD_TAG, lay.tag),
        ],
    };
    if head_kind {
        own.push((qp::HEAD_KIND, 2));
    }
    let own: std::collections::HashMap<&str, Expr> = own
        .into_iter()
        .map(|(name, width)| (name, m.output(name, width)))
        .collect();
    let taps: Vec<(Expr, Expr)> = (0..n)
        .map(|i| {
            let (v, t) = qp::slot(i);
            (m.output(&v, 1), m.output(&t, lay.tag))
        })
        .collect();
    let q = Fifo::new(&mut m, lay, slot, n, max_age);
    let head = &q.slots[0];
    match kind {
        FifoKind::Prem => {
            m.section("spec §3.2 steps 5-6: full at the start of the cycle; head to the MEM0 MUX");
            m.assign(&own[qp::FULL], q.full());
            m.assign(&own[qp::HEAD], head.e.pack());
        }
        FifoKind::Nonmem { .. } => {
            m.section("spec §3.2 steps 2, 4-5: the head as a WB source; room after the dequeue");
            m.assign(&own[qp::HEAD_ELIGIBLE], q.head_eligible());
            m.assign(&own[qp::HEAD_TAG], head.e.tag.clone());
            if let Some(kind) = own.get(qp::HEAD_KIND) {
                m.assign(kind, head.e.kind.clone());
            }
            m.assign(&own[qp::ROOM], !(q.full() & !deq.clone()));
        }
    }
    m.assign(&head_valid, head.valid.clone());
    m.assign(&count, q.count());
    m.section("registers: dequeue shifts down, enqueue fills the first empty slot (D12)");
    q.update(&mut m, &deq, &enq, &lay.unpack(&enq_entry));
    m.section("trace taps, oldest first");
    for (latch, (v, t)) in q.slots.iter().zip(&taps) {
        m.assign(v, latch.valid.clone());
        m.assign(t, latch.shown_tag());
    }
    m
}

// --- Mem0Stage (spec §6; §3.2 step 1) ------------------------------------------------------------

/// Ports of [`mem0_stage`].
mod mem0_port {
    /// MEM0 loads `in_entry` at this edge (EXE bypass or PRE head).
    pub const IN_VALID: &str = "in_valid";
    pub const IN_ENTRY: &str = "in_entry";
    /// The successor can take a finished entry (MEM1 free; with M = 1, WB selected MEM_last).
    pub const OUT_READY: &str = "out_ready";
    pub const VALID: &str = "valid";
    pub const ENTRY: &str = "entry";
    /// Service cycles left including this one, 0 when MEM0 is empty.
    pub const REM: &str = "rem";
    /// MEM0 valid ∧ rem = 1 (`mem0_done`).
    pub const DONE: &str = "done";
    /// MEM0 valid ∧ rem > 1 (the bank-conflict half of the §3.3 cause).
    pub const CONFLICT_BUSY: &str = "conflict_busy";
    /// The entry leaves MEM0 at this edge: `done` ∧ `out_ready`.
    pub const LEAVE: &str = "leave";
    /// The entry's service time c.
    pub const C: &str = "c";
}

/// What a [`mem0_stage`] is built from; its key spells out every field.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Mem0Key {
    lay: Layout,
    det: detector::Params,
}

impl Mem0Key {
    fn of(p: &Params, pcw: usize) -> Mem0Key {
        let (lay, det) = (Layout::of(p, pcw), p.detector());
        // Lanes and address width are the layout's; W = 4, combinational.
        assert_eq!(det.lanes as usize, lay.lanes);
        assert_eq!(det.addr_bits as usize, lay.addr + 2);
        assert!(det.layer_bytes == 4 && !det.reg_out);
        Mem0Key { lay, det }
    }

    /// The detector module's name is unique per detector configuration (P included).
    fn key(&self, detector: &Module) -> String {
        format!(
            "Mem0Stage, {}, detector {} (P {})",
            self.lay.key(),
            detector.name,
            self.det.ports
        )
    }
}

/// Spec §6 `Mem0Stage`: the MEM0 latch, its elapsed-service counter (rem = c − elapsed) and the
/// bank-conflict detector instance `det` (W = N = M = 4, byte address = word address × 4),
/// with the [`mem0_port`] ports.
fn mem0_stage(key: &Mem0Key) -> Module {
    use mem0_port as mp;
    let lay = key.lay;
    let rw = lay.deg();
    let det_module = Arc::new(detector::build(&key.det));
    let mut m = sub_module("mem0", &key.key(&det_module));
    m.clock_reset();
    let in_valid = m.input(mp::IN_VALID, 1);
    let in_entry = m.input(mp::IN_ENTRY, lay.width());
    let out_ready = m.input(mp::OUT_READY, 1);
    let valid_o = m.output(mp::VALID, 1);
    let entry_o = m.output(mp::ENTRY, lay.width());
    let rem_o = m.output(mp::REM, rw);
    let done = m.output(mp::DONE, 1);
    let conflict_busy = m.output(mp::CONFLICT_BUSY, 1);
    let leave = m.output(mp::LEAVE, 1);
    let c = m.output(mp::C, rw);
    let mem0 = Latch::new(&mut m, lay, "mem0");
    let elapsed = m.reg("mem0_elapsed_q", rw, 0);

    m.section("spec §3.2 step 1: service time c = ceil(d/P) for SMEM, else 1");
    let det = m.instance("det", &det_module);
    m.assign(&det.input(detector::port::VALID), mem0.valid.clone());
    m.assign(&det.input(detector::port::LANE_MASK), mem0.e.act.clone());
    // Lane l's byte address (word address × 4) at bits [l·A +: A], lane 0 lowest.
    let lanes: Vec<Expr> = mem0
        .e
        .addr
        .iter()
        .rev()
        .map(|a| concat(&[a.clone(), Expr::lit(0, 2)]))
        .collect();
    m.assign(&det.input(detector::port::ADDR), concat_wide(&lanes));
    let det_cycles = det.output(detector::port::CYCLES);
    let sh = log2(key.det.ports) as usize;
    let ovr = m.wire(
        "deg_plus_p1",
        &mem0.e.deg + &Expr::lit(u64::from(key.det.ports) - 1, rw),
    );
    let ovr_cycles = ovr.slice(sh, rw - sh).zext(rw);
    let is_smem = mem0.e.kind.equals(&Expr::lit(Kind::Smem as u64, 2));
    let has_ovr = mem0.e.deg.any();
    let smem_c = has_ovr.mux(&ovr_cycles, &det_cycles);
    m.assign(&c, is_smem.mux(&smem_c, &Expr::lit(1, rw)));

    m.section("spec §3.2 step 1: rem = c - elapsed; done at rem = 1, else the entry stays");
    let rem = m.wire("mem0_rem_now", &c - &elapsed);
    m.assign(&done, &mem0.valid & &rem.equals(&Expr::lit(1, rw)));
    m.assign(&conflict_busy, &mem0.valid & &!done.clone());
    m.assign(&leave, &done & &out_ready);

    m.section("registers: rem counts down while > 1; a blocked finished entry stays at 1");
    mem0.update(&mut m, &in_valid, &lay.unpack(&in_entry), &leave);
    let restart = &in_valid | &leave;
    let next_elapsed = restart.mux(
        &Expr::lit(0, rw),
        &conflict_busy.mux(&(&elapsed + &Expr::lit(1, rw)), &elapsed),
    );
    m.next(&elapsed, next_elapsed);

    m.section("outputs");
    m.assign(&valid_o, mem0.valid.clone());
    m.assign(&entry_o, mem0.e.pack());
    m.assign(&rem_o, mem0.valid.mux(&rem, &Expr::lit(0, rw)));
    m
}

// --- WbMux<M> (spec §6; §3.2 step 2) -------------------------------------------------------------

/// Ports of [`wb_mux`] for source `s` (named as in [`src_name`]): `<s>_valid` (available),
/// `<s>_tag` and, with kinds, `<s>_kind` in (not for ICNT, which carries no entry), `sel_<s>` out
/// (one-hot).
mod wb_port {
    /// Some source wins: WB is loaded at this edge.
    pub const VALID: &str = "wb_valid";
    /// The winner as [`super::WbSrc`] (NONE when nothing wins).
    pub const SRC: &str = "wb_src";
    /// The winning entry's tag and (with kinds) kind, 0 for ICNT or none.
    pub const TAG: &str = "wb_tag";
    pub const KIND: &str = "wb_kind";
    /// A pipeline entry (not ICNT data) wins.
    pub const LOAD: &str = "wb_load";

    pub fn valid(src: &str) -> String {
        format!("{src}_valid")
    }
    pub fn tag(src: &str) -> String {
        format!("{src}_tag")
    }
    pub fn kind(src: &str) -> String {
        format!("{src}_kind")
    }
    pub fn sel(src: &str) -> String {
        format!("sel_{src}")
    }
}

/// `icnt`, `mem`, `nq`, `exe`, `nm`.
fn src_name(s: WbSrc) -> String {
    format!("{s:?}").to_lowercase()
}

/// `ICNT`, `MEM`, `NQ`, `EXE`, `NM`, as `wb_src` names them.
fn src_label(s: WbSrc) -> String {
    format!("{s:?}").to_uppercase()
}

/// Spec §6 `WbMux<M>`: step 2's fixed-priority select among `order` (highest first, ICNT first)
/// of `tw`-bit tags, with the [`wb_port`] ports: the one-hot selects and the loaded entry's tag,
/// kind (only `with_kind`: the scheduler-mode pipeline reports it) and `wb_src`. Combinational;
/// the WB registers are the parent's.
fn wb_mux(order: &[WbSrc], tw: usize, with_kind: bool) -> Module {
    use wb_port as wp;
    assert_eq!(order.first(), Some(&WbSrc::Icnt), "ICNT always wins");
    let names: Vec<String> = order.iter().map(|&s| src_name(s)).collect();
    let priority: Vec<String> = order.iter().map(|&s| src_label(s)).collect();
    let kinds = if with_kind { " and kind" } else { "" };
    let key = format!("WbMux: {}, tag {tw}{kinds}", priority.join(" > "));
    let mut m = sub_module("wbmux", &key);
    let mut avail = vec![];
    // Each source's (tag, kind); ICNT carries no entry.
    let mut entries = vec![];
    for (&src, name) in order.iter().zip(&names) {
        avail.push(m.input(&wp::valid(name), 1));
        entries.push(if src == WbSrc::Icnt {
            (Expr::lit(0, tw), Expr::lit(0, 2))
        } else {
            let tag = m.input(&wp::tag(name), tw);
            let kind = if with_kind {
                m.input(&wp::kind(name), 2)
            } else {
                Expr::lit(0, 2)
            };
            (tag, kind)
        });
    }
    let sel: Vec<Expr> = names.iter().map(|n| m.output(&wp::sel(n), 1)).collect();
    let valid = m.output(wp::VALID, 1);
    let src_o = m.output(wp::SRC, 3);
    let tag_o = m.output(wp::TAG, tw);
    let kind_o = with_kind.then(|| m.output(wp::KIND, 2));
    let load = m.output(wp::LOAD, 1);

    m.section("spec §3.2 step 2: the first available source in priority order wins");
    let mut taken = one(false);
    for k in 0..order.len() {
        m.assign(&sel[k], &avail[k] & &!taken.clone());
        taken = m.wire(&format!("taken_{}", names[k]), &taken | &sel[k]);
    }
    m.assign(&valid, taken.clone());
    m.assign(&load, &taken & &!sel[0].clone());

    m.section("the winner's tag, kind and wb_src code");
    let mut next_tag = Expr::lit(0, tw);
    let mut next_kind = Expr::lit(0, 2);
    let mut next_src = Expr::lit(WbSrc::None as u64, 3);
    for k in (0..order.len()).rev() {
        let (tag, kind) = &entries[k];
        next_tag = sel[k].mux(tag, &next_tag);
        next_kind = sel[k].mux(kind, &next_kind);
        next_src = sel[k].mux(&Expr::lit(order[k] as u64, 3), &next_src);
    }
    m.assign(&tag_o, next_tag);
    if let Some(kind_o) = kind_o {
        m.assign(&kind_o, next_kind);
    }
    m.assign(&src_o, next_src);
    m
}

/// One input of the WB MUX as the pipeline wires it.
struct WbInput {
    src: WbSrc,
    /// The source can write back (step 2's availability).
    avail: Expr,
    /// Its entry's tag and kind (none for ICNT; the kind only when WB reports it).
    tag_kind: Option<(Expr, Option<Expr>)>,
}

// --- The pipeline --------------------------------------------------------------------------------

/// What drives the pipeline (spec §6 `FrontEnd` `in_*`, `ElasticBackend` `icnt_valid`).
/// `in_valid` may depend on [`PipeOut::in_ready`] (declare it with [`Module::forward`]).
pub struct PipeIn {
    pub in_valid: Expr,
    /// The incoming entry as a packed bus ([`Layout`], see [`Entry::pack`]).
    pub in_entry: Expr,
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
    /// Only in the scheduler-mode pipeline (`pcw` > 0): the trace-mode top has no use for it.
    pub wb_load_kind: Option<Expr>,
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
    let mut m = Module::new(&crate::params::module_name(p));
    let (inp, out) = m.declare_ports(&ports(p));
    let io = pipe_in(&inp, None);
    logic(&mut m, p, 0, io).drive(&mut m, &out);
    m
}

/// Extra ports of the scheduler-mode pipeline ([`build_with_pc`]): the entry's PC in, and what
/// the BCAWS accumulator and the issue unit's completion logic read out (spec §6
/// `ElasticBackend` `mem0_leave(_entry)`, the WB load).
pub mod sched_port {
    pub const IN_PC: &str = "in_pc";
    /// The MEM0 entry leaves MEM0 at this edge, with its kind, tag, PC and service time c.
    pub const MEM0_LEAVE: &str = "mem0_leave";
    pub const MEM0_KIND: &str = "mem0_leave_kind";
    pub const MEM0_TAG: &str = "mem0_leave_tag";
    pub const MEM0_PC: &str = "mem0_leave_pc";
    pub const MEM0_C: &str = "mem0_leave_c";
    /// A pipeline entry (not ICNT data) is loaded into WB at this edge, with its tag and kind.
    pub const WB_LOAD: &str = "wb_entry_load";
    pub const WB_TAG: &str = "wb_entry_tag";
    pub const WB_KIND: &str = "wb_entry_kind";
}

/// The pipeline whose entries carry a `pcw`-bit PC, with the [`sched_port`] ports besides the
/// trace-mode ones: the `pipe` instance of `sm_core`.
pub fn build_with_pc(p: &Params, pcw: usize) -> Module {
    use sched_port as sp;
    let mut m = Module::new(&format!("{}_pc{pcw}", crate::params::module_name(p)));
    let mut all = ports(p);
    let mut add = |name: &str, dir: Dir, width: usize| {
        all.push(Port {
            name: name.into(),
            dir,
            width,
        })
    };
    add(sp::IN_PC, Dir::In, pcw);
    add(sp::MEM0_LEAVE, Dir::Out, 1);
    add(sp::MEM0_KIND, Dir::Out, 2);
    add(sp::MEM0_TAG, Dir::Out, p.tag_bits as usize);
    add(sp::MEM0_PC, Dir::Out, pcw);
    add(sp::MEM0_C, Dir::Out, p.rem_bits());
    add(sp::WB_LOAD, Dir::Out, 1);
    add(sp::WB_TAG, Dir::Out, p.tag_bits as usize);
    add(sp::WB_KIND, Dir::Out, 2);
    let (inp, out) = m.declare_ports(&all);
    let io = pipe_in(&inp, Some(&inp[sp::IN_PC]));
    let po = logic(&mut m, p, pcw, io);
    po.drive(&mut m, &out);
    let o = |name: &str| out[name].clone();
    m.assign(&o(sp::MEM0_LEAVE), po.mem0_leave);
    m.assign(&o(sp::MEM0_KIND), po.mem0.kind);
    m.assign(&o(sp::MEM0_TAG), po.mem0.tag);
    m.assign(&o(sp::MEM0_PC), po.mem0.pc.expect("entries carry a PC"));
    m.assign(&o(sp::MEM0_C), po.mem0_c);
    m.assign(&o(sp::WB_LOAD), po.wb_load);
    m.assign(&o(sp::WB_TAG), po.wb_load_tag);
    m.assign(
        &o(sp::WB_KIND),
        po.wb_load_kind
            .expect("the scheduler-mode WB reports kinds"),
    );
    m
}

/// The trace-mode inputs of [`ports`] (and the PC, if any) as the pipeline's [`PipeIn`]: the
/// entry ports packed as one bus (`in_addr` already holds lane l at `l·AW`).
fn pipe_in(inp: &std::collections::HashMap<String, Expr>, pc: Option<&Expr>) -> PipeIn {
    let i = |name: &str| inp[name].clone();
    PipeIn {
        in_valid: i(port::IN_VALID),
        in_entry: pack_fields(
            &i(port::IN_TAG),
            &i(port::IN_KIND),
            &i(port::IN_DEG),
            &i(port::IN_ACT),
            &[i(port::IN_ADDR)],
            pc,
        ),
        icnt_valid: i(port::ICNT_VALID),
    }
}

/// The pipeline's logic inside `m` (spec §3.2 steps 1–8, §3.3 causes); entries carry a PC of
/// `pcw` bits when `pcw` > 0. The §6 sub-blocks are instances (see the RTL overview above); the
/// backend glue is built here.
pub fn logic(m: &mut Module, p: &Params, pcw: usize, io: PipeIn) -> PipeOut {
    use fe_port as fp;
    use fifo_port as qp;
    use mem0_port as mp;
    use wb_port as wp;
    let mm = p.mem_stages as usize;
    let tw = p.tag_bits as usize;
    let lay = Layout::of(p, pcw);
    // The WB kind is reported by the scheduler-mode pipeline only (see PipeOut::wb_load_kind).
    let with_kind = pcw > 0;

    m.section("backend state: MEM1..MEM(M-1), NM0..NM(M-1) (Split), WB");
    let mem_tail: Vec<Latch> = (1..mm)
        .map(|k| Latch::new(m, lay, &format!("mem{k}")))
        .collect();
    let nm: Vec<Latch> = (0..p.nm_slots())
        .map(|k| Latch::new(m, lay, &format!("nm{k}")))
        .collect();
    let wb_valid = m.reg("wb_valid_q", 1, 0);
    let wb_icnt = m.reg("wb_icnt_q", 1, 0);
    let wb_tag = m.reg("wb_tag_q", tw, 0);
    let wb_src = m.reg("wb_src_q", 3, 0);

    m.section("spec §6 FrontEnd<fe_depth>: F, D1..Dk, EXE (step 7 inside)");
    let fe = m.instance("front_end", &Arc::new(front_end(lay, p.fe_depth as usize)));
    m.assign(&fe.input(fp::IN_VALID), io.in_valid);
    m.assign(&fe.input(fp::IN_ENTRY), io.in_entry);
    let exe_valid = fe.output(fp::EXE_VALID);
    let exe_bus = fe.output(fp::EXE_ENTRY);
    let exe = lay.unpack(&exe_bus);
    let exe_mem = m.wire("exe_is_mem", &exe_valid & &!exe.is_alu());
    let exe_alu = m.wire("exe_is_alu", &exe_valid & &exe.is_alu());

    m.section("spec §6 Mem0Stage: MEM0, rem and the bank-conflict detector (step 1 inside)");
    let mem0_i = m.instance("mem0_stage", &Arc::new(mem0_stage(&Mem0Key::of(p, pcw))));
    let mem0_valid = mem0_i.output(mp::VALID);
    let mem0 = lay.unpack(&mem0_i.output(mp::ENTRY));
    let mem0_done = mem0_i.output(mp::DONE);
    let mem0_leave = mem0_i.output(mp::LEAVE);
    // MEM0..MEM(M-1) as (valid, entry).
    let mut mem: Vec<(Expr, Entry)> = vec![(mem0_valid.clone(), mem0.clone())];
    mem.extend(mem_tail.iter().map(|l| (l.valid.clone(), l.e.clone())));

    let nq = (p.nq_slots() > 0).then(|| {
        m.section("spec §6 NonmemFifo<Q>: NQ, oldest first (Elastic)");
        let kind = FifoKind::Nonmem {
            max_age: u64::from(p.nonmem_min_age),
            head_kind: with_kind,
        };
        let fifo = fifo(kind, lay, p.nq_slots());
        m.instance("nonmem", &Arc::new(fifo))
    });

    m.section("spec §3.2 step 2: WB select (WbMux, fixed priority)");
    let a = p.nonmem_min_age;
    let mem_avail = if mm > 1 {
        mem[mm - 1].0.clone()
    } else {
        mem0_done.clone()
    };
    let entry_src = |src: WbSrc, avail: Expr, e: &Entry| WbInput {
        src,
        avail,
        tag_kind: Some((e.tag.clone(), with_kind.then(|| e.kind.clone()))),
    };
    // Highest priority first.
    let mut sources = vec![WbInput {
        src: WbSrc::Icnt,
        avail: io.icnt_valid.clone(),
        tag_kind: None,
    }];
    let mem_src = entry_src(WbSrc::Mem, mem_avail, &mem[mm - 1].1);
    let nq_src = nq.as_ref().map(|q| WbInput {
        src: WbSrc::Nq,
        avail: q.output(qp::HEAD_ELIGIBLE),
        tag_kind: Some((
            q.output(qp::HEAD_TAG),
            with_kind.then(|| q.output(qp::HEAD_KIND)),
        )),
    });
    match p.pipe_mode {
        PipeMode::Unified => sources.push(mem_src),
        PipeMode::Split => {
            sources.push(mem_src);
            let last = &nm[mm - 1];
            sources.push(entry_src(WbSrc::Nm, last.valid.clone(), &last.e));
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
                sources.push(entry_src(WbSrc::Exe, exe_alu.clone(), &exe));
            }
        }
    }
    let order: Vec<WbSrc> = sources.iter().map(|s| s.src).collect();
    let wbm = m.instance("wb_mux", &Arc::new(wb_mux(&order, tw, with_kind)));
    for s in &sources {
        let name = src_name(s.src);
        m.assign(&wbm.input(&wp::valid(&name)), s.avail.clone());
        if let Some((tag, kind)) = &s.tag_kind {
            m.assign(&wbm.input(&wp::tag(&name)), tag.clone());
            if let Some(kind) = kind {
                m.assign(&wbm.input(&wp::kind(&name)), kind.clone());
            }
        }
    }
    let sel_of = |s: WbSrc| {
        if order.contains(&s) {
            wbm.output(&wp::sel(&src_name(s)))
        } else {
            one(false)
        }
    };

    m.section("spec §3.2 step 3: MEM advance, rippling from MEM_last");
    let mut moves = vec![one(false); mm];
    let mut free = vec![one(false); mm];
    moves[mm - 1] = sel_of(WbSrc::Mem);
    for k in (1..mm).rev() {
        if k < mm - 1 {
            moves[k] = m.wire(&format!("mem{k}_moves"), &mem[k].0 & &free[k + 1]);
        }
        free[k] = m.wire(
            &format!("mem{k}_free"),
            !mem[k].0.clone() | moves[k].clone(),
        );
    }
    // MEM0 leaves iff done and its successor is free (M = 1: iff WB selected it).
    let out_ready = if mm > 1 {
        free[1].clone()
    } else {
        sel_of(WbSrc::Mem)
    };
    m.assign(&mem0_i.input(mp::OUT_READY), out_ready);
    moves[0] = mem0_leave.clone();
    free[0] = m.wire("mem0_free", !mem0_valid.clone() | mem0_leave.clone());
    let mem0_free = free[0].clone();

    m.section("spec §3.2 step 4: NQ dequeue (Elastic) or NM shift (Split)");
    let nq_room = match &nq {
        Some(q) => {
            m.assign(&q.input(qp::DEQ), sel_of(WbSrc::Nq));
            q.output(qp::ROOM)
        }
        None => one(false),
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

    let pre = (p.pre_slots() > 0).then(|| {
        m.section("spec §6 PremFifo<N>: PRE, oldest first (Elastic)");
        let fifo = fifo(FifoKind::Prem, lay, p.pre_slots());
        m.instance("premem", &Arc::new(fifo))
    });
    // MEM0 is free and no PRE entry has precedence (D11); without PRE, only MEM0 counts.
    let mem0_open = match &pre {
        Some(q) => !q.output(qp::HEAD_VALID) & mem0_free.clone(),
        None => mem0_free.clone(),
    };

    m.section("spec §3.2 step 5: EXE output");
    let (to_mem0, to_pre, to_nq, to_nm, to_wb) = match p.pipe_mode {
        PipeMode::Unified => (
            &exe_valid & &mem0_free,
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
            let bypass = m.wire("exe_bypass", &exe_mem & &mem0_open);
            // PRE-full uses the occupancy at the start of the cycle; without PRE, never.
            let to_pre = match &pre {
                Some(q) => &exe_mem & &(!bypass.clone() & !q.output(qp::FULL)),
                None => one(false),
            };
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
    m.assign(&fe.input(fp::EXE_ACCEPT), exe_leaves);
    if let Some(q) = &nq {
        m.assign(&q.input(qp::ENQ), to_nq);
        m.assign(&q.input(qp::ENQ_ENTRY), exe_bus.clone());
    }

    m.section("spec §3.2 step 6: PRE head -> MEM0, the MEM0 input MUX (D11)");
    let (mem0_load, mem0_in) = match &pre {
        Some(q) => {
            let pre_deq = m.wire("pre_deq", &q.output(qp::HEAD_VALID) & &mem0_free);
            m.assign(&q.input(qp::ENQ), to_pre);
            m.assign(&q.input(qp::ENQ_ENTRY), exe_bus.clone());
            m.assign(&q.input(qp::DEQ), pre_deq.clone());
            let head = lay.unpack(&q.output(qp::HEAD));
            (
                &to_mem0 | &pre_deq,
                Entry::mux(&pre_deq, &head, &exe).pack(),
            )
        }
        None => (to_mem0, exe_bus.clone()),
    };
    m.assign(&mem0_i.input(mp::IN_VALID), mem0_load);
    m.assign(&mem0_i.input(mp::IN_ENTRY), mem0_in);

    m.section("spec §3.2 steps 3-4 and 8: MEM1..MEM(M-1), NM and WB registers");
    for k in 1..mm {
        mem_tail[k - 1].update(m, &moves[k - 1], &mem[k - 1].1, &moves[k]);
    }
    for k in 0..nm.len() {
        let (load, input) = if k == 0 {
            (to_nm.clone(), exe.clone())
        } else {
            (nm_moves[k - 1].clone(), nm[k - 1].e.clone())
        };
        nm[k].update(m, &load, &input, &nm_moves[k]);
    }
    m.next(&wb_valid, wbm.output(wp::VALID));
    m.next(&wb_icnt, sel_of(WbSrc::Icnt));
    m.next(&wb_tag, wbm.output(wp::TAG));
    m.next(&wb_src, wbm.output(wp::SRC));

    m.section("spec §3.3 stall cause");
    let memlike = if p.pipe_mode == PipeMode::Unified {
        exe_valid.clone()
    } else {
        exe_mem.clone()
    };
    // (MEM0 valid ∧ rem > 1) ∨ (Elastic ∧ N > 0 ∧ p = N); PRE exists iff Elastic with N > 0.
    let conflict_busy = match &pre {
        Some(q) => &mem0_i.output(mp::CONFLICT_BUSY) | &q.output(qp::FULL),
        None => mem0_i.output(mp::CONFLICT_BUSY),
    };
    let conflict_busy = m.wire("mem0_busy", conflict_busy);
    let code = |c: Cause| Expr::lit(c as u64, 2);
    let mem_cause = conflict_busy.mux(&code(Cause::BankConflict), &code(Cause::Other));
    let alu_cause = sel_of(WbSrc::Mem).mux(&code(Cause::BankConflict), &code(Cause::Other));
    let fe_hold = fe.output(fp::FE_HOLD);
    let cause = fe_hold.mux(&memlike.mux(&mem_cause, &alu_cause), &code(Cause::None));

    // --- Outputs: the trace taps in stages() order -----------------------------------------
    let fe_taps = std::iter::once("f".to_string())
        .chain((1..=p.fe_depth).map(|k| format!("d{k}")))
        .map(|s| {
            let (v, t) = stage_ports(&s);
            (fe.output(&v), fe.output(&t))
        });
    let fifo_taps = |q: &Option<InstanceRef>, n: usize| -> Vec<(Expr, Expr)> {
        q.as_ref().map_or(vec![], |q| {
            (0..n)
                .map(|i| {
                    let (v, t) = qp::slot(i);
                    (q.output(&v), q.output(&t))
                })
                .collect()
        })
    };
    let latch_tap = |l: &Latch| (l.valid.clone(), l.shown_tag());
    let all: Vec<(Expr, Expr)> = fe_taps
        .chain(std::iter::once((
            exe_valid.clone(),
            shown_tag(&exe_valid, &exe.tag),
        )))
        .chain(fifo_taps(&pre, p.pre_slots()))
        .chain(std::iter::once((
            mem0_valid.clone(),
            shown_tag(&mem0_valid, &mem0.tag),
        )))
        .chain(mem_tail.iter().map(latch_tap))
        .chain(fifo_taps(&nq, p.nq_slots()))
        .chain(nm.iter().map(latch_tap))
        .collect();
    let stage_names = stages(p);
    assert_eq!(stage_names.len(), all.len(), "one tap per traced latch");
    let taps = stage_names
        .into_iter()
        .zip(all)
        .map(|(stage, (valid, tag))| (stage, valid, tag))
        .collect();
    let count_of = |q: &Option<InstanceRef>, n: usize| match q {
        Some(q) => q.output(qp::COUNT),
        None => Expr::lit(0, bits_for(n as u64)),
    };
    PipeOut {
        in_ready: fe.output(fp::IN_READY),
        fe_hold,
        cause,
        wb_valid,
        wb_icnt,
        wb_tag,
        wb_src,
        mem0_rem: mem0_i.output(mp::REM),
        pre_count: count_of(&pre, p.pre_slots()),
        nq_count: count_of(&nq, p.nq_slots()),
        taps,
        mem0_leave,
        mem0,
        mem0_c: mem0_i.output(mp::C),
        wb_load: wbm.output(wp::LOAD),
        wb_load_tag: wbm.output(wp::TAG),
        wb_load_kind: with_kind.then(|| wbm.output(wp::KIND)),
    }
}
