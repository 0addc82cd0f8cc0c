//! `BankConflictDetector` (docs/bank-conflicts.md §2): lane addresses → bank group, layer and
//! element (§1.3) → conflict degree and service cycles (§1.4), in one of three broadcast modes.
//!
//! Structure (spec §2.2, with the count done per lane rather than per bank): pairwise group
//! compares `eqg` are shared by every mode; a lane's count is the number of "leaders" at or before
//! it in its group, so the degree is the maximum count and no L × B one-hot popcount is needed.

use crate::netlist::{concat, or_all, Expr, Module};
use crate::params::{bits_for, in_range, log2, Allowed, BlockParams, ParamError};
use serde::{Deserialize, Serialize};

/// Broadcast mode (spec §1.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Every access to a group counts ([000 §3.1] wording).
    Literal,
    /// One (group, layer) serves any number of lanes ([002 §4.4.2]); the default.
    Multicast,
    /// GPGPU-Sim 2.x slot assignment with private broadcast slots.
    #[serde(
        alias = "gpgpusim-limited",
        alias = "gpgpusimlimited",
        alias = "gpgpu_sim_limited"
    )]
    GpgpusimLimited,
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::Literal => "literal",
            Mode::Multicast => "multicast",
            Mode::GpgpusimLimited => "gpgpusim-limited",
        })
    }
}

crate::block_params! {
    /// Generator parameters (spec §1.2, §2.1). The single source of every width below; the
    /// defaults are the `kepler` preset.
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct Params {
        /// Lanes per access.
        lanes: u32 = 32, "L", Allowed::OneOf(&[8, 16, 32]);
        /// Banks.
        banks: u32 = 32, "B", Allowed::OneOf(&[8, 16, 32]);
        /// Layer width in bytes (W = 8 adds the mode8 / size8 inputs).
        layer_bytes: u32 = 8, "W", Allowed::OneOf(&[4, 8]);
        /// Byte-address bits per lane.
        addr_bits: u32 = 16, "A", Allowed::Range(2, 32), "at least log2(B*W)+1";
        /// Ports per bank.
        ports: u32 = 1, "P", Allowed::OneOf(&[1, 2, 4]);
        /// Broadcast mode.
        mode: Mode = Mode::Multicast, "MODE", Allowed::Names(&["literal", "multicast", "gpgpusim-limited"]);
        /// Register the outputs (one cycle of latency).
        reg_out: bool = false, "REG_OUT", Allowed::Bool;
    }
}

impl Params {
    /// Bits of `degree` and `cycles`: ⌈log2(L+1)⌉.
    pub fn degree_bits(&self) -> usize {
        bits_for(self.lanes as u64)
    }
    /// Bits of `degree_m1`: log2 L.
    pub fn degree_m1_bits(&self) -> usize {
        log2(self.lanes) as usize
    }
    /// b = log2 B.
    pub fn bank_bits(&self) -> usize {
        log2(self.banks) as usize
    }
    /// w = log2 W.
    pub fn layer_shift(&self) -> usize {
        log2(self.layer_bytes) as usize
    }
    /// Whether the `mode8` / `size8` inputs exist (W = 8).
    pub fn has_mode_inputs(&self) -> bool {
        self.layer_bytes == 8
    }
    /// Smallest legal A: log2(B·W) + 1.
    pub fn min_addr_bits(&self) -> u32 {
        log2(self.banks * self.layer_bytes) + 1
    }
}

impl BlockParams for Params {
    const BLOCK: &'static str = "bank_conflict_detector";

    fn presets() -> Vec<(&'static str, Self)> {
        let kepler = Params::default();
        vec![
            ("kepler", kepler.clone()),
            (
                "fermi",
                Params {
                    layer_bytes: 4,
                    ..kepler.clone()
                },
            ),
            (
                "tesla",
                Params {
                    lanes: 16,
                    banks: 16,
                    layer_bytes: 4,
                    ..kepler.clone()
                },
            ),
            (
                "ep8",
                Params {
                    lanes: 8,
                    banks: 8,
                    layer_bytes: 4,
                    addr_bits: 14,
                    ..kepler
                },
            ),
        ]
    }

    fn check(&self) -> Result<(), ParamError> {
        in_range("A", self.addr_bits, self.min_addr_bits(), 32)
    }
}

/// Names of the ports, shared by the RTL, the model and the stimulus.
pub mod port {
    pub const VALID: &str = "valid";
    pub const LANE_MASK: &str = "lane_mask";
    pub const ADDR: &str = "addr";
    pub const MODE8: &str = "mode8";
    pub const SIZE8: &str = "size8";
    pub const DEGREE: &str = "degree";
    pub const DEGREE_M1: &str = "degree_m1";
    pub const CYCLES: &str = "cycles";
    pub const CONFLICT: &str = "conflict";
    pub const ANY_ACTIVE: &str = "any_active";
}

/// A deliberate RTL bug, so tests can prove the harness catches, shrinks and shows one.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    None,
    /// Multicast: lane 1 ignores layers, so it merges with lane 0 whenever they share a group.
    Lane1IgnoresLayer,
}

/// Builds the detector's RTL from validated params (spec §2.1 ports, §2.2 structure).
pub fn build(p: &Params) -> Module {
    build_with(p, Fault::None)
}

#[doc(hidden)]
pub fn build_with(p: &Params, fault: Fault) -> Module {
    let l_n = p.lanes as usize;
    let a_n = p.addr_bits as usize;
    let name = crate::params::module_name(p);
    // A planted fault (tests only) never shares a name with the real design.
    let name = match fault {
        Fault::None => name,
        _ => format!("{name}_fault"),
    };
    let mut m = Module::new(&name);

    if p.reg_out {
        m.clock_reset();
    } else {
        // Present for a uniform interface; unused without REG_OUT (spec §2.1).
        m.input("clock", 1);
        m.input("reset", 1);
    }
    let valid = m.input(port::VALID, 1);
    let lane_mask = m.input(port::LANE_MASK, l_n);
    let addr = m.input(port::ADDR, l_n * a_n);
    let (mode8, size8) = if p.has_mode_inputs() {
        (Some(m.input(port::MODE8, 1)), Some(m.input(port::SIZE8, 1)))
    } else {
        (None, None)
    };
    let outs = [
        (port::DEGREE, p.degree_bits(), 1u64),
        (port::DEGREE_M1, p.degree_m1_bits(), 0),
        (port::CYCLES, p.degree_bits(), 1),
        (port::CONFLICT, 1, 0),
        (port::ANY_ACTIVE, 1, 0),
    ]
    .map(|(name, width, reset)| (name, m.output(name, width), reset));

    let lanes: Vec<Expr> = (0..l_n).map(|l| addr.slice(l * a_n, a_n)).collect();
    let det = logic(
        &mut m,
        p,
        fault,
        &valid,
        &lane_mask,
        &lanes,
        mode8.as_ref(),
        size8.as_ref(),
    );
    let values = [
        det.degree,
        det.degree_m1,
        det.cycles,
        det.conflict,
        det.any_active,
    ];
    for ((name, out, reset_value), value) in outs.into_iter().zip(values) {
        if p.reg_out {
            let r = m.reg(&format!("{name}_q"), out.width(), reset_value);
            m.next(&r, value);
            m.assign(&out, r);
        } else {
            m.assign(&out, value);
        }
    }
    m
}

/// The detector's five outputs as expressions (spec §2.1).
pub struct Outputs {
    pub degree: Expr,
    pub degree_m1: Expr,
    pub cycles: Expr,
    pub conflict: Expr,
    pub any_active: Expr,
}

/// The detector's combinational logic (spec §2.2) inside `m`: `lanes[l]` is lane l's A-bit byte
/// address (a net or a slice of one), `lane_mask` an L-bit net; `mode8` / `size8` exist iff W = 8.
/// Used by the standalone block and by every block that contains the detector (MEM0).
#[allow(clippy::too_many_arguments)]
pub fn logic(
    m: &mut Module,
    p: &Params,
    fault: Fault,
    valid: &Expr,
    lane_mask: &Expr,
    lanes: &[Expr],
    mode8: Option<&Expr>,
    size8: Option<&Expr>,
) -> Outputs {
    let l_n = p.lanes as usize;
    let a_n = p.addr_bits as usize;
    let b = p.bank_bits();
    let w = p.layer_shift();
    let dw = p.degree_bits();

    // --- Decode per lane (§1.3) ---------------------------------------------------------------
    // Group field a[s +: b], s = 2 + (mode8 | size8); top bit zeroed when K = 2 (size8 & !mode8).
    let (wide, pair) = match (mode8, size8) {
        (Some(n8), Some(m8)) => (
            Some(m.wire("wide", n8 | m8)),
            Some(m.wire("pair", m8 & &!n8)),
        ),
        _ => (None, None),
    };
    let mut act = vec![];
    let mut grp = vec![];
    let mut lay = vec![];
    for (l, a) in lanes.iter().enumerate() {
        act.push(m.wire(&format!("act_{l}"), valid & &lane_mask.bit(l)));
        let g = match (&wide, &pair) {
            (Some(wide), Some(pair)) => {
                let field = m.wire(
                    &format!("gfield_{l}"),
                    wide.mux(&a.slice(3, b), &a.slice(2, b)),
                );
                let top = field.bit(b - 1) & !pair.clone();
                m.wire(&format!("grp_{l}"), concat(&[top, field.slice(0, b - 1)]))
            }
            _ => m.wire(&format!("grp_{l}"), a.slice(2, b)),
        };
        grp.push(g);
        if p.mode == Mode::Multicast {
            lay.push(a.slice(b + w, a_n - b - w));
        }
    }
    let any = m.wire("any", or_all(&act, 1));

    // Pairwise group equality, j < l.
    let mut eqg = vec![vec![None; l_n]; l_n];
    for l in 0..l_n {
        for j in 0..l {
            eqg[j][l] = Some(m.wire(&format!("eqg_{j}_{l}"), grp[j].equals(&grp[l])));
        }
    }
    let eqg = |j: usize, l: usize| eqg[j][l].clone().expect("j < l");

    // --- Reduction by mode (§1.4) --------------------------------------------------------------
    let d = match p.mode {
        Mode::Literal => max_of_counts(m, &act, &eqg, dw),
        Mode::Multicast => {
            let lead: Vec<Expr> = (0..l_n)
                .map(|l| {
                    let same_layer = |j: usize| match fault {
                        Fault::Lane1IgnoresLayer if l == 1 => Expr::lit(1, 1),
                        _ => lay[j].equals(&lay[l]),
                    };
                    let dup: Vec<Expr> = (0..l)
                        .map(|j| &act[j] & &(eqg(j, l) & same_layer(j)))
                        .collect();
                    leader(m, l, &act[l], &dup)
                })
                .collect();
            max_of_counts(m, &lead, &eqg, dw)
        }
        Mode::GpgpusimLimited => gpgpusim_degree(m, lanes, a_n, &act, &eqg, size8, dw),
    };
    let d = m.wire("d", any.mux(&d, &Expr::lit(1, dw)));

    // --- Finish: encodings (§2.1) --------------------------------------------------------------
    let p_shift = log2(p.ports) as usize;
    let rounded = m.wire("d_plus_p1", &d + &Expr::lit(p.ports as u64 - 1, dw));
    let cycles = rounded.slice(p_shift, dw - p_shift).zext(dw);
    let dm1 = m.wire("d_minus_1", &d - &Expr::lit(1, dw));
    let degree_m1 = dm1.slice(0, p.degree_m1_bits());
    Outputs {
        conflict: degree_m1.any(),
        degree: d,
        degree_m1,
        cycles,
        any_active: any,
    }
}

/// max over lanes l of Σ_{j ≤ l, same group} member_j: the largest group count (§2.2 step 3).
fn max_of_counts(
    m: &mut Module,
    member: &[Expr],
    eqg: &dyn Fn(usize, usize) -> Expr,
    dw: usize,
) -> Expr {
    let counts: Vec<Expr> = (0..member.len())
        .map(|l| {
            let mut terms: Vec<Expr> = (0..l).map(|j| &member[j] & &eqg(j, l)).collect();
            terms.push(member[l].clone());
            let c = popcount(&terms);
            m.wire(&format!("cnt_{}", l), c.zext(dw))
        })
        .collect();
    max_tree(m, "max", counts)
}

/// GpgpuSimLimited degree (§1.4): distinct unshared-leader ranks plus shared leaders.
fn gpgpusim_degree(
    m: &mut Module,
    lanes: &[Expr],
    a_n: usize,
    act: &[Expr],
    eqg: &dyn Fn(usize, usize) -> Expr,
    size8: Option<&Expr>,
    dw: usize,
) -> Expr {
    let l_n = act.len();
    // Element equality: a[A-1:3] always; bit 2 unless the element is 8 bytes.
    let mut eqe = vec![vec![None; l_n]; l_n];
    for (l, al) in lanes.iter().enumerate() {
        for (j, aj) in lanes.iter().enumerate().take(l) {
            let upper = aj.slice(3, a_n - 3).equals(&al.slice(3, a_n - 3));
            let bit2 = aj.bit(2).equals(&al.bit(2));
            let e = match size8 {
                Some(s8) => upper & (s8 | &bit2),
                None => upper & bit2,
            };
            eqe[j][l] = Some(m.wire(&format!("eqe_{j}_{l}"), e));
        }
    }
    let eqe = |j: usize, l: usize| eqe[j.min(l)][j.max(l)].clone().expect("j != l");
    let lead: Vec<Expr> = (0..l_n)
        .map(|l| {
            let dup: Vec<Expr> = (0..l).map(|j| &act[j] & &eqe(j, l)).collect();
            leader(m, l, &act[l], &dup)
        })
        .collect();
    let shr: Vec<Expr> = (0..l_n)
        .map(|l| {
            let later: Vec<Expr> = (l + 1..l_n).map(|j| &act[j] & &eqe(l, j)).collect();
            m.wire(&format!("shr_{l}"), &lead[l] & &or_all(&later, 1))
        })
        .collect();
    let rank_bits = crate::params::bits_for(l_n as u64 - 1);
    let rank: Vec<Expr> = (0..l_n)
        .map(|l| {
            let terms: Vec<Expr> = (0..l).map(|j| &lead[j] & &eqg(j, l)).collect();
            let r = if terms.is_empty() {
                Expr::lit(0, rank_bits)
            } else {
                popcount(&terms).zext(rank_bits)
            };
            m.wire(&format!("rank_{l}"), r)
        })
        .collect();
    let unshared: Vec<Expr> = (0..l_n)
        .map(|l| m.wire(&format!("solo_{l}"), &lead[l] & &!shr[l].clone()))
        .collect();
    let occ: Vec<Expr> = (0..l_n)
        .map(|r| {
            let hits: Vec<Expr> = (0..l_n)
                .filter(|&l| r <= l) // rank_l ≤ l
                .map(|l| &unshared[l] & &rank[l].equals(&Expr::lit(r as u64, rank_bits)))
                .collect();
            m.wire(&format!("occ_{r}"), or_all(&hits, 1))
        })
        .collect();
    let occupied = popcount(&occ).zext(dw);
    let shared = popcount(&shr).zext(dw);
    m.wire("gs_sum", occupied + shared)
}

/// lead_l = act_l ∧ ¬(any earlier active lane with the same key).
fn leader(m: &mut Module, l: usize, act: &Expr, dup: &[Expr]) -> Expr {
    let value = if dup.is_empty() {
        act.clone()
    } else {
        act & &!or_all(dup, 1)
    };
    m.wire(&format!("lead_{l}"), value)
}

/// Population count of one-bit terms as a balanced adder tree, in just enough bits.
pub fn popcount(terms: &[Expr]) -> Expr {
    assert!(!terms.is_empty());
    let mut level: Vec<(Expr, u64)> = terms.iter().map(|t| (t.clone(), 1)).collect();
    while level.len() > 1 {
        let mut next = vec![];
        for chunk in level.chunks(2) {
            if let [(a, ma), (b, mb)] = chunk {
                let max = ma + mb;
                let w = bits_for(max);
                next.push((a.zext(w) + b.zext(w), max));
            } else {
                next.push(chunk[0].clone());
            }
        }
        level = next;
    }
    level.pop().expect("one sum").0
}

/// Maximum of equal-width values as a balanced tree of compare-and-select.
fn max_tree(m: &mut Module, name: &str, mut vals: Vec<Expr>) -> Expr {
    let mut depth = 0;
    while vals.len() > 1 {
        let mut next = vec![];
        for (i, chunk) in vals.chunks(2).enumerate() {
            if let [a, b] = chunk {
                let sel = a.lt(b).mux(b, a);
                next.push(m.wire(&format!("{name}_{depth}_{i}"), sel));
            } else {
                next.push(chunk[0].clone());
            }
        }
        vals = next;
        depth += 1;
    }
    vals.pop().expect("at least one value")
}
