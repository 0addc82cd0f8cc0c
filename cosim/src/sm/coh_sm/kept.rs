//! The stall planes kept beside the issue stage (docs/stall-inspector.md §7.5, §10.8): with a
//! probe attached, each SM keeps one bit per warp per predicate, so a cycle costs the probe a
//! few word operations, not a rebuild of the planes from every warp's view (T-f).
//!
//! The issue stage computes every warp's view each cycle anyway (its pick reads them); each
//! warp's eight predicates are kept packed in a byte (one load and one multiply: [`packed`]),
//! and the planes are the bytes transposed, built only for a cycle the probe classifies (up
//! to 16 warps the bytes are the probe's key of the cycle, `Stalls::repeat_keyed`). The LSU blocks have one reason a cycle in this model: the LSU register's (every
//! memory head) or PENDING_RELEASE (the store heads during a release flush).
//! `tests/coh_sm_kept.rs` checks the kept planes against the views every cycle on random
//! programs.

use super::sm::Sm;
use super::view::{reason, WarpView};
use crate::blocks::stall_inspector::Planes;

/// One SM's predicates as of the last issue stage.
#[derive(Clone, Debug)]
pub struct Kept {
    /// Each warp's eight predicates packed in a byte ([`packed`]), eight warps a word (the
    /// slots past the last warp stay 0).
    bytes: Vec<u8>,
    /// The LSU reason of the last cycle's `ms_block` warps.
    reason: u8,
    /// Changes whenever the predicates or the reason change (the key beyond 16 warps).
    gen: u64,
}

/// `v`'s eight predicates packed, bit k = the k-th plane of [`Planes::named`]: the view's
/// first eight bytes (`WarpView` is `repr(C)`, its bools 0 or 1) gathered by one multiply.
#[inline(always)]
fn packed(v: &WarpView) -> u8 {
    let x = u64::from_le_bytes([
        u8::from(v.active),
        u8::from(v.inst_avail),
        u8::from(v.sync_wait),
        u8::from(v.haz_load),
        u8::from(v.haz_comp),
        u8::from(v.is_mem),
        u8::from(v.ms_block),
        u8::from(v.fu_block),
    ]);
    gather(x)
}

/// The low bits of `x`'s eight bytes (each 0 or 1), byte i to bit i.
#[inline(always)]
fn gather(x: u64) -> u8 {
    (x.wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8
}

/// Bit `k` of each of `x`'s eight bytes, byte i to bit i.
#[inline(always)]
fn plane_bits(x: u64, k: u32) -> u64 {
    u64::from(gather(x >> k & 0x0101_0101_0101_0101))
}

impl Kept {
    /// For `nw` warp slots (every predicate false).
    pub(super) fn new(nw: usize) -> Kept {
        Kept {
            bytes: vec![0; nw.div_ceil(8) * 8],
            reason: reason::NONE,
            gen: 0,
        }
    }

    /// The planes of the last cycle's issue stage: the bytes transposed, eight warps at a
    /// time.
    #[inline]
    pub fn planes(&self) -> Planes {
        let mut p = [0u128; 8];
        for (j, c) in self.bytes.chunks_exact(8).enumerate() {
            let x = u64::from_le_bytes(c.try_into().expect("eight bytes"));
            for (k, plane) in (0..).zip(&mut p) {
                *plane |= u128::from(plane_bits(x, k)) << (8 * j);
            }
        }
        let [active, inst_avail, sync_wait, haz_load, haz_comp, is_mem, ms_block, fu_block] = p;
        Planes {
            active,
            inst_avail,
            sync_wait,
            haz_load,
            haz_comp,
            is_mem,
            ms_block,
            fu_block,
        }
    }

    /// The LSU reason of the last cycle's `ms_block` warps (one a cycle in this model).
    #[inline]
    pub fn reason(&self) -> u8 {
        self.reason
    }

    /// Whether warp `w` had a load hazard in the last cycle.
    #[inline]
    pub fn haz_load(&self, w: usize) -> bool {
        self.bytes.get(w).is_some_and(|b| b >> 3 & 1 == 1)
    }

    /// A summary of the last cycle's planes and blocks: equal keys of two cycles mean equal
    /// planes and blocks (`Stalls::repeat_keyed`). Up to 16 warps it is their content (the
    /// bytes and the reason), so a state the planes come back to after issue cycles is known
    /// again; beyond, a counter bumped at every change.
    #[inline]
    pub fn key(&self) -> [u64; 5] {
        let word = |j: usize| {
            let c = &self.bytes[8 * j..8 * j + 8];
            u64::from_le_bytes(c.try_into().expect("eight bytes"))
        };
        match self.bytes.len() {
            8 => [word(0), u64::from(self.reason), 0, 0, 0],
            16 => [word(0), word(1), u64::from(self.reason), 0, 0],
            _ => [self.gen, 0, 0, 0, 0],
        }
    }
}

impl Sm {
    /// This cycle's predicates from the views the issue stage just computed (module doc).
    pub(super) fn keep_planes(&mut self) {
        let Some(k) = self.kept.as_deref_mut() else {
            return;
        };
        let mut diff = 0;
        if k.bytes.len() <= 16 {
            // The key is the bytes themselves: no change to note.
            for (b, v) in k.bytes.iter_mut().zip(&self.view.warps) {
                *b = packed(v);
            }
        } else {
            for (b, v) in k.bytes.iter_mut().zip(&self.view.warps) {
                let p = packed(v);
                diff |= *b ^ p;
                *b = p;
            }
        }
        let why = if self.lsu.is_some() {
            self.lsu_reason
        } else if self.rel_active {
            reason::PENDING_RELEASE
        } else {
            reason::NONE
        };
        k.gen += u64::from(diff != 0 || why != k.reason);
        k.reason = why;
    }
}
