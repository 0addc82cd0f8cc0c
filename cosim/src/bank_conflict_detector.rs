//! Behavioral model of shared-memory bank conflicts (spec bank-conflicts.md §1), written from
//! the spec text, independently of the RTL: plain integer arithmetic and sets, one lane at a time.
//! [`degree`] is the golden reference; [`Model`] wraps it in the detector's ports (§2.1).

use crate::layout::Layout;
use crate::sim::Simulator;
use serde::{Deserialize, Serialize};
use smrtl_hdl::bank_conflict_detector::{port, Mode, Params};
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
struct Decoded {
    group: u64,
    layer: u64,
    element: u64,
}

fn decode(cfg: &Cfg, a: u64) -> Decoded {
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
const MAX_LANES: usize = 32;

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
    let active: Vec<bool> = (0..cfg.lanes)
        .map(|l| valid && mask >> l & 1 == 1)
        .collect();
    degree_of(&cfg, &active, addrs)
}

/// The detector's behavioral model on its ports: the same buffers as the RTL backends.
pub struct Model {
    params: Params,
    layout: Layout,
    /// Registered outputs (REG_OUT = 1).
    held: Degree,
}

impl Model {
    pub fn new(params: &Params, layout: &Layout) -> Model {
        Model {
            params: params.clone(),
            layout: layout.clone(),
            held: Degree::RESET,
        }
    }

    fn read(&self, inputs: &[u64], name: &str) -> u64 {
        self.layout.input(name).map_or(0, |s| s.of(inputs)[0])
    }

    fn addrs(&self, inputs: &[u64]) -> Vec<u64> {
        let slot = self.layout.input(port::ADDR).expect("addr port");
        let words = slot.of(inputs);
        let a = self.params.addr_bits as usize;
        (0..self.params.lanes as usize)
            .map(|l| {
                let lo = l * a;
                let mut v = words[lo / 64] >> (lo % 64);
                if lo % 64 + a > 64 {
                    v |= words[lo / 64 + 1] << (64 - lo % 64);
                }
                v & ((1u64 << a) - 1)
            })
            .collect()
    }

    fn write(&self, outputs: &mut [u64], d: &Degree) {
        for (name, v) in [
            (port::DEGREE, d.degree as u64),
            (port::DEGREE_M1, d.degree_m1 as u64),
            (port::CYCLES, d.cycles as u64),
            (port::CONFLICT, d.conflict as u64),
            (port::ANY_ACTIVE, d.any_active as u64),
        ] {
            self.layout
                .output(name)
                .expect("output port")
                .of_mut(outputs)[0] = v;
        }
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        let mode8 = self.read(inputs, port::MODE8) == 1;
        let size8 = self.read(inputs, port::SIZE8) == 1;
        let cfg = Cfg::of_params(&self.params, mode8, size8);
        let now = degree(
            &cfg,
            self.read(inputs, port::VALID) == 1,
            self.read(inputs, port::LANE_MASK),
            &self.addrs(inputs),
            mode8,
            size8,
        );
        if self.params.reg_out {
            let shown = self.held;
            self.write(outputs, &shown);
            self.held = if self.read(inputs, "reset") == 1 {
                Degree::RESET
            } else {
                now
            };
        } else {
            self.write(outputs, &now);
        }
    }
}
