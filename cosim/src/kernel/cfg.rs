//! Kernels with control flow (docs/scratchpad-sharing.md §6.0): `.shared` variables and a
//! control-flow graph of basic blocks, the IR of the relssp compiler pass ([001] §6) and a
//! kernel the SM model runs once lowered to a [`Kernel`] with `bra` / `cbra` / `exit`.
//!
//! The JSON form (the first block is the entry; `next` lists successors: none = `exit`, one = a
//! jump, two = a branch):
//!
//! ```json
//! {"shared": [{"name": "A", "bytes": 64}, {"name": "B", "bytes": 128}], "tb_smem": 192,
//!  "t": "1/3", "threads": 64, "grid": 8,
//!  "blocks": [{"name": "BB1", "instrs": ["st.shared A", "alu"], "next": ["BB2"]},
//!             {"name": "BB2", "instrs": ["ld.shared B -> r1", "alu r1 -> r2"],
//!              "next": ["BB2", "BB3"], "branch": {"trips": 4}},
//!             {"name": "BB3", "instrs": ["st.global r2"], "next": []}]}
//! ```
//!
//! The text form of the same IR (docs §6.0) is read by [`Program::parse`] too.

pub use crate::kernel::cfg_file::{BlockFile, CfgError, ProgramFile, Var};
use crate::kernel::launch::Ratio;
use crate::kernel::program::{Branch, Instr, Kernel, LockPreset, Offsets, Op, MAX_GRID, REGS};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Most basic blocks of a program.
pub const MAX_BLOCKS: usize = 10_000;
/// Most instructions of a program, over all blocks.
pub const MAX_INSTRS: usize = 1_000_000;
/// Most `.shared` variables.
pub const MAX_VARS: usize = 1_000;

/// One instruction of a block (terminators are the block's `next`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ins {
    pub op: Op,
    /// The `.shared` variable of a shared access (an index into [`Program::vars`]).
    pub var: Option<usize>,
    pub src: Vec<u8>,
    pub dst: Option<u8>,
}

impl Ins {
    /// A bare instruction of kind `op`.
    pub fn of(op: Op) -> Ins {
        Ins {
            op,
            var: None,
            src: vec![],
            dst: None,
        }
    }
}

/// A basic block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub name: String,
    pub instrs: Vec<Ins>,
    /// Successors, as indices into [`Program::blocks`]: none = exit, one = jump, two = branch.
    pub next: Vec<usize>,
    /// How a two-way branch decides at run time (default: a fair per-warp coin).
    pub branch: Option<Branch>,
}

/// A kernel with control flow.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub name: String,
    pub vars: Vec<Var>,
    /// `R_tb`: the TB's scratchpad bytes (at least the variables' extent).
    pub tb_smem: u32,
    /// The sharing threshold `t`, if the file gives one (else the SM's param).
    pub t: Option<Ratio>,
    pub threads: Option<u32>,
    pub grid: Option<u32>,
    /// Seed of the `p` branches.
    pub seed: u64,
    /// Blocks; the first is the entry.
    pub blocks: Vec<Block>,
    pub locks: Vec<LockPreset>,
    pub params: Map<String, Value>,
}

fn fail<T>(m: String) -> Result<T, CfgError> {
    Err(CfgError(m))
}

/// The ops a block may hold (terminators come from `next`).
const BODY_OPS: &str =
    "alu, mov, ld.shared VAR, st.shared VAR, atom.shared VAR, ld.global, st.global, bar, relssp";

impl Op {
    fn body(name: &str) -> Option<Op> {
        Some(match name {
            "alu" => Op::Alu,
            "mov" => Op::Mov,
            "ld.shared" => Op::LdShared,
            "st.shared" => Op::StShared,
            "atom.shared" => Op::AtomShared,
            "ld.global" => Op::LdGlobal,
            "st.global" => Op::StGlobal,
            "bar" => Op::Bar,
            "relssp" => Op::Relssp,
            _ => return None,
        })
    }
}

fn reg(tok: &str) -> Option<u8> {
    let n: usize = tok.strip_prefix('r')?.parse().ok()?;
    (n < REGS).then_some(n as u8)
}

impl Ins {
    /// Reads `OP [VAR] [rS ...] [-> rD]`, e.g. `ld.shared A -> r1`, `alu r1 r2 -> r3`.
    fn parse(text: &str, vars: &HashMap<&str, usize>) -> Result<Ins, String> {
        let (uses, dst) = match text.split_once("->") {
            Some((u, d)) => {
                let d = d.trim();
                let r = reg(d)
                    .ok_or_else(|| format!("destination `{d}`; allowed: r0..r{}", REGS - 1))?;
                (u, Some(r))
            }
            None => (text, None),
        };
        let mut toks = uses.split_whitespace();
        let name = toks.next().ok_or("empty instruction")?;
        let op =
            Op::body(name).ok_or_else(|| format!("unknown op `{name}`; allowed: {BODY_OPS}"))?;
        let mut ins = Ins { dst, ..Ins::of(op) };
        if op.is_shared() {
            let v = toks
                .next()
                .ok_or_else(|| format!("`{name}` needs a .shared variable"))?;
            ins.var = Some(
                *vars
                    .get(v)
                    .ok_or_else(|| format!("unknown .shared variable `{v}`"))?,
            );
        }
        for t in toks {
            ins.src.push(
                reg(t).ok_or_else(|| {
                    format!("operand `{t}`; allowed: registers r0..r{}", REGS - 1)
                })?,
            );
        }
        Ok(ins)
    }

    /// The instruction in its text form, naming variables from `vars`.
    pub fn text(&self, vars: &[Var]) -> String {
        let mut s = self.op.name().to_string();
        if let Some(v) = self.var {
            s.push(' ');
            s.push_str(&vars[v].name);
        }
        for r in &self.src {
            s.push_str(&format!(" r{r}"));
        }
        if let Some(d) = self.dst {
            s.push_str(&format!(" -> r{d}"));
        }
        s
    }
}

impl Program {
    /// Reads a program in either form: JSON (starts with `{`) or text (docs §6.0).
    pub fn parse(text: &str) -> Result<Program, CfgError> {
        let parsed = if text.trim_start().starts_with('{') {
            crate::json::repeated_key(text).map_err(CfgError)?;
            serde_json::from_str(text)
                .map_err(|e| CfgError(format!("malformed program: {e}")))
                .and_then(Program::from_file)
        } else {
            crate::kernel::cfg_text::parse(text).and_then(Program::from_file)
        };
        // Messages quote the input: control characters are shown escaped, on one line.
        parsed.map_err(|e| CfgError(smrtl_hdl::shown(&e.0)))
    }

    /// Checks and resolves the JSON form: names, sizes, registers, successors.
    pub fn from_file(f: ProgramFile) -> Result<Program, CfgError> {
        if f.blocks.is_empty() || f.blocks.len() > MAX_BLOCKS {
            return fail(format!(
                "{} blocks; allowed: 1..={MAX_BLOCKS}",
                f.blocks.len()
            ));
        }
        if f.shared.len() > MAX_VARS {
            return fail(format!(
                "{} .shared variables; allowed: at most {MAX_VARS}",
                f.shared.len()
            ));
        }
        let mut vars = HashMap::new();
        let mut end = 0u64;
        for (i, v) in f.shared.iter().enumerate() {
            if v.name.is_empty() || v.name.contains(char::is_whitespace) {
                return fail(format!(
                    "shared[{i}]: name `{}`; allowed: a non-empty name without spaces",
                    v.name
                ));
            }
            if vars.insert(v.name.as_str(), i).is_some() {
                return fail(format!("shared[{i}]: `{}` declared twice", v.name));
            }
            if v.bytes == 0 {
                return fail(format!("shared `{}`: bytes 0; allowed: at least 1", v.name));
            }
            let start = v.offset.map_or(end, u64::from);
            end = end.max(start + v.bytes as u64);
            if v.offset.is_none() {
                end = start + v.bytes as u64;
            }
        }
        let tb_smem = match f.tb_smem {
            Some(b) if (b as u64) < end.max(1) => {
                return fail(format!(
                    "tb_smem {b}; allowed: at least the variables' extent, {}",
                    end.max(1)
                ))
            }
            Some(b) => b,
            None if end == 0 => {
                return fail("no .shared variables and no `tb_smem`; give `tb_smem`".into())
            }
            None => u32::try_from(end)
                .map_err(|_| CfgError(format!("shared variables span {end} bytes")))?,
        };
        if let Some(th) = f.threads {
            if th == 0 {
                return fail("threads 0; allowed: at least 1".into());
            }
        }
        if let Some(g) = f.grid {
            if !(1..=MAX_GRID).contains(&g) {
                return fail(format!("grid {g}; allowed: 1..={MAX_GRID}"));
            }
        }
        let mut names = HashMap::new();
        for (i, b) in f.blocks.iter().enumerate() {
            if names.insert(b.name.as_str(), i).is_some() {
                return fail(format!("block `{}` declared twice", b.name));
            }
        }
        let mut total = 0usize;
        let mut blocks = Vec::with_capacity(f.blocks.len());
        for b in &f.blocks {
            total += b.instrs.len();
            if total > MAX_INSTRS {
                return fail(format!("more than {MAX_INSTRS} instructions"));
            }
            let instrs = b
                .instrs
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    Ins::parse(t, &vars)
                        .map_err(|m| CfgError(format!("block `{}` instruction {i}: {m}", b.name)))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if b.next.len() > 2 {
                return fail(format!(
                    "block `{}`: {} successors; allowed: 0 (exit), 1 (jump) or 2 (branch)",
                    b.name,
                    b.next.len()
                ));
            }
            let next = b
                .next
                .iter()
                .map(|n| {
                    names.get(n.as_str()).copied().ok_or_else(|| {
                        CfgError(format!("block `{}`: unknown successor `{n}`", b.name))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            if b.branch.is_some() && next.len() != 2 {
                return fail(format!("block `{}`: `branch` needs two successors", b.name));
            }
            if let Some(br) = &b.branch {
                br.check()
                    .map_err(|m| CfgError(format!("block `{}`: {m}", b.name)))?;
            }
            blocks.push(Block {
                name: b.name.clone(),
                instrs,
                next,
                branch: b.branch,
            });
        }
        let p = Program {
            name: f.name,
            vars: f.shared,
            tb_smem,
            t: f.t,
            threads: f.threads,
            grid: f.grid,
            seed: f.seed,
            blocks,
            locks: f.locks,
            params: f.params,
        };
        p.check_exits()?;
        Ok(p)
    }

    /// Every block reachable from the entry reaches an exit (no loop without a way out).
    fn check_exits(&self) -> Result<(), CfgError> {
        let n = self.blocks.len();
        let mut reach = vec![false; n];
        let mut stack = vec![0];
        reach[0] = true;
        while let Some(b) = stack.pop() {
            for &s in &self.blocks[b].next {
                if !reach[s] {
                    reach[s] = true;
                    stack.push(s);
                }
            }
        }
        let mut exits: Vec<bool> = self.blocks.iter().map(|b| b.next.is_empty()).collect();
        loop {
            let mut changed = false;
            for b in 0..n {
                if !exits[b] && self.blocks[b].next.iter().any(|&s| exits[s]) {
                    exits[b] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        match (0..n).find(|&b| reach[b] && !exits[b]) {
            Some(b) => fail(format!(
                "block `{}` cannot reach an exit (a block with no successors)",
                self.blocks[b].name
            )),
            None => Ok(()),
        }
    }

    /// Byte offset of each variable: its own, or packed after the previous one.
    pub fn offsets(&self) -> Vec<u32> {
        let mut end = 0;
        self.vars
            .iter()
            .map(|v| {
                let off = v.offset.unwrap_or(end);
                end = off + v.bytes;
                off
            })
            .collect()
    }

    /// The JSON form.
    pub fn to_file(&self) -> ProgramFile {
        ProgramFile {
            name: self.name.clone(),
            shared: self.vars.clone(),
            tb_smem: Some(self.tb_smem),
            t: self.t,
            threads: self.threads,
            grid: self.grid,
            seed: self.seed,
            blocks: self
                .blocks
                .iter()
                .map(|b| BlockFile {
                    name: b.name.clone(),
                    instrs: b.instrs.iter().map(|i| i.text(&self.vars)).collect(),
                    next: b
                        .next
                        .iter()
                        .map(|&s| self.blocks[s].name.clone())
                        .collect(),
                    branch: b.branch,
                })
                .collect(),
            locks: self.locks.clone(),
            params: self.params.clone(),
        }
    }

    /// Lowers the program to the SM model's kernel: blocks in file order, a `bra` where a jump
    /// does not fall through to the next block, a `cbra` per branch, an `exit` per exit block.
    /// A shared access to a variable at `[off, off + bytes)` spreads its lanes from `off` to
    /// `off + bytes − 1`, so it touches the shared region exactly when the variable's range
    /// meets it (§6.3). `grid` is used when the program gives none.
    pub fn lower(&self, grid: u32) -> Lowered {
        let offsets = self.offsets();
        let mut start = Vec::with_capacity(self.blocks.len());
        let mut pc = 0u32;
        for (b, blk) in self.blocks.iter().enumerate() {
            start.push(pc);
            pc += blk.instrs.len() as u32 + self.terminator_len(b) as u32;
        }
        let mut code = Vec::with_capacity(pc as usize);
        let mut origin = Vec::with_capacity(pc as usize);
        for (b, blk) in self.blocks.iter().enumerate() {
            for (i, ins) in blk.instrs.iter().enumerate() {
                let off = ins.var.map(|v| Offsets::Span {
                    first: offsets[v],
                    last: offsets[v] + self.vars[v].bytes - 1,
                });
                code.push(Instr {
                    dst: ins.dst,
                    src: ins.src.clone(),
                    off,
                    ..Instr::of(ins.op)
                });
                origin.push(Origin {
                    block: b,
                    index: Some(i),
                });
            }
            let term = match blk.next[..] {
                [] => Some(Instr::of(Op::Exit)),
                [t] if t == b + 1 => None,
                [t] => Some(Instr {
                    to: vec![start[t]],
                    ..Instr::of(Op::Bra)
                }),
                [a, c] => Some(Instr {
                    to: vec![start[a], start[c]],
                    branch: Some(blk.branch.unwrap_or_default()),
                    ..Instr::of(Op::Cbra)
                }),
                _ => unreachable!("checked: at most two successors"),
            };
            if let Some(t) = term {
                code.push(t);
                origin.push(Origin {
                    block: b,
                    index: None,
                });
            }
        }
        let mut params = self.params.clone();
        if let Some(t) = self.t {
            params
                .entry("t".to_string())
                .or_insert_with(|| Value::String(t.to_string()));
        }
        Lowered {
            kernel: Kernel {
                name: self.name.clone(),
                threads: self.threads.unwrap_or(DEFAULT_THREADS),
                smem: self.tb_smem,
                grid: self.grid.unwrap_or(grid),
                warps: vec![code],
                locks: self.locks.clone(),
                params,
                seed: self.seed,
            },
            origin,
        }
    }

    /// Instructions block `b`'s terminator lowers to: 0 for a fall-through jump, else 1.
    pub fn terminator_len(&self, b: usize) -> usize {
        usize::from(self.blocks[b].next[..] != [b + 1])
    }
}

/// Threads per TB when a program gives none: one warp.
pub const DEFAULT_THREADS: u32 = 32;

/// Where a lowered instruction comes from: block `block`'s instruction `index`, or its
/// terminator (`None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    pub block: usize,
    pub index: Option<usize>,
}

/// A lowered program: the kernel and the origin of each of its instructions.
#[derive(Clone, Debug, PartialEq)]
pub struct Lowered {
    pub kernel: Kernel,
    pub origin: Vec<Origin>,
}
