//! The pipeline's logic (docs/elastic-pipeline.md §3.2 end-of-cycle evaluation, §3.3 causes,
//! §4 structures, §6 blocks), one function per section of the emitted Verilog.
//!
//! The pipeline module ([`super::build`], [`super::build_with_pc`], both through [`logic`])
//! instantiates the spec §6 sub-blocks, each its own Verilog module:
//!
//! ```text
//! instance     module (spec §6)        holds
//! front_end    FrontEnd<fe_depth>      F, D1..Dk, EXE; step 7 (bubble-collapsing)
//! mem0_stage   Mem0Stage               MEM0, its elapsed counter, the detector `det`; step 1
//! nonmem       NonmemFifo<Q>           NQ (Elastic, Q > 0), with the nonmem_min_age ages
//! wb_mux       WbMux<M>                step 2 (fixed-priority select)
//! premem       PremFifo<N>             PRE (Elastic, N > 0)
//! ```
//!
//! and keeps the backend glue itself: MEM1..MEM(M−1) (step 3), the NM latches (Split, step 4),
//! the EXE routing (step 5), the MEM0 input MUX (step 6), the WB registers (step 8) and the stall
//! cause (§3.3). Entries cross module ports as packed buses ([`Layout`]).
//!
//! The sections run in the order [`logic`] calls them; that order is the order of the Verilog
//! text (see `docs/verilog.md`).

use super::entry::{one, shown_tag, Entry, Latch, Layout};
use super::fifo::{fifo, fifo_port as qp, FifoKind};
use super::front_end::{fe_port as fp, front_end};
use super::mem0::{mem0_port as mp, mem0_stage, Mem0Key};
use super::top::{PipeIn, PipeOut};
use super::wb_mux::{src_name, wb_mux, wb_port as wp};
use super::{stage_ports, stages, Cause, Params, PipeMode, WbPriority, WbSrc};
use crate::netlist::{or_all, Expr, InstanceRef, Module};
use crate::params::bits_for;
use std::sync::Arc;

/// The pipeline's logic inside `m` (spec §3.2 steps 1–8, §3.3 causes); entries carry a PC of
/// `pcw` bits when `pcw` > 0. The §6 sub-blocks are instances (see the overview above); the
/// backend glue is built here.
pub fn logic(m: &mut Module, p: &Params, pcw: usize, io: PipeIn) -> PipeOut {
    let mut pipe = Pipe {
        m,
        p,
        pcw,
        lay: Layout::of(p, pcw),
        mm: p.mem_stages as usize,
        tw: p.tag_bits as usize,
        with_kind: pcw > 0,
    };
    let backend = pipe.backend_state();
    let exe = pipe.fe_instance(io.in_valid, io.in_entry);
    let mem0 = pipe.mem0_instance(&backend);
    let nq = pipe.nonmem_instance();
    let st = Stages {
        backend,
        exe,
        mem0,
        nq,
    };
    let wb = pipe.wb_select(&st, &io.icnt_valid);
    let adv = pipe.mem_advance(&st, &wb);
    let drain = pipe.nq_dequeue(&st, &wb);
    let pre = pipe.premem_instance();
    let route = pipe.exe_output(&st, &wb, &adv, &drain, pre.as_ref());
    pipe.mem0_input(&st, &adv, &route, pre.as_ref());
    pipe.registers(&st, &wb, &adv, &drain, &route);
    let cause = pipe.stall_cause(&st, &wb, pre.as_ref());
    pipe.outputs(&st, &wb, pre.as_ref(), cause)
}

/// The pipeline under construction in `m`, with what every section reads.
struct Pipe<'a> {
    m: &'a mut Module,
    p: &'a Params,
    /// PC bits of an entry (0: trace mode, no PC).
    pcw: usize,
    lay: Layout,
    /// M, the memory stages.
    mm: usize,
    /// Tag bits.
    tw: usize,
    /// The WB kind is reported by the scheduler-mode pipeline only (see
    /// [`PipeOut::wb_load_kind`]).
    with_kind: bool,
}

/// The backend's own latches and the WB registers (section "backend state").
struct Backend {
    /// MEM1..MEM(M−1).
    mem_tail: Vec<Latch>,
    /// NM0..NM(M−1) (Split).
    nm: Vec<Latch>,
    wb_valid: Expr,
    wb_icnt: Expr,
    wb_tag: Expr,
    wb_src: Expr,
}

/// The `front_end` instance and the EXE latch it shows.
struct Exe {
    fe: InstanceRef,
    valid: Expr,
    /// The EXE entry as a packed bus, and its fields.
    bus: Expr,
    e: Entry,
    /// EXE holds a memory (`is_mem`) or an ALU (`is_alu`) entry.
    is_mem: Expr,
    is_alu: Expr,
}

/// The `mem0_stage` instance and the MEM path.
struct Mem0 {
    i: InstanceRef,
    valid: Expr,
    e: Entry,
    done: Expr,
    leave: Expr,
    /// MEM0..MEM(M−1) as (valid, entry).
    stages: Vec<(Expr, Entry)>,
}

/// What the sections before the WB select built: the latches and instances every later
/// section reads.
struct Stages {
    backend: Backend,
    exe: Exe,
    mem0: Mem0,
    /// The `nonmem` instance (Elastic, Q > 0).
    nq: Option<InstanceRef>,
}

/// One input of the WB MUX as the pipeline wires it.
struct WbInput {
    src: WbSrc,
    /// The source can write back (step 2's availability).
    avail: Expr,
    /// Its entry's tag and kind (none for ICNT; the kind only when WB reports it).
    tag_kind: Option<(Expr, Option<Expr>)>,
}

/// The `wb_mux` instance and its priority order.
struct WbSel {
    wbm: InstanceRef,
    order: Vec<WbSrc>,
}

impl WbSel {
    /// Source `s` wins WB this cycle (constant 0 for a source the wiring lacks).
    fn sel(&self, s: WbSrc) -> Expr {
        if self.order.contains(&s) {
            self.wbm.output(&wp::sel(&src_name(s)))
        } else {
            one(false)
        }
    }
}

/// Step 3: which MEM latches advance, and whether MEM0 is free.
struct Advance {
    moves: Vec<Expr>,
    mem0_free: Expr,
}

/// Step 4: room in NQ after its dequeue, and the NM shift.
struct Drain {
    nq_room: Expr,
    nm_moves: Vec<Expr>,
    nm_free: Vec<Expr>,
}

/// Step 5: where the EXE entry goes.
struct Route {
    to_mem0: Expr,
    to_pre: Expr,
    to_nm: Expr,
}

impl Pipe<'_> {
    /// Section "backend state": MEM1..MEM(M−1), NM0..NM(M−1) (Split), WB.
    fn backend_state(&mut self) -> Backend {
        let (lay, mm, tw) = (self.lay, self.mm, self.tw);
        let m = &mut *self.m;
        m.section("backend state: MEM1..MEM(M-1), NM0..NM(M-1) (Split), WB");
        let mem_tail: Vec<Latch> = (1..mm)
            .map(|k| Latch::new(m, lay, &format!("mem{k}")))
            .collect();
        let nm: Vec<Latch> = (0..self.p.nm_slots())
            .map(|k| Latch::new(m, lay, &format!("nm{k}")))
            .collect();
        Backend {
            mem_tail,
            nm,
            wb_valid: m.reg("wb_valid_q", 1, 0),
            wb_icnt: m.reg("wb_icnt_q", 1, 0),
            wb_tag: m.reg("wb_tag_q", tw, 0),
            wb_src: m.reg("wb_src_q", 3, 0),
        }
    }

    /// Section "FrontEnd<fe_depth>": the `front_end` instance (step 7 inside), fed by the
    /// pipeline's input.
    fn fe_instance(&mut self, in_valid: Expr, in_entry: Expr) -> Exe {
        let lay = self.lay;
        let m = &mut *self.m;
        m.section("§6 FrontEnd<fe_depth>: F, D1..Dk, EXE (step 7 inside)");
        let fe = m.instance(
            "front_end",
            &Arc::new(front_end(lay, self.p.fe_depth as usize)),
        );
        m.assign(&fe.input(fp::IN_VALID), in_valid);
        m.assign(&fe.input(fp::IN_ENTRY), in_entry);
        let valid = fe.output(fp::EXE_VALID);
        let bus = fe.output(fp::EXE_ENTRY);
        let e = lay.unpack(&bus);
        let is_mem = m.wire("exe_is_mem", &valid & &!e.is_alu());
        let is_alu = m.wire("exe_is_alu", &valid & &e.is_alu());
        Exe {
            fe,
            valid,
            bus,
            e,
            is_mem,
            is_alu,
        }
    }

    /// Section "Mem0Stage": the `mem0_stage` instance (step 1 inside), and the MEM path with the
    /// backend's MEM1..MEM(M−1).
    fn mem0_instance(&mut self, backend: &Backend) -> Mem0 {
        let m = &mut *self.m;
        m.section("§6 Mem0Stage: MEM0, rem and the bank-conflict detector (step 1 inside)");
        let key = Mem0Key::of(self.p, self.pcw);
        let i = m.instance("mem0_stage", &Arc::new(mem0_stage(&key)));
        let valid = i.output(mp::VALID);
        let e = self.lay.unpack(&i.output(mp::ENTRY));
        let stages = std::iter::once((valid.clone(), e.clone()))
            .chain(
                backend
                    .mem_tail
                    .iter()
                    .map(|l| (l.valid.clone(), l.e.clone())),
            )
            .collect();
        Mem0 {
            done: i.output(mp::DONE),
            leave: i.output(mp::LEAVE),
            i,
            valid,
            e,
            stages,
        }
    }

    /// Section "NonmemFifo<Q>": the `nonmem` instance, when Elastic with Q > 0.
    fn nonmem_instance(&mut self) -> Option<InstanceRef> {
        (self.p.nq_slots() > 0).then(|| {
            self.m
                .section("§6 NonmemFifo<Q>: NQ, oldest first (Elastic)");
            let kind = FifoKind::Nonmem {
                max_age: u64::from(self.p.nonmem_min_age),
                head_kind: self.with_kind,
            };
            let fifo = fifo(kind, self.lay, self.p.nq_slots());
            self.m.instance("nonmem", &Arc::new(fifo))
        })
    }

    /// Section "step 2": the WB sources in priority order (by `pipe_mode` and `wb_priority`)
    /// wired to the `wb_mux` instance.
    fn wb_select(&mut self, st: &Stages, icnt_valid: &Expr) -> WbSel {
        let (p, mm, with_kind) = (self.p, self.mm, self.with_kind);
        let m = &mut *self.m;
        m.section("§3.2 step 2: WB select (WbMux, fixed priority)");
        let mem = &st.mem0.stages;
        let mem_avail = if mm > 1 {
            mem[mm - 1].0.clone()
        } else {
            st.mem0.done.clone()
        };
        let entry_src = |src: WbSrc, avail: Expr, e: &Entry| WbInput {
            src,
            avail,
            tag_kind: Some((e.tag.clone(), with_kind.then(|| e.kind.clone()))),
        };
        // Highest priority first.
        let mut sources = vec![WbInput {
            src: WbSrc::Icnt,
            avail: icnt_valid.clone(),
            tag_kind: None,
        }];
        let mem_src = entry_src(WbSrc::Mem, mem_avail, &mem[mm - 1].1);
        let nq_src = st.nq.as_ref().map(|q| WbInput {
            src: WbSrc::Nq,
            avail: q.output(qp::HEAD_ELIGIBLE),
            tag_kind: Some((
                q.output(qp::HEAD_TAG),
                with_kind.then(|| q.output(qp::HEAD_KIND)),
            )),
        });
        match p.pipe_mode {
            PipeMode::Unified => sources.push(mem_src),
            PipeMode::Split => {
                sources.push(mem_src);
                let last = &st.backend.nm[mm - 1];
                sources.push(entry_src(WbSrc::Nm, last.valid.clone(), &last.e));
            }
            PipeMode::Elastic => {
                let mut nq_first = p.wb_priority == WbPriority::NonmemFirst;
                if nq_src.is_some() && !nq_first {
                    nq_first = crate::planted!(super::faults::NQ_BEATS_MEM, true, false);
                }
                if nq_first {
                    sources.extend(nq_src);
                    sources.push(mem_src);
                } else {
                    sources.push(mem_src);
                    sources.extend(nq_src);
                }
                if p.nonmem_min_age == 0 {
                    sources.push(entry_src(WbSrc::Exe, st.exe.is_alu.clone(), &st.exe.e));
                }
            }
        }
        let order: Vec<WbSrc> = sources.iter().map(|s| s.src).collect();
        let wbm = m.instance("wb_mux", &Arc::new(wb_mux(&order, self.tw, with_kind)));
        for s in &sources {
            let name = src_name(s.src);
            m.assign(&wbm.input(&wp::valid(&name)), s.avail.clone());
            if let Some((tag, kind)) = &s.tag_kind {
                m.assign(&wbm.input(&wp::tag(&name)), tag.clone());
                if let Some(kind) = kind {
                    m.assign(&wbm.input(&wp::kind(&name)), kind.clone());
                }
            }
        }
        WbSel { wbm, order }
    }

    /// Section "step 3": the MEM advance, rippling from MEM_last; MEM0 leaves iff done and its
    /// successor is free.
    fn mem_advance(&mut self, st: &Stages, wb: &WbSel) -> Advance {
        let mm = self.mm;
        let m = &mut *self.m;
        let mem = &st.mem0.stages;
        m.section("§3.2 step 3: MEM advance, rippling from MEM_last");
        let mut moves = vec![one(false); mm];
        let mut free = vec![one(false); mm];
        moves[mm - 1] = wb.sel(WbSrc::Mem);
        for k in (1..mm).rev() {
            if k < mm - 1 {
                moves[k] = m.wire(&format!("mem{k}_moves"), &mem[k].0 & &free[k + 1]);
            }
            free[k] = m.wire(
                &format!("mem{k}_free"),
                !mem[k].0.clone() | moves[k].clone(),
            );
        }
        // MEM0 leaves iff done and its successor is free (M = 1: iff WB selected it).
        let out_ready = if mm > 1 {
            free[1].clone()
        } else {
            wb.sel(WbSrc::Mem)
        };
        m.assign(&st.mem0.i.input(mp::OUT_READY), out_ready);
        moves[0] = st.mem0.leave.clone();
        let mem0_valid = &st.mem0.valid;
        let mem0_free = m.wire("mem0_free", !mem0_valid.clone() | st.mem0.leave.clone());
        Advance { moves, mem0_free }
    }

    /// Section "step 4": the NQ dequeue (Elastic) or the NM shift (Split).
    fn nq_dequeue(&mut self, st: &Stages, wb: &WbSel) -> Drain {
        let m = &mut *self.m;
        let nm = &st.backend.nm;
        m.section("§3.2 step 4: NQ dequeue (Elastic) or NM shift (Split)");
        let nq_room = match &st.nq {
            Some(q) => {
                m.assign(&q.input(qp::DEQ), wb.sel(WbSrc::Nq));
                q.output(qp::ROOM)
            }
            None => one(false),
        };
        let mut nm_moves = vec![one(false); nm.len()];
        let mut nm_free = vec![one(false); nm.len()];
        for k in (0..nm.len()).rev() {
            nm_moves[k] = if k == nm.len() - 1 {
                wb.sel(WbSrc::Nm)
            } else {
                m.wire(&format!("nm{k}_moves"), &nm[k].valid & &nm_free[k + 1])
            };
            nm_free[k] = m.wire(
                &format!("nm{k}_free"),
                !nm[k].valid.clone() | nm_moves[k].clone(),
            );
        }
        Drain {
            nq_room,
            nm_moves,
            nm_free,
        }
    }

    /// Section "PremFifo<N>": the `premem` instance, when Elastic with N > 0.
    fn premem_instance(&mut self) -> Option<InstanceRef> {
        (self.p.pre_slots() > 0).then(|| {
            self.m
                .section("§6 PremFifo<N>: PRE, oldest first (Elastic)");
            let fifo = fifo(FifoKind::Prem, self.lay, self.p.pre_slots());
            self.m.instance("premem", &Arc::new(fifo))
        })
    }

    /// Section "step 5": the EXE entry goes to MEM0, PRE, NQ, NM0 or WB (by `pipe_mode`); EXE
    /// accepts when it goes anywhere; NQ enqueues it.
    fn exe_output(
        &mut self,
        st: &Stages,
        wb: &WbSel,
        adv: &Advance,
        drain: &Drain,
        pre: Option<&InstanceRef>,
    ) -> Route {
        let m = &mut *self.m;
        let exe = &st.exe;
        let mem0_free = &adv.mem0_free;
        m.section("§3.2 step 5: EXE output");
        let (to_mem0, to_pre, to_nq, to_nm, to_wb) = match self.p.pipe_mode {
            PipeMode::Unified => (
                &exe.valid & mem0_free,
                one(false),
                one(false),
                one(false),
                one(false),
            ),
            PipeMode::Split => (
                &exe.is_mem & mem0_free,
                one(false),
                one(false),
                &exe.is_alu & &drain.nm_free[0],
                one(false),
            ),
            PipeMode::Elastic => {
                // MEM0 is free and no PRE entry has precedence (D11); without PRE, only MEM0
                // counts.
                let mem0_open = match pre {
                    Some(q) => !q.output(qp::HEAD_VALID) & mem0_free.clone(),
                    None => mem0_free.clone(),
                };
                let bypass = m.wire("exe_bypass", &exe.is_mem & &mem0_open);
                // PRE-full uses the occupancy at the start of the cycle; without PRE, never.
                let to_pre = match pre {
                    Some(q) => &exe.is_mem & &(!bypass.clone() & !q.output(qp::FULL)),
                    None => one(false),
                };
                let to_wb = &exe.is_alu & &wb.sel(WbSrc::Exe);
                let to_nq = &exe.is_alu & &(!to_wb.clone() & drain.nq_room.clone());
                (bypass, to_pre, to_nq, one(false), to_wb)
            }
        };
        let to_mem0 = m.wire("exe_to_mem0", to_mem0);
        let to_pre = m.wire("exe_to_pre", to_pre);
        let to_nq = m.wire("exe_to_nq", to_nq);
        let to_nm = m.wire("exe_to_nm0", to_nm);
        let exe_leaves = m.wire(
            "exe_leaves",
            or_all(
                &[
                    to_mem0.clone(),
                    to_pre.clone(),
                    to_nq.clone(),
                    to_nm.clone(),
                    to_wb,
                ],
                1,
            ),
        );
        m.assign(&exe.fe.input(fp::EXE_ACCEPT), exe_leaves);
        if let Some(q) = &st.nq {
            m.assign(&q.input(qp::ENQ), to_nq);
            m.assign(&q.input(qp::ENQ_ENTRY), exe.bus.clone());
        }
        Route {
            to_mem0,
            to_pre,
            to_nm,
        }
    }

    /// Section "step 6": the PRE head goes to MEM0 first, else the EXE bypass (the MEM0 input
    /// MUX, D11); PRE enqueues the EXE entry.
    fn mem0_input(&mut self, st: &Stages, adv: &Advance, route: &Route, pre: Option<&InstanceRef>) {
        let m = &mut *self.m;
        let exe = &st.exe;
        m.section("§3.2 step 6: PRE head -> MEM0, the MEM0 input MUX (D11)");
        let (mem0_load, mem0_in) = match pre {
            Some(q) => {
                let pre_deq = m.wire("pre_deq", &q.output(qp::HEAD_VALID) & &adv.mem0_free);
                m.assign(&q.input(qp::ENQ), route.to_pre.clone());
                m.assign(&q.input(qp::ENQ_ENTRY), exe.bus.clone());
                m.assign(&q.input(qp::DEQ), pre_deq.clone());
                let head = self.lay.unpack(&q.output(qp::HEAD));
                (
                    &route.to_mem0 | &pre_deq,
                    Entry::mux(&pre_deq, &head, &exe.e).pack(),
                )
            }
            None => (route.to_mem0.clone(), exe.bus.clone()),
        };
        m.assign(&st.mem0.i.input(mp::IN_VALID), mem0_load);
        m.assign(&st.mem0.i.input(mp::IN_ENTRY), mem0_in);
    }

    /// Section "steps 3-4 and 8": the next state of MEM1..MEM(M−1), NM and WB.
    fn registers(&mut self, st: &Stages, wb: &WbSel, adv: &Advance, drain: &Drain, route: &Route) {
        let m = &mut *self.m;
        let (be, mem, moves) = (&st.backend, &st.mem0.stages, &adv.moves);
        let (nm, nm_moves) = (&be.nm, &drain.nm_moves);
        m.section("§3.2 steps 3-4 and 8: MEM1..MEM(M-1), NM and WB registers");
        for k in 1..self.mm {
            be.mem_tail[k - 1].update(m, &moves[k - 1], &mem[k - 1].1, &moves[k]);
        }
        for k in 0..nm.len() {
            let (load, input) = if k == 0 {
                (route.to_nm.clone(), st.exe.e.clone())
            } else {
                (nm_moves[k - 1].clone(), nm[k - 1].e.clone())
            };
            nm[k].update(m, &load, &input, &nm_moves[k]);
        }
        m.next(&be.wb_valid, wb.wbm.output(wp::VALID));
        m.next(&be.wb_icnt, wb.sel(WbSrc::Icnt));
        m.next(&be.wb_tag, wb.wbm.output(wp::TAG));
        m.next(&be.wb_src, wb.wbm.output(wp::SRC));
    }

    /// Section "§3.3 stall cause": the cause code while the front end holds.
    fn stall_cause(&mut self, st: &Stages, wb: &WbSel, pre: Option<&InstanceRef>) -> Expr {
        let m = &mut *self.m;
        let (exe, mem0_i) = (&st.exe, &st.mem0.i);
        m.section("§3.3 stall cause");
        let memlike = if self.p.pipe_mode == PipeMode::Unified {
            exe.valid.clone()
        } else {
            exe.is_mem.clone()
        };
        // (MEM0 valid ∧ rem > 1) ∨ (Elastic ∧ N > 0 ∧ p = N); PRE exists iff Elastic with N > 0.
        let conflict_busy = match pre {
            Some(q) => &mem0_i.output(mp::CONFLICT_BUSY) | &q.output(qp::FULL),
            None => mem0_i.output(mp::CONFLICT_BUSY),
        };
        let conflict_busy = m.wire("mem0_busy", conflict_busy);
        let code = |c: Cause| Expr::lit(c as u64, 2);
        let mem_cause = conflict_busy.mux(&code(Cause::BankConflict), &code(Cause::Other));
        let alu_cause = wb
            .sel(WbSrc::Mem)
            .mux(&code(Cause::BankConflict), &code(Cause::Other));
        let fe_hold = exe.fe.output(fp::FE_HOLD);
        fe_hold.mux(&memlike.mux(&mem_cause, &alu_cause), &code(Cause::None))
    }

    /// The outputs: the trace taps in [`stages`] order, the counts and what a surrounding block
    /// reads.
    fn outputs(&self, st: &Stages, wb: &WbSel, pre: Option<&InstanceRef>, cause: Expr) -> PipeOut {
        let p = self.p;
        let (fe, exe, mem0) = (&st.exe.fe, &st.exe, &st.mem0);
        let fe_taps = std::iter::once("f".to_string())
            .chain((1..=p.fe_depth).map(|k| format!("d{k}")))
            .map(|s| {
                let (v, t) = stage_ports(&s);
                (fe.output(&v), fe.output(&t))
            });
        let fifo_taps = |q: Option<&InstanceRef>, n: usize| -> Vec<(Expr, Expr)> {
            q.map_or(vec![], |q| {
                (0..n)
                    .map(|i| {
                        let (v, t) = qp::slot(i);
                        (q.output(&v), q.output(&t))
                    })
                    .collect()
            })
        };
        let latch_tap = |l: &Latch| (l.valid.clone(), l.shown_tag());
        let all: Vec<(Expr, Expr)> = fe_taps
            .chain(std::iter::once((
                exe.valid.clone(),
                shown_tag(&exe.valid, &exe.e.tag),
            )))
            .chain(fifo_taps(pre, p.pre_slots()))
            .chain(std::iter::once((
                mem0.valid.clone(),
                shown_tag(&mem0.valid, &mem0.e.tag),
            )))
            .chain(st.backend.mem_tail.iter().map(latch_tap))
            .chain(fifo_taps(st.nq.as_ref(), p.nq_slots()))
            .chain(st.backend.nm.iter().map(latch_tap))
            .collect();
        let stage_names = stages(p);
        assert_eq!(stage_names.len(), all.len(), "one tap per traced latch");
        let taps = stage_names
            .into_iter()
            .zip(all)
            .map(|(stage, (valid, tag))| (stage, valid, tag))
            .collect();
        let count_of = |q: Option<&InstanceRef>, n: usize| match q {
            Some(q) => q.output(qp::COUNT),
            None => Expr::lit(0, bits_for(n as u64)),
        };
        let be = &st.backend;
        PipeOut {
            in_ready: fe.output(fp::IN_READY),
            fe_hold: fe.output(fp::FE_HOLD),
            cause,
            wb_valid: be.wb_valid.clone(),
            wb_icnt: be.wb_icnt.clone(),
            wb_tag: be.wb_tag.clone(),
            wb_src: be.wb_src.clone(),
            mem0_rem: mem0.i.output(mp::REM),
            pre_count: count_of(pre, p.pre_slots()),
            nq_count: count_of(st.nq.as_ref(), p.nq_slots()),
            taps,
            mem0_leave: mem0.leave.clone(),
            mem0: mem0.e.clone(),
            mem0_c: mem0.i.output(mp::C),
            wb_load: wb.wbm.output(wp::LOAD),
            wb_load_tag: wb.wbm.output(wp::TAG),
            wb_load_kind: self.with_kind.then(|| wb.wbm.output(wp::KIND)),
        }
    }
}
