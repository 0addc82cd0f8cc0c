//! The kernel language of the coherent memory system (docs/stall-inspector.md §10.4): the
//! seed-001 text structure (header lines, `LABEL:` blocks, `bra`, `cbra ... trips N | p F`,
//! `exit`, read by [`crate::kernel::cfg_text::parse_ext`]) with the register branches `cbra.nz`
//! / `cbra.z` and the coherent system's instruction set, lowered to one [`Op`] list that every
//! warp of every SM runs (SIMT style: per-warp behaviour through `%sm`, `%warp`, `%nsm`,
//! `%nwarp`).
//!
//! ```text
//! kernel count
//! warps 4
//! param protocol=denovo
//! TOP:
//!     mov 1 -> r1
//!     atom.add [0x1000] r1 -> r2      # one lane: the counter's old value
//!     ld.global [r2 + 4*lane] -> r3   # 32 lanes from the value's address
//!     exit
//! ```

use super::params::{CohParams, LANES, REGS};
use super::prog::{check, xfer_check, AtomF, Cond, Func, Op, Pat, Reg, IMM, NONE, SPECIALS, SR_SM};
use super::CohSystem;
use crate::kernel::cfg_text::{parse_ext, BlockLines};
use smrtl_hdl::BlockParams as _;
use std::collections::HashMap;
use std::sync::Arc;

/// Most ops of a kernel (its blocks' instructions and terminators).
pub const MAX_OPS: usize = 100_000;
/// Most `cbra ... trips N | p F` branches (every warp counts its visits of each).
pub const MAX_RULES: usize = 4096;

/// The header keywords a coherent-system kernel may use.
const HEADERS: &str = "kernel, warps, seed, param";

/// Every mnemonic, as the errors list them.
pub const MNEMONICS: &str = "ld.global, st.global, atom.add, atom.exch, atom.cas, fence.acq, \
fence.rel, bar, ld.shared, st.shared, ld.stash, st.stash, stash.map, dma.ld, dma.st, alu, mul, \
sfu, mov, add, sub, and, or, xor, shl, shr, min, max, setlt, seteq, setne, hash";

/// A parsed kernel: the one program every launched warp runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CohKernel {
    pub name: String,
    /// Header `param K=V`, applied before the command line's --set.
    pub sets: Vec<(String, String)>,
    /// Warps launched per SM (`warps N`, default 1); each runs `ops`.
    pub warps: u32,
    /// Seed of the `p F` branches.
    pub seed: u64,
    /// The program, targets resolved to op indices.
    pub ops: Vec<Op>,
}

impl CohKernel {
    /// The params: `preset` (or Table I), then the kernel's `param` lines, then `cli`.
    pub fn params(&self, preset: Option<&str>, cli: &[(&str, &str)]) -> Result<CohParams, String> {
        let mut pairs: Vec<(&str, &str)> = self
            .sets
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        pairs.extend_from_slice(cli);
        CohParams::resolve_pairs(preset, &pairs).map_err(|e| e.to_string())
    }
}

impl CohSystem {
    /// The system running kernel `k` on every SM of `p` (whose values already include the
    /// kernel's `sets`: see [`CohKernel::params`]).
    pub fn from_kernel(p: &CohParams, k: &CohKernel) -> Result<CohSystem, String> {
        p.check().map_err(|e| e.to_string())?;
        if k.warps == 0 || k.warps > p.warps {
            return Err(format!(
                "kernel `{}`: warps {}; allowed: 1..={} (the param `warps`, warp slots per SM)",
                k.name, k.warps, p.warps
            ));
        }
        // One copy of the ops, shared by every warp.
        let ops: Arc<[Op]> = Arc::from(k.ops.as_slice());
        let sm = vec![ops; k.warps as usize];
        let mut sys = CohSystem::with_shared(p, vec![sm; p.sms as usize])?;
        for s in &mut sys.sms {
            s.seed = k.seed;
        }
        Ok(sys)
    }
}

/// Reads a kernel; errors are one line naming the line and the allowed values.
pub fn parse(text: &str) -> Result<CohKernel, String> {
    let (f, ext) = parse_ext(text).map_err(|e| smrtl_hdl::shown(&e.0))?;
    for (h, line) in &ext.headers {
        if !matches!(h.as_str(), "kernel" | "warps" | "seed" | "param") {
            return Err(format!(
                "line {line}: header `{h}` is for seed-001 kernels; allowed: {HEADERS}, or a `LABEL:`"
            ));
        }
    }
    let mut sets = Vec::with_capacity(ext.params.len());
    for (k, v, line) in &ext.params {
        // Names and values are checked now (the message names the param and what it allows).
        if let Err(e) = CohParams::resolve_pairs(None, &[(k.as_str(), v.as_str())]) {
            return Err(smrtl_hdl::shown(&format!("line {line}: {e}")));
        }
        sets.push((k.clone(), v.clone()));
    }
    let ops = lower(&f.blocks, &ext.blocks).map_err(|e| smrtl_hdl::shown(&e))?;
    check(&ops)?;
    Ok(CohKernel {
        name: f.name,
        sets,
        warps: ext.warps.map_or(1, |(w, _)| w),
        seed: f.seed,
        ops,
    })
}

/// The blocks as one op list: each block's instructions, then its terminator (a jump to the
/// next block is a fall-through, no op; no successor is `Exit`).
fn lower(
    blocks: &[crate::kernel::cfg_file::BlockFile],
    lines: &[BlockLines],
) -> Result<Vec<Op>, String> {
    let mut names = HashMap::new();
    for (i, (b, l)) in blocks.iter().zip(lines).enumerate() {
        if names.insert(b.name.as_str(), i).is_some() {
            return Err(format!(
                "line {}: block `{}` declared twice",
                l.label, b.name
            ));
        }
    }
    // First pass: each block's first op.
    let mut start = Vec::with_capacity(blocks.len());
    let mut n = 0usize;
    for (i, b) in blocks.iter().enumerate() {
        start.push(n);
        let falls = b.next.len() == 1 && names.get(b.next[0].as_str()) == Some(&(i + 1));
        n += b.instrs.len() + usize::from(!falls);
        if n > MAX_OPS {
            return Err(format!("line {}: more than {MAX_OPS} ops", lines[i].label));
        }
    }
    let mut ops = Vec::with_capacity(n);
    let mut rules = 0usize;
    for (i, (b, l)) in blocks.iter().zip(lines).enumerate() {
        for (text, &line) in b.instrs.iter().zip(&l.instrs) {
            ops.push(instr(text).map_err(|m| format!("line {line}: {m}"))?);
        }
        let target = |name: &str| {
            names
                .get(name)
                .map(|&j| start[j] as u32)
                .ok_or_else(|| format!("line {}: unknown label `{name}`", l.term))
        };
        match b.next.len() {
            0 => ops.push(Op::Exit),
            1 if names.get(b.next[0].as_str()) == Some(&(i + 1)) => {}
            1 => ops.push(Op::Bra {
                to: target(&b.next[0])?,
            }),
            _ => {
                let cond = match &l.cond {
                    Some(c) => {
                        let r = operand(&c.reg)
                            .ok()
                            .filter(|&(r, _)| r != IMM)
                            .map(|(r, _)| r)
                            .ok_or_else(|| {
                                format!(
                                    "line {}: branch register `{}`; allowed: r0..r{}, {}",
                                    l.term,
                                    c.reg,
                                    REGS - 1,
                                    SPECIALS.join(", ")
                                )
                            })?;
                        if c.zero {
                            Cond::Z(r)
                        } else {
                            Cond::Nz(r)
                        }
                    }
                    None => {
                        let rule = b.branch.unwrap_or_default();
                        rule.check().map_err(|m| format!("line {}: {m}", l.term))?;
                        Cond::Rule(rule)
                    }
                };
                // Only the rules count visits: they alone take an id.
                let id = match cond {
                    Cond::Rule(_) if rules >= MAX_RULES => {
                        return Err(format!(
                            "line {}: more than {MAX_RULES} `trips` / `p` branches",
                            l.term
                        ))
                    }
                    Cond::Rule(_) => {
                        rules += 1;
                        rules - 1
                    }
                    _ => 0,
                };
                ops.push(Op::Cbra {
                    to: [target(&b.next[0])?, target(&b.next[1])?],
                    cond,
                    id: id as u16,
                });
            }
        }
    }
    Ok(ops)
}

/// An operand: `rN`, a special register, or an immediate (decimal or `0x` hex; `IMM` and
/// its value).
fn operand(t: &str) -> Result<(Reg, u64), String> {
    if let Some(i) = SPECIALS.iter().position(|&s| s == t) {
        return Ok((SR_SM + i as Reg, 0));
    }
    if let Some(n) = t.strip_prefix('r') {
        return match n.parse::<usize>() {
            Ok(n) if n < REGS => Ok((n as Reg, 0)),
            _ => Err(format!("register `{t}`; allowed: r0..r{}", REGS - 1)),
        };
    }
    number(t).map(|v| (IMM, v)).ok_or_else(|| {
        format!(
            "operand `{t}`; allowed: r0..r{}, {}, or a number (decimal or 0x hex)",
            REGS - 1,
            SPECIALS.join(", ")
        )
    })
}

/// A non-negative number, decimal or `0x` hex.
fn number(t: &str) -> Option<u64> {
    match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => t.parse().ok(),
    }
}

/// A destination: `r0..r63`.
fn dest(t: &str) -> Result<Reg, String> {
    match operand(t.trim()) {
        Ok((r, _)) if (r as usize) < REGS => Ok(r),
        _ => Err(format!(
            "destination `{}`; allowed: r0..r{}",
            t.trim(),
            REGS - 1
        )),
    }
}

/// An address `[BASE + S*lane] [lanes N]` (docs §10.4): terms `rN` or a special register (at
/// most one), numbers (summed) and a lane term (`S*lane`, `lane*S` or `lane`).
fn address(inner: &str, lanes: Option<u64>) -> Result<Pat, String> {
    let bad = |t: &str| {
        format!(
            "address term `{t}`; allowed: `[BASE + S*lane]` with BASE a register, a special register and / or numbers"
        )
    };
    let mut pat = Pat {
        base: 0,
        stride: 0,
        lanes: 1,
        reg: NONE,
    };
    let mut lane_term = false;
    let compact: String = inner.chars().filter(|c| !c.is_whitespace()).collect();
    for t in compact.split('+') {
        let stride = match t.split_once('*') {
            Some(("lane", s)) | Some((s, "lane")) => Some(number(s).ok_or_else(|| bad(t))?),
            _ if t == "lane" => Some(1),
            _ => None,
        };
        if let Some(s) = stride {
            if lane_term {
                return Err(format!("address `[{inner}]`: one lane term at most"));
            }
            (pat.stride, lane_term) = (s, true);
            continue;
        }
        match operand(t).map_err(|_| bad(t))? {
            (IMM, v) => pat.base = pat.base.wrapping_add(v),
            (r, _) if pat.reg == NONE => pat.reg = r,
            _ => return Err(format!("address `[{inner}]`: one register at most")),
        }
    }
    let n = lanes.unwrap_or(if lane_term { LANES as u64 } else { 1 });
    if !(1..=LANES as u64).contains(&n) {
        return Err(format!("lanes {n}; allowed: 1..={LANES}"));
    }
    pat.lanes = n as u8;
    Ok(pat)
}

/// One instruction of a block, e.g. `ld.global [r3 + 4*lane] -> r1`.
fn instr(text: &str) -> Result<Op, String> {
    let (body, dst) = match text.split_once("->") {
        Some((b, d)) => (b, Some(dest(d)?)),
        None => (text, None),
    };
    let (head, at, rest) = match body.split_once('[') {
        Some((h, r)) => {
            let (inner, after) = r
                .split_once(']')
                .ok_or_else(|| format!("`[` without `]` in `{}`", text.trim()))?;
            (h, Some(inner), after)
        }
        None => (body, None, ""),
    };
    let mut toks = head.split_whitespace();
    let name = toks.next().ok_or("empty instruction")?;
    let mut args: Vec<&str> = toks.chain(rest.split_whitespace()).collect();
    let mut lanes = None;
    if let Some(i) = args.iter().position(|&a| a == "lanes") {
        let n = args.get(i + 1).and_then(|t| number(t));
        lanes = Some(n.ok_or_else(|| format!("`lanes` needs 1..={LANES}"))?);
        args.drain(i..i + 2);
    }
    let shape = Shape::of(name)
        .ok_or_else(|| format!("unknown instruction `{name}`; allowed: {MNEMONICS}"))?;
    shape.build(name, at, lanes, &args, dst)
}

/// What an instruction takes: an address, operands, a destination.
enum Shape {
    /// A lane-addressed access: (operands, destination needed).
    Mem(usize, bool),
    /// No operands (fences, barrier).
    Bare(Op),
    /// `SPM GLOBAL BYTES` (stash map, DMA).
    Xfer,
    /// A compute function with `min..=max` operands and a destination.
    Calc(Func, usize, usize),
}

impl Shape {
    fn of(name: &str) -> Option<Shape> {
        use Func::*;
        Some(match name {
            "ld.global" | "ld.shared" | "ld.stash" => Shape::Mem(0, true),
            "st.global" | "st.shared" | "st.stash" => Shape::Mem(1, false),
            "atom.add" | "atom.exch" => Shape::Mem(1, true),
            "atom.cas" => Shape::Mem(2, true),
            "fence.acq" => Shape::Bare(Op::Acquire),
            "fence.rel" => Shape::Bare(Op::Release),
            "bar" => Shape::Bare(Op::Barrier),
            "stash.map" | "dma.ld" | "dma.st" => Shape::Xfer,
            "alu" => Shape::Calc(Add, 0, 2),
            "mul" => Shape::Calc(Mul, 0, 2),
            "sfu" => Shape::Calc(Sfu, 0, 2),
            "mov" => Shape::Calc(Mov, 1, 1),
            "hash" => Shape::Calc(Hash, 1, 1),
            _ => {
                let f = match name {
                    "add" => Add,
                    "sub" => Sub,
                    "and" => And,
                    "or" => Or,
                    "xor" => Xor,
                    "shl" => Shl,
                    "shr" => Shr,
                    "min" => Min,
                    "max" => Max,
                    "setlt" => Setlt,
                    "seteq" => Seteq,
                    "setne" => Setne,
                    _ => return None,
                };
                Shape::Calc(f, 2, 2)
            }
        })
    }

    fn build(
        &self,
        name: &str,
        at: Option<&str>,
        lanes: Option<u64>,
        args: &[&str],
        dst: Option<Reg>,
    ) -> Result<Op, String> {
        let addressed = matches!(self, Shape::Mem(..));
        let xfer_at = matches!(self, Shape::Xfer) && at.is_some();
        if at.is_some() != addressed && !xfer_at {
            return Err(if addressed {
                format!("`{name}` needs an address `[BASE + S*lane]`")
            } else {
                format!("`{name}` takes no address")
            });
        }
        if lanes.is_some() && !addressed {
            return Err(format!("`{name}` takes no `lanes`"));
        }
        let wants_dst = matches!(self, Shape::Mem(_, true) | Shape::Calc(..));
        match (wants_dst, dst) {
            (true, None) => return Err(format!("`{name}` needs `-> rD`")),
            (false, Some(_)) => return Err(format!("`{name}` writes no register")),
            _ => {}
        }
        let (lo, hi) = match *self {
            Shape::Mem(n, _) => (n, n),
            Shape::Bare(_) => (0, 0),
            Shape::Xfer => (3 - usize::from(xfer_at), 3 - usize::from(xfer_at)),
            Shape::Calc(_, lo, hi) => (lo, hi),
        };
        if !(lo..=hi).contains(&args.len()) {
            let want = if lo == hi {
                format!("{lo}")
            } else {
                format!("{lo}..={hi}")
            };
            return Err(format!(
                "`{name}` takes {want} operands, got {}",
                args.len()
            ));
        }
        let d = dst.unwrap_or(NONE);
        match *self {
            Shape::Bare(op) => Ok(op),
            Shape::Xfer => xfer(name, at, args),
            Shape::Calc(f, ..) => calc(f, args, d),
            Shape::Mem(..) => {
                let at = address(at.unwrap_or_default(), lanes)?;
                let mut regs = [NONE; 2];
                for (r, a) in regs.iter_mut().zip(args) {
                    *r = match operand(a)? {
                        (IMM, _) => {
                            return Err(format!(
                                "`{name}` operand `{a}`: a register; allowed: r0..r{}, {}",
                                REGS - 1,
                                SPECIALS.join(", ")
                            ))
                        }
                        (r, _) => r,
                    };
                }
                Ok(mem_op(name, at, regs, d))
            }
        }
    }
}

/// A lane-addressed access from its mnemonic (`regs`: its operands in order).
fn mem_op(name: &str, at: Pat, regs: [Reg; 2], dst: Reg) -> Op {
    let atom = |f, src, cmp| Op::Atom {
        f,
        dst,
        src,
        cmp,
        at,
    };
    match name {
        "ld.global" => Op::Ld { dst, at },
        "ld.shared" => Op::SpLd { dst, at },
        "ld.stash" => Op::StashLd { dst, at },
        "st.global" => Op::St { src: regs[0], at },
        "st.shared" => Op::SpSt { src: regs[0], at },
        "st.stash" => Op::StashSt { src: regs[0], at },
        "atom.add" => atom(AtomF::Add, regs[0], NONE),
        "atom.exch" => atom(AtomF::Exch, regs[0], NONE),
        _ => atom(AtomF::Cas, regs[1], regs[0]),
    }
}

/// `stash.map` / `dma.ld` / `dma.st SPM GLOBAL BYTES`, GLOBAL a number or an address
/// `[rX + N]` (no lane term) whose register is read at issue.
fn xfer(name: &str, at: Option<&str>, args: &[&str]) -> Result<Op, String> {
    let bad = |a: &str| {
        format!(
            "`{name}` operand `{a}`; allowed: SPM GLOBAL BYTES, numbers (decimal or 0x hex), GLOBAL also `[rX + N]`"
        )
    };
    let mut nums = args.iter().map(|a| number(a).ok_or_else(|| bad(a)));
    let spm = nums.next().ok_or_else(|| bad(""))??;
    let (global, reg) = match at {
        Some(inner) => {
            let p = address(inner, None)?;
            if p.stride != 0 || p.lanes != 1 {
                return Err(format!("`{name}`: GLOBAL `[{inner}]` takes no lane term"));
            }
            (p.base, p.reg)
        }
        None => (nums.next().ok_or_else(|| bad(""))??, NONE),
    };
    let bytes = nums.next().ok_or_else(|| bad(""))??;
    xfer_check(spm, global, bytes).map_err(|m| format!("`{name}`: {m}"))?;
    Ok(match name {
        "stash.map" => Op::StashMap {
            spm,
            global,
            bytes,
            reg,
        },
        _ => Op::Dma {
            spm,
            global,
            bytes,
            to_spm: name == "dma.ld",
            reg,
        },
    })
}

/// A compute instruction: at most one distinct immediate.
fn calc(f: Func, args: &[&str], dst: Reg) -> Result<Op, String> {
    let mut regs = [NONE; 2];
    let mut imm = None;
    for (r, a) in regs.iter_mut().zip(args) {
        let (x, v) = operand(a)?;
        if x == IMM {
            if imm.is_some_and(|i| i != v) {
                return Err("one immediate per instruction at most".into());
            }
            imm = Some(v);
        }
        *r = x;
    }
    Ok(Op::Calc {
        f,
        dst,
        a: regs[0],
        b: regs[1],
        imm: imm.unwrap_or(0),
    })
}
