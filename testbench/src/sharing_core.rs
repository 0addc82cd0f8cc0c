//! Stimulus for scratchpad sharing at SM level (docs/scratchpad-sharing.md §5): random kernels
//! for the thread-block-residency SM model and for `sharing_core` in the loop — TB shapes with
//! partial warps, shared offsets below, at and above `u`, relssp placed after a warp's last
//! shared-region access (the compiler's safety rule, §6.4) or nowhere, early exits, barriers
//! and global loads — which proptest shrinks to a minimal kernel file.

use proptest::prelude::*;
use smrtl_cosim::kernel::{Instr, Kernel, Offsets, Op};
use smrtl_cosim::sharing_core::SmParams;
use smrtl_hdl::sharing::{FreeClass, Policy, Rank, Sched, Shape};

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
                op: d.op,
                dst: d.dst,
                src: d.src.clone(),
                off,
                exit: false,
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
            1 => Just(Sched::TwoLevel)
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
                },
            }
        })
}
