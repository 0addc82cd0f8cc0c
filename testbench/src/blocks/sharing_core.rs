//! Stimulus for scratchpad sharing at SM level (docs/scratchpad-sharing.md §5): random kernels
//! for the thread-block-residency SM model and for `sharing_core` in the loop — TB shapes with
//! partial warps, shared offsets below, at and above `u`, relssp placed after a warp's last
//! shared-region access (the compiler's safety rule, §6.4) or nowhere, early exits, barriers
//! and global loads — which proptest shrinks to a minimal kernel file; the SM model with the
//! core's RTL in the loop; and the core's own random cycles on its ports (its `Bench`).

use crate::coverage::Cover;
use crate::design::Bench;
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use smrtl_cosim::blocks::sharing_core::{Inputs, Io, Model, Outputs};
use smrtl_cosim::harness::{first_difference, Trace as WaveRows};
use smrtl_cosim::kernel::cfg::{BlockFile, Program, ProgramFile, Var};
use smrtl_cosim::kernel::program::{Branch, Instr, Kernel, Offsets, Op};
use smrtl_cosim::sm::sharing_sm::{CycleRecord, LoopError, Phase, SharingSm, SmParams, SmStats};
use smrtl_cosim::sm::stalls::Stalls;
use smrtl_cosim::{Layout, Rtl};
use smrtl_hdl::blocks::sharing::{Class, FreeClass, Policy, Rank, Sched, Shape};
use smrtl_hdl::blocks::sharing_core::{self as core_rtl, Params as CoreParams};
use smrtl_hdl::progress::Counter;
use smrtl_hdl::tools::ToolError;
use std::sync::Arc;

/// One random SM-level case: the params (shape and switches) and a kernel.
#[derive(Clone, Debug)]
pub struct KernelCase {
    pub params: SmParams,
    pub kernel: Kernel,
}

impl KernelCase {
    /// The case as a self-contained kernel file (its params inside), for `smrtl sim --kernel`.
    pub fn file(&self) -> String {
        let mut k = self.kernel.clone();
        if let serde_json::Value::Object(p) =
            serde_json::to_value(&self.params).expect("params serialize")
        {
            k.params = p;
        }
        serde_json::to_string_pretty(&k).expect("kernel serializes")
    }
}

/// Where a shared access falls relative to the private size `u` (§1.5).
#[derive(Clone, Copy, Debug)]
enum Place {
    Private,
    LastPrivate,
    FirstShared,
    Shared,
}

fn place() -> impl Strategy<Value = Place> {
    prop_oneof![
        3 => Just(Place::Private),
        1 => Just(Place::LastPrivate),
        1 => Just(Place::FirstShared),
        4 => Just(Place::Shared),
    ]
}

/// An offset of kind `place` in a TB of `smem` bytes with private size `u`; `r` picks inside
/// the range.
fn offset(place: Place, u: u32, smem: u32, r: u32) -> u32 {
    let u = u.clamp(1, smem - 1);
    match place {
        Place::Private => r % u,
        Place::LastPrivate => u - 1,
        Place::FirstShared => u,
        Place::Shared => u + r % (smem - u),
    }
}

/// An instruction before offsets are known: `Some(place)` for a shared access.
#[derive(Clone, Debug)]
struct Draft {
    op: Op,
    place: Option<(Place, bool, u32)>,
    dst: Option<u8>,
    src: Vec<u8>,
}

fn draft() -> impl Strategy<Value = Draft> {
    let reg = 0..4u8;
    let op = prop_oneof![
        4 => Just(Op::Alu),
        1 => Just(Op::Mov),
        3 => Just(Op::LdShared),
        2 => Just(Op::StShared),
        1 => Just(Op::AtomShared),
        1 => Just(Op::LdGlobal),
        1 => Just(Op::StGlobal),
        1 => Just(Op::Bar),
    ];
    (
        op,
        place(),
        any::<bool>(),
        any::<u32>(),
        proptest::option::of(reg.clone()),
        proptest::collection::vec(reg, 0..=2),
    )
        .prop_map(|(op, place, per_lane, r, dst, src)| Draft {
            op,
            place: op.is_shared().then_some((place, per_lane, r)),
            dst,
            src,
        })
}

/// One warp's stream: drafts, where relssp goes (`None`: no relssp; else after the last
/// shared-region access), and whether the warp exits early.
fn stream() -> impl Strategy<Value = (Vec<Draft>, bool, bool)> {
    (
        proptest::collection::vec(draft(), 1..=10),
        prop::bool::weighted(0.6),
        prop::bool::weighted(0.15),
    )
}

/// Builds a warp's instructions from drafts: offsets from `u`, relssp after the last access
/// that may reach the shared region (or at the start if there is none), `exit` last.
fn build_stream(
    drafts: &[Draft],
    relssp: bool,
    early_exit: bool,
    u: u32,
    smem: u32,
    lanes: u32,
) -> Vec<Instr> {
    let mut v: Vec<Instr> = drafts
        .iter()
        .map(|d| {
            let off = d.place.map(|(place, per_lane, r)| {
                if per_lane {
                    Offsets::Lanes(
                        (0..lanes)
                            .map(|l| {
                                let p = if l % 3 == 0 { place } else { Place::Private };
                                offset(p, u, smem, r.rotate_left(l * 5))
                            })
                            .collect(),
                    )
                } else {
                    Offsets::All(offset(place, u, smem, r))
                }
            });
            Instr {
                dst: d.dst,
                src: d.src.clone(),
                off,
                ..Instr::of(d.op)
            }
        })
        .collect();
    if early_exit && v.len() > 1 {
        v.truncate(v.len() / 2);
    }
    if relssp {
        let reaches = |i: &Instr| {
            i.off.as_ref().is_some_and(|o| match o {
                Offsets::All(x) => *x >= u,
                Offsets::Lanes(xs) => xs.iter().any(|&x| x >= u),
                Offsets::Span { last, .. } => *last >= u,
            })
        };
        let at = v.iter().rposition(reaches).map_or(0, |i| i + 1);
        v.insert(at, Instr::of(Op::Relssp));
    }
    // A shared access that exits its TB's last threads would acquire with `done` already
    // true (err_proto, §2.4): compiled code exits after it.
    if v.last().is_none_or(|i| i.op.is_shared()) {
        v.push(Instr::of(Op::Exit));
    }
    if let Some(last) = v.last_mut() {
        last.exit = true;
    }
    v
}

/// Random SM-level cases on `shapes` (each one's T, W, LANES, NSCHED, R) with every switch
/// drawn: SCHED, RANK, GREEDY, POLICY, FREE_CLASS. Latencies are short (global 20) so kernels
/// run in hundreds of cycles.
pub fn cases(shapes: Vec<Shape>) -> impl Strategy<Value = KernelCase> {
    let switches = (
        prop_oneof![
            4 => Just(Sched::Owf),
            1 => Just(Sched::Lrr),
            1 => Just(Sched::Gto),
            1 => Just(Sched::TwoLevel),
            1 => Just(Sched::TwoLevelActive)
        ],
        prop_oneof![Just(Rank::Owf3), Just(Rank::Owf2), Just(Rank::Uwf)],
        any::<bool>(),
        prop_oneof![Just(Policy::Transfer), Just(Policy::Free)],
        prop_oneof![3 => Just(FreeClass::Nonowner), 1 => Just(FreeClass::Unshared)],
    );
    (proptest::sample::select(shapes), switches)
        .prop_flat_map(|(shape, sw)| {
            let lanes = shape.lanes;
            let smem_max = shape.smem;
            (
                Just(shape),
                Just(sw),
                1..=3 * lanes,           // threads: up to 3 warps, partial warps too
                smem_max / 5..=smem_max, // R_tb: 1..5 TBs unshared, so pairs form
                1..=10u32,               // grid
                proptest::collection::vec(stream(), 3),
            )
        })
        .prop_map(|(shape, sw, threads, smem, grid, streams)| {
            let (sched, rank, greedy, policy, free_class) = sw;
            let lanes = shape.lanes;
            let params = SmParams {
                shape,
                sched,
                rank,
                greedy,
                policy,
                free_class,
                lat_global: 20,
                ..SmParams::default()
            };
            let u = (smem.div_ceil(10)).div_ceil(4) * 4;
            let wpt = threads.div_ceil(lanes) as usize;
            let warps = streams
                .iter()
                .take(wpt)
                .map(|(d, rel, exit)| build_stream(d, *rel, *exit, u, smem, lanes))
                .collect();
            KernelCase {
                params,
                kernel: Kernel {
                    name: "random".into(),
                    threads,
                    smem,
                    grid,
                    warps,
                    locks: vec![],
                    params: Default::default(),
                    seed: 0,
                },
            }
        })
}

// ---------------------------------------------------------------------------------------------
// Random programs with control flow (§6.0)
// ---------------------------------------------------------------------------------------------

/// One random case with control flow: the params and a program.
#[derive(Clone, Debug)]
pub struct ProgramCase {
    pub params: SmParams,
    pub program: Program,
}

impl ProgramCase {
    /// The case as a self-contained program file (its params inside), for `smrtl sim --kernel`
    /// and `smrtl relssp`.
    pub fn file(&self) -> String {
        let mut f = self.program.to_file();
        if let serde_json::Value::Object(p) =
            serde_json::to_value(&self.params).expect("params serialize")
        {
            f.params = p;
        }
        serde_json::to_string_pretty(&f).expect("program serializes")
    }

    /// The lowered kernel (the program gives its grid).
    pub fn kernel(&self) -> Kernel {
        self.program.lower(1).kernel
    }
}

/// A block's end: exit, a forward jump, a forward two-way branch on a per-warp coin, or a loop
/// latch (back to an earlier block or itself, `trips` times, then forward).
#[derive(Clone, Copy, Debug)]
enum End {
    Exit,
    Jump(usize),
    Coin(usize, usize),
    Latch(usize, usize, u32),
}

/// A random body instruction in the text form over variables `vars`.
fn body(kind: u8, var: usize, reg: u8, vars: &[String]) -> String {
    let v = &vars[var % vars.len()];
    let r = reg % 4;
    match kind % 8 {
        0 => "alu".into(),
        1 => format!("alu r{r} -> r{}", (r + 1) % 4),
        2 => format!("ld.shared {v} -> r{r}"),
        3 => format!("st.shared {v} r{r}"),
        4 => format!("ld.global -> r{r}"),
        5 => format!("atom.shared {v}"),
        6 => "st.global".into(),
        _ => "bar".into(),
    }
}

/// Random programs on `shapes`: 2–7 blocks of up to 4 instructions over 1–3 `.shared`
/// variables, forward jumps and coin branches, loop latches of 1–3 trips (so every path ends),
/// partial warps, OWF or LRR with the other switches drawn. Global latency is 20 cycles.
pub fn programs(shapes: Vec<Shape>) -> impl Strategy<Value = ProgramCase> {
    let block = (
        proptest::collection::vec((any::<u8>(), any::<usize>(), any::<u8>()), 0..=4),
        (0u8..8, any::<usize>(), any::<usize>(), 1u32..=3),
    );
    (
        proptest::sample::select(shapes),
        prop_oneof![3 => Just(Sched::Owf), 1 => Just(Sched::Lrr)],
    )
        .prop_flat_map(move |(shape, sched)| {
            let lanes = shape.lanes;
            let smem = shape.smem;
            (
                Just(shape),
                Just(sched),
                (
                    prop_oneof![Just(Rank::Owf3), Just(Rank::Owf2), Just(Rank::Uwf)],
                    any::<bool>(),
                ),
                prop_oneof![Just(Policy::Transfer), Just(Policy::Free)],
                1..=3 * lanes,
                smem / 5..=smem / 2,
                proptest::collection::vec(1u32..=8, 1..=3),
                1..=8u32,
                any::<u64>(),
                proptest::collection::vec(block.clone(), 2..=7),
            )
        })
        .prop_map(
            |(shape, sched, (rank, greedy), policy, threads, tb_smem, weights, grid, seed, raw)| {
                let total: u32 = weights.iter().sum();
                let mut vars: Vec<Var> = weights
                    .iter()
                    .enumerate()
                    .map(|(i, w)| Var {
                        name: format!("V{i}"),
                        bytes: (tb_smem * w / total).max(1),
                        offset: None,
                    })
                    .collect();
                let used: u32 = vars.iter().map(|v| v.bytes).sum();
                vars.last_mut().expect("one variable").bytes += tb_smem.saturating_sub(used);
                let names: Vec<String> = vars.iter().map(|v| v.name.clone()).collect();
                let n = raw.len();
                let blocks = raw
                    .iter()
                    .enumerate()
                    .map(|(i, (instrs, (kind, a, b, trips)))| {
                        let fwd = |x: usize| i + 1 + x % (n - 1 - i).max(1);
                        let end = if i + 1 == n {
                            End::Exit
                        } else {
                            match kind {
                                0 => End::Exit,
                                1..=3 => End::Jump(fwd(*a)),
                                4 | 5 if fwd(*a) != fwd(*b) => End::Coin(fwd(*a), fwd(*b)),
                                1..=5 => End::Jump(fwd(*a)),
                                _ => End::Latch(a % (i + 1), fwd(*b), *trips),
                            }
                        };
                        let label = |j: usize| format!("B{j}");
                        let (next, branch) = match end {
                            End::Exit => (vec![], None),
                            End::Jump(t) => (vec![label(t)], None),
                            End::Coin(x, y) => (vec![label(x), label(y)], None),
                            End::Latch(back, out, trips) => {
                                (vec![label(back), label(out)], Some(Branch::Trips(trips)))
                            }
                        };
                        BlockFile {
                            name: label(i),
                            instrs: instrs
                                .iter()
                                .map(|&(k, v, r)| body(k, v, r, &names))
                                .collect(),
                            next,
                            branch,
                        }
                    })
                    .collect();
                let file = ProgramFile {
                    name: "random".into(),
                    shared: vars,
                    tb_smem: Some(tb_smem),
                    t: None,
                    threads: Some(threads),
                    grid: Some(grid),
                    seed,
                    blocks,
                    locks: vec![],
                    params: Default::default(),
                };
                ProgramCase {
                    params: SmParams {
                        shape,
                        sched,
                        rank,
                        greedy,
                        policy,
                        lat_global: 20,
                        ..SmParams::default()
                    },
                    program: Program::from_file(file).expect("random programs are well formed"),
                }
            },
        )
}

// ---------------------------------------------------------------------------------------------
// SM level: the model with `sharing_core` in the loop
// ---------------------------------------------------------------------------------------------

/// The core's port layout for `p`.
pub fn layout(p: &CoreParams) -> Layout {
    Layout::new(&core_rtl::build(p).ports())
}

/// The `sharing_core` RTL of `p` in rust-hdl's simulator, in its reset state.
pub fn rusthdl(p: &CoreParams) -> Box<dyn Rtl> {
    Box::new(smrtl_cosim::harness::backend::rusthdl::RustHdl::new(
        Arc::new(core_rtl::build(p)),
    ))
}

/// The `sharing_core` RTL of `p` verilated (cached), in its reset state.
pub fn verilator(p: &CoreParams) -> Result<Box<dyn Rtl>, ToolError> {
    crate::verilated(&Arc::new(core_rtl::build(p)))
}

/// Runs kernel `k` on the SM model with `rtl` (if any) beside the core: every cycle, launch
/// cycles included, the RTL gets the model's inputs and every output port is compared (§2.1).
/// `rows`
/// keeps the cycles for a VCD (numbered from the first launch cycle);
/// `each` sees every kernel cycle's record.
pub fn cosim_kernel(
    p: &SmParams,
    k: &Kernel,
    rtl: Option<&mut dyn Rtl>,
    rows: Option<&mut WaveRows>,
    each: Option<&mut dyn FnMut(&CycleRecord)>,
) -> Result<SmStats, LoopError> {
    cosim_kernel_probed(p, k, None, rtl, rows, each).map(|r| r.0)
}

/// [`cosim_kernel`] with the stall probe `probe` attached to the SM (docs/stall-inspector.md
/// §5); the probe comes back with the statistics.
pub fn cosim_kernel_probed(
    p: &SmParams,
    k: &Kernel,
    probe: Option<Stalls>,
    mut rtl: Option<&mut dyn Rtl>,
    mut rows: Option<&mut WaveRows>,
    mut each: Option<&mut dyn FnMut(&CycleRecord)>,
) -> Result<(SmStats, Option<Stalls>), LoopError> {
    let core = p.core();
    let layout = layout(&core);
    let io = Io::new(&core, &layout);
    let mut inputs = vec![0u64; layout.in_words];
    let (mut expected, mut actual) = (vec![0u64; layout.out_words], vec![0u64; layout.out_words]);
    let mut sm = SharingSm::new(p, k).map_err(LoopError::Model)?;
    if let Some(probe) = probe {
        sm.attach_stalls(probe);
    }
    if let (Some(r), Some(dut)) = (rows.as_deref_mut(), rtl.as_deref()) {
        r.nets_of(dut);
    }
    let mut rec = CycleRecord::default();
    let mut global = 0u64;
    let mut progress = Counter::watched("sharing_sm", 0, "cycles");
    while !sm.finished() {
        progress.tick();
        let kernel_cycle = matches!(sm.phase(), Phase::Run(_));
        let mut check = |phase: Phase, i: &Inputs, o: &Outputs| {
            if rtl.is_none() && rows.is_none() {
                return Ok(());
            }
            io.write_inputs(i, &mut inputs);
            io.write_outputs(o, &mut expected);
            if let Some(dut) = rtl.as_deref_mut() {
                dut.eval(&inputs, &mut actual);
            }
            let differs = rtl.is_some() && expected != actual;
            if let Some(r) = rows.as_deref_mut() {
                r.push_with(global, differs, |row| {
                    row.inputs.extend_from_slice(&inputs);
                    row.model.extend_from_slice(&expected);
                    if let Some(dut) = rtl.as_deref() {
                        row.rtl.extend_from_slice(&actual);
                        dut.internal_values(&mut row.internals);
                    }
                });
            }
            if let Some(dut) = rtl.as_deref_mut() {
                dut.edge();
            }
            global += 1;
            if differs {
                let cycle = match phase {
                    Phase::Run(c) => c,
                    Phase::Launch(j) => j as u64,
                };
                return Err(Box::new(first_difference(
                    &layout, cycle, &expected, &actual,
                )));
            }
            Ok(())
        };
        sm.cycle_checked(Some(&mut rec), &mut check)?;
        if let (true, Some(f)) = (kernel_cycle, each.as_deref_mut()) {
            f(&rec);
        }
    }
    progress.finish();
    let probe = sm.take_stalls();
    Ok((sm.finish_stats(), probe))
}

// ---------------------------------------------------------------------------------------------
// Block level: random inputs on the core's ports
// ---------------------------------------------------------------------------------------------

/// Longest random case; a failing case shrinks from at most this many cycles.
pub const CASE_CYCLES: usize = 48;

/// One random cycle's inputs for `p`: a launch-like configuration write now and then, warps
/// mapped to slots `w / ⌈W/T⌉` with random live masks (a whole slot's empty in three cycles of
/// ten), ready bits (few in a quarter of the cycles) and small ages (so ties happen), descriptors with offsets around `u`, completions and lock presets, rare resets.
fn core_cycle(p: &CoreParams) -> impl Strategy<Value = Inputs> {
    let s = p.shape.clone();
    let (t, w, ns, lanes) = (
        s.slots,
        s.warps as usize,
        s.nsched as usize,
        s.lanes as usize,
    );
    let (kp, full) = (s.kp() as u64, smrtl_hdl::netlist::mask(lanes));
    let u_max = (s.smem / 4) as u64;
    let base = Inputs::new(p);
    (
        prop::bool::weighted(0.02),
        prop::bool::weighted(0.15),
        (
            0..t as u64,
            0..=t as u64,
            0..s.smem as u64,
            1..=u_max,
            any::<bool>(),
        ),
        prop::bool::weighted(0.05),
        (0..kp.max(1), any::<bool>(), 0..t as u64),
        proptest::collection::vec(
            (
                prop::bool::weighted(0.8),
                any::<u64>(),
                prop::bool::weighted(0.05),
                prop::bool::weighted(0.6),
                0..4u64,
            ),
            w,
        ),
        proptest::collection::vec(
            (
                any::<bool>(),
                prop::bool::weighted(0.2),
                prop::bool::weighted(0.2),
                any::<u64>(),
                any::<u64>(),
            ),
            ns,
        ),
        proptest::collection::vec((prop::bool::weighted(0.3), 0..t as u64), ns),
        prop::bool::weighted(0.25),
        (prop::bool::weighted(0.3), 0..t),
    )
        .prop_map(
            move |(
                reset,
                cfg_on,
                (slot, partner, cbase, u, shsm),
                lock_on,
                (k, lv, lo),
                warps,
                dsc,
                cpl,
                sparse,
                (empty, empty_slot),
            )| {
                let mut i = base.clone();
                i.reset = reset;
                if cfg_on {
                    // Partners follow the §1.3 pattern (slot k with slot k + T/2) or NONE.
                    let partner = if partner == t as u64 {
                        s.none()
                    } else {
                        (slot + (t as u64) / 2) % t as u64
                    };
                    (i.cfg_shsm_we, i.cfg_shsm) = (true, shsm || u % 4 != 0);
                    (i.cfg_u_we, i.cfg_u) = (true, u);
                    i.cfg_slot_we = true;
                    (i.cfg_slot, i.cfg_partner, i.cfg_base) = (slot, partner, cbase);
                }
                if lock_on {
                    i.cfg_lock_we = true;
                    (i.cfg_lock_k, i.cfg_lock_valid, i.cfg_lock_owner) = (k, lv, lo);
                }
                let per_slot = (w as u32).div_ceil(t).max(1);
                for (x, (valid, live, launch, ready, age)) in warps.into_iter().enumerate() {
                    i.warp_valid[x] = valid;
                    i.warp_slot[x] = u64::from(x as u32 / per_slot);
                    // An emptied slot: all its threads exited (a TB-wide release may
                    // transfer the lock at any W/T).
                    let exited = live % 5 == 0 || (empty && x as u32 / per_slot == empty_slot);
                    i.live[x] = if exited { 0 } else { live & full };
                    i.warp_launch[x] = launch;
                    // A sparse cycle: about one warp in twelve ready, so OWF picks
                    // non-owners (which acquire or are NACKed) at any W.
                    i.ready[x] = ready && !(sparse && (live >> 52) % 8 != 0);
                    i.age[x] = age;
                    // TWO_LEVEL_ACTIVE demotes a quarter of the warps.
                    i.waiting[x] = (live >> 60) & 3 == 0;
                }
                let u = if cfg_on { u } else { u_max / 2 };
                for (q, (shared, rel, exit, m, r)) in dsc.into_iter().enumerate() {
                    (i.dsc_shared[q], i.dsc_rel[q], i.dsc_exit[q]) = (shared, rel, exit);
                    i.dsc_mask[q] = m & full;
                    for l in 0..lanes {
                        let pick = (r >> (2 * l)) & 3;
                        i.dsc_off[q * lanes + l] = match pick {
                            0 => u.saturating_sub(1),
                            1 => u,
                            2 => (r >> 8) % u.max(1),
                            _ => (r >> 16) % s.smem as u64,
                        };
                    }
                }
                for (q, (valid, slot)) in cpl.into_iter().enumerate() {
                    (i.cpl_valid[q], i.cpl_slot[q]) = (valid, slot);
                }
                i
            },
        )
}

impl Bench for CoreParams {
    type Model = Model;
    const SUMMARY: &'static str = "scratchpad sharing's SM top: share_cfg, owner_class, NSCHED warp_schedulers, sp_access_unit, lock_table, relssp_unit (seed 001)";

    fn stimulus(&self) -> BoxedStrategy<Vec<Inputs>> {
        proptest::collection::vec(core_cycle(self), 1..=CASE_CYCLES).boxed()
    }

    /// docs/scratchpad-sharing.md §2–§4 at the core's ports: configuration writes, a shared
    /// access that needs the lock issuing, acquiring and NACKed, an issue of each class, a
    /// release by freeing and by transfer, a slot done and its release, two schedulers picking
    /// in one cycle.
    fn coverpoints(&self) -> Vec<Cover<CoreParams>> {
        type Point = Cover<CoreParams>;
        let issued_class = |c: Class| {
            move |p: &CoreParams, _: &Inputs, o: &Outputs, _: &Model| {
                let ws = p.shape.ws();
                (0..o.issued.len()).any(|q| {
                    let w = q * ws + o.iss_idx[q] as usize;
                    o.issued[q] && Class::of_code(o.warp_class[w]) == c
                })
            }
        };
        let mut v = vec![
            Point::point("cfg_write", "§2.2", |_, i, _, _| {
                i.cfg_slot_we || i.cfg_u_we || i.cfg_shsm_we
            }),
            Point::point("locked_access_issues", "§2.4", |_, _, o, _| {
                (0..o.issued.len()).any(|q| o.issued[q] && o.needs_lock[q])
            }),
            Point::point("acquire", "§2.4", |_, _, o, _| o.acq.iter().any(|&a| a)),
            Point::point("nack", "§2.4", |_, _, o, _| o.nack.iter().any(|&n| n)),
            Point::point("issue_owner", "§2.5", issued_class(Class::Owner)),
            Point::point("issue_unshared", "§2.5", issued_class(Class::Unshared)),
            Point::point("issue_nonowner", "§2.5", issued_class(Class::Nonowner)),
            Point::point("slot_done", "§3", |_, i, o, _| {
                (0..o.done.len()).any(|s| o.done[s] && !o.tb_empty[s])
                    && i.warp_valid.iter().any(|&v| v)
            }),
            Point::point("release_free", "§2.4", |_, _, o, _| {
                (o.rel_fire.iter().zip(&o.xfer)).any(|(&r, &x)| r && !x)
            }),
        ];
        v.push(Point::unless(
            (self.policy == Policy::Free).then_some("POLICY = FREE always frees"),
            "release_transfer",
            "§2.4",
            |_, _, o, _| o.xfer.iter().any(|&x| x),
        ));
        v.push(Point::unless(
            (self.shape.nsched == 1).then_some("NSCHED = 1"),
            "two_schedulers_issue",
            "§4",
            |_, _, o, _| o.issued.iter().filter(|&&x| x).count() > 1,
        ));
        v
    }
}
