//! A warp's program for the coherent memory system (docs/stall-inspector.md §10.4): a list of
//! operations, one list per warp, with the kernel language's control flow (`Bra`, `Cbra`,
//! `Exit`, targets as indices into the list) and values (`Calc`, functional loads, stores and
//! atomics). Kernel files (`text.rs`) lower to it; the Rust builders make straight lists.

use super::params::{LANES, LINE_BYTES, REGS};
use crate::kernel::program::Branch;

/// A register operand (0..64), a special register ([`SR_SM`] ..), [`IMM`] or [`NONE`].
pub type Reg = u8;
/// No register (its value reads 0).
pub const NONE: Reg = u8::MAX;
/// The instruction's immediate (`Calc::imm`) in an operand's place.
pub const IMM: Reg = u8::MAX - 1;
/// Special registers (read-only, docs §10.4): the SM's index, the warp's slot, SMs, warps.
pub const SR_SM: Reg = REGS as Reg;
pub const SR_WARP: Reg = SR_SM + 1;
pub const SR_NSM: Reg = SR_SM + 2;
pub const SR_NWARP: Reg = SR_SM + 3;
/// Most bytes of one DMA transfer or stash map, and the end of its scratchpad range (the
/// largest scratchpad, `spm_bytes`' bound).
pub const MAX_XFER_BYTES: u64 = 1 << 20;
/// Global addresses of a DMA transfer or stash map are below this (48-bit addresses).
pub const MAX_GLOBAL: u64 = 1 << 48;
/// The special registers' names, in code order from [`SR_SM`].
pub const SPECIALS: [&str; 4] = ["%sm", "%warp", "%nsm", "%nwarp"];

/// A compute unit (docs §10.4): its latency and initiation interval are params.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Alu = 0,
    Mul = 1,
    Sfu = 2,
}

/// Compute units of an SM.
pub const UNITS: usize = 3;

/// A compute function on 64-bit values (wrapping; shifts by the low 6 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Mov,
    Add,
    Sub,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Min,
    Max,
    /// 1 if a < b, else 0 (unsigned); likewise `Seteq`, `Setne`.
    Setlt,
    Seteq,
    Setne,
    /// A deterministic 64-bit mix of `a` (UTS's child counts).
    Hash,
    Mul,
    /// The SFU's function: `hash(a ^ b)`.
    Sfu,
}

impl Func {
    /// The unit it runs on.
    pub fn unit(self) -> Unit {
        match self {
            Func::Mul => Unit::Mul,
            Func::Sfu => Unit::Sfu,
            _ => Unit::Alu,
        }
    }

    /// Its value.
    pub fn eval(self, a: u64, b: u64) -> u64 {
        match self {
            Func::Mov => a,
            Func::Add => a.wrapping_add(b),
            Func::Sub => a.wrapping_sub(b),
            Func::And => a & b,
            Func::Or => a | b,
            Func::Xor => a ^ b,
            Func::Shl => a << (b & 63),
            Func::Shr => a >> (b & 63),
            Func::Min => a.min(b),
            Func::Max => a.max(b),
            Func::Setlt => u64::from(a < b),
            Func::Seteq => u64::from(a == b),
            Func::Setne => u64::from(a != b),
            Func::Hash => mix(a),
            Func::Mul => a.wrapping_mul(b),
            Func::Sfu => mix(a ^ b),
        }
    }
}

/// splitmix64's finaliser.
pub fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// An atomic's function, performed at the L2 on each lane's word; the old value returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomF {
    /// `mem += src`.
    Add,
    /// `mem = src`.
    Exch,
    /// `if mem == cmp { mem = src }`.
    Cas,
}

/// How a `Cbra` decides: a seed-001 rule (`trips N`, `p F`) or a register's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    Rule(Branch),
    /// To `to[0]` when the register is not zero (`cbra.nz`).
    Nz(Reg),
    /// To `to[0]` when the register is zero (`cbra.z`).
    Z(Reg),
}

/// A warp's lane addresses: lane `l` of `lanes` active ones accesses `base + l·stride` (bytes;
/// global address for global and DMA accesses, scratchpad offset for scratchpad and stash);
/// with a register `reg`, its value at issue is added to `base`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pat {
    pub base: u64,
    pub stride: u64,
    pub lanes: u8,
    pub reg: Reg,
}

impl Pat {
    /// One lane at `addr`.
    pub fn one(addr: u64) -> Pat {
        Pat {
            base: addr,
            stride: 0,
            lanes: 1,
            reg: NONE,
        }
    }

    /// A full warp reading consecutive 4-byte words from `base`.
    pub fn words(base: u64) -> Pat {
        Pat {
            base,
            stride: 4,
            lanes: LANES as u8,
            reg: NONE,
        }
    }

    /// Lane `l`'s address (wrapping).
    pub fn addr(&self, l: usize) -> u64 {
        self.base.wrapping_add((l as u64).wrapping_mul(self.stride))
    }

    /// The distinct lines the lanes touch, in lane order, into `out`; their count.
    pub fn lines(&self, out: &mut [u64; LANES]) -> usize {
        let mut n = 0;
        for l in 0..self.lanes as usize {
            let line = self.addr(l) / LINE_BYTES;
            if !out[..n].contains(&line) {
                out[n] = line;
                n += 1;
            }
        }
        n
    }
}

/// One operation of a warp's program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// A compute instruction on the SM's one compute pipe: `dst` is ready `lat` cycles after
    /// issue; the pipe takes the next instruction `ii` cycles after this one.
    Comp {
        dst: Reg,
        a: Reg,
        b: Reg,
        lat: u8,
        ii: u8,
    },
    /// Global load into `dst` through the L1.
    Ld {
        dst: Reg,
        at: Pat,
    },
    /// Global store of `src` through the store buffer.
    St {
        src: Reg,
        at: Pat,
    },
    /// Atomic read-modify-write `f` performed at the L2 with `src` (and `cmp` for a CAS); `dst`
    /// gets lane 0's old value with the response. The warp waits for it (spec D6: SYNC).
    Atom {
        f: AtomF,
        dst: Reg,
        src: Reg,
        cmp: Reg,
        at: Pat,
    },
    /// Acquire: waits for the warp's loads and atomics, then invalidates the L1 (GPU) or its
    /// non-owned lines (DeNovo).
    Acquire,
    /// Release: flushes the SM's store buffer; the warp waits until it is drained.
    Release,
    /// Waits until every live warp of the SM has reached a barrier.
    Barrier,
    /// Scratchpad load / store (offsets into the scratchpad).
    SpLd {
        dst: Reg,
        at: Pat,
    },
    SpSt {
        src: Reg,
        at: Pat,
    },
    /// Maps `bytes` of the stash at `spm` onto global memory at `global` (plus register
    /// `reg`'s value at issue, [`NONE`]: none; one map per call).
    StashMap {
        spm: u64,
        global: u64,
        bytes: u64,
        reg: Reg,
    },
    /// Stash load / store (stash offsets; misses fill on demand from the mapped global data).
    StashLd {
        dst: Reg,
        at: Pat,
    },
    StashSt {
        src: Reg,
        at: Pat,
    },
    /// Starts a DMA transfer of `bytes` between scratchpad offset `spm` and global `global`;
    /// `to_spm` = load into the scratchpad; `global` plus register `reg`'s value at issue
    /// ([`NONE`]: none). The warp goes on; the region is blocked until done.
    Dma {
        spm: u64,
        global: u64,
        bytes: u64,
        to_spm: bool,
        reg: Reg,
    },
    /// A compute instruction of the kernel language on `f`'s unit (its latency and interval
    /// are params): `dst = f(a, b)`, an operand [`IMM`] reading `imm`.
    Calc {
        f: Func,
        dst: Reg,
        a: Reg,
        b: Reg,
        imm: u64,
    },
    /// Jump to op `to`.
    Bra {
        to: u32,
    },
    /// A branch: to `to[0]` when `cond` holds, else `to[1]`; a `Rule`'s visits are counted per
    /// warp and `id` (the n-th rule branch of the kernel; 0 for register conditions).
    Cbra {
        to: [u32; 2],
        cond: Cond,
        id: u16,
    },
    /// The warp ends.
    Exit,
}

impl Op {
    /// Whether the instruction goes through the LSU input register (spec §2.6).
    pub fn is_mem(&self) -> bool {
        !matches!(
            self,
            Op::Comp { .. }
                | Op::Acquire
                | Op::Release
                | Op::Barrier
                | Op::Calc { .. }
                | Op::Bra { .. }
                | Op::Cbra { .. }
                | Op::Exit
        )
    }

    /// The compute unit it occupies, if any (`Comp` uses the ALU's pipe with its own timing).
    pub fn unit(&self) -> Option<Unit> {
        match self {
            Op::Comp { .. } => Some(Unit::Alu),
            Op::Calc { f, .. } => Some(f.unit()),
            _ => None,
        }
    }

    /// The lane pattern of a lane-addressed access.
    pub fn pat(&self) -> Option<&Pat> {
        match self {
            Op::Ld { at, .. }
            | Op::St { at, .. }
            | Op::Atom { at, .. }
            | Op::SpLd { at, .. }
            | Op::SpSt { at, .. }
            | Op::StashLd { at, .. }
            | Op::StashSt { at, .. } => Some(at),
            _ => None,
        }
    }

    /// The lane pattern, to resolve at issue.
    pub fn pat_mut(&mut self) -> Option<&mut Pat> {
        match self {
            Op::Ld { at, .. }
            | Op::St { at, .. }
            | Op::Atom { at, .. }
            | Op::SpLd { at, .. }
            | Op::SpSt { at, .. }
            | Op::StashLd { at, .. }
            | Op::StashSt { at, .. } => Some(at),
            _ => None,
        }
    }

    /// Whether it writes the store buffer.
    pub fn is_store(&self) -> bool {
        matches!(self, Op::St { .. } | Op::StashSt { .. })
    }

    /// Registers read and written (for RAW / WAW hazards, spec D7), [`NONE`] where unused; an
    /// address's base register is read too (the fourth).
    pub fn regs(&self) -> [Reg; 4] {
        let base = self.pat().map_or(NONE, |p| p.reg);
        let [a, b, c] = self.regs3();
        [a, b, c, base]
    }

    fn regs3(&self) -> [Reg; 3] {
        match *self {
            Op::Dma { reg, .. } | Op::StashMap { reg, .. } => [reg, NONE, NONE],
            Op::Comp { dst, a, b, .. } | Op::Calc { dst, a, b, .. } => [dst, a, b],
            Op::Cbra {
                cond: Cond::Nz(r) | Cond::Z(r),
                ..
            } => [r, NONE, NONE],
            Op::Ld { dst, .. } | Op::SpLd { dst, .. } | Op::StashLd { dst, .. } => {
                [dst, NONE, NONE]
            }
            Op::St { src, .. } | Op::SpSt { src, .. } | Op::StashSt { src, .. } => {
                [src, NONE, NONE]
            }
            Op::Atom { dst, src, cmp, .. } => [dst, src, cmp],
            _ => [NONE; 3],
        }
    }

    /// The register mask of [`Op::regs`].
    pub fn reg_mask(&self) -> u64 {
        self.regs()
            .iter()
            .filter(|&&r| (r as usize) < REGS)
            .fold(0, |m, &r| m | 1u64 << r)
    }
}

/// Whether `r` can be read: a register, a special register, [`IMM`] or [`NONE`].
fn readable(r: Reg) -> bool {
    (r as usize) < REGS + SPECIALS.len() || r == IMM || r == NONE
}

/// Why a program is refused.
pub fn check(ops: &[Op]) -> Result<(), String> {
    for (pc, op) in ops.iter().enumerate() {
        let regs = op.regs();
        let writes = matches!(
            op,
            Op::Comp { .. }
                | Op::Calc { .. }
                | Op::Ld { .. }
                | Op::SpLd { .. }
                | Op::StashLd { .. }
                | Op::Atom { .. }
        );
        let dst_ok = !writes || regs[0] == NONE || (regs[0] as usize) < REGS;
        if !dst_ok || !regs.iter().all(|&r| readable(r)) {
            return Err(format!(
                "op {pc}: registers are 0..{REGS}, special registers are read-only"
            ));
        }
        let target = match *op {
            Op::Bra { to } => to as usize,
            Op::Cbra { to, .. } => to[0].max(to[1]) as usize,
            _ => 0,
        };
        if target > ops.len() {
            return Err(format!("op {pc}: branch target {target} past the end"));
        }
        if writes && !matches!(op, Op::Atom { .. }) && regs[0] == NONE {
            return Err(format!(
                "op {pc}: a compute or load needs a destination register"
            ));
        }
        if op
            .pat()
            .is_some_and(|p| p.lanes == 0 || p.lanes as usize > LANES)
        {
            return Err(format!("op {pc}: 1..={LANES} lanes"));
        }
        if let Op::Dma {
            spm, global, bytes, ..
        }
        | Op::StashMap {
            spm, global, bytes, ..
        } = *op
        {
            xfer_check(spm, global, bytes).map_err(|m| format!("op {pc}: {m}"))?;
        }
        if let Op::Comp { lat, ii, .. } = op {
            if *lat == 0 || *ii == 0 {
                return Err(format!(
                    "op {pc}: compute latency and interval are at least 1"
                ));
            }
        }
    }
    Ok(())
}

/// Why a DMA transfer or stash map's range is refused: `SPM + BYTES` at most
/// [`MAX_XFER_BYTES`], `GLOBAL + BYTES` below [`MAX_GLOBAL`].
pub fn xfer_check(spm: u64, global: u64, bytes: u64) -> Result<(), String> {
    if spm.saturating_add(bytes) > MAX_XFER_BYTES {
        return Err(format!(
            "scratchpad range {spm} + {bytes} bytes; allowed: SPM + BYTES at most {MAX_XFER_BYTES}"
        ));
    }
    if global.saturating_add(bytes) >= MAX_GLOBAL {
        return Err(format!(
            "global range {global:#x} + {bytes} bytes; allowed: below {MAX_GLOBAL:#x}"
        ));
    }
    Ok(())
}
