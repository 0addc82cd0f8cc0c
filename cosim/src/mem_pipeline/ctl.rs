//! A private stand-in for `crate::mem_issue_ctl::MemIssueCtl` (docs/memory-issue-control.md §5)
//! with exactly its typed interface, implementing scheme Baseline only: `grant = 0` (the issue
//! stage's rotation picks the winner, §2) and `mem_ok` = all ones. The MILG counters that run
//! in every mode (`inflight`, `peak`, `rsfail`, `reqcnt`, §4.4 with mode `Off`) are kept so the
//! reports and waveforms show them; `mil` / `unl` stay at their reset values (127 / 1).
//! Delete this file and point `super::ctl` at `crate::mem_issue_ctl` once that lands.

use super::params::{PipeParams, Scheme};

/// Most kernel slots (§0).
pub const MAX_KERNELS: usize = 3;

/// One cycle's inputs, bit k = kernel k.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct CtlIn {
    pub mem_req: u8,
    pub slot_free: bool,
    pub issue: u8,
    pub done: [u8; MAX_KERNELS],
    pub acc: u8,
    pub first: u8,
    pub fail: u8,
    pub smil_limit: [u8; MAX_KERNELS],
    pub smil_unl: u8,
}

/// What the issue stage reads before it issues (phase 6).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct CtlOut {
    /// One-hot or 0; 0 under Baseline, where the issue stage picks.
    pub grant: u8,
    pub mem_ok: u8,
}

/// The Baseline control: MILG counters in mode `Off` per kernel.
#[derive(Clone, Debug)]
pub struct MemIssueCtl {
    n: usize,
    inflight: [u32; MAX_KERNELS],
    peak: [u32; MAX_KERNELS],
    rsfail: [u32; MAX_KERNELS],
    reqcnt: [u32; MAX_KERNELS],
    inflight_max: u32,
    rsfail_max: u32,
    reqcnt_max: u32,
}

impl MemIssueCtl {
    /// Reset state for `n` kernels; `None` for a scheme this stand-in does not implement.
    pub fn new(n: usize, p: &PipeParams) -> Result<MemIssueCtl, String> {
        if p.scheme != Scheme::Baseline {
            return Err(format!(
                "scheme {:?} needs the mem_issue_ctl models, which this build does not have yet; allowed: baseline",
                p.scheme
            )
            .to_lowercase());
        }
        let ones = |bits: u32| ((1u64 << bits) - 1) as u32;
        Ok(MemIssueCtl {
            n,
            inflight: [0; MAX_KERNELS],
            peak: [0; MAX_KERNELS],
            rsfail: [0; MAX_KERNELS],
            reqcnt: [0; MAX_KERNELS],
            inflight_max: ones(p.inflight_bits),
            rsfail_max: ones(p.rsfail_bits),
            reqcnt_max: ones(p.reqcnt_bits),
        })
    }

    /// Phase 6: the grant and the MIL gate from start-of-cycle registers.
    pub fn comb(&self, _mem_req: u8, _slot_free: bool) -> CtlOut {
        CtlOut {
            grant: 0,
            mem_ok: ((1u32 << self.n) - 1) as u8,
        }
    }

    /// Phase 7: the edge (§4.4, mode `Off`: counters run, the limit never changes).
    pub fn tick(&mut self, ev: &CtlIn) {
        for k in 0..self.n {
            let bit = |v: u8| u32::from(v >> k & 1);
            let inflight = (self.inflight[k] + bit(ev.issue))
                .saturating_sub(u32::from(ev.done[k]))
                .min(self.inflight_max);
            let rs = (self.rsfail[k] + bit(ev.fail)).min(self.rsfail_max);
            if bit(ev.acc) == 1 && self.reqcnt[k] == self.reqcnt_max {
                self.reqcnt[k] = 0;
                self.rsfail[k] = 0;
                self.peak[k] = inflight;
            } else {
                self.reqcnt[k] += bit(ev.acc);
                self.rsfail[k] = rs;
                self.peak[k] = self.peak[k].max(inflight);
            }
            self.inflight[k] = inflight;
        }
    }

    pub fn inflight(&self, k: usize) -> u32 {
        self.inflight[k]
    }
    pub fn peak(&self, k: usize) -> u32 {
        self.peak[k]
    }
    pub fn rsfail(&self, k: usize) -> u32 {
        self.rsfail[k]
    }
    pub fn reqcnt(&self, k: usize) -> u32 {
        self.reqcnt[k]
    }
    /// The limit register (reset 127; never changes under Baseline).
    pub fn mil(&self, _k: usize) -> u32 {
        127
    }
    /// The unlimited flag (reset 1; never changes under Baseline).
    pub fn unl(&self, _k: usize) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_stand_in_grants_nothing_and_counts_as_mode_off() {
        let p = PipeParams::default();
        let mut c = MemIssueCtl::new(2, &p).unwrap();
        assert_eq!(
            c.comb(0b11, true),
            CtlOut {
                grant: 0,
                mem_ok: 0b11
            }
        );
        let ev = CtlIn {
            issue: 0b01,
            acc: 0b10,
            fail: 0b01,
            ..CtlIn::default()
        };
        c.tick(&ev);
        assert_eq!(
            (c.inflight(0), c.peak(0), c.rsfail(0), c.reqcnt(1)),
            (1, 1, 1, 1)
        );
        c.tick(&CtlIn {
            done: [1, 0, 0],
            ..CtlIn::default()
        });
        assert_eq!((c.inflight(0), c.peak(0)), (0, 1));
        // The 1024th request closes the interval: counters restart, peak = inflight'.
        for _ in 0..1022 {
            c.tick(&CtlIn {
                acc: 0b10,
                ..CtlIn::default()
            });
        }
        assert_eq!(c.reqcnt(1), 1023);
        c.tick(&CtlIn {
            acc: 0b10,
            ..CtlIn::default()
        });
        assert_eq!(c.reqcnt(1), 0);
        assert_eq!((c.mil(0), c.unl(0)), (127, true));
        let dmil = PipeParams {
            scheme: crate::mem_pipeline::params::Scheme::Dmil,
            ..PipeParams::default()
        };
        assert!(MemIssueCtl::new(2, &dmil)
            .unwrap_err()
            .contains("allowed: baseline"));
    }
}
