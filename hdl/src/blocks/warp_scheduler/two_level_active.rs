//! TWO_LEVEL_ACTIVE (docs/scratchpad-sharing.md §4.1): GPGPU-Sim's `two_level_active_scheduler`
//! (`-gpgpu_scheduler two_level_active:N:0:1`; shader.cc `order_warps`, `do_on_warp_issued`,
//! `add_supervised_warp_id`), with M = min(TL_ACTIVE, WS) and P = WS − M.
//!
//! State:
//! - `tl_act_s` (s < M): the active list, slot 0 first. The list is always full (GPGPU-Sim
//!   supervises a fixed set of warps and promotes one for every demotion), so the slots need no
//!   valid bits; reset holds warps 0..M, as `add_supervised_warp_id` adds them.
//! - when P > 0, the pending FIFO: a ring of 2^⌈log2 WS⌉ index registers `tl_pend_e` and its
//!   head pointer. It always holds P warps, so its tail is head + P (no register); reset holds
//!   warps M..WS at 0..P. Registers, not a memory: up to M words are written and M read per
//!   cycle, and the reset contents are the initial order.
//!
//! Per cycle: the active slots whose warp waits are demoted; the kept ones move up in order and
//! the first k of (pending ++ demoted) fill the last k slots (outer SRR); the demoted are
//! written at the tail. The first ready warp of that list issues (inner LRR) and the list then
//! starts after it (`order_lrr`).

use super::{first_valid, Params};
use crate::blocks::sharing::{ceil_log2, index_mux};
use crate::netlist::{or_tree, select_onehot, Expr, Module};
use crate::params::bits_for;

fn lit(v: usize, width: usize) -> Expr {
    Expr::lit(v as u64, width)
}

/// The scheduler's issue (valid, warp index) under TWO_LEVEL_ACTIVE, with its state update.
pub(super) fn build(m: &mut Module, p: &Params, ready: &[Expr], wait: &[Expr]) -> (Expr, Expr) {
    let (ws, ib, n) = (p.ws(), p.idx_bits(), p.tl_slots());
    let pend = ws - n;
    // Counts 0..=M and list positions up to 2M − 1.
    let cw = bits_for(n as u64) + 1;
    let (zero, no) = (lit(0, ib), lit(0, 1));
    m.section("TWO_LEVEL_ACTIVE state: the active list and the pending FIFO (§4.1)");
    let act: Vec<Expr> = (0..n)
        .map(|s| m.reg(&format!("tl_act_{s}"), ib, s as u64))
        .collect();
    let ring = (pend > 0).then(|| Ring::new(m, ib, n, pend));

    m.section("Demotion: waiting active warps leave, the others move up (order_warps)");
    let dem: Vec<Expr> = act
        .iter()
        .enumerate()
        .map(|(s, a)| {
            let w = index_mux(m, &format!("tl_dem{s}_sel"), a, wait, &no);
            m.wire(&format!("tl_dem_{s}"), w)
        })
        .collect();
    // kpos[s]: the kept slots before slot s; kpos[M] = the kept count.
    let mut kpos = vec![lit(0, cw)];
    for (s, d) in dem.iter().enumerate() {
        let next = &kpos[s] + &(!d.clone()).zext(cw);
        kpos.push(m.wire(&format!("tl_kpos_{}", s + 1), next));
    }
    let kept = kpos[n].clone();
    // demoted[i]: the i-th demoted slot's warp (slot s is the (s − kpos[s])-th).
    let demoted: Vec<Expr> = (0..n)
        .map(|i| {
            let sel: Vec<Expr> = (0..n)
                .map(|s| &dem[s] & &(lit(s, cw) - kpos[s].clone()).equals(&lit(i, cw)))
                .collect();
            m.wire(&format!("tl_demoted_{i}"), select_onehot(&sel, &act, ib))
        })
        .collect();

    m.section("Promotion: the pending FIFO's front, then the demoted, refill the list (SRR)");
    // seq[i]: the i-th warp of (pending ++ demoted).
    let seq: Vec<Expr> = (0..n)
        .map(|i| match &ring {
            Some(r) if i < pend => r.read(m, i),
            _ => demoted[i - pend].clone(),
        })
        .collect();
    let list: Vec<Expr> = (0..n)
        .map(|t| {
            let sel: Vec<Expr> = (0..n)
                .map(|s| !dem[s].clone() & kpos[s].equals(&lit(t, cw)))
                .collect();
            let stay = select_onehot(&sel, &act, ib);
            let j = m.wire(&format!("tl_from_{t}"), lit(t, cw) - kept.clone());
            let promoted = index_mux(m, &format!("tl_seq{t}"), &j, &seq, &zero);
            m.wire(
                &format!("tl_list_{t}"),
                lit(t, cw).lt(&kept).mux(&stay, &promoted),
            )
        })
        .collect();
    if let Some(r) = &ring {
        r.update(m, n, &kept, &demoted);
    }

    m.section("Issue: the list's first ready warp (inner LRR)");
    let rdy: Vec<Expr> = list
        .iter()
        .enumerate()
        .map(|(t, w)| {
            let r = index_mux(m, &format!("tl_rdy{t}_sel"), w, ready, &no);
            m.wire(&format!("tl_rdy_{t}"), r)
        })
        .collect();
    let first = first_valid(m, "tl_first", &rdy, ceil_log2(n as u32));
    let f = m.wire("tl_first_pos", first.idx);
    let valid = m.wire("tl_iss_valid", first.valid);
    let pick = index_mux(m, "tl_pick", &f, &list, &zero);

    m.section("After an issue the list starts after the issued warp (do_on_warp_issued)");
    let fz = f.zext(cw);
    for (t, a) in act.iter().enumerate() {
        let r = m.wire(&format!("tl_rot_{t}_raw"), &fz + &lit(1 + t, cw));
        let wrapped = r.lt(&lit(n, cw)).mux(&r, &(&r - &lit(n, cw)));
        let at = m.wire(&format!("tl_rot_{t}"), wrapped);
        let rotated = index_mux(m, &format!("tl_rot{t}_sel"), &at, &list, &zero);
        m.next(a, valid.mux(&rotated, &list[t]));
    }
    (valid, pick)
}

/// The pending FIFO: `words` (2^⌈log2 WS⌉ warp indices) from `head`, always `pend` of them.
struct Ring {
    head: Expr,
    words: Vec<Expr>,
    pend: usize,
}

impl Ring {
    /// The registers at reset: warps n.. at 0.. (`add_supervised_warp_id`).
    fn new(m: &mut Module, ib: usize, n: usize, pend: usize) -> Ring {
        let words = (0..1usize << ib)
            .map(|e| {
                let reset = if e < pend { n + e } else { 0 };
                m.reg(&format!("tl_pend_{e}"), ib, reset as u64)
            })
            .collect();
        let head = m.reg("tl_pend_head", ib, 0);
        Ring { head, words, pend }
    }

    /// The `i`-th pending warp (i < pend).
    fn read(&self, m: &mut Module, i: usize) -> Expr {
        let ib = self.head.width();
        let a = m.wire(&format!("tl_pend_rd{i}"), &self.head + &lit(i, ib));
        index_mux(
            m,
            &format!("tl_pend_rd{i}_sel"),
            &a,
            &self.words,
            &lit(0, ib),
        )
    }

    /// The edge: the k = n − `kept` demoted warps pushed at the tail (head + pend), the k
    /// promoted ones popped at the head.
    fn update(&self, m: &mut Module, n: usize, kept: &Expr, demoted: &[Expr]) {
        let (ib, cw) = (self.head.width(), kept.width());
        let cap = self.words.len();
        let k = m.wire("tl_k", lit(n, cw) - kept.clone());
        let ports: Vec<(Expr, Expr)> = (0..n)
            .map(|i| {
                let en = m.wire(&format!("tl_pend_we{i}"), lit(i, cw).lt(&k));
                let to = &self.head + &lit((self.pend + i) % cap, ib);
                (en, m.wire(&format!("tl_pend_wa{i}"), to))
            })
            .collect();
        for (e, word) in self.words.iter().enumerate() {
            let hits: Vec<Expr> = ports
                .iter()
                .map(|(en, a)| en & &a.equals(&lit(e, ib)))
                .collect();
            let hit = m.wire(&format!("tl_pend_{e}_we"), or_tree(hits.clone(), 1));
            let data = select_onehot(&hits, demoted, ib);
            m.next(word, hit.mux(&data, word));
        }
        // k ≤ M < 2^ib: it fits the pointer.
        let step = match cw.cmp(&ib) {
            std::cmp::Ordering::Greater => k.slice(0, ib),
            _ => k.zext(ib),
        };
        m.next(&self.head, &self.head + &step);
    }
}
