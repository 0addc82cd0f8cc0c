//! The memory pipeline's construction with its TBs resident (docs/memory-issue-control.md §1.1,
//! §8.1), TB launches, read-only views, and each warp's next instruction.

use super::l1d::{L1d, Outcome};
use super::params::{PipeParams, Sched, MAX_KERNELS, SCHEDULERS};
use super::stats::{Counters, DispatchView, SchedView};
use super::workload::{Body, Op, Workload};
use super::{mix, name_hash, MemPipeline, Tb, Warp};
use crate::blocks::mem_issue_ctl::{CtlIn, CtlOut, MemIssueCtl};
use smrtl_hdl::params::BlockParams as _;
use std::collections::VecDeque;

impl MemPipeline {
    /// The pipeline of workload `w` at cycle 0, its TBs resident (§1.1), in reset state.
    pub fn new(w: &Workload) -> Result<MemPipeline, String> {
        let p = w.params.clone();
        let n = w.kernels.len();
        let cp = p.ctl(n);
        cp.validate().map_err(|e| e.to_string())?;
        let ctl = MemIssueCtl::new(&cp);
        if !p.smkw_quota.is_empty() && p.smkw_quota.len() != n {
            return Err(format!(
                "params.smkw_quota = {:?} has {} entries for {n} kernels; allowed: one quota per kernel, or none",
                p.smkw_quota,
                p.smkw_quota.len()
            ));
        }
        let total_warps: u32 = w
            .kernels
            .iter()
            .zip(&w.tbs)
            .map(|(k, &t)| k.warps() * t)
            .sum();
        let mut m = MemPipeline {
            l1d: L1d::new(&p),
            p,
            kernels: w.kernels.clone(),
            tbs_of: w.tbs.clone(),
            seed: w.seed,
            n,
            t: 0,
            warps: vec![Warp::default(); total_warps as usize],
            tbs: vec![],
            order: Default::default(),
            last: [None; SCHEDULERS],
            next_gid: vec![0; n],
            stream_line: vec![0; n],
            mem_reg: None,
            disp: None,
            disp_next: 0,
            disp_load: 0,
            loads: Vec::with_capacity(1024),
            load_free: Vec::with_capacity(1024),
            rq: VecDeque::with_capacity(4096),
            lm_queue: VecDeque::with_capacity(1024),
            lm_next: 0,
            fills: VecDeque::with_capacity(1024),
            ctl,
            ev: CtlIn::new(&cp),
            out: CtlOut::new(&cp),
            outcome: Outcome::Idle,
            issued: [0; MAX_KERNELS],
            wq: [0; MAX_KERNELS],
            sched_view: [SchedView::default(); SCHEDULERS],
            counters: Default::default(),
            lsu_stall_cycles: 0,
            mem_issue_cycles: 0,
            pending_relaunch: 0,
            stalls: None,
        };
        for o in &mut m.order {
            o.reserve(total_warps as usize);
        }
        // The SMIL configuration, the same every cycle (a limit of 0 or none: unlimited).
        for k in 0..n {
            let limit = m.p.smil_limit.get(k).copied().unwrap_or(0);
            m.ev.smil_limit[k] = u64::from(limit);
            m.ev.smil_unl[k] = limit == 0;
        }
        // Initial launch: one TB per kernel in turn (kernel 0 first), until each has its count.
        let mut next_warp = 0u16;
        let most = w.tbs.iter().copied().max().unwrap_or(0);
        for round in 0..most {
            for k in 0..n {
                if round < w.tbs[k] {
                    let warps = m.kernels[k].warps() as u16;
                    m.tbs.push(Tb {
                        kernel: k as u8,
                        first_warp: next_warp,
                        warps,
                        running: 0,
                        relaunch_at: None,
                    });
                    next_warp += warps;
                    let tb = m.tbs.len() - 1;
                    m.launch(tb);
                }
            }
        }
        Ok(m)
    }

    /// Starts a new TB in slot `tb`: fresh warps, youngest in GTO order.
    pub(super) fn launch(&mut self, tb: usize) {
        let Tb {
            kernel,
            first_warp,
            warps,
            ..
        } = self.tbs[tb];
        let k = kernel as usize;
        for i in 0..warps {
            let slot = first_warp + i;
            let gid = self.next_gid[k];
            self.next_gid[k] += 1;
            let len = match &self.kernels[k].body {
                Body::Synth(s) => s.iters * (s.cinst + 1),
                Body::Streams(st) => st[i as usize].len() as u32,
            };
            let seed = mix(name_hash(&self.kernels[k].name) ^ mix(gid ^ mix(self.seed)));
            self.warps[slot as usize] = Warp {
                live: true,
                kernel,
                tb: tb as u16,
                gid,
                pc: 0,
                len,
                ready_at: 0,
                last_seq: u32::MAX,
                outstanding: 0,
                mem_next: false,
                rng: seed | 1,
            };
            self.warps[slot as usize].mem_next = self.is_mem(slot as usize, 0);
            self.stall_touch(slot as usize);
            let s = slot as usize % SCHEDULERS;
            let order = &mut self.order[s];
            match self.p.sched {
                Sched::Gto => {
                    order.retain(|&w| w != slot);
                    order.push(slot);
                }
                Sched::Lrr => {
                    if let Err(at) = order.binary_search(&slot) {
                        order.insert(at, slot);
                    }
                }
            }
        }
        self.tbs[tb].running = warps;
        self.tbs[tb].relaunch_at = None;
        // Every program has an instruction (workload.rs refuses empty streams), so a TB
        // finishes only through its warps (`maybe_finish`).
    }

    /// The current cycle (the next one [`MemPipeline::step`] runs).
    pub fn cycle(&self) -> u64 {
        self.t
    }

    pub fn params(&self) -> &PipeParams {
        &self.p
    }

    /// The control (read-only: its registers for reports and checks).
    pub fn ctl(&self) -> &MemIssueCtl {
        &self.ctl
    }

    /// This cycle's control inputs (after [`MemPipeline::step`]: the cycle just run).
    pub fn events(&self) -> &CtlIn {
        &self.ev
    }

    /// The control's `grant` and `mem_ok` of the cycle just run (its other outputs unset).
    pub fn ctl_out(&self) -> &CtlOut {
        &self.out
    }

    /// The L1D outcome of the cycle just run.
    pub fn outcome(&self) -> Outcome {
        self.outcome
    }

    /// The L1D (read-only).
    pub fn l1d(&self) -> &L1d {
        &self.l1d
    }

    /// Whether the MEM register holds an instruction.
    pub fn mem_reg_busy(&self) -> bool {
        self.mem_reg.is_some()
    }

    /// Whether the dispatch register holds an instruction.
    pub fn lsu_busy(&self) -> bool {
        self.disp.is_some()
    }

    /// Raw counters of kernel `k`.
    pub fn counters(&self, k: usize) -> &Counters {
        &self.counters[k]
    }

    /// Warp instructions issued in the cycle just run, per kernel.
    pub fn issued(&self) -> [u8; MAX_KERNELS] {
        self.issued
    }

    /// Each scheduler's view of the cycle just run.
    pub fn sched_view(&self) -> &[SchedView; SCHEDULERS] {
        &self.sched_view
    }

    /// The dispatch register now.
    pub fn dispatch_view(&self) -> Option<DispatchView> {
        self.disp.map(|d| DispatchView {
            kernel: d.kernel,
            warp: d.warp,
            seq: d.seq,
            next: self.disp_next,
            n: d.n,
        })
    }

    /// Response-queue occupancy.
    pub fn rq_len(&self) -> usize {
        self.rq.len()
    }

    /// Whether warp `w`'s next instruction is ready and a memory instruction (`Some(true)`),
    /// ready and compute (`Some(false)`), or not ready (`None`).
    pub(super) fn next_kind(&self, w: usize) -> Option<bool> {
        let warp = &self.warps[w];
        if !warp.live || warp.pc >= warp.len || warp.ready_at > self.t {
            return None;
        }
        Some(warp.mem_next)
    }

    /// Whether instruction `pc` of warp `w` is a memory instruction.
    pub(super) fn is_mem(&self, w: usize, pc: u32) -> bool {
        let warp = &self.warps[w];
        match &self.kernels[warp.kernel as usize].body {
            Body::Synth(s) => pc % (s.cinst + 1) == s.cinst,
            Body::Streams(st) => {
                let tbw = w - self.tbs[warp.tb as usize].first_warp as usize;
                st[tbw]
                    .get(pc as usize)
                    .is_some_and(|i| i.op != Op::Compute)
            }
        }
    }

    /// Whether instruction `pc` of warp `w` depends on its predecessor.
    pub(super) fn depends(&self, w: usize, pc: u32) -> bool {
        let warp = &self.warps[w];
        match &self.kernels[warp.kernel as usize].body {
            Body::Synth(s) => {
                let pos = pc % (s.cinst + 1);
                // The first compute after a load, and the memory instruction after the last
                // compute (or after the previous memory instruction when cinst = 0).
                (pos == 0 && pc > 0) || pos == s.cinst
            }
            Body::Streams(st) => {
                let tbw = w - self.tbs[warp.tb as usize].first_warp as usize;
                st[tbw].get(pc as usize).is_some_and(|i| i.dep)
            }
        }
    }
}
