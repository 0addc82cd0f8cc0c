//! The constant folder (docs/verilog.md "Constant folding and dead nets"): the expression builders simplify
//! as they build, so `c ? 2'd2 : 2'd2` is `2'd2`, `x & 1'b1` is `x` and a constant operation
//! is its value, in the netlist (and so in the evaluator and the Verilog) alike.

use super::expr::Node;
use super::ir::mask;
use super::{Expr, Op};

/// The constant value of `e`, if it is one.
fn value(e: &Expr) -> Option<u64> {
    match e.node {
        Node::Const(c) => Some(c),
        _ => None,
    }
}

/// Whether `a` and `b` are the same net, slice or constant.
fn same(a: &Expr, b: &Expr) -> bool {
    a.width == b.width
        && match (&a.node, &b.node) {
            (Node::Const(x), Node::Const(y)) => x == y,
            (Node::Net(x), Node::Net(y)) => x == y,
            (Node::Slice(x, i), Node::Slice(y, j)) => x == y && i == j,
            _ => false,
        }
}

/// `a op b` simplified, if it simplifies.
pub(super) fn bin(op: Op, a: &Expr, b: &Expr) -> Option<Expr> {
    let ones = mask(a.width);
    match (value(a), value(b)) {
        (Some(x), Some(y)) => {
            let v = match op {
                Op::And => x & y,
                Op::Or => x | y,
                Op::Xor => x ^ y,
                Op::Add => x.wrapping_add(y) & ones,
                Op::Sub => x.wrapping_sub(y) & ones,
                Op::Eq => return Some(Expr::lit((x == y) as u64, 1)),
                Op::Lt => return Some(Expr::lit((x < y) as u64, 1)),
            };
            Some(Expr::lit(v, a.width))
        }
        (Some(c), None) if op != Op::Sub => with_const(op, c, ones, b),
        (None, Some(c)) if op != Op::Sub || c == 0 => with_const(op, c, ones, a),
        _ => None,
    }
}

/// `c op x` (or `x op c` for a commutative op, or `x - 0`) simplified.
fn with_const(op: Op, c: u64, ones: u64, x: &Expr) -> Option<Expr> {
    match (op, c) {
        (Op::And, 0) => Some(Expr::lit(0, x.width)),
        (Op::And, c) if c == ones => Some(x.clone()),
        (Op::Or, c) if c == ones => Some(Expr::lit(ones, x.width)),
        (Op::Or | Op::Xor | Op::Add | Op::Sub, 0) => Some(x.clone()),
        _ => None,
    }
}

/// `c ? t : f` simplified.
pub(super) fn mux(c: &Expr, t: &Expr, f: &Expr) -> Option<Expr> {
    if let Some(v) = value(c) {
        return Some(if v != 0 { t.clone() } else { f.clone() });
    }
    if same(t, f) {
        return Some(t.clone());
    }
    match (t.width, value(t), value(f)) {
        (1, Some(1), Some(0)) => Some(c.clone()),
        (1, Some(0), Some(1)) => Some(!c),
        _ => None,
    }
}

/// `~a` simplified.
pub(super) fn not(a: &Expr) -> Option<Expr> {
    match &a.node {
        Node::Const(c) => Some(Expr::lit(!c & mask(a.width), a.width)),
        Node::Not(x) => Some((**x).clone()),
        _ => None,
    }
}

/// `|a` simplified.
pub(super) fn any(a: &Expr) -> Option<Expr> {
    if a.width == 1 {
        return Some(a.clone());
    }
    value(a).map(|c| Expr::lit((c != 0) as u64, 1))
}

/// Concatenation parts with neighbouring constants merged (while they fit 64 bits).
pub(super) fn concat_parts(parts: &[Expr]) -> Vec<Expr> {
    let mut out: Vec<Expr> = Vec::with_capacity(parts.len());
    for p in parts {
        if let (Some(last), Some(lo)) = (out.last_mut(), value(p)) {
            if let Some(hi) = value(last) {
                let width = last.width + p.width;
                if width <= 64 {
                    *last = Expr::lit((hi << p.width) | lo, width);
                    continue;
                }
            }
        }
        out.push(p.clone());
    }
    out
}
