//! The functional memory of the kernel language (docs/stall-inspector.md §10.4): a 64-bit value
//! per 4-byte word of global memory and of each SM's scratchpad. Plain loads and stores read and
//! write it when they issue (as GPGPU-Sim does), atomics when the L2 performs them; a
//! data-race-free program sees the same values as with timed data. Storage is reserved when the
//! system is built ([`MAX_WORDS`]), so the cycle never allocates; a word never written reads 0,
//! and writing 0 to it stores nothing (the Rust builders' programs store only zeros).

use std::collections::HashMap;

/// Most distinct words holding a non-zero value at once, over global memory and every
/// scratchpad; a store that would exceed it fails the run (documented limit).
pub const MAX_WORDS: usize = 1 << 16;
/// Bytes per word: the address granularity of values.
pub const WORD_BYTES: u64 = 4;
/// Scratchpad words are keyed above every global word.
const SPM_SPACE: u64 = 1 << 63;

/// Where a word is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Global,
    /// SM `s`'s scratchpad (and the unmapped part of its stash).
    Spm(u8),
}

/// The values.
pub struct Mem {
    words: HashMap<u64, u64>,
    /// A store found the table full: the run fails (`CohSystem::run_with`).
    pub overflow: bool,
}

impl Default for Mem {
    fn default() -> Self {
        Mem::new()
    }
}

impl Mem {
    pub fn new() -> Mem {
        Mem {
            words: HashMap::with_capacity(MAX_WORDS),
            overflow: false,
        }
    }

    fn key(space: Space, addr: u64) -> u64 {
        let w = addr / WORD_BYTES;
        match space {
            Space::Global => w,
            Space::Spm(s) => SPM_SPACE | u64::from(s) << 48 | (w & ((1 << 48) - 1)),
        }
    }

    /// The word at `addr`.
    pub fn read(&self, space: Space, addr: u64) -> u64 {
        self.words
            .get(&Self::key(space, addr))
            .copied()
            .unwrap_or(0)
    }

    /// Writes `v` at `addr`; a full table drops the write and sets [`Mem::overflow`].
    pub fn write(&mut self, space: Space, addr: u64, v: u64) {
        let k = Self::key(space, addr);
        if let Some(x) = self.words.get_mut(&k) {
            *x = v;
        } else if v != 0 {
            if self.words.len() >= MAX_WORDS {
                self.overflow = true;
            } else {
                self.words.insert(k, v);
            }
        }
    }

    /// Copies `bytes` from `from` to `to` word by word (a DMA transfer, at its start).
    pub fn copy(&mut self, from: (Space, u64), to: (Space, u64), bytes: u64) {
        for i in 0..bytes.div_ceil(WORD_BYTES) {
            let off = i * WORD_BYTES;
            let v = self.read(from.0, from.1.wrapping_add(off));
            self.write(to.0, to.1.wrapping_add(off), v);
        }
    }
}
