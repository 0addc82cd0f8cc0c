//! Width-checked expressions over a module's nets: the operators, concatenation and select
//! helpers, and the read-only view the Verilog writer walks (`docs/verilog.md`).

use super::ir::mask;
use super::Module;
use std::ops;

/// Binary operators; all take equal-width operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    And,
    Or,
    Xor,
    Add,
    Sub,
    /// Equality, 1-bit result.
    Eq,
    /// Unsigned less-than, 1-bit result.
    Lt,
}

#[derive(Clone, Debug)]
pub(super) enum Node {
    Net(usize),
    Const(u64),
    /// Bits `[lo +: width]` of a net (the only way to read part of a wide input).
    Slice(usize, usize),
    Not(Box<Expr>),
    Bin(Op, Box<Expr>, Box<Expr>),
    Mux(Box<Expr>, Box<Expr>, Box<Expr>),
    /// Most significant part first, like Verilog's `{a, b}`.
    Concat(Vec<Expr>),
    /// OR-reduction to one bit.
    Any(Box<Expr>),
    /// Asynchronous read of a memory word at an address.
    MemRead(usize, Box<Expr>),
}

/// A width-checked expression over the nets of one module (at most 64 bits wide).
#[derive(Clone, Debug)]
pub struct Expr {
    pub(super) node: Node,
    pub(super) width: usize,
}

impl Expr {
    pub fn width(&self) -> usize {
        self.width
    }

    /// An unsigned constant of `width` bits.
    pub fn lit(value: u64, width: usize) -> Expr {
        assert!((1..=64).contains(&width), "constant width {width}");
        assert!(
            value & !mask(width) == 0,
            "{value} does not fit {width} bits"
        );
        Expr {
            node: Node::Const(value),
            width,
        }
    }

    /// Bits `[lo +: width]`; only nets can be sliced (Verilog cannot slice an expression).
    pub fn slice(&self, lo: usize, width: usize) -> Expr {
        match self.node {
            Node::Net(id) => {
                assert!(
                    lo + width <= self.width && width <= 64,
                    "slice out of range"
                );
                if lo == 0 && width == self.width {
                    return self.clone();
                }
                Expr {
                    node: Node::Slice(id, lo),
                    width,
                }
            }
            Node::Slice(id, base) => {
                assert!(lo + width <= self.width, "slice out of range");
                Expr {
                    node: Node::Slice(id, base + lo),
                    width,
                }
            }
            _ => panic!("only nets can be sliced; assign the expression to a wire first"),
        }
    }

    pub fn bit(&self, i: usize) -> Expr {
        self.slice(i, 1)
    }

    fn bin(op: Op, a: &Expr, b: &Expr) -> Expr {
        assert_eq!(a.width, b.width, "{op:?} on unequal widths");
        let width = match op {
            Op::Eq | Op::Lt => 1,
            _ => a.width,
        };
        Expr {
            node: Node::Bin(op, Box::new(a.clone()), Box::new(b.clone())),
            width,
        }
    }

    pub fn equals(&self, other: &Expr) -> Expr {
        Expr::bin(Op::Eq, self, other)
    }

    pub fn lt(&self, other: &Expr) -> Expr {
        Expr::bin(Op::Lt, self, other)
    }

    /// `self ? t : f`; `self` is one bit.
    pub fn mux(&self, t: &Expr, f: &Expr) -> Expr {
        assert_eq!(self.width, 1, "mux select must be one bit");
        assert_eq!(t.width, f.width, "mux arms of unequal width");
        Expr {
            node: Node::Mux(
                Box::new(self.clone()),
                Box::new(t.clone()),
                Box::new(f.clone()),
            ),
            width: t.width,
        }
    }

    /// OR of all bits.
    pub fn any(&self) -> Expr {
        Expr {
            node: Node::Any(Box::new(self.clone())),
            width: 1,
        }
    }

    /// Zero-extend to `width` bits.
    pub fn zext(&self, width: usize) -> Expr {
        assert!(width >= self.width);
        if width == self.width {
            return self.clone();
        }
        concat(&[Expr::lit(0, width - self.width), self.clone()])
    }
}

/// `{parts[0], parts[1], ...}`, most significant first.
pub fn concat(parts: &[Expr]) -> Expr {
    let width = parts.iter().map(|p| p.width).sum();
    assert!((1..=64).contains(&width), "concat width {width}");
    if parts.len() == 1 {
        return parts[0].clone();
    }
    Expr {
        node: Node::Concat(parts.to_vec()),
        width,
    }
}

/// `{parts[0], parts[1], ...}` of any total width: only as the whole value assigned to a wide
/// net (a packed bus such as an instance's `addr[L]` port); no operator takes it.
pub fn concat_wide(parts: &[Expr]) -> Expr {
    let width = parts.iter().map(|p| p.width).sum();
    if width <= 64 {
        return concat(parts);
    }
    Expr {
        node: Node::Concat(parts.to_vec()),
        width,
    }
}

/// OR of a list of one-bit (or equal-width) expressions; `zero` when empty.
pub fn or_all(items: &[Expr], width: usize) -> Expr {
    items
        .iter()
        .cloned()
        .reduce(|a, b| a | b)
        .unwrap_or_else(|| Expr::lit(0, width))
}

/// OR of equal-width expressions as a balanced tree (keeps wide selects shallow);
/// `Expr::lit(0, width)` when empty.
pub fn or_tree(items: Vec<Expr>, width: usize) -> Expr {
    match items.len() {
        0 => Expr::lit(0, width),
        1 => items.into_iter().next().expect("one item"),
        n => {
            let mut items = items;
            let right = items.split_off(n / 2);
            or_tree(items, width) | or_tree(right, width)
        }
    }
}

/// `bit` repeated `width` times (for AND-masking a `width`-bit value).
pub fn replicate(bit: &Expr, width: usize) -> Expr {
    if width == 1 {
        bit.clone()
    } else {
        concat(&vec![bit.clone(); width])
    }
}

/// One-hot select: OR over i of (`sel[i]` ? `items[i]` : 0), as an AND-OR tree.
pub fn select_onehot(sel: &[Expr], items: &[Expr], width: usize) -> Expr {
    let terms = sel
        .iter()
        .zip(items)
        .map(|(s, x)| replicate(s, width) & x.clone())
        .collect();
    or_tree(terms, width)
}

macro_rules! binop_impl {
    ($trait:ident, $method:ident, $op:expr) => {
        impl ops::$trait<Expr> for Expr {
            type Output = Expr;
            fn $method(self, rhs: Expr) -> Expr {
                Expr::bin($op, &self, &rhs)
            }
        }
        impl ops::$trait<&Expr> for &Expr {
            type Output = Expr;
            fn $method(self, rhs: &Expr) -> Expr {
                Expr::bin($op, self, rhs)
            }
        }
    };
}
binop_impl!(BitAnd, bitand, Op::And);
binop_impl!(BitOr, bitor, Op::Or);
binop_impl!(BitXor, bitxor, Op::Xor);
binop_impl!(Add, add, Op::Add);
binop_impl!(Sub, sub, Op::Sub);

impl ops::Not for Expr {
    type Output = Expr;
    fn not(self) -> Expr {
        let width = self.width;
        Expr {
            node: Node::Not(Box::new(self)),
            width,
        }
    }
}

impl ops::Not for &Expr {
    type Output = Expr;
    fn not(self) -> Expr {
        !self.clone()
    }
}

impl Module {
    pub(crate) fn node_view(e: &Expr) -> NodeView<'_> {
        match &e.node {
            Node::Net(id) => NodeView::Net(*id),
            Node::Const(c) => NodeView::Const(*c, e.width),
            Node::Slice(id, lo) => NodeView::Slice(*id, *lo, e.width),
            Node::Not(a) => NodeView::Not(a),
            Node::Bin(op, a, b) => NodeView::Bin(*op, a, b),
            Node::Mux(c, t, f) => NodeView::Mux(c, t, f),
            Node::Concat(p) => NodeView::Concat(p),
            Node::Any(a) => NodeView::Any(a),
            Node::MemRead(mem, a) => NodeView::MemRead(*mem, a),
        }
    }
}

/// The net id of an expression that is a whole net.
pub(super) fn net_of(e: &Expr) -> usize {
    match e.node {
        Node::Net(id) => id,
        _ => panic!("not a net"),
    }
}

impl Expr {
    /// The same expression with net ids shifted by `nets` and memory ids by `mems` (a child's
    /// expression copied into its parent).
    pub(super) fn remap(&self, nets: usize, mems: usize) -> Expr {
        let r = |e: &Expr| Box::new(e.remap(nets, mems));
        let node = match &self.node {
            Node::Net(id) => Node::Net(id + nets),
            Node::Const(c) => Node::Const(*c),
            Node::Slice(id, lo) => Node::Slice(id + nets, *lo),
            Node::Not(a) => Node::Not(r(a)),
            Node::Any(a) => Node::Any(r(a)),
            Node::Bin(op, a, b) => Node::Bin(*op, r(a), r(b)),
            Node::Mux(c, t, f) => Node::Mux(r(c), r(t), r(f)),
            Node::Concat(p) => Node::Concat(p.iter().map(|e| e.remap(nets, mems)).collect()),
            Node::MemRead(m, a) => Node::MemRead(m + mems, r(a)),
        };
        Expr {
            node,
            width: self.width,
        }
    }

    /// Calls `f` with every net the expression reads.
    pub(super) fn visit_nets(&self, f: &mut impl FnMut(usize)) {
        match &self.node {
            Node::Net(id) | Node::Slice(id, _) => f(*id),
            Node::Const(_) => {}
            Node::Not(x) | Node::Any(x) | Node::MemRead(_, x) => x.visit_nets(f),
            Node::Bin(_, x, y) => {
                x.visit_nets(f);
                y.visit_nets(f);
            }
            Node::Mux(c, t, e) => {
                c.visit_nets(f);
                t.visit_nets(f);
                e.visit_nets(f);
            }
            Node::Concat(parts) => parts.iter().for_each(|p| p.visit_nets(f)),
        }
    }
}

/// Read-only view of an expression node for code generators.
pub(crate) enum NodeView<'a> {
    Net(usize),
    Const(u64, usize),
    Slice(usize, usize, usize),
    Not(&'a Expr),
    Bin(Op, &'a Expr, &'a Expr),
    Mux(&'a Expr, &'a Expr, &'a Expr),
    Concat(&'a [Expr]),
    Any(&'a Expr),
    MemRead(usize, &'a Expr),
}
