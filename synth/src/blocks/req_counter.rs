//! Hardware cost of the `ReqCounter` (docs/memory-issue-control.md §3.3, §6): `reqcnt_bits`
//! flip-flops, needed only where no MILG shares its request counter with QBMI.

use serde::Serialize;
use smrtl_hdl::blocks::req_counter::{build, Params};
use smrtl_hdl::tools::ToolError;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Registers {
    pub reqcnt: u64,
}

/// The counter's line in `smrtl synth`.
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let r = Registers {
        reqcnt: p.register_bits(),
    };
    let built = build(p).register_bits();
    assert_eq!(built, r.reqcnt, "req_counter RTL has {built} register bits");
    let mut n = crate::Notes::default();
    n.add(
        format!(
            "storage: {} DFF bits = the request counter (the paper's 10-bit MILG request counter, stand-alone; only when no MILG shares it with QBMI, spec §3.3)",
            r.reqcnt
        ),
        "registers",
        &r,
    );
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yosys_confirms_the_flip_flops() {
        if !smrtl_hdl::tools::external(&["yosys", "verilator", "iverilog"]) {
            return;
        }
        let p = Params::default();
        let module = std::sync::Arc::new(build(&p));
        let cost = crate::cost_of(&module, false).unwrap();
        assert_eq!(
            (cost.generic.rtl_flip_flops, cost.generic.flip_flops),
            (10, 10)
        );
        assert!(cost.generic.latches.is_empty());
        let verilog = smrtl_hdl::rusthdl::emit_verilog(&module);
        crate::lint_verilator(&verilog, &module.name).unwrap();
        crate::compile_icarus(&verilog, &module.name).unwrap();
        assert!(notes(&p).unwrap().lines[0].starts_with("storage: 10 DFF bits"));
    }
}
