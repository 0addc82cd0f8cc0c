//! The coherent multi-SM memory system's parameters (docs/stall-inspector.md §10.2; spec §6,
//! seed 003 Table I), declared once: `--set` parsing, errors and range checks come from here.
//! Defaults are the paper's Table I (one SM fewer than the 4×4 mesh's 16 nodes: 15 SMs).

use serde::{Deserialize, Serialize};
use smrtl_hdl::params::{Allowed, BlockParams, Gpgpusim, ParamError};

/// GPU-side coherence protocol (spec §6, [P §VI-B]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// Acquire invalidates the L1, release flushes the store buffer, writes go through to L2.
    Gpu,
    /// Acquire self-invalidates non-owned data, release registers ownership at the L2, the L2
    /// forwards requests for owned lines to the owner.
    Denovo,
}

smrtl_hdl::block_params! {
    /// The multi-SM coherent memory system (docs/stall-inspector.md §10).
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct CohParams {
        /// Coherence protocol of the GPU L1s and stashes (spec §6).
        protocol: Protocol = Protocol::Gpu, "protocol", Allowed::Names(&["gpu", "denovo"]);
        /// SMs, placed on mesh nodes 0..sms (Table I: 15; the implicit study uses 1).
        sms: u32 = 15, "sms", Allowed::Range(1, 16) => Gpgpusim::Sms;
        /// Warp slots per SM (Table I, GTX 480: 48).
        warps: u32 = 48, "warps", Allowed::Range(1, 128) => Gpgpusim::WarpSlots;
        /// L1 sets (Table I: 32 KB / 128 B / 8 ways = 32).
        l1_sets: u32 = 32, "l1_sets", Allowed::Pow2(1, 1024) => Gpgpusim::L1dSets;
        /// L1 ways (Table I).
        l1_ways: u32 = 8, "l1_ways", Allowed::Range(1, 32) => Gpgpusim::L1dWays;
        /// L1 banks: lines of one access in the same bank serialise (Table I).
        l1_banks: u32 = 8, "l1_banks", Allowed::Pow2(1, 64) => Gpgpusim::L1Banks;
        /// MSHR entries per SM, shared by L1 misses, stash misses and DMA requests ([P §V]).
        mshrs: u32 = 32, "mshrs", Allowed::Range(1, 4096) => Gpgpusim::L1dMshrs;
        /// Accesses per MSHR entry, the allocating one included.
        max_merge: u32 = 8, "max_merge", Allowed::Range(1, 64) => Gpgpusim::L1dMerge;
        /// L1 miss-queue slots (one request leaves per cycle).
        mq_depth: u32 = 8, "mq_depth", Allowed::Range(1, 1024) => Gpgpusim::L1dMissQueue;
        /// Store-buffer entries (lines), write-combining ([P §V]: 32).
        sb_entries: u32 = 32, "sb_entries", Allowed::Range(1, 4096);
        /// DeNovo owned lines an SM keeps (the L1's capacity in lines by default).
        owned_lines: u32 = 256, "owned_lines", Allowed::Range(1, 65_536);
        /// Scratchpad / stash bytes (Table I: 16 KB).
        spm_bytes: u32 = 16_384, "spm_bytes", Allowed::Pow2(128, 1 << 20);
        /// Scratchpad / stash banks of 4 bytes (Table I: 32).
        spm_banks: u32 = 32, "spm_banks", Allowed::Pow2(1, 32);
        /// L2 sets per bank (Table I: 4 MB / 128 B / 16 banks / 16 ways = 128).
        l2_sets: u32 = 128, "l2_sets", Allowed::Pow2(1, 65_536);
        /// L2 ways.
        l2_ways: u32 = 16, "l2_ways", Allowed::Range(1, 64);
        /// L1, scratchpad and stash hit latency (Table I: 1).
        hit_lat: u32 = 1, "hit_lat", Allowed::Range(1, 64);
        /// L2 latency at 0 hops; + round(l2_span·h/6) at h hops (spec §6: 29 + round(32h/6)).
        l2_lat: u32 = 29, "l2_lat", Allowed::Range(1, 10_000);
        /// L2 latency added over 6 hops (spec §6).
        l2_span: u32 = 32, "l2_span", Allowed::Range(0, 10_000);
        /// Remote L1 / stash latency at 0 hops; + remote_hop per hop (spec §6: 35 + 8h).
        remote_lat: u32 = 35, "remote_lat", Allowed::Range(1, 10_000);
        /// Remote latency per hop (spec §6).
        remote_hop: u32 = 8, "remote_hop", Allowed::Range(0, 1_000);
        /// Memory latency at 0 hops; + round(mem_span·h/6) (spec §6: 197 + round(64h/6)).
        mem_lat: u32 = 197, "mem_lat", Allowed::Range(1, 100_000);
        /// Memory latency added over 6 hops (spec §6).
        mem_span: u32 = 64, "mem_span", Allowed::Range(0, 100_000);
        /// ALU result latency (kernel language, docs §10.4; GPGPU-Sim's GTX 480 integer add: 4).
        alu_lat: u32 = 4, "alu_lat", Allowed::Range(1, 255);
        /// ALU initiation interval: cycles before the ALU takes the next instruction (GTX 480: 1).
        alu_ii: u32 = 1, "alu_ii", Allowed::Range(1, 255);
        /// MUL result latency (GPGPU-Sim's GTX 480 integer multiply: 13).
        mul_lat: u32 = 13, "mul_lat", Allowed::Range(1, 255);
        /// MUL initiation interval (GTX 480: 2).
        mul_ii: u32 = 2, "mul_ii", Allowed::Range(1, 255);
        /// SFU result latency (project decision [D]: GPGPU-Sim's GTX 480 SFU-class latency, 20).
        sfu_lat: u32 = 20, "sfu_lat", Allowed::Range(1, 255);
        /// SFU initiation interval (Fermi: 4 SFUs per SM serve a 32-lane warp in 8 cycles).
        sfu_ii: u32 = 8, "sfu_ii", Allowed::Range(1, 255);
        /// Cycles a taken branch's fetch redirect leaves the warp without an instruction, shown as
        /// CONTROL (spec D5; project decision [D]: the buffer refills in the next cycle, 1).
        redirect: u32 = 1, "redirect", Allowed::Range(0, 64);
    }
}

/// L1 and L2 line bytes (GTX 480, as the seed-004 pipeline).
pub const LINE_BYTES: u64 = 128;
/// Lanes of a warp: the most lines or words one access touches.
pub const LANES: usize = 32;
/// Registers per warp the scoreboard tracks (one u64 mask).
pub const REGS: usize = 64;
/// Mesh width: nodes `0..16` on a 4×4 mesh, SM `s` at node `s`, L2 bank `b` at node `b`.
pub const MESH: u32 = 4;
/// L2 banks (Table I: 16, one per mesh node).
pub const L2_BANKS: u32 = 16;

impl CohParams {
    /// Mesh hops between nodes `a` and `b` (Manhattan distance on the 4×4 mesh).
    pub fn hops(a: u32, b: u32) -> u32 {
        let (ax, ay, bx, by) = (a % MESH, a / MESH, b % MESH, b / MESH);
        ax.abs_diff(bx) + ay.abs_diff(by)
    }

    /// Round trip to an L2 bank `h` hops away (spec §6).
    pub fn l2_latency(&self, h: u32) -> u64 {
        u64::from(self.l2_lat) + div_round(u64::from(self.l2_span) * u64::from(h), 6)
    }

    /// L2 miss served by memory, `h` hops between SM and bank (spec §6).
    pub fn mem_latency(&self, h: u32) -> u64 {
        u64::from(self.mem_lat) + div_round(u64::from(self.mem_span) * u64::from(h), 6)
    }

    /// A request forwarded by the L2 to the owner: `h` = half the hops of the triangle
    /// requester → bank → owner → requester, rounded up (in 0..=6 on the 4×4 mesh; project
    /// decision).
    pub fn remote_latency(&self, req: u32, bank: u32, owner: u32) -> u64 {
        let tri = Self::hops(req, bank) + Self::hops(bank, owner) + Self::hops(owner, req);
        u64::from(self.remote_lat) + u64::from(self.remote_hop) * u64::from(tri.div_ceil(2))
    }

    /// A compute unit's result latency and initiation interval (docs §10.4).
    pub fn unit_timing(&self, u: super::prog::Unit) -> (u64, u64) {
        use super::prog::Unit;
        let (lat, ii) = match u {
            Unit::Alu => (self.alu_lat, self.alu_ii),
            Unit::Mul => (self.mul_lat, self.mul_ii),
            Unit::Sfu => (self.sfu_lat, self.sfu_ii),
        };
        (u64::from(lat), u64::from(ii))
    }

    /// Scratchpad / stash chunks of one line each.
    pub fn spm_chunks(&self) -> usize {
        (u64::from(self.spm_bytes) / LINE_BYTES) as usize
    }
}

/// `round(n / d)`, halves up.
fn div_round(n: u64, d: u64) -> u64 {
    (2 * n + d) / (2 * d)
}

impl BlockParams for CohParams {
    const BLOCK: &'static str = "coh_mem";

    fn presets() -> Vec<(&'static str, Self)> {
        vec![
            ("table1", CohParams::default()),
            (
                "implicit",
                CohParams {
                    protocol: Protocol::Denovo,
                    sms: 1,
                    ..CohParams::default()
                },
            ),
        ]
    }

    fn check(&self) -> Result<(), ParamError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_span_table1_ranges() {
        let p = CohParams::default();
        assert_eq!((p.l2_latency(0), p.l2_latency(6)), (29, 61));
        assert_eq!((p.mem_latency(0), p.mem_latency(6)), (197, 261));
        // Farthest triangle: corners 0 and 15 with the owner at 3 (perimeter 12).
        assert_eq!(p.remote_latency(0, 15, 3), 35 + 8 * 6);
        assert_eq!(p.remote_latency(5, 5, 5), 35);
        assert_eq!(CohParams::hops(0, 15), 6);
    }

    #[test]
    fn params_parse_by_name_and_name_the_bad_one() {
        let p = CohParams::resolve_pairs(None, &[("protocol", "denovo"), ("mshrs", "256")])
            .expect("valid");
        assert_eq!((p.protocol, p.mshrs, p.sms), (Protocol::Denovo, 256, 15));
        let e = CohParams::resolve_pairs(None, &[("sms", "17")]).expect_err("17 SMs");
        assert!(e.to_string().contains("sms"), "{e}");
        let p = CohParams::resolve_pairs(Some("implicit"), &[]).expect("preset");
        assert_eq!((p.protocol, p.sms), (Protocol::Denovo, 1));
    }
}
