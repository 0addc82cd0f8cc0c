//! A block's ports, declared once ([`ports!`](crate::ports)): the port-name constants, the port
//! list the RTL and every backend use, the typed values of one cycle ([`port::Inputs`] /
//! [`port::Outputs`], what stimulus and models speak) and the slot handles that put them in
//! the harness's word buffers ([`port::Io`]) all come from the one declaration
//! (docs/blocks.md §2).
//!
//! [`port::Inputs`]: crate::blocks::req_counter::port::Inputs
//! [`port::Outputs`]: crate::blocks::req_counter::port::Outputs
//! [`port::Io`]: crate::blocks::req_counter::port::Io

use crate::layout::{get_bits, low_mask, set_bits, Layout, Slot};
use crate::netlist::{Dir, Port};

/// A port's value in a typed cycle: `bool` for a flag, `u64` for a field (at most 64 bits).
pub trait PortValue: Copy + Default + std::fmt::Debug + PartialEq + Eq {
    fn to_bits(self) -> u64;
    fn from_bits(bits: u64) -> Self;
}

impl PortValue for bool {
    #[inline]
    fn to_bits(self) -> u64 {
        self as u64
    }
    #[inline]
    fn from_bits(bits: u64) -> bool {
        bits & 1 == 1
    }
}

impl PortValue for u64 {
    #[inline]
    fn to_bits(self) -> u64 {
        self
    }
    #[inline]
    fn from_bits(bits: u64) -> u64 {
        bits
    }
}

/// A port's typed value, one element or a bus of equal elements (element 0 lowest), read from
/// and written to its slot (`H` = [`Slot`]), or a bus declared `each`, read from and written to
/// one slot per element (`H` = `Vec<Slot>`).
pub trait PortField<H: ?Sized = Slot> {
    /// Writes the value into the port's words.
    fn put(&self, slot: &H, buf: &mut [u64]);
    /// Reads the value from the port's words (in place: no allocation).
    fn take(&mut self, slot: &H, buf: &[u64]);
}

impl<T: PortValue> PortField for T {
    #[inline]
    fn put(&self, slot: &Slot, buf: &mut [u64]) {
        slot.set_value(buf, self.to_bits());
    }
    #[inline]
    fn take(&mut self, slot: &Slot, buf: &[u64]) {
        *self = T::from_bits(slot.value(buf));
    }
}

/// A bus of equal elements: the port's words are sliced once, then read or written a word at
/// a time when the element width divides 64 (1-bit flags, bytes, ...), else field by field.
impl<T: PortValue> PortField for Vec<T> {
    #[inline]
    fn put(&self, slot: &Slot, buf: &mut [u64]) {
        if let Some(w) = elem_width(slot, self.len()) {
            let words = slot.of_mut(buf);
            if 64 % w == 0 {
                let m = low_mask(w);
                for (chunk, word) in self.chunks(64 / w).zip(words.iter_mut()) {
                    let mut packed = 0;
                    for (k, v) in chunk.iter().enumerate() {
                        packed |= (v.to_bits() & m) << (k * w);
                    }
                    *word = (*word & !low_mask(chunk.len() * w)) | packed;
                }
            } else {
                for (k, v) in self.iter().enumerate() {
                    set_bits(words, k * w, w, v.to_bits());
                }
            }
        }
    }
    #[inline]
    fn take(&mut self, slot: &Slot, buf: &[u64]) {
        if let Some(w) = elem_width(slot, self.len()) {
            let words = slot.of(buf);
            if 64 % w == 0 {
                let m = low_mask(w);
                for (chunk, word) in self.chunks_mut(64 / w).zip(words) {
                    let mut rest = *word;
                    for v in chunk {
                        *v = T::from_bits(rest & m);
                        rest = rest.wrapping_shr(w as u32);
                    }
                }
            } else {
                for (k, v) in self.iter_mut().enumerate() {
                    *v = T::from_bits(get_bits(words, k * w, w));
                }
            }
        }
    }
}

/// A bus declared `each` (`name[w; n, each]`): element `k` is its own port `name_k`.
impl<T: PortValue> PortField<Vec<Slot>> for Vec<T> {
    #[inline]
    fn put(&self, slots: &Vec<Slot>, buf: &mut [u64]) {
        for (v, slot) in self.iter().zip(slots) {
            v.put(slot, buf);
        }
    }
    #[inline]
    fn take(&mut self, slots: &Vec<Slot>, buf: &[u64]) {
        for (v, slot) in self.iter_mut().zip(slots) {
            v.take(slot, buf);
        }
    }
}

/// The port name of element `k` of a bus declared `each`: `<name>_<k>`.
pub fn elem_name(name: &str, k: usize) -> String {
    format!("{name}_{k}")
}

/// The element width of a bus of `n` elements in `slot` (`None` when absent or empty).
#[inline]
fn elem_width(slot: &Slot, n: usize) -> Option<usize> {
    (slot.present() && n > 0).then(|| slot.width / n)
}

/// The slot of port `name` in `layout`: an input or an output, or [`Slot::absent`] when this
/// configuration does not have the port (`present` false). A declared port missing from the
/// layout is a bug in the declaration and panics naming it.
#[doc(hidden)]
pub fn slot(layout: &Layout, name: &str, dir: Dir, present: bool) -> Slot {
    if !present {
        return Slot::absent(name);
    }
    match dir {
        Dir::In => layout.in_slot(name).clone(),
        Dir::Out => layout.out_slot(name).clone(),
    }
}

/// A port row of a declaration: `name`, direction, `width × count` bits, present or not.
#[doc(hidden)]
pub fn push(v: &mut Vec<Port>, name: &str, dir: Dir, width: usize, count: usize, present: bool) {
    if present {
        v.push(Port::array(name, dir, width * count, count));
    }
}

/// The slots of a bus declared `each`: one per element, `<name>_<k>` (all absent when the
/// port is).
#[doc(hidden)]
pub fn slots(layout: &Layout, name: &str, dir: Dir, count: usize, present: bool) -> Vec<Slot> {
    (0..count)
        .map(|k| slot(layout, &elem_name(name, k), dir, present))
        .collect()
}

/// The port rows of a declaration: one row `name` of `width × count` bits, or with `each` one
/// row `<name>_<k>` of `width` bits per element.
#[doc(hidden)]
#[allow(clippy::too_many_arguments)]
pub fn push_port(
    v: &mut Vec<Port>,
    name: &str,
    dir: Dir,
    width: usize,
    count: usize,
    present: bool,
    each: bool,
) {
    if each {
        for k in 0..count {
            push(v, &elem_name(name, k), dir, width, 1, present);
        }
    } else {
        push(v, name, dir, width, count, present);
    }
}

/// What a block's params know of its ports ([`ports!`](crate::ports) implements it).
pub trait HasPorts {
    /// One cycle's inputs, typed (the stimulus of a block is a list of these).
    type Inputs: Clone + std::fmt::Debug + PartialEq + Send + Sync + 'static;
    /// One cycle's outputs, typed.
    type Outputs: Clone + std::fmt::Debug + PartialEq + Send + Sync + 'static;
    /// The slot handles of every declared port in a layout.
    type Io: Clone + std::fmt::Debug + Send + Sync + 'static;
    /// The block's ports: `clock`, `reset`, the inputs, then the outputs.
    fn port_list(&self) -> Vec<Port>;
    /// Inputs at their idle value (all zero), buses sized for these params.
    fn idle_inputs(&self) -> Self::Inputs;
    /// Outputs at zero, buses sized for these params.
    fn zero_outputs(&self) -> Self::Outputs;
    /// The slot handles in `layout` (built from [`HasPorts::port_list`]).
    fn io(&self, layout: &Layout) -> Self::Io;
    /// Writes `inputs` into an input buffer.
    fn encode(io: &Self::Io, inputs: &Self::Inputs, buf: &mut [u64]);
    /// Reads an input buffer into `inputs` (what functional coverage looks at).
    fn decode_inputs(io: &Self::Io, buf: &[u64], inputs: &mut Self::Inputs);
    /// Reads an output buffer into `outputs`.
    fn read_outputs(io: &Self::Io, buf: &[u64], outputs: &mut Self::Outputs);
}

/// Declares a block's ports once. Inside the block's module it writes:
///
/// - `pub mod port` with a name constant per port (`port::ACC == "acc"`, plus `CLOCK`,
///   `RESET`), the typed cycle values `port::Inputs` / `port::Outputs` (a field per port:
///   `bool` or `u64`, `Vec<_>` for a bus of equal elements; `Inputs` also has `reset`), and the
///   slot handles `port::Io` (a [`Slot`] field per port, `reset` included) with
///   `read_inputs` / `write_inputs` / `read_outputs` / `write_outputs`;
/// - `pub fn ports(p) -> Vec<Port>`: `clock`, `reset`, the inputs, the outputs, in the order
///   declared (then the `extra` ports);
/// - `impl HasPorts for Params`.
///
/// ```text
/// smrtl_hdl::ports! {
///     Params as p;
///     let ib = p.inflight_bits as usize;     // bindings, usable in widths and conditions
///     inputs {
///         /// doc of the port
///         issue[1]: bool,                     // one flag
///         done[2],                            // a 2-bit field (u64)
///         slot[sw; n],                        // a bus of n sw-bit elements (Vec<u64>)
///         reason[3; n, each],                 // n ports reason_0 .. reason_{n-1} of 3 bits (Vec<u64>)
///         smil_limit[ib] if p.mode == Mode::Smil,   // present only when the condition holds
///     }
///     outputs { mem_ok[1]: bool, ... }
///     extra extra_ports(p);                   // optional: ports named at run time
/// }
/// ```
#[macro_export]
macro_rules! ports {
    (
        $P:ty as $p:ident;
        $(let $bind:pat = $bval:expr;)*
        inputs {
            $($(#[$imeta:meta])* $iname:ident [$iw:expr $(; $in:expr $(, $ieach:ident)?)?] $(: $ity:ident)? $(if $icond:expr)?),* $(,)?
        }
        outputs {
            $($(#[$ometa:meta])* $oname:ident [$ow:expr $(; $on:expr $(, $oeach:ident)?)?] $(: $oty:ident)? $(if $ocond:expr)?),* $(,)?
        }
        $(extra $extra:expr;)?
    ) => {
        /// The block's port names, typed cycle values and slot handles (declared once, with
        /// [`ports!`](smrtl_hdl::ports)).
        pub mod port {
            #[allow(unused_imports)]
            use super::*;
            use $crate::ports::PortField as _;

            /// The clock (every block has one; backends drive it).
            pub const CLOCK: &str = "clock";
            /// Synchronous reset.
            pub const RESET: &str = "reset";
            $crate::__pastey::paste! {
                $($(#[$imeta])* pub const [<$iname:upper>]: &str = stringify!($iname);)*
                $($(#[$ometa])* pub const [<$oname:upper>]: &str = stringify!($oname);)*
            }

            /// One cycle's inputs.
            #[derive(Clone, Debug, Default, PartialEq, Eq)]
            pub struct Inputs {
                pub reset: bool,
                $($(#[$imeta])* pub $iname: $crate::ports!(@ty [$($ity)?] [$($in)?]),)*
            }

            /// One cycle's outputs.
            #[derive(Clone, Debug, Default, PartialEq, Eq)]
            pub struct Outputs {
                $($(#[$ometa])* pub $oname: $crate::ports!(@ty [$($oty)?] [$($on)?]),)*
            }

            /// Where each port sits in the word buffers of a [`Layout`]($crate::layout::Layout).
            #[derive(Clone, Debug)]
            pub struct Io {
                pub reset: $crate::layout::Slot,
                $(pub $iname: $crate::ports!(@slot [$($($ieach)?)?]),)*
                $(pub $oname: $crate::ports!(@slot [$($($oeach)?)?]),)*
            }

            impl Inputs {
                /// All inputs idle (zero), buses sized for `p`.
                #[allow(unused_variables, clippy::redundant_locals)]
                pub fn new($p: &$P) -> Inputs {
                    $(let $bind = $bval;)*
                    Inputs {
                        reset: false,
                        $($iname: $crate::ports!(@new [$($ity)?] [$($in)?]),)*
                    }
                }
            }

            impl Outputs {
                /// All outputs zero, buses sized for `p`.
                #[allow(unused_variables, clippy::redundant_locals)]
                pub fn new($p: &$P) -> Outputs {
                    $(let $bind = $bval;)*
                    Outputs {
                        $($oname: $crate::ports!(@new [$($oty)?] [$($on)?]),)*
                    }
                }
            }

            impl Io {
                /// The slots of `p`'s ports in `layout`.
                #[allow(unused_variables, clippy::redundant_locals)]
                pub fn new($p: &$P, layout: &$crate::layout::Layout) -> Io {
                    use $crate::netlist::Dir;
                    $(let $bind = $bval;)*
                    Io {
                        reset: $crate::ports::slot(layout, RESET, Dir::In, true),
                        $($iname: $crate::ports!(@slots [$($($ieach)?)?] layout,
                            stringify!($iname), Dir::In, $crate::ports!(@count $($in)?),
                            $crate::ports!(@cond $($icond)?)),)*
                        $($oname: $crate::ports!(@slots [$($($oeach)?)?] layout,
                            stringify!($oname), Dir::Out, $crate::ports!(@count $($on)?),
                            $crate::ports!(@cond $($ocond)?)),)*
                    }
                }

                /// Reads a cycle's inputs from `buf` into `i` (no allocation).
                #[inline]
                pub fn read_inputs(&self, buf: &[u64], i: &mut Inputs) {
                    i.reset.take(&self.reset, buf);
                    $(i.$iname.take(&self.$iname, buf);)*
                }

                /// Writes a cycle's inputs into `buf`.
                #[inline]
                pub fn write_inputs(&self, i: &Inputs, buf: &mut [u64]) {
                    i.reset.put(&self.reset, buf);
                    $(i.$iname.put(&self.$iname, buf);)*
                }

                /// Reads a cycle's outputs from `buf` into `o` (no allocation).
                #[inline]
                pub fn read_outputs(&self, buf: &[u64], o: &mut Outputs) {
                    $(o.$oname.take(&self.$oname, buf);)*
                }

                /// Writes a cycle's outputs into `buf`.
                #[inline]
                pub fn write_outputs(&self, o: &Outputs, buf: &mut [u64]) {
                    $(o.$oname.put(&self.$oname, buf);)*
                }
            }
        }

        /// The block's ports: `clock`, `reset`, the inputs, then the outputs.
        #[allow(unused_variables, clippy::redundant_locals)]
        pub fn ports($p: &$P) -> Vec<$crate::netlist::Port> {
            use $crate::netlist::Dir;
            $(let $bind = $bval;)*
            let mut v = Vec::new();
            $crate::ports::push(&mut v, port::CLOCK, Dir::In, 1, 1, true);
            $crate::ports::push(&mut v, port::RESET, Dir::In, 1, 1, true);
            $($crate::ports::push_port(&mut v, stringify!($iname), Dir::In, $iw,
                $crate::ports!(@count $($in)?), $crate::ports!(@cond $($icond)?),
                $crate::ports!(@each [$($($ieach)?)?]));)*
            $($crate::ports::push_port(&mut v, stringify!($oname), Dir::Out, $ow,
                $crate::ports!(@count $($on)?), $crate::ports!(@cond $($ocond)?),
                $crate::ports!(@each [$($($oeach)?)?]));)*
            $(v.extend($extra);)?
            v
        }

        impl $crate::ports::HasPorts for $P {
            type Inputs = port::Inputs;
            type Outputs = port::Outputs;
            type Io = port::Io;
            fn port_list(&self) -> Vec<$crate::netlist::Port> {
                ports(self)
            }
            fn idle_inputs(&self) -> port::Inputs {
                port::Inputs::new(self)
            }
            fn zero_outputs(&self) -> port::Outputs {
                port::Outputs::new(self)
            }
            fn io(&self, layout: &$crate::layout::Layout) -> port::Io {
                port::Io::new(self, layout)
            }
            fn encode(io: &port::Io, inputs: &port::Inputs, buf: &mut [u64]) {
                io.write_inputs(inputs, buf)
            }
            fn decode_inputs(io: &port::Io, buf: &[u64], inputs: &mut port::Inputs) {
                io.read_inputs(buf, inputs)
            }
            fn read_outputs(io: &port::Io, buf: &[u64], outputs: &mut port::Outputs) {
                io.read_outputs(buf, outputs)
            }
        }
    };
    (@ty [] []) => { u64 };
    (@ty [$t:ident] []) => { $t };
    (@ty [] [$n:expr]) => { Vec<u64> };
    (@ty [$t:ident] [$n:expr]) => { Vec<$t> };
    (@new [$($t:ident)?] []) => { Default::default() };
    (@new [$($t:ident)?] [$n:expr]) => { vec![Default::default(); $n] };
    (@count) => { 1 };
    (@count $n:expr) => { $n };
    (@cond) => { true };
    (@each []) => { false };
    (@each [each]) => { true };
    (@slot []) => { $crate::layout::Slot };
    (@slot [each]) => { Vec<$crate::layout::Slot> };
    (@slots [] $layout:ident, $name:expr, $dir:expr, $count:expr, $present:expr) => {
        $crate::ports::slot($layout, $name, $dir, $present)
    };
    (@slots [each] $layout:ident, $name:expr, $dir:expr, $count:expr, $present:expr) => {
        $crate::ports::slots($layout, $name, $dir, $count, $present)
    };
    (@cond $c:expr) => { $c };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-at-a-time bus packing equals the field-by-field one ([`Slot::elem`] /
    /// [`Slot::set_elem`]) for every element width, with random neighbours in the buffer.
    #[test]
    fn bus_packing_matches_fields() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for w in [1, 2, 3, 4, 7, 8, 16, 21, 32, 64] {
            for n in [1, 3, 8, 33, 70] {
                let slot = Slot {
                    name: "bus".into(),
                    width: w * n,
                    offset: 1,
                    elems: n,
                };
                let len = 2 + slot.words();
                let buf: Vec<u64> = (0..len).map(|_| next()).collect();
                let mut got = vec![0u64; n];
                got.take(&slot, &buf);
                let want: Vec<u64> = (0..n).map(|k| slot.elem(&buf, k, w)).collect();
                assert_eq!(got, want, "take w {w} n {n}");
                let vals: Vec<u64> = (0..n).map(|_| next()).collect();
                let (mut a, mut b) = (buf.clone(), buf);
                vals.put(&slot, &mut a);
                for (k, v) in vals.iter().enumerate() {
                    slot.set_elem(&mut b, k, w, *v);
                }
                assert_eq!(a, b, "put w {w} n {n}");
                let flags: Vec<bool> = (0..n).map(|_| next() & 1 == 1).collect();
                let mut back = vec![false; n];
                flags.put(&slot, &mut a);
                back.take(&slot, &a);
                assert_eq!(back, flags, "bool round trip w {w} n {n}");
            }
        }
    }
}
