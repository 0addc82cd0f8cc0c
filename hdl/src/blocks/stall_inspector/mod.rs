//! `StallInspector`, GSI's stall classifier in hardware (docs/stall-inspector.md; Alsop et al.,
//! "GSI: A GPU Stall Inspector", seed 003, §IV). Every cycle each warp slot's predicates are
//! classified by Alg. 1 (strongest cause, in `warp_order`), the cycle by Alg. 2 (weakest cause,
//! memory first, in `cycle_order`), and the cycle is charged to its class. MEM_DATA cycles are
//! blamed on the lowest MEM_DATA warp and attributed to a memory level when that warp's load
//! returns (deferred attribution, docs §2); MEM_STRUCT cycles count by the LSU's stuck reason.
//! Every counter reads through `rd_addr` (docs §3.4); `status` holds sticky flags (docs §3.5).
//!
//! Structure (docs §3.6): NW instances of one per-warp classifier module (Alg. 1 as a priority
//! encoder), per-class OR trees and Alg. 2's encoder, two find-first-set trees (`md_sel`,
//! `ms_sel`), the blame register file (one incrementer at `md_sel`, a read port at
//! `ldwb_warp`), three counter banks behind one saturating adder each (`top`, `ms_sub`,
//! `md_sub`), the cycle / issue counters, optional per-class warp counters, and the read-out
//! mux. Every output is combinational in this cycle's inputs and the start-of-cycle registers.

mod classes;
mod parts;

pub use classes::{Class, CycleOrder, Scope, WarpOrder};
pub use parts::{classifier, counter_bank, find_first, mux_tree, popcount, PREDICATES};

use crate::netlist::{concat, mask, Expr, Module};
use crate::params::{
    allowed_of, bits_for, module_name, Allowed, BlockParams, Gpgpusim, ParamError,
};
use crate::ports::elem_name;
use std::collections::HashMap;
use std::sync::Arc;

/// Most warp slots: the spec's §4.1 stops at 64, the SM models have up to 96 (docs §4).
pub const MAX_NW: u32 = 128;

/// Memory-data sub-classes: the `src` codes of a load writeback (docs §1.3).
pub mod src {
    pub const L1: u64 = 0;
    pub const L1_COAL: u64 = 1;
    pub const L2: u64 = 2;
    pub const REMOTE_L1: u64 = 3;
    pub const MAIN_MEM: u64 = 4;
    /// Counted apart from L1 only with `split_local`.
    pub const LOCAL_SPM: u64 = 5;
    /// Reserved: counts as UNKNOWN.
    pub const RESERVED: u64 = 6;
    pub const UNKNOWN: u64 = 7;
}

/// Memory-structural sub-classes: the LSU's stuck reasons (docs §1.4).
pub mod reason {
    pub const NONE: u64 = 0;
    pub const MSHR_FULL: u64 = 1;
    pub const SB_FULL: u64 = 2;
    pub const BANK_CONFLICT: u64 = 3;
    pub const PENDING_RELEASE: u64 = 4;
    pub const PENDING_DMA: u64 = 5;
    pub const OTHER: u64 = 6;
}

/// Read-out addresses (docs §3.4).
pub mod addr {
    /// `top[c]` at 0x00 + c.
    pub const TOP: u64 = 0x00;
    /// `md_sub[src]` at 0x08 + src.
    pub const MD_SUB: u64 = 0x08;
    /// `ms_sub[reason]` at 0x10 + reason (1..=6).
    pub const MS_SUB: u64 = 0x10;
    pub const CYC_TOTAL: u64 = 0x18;
    pub const INST_ISSUED: u64 = 0x19;
    pub const STATUS: u64 = 0x1A;
    /// `wc[c]` at 0x20 + c (0 without `warp_counters`).
    pub const WC: u64 = 0x20;
}

/// Status bits (docs §3.5).
pub mod status {
    /// A counter add was clipped at 2^CW − 1.
    pub const COUNTER_SAT: u32 = 0;
    /// A blame add was clipped at 2^BW − 1.
    pub const BLAME_SAT: u32 = 1;
    /// A counted cycle with a ready warp and no issue.
    pub const READY_NOT_ISSUED: u32 = 2;
    /// A counted cycle with an issue and no ready warp.
    pub const ISSUED_NOT_READY: u32 = 3;
    /// A counted MEM_STRUCT cycle whose reason was 0 or 7.
    pub const BAD_REASON: u32 = 4;
    /// A `final` writeback for a warp whose `haz_load` is 0.
    pub const FINAL_WITHOUT_HAZARD: u32 = 5;
    /// The status register's width (bits 6, 7 of the port read 0).
    pub const BITS: usize = 6;
}

crate::block_params! {
    /// StallInspector parameters (docs/stall-inspector.md §3.1).
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct Params {
        /// Warp slots: per-warp predicate bits and blame counters.
        nw: u32 = 8, "NW", Allowed::Range(1, 128), "above 64, rd_addr is 8 bits and blame sits at 0x80 + w" => Gpgpusim::WarpSlots;
        /// Counter width: the class, sub-class, cycle and issue counters saturate at 2^CW - 1.
        cw: u32 = 32, "CW", Allowed::Range(8, 64), "at least BW; rd_data holds the 8 status bits";
        /// Blame counter width: blame saturates at 2^BW - 1.
        bw: u32 = 16, "BW", Allowed::Range(1, 64), "at most CW";
        /// Issue slots: n_issued is ceil(log2(IW+1)) bits.
        iw: u32 = 1, "IW", Allowed::Range(1, 16) => Gpgpusim::IssueSlots;
        /// Count LOCAL_SPM writebacks (src 5) apart from L1, in md_sub[5].
        split_local: bool = false, "split_local", Allowed::Bool;
        /// Per-class warp counters: wc[c] adds the number of warps of class c every counted cycle.
        warp_counters: bool = false, "warp_counters", Allowed::Bool;
        /// Alg. 1's tests after IDLE, strongest first.
        warp_order: WarpOrder = WarpOrder::paper(), "warp_order", Allowed::Json("paper, or CONTROL, SYNC, MEM_DATA, MEM_STRUCT, COMP_DATA, COMP_STRUCT in any order, comma-separated"), "e.g. sync,control,mem_data,mem_struct,comp_data,comp_struct";
        /// Alg. 2's rows after NO_STALL: the cycle takes the first class some warp has.
        cycle_order: CycleOrder = CycleOrder::paper(), "cycle_order", Allowed::Json("paper, or MEM_STRUCT, MEM_DATA, SYNC, COMP_STRUCT, COMP_DATA, CONTROL, IDLE in any order, comma-separated"), "e.g. idle,control,comp_data,comp_struct,sync,mem_data,mem_struct";
        /// One instance per SM (every warp, the SM's issue count) or per scheduler (its warps, its issue count); the block is the same.
        scope: Scope = Scope::PerSm, "scope", Allowed::Names(&["PerSm", "PerScheduler"]);
    }
}

impl Params {
    /// Warp-index width WB = max(1, ⌈log2 NW⌉) (`md_sel`, `ms_sel`, `ldwb_warp`).
    #[inline]
    pub fn wb(&self) -> usize {
        bits_for(u64::from(self.nw) - 1)
    }

    /// `n_issued` width IWB = ⌈log2(IW + 1)⌉.
    #[inline]
    pub fn iwb(&self) -> usize {
        bits_for(u64::from(self.iw))
    }

    /// `rd_addr` width: 7 (the spec's map) up to NW = 64, 8 above (docs §4).
    #[inline]
    pub fn addr_bits(&self) -> usize {
        if self.nw <= 64 {
            7
        } else {
            8
        }
    }

    /// Read-out address of `blame[0]`: 0x40, or 0x80 above NW = 64 (docs §3.4, §4).
    #[inline]
    pub fn blame_base(&self) -> u64 {
        if self.nw <= 64 {
            0x40
        } else {
            0x80
        }
    }

    /// The `md_sub` counters that exist: L1, L1_COAL, L2, REMOTE_L1, MAIN_MEM, UNKNOWN, and
    /// LOCAL_SPM with `split_local` (docs §3.4).
    pub fn md_sources(&self) -> Vec<u64> {
        let mut v = vec![
            src::L1,
            src::L1_COAL,
            src::L2,
            src::REMOTE_L1,
            src::MAIN_MEM,
        ];
        if self.split_local {
            v.push(src::LOCAL_SPM);
        }
        v.push(src::UNKNOWN);
        v
    }

    /// The `ms_sub` counters: MSHR_FULL ..= OTHER (docs §3.4).
    pub fn ms_reasons(&self) -> Vec<u64> {
        (reason::MSHR_FULL..=reason::OTHER).collect()
    }

    /// `src` as `md_sub` counts it (docs §3.3 `norm_s`): 6 → UNKNOWN, LOCAL_SPM → L1 unless
    /// `split_local`.
    #[inline]
    pub fn norm_src(&self, s: u64) -> u64 {
        match s & 7 {
            src::RESERVED => src::UNKNOWN,
            src::LOCAL_SPM if !self.split_local => src::L1,
            s => s,
        }
    }
}

impl BlockParams for Params {
    const BLOCK: &'static str = "stall_inspector";

    /// `default` (NW = 8) and `paper` (NW = 48, the GTX 480's warps) first, then what the
    /// co-simulation contract names (docs §3.1): NW = 1, 4, 96, non-default orders, and small
    /// widths where saturation is within a random case's reach.
    fn presets() -> Vec<(&'static str, Self)> {
        let d = Params::default();
        let nw = |nw: u32| Params { nw, ..d.clone() };
        let compute_first = Params {
            warp_order: "control,sync,comp_data,comp_struct,mem_data,mem_struct"
                .parse()
                .expect("order"),
            cycle_order: "comp_struct,comp_data,mem_struct,mem_data,sync,control,idle"
                .parse()
                .expect("order"),
            ..d.clone()
        };
        let reversed = Params {
            nw: 4,
            warp_order: "comp_struct,comp_data,mem_struct,mem_data,sync,control"
                .parse()
                .expect("order"),
            cycle_order: "idle,control,comp_data,comp_struct,sync,mem_data,mem_struct"
                .parse()
                .expect("order"),
            ..d.clone()
        };
        let small = Params {
            nw: 5,
            cw: 8,
            bw: 4,
            iw: 3,
            split_local: true,
            warp_counters: true,
            ..d.clone()
        };
        vec![
            ("default", d.clone()),
            ("paper", nw(48)),
            ("nw1", nw(1)),
            ("nw4", nw(4)),
            ("nw96", nw(96)),
            ("compute_first", compute_first),
            ("reversed", reversed),
            ("small", small),
        ]
    }

    fn check(&self) -> Result<(), ParamError> {
        if self.bw > self.cw {
            return Err(ParamError::Range {
                name: "BW".into(),
                value: self.bw.to_string(),
                allowed: format!("at most CW = {} (rd_data reads a blame counter)", self.cw),
            });
        }
        if !self.warp_order.is_permutation() {
            return Err(ParamError::Range {
                name: "warp_order".into(),
                value: self.warp_order.to_string(),
                allowed: allowed_of::<Params>("warp_order"),
            });
        }
        if !self.cycle_order.is_permutation() {
            return Err(ParamError::Range {
                name: "cycle_order".into(),
                value: self.cycle_order.to_string(),
                allowed: allowed_of::<Params>("cycle_order"),
            });
        }
        Ok(())
    }
}

crate::ports! {
    Params as p;
    let nw = p.nw as usize;
    let wb = p.wb();
    inputs {
        /// Kernel active: the cycle is counted.
        en[1]: bool,
        /// Synchronous zeroing of every counter, blame and status; the cycle is not counted.
        clear[1]: bool,
        /// Per warp: launched and not exited.
        active[1; nw]: bool,
        /// Per warp: the next instruction is available (valid buffer head, matching PC).
        inst_avail[1; nw]: bool,
        /// Per warp: waiting at a barrier, fence, acquire / release or atomic.
        sync_wait[1; nw]: bool,
        /// Per warp: the head instruction depends on a pending load.
        haz_load[1; nw]: bool,
        /// Per warp: the head instruction depends on a pending compute op.
        haz_comp[1; nw]: bool,
        /// Per warp: the head instruction is a memory instruction.
        is_mem[1; nw]: bool,
        /// Per warp: the LSU cannot take the memory instruction.
        ms_block[1; nw]: bool,
        /// Per warp: the head's compute unit is busy.
        fu_block[1; nw]: bool,
        /// Per warp: the LSU's stuck reason (docs §1.4), ms_reason_<w>.
        ms_reason[3; nw, each],
        /// Instructions issued this cycle.
        n_issued[p.iwb()],
        /// A load writeback this cycle.
        ldwb_valid[1]: bool,
        /// Its warp.
        ldwb_warp[wb],
        /// Where its data came from (docs §1.3).
        ldwb_src[3],
        /// It clears the warp's last load hazard.
        ldwb_final[1]: bool,
        /// Read-out address (docs §3.4).
        rd_addr[p.addr_bits()],
    }
    outputs {
        /// The cycle's class (Alg. 2).
        cls[3],
        /// Per warp: its class (Alg. 1), wcls_<w>.
        wcls[3; nw, each],
        /// The lowest MEM_DATA warp (0 if none).
        md_sel[wb],
        /// The lowest MEM_STRUCT warp (0 if none).
        ms_sel[wb],
        /// ms_reason of ms_sel, normalised, when cls = MEM_STRUCT; else 0.
        ms_cyc_reason[3],
        /// A blame flush into md_sub this cycle.
        flush_valid[1]: bool,
        /// Its sub-class (0 when not valid).
        flush_src[3],
        /// Its amount (0 when not valid).
        flush_amt[p.bw as usize],
        /// The register at rd_addr (combinational read).
        rd_data[p.cw as usize],
        /// Sticky flags (docs §3.5), registered.
        status[8],
    }
}

impl crate::Block for Params {
    fn build(&self) -> Module {
        build(self)
    }
    #[cfg(feature = "faults")]
    const FAULTS: &'static [crate::faults::Fault] = &[
        faults::FLUSH_MISSES_SAME_CYCLE,
        faults::MS_REASON_UNNORMALISED,
    ];
}

/// Planted faults (docs/blocks.md §4).
#[cfg(feature = "faults")]
pub mod faults {
    use crate::faults::Fault;

    /// A `final` writeback flushes `R.blame[w]` without the MEM_DATA cycle charged to w in
    /// the same cycle (docs §2: both can happen in one cycle); breaks I5.
    pub const FLUSH_MISSES_SAME_CYCLE: Fault = Fault {
        block: "stall_inspector",
        name: "flush_misses_same_cycle",
        what: "a final writeback flushes R.blame[w] without this cycle's charge to w (§2, I5)",
        port: super::port::FLUSH_VALID,
        // One MEM_DATA cycle of warp 0 with its final writeback (blame 0: no flush at all).
        within: 4,
    };

    /// `ms_cyc_reason` passes reason 7 through instead of OTHER (norm_r, docs §3.3); the count
    /// is lost (no ms_sub[7]), which breaks I4.
    pub const MS_REASON_UNNORMALISED: Fault = Fault {
        block: "stall_inspector",
        name: "ms_reason_unnormalised",
        what: "ms_cyc_reason keeps reason 7 instead of OTHER (norm_r, §3.3, I4)",
        port: super::port::MS_CYC_REASON,
        within: 4,
    };
}

/// The cycle-level signals of Alg. 2 (docs §3.3) the update logic reads.
struct Cycle {
    en: Expr,
    clear: Expr,
    cls: Expr,
    is_ms: Expr,
    issued: Expr,
    ready: Expr,
    md_sel: Expr,
    /// `ms_reason[ms_sel]` before normalisation.
    raw_reason: Expr,
    ms_cyc_reason: Expr,
    /// Per class (by code), the NW one-bit "warp w has this class" signals.
    hot: Vec<Vec<Expr>>,
}

/// The blame file's results (docs §2, §3.3).
struct Blame {
    regs: Vec<Expr>,
    sat: Expr,
    fl: Expr,
    flush_valid: Expr,
    flush_src: Expr,
    flush_amt: Expr,
    /// `haz_load[ldwb_warp]`.
    haz_fw: Expr,
}

/// Builds the StallInspector's RTL from validated params (docs §3.3, §3.6).
pub fn build(p: &Params) -> Module {
    let name = module_name(p);
    let mut m = Module::new(&name);
    m.cites(crate::blocks::docs::STALL_INSPECTOR);
    let (inp, out) = m.declare_ports(&ports(p));
    let child = Arc::new(classifier(&format!("{name}_wcls"), &p.warp_order));
    let c = cycle_class(&mut m, p, &inp, &out, &child);
    let b = blame_file(&mut m, p, &inp, &out, &c);
    let mut readable: Vec<(u64, Expr)> = vec![];
    let counter_sat = counters(&mut m, p, &inp, &c, &b, &mut readable);
    m.section("§3.5: status (sticky; clear first)");
    let st = m.reg("status_q", status::BITS, 0);
    let flags = [
        counter_sat,
        b.sat.clone(),
        &c.en & &(&c.ready & &!&c.issued),
        &c.en & &(&c.issued & &!&c.ready),
        &c.en & &(&c.is_ms & &bad_reason(&c.raw_reason)),
        &b.fl & &!&b.haz_fw,
    ];
    let raised = m.wire(
        "status_raised",
        concat(&flags.into_iter().rev().collect::<Vec<_>>()),
    );
    m.next(
        &st,
        c.clear.mux(&Expr::lit(0, status::BITS), &(&st | &raised)),
    );
    m.assign(&out[port::STATUS], st.zext(8));
    readable.push((addr::STATUS, st.zext(p.cw as usize)));
    for (w, r) in b.regs.iter().enumerate() {
        readable.push((p.blame_base() + w as u64, r.zext(p.cw as usize)));
    }
    readout(&mut m, p, &inp, &out, &readable);
    m
}

/// `ms_reason` 0 or 7: not a reason (status bit 4; `norm_r` makes it OTHER).
fn bad_reason(r: &Expr) -> Expr {
    r.equals(&Expr::lit(reason::NONE, 3)) | r.equals(&Expr::lit(7, 3))
}

/// Alg. 1 per warp (classifier instances) and Alg. 2 per cycle, `md_sel`, `ms_sel` and
/// `ms_cyc_reason` (docs §3.3).
fn cycle_class(
    m: &mut Module,
    p: &Params,
    inp: &HashMap<String, Expr>,
    out: &HashMap<String, Expr>,
    child: &Arc<Module>,
) -> Cycle {
    let (nw, wb) = (p.nw as usize, p.wb());
    let i = |n: &str| inp[n].clone();
    m.section("§3.3: Alg. 1 per warp slot (one classifier each)");
    let mut hot: Vec<Vec<Expr>> = vec![vec![]; 8];
    for w in 0..nw {
        let inst = m.instance(&format!("warp{w}"), child);
        for pred in PREDICATES {
            m.assign(&inst.input(pred), inp[pred].bit(w));
        }
        m.assign(&out[&elem_name(port::WCLS, w)], inst.output("wcls"));
        let h = inst.output("hot");
        for (c, v) in hot.iter_mut().enumerate() {
            v.push(h.bit(c));
        }
    }
    m.section("§3.3: Alg. 2: per-class OR trees, then cycle_order");
    let any: Vec<Expr> = Class::ALL
        .iter()
        .map(|&c| {
            let e = match c {
                // IDLE at cycle level: no warp active (D4).
                Class::Idle => {
                    let bits: Vec<Expr> = (0..nw).map(|w| inp[port::ACTIVE].bit(w)).collect();
                    !parts::or_bits(&bits)
                }
                _ => parts::or_bits(&hot[c as usize]),
            };
            m.wire(&format!("any_{}", c.name().to_ascii_lowercase()), e)
        })
        .collect();
    let ready = any[Class::NoStall as usize].clone();
    let iwb = p.iwb();
    let issued = m.wire("issued", !i(port::N_ISSUED).equals(&Expr::lit(0, iwb)));
    let lit = |c: Class| Expr::lit(c.code(), 3);
    let chain = p
        .cycle_order
        .0
        .iter()
        .rev()
        .fold(lit(Class::Idle), |acc, &c| {
            any[c as usize].mux(&lit(c), &acc)
        });
    let cls = m.wire("cls_w", issued.mux(&lit(Class::NoStall), &chain));
    m.assign(&out[port::CLS], cls.clone());
    m.section("§3.3: md_sel, ms_sel: lowest warp of the class");
    let (_, md_sel) = find_first(m, "md_sel", &hot[Class::MemData as usize], wb);
    let (_, ms_sel) = find_first(m, "ms_sel", &hot[Class::MemStruct as usize], wb);
    m.assign(&out[port::MD_SEL], md_sel.clone());
    m.assign(&out[port::MS_SEL], ms_sel.clone());
    m.section("§3.3: ms_cyc_reason = norm_r(ms_reason[ms_sel])");
    let reasons: Vec<Option<Expr>> = (0..nw)
        .map(|w| Some(i(&elem_name(port::MS_REASON, w))))
        .collect();
    let raw = mux_tree(m, "ms_reason_at", &ms_sel, &reasons, 3);
    let raw_reason = m.wire("ms_reason_sel", raw);
    let is_ms = m.wire("is_ms", cls.equals(&lit(Class::MemStruct)));
    let other = Expr::lit(reason::OTHER, 3);
    let normalised = crate::planted!(
        faults::MS_REASON_UNNORMALISED,
        raw_reason
            .equals(&Expr::lit(reason::NONE, 3))
            .mux(&other, &raw_reason),
        bad_reason(&raw_reason).mux(&other, &raw_reason)
    );
    let ms_cyc_reason = m.wire("ms_cyc_reason_w", is_ms.mux(&normalised, &Expr::lit(0, 3)));
    m.assign(&out[port::MS_CYC_REASON], ms_cyc_reason.clone());
    Cycle {
        en: i(port::EN),
        clear: i(port::CLEAR),
        cls,
        is_ms,
        issued,
        ready,
        md_sel,
        raw_reason,
        ms_cyc_reason,
        hot,
    }
}

/// The blame registers, the flush of a `final` writeback and its outputs (docs §2, §3.3): one
/// incrementer at `md_sel`, a read port at `ldwb_warp`.
fn blame_file(
    m: &mut Module,
    p: &Params,
    inp: &HashMap<String, Expr>,
    out: &HashMap<String, Expr>,
    c: &Cycle,
) -> Blame {
    let (nw, wb, bw) = (p.nw as usize, p.wb(), p.bw as usize);
    let i = |n: &str| inp[n].clone();
    m.section("§2, §3.3: blame registers, one per warp slot");
    let regs: Vec<Expr> = (0..nw)
        .map(|w| m.reg(&format!("blame_q_{w}"), bw, 0))
        .collect();
    let items: Vec<Option<Expr>> = regs.iter().cloned().map(Some).collect();
    let is_md = c.cls.equals(&Expr::lit(Class::MemData.code(), 3));
    let inc = m.wire("blame_charge", &c.en & &is_md);
    let at_md = mux_tree(m, "blame_at_md", &c.md_sel, &items, bw);
    let at_md = m.wire("blame_md", at_md);
    let full = m.wire("blame_md_full", at_md.equals(&Expr::lit(mask(bw), bw)));
    let plus = m.wire(
        "blame_md_inc",
        full.mux(&at_md, &(&at_md + &Expr::lit(1, bw))),
    );
    let sat = m.wire("blame_sat", &inc & &full);
    m.section("§2, §3.3: the flush of a final writeback");
    let fw = i(port::LDWB_WARP);
    let in_range = if nw == 1 << wb {
        Expr::lit(1, 1)
    } else {
        fw.lt(&Expr::lit(nw as u64, wb))
    };
    let fl = m.wire(
        "fl",
        &i(port::LDWB_VALID) & &(&i(port::LDWB_FINAL) & &in_range),
    );
    let at_fw = mux_tree(m, "blame_at_fw", &fw, &items, bw);
    let at_fw = m.wire("blame_fw", at_fw);
    let hit = m.wire("flush_hit", &inc & &fw.equals(&c.md_sel));
    let amt = crate::planted!(
        faults::FLUSH_MISSES_SAME_CYCLE,
        at_fw.clone(),
        hit.mux(&plus, &at_fw)
    );
    let amt = m.wire("amt", amt);
    let flush_valid = m.wire("flush_valid_w", &fl & &!amt.equals(&Expr::lit(0, bw)));
    let s = i(port::LDWB_SRC);
    let lit3 = |v: u64| Expr::lit(v, 3);
    let local = if p.split_local {
        s.clone()
    } else {
        s.equals(&lit3(src::LOCAL_SPM)).mux(&lit3(src::L1), &s)
    };
    let norm = s
        .equals(&lit3(src::RESERVED))
        .mux(&lit3(src::UNKNOWN), &local);
    let flush_src = m.wire("flush_src_w", flush_valid.mux(&norm, &lit3(0)));
    let flush_amt = m.wire("flush_amt_w", flush_valid.mux(&amt, &Expr::lit(0, bw)));
    m.assign(&out[port::FLUSH_VALID], flush_valid.clone());
    m.assign(&out[port::FLUSH_SRC], flush_src.clone());
    m.assign(&out[port::FLUSH_AMT], flush_amt.clone());
    let haz: Vec<Option<Expr>> = (0..nw).map(|w| Some(inp[port::HAZ_LOAD].bit(w))).collect();
    let haz_fw = mux_tree(m, "haz_at_fw", &fw, &haz, 1);
    let haz_fw = m.wire("haz_fw", haz_fw);
    m.section("§3.3: blame next state (clear, flush, charge)");
    let zero = Expr::lit(0, bw);
    for (w, r) in regs.iter().enumerate() {
        let me = Expr::lit(w as u64, wb);
        let flushed = &fl & &fw.equals(&me);
        let charged = &inc & &c.md_sel.equals(&me);
        let next = c
            .clear
            .mux(&zero, &flushed.mux(&zero, &charged.mux(&plus, r)));
        m.next(r, next);
    }
    Blame {
        regs,
        sat,
        fl,
        flush_valid,
        flush_src,
        flush_amt,
        haz_fw,
    }
}

/// `reg + amt` saturating at 2^w − 1 when `en`, else `reg`; returns (next, clipped).
fn sat_add(m: &mut Module, name: &str, reg: &Expr, amt: &Expr, en: &Expr) -> (Expr, Expr) {
    let w = reg.width();
    let amt = amt.zext(w);
    let clipped = m.wire(&format!("{name}_clip"), en & &(!reg).lt(&amt));
    let sum = clipped.mux(&Expr::lit(mask(w), w), &(reg + &amt));
    (en.mux(&sum, reg), clipped)
}

/// The counters (docs §3.3): the `top`, `ms_sub` and `md_sub` banks, `cyc_total`,
/// `inst_issued` and the optional `wc`; pushes each onto `readable` at its address and returns
/// the "a counter add was clipped" flag.
fn counters(
    m: &mut Module,
    p: &Params,
    inp: &HashMap<String, Expr>,
    c: &Cycle,
    b: &Blame,
    readable: &mut Vec<(u64, Expr)>,
) -> Expr {
    let (cw, bw) = (p.cw as usize, p.bw as usize);
    let name = m.name.clone();
    let mut clips = vec![];
    let banks = [
        ("top", 1, (0..8).collect::<Vec<u64>>(), addr::TOP),
        ("ms_sub", 1, p.ms_reasons(), addr::MS_SUB),
        ("md_sub", bw, p.md_sources(), addr::MD_SUB),
    ];
    for (bank, amt_bits, indices, base) in banks {
        m.section(&format!("§3.3: {bank} counters (one saturating adder)"));
        let child = Arc::new(counter_bank(
            &format!("{name}_{bank}"),
            cw,
            amt_bits,
            &indices,
        ));
        let inst = m.instance(bank, &child);
        let (inc, idx, amt) = match bank {
            "top" => (c.en.clone(), c.cls.clone(), Expr::lit(1, 1)),
            "ms_sub" => (&c.en & &c.is_ms, c.ms_cyc_reason.clone(), Expr::lit(1, 1)),
            _ => (
                b.flush_valid.clone(),
                b.flush_src.clone(),
                b.flush_amt.clone(),
            ),
        };
        m.assign(&inst.input("clear"), c.clear.clone());
        m.assign(&inst.input("inc"), inc);
        m.assign(&inst.input("idx"), idx);
        m.assign(&inst.input("amt"), amt);
        clips.push(inst.output("sat"));
        for k in indices {
            readable.push((base + k, inst.output(&format!("cnt_{k}"))));
        }
    }
    m.section("§3.3: cyc_total, inst_issued");
    let zero = Expr::lit(0, cw);
    let cyc = m.reg("cyc_total_q", cw, 0);
    let (next, clip) = sat_add(m, "cyc_total", &cyc, &Expr::lit(1, 1), &c.en);
    m.next(&cyc, c.clear.mux(&zero, &next));
    clips.push(clip);
    readable.push((addr::CYC_TOTAL, cyc));
    let inst = m.reg("inst_issued_q", cw, 0);
    let (next, clip) = sat_add(m, "inst_issued", &inst, &inp[port::N_ISSUED], &c.en);
    m.next(&inst, c.clear.mux(&zero, &next));
    clips.push(clip);
    readable.push((addr::INST_ISSUED, inst));
    if p.warp_counters {
        m.section("§3.3: wc[c] += warps of class c");
        let width = bits_for(u64::from(p.nw));
        for cl in Class::ALL {
            let lower = cl.name().to_ascii_lowercase();
            let n = popcount(m, &format!("n_{lower}"), &c.hot[cl as usize], width);
            let n = m.wire(&format!("n_{lower}"), n);
            let r = m.reg(&format!("wc_q_{lower}"), cw, 0);
            let (next, clip) = sat_add(m, &format!("wc_{lower}"), &r, &n, &c.en);
            m.next(&r, c.clear.mux(&zero, &next));
            clips.push(clip);
            readable.push((addr::WC + cl.code(), r));
        }
    }
    let any = parts::or_bits(&clips);
    m.wire("counter_sat", any)
}

/// `rd_data` = the register at `rd_addr` (docs §3.4): a mux tree over the low 64 addresses,
/// one over the blame registers, 0 elsewhere.
fn readout(
    m: &mut Module,
    p: &Params,
    inp: &HashMap<String, Expr>,
    out: &HashMap<String, Expr>,
    readable: &[(u64, Expr)],
) {
    let cw = p.cw as usize;
    let base = p.blame_base();
    let a = inp[port::RD_ADDR].clone();
    m.section("§3.4: the read-out map");
    let mut low: Vec<Option<Expr>> = vec![None; 64];
    let mut blame: Vec<Option<Expr>> = vec![];
    for (at, e) in readable {
        if *at < 0x40 {
            low[*at as usize] = Some(e.clone());
        } else {
            blame.push(Some(e.clone()));
            assert_eq!(*at, base + blame.len() as u64 - 1, "blame in warp order");
        }
    }
    let low = mux_tree(m, "rd_low", &a.slice(0, 6), &low, cw);
    let low = m.wire("rd_low", low);
    let hi = p.addr_bits() - 1;
    let blame = mux_tree(m, "rd_blame", &a.slice(0, hi), &blame, cw);
    let blame = m.wire("rd_blame", blame);
    let zero = Expr::lit(0, cw);
    let lower = if hi == 6 {
        low
    } else {
        // NW > 64: 0x40..0x7F read 0 (docs §4).
        a.bit(6).mux(&zero, &low)
    };
    m.assign(&out[port::RD_DATA], a.bit(hi).mux(&blame, &lower));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_follow_the_formula() {
        for (name, p) in Params::presets() {
            let cw = u64::from(p.cw);
            let want = (22 + p.split_local as u64) * cw
                + u64::from(p.nw) * u64::from(p.bw)
                + 6
                + if p.warp_counters { 8 * cw } else { 0 };
            assert_eq!(build(&p).register_bits(), want, "{name}");
        }
        let paper = Params::resolve(Some("paper"), &[]).unwrap();
        assert_eq!(build(&Params::default()).register_bits(), 838);
        assert_eq!(build(&paper).register_bits(), 1478);
    }

    #[test]
    fn ports_follow_the_spec() {
        let p = Params::default();
        assert_eq!(build(&p).ports(), ports(&p));
        let width = |p: &Params, n: &str| ports(p).into_iter().find(|x| x.name == n).unwrap().width;
        assert_eq!(
            [
                "active",
                "ms_reason_7",
                "wcls_0",
                "md_sel",
                "rd_addr",
                "rd_data",
                "flush_amt"
            ]
            .map(|n| width(&p, n)),
            [8, 3, 3, 3, 7, 32, 16]
        );
        assert!(ports(&p).iter().all(|x| x.name != "ms_reason_8"));
        let wide = Params::resolve(Some("nw96"), &[]).unwrap();
        assert_eq!(
            ["active", "ldwb_warp", "rd_addr", "wcls_95"].map(|n| width(&wide, n)),
            [96, 7, 8, 3]
        );
        let one = Params::resolve(Some("nw1"), &[]).unwrap();
        assert_eq!((one.wb(), width(&one, "md_sel")), (1, 1));
        let small = Params::resolve(Some("small"), &[]).unwrap();
        assert_eq!((small.iwb(), small.wb()), (2, 3));
    }

    #[test]
    fn params_parse_and_check() {
        let p = Params::resolve_pairs(
            None,
            &[(
                "cycle_order",
                "comp_data,comp_struct,mem_struct,mem_data,sync,control,idle",
            )],
        )
        .unwrap();
        assert_eq!(p.cycle_order.0[0], Class::CompData);
        let e = Params::resolve_pairs(None, &[("warp_order", "sync,control")]).unwrap_err();
        assert!(e.to_string().contains("warp_order"), "{e}");
        let e = Params::resolve_pairs(None, &[("CW", "8")]).unwrap_err();
        assert!(e.to_string().contains("at most CW"), "{e}");
        assert!(Params::resolve_pairs(None, &[("NW", "129")]).is_err());
        let s = Params::resolve_pairs(None, &[("scope", "PerScheduler")]).unwrap();
        assert_eq!(s.scope, Scope::PerScheduler);
        for (name, p) in Params::presets() {
            assert!(p.validate().is_ok(), "{name}");
        }
    }
}
