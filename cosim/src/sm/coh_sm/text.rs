// TEMPORARY stand-in for the kernel language (wt-lang); replaced at merge.
//! A coherent-system kernel file (docs/stall-inspector.md §10.8), in the smallest form that
//! drives [`CohSystem`] until the kernel language lands: straight-line per-warp operation
//! lists (`prog::Op`), one line per warp.
//!
//! ```text
//! # a comment
//! kernel NAME
//! param protocol=denovo          (applied before the command line's --set)
//! warp SM WARP [xN]: op; op; ...  (xN: the list N times)
//! ```
//!
//! Ops: `comp rD rA rB LAT II`, `ld rD BASE STRIDE LANES`, `st rS …`, `atom rD rS …`,
//! `spld rD …`, `spst rS …`, `stashld rD …`, `stashst rS …`, `acquire`, `release`,
//! `barrier`, `stashmap SPM GLOBAL BYTES`, `dma SPM GLOBAL BYTES in|out`; `-` is no register,
//! numbers are decimal or 0x hex.

use super::params::CohParams;
use super::prog::{Op, Pat, Reg, NONE};
use super::CohSystem;

/// A kernel: its name, its header's params and each SM's warps' programs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CohKernel {
    pub name: String,
    /// Header `param K=V`, applied before the command line's --set.
    pub sets: Vec<(String, String)>,
    /// `progs[sm][warp]` (stand-in only).
    pub progs: Vec<Vec<Vec<Op>>>,
}

/// Most operations a warp's list may unroll to.
const MAX_OPS: usize = 1 << 20;

/// Parses a kernel file; the error names the line.
pub fn parse(text: &str) -> Result<CohKernel, String> {
    let mut k = CohKernel {
        name: "kernel".into(),
        ..CohKernel::default()
    };
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        let at = |e: String| format!("line {}: {e}", i + 1);
        if line.is_empty() {
            continue;
        }
        let (head, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        match head {
            "kernel" => k.name = rest.trim().to_string(),
            "param" => {
                let (key, value) = rest
                    .trim()
                    .split_once('=')
                    .ok_or_else(|| at("expected `param KEY=VALUE`".into()))?;
                k.sets.push((key.trim().into(), value.trim().into()));
            }
            "warp" => warp_line(&mut k, rest).map_err(at)?,
            other => return Err(at(format!("unknown directive `{other}`"))),
        }
    }
    Ok(k)
}

/// `SM WARP [xN]: ops`.
fn warp_line(k: &mut CohKernel, rest: &str) -> Result<(), String> {
    let (ids, ops) = rest
        .split_once(':')
        .ok_or("expected `warp SM WARP [xN]: op; op; ...`")?;
    let ids: Vec<&str> = ids.split_whitespace().collect();
    let (sm, warp, times) = match ids.as_slice() {
        [s, w] => (num(s)?, num(w)?, 1),
        [s, w, x] => {
            let n = x.strip_prefix('x').ok_or("expected xN after the warp")?;
            (num(s)?, num(w)?, num(n)?)
        }
        _ => return Err("expected `warp SM WARP [xN]:`".into()),
    };
    let (sm, warp) = (sm.min(1 << 16) as usize, warp.min(1 << 16) as usize);
    if sm >= 16 || warp >= 128 {
        return Err(format!("SM {sm} warp {warp}: SMs are 0..16, warps 0..128"));
    }
    let list: Vec<Op> = ops
        .split(';')
        .map(str::trim)
        .filter(|o| !o.is_empty())
        .map(op)
        .collect::<Result<_, _>>()?;
    if (list.len() as u64).saturating_mul(times) > MAX_OPS as u64 {
        return Err(format!("more than {MAX_OPS} operations in one warp"));
    }
    if k.progs.len() <= sm {
        k.progs.resize(sm + 1, vec![]);
    }
    let warps = &mut k.progs[sm];
    if warps.len() <= warp {
        warps.resize(warp + 1, vec![]);
    }
    for _ in 0..times {
        warps[warp].extend_from_slice(&list);
    }
    Ok(())
}

fn num(s: &str) -> Result<u64, String> {
    let r = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("`{s}` is not a number"))
}

fn reg(s: &str) -> Result<Reg, String> {
    if s == "-" {
        return Ok(NONE);
    }
    let n = s
        .strip_prefix('r')
        .ok_or(format!("`{s}`: a register is rN or -"))?;
    match num(n)? {
        r @ 0..=63 => Ok(r as Reg),
        _ => Err(format!("`{s}`: registers are r0..r63")),
    }
}

fn small(s: &str, what: &str) -> Result<u8, String> {
    u8::try_from(num(s)?).map_err(|_| format!("{what} `{s}` is above 255"))
}

fn pat(a: &[&str]) -> Result<Pat, String> {
    Ok(Pat {
        base: num(a[0])?,
        stride: num(a[1])?,
        lanes: small(a[2], "lanes")?,
    })
}

/// One operation.
fn op(text: &str) -> Result<Op, String> {
    let w: Vec<&str> = text.split_whitespace().collect();
    let want = |n: usize| {
        if w.len() == n + 1 {
            Ok(())
        } else {
            Err(format!("`{text}`: {} takes {n} operands", w[0]))
        }
    };
    let r1 = || reg(w[1]);
    Ok(match w[0] {
        "comp" => {
            want(5)?;
            Op::Comp {
                dst: r1()?,
                a: reg(w[2])?,
                b: reg(w[3])?,
                lat: small(w[4], "latency")?,
                ii: small(w[5], "interval")?,
            }
        }
        "ld" | "st" | "spld" | "spst" | "stashld" | "stashst" => {
            want(4)?;
            let (r, at) = (r1()?, pat(&w[2..])?);
            match w[0] {
                "ld" => Op::Ld { dst: r, at },
                "st" => Op::St { src: r, at },
                "spld" => Op::SpLd { dst: r, at },
                "spst" => Op::SpSt { src: r, at },
                "stashld" => Op::StashLd { dst: r, at },
                _ => Op::StashSt { src: r, at },
            }
        }
        "atom" => {
            want(5)?;
            Op::Atom {
                dst: r1()?,
                src: reg(w[2])?,
                at: pat(&w[3..])?,
            }
        }
        "acquire" | "release" | "barrier" => {
            want(0)?;
            match w[0] {
                "acquire" => Op::Acquire,
                "release" => Op::Release,
                _ => Op::Barrier,
            }
        }
        "stashmap" => {
            want(3)?;
            Op::StashMap {
                spm: num(w[1])?,
                global: num(w[2])?,
                bytes: num(w[3])?,
            }
        }
        "dma" => {
            want(4)?;
            let to_spm = match w[4] {
                "in" => true,
                "out" => false,
                d => return Err(format!("`{d}`: a DMA goes in or out")),
            };
            Op::Dma {
                spm: num(w[1])?,
                global: num(w[2])?,
                bytes: num(w[3])?,
                to_spm,
            }
        }
        other => return Err(format!("unknown operation `{other}`")),
    })
}

impl CohSystem {
    /// The system of params `p` running kernel `k` (its `sets` already applied to `p`).
    pub fn from_kernel(p: &CohParams, k: &CohKernel) -> Result<CohSystem, String> {
        CohSystem::new(p, k.progs.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_operation_and_names_the_bad_line() {
        let k = parse(
            "kernel t\nparam protocol=denovo\nwarp 1 0 x2: ld r1 0x80 4 32; comp r2 r1 - 4 1\n\
             warp 0 1: st r2 0 4 32; atom r3 - 0 0 1; spld r4 0 4 32; spst r4 0 4 32; stashmap 0 4096 1024\n\
             warp 0 2: stashld r5 0 4 8; stashst r5 0 4 8; dma 0 0 256 in; acquire; release; barrier",
        )
        .expect("valid");
        assert_eq!(k.name, "t");
        assert_eq!(k.sets, [("protocol".to_string(), "denovo".to_string())]);
        assert_eq!(k.progs.len(), 2);
        assert_eq!(k.progs[1][0].len(), 4);
        assert_eq!(k.progs[0][2].len(), 6);
        let e = parse("kernel t\nwarp 0 0: ld r99 0 4 32").expect_err("bad register");
        assert!(e.starts_with("line 2:"), "{e}");
    }
}
