//! Where each port's value sits in the flat word buffers that the harness, the models and the
//! backends exchange every cycle. Derived once from a block's port list.

use crate::netlist::words_for;
use crate::{Dir, Port};

/// One port's place in an input or output buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    pub name: String,
    pub width: usize,
    /// First 64-bit word in the buffer.
    pub offset: usize,
    /// Equal elements packed in the port ([`Port::elems`]), 1 for a plain value.
    pub elems: usize,
}

impl Slot {
    /// The handle of a port this configuration does not have (a conditional port of a
    /// [`ports!`](crate::ports) declaration): it reads 0 and ignores writes.
    pub fn absent(name: &str) -> Slot {
        Slot {
            name: name.into(),
            width: 0,
            offset: 0,
            elems: 1,
        }
    }
    /// The variables a waveform shows for this port, as (name, lowest bit, width): each element
    /// of an array as `<name>_<k>` (docs/cli.md "Waveforms"), then the whole port.
    pub fn shown(&self) -> impl Iterator<Item = (String, usize, usize)> + '_ {
        let w = self.width / self.elems;
        let elems = (self.elems > 1)
            .then_some(0..self.elems)
            .into_iter()
            .flatten();
        elems
            .map(move |k| (crate::ports::elem_name(&self.name, k), k * w, w))
            .chain(std::iter::once((self.name.clone(), 0, self.width)))
    }
    /// Whether the port exists in this configuration.
    #[inline]
    pub fn present(&self) -> bool {
        self.width > 0
    }
    #[inline]
    pub fn words(&self) -> usize {
        words_for(self.width)
    }
    /// This port's words inside `buf`.
    #[inline]
    pub fn of<'a>(&self, buf: &'a [u64]) -> &'a [u64] {
        &buf[self.offset..self.offset + self.words()]
    }
    #[inline]
    pub fn of_mut<'a>(&self, buf: &'a mut [u64]) -> &'a mut [u64] {
        let n = self.words();
        &mut buf[self.offset..self.offset + n]
    }
    /// The port's low 64 bits (0 for an absent port).
    #[inline]
    pub fn get(&self, buf: &[u64]) -> u64 {
        if self.present() {
            buf[self.offset]
        } else {
            0
        }
    }
    /// Bit 0 of the port.
    #[inline]
    pub fn bit(&self, buf: &[u64]) -> bool {
        self.get(buf) & 1 == 1
    }
    /// Sets the port to `v` (at most 64 bits; the port's upper words are cleared); a no-op for
    /// an absent port.
    #[inline]
    pub fn set(&self, buf: &mut [u64], v: u64) {
        if self.present() {
            let words = self.of_mut(buf);
            words.fill(0);
            words[0] = v;
        }
    }
    /// Bits `[lo +: width]` (width ≤ 64) of the port: one field of a packed bus.
    #[inline]
    pub fn field(&self, buf: &[u64], lo: usize, width: usize) -> u64 {
        if self.present() {
            get_bits(self.of(buf), lo, width)
        } else {
            0
        }
    }
    /// Sets bits `[lo +: width]` (width ≤ 64) of the port to the low bits of `v`.
    #[inline]
    pub fn set_field(&self, buf: &mut [u64], lo: usize, width: usize, v: u64) {
        if self.present() {
            set_bits(self.of_mut(buf), lo, width, v)
        }
    }
    /// The whole port (width ≤ 64): [`Slot::field`] of all its bits, one word read.
    #[inline]
    pub fn value(&self, buf: &[u64]) -> u64 {
        if self.present() {
            debug_assert!(self.width <= 64, "port {} wider than 64 bits", self.name);
            buf[self.offset] & low_mask(self.width)
        } else {
            0
        }
    }
    /// Sets the whole port (width ≤ 64) to the low bits of `v`: [`Slot::set_field`] of all its
    /// bits, one word written.
    #[inline]
    pub fn set_value(&self, buf: &mut [u64], v: u64) {
        if self.present() {
            debug_assert!(self.width <= 64, "port {} wider than 64 bits", self.name);
            let (m, w) = (low_mask(self.width), &mut buf[self.offset]);
            *w = (*w & !m) | (v & m);
        }
    }
    /// Element `k` of a bus of equal `width`-bit elements, element 0 lowest.
    #[inline]
    pub fn elem(&self, buf: &[u64], k: usize, width: usize) -> u64 {
        self.field(buf, k * width, width)
    }
    /// Sets element `k` of a bus of equal `width`-bit elements to the low bits of `v`.
    #[inline]
    pub fn set_elem(&self, buf: &mut [u64], k: usize, width: usize, v: u64) {
        self.set_field(buf, k * width, width, v)
    }
}

/// Bits `[lo +: width]` (width ≤ 64) of a little-endian word buffer, read a word at a time.
#[inline]
pub fn get_bits(words: &[u64], lo: usize, width: usize) -> u64 {
    if width == 0 {
        return 0;
    }
    let (w, b) = (lo / 64, lo % 64);
    let mut v = words[w] >> b;
    // A field that crosses a word boundary (then b > 0, so the shift is below 64).
    if b + width > 64 {
        v |= words[w + 1] << (64 - b);
    }
    v & low_mask(width)
}

/// Sets bits `[lo +: width]` (width ≤ 64) of a little-endian word buffer to the low bits of `v`.
#[inline]
pub fn set_bits(words: &mut [u64], lo: usize, width: usize, v: u64) {
    if width == 0 {
        return;
    }
    let m = low_mask(width);
    let v = v & m;
    let (w, b) = (lo / 64, lo % 64);
    words[w] = (words[w] & !(m << b)) | (v << b);
    if b + width > 64 {
        let placed = 64 - b;
        words[w + 1] = (words[w + 1] & !(m >> placed)) | (v >> placed);
    }
}

/// The low `width` bits set (width ≤ 64).
#[inline]
pub fn low_mask(width: usize) -> u64 {
    if width >= 64 {
        !0
    } else {
        (1 << width) - 1
    }
}

/// The stimulus inputs (every input but `clock`, which backends drive) and the outputs.
#[derive(Clone, Debug)]
pub struct Layout {
    pub ports: Vec<Port>,
    pub inputs: Vec<Slot>,
    pub outputs: Vec<Slot>,
    pub in_words: usize,
    pub out_words: usize,
}

/// The clock port name every block uses.
pub const CLOCK: &str = "clock";

impl Layout {
    pub fn new(ports: &[Port]) -> Layout {
        let mut inputs = vec![];
        let mut outputs = vec![];
        let (mut in_words, mut out_words) = (0, 0);
        for p in ports {
            let (list, words) = match p.dir {
                Dir::In if p.name == CLOCK => continue,
                Dir::In => (&mut inputs, &mut in_words),
                Dir::Out => (&mut outputs, &mut out_words),
            };
            list.push(Slot {
                name: p.name.clone(),
                width: p.width,
                offset: *words,
                elems: p.elems,
            });
            *words += p.words();
        }
        Layout {
            ports: ports.to_vec(),
            inputs,
            outputs,
            in_words,
            out_words,
        }
    }

    pub fn input(&self, name: &str) -> Option<&Slot> {
        self.inputs.iter().find(|s| s.name == name)
    }

    pub fn output(&self, name: &str) -> Option<&Slot> {
        self.outputs.iter().find(|s| s.name == name)
    }

    /// Input `name`; an unknown name is a bug in the caller and panics with the port list
    /// (user-named ports go through [`Layout::find_input`]).
    pub fn in_slot(&self, name: &str) -> &Slot {
        self.find_input(name).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Output `name`; an unknown name panics with the port list (see [`Layout::in_slot`]).
    pub fn out_slot(&self, name: &str) -> &Slot {
        self.find_output(name).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Input `name`, or an error naming the allowed inputs.
    pub fn find_input(&self, name: &str) -> Result<&Slot, String> {
        self.input(name)
            .ok_or_else(|| unknown("input", name, &self.inputs))
    }

    /// Output `name`, or an error naming the allowed outputs.
    pub fn find_output(&self, name: &str) -> Result<&Slot, String> {
        self.output(name)
            .ok_or_else(|| unknown("output", name, &self.outputs))
    }

    /// Low word of output `name` in `buf`; panics on an unknown name (never a silent 0).
    pub fn read_out(&self, buf: &[u64], name: &str) -> u64 {
        self.out_slot(name).get(buf)
    }

    /// Writes `v` (at most 64 bits) to output `name` in `buf`; panics on an unknown name.
    pub fn write_out(&self, buf: &mut [u64], name: &str, v: u64) {
        self.out_slot(name).set(buf, v)
    }

    /// Writes `v` (at most 64 bits) to input `name` in `buf`; panics on an unknown name.
    pub fn write_in(&self, buf: &mut [u64], name: &str, v: u64) {
        self.in_slot(name).set(buf, v)
    }

    /// Whether the block has a clock (registers or a clock port).
    pub fn has_clock(&self) -> bool {
        self.ports.iter().any(|p| p.name == CLOCK)
    }
}

fn unknown(kind: &str, name: &str, slots: &[Slot]) -> String {
    let names: Vec<&str> = slots.iter().map(|s| s.name.as_str()).collect();
    format!(
        "unknown {kind} port `{}`; allowed: {}",
        crate::shown(name),
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-level field access equals a bit-by-bit reference at every offset and width
    /// that crosses (or not) a word boundary.
    #[test]
    fn fields_match_a_bitwise_reference() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for width in [1, 2, 7, 31, 63, 64] {
            for lo in 0..=192 - width {
                let words = [next(), next(), next()];
                let want = (0..width).fold(0u64, |v, b| {
                    let bit = lo + b;
                    v | (words[bit / 64] >> (bit % 64) & 1) << b
                });
                assert_eq!(get_bits(&words, lo, width), want, "lo {lo} width {width}");
                let (mut a, v) = (words, next());
                set_bits(&mut a, lo, width, v);
                for bit in 0..192 {
                    let got = a[bit / 64] >> (bit % 64) & 1;
                    let want = if (lo..lo + width).contains(&bit) {
                        v >> (bit - lo) & 1
                    } else {
                        words[bit / 64] >> (bit % 64) & 1
                    };
                    assert_eq!(got, want, "lo {lo} width {width} bit {bit}");
                }
            }
        }
    }
}
