//! `ReqCounter` (docs/memory-issue-control.md §3.3, §5; Dai et al., seed 004, §3.2): a
//! kernel's wrapping request counter that delimits QBMI's Req/Minst sampling interval when no
//! MILG is present to share its `reqcnt`. `boundary` = `acc` with the counter all ones: the
//! cycle of the interval's last (1024th) accepted request, exactly the MILG's `boundary`.

use crate::netlist::{mask, Expr, Module};
use crate::params::{module_name, Allowed, BlockParams};

crate::block_params! {
    /// ReqCounter parameters (spec §5): the counter width.
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct Params {
        /// Width of the request counter: an interval is 2^reqcnt_bits accepted requests (the
        /// MILG's `reqcnt_bits`).
        reqcnt_bits: u32 = 10, "reqcnt_bits", Allowed::Range(1, 16);
    }
}

impl Params {
    /// Register bits: the counter (10 at the default).
    pub fn register_bits(&self) -> u64 {
        u64::from(self.reqcnt_bits)
    }
}

impl BlockParams for Params {
    const BLOCK: &'static str = "req_counter";

    fn presets() -> Vec<(&'static str, Self)> {
        vec![
            ("paper", Params::default()),
            ("small", Params { reqcnt_bits: 3 }),
        ]
    }
}

crate::ports! {
    Params as p;
    inputs {
        /// The L1D accepted one of the kernel's accesses.
        acc[1]: bool,
    }
    outputs {
        /// Combinational: `acc` with the counter all ones (QBMI's `sample`).
        boundary[1]: bool,
        /// The counter (debug).
        reqcnt[p.reqcnt_bits as usize],
    }
}

impl crate::Block for Params {
    fn build(&self) -> Module {
        build(self)
    }
}

/// Builds the counter's RTL (spec §3.3: `reqcnt' = reqcnt + acc`, wrapping).
pub fn build(p: &Params) -> Module {
    let qb = p.reqcnt_bits as usize;
    let mut m = Module::new(&module_name(p));
    m.cites(crate::blocks::docs::MEMORY_ISSUE_CONTROL);
    let (inp, out) = m.declare_ports(&ports(p));
    let acc = inp[port::ACC].clone();
    m.section("§3.3: the kernel's request counter, wrapping");
    let reqcnt = m.reg("reqcnt_q", qb, 0);
    let boundary = m.wire(
        "boundary_w",
        &acc & &reqcnt.equals(&Expr::lit(mask(qb), qb)),
    );
    m.next(&reqcnt, &reqcnt + &acc.zext(qb));
    m.assign(&out[port::BOUNDARY], boundary);
    m.assign(&out[port::REQCNT], reqcnt);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_register_bits() {
        let p = Params::default();
        assert_eq!((p.register_bits(), build(&p).register_bits()), (10, 10));
        let small = Params::resolve(Some("small"), &[]).unwrap();
        assert_eq!(build(&small).register_bits(), 3);
        assert!(Params::resolve_pairs(None, &[("reqcnt_bits", "0")]).is_err());
    }
}
