//! What the scratchpad-sharing blocks have in common (docs/scratchpad-sharing.md §0, §2;
//! Jatala et al., seed 001): the SM shape parameters every block shares ([`Shape`], declared
//! once here), the derived widths, the `NONE` encoding of an unshared slot, the pairing
//! function, the warp classes and the configuration switches ([C] in the spec).
//!
//! The blocks (`share_cfg`, `sp_access_unit`, `lock_table`, `owner_class`, `relssp_unit`,
//! `warp_scheduler`, `sharing_core`) declare their own parameters with
//! `Allowed::As(declared_by::<Shape>)` for the shared ones, so `T`, `W`, `LANES`, `NSCHED` and
//! `R` have one meaning, one default and one range everywhere.

use crate::netlist::{concat_wide, Expr, Module, Table};
use crate::params::{bits_for, Allowed, Gpgpusim, ParamError};
use serde::{Deserialize, Serialize};

crate::block_params! {
    /// The SM's shape (spec §0): the parameters every scratchpad-sharing block shares. Not a
    /// block itself; the blocks refer to these declarations.
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct Shape {
        /// TB slots per SM (paper: 16).
        slots: u32 = 16, "T", Allowed::Range(2, 32) => Gpgpusim::TbSlots;
        /// Warp slots per SM, max threads / 32 (paper: 96); a multiple of NSCHED.
        warps: u32 = 96, "W", Allowed::Range(1, 128), "a multiple of NSCHED" => Gpgpusim::WarpSlots;
        /// Threads per warp (paper: 32).
        lanes: u32 = 32, "LANES", Allowed::OneOf(&[1, 2, 4, 8, 16, 32]) => Gpgpusim::WarpSize;
        /// Schedulers = issue ports; warp w goes to scheduler w mod NSCHED (paper: 4).
        nsched: u32 = 4, "NSCHED", Allowed::OneOf(&[1, 2, 4]) => Gpgpusim::Schedulers;
        /// Scratchpad bytes per SM (paper: 16384); AW = ceil(log2 R) offset bits.
        smem: u32 = 16384, "R", Allowed::Range(64, 262_144) => Gpgpusim::ShmemBytes;
    }
}

impl Shape {
    /// AW = ⌈log2 R⌉: byte-offset width.
    pub fn aw(&self) -> usize {
        ceil_log2(self.smem)
    }
    /// SW = ⌈log2 T⌉: slot-id width.
    pub fn sw(&self) -> usize {
        ceil_log2(self.slots)
    }
    /// TW = ⌈log2(T+1)⌉: ShTB entry width (holds `NONE`).
    pub fn tw(&self) -> usize {
        bits_for(self.slots as u64)
    }
    /// KP = ⌊T/2⌋: lock entries, one per pair.
    pub fn kp(&self) -> usize {
        (self.slots / 2) as usize
    }
    /// Width of a pair index, ⌈log2 KP⌉ (at least 1).
    pub fn kw(&self) -> usize {
        ceil_log2(self.kp() as u32)
    }
    /// WW = ⌈log2 W⌉: warp-id width.
    pub fn ww(&self) -> usize {
        ceil_log2(self.warps)
    }
    /// WS = W / NSCHED warps per scheduler.
    pub fn ws(&self) -> usize {
        (self.warps / self.nsched) as usize
    }
    /// Width of a per-scheduler warp index, ⌈log2 WS⌉ (at least 1).
    pub fn wsw(&self) -> usize {
        ceil_log2(self.ws() as u32)
    }
    /// `NONE`, the ShTB value of an unshared slot: all ones in TW bits (31 for T = 16).
    pub fn none(&self) -> u64 {
        (1 << self.tw()) - 1
    }

    /// The "small" preset every scratchpad-sharing block has: T 4, W 8, LANES 4, NSCHED 2,
    /// R 1024 (wide random sweeps, Verilator).
    pub fn small() -> Shape {
        Shape {
            slots: 4,
            warps: 8,
            lanes: 4,
            nsched: 2,
            smem: 1024,
        }
    }

    /// W is a multiple of NSCHED (spec §0, WS = W/NSCHED).
    pub fn check(&self) -> Result<(), ParamError> {
        if !self.warps.is_multiple_of(self.nsched) {
            return Err(ParamError::Range {
                name: "W".into(),
                value: self.warps.to_string(),
                allowed: format!("a multiple of NSCHED = {}", self.nsched),
            });
        }
        Ok(())
    }
}

/// ⌈log2 x⌉, at least 1 (a 1-entry index still takes one bit).
pub fn ceil_log2(x: u32) -> usize {
    (32 - x.saturating_sub(1).leading_zeros()).max(1) as usize
}

/// `items[index]`, `default` for an index past the end: the table reads of spec §0's
/// out-of-range rules (a slot id ≥ T reads ShTB as NONE, a pair index ≥ KP a free lock). An
/// indexed select of a [`Table`] (docs/verilog.md "Indexed selects"): the net the items are
/// elements of, or a wire `{name}_tbl` packing them; entries past the index's reach are dropped.
pub fn index_mux(m: &mut Module, name: &str, index: &Expr, items: &[Expr], default: &Expr) -> Expr {
    let reach = items.len().min(1usize << index.width().min(32));
    let items = &items[..reach];
    if items.is_empty() {
        return default.clone();
    }
    Table::new(m, &format!("{name}_tbl"), items).read(index, default)
}

/// The packed bus of `items`, element 0 in the lowest bits (the convention of every
/// per-slot, per-port and per-warp array of the sharing blocks).
pub fn bus(items: &[Expr]) -> Expr {
    let msb_first: Vec<Expr> = items.iter().rev().cloned().collect();
    concat_wide(&msb_first)
}

/// `pair(s) = min(s, ShTB[s])` (spec §1.3): the lock entry of slot `s` with partner `partner`.
#[inline]
pub fn pair(s: u64, partner: u64) -> u64 {
    s.min(partner)
}

/// A warp's OWF class (spec §2.5), as the 2-bit `warp_class` encodes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Its TB holds its pair's lock.
    Owner = 0,
    /// Its TB's slot is unshared (or ShSM = 0).
    Unshared = 1,
    /// Its TB is shared and does not hold the lock.
    Nonowner = 2,
}

impl Class {
    /// The 2-bit encoding on `warp_class` / `cls`.
    pub const BITS: usize = 2;

    #[inline]
    pub fn code(self) -> u64 {
        self as u64
    }

    /// The class a 2-bit code stands for (3 is unused and reads as `Nonowner`).
    #[inline]
    pub fn of_code(code: u64) -> Class {
        match code {
            0 => Class::Owner,
            1 => Class::Unshared,
            _ => Class::Nonowner,
        }
    }
}

/// What happens to the lock when its owner finishes (spec §2.4, [C] `POLICY`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Policy {
    /// The lock goes to the partner if it has live threads (paper §4); the default.
    #[serde(alias = "transfer")]
    Transfer,
    /// The lock is freed (paper §6.2's unlock).
    #[serde(alias = "free")]
    Free,
}

/// The OWF class of a shared TB whose pair lock is free (spec §2.5, [C] `FREE_CLASS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum FreeClass {
    /// Nobody owns a free lock: the literal reading; the default.
    #[serde(alias = "nonowner")]
    Nonowner,
    #[serde(alias = "unshared")]
    Unshared,
}

impl FreeClass {
    #[inline]
    pub fn class(self) -> Class {
        match self {
            FreeClass::Nonowner => Class::Nonowner,
            FreeClass::Unshared => Class::Unshared,
        }
    }
}

/// The class → priority map of OWF (spec §4, [C] `RANK`); lower issues first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Rank {
    /// OWNER 0, UNSHARED 1, NONOWNER 2: the paper's OWF; the default.
    #[serde(alias = "owf3")]
    Owf3,
    /// OWNER 0, UNSHARED 0, NONOWNER 1: two classes, by age inside each.
    #[serde(alias = "owf2")]
    Owf2,
    /// UNSHARED 0, OWNER 1, NONOWNER 2: Fig. 5's comparison only.
    #[serde(alias = "uwf")]
    Uwf,
}

impl Rank {
    /// The priority of class `c` (0 = first).
    #[inline]
    pub fn of(self, c: Class) -> u64 {
        match (self, c) {
            (Rank::Owf3, Class::Owner) => 0,
            (Rank::Owf3, Class::Unshared) => 1,
            (Rank::Owf3, Class::Nonowner) => 2,
            (Rank::Owf2, Class::Owner | Class::Unshared) => 0,
            (Rank::Owf2, Class::Nonowner) => 1,
            (Rank::Uwf, Class::Unshared) => 0,
            (Rank::Uwf, Class::Owner) => 1,
            (Rank::Uwf, Class::Nonowner) => 2,
        }
    }
}

/// The warp-scheduling policy of one scheduler (spec §4): OWF and the paper's baselines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Sched {
    /// Owner Warp First: by `RANK` of the class, then oldest (paper §4); the default.
    #[serde(alias = "owf")]
    Owf,
    /// Loose round robin: first ready warp after the last issued one.
    #[serde(alias = "lrr")]
    Lrr,
    /// Greedy then oldest: keep the last warp while ready, else the oldest.
    #[serde(alias = "gto")]
    Gto,
    /// Two-level: groups of [`TWO_LEVEL_GROUP`] warps, LRR inside the current group.
    #[serde(rename = "TWO_LEVEL", alias = "two_level")]
    TwoLevel,
    /// GPGPU-Sim's `two_level_active:N:0:1`: `TL_ACTIVE` active warps, LRR among them, waiting
    /// warps demoted to a pending FIFO and replaced from its front (docs/scratchpad-sharing.md
    /// §4.1).
    #[serde(rename = "TWO_LEVEL_ACTIVE", alias = "two_level_active")]
    TwoLevelActive,
}

/// Warps per group of the TWO_LEVEL baseline (spec §4 [D]: the paper gives no size).
pub const TWO_LEVEL_GROUP: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_widths_match_spec_section_0() {
        let s = Shape::default();
        assert_eq!(
            (s.aw(), s.sw(), s.tw(), s.kp(), s.ww(), s.ws()),
            (14, 4, 5, 8, 7, 24)
        );
        assert_eq!(s.none(), 31);
        assert_eq!(s.kw(), 3);
    }
}
