//! Behavioral model of the bank-conflict-aware warp scheduling hardware of seed 000 (spec
//! docs/elastic-pipeline.md §5.2–5.4, §5.6), written from its docs page, independently of the RTL.
//!
//! Three reusable components — [`Accumulator`] (§5.3), [`HistoryCache`] (§5.2, D16) and
//! [`DistanceCounter`] (§5.4, D18, with the §5.6 `bcaws_policy` ready mask) — wired as the
//! block in [`Bcaws`] (on the typed cycle values of the block's port declaration) and put on
//! its port buffers by [`Model`] for co-simulation.
//!
//! Every component separates the combinational view of the current cycle (`&self` methods) from
//! the clock edge (`&mut self` methods), so the SM scheduler model can reuse them unchanged.

use crate::harness::layout::Layout;
use crate::harness::sim::{BlockModel, Simulator};
use smrtl_hdl::blocks::history_cache::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::history_cache::{BcawsPolicy, CounterMode, Params};

fn low_bits(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

fn lg(x: u32) -> u32 {
    assert!(x.is_power_of_two(), "{x} is not a power of two");
    x.trailing_zeros()
}

/// One cache line (§5.2): valid bit, tag = PC[PCW−1 : lg sets], data = stored degree (DW bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Line {
    pub valid: bool,
    pub tag: u64,
    pub data: u32,
}

/// The conflict history cache (§5.2, D16): `sets` × `ways` lines, index = PC mod sets, one MRU
/// bit per set (updated on writes only), write-allocate, victim = first invalid way, else the
/// non-MRU way.
#[derive(Clone, Debug)]
pub struct HistoryCache {
    sets: u32,
    ways: u32,
    pc_bits: u32,
    data_bits: u32,
    /// `lines[set * ways + way]`.
    lines: Vec<Line>,
    /// Most recently written way per set.
    mru: Vec<u32>,
}

impl HistoryCache {
    /// An empty cache; `data_bits` is DW (written data is reduced mod 2^DW).
    pub fn new(sets: u32, ways: u32, pc_bits: u32, data_bits: u32) -> HistoryCache {
        assert!(sets.is_power_of_two() && ways >= 1);
        HistoryCache {
            sets,
            ways,
            pc_bits,
            data_bits,
            lines: vec![Line::default(); (sets * ways) as usize],
            mru: vec![0; sets as usize],
        }
    }

    /// The cache of a `history_cache` block with `p`.
    pub fn of_params(p: &Params) -> HistoryCache {
        HistoryCache::new(p.hc_sets, p.hc_ways, p.pc_bits, lg(p.warp_size))
    }

    pub fn sets(&self) -> u32 {
        self.sets
    }

    pub fn ways(&self) -> u32 {
        self.ways
    }

    /// Set index of `pc`: PC mod sets.
    pub fn index(&self, pc: u64) -> usize {
        ((pc & low_bits(self.pc_bits)) % self.sets as u64) as usize
    }

    /// Tag of `pc`: PC[PCW−1 : lg sets].
    pub fn tag(&self, pc: u64) -> u64 {
        (pc & low_bits(self.pc_bits)) >> lg(self.sets)
    }

    /// The line at (`set`, `way`).
    pub fn line(&self, set: usize, way: usize) -> Line {
        self.lines[set * self.ways as usize + way]
    }

    /// The MRU way of `set` (always 0 for a direct-mapped cache).
    pub fn mru(&self, set: usize) -> u32 {
        self.mru[set]
    }

    /// The way of `set` holding `pc`, if any (lowest way first).
    pub fn find(&self, pc: u64) -> Option<usize> {
        let (set, tag) = (self.index(pc), self.tag(pc));
        (0..self.ways as usize).find(|&w| {
            let l = self.line(set, w);
            l.valid && l.tag == tag
        })
    }

    /// Asynchronous lookup: the stored degree of `pc`, `None` on a miss.
    pub fn lookup(&self, pc: u64) -> Option<u32> {
        self.find(pc).map(|w| self.line(self.index(pc), w).data)
    }

    /// `pred = hit ? data : 0` (the Table 3 2:1 MUX).
    pub fn pred(&self, pc: u64) -> u32 {
        self.lookup(pc).unwrap_or(0)
    }

    /// The way a write of `pc` lands in: the hit way, else the first invalid way, else the
    /// non-MRU way (way 0 when direct-mapped).
    pub fn victim(&self, pc: u64) -> usize {
        if let Some(w) = self.find(pc) {
            return w;
        }
        let set = self.index(pc);
        if let Some(w) = (0..self.ways as usize).find(|&w| !self.line(set, w).valid) {
            return w;
        }
        if self.ways == 2 {
            1 - self.mru[set] as usize
        } else {
            0
        }
    }

    /// Write at the clock edge: overwrite on hit, allocate on miss; the set's MRU becomes the
    /// written way. Returns that way.
    pub fn write(&mut self, pc: u64, data: u32) -> usize {
        let way = self.victim(pc);
        let set = self.index(pc);
        let tag = self.tag(pc);
        self.lines[set * self.ways as usize + way] = Line {
            valid: true,
            tag,
            data: (data as u64 & low_bits(self.data_bits)) as u32,
        };
        if self.ways == 2 {
            self.mru[set] = way as u32;
        }
        way
    }

    /// `kernel_start`: all lines invalid, MRU bits 0.
    pub fn clear(&mut self) {
        self.lines.iter_mut().for_each(|l| *l = Line::default());
        self.mru.iter_mut().for_each(|m| *m = 0);
    }

    /// Number of valid lines.
    pub fn valid_lines(&self) -> usize {
        self.lines.iter().filter(|l| l.valid).count()
    }
}

/// What the accumulator shows in a cycle (§5.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccOut {
    /// An entry with sw = S−1 leaves MEM0 this cycle.
    pub valid: bool,
    /// Σ over the warp's subwarps of svc_m1 (mod 2^DW); 0 unless `valid`.
    pub value: u32,
    /// The PC of that warp instruction; 0 unless `valid`.
    pub pc: u64,
}

/// The degree accumulator (§5.3, D17): `acc ← (sw = 0 ? 0 : acc) + svc_m1` at the end of each
/// cycle in which an SMEM entry leaves MEM0.
#[derive(Clone, Debug)]
pub struct Accumulator {
    subwarps: u32,
    dw: u32,
    acc: u32,
}

impl Accumulator {
    /// `subwarps` = S, `dw` = DW.
    pub fn new(subwarps: u32, dw: u32) -> Accumulator {
        Accumulator {
            subwarps,
            dw,
            acc: 0,
        }
    }

    pub fn of_params(p: &Params) -> Accumulator {
        Accumulator::new(p.warp_size / p.lanes, lg(p.warp_size))
    }

    /// The register.
    pub fn acc(&self) -> u32 {
        self.acc
    }

    /// The sum including this entry: `(sw = 0 ? 0 : acc) + svc_m1` mod 2^DW.
    pub fn sum(&self, sw: u32, svc_m1: u32) -> u32 {
        let base = if sw == 0 { 0 } else { self.acc as u64 };
        ((base + svc_m1 as u64) & low_bits(self.dw)) as u32
    }

    /// This cycle's outputs for an entry (`v`, `sw`, `svc_m1`, `pc`) leaving MEM0.
    pub fn eval(&self, v: bool, sw: u32, svc_m1: u32, pc: u64) -> AccOut {
        if v && sw == self.subwarps - 1 {
            AccOut {
                valid: true,
                value: self.sum(sw, svc_m1),
                pc,
            }
        } else {
            AccOut::default()
        }
    }

    /// The clock edge.
    pub fn tick(&mut self, v: bool, sw: u32, svc_m1: u32) {
        if v {
            self.acc = self.sum(sw, svc_m1);
        }
    }

    /// `eval` then `tick`: returns this cycle's outputs.
    pub fn step(&mut self, v: bool, sw: u32, svc_m1: u32, pc: u64) -> AccOut {
        let out = self.eval(v, sw, svc_m1, pc);
        self.tick(v, sw, svc_m1);
        out
    }

    pub fn clear(&mut self) {
        self.acc = 0;
    }
}

/// `ready'` from §5.4/§5.6: memory warps are masked while `mask`; under
/// [`BcawsPolicy::IssueIfNoNonMem`] the mask is ignored when only memory warps are ready.
pub fn masked_ready(mask: bool, ready: u64, is_mem: u64, policy: BcawsPolicy) -> u64 {
    if policy == BcawsPolicy::IssueIfNoNonMem && ready != 0 && ready & !is_mem == 0 {
        return ready;
    }
    if mask {
        ready & !is_mem
    } else {
        ready
    }
}

/// The distance counter and memory-warp ready mask (§5.4, D18; §5.6 policy).
#[derive(Clone, Debug)]
pub struct DistanceCounter {
    subwarps: u32,
    dw: u32,
    mode: CounterMode,
    freeze_on_stall: bool,
    policy: BcawsPolicy,
    counter: u32,
}

impl DistanceCounter {
    pub fn new(
        subwarps: u32,
        dw: u32,
        mode: CounterMode,
        freeze_on_stall: bool,
        policy: BcawsPolicy,
    ) -> DistanceCounter {
        DistanceCounter {
            subwarps,
            dw,
            mode,
            freeze_on_stall,
            policy,
            counter: 0,
        }
    }

    pub fn of_params(p: &Params) -> DistanceCounter {
        DistanceCounter::new(
            p.warp_size / p.lanes,
            lg(p.warp_size),
            p.counter_mode,
            p.bcaws_freeze_on_stall,
            p.bcaws_policy,
        )
    }

    /// The register.
    pub fn counter(&self) -> u32 {
        self.counter
    }

    /// `mask = enable ∧ counter ≠ 0`.
    pub fn mask(&self, enable: bool) -> bool {
        enable && self.counter != 0
    }

    /// The ready vector the RR scheduler sees.
    pub fn ready_m(&self, enable: bool, ready: u64, is_mem: u64) -> u64 {
        masked_ready(self.mask(enable), ready, is_mem, self.policy)
    }

    /// The value a load of `pred` writes.
    pub fn load_value(&self, pred: u32) -> u32 {
        let v = match self.mode {
            CounterMode::LoadPred => pred as u64,
            CounterMode::LoadPredPlusSm1 => pred as u64 + self.subwarps as u64 - 1,
        };
        (v & low_bits(self.dw)) as u32
    }

    /// Whether the counter counts down at this edge (absent a load).
    pub fn decrements(&self, smem_sw_pending: bool, fe_hold: bool) -> bool {
        self.counter != 0
            && (self.mode == CounterMode::LoadPredPlusSm1 || !smem_sw_pending)
            && !(self.freeze_on_stall && fe_hold)
    }

    /// The clock edge: load wins over decrement.
    pub fn tick(&mut self, load: bool, pred: u32, smem_sw_pending: bool, fe_hold: bool) {
        if load {
            self.counter = self.load_value(pred);
        } else if self.decrements(smem_sw_pending, fe_hold) {
            self.counter -= 1;
        }
    }

    pub fn clear(&mut self) {
        self.counter = 0;
    }
}

/// A per-warp bus as a bit vector, warp 0 lowest (W ≤ 64).
fn bits(v: &[bool]) -> u64 {
    v.iter().rev().fold(0, |m, &b| m << 1 | b as u64)
}

/// The three components wired as the `history_cache` block, on its typed cycle values
/// (`port::Inputs` / `port::Outputs` of the block's declaration).
#[derive(Clone, Debug)]
pub struct Bcaws {
    pub acc: Accumulator,
    pub cache: HistoryCache,
    pub counter: DistanceCounter,
}

impl Bcaws {
    pub fn new(p: &Params) -> Bcaws {
        Bcaws {
            acc: Accumulator::of_params(p),
            cache: HistoryCache::of_params(p),
            counter: DistanceCounter::of_params(p),
        }
    }

    /// This cycle's outputs (from the state at the start of the cycle), written into `o`.
    pub fn eval(&self, i: &Inputs, o: &mut Outputs) {
        let a = self
            .acc
            .eval(i.acc_v, i.acc_sw as u32, i.acc_svc_m1 as u32, i.acc_pc_in);
        let hit = self.cache.lookup(i.lk_pc);
        let pred = u64::from(hit.unwrap_or(0));
        let ready_m = self
            .counter
            .ready_m(i.enable, bits(&i.ready), bits(&i.is_mem));
        o.acc_valid = a.valid;
        o.acc_value = u64::from(a.value);
        o.acc_pc = a.pc;
        o.lk_hit = hit.is_some();
        o.lk_data = pred;
        o.pred = pred;
        for (w, r) in o.ready_m.iter_mut().enumerate() {
            *r = ready_m >> w & 1 == 1;
        }
        o.mask = self.counter.mask(i.enable);
        o.counter = u64::from(self.counter.counter());
    }

    /// One cycle: the outputs into `o`, then the edge (`clear`/`reset` win over everything).
    pub fn step(&mut self, i: &Inputs, o: &mut Outputs) {
        self.eval(i, o);
        if i.clear || i.reset {
            self.clear();
        } else {
            if o.acc_valid {
                self.cache.write(o.acc_pc, o.acc_value as u32);
            }
            let (sw, svc) = (i.acc_sw as u32, i.acc_svc_m1 as u32);
            self.acc.tick(i.acc_v, sw, svc);
            let pred = o.pred as u32;
            self.counter
                .tick(i.load, pred, i.smem_sw_pending, i.fe_hold);
        }
    }

    pub fn clear(&mut self) {
        self.acc.clear();
        self.cache.clear();
        self.counter.clear();
    }
}

/// The block's behavioral model on its ports: the same buffers as the RTL backends.
pub struct Model {
    dw: usize,
    io: Io,
    inputs: Inputs,
    outputs: Outputs,
    pub state: Bcaws,
}

impl BlockModel for Model {
    type Params = Params;
    fn new(p: &Params, layout: &Layout) -> Model {
        Model {
            dw: p.dw(),
            io: Io::new(p, layout),
            inputs: Inputs::new(p),
            outputs: Outputs::new(p),
            state: Bcaws::new(p),
        }
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        self.io.read_inputs(inputs, &mut self.inputs);
        self.state.step(&self.inputs, &mut self.outputs);
        self.io.write_outputs(&self.outputs, outputs);
    }

    fn internal_nets(&self) -> Vec<(String, usize)> {
        vec![
            ("acc".into(), self.dw),
            ("counter_q".into(), self.dw),
            ("valid_lines".into(), 32),
        ]
    }

    fn internal_values(&self, words: &mut Vec<u64>) {
        words.extend([
            self.state.acc.acc() as u64,
            self.state.counter.counter() as u64,
            self.state.cache.valid_lines() as u64,
        ]);
    }
}
