//! The StallInspector's solver proof (docs/stall-inspector.md §6, docs/prove.md §5.6; spec
//! §7.1): the invariants over the counters, which the ports show only through `rd_addr`, so
//! the proof reads them with probes (`dut.<bank>.cnt_q_<k>`, docs/prove.md §2).
//!
//! Yosys's SAT solver closes no k-induction of a sum of several 32-bit counters (the bare
//! identity "eight counters, one incremented, sum = total" does not close in 100 s at
//! 12 bits, docs/prove.md §5.6), so the conservation laws are proven in two parts that
//! together give them at every width:
//!
//! - **Exact updates** (`step_*`, full width): every counter, blame register and the flush
//!   are what spec §4.3 says they are one cycle later, saturation included: `top[c]` +1 in a
//!   counted cycle of class c, `cyc_total` +1 per counted cycle, `inst_issued` +`n_issued`,
//!   `ms_sub[r]` +1 in a counted MEM_STRUCT cycle of reason r, `md_sub[s]` +`flush_amt` on a
//!   flush to s, `blame[w]` 0 on w's final writeback else +1 when charged; `flush_amt` =
//!   blame[fw] + this cycle's charge to fw; status bits 0 / 1 set exactly when an add clips.
//!   From reset (all 0) and while status bits 0, 1 are clear, these sum to I1, I4, I5 (one
//!   class per cycle; a flush moves blame[fw] + charge from the blame file to md_sub).
//! - **The sums themselves, modulo 2^m** (`i1_top_sum`, `i4_ms_sum`, `i5_md_conservation`):
//!   the low m bits of each side (m = 8 for I1, I4; 2 for I5, the 14-term sum), waived while
//!   status bit 0 (or 1) is set. They catch any one-cycle error of fewer than 2^m counts.
//!
//! Also: I2 (`i2_no_stall_is_inst`, IW = 1); I3 as the status bits' meaning (`status_cleared`,
//! `i3_ready_not_issued`, `i3_issued_not_ready`); `i4_reason_counted` (a MEM_STRUCT cycle's
//! reason has a counter); I9 `i9_swap_<w>` (NW ≤ 4: inputs that are the previous cycle's with
//! warps w and w+1 swapped give the previous `cls`; `cls` reads no register, and the
//! transpositions generate every permutation); `status` depends on registers only.

use smrtl_hdl::blocks::stall_inspector::port;
use smrtl_hdl::blocks::stall_inspector::{Class, Params, PREDICATES};
use smrtl_hdl::ports::elem_name;
use smrtl_synth::prove::{pick, zext, Def, Proof, Property};

/// BMC steps from reset: a flush needs a charged cycle and a writeback (the planted faults'
/// shortest counterexamples fail at step 1, though `sat` may return a longer one within the
/// depth); every property is inductive at k = 1.
pub const BMC_DEPTH: u32 = 4;

/// The largest NW at which I9 is proven.
pub const I9_MAX_NW: u32 = 4;

/// Low bits of the I1 and I4 sums that are proven (docs/prove.md §5.6).
pub const SUM_BITS: usize = 8;

/// Low bits of the I5 sum (14 terms at NW = 8) that are proven.
pub const MD_SUM_BITS: usize = 2;

/// `Σ terms` (each `(expr, width)`) in `w` bits, as a balanced tree (Yosys's SAT solver
/// closes the induction of a tree much faster than of a chain); a term wider than `w` is
/// truncated to its low `w` bits.
fn sum(terms: &[(String, usize)], w: usize) -> String {
    let mut level: Vec<String> = terms
        .iter()
        .map(|(e, from)| {
            if *from > w {
                format!("{e}[{}:0]", w - 1)
            } else {
                zext(e, *from, w)
            }
        })
        .collect();
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|c| match c {
                [a, b] => format!("({a} + {b})"),
                [a] => a.clone(),
                _ => unreachable!(),
            })
            .collect();
    }
    level.pop().unwrap_or_else(|| format!("{w}'d0"))
}

/// `2^w − 1` as a `w`-bit literal.
fn max(w: usize) -> String {
    format!("{{{w}{{1'b1}}}}")
}

/// `x + y` saturating at `2^w − 1` (`x` `w` bits, `y` `yw` ≤ `w` bits).
fn sat_add(x: &str, y: &str, yw: usize, w: usize) -> String {
    let y = zext(y, yw, w);
    format!("(({x} > {} - {y}) ? {} : ({x} + {y}))", max(w), max(w))
}

/// The registers the proof reads (probes) and the sums over them.
struct Regs {
    top: Vec<(String, usize)>,
    ms: Vec<(u64, (String, usize))>,
    md: Vec<(u64, (String, usize))>,
    blame: Vec<(String, usize)>,
    cyc: String,
    inst: String,
}

/// The probes, the sums and the selections as defs.
fn defs(p: &Params) -> (Vec<Def>, Regs) {
    let (cw, bw, nw) = (p.cw as usize, p.bw as usize, p.nw as usize);
    let mut defs = vec![];
    let mut probe = |name: String, width: usize, net: String| -> (String, usize) {
        defs.push(Def::new(name.clone(), width, net));
        (name, width)
    };
    let top: Vec<(String, usize)> = (0..8)
        .map(|k| probe(format!("top_{k}"), cw, format!("dut.top.cnt_q_{k}")))
        .collect();
    let ms: Vec<(u64, (String, usize))> = p
        .ms_reasons()
        .into_iter()
        .map(|k| {
            (
                k,
                probe(format!("ms_{k}"), cw, format!("dut.ms_sub.cnt_q_{k}")),
            )
        })
        .collect();
    let md: Vec<(u64, (String, usize))> = p
        .md_sources()
        .into_iter()
        .map(|k| {
            (
                k,
                probe(format!("md_{k}"), cw, format!("dut.md_sub.cnt_q_{k}")),
            )
        })
        .collect();
    let blame: Vec<(String, usize)> = (0..nw)
        .map(|w| probe(format!("blame_{w}"), bw, format!("dut.blame_q_{w}")))
        .collect();
    let cyc = probe("cyc_total".into(), cw, "dut.cyc_total_q".into()).0;
    let inst = probe("inst_issued".into(), cw, "dut.inst_issued_q".into()).0;
    let (s8, s2) = (SUM_BITS.min(cw + 3), MD_SUM_BITS);
    let ready: Vec<String> = (0..nw)
        .map(|w| format!("({} == 3'd0)", elem_name(port::WCLS, w)))
        .collect();
    let names = |v: &[(String, usize)]| v.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    let ms_terms: Vec<(String, usize)> = ms.iter().map(|x| x.1.clone()).collect();
    let mut md_blame: Vec<(String, usize)> = md.iter().map(|x| x.1.clone()).collect();
    md_blame.extend(blame.iter().cloned());
    let wb = p.wb();
    defs.extend([
        Def::new("sum_top", s8, sum(&top, s8)),
        Def::new("sum_ms", s8, sum(&ms_terms, s8)),
        Def::new("sum_md_blame", s2, sum(&md_blame, s2)),
        Def::new("ready", 1, ready.join(" || ")),
        Def::new(
            "top_cls",
            cw,
            pick(port::CLS, 3, &names(&top), &format!("{cw}'d0")),
        ),
        Def::new(
            "blame_md",
            bw,
            pick(port::MD_SEL, wb, &names(&blame), &format!("{bw}'d0")),
        ),
        Def::new(
            "blame_fw",
            bw,
            pick(port::LDWB_WARP, wb, &names(&blame), &format!("{bw}'d0")),
        ),
    ]);
    let regs = Regs {
        top,
        ms,
        md,
        blame,
        cyc,
        inst,
    };
    (defs, regs)
}

/// The proof at `p` (see the module doc).
pub fn proof(p: &Params) -> Proof {
    let (defs, r) = defs(p);
    let mut props = sums(p, &r);
    props.extend(steps(p, &r));
    props.extend(flush(p));
    props.extend(status_bits(p, &r));
    if p.iw == 1 {
        props.push(Property::assert(
            "i2_no_stall_is_inst",
            format!("status[0] || {} == {}", r.top[0].0, r.inst),
        ));
    }
    if p.nw <= I9_MAX_NW {
        let nw = p.nw as usize;
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

/// I1, I4, I5 modulo 2^m, and a MEM_STRUCT cycle's reason has a counter (I4).
fn sums(p: &Params, r: &Regs) -> Vec<Property> {
    let cw = p.cw as usize;
    let (s8, s2) = (SUM_BITS.min(cw + 3), MD_SUM_BITS);
    let low = |x: &str, w: usize| -> String {
        if w >= cw {
            zext(x, cw, w)
        } else {
            format!("{x}[{}:0]", w - 1)
        }
    };
    let ms = Class::MemStruct.code();
    vec![
        Property::assert(
            "i1_top_sum",
            format!("status[0] || sum_top == {}", low(&r.cyc, s8)),
        ),
        Property::assert(
            "i4_ms_sum",
            format!("status[0] || sum_ms == {}", low(&r.top[ms as usize].0, s8)),
        ),
        Property::assert(
            "i4_reason_counted",
            format!("cls != 3'd{ms} || (ms_cyc_reason != 3'd0 && ms_cyc_reason != 3'd7)"),
        ),
        Property::assert(
            "i5_md_conservation",
            format!(
                "status[0] || status[1] || sum_md_blame == {}",
                low(&r.top[Class::MemData.code() as usize].0, s2)
            ),
        ),
    ]
}

/// The exact update of every counter and blame register (spec §4.3), full width.
fn steps(p: &Params, r: &Regs) -> Vec<Property> {
    let (cw, bw) = (p.cw as usize, p.bw as usize);
    let zeroed = "past_reset || past_clear";
    let step = |name: String, reg: &str, w: usize, cond: String, amt: &str, amt_w: usize| {
        Property::assert(
            name,
            format!(
                "!f_past || (({zeroed}) ? {reg} == {w}'d0 : \
                 {reg} == (({cond}) ? {} : past_{reg}))",
                sat_add(&format!("past_{reg}"), amt, amt_w, w)
            ),
        )
    };
    let mut v: Vec<Property> = r
        .top
        .iter()
        .enumerate()
        .map(|(c, (reg, _))| {
            step(
                format!("step_top_{c}"),
                reg,
                cw,
                format!("past_en && past_cls == 3'd{c}"),
                "1'b1",
                1,
            )
        })
        .collect();
    v.push(step(
        "step_cyc_total".into(),
        &r.cyc,
        cw,
        "past_en".into(),
        "1'b1",
        1,
    ));
    v.push(step(
        "step_inst_issued".into(),
        &r.inst,
        cw,
        "past_en".into(),
        "past_n_issued",
        p.iwb(),
    ));
    let ms = Class::MemStruct.code();
    for (k, (reg, _)) in &r.ms {
        v.push(step(
            format!("step_ms_{k}"),
            reg,
            cw,
            format!("past_en && past_cls == 3'd{ms} && past_ms_cyc_reason == 3'd{k}"),
            "1'b1",
            1,
        ));
    }
    for (k, (reg, _)) in &r.md {
        v.push(step(
            format!("step_md_{k}"),
            reg,
            cw,
            format!("past_flush_valid && past_flush_src == 3'd{k}"),
            "past_flush_amt",
            bw,
        ));
    }
    let (md, wb) = (Class::MemData.code(), p.wb());
    for (w, (reg, _)) in r.blame.iter().enumerate() {
        let flushed = format!("past_ldwb_valid && past_ldwb_final && past_ldwb_warp == {wb}'d{w}");
        let charged = format!("past_en && past_cls == 3'd{md} && past_md_sel == {wb}'d{w}");
        v.push(Property::assert(
            format!("step_blame_{w}"),
            format!(
                "!f_past || (({zeroed}) || ({flushed}) ? {reg} == {bw}'d0 : \
                 {reg} == (({charged}) ? {} : past_{reg}))",
                sat_add(&format!("past_{reg}"), "1'b1", 1, bw)
            ),
        ));
    }
    v
}

/// The flush of a final writeback (spec §4.3): `flush_amt` = blame[fw] + this cycle's
/// charge to fw (saturating), valid when non-zero; `flush_src` normalised.
fn flush(p: &Params) -> Vec<Property> {
    let (bw, nw, wb) = (p.bw as usize, p.nw as usize, p.wb());
    let md = Class::MemData.code();
    let in_range = if nw == 1 << wb {
        "1'b1".to_string()
    } else {
        format!("ldwb_warp < {wb}'d{nw}")
    };
    let fl = format!("ldwb_valid && ldwb_final && {in_range}");
    let charge = format!("en && cls == 3'd{md} && md_sel == ldwb_warp");
    let amt = format!(
        "(({charge}) ? {} : blame_fw)",
        sat_add("blame_fw", "1'b1", 1, bw)
    );
    let local = if p.split_local { "3'd5" } else { "3'd0" };
    let norm = format!("(ldwb_src == 3'd6 ? 3'd7 : ldwb_src == 3'd5 ? {local} : ldwb_src)");
    vec![
        Property::assert(
            "flush_amount",
            format!(
                "flush_valid == (({fl}) && {amt} != {bw}'d0) && \
                 flush_amt == (flush_valid ? {amt} : {bw}'d0)"
            ),
        ),
        Property::assert(
            "flush_source",
            format!("flush_src == (flush_valid ? {norm} : 3'd0)"),
        ),
    ]
}

/// Status bits: 0 after reset or clear; bits 0 and 1 set exactly when an add clips (the
/// invariants' waiver, without `warp_counters`, whose counters clip too); I3: bits 2 and 3 set
/// exactly when a counted cycle had a ready warp and no issue, or an issue and none.
fn status_bits(p: &Params, r: &Regs) -> Vec<Property> {
    let (cw, bw) = (p.cw as usize, p.bw as usize);
    let since = "!f_past || past_reset || past_clear";
    let (ms, md) = (Class::MemStruct.code(), Class::MemData.code());
    let at = |reg: &str, w: usize| format!("past_{reg} == {}", max(w));
    let over = |reg: &str, amt: &str, aw: usize| {
        format!("past_{reg} > {} - {}", max(cw), zext(amt, aw, cw))
    };
    let mut clips = vec![
        format!("past_en && ({})", at(&r.cyc, cw)),
        format!("past_en && ({})", at("top_cls", cw)),
        format!("past_en && ({})", over(&r.inst, "past_n_issued", p.iwb())),
    ];
    for (k, (reg, _)) in &r.ms {
        clips.push(format!(
            "past_en && past_cls == 3'd{ms} && past_ms_cyc_reason == 3'd{k} && ({})",
            at(reg, cw)
        ));
    }
    for (k, (reg, _)) in &r.md {
        clips.push(format!(
            "past_flush_valid && past_flush_src == 3'd{k} && ({})",
            over(reg, "past_flush_amt", bw)
        ));
    }
    let mut v = vec![
        Property::assert(
            "status_cleared",
            "!f_past || !(past_reset || past_clear) || status == 8'd0",
        ),
        Property::assert(
            "blame_sat_meaning",
            format!(
                "{since} || status[1] == (past_status[1] || \
                 (past_en && past_cls == 3'd{md} && {}))",
                at("blame_md", bw)
            ),
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
    if !p.warp_counters {
        v.push(Property::assert(
            "counter_sat_meaning",
            format!(
                "{since} || status[0] == (past_status[0] || ({}))",
                clips.join(") || (")
            ),
        ));
    }
    v
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
