//! External tools (Verilator, Icarus, Yosys, z3): finding them (the project's Python virtual
//! environment first, then PATH: docs/prove.md §3), and the one-line error when missing.

use std::path::{Path, PathBuf};
use std::process::Command;
use thiserror::Error;

/// A failed tool run, phrased for a one-line CLI error.
#[derive(Debug, Error)]
pub enum ToolError {
    #[error("{tool} not found on PATH; install it ({})", install_hint(.tool, .package))]
    Missing { tool: String, package: String },
    /// The tool ran and failed; `message` is the tail of its output (shown on one line).
    #[error("{tool} failed: {}", one_line(.message))]
    Failed { tool: String, message: String },
    #[error("I/O error while running {tool}: {message}")]
    Io { tool: String, message: String },
    /// A file or directory a run needs could not be made or used: what was done to which
    /// path, the system's reason, and what to do about it.
    #[error("cannot {action} {path}: {reason}; {remedy}")]
    Path {
        action: String,
        path: String,
        reason: String,
        remedy: String,
    },
}

impl ToolError {
    /// [`ToolError::Path`] for `error` while doing `action` (e.g. "create directory") to
    /// `path`, with `remedy` (e.g. "set SMRTL_CACHE_DIR to a writable directory").
    pub fn path(action: &str, path: &Path, error: &std::io::Error, remedy: &str) -> ToolError {
        ToolError::Path {
            action: action.into(),
            path: path.display().to_string(),
            reason: error.to_string(),
            remedy: remedy.into(),
        }
    }
}

/// A tool's (multi-line) output on one line: its non-blank lines, trimmed, joined by "; ".
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// The Debian package that provides `tool`.
fn package_of(tool: &str) -> &str {
    match tool {
        "verilator" => "verilator",
        "iverilog" | "vvp" => "iverilog",
        "yosys" | "yosys-smtbmc" => "yosys",
        other => other,
    }
}

/// How to install `tool` from Debian's `package`, and for a PyPI tool (z3) the virtual
/// environment route first.
fn install_hint(tool: &str, package: &str) -> String {
    let debian = format!("Debian: apt-get install -y {package}");
    match tool {
        "z3" => format!(
            "a current one from PyPI: python3 -m venv .venv && .venv/bin/pip install z3-solver \
             (smrtl looks in SMRTL_VENV, default the nearest .venv, before PATH); {debian}"
        ),
        t if t.starts_with("yowasp-") => format!(
            "from PyPI: python3 -m venv .venv && .venv/bin/pip install {t} (smrtl looks in \
             SMRTL_VENV, default the nearest .venv, before PATH)"
        ),
        _ => debian,
    }
}

/// The `bin` directory of the Python virtual environment smrtl takes PyPI tools (z3) from
/// (docs/prove.md §3): `$SMRTL_VENV/bin` when `SMRTL_VENV` is set and not empty, else the
/// `.venv/bin` of the current directory or of its nearest ancestor that has one (the
/// repository root's `.venv` from anywhere in the clone). `None` when there is none.
pub fn venv_bin() -> Option<PathBuf> {
    match std::env::var_os("SMRTL_VENV").filter(|v| !v.is_empty()) {
        Some(v) => Some(PathBuf::from(v).join("bin")).filter(|b| b.is_dir()),
        None => std::env::current_dir()
            .ok()?
            .ancestors()
            .map(|d| d.join(".venv").join("bin"))
            .find(|b| b.is_dir()),
    }
}

/// [`venv_bin`], then the directories of PATH.
fn search_dirs() -> Vec<PathBuf> {
    let path: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    venv_bin().into_iter().chain(path).collect()
}

/// Path of `tool` if it is installed: in [`venv_bin`] first, then on PATH.
pub fn find(tool: &str) -> Option<PathBuf> {
    search_dirs()
        .into_iter()
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// PATH for a child that runs tools itself (yosys-smtbmc runs `z3`): [`venv_bin`] first, then
/// this process's PATH, so the child finds the tools [`find`] finds.
pub fn child_path() -> std::ffi::OsString {
    std::env::join_paths(search_dirs())
        .unwrap_or_else(|_| std::env::var_os("PATH").unwrap_or_default())
}

/// Path of `tool`, or the one-line "missing" error.
pub fn require(tool: &str) -> Result<PathBuf, ToolError> {
    find(tool).ok_or_else(|| ToolError::Missing {
        tool: tool.into(),
        package: package_of(tool).into(),
    })
}

/// Runs a command to completion in its own process group ([`crate::cleanup::output`]: killed
/// with its children on an error or a signal); a non-zero exit becomes `Failed` with the tail of
/// its output, a program that is not there `Missing`.
pub fn run(tool: &str, cmd: &mut Command) -> Result<std::process::Output, ToolError> {
    let out = crate::cleanup::output(cmd).map_err(|e| {
        let program = Path::new(cmd.get_program());
        match cmd.get_current_dir() {
            // Spawning fails the same way when the working directory is gone.
            Some(dir) if !dir.is_dir() => ToolError::path(
                &format!("run {tool} in"),
                dir,
                &e,
                "the directory disappeared while smrtl ran; run again",
            ),
            _ if e.kind() == std::io::ErrorKind::NotFound
                && program.parent() == Some(Path::new("")) =>
            {
                ToolError::Missing {
                    tool: tool.into(),
                    package: package_of(tool).into(),
                }
            }
            _ => ToolError::path(
                "run",
                program,
                &e,
                &format!(
                    "check that it exists and is executable (Debian: apt-get install -y {})",
                    package_of(tool)
                ),
            ),
        }
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
