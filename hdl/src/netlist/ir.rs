//! The netlist IR: ports, nets, memories, instances, sections and the [`Module`] builder
//! (`docs/verilog.md`). Evaluation is in `eval.rs`, expressions in `expr.rs`.

use super::eval::Program;
use super::expr::{net_of, Node};
use super::Expr;
use serde::Serialize;

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
    /// Equal elements packed in the port, element 0 lowest (per kernel, warp, slot, lane: a
    /// `name[w; n]` declaration of [`ports!`](crate::ports)); 1 for a plain value. Waveforms show
    /// each element as `<name>_<k>` beside the bus (docs/cli.md "Waveforms").
    #[serde(skip_serializing_if = "is_one")]
    pub elems: usize,
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

impl Port {
    /// A port of one plain value.
    pub fn new(name: &str, dir: Dir, width: usize) -> Port {
        Port::array(name, dir, width, 1)
    }

    /// A port of `elems` equal elements of `width / elems` bits.
    pub fn array(name: &str, dir: Dir, width: usize, elems: usize) -> Port {
        assert!(
            elems >= 1 && width.is_multiple_of(elems),
            "{name}: {width} bits in {elems} elements"
        );
        Port {
            name: name.into(),
            dir,
            width,
            elems,
        }
    }

    /// 64-bit words needed to hold a value of this port.
    pub fn words(&self) -> usize {
        words_for(self.width)
    }
}

/// A port list from `(name, direction, width)` rows (a block's spec port table).
pub fn port_list(spec: &[(&str, Dir, usize)]) -> Vec<Port> {
    spec.iter()
        .map(|&(name, dir, width)| Port::new(name, dir, width))
        .collect()
}

/// 64-bit words needed for `width` bits.
#[inline]
pub fn words_for(width: usize) -> usize {
    width.div_ceil(64).max(1)
}

/// Mask of the low `width` bits (`width` ≤ 64).
#[inline]
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
    /// A port's equal elements ([`Port::elems`]); 1 for every other net.
    pub elems: usize,
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
    pub(super) nets: Vec<Net>,
    names: std::collections::HashSet<String>,
    /// Combinational assignments in construction order; [`Program::compile`] sorts them so
    /// every net is written before it is read (a wire may be declared before its driver, see
    /// [`Module::forward`]).
    pub(super) assigns: Vec<(usize, Expr)>,
    /// Registers: (reg net, net holding its next value).
    pub(super) regs: Vec<(usize, usize)>,
    pub(super) mems: Vec<Memory>,
    pub(super) writes: Vec<WritePort>,
    pub(super) sync_reads: Vec<SyncRead>,
    instances: Vec<Instance>,
    items: Vec<Item>,
    /// The docs page the module's section numbers (§) refer to ([`Module::cites`]).
    cites: Option<String>,
    pub(super) words: usize,
    clock: Option<usize>,
    pub(super) reset: Option<usize>,
    /// The assignments compiled to a flat instruction tape on first use.
    pub(super) program: std::sync::OnceLock<Program>,
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
            cites: None,
            words: 0,
            clock: None,
            reset: None,
            program: std::sync::OnceLock::new(),
        }
    }

    /// The docs page (`docs/<page>.md`) whose section numbers the module's sections cite: one
    /// comment line at the top of the module's body, so each section says only `§3.2`
    /// (docs/verilog.md "Names").
    pub fn cites(&mut self, page: &str) {
        self.cites = Some(page.to_string());
    }

    /// The page of [`Module::cites`], if any.
    pub fn cited(&self) -> Option<&str> {
        self.cites.as_deref()
    }

    /// Starts a named section: a comment line in the Verilog (e.g. the § of the docs page it
    /// implements).
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
            elems: 1,
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
            let map: &mut std::collections::HashMap<String, Expr> = match port.dir {
                Dir::In => &mut inputs,
                Dir::Out => &mut outputs,
            };
            map.insert(port.name.clone(), self.port(port));
        }
        (inputs, outputs)
    }

    /// Declares one port of a block's port list, an input or an output, keeping its elements
    /// ([`Port::elems`]) for the waveforms.
    pub fn port(&mut self, port: &Port) -> Expr {
        let e = match port.dir {
            Dir::In => self.input(&port.name, port.width),
            Dir::Out => self.output(&port.name, port.width),
        };
        let id = self.nets.len() - 1;
        self.nets[id].elems = port.elems;
        e
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

    /// Every combinational assignment (the instances' included), in construction order.
    pub(crate) fn assigns(&self) -> &[(usize, Expr)] {
        &self.assigns
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
                Some(Port::array(&n.name, dir, n.width, n.elems))
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

    /// The module's own registers (not its instances'), for the Verilog writer.
    pub(crate) fn regs(&self) -> &[(usize, usize)] {
        &self.regs
    }

    pub(crate) fn reset_net(&self) -> Option<usize> {
        self.reset
    }
}
