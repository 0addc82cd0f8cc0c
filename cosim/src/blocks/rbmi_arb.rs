//! Behavioral model of RBMI (docs/memory-issue-control.md §3.1; Dai et al., seed 004, §3.2),
//! written from the spec: [`Rbmi`] is the control state the SM memory-pipeline model drives
//! (one [`Rbmi::grant`] before issue, one [`Rbmi::tick`] at the edge), [`Model`] puts it on the
//! block's ports for co-simulation.

use crate::{BlockModel, Layout, Simulator};
use smrtl_hdl::blocks::rbmi_arb::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::rbmi_arb::Params;

/// RBMI's state: the pointer `last`, the kernel granted last (reset N − 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rbmi {
    /// Kernels, 1..=3.
    pub n: usize,
    /// The last granted kernel (read-only by convention).
    pub last: usize,
}

impl Rbmi {
    /// RBMI after reset: `last = n − 1`, so kernel 0 comes first.
    pub fn new(n: usize) -> Rbmi {
        assert!((1..=3).contains(&n), "RBMI takes 1..=3 kernels, not {n}");
        Rbmi { n, last: n - 1 }
    }

    /// The kernel granted this cycle: the first eligible one in cyclic order `last+1, last+2,
    /// …, last` (bit k of `elig` = kernel k eligible), or `None` when none is.
    pub fn grant(&self, elig: u8) -> Option<usize> {
        (1..=self.n)
            .map(|d| (self.last + d) % self.n)
            .find(|&k| elig >> k & 1 == 1)
    }

    /// The clock edge: a grant moves the pointer to the granted kernel.
    pub fn tick(&mut self, grant: Option<usize>) {
        if let Some(g) = grant {
            debug_assert!(g < self.n);
            self.last = g;
        }
    }
}

/// Eligibility (spec §2): `mem_req & mem_ok`, nobody when the slot is busy.
pub fn eligible(mem_req: u8, mem_ok: u8, slot_free: bool) -> u8 {
    if slot_free {
        mem_req & mem_ok
    } else {
        0
    }
}

/// A per-kernel bus of flags as a mask, bit k = kernel k (the arbiters' `elig`, `first`,
/// `sample`).
pub fn mask(v: &[bool]) -> u8 {
    v.iter().rev().fold(0, |m, &b| m << 1 | u8::from(b))
}

/// The `n` kernels' flags of `mask` (bit k = kernel k): a per-kernel bus of the typed cycles.
pub fn kernels(n: usize, mask: u8) -> Vec<bool> {
    (0..n).map(|k| mask >> k & 1 == 1).collect()
}

/// RBMI on its ports: `grant` from this cycle's inputs and the pointer, `last` the pointer at
/// the start of the cycle; then the edge (synchronous reset wins).
pub struct Model {
    arb: Rbmi,
    io: Io,
    inputs: Inputs,
    outputs: Outputs,
}

impl BlockModel for Model {
    type Params = Params;
    fn new(p: &Params, layout: &Layout) -> Model {
        Model {
            arb: Rbmi::new(p.kernels()),
            io: Io::new(p, layout),
            inputs: Inputs::new(p),
            outputs: Outputs::new(p),
        }
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        let (i, o) = (&mut self.inputs, &mut self.outputs);
        self.io.read_inputs(inputs, i);
        let g = self
            .arb
            .grant(eligible(mask(&i.mem_req), mask(&i.mem_ok), i.slot_free));
        for (k, x) in o.grant.iter_mut().enumerate() {
            *x = g == Some(k);
        }
        o.last = self.arb.last as u64;
        self.io.write_outputs(o, outputs);
        if i.reset {
            self.arb = Rbmi::new(self.arb.n);
        } else {
            self.arb.tick(g);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_eligible_rotates_and_skips() {
        let mut r = Rbmi::new(3);
        let mut seq = vec![];
        for _ in 0..6 {
            let g = r.grant(0b111);
            seq.push(g.unwrap());
            r.tick(g);
        }
        assert_eq!(seq, [0, 1, 2, 0, 1, 2]);
        // Kernel 1 not eligible: 0, 2, 0, 2.
        let mut r = Rbmi::new(3);
        let mut seq = vec![];
        for _ in 0..4 {
            let g = r.grant(0b101);
            seq.push(g.unwrap());
            r.tick(g);
        }
        assert_eq!(seq, [0, 2, 0, 2]);
        assert_eq!(Rbmi::new(2).grant(0), None);
        assert_eq!(Rbmi::new(1).grant(1), Some(0));
    }

    #[test]
    fn masks_and_kernels() {
        assert_eq!(mask(&[true, false, true]), 0b101);
        assert_eq!(kernels(3, 0b110), [false, true, true]);
        assert_eq!(mask(&kernels(2, 0b111)), 0b11);
    }
}
