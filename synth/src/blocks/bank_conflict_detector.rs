//! Hardware cost of the `BankConflictDetector` (docs/bank-conflicts.md §2.3): Yosys generic and
//! iCE40 figures for one configuration, and the §2.3 sweep with the spec's expectations beside
//! the figures.

use crate::yosys::{GenericReport, Ice40Report};
use serde::Serialize;
use smrtl_hdl::blocks::bank_conflict_detector::{build, Mode, Params};
use smrtl_hdl::tools::ToolError;
use std::sync::Arc;

/// What spec §2.3 expects of the figures; the sweep checks the first and reports growth for the
/// second.
pub const EXPECTATIONS: &[&str] = &[
    "Literal is expected to be smallest for every (L, W)",
    "Multicast and the GPGPU-Sim modes grow about x4 per doubling of L; Literal about L*B*log2 L",
    "about 1e4 two-input gates for Multicast at L = 32 (INFERRED, not a pass criterion)",
    "critical path: comparator -> OR-reduce over L -> popcount (log2 L adder levels) -> max tree (log2 B levels)",
];

/// Size drivers of the structure the generator builds (spec §2.3 table, counted for
/// `smrtl_hdl::blocks::bank_conflict_detector::build`, which counts per lane rather than per bank).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Structure {
    /// Lane pairs compared, L(L−1)/2.
    pub lane_pairs: u32,
    /// Bits compared per lane pair: the b-bit group, plus the T-bit layer tag (Multicast), the
    /// A − 2-bit element (GpgpuSimLimited) or the element and the (b + A − 2)-bit
    /// {group, element} order (Gpgpusim4Limited).
    pub compare_bits_per_pair: u32,
    /// Layer-tag width T = A − b − w.
    pub layer_tag_bits: u32,
    /// One-bit inputs summed by all popcounts.
    pub popcount_inputs: u32,
    /// DW-bit compare-and-selects in the max tree.
    pub max_compares: u32,
}

impl Structure {
    /// Counts for `p`.
    pub fn of(p: &Params) -> Structure {
        let l = p.lanes;
        let b = p.bank_bits() as u32;
        let t = p.addr_bits - b - p.layer_shift() as u32;
        let pairs = l * (l - 1) / 2;
        let (extra_bits, popcount_inputs, max_compares) = match p.mode {
            // Lane l's count sums lanes 0..=l.
            Mode::Literal => (0, l * (l + 1) / 2, l - 1),
            Mode::Multicast => (t, l * (l + 1) / 2, l - 1),
            // Prefix ranks (0..l inputs), occupancy and shared-leader counts (L each).
            Mode::GpgpusimLimited => (p.addr_bits - 2, pairs + 2 * l, 0),
            // The A − 2-bit element compare and the (b + A − 2)-bit {group, element} order;
            // then Literal's per-lane counts of the lanes not absorbed by the broadcast.
            Mode::Gpgpusim4Limited => (2 * (p.addr_bits - 2) + b, l * (l + 1) / 2, l - 1),
        };
        Structure {
            lane_pairs: pairs,
            compare_bits_per_pair: b + extra_bits,
            layer_tag_bits: t,
            popcount_inputs,
            max_compares,
        }
    }
}

/// Cost of one detector configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DetectorCost {
    pub params: Params,
    pub structure: Structure,
    pub generic: GenericReport,
    /// `None` when the iCE40 flow was not run.
    pub ice40: Option<Ice40Report>,
}

/// Emits the detector for `p` and runs the generic and iCE40 flows (concurrently).
pub fn cost(p: &Params) -> Result<DetectorCost, ToolError> {
    cost_with(p, true)
}

/// Like [`cost`], running the iCE40 flow only if `ice40` (ABC's iCE40 mapping of the 32-lane
/// GpgpuSimLimited detector takes tens of minutes).
pub fn cost_with(p: &Params, ice40: bool) -> Result<DetectorCost, ToolError> {
    let cost = crate::cost_of(&Arc::new(build(p)), ice40)?;
    Ok(DetectorCost {
        params: p.clone(),
        structure: Structure::of(p),
        generic: cost.generic,
        ice40: cost.ice40,
    })
}

/// Which points of the §2.3 sweep to run (an empty list means all of that axis), and whether
/// to add the iCE40 flow to the generic one the spec asks for.
#[derive(Clone, Debug, Default)]
pub struct SweepOptions {
    /// L = B values among 8, 16, 32.
    pub lanes: Vec<u32>,
    /// W values among 4, 8.
    pub layer_bytes: Vec<u32>,
    pub modes: Vec<Mode>,
    pub ice40: bool,
}

impl SweepOptions {
    fn admits(&self, p: &Params) -> bool {
        let ok = |axis: &[u32], v| axis.is_empty() || axis.contains(&v);
        ok(&self.lanes, p.lanes)
            && ok(&self.layer_bytes, p.layer_bytes)
            && (self.modes.is_empty() || self.modes.contains(&p.mode))
    }
}

/// The full §2.3 sweep: L = B ∈ {8, 16, 32} × W ∈ {4, 8} × four modes, P = 1, A = 16,
/// REG_OUT = 0.
pub fn sweep_params() -> Vec<Params> {
    let mut points = vec![];
    for lanes in [8, 16, 32] {
        for layer_bytes in [4, 8] {
            for mode in Mode::ALL {
                points.push(Params {
                    lanes,
                    banks: lanes,
                    layer_bytes,
                    addr_bits: 16,
                    ports: 1,
                    mode,
                    reg_out: false,
                });
            }
        }
    }
    points
}

/// Whether Literal is the smallest mode at one (L, W) (spec §2.3 expectation).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LiteralCheck {
    pub lanes: u32,
    pub layer_bytes: u32,
    /// Generic cells per mode, smallest first.
    pub cells: Vec<(Mode, u64)>,
    /// Literal has the fewest generic cells.
    pub literal_smallest: bool,
}

/// Growth of one mode's generic cells from L to 2L at fixed W, beside the spec's estimate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Growth {
    pub mode: Mode,
    pub layer_bytes: u32,
    pub from_lanes: u32,
    pub to_lanes: u32,
    /// cells(2L) / cells(L).
    pub measured: f64,
    /// ×4 for the pairwise modes; L·B·log2 L for Literal (with B = L).
    pub expected: f64,
}

/// The sweep's figures with the spec's expectations beside them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepReport {
    pub points: Vec<DetectorCost>,
    /// One per (L, W) whose four modes were all run.
    pub literal_checks: Vec<LiteralCheck>,
    /// One per (mode, W, L → 2L) with both ends run.
    pub growth: Vec<Growth>,
    pub expectations: Vec<String>,
}

/// Runs the points of the §2.3 sweep that `options` admits, calling `on_point` after each.
pub fn sweep(
    options: &SweepOptions,
    mut on_point: impl FnMut(&DetectorCost),
) -> Result<SweepReport, ToolError> {
    let mut points = vec![];
    for p in sweep_params().iter().filter(|p| options.admits(p)) {
        let c = cost_with(p, options.ice40)?;
        on_point(&c);
        points.push(c);
    }
    Ok(SweepReport {
        literal_checks: literal_checks(&points),
        growth: growth(&points),
        expectations: EXPECTATIONS.iter().map(|s| s.to_string()).collect(),
        points,
    })
}

fn find(points: &[DetectorCost], lanes: u32, w: u32, mode: Mode) -> Option<&DetectorCost> {
    points
        .iter()
        .find(|c| c.params.lanes == lanes && c.params.layer_bytes == w && c.params.mode == mode)
}

fn literal_checks(points: &[DetectorCost]) -> Vec<LiteralCheck> {
    let mut checks = vec![];
    for lanes in [8, 16, 32] {
        for layer_bytes in [4, 8] {
            let Some(mut cells) = Mode::ALL
                .iter()
                .map(|&m| find(points, lanes, layer_bytes, m).map(|c| (m, c.generic.cells)))
                .collect::<Option<Vec<_>>>()
            else {
                continue;
            };
            let literal = cells[0].1;
            cells.sort_by_key(|&(_, n)| n);
            checks.push(LiteralCheck {
                lanes,
                layer_bytes,
                literal_smallest: cells.iter().all(|&(_, n)| literal <= n),
                cells,
            });
        }
    }
    checks
}

fn growth(points: &[DetectorCost]) -> Vec<Growth> {
    let mut out = vec![];
    for mode in Mode::ALL {
        for layer_bytes in [4, 8] {
            for (from, to) in [(8u32, 16u32), (16, 32)] {
                let (Some(a), Some(b)) = (
                    find(points, from, layer_bytes, mode),
                    find(points, to, layer_bytes, mode),
                ) else {
                    continue;
                };
                let lbl = |l: u32| f64::from(l * l) * f64::from(l.trailing_zeros());
                out.push(Growth {
                    mode,
                    layer_bytes,
                    from_lanes: from,
                    to_lanes: to,
                    measured: b.generic.cells as f64 / a.generic.cells as f64,
                    expected: match mode {
                        Mode::Literal => lbl(to) / lbl(from),
                        _ => 4.0,
                    },
                });
            }
        }
    }
    out
}

impl crate::BlockCost for Params {
    fn cost_notes(&self) -> Result<crate::Notes, ToolError> {
        notes(self)
    }
    fn register_inventory(&self) -> Option<u64> {
        Some(register_bits(self))
    }
}

/// Flip-flop bits (spec §2.1): none, combinational; with REG_OUT the five outputs, degree and
/// cycles ⌈log2(L+1)⌉ each, degree_m1 log2 L, conflict and any_active 1 each (13 for ep8).
pub fn register_bits(p: &Params) -> u64 {
    if p.reg_out {
        (2 * p.degree_bits() + p.degree_m1_bits() + 2) as u64
    } else {
        0
    }
}

/// The detector's lines in `smrtl synth`: its structure and the spec's expectations.
pub fn notes(p: &Params) -> Result<crate::Notes, ToolError> {
    let mut n = crate::Notes::default();
    let s = Structure::of(p);
    n.add(
        format!(
            "structure: {} lane pairs x {} compare bits (layer tag {} bits), {} popcount inputs, {} max compares",
            s.lane_pairs, s.compare_bits_per_pair, s.layer_tag_bits, s.popcount_inputs, s.max_compares
        ),
        "structure",
        &s,
    );
    let expect: Vec<String> = EXPECTATIONS
        .iter()
        .map(|e| format!("\n    - {e}"))
        .collect();
    n.add(
        format!("docs/bank-conflicts.md §2.3 expects:{}", expect.concat()),
        "expectations",
        EXPECTATIONS,
    );
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use smrtl_hdl::BlockParams;

    #[test]
    fn sweep_has_twenty_four_valid_points() {
        let points = sweep_params();
        assert_eq!(points.len(), 24);
        for p in &points {
            p.validate().unwrap();
        }
        let only = SweepOptions {
            lanes: vec![8],
            modes: vec![Mode::Literal],
            ..Default::default()
        };
        assert_eq!(points.iter().filter(|p| only.admits(p)).count(), 2);
    }

    /// The inventory: none without REG_OUT; the five outputs with it (13 bits at ep8, 17 at
    /// kepler), as the IR builds them.
    #[test]
    fn registers_are_the_outputs_with_reg_out() {
        for (name, p) in Params::presets() {
            let reg = Params {
                reg_out: true,
                ..p.clone()
            };
            assert_eq!(register_bits(&p), (p.reg_out as u64) * register_bits(&reg));
            assert_eq!(build(&p).register_bits(), register_bits(&p), "{name}");
            assert_eq!(build(&reg).register_bits(), register_bits(&reg), "{name}");
        }
        let ep8 = Params::resolve_pairs(Some("ep8"), &[("REG_OUT", "true")]).unwrap();
        assert_eq!(register_bits(&ep8), 13);
    }

    #[test]
    fn kepler_multicast_structure_matches_spec() {
        // Spec §2.3: "496 13-bit comparators" for kepler Multicast (T = 8).
        let s = Structure::of(&Params::default());
        assert_eq!(s.lane_pairs, 496);
        assert_eq!(s.compare_bits_per_pair, 13);
        assert_eq!(s.layer_tag_bits, 8);
    }
}
