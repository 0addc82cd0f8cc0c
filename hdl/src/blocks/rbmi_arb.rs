//! `RbmiArb` (docs/memory-issue-control.md §3.1, §5; Dai et al., seed 004, §3.2): RBMI, the
//! loose round-robin over kernels that picks which kernel's memory instruction takes the SM's
//! one memory-issue slot this cycle.
//!
//! `grant` is combinational (Mealy) from this cycle's `mem_req`, `mem_ok`, `slot_free` and the
//! registered pointer `last`: `g` = the first eligible kernel in cyclic order `last+1, last+2,
//! …`; on a grant `last := g` at the edge. Kernels without an eligible instruction are skipped,
//! so the slot is never left idle while one is eligible.
//!
//! Structure: per pointer value `l`, a fixed-priority pick over the order `l+1, …, l` (N ≤ 3:
//! at most three one-hot candidates), selected by `last`; the pointer's next value encodes the
//! one-hot grant. With N = 1 there is nothing to rotate: no register, `last` is a constant 0.

use crate::blocks::sharing::bus;
use crate::netlist::{or_tree, replicate, select_onehot, Expr, Module};
use crate::params::{bits_for, Allowed, BlockParams, Gpgpusim};

crate::block_params! {
    /// RbmiArb parameters (spec §3.1, §5).
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct Params {
        /// Concurrent kernels (kernel slots) sharing the SM's memory-issue slot.
        n: u32 = 2, "N", Allowed::Range(1, 3) => Gpgpusim::KernelSlots;
    }
}

impl Params {
    /// Kernels as a count.
    pub fn kernels(&self) -> usize {
        self.n as usize
    }

    /// Width of the `last` port: ⌈log2 N⌉, at least 1 (a port cannot be zero bits wide).
    pub fn last_bits(&self) -> usize {
        bits_for(u64::from(self.n) - 1)
    }

    /// Register bits: the pointer, ⌈log2 N⌉ (spec §6 inventory): 0 for N = 1, where `last` is
    /// the constant 0 and needs no flip-flop.
    pub fn register_bits(&self) -> u64 {
        if self.n == 1 {
            0
        } else {
            self.last_bits() as u64
        }
    }

    /// The pointer's reset value, N − 1, so that kernel 0 is first after reset (spec §3.1).
    pub fn last_reset(&self) -> u64 {
        u64::from(self.n) - 1
    }
}

impl BlockParams for Params {
    const BLOCK: &'static str = "rbmi_arb";

    /// Two kernels (the paper's pairs), three (its triples), and the degenerate single kernel
    /// (the smallest, listed last).
    fn presets() -> Vec<(&'static str, Self)> {
        vec![
            ("paper", Params::default()),
            ("three", Params { n: 3 }),
            ("one", Params { n: 1 }),
        ]
    }
}

crate::ports! {
    Params as p;
    let n = p.kernels();
    inputs {
        /// Per kernel: a memory instruction of the kernel is ready to issue.
        mem_req[1; n]: bool,
        /// Per kernel: the MIL gate lets the kernel issue (all ones without MIL).
        mem_ok[1; n]: bool,
        /// The memory pipeline register is empty: a memory instruction may issue this cycle.
        slot_free[1]: bool,
    }
    outputs {
        /// Per kernel: the kernel issues this cycle (one-hot or none, combinational).
        grant[1; n]: bool,
        /// Debug: the pointer, the kernel granted last (⌈log2 N⌉ bits, at least 1).
        last[p.last_bits()],
    }
}

impl crate::Block for Params {
    fn build(&self) -> Module {
        build(self)
    }
    #[cfg(feature = "faults")]
    const FAULTS: &'static [crate::faults::Fault] = &[faults::POINTER_STEPS];
}

/// Planted faults (docs/blocks.md §4).
#[cfg(feature = "faults")]
pub mod faults {
    use crate::faults::Fault;

    /// On a grant the pointer steps to `last + 1` instead of the granted kernel: wrong only
    /// after an ineligible kernel was skipped (§3.1).
    pub const POINTER_STEPS: Fault = Fault {
        block: "rbmi_arb",
        name: "pointer_steps",
        what: "on a grant the pointer steps to last + 1 instead of the granted kernel: wrong after a skipped kernel (§3.1)",
        port: super::port::LAST,
        // A grant that skips a kernel, then the pointer read back (2 or 3 cycles at N = 2 and
        // 3; N = 1 has no pointer and does not build it).
        within: 3,
    };
}

/// The one-hot pick of the first eligible kernel in `order`.
fn first_in(elig: &Expr, order: &[usize], n: usize) -> Expr {
    let mut bits = vec![Expr::lit(0, 1); n];
    let mut none_before = Expr::lit(1, 1);
    for &k in order {
        bits[k] = &none_before & &elig.bit(k);
        none_before = &none_before & &!elig.bit(k);
    }
    bus(&bits)
}

/// Builds RbmiArb's RTL from validated params (spec §3.1).
pub fn build(p: &Params) -> Module {
    let n = p.kernels();
    let lw = p.last_bits();
    let mut m = Module::new(&crate::params::module_name(p));
    m.cites(crate::blocks::docs::MEMORY_ISSUE_CONTROL);
    let (inp, out) = m.declare_ports(&ports(p));
    let i = |name: &str| inp[name].clone();

    m.section("§2, §3.1: elig = mem_req & mem_ok & slot_free");
    let elig = m.wire(
        "elig",
        i(port::MEM_REQ) & i(port::MEM_OK) & replicate(&i(port::SLOT_FREE), n),
    );

    if n == 1 {
        // Nothing to rotate: the one kernel is granted whenever it is eligible.
        m.assign(&out[port::GRANT], elig);
        m.assign(&out[port::LAST], Expr::lit(0, lw));
        return m;
    }

    m.section("§3.1 grant: first eligible kernel in cyclic order last+1, last+2, ...");
    let last = m.reg("last_q", lw, p.last_reset());
    let mut picks = vec![];
    let mut sel = vec![];
    for l in 0..n {
        let order: Vec<usize> = (1..=n).map(|d| (l + d) % n).collect();
        picks.push(m.wire(&format!("pick_after_{l}"), first_in(&elig, &order, n)));
        sel.push(last.equals(&Expr::lit(l as u64, lw)));
    }
    // A pointer value ≥ N (only 3 with N = 3, unreachable from reset) selects no pick.
    let grant = m.wire("grant_w", select_onehot(&sel, &picks, n));
    m.assign(&out[port::GRANT], grant.clone());

    m.section("§3.1 pointer: on a grant last := g");
    let granted = grant.any();
    let target = crate::planted!(
        faults::POINTER_STEPS,
        {
            let wrap = last.equals(&Expr::lit(p.last_reset(), lw));
            wrap.mux(&Expr::lit(0, lw), &(&last + &Expr::lit(1, lw)))
        },
        {
            let terms = (0..n)
                .map(|k| {
                    grant
                        .bit(k)
                        .mux(&Expr::lit(k as u64, lw), &Expr::lit(0, lw))
                })
                .collect();
            or_tree(terms, lw)
        }
    );
    let g = m.wire("g", target);
    m.next(&last, granted.mux(&g, &last));
    m.assign(&out[port::LAST], last);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_bits_follow_the_inventory() {
        let bits: Vec<(usize, u64)> = (1..=3)
            .map(|n| {
                let p = Params { n };
                assert_eq!(build(&p).register_bits(), p.register_bits());
                (p.last_bits(), p.register_bits())
            })
            .collect();
        assert_eq!(bits, [(1, 0), (1, 1), (2, 2)]);
    }

    #[test]
    fn n_is_checked() {
        assert!(Params::resolve_pairs(None, &[("N", "0")]).is_err());
        assert!(Params::resolve_pairs(None, &[("N", "4")]).is_err());
        let p = Params::resolve_pairs(None, &[("N", "3")]).unwrap();
        assert_eq!(build(&p).ports(), ports(&p));
    }
}
