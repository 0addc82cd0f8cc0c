//! Kernel files for the thread-block-residency SM model (docs/scratchpad-sharing.md §5.1): a TB
//! shape (threads, `.shared` bytes), a grid size and one instruction stream per warp of a TB.
//! The relssp compiler pass (§6) produces the same [`Kernel`], so its output runs unchanged.
//!
//! ```json
//! {"name": "fig5", "threads": 32, "smem": 7000, "grid": 3,
//!  "params": {"NSCHED": 1, "max_tbs": 3},
//!  "locks": [{"pair": 0, "owner": 0}],
//!  "warps": [[{"op": "alu", "dst": 1},
//!             {"op": "ld.shared", "off": 4096, "dst": 2},
//!             {"op": "mov", "src": [2], "exit": true}]]}
//! ```

use crate::kernel::launch::Ratio;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// Registers a warp's scoreboard tracks (`dst` / `src` are `0..REGS`).
pub const REGS: usize = 32;
/// Most TBs in a grid.
pub const MAX_GRID: u32 = 1_000_000;
/// Most instructions over all of a kernel's streams.
pub const MAX_INSTRUCTIONS: usize = 1_000_000;

/// What an instruction does (§5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub enum Op {
    #[serde(rename = "alu")]
    Alu,
    #[serde(rename = "mov")]
    Mov,
    #[serde(rename = "ld.shared")]
    LdShared,
    #[serde(rename = "st.shared")]
    StShared,
    #[serde(rename = "atom.shared")]
    AtomShared,
    #[serde(rename = "ld.global")]
    LdGlobal,
    #[serde(rename = "st.global")]
    StGlobal,
    /// TB-wide barrier: the warp waits until every live warp of its TB arrived.
    #[serde(rename = "bar")]
    Bar,
    /// Releases the shared region for the executing threads (paper §6.2).
    #[serde(rename = "relssp")]
    Relssp,
    /// A NOP that carries the exit flag.
    #[serde(rename = "exit")]
    Exit,
    /// A jump to `to[0]` (docs §6.0).
    #[serde(rename = "bra")]
    Bra,
    /// A two-way branch to `to[0]` or `to[1]`, decided per warp by its `branch` rule.
    #[serde(rename = "cbra")]
    Cbra,
}

impl Op {
    pub const NAMES: &'static str =
        "alu, mov, ld.shared, st.shared, atom.shared, ld.global, st.global, bar, relssp, exit, bra, cbra";

    /// A scratchpad access (checked against the lock, §1.5).
    pub fn is_shared(self) -> bool {
        matches!(self, Op::LdShared | Op::StShared | Op::AtomShared)
    }

    pub fn is_global(self) -> bool {
        matches!(self, Op::LdGlobal | Op::StGlobal)
    }

    pub fn name(self) -> &'static str {
        match self {
            Op::Alu => "alu",
            Op::Mov => "mov",
            Op::LdShared => "ld.shared",
            Op::StShared => "st.shared",
            Op::AtomShared => "atom.shared",
            Op::LdGlobal => "ld.global",
            Op::StGlobal => "st.global",
            Op::Bar => "bar",
            Op::Relssp => "relssp",
            Op::Exit => "exit",
            Op::Bra => "bra",
            Op::Cbra => "cbra",
        }
    }

    /// `bra` or `cbra`: control moves to a target, never past the end of the stream.
    pub fn is_branch(self) -> bool {
        matches!(self, Op::Bra | Op::Cbra)
    }
}

/// How a `cbra` decides, per warp and deterministically (docs §6.0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "lowercase")]
pub enum Branch {
    /// A loop latch: `to[0]` on `trips − 1` of every `trips` evaluations, then `to[1]` once, so
    /// a body entered `k` times runs `k·trips` times.
    Trips(u32),
    /// `to[0]` with probability `p`: a hash of the kernel's seed, the warp's global id, the
    /// branch and how often this warp evaluated it.
    P(Ratio),
    /// `to[0]` on exactly a fraction `num/den` of the evaluations, spread evenly and without a
    /// coin: evaluation `k = warp + visit` goes there when `⌊(k+1)·num/den⌋ > ⌊k·num/den⌋`, so
    /// every `den` consecutive warps send exactly `num` (seed-independent; docs/scratchpad-sharing.md §6.0).
    Frac(Ratio),
}

impl Default for Branch {
    /// A fair per-warp coin.
    fn default() -> Self {
        Branch::P(Ratio { num: 1, den: 2 })
    }
}

impl Branch {
    /// Refuses `trips: 0`.
    pub fn check(&self) -> Result<(), String> {
        match self {
            Branch::Trips(0) => Err("`trips` 0; allowed: at least 1".into()),
            Branch::Frac(r) if r.num > r.den => {
                Err(format!("`frac` {r}; allowed: a fraction in [0, 1]"))
            }
            _ => Ok(()),
        }
    }

    /// Whether the warp with global id `warp` goes to `to[0]` on its `visit`-th (0-based)
    /// evaluation of branch `id` in a kernel seeded `seed`.
    pub fn first(&self, seed: u64, warp: u64, id: u32, visit: u32) -> bool {
        match *self {
            Branch::Trips(n) => !(visit + 1).is_multiple_of(n),
            Branch::P(r) => {
                let h =
                    splitmix(seed ^ splitmix(warp ^ splitmix((id as u64) << 32 | visit as u64)));
                ((h >> 11) as u128 * r.den as u128) >> 53 < r.num as u128
            }
            Branch::Frac(r) => {
                let k = warp as u128 + visit as u128;
                let (n, d) = (r.num as u128, r.den.max(1) as u128);
                (k + 1) * n / d > k * n / d
            }
        }
    }
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Byte offsets of a shared access, TB-relative: one for every lane, one per lane, or a span
/// whose lanes spread evenly from `first` (lane 0) to `last` (the last lane).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Offsets {
    All(u32),
    Lanes(Vec<u32>),
    Span { first: u32, last: u32 },
}

impl Offsets {
    /// Lane `l`'s offset of `lanes`.
    pub fn lane(&self, l: usize, lanes: usize) -> u32 {
        match self {
            Offsets::All(o) => *o,
            Offsets::Lanes(v) => v[l],
            Offsets::Span { first, last } => {
                let steps = (lanes.max(2) - 1) as u64;
                first + ((last - first) as u64 * l as u64 / steps) as u32
            }
        }
    }

    /// The highest offset of any lane.
    pub fn max(&self) -> u32 {
        match self {
            Offsets::All(o) => *o,
            Offsets::Lanes(v) => v.iter().copied().max().unwrap_or(0),
            Offsets::Span { first, last } => (*first).max(*last),
        }
    }
}

/// One warp instruction.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Instr {
    pub op: Op,
    /// The register it writes (ready `latency` cycles after issue).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst: Option<u8>,
    /// The registers it reads: it issues once all are ready.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub src: Vec<u8>,
    /// Shared accesses only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off: Option<Offsets>,
    /// The `.exit` flag: the executing threads exit in the issue cycle (§3).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exit: bool,
    /// Branch targets (instruction indices): one for `bra`, two for `cbra`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub to: Vec<u32>,
    /// A `cbra`'s rule (default: a fair per-warp coin).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<Branch>,
}

impl Instr {
    /// A bare instruction of kind `op`.
    pub fn of(op: Op) -> Instr {
        Instr {
            op,
            dst: None,
            src: vec![],
            off: None,
            exit: op == Op::Exit,
            to: vec![],
            branch: None,
        }
    }

    /// Whether the executing threads exit: the flag, or the stream's last instruction that is
    /// not a branch (`last`).
    pub fn exits(&self, last: bool) -> bool {
        self.exit || (last && !self.op.is_branch())
    }

    /// The `src` registers as a bit mask.
    pub fn src_mask(&self) -> u32 {
        self.src.iter().fold(0, |m, &r| m | 1 << r)
    }
}

/// A preset lock at launch (Fig. 5 starts with the owner holding it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LockPreset {
    pub pair: u32,
    pub owner: u32,
}

/// A kernel: the TB shape, the grid, per-warp streams, launch presets, parameter overrides.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Kernel {
    #[serde(default)]
    pub name: String,
    /// Threads per TB.
    pub threads: u32,
    /// `.shared` bytes per TB (`R_tb`).
    pub smem: u32,
    /// TBs in the grid.
    pub grid: u32,
    /// One stream per warp of a TB, or one stream every warp runs.
    pub warps: Vec<Vec<Instr>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locks: Vec<LockPreset>,
    /// Parameter overrides, as `--set` takes them (the command line wins).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub params: Map<String, Value>,
    /// Seed of the `cbra` rules with a probability.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seed: u64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

/// Why a kernel file is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelError(pub String);

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Kernel {
    /// Parses kernel file `text`; shape checks that need the SM's params are in [`Kernel::check`].
    pub fn parse(text: &str) -> Result<Kernel, KernelError> {
        crate::json::repeated_key(text).map_err(KernelError)?;
        let k: Kernel = serde_json::from_str(text).map_err(|e| {
            let msg = e.to_string();
            let msg = if msg.contains("unknown variant") {
                format!("{msg}; allowed ops: {}", Op::NAMES)
            } else {
                msg
            };
            KernelError(format!("malformed kernel: {msg}"))
        })?;
        k.check_shape()?;
        Ok(k)
    }

    /// Limits that need no params: sizes, registers, exit placement.
    fn check_shape(&self) -> Result<(), KernelError> {
        let err = |m: String| Err(KernelError(m));
        if self.threads == 0 || self.smem == 0 {
            return err("`threads` and `smem` must be at least 1".into());
        }
        if !(1..=MAX_GRID).contains(&self.grid) {
            return err(format!("`grid` = {}; allowed: 1..={MAX_GRID}", self.grid));
        }
        if self.warps.is_empty() || self.warps.iter().any(Vec::is_empty) {
            return err("`warps` needs at least one non-empty stream".into());
        }
        let total: usize = self.warps.iter().map(Vec::len).sum();
        if total > MAX_INSTRUCTIONS {
            return err(format!(
                "{total} instructions; allowed: at most {MAX_INSTRUCTIONS}"
            ));
        }
        for (w, stream) in self.warps.iter().enumerate() {
            for (i, ins) in stream.iter().enumerate() {
                let at = format!("warp {w} instruction {i} ({})", ins.op.name());
                if ins
                    .dst
                    .into_iter()
                    .chain(ins.src.iter().copied())
                    .any(|r| r as usize >= REGS)
                {
                    return err(format!("{at}: register out of range; allowed: 0..{REGS}"));
                }
                if ins.op.is_shared() != ins.off.is_some() {
                    return err(format!(
                        "{at}: `off` is required on shared accesses and allowed only there"
                    ));
                }
                if let Some(off) = &ins.off {
                    let o = off.max();
                    if o >= self.smem {
                        return err(format!("{at}: offset {o}; allowed: 0..{}", self.smem));
                    }
                    if let Offsets::Span { first, last } = *off {
                        if first > last {
                            return err(format!(
                                "{at}: span {first}..{last}; allowed: first ≤ last"
                            ));
                        }
                    }
                }
                let targets = match ins.op {
                    Op::Bra => 1,
                    Op::Cbra => 2,
                    _ => 0,
                };
                if ins.to.len() != targets {
                    return err(format!(
                        "{at}: {} targets in `to`; allowed: {targets}",
                        ins.to.len()
                    ));
                }
                if let Some(&t) = ins.to.iter().find(|&&t| t as usize >= stream.len()) {
                    return err(format!("{at}: target {t}; allowed: 0..{}", stream.len()));
                }
                if ins.branch.is_some() && ins.op != Op::Cbra {
                    return err(format!("{at}: `branch` is allowed on cbra only"));
                }
                if let Some(b) = &ins.branch {
                    b.check().map_err(|m| KernelError(format!("{at}: {m}")))?;
                }
                if ins.exit && i + 1 != stream.len() && !stream.iter().any(|i| i.op.is_branch()) {
                    return err(format!("{at}: instructions follow an exit"));
                }
            }
        }
        Ok(())
    }

    /// Warps per TB at `lanes` threads per warp.
    pub fn warps_per_tb(&self, lanes: u32) -> u32 {
        self.threads.div_ceil(lanes)
    }

    /// Checks the kernel against the SM's lanes: the stream count and per-lane offsets.
    pub fn check(&self, lanes: u32) -> Result<(), KernelError> {
        let wpt = self.warps_per_tb(lanes) as usize;
        if self.warps.len() != 1 && self.warps.len() != wpt {
            let allowed = if wpt == 1 {
                "1".to_string()
            } else {
                format!("1 or {wpt}")
            };
            return Err(KernelError(format!(
                "{} streams for {} threads at LANES = {lanes}; allowed: {allowed}",
                self.warps.len(),
                self.threads
            )));
        }
        for (w, stream) in self.warps.iter().enumerate() {
            for (i, ins) in stream.iter().enumerate() {
                if let Some(Offsets::Lanes(v)) = &ins.off {
                    if v.len() != lanes as usize {
                        return Err(KernelError(format!(
                            "warp {w} instruction {i}: {} lane offsets; allowed: one number or {lanes}",
                            v.len()
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// The stream warp `w` of a TB runs.
    pub fn stream(&self, w: usize) -> &[Instr] {
        &self.warps[w.min(self.warps.len() - 1)]
    }

    /// Thread mask of warp `w` of a TB (the last warp may be partial).
    pub fn live_mask(&self, w: u32, lanes: u32) -> u64 {
        let first = w * lanes;
        let n = self.threads.saturating_sub(first).min(lanes);
        if n == 64 {
            u64::MAX
        } else {
            (1u64 << n) - 1
        }
    }
}
