//! Static checks on emitted Verilog: Verilator lint with a documented waiver list, and an Icarus
//! compile.
//!
//! The file is written as `<top>.v`. No `WIDTH` waiver is needed: the generator keeps every
//! operand width exact.

use crate::stage;
use smrtl_hdl::tools::{require, run, ToolError};
use std::process::Command;

/// Verilator warnings turned off for `--lint-only -Wall`, each with its reason; every other
/// warning stays on and fails the lint.
pub const LINT_WAIVERS: &[(&str, &str)] = &[
    (
        "UNUSEDSIGNAL",
    "spec-fixed ports carry bits a mechanism ignores by definition: address bits below the bank \
     field (and above it in Literal mode, which has no layers), clock/reset when the block is \
     purely combinational; likewise internal arithmetic wires keep their full width while an \
     output takes only the bits that carry the value (d - 1 fits log2 L bits, cycles drops the \
     log2 P low bits of d + P - 1)",
    ),
    (
        "DECLFILENAME",
        "one generated file holds a whole hierarchy (the top and one module per distinct child \
         configuration, docs/verilog.md); only the top module can match the file's name",
    ),
];

/// `verilator --lint-only -Wall` on `verilog` with [`LINT_WAIVERS`] applied.
pub fn lint_verilator(verilog: &str, top: &str) -> Result<(), ToolError> {
    const TOOL: &str = "verilator";
    let verilator = require(TOOL)?;
    let staged = stage(TOOL, verilog, top)?;
    let mut cmd = Command::new(verilator);
    cmd.current_dir(staged.path()).args([
        "--lint-only",
        "-Wall",
        "-Wno-context",
        "--top-module",
        top,
    ]);
    for (warning, _) in LINT_WAIVERS {
        cmd.arg(format!("-Wno-{warning}"));
    }
    cmd.arg(format!("{top}.v"));
    run(TOOL, &mut cmd)
        .map(|_| ())
        .map_err(|e| condense(e, |l| l.starts_with('%')))
}

/// `iverilog -g2012 -s <top>` on `verilog` (compile and elaborate only).
pub fn compile_icarus(verilog: &str, top: &str) -> Result<(), ToolError> {
    const TOOL: &str = "iverilog";
    let iverilog = require(TOOL)?;
    let staged = stage(TOOL, verilog, top)?;
    let out = staged.path().join(format!("{top}.vvp"));
    run(
        TOOL,
        Command::new(iverilog)
            .current_dir(staged.path())
            .args(["-g2012", "-s", top, "-o"])
            .arg(&out)
            .arg(format!("{top}.v")),
    )
    .map(|_| ())
    .map_err(|e| condense(e, |l| l.contains("error")))
}

/// Keeps only the diagnostic lines of a tool failure, on one line.
fn condense(e: ToolError, keep: impl Fn(&str) -> bool) -> ToolError {
    match e {
        ToolError::Failed { tool, message } => {
            let lines: Vec<&str> = message.lines().map(str::trim).filter(|l| keep(l)).collect();
            let message = if lines.is_empty() {
                message
                    .lines()
                    .map(str::trim)
                    .collect::<Vec<_>>()
                    .join("; ")
            } else {
                lines.join("; ")
            };
            ToolError::Failed { tool, message }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waivers_are_documented_and_few() {
        for (warning, reason) in LINT_WAIVERS {
            assert!(warning.chars().all(|c| c.is_ascii_uppercase()), "{warning}");
            assert!(!reason.is_empty());
            assert_ne!(
                *warning, "WIDTH",
                "operand widths are exact by construction"
            );
        }
        assert!(LINT_WAIVERS.len() <= 2);
    }
}
