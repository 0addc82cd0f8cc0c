//! A small, width-checked netlist: the RTL of every smrtl block is built as one [`Module`]
//! from its params. The same `Module` is evaluated cycle by cycle (the `rusthdl` backend runs it
//! inside rust-hdl's simulator, see [`crate::rusthdl`]) and emitted as Verilog
//! ([`crate::verilog`]), so simulation and Verilog come from one description.
//!
//! Hierarchy: a module instantiates another with [`Module::instance`]. For evaluation the
//! child's nets, registers and memories are copied into the parent (one flat tape, no speed
//! lost); for Verilog the parent keeps the instance and the child is emitted once as its own
//! module, however often it is instantiated (see `docs/verilog.md`).
//!
//! Memories ([`Module::memory`]) are arrays with asynchronous ([`Module::read`]) or synchronous
//! ([`Module::read_sync`]) read ports and clocked write ports ([`Module::write`]); their data has no
//! reset, so Yosys infers them as RAM.
//!
//! Width discipline: every operator takes operands of equal width and every assignment target has
//! the width of its expression. Under that rule Verilog's context-determined widths equal the
//! self-determined ones, so the emitted text means exactly what [`Module::eval_comb`] computes.

use serde::Serialize;
use std::ops;

/// Port direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    In,
    Out,
}

/// One top-level port, derived from a block's params.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Port {
    pub name: String,
    pub dir: Dir,
    pub width: usize,
}

impl Port {
    /// 64-bit words needed to hold a value of this port.
    pub fn words(&self) -> usize {
        words_for(self.width)
    }
}

/// A port list from `(name, direction, width)` rows (a block's spec port table).
pub fn port_list(spec: &[(&str, Dir, usize)]) -> Vec<Port> {
    spec.iter()
        .map(|&(name, dir, width)| Port {
            name: name.into(),
            dir,
            width,
        })
        .collect()
}

/// 64-bit words needed for `width` bits.
pub fn words_for(width: usize) -> usize {
    width.div_ceil(64).max(1)
}

/// Mask of the low `width` bits (`width` ≤ 64).
pub fn mask(width: usize) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// What a net is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetKind {
    Input,
    Output,
    Wire,
    /// A flip-flop on `clock`, synchronously reset to `reset` when the `reset` input is high.
    Reg {
        reset: u64,
    },
    /// The data register of a synchronous memory read port: no reset, like a RAM's output.
    ReadData,
}

/// A named net of the module.
#[derive(Clone, Debug)]
pub struct Net {
    pub name: String,
    pub width: usize,
    pub kind: NetKind,
    /// Offset of the net's first word in the value store.
    pub offset: usize,
    /// The instance of this module the net belongs to (`None`: the module's own net).
    pub owner: Option<usize>,
}

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
enum Node {
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
    node: Node,
    width: usize,
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

/// A memory: `depth` words of `width` bits (a power-of-two depth, `width` ≤ 64), no reset.
#[derive(Clone, Debug)]
pub struct Memory {
    pub name: String,
    pub width: usize,
    pub depth: usize,
    /// Offset of word 0 in the value store (one slot per word).
    pub offset: usize,
    /// The instance the memory belongs to (`None`: the module's own).
    pub owner: Option<usize>,
}

impl Memory {
    /// Address bits: log2 depth (at least 1).
    pub fn addr_bits(&self) -> usize {
        addr_bits(self.depth)
    }
}

/// Address bits of a memory of `depth` words.
pub fn addr_bits(depth: usize) -> usize {
    (depth.trailing_zeros() as usize).max(1)
}

/// A clocked write port: at the rising edge, `mem[addr] <= data` when `en` (reset or not).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WritePort {
    pub mem: usize,
    pub addr: usize,
    pub data: usize,
    pub en: usize,
}

/// A synchronous read port: at the rising edge, `q <= mem[addr]` when `en` (old data on a
/// same-address write).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SyncRead {
    pub mem: usize,
    pub q: usize,
    pub addr: usize,
    pub en: usize,
}

/// A child module placed in a parent (see [`Module::instance`]).
#[derive(Clone, Debug)]
pub struct Instance {
    /// Instance name, unique in the parent.
    pub name: String,
    pub module: std::sync::Arc<Module>,
    /// Parent net id of the child's net 0 (child net `i` is parent net `net_base + i`).
    pub net_base: usize,
}

impl Instance {
    /// The parent net id of the child's port `port` (panics on a name the child lacks).
    fn port_net(&self, port: &str) -> usize {
        let id = self.module.net_id(port).unwrap_or_else(|| {
            panic!(
                "module {} has no port {port} (instance {})",
                self.module.name, self.name
            )
        });
        assert!(
            matches!(self.module.nets[id].kind, NetKind::Input | NetKind::Output),
            "{port} is not a port of {}",
            self.module.name
        );
        self.net_base + id
    }
}

/// Handle on an instance while the parent is built: its ports as parent nets.
#[derive(Clone, Debug)]
pub struct InstanceRef {
    index: usize,
    inst: Instance,
}

impl InstanceRef {
    /// The child's input `port`, as a parent wire to drive with [`Module::assign`].
    pub fn input(&self, port: &str) -> Expr {
        let id = self.inst.port_net(port);
        assert_eq!(
            self.inst.module.nets[id - self.inst.net_base].kind,
            NetKind::Input,
            "{port} is not an input of {}",
            self.inst.module.name
        );
        self.net(id)
    }

    /// The child's output `port`, readable in the parent.
    pub fn output(&self, port: &str) -> Expr {
        let id = self.inst.port_net(port);
        assert_eq!(
            self.inst.module.nets[id - self.inst.net_base].kind,
            NetKind::Output,
            "{port} is not an output of {}",
            self.inst.module.name
        );
        self.net(id)
    }

    fn net(&self, id: usize) -> Expr {
        let n = &self.inst.module.nets[id - self.inst.net_base];
        Expr {
            node: Node::Net(id),
            width: n.width,
        }
    }

    /// Index of the instance in its parent.
    pub fn index(&self) -> usize {
        self.index
    }
}

/// A step of construction, in order: what the Verilog writer walks to keep the text in the
/// order (and under the section comments) the builder wrote it.
#[derive(Clone, Debug)]
pub(crate) enum Item {
    Section(String),
    Net(usize),
    Assign(usize),
    Memory(usize),
    Instance(usize),
}

/// One block's RTL: ports, nets and their driving expressions, registers, memories and child
/// instances.
#[derive(Clone, Debug)]
pub struct Module {
    /// The Verilog module name: unique per configuration (see [`crate::params::module_name`]).
    pub name: String,
    nets: Vec<Net>,
    names: std::collections::HashSet<String>,
    /// Combinational assignments in construction order; [`Program::compile`] sorts them so
    /// every net is written before it is read (a wire may be declared before its driver, see
    /// [`Module::forward`]).
    assigns: Vec<(usize, Expr)>,
    /// Registers: (reg net, net holding its next value).
    regs: Vec<(usize, usize)>,
    mems: Vec<Memory>,
    writes: Vec<WritePort>,
    sync_reads: Vec<SyncRead>,
    instances: Vec<Instance>,
    items: Vec<Item>,
    words: usize,
    clock: Option<usize>,
    reset: Option<usize>,
    /// The assignments compiled to a flat instruction tape on first use.
    program: std::sync::OnceLock<Program>,
}

impl Module {
    pub fn new(name: &str) -> Module {
        Module {
            name: name.to_string(),
            nets: vec![],
            names: Default::default(),
            assigns: vec![],
            regs: vec![],
            mems: vec![],
            writes: vec![],
            sync_reads: vec![],
            instances: vec![],
            items: vec![],
            words: 0,
            clock: None,
            reset: None,
            program: std::sync::OnceLock::new(),
        }
    }

    /// Starts a named section: a comment line in the Verilog (e.g. the spec § it implements).
    pub fn section(&mut self, title: &str) {
        self.items.push(Item::Section(title.to_string()));
    }

    fn claim(&mut self, name: &str) {
        assert!(
            self.names.insert(name.to_string()),
            "name {name} used twice in module {}",
            self.name
        );
    }

    fn add_net(&mut self, name: &str, width: usize, kind: NetKind) -> Expr {
        assert!(width >= 1);
        assert!(
            width <= 64 || matches!(kind, NetKind::Input | NetKind::Output | NetKind::Wire),
            "registers are at most 64 bits wide"
        );
        self.claim(name);
        let id = self.nets.len();
        self.nets.push(Net {
            name: name.to_string(),
            width,
            kind,
            offset: self.words,
            owner: None,
        });
        self.words += words_for(width);
        self.items.push(Item::Net(id));
        Expr {
            node: Node::Net(id),
            width,
        }
    }

    /// Declares the `clock` and `reset` inputs (synchronous, active-high reset).
    pub fn clock_reset(&mut self) -> (Expr, Expr) {
        let clock = self.input("clock", 1);
        let reset = self.input("reset", 1);
        self.clock = Some(self.nets.len() - 2);
        self.reset = Some(self.nets.len() - 1);
        (clock, reset)
    }

    /// Declares `ports` (a block's derived port list) in order: `clock` and `reset` through
    /// [`Module::clock_reset`], the others as inputs and outputs, returned by name.
    pub fn declare_ports(
        &mut self,
        ports: &[Port],
    ) -> (
        std::collections::HashMap<String, Expr>,
        std::collections::HashMap<String, Expr>,
    ) {
        let (mut inputs, mut outputs) = (Default::default(), Default::default());
        let clocked =
            ports.iter().any(|p| p.name == "clock") && ports.iter().any(|p| p.name == "reset");
        if clocked {
            self.clock_reset();
        }
        for port in ports {
            if clocked && (port.name == "clock" || port.name == "reset") {
                continue;
            }
            let (map, e): (&mut std::collections::HashMap<String, Expr>, Expr) = match port.dir {
                Dir::In => (&mut inputs, self.input(&port.name, port.width)),
                Dir::Out => (&mut outputs, self.output(&port.name, port.width)),
            };
            map.insert(port.name.clone(), e);
        }
        (inputs, outputs)
    }

    pub fn input(&mut self, name: &str, width: usize) -> Expr {
        self.add_net(name, width, NetKind::Input)
    }

    /// Declares an output; drive it later with [`Module::assign`].
    pub fn output(&mut self, name: &str, width: usize) -> Expr {
        self.add_net(name, width, NetKind::Output)
    }

    /// A named wire driven by `value`.
    pub fn wire(&mut self, name: &str, value: Expr) -> Expr {
        let w = self.add_net(name, value.width, NetKind::Wire);
        self.assign(&w, value);
        w
    }

    /// A wire whose driver is given later with [`Module::assign`]: for logic whose inputs depend
    /// on outputs computed further on (e.g. a scheduler's grant feeding a lookup whose result
    /// is needed elsewhere). Combinational loops are rejected when the module is compiled.
    pub fn forward(&mut self, name: &str, width: usize) -> Expr {
        self.add_net(name, width, NetKind::Wire)
    }

    /// Drives an output, a declared wire or an instance input with `value`.
    pub fn assign(&mut self, target: &Expr, value: Expr) {
        let Node::Net(id) = target.node else {
            panic!("assignment target must be a net")
        };
        assert_eq!(
            target.width, value.width,
            "width mismatch assigning {}",
            self.nets[id].name
        );
        assert!(
            self.assigns.iter().all(|(t, _)| *t != id),
            "{} driven twice",
            self.nets[id].name
        );
        self.items.push(Item::Assign(self.assigns.len()));
        self.assigns.push((id, value));
    }

    /// A register of `width` bits reset to `reset`; give its next value with [`Module::next`].
    pub fn reg(&mut self, name: &str, width: usize, reset: u64) -> Expr {
        self.add_net(name, width, NetKind::Reg { reset })
    }

    /// Sets the value a register takes at the next rising clock edge.
    pub fn next(&mut self, reg: &Expr, value: Expr) {
        assert!(self.clock.is_some(), "registers need clock_reset()");
        let Node::Net(id) = reg.node else {
            panic!("next() takes a register")
        };
        assert!(matches!(self.nets[id].kind, NetKind::Reg { .. }));
        let name = format!("{}_next", self.nets[id].name);
        let d = self.wire(&name, value);
        self.regs.push((id, net_of(&d)));
    }

    /// A memory of `depth` words (a power of two) of `width` bits, without reset.
    pub fn memory(&mut self, name: &str, width: usize, depth: usize) -> usize {
        assert!((1..=64).contains(&width), "memory width {width}");
        assert!(
            depth >= 2 && depth.is_power_of_two(),
            "memory depth {depth}"
        );
        assert!(self.clock.is_some(), "memories need clock_reset()");
        self.claim(name);
        let id = self.mems.len();
        self.mems.push(Memory {
            name: name.into(),
            width,
            depth,
            offset: self.words,
            owner: None,
        });
        self.words += depth;
        self.items.push(Item::Memory(id));
        id
    }

    pub fn memories(&self) -> &[Memory] {
        &self.mems
    }

    /// Asynchronous read of memory `mem` at `addr` (combinational, like a LUT-RAM).
    pub fn read(&self, mem: usize, addr: &Expr) -> Expr {
        let m = &self.mems[mem];
        assert_eq!(addr.width, m.addr_bits(), "address width of {}", m.name);
        Expr {
            node: Node::MemRead(mem, Box::new(addr.clone())),
            width: m.width,
        }
    }

    /// Synchronous read port `name`: at the rising edge, when `en`, the returned register takes
    /// `mem[addr]` (the old word on a same-address write), like a block RAM's output register.
    pub fn read_sync(&mut self, mem: usize, name: &str, addr: Expr, en: Expr) -> Expr {
        let width = self.mems[mem].width;
        assert_eq!(addr.width, self.mems[mem].addr_bits(), "read address width");
        assert_eq!(en.width, 1);
        let q = self.add_net(name, width, NetKind::ReadData);
        let addr = self.wire(&format!("{name}_addr"), addr);
        let en = self.wire(&format!("{name}_en"), en);
        self.sync_reads.push(SyncRead {
            mem,
            q: net_of(&q),
            addr: net_of(&addr),
            en: net_of(&en),
        });
        q
    }

    /// A write port of `mem`: at the rising edge, when `en`, `mem[addr] <= data`.
    pub fn write(&mut self, mem: usize, addr: Expr, data: Expr, en: Expr) {
        let (name, width) = (self.mems[mem].name.clone(), self.mems[mem].width);
        assert_eq!(
            addr.width,
            self.mems[mem].addr_bits(),
            "write address width"
        );
        assert_eq!(data.width, width, "write data width of {name}");
        assert_eq!(en.width, 1);
        let k = self.writes.iter().filter(|w| w.mem == mem).count();
        let port = if k == 0 {
            format!("{name}_w")
        } else {
            format!("{name}_w{k}")
        };
        let addr = self.wire(&format!("{port}_addr"), addr);
        let data = self.wire(&format!("{port}_data"), data);
        let en = self.wire(&format!("{port}_en"), en);
        self.writes.push(WritePort {
            mem,
            addr: net_of(&addr),
            data: net_of(&data),
            en: net_of(&en),
        });
    }

    /// Places `child` here as instance `name`. Its `clock` and `reset` are tied to this
    /// module's; drive every other input with [`Module::assign`] on [`InstanceRef::input`]
    /// (before or after reading its outputs), read outputs with [`InstanceRef::output`].
    pub fn instance(&mut self, name: &str, child: &std::sync::Arc<Module>) -> InstanceRef {
        let index = self.instances.len();
        let net_base = self.nets.len();
        let word_base = self.words;
        let mem_base = self.mems.len();
        for port in child.ports() {
            self.claim(&format!("{name}_{}", port.name));
        }
        let remap = |e: &Expr| e.remap(net_base, mem_base);
        // Child nets keep their kind (a child port stays Input / Output, with `owner` set, so
        // it is not a port of this module).
        for n in &child.nets {
            self.nets.push(Net {
                name: format!("{name}.{}", n.name),
                offset: n.offset + word_base,
                owner: Some(index),
                ..n.clone()
            });
        }
        for mem in &child.mems {
            self.mems.push(Memory {
                name: format!("{name}.{}", mem.name),
                offset: mem.offset + word_base,
                owner: Some(index),
                ..mem.clone()
            });
        }
        self.words += child.words;
        self.assigns
            .extend(child.assigns.iter().map(|(t, e)| (t + net_base, remap(e))));
        self.regs.extend(
            child
                .regs
                .iter()
                .map(|&(r, d)| (r + net_base, d + net_base)),
        );
        self.writes.extend(child.writes.iter().map(|w| WritePort {
            mem: w.mem + mem_base,
            addr: w.addr + net_base,
            data: w.data + net_base,
            en: w.en + net_base,
        }));
        self.sync_reads
            .extend(child.sync_reads.iter().map(|r| SyncRead {
                mem: r.mem + mem_base,
                q: r.q + net_base,
                addr: r.addr + net_base,
                en: r.en + net_base,
            }));
        let inst = Instance {
            name: name.into(),
            module: child.clone(),
            net_base,
        };
        self.instances.push(inst.clone());
        self.items.push(Item::Instance(index));
        let handle = InstanceRef { index, inst };
        // Clock and reset are shared by the whole hierarchy.
        for (port, parent) in [("clock", self.clock), ("reset", self.reset)] {
            if let Some(id) = child.net_id(port) {
                let parent = parent.expect("a clocked child needs clock_reset() in its parent");
                let src = Expr {
                    node: Node::Net(parent),
                    width: 1,
                };
                let dst = handle.net(id + net_base);
                self.assign(&dst, src);
            }
        }
        handle
    }

    pub fn instances(&self) -> &[Instance] {
        &self.instances
    }

    pub(crate) fn items(&self) -> &[Item] {
        &self.items
    }

    pub(crate) fn assign_at(&self, i: usize) -> &(usize, Expr) {
        &self.assigns[i]
    }

    pub(crate) fn writes(&self) -> &[WritePort] {
        &self.writes
    }

    pub(crate) fn sync_reads(&self) -> &[SyncRead] {
        &self.sync_reads
    }

    /// Every net: own nets first, then each instance's (named `inst.net`, with `owner` set).
    pub fn nets(&self) -> &[Net] {
        &self.nets
    }

    /// The top-level ports in declaration order.
    pub fn ports(&self) -> Vec<Port> {
        self.nets
            .iter()
            .filter(|n| n.owner.is_none())
            .filter_map(|n| {
                let dir = match n.kind {
                    NetKind::Input => Dir::In,
                    NetKind::Output => Dir::Out,
                    _ => return None,
                };
                Some(Port {
                    name: n.name.clone(),
                    dir,
                    width: n.width,
                })
            })
            .collect()
    }

    pub fn net_id(&self, name: &str) -> Option<usize> {
        self.nets.iter().position(|n| n.name == name)
    }

    pub fn clock_net(&self) -> Option<usize> {
        self.clock
    }

    /// Total width of the registers in the whole hierarchy: the flip-flop bits the RTL asks for
    /// (memory read-data registers included, memory words not).
    pub fn register_bits(&self) -> u64 {
        let regs: u64 = self
            .regs
            .iter()
            .map(|&(r, _)| self.nets[r].width as u64)
            .sum();
        let read_data: u64 = self
            .sync_reads
            .iter()
            .map(|r| self.nets[r.q].width as u64)
            .sum();
        regs + read_data
    }

    /// Memory bits in the whole hierarchy (depth × width summed).
    pub fn memory_bits(&self) -> u64 {
        self.mems.iter().map(|m| (m.depth * m.width) as u64).sum()
    }

    pub fn has_registers(&self) -> bool {
        !self.regs.is_empty()
    }

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

    /// The module's own registers (not its instances'), for the Verilog writer.
    pub(crate) fn regs(&self) -> &[(usize, usize)] {
        &self.regs
    }

    pub(crate) fn reset_net(&self) -> Option<usize> {
        self.reset
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
fn net_of(e: &Expr) -> usize {
    match e.node {
        Node::Net(id) => id,
        _ => panic!("not a net"),
    }
}

impl Expr {
    /// The same expression with net ids shifted by `nets` and memory ids by `mems` (a child's
    /// expression copied into its parent).
    fn remap(&self, nets: usize, mems: usize) -> Expr {
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
    fn visit_nets(&self, f: &mut impl FnMut(usize)) {
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
struct Program {
    ins: Vec<Ins>,
    slots: usize,
    consts: Vec<(usize, u64)>,
}

impl Program {
    fn compile(m: &Module) -> Program {
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
                Ins::Slice { dst, src, lo, mask } => {
                    let (word, bit) = (src + lo / 64, lo % 64);
                    let mut x = v[word] >> bit;
                    if bit != 0 && bit + (64 - mask.leading_zeros() as usize) > 64 {
                        x |= v[word + 1] << (64 - bit);
                    }
                    v[dst] = x & mask;
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
