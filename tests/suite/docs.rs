//! The pages run: every command shown in README.md, docs/*.md and examples/**/README.md is run
//! with the `smrtl` under test, and its shown output is compared with what it prints
//! (docs/architecture.md §5, "Pages that run").
//!
//! - A ` ```text ` or ` ```console ` block is a transcript: `$ COMMAND` lines (a trailing `\`
//!   continues a command), each followed by its output. A line `...` in the shown output stands
//!   for any number of lines, and `...` inside a line for any text (timings, paths). The exit
//!   code must be 2 when the output shows an `error: ` line, 1 when it shows a line starting
//!   `FAIL`, else 0.
//! - A ` ```sh ` block lists commands without output: each must exit 0.
//! - `cargo run --release --` runs the binary under test; `cargo test`, `cargo install` and
//!   `apt-get` are the environment's commands (what CI itself runs) and are not run here.
//! - A block whose info string says `slow` (long runs, timing figures) runs only in the slow
//!   tier (`cargo test --release --test suite docs:: -- --ignored`); its output is compared the same way.
//!
//! Each page runs in a scratch directory with a copy of `examples/`, the FuseSoC generator and
//! an empty `docs/`, so a page's commands can use each other's files and never write into the
//! checkout. The checkout's `.venv` (docs/prove.md §3) stays the commands' virtual environment:
//! `SMRTL_VENV` is set to it unless already set, and its `bin` follows smrtl's on the PATH.
//!
//! `SMRTL_DOCS_PAGE=TEXT` runs only the pages whose path contains TEXT (`docs/cli.md`); with
//! `-- --nocapture` each command's time and exit code is printed as it finishes.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One command of a page and what the page shows for it.
#[derive(Debug)]
struct Shown {
    page: String,
    line: usize,
    command: String,
    /// `None` for a ` ```sh ` command (exit 0, output not shown).
    output: Option<Vec<String>>,
    slow: bool,
}

/// The pages: README.md, docs/*.md, examples/**/README.md.
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut v = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    v.extend(docs);
    let mut ex: Vec<PathBuf> = std::fs::read_dir(root.join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path().join("README.md"))
        .filter(|p| p.exists())
        .collect();
    ex.sort();
    v.extend(ex);
    v
}

/// Commands the tests do not run: the environment's own (CI runs them).
fn environment(command: &str) -> bool {
    ["cargo test", "cargo install", "apt-get", "sudo "]
        .iter()
        .any(|c| command.starts_with(c))
}

/// The commands a page shows, in order.
fn parse(page: &str, text: &str) -> Vec<Shown> {
    let mut out = vec![];
    let mut lines = text.lines().enumerate().peekable();
    while let Some((n, line)) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let kind = info.split_whitespace().next().unwrap_or("");
        let slow = info.split_whitespace().any(|w| w == "slow");
        let mut body = vec![];
        for (m, l) in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                break;
            }
            body.push((m + 1, l));
        }
        match kind {
            "text" | "console" => out.extend(transcript(page, &body, slow)),
            "sh" => out.extend(listing(page, &body, slow)),
            _ => {}
        }
        let _ = n;
    }
    out
}

/// `$ COMMAND` lines and their outputs.
fn transcript(page: &str, body: &[(usize, &str)], slow: bool) -> Vec<Shown> {
    let mut out: Vec<Shown> = vec![];
    let mut i = 0;
    while i < body.len() {
        let (n, l) = body[i];
        i += 1;
        let Some(first) = l.strip_prefix("$ ") else {
            if let Some(s) = out.last_mut() {
                s.output.as_mut().unwrap().push(l.trim_end().to_string());
            }
            continue;
        };
        let mut command = first.to_string();
        while command.ends_with('\\') && i < body.len() {
            command.pop();
            command.push(' ');
            command.push_str(body[i].1.trim());
            i += 1;
        }
        out.push(Shown {
            page: page.into(),
            line: n,
            command,
            output: Some(vec![]),
            slow,
        });
    }
    for s in &mut out {
        let o = s.output.as_mut().unwrap();
        while o.last().is_some_and(|l| l.is_empty()) {
            o.pop();
        }
    }
    out
}

/// A ` ```sh ` block: one command per line (comments after `#` dropped).
fn listing(page: &str, body: &[(usize, &str)], slow: bool) -> Vec<Shown> {
    body.iter()
        .filter_map(|&(n, l)| {
            let command = l.split(" #").next().unwrap_or("").trim();
            (!command.is_empty() && !command.starts_with('#')).then(|| Shown {
                page: page.into(),
                line: n,
                command: command.into(),
                output: None,
                slow,
            })
        })
        .collect()
}

/// Whether `line` matches `pattern`, where `...` in the pattern stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let parts: Vec<&str> = pattern.split("...").collect();
    if parts.len() == 1 {
        return pattern == line;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !line.starts_with(first) || line.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &line[first.len()..];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(k) => rest = &rest[k + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// Whether `lines` match the shown `pattern` lines (a `...` line matches any number of lines).
fn matches(pattern: &[String], lines: &[&str]) -> bool {
    match pattern.split_first() {
        None => lines.is_empty(),
        Some((p, rest)) if p.trim() == "..." => {
            (0..=lines.len()).any(|k| matches(rest, &lines[k..]))
        }
        Some((p, rest)) => {
            !lines.is_empty() && line_matches(p.trim_end(), lines[0]) && matches(rest, &lines[1..])
        }
    }
}

/// The exit code a shown output promises.
fn expected_code(output: &[String]) -> i32 {
    if output.iter().any(|l| l.starts_with("error: ")) {
        2
    } else if output.iter().any(|l| l.starts_with("FAIL")) {
        1
    } else {
        0
    }
}

/// A scratch directory for one page: a copy of `examples/`, of the FuseSoC generator
/// (`smrtl.core`, `fusesoc/`: docs/verilog.md, "From FuseSoC") and an empty `docs/`.
fn scratch(root: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for part in ["examples", "smrtl.core", "fusesoc"] {
        let ok = Command::new("cp")
            .args(["-r"])
            .arg(root.join(part))
            .arg(dir.path())
            .status()
            .unwrap()
            .success();
        assert!(ok, "copying {part}");
    }
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    dir
}

/// Longest a shown command may run outside the soak (`timeout` exits 124 beyond it): a longer
/// one belongs in a `slow` block.
const COMMAND_SECONDS: u32 = 120;

/// Runs `s` in `dir` with the binary under test first on the PATH; returns (code, output).
fn run(s: &Shown, dir: &Path) -> (i32, String) {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_smrtl"));
    let command = s.command.replace("cargo run --release --", "smrtl");
    let venv: PathBuf = std::env::var_os("SMRTL_VENV")
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv").into())
        .into();
    // The venv's tools (fusesoc) after smrtl, as on a user's PATH with the venv activated.
    let path = format!(
        "{}:{}:{}",
        bin.parent().unwrap().display(),
        venv.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("timeout")
        .arg(COMMAND_SECONDS.to_string())
        .args(["bash", "-c"])
        .arg(format!("exec 2>&1; {command}"))
        .current_dir(dir)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env("SMRTL_VENV", venv)
        .output()
        .expect("bash runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Runs every shown command (`slow` ones only when `slow` is set); returns the failures.
fn check_pages(slow: bool) -> (usize, Vec<String>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (mut ran, mut failures) = (0, vec![]);
    let only = std::env::var("SMRTL_DOCS_PAGE").ok();
    for page in pages(root) {
        let name = page.strip_prefix(root).unwrap().display().to_string();
        if only.as_ref().is_some_and(|o| !name.contains(o.as_str())) {
            continue;
        }
        let shown = parse(&name, &std::fs::read_to_string(&page).unwrap());
        let shown: Vec<Shown> = shown
            .into_iter()
            .filter(|s| !environment(&s.command) && s.slow == slow)
            .collect();
        if shown.is_empty() {
            continue;
        }
        let dir = scratch(root);
        for s in &shown {
            let start = std::time::Instant::now();
            let (code, text) = run(s, dir.path());
            eprintln!(
                "{:6.1} s  exit {code}  {}:{}: {}",
                start.elapsed().as_secs_f64(),
                s.page,
                s.line,
                s.command
            );
            ran += 1;
            let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
            let (want_code, ok) = match &s.output {
                Some(o) => (expected_code(o), matches(o, &lines)),
                None => (0, true),
            };
            if code != want_code || !ok {
                failures.push(format!(
                    "{}:{}: `{}` exited {code} (expected {want_code}){}\n--- printed:\n{text}",
                    s.page,
                    s.line,
                    s.command,
                    if ok {
                        ""
                    } else {
                        "; output differs from the page"
                    },
                ));
            }
        }
    }
    (ran, failures)
}

#[test]
fn every_shown_command_runs_as_shown() {
    let (ran, failures) = check_pages(false);
    assert!(ran > 0, "no command found in the pages");
    assert!(
        failures.is_empty(),
        "{} of {ran} commands differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The `slow` blocks: long runs and timing figures, the slow tier
/// (`cargo test --release --test suite docs:: -- --ignored`), not every CI run.
#[test]
#[ignore = "slow tier: cargo test --release --test suite docs:: -- --ignored"]
fn slow_shown_commands_run_as_shown() {
    let (ran, failures) = check_pages(true);
    assert!(ran > 0, "no slow command ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn elision_matches_lines_and_text() {
    let p = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(matches(&p(&["a", "...", "d"]), &["a", "b", "c", "d"]));
    assert!(matches(&p(&["a", "...", "d"]), &["a", "d"]));
    assert!(!matches(&p(&["a", "...", "d"]), &["a", "b"]));
    assert!(matches(&p(&["took ... s (ok)"]), &["took 2.8 s (ok)"]));
    assert!(!matches(&p(&["took ... s (ok)"]), &["took 2.8 ms"]));
    assert!(matches(&p(&["x", "..."]), &["x"]));
}
