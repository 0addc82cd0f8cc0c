//! The relssp compiler pass (docs/scratchpad-sharing.md §6, [001] §6): on a [`Program`], choose
//! which `.shared` variables go to the shared region and lay them out (§6.2), classify the
//! shared-region accesses (§6.3) and place `relssp` where every thread releases the shared
//! region exactly once after its last shared-region access: optimally on a CFG without critical
//! edges (OPT, §6.4) or at a post-dominator (PostDom, §6.5).
//!
//! The pass works on a normalised copy of the CFG (§6.1): reachable blocks only, an empty
//! unique `Entry` falling into the first block, a unique empty `Exit` every exit block jumps to
//! and, for OPT, an empty block on every critical edge. The transformed program keeps only what
//! a `relssp` landed in (see [`place`]).

use crate::kernel::cfg::{Block, CfgError, Ins, Program, ProgramFile, Var};
use crate::kernel::launch::Ratio;
use crate::kernel::program::Op;
use serde::{Serialize, Serializer};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

/// Most `.shared` variables the layout search takes (it tries every subset); a program whose
/// variables all fit in the private region needs no search and has no limit.
pub const MAX_SEARCH_VARS: usize = 20;

/// Which placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// §6.4: optimal placement on the CFG with its critical edges split.
    Opt,
    /// §6.5: one `relssp` at a post-dominator of the last accesses.
    PostDom,
    /// Layout only (§6.2), no `relssp`.
    None,
}

impl Mode {
    pub const NAMES: &'static str = "opt, postdom, none";
}

impl FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Mode, String> {
        match s {
            "opt" => Ok(Mode::Opt),
            "postdom" => Ok(Mode::PostDom),
            "none" => Ok(Mode::None),
            _ => Err(format!(
                "bad mode `{}`; allowed: {}",
                smrtl_hdl::shown(s),
                Mode::NAMES
            )),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Opt => "opt",
            Mode::PostDom => "postdom",
            Mode::None => "none",
        })
    }
}

/// What the pass needs besides the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub mode: Mode,
    /// The sharing threshold, used when the program gives no `t`.
    pub t: Ratio,
    /// Granule of the private bytes `u` (the SM's `ALIGN`).
    pub align: u32,
}

impl Default for Options {
    /// OPT at the SM model's defaults: `t = 1/10`, 4-byte granule.
    fn default() -> Options {
        Options {
            mode: Mode::Opt,
            t: Ratio { num: 1, den: 10 },
            align: 4,
        }
    }
}

/// Where a `relssp` goes in a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Position {
    /// Before the block's first instruction.
    In,
    /// Right after instruction `index`.
    After,
}

/// One inserted `relssp`: `after` instruction `index` of `block` (counted in the input's
/// instruction list), or `in` the block (index 0).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Insertion {
    pub block: String,
    pub position: Position,
    pub index: usize,
}

/// A kept split block: `{relssp; bra to}` on the former edge `from → to`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SplitBlock {
    pub name: String,
    pub from: String,
    pub to: String,
}

/// The pass's answer (the `--json` object of `smrtl relssp`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Placed {
    pub mode: Mode,
    /// Private bytes of a shared TB: `ceil(t·R_tb)` rounded up to the granule.
    pub u: u32,
    /// The variables of the shared-region set `S`, in declaration order.
    pub selected: Vec<String>,
    /// Each variable's byte offset, in layout order.
    #[serde(serialize_with = "ordered_map")]
    pub layout: Vec<(String, u32)>,
    /// The loop-weighted instruction count of `S`'s access range (§6.2).
    pub cost: u64,
    pub relssp: Vec<Insertion>,
    pub split_blocks: Vec<SplitBlock>,
    /// The transformed program in the JSON form.
    pub program: ProgramFile,
    #[serde(skip)]
    transformed: Program,
}

impl Placed {
    /// The transformed program.
    pub fn program(&self) -> &Program {
        &self.transformed
    }
}

fn ordered_map<S: Serializer>(pairs: &[(String, u32)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

/// A set of variables as a bit vector.
#[derive(Clone, Debug, PartialEq, Eq)]
struct VarSet(Vec<u64>);

impl VarSet {
    fn new(n: usize) -> VarSet {
        VarSet(vec![0; n.div_ceil(64)])
    }
    fn of(n: usize, vars: &[usize]) -> VarSet {
        let mut s = VarSet::new(n);
        for &v in vars {
            s.insert(v);
        }
        s
    }
    fn insert(&mut self, v: usize) {
        self.0[v / 64] |= 1 << (v % 64);
    }
    fn contains(&self, v: usize) -> bool {
        self.0[v / 64] >> (v % 64) & 1 == 1
    }
    /// `self |= o`; whether it changed.
    fn union(&mut self, o: &VarSet) -> bool {
        let mut changed = false;
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            changed |= *b & !*a != 0;
            *a |= b;
        }
        changed
    }
    fn meets(&self, o: &VarSet) -> bool {
        self.0.iter().zip(&o.0).any(|(a, b)| a & b != 0)
    }
    /// The low 32 variables as a mask (the layout search has at most [`MAX_SEARCH_VARS`]).
    fn low(&self) -> u32 {
        self.0.first().map_or(0, |&w| w as u32)
    }
}

/// What a node of the normalised CFG is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Block `i` of the input.
    Orig(usize),
    Entry,
    Exit,
    /// The block on edge `from → to` (node indices of the unsplit graph).
    Split {
        from: usize,
        to: usize,
    },
}

/// The normalised CFG (§6.1). Nodes: the reachable input blocks in input order, then `Entry`,
/// `Exit`, then the split blocks.
#[derive(Clone, Debug)]
struct Cfg {
    kind: Vec<Kind>,
    names: Vec<String>,
    succ: Vec<Vec<usize>>,
    pred: Vec<Vec<usize>>,
    entry: usize,
    exit: usize,
}

/// `base`, or `base_2`, `base_3`, ... : the first not in `taken` (which then holds it).
fn fresh(base: &str, taken: &mut HashSet<String>) -> String {
    let mut name = base.to_string();
    let mut k = 2;
    while taken.contains(&name) {
        name = format!("{base}_{k}");
        k += 1;
    }
    taken.insert(name.clone());
    name
}

impl Cfg {
    /// Reachable blocks, `Entry` and `Exit` (§6.1), critical edges not split.
    fn normalise(p: &Program) -> Cfg {
        let n = p.blocks.len();
        let mut reach = vec![false; n];
        let mut stack = vec![0];
        reach[0] = true;
        while let Some(b) = stack.pop() {
            for &s in &p.blocks[b].next {
                if !reach[s] {
                    reach[s] = true;
                    stack.push(s);
                }
            }
        }
        let orig: Vec<usize> = (0..n).filter(|&b| reach[b]).collect();
        let mut node_of = vec![usize::MAX; n];
        for (i, &b) in orig.iter().enumerate() {
            node_of[b] = i;
        }
        let (entry, exit) = (orig.len(), orig.len() + 1);
        let mut taken: HashSet<String> = p.blocks.iter().map(|b| b.name.clone()).collect();
        let mut kind: Vec<Kind> = orig.iter().map(|&b| Kind::Orig(b)).collect();
        let mut names: Vec<String> = orig.iter().map(|&b| p.blocks[b].name.clone()).collect();
        let mut succ: Vec<Vec<usize>> = orig
            .iter()
            .map(|&b| match &p.blocks[b].next[..] {
                [] => vec![exit],
                next => next.iter().map(|&s| node_of[s]).collect(),
            })
            .collect();
        kind.extend([Kind::Entry, Kind::Exit]);
        names.push(fresh("Entry", &mut taken));
        names.push(fresh("Exit", &mut taken));
        succ.push(vec![0]);
        succ.push(vec![]);
        let mut cfg = Cfg {
            kind,
            names,
            pred: vec![],
            succ,
            entry,
            exit,
        };
        cfg.link();
        cfg
    }

    /// Recomputes `pred` from `succ` (an edge per successor slot).
    fn link(&mut self) {
        self.pred = vec![vec![]; self.succ.len()];
        for (b, ss) in self.succ.iter().enumerate() {
            for &s in ss {
                self.pred[s].push(b);
            }
        }
    }

    fn len(&self) -> usize {
        self.kind.len()
    }

    /// The input block a node stands for.
    fn block<'p>(&self, p: &'p Program, b: usize) -> Option<&'p Block> {
        match self.kind[b] {
            Kind::Orig(i) => Some(&p.blocks[i]),
            _ => None,
        }
    }

    fn instrs<'p>(&self, p: &'p Program, b: usize) -> &'p [Ins] {
        self.block(p, b).map_or(&[], |blk| &blk.instrs)
    }

    /// Splits every critical edge (source with >1 successor, target with >1 predecessor, both
    /// judged on this graph) with an empty block named `split_FROM_TO`.
    fn split_critical(&self, p: &Program) -> Cfg {
        let mut g = self.clone();
        let mut taken: HashSet<String> = p.blocks.iter().map(|b| b.name.clone()).collect();
        taken.extend(self.names.iter().cloned());
        for b in 0..self.len() {
            if self.succ[b].len() < 2 {
                continue;
            }
            for slot in 0..self.succ[b].len() {
                let t = self.succ[b][slot];
                if self.pred[t].len() < 2 {
                    continue;
                }
                let s = g.kind.len();
                let name = fresh(
                    &format!("split_{}_{}", self.names[b], self.names[t]),
                    &mut taken,
                );
                g.kind.push(Kind::Split { from: b, to: t });
                g.names.push(name);
                g.succ.push(vec![t]);
                g.succ[b][slot] = s;
            }
        }
        g.link();
        g
    }

    /// Immediate dominators from `root` over `succ` / `pred` (Cooper, Harvey and Kennedy's
    /// iterative algorithm); `None` for the root and unreachable nodes.
    fn idom(&self, root: usize, forward: bool) -> Vec<Option<usize>> {
        let (succ, pred) = if forward {
            (&self.succ, &self.pred)
        } else {
            (&self.pred, &self.succ)
        };
        let n = self.len();
        // Reverse post-order by an iterative DFS.
        let mut order = Vec::with_capacity(n);
        let mut seen = vec![false; n];
        let mut stack = vec![(root, 0usize)];
        seen[root] = true;
        while let Some(&mut (b, ref mut i)) = stack.last_mut() {
            if let Some(&s) = succ[b].get(*i) {
                *i += 1;
                if !seen[s] {
                    seen[s] = true;
                    stack.push((s, 0));
                }
            } else {
                order.push(b);
                stack.pop();
            }
        }
        order.reverse();
        let mut rpo = vec![usize::MAX; n];
        for (i, &b) in order.iter().enumerate() {
            rpo[b] = i;
        }
        let mut idom: Vec<Option<usize>> = vec![None; n];
        idom[root] = Some(root);
        let mut changed = true;
        while changed {
            changed = false;
            for &b in order.iter().skip(1) {
                let mut new: Option<usize> = None;
                for &q in &pred[b] {
                    if idom[q].is_none() {
                        continue;
                    }
                    new = Some(match new {
                        None => q,
                        Some(mut x) => {
                            let mut y = q;
                            while x != y {
                                while rpo[x] > rpo[y] {
                                    x = idom[x].expect("processed");
                                }
                                while rpo[y] > rpo[x] {
                                    y = idom[y].expect("processed");
                                }
                            }
                            x
                        }
                    });
                }
                if new.is_some() && idom[b] != new {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        idom[root] = None;
        idom
    }

    /// Loop depth of each node: how many natural loops contain it. A back edge is an edge whose
    /// target dominates its source; back edges to one header make one loop.
    fn loop_depths(&self) -> Vec<u32> {
        let idom = self.idom(self.entry, true);
        let dominates = |a: usize, mut b: usize| loop {
            if a == b {
                return true;
            }
            match idom[b] {
                Some(d) => b = d,
                None => return false,
            }
        };
        let mut latches: HashMap<usize, Vec<usize>> = HashMap::new();
        for b in 0..self.len() {
            for &h in &self.succ[b] {
                if dominates(h, b) {
                    latches.entry(h).or_default().push(b);
                }
            }
        }
        let mut depth = vec![0u32; self.len()];
        for (&h, ls) in &latches {
            let mut body = vec![false; self.len()];
            body[h] = true;
            let mut stack = vec![];
            for &l in ls {
                if !body[l] {
                    body[l] = true;
                    stack.push(l);
                }
            }
            while let Some(b) = stack.pop() {
                for &q in &self.pred[b] {
                    if !body[q] {
                        body[q] = true;
                        stack.push(q);
                    }
                }
            }
            for (d, inside) in depth.iter_mut().zip(body) {
                *d += u32::from(inside);
            }
        }
        depth
    }

    /// Whether node `x` lies on a cycle.
    fn on_cycle(&self, x: usize) -> bool {
        let mut seen = vec![false; self.len()];
        let mut stack: Vec<usize> = self.succ[x].clone();
        while let Some(b) = stack.pop() {
            if b == x {
                return true;
            }
            if !std::mem::replace(&mut seen[b], true) {
                stack.extend(&self.succ[b]);
            }
        }
        false
    }
}

/// Loop weight `10^depth`, saturating ([`AccessRanges::bounded`] refuses that kernel).
fn weight(depth: u32) -> u64 {
    10u64.checked_pow(depth).unwrap_or(u64::MAX)
}

/// The access ranges of §6.2 ([001] §6.1) on the normalised CFG: per block, which variables
/// are accessed before / after its entry and exit points.
#[derive(Clone, Debug)]
pub struct AccessRanges {
    vars: Vec<String>,
    blocks: Vec<String>,
    pre_in: Vec<VarSet>,
    pre_out: Vec<VarSet>,
    post_in: Vec<VarSet>,
    post_out: Vec<VarSet>,
    /// Per block: the variable of each instruction (shared accesses) and the loop weight.
    accesses: Vec<Vec<Option<usize>>>,
    weights: Vec<u64>,
    /// Per block, its loop depth.
    depths: Vec<u32>,
}

/// The variables each block accesses.
fn acc_sets(cfg: &Cfg, p: &Program) -> Vec<VarSet> {
    (0..cfg.len())
        .map(|b| {
            let mut s = VarSet::new(p.vars.len());
            for v in cfg.instrs(p, b).iter().filter_map(|i| i.var) {
                s.insert(v);
            }
            s
        })
        .collect()
}

impl AccessRanges {
    fn compute(cfg: &Cfg, p: &Program) -> AccessRanges {
        let n = cfg.len();
        let nv = p.vars.len();
        let acc = acc_sets(cfg, p);
        let (mut pre_in, mut pre_out) = (vec![VarSet::new(nv); n], acc.clone());
        let (mut post_in, mut post_out) = (acc.clone(), vec![VarSet::new(nv); n]);
        // Least fixpoints: the sets only grow, from the blocks' own accesses.
        let mut changed = true;
        while changed {
            changed = false;
            for b in 0..n {
                for &q in &cfg.pred[b] {
                    let from = pre_out[q].clone();
                    if pre_in[b].union(&from) {
                        changed = true;
                        pre_out[b].union(&from);
                    }
                }
            }
            for b in (0..n).rev() {
                for &s in &cfg.succ[b] {
                    let from = post_in[s].clone();
                    if post_out[b].union(&from) {
                        changed = true;
                        post_in[b].union(&from);
                    }
                }
            }
        }
        let depths = cfg.loop_depths();
        AccessRanges {
            vars: p.vars.iter().map(|v| v.name.clone()).collect(),
            blocks: cfg.names.clone(),
            pre_in,
            pre_out,
            post_in,
            post_out,
            accesses: (0..n)
                .map(|b| cfg.instrs(p, b).iter().map(|i| i.var).collect())
                .collect(),
            weights: depths.iter().copied().map(weight).collect(),
            depths,
        }
    }

    /// Refuses a kernel whose loop-weighted instruction count (no cost exceeds it) overflows a
    /// cost's `u64`, so every cost and every tie is exact.
    pub fn bounded(&self) -> Result<(), CfgError> {
        let mut total = Some(0u64);
        for (acc, &d) in self.accesses.iter().zip(&self.depths) {
            let w = |t: u64| t.checked_add(10u64.checked_pow(d)?.checked_mul(acc.len() as u64)?);
            total = total.and_then(w);
        }
        let deepest = (0..self.depths.len()).max_by_key(|&b| self.depths[b]);
        let Some(b) = deepest.filter(|_| total.is_none()) else {
            return Ok(());
        };
        Err(CfgError(format!(
            "the loop-weighted cost (10^depth per instruction, §6.2) exceeds its limit of {} (2^64 - 1): block `{}` is in {} nested loops; allowed: a total within the limit (at most 19 nested loops, fewer the more instructions they hold)",
            u64::MAX, self.blocks[b], self.depths[b]
        )))
    }

    /// The set of variables named `names`, or `None` if one is unknown.
    fn set(&self, names: &[&str]) -> Option<VarSet> {
        let ids = names
            .iter()
            .map(|n| self.vars.iter().position(|v| v == n))
            .collect::<Option<Vec<_>>>()?;
        Some(VarSet::of(self.vars.len(), &ids))
    }

    fn node(&self, block: &str) -> Option<usize> {
        self.blocks.iter().position(|b| b == block)
    }

    /// The blocks of the normalised CFG: reachable input blocks, then `Entry` and `Exit`.
    pub fn blocks(&self) -> &[String] {
        &self.blocks
    }

    /// `AccIN(S, B)`: the entry point of `block` is in the access range of `set`.
    pub fn acc_in(&self, block: &str, set: &[&str]) -> Option<bool> {
        let (b, s) = (self.node(block)?, self.set(set)?);
        Some(self.pre_in[b].meets(&s) && self.post_in[b].meets(&s))
    }

    /// `AccOUT(S, B)`: the exit point of `block` is in the access range of `set`.
    pub fn acc_out(&self, block: &str, set: &[&str]) -> Option<bool> {
        let (b, s) = (self.node(block)?, self.set(set)?);
        Some(self.pre_out[b].meets(&s) && self.post_out[b].meets(&s))
    }

    /// `cost(S)`: the loop-weighted count of instructions with an `S` access at or before them
    /// on some path from `Entry` and at or after them on some path to `Exit`.
    pub fn cost(&self, set: &[&str]) -> Option<u64> {
        let s = self.set(set)?;
        let mut cost = 0u64;
        for (b, acc) in self.accesses.iter().enumerate() {
            let hit = |i: &Option<usize>| i.is_some_and(|v| s.contains(v));
            let mut before = self.pre_in[b].meets(&s);
            // Instructions from the last `S` access on have one after them only past the block.
            let last = acc.iter().rposition(hit);
            let after_out = self.post_out[b].meets(&s);
            for (i, a) in acc.iter().enumerate() {
                before |= hit(a);
                let after = after_out || last.is_some_and(|l| i <= l);
                if before && after {
                    cost = cost.saturating_add(self.weights[b]);
                }
            }
        }
        Some(cost)
    }

    /// Per instruction, the (before, after) variable masks of [`MAX_SEARCH_VARS`] variables,
    /// with their summed weights.
    fn mask_weights(&self) -> Vec<(u32, u32, u64)> {
        let mut m: HashMap<(u32, u32), u64> = HashMap::new();
        for (b, acc) in self.accesses.iter().enumerate() {
            let bit = |a: &Option<usize>| a.map_or(0u32, |v| 1 << v);
            let mut suffix = vec![self.post_out[b].low(); acc.len() + 1];
            for i in (0..acc.len()).rev() {
                suffix[i] = suffix[i + 1] | bit(&acc[i]);
            }
            let mut before = self.pre_in[b].low();
            for (i, a) in acc.iter().enumerate() {
                before |= bit(a);
                let w = m.entry((before, suffix[i])).or_default();
                *w = w.saturating_add(self.weights[b]);
            }
        }
        let mut v: Vec<_> = m.into_iter().map(|((b, a), w)| (b, a, w)).collect();
        v.sort_unstable();
        v
    }
}

/// The access ranges of `p` on its normalised CFG (the tables of [001] Fig. 9).
pub fn access_ranges(p: &Program) -> AccessRanges {
    AccessRanges::compute(&Cfg::normalise(p), p)
}

/// `u = ceil(t·R_tb)` rounded up to `align` (docs §1.2).
fn private_bytes(tb_smem: u32, t: Ratio, align: u32) -> Result<u32, CfgError> {
    let private = (t.num as u128 * tb_smem as u128).div_ceil(t.den as u128);
    let u = private.div_ceil(align as u128) * align as u128;
    u32::try_from(u).map_err(|_| CfgError(format!("private bytes u = {u} overflow")))
}

/// The least-cost feasible set `S` (§6.2) as a mask and its cost: `Σ size(SV∖S) ≤ u`; ties go
/// to fewer bytes in `S`, then to the lexicographically smallest list of declaration indices.
fn select(p: &Program, ranges: &AccessRanges, u: u32) -> Result<(Vec<bool>, u64), CfgError> {
    let n = p.vars.len();
    let total: u64 = p.vars.iter().map(|v| v.bytes as u64).sum();
    if total <= u as u64 {
        return Ok((vec![false; n], 0));
    }
    if n > MAX_SEARCH_VARS {
        return Err(CfgError(format!(
            "{n} .shared variables exceed the private region (u = {u}); the layout search takes at most {MAX_SEARCH_VARS}"
        )));
    }
    let masks = ranges.mask_weights();
    let bytes = |s: u32| -> u64 {
        (0..n)
            .filter(|&v| s >> v & 1 == 1)
            .map(|v| p.vars[v].bytes as u64)
            .sum()
    };
    let lex = |s: u32| -> Vec<usize> { (0..n).filter(|&v| s >> v & 1 == 1).collect() };
    let mut best: Option<(u64, u64, u32)> = None;
    for s in 0..(1u32 << n) {
        let b = bytes(s);
        if total - b > u as u64 {
            continue;
        }
        let cost = masks
            .iter()
            .filter(|(pre, post, _)| pre & s != 0 && post & s != 0)
            .fold(0u64, |c, (_, _, w)| c + w); // within the bound checked by `bounded`
        let better = match best {
            None => true,
            Some((c, bb, bs)) => (cost, b) < (c, bb) || ((cost, b) == (c, bb) && lex(s) < lex(bs)),
        };
        if better {
            best = Some((cost, b, s));
        }
    }
    let (cost, _, s) = best.expect("S = SV is feasible");
    Ok(((0..n).map(|v| s >> v & 1 == 1).collect(), cost))
}

/// A `relssp` in a node of the normalised CFG.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    In,
    After(usize),
}

/// §6.4: `INS_OUT` / `INS_IN` from the greatest fixpoint of `SafeIN` / `SafeOUT`.
fn place_opt(g: &Cfg, shared: &[bool], last: &[Option<usize>]) -> Vec<Option<At>> {
    let n = g.len();
    let (mut safe_in, mut safe_out) = (vec![true; n], vec![true; n]);
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..n).rev() {
            let out = b == g.exit || g.succ[b].iter().all(|&s| safe_in[s]);
            let inn = !shared[b] && out;
            changed |= out != safe_out[b] || inn != safe_in[b];
            safe_out[b] = out;
            safe_in[b] = inn;
        }
    }
    (0..n)
        .map(|b| {
            if safe_out[b] && !safe_in[b] {
                Some(At::After(
                    last[b].expect("a block unsafe at entry accesses"),
                ))
            } else if safe_in[b] && !g.pred[b].iter().all(|&q| safe_out[q]) {
                Some(At::In)
            } else {
                None
            }
        })
        .collect()
}

/// §6.5: from the nearest common post-dominator of the blocks with shared-region accesses,
/// up the post-dominator tree to the first node that dominates `Exit` and lies on no cycle.
fn place_postdom(g: &Cfg, shared: &[bool], last: &[Option<usize>]) -> Vec<Option<At>> {
    let mut at = vec![None; g.len()];
    let lb: Vec<usize> = (0..g.len()).filter(|&b| shared[b]).collect();
    if lb.is_empty() {
        return at;
    }
    let ipdom = g.idom(g.exit, false);
    let idom = g.idom(g.entry, true);
    let depth = tree_depths(&ipdom);
    // The nearest common post-dominator, folding the blocks pairwise up the tree.
    let mut x = lb[0];
    for &b in &lb[1..] {
        let mut y = b;
        while x != y {
            if depth[x] >= depth[y] {
                x = ipdom[x].expect("Exit post-dominates every block");
            } else {
                y = ipdom[y].expect("Exit post-dominates every block");
            }
        }
    }
    let mut exit_doms = vec![false; g.len()];
    let mut d = Some(g.exit);
    while let Some(b) = d {
        exit_doms[b] = true;
        d = idom[b];
    }
    while !exit_doms[x] || g.on_cycle(x) {
        x = ipdom[x].expect("Exit dominates itself and lies on no cycle");
    }
    at[x] = Some(if shared[x] {
        At::After(last[x].expect("a block of Lb accesses"))
    } else {
        At::In
    });
    at
}

/// Each node's depth in a tree given by parent links (roots and unreachable nodes: 0).
fn tree_depths(parent: &[Option<usize>]) -> Vec<usize> {
    let mut depth: Vec<Option<usize>> = vec![None; parent.len()];
    for b in 0..parent.len() {
        let mut path = vec![];
        let mut x = b;
        let base = loop {
            if let Some(d) = depth[x] {
                break d;
            }
            match parent[x] {
                Some(q) => {
                    path.push(x);
                    x = q;
                }
                None => {
                    depth[x] = Some(0);
                    break 0;
                }
            }
        };
        for (k, &y) in path.iter().rev().enumerate() {
            depth[y] = Some(base + k + 1);
        }
    }
    depth.into_iter().map(|d| d.unwrap_or(0)).collect()
}

/// Runs the pass (§6): layout, classification and placement by `o.mode`.
///
/// The transformed program: the variables in layout order with explicit offsets and `t` set
/// to the threshold used; the reachable input blocks in input order with their `relssp`;
/// `Exit` after them only if it holds a `relssp` (the exit blocks then jump to it); the kept
/// split blocks `{relssp; bra target}` last, so each costs its `bra`. `Entry` never holds one.
pub fn place(p: &Program, o: &Options) -> Result<Placed, CfgError> {
    if o.align == 0 {
        return Err(CfgError("align 0; allowed: at least 1".into()));
    }
    for b in &p.blocks {
        if let Some(i) = b.instrs.iter().position(|i| i.op == Op::Relssp) {
            return Err(CfgError(format!(
                "block `{}` instruction {i}: the input already holds a relssp; the pass places them itself",
                b.name
            )));
        }
    }
    // The SM's threshold and granule: the program's `params` win, as in the SM model (§6.0).
    let t = match p.params.get("t") {
        Some(v) => serde_json::from_value::<Ratio>(v.clone())
            .map_err(|e| CfgError(format!("params.t: {e}")))?,
        None => p.t.unwrap_or(o.t),
    };
    let align = match p.params.get("ALIGN") {
        Some(v) => v
            .as_u64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
            .filter(|a| (1..=4096).contains(a))
            .ok_or_else(|| CfgError(format!("params.ALIGN {v}; allowed: 1..=4096")))?
            as u32,
        None => o.align,
    };
    let u = private_bytes(p.tb_smem, t, align)?;
    let total: u64 = p.vars.iter().map(|v| v.bytes as u64).sum();
    if total > p.tb_smem as u64 {
        return Err(CfgError(format!(
            "the .shared variables total {total} bytes, more than tb_smem {}",
            p.tb_smem
        )));
    }
    let cfg = Cfg::normalise(p);
    let ranges = AccessRanges::compute(&cfg, p);
    ranges.bounded()?;
    let (in_s, cost) = select(p, &ranges, u)?;
    // Layout: SV∖S packed from 0 in declaration order, then S.
    let order: Vec<usize> = (0..p.vars.len())
        .filter(|&v| !in_s[v])
        .chain((0..p.vars.len()).filter(|&v| in_s[v]))
        .collect();
    let mut offset = vec![0u32; p.vars.len()];
    let mut end = 0u32;
    for &v in &order {
        offset[v] = end;
        end += p.vars[v].bytes;
    }
    // §6.3: a shared-region access touches [u, R_tb).
    let in_region: Vec<bool> = (0..p.vars.len())
        .map(|v| offset[v] < p.tb_smem && offset[v] + p.vars[v].bytes > u)
        .collect();
    let g = match o.mode {
        Mode::Opt => cfg.split_critical(p),
        Mode::PostDom | Mode::None => cfg,
    };
    let last: Vec<Option<usize>> = (0..g.len())
        .map(|b| {
            g.instrs(p, b)
                .iter()
                .rposition(|i| i.var.is_some_and(|v| in_region[v]))
        })
        .collect();
    let shared: Vec<bool> = last.iter().map(Option::is_some).collect();
    let at = match o.mode {
        Mode::Opt => place_opt(&g, &shared, &last),
        Mode::PostDom => place_postdom(&g, &shared, &last),
        Mode::None => vec![None; g.len()],
    };
    let out_order = output_order(&g, &at);
    let transformed = rebuild(p, &g, &at, &out_order, &order, &offset, t);
    let relssp = out_order
        .iter()
        .filter_map(|&b| {
            at[b].map(|a| Insertion {
                block: g.names[b].clone(),
                position: match a {
                    At::In => Position::In,
                    At::After(_) => Position::After,
                },
                index: match a {
                    At::In => 0,
                    At::After(i) => i,
                },
            })
        })
        .collect();
    let split_blocks = out_order
        .iter()
        .filter_map(|&b| match g.kind[b] {
            Kind::Split { from, to } => Some(SplitBlock {
                name: g.names[b].clone(),
                from: g.names[from].clone(),
                to: g.names[to].clone(),
            }),
            _ => None,
        })
        .collect();
    Ok(Placed {
        mode: o.mode,
        u,
        selected: (0..p.vars.len())
            .filter(|&v| in_s[v])
            .map(|v| p.vars[v].name.clone())
            .collect(),
        layout: order
            .iter()
            .map(|&v| (p.vars[v].name.clone(), offset[v]))
            .collect(),
        cost,
        relssp,
        split_blocks,
        program: transformed.to_file(),
        transformed,
    })
}

/// The kept nodes in output order: `Entry`, the input blocks, `Exit`, the split blocks; all
/// but the input blocks only when they hold a `relssp`.
fn output_order(g: &Cfg, at: &[Option<At>]) -> Vec<usize> {
    let rank = |b: usize| match g.kind[b] {
        Kind::Entry => 0,
        Kind::Orig(_) => 1,
        Kind::Exit => 2,
        Kind::Split { .. } => 3,
    };
    let keep = |b: usize| matches!(g.kind[b], Kind::Orig(_)) || at[b].is_some();
    let mut v: Vec<usize> = (0..g.len()).filter(|&b| keep(b)).collect();
    v.sort_by_key(|&b| (rank(b), b));
    v
}

/// The transformed program: kept nodes, their `relssp`, edges through removed nodes restored.
fn rebuild(
    p: &Program,
    g: &Cfg,
    at: &[Option<At>],
    nodes: &[usize],
    order: &[usize],
    offset: &[u32],
    t: Ratio,
) -> Program {
    let mut index = vec![None; g.len()];
    for (i, &b) in nodes.iter().enumerate() {
        index[b] = Some(i);
    }
    // Where an edge into `b` leads once removed nodes are gone (`None`: the block exits).
    let target = |mut b: usize| loop {
        if let Some(i) = index[b] {
            return Some(i);
        }
        match g.kind[b] {
            Kind::Split { .. } => b = g.succ[b][0],
            _ => return None,
        }
    };
    let mut var_index = vec![0; p.vars.len()];
    for (i, &v) in order.iter().enumerate() {
        var_index[v] = i;
    }
    let blocks = nodes
        .iter()
        .map(|&b| {
            let mut instrs: Vec<Ins> = g
                .instrs(p, b)
                .iter()
                .map(|i| Ins {
                    var: i.var.map(|v| var_index[v]),
                    ..i.clone()
                })
                .collect();
            match at[b] {
                Some(At::In) => instrs.insert(0, Ins::of(Op::Relssp)),
                Some(At::After(i)) => instrs.insert(i + 1, Ins::of(Op::Relssp)),
                None => {}
            }
            Block {
                name: g.names[b].clone(),
                instrs,
                next: g.succ[b].iter().filter_map(|&s| target(s)).collect(),
                branch: g.block(p, b).and_then(|blk| blk.branch),
            }
        })
        .collect();
    Program {
        vars: order
            .iter()
            .map(|&v| Var {
                name: p.vars[v].name.clone(),
                bytes: p.vars[v].bytes,
                offset: Some(offset[v]),
            })
            .collect(),
        t: Some(t),
        blocks,
        ..p.clone()
    }
}
