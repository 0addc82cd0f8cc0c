//! External tools (Verilator, Icarus, Yosys): finding them, and the one-line error when missing.

use std::path::PathBuf;
use std::process::Command;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ToolError {
    #[error("{tool} not found on PATH; install it (Debian: apt-get install -y {package})")]
    Missing { tool: String, package: String },
    #[error("{tool} failed: {message}")]
    Failed { tool: String, message: String },
    #[error("I/O error while running {tool}: {message}")]
    Io { tool: String, message: String },
}

/// The Debian package that provides `tool`.
fn package_of(tool: &str) -> &str {
    match tool {
        "verilator" => "verilator",
        "iverilog" | "vvp" => "iverilog",
        "yosys" => "yosys",
        other => other,
    }
}

/// Path of `tool` if it is installed.
pub fn find(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// Path of `tool`, or the one-line "missing" error.
pub fn require(tool: &str) -> Result<PathBuf, ToolError> {
    find(tool).ok_or_else(|| ToolError::Missing {
        tool: tool.into(),
        package: package_of(tool).into(),
    })
}

/// Runs a command to completion; a non-zero exit becomes `Failed` with the tail of its output.
pub fn run(tool: &str, cmd: &mut Command) -> Result<std::process::Output, ToolError> {
    let out = cmd.output().map_err(|e| ToolError::Io {
        tool: tool.into(),
        message: e.to_string(),
    })?;
    if !out.status.success() {
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let tail: Vec<&str> = text.lines().rev().take(12).collect();
        return Err(ToolError::Failed {
            tool: tool.into(),
            message: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
        });
    }
    Ok(out)
}

/// True when the environment demands external tools (CI sets `SMRTL_REQUIRE_TOOLS=1`): tests
/// that need them must then fail, never skip.
pub fn tools_required() -> bool {
    std::env::var("SMRTL_REQUIRE_TOOLS").is_ok_and(|v| v == "1")
}

/// Whether a test may use every tool in `tools`: true when all are installed. When one is
/// missing, a run that requires tools (`SMRTL_REQUIRE_TOOLS=1`, as CI sets) panics instead of
/// skipping; otherwise the test prints "skipped" and should return.
pub fn external(tools: &[&str]) -> bool {
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| find(t).is_none())
        .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        !tools_required(),
        "{} not installed but SMRTL_REQUIRE_TOOLS=1: this test must not be skipped",
        missing.join(", ")
    );
    eprintln!("skipped: {} not installed", missing.join(", "));
    false
}
