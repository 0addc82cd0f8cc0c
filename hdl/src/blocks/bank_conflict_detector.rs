//! `BankConflictDetector` (docs/bank-conflicts.md §2): lane addresses → bank group, layer and
//! element (§1.3) → conflict degree and service cycles (§1.4), in one of four broadcast modes.
//!
//! Structure (spec §2.2, with the count done per lane rather than per bank): pairwise group
//! compares `eqg` are shared by every mode; a lane's count is the number of "leaders" at or before
//! it in its group, so the degree is the maximum count and no L × B one-hot popcount is needed.

use crate::netlist::{concat, or_all, Expr, Module};
use crate::params::module_name;
use crate::params::{bits_for, in_range, log2, Allowed, BlockParams, Gpgpusim, ParamError};
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
    /// GPGPU-Sim 4.x `-gpgpu_shmem_limited_broadcast 1`: lanes per group, the first shared
    /// (group, element) counted once (docs/bank-conflicts.md §1.4).
    #[serde(alias = "gpgpusim4-limited")]
    Gpgpusim4Limited,
}

/// The broadcast modes' names, in [`Mode::ALL`]'s order: the `MODE` parameter's allowed values
/// (its declaration below) and every other place that names a mode.
pub const MODE_NAMES: &[&str] = &[
    "literal",
    "multicast",
    "gpgpusim-limited",
    "gpgpusim4-limited",
];

impl Mode {
    /// Every mode, in [`MODE_NAMES`]' order.
    pub const ALL: [Mode; 4] = [
        Mode::Literal,
        Mode::Multicast,
        Mode::GpgpusimLimited,
        Mode::Gpgpusim4Limited,
    ];

    /// The mode of a name in [`MODE_NAMES`].
    pub fn from_name(name: &str) -> Option<Mode> {
        let i = MODE_NAMES.iter().position(|&n| n == name)?;
        Some(Mode::ALL[i])
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let i = Mode::ALL
            .iter()
            .position(|m| m == self)
            .expect("every mode");
        f.write_str(MODE_NAMES[i])
    }
}

crate::block_params! {
    /// Generator parameters (spec §1.2, §2.1). The single source of every width below; the
    /// defaults are the `kepler` preset.
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct Params {
        /// Lanes per access.
        lanes: u32 = 32, "L", Allowed::OneOf(&[8, 16, 32]) => Gpgpusim::LanesPerAccess;
        /// Banks.
        banks: u32 = 32, "B", Allowed::OneOf(&[8, 16, 32]) => Gpgpusim::ShmemBanks;
        /// Layer width in bytes (W = 8 adds the mode8 / size8 inputs).
        layer_bytes: u32 = 8, "W", Allowed::OneOf(&[4, 8]) => Gpgpusim::ShmemBankBytes;
        /// Byte-address bits per lane.
        addr_bits: u32 = 16, "A", Allowed::Range(2, 32), "at least log2(B*W)+1";
        /// Ports per bank.
        ports: u32 = 1, "P", Allowed::OneOf(&[1, 2, 4]);
        /// Broadcast mode.
        mode: Mode = Mode::Multicast, "MODE", Allowed::Names(MODE_NAMES) => Gpgpusim::Broadcast;
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
        let ep8 = Params {
            lanes: 8,
            banks: 8,
            layer_bytes: 4,
            addr_bits: 14,
            ..kepler.clone()
        };
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
            ("ep8", ep8.clone()),
            // The other modes, P and REG_OUT at small L (every value of each axis in some
            // preset, for the conformance suite).
            (
                "ep8_gpgpusim_reg",
                Params {
                    mode: Mode::GpgpusimLimited,
                    reg_out: true,
                    ..ep8.clone()
                },
            ),
            // GPGPU-Sim 4.x's rule (`-gpgpu_shmem_limited_broadcast 1`) at its 4-byte banks.
            (
                "ep8_gpgpusim4",
                Params {
                    mode: Mode::Gpgpusim4Limited,
                    ..ep8
                },
            ),
            (
                "l8_w8_literal_p4",
                Params {
                    lanes: 8,
                    banks: 8,
                    mode: Mode::Literal,
                    ports: 4,
                    ..kepler.clone()
                },
            ),
            (
                "l16_w8_gpgpusim_p2",
                Params {
                    lanes: 16,
                    banks: 16,
                    mode: Mode::GpgpusimLimited,
                    ports: 2,
                    ..kepler
                },
            ),
        ]
    }

    fn check(&self) -> Result<(), ParamError> {
        in_range("A", self.addr_bits, self.min_addr_bits(), 32)
    }
}

crate::ports! {
    Params as p;
    let (l, a) = (p.lanes as usize, p.addr_bits as usize);
    inputs {
        /// An access is presented this cycle.
        valid[1]: bool,
        /// Per lane: the lane takes part (`active[l] = valid ∧ lane_mask[l]`).
        lane_mask[1; l]: bool,
        /// Per lane: its A-bit byte address.
        addr[a; l],
        /// Bank mode 8 bytes (W = 8 only; else N = 4).
        mode8[1]: bool if p.has_mode_inputs(),
        /// Element size 8 bytes (W = 8 only; else M = 4).
        size8[1]: bool if p.has_mode_inputs(),
    }
    outputs {
        /// The conflict degree d (1 when no lane is active).
        degree[p.degree_bits()],
        /// d − 1, log2 L bits.
        degree_m1[p.degree_m1_bits()],
        /// Service cycles ⌈d / P⌉.
        cycles[p.degree_bits()],
        /// d > 1.
        conflict[1]: bool,
        /// Some lane is active.
        any_active[1]: bool,
    }
}

impl crate::Block for Params {
    fn build(&self) -> Module {
        build(self)
    }
    #[cfg(feature = "faults")]
    const FAULTS: &'static [crate::faults::Fault] = &[faults::LANE1_IGNORES_LAYER];
}

/// Planted faults (docs/blocks.md §4).
#[cfg(feature = "faults")]
pub mod faults {
    use crate::faults::Fault;

    /// Multicast: lane 1 ignores layers, so it merges with lane 0 whenever they share a group
    /// (spec §1.4: one (group, layer) serves any number of lanes, other layers do not).
    pub const LANE1_IGNORES_LAYER: Fault = Fault {
        block: "bank_conflict_detector",
        name: "lane1_ignores_layer",
        what: "Multicast: lane 1 merges with lane 0 in the same group whatever its layer (§1.4)",
        port: super::port::DEGREE,
        // Combinational: one access shows it.
        within: 1,
    };
}

/// Builds the detector's RTL from validated params (spec §2.1 ports, §2.2 structure).
pub fn build(p: &Params) -> Module {
    let l_n = p.lanes as usize;
    let a_n = p.addr_bits as usize;
    let mut m = Module::new(&module_name(p));
    let (inp, outs) = if p.reg_out {
        m.declare_ports(&ports(p))
    } else {
        // `clock` and `reset` are present for a uniform interface, unused without REG_OUT
        // (spec §2.1): plain inputs, the module has no clock.
        declare_unclocked(&mut m, &ports(p))
    };
    let i = |name: &str| inp[name].clone();
    let (valid, lane_mask, addr) = (i(port::VALID), i(port::LANE_MASK), i(port::ADDR));
    let (mode8, size8) = (inp.get(port::MODE8), inp.get(port::SIZE8));
    let lanes: Vec<Expr> = (0..l_n).map(|l| addr.slice(l * a_n, a_n)).collect();
    let det = logic(&mut m, p, &valid, &lane_mask, &lanes, mode8, size8);
    let values = [
        (port::DEGREE, det.degree, 1u64),
        (port::DEGREE_M1, det.degree_m1, 0),
        (port::CYCLES, det.cycles, 1),
        (port::CONFLICT, det.conflict, 0),
        (port::ANY_ACTIVE, det.any_active, 0),
    ];
    for (name, value, reset_value) in values {
        let out = &outs[name];
        if p.reg_out {
            let r = m.reg(&format!("{name}_q"), out.width(), reset_value);
            m.next(&r, value);
            m.assign(out, r);
        } else {
            m.assign(out, value);
        }
    }
    m
}

/// Declares `ports` in order as plain inputs and outputs (no clock: `clock` and `reset` are
/// inputs like the others); returns them by name, as [`Module::declare_ports`] does.
fn declare_unclocked(m: &mut Module, ports: &[crate::Port]) -> (Nets, Nets) {
    let (mut inputs, mut outputs) = (Nets::new(), Nets::new());
    for q in ports {
        match q.dir {
            crate::Dir::In => inputs.insert(q.name.clone(), m.port(q)),
            crate::Dir::Out => outputs.insert(q.name.clone(), m.port(q)),
        };
    }
    (inputs, outputs)
}

/// Nets by port name.
type Nets = std::collections::HashMap<String, Expr>;

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
pub fn logic(
    m: &mut Module,
    p: &Params,
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
                    let same_layer = |j: usize| {
                        let layer = lay[j].equals(&lay[l]);
                        if l == 1 {
                            crate::planted!(faults::LANE1_IGNORES_LAYER, Expr::lit(1, 1), layer)
                        } else {
                            layer
                        }
                    };
                    let dup: Vec<Expr> = (0..l)
                        .map(|j| &act[j] & &(eqg(j, l) & same_layer(j)))
                        .collect();
                    leader(m, l, &act[l], &dup)
                })
                .collect();
            max_of_counts(m, &lead, &eqg, dw)
        }
        Mode::GpgpusimLimited | Mode::Gpgpusim4Limited => {
            let d = Lanes {
                addr: lanes,
                a_n,
                act: &act,
                grp: &grp,
                size8,
            };
            let el = elements(m, &d);
            if p.mode == Mode::GpgpusimLimited {
                gpgpusim_degree(m, &el, &eqg, dw)
            } else {
                gpgpusim4_degree(m, &d, &el, &eqg, dw)
            }
        }
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

/// Element leaders (§2.2): `eqe[j][l]` (j < l) says lanes j and l address one element, `lead`
/// marks the first active lane of each element, `shr` the leaders a later active lane shares.
struct Elements {
    eqe: Vec<Vec<Option<Expr>>>,
    lead: Vec<Expr>,
    shr: Vec<Expr>,
}

impl Elements {
    /// Element equality of lanes `j` ≠ `l`.
    fn eq(&self, j: usize, l: usize) -> Expr {
        self.eqe[j.min(l)][j.max(l)].clone().expect("j != l")
    }
}

/// The decoded lanes (§2.2 step 1) the broadcast-limited modes read.
struct Lanes<'a> {
    /// Byte addresses, A bits each.
    addr: &'a [Expr],
    a_n: usize,
    act: &'a [Expr],
    grp: &'a [Expr],
    size8: Option<&'a Expr>,
}

/// Element equality (a[A-1:3] always; bit 2 unless the element is 8 bytes), leaders and shared
/// leaders of the active lanes.
fn elements(m: &mut Module, d: &Lanes) -> Elements {
    let (lanes, a_n, act, size8) = (d.addr, d.a_n, d.act, d.size8);
    let l_n = act.len();
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
    let mut el = Elements {
        eqe,
        lead: vec![],
        shr: vec![],
    };
    el.lead = (0..l_n)
        .map(|l| {
            let dup: Vec<Expr> = (0..l).map(|j| &act[j] & &el.eq(j, l)).collect();
            leader(m, l, &act[l], &dup)
        })
        .collect();
    el.shr = (0..l_n)
        .map(|l| {
            let later: Vec<Expr> = (l + 1..l_n).map(|j| &act[j] & &el.eq(l, j)).collect();
            m.wire(&format!("shr_{l}"), &el.lead[l] & &or_all(&later, 1))
        })
        .collect();
    el
}

/// GpgpuSimLimited degree (§1.4): distinct unshared-leader ranks plus shared leaders.
fn gpgpusim_degree(
    m: &mut Module,
    el: &Elements,
    eqg: &dyn Fn(usize, usize) -> Expr,
    dw: usize,
) -> Expr {
    let l_n = el.lead.len();
    let (lead, shr) = (&el.lead, &el.shr);
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
    let shared = popcount(&shr[..]).zext(dw);
    m.wire("gs_sum", occupied + shared)
}

/// Gpgpusim4Limited degree (§1.4, GPGPU-Sim 4.x `generate_mem_accesses`): the largest lane count
/// of a group, where the lanes after the leader of the first shared element in (group, element)
/// order are not counted. The first is the shared leader whose key {group, element} is below
/// every other shared leader's (distinct elements have distinct keys, so one compare per pair);
/// its followers drop out of the literal per-lane counts.
fn gpgpusim4_degree(
    m: &mut Module,
    d: &Lanes,
    el: &Elements,
    eqg: &dyn Fn(usize, usize) -> Expr,
    dw: usize,
) -> Expr {
    let (lanes, a_n, act, grp, size8) = (d.addr, d.a_n, d.act, d.grp, d.size8);
    let l_n = act.len();
    // Element order: the address above bit 2, with bit 2 as 0 for 8-byte elements.
    let keys: Vec<Expr> = lanes
        .iter()
        .enumerate()
        .map(|(l, a)| {
            let bit2 = match size8 {
                Some(s8) => a.bit(2) & !s8.clone(),
                None => a.bit(2),
            };
            let key = concat(&[grp[l].clone(), a.slice(3, a_n - 3), bit2]);
            m.wire(&format!("key_{l}"), key)
        })
        .collect();
    // below[j][l] (j < l): key_j < key_l.
    let mut below = vec![vec![None; l_n]; l_n];
    for l in 0..l_n {
        for j in 0..l {
            below[j][l] = Some(m.wire(&format!("klt_{j}_{l}"), keys[j].lt(&keys[l])));
        }
    }
    // Whether shared leader j's key is below l's (for j ≠ l, both shared: keys differ).
    let before = |j: usize, l: usize| match (&below[j.min(l)][j.max(l)], j < l) {
        (Some(lt), true) => lt.clone(),
        (Some(lt), false) => !lt.clone(),
        (None, _) => unreachable!("j != l"),
    };
    // The last lane never leads a later one: no `first` for it.
    let first: Vec<Expr> = (0..l_n - 1)
        .map(|l| {
            let earlier: Vec<Expr> = (0..l_n)
                .filter(|&j| j != l)
                .map(|j| &el.shr[j] & &before(j, l))
                .collect();
            m.wire(&format!("first_{l}"), &el.shr[l] & &!or_all(&earlier, 1))
        })
        .collect();
    let member: Vec<Expr> = (0..l_n)
        .map(|l| {
            let absorbed: Vec<Expr> = (0..l).map(|j| &first[j] & &el.eq(j, l)).collect();
            let value = if absorbed.is_empty() {
                act[l].clone()
            } else {
                &act[l] & &!or_all(&absorbed, 1)
            };
            m.wire(&format!("memb_{l}"), value)
        })
        .collect();
    max_of_counts(m, &member, eqg, dw)
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
