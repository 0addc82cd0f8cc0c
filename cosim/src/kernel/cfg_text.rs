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

/// Reads the text form.
pub fn parse(text: &str) -> Result<ProgramFile, CfgError> {
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
            match head {
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
                }
                "lock" => f.locks.push(LockPreset {
                    pair: num(line, "lock PAIR OWNER", toks.next())?,
                    owner: num(line, "lock PAIR OWNER", toks.next())?,
                }),
                other => {
                    return Err(err(format!(
                        "unknown header `{other}`; allowed: kernel, threads, grid, tb_smem, t, seed, shared, param, lock, or a `LABEL:`"
                    )))
                }
            }
            continue;
        };
        if closed {
            return Err(err(format!(
                "`{l}` follows block `{}`'s terminator; start a block with `LABEL:`",
                block.name
            )));
        }
        match head {
            "exit" => closed = true,
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
                    (Some(x), _) => {
                        return Err(err(format!(
                            "`cbra` rule `{x}`; allowed: `trips N` or `p F`"
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
    Ok(f)
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
