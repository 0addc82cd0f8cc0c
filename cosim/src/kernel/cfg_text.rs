//! The text form of a kernel with control flow (docs/scratchpad-sharing.md §6.0), read into the
//! JSON form's [`ProgramFile`]:
//!
//! ```text
//! # backprop-like: a private phase, a shared loop, a post-release phase
//! kernel demo
//! threads 64
//! grid 8
//! t 1/10
//! shared A 1024
//! shared B 1024
//! BB1:
//!     st.shared A
//!     alu
//! LOOP:
//!     ld.shared B -> r1
//!     alu r1 -> r2
//!     cbra LOOP POST trips 4
//! POST:
//!     st.global r2
//!     exit
//! ```
//!
//! Header lines (before the first label): `kernel NAME`, `threads N`, `grid N`, `tb_smem N`,
//! `t F`, `seed N`, `shared NAME BYTES [@ OFFSET]`, `param KEY=VALUE`, `lock PAIR OWNER`. A block
//! is a `LABEL:` line and its instructions; it ends in `bra L`, `cbra L1 L2 [trips N | p F]` or
//! `exit`, or falls through to the next block (the last one exits). `#` starts a comment.
//!
//! The coherent system's kernels (docs/stall-inspector.md §10.4) share this structure and add
//! the header `warps N` and the register branches `cbra.nz rX L1 L2` / `cbra.z rX L1 L2`, read
//! by [`parse_ext`] with the line of every item; [`parse`] refuses them (seed-001 kernels have
//! no register values).

use crate::kernel::cfg_file::{BlockFile, CfgError, ProgramFile, Var};
use crate::kernel::program::{Branch, LockPreset};
use serde_json::Value;

fn num<T: std::str::FromStr>(line: usize, what: &str, tok: Option<&str>) -> Result<T, CfgError> {
    tok.and_then(|t| t.parse().ok()).ok_or_else(|| {
        CfgError(format!(
            "line {line}: `{what}` needs a non-negative integer"
        ))
    })
}

/// A `cbra.nz` / `cbra.z` condition: the register's name as written, and whether the branch
/// goes to its first label on zero (`cbra.z`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegCond {
    pub reg: String,
    pub zero: bool,
}

/// Where each item of a block was written (1-based lines), and its register condition.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockLines {
    pub label: usize,
    pub instrs: Vec<usize>,
    /// The terminator's line (the label's when it falls through or ends the program).
    pub term: usize,
    pub cond: Option<RegCond>,
}

/// What the text form holds beyond [`ProgramFile`]: the coherent kernels' items and the lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ext {
    /// `warps N` and its line.
    pub warps: Option<(u32, usize)>,
    /// Header lines, as (keyword, line), in order.
    pub headers: Vec<(String, usize)>,
    /// `param KEY=VALUE` lines, as (key, value, line), in order.
    pub params: Vec<(String, String, usize)>,
    /// One entry per block of the [`ProgramFile`].
    pub blocks: Vec<BlockLines>,
}

/// Reads the text form of a seed-001 kernel (no `warps`, no register branches).
pub fn parse(text: &str) -> Result<ProgramFile, CfgError> {
    let (f, ext) = parse_ext(text)?;
    if let Some((_, line)) = ext.warps {
        return Err(CfgError(format!(
            "line {line}: unknown header `warps`; allowed: kernel, threads, grid, tb_smem, t, seed, shared, param, lock, or a `LABEL:`"
        )));
    }
    if let Some(b) = ext.blocks.iter().find(|b| b.cond.is_some()) {
        return Err(CfgError(format!(
            "line {}: `cbra.nz` / `cbra.z` branch on register values, which only the coherent system's kernels have (docs/stall-inspector.md §10.4); allowed here: `cbra L1 L2 [trips N | p F]`",
            b.term
        )));
    }
    Ok(f)
}

/// Reads the text form with the coherent kernels' items and every item's line.
pub fn parse_ext(text: &str) -> Result<(ProgramFile, Ext), CfgError> {
    let mut ext = Ext::default();
    let mut f = ProgramFile {
        name: String::new(),
        shared: vec![],
        tb_smem: None,
        t: None,
        threads: None,
        grid: None,
        seed: 0,
        blocks: vec![],
        locks: vec![],
        params: Default::default(),
    };
    // Whether the current block's terminator was written.
    let mut closed = false;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        let err = |m: String| CfgError(format!("line {line}: {m}"));
        if let Some(label) = l.strip_suffix(':') {
            let label = label.trim();
            if label.is_empty() || label.contains(char::is_whitespace) {
                return Err(err(format!("bad label `{label}`")));
            }
            close(&mut f, closed, label);
            ext.blocks.push(BlockLines {
                label: line,
                term: line,
                ..BlockLines::default()
            });
            f.blocks.push(BlockFile {
                name: label.to_string(),
                instrs: vec![],
                next: vec![],
                branch: None,
            });
            closed = false;
            continue;
        }
        let mut toks = l.split_whitespace();
        let head = toks.next().expect("non-empty line");
        let Some(block) = f.blocks.last_mut() else {
            header(&mut f, &mut ext, head, &mut toks, line)?;
            continue;
        };
        if closed {
            return Err(err(format!(
                "`{l}` follows block `{}`'s terminator; start a block with `LABEL:`",
                block.name
            )));
        }
        let bl = ext.blocks.last_mut().expect("a block per label");
        if matches!(head, "exit" | "bra" | "cbra" | "cbra.nz" | "cbra.z") {
            bl.term = line;
        } else {
            bl.instrs.push(line);
        }
        match head {
            "exit" => closed = true,
            "cbra.nz" | "cbra.z" => {
                let (Some(r), Some(a), Some(b)) = (toks.next(), toks.next(), toks.next()) else {
                    return Err(err(format!("`{head}` needs a register and two labels")));
                };
                if let Some(x) = toks.next() {
                    return Err(err(format!("unexpected `{x}` after `{head}`'s labels")));
                }
                block.next = vec![a.to_string(), b.to_string()];
                bl.cond = Some(RegCond {
                    reg: r.to_string(),
                    zero: head == "cbra.z",
                });
                closed = true;
            }
            "bra" => {
                let t = toks
                    .next()
                    .ok_or_else(|| err("`bra` needs a label".into()))?;
                block.next = vec![t.to_string()];
                closed = true;
            }
            "cbra" => {
                let (a, b) = (toks.next(), toks.next());
                let (Some(a), Some(b)) = (a, b) else {
                    return Err(err("`cbra` needs two labels".into()));
                };
                block.next = vec![a.to_string(), b.to_string()];
                block.branch = match (toks.next(), toks.next()) {
                    (None, _) => None,
                    (Some("trips"), n) => Some(Branch::Trips(num(line, "trips", n)?)),
                    (Some("p"), Some(v)) => Some(Branch::P(v.parse().map_err(err)?)),
                    (Some("frac"), Some(v)) => Some(Branch::Frac(v.parse().map_err(err)?)),
                    (Some(x), _) => {
                        return Err(err(format!(
                            "`cbra` rule `{x}`; allowed: `trips N`, `p F` or `frac F`"
                        )))
                    }
                };
                closed = true;
            }
            _ => block.instrs.push(l.to_string()),
        }
    }
    close(&mut f, closed, "");
    if f.blocks.is_empty() {
        return Err(CfgError("no blocks: start one with a `LABEL:` line".into()));
    }
    Ok((f, ext))
}

/// A header line (before the first label).
fn header<'a>(
    f: &mut ProgramFile,
    ext: &mut Ext,
    head: &str,
    toks: &mut impl Iterator<Item = &'a str>,
    line: usize,
) -> Result<(), CfgError> {
    let err = |m: String| CfgError(format!("line {line}: {m}"));
    ext.headers.push((head.to_string(), line));
    match head {
        "warps" => ext.warps = Some((num(line, head, toks.next())?, line)),
        "kernel" => f.name = toks.next().unwrap_or("").to_string(),
        "threads" => f.threads = Some(num(line, head, toks.next())?),
        "grid" => f.grid = Some(num(line, head, toks.next())?),
        "tb_smem" => f.tb_smem = Some(num(line, head, toks.next())?),
        "seed" => f.seed = num(line, head, toks.next())?,
        "t" => {
            let v = toks.next().unwrap_or("");
            f.t = Some(v.parse().map_err(err)?);
        }
        "shared" => {
            let name = toks.next().unwrap_or("").to_string();
            let bytes = num(line, "shared NAME BYTES", toks.next())?;
            let offset = match toks.next() {
                Some("@") => Some(num(line, "@ OFFSET", toks.next())?),
                None => None,
                Some(x) => return Err(err(format!("unexpected `{x}` after the size"))),
            };
            f.shared.push(Var { name, bytes, offset });
        }
        "param" => {
            let kv = toks.next().unwrap_or("");
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| err(format!("`param` expects KEY=VALUE, got `{kv}`")))?;
            f.params.insert(k.to_string(), Value::String(v.to_string()));
            ext.params.push((k.to_string(), v.to_string(), line));
        }
        "lock" => f.locks.push(LockPreset {
            pair: num(line, "lock PAIR OWNER", toks.next())?,
            owner: num(line, "lock PAIR OWNER", toks.next())?,
        }),
        other => {
            return Err(err(format!(
                "unknown header `{other}`; allowed: kernel, threads, grid, tb_smem, t, seed, shared, param, lock, or a `LABEL:` (coherent-system kernels: kernel, warps, seed, param)"
            )))
        }
    }
    Ok(())
}

/// Ends the last block before `next_label`: without a terminator it falls through to it, or
/// exits when it is the last block.
fn close(f: &mut ProgramFile, closed: bool, next_label: &str) {
    if let Some(b) = f.blocks.last_mut() {
        if !closed && !next_label.is_empty() {
            b.next = vec![next_label.to_string()];
        }
    }
}
