//! One cycle of the SM: the launch writes or the warps' state as the core's inputs, the
//! descriptors of the picks, and the run loop (docs/scratchpad-sharing.md §1.3–1.4, §2.1, §5).

use super::params::SmParams;
use super::record::{Check, CycleRecord, LoopError, Releases, SmError, SmStats, TbLife};
use super::{Phase, SharingSm, Warp};
use crate::blocks::share_cfg::Table;
use crate::blocks::sharing_core::{Core, Inputs, Outputs};
use crate::kernel::program::{Kernel, Op, REGS};

impl<'k> SharingSm<'k> {
    /// Launches `k` on an SM with params `p` (validated): the launch cycles reset the core and
    /// write its configuration; kernel cycle 0 launches the first TBs.
    pub fn new(p: &SmParams, k: &'k Kernel) -> Result<SharingSm<'k>, SmError> {
        let core_params = p.core();
        let s = &p.shape;
        k.check(s.lanes).map_err(|e| SmError::Kernel(e.0))?;
        let wpt = k.warps_per_tb(s.lanes);
        if wpt > s.warps {
            return Err(SmError::Kernel(format!(
                "a TB of {} threads needs {wpt} warps; the SM has W = {}",
                k.threads, s.warps
            )));
        }
        if k.smem > s.smem {
            return Err(SmError::Kernel(format!(
                "a TB needs {} scratchpad bytes; the SM has R = {}",
                k.smem, s.smem
            )));
        }
        let launch = p.launch(k.smem, k.threads);
        if launch.n == 0 {
            return Err(SmError::Kernel("no TB fits on the SM".into()));
        }
        let kp = s.kp();
        for l in &k.locks {
            if l.pair as usize >= kp || l.owner >= s.slots {
                return Err(SmError::Kernel(format!(
                    "lock preset pair {} owner {}; allowed: pair 0..{kp}, owner 0..{}",
                    l.pair, l.owner, s.slots
                )));
            }
        }
        let launch_table = Table::launched(s, &launch, k.smem as u64);
        let branch_ids: Vec<Vec<u32>> = k
            .warps
            .iter()
            .map(|stream| {
                let mut n = 0;
                stream
                    .iter()
                    .map(|i| {
                        n += u32::from(i.op == Op::Cbra);
                        n.wrapping_sub(1)
                    })
                    .collect()
            })
            .collect();
        let branches = k
            .warps
            .iter()
            .map(|st| st.iter().filter(|i| i.op == Op::Cbra).count())
            .max()
            .unwrap_or(0);
        let launch_cycles = 1 + s.slots;
        let core = Core::new(&core_params);
        let nsched = s.nsched as usize;
        Ok(SharingSm {
            p: p.clone(),
            k,
            wpt,
            inp: Inputs::new(&core_params),
            out: Outputs::new(&core_params),
            core,
            launch_table,
            branch_ids,
            branches,
            visits: vec![0; branches * s.warps as usize],
            launch_cycles,
            phase: Phase::Launch(0),
            slot_tb: vec![None; s.slots as usize],
            next_tb: 0,
            age_next: 0,
            warps: vec![Warp::EMPTY; s.warps as usize],
            cpl: vec![None; nsched * p.lat_shared as usize],
            stats: SmStats {
                cycles: 0,
                thread_instructions: 0,
                warp_instructions: 0,
                ipc: 0.0,
                resident_tbs_max: 0,
                tbs_completed: 0,
                nacks: 0,
                lock_acquires: 0,
                lock_releases: Releases::default(),
                launch,
                tbs: Vec::with_capacity(k.grid as usize),
            },
            idle_cycles: 0,
            busy_until: 0,
            quiet: false,
            skip: true,
            stalls: Default::default(),
            preds: Default::default(),
        })
    }

    /// The cycle about to run.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Cycles of the launch sequence before kernel cycle 0: a reset, then one configuration
    /// write per slot.
    pub fn launch_cycles(&self) -> u32 {
        self.launch_cycles
    }

    /// Whether every TB has run and retired.
    pub fn finished(&self) -> bool {
        matches!(self.phase, Phase::Run(_))
            && self.next_tb == self.k.grid
            && self.slot_tb.iter().all(Option::is_none)
    }

    /// Puts the next TB into `slot`; its warps are valid from `cycle` and issue after it.
    pub(super) fn start_tb(&mut self, slot: u32, cycle: u64) -> u32 {
        let tb = self.next_tb;
        self.next_tb += 1;
        self.slot_tb[slot as usize] = Some(tb);
        let lanes = self.p.shape.lanes;
        for i in 0..self.wpt {
            let w = (slot * self.wpt + i) as usize;
            self.warps[w] = Warp {
                valid: true,
                slot,
                index: i,
                pc: 0,
                live: self.k.live_mask(i, lanes),
                age: self.age_next & mask(self.p.age_w),
                start: cycle + 1,
                at_bar: false,
                ready_at: [0; REGS],
                shared_dst: 0,
                global_dst: 0,
            };
            self.visits[w * self.branches..(w + 1) * self.branches].fill(0);
            self.preds.touch(w);
            self.age_next += 1;
        }
        self.stats.tbs.push(TbLife {
            tb,
            slot,
            launch: cycle,
            finish: 0,
        });
        let n = self.slot_tb.iter().filter(|t| t.is_some()).count() as u32;
        self.stats.resident_tbs_max = self.stats.resident_tbs_max.max(n);
        tb
    }

    /// The warp's next instruction, if it may issue in kernel cycle `c` (§5 `ready`).
    pub(super) fn ready(&self, w: usize, c: u64) -> bool {
        let wp = &self.warps[w];
        if !wp.valid || wp.live == 0 || wp.at_bar || c < wp.start {
            return false;
        }
        let Some(ins) = self.k.stream(wp.index as usize).get(wp.pc as usize) else {
            return false;
        };
        let srcs = ins.src_mask();
        (0..REGS)
            .filter(|r| srcs >> r & 1 == 1)
            .all(|r| wp.ready_at[r] <= c)
    }

    /// The warp waits in GPGPU-Sim's sense (TWO_LEVEL_ACTIVE's demotion, docs §4.1): no live
    /// threads, at a barrier, or its next instruction reads a register whose pending producer
    /// is a global load (`shd_warp_t::waiting`, `scoreboard::islongop`).
    fn waits(&self, w: usize, c: u64) -> bool {
        let wp = &self.warps[w];
        if !wp.valid || wp.live == 0 || wp.at_bar {
            return true;
        }
        let Some(ins) = self.k.stream(wp.index as usize).get(wp.pc as usize) else {
            return true;
        };
        let long = ins.src_mask() & wp.global_dst;
        (0..REGS).any(|r| long >> r & 1 == 1 && wp.ready_at[r] > c)
    }

    /// This cycle's inputs before the picks: the launch writes, or the warps' state.
    fn drive(&mut self) {
        let i = &mut self.inp;
        quiet(i);
        match self.phase {
            Phase::Launch(0) => i.reset = true,
            Phase::Launch(j) => {
                let j = j as usize - 1;
                let t = &self.launch_table;
                if j == 0 {
                    (i.cfg_shsm_we, i.cfg_shsm) = (true, t.shsm);
                    (i.cfg_u_we, i.cfg_u) = (true, t.u);
                }
                if j < t.shtb.len() {
                    i.cfg_slot_we = true;
                    (i.cfg_slot, i.cfg_partner, i.cfg_base) = (j as u64, t.shtb[j], t.base[j]);
                }
            }
            Phase::Run(c) => {
                let lat = self.p.lat_shared as usize;
                for q in 0..i.cpl_valid.len() {
                    if let Some(s) = self.cpl[q * lat + c as usize % lat] {
                        (i.cpl_valid[q], i.cpl_slot[q]) = (true, s as u64);
                    }
                }
                self.drive_warps(c);
            }
        }
    }

    /// Kernel cycle `c`'s preset lock and warps (§5 `ready`, `age`; a warp launched at the end
    /// of `c - 1` clears its release bits in `c`).
    fn drive_warps(&mut self, c: u64) {
        // Preset lock j is written in kernel cycle j, when its TBs are live (a lock of a
        // slot without threads would be released at once).
        if let Some(l) = self.k.locks.get(c as usize) {
            let i = &mut self.inp;
            i.cfg_lock_we = true;
            (i.cfg_lock_k, i.cfg_lock_valid, i.cfg_lock_owner) =
                (l.pair as u64, true, l.owner as u64);
        }
        for w in 0..self.warps.len() {
            let wp = self.warps[w];
            let (ready, wait) = (self.ready(w, c), self.waits(w, c));
            let i = &mut self.inp;
            i.waiting[w] = wait;
            i.warp_valid[w] = wp.valid;
            i.warp_slot[w] = wp.slot as u64;
            i.live[w] = wp.live;
            i.warp_launch[w] = wp.valid && wp.start == c + 1;
            i.ready[w] = ready;
            i.age[w] = wp.age;
        }
    }

    /// Answers each scheduler's pick with its instruction's descriptor (same cycle, §5).
    fn describe(&mut self, picks: &Outputs) {
        let ns = self.p.shape.nsched as usize;
        let lanes = self.p.shape.lanes as usize;
        for q in 0..ns {
            if !picks.iss_valid[q] || !matches!(self.phase, Phase::Run(_)) {
                continue;
            }
            let wp = &self.warps[picks.iss_idx[q] as usize * ns + q];
            let stream = self.k.stream(wp.index as usize);
            let ins = &stream[wp.pc as usize];
            let i = &mut self.inp;
            i.dsc_shared[q] = ins.op.is_shared();
            i.dsc_rel[q] = ins.op == Op::Relssp;
            i.dsc_exit[q] = ins.exits(wp.pc as usize + 1 == stream.len());
            i.dsc_mask[q] = wp.live;
            if let Some(off) = &ins.off {
                for l in 0..lanes {
                    i.dsc_off[q * lanes + l] = off.lane(l, lanes) as u64;
                }
            }
        }
    }

    /// Runs one cycle on the model, showing what happened to `rec` if given.
    pub fn cycle(&mut self, rec: Option<&mut CycleRecord>) -> Result<(), SmError> {
        self.cycle_checked(rec, &mut |_, _, _| Ok(()))
            .map_err(|e| match e {
                LoopError::Model(e) => e,
                LoopError::Diverged(..) => unreachable!("nothing to diverge from"),
            })
    }

    /// Runs one cycle and shows its inputs and the model's outputs to `check` before the SM
    /// reacts: an RTL beside the model evaluates the same inputs there and compares (§2.1).
    pub fn cycle_checked(
        &mut self,
        rec: Option<&mut CycleRecord>,
        check: &mut Check,
    ) -> Result<(), LoopError> {
        let phase = self.phase;
        self.drive();
        let mut out = std::mem::take(&mut self.out);
        self.core.pick(&self.inp, &mut out);
        self.describe(&out);
        self.core.finish(&self.inp, &mut out);
        if let (Phase::Run(c), true) = (phase, self.stalls.0.is_some()) {
            self.stall_cycle(c, &out);
        }
        let checked = check(phase, &self.inp, &out);
        let r = checked
            .map_err(|m| LoopError::Diverged(phase, m))
            .and_then(|()| self.after(&out, rec).map_err(LoopError::Model));
        self.out = out;
        r
    }

    /// Kernel cycle 0: the first TBs take slots `0..n`.
    pub(super) fn start_kernel(&mut self) -> Phase {
        for slot in 0..self.stats.launch.n as u32 {
            if self.next_tb < self.k.grid {
                self.start_tb(slot, 0);
            }
        }
        Phase::Run(0)
    }

    /// Whether [`SharingSm::run`] may skip idle stretches (default on; tests compare both).
    pub fn set_skip(&mut self, on: bool) {
        self.skip = on;
    }

    /// Skips kernel cycles in which nothing but time can change: the last cycle was quiet
    /// (no pick, lock event, pending request or retirement), no `cpl` or preset lock write is
    /// due, no warp was launched in the last two cycles and none is ready now. The core then
    /// sees the same inputs until the first cycle a warp's operands are ready, so it jumps
    /// there; the statistics count cycles by TB lifetimes, which the skip does not change.
    /// Never with a record, the stall probe or an RTL beside the core (every cycle shown), nor
    /// under `TWO_LEVEL_ACTIVE`, whose active and pending lists turn over every idle cycle.
    fn skip_idle(&mut self) {
        let Phase::Run(c) = self.phase else { return };
        if !self.quiet
            || self.p.sched == smrtl_hdl::blocks::sharing::Sched::TwoLevelActive
            || (c as usize) < self.k.locks.len()
            || self.cpl.iter().any(Option::is_some)
            || self.stalls.0.is_some()
        {
            return;
        }
        let mut next = u64::MAX;
        for w in 0..self.warps.len() {
            let wp = &self.warps[w];
            // A warp at a barrier waits for its TB's other warps: no event of its own.
            if !wp.valid || wp.live == 0 || wp.at_bar {
                continue;
            }
            if wp.start >= c {
                return;
            }
            let Some(ins) = self.k.stream(wp.index as usize).get(wp.pc as usize) else {
                return;
            };
            let srcs = ins.src_mask();
            let at = (0..REGS)
                .filter(|r| srcs >> r & 1 == 1)
                .map(|r| wp.ready_at[r])
                .max()
                .unwrap_or(0);
            if at <= c {
                return;
            }
            next = next.min(at);
        }
        if next != u64::MAX && next > c {
            self.phase = Phase::Run(next.min(super::MAX_CYCLES - 1));
        }
    }

    /// Runs the kernel to the end, showing each kernel cycle to `each` if given.
    pub fn run(
        mut self,
        mut each: Option<&mut dyn FnMut(&CycleRecord)>,
    ) -> Result<SmStats, SmError> {
        let mut rec = CycleRecord::default();
        while !self.finished() {
            if self.skip && each.is_none() {
                self.skip_idle();
            }
            let kernel_cycle = matches!(self.phase, Phase::Run(_));
            match each.as_deref_mut() {
                Some(f) => {
                    self.cycle(Some(&mut rec))?;
                    if kernel_cycle {
                        f(&rec);
                    }
                }
                None => self.cycle(None)?,
            }
        }
        Ok(self.finish_stats())
    }

    /// The statistics, with IPC.
    pub fn finish_stats(mut self) -> SmStats {
        let s = &mut self.stats;
        s.ipc = if s.cycles == 0 {
            0.0
        } else {
            s.thread_instructions as f64 / s.cycles as f64
        };
        self.stats
    }
}

/// The core's inputs with no reset, no configuration or lock write, no descriptor and no
/// completion (the warps keep theirs).
fn quiet(i: &mut Inputs) {
    i.reset = false;
    (i.cfg_shsm_we, i.cfg_shsm, i.cfg_u_we, i.cfg_u) = (false, false, false, 0);
    (i.cfg_slot_we, i.cfg_slot, i.cfg_partner, i.cfg_base) = (false, 0, 0, 0);
    (
        i.cfg_lock_we,
        i.cfg_lock_k,
        i.cfg_lock_valid,
        i.cfg_lock_owner,
    ) = (false, 0, false, 0);
    i.dsc_shared.fill(false);
    i.dsc_rel.fill(false);
    i.dsc_exit.fill(false);
    i.dsc_mask.fill(0);
    i.dsc_off.fill(0);
    i.cpl_valid.fill(false);
    i.cpl_slot.fill(0);
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}
