//! `MemIssueCtl`, the SM's memory-issue control (docs/memory-issue-control.md §2, §5; Dai et
//! al., seed 004, §3): per kernel slot one `Milg` (instantiated, so the Verilog is
//! hierarchical) in the scheme's mode, the eligibility `elig[k] = mem_req[k] ∧ mem_ok[k] ∧
//! slot_free` (§2), and the scheme's arbiter when it has one.
//!
//! `grant` (§5): under Baseline, Smil and Dmil there is no kernel-level arbiter, so `grant` is
//! `elig` itself (a mask, possibly several bits): the issue stage picks the winning warp among
//! the granted kernels by its baseline rule (§2, rotating scheduler scan), which the control
//! cannot see. Under RBMI / QBMI `grant` is the arbiter's one-hot pick (or 0).

use crate::blocks::milg::{self, Mode};
use crate::blocks::qbmi_arb;
use crate::blocks::sharing::bus;
use crate::netlist::{replicate, Expr, Module};
use crate::params::{declared_by, module_name, Allowed, BlockParams, Gpgpusim, ParamError};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The memory-issue scheme (spec §5, §8.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Scheme {
    /// No BMI, no MIL: MILGs in Off mode (counters only), `grant = elig`.
    #[serde(alias = "baseline", alias = "BASELINE")]
    Baseline,
    /// Round-robin BMI (§3.1), MILGs Off.
    #[serde(alias = "rbmi", alias = "RBMI")]
    Rbmi,
    /// Quota BMI (§3.2–3.4), MILGs Off (their request counters delimit the sampling interval).
    #[serde(alias = "qbmi", alias = "QBMI")]
    Qbmi,
    /// Static MIL (§4.1), `grant = elig`.
    #[serde(alias = "smil", alias = "SMIL")]
    Smil,
    /// Dynamic MIL (§4.2), `grant = elig`; the default.
    #[serde(alias = "dmil", alias = "DMIL")]
    Dmil,
    /// QBMI with DMIL's gate filtering eligibility (§3.4).
    #[serde(
        alias = "qbmidmil",
        alias = "QBMIDMIL",
        alias = "qbmi_dmil",
        alias = "QBMI+DMIL"
    )]
    QbmiDmil,
}

impl Scheme {
    /// Every scheme, in the order of the `scheme` parameter's allowed names.
    pub const ALL: [Scheme; 6] = [
        Scheme::Baseline,
        Scheme::Rbmi,
        Scheme::Qbmi,
        Scheme::Smil,
        Scheme::Dmil,
        Scheme::QbmiDmil,
    ];

    /// The MILGs' mode under this scheme.
    pub fn milg_mode(self) -> Mode {
        match self {
            Scheme::Baseline | Scheme::Rbmi | Scheme::Qbmi => Mode::Off,
            Scheme::Smil => Mode::Smil,
            Scheme::Dmil | Scheme::QbmiDmil => Mode::Dmil,
        }
    }

    /// Whether a kernel-level arbiter picks the grant (RBMI or QBMI).
    pub fn has_arbiter(self) -> bool {
        matches!(self, Scheme::Rbmi | Scheme::Qbmi | Scheme::QbmiDmil)
    }
}

crate::block_params! {
    /// MemIssueCtl parameters (spec §5): kernels, scheme, and the MILGs' parameters.
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct Params {
        /// Kernel slots per SM.
        n: u32 = 2, "N", Allowed::Range(1, 3) => Gpgpusim::KernelSlots;
        /// Memory-issue scheme: Baseline, Rbmi, Qbmi, Smil, Dmil or QbmiDmil (QBMI + DMIL).
        scheme: Scheme = Scheme::Dmil, "scheme", Allowed::Names(&["Baseline", "Rbmi", "Qbmi", "Smil", "Dmil", "QbmiDmil"]);
        ratio0_policy: milg::Ratio0Policy = milg::Ratio0Policy::Unlimited, "ratio0_policy", Allowed::As(declared_by::<milg::Params>);
        inflight_bits: u32 = 7, "inflight_bits", Allowed::As(declared_by::<milg::Params>);
        rsfail_bits: u32 = 12, "rsfail_bits", Allowed::As(declared_by::<milg::Params>);
        reqcnt_bits: u32 = 10, "reqcnt_bits", Allowed::As(declared_by::<milg::Params>);
        rpm_max: u32 = 32, "rpm_max", Allowed::As(declared_by::<qbmi_arb::Params>);
        rpm_round: qbmi_arb::RpmRound = qbmi_arb::RpmRound::Nearest, "rpm_round", Allowed::As(declared_by::<qbmi_arb::Params>);
        quota_bits: u32 = 16, "quota_bits", Allowed::As(declared_by::<qbmi_arb::Params>);
        rpm_init: qbmi_arb::RpmInit = qbmi_arb::RpmInit::default(), "rpm_init", Allowed::As(declared_by::<qbmi_arb::Params>);
    }
}

impl Params {
    pub fn kernels(&self) -> usize {
        self.n as usize
    }

    /// The params of every kernel's MILG.
    pub fn milg(&self) -> milg::Params {
        milg::Params {
            mode: self.scheme.milg_mode(),
            ratio0_policy: self.ratio0_policy,
            inflight_bits: self.inflight_bits,
            rsfail_bits: self.rsfail_bits,
            reqcnt_bits: self.reqcnt_bits,
        }
    }

    /// The RBMI arbiter's params (Rbmi scheme).
    pub fn rbmi(&self) -> crate::blocks::rbmi_arb::Params {
        crate::blocks::rbmi_arb::Params { n: self.n }
    }

    /// The QBMI arbiter's params (Qbmi, QbmiDmil); its interval is the MILGs'.
    pub fn qbmi(&self) -> qbmi_arb::Params {
        qbmi_arb::Params {
            n: self.n,
            rpm_max: self.rpm_max,
            rpm_round: self.rpm_round,
            quota_bits: self.quota_bits,
            reqcnt_bits: self.reqcnt_bits,
            rpm_init: self.rpm_init.clone(),
        }
    }

    /// Whether the scheme has the QBMI arbiter.
    pub fn has_qbmi(&self) -> bool {
        matches!(self.scheme, Scheme::Qbmi | Scheme::QbmiDmil)
    }

    /// The arbiter's register bits (0 without one).
    pub fn arbiter_bits(&self) -> u64 {
        match self.scheme {
            Scheme::Rbmi => self.rbmi().register_bits(),
            Scheme::Qbmi | Scheme::QbmiDmil => self.qbmi().register_bits(),
            _ => 0,
        }
    }

    /// Register bits: N MILGs plus the arbiter's (spec §6).
    pub fn register_bits(&self) -> u64 {
        u64::from(self.n) * self.milg().register_bits() + self.arbiter_bits()
    }
}

impl BlockParams for Params {
    const BLOCK: &'static str = "mem_issue_ctl";

    fn presets() -> Vec<(&'static str, Self)> {
        let paper = Params::default();
        let small = Params {
            inflight_bits: 4,
            rsfail_bits: 6,
            reqcnt_bits: 3,
            ..paper.clone()
        };
        let scheme = |base: &Params, scheme| Params {
            scheme,
            ..base.clone()
        };
        let mut all = vec![
            ("paper", paper.clone()),
            ("baseline", scheme(&paper, Scheme::Baseline)),
            ("smil", scheme(&paper, Scheme::Smil)),
            (
                "three",
                Params {
                    n: 3,
                    ..paper.clone()
                },
            ),
            ("small", small.clone()),
            ("small_smil", scheme(&small, Scheme::Smil)),
            ("small_baseline", scheme(&small, Scheme::Baseline)),
            ("rbmi", scheme(&paper, Scheme::Rbmi)),
            ("small_rbmi", scheme(&small, Scheme::Rbmi)),
            ("qbmi", scheme(&paper, Scheme::Qbmi)),
            ("qbmi_dmil", scheme(&paper, Scheme::QbmiDmil)),
            ("small_qbmi", scheme(&small, Scheme::Qbmi)),
            ("small_qbmi_dmil", scheme(&small, Scheme::QbmiDmil)),
        ];
        // Every scheme at N = 1 (paper widths) and N = 3 (small widths: boundaries every few
        // cycles; QBMI + DMIL with narrow saturating quotas).
        let one = Params { n: 1, ..paper };
        let three = Params { n: 3, ..small };
        let narrow = Params {
            quota_bits: 3,
            ..three.clone()
        };
        all.extend([
            ("one", scheme(&one, Scheme::Dmil)),
            ("one_baseline", scheme(&one, Scheme::Baseline)),
            ("one_smil", scheme(&one, Scheme::Smil)),
            ("one_rbmi", scheme(&one, Scheme::Rbmi)),
            ("one_qbmi", scheme(&one, Scheme::Qbmi)),
            ("one_qbmi_dmil", scheme(&one, Scheme::QbmiDmil)),
            ("small_three", scheme(&three, Scheme::Dmil)),
            ("small_three_baseline", scheme(&three, Scheme::Baseline)),
            ("small_three_smil", scheme(&three, Scheme::Smil)),
            ("small_three_rbmi", scheme(&three, Scheme::Rbmi)),
            ("small_three_qbmi", scheme(&three, Scheme::Qbmi)),
            ("small_three_qbmi_dmil", scheme(&narrow, Scheme::QbmiDmil)),
        ]);
        all
    }

    fn check(&self) -> Result<(), ParamError> {
        self.milg().check()?;
        self.qbmi().validate()
    }
}

crate::ports! {
    Params as p;
    let n = p.kernels();
    let ib = p.inflight_bits as usize;
    inputs {
        /// Per kernel: a memory instruction of the kernel is ready to issue (§2 `mem_req`).
        mem_req[1; n]: bool,
        /// Per kernel: a memory instruction of the kernel issues this cycle.
        issue[1; n]: bool,
        /// Per kernel: memory instructions of the kernel completing this cycle (0..2).
        done[2; n],
        /// Per kernel: the L1D accepted one of the kernel's accesses (a request).
        acc[1; n]: bool,
        /// Per kernel: the accepted access is its instruction's first (QBMI's `minst`, §3.3).
        first[1; n]: bool,
        /// Per kernel: the kernel's head access failed (one reservation failure).
        fail[1; n]: bool,
        /// Per kernel: SMIL configuration, the limit (read in Smil only).
        smil_limit[ib; n],
        /// Per kernel: SMIL configuration, "unlimited" (read in Smil only).
        smil_unl[1; n]: bool,
        /// The MEM pipeline register is empty (§2).
        slot_free[1]: bool,
    }
    outputs {
        /// Per kernel: may issue this cycle (see the module doc).
        grant[1; n]: bool,
        /// Per kernel: the MILG's gate (Moore).
        mem_ok[1; n]: bool,
        /// Per kernel: the MILGs' registers (§4.3).
        inflight[ib; n],
        peak[ib; n],
        rsfail[p.rsfail_bits as usize; n],
        reqcnt[p.reqcnt_bits as usize; n],
        mil[ib; n],
        unl[1; n]: bool,
        /// RBMI's pointer, the kernel granted last (Rbmi scheme only).
        last[p.rbmi().last_bits()] if p.scheme == Scheme::Rbmi,
        /// QBMI's quotas, base quotas, rpm and minst registers (Qbmi, QbmiDmil only).
        quota[p.quota_bits as usize; n] if p.has_qbmi(),
        base[qbmi_arb::BASE_BITS; n] if p.has_qbmi(),
        rpm[p.qbmi().rpm_bits(); n] if p.has_qbmi(),
        minst[p.reqcnt_bits as usize; n] if p.has_qbmi(),
    }
}

impl crate::Block for Params {
    fn build(&self) -> Module {
        build(self)
    }
    #[cfg(feature = "faults")]
    const FAULTS: &'static [crate::faults::Fault] = &[faults::SHARED_ACC];
}

/// Planted faults (docs/blocks.md §4).
#[cfg(feature = "faults")]
pub mod faults {
    use crate::faults::Fault;

    /// Kernel 1's MILG is fed kernel 0's `acc`: the kernels' request counters mixed up (built
    /// at N ≥ 2; §4.3, §5).
    pub const SHARED_ACC: Fault = Fault {
        block: "mem_issue_ctl",
        name: "shared_acc",
        what: "kernel 1's MILG is fed kernel 0's acc: the kernels' request counters mixed up (§4.3, §5)",
        port: super::port::REQCNT,
        // One request of kernel 0, then the compare (2 cycles at every preset with N ≥ 2).
        within: 3,
    };
}

/// Builds the top's RTL (spec §5).
pub fn build(p: &Params) -> Module {
    let n = p.kernels();
    let ib = p.inflight_bits as usize;
    let mut m = Module::new(&module_name(p));
    m.cites(crate::blocks::docs::MEMORY_ISSUE_CONTROL);
    let (inp, out) = m.declare_ports(&ports(p));
    let i = |name: &str| inp[name].clone();

    m.section("§4.3, §5: one MILG per kernel slot");
    let child = Arc::new(milg::build(&p.milg()));
    let milgs: Vec<_> = (0..n)
        .map(|k| m.instance(&format!("milg_{k}"), &child))
        .collect();
    for (k, g) in milgs.iter().enumerate() {
        let acc_k = if k == 1 {
            crate::planted!(faults::SHARED_ACC, i(port::ACC).bit(0), i(port::ACC).bit(k))
        } else {
            i(port::ACC).bit(k)
        };
        m.assign(&g.input(milg::port::ISSUE), i(port::ISSUE).bit(k));
        m.assign(&g.input(milg::port::DONE), i(port::DONE).slice(2 * k, 2));
        m.assign(&g.input(milg::port::ACC), acc_k);
        m.assign(&g.input(milg::port::FAIL), i(port::FAIL).bit(k));
        m.assign(
            &g.input(milg::port::SMIL_LIMIT),
            i(port::SMIL_LIMIT).slice(k * ib, ib),
        );
        m.assign(&g.input(milg::port::SMIL_UNL), i(port::SMIL_UNL).bit(k));
    }
    let each = |name: &str| -> Vec<Expr> { milgs.iter().map(|g| g.output(name)).collect() };

    m.section("§2: the gates; elig = mem_req & mem_ok & slot_free");
    let mem_ok = m.wire("mem_ok_w", bus(&each(milg::port::MEM_OK)));

    match p.scheme {
        Scheme::Rbmi => {
            m.section("§3.1: RBMI arbiter (grant one-hot or 0)");
            let arb = Arc::new(crate::blocks::rbmi_arb::build(&p.rbmi()));
            let a = m.instance("rbmi", &arb);
            use crate::blocks::rbmi_arb::port as rp;
            m.assign(&a.input(rp::MEM_REQ), i(port::MEM_REQ));
            m.assign(&a.input(rp::MEM_OK), mem_ok.clone());
            m.assign(&a.input(rp::SLOT_FREE), i(port::SLOT_FREE));
            m.assign(&out[port::GRANT], a.output(rp::GRANT));
            m.assign(&out[port::LAST], a.output(rp::LAST));
        }
        Scheme::Qbmi | Scheme::QbmiDmil => {
            m.section("§3.2-3.4: QBMI arbiter; MILG boundary drives sample");
            let arb = Arc::new(qbmi_arb::build(&p.qbmi()));
            let a = m.instance("qbmi", &arb);
            use crate::blocks::qbmi_arb::port as qp;
            let sample = m.wire("sample", bus(&each(milg::port::BOUNDARY)));
            m.assign(&a.input(qp::MEM_REQ), i(port::MEM_REQ));
            m.assign(&a.input(qp::MEM_OK), mem_ok.clone());
            m.assign(&a.input(qp::SLOT_FREE), i(port::SLOT_FREE));
            m.assign(&a.input(qp::FIRST), i(port::FIRST));
            m.assign(&a.input(qp::SAMPLE), sample);
            m.assign(&out[port::GRANT], a.output(qp::GRANT));
            for name in [port::QUOTA, port::BASE, port::RPM, port::MINST] {
                m.assign(&out[name], a.output(name));
            }
        }
        _ => {
            m.section("§5: grant = elig (no BMI arbiter)");
            let elig = m.wire(
                "elig",
                i(port::MEM_REQ) & mem_ok.clone() & replicate(&i(port::SLOT_FREE), n),
            );
            m.assign(&out[port::GRANT], elig);
        }
    }
    m.assign(&out[port::MEM_OK], mem_ok);
    for name in [
        port::INFLIGHT,
        port::PEAK,
        port::RSFAIL,
        port::REQCNT,
        port::MIL,
        port::UNL,
    ] {
        m.assign(&out[name], bus(&each(name)));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_are_n_milgs() {
        let p = Params::default();
        assert_eq!((p.register_bits(), build(&p).register_bits()), (88, 88));
        for (name, p) in Params::presets() {
            assert_eq!(build(&p).register_bits(), p.register_bits(), "{name}");
        }
        let base = Params::resolve(Some("baseline"), &[]).unwrap();
        assert_eq!(base.register_bits(), 72);
    }

    #[test]
    fn ports_and_hierarchy() {
        let p = Params::resolve(Some("three"), &[]).unwrap();
        let m = build(&p);
        assert_eq!(m.ports(), ports(&p));
        assert_eq!(m.instances().len(), 3);
        let width = |n: &str| ports(&p).into_iter().find(|x| x.name == n).unwrap().width;
        assert_eq!(
            [port::DONE, port::SMIL_LIMIT, port::RSFAIL, port::REQCNT].map(width),
            [6, 21, 36, 30]
        );
    }
}
