//! A workload (one instruction list per warp) and the `(warp, seq, sw)` ⇄ tag codec
//! (docs/elastic-pipeline.md §5.6, §8; "Workload file").

use super::{GmemReturn, SmParams};
use crate::blocks::elastic_pipeline::Entry;
use serde::{Deserialize, Serialize};
use smrtl_hdl::blocks::elastic_pipeline::Kind;

/// `(warp, seq, sw)` ⇄ pipeline tag (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TagCodec {
    pub warp_bits: u32,
    pub sw_bits: u32,
    pub seq_bits: u32,
}

impl TagCodec {
    /// The codec of a core's params.
    pub fn of(p: &SmParams) -> TagCodec {
        TagCodec {
            warp_bits: p.warp_bits() as u32,
            sw_bits: p.sw_bits() as u32,
            seq_bits: p.seq_bits() as u32,
        }
    }

    pub fn pack(&self, warp: u32, seq: u32, sw: u32) -> u32 {
        let seq = (seq as u64 & ((1u64 << self.seq_bits) - 1)) as u32;
        let hi = (warp as u64) << (self.seq_bits + self.sw_bits);
        (hi | (seq as u64) << self.sw_bits | sw as u64) as u32
    }

    /// `(warp, seq mod 2^SEQB, sw)`.
    pub fn unpack(&self, tag: u32) -> (u32, u32, u32) {
        let t = tag as u64;
        let sw = t & ((1 << self.sw_bits) - 1);
        let seq = (t >> self.sw_bits) & ((1 << self.seq_bits) - 1);
        let warp = t >> (self.seq_bits + self.sw_bits);
        (warp as u32, seq as u32, sw as u32)
    }
}

/// One warp instruction of a workload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instr {
    pub op: Kind,
    pub pc: u32,
    /// SMEM: degree per subwarp (S values, `deg_override`); all 1 for other kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degrees: Option<Vec<u32>>,
    /// SMEM: word address per lane per subwarp (`[S][L]`); the detector computes degrees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addrs: Option<Vec<Vec<u32>>>,
    /// With `addrs`: active lanes per subwarp (`[S][L]`), default all active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<Vec<Vec<bool>>>,
}

impl Instr {
    pub fn alu(pc: u32) -> Instr {
        Instr::of(Kind::Alu, pc)
    }
    pub fn of(op: Kind, pc: u32) -> Instr {
        Instr {
            op,
            pc,
            degrees: None,
            addrs: None,
            active: None,
        }
    }
    pub fn smem(pc: u32, degrees: &[u32]) -> Instr {
        Instr {
            degrees: Some(degrees.to_vec()),
            ..Instr::of(Kind::Smem, pc)
        }
    }

    /// The pipeline entry of subwarp `sw`.
    pub(super) fn entry(&self, tag: u32, sw: usize, lanes: usize) -> Entry {
        let mut e = Entry::new(tag, self.op, lanes);
        if self.op != Kind::Smem {
            return e;
        }
        if let Some(a) = &self.addrs {
            for l in 0..lanes {
                e.addrs[l] = a[sw][l];
                e.act[l] = self.active.as_ref().is_none_or(|act| act[sw][l]);
            }
        } else {
            e.deg_override = Some(self.degrees.as_ref().map_or(1, |d| d[sw]));
        }
        e
    }
}

/// A kernel: params plus one instruction list per warp (≤ W warps; the rest are empty).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub params: SmParams,
    pub warps: Vec<Vec<Instr>>,
}

impl Workload {
    /// A lower bound of the kernel's cycles: a warp waits for each of its global loads' ICNT
    /// return, and one subwarp issues per cycle. Checked against [`MAX_KERNEL_CYCLES`] before
    /// a run, so a workload that cannot finish is refused at once.
    ///
    /// [`MAX_KERNEL_CYCLES`]: super::MAX_KERNEL_CYCLES
    pub fn min_cycles(&self) -> u64 {
        let latency = match self.params.gmem_return {
            GmemReturn::Icnt(l) => l as u64,
            GmemReturn::Dram(d) => d.min_latency(),
            GmemReturn::AtWriteback => 0,
        };
        let loads = self
            .warps
            .iter()
            .map(|p| p.iter().filter(|i| i.op == Kind::Gld).count() as u64 * latency)
            .max()
            .unwrap_or(0);
        let issues = self.warps.iter().map(|p| p.len() as u64).sum::<u64>()
            * self.params.pipe.subwarps as u64;
        loads.max(issues)
    }
}
