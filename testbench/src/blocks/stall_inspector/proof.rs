//! The StallInspector's solver proof (docs/stall-inspector.md §6): the
//! spec's §7.1 invariants over the counters, which the ports show only through `rd_addr`, so
//! the proof reads them with probes (`dut.<bank>.cnt_q_<k>`, docs/prove.md §2).
//!
//! - I1 `i1_top_sum`: Σ top = cyc_total unless status bit 0 (a counter add was clipped).
//! - I2 `i2_no_stall_is_inst` (IW = 1): top[NO_STALL] = inst_issued unless bit 0.
//! - I3 as the status bits' meaning: `status_cleared` (0 after reset or clear),
//!   `i3_ready_not_issued` / `i3_issued_not_ready`: bit 2 (3) is set exactly when it was, or a
//!   counted cycle had a ready warp (a `wcls` = NO_STALL) and no issue (an issue and none).
//! - I4 `i4_ms_sum`: Σ ms_sub = top[MEM_STRUCT] unless bit 0.
//! - I5 `i5_md_conservation`: Σ md_sub + Σ blame = top[MEM_DATA] unless bit 0 or 1.
//! - I9 `i9_swap_<w>` (NW ≤ 4): inputs that are the previous cycle's with warps w and w+1
//!   swapped give the previous `cls` (`cls` reads no register; the transpositions generate
//!   every permutation).
//! - `status` depends on registers only.

use smrtl_hdl::blocks::stall_inspector::port;
use smrtl_hdl::blocks::stall_inspector::{Class, Params, PREDICATES};
use smrtl_hdl::ports::elem_name;
use smrtl_synth::prove::{zext, Def, Proof, Property};

/// BMC steps from reset: a flush needs a charged cycle and a writeback (the planted fault fails
/// at step 1); the invariants are inductive at k = 1.
pub const BMC_DEPTH: u32 = 4;

/// The largest NW at which I9 is proven.
pub const I9_MAX_NW: u32 = 4;

/// `Σ terms` (each `(expr, width)`) zero-extended to `w` bits.
fn sum(terms: &[(String, usize)], w: usize) -> String {
    terms
        .iter()
        .map(|(e, from)| zext(e, *from, w))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// The proof at `p` (see the module doc).
pub fn proof(p: &Params) -> Proof {
    let (cw, bw, nw) = (p.cw as usize, p.bw as usize, p.nw as usize);
    let mut defs = vec![];
    let mut probe = |name: String, width: usize, net: String| -> (String, usize) {
        defs.push(Def::new(name.clone(), width, net));
        (name, width)
    };
    let top: Vec<(String, usize)> = (0..8)
        .map(|k| probe(format!("top_{k}"), cw, format!("dut.top.cnt_q_{k}")))
        .collect();
    let ms: Vec<(String, usize)> = p
        .ms_reasons()
        .iter()
        .map(|k| probe(format!("ms_{k}"), cw, format!("dut.ms_sub.cnt_q_{k}")))
        .collect();
    let md: Vec<(String, usize)> = p
        .md_sources()
        .iter()
        .map(|k| probe(format!("md_{k}"), cw, format!("dut.md_sub.cnt_q_{k}")))
        .collect();
    let blame: Vec<(String, usize)> = (0..nw)
        .map(|w| probe(format!("blame_{w}"), bw, format!("dut.blame_q_{w}")))
        .collect();
    let cyc = probe("cyc_total".into(), cw, "dut.cyc_total_q".into());
    let inst = probe("inst_issued".into(), cw, "dut.inst_issued_q".into());
    // Widths with room for the sums: 8 counters (+3 bits), up to 7 + 128 terms (+8 bits).
    let (w8, wide) = (cw + 3, cw + 8);
    let ready: Vec<String> = (0..nw)
        .map(|w| format!("({} == 3'd0)", elem_name(port::WCLS, w)))
        .collect();
    defs.extend([
        Def::new("sum_top", w8, sum(&top, w8)),
        Def::new("sum_ms", w8, sum(&ms, w8)),
        Def::new("sum_md_blame", wide, {
            let mut all = md.clone();
            all.extend(blame.iter().cloned());
            sum(&all, wide)
        }),
        Def::new("ready", 1, ready.join(" || ")),
    ]);
    let top_of = |c: Class| top[c as usize].0.clone();
    let since = "!f_past || past_reset || past_clear";
    let mut props = vec![
        Property::assert(
            "i1_top_sum",
            format!("status[0] || sum_top == {}", zext(&cyc.0, cw, w8)),
        ),
        Property::assert(
            "i4_ms_sum",
            format!(
                "status[0] || sum_ms == {}",
                zext(&top_of(Class::MemStruct), cw, w8)
            ),
        ),
        Property::assert(
            "i5_md_conservation",
            format!(
                "status[0] || status[1] || sum_md_blame == {}",
                zext(&top_of(Class::MemData), cw, wide)
            ),
        ),
        Property::assert(
            "status_cleared",
            "!f_past || !(past_reset || past_clear) || status == 8'd0",
        ),
        Property::assert(
            "i3_ready_not_issued",
            format!(
                "{since} || status[2] == (past_status[2] || (past_en && past_ready && past_n_issued == 0))"
            ),
        ),
        Property::assert(
            "i3_issued_not_ready",
            format!(
                "{since} || status[3] == (past_status[3] || (past_en && !past_ready && past_n_issued != 0))"
            ),
        ),
    ];
    if p.iw == 1 {
        props.push(Property::assert(
            "i2_no_stall_is_inst",
            format!("status[0] || {} == {}", top_of(Class::NoStall), inst.0),
        ));
    }
    if p.nw <= I9_MAX_NW {
        for w in 0..nw.saturating_sub(1) {
            props.push(Property::assert(
                format!("i9_swap_{w}"),
                format!("!(f_past && {}) || cls == past_cls", swapped(nw, w)),
            ));
        }
    }
    props.push(Property::registered(port::STATUS));
    Proof {
        defs,
        properties: props,
        bmc_depth: BMC_DEPTH,
        induction_depth: 2,
    }
}

/// "This cycle's classification inputs are the previous cycle's with warps `w` and `w + 1`
/// swapped" (the predicate buses, `ms_reason_<w>`; `n_issued` equal).
fn swapped(nw: usize, w: usize) -> String {
    let perm = |i: usize| match i {
        _ if i == w => w + 1,
        _ if i == w + 1 => w,
        _ => i,
    };
    let mut terms = vec![format!("{0} == past_{0}", port::N_ISSUED)];
    for bus in PREDICATES {
        let bits: Vec<String> = (0..nw)
            .rev()
            .map(|i| format!("past_{bus}[{}]", perm(i)))
            .collect();
        terms.push(format!("{bus} == {{{}}}", bits.join(", ")));
    }
    for i in 0..nw {
        terms.push(format!(
            "{} == past_{}",
            elem_name(port::MS_REASON, i),
            elem_name(port::MS_REASON, perm(i))
        ));
    }
    format!("({})", terms.join(" && "))
}
