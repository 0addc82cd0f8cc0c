//! smrtl hardware cost: Yosys drivers ([`yosys`]), lint and compile checks ([`checks`]) and each
//! block's cost report ([`bank_conflict_detector`], [`elastic_pipeline`]).

pub mod bank_conflict_detector;
pub mod checks;
pub mod elastic_pipeline;
pub mod history_cache;
pub mod sm_core;
pub mod yosys;

pub use bank_conflict_detector::{DetectorCost, SweepOptions, SweepReport};
pub use checks::{compile_icarus, lint_verilator, LINT_WAIVERS};
pub use smrtl_hdl::tools::ToolError;
pub use yosys::{GenericReport, Ice40Report};

use serde::Serialize;
use smrtl_hdl::Module;
use std::sync::Arc;

/// Yosys figures of any block: the generic flow always, the iCE40 flow on request.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cost {
    pub generic: GenericReport,
    /// `None` when the iCE40 flow was not run.
    pub ice40: Option<Ice40Report>,
}

/// Emits `module` and runs the generic and (optionally) iCE40 flows concurrently.
pub fn cost_of(module: &Arc<Module>, ice40: bool) -> Result<Cost, ToolError> {
    let verilog = smrtl_hdl::rusthdl::emit_verilog(module);
    let top = module.name.as_str();
    let (generic, ice40) = std::thread::scope(|s| {
        let ice40 = ice40.then(|| s.spawn(|| yosys::ice40(&verilog, top)));
        let generic = yosys::generic(&verilog, top);
        let ice40 = ice40.map(|h| h.join().expect("ice40 flow thread"));
        (generic, ice40)
    });
    Ok(Cost {
        generic: generic?,
        ice40: ice40.transpose()?,
    })
}

/// Writes `verilog` to `<tmp>/<top>.v` for `tool` and returns the directory (removed when
/// dropped); `top` must be a plain Verilog identifier.
pub(crate) fn stage(tool: &str, verilog: &str, top: &str) -> Result<tempfile::TempDir, ToolError> {
    let ident = top
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && top.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ident {
        return Err(ToolError::Failed {
            tool: tool.into(),
            message: format!("top module `{top}` is not a plain Verilog identifier"),
        });
    }
    let io = |e: std::io::Error| ToolError::Io {
        tool: tool.into(),
        message: e.to_string(),
    };
    let dir = tempfile::Builder::new()
        .prefix("smrtl-synth-")
        .tempdir()
        .map_err(io)?;
    std::fs::write(dir.path().join(format!("{top}.v")), verilog).map_err(io)?;
    Ok(dir)
}
