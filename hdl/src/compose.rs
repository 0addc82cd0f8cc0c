//! smrtl blocks inside a rust-hdl design: [`smrtl_block!`](crate::smrtl_block) declares a typed
//! wrapper for one configuration of a block, with a `Signal` field per port, that a
//! `#[derive(LogicBlock)]` struct holds like any other rust-hdl block.
//!
//! ```
//! use rust_hdl::prelude::*;
//! use smrtl_hdl::blocks::bank_conflict_detector as bcd;
//! use smrtl_hdl::BlockParams;
//!
//! smrtl_hdl::smrtl_block! {
//!     /// The `ep8` bank-conflict detector (8 lanes, 8 banks, 14-bit addresses).
//!     pub struct Ep8Detector {
//!         pub clock: Signal<In, Clock>,
//!         pub reset: Signal<In, Bit>,
//!         pub valid: Signal<In, Bit>,
//!         pub lane_mask: Signal<In, Bits<8>>,
//!         pub addr: Signal<In, Bits<112>>,
//!         pub degree: Signal<Out, Bits<4>>,
//!         pub degree_m1: Signal<Out, Bits<3>>,
//!         pub cycles: Signal<Out, Bits<4>>,
//!         pub conflict: Signal<Out, Bit>,
//!         pub any_active: Signal<Out, Bit>,
//!     }
//!     module = bcd::build(&bcd::Params::resolve_pairs(Some("ep8"), &[]).unwrap());
//! }
//!
//! let mut det = Ep8Detector::new();
//! det.valid.next = true;
//! det.lane_mask.next = 0b11.into();
//! det.addr.next = (32u64 << 14).into(); // lane 1 at byte 32: bank 0 like lane 0, next layer
//! det.connect_all();
//! simulate(&mut det, 10);
//! assert_eq!(det.degree.val().to_u64(), 2);
//! ```
//!
//! What the wrapper is, for rust-hdl:
//! * **Simulation**: its `update` copies the input signals into an [`RtlBlock`] (smrtl's own
//!   evaluator, clocked on the rising edge of the module's `clock`), settles it and drives the
//!   output signals' `.next`; rust-hdl's `Simulation` / `simulate` iterate it to convergence
//!   like any block.
//! * **Verilog**: a [`Verilog::Blackbox`] named by the module's stable name (see
//!   [`crate::params::module_name`]) whose code is smrtl's Verilog of the whole hierarchy
//!   ([`crate::verilog`]), so rust-hdl's `generate_verilog` instantiates it in the parent by that
//!   name. rust-hdl writes a black box's code once per instance; smrtl's include guard around
//!   each module (`` `ifndef SMRTL_MODULE_<name> ``) lets the copies, and blocks that share a
//!   child module, live in one file.
//! * **Hierarchy**: `accept` shows the port signals, the module's internal nets, and each
//!   instance of the smrtl hierarchy as a child block with its own scope (VCD, probes,
//!   `generate_verilog`'s module tree), like [`RtlBlock`] does.
//!
//! The wrapper is written against one configuration: [`Binder`] checks when it is constructed
//! that every field is a port of the module with the declared direction and width and that
//! every port is declared, and panics naming the port otherwise ([`declaration`] prints the
//! fields a configuration needs).

use crate::netlist::{words_for, Module};
use crate::rusthdl::RtlBlock;
use crate::Dir;
use rust_hdl::core::prelude::*;
use std::fmt::Write;
use std::sync::Arc;

#[doc(hidden)]
pub use rust_hdl as __rust_hdl;

/// Declares a rust-hdl block for one configuration of an smrtl block.
///
/// ```text
/// smrtl_block! {
///     /// docs
///     pub struct Name {
///         pub <port>: Signal<In | Out, Bit | Clock | Bits<N>>,   // one per port of the module
///         ...
///     }
///     module = <expression giving a smrtl_hdl::Module or Arc<Module>>;
/// }
/// ```
///
/// Field names are the module's port names; `Name::new()` (also `Default`) checks them
/// against the module (see [`compose::Binder`](crate::compose::Binder)). The module expression
/// is evaluated once per type (`Name::design()`). Generated items: the struct (its port fields
/// plus a private core), `new`, `design`, `core`, `Default`, `Logic` (`update`, `connect`, `hdl`)
/// and `Block`.
#[macro_export]
macro_rules! smrtl_block {
    (
        $(#[$attr:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$fattr:meta])*
                $fvis:vis $field:ident : $fty:ty
            ),* $(,)?
        }
        module = $build:expr;
    ) => {
        $(#[$attr])*
        $vis struct $name {
            $(
                $(#[$fattr])*
                $fvis $field: $fty,
            )*
            __smrtl: $crate::compose::Core,
        }

        impl $name {
            /// The smrtl module this block is written against and its Verilog (built once).
            pub fn design() -> &'static $crate::compose::Design {
                static DESIGN: ::std::sync::OnceLock<$crate::compose::Design> =
                    ::std::sync::OnceLock::new();
                DESIGN.get_or_init(|| $crate::compose::Design::new($build))
            }

            /// A new instance; panics if the fields do not match the module's ports.
            pub fn new() -> Self {
                let mut binder = $crate::compose::Binder::new(Self::design(), stringify!($name));
                Self {
                    $( $field: binder.port(stringify!($field)), )*
                    __smrtl: binder.finish(),
                }
            }

            /// The smrtl evaluator inside (all net values, for inspection).
            pub fn core(&self) -> &$crate::compose::Core {
                &self.__smrtl
            }
        }

        impl ::std::default::Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl $crate::compose::__rust_hdl::core::logic::Logic for $name {
            fn update(&mut self) {
                use $crate::compose::PortSignal as _;
                let core = &mut self.__smrtl;
                core.begin();
                // The clock first, so a rising edge samples the values settled before it.
                let mut k = 0usize..;
                $( self.$field.load(core, k.next().unwrap_or_default(), true); )*
                core.edge();
                let mut k = 0usize..;
                $( self.$field.load(core, k.next().unwrap_or_default(), false); )*
                core.settle();
                let mut k = 0usize..;
                $( self.$field.store(core, k.next().unwrap_or_default()); )*
            }

            fn connect(&mut self) {
                use $crate::compose::PortSignal as _;
                $( self.$field.connect_output(); )*
            }

            fn hdl(&self) -> $crate::compose::__rust_hdl::core::ast::Verilog {
                self.__smrtl.hdl()
            }
        }

        impl $crate::compose::__rust_hdl::core::block::Block for $name {
            fn connect_all(&mut self) {
                $crate::compose::__rust_hdl::core::logic::Logic::connect(self);
                $( $crate::compose::__rust_hdl::core::block::Block::connect_all(&mut self.$field); )*
            }

            fn update_all(&mut self) {
                $crate::compose::__rust_hdl::core::logic::Logic::update(self);
                $( $crate::compose::__rust_hdl::core::block::Block::update_all(&mut self.$field); )*
            }

            fn has_changed(&self) -> bool {
                $( $crate::compose::__rust_hdl::core::block::Block::has_changed(&self.$field) || )*
                    self.__smrtl.has_changed()
            }

            fn accept(
                &self,
                name: &str,
                probe: &mut dyn $crate::compose::__rust_hdl::core::probe::Probe,
            ) {
                $crate::compose::__rust_hdl::core::probe::Probe::visit_start_scope(probe, name, self);
                $(
                    $crate::compose::__rust_hdl::core::block::Block::accept(
                        &self.$field,
                        stringify!($field),
                        probe,
                    );
                )*
                self.__smrtl.accept_contents(probe);
                $crate::compose::__rust_hdl::core::probe::Probe::visit_end_scope(probe, name, self);
            }
        }
    };
}

/// A configuration's module and its Verilog, shared by every instance of a wrapper type.
pub struct Design {
    module: Arc<Module>,
    verilog: String,
}

impl Design {
    pub fn new(module: impl Into<Arc<Module>>) -> Design {
        let module = module.into();
        Design {
            verilog: guarded_verilog(&module),
            module,
        }
    }

    pub fn module(&self) -> &Arc<Module> {
        &self.module
    }

    /// smrtl's Verilog of the hierarchy, each module in its include guard (the black box code).
    pub fn verilog(&self) -> &str {
        &self.verilog
    }
}

/// smrtl's Verilog of `module`'s hierarchy ([`crate::verilog::emit`]), checked to have every
/// module definition in its `` `ifndef SMRTL_MODULE_<name> `` guard: rust-hdl repeats a black
/// box's code for every instance, and the guards let the copies (and blocks that share a child
/// module) live in one file.
pub fn guarded_verilog(module: &Module) -> String {
    let text = crate::verilog::emit(module, &[]);
    let mut names = vec![];
    collect_names(module, &mut names);
    for name in names {
        assert!(
            text.contains(&format!("`ifndef SMRTL_MODULE_{name}\n")),
            "smrtl's Verilog of {} has no include guard for module {name}",
            module.name
        );
    }
    text
}

fn collect_names(m: &Module, out: &mut Vec<String>) {
    out.push(m.name.clone());
    for inst in m.instances() {
        collect_names(&inst.module, out);
    }
}

/// The field list `smrtl_block!` needs for `module` (one `pub <port>: Signal<..>,` line each).
pub fn declaration(module: &Module) -> String {
    let mut s = String::new();
    for p in module.ports() {
        let _ = writeln!(s, "    {},", field_decl(&p.name, p.dir, p.width, module));
    }
    s
}

fn field_decl(name: &str, dir: Dir, width: usize, module: &Module) -> String {
    let is_clock = module
        .clock_net()
        .is_some_and(|c| module.nets()[c].name == name)
        || (name == "clock" && width == 1 && dir == Dir::In);
    let ty = match (width, is_clock) {
        (1, true) => "Clock".to_string(),
        (1, false) => "Bit".to_string(),
        (w, _) => format!("Bits<{w}>"),
    };
    let d = match dir {
        Dir::In => "In",
        Dir::Out => "Out",
    };
    format!("pub {name}: Signal<{d}, {ty}>")
}

/// A value type a port signal can carry: `Bit`, `Clock` or `Bits<N>` (any N), converted to and
/// from smrtl's little-endian 64-bit words.
pub trait PortValue: Synth {
    fn to_words(&self, out: &mut [u64]);
    fn from_words(words: &[u64]) -> Self;
}

impl PortValue for bool {
    fn to_words(&self, out: &mut [u64]) {
        out[0] = u64::from(*self);
    }
    fn from_words(words: &[u64]) -> Self {
        words[0] & 1 == 1
    }
}

impl PortValue for Clock {
    fn to_words(&self, out: &mut [u64]) {
        out[0] = u64::from(self.clk);
    }
    fn from_words(words: &[u64]) -> Self {
        Clock {
            clk: words[0] & 1 == 1,
        }
    }
}

impl<const N: usize> PortValue for Bits<N> {
    fn to_words(&self, out: &mut [u64]) {
        if N <= 64 {
            out[0] = u64::from(*self);
        } else {
            for (w, slot) in out.iter_mut().enumerate().take(words_for(N)) {
                *slot = self.get_bits::<64>(64 * w).to_u64();
            }
        }
    }

    fn from_words(words: &[u64]) -> Self {
        if N <= 64 {
            Bits::from(words[0] & crate::netlist::mask(N))
        } else {
            let mut x = Bits::<N>::default();
            for (w, &word) in words.iter().enumerate().take(words_for(N)) {
                if word != 0 {
                    x = x | (Bits::<N>::from(word) << (64 * w) as u64);
                }
            }
            x
        }
    }
}

/// A port field of a wrapper: a rust-hdl `Signal<In, T>` or `Signal<Out, T>` (used by the
/// macro).
pub trait PortSignal: Block + Default {
    const DIR: Dir;
    const WIDTH: usize;
    /// Type as written in the struct (for messages).
    fn type_name() -> String;
    /// An input: drive field `k`'s net (the clock net only when `clock_pass`, others otherwise).
    fn load(&self, _core: &mut Core, _k: usize, _clock_pass: bool) {}
    /// An output: copy field `k`'s net into `.next`.
    fn store(&mut self, _core: &Core, _k: usize) {}
    /// Marks an output as driven (rust-hdl's `connect`).
    fn connect_output(&mut self) {}
}

impl<T: PortValue> PortSignal for Signal<In, T> {
    const DIR: Dir = Dir::In;
    const WIDTH: usize = T::BITS;

    fn type_name() -> String {
        format!("Signal<In, {}>", T::descriptor().name.replace("::<", "<"))
    }

    fn load(&self, core: &mut Core, k: usize, clock_pass: bool) {
        let net = core.ports[k];
        if (Some(net) == core.clock) != clock_pass {
            return;
        }
        let mut words = std::mem::take(&mut core.scratch);
        words.clear();
        words.resize(words_for(T::BITS), 0);
        self.val().to_words(&mut words);
        if clock_pass && core.block.get(net) != words.as_slice() {
            core.clock_changed = true;
        }
        core.block.set(net, &words);
        core.scratch = words;
    }
}

impl<T: PortValue> PortSignal for Signal<Out, T> {
    const DIR: Dir = Dir::Out;
    const WIDTH: usize = T::BITS;

    fn type_name() -> String {
        format!("Signal<Out, {}>", T::descriptor().name.replace("::<", "<"))
    }

    fn store(&mut self, core: &Core, k: usize) {
        self.next = T::from_words(core.block.get(core.ports[k]));
    }

    fn connect_output(&mut self) {
        self.connect();
    }
}

/// Builds a wrapper's [`Core`], checking each declared field against the module's ports (used
/// by the macro's `new`).
pub struct Binder {
    design: &'static Design,
    owner: &'static str,
    ports: Vec<usize>,
}

impl Binder {
    pub fn new(design: &'static Design, owner: &'static str) -> Binder {
        Binder {
            design,
            owner,
            ports: vec![],
        }
    }

    /// The signal for field `name`; panics unless `name` is a port of the module with the
    /// signal's direction and width.
    pub fn port<S: PortSignal>(&mut self, name: &str) -> S {
        let m = &*self.design.module;
        let (owner, module) = (self.owner, &m.name);
        let port = m.ports().into_iter().find(|p| p.name == name);
        let Some(port) = port else {
            panic!(
                "{owner}.{name}: {module} has no port `{name}` (its ports: {}); \
                 the wrapper is written against another configuration",
                m.ports()
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let expected = field_decl(&port.name, port.dir, port.width, m);
        assert!(
            S::DIR == port.dir,
            "{owner}.{name} is declared {} but port `{name}` of {module} is an {} (`{expected}`)",
            S::type_name(),
            match port.dir {
                Dir::In => "input",
                Dir::Out => "output",
            }
        );
        assert!(
            S::WIDTH == port.width,
            "{owner}.{name} is declared {} ({} bits) but port `{name}` of {module} is {} bits \
             wide (`{expected}`); the wrapper is written against another configuration",
            S::type_name(),
            S::WIDTH,
            port.width
        );
        let net = m.net_id(name).expect("a port is a net");
        self.ports.push(net);
        S::default()
    }

    /// The core; panics if a port of the module has no field.
    pub fn finish(self) -> Core {
        let m = &self.design.module;
        let missing: Vec<String> = m
            .ports()
            .iter()
            .filter(|p| !self.ports.iter().any(|&n| m.nets()[n].name == p.name))
            .map(|p| format!("`{}`", field_decl(&p.name, p.dir, p.width, m)))
            .collect();
        assert!(
            missing.is_empty(),
            "{} does not declare port(s) {} of {}",
            self.owner,
            missing.join(", "),
            m.name
        );
        Core::new(self.design, self.ports)
    }
}

/// The smrtl side of a wrapper: the module's evaluator ([`RtlBlock`]) and what rust-hdl's
/// probes need to see its internal nets and child instances.
pub struct Core {
    block: RtlBlock,
    design: &'static Design,
    /// Net of each declared field, in field order.
    ports: Vec<usize>,
    clock: Option<usize>,
    clock_changed: bool,
    scratch: Vec<u64>,
    /// Values when the current `update` started (for `has_changed` and the atoms' `changed`).
    prev: Vec<u64>,
}

impl Core {
    fn new(design: &'static Design, ports: Vec<usize>) -> Core {
        let block = RtlBlock::new(design.module.clone());
        let m = &design.module;
        Core {
            prev: block.values().to_vec(),
            clock: m.clock_net(),
            clock_changed: false,
            scratch: vec![],
            block,
            design,
            ports,
        }
    }

    pub fn module(&self) -> &Module {
        &self.design.module
    }

    /// The value of net `name` of the flattened hierarchy (`inst.net` below the top).
    pub fn net(&self, name: &str) -> Option<&[u64]> {
        self.design.module.net_id(name).map(|id| self.block.get(id))
    }

    #[doc(hidden)]
    pub fn begin(&mut self) {
        self.prev.copy_from_slice(self.block.values());
        self.clock_changed = false;
    }

    /// Applies a clock change alone (the rising edge clocks the registers on the values
    /// settled before it).
    #[doc(hidden)]
    pub fn edge(&mut self) {
        if self.clock_changed {
            self.block.update();
        }
    }

    #[doc(hidden)]
    pub fn settle(&mut self) {
        self.block.update();
    }

    #[doc(hidden)]
    pub fn has_changed(&self) -> bool {
        self.block.values() != self.prev.as_slice()
    }

    /// The black box: named by the module's stable name, its code the guarded Verilog.
    #[doc(hidden)]
    pub fn hdl(&self) -> Verilog {
        Verilog::Blackbox(BlackBox {
            code: self.design.verilog.clone(),
            name: self.design.module.name.clone(),
        })
    }

    /// The top module's internal nets as local atoms (its ports are the wrapper's signals),
    /// then each instance as a child block.
    #[doc(hidden)]
    pub fn accept_contents(&self, probe: &mut dyn Probe) {
        self.block.accept_contents(probe, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<const N: usize>() {
        let n = words_for(N);
        let patterns: Vec<Vec<u64>> = vec![
            vec![0; n],
            (0..n as u64)
                .map(|i| 0x9e37_79b9_7f4a_7c15u64.rotate_left(i as u32 * 7) ^ i)
                .collect(),
            vec![u64::MAX; n],
        ];
        for mut words in patterns {
            // Mask the top word to N bits.
            let top = N - 64 * (n - 1);
            words[n - 1] &= crate::netlist::mask(top);
            let x = Bits::<N>::from_words(&words);
            for b in 0..N {
                assert_eq!(
                    x.get_bit(b),
                    words[b / 64] >> (b % 64) & 1 == 1,
                    "N={N} bit {b}"
                );
            }
            let mut back = vec![0; n];
            x.to_words(&mut back);
            assert_eq!(back, words, "N={N}");
        }
    }

    #[test]
    fn bits_words_round_trip() {
        round_trip::<1>();
        round_trip::<4>();
        round_trip::<31>();
        round_trip::<32>();
        round_trip::<33>();
        round_trip::<63>();
        round_trip::<64>();
        round_trip::<65>();
        round_trip::<112>();
        round_trip::<128>();
        round_trip::<129>();
        round_trip::<300>();
    }
}
