//! Hardware cost of the Elastic Pipeline (docs/elastic-pipeline.md §7, Table 2): Yosys generic
//! figures of the Elastic and the Unified build of the same params, their difference, and the
//! paper's Table 2 figure beside it.
//!
//! The RTL is the co-simulation build (spec §6, D23): every pipeline latch carries only the §2
//! entry fields (valid, tag, kind, deg, act and addr per lane), not the cost build's datapath
//! (32-bit result or store data per lane, warp/sw/pc/dst). The difference is therefore expressed
//! in "lane latches" of *our* per-lane entry width ([`Overhead::entry_bits_per_lane`]) rather
//! than of the paper's 32-bit lanes; [`Overhead::notes`] spells out what it is made of.

use crate::yosys::{self, GenericReport};
use serde::Serialize;
use smrtl_hdl::blocks::elastic_pipeline::{build, Params, PipeMode};
use smrtl_hdl::params::bits_for;
use smrtl_hdl::tools::ToolError;
use std::sync::Arc;

/// Register bits of one build as `smrtl_hdl::blocks::elastic_pipeline::build` writes them, counted from
/// the params.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Registers {
    /// Bits of one pipeline latch: valid 1 + tag + kind 2 + deg lg(L+1) + act L + addr L·AW.
    pub latch_bits: u64,
    /// Pipeline latches: F, D×fe_depth, EXE, PRE×N, MEM×M, NQ×Q (Elastic), NM×M (Split).
    pub latches: u64,
    /// NQ age registers (Elastic with `nonmem_min_age` > 0): Q × lg(a+1).
    pub age_bits: u64,
    /// MEM0's elapsed-service counter, lg(L+1).
    pub mem0_elapsed_bits: u64,
    /// WB registers: valid 1 + icnt 1 + tag + src 3.
    pub wb_bits: u64,
    /// All register bits.
    pub total: u64,
}

impl Registers {
    /// Counts for `p`.
    pub fn of(p: &Params) -> Registers {
        let lanes = u64::from(p.lanes);
        let tag = u64::from(p.tag_bits);
        let rem = p.rem_bits() as u64;
        let latch_bits = 1 + tag + 2 + rem + lanes + lanes * u64::from(p.addr_bits);
        let latches = 1
            + u64::from(p.fe_depth)
            + 1
            + (p.pre_slots() + p.nq_slots() + p.nm_slots()) as u64
            + u64::from(p.mem_stages);
        let age_bits = if p.nonmem_min_age > 0 {
            p.nq_slots() as u64 * bits_for(u64::from(p.nonmem_min_age)) as u64
        } else {
            0
        };
        let wb_bits = 1 + 1 + tag + 3;
        Registers {
            latch_bits,
            latches,
            age_bits,
            mem0_elapsed_bits: rem,
            wb_bits,
            total: latches * latch_bits + age_bits + rem + wb_bits,
        }
    }
}

impl crate::BlockCost for Params {
    fn cost_notes(&self) -> Result<crate::Notes, ToolError> {
        notes(self)
    }
    /// [`Registers::total`]: every latch of the co-simulation build, the NQ ages, the MEM0
    /// elapsed counter and the WB registers.
    fn register_inventory(&self) -> Option<u64> {
        Some(Registers::of(self).total)
    }
}

/// The paper's Table 2 overhead for M, N, L.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Table2 {
    /// M + N SIMD pipeline latches (M NONMEM + N PREMEM).
    pub simd_latches: u32,
    /// (M + N) · L single-lane latches (56 at M = 4, N = 3, L = 8).
    pub lane_latches: u32,
    /// WB MUX inputs, M + 3.
    pub wb_mux_inputs: u32,
    /// 2:1 MUXes per bit of the WB MUX, M + 2.
    pub wb_mux_2to1_per_bit: u32,
    /// MEM0 input MUX inputs, N + 1.
    pub mem0_mux_inputs: u32,
    /// 2:1 MUXes per bit of the MEM0 MUX, N.
    pub mem0_mux_2to1_per_bit: u32,
}

impl Table2 {
    /// Table 2 for `p`.
    pub fn of(p: &Params) -> Table2 {
        let (m, n) = (p.mem_stages, p.premem_depth);
        Table2 {
            simd_latches: m + n,
            lane_latches: (m + n) * p.lanes,
            wb_mux_inputs: m + 3,
            wb_mux_2to1_per_bit: m + 2,
            mem0_mux_inputs: n + 1,
            mem0_mux_2to1_per_bit: n,
        }
    }
}

/// One figure for both builds and Elastic minus Unified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Delta {
    pub elastic: u64,
    pub unified: u64,
    pub difference: i64,
}

impl Delta {
    fn new(elastic: u64, unified: u64) -> Delta {
        Delta {
            elastic,
            unified,
            difference: elastic as i64 - unified as i64,
        }
    }
}

/// One build's register inventory and Yosys generic report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Build {
    pub params: Params,
    pub registers: Registers,
    pub generic: GenericReport,
}

/// Elastic minus Unified for one set of params, beside the paper's Table 2.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Overhead {
    pub elastic: Build,
    pub unified: Build,
    /// Register bits as written in the RTL (before Yosys removes unread bits).
    pub rtl_ff_bits: Delta,
    /// Flip-flop bits after synthesis.
    pub ff_bits: Delta,
    /// All generic cells after synthesis.
    pub cells: Delta,
    /// `$_MUX_` cells after synthesis.
    pub mux_cells: Delta,
    pub paper: Table2,
    /// Our latch width divided by L: the size of one "lane latch" of the co-simulation build.
    pub entry_bits_per_lane: f64,
    /// `rtl_ff_bits.difference` in lane latches of `entry_bits_per_lane` bits (compare with
    /// `paper.lane_latches`).
    pub rtl_lane_latches: f64,
    /// `ff_bits.difference` in lane latches of `entry_bits_per_lane` bits.
    pub ff_lane_latches: f64,
    /// Table 2's MUXes at the widths this build selects: (M+2) · tag bits (the trace WB holds
    /// only the tag) + N · (latch bits − valid) (MEM0); compare with `mux_cells.difference`.
    pub paper_mux_2to1_at_our_widths: u64,
    /// What the difference is made of, and how it departs from Table 2.
    pub notes: Vec<String>,
    /// Wall-clock seconds of the slower Yosys run (the two run concurrently).
    pub seconds: f64,
}

/// Synthesizes `p` as Elastic and as Unified (generic flow, concurrently) and reports the
/// difference beside Table 2. `p` must be valid; its `pipe_mode` is overridden on both sides.
pub fn overhead(p: &Params) -> Result<Overhead, ToolError> {
    let with_mode = |pipe_mode| Params {
        pipe_mode,
        ..p.clone()
    };
    let (elastic, unified) = (with_mode(PipeMode::Elastic), with_mode(PipeMode::Unified));
    let synth = |p: &Params| -> Result<Build, ToolError> {
        let module = Arc::new(build(p));
        let verilog = smrtl_hdl::rusthdl::emit_verilog(&module);
        Ok(Build {
            params: p.clone(),
            registers: Registers::of(p),
            generic: yosys::generic(&verilog, &module.name)?,
        })
    };
    let (e, u) = std::thread::scope(|s| {
        let u = s.spawn(|| synth(&unified));
        let e = synth(&elastic);
        (e, u.join().expect("unified synthesis thread"))
    });
    let (e, u) = (e?, u?);
    let (eg, ug) = (&e.generic, &u.generic);
    let muxes = |g: &GenericReport| g.cells_by_type.get("$_MUX_").copied().unwrap_or(0);
    let rtl_ff_bits = Delta::new(eg.rtl_flip_flops, ug.rtl_flip_flops);
    let ff_bits = Delta::new(eg.flip_flops, ug.flip_flops);
    let entry_bits_per_lane = e.registers.latch_bits as f64 / f64::from(p.lanes);
    let notes = overhead_notes(&elastic, &e.registers, rtl_ff_bits, ff_bits);
    Ok(Overhead {
        rtl_ff_bits,
        ff_bits,
        cells: Delta::new(eg.cells, ug.cells),
        mux_cells: Delta::new(muxes(eg), muxes(ug)),
        paper: Table2::of(p),
        entry_bits_per_lane,
        rtl_lane_latches: rtl_ff_bits.difference as f64 / entry_bits_per_lane,
        ff_lane_latches: ff_bits.difference as f64 / entry_bits_per_lane,
        paper_mux_2to1_at_our_widths: paper_muxes(&elastic, &e.registers),
        notes,
        seconds: eg.seconds.max(ug.seconds),
        elastic: e,
        unified: u,
    })
}

/// Table 2's 2:1 MUX count at this build's widths (see [`Overhead::paper_mux_2to1_at_our_widths`]).
fn paper_muxes(p: &Params, r: &Registers) -> u64 {
    let t = Table2::of(p);
    u64::from(t.wb_mux_2to1_per_bit) * u64::from(p.tag_bits)
        + u64::from(t.mem0_mux_2to1_per_bit) * (r.latch_bits - 1)
}

/// The explanation of the difference, with the figures of `p` (an Elastic configuration).
fn overhead_notes(p: &Params, r: &Registers, rtl: Delta, ff: Delta) -> Vec<String> {
    let (l, aw, tag) = (p.lanes, p.addr_bits, p.tag_bits);
    let (m, n, q) = (p.mem_stages, p.premem_depth, p.nonmem_depth);
    let extra = u64::from(n + q) * r.latch_bits + r.age_bits;
    let mut notes = vec![
        format!(
            "co-simulation build (D23): a latch holds only the spec §2 entry fields, valid 1 + \
             tag {tag} + kind 2 + deg {} + act {l} + addr {l}x{aw} = {} bits ({:.3} per lane); \
             the cost build's 32-bit result/store data per lane and warp/sw/pc/dst fields are \
             not built, so absolute figures are not the paper's",
            p.rem_bits(),
            r.latch_bits,
            r.latch_bits as f64 / f64::from(l),
        ),
        format!(
            "both builds share F, D x{}, EXE, MEM x{m}, the MEM0 elapsed counter and the WB \
             registers; Elastic adds N = {n} PREMEM and Q = {q} NONMEM latches{}: {extra} bits \
             expected, {} measured in the RTL",
            p.fe_depth,
            if r.age_bits > 0 {
                format!(" and {} NQ age bits", r.age_bits)
            } else {
                String::new()
            },
            rtl.difference,
        ),
    ];
    if q != m {
        notes.push(format!(
            "Table 2 counts M = {m} NONMEM latches (Eq. 4, Q = M); this build has Q = {q}, so \
             the latch count differs from M + N by {}",
            i64::from(q) - i64::from(m)
        ));
    }
    let mem_tail = if m > 1 {
        format!(" and, in both builds, those of MEM1..MEM{}", m - 1)
    } else {
        String::new()
    };
    notes.extend([
        format!(
            "after synthesis Yosys drops register bits no logic reads: kind, deg, act and addr \
             of the NONMEM entries (an ALU entry reaches WB with only its tag){mem_tail}; in \
             Unified only wb_src codes 0..2 occur, so wb_src[2] is constant and wb_src[0] \
             merges with wb_icnt; so the flip-flop difference ({}) is below the RTL difference \
             ({})",
            ff.difference, rtl.difference
        ),
        format!(
            "WB MUX: the trace WB holds no data, so it selects only the {tag}-bit tag and the \
             3-bit wb_src; its inputs are ICNT, MEM_last, the NQ head and EXE, because the \
             collapsing NQ keeps its oldest entry at the head (the paper's (M+3):1 taps every \
             NONMEM latch); the collapse costs shift MUXes per NQ slot instead"
        ),
        if n > 0 {
            format!(
                "MEM0 input MUX: 2:1 between the PRE head and EXE over the whole entry \
                 ({} bits), the collapsing PRE FIFO presenting its oldest entry at slot 0 (the \
                 paper's (N+1):1 = {}:1); the collapse costs shift MUXes per PRE slot",
                r.latch_bits - 1,
                n + 1
            )
        } else {
            "MEM0 input MUX: none, as N = 0 leaves EXE the only MEM0 source".to_string()
        },
        format!(
            "Table 2's MUXes at the widths this build selects, (M+2) x {tag} (WB, tag) + N x {} \
             (MEM0, entry without valid) = {} 2:1 MUXes; compare with mux_cells.difference",
            r.latch_bits - 1,
            paper_muxes(p, r)
        ),
        "the cell difference also holds the FIFO control, the pre_count/nq_count popcounts \
         and the trace taps of the added latches (valid ? tag : 0 per slot)"
            .to_string(),
    ]);
    notes
}

/// The pipeline's lines in `smrtl synth`: for an Elastic configuration, its overhead over Unified
/// beside the paper's Table 2.
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let mut n = crate::Notes::default();
    if p.pipe_mode != PipeMode::Elastic {
        return Ok(n);
    }
    let o = overhead(p)?;
    n.add(
        format!(
            "Elastic minus Unified (same params): +{} register bits in the RTL = {:.1} lane latches of {:.3} bits, +{} flip-flops after synthesis, +{} cells ({} 2:1 MUX cells)\n  paper Table 2 for M = {}, N = {}, L = {}: {} SIMD latches = {} lane latches, a {}:1 WB MUX and a {}:1 MEM0 MUX",
            o.rtl_ff_bits.difference,
            o.rtl_lane_latches,
            o.entry_bits_per_lane,
            o.ff_bits.difference,
            o.cells.difference,
            o.mux_cells.difference,
            p.mem_stages,
            p.premem_depth,
            p.lanes,
            o.paper.simd_latches,
            o.paper.lane_latches,
            o.paper.wb_mux_inputs,
            p.premem_depth + 1,
        ),
        "overhead",
        &o,
    );
    n.lines.extend(o.notes.iter().map(|x| format!("  - {x}")));
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use smrtl_hdl::BlockParams;

    fn preset(name: &str) -> Params {
        Params::resolve(Some(name), &[]).unwrap()
    }

    #[test]
    fn table2_matches_the_evaluated_core() {
        let t = Table2::of(&preset("table4"));
        assert_eq!((t.simd_latches, t.lane_latches), (7, 56));
        assert_eq!((t.wb_mux_inputs, t.wb_mux_2to1_per_bit), (7, 6));
        assert_eq!((t.mem0_mux_inputs, t.mem0_mux_2to1_per_bit), (4, 3));
    }

    #[test]
    fn notes_cover_edge_configurations() {
        let p = Params {
            mem_stages: 1,
            nonmem_depth: 5,
            ..preset("micro")
        };
        let d = Delta::new(0, 0);
        let notes = overhead_notes(&p, &Registers::of(&p), d, d);
        assert!(notes.iter().any(|n| n.contains("Q = 5")));
        assert!(notes.iter().any(|n| n.contains("N = 0 leaves EXE")));
    }

    #[test]
    fn table4_inventory() {
        let r = Registers::of(&preset("table4"));
        // 1 + 16 + 2 + 4 + 8 + 8·12.
        assert_eq!(r.latch_bits, 127);
        // F, D1..D17, EXE, PRE×3, MEM×4, NQ×4.
        assert_eq!(r.latches, 30);
        assert_eq!(r.total, 30 * 127 + 4 + 21);
        let u = Registers::of(&preset("unified"));
        // Elastic − Unified = (N + Q) latches = 7 × 127 bits = 56 lane latches of 127/8 bits.
        assert_eq!(r.total - u.total, 7 * 127);
    }

    /// The inventory is what the IR builds at every preset, and micro Elastic by hand: seven
    /// latches (F, D1, EXE, MEM0, MEM1, NQ0, NQ1) of 127 bits, the 4-bit MEM0 elapsed counter,
    /// the WB registers 1 + 1 + 16 + 3; NQ ages add Q × lg(a + 1) bits.
    #[test]
    fn inventory_is_the_built_registers() {
        for (name, p) in Params::presets() {
            assert_eq!(build(&p).register_bits(), Registers::of(&p).total, "{name}");
        }
        let micro = preset("micro");
        assert_eq!(Registers::of(&micro).total, 7 * 127 + 4 + 21);
        let aged = Params {
            nonmem_min_age: 2,
            ..micro
        };
        assert_eq!(Registers::of(&aged).total, 7 * 127 + 4 + 21 + 2 * 2);
        assert_eq!(build(&aged).register_bits(), Registers::of(&aged).total);
    }
}
