//! The StallInspector's parts (docs/stall-inspector.md §3.6): the per-warp classifier (one
//! module, instantiated NW times), the counter bank (CW-bit saturating counters behind one
//! shared adder, §5 "one increment each") and the selection helpers the top uses (mux trees,
//! find-first-set, population count).

use super::classes::{Class, WarpOrder};
use crate::netlist::{concat, mask, Expr, Module, Table};

/// The classifier's one-bit predicate inputs, in port order (docs/stall-inspector.md §3.2).
pub const PREDICATES: [&str; 8] = [
    "active",
    "inst_avail",
    "sync_wait",
    "haz_load",
    "haz_comp",
    "is_mem",
    "ms_block",
    "fu_block",
];

/// The per-warp classifier (docs/stall-inspector.md §3.3, §3.6; Alg. 1): `wcls` = IDLE when not
/// `active`, else the class of the first test of `order` that holds, else NO_STALL; `hot` is
/// `wcls` one-hot (bit c = class c), what the top's per-class OR trees and counters read.
pub fn classifier(name: &str, order: &WarpOrder) -> Module {
    let mut m = Module::new(name);
    m.cites(crate::blocks::docs::STALL_INSPECTOR);
    let p: Vec<Expr> = PREDICATES.iter().map(|n| m.input(n, 1)).collect();
    let (active, inst_avail, sync_wait, haz_load, haz_comp, is_mem, ms_block, fu_block) =
        (&p[0], &p[1], &p[2], &p[3], &p[4], &p[5], &p[6], &p[7]);
    let wcls = m.output("wcls", 3);
    let hot = m.output("hot", 8);
    m.section("§3.3: Alg. 1 tests (one per class)");
    let test = |m: &mut Module, c: Class| -> Expr {
        let e = match c {
            Class::Control => !inst_avail,
            Class::Sync => sync_wait.clone(),
            Class::MemData => haz_load.clone(),
            Class::MemStruct => is_mem & ms_block,
            Class::CompData => haz_comp.clone(),
            Class::CompStruct => !is_mem & fu_block.clone(),
            Class::NoStall | Class::Idle => unreachable!("not a warp test"),
        };
        m.wire(&format!("t_{}", c.name().to_ascii_lowercase()), e)
    };
    let tests: Vec<(Class, Expr)> = order.0.iter().map(|&c| (c, test(&mut m, c))).collect();
    m.section("§3.3: priority encoder in warp_order; IDLE first");
    let lit = |c: Class| Expr::lit(c.code(), 3);
    let code = tests
        .iter()
        .rev()
        .fold(lit(Class::NoStall), |acc, (c, t)| t.mux(&lit(*c), &acc));
    let code = m.wire("code", active.mux(&code, &lit(Class::Idle)));
    let bits: Vec<Expr> = (0..8u64)
        .rev()
        .map(|c| code.equals(&Expr::lit(c, 3)))
        .collect();
    m.assign(&wcls, code);
    m.assign(&hot, concat(&bits));
    m
}

/// A bank of CW-bit counters at the 3-bit indices `indices` behind one saturating adder
/// (docs/stall-inspector.md §3.3, §3.6): when `inc`, `cnt[idx] += amt`, clipped at 2^CW − 1 (`sat`
/// says an add was clipped this cycle); `clear` zeroes every counter. Outputs `cnt_<k>`.
pub fn counter_bank(name: &str, cw: usize, amt_bits: usize, indices: &[u64]) -> Module {
    assert!(amt_bits <= cw);
    let mut m = Module::new(name);
    m.cites(crate::blocks::docs::STALL_INSPECTOR);
    m.clock_reset();
    let clear = m.input("clear", 1);
    let inc = m.input("inc", 1);
    let idx = m.input("idx", 3);
    let amt = m.input("amt", amt_bits);
    let outs: Vec<Expr> = indices
        .iter()
        .map(|k| m.output(&format!("cnt_{k}"), cw))
        .collect();
    let sat = m.output("sat", 1);
    m.section("§3.6: the counters");
    let regs: Vec<Expr> = indices
        .iter()
        .map(|k| m.reg(&format!("cnt_q_{k}"), cw, 0))
        .collect();
    m.section("§3.3: cnt[idx] + amt, saturating (one adder)");
    let mut items: Vec<Option<Expr>> = vec![None; 8];
    for (k, r) in indices.iter().zip(&regs) {
        items[*k as usize] = Some(r.clone());
    }
    let cur = mux_tree(&mut m, "cur", &idx, &items, cw);
    let cur = m.wire("cur", cur);
    let amt_w = m.wire("amt_w", amt.zext(cw));
    // cur + amt > max exactly when amt > max - cur = ~cur.
    let clipped = m.wire("clipped", &inc & &(!&cur).lt(&amt_w));
    let sum = m.wire("sum", &cur + &amt_w);
    let nxt = m.wire("nxt", clipped.mux(&Expr::lit(mask(cw), cw), &sum));
    m.section("§3.3: next state (clear first)");
    let zero = Expr::lit(0, cw);
    for ((k, r), o) in indices.iter().zip(&regs).zip(&outs) {
        let hit = &inc & &idx.equals(&Expr::lit(*k, 3));
        m.next(r, clear.mux(&zero, &hit.mux(&nxt, r)));
        m.assign(o, r.clone());
    }
    m.assign(&sat, clipped);
    m
}

/// `items[sel]` (`None`, and an address past the items, reads 0): an indexed select of a
/// [`Table`] `<name>_tbl` (docs/verilog.md "Indexed selects"). `sel` must be a net or a slice of
/// one.
pub fn mux_tree(
    m: &mut Module,
    name: &str,
    sel: &Expr,
    items: &[Option<Expr>],
    width: usize,
) -> Expr {
    assert!(
        items.len() <= 1 << sel.width(),
        "{name}: more items than addresses"
    );
    let zero = Expr::lit(0, width);
    if items.iter().all(Option::is_none) {
        return zero;
    }
    let items: Vec<Expr> = items
        .iter()
        .map(|x| x.clone().unwrap_or_else(|| zero.clone()))
        .collect();
    Table::new(m, &format!("{name}_tbl"), &items).read(sel, &zero)
}

/// The lowest `i` with `bits[i]` set, as `width` bits (0 when none), and whether any is set: a
/// tree of find-first-set nodes, one pair of wires per node (`<name>_any_*`, `<name>_idx_*`).
pub fn find_first(m: &mut Module, name: &str, bits: &[Expr], width: usize) -> (Expr, Expr) {
    let mut level: Vec<(Expr, Expr)> = bits
        .iter()
        .enumerate()
        .map(|(i, b)| (b.clone(), Expr::lit(i as u64, width)))
        .collect();
    let mut depth = 0;
    while level.len() > 1 {
        let mut next = Vec::with_capacity(level.len().div_ceil(2));
        for (i, pair) in level.chunks(2).enumerate() {
            if pair.len() == 1 {
                next.push(pair[0].clone());
                continue;
            }
            let ((al, il), (ar, ir)) = (&pair[0], &pair[1]);
            let any = m.wire(&format!("{name}_any_{depth}_{i}"), al | ar);
            let idx = m.wire(&format!("{name}_idx_{depth}_{i}"), al.mux(il, ir));
            next.push((any, idx));
        }
        level = next;
        depth += 1;
    }
    let (any, idx) = level.pop().expect("at least one bit");
    let idx = m.wire(&format!("{name}_idx"), any.mux(&idx, &Expr::lit(0, width)));
    (any, idx)
}

/// The number of set bits among `bits` (one bit each), `width` bits wide: an adder tree, one
/// wire per node (`<name>_<level>_<i>`).
pub fn popcount(m: &mut Module, name: &str, bits: &[Expr], width: usize) -> Expr {
    let mut level: Vec<Expr> = bits.to_vec();
    let mut depth = 0;
    while level.len() > 1 {
        let mut next = Vec::with_capacity(level.len().div_ceil(2));
        for (i, pair) in level.chunks(2).enumerate() {
            if pair.len() == 1 {
                next.push(pair[0].clone());
                continue;
            }
            let w = (pair[0].width().max(pair[1].width()) + 1).min(width);
            let sum = pair[0].zext(w) + pair[1].zext(w);
            next.push(m.wire(&format!("{name}_{depth}_{i}"), sum));
        }
        level = next;
        depth += 1;
    }
    level.pop().expect("at least one bit").zext(width)
}

/// `bits` (one-bit expressions, element 0 lowest) ORed as a balanced tree.
pub fn or_bits(bits: &[Expr]) -> Expr {
    crate::netlist::or_tree(bits.to_vec(), 1)
}
