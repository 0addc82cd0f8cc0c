//! Bank-conflict-aware warp scheduling hardware of seed 000 (docs/elastic-pipeline.md §5,
//! §6): the degree accumulator (§5.3), the 2-way conflict history cache (§5.2) and the distance
//! counter with the memory-warp ready mask (§5.4, §5.6), as one block `history_cache`.
//!
//! This file holds the params (the single source of every width), the ports (declared once)
//! and the RTL builder [`build`] (the logic itself is [`logic`], which `sm_core` places inside its own
//! module). The cache's tags and data are memories with asynchronous reads (LUT-RAM: the
//! lookup is combinational in the decision cycle); its valid and MRU bits are flip-flops, which
//! `clear` (kernel_start) zeroes in one cycle.

use crate::params::{bits_for, log2, one_of, Allowed, BlockParams, Gpgpusim, ParamError};
use serde::{Deserialize, Serialize};

/// What the counter loads when an SMEM warp is scheduled (§5.4, D18).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CounterMode {
    /// counter ← pred; held while SMEM subwarps are still issuing.
    LoadPred,
    /// counter ← pred + S − 1; `smem_sw_pending` is ignored.
    LoadPredPlusSm1,
}

/// Scheduling policy when the mask would leave no eligible warp (§5.6, D19).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BcawsPolicy {
    /// An empty eligible set is a scheduling failure (the paper's choice).
    Strict,
    /// When only memory warps are ready, the mask is ignored for that decision.
    #[serde(rename = "issue_if_no_nonmem", alias = "issue_if_no_non_mem")]
    IssueIfNoNonMem,
}

crate::block_params! {
    /// Params by their spec names (§1, §5, §10); the defaults are the paper's configuration
    /// (Table 3 / Table 4).
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct Params {
        /// History-cache sets.
        hc_sets: u32 = 256, "hc_sets", Allowed::Pow2(1, 1024);
        /// History-cache ways (2 in the paper; 1 = direct-mapped).
        hc_ways: u32 = 2, "hc_ways", Allowed::OneOf(&[1, 2]);
        /// PC bits (the cache key).
        pc_bits: u32 = 14, "PCW", Allowed::Range(1, 32), "at least log2(hc_sets)+1";
        /// Warp size (threads); DW = log2 WS is the width of stored degrees and the counter.
        warp_size: u32 = 32, "WS", Allowed::OneOf(&[8, 16, 32, 64, 128]) => Gpgpusim::WarpSize;
        /// Warp contexts.
        warps: u32 = 32, "W", Allowed::Range(1, 64) => Gpgpusim::WarpSlots;
        /// SIMD lanes (S = WS / L; acc_svc_m1 is lg L bits).
        lanes: u32 = 8, "L", Allowed::OneOf(&[8, 16, 32]), "at most WS" => Gpgpusim::LanesPerAccess;
        /// Counter load value.
        counter_mode: CounterMode = CounterMode::LoadPred, "counter_mode", Allowed::Names(&["load_pred", "load_pred_plus_sm1"]);
        /// Hold the counter while fe_hold.
        bcaws_freeze_on_stall: bool = true, "bcaws_freeze_on_stall", Allowed::Bool;
        /// Empty eligible set under the mask.
        bcaws_policy: BcawsPolicy = BcawsPolicy::Strict, "bcaws_policy", Allowed::Names(&["strict", "issue_if_no_nonmem"]);
    }
}

impl Params {
    /// S = WS / L subwarps per warp.
    pub fn subwarps(&self) -> u32 {
        self.warp_size / self.lanes
    }
    /// DW = ⌈log2 WS⌉: stored degree, accumulator, counter and pred width.
    pub fn dw(&self) -> usize {
        log2(self.warp_size) as usize
    }
    /// lg L: width of a subwarp's svc_m1.
    pub fn svc_bits(&self) -> usize {
        log2(self.lanes) as usize
    }
    /// lg S (at least 1): width of a subwarp index.
    pub fn sw_bits(&self) -> usize {
        bits_for(self.subwarps().max(2) as u64 - 1)
    }
    /// Index bits: log2 sets.
    pub fn index_bits(&self) -> usize {
        log2(self.hc_sets) as usize
    }
    /// Tag bits: PCW − log2 sets.
    pub fn tag_bits(&self) -> usize {
        self.pc_bits as usize - self.index_bits()
    }
    /// Cache storage as the paper counts it: lines × (DW + tag) bits (Table 3: 5632).
    pub fn storage_bits(&self) -> u64 {
        (self.hc_sets * self.hc_ways) as u64 * (self.dw() + self.tag_bits()) as u64
    }
    /// Storage with the project's valid bits (one per line) and MRU bits (one per set, 2 ways).
    pub fn storage_bits_with_state(&self) -> u64 {
        let mru = if self.hc_ways == 2 {
            self.hc_sets as u64
        } else {
            0
        };
        self.storage_bits() + (self.hc_sets * self.hc_ways) as u64 + mru
    }
}

impl BlockParams for Params {
    const BLOCK: &'static str = "history_cache";

    fn presets() -> Vec<(&'static str, Self)> {
        let paper = Params::default();
        let small = Params {
            hc_sets: 4,
            warps: 4,
            ..paper.clone()
        };
        vec![
            ("paper", paper),
            ("small", small.clone()),
            // The other counter mode and policy, no freeze on stalls (§5.4, §5.6, D18, D19).
            (
                "small_alt",
                Params {
                    counter_mode: CounterMode::LoadPredPlusSm1,
                    bcaws_policy: BcawsPolicy::IssueIfNoNonMem,
                    bcaws_freeze_on_stall: false,
                    ..small.clone()
                },
            ),
            // Direct-mapped, S = 2, an odd warp count.
            (
                "small_1way",
                Params {
                    hc_ways: 1,
                    lanes: 16,
                    warps: 7,
                    ..small.clone()
                },
            ),
            // One set: the lines are the ways, no index bits.
            (
                "small_1set",
                Params {
                    hc_sets: 1,
                    counter_mode: CounterMode::LoadPredPlusSm1,
                    ..small
                },
            ),
        ]
    }

    fn check(&self) -> Result<(), ParamError> {
        crate::params::in_range("PCW", self.pc_bits, log2(self.hc_sets) + 1, 32)?;
        let lanes: Vec<u32> = [8, 16, 32]
            .into_iter()
            .filter(|&l| l <= self.warp_size)
            .collect();
        one_of("L", self.lanes, &lanes)
    }
}

crate::ports! {
    Params as p;
    let (dw, pcw, w) = (p.dw(), p.pc_bits as usize, p.warps as usize);
    inputs {
        /// `kernel_start`: clears valid and MRU bits, the counter and the accumulator (§5.2, D21).
        clear[1]: bool,
        /// An SMEM entry leaves MEM0 at the end of this cycle (§5.3), of subwarp `acc_sw`, with
        /// service cycles − 1 `acc_svc_m1`, of the instruction at `acc_pc_in`.
        acc_v[1]: bool,
        acc_sw[p.sw_bits()],
        acc_svc_m1[p.svc_bits()],
        acc_pc_in[pcw],
        /// PC looked up in the decision cycle (asynchronous read).
        lk_pc[pcw],
        /// Per warp: ready, and a memory instruction (§5.4).
        ready[1; w]: bool,
        is_mem[1; w]: bool,
        /// An SMEM warp is scheduled in this decision cycle: the counter loads at the edge.
        load[1]: bool,
        smem_sw_pending[1]: bool,
        fe_hold[1]: bool,
        /// 0 gives plain RR: no mask.
        enable[1]: bool,
    }
    outputs {
        /// The warp's last subwarp leaves MEM0: the sum and its PC (0 otherwise).
        acc_valid[1]: bool,
        acc_value[dw],
        acc_pc[pcw],
        /// The lookup of `lk_pc`: hit and stored degree, `pred = hit ? data : 0`.
        lk_hit[1]: bool,
        lk_data[dw],
        pred[dw],
        /// Per warp: the ready vector the RR scheduler sees.
        ready_m[1; w]: bool,
        mask[1]: bool,
        counter[dw],
    }
}

impl crate::Block for Params {
    fn build(&self) -> Module {
        build(self)
    }
    #[cfg(feature = "faults")]
    const FAULTS: &'static [crate::faults::Fault] = &[faults::MRU_WAY_EVICTED];
}

/// Planted faults (docs/blocks.md §4).
#[cfg(feature = "faults")]
pub mod faults {
    use crate::faults::Fault;

    /// 2 ways: a miss in a full set evicts the MRU way instead of the other one (§5.2, D16).
    pub const MRU_WAY_EVICTED: Fault = Fault {
        block: "history_cache",
        name: "mru_way_evicted",
        what: "a miss in a full 2-way set replaces the MRU way, not the non-MRU way (§5.2, D16)",
        port: super::port::LK_HIT,
        // Three warps' writes to one set (S = 4 cycles each), then a lookup: 14 cycles shrunk.
        within: 24,
    };
}

use crate::netlist::{concat, or_tree, replicate, Expr, Module};

/// Index bits of the sets one register of [`SetBits`] holds: 64 sets a register.
const REG_INDEX_BITS: usize = 6;

/// One bit per set (a way's valid bits, the MRU bits) as flip-flops, so that `clear` zeroes
/// them all in one cycle, which a memory cannot do. Nets are at most 64 bits wide: register `k`
/// (`{name}{k}_q`) holds sets 64k..64k+63; with 64 sets or fewer there is one, `{name}_q`.
struct SetBits {
    regs: Vec<Expr>,
    /// All the bits, set 0 lowest: the register, or a wire `{name}` packing the registers.
    all: Expr,
    /// Set-index bits: log2 sets.
    ib: usize,
}

impl SetBits {
    fn new(m: &mut Module, name: &str, sets: usize) -> SetBits {
        let per = sets.min(1 << REG_INDEX_BITS);
        let n = sets / per;
        let regs = (0..n)
            .map(|k| {
                let name = if n == 1 {
                    format!("{name}_q")
                } else {
                    format!("{name}{k}_q")
                };
                m.reg(&name, per, 0)
            })
            .collect::<Vec<_>>();
        let all = match regs.as_slice() {
            [one] => one.clone(),
            _ => {
                let msb_first: Vec<Expr> = regs.iter().rev().cloned().collect();
                m.wire(name, crate::netlist::concat_wide(&msb_first))
            }
        };
        SetBits {
            regs,
            all,
            ib: sets.trailing_zeros() as usize,
        }
    }

    /// Index bits within one register.
    fn lo_bits(&self) -> usize {
        self.ib.min(REG_INDEX_BITS)
    }

    /// Whether `pc` (its set index) falls in register `k`.
    fn in_reg(&self, pc: &Expr, k: usize) -> Option<Expr> {
        let (lo, hi) = (self.lo_bits(), self.ib - self.lo_bits());
        (hi > 0).then(|| pc.slice(lo, hi).equals(&Expr::lit(k as u64, hi)))
    }

    /// The bit of the set of `pc`, as wire `name`: an indexed select by the set index
    /// (docs/verilog.md "Indexed selects").
    fn read(&self, m: &mut Module, name: &str, pc: &Expr) -> Expr {
        let bit = if self.ib == 0 {
            self.all.clone()
        } else {
            self.all.index(&pc.slice(0, self.ib), 1)
        };
        m.wire(name, bit)
    }

    /// The registers' next values: 0 on `clear`, else `write(reg)` for the register the set of
    /// `pc` falls in when `en`, else unchanged.
    fn update(
        &self,
        m: &mut Module,
        pc: &Expr,
        en: &Expr,
        clear: &Expr,
        write: impl Fn(&Expr) -> Expr,
    ) {
        for (k, r) in self.regs.iter().enumerate() {
            let en_k = match self.in_reg(pc, k) {
                Some(hit) => en & &hit,
                None => en.clone(),
            };
            let kept = en_k.mux(&write(r), r);
            m.next(r, clear.mux(&Expr::lit(0, r.width()), &kept));
        }
    }

    /// Sets the bit of the set of `pc` when `en` (`dec`: [`SetBits::decode`] of `pc`); `clear`
    /// zeroes all.
    fn set(&self, m: &mut Module, pc: &Expr, dec: &Option<Expr>, en: &Expr, clear: &Expr) {
        self.update(m, pc, en, clear, |r| match dec {
            Some(d) => r | d,
            None => Expr::lit(1, 1),
        });
    }

    /// Writes `bit` to the bit of the set of `pc` when `en`; `clear` zeroes all.
    fn write(
        &self,
        m: &mut Module,
        pc: &Expr,
        dec: &Option<Expr>,
        en: &Expr,
        clear: &Expr,
        bit: &Expr,
    ) {
        self.update(m, pc, en, clear, |r| match dec {
            Some(d) => (r & &!d) | bit.mux(d, &Expr::lit(0, d.width())),
            None => bit.clone(),
        });
    }

    /// One-hot decode (wire `name`) of the low index bits of `pc` into the bit positions of a
    /// register, by doubling: `{name}_{2^(b+1)}` decodes `pc[b:0]`. `None` with one set.
    fn decode(&self, m: &mut Module, name: &str, pc: &Expr) -> Option<Expr> {
        let lo = self.lo_bits();
        let mut d: Option<Expr> = None;
        for b in 0..lo {
            let bit = pc.bit(b);
            let value = match &d {
                None => concat(&[bit.clone(), !&bit]),
                Some(d) => {
                    let zero = Expr::lit(0, d.width());
                    concat(&[bit.mux(d, &zero), bit.mux(&zero, d)])
                }
            };
            d = Some(if b + 1 == lo {
                m.wire(name, value)
            } else {
                m.wire(&format!("{name}_{}", 2 << b), value)
            });
        }
        d
    }
}

/// One way of the cache: its tag and data memories (`hc_w{way}_tag`, `hc_w{way}_data`, one word
/// per set) and its valid bits (`hc_w{way}_valid*_q`).
struct Way {
    tag: usize,
    data: usize,
    valid: SetBits,
}

/// The block's inputs as nets (spec §6 `DegreeAccumulator`, `ConflictHistoryCache`,
/// `BcawsMask`); `lk_pc` may depend on [`HcOut::ready_m`] through a scheduler.
pub struct HcIn {
    pub clear: Expr,
    pub acc_v: Expr,
    pub acc_sw: Expr,
    pub acc_svc_m1: Expr,
    pub acc_pc: Expr,
    pub lk_pc: Expr,
    pub ready: Expr,
    pub is_mem: Expr,
    pub load: Expr,
    pub smem_sw_pending: Expr,
    pub fe_hold: Expr,
    pub enable: Expr,
}

/// The block's outputs as nets.
pub struct HcOut {
    pub acc_valid: Expr,
    pub acc_value: Expr,
    pub acc_pc: Expr,
    pub lk_hit: Expr,
    pub lk_data: Expr,
    pub pred: Expr,
    pub ready_m: Expr,
    pub mask: Expr,
    pub counter: Expr,
}

/// The top `history_cache`: its ports around [`logic`].
pub fn build(p: &Params) -> Module {
    let mut m = Module::new(&crate::params::module_name(p));
    m.cites(crate::blocks::docs::ELASTIC_PIPELINE);
    let (inp, out) = m.declare_ports(&ports(p));
    let i = |name: &str| inp[name].clone();
    let io = HcIn {
        clear: i(port::CLEAR),
        acc_v: i(port::ACC_V),
        acc_sw: i(port::ACC_SW),
        acc_svc_m1: i(port::ACC_SVC_M1),
        acc_pc: i(port::ACC_PC_IN),
        lk_pc: i(port::LK_PC),
        ready: i(port::READY),
        is_mem: i(port::IS_MEM),
        load: i(port::LOAD),
        smem_sw_pending: i(port::SMEM_SW_PENDING),
        fe_hold: i(port::FE_HOLD),
        enable: i(port::ENABLE),
    };
    let r = logic(&mut m, p, io);
    let o = |name: &str| out[name].clone();
    for (name, value) in [
        (port::ACC_VALID, r.acc_valid),
        (port::ACC_VALUE, r.acc_value),
        (port::ACC_PC, r.acc_pc),
        (port::LK_HIT, r.lk_hit),
        (port::LK_DATA, r.lk_data),
        (port::PRED, r.pred),
        (port::READY_M, r.ready_m),
        (port::MASK, r.mask),
        (port::COUNTER, r.counter),
    ] {
        m.assign(&o(name), value);
    }
    m
}

/// The logic of the block (docs/elastic-pipeline.md §5.2–5.4, §5.6, D16–D19):
///
/// - the degree accumulator `acc_q` (§5.3, D17);
/// - the conflict history cache (§5.2, D16): per way, a tag memory `hc_w{way}_tag` (PCW − lg
///   sets bits) and a data memory `hc_w{way}_data` (DW bits) of one word per set, each with two
///   asynchronous reads at most (the lookup at `lk_pc`; the write's hit detection at
///   `acc_pc_in`, tags only, 2 ways only) and one write port at `acc_pc_in`; the valid bits
///   `hc_w{way}_valid*_q` and, with 2 ways, the MRU bits `hc_mru*_q` (one per set) as
///   flip-flops. With one set the memories have two words, of which word 0 is used;
/// - the distance counter `counter_q` with the ready mask (§5.4, §5.6, D18, D19).
///
/// `clear` (kernel_start) zeroes valid and MRU bits, counter and accumulator and suppresses that
/// cycle's cache write. The memories have no reset: a word is only seen through its line's valid
/// bit (`lk_data` is masked by the hit, the write's hit detection by the valid bit), and a valid
/// bit is only set by the write that fills its words, so every port behaves as if tags and data
/// were reset (writes during `reset` land in lines whose valid bits it zeroes).
pub fn logic(m: &mut Module, p: &Params, io: HcIn) -> HcOut {
    let (dw, sw, w) = (p.dw(), p.sw_bits(), p.warps as usize);
    let (ib, tb) = (p.index_bits(), p.tag_bits());
    let (sets, ways) = (p.hc_sets as usize, p.hc_ways as usize);
    let s_m1 = u64::from(p.subwarps() - 1);
    let clear = io.clear.clone();

    m.section("Degree accumulator (§5.3, D17)");
    let acc = m.reg("acc_q", dw, 0);
    let acc_sw = io.acc_sw.clone();
    let first = m.wire("acc_first", acc_sw.equals(&Expr::lit(0, sw)));
    let last = m.wire("acc_last", acc_sw.equals(&Expr::lit(s_m1, sw)));
    let base = first.mux(&Expr::lit(0, dw), &acc);
    let sum = m.wire("acc_sum", base + io.acc_svc_m1.clone().zext(dw));
    let acc_v = io.acc_v.clone();
    let acc_valid = m.wire("acc_valid_w", &acc_v & &last);
    let acc_value = acc_valid.mux(&sum, &Expr::lit(0, dw));
    let pc_in = io.acc_pc.clone();
    let acc_pc = acc_valid.mux(&pc_in, &Expr::lit(0, p.pc_bits as usize));
    m.next(&acc, clear.mux(&Expr::lit(0, dw), &acc_v.mux(&sum, &acc)));

    m.section("Conflict history cache (§5.2, D16): tag/data memories, valid/MRU bits");
    // A memory has two words at least: with one set, word 0 (constant address) is the line.
    let index = |pc: &Expr| {
        if ib == 0 {
            Expr::lit(0, 1)
        } else {
            pc.slice(0, ib)
        }
    };
    let cache: Vec<Way> = (0..ways)
        .map(|wy| Way {
            tag: m.memory(&format!("hc_w{wy}_tag"), tb, sets.max(2)),
            data: m.memory(&format!("hc_w{wy}_data"), dw, sets.max(2)),
            valid: SetBits::new(m, &format!("hc_w{wy}_valid"), sets),
        })
        .collect();
    let mru = (ways == 2).then(|| SetBits::new(m, "hc_mru", sets));

    m.section("Lookup of lk_pc in the decision cycle (§5.2): asynchronous read, hit, pred");
    let lk_pc = io.lk_pc.clone();
    let (lk_idx, lk_tag) = (index(&lk_pc), lk_pc.slice(ib, tb));
    let mut lk_hits = vec![];
    let mut lk_datas = vec![];
    for (wy, way) in cache.iter().enumerate() {
        let v = way.valid.read(m, &format!("lk_w{wy}_valid"), &lk_pc);
        let t = m.read(way.tag, &lk_idx);
        let t = m.wire(&format!("lk_w{wy}_tag"), t);
        let d = m.read(way.data, &lk_idx);
        let d = m.wire(&format!("lk_w{wy}_data"), d);
        let hit = m.wire(&format!("lk_w{wy}_hit"), v & t.equals(&lk_tag));
        // Data is only used through a hit: the valid bit masks a word never written.
        lk_datas.push(replicate(&hit, dw) & d);
        lk_hits.push(hit);
    }
    let lk_hit = m.wire("lk_hit_w", or_tree(lk_hits, 1));
    let lk_data = m.wire("lk_data_w", or_tree(lk_datas, dw));
    let pred = m.wire("pred_w", lk_hit.mux(&lk_data, &Expr::lit(0, dw)));

    m.section("Cache write of acc_pc_in (§5.2): hit way, else first invalid, else non-MRU");
    let (wr_idx, wr_tag) = (index(&pc_in), pc_in.slice(ib, tb));
    let we = m.wire("wr_en", &acc_valid & &!&clear);
    let wr_way1 = match &mru {
        Some(mru) => {
            let mut hits = vec![];
            let mut valids = vec![];
            for (wy, way) in cache.iter().enumerate() {
                let v = way.valid.read(m, &format!("wr_w{wy}_valid"), &pc_in);
                let t = m.read(way.tag, &wr_idx);
                let t = m.wire(&format!("wr_w{wy}_tag"), t);
                hits.push(m.wire(&format!("wr_w{wy}_hit"), &v & &t.equals(&wr_tag)));
                valids.push(v);
            }
            let mru_way = mru.read(m, "wr_mru", &pc_in);
            // Hit: the hit way. Miss: way 0 if invalid, else way 1 if invalid or not MRU.
            let not_mru = crate::planted!(faults::MRU_WAY_EVICTED, mru_way.clone(), !&mru_way);
            let alloc1 = &valids[0] & &(!&valids[1] | not_mru);
            Some(m.wire("wr_way1", (&hits[0] | &hits[1]).mux(&hits[1], &alloc1)))
        }
        None => None,
    };
    let dec = cache[0].valid.decode(m, "wr_dec", &pc_in);
    for (wy, way) in cache.iter().enumerate() {
        let way_we = match (&wr_way1, wy) {
            (None, _) => we.clone(),
            (Some(w1), 0) => &we & &!w1,
            (Some(w1), _) => &we & w1,
        };
        let way_we = m.wire(&format!("wr_w{wy}_en"), way_we);
        m.write(way.tag, wr_idx.clone(), wr_tag.clone(), way_we.clone());
        m.write(way.data, wr_idx.clone(), sum.clone(), way_we.clone());
        way.valid.set(m, &pc_in, &dec, &way_we, &clear);
    }
    if let (Some(mru), Some(w1)) = (&mru, &wr_way1) {
        mru.write(m, &pc_in, &dec, &we, &clear, w1);
    }

    m.section("Distance counter and ready mask (§5.4, §5.6, D18, D19)");
    let counter = m.reg("counter_q", dw, 0);
    let nonzero = m.wire("counter_nz", counter.any());
    let mask = m.wire("mask_w", io.enable.clone() & nonzero.clone());
    let (ready, is_mem) = (io.ready.clone(), io.is_mem.clone());
    // One NAND (mask ∧ is_mem) and one AND per warp (Table 3).
    let masked = m.wire(
        "ready_masked",
        &ready & &!(replicate(&mask, w) & is_mem.clone()),
    );
    let ready_m = match p.bcaws_policy {
        BcawsPolicy::Strict => masked,
        BcawsPolicy::IssueIfNoNonMem => {
            let nonmem = m.wire("ready_nonmem", &ready & &!&is_mem);
            let only_mem = m.wire("only_mem_ready", ready.any() & !nonmem.any());
            only_mem.mux(&ready, &masked)
        }
    };
    let load_value = match p.counter_mode {
        CounterMode::LoadPred => pred.clone(),
        CounterMode::LoadPredPlusSm1 => &pred + &Expr::lit(s_m1, dw),
    };
    let mut dec = nonzero.clone();
    if p.counter_mode == CounterMode::LoadPred {
        dec = dec & !io.smem_sw_pending.clone();
    }
    if p.bcaws_freeze_on_stall {
        dec = dec & !io.fe_hold.clone();
    }
    let dec = m.wire("counter_dec", dec);
    let held = dec.mux(&(&counter - &Expr::lit(1, dw)), &counter);
    let next = clear.mux(&Expr::lit(0, dw), &io.load.mux(&load_value, &held));
    m.next(&counter, next);
    HcOut {
        acc_valid,
        acc_value,
        acc_pc,
        lk_hit,
        lk_data,
        pred,
        ready_m,
        mask,
        counter,
    }
}
