//! `Milg`, the Memory Instruction Limiting number Generator (docs/memory-issue-control.md §4;
//! Dai et al., HPCA 2018, seed 004, §3.3 and Fig. 10): one per kernel slot per SM. It counts the
//! kernel's memory instructions in flight, its reservation failures and its accepted requests;
//! every `2^reqcnt_bits` requests (an interval) it turns the interval's peak in-flight count and
//! failures per request into the limit `mil = max(peak / (rsfail >> reqcnt_bits), 1)` (DMIL),
//! and gates the kernel's memory issue with `mem_ok`.
//!
//! Structure (§4.4): `mem_ok` reads only start-of-cycle registers (Moore); the next state is an
//! adder/subtractor for `inflight`, a saturating incrementer for `rsfail`, a wrapping counter
//! `reqcnt` whose all-ones value with `acc` is the interval `boundary`, a max for `peak`, and at
//! the boundary a small restoring divider `P div r` (`r` is `rsfail`'s bits above `reqcnt_bits`,
//! the paper's right shifter: wires).

use crate::netlist::{concat, mask, Expr, Module};
use crate::params::{module_name, Allowed, BlockParams, ParamError};
use serde::{Deserialize, Serialize};

/// What sets the limit (spec §4.4 "Modes").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    /// No limit (`unl = 1`, `mil` all ones); the counters still run (observation, and the
    /// shared request counter of QBMI, spec §3.3).
    #[serde(alias = "off", alias = "OFF")]
    Off,
    /// Static MIL (§4.1): `mil` / `unl` load the configuration inputs `smil_limit` /
    /// `smil_unl` every cycle.
    #[serde(alias = "smil", alias = "SMIL")]
    Smil,
    /// Dynamic MIL (§4.2): `mil` / `unl` recomputed at every interval boundary; the default.
    #[serde(alias = "dmil", alias = "DMIL")]
    Dmil,
}

/// What DMIL does when the interval had fewer failures than requests (`r = 0`, spec §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ratio0Policy {
    /// `Peak / 0` is +∞: `unl = 1`, `mil` all ones; the default.
    #[serde(alias = "Unlimited", alias = "UNLIMITED")]
    Unlimited,
    /// `mil = min(P + 1, max)`, `unl = 0`: the limit grows by one per quiet interval.
    #[serde(alias = "Increment", alias = "INCREMENT")]
    Increment,
}

crate::block_params! {
    /// Milg parameters (spec §4.3–§4.4, §5): the mode, the `r = 0` policy and the three counter
    /// widths.
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct Params {
        /// What sets the limit: Off (no limit, counters run), Smil (configuration inputs),
        /// Dmil (recomputed every interval).
        mode: Mode = Mode::Dmil, "mode", Allowed::Names(&["Off", "Smil", "Dmil"]);
        /// DMIL with fewer failures than requests in the interval (r = 0): unlimited, or
        /// increment (mil = min(P+1, max)).
        ratio0_policy: Ratio0Policy = Ratio0Policy::Unlimited, "ratio0_policy", Allowed::Names(&["unlimited", "increment"]);
        /// Width of the in-flight counter, `peak`, `mil` and `smil_limit` (the counter holds
        /// 0..2^bits-1).
        inflight_bits: u32 = 7, "inflight_bits", Allowed::Range(2, 8);
        /// Width of the saturating reservation-failure counter.
        rsfail_bits: u32 = 12, "rsfail_bits", Allowed::Range(2, 24), "more than reqcnt_bits";
        /// Width of the request counter: an interval is 2^reqcnt_bits accepted requests, and
        /// failures per request are rsfail >> reqcnt_bits.
        reqcnt_bits: u32 = 10, "reqcnt_bits", Allowed::Range(1, 16), "less than rsfail_bits";
    }
}

impl Params {
    /// Width of the ratio `r = rsfail >> reqcnt_bits` (2 at the defaults: r in 0..3).
    pub fn ratio_bits(&self) -> usize {
        (self.rsfail_bits - self.reqcnt_bits) as usize
    }

    /// Whether `mil` / `unl` are registers: in Off they are constants (all ones, 1).
    pub fn has_limit_registers(&self) -> bool {
        self.mode != Mode::Off
    }

    /// Register bits (spec §6): inflight + rsfail + reqcnt + peak, plus mil + unl unless Off
    /// (44 at the defaults, 36 in Off).
    pub fn register_bits(&self) -> u64 {
        let counters = 2 * u64::from(self.inflight_bits)
            + u64::from(self.rsfail_bits)
            + u64::from(self.reqcnt_bits);
        let limit = if self.has_limit_registers() {
            u64::from(self.inflight_bits) + 1
        } else {
            0
        };
        counters + limit
    }

    /// The largest in-flight count, `mil`'s reset value (127 at the defaults).
    pub fn inflight_max(&self) -> u64 {
        mask(self.inflight_bits as usize)
    }

    /// The saturation value of `rsfail` (4095).
    pub fn rsfail_max(&self) -> u64 {
        mask(self.rsfail_bits as usize)
    }

    /// The last request count of an interval (1023).
    pub fn reqcnt_max(&self) -> u64 {
        mask(self.reqcnt_bits as usize)
    }
}

impl BlockParams for Params {
    const BLOCK: &'static str = "milg";

    fn presets() -> Vec<(&'static str, Self)> {
        let paper = Params::default();
        // Small widths: 8-request intervals, a 6-bit failure counter (r in 0..7, saturation
        // within an interval), a 4-bit in-flight counter (the guard at 15 is reachable).
        let small = Params {
            inflight_bits: 4,
            rsfail_bits: 6,
            reqcnt_bits: 3,
            ..paper.clone()
        };
        vec![
            ("paper", paper.clone()),
            (
                "smil",
                Params {
                    mode: Mode::Smil,
                    ..paper.clone()
                },
            ),
            (
                "off",
                Params {
                    mode: Mode::Off,
                    ..paper
                },
            ),
            ("small", small.clone()),
            (
                "small_increment",
                Params {
                    ratio0_policy: Ratio0Policy::Increment,
                    ..small.clone()
                },
            ),
            (
                "small_smil",
                Params {
                    mode: Mode::Smil,
                    ..small
                },
            ),
        ]
    }

    fn check(&self) -> Result<(), ParamError> {
        if self.rsfail_bits <= self.reqcnt_bits {
            return Err(ParamError::Range {
                name: "rsfail_bits".into(),
                value: self.rsfail_bits.to_string(),
                allowed: format!(
                    "more than reqcnt_bits = {} (failures per request are rsfail >> reqcnt_bits)",
                    self.reqcnt_bits
                ),
            });
        }
        Ok(())
    }
}

crate::ports! {
    Params as p;
    let ib = p.inflight_bits as usize;
    inputs {
        /// A memory instruction of the kernel issues this cycle.
        issue[1]: bool,
        /// Memory instructions of the kernel completing this cycle (0..2).
        done[2],
        /// The L1D accepted one of the kernel's accesses (a request).
        acc[1]: bool,
        /// The kernel's head access failed (one reservation failure).
        fail[1]: bool,
        /// SMIL configuration: the limit (read in Smil mode only).
        smil_limit[ib],
        /// SMIL configuration: "unlimited" (read in Smil mode only).
        smil_unl[1]: bool,
    }
    outputs {
        /// The gate (Moore): the kernel may issue a memory instruction this cycle.
        mem_ok[1]: bool,
        /// The limit.
        mil[ib],
        /// No limit.
        unl[1]: bool,
        /// Combinational: `acc` and `reqcnt` all ones, the last request of an interval.
        boundary[1]: bool,
        inflight[ib],
        peak[ib],
        rsfail[p.rsfail_bits as usize],
        reqcnt[p.reqcnt_bits as usize],
    }
}

impl crate::Block for Params {
    fn build(&self) -> Module {
        build(self)
    }
    #[cfg(feature = "faults")]
    const FAULTS: &'static [crate::faults::Fault] = &[faults::PEAK_NOT_RESTARTED];
}

/// Planted faults (docs/blocks.md §4).
#[cfg(feature = "faults")]
pub mod faults {
    use crate::faults::Fault;

    /// At the boundary `peak` keeps `P` instead of restarting at `inflight'` (the next
    /// interval's peak then remembers the last one's; §4.4).
    pub const PEAK_NOT_RESTARTED: Fault = Fault {
        block: "milg",
        name: "peak_not_restarted",
        what: "at the interval boundary peak keeps P instead of restarting at inflight' (§4.4)",
        port: super::port::PEAK,
        // An issue, eight requests (the boundary at the small widths), then the compare.
        within: 24,
    };
}

/// `P div r` by restoring division (spec §4.4: integer floor), `r ≠ 0` assumed (the quotient
/// is unused otherwise). One compare-and-subtract per quotient bit, MSB first; the partial
/// remainder stays below `r`, so it is `r`'s width. Returns the quotient, `P`'s width.
pub fn divide(m: &mut Module, name: &str, dividend: &Expr, divisor: &Expr) -> Expr {
    let (iw, rw) = (dividend.width(), divisor.width());
    let d = m.wire(
        &format!("{name}_d"),
        concat(&[Expr::lit(0, 1), divisor.clone()]),
    );
    let mut rem = Expr::lit(0, rw);
    let mut q = Vec::with_capacity(iw);
    for i in (0..iw).rev() {
        // shifted = {rem, P[i]}, rw + 1 bits.
        let shifted = m.wire(
            &format!("{name}_sh{i}"),
            concat(&[rem.clone(), dividend.bit(i)]),
        );
        let qi = m.wire(&format!("{name}_q{i}"), !shifted.lt(&d));
        let diff = m.wire(&format!("{name}_diff{i}"), &shifted - &d);
        let next = m.wire(&format!("{name}_rem{i}"), qi.mux(&diff, &shifted));
        rem = next.slice(0, rw);
        q.push(qi);
    }
    // q holds the quotient MSB first.
    concat(&q)
}

/// Builds the Milg's RTL from validated params (spec §4.4).
pub fn build(p: &Params) -> Module {
    let (ib, fb, qb, rb) = (
        p.inflight_bits as usize,
        p.rsfail_bits as usize,
        p.reqcnt_bits as usize,
        p.ratio_bits(),
    );
    let mut m = Module::new(&module_name(p));
    m.cites(crate::blocks::docs::MEMORY_ISSUE_CONTROL);
    let (inp, out) = m.declare_ports(&ports(p));
    let i = |name: &str| inp[name].clone();
    let (issue, done, acc, fail) = (i(port::ISSUE), i(port::DONE), i(port::ACC), i(port::FAIL));
    let imax = Expr::lit(p.inflight_max(), ib);

    // --- Registers (§4.3) -------------------------------------------------------------------
    m.section("§4.3: MILG registers and reset values");
    let inflight = m.reg("inflight_q", ib, 0);
    let rsfail = m.reg("rsfail_q", fb, 0);
    let reqcnt = m.reg("reqcnt_q", qb, 0);
    let peak = m.reg("peak_q", ib, 0);
    let (mil, unl) = if p.has_limit_registers() {
        (m.reg("mil_q", ib, p.inflight_max()), m.reg("unl_q", 1, 1))
    } else {
        // Off: no limit, constants (spec §4.4 "Off: unl = 1").
        (imax.clone(), Expr::lit(1, 1))
    };

    m.section("§4.4: mem_ok from start-of-cycle registers (Moore)");
    let below_mil = inflight.lt(&mil);
    let room = !inflight.equals(&imax);
    let mem_ok = m.wire("mem_ok_w", (&unl | &below_mil) & room);

    m.section("§4.4: inflight', rs (saturating), boundary, P");
    // Modulo 2^inflight_bits; the environment keeps it in range (spec §5 legal stimulus).
    let inflight_nx = m.wire("inflight_nx", (&inflight + &issue.zext(ib)) - done.zext(ib));
    let fmax = Expr::lit(p.rsfail_max(), fb);
    let rs = m.wire(
        "rs",
        rsfail
            .equals(&fmax)
            .mux(&rsfail, &(&rsfail + &fail.zext(fb))),
    );
    let qmax = Expr::lit(p.reqcnt_max(), qb);
    let boundary = m.wire("boundary_w", &acc & &reqcnt.equals(&qmax));
    let pmax = m.wire("pmax", peak.lt(&inflight_nx).mux(&inflight_nx, &peak));

    m.section("§4.4: next state");
    m.next(&inflight, inflight_nx.clone());
    m.next(
        &reqcnt,
        boundary.mux(&Expr::lit(0, qb), &(&reqcnt + &acc.zext(qb))),
    );
    m.next(&rsfail, boundary.mux(&Expr::lit(0, fb), &rs));
    let peak_at_boundary = crate::planted!(
        faults::PEAK_NOT_RESTARTED,
        pmax.clone(),
        inflight_nx.clone()
    );
    m.next(&peak, boundary.mux(&peak_at_boundary, &pmax));
    match p.mode {
        Mode::Off => {}
        Mode::Smil => {
            m.next(&mil, i(port::SMIL_LIMIT));
            m.next(&unl, i(port::SMIL_UNL));
        }
        Mode::Dmil => {
            m.section("§4.2, §4.4: r = rs >> reqcnt_bits, P div r");
            let r = m.wire("ratio", rs.slice(qb, rb));
            let r_zero = m.wire("ratio_zero", r.equals(&Expr::lit(0, rb)));
            let quotient = divide(&mut m, "div", &pmax, &r);
            let quotient = m.wire("quotient", quotient);
            let one = Expr::lit(1, ib);
            let limit = m.wire(
                "limit",
                quotient.equals(&Expr::lit(0, ib)).mux(&one, &quotient),
            );
            // r = 0: ratio0_policy; otherwise unl' = 0, mil' = max(P div r, 1).
            let (mil0, unl0) = match p.ratio0_policy {
                Ratio0Policy::Unlimited => (imax.clone(), Expr::lit(1, 1)),
                Ratio0Policy::Increment => {
                    let inc = pmax.equals(&imax).mux(&pmax, &(&pmax + &one));
                    (m.wire("limit_inc", inc), Expr::lit(0, 1))
                }
            };
            let mil_b = r_zero.mux(&mil0, &limit);
            let unl_b = r_zero.mux(&unl0, &Expr::lit(0, 1));
            m.next(&mil, boundary.mux(&mil_b, &mil));
            m.next(&unl, boundary.mux(&unl_b, &unl));
        }
    }

    let o = |name: &str| out[name].clone();
    m.assign(&o(port::MEM_OK), mem_ok);
    m.assign(&o(port::MIL), mil);
    m.assign(&o(port::UNL), unl);
    m.assign(&o(port::BOUNDARY), boundary);
    m.assign(&o(port::INFLIGHT), inflight);
    m.assign(&o(port::PEAK), peak);
    m.assign(&o(port::RSFAIL), rsfail);
    m.assign(&o(port::REQCNT), reqcnt);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dmil_registers_are_44_bits() {
        let p = Params::default();
        assert_eq!(p.register_bits(), 44);
        assert_eq!(build(&p).register_bits(), 44);
        for (name, p) in Params::presets() {
            assert_eq!(build(&p).register_bits(), p.register_bits(), "{name}");
        }
        let off = Params::resolve_pairs(None, &[("mode", "Off")]).unwrap();
        assert_eq!(build(&off).register_bits(), 36);
    }

    #[test]
    fn ports_follow_the_spec() {
        let p = Params::default();
        assert_eq!(build(&p).ports(), ports(&p));
        let width = |n: &str| ports(&p).into_iter().find(|x| x.name == n).unwrap().width;
        assert_eq!(
            [
                port::SMIL_LIMIT,
                port::MIL,
                port::RSFAIL,
                port::REQCNT,
                port::DONE
            ]
            .map(width),
            [7, 7, 12, 10, 2]
        );
    }

    #[test]
    fn params_parse_and_check() {
        let p = Params::resolve_pairs(None, &[("mode", "smil"), ("ratio0_policy", "increment")])
            .unwrap();
        assert_eq!(
            (p.mode, p.ratio0_policy),
            (Mode::Smil, Ratio0Policy::Increment)
        );
        let e = Params::resolve_pairs(None, &[("rsfail_bits", "10")]).unwrap_err();
        assert!(e.to_string().contains("more than reqcnt_bits"), "{e}");
        assert!(Params::resolve_pairs(None, &[("mode", "fast")]).is_err());
    }
}
