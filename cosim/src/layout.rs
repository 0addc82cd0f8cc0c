//! Where each port's value sits in the flat word buffers that the harness, the models and the
//! backends exchange every cycle. Derived once from a block's port list.

use smrtl_hdl::netlist::words_for;
use smrtl_hdl::{Dir, Port};

/// One port's place in an input or output buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    pub name: String,
    pub width: usize,
    /// First 64-bit word in the buffer.
    pub offset: usize,
}

impl Slot {
    pub fn words(&self) -> usize {
        words_for(self.width)
    }
    /// This port's words inside `buf`.
    pub fn of<'a>(&self, buf: &'a [u64]) -> &'a [u64] {
        &buf[self.offset..self.offset + self.words()]
    }
    pub fn of_mut<'a>(&self, buf: &'a mut [u64]) -> &'a mut [u64] {
        let n = self.words();
        &mut buf[self.offset..self.offset + n]
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

    /// Low word of output `name` in `buf` (0 when the block has no such port).
    pub fn read_out(&self, buf: &[u64], name: &str) -> u64 {
        self.output(name).map_or(0, |s| s.of(buf)[0])
    }

    /// Writes `v` (at most 64 bits) to output `name` in `buf`, if the port exists.
    pub fn write_out(&self, buf: &mut [u64], name: &str, v: u64) {
        if let Some(s) = self.output(name) {
            put(s.of_mut(buf), v);
        }
    }

    /// Writes `v` (at most 64 bits) to input `name` in `buf`, if the port exists.
    pub fn write_in(&self, buf: &mut [u64], name: &str, v: u64) {
        if let Some(s) = self.input(name) {
            put(s.of_mut(buf), v);
        }
    }

    /// Whether the block has a clock (registers or a clock port).
    pub fn has_clock(&self) -> bool {
        self.ports.iter().any(|p| p.name == CLOCK)
    }
}

fn put(words: &mut [u64], v: u64) {
    words.fill(0);
    words[0] = v;
}
