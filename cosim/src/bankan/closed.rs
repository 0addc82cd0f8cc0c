//! [002]'s closed forms for a strided vector access as fast paths of the analysis
//! (docs/bank-conflicts.md §3.2, §3.3): lane l reads element `offset + l·stride`. Each rule
//! answers only where it is exact in the bank model (§1.4) for the mode it names; elsewhere
//! [`degree`] returns `None` and the degree function decides. `cosim/tests/bankan.rs` checks
//! every answer against brute force over the full parameter sweep.

use crate::blocks::bank_conflict_detector::Cfg;
use smrtl_hdl::blocks::bank_conflict_detector::Mode;

fn gcd(a: u64, b: u64) -> u64 {
    super::analysis::gcd(a as i64, b as i64) as u64
}

/// The degree of a strided access with `active` active lanes, or `None` where no rule is exact.
/// `active == cfg.lanes` is the full vector (lanes 0…L−1); fewer is any subset of the lanes, for
/// which only the subset-safe rules answer. `stride` and `offset` are in elements (M bytes).
///
/// Rules (docs/bank-conflicts.md §3.2):
/// - any subset, every mode: stride 0 → 1 (Literal: the lane count); S·M a multiple of B·W
///   bytes (all lanes in one bank, distinct layers; [002] §5.3 "B·R | S → conflict = thread
///   count") → the lane count;
/// - full vector, L = B, every mode: conventional (case 2) → gcd(S, B) ([002] §2.2, §3.1);
///   row-major (case 1) odd S → 1 ([002] §4.4.1); row-major S = σ·2^e with σ ≥ 3 odd, σ > R
///   and 2^e < B → 2^e (the 2^e groups of σ rows, conflicting pairs in distinct layers,
///   [002] §4.4.1, Alg. 4.2, §6.2.1); column-major (case 4) S = σ·R, σ odd → 1
///   ([002] §4.4.1, Table 4.2);
/// - full vector, L = B, Multicast only: row-major S = 2^s < B·R at an offset that is a multiple
///   of B·R → Alg. 4.1's base value (other offsets add [002]'s undefined "+0 or +1");
///   column-major S < R → 1 ([002] App. A-1). Literal and GpgpuSimLimited count the lanes
///   sharing one N-byte word, so these two do not hold there.
pub fn degree(cfg: &Cfg, stride: i64, offset: i64, active: u32) -> Option<u32> {
    if active == 0 {
        return Some(1);
    }
    if stride == 0 {
        return Some(if cfg.mode == Mode::Literal { active } else { 1 });
    }
    let (b, w, n, m) = (
        cfg.banks as u64,
        cfg.layer_bytes as u64,
        cfg.mode_bytes as u64,
        cfg.elem_bytes as u64,
    );
    let s = stride.unsigned_abs();
    if (s * m).is_multiple_of(b * w) {
        return Some(active);
    }
    if active != cfg.lanes || cfg.lanes != cfg.banks {
        return None;
    }
    // The full vector with a negative stride is the same lane set with a positive one, from
    // the last lane's element; every rule below has distinct elements, where no mode depends
    // on lane order (§1.4).
    let offset = if stride < 0 {
        offset + stride * (cfg.lanes as i64 - 1)
    } else {
        offset
    };
    let layer = (b * w / m) as i64;
    let o = offset.rem_euclid(layer) as u64;
    let multicast = cfg.mode == Mode::Multicast;
    if m == n && n == w {
        return Some(gcd(s, b) as u32);
    }
    if m == n && n < w {
        // Row-major, R = W/N.
        let r = w / n;
        if s % 2 == 1 {
            return Some(1);
        }
        let (e, sigma) = (s.trailing_zeros(), s >> s.trailing_zeros());
        if sigma >= 3 && sigma > r && (1u64 << e) < b {
            return Some(1 << e);
        }
        if multicast && s.is_power_of_two() && s < b * r && o == 0 {
            let g = gcd(s, b);
            let base = if s.is_multiple_of(b) { g * s / b } else { g };
            return Some(base.div_ceil(r) as u32);
        }
        return None;
    }
    if m < n && n == w {
        // Column-major, R = W/M.
        let r = w / m;
        if s.is_multiple_of(r) && (s / r) % 2 == 1 {
            return Some(1);
        }
        if multicast && s < r {
            return Some(1);
        }
    }
    None
}
