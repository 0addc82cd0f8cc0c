//! A warp's program for the coherent memory system (docs/stall-inspector.md §10.4): a straight
//! list of operations, one list per warp. It stands in for the kernel language (issue 25 item
//! 2) so the memory system can be driven and tested now; there is no control flow.

use super::params::{LANES, LINE_BYTES, REGS};

/// A register operand (0..64); [`NONE`] for no register.
pub type Reg = u8;
/// No register.
pub const NONE: Reg = u8::MAX;

/// A warp's lane addresses: lane `l` of `lanes` active ones accesses `base + l·stride` (bytes;
/// global address for global and DMA accesses, scratchpad offset for scratchpad and stash).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pat {
    pub base: u64,
    pub stride: u64,
    pub lanes: u8,
}

impl Pat {
    /// One lane at `addr`.
    pub fn one(addr: u64) -> Pat {
        Pat {
            base: addr,
            stride: 0,
            lanes: 1,
        }
    }

    /// A full warp reading consecutive 4-byte words from `base`.
    pub fn words(base: u64) -> Pat {
        Pat {
            base,
            stride: 4,
            lanes: LANES as u8,
        }
    }

    /// Lane `l`'s address.
    pub fn addr(&self, l: usize) -> u64 {
        self.base + l as u64 * self.stride
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
    /// Atomic read-modify-write performed at the L2; the warp waits for it (spec D6: SYNC).
    Atom {
        dst: Reg,
        src: Reg,
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
    /// Maps `bytes` of the stash at `spm` onto global memory at `global` (one map per call).
    StashMap {
        spm: u64,
        global: u64,
        bytes: u64,
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
    /// `to_spm` = load into the scratchpad. The warp goes on; the region is blocked until done.
    Dma {
        spm: u64,
        global: u64,
        bytes: u64,
        to_spm: bool,
    },
}

impl Op {
    /// Whether the instruction goes through the LSU input register (spec §2.6).
    pub fn is_mem(&self) -> bool {
        !matches!(
            self,
            Op::Comp { .. } | Op::Acquire | Op::Release | Op::Barrier
        )
    }

    /// Whether it writes the store buffer.
    pub fn is_store(&self) -> bool {
        matches!(self, Op::St { .. } | Op::StashSt { .. })
    }

    /// Registers read and written (for RAW / WAW hazards, spec D7), [`NONE`] where unused.
    pub fn regs(&self) -> [Reg; 3] {
        match *self {
            Op::Comp { dst, a, b, .. } => [dst, a, b],
            Op::Ld { dst, .. } | Op::SpLd { dst, .. } | Op::StashLd { dst, .. } => {
                [dst, NONE, NONE]
            }
            Op::St { src, .. } | Op::SpSt { src, .. } | Op::StashSt { src, .. } => {
                [src, NONE, NONE]
            }
            Op::Atom { dst, src, .. } => [dst, src, NONE],
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

/// Why a program is refused.
pub fn check(ops: &[Op]) -> Result<(), String> {
    for (pc, op) in ops.iter().enumerate() {
        if op.regs().iter().any(|&r| r != NONE && r as usize >= REGS) {
            return Err(format!("op {pc}: registers are 0..{REGS}"));
        }
        let writes = matches!(
            op,
            Op::Comp { .. } | Op::Ld { .. } | Op::SpLd { .. } | Op::StashLd { .. }
        );
        if writes && op.regs()[0] == NONE {
            return Err(format!(
                "op {pc}: a compute or load needs a destination register"
            ));
        }
        let pat = match op {
            Op::Ld { at, .. }
            | Op::St { at, .. }
            | Op::Atom { at, .. }
            | Op::SpLd { at, .. }
            | Op::SpSt { at, .. }
            | Op::StashLd { at, .. }
            | Op::StashSt { at, .. } => Some(at),
            _ => None,
        };
        if pat.is_some_and(|p| p.lanes == 0 || p.lanes as usize > LANES) {
            return Err(format!("op {pc}: 1..={LANES} lanes"));
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
