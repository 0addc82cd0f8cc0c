//! Cycle evaluation of a [`Module`]: the value store, the clock edge, and the combinational
//! assignments compiled to a flat instruction tape.

use super::expr::Node;
use super::ir::{mask, words_for, NetKind};
use super::{Expr, Module, Op};

impl Module {
    /// A zeroed value store (nets, memories, then the evaluator's temporaries and constants)
    /// with registers at their reset values.
    pub fn new_state(&self) -> Vec<u64> {
        let prog = self.program();
        let mut v = vec![0; prog.slots];
        for &(slot, value) in &prog.consts {
            v[slot] = value;
        }
        self.reset_registers(&mut v);
        v
    }

    fn program(&self) -> &Program {
        self.program.get_or_init(|| Program::compile(self))
    }

    fn reset_registers(&self, v: &mut [u64]) {
        for &(r, _) in &self.regs {
            if let NetKind::Reg { reset } = self.nets[r].kind {
                v[self.nets[r].offset] = reset;
            }
        }
    }

    /// Reads a net of at most 64 bits.
    pub fn get(&self, v: &[u64], net: usize) -> u64 {
        v[self.nets[net].offset]
    }

    /// Words of a net (any width).
    pub fn get_words<'a>(&self, v: &'a [u64], net: usize) -> &'a [u64] {
        let n = &self.nets[net];
        &v[n.offset..n.offset + words_for(n.width)]
    }

    /// The words of memory `mem` (one per address).
    pub fn memory_words<'a>(&self, v: &'a [u64], mem: usize) -> &'a [u64] {
        let m = &self.mems[mem];
        &v[m.offset..m.offset + m.depth]
    }

    /// Writes a net's words, masking the top word to the net's width.
    pub fn set_words(&self, v: &mut [u64], net: usize, value: &[u64]) {
        let n = &self.nets[net];
        let words = words_for(n.width);
        for i in 0..words {
            let bits = (n.width - 64 * i).min(64);
            v[n.offset + i] = value.get(i).copied().unwrap_or(0) & mask(bits);
        }
    }

    /// Evaluates every combinational assignment once, in order.
    pub fn eval_comb(&self, v: &mut [u64]) {
        self.program().run(v);
    }

    /// The rising clock edge: synchronous reads, then memory writes (neither is reset), then
    /// every register takes its next value (or its reset value).
    pub fn clock_edge(&self, v: &mut [u64]) {
        // Addresses, data and enables are wires computed by eval_comb, so order within each
        // group is free; reads come before writes (old data on a same-address write).
        for r in &self.sync_reads {
            if v[self.nets[r.en].offset] & 1 == 1 {
                let mem = &self.mems[r.mem];
                let a = v[self.nets[r.addr].offset] as usize & (mem.depth - 1);
                v[self.nets[r.q].offset] = v[mem.offset + a];
            }
        }
        for w in &self.writes {
            if v[self.nets[w.en].offset] & 1 == 1 {
                let mem = &self.mems[w.mem];
                let a = v[self.nets[w.addr].offset] as usize & (mem.depth - 1);
                v[mem.offset + a] = v[self.nets[w.data].offset];
            }
        }
        let in_reset = self.reset.is_some_and(|r| self.get(v, r) & 1 == 1);
        if in_reset {
            self.reset_registers(v);
            return;
        }
        for &(r, d) in &self.regs {
            v[self.nets[r].offset] = v[self.nets[d].offset];
        }
    }

    /// The assignments sorted so each net is driven before any assignment reads it (depth-first,
    /// keeping construction order where possible). Panics on a combinational loop or an
    /// undriven wire: both are builder bugs.
    fn assigns_in_order(&self) -> Vec<&(usize, Expr)> {
        let mut driver = vec![None; self.nets.len()];
        for (i, (t, _)) in self.assigns.iter().enumerate() {
            driver[*t] = Some(i);
        }
        for (id, n) in self.nets.iter().enumerate() {
            let port_of_child = n.owner.is_some() && n.kind == NetKind::Input;
            let needs_driver = matches!(n.kind, NetKind::Wire | NetKind::Output) || port_of_child;
            assert!(
                !needs_driver || driver[id].is_some(),
                "net {} of {} is never driven",
                n.name,
                self.name
            );
        }
        // 0 = unvisited, 1 = on the stack, 2 = done.
        let mut state = vec![0u8; self.assigns.len()];
        let mut order = Vec::with_capacity(self.assigns.len());
        for root in 0..self.assigns.len() {
            if state[root] != 0 {
                continue;
            }
            // Iterative DFS: (assignment, its dependencies, next dependency to visit).
            let mut stack = vec![(root, self.reads(root, &driver), 0usize)];
            state[root] = 1;
            while let Some((a, deps, k)) = stack.last_mut() {
                if let Some(&d) = deps.get(*k) {
                    *k += 1;
                    match state[d] {
                        0 => {
                            state[d] = 1;
                            let deps = self.reads(d, &driver);
                            stack.push((d, deps, 0));
                        }
                        1 => panic!(
                            "combinational loop through net {}",
                            self.nets[self.assigns[d].0].name
                        ),
                        _ => {}
                    }
                } else {
                    state[*a] = 2;
                    order.push(&self.assigns[*a]);
                    stack.pop();
                }
            }
        }
        order
    }

    /// Assignments driving the nets that assignment `a` reads.
    fn reads(&self, a: usize, driver: &[Option<usize>]) -> Vec<usize> {
        let mut out = vec![];
        self.assigns[a]
            .1
            .visit_nets(&mut |id| out.extend(driver[id]));
        out
    }
}

/// One step of the compiled evaluator; operands are slots of the value store.
#[derive(Clone, Debug)]
enum Ins {
    Copy(usize, usize),
    /// dst = bits [lo +: width] of the (possibly multi-word) value at `src`.
    Slice {
        dst: usize,
        src: usize,
        lo: usize,
        mask: u64,
    },
    Not(usize, usize, u64),
    Bin(Op, usize, usize, usize, u64),
    Mux(usize, usize, usize, usize),
    /// dst = (hi << shift) | lo.
    Cat(usize, usize, usize, usize),
    Any(usize, usize),
    Zero(usize),
    /// dst |= src << shift (the low part of a field placed in a wide net).
    Deposit {
        dst: usize,
        shift: usize,
        src: usize,
    },
    /// dst |= src >> shift (the part of a field that spills into the next word).
    DepositHigh {
        dst: usize,
        shift: usize,
        src: usize,
    },
    /// dst = element v[idx] of the `width`-bit elements `pitch` bits apart at `src`, or
    /// v[default] past `count`.
    Index {
        dst: usize,
        src: usize,
        idx: usize,
        width: usize,
        pitch: usize,
        count: usize,
        default: usize,
    },
    /// dst = v[base + (addr & amask)].
    MemRead {
        dst: usize,
        base: usize,
        addr: usize,
        amask: usize,
    },
}

/// The combinational assignments as a flat tape: about an order of magnitude faster than
/// walking the expression trees, which matters for 10^5-cycle co-simulations.
#[derive(Clone, Debug)]
pub(super) struct Program {
    ins: Vec<Ins>,
    slots: usize,
    consts: Vec<(usize, u64)>,
}

impl Program {
    pub(super) fn compile(m: &Module) -> Program {
        let mut p = Program {
            ins: vec![],
            slots: m.words,
            consts: vec![],
        };
        for (target, e) in m.assigns_in_order() {
            let dst = m.nets[*target].offset;
            if e.width > 64 {
                p.wide(m, dst, e);
                continue;
            }
            let src = p.expr(m, e, Some(dst));
            if src != dst {
                p.ins.push(Ins::Copy(dst, src));
            }
        }
        p
    }

    /// A wide net's value: a wide net copied word by word, or a concatenation deposited part by
    /// part (least significant part first).
    fn wide(&mut self, m: &Module, dst: usize, e: &Expr) {
        match &e.node {
            Node::Net(id) => {
                for w in 0..words_for(e.width) {
                    self.ins.push(Ins::Copy(dst + w, m.nets[*id].offset + w));
                }
            }
            Node::Concat(parts) => {
                for w in 0..words_for(e.width) {
                    self.ins.push(Ins::Zero(dst + w));
                }
                let mut lo = 0;
                for part in parts.iter().rev() {
                    if part.width > 64 {
                        // A wide net inside the concatenation: its words, bit by bit offset.
                        let Node::Net(id) = part.node else {
                            panic!("a wide concatenation part must be a net")
                        };
                        for w in 0..words_for(part.width) {
                            let bits = (part.width - 64 * w).min(64);
                            let src = m.nets[id].offset + w;
                            self.deposit(dst, lo + 64 * w, bits, src);
                        }
                    } else {
                        let src = self.expr(m, part, None);
                        self.deposit(dst, lo, part.width, src);
                    }
                    lo += part.width;
                }
            }
            _ => panic!("a net wider than 64 bits takes a net or a concatenation"),
        }
    }

    fn deposit(&mut self, dst: usize, lo: usize, width: usize, src: usize) {
        let (word, bit) = (lo / 64, lo % 64);
        self.ins.push(Ins::Deposit {
            dst: dst + word,
            shift: bit,
            src,
        });
        if bit + width > 64 {
            self.ins.push(Ins::DepositHigh {
                dst: dst + word + 1,
                shift: 64 - bit,
                src,
            });
        }
    }

    fn temp(&mut self) -> usize {
        self.slots += 1;
        self.slots - 1
    }

    /// Emits code for `e`; returns the slot holding its value (`dst` when given and used).
    fn expr(&mut self, m: &Module, e: &Expr, dst: Option<usize>) -> usize {
        assert!(
            e.width <= 64,
            "a wide value can only be assigned to a wide net"
        );
        let out = |p: &mut Program| dst.unwrap_or_else(|| p.temp());
        match &e.node {
            Node::Net(id) => m.nets[*id].offset,
            Node::Const(c) => {
                let slot = self.temp();
                self.consts.push((slot, *c));
                slot
            }
            Node::Slice(id, lo) => {
                let d = out(self);
                self.ins.push(Ins::Slice {
                    dst: d,
                    src: m.nets[*id].offset,
                    lo: *lo,
                    mask: mask(e.width),
                });
                d
            }
            Node::Not(a) => {
                let a = self.expr(m, a, None);
                let d = out(self);
                self.ins.push(Ins::Not(d, a, mask(e.width)));
                d
            }
            Node::Bin(op, a, b) => {
                let (a, b) = (self.expr(m, a, None), self.expr(m, b, None));
                let d = out(self);
                self.ins.push(Ins::Bin(*op, d, a, b, mask(e.width)));
                d
            }
            Node::Mux(c, t, f) => {
                let (c, t, f) = (
                    self.expr(m, c, None),
                    self.expr(m, t, None),
                    self.expr(m, f, None),
                );
                let d = out(self);
                self.ins.push(Ins::Mux(d, c, t, f));
                d
            }
            Node::Concat(parts) => {
                let mut acc = self.expr(m, &parts[0], None);
                for (i, part) in parts.iter().enumerate().skip(1) {
                    let lo = self.expr(m, part, None);
                    let d = if i + 1 == parts.len() {
                        out(self)
                    } else {
                        self.temp()
                    };
                    self.ins.push(Ins::Cat(d, acc, lo, part.width));
                    acc = d;
                }
                acc
            }
            Node::Any(a) => {
                let a = self.expr(m, a, None);
                let d = out(self);
                self.ins.push(Ins::Any(d, a));
                d
            }
            Node::Index {
                net,
                idx,
                pitch,
                count,
                default,
            } => {
                let (idx, default) = (self.expr(m, idx, None), self.expr(m, default, None));
                let d = out(self);
                self.ins.push(Ins::Index {
                    dst: d,
                    src: m.nets[*net].offset,
                    idx,
                    width: e.width,
                    pitch: *pitch,
                    count: *count,
                    default,
                });
                d
            }
            Node::MemRead(mem, a) => {
                let addr = self.expr(m, a, None);
                let d = out(self);
                let mem = &m.mems[*mem];
                self.ins.push(Ins::MemRead {
                    dst: d,
                    base: mem.offset,
                    addr,
                    amask: mem.depth - 1,
                });
                d
            }
        }
    }

    fn run(&self, v: &mut [u64]) {
        for ins in &self.ins {
            match *ins {
                Ins::Copy(d, s) => v[d] = v[s],
                Ins::Slice { dst, src, lo, mask } => v[dst] = bits(v, src, lo, mask),
                Ins::Index {
                    dst,
                    src,
                    idx,
                    width,
                    pitch,
                    count,
                    default,
                } => {
                    let i = v[idx] as usize;
                    v[dst] = if i < count {
                        bits(v, src, i * pitch, mask(width))
                    } else {
                        v[default]
                    };
                }
                Ins::Not(d, a, m) => v[d] = !v[a] & m,
                Ins::Bin(op, d, a, b, m) => {
                    let (a, b) = (v[a], v[b]);
                    v[d] = match op {
                        Op::And => a & b,
                        Op::Or => a | b,
                        Op::Xor => a ^ b,
                        Op::Add => a.wrapping_add(b) & m,
                        Op::Sub => a.wrapping_sub(b) & m,
                        Op::Eq => (a == b) as u64,
                        Op::Lt => (a < b) as u64,
                    }
                }
                Ins::Mux(d, c, t, f) => v[d] = if v[c] != 0 { v[t] } else { v[f] },
                Ins::Cat(d, hi, lo, shift) => {
                    v[d] = if shift >= 64 {
                        v[lo]
                    } else {
                        (v[hi] << shift) | v[lo]
                    }
                }
                Ins::Any(d, a) => v[d] = (v[a] != 0) as u64,
                Ins::MemRead {
                    dst,
                    base,
                    addr,
                    amask,
                } => v[dst] = v[base + (v[addr] as usize & amask)],
                Ins::Zero(d) => v[d] = 0,
                Ins::Deposit { dst, shift, src } => v[dst] |= v[src] << shift,
                Ins::DepositHigh { dst, shift, src } => v[dst] |= v[src] >> shift,
            }
        }
    }
}

/// Bits `[lo +: width]` (`mask` = the low `width` bits) of the multi-word value at `src`.
fn bits(v: &[u64], src: usize, lo: usize, mask: u64) -> u64 {
    let (word, bit) = (src + lo / 64, lo % 64);
    let mut x = v[word] >> bit;
    if bit != 0 && bit + (64 - mask.leading_zeros() as usize) > 64 {
        x |= v[word + 1] << (64 - bit);
    }
    x & mask
}
