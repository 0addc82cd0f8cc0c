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
    /// Element `idx` of a net of `count` elements `pitch` bits apart (bits
    /// `[idx*pitch +: width]`, element 0 lowest); the default past the last element.
    Index {
        net: usize,
        idx: Box<Expr>,
        pitch: usize,
        count: usize,
        default: Box<Expr>,
    },
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

    /// Element `i` of a net of equal `width`-bit elements, element 0 in the lowest bits: bits
    /// `[i*width +: width]`, and 0 for an index past the last element (docs/verilog.md
    /// "Indexed selects").
    pub fn index(&self, i: &Expr, width: usize) -> Expr {
        self.index_or(i, width, &Expr::lit(0, width))
    }

    /// [`Expr::index`] reading `default` (an expression of `width` bits) past the last element.
    pub fn index_or(&self, i: &Expr, width: usize, default: &Expr) -> Expr {
        self.index_pitch(i, width, width, default)
    }

    /// Element `i` of a net of `width`-bit elements `pitch` bits apart (bits
    /// `[i*pitch +: width]`), `default` past the last element. A power-of-two pitch is what
    /// Yosys turns into a plain multiplexer tree (docs/verilog.md "Indexed selects").
    pub fn index_pitch(&self, i: &Expr, width: usize, pitch: usize, default: &Expr) -> Expr {
        let Node::Net(net) = self.node else {
            panic!("only nets can be indexed; assign the expression to a wire first")
        };
        assert!(
            (1..=64).contains(&width) && width <= pitch && self.width.is_multiple_of(pitch),
            "{} bits are no array of {width}-bit elements {pitch} bits apart",
            self.width
        );
        assert_eq!(default.width, width, "index default width");
        assert!(i.width <= 32, "index of {} bits", i.width);
        let count = self.width / pitch;
        if let Node::Const(c) = i.node {
            return match usize::try_from(c) {
                Ok(c) if c < count => self.slice(c * pitch, width),
                _ => default.clone(),
            };
        }
        if count == 1 {
            let first = self.slice(0, width);
            return i.equals(&Expr::lit(0, i.width)).mux(&first, default);
        }
        Expr {
            node: Node::Index {
                net,
                idx: Box::new(i.clone()),
                pitch,
                count,
                default: Box::new(default.clone()),
            },
            width,
        }
    }

    fn bin(op: Op, a: &Expr, b: &Expr) -> Expr {
        assert_eq!(a.width, b.width, "{op:?} on unequal widths");
        if let Some(folded) = super::fold::bin(op, a, b) {
            return folded;
        }
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
        if let Some(folded) = super::fold::mux(self, t, f) {
            return folded;
        }
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
        if let Some(folded) = super::fold::any(self) {
            return folded;
        }
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
    let parts = super::fold::concat_parts(parts);
    if parts.len() == 1 {
        return parts[0].clone();
    }
    Expr {
        node: Node::Concat(parts),
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
        node: Node::Concat(super::fold::concat_parts(parts)),
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

/// The net whose first consecutive equal-width elements, element 0 in the lowest bits, are
/// `items` (so `items[i]` is `net.index(i, width)`), if there is one. The returned handle is
/// `items.len()` elements wide even if the net is wider: only for [`Expr::index`].
pub(crate) fn array_of(items: &[Expr]) -> Option<Expr> {
    let w = items.first()?.width;
    let mut net = None;
    for (k, item) in items.iter().enumerate() {
        let (id, lo) = match item.node {
            Node::Net(id) => (id, 0),
            Node::Slice(id, lo) => (id, lo),
            _ => return None,
        };
        if item.width != w || lo != k * w || net.is_some_and(|n| n != id) {
            return None;
        }
        net = Some(id);
    }
    Some(Expr {
        node: Node::Net(net?),
        width: w * items.len(),
    })
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
        if let Some(folded) = super::fold::not(&self) {
            return folded;
        }
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
            Node::Index {
                net,
                idx,
                pitch,
                count,
                default,
            } => NodeView::Index {
                net: *net,
                idx,
                pitch: *pitch,
                count: *count,
                default,
            },
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
            Node::Index {
                net,
                idx,
                pitch,
                count,
                default,
            } => Node::Index {
                net: net + nets,
                idx: r(idx),
                pitch: *pitch,
                count: *count,
                default: r(default),
            },
        };
        Expr {
            node,
            width: self.width,
        }
    }

    /// Calls `f` with every net the expression reads.
    pub(crate) fn visit_nets(&self, f: &mut impl FnMut(usize)) {
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
            Node::Index {
                net, idx, default, ..
            } => {
                f(*net);
                idx.visit_nets(f);
                default.visit_nets(f);
            }
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
    Index {
        net: usize,
        idx: &'a Expr,
        pitch: usize,
        count: usize,
        default: &'a Expr,
    },
}
