//! Behavioral model of shared-memory bank conflicts (docs/bank-conflicts.md §1), written from
//! the spec text, independently of the RTL: plain integer arithmetic and sets, one lane at a time.
//! [`degree`] is the golden reference; [`Model`] wraps it in the detector's ports (§2.1, the
//! typed `port::Inputs` / `port::Outputs` of its declaration). Both work in fixed-size tables:
//! nothing allocates per access or per cycle.

use crate::harness::layout::{Layout, Slot};
use crate::harness::sim::{BlockModel, Simulator};
use serde::{Deserialize, Serialize};
use smrtl_hdl::blocks::bank_conflict_detector::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::bank_conflict_detector::{Mode, Params};
use thiserror::Error;

/// A bank-model configuration (spec §1.2): the model accepts more than the RTL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cfg {
    pub lanes: u32,
    pub banks: u32,
    /// W, layer width in bytes.
    pub layer_bytes: u32,
    /// N, bank-mode bytes.
    pub mode_bytes: u32,
    /// M, element bytes.
    pub elem_bytes: u32,
    /// P, ports per bank.
    pub ports: u32,
    pub mode: Mode,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum CfgError {
    #[error("{name} = {value} is out of range; allowed: {allowed}")]
    Range {
        name: &'static str,
        value: u64,
        allowed: String,
    },
}

fn check(name: &'static str, value: u32, allowed: &[u32]) -> Result<(), CfgError> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(CfgError::Range {
            name,
            value: value as u64,
            allowed: allowed
                .iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }
}

impl Cfg {
    /// Spec §1.1–1.2 constraints for the behavioral model.
    pub fn validate(&self) -> Result<(), CfgError> {
        check("lanes", self.lanes, &[8, 16, 32])?;
        check("banks", self.banks, &[8, 16, 32])?;
        check("layer_bytes", self.layer_bytes, &[4, 8, 16, 32])?;
        let up_to_w: Vec<u32> = [4, 8, 16, 32]
            .into_iter()
            .filter(|&x| x <= self.layer_bytes)
            .collect();
        check("mode_bytes", self.mode_bytes, &up_to_w)?;
        check("elem_bytes", self.elem_bytes, &up_to_w)?;
        check("ports", self.ports, &[1, 2, 4])
    }

    /// The configuration an RTL detector with `params` evaluates for runtime `mode8` / `size8`.
    pub fn of_params(p: &Params, mode8: bool, size8: bool) -> Cfg {
        let wide = p.layer_bytes == 8;
        Cfg {
            lanes: p.lanes,
            banks: p.banks,
            layer_bytes: p.layer_bytes,
            mode_bytes: if wide && mode8 { 8 } else { 4 },
            elem_bytes: if wide && size8 { 8 } else { 4 },
            ports: p.ports,
            mode: p.mode,
        }
    }
}

/// The detector's five outputs (spec §2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Degree {
    pub degree: u32,
    pub degree_m1: u32,
    pub cycles: u32,
    pub conflict: bool,
    pub any_active: bool,
}

impl Degree {
    /// Values after reset of the registered outputs (spec §2.1, REG_OUT = 1).
    pub const RESET: Degree = Degree {
        degree: 1,
        degree_m1: 0,
        cycles: 1,
        conflict: false,
        any_active: false,
    };
}

/// Where one lane's access lands (spec §1.3).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decoded {
    pub(crate) group: u64,
    pub(crate) layer: u64,
    pub(crate) element: u64,
}

pub(crate) fn decode(cfg: &Cfg, a: u64) -> Decoded {
    let lg = |x: u32| x.trailing_zeros();
    let (b, w, n, m) = (
        lg(cfg.banks),
        lg(cfg.layer_bytes),
        lg(cfg.mode_bytes),
        lg(cfg.elem_bytes),
    );
    let s = n.max(m);
    let k = 1u64 << (s - n);
    let groups = cfg.banks as u64 / k;
    let aligned = a & !((1u64 << m) - 1);
    Decoded {
        group: (aligned >> s) % groups,
        layer: a >> (b + w),
        element: aligned >> m,
    }
}

/// Most lanes a configuration has (spec §1.2).
pub const MAX_LANES: usize = 32;

/// Degree and service cycles of one access (spec §1.4): `active[l]` is `valid ∧ lane_mask[l]`,
/// `addrs[l]` lane l's byte address. Lanes are visited in ascending order with fixed-size
/// tables, so the golden reference is also fast enough to pace Verilator in the harness.
pub fn degree_of(cfg: &Cfg, active: &[bool], addrs: &[u64]) -> Degree {
    // Q: the active lanes, decoded (§1.3), in ascending lane order.
    let mut q = [Decoded {
        group: 0,
        layer: 0,
        element: 0,
    }; MAX_LANES];
    let mut n = 0;
    for (l, _) in active.iter().enumerate().filter(|(_, &on)| on) {
        q[n] = decode(cfg, addrs[l]);
        n += 1;
    }
    let q = &q[..n];
    let d = if q.is_empty() {
        1
    } else {
        match cfg.mode {
            // Accesses per group.
            Mode::Literal => max_per_group(q, |_, _| true),
            // Distinct layers per group: count a lane only if no earlier lane has its layer.
            Mode::Multicast => max_per_group(q, |q, k| {
                q[..k]
                    .iter()
                    .all(|x| x.group != q[k].group || x.layer != q[k].layer)
            }),
            Mode::GpgpusimLimited => gpgpusim_limited(q),
            Mode::Gpgpusim4Limited => gpgpusim4_limited(q),
        }
    };
    let p = cfg.ports;
    Degree {
        degree: d,
        degree_m1: d - 1,
        cycles: d.div_ceil(p),
        conflict: d > 1,
        any_active: !q.is_empty(),
    }
}

/// The largest number of lanes `k` with `counts(q, k)` in one group.
fn max_per_group(q: &[Decoded], counts: impl Fn(&[Decoded], usize) -> bool) -> u32 {
    let mut per_group = [0u32; MAX_LANES];
    for k in 0..q.len() {
        if counts(q, k) {
            per_group[q[k].group as usize] += 1;
        }
    }
    per_group.into_iter().max().unwrap_or(0).max(1)
}

/// GPGPU-Sim 2.x slot assignment (spec §1.4, GpgpuSimLimited): each distinct element takes the
/// next slot of its group; broadcast elements move to private slots.
fn gpgpusim_limited(q: &[Decoded]) -> u32 {
    let mut next_slot = [0u32; MAX_LANES];
    let mut used = [false; MAX_LANES + 1];
    let mut shared = 0;
    for (k, x) in q.iter().enumerate() {
        if q[..k].iter().any(|y| y.element == x.element) {
            continue; // not a leader
        }
        let rank = &mut next_slot[x.group as usize];
        if q[k + 1..].iter().any(|y| y.element == x.element) {
            shared += 1;
        } else {
            used[*rank as usize] = true;
        }
        *rank += 1;
    }
    used.iter().filter(|&&u| u).count() as u32 + shared
}

/// GPGPU-Sim 4.x limited broadcast (spec §1.4, Gpgpusim4Limited), step by step as
/// `warp_inst_t::generate_mem_accesses` does it for shared memory
/// (accel-sim/gpgpu-sim_distribution `src/abstract_hardware_model.cc`, the
/// `shmem_limited_broadcast` branch): count the lanes per (group, element); the first element
/// with two or more lanes, groups in ascending order and elements in ascending order within
/// one, is the broadcast, and its group counts it once; the degree is the largest group count.
fn gpgpusim4_limited(q: &[Decoded]) -> u32 {
    let mut per_group = [0u32; MAX_LANES];
    for x in q {
        per_group[x.group as usize] += 1;
    }
    let lanes_on = |e: u64| q.iter().filter(|y| y.element == e).count() as u32;
    let broadcast = q
        .iter()
        .filter(|x| lanes_on(x.element) > 1)
        .min_by_key(|x| (x.group, x.element));
    if let Some(x) = broadcast {
        per_group[x.group as usize] -= lanes_on(x.element) - 1;
    }
    per_group.into_iter().max().unwrap_or(0).max(1)
}

/// The spec's reference signature (§2.4): `bank::degree(cfg, valid, mask, addrs, mode8, size8)`.
/// With W = 8 the runtime bits select N and M; otherwise `cfg`'s N and M apply.
pub fn degree(
    cfg: &Cfg,
    valid: bool,
    mask: u64,
    addrs: &[u64],
    mode8: bool,
    size8: bool,
) -> Degree {
    let cfg = if cfg.layer_bytes == 8 {
        Cfg {
            mode_bytes: if mode8 { 8 } else { 4 },
            elem_bytes: if size8 { 8 } else { 4 },
            ..*cfg
        }
    } else {
        *cfg
    };
    let mut active = [false; MAX_LANES];
    for (l, on) in active.iter_mut().enumerate().take(cfg.lanes as usize) {
        *on = valid && mask >> l & 1 == 1;
    }
    degree_of(&cfg, &active[..cfg.lanes as usize], addrs)
}

/// A port of at most 64 bits, resolved once from its [`Slot`]: the index of its one word in a
/// buffer, so a read or write is one load or store (what [`Slot::get`] / [`Slot::set`] do for
/// such a port): the per-cycle port access of the models not yet on a `ports!` declaration.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Word(usize);

impl Word {
    pub(crate) fn of(slot: &Slot) -> Word {
        assert!(
            slot.width <= 64,
            "port `{}` is {} bits wide; a Word holds at most 64",
            slot.name,
            slot.width
        );
        Word(slot.offset)
    }

    pub(crate) fn get(self, buf: &[u64]) -> u64 {
        buf[self.0]
    }

    pub(crate) fn set(self, buf: &mut [u64], v: u64) {
        buf[self.0] = v;
    }
}

/// The detector's behavioral model on its ports: the same buffers as the RTL backends.
pub struct Model {
    params: Params,
    io: Io,
    inputs: Inputs,
    outputs: Outputs,
    /// Registered outputs (REG_OUT = 1).
    held: Degree,
}

impl BlockModel for Model {
    type Params = Params;
    fn new(p: &Params, layout: &Layout) -> Model {
        Model {
            params: p.clone(),
            io: Io::new(p, layout),
            inputs: Inputs::new(p),
            outputs: Outputs::new(p),
            held: Degree::RESET,
        }
    }
}

/// `d` on the output ports (spec §2.1).
fn show(d: &Degree, o: &mut Outputs) {
    o.degree = u64::from(d.degree);
    o.degree_m1 = u64::from(d.degree_m1);
    o.cycles = u64::from(d.cycles);
    o.conflict = d.conflict;
    o.any_active = d.any_active;
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        let i = &mut self.inputs;
        self.io.read_inputs(inputs, i);
        let cfg = Cfg::of_params(&self.params, i.mode8, i.size8);
        let lanes = self.params.lanes as usize;
        let mut active = [false; MAX_LANES];
        for (on, &m) in active.iter_mut().zip(&i.lane_mask) {
            *on = i.valid && m;
        }
        let now = degree_of(&cfg, &active[..lanes], &i.addr);
        if self.params.reg_out {
            show(&self.held, &mut self.outputs);
            self.held = if i.reset { Degree::RESET } else { now };
        } else {
            show(&now, &mut self.outputs);
        }
        self.io.write_outputs(&self.outputs, outputs);
    }
}
