//! The soak (docs/blocks.md "Conformance suite"): long random co-simulation on rust-hdl of a
//! rotating part of the registry's block × preset targets, so that every target gets its 10^6
//! cycles over a few CI runs while each run stays short. `smrtl soak` runs it; CI picks the part
//! from the commit count and the seed from the commit hash. Every failure prints the command
//! that reproduces it.

use crate::conformance::{self, stable_hash, Backend, Target};
use rayon::prelude::*;
use std::sync::Mutex;

/// What to soak.
#[derive(Clone, Debug)]
pub struct Options {
    /// Only these blocks (`None`: every block of the registry).
    pub blocks: Option<Vec<String>>,
    /// Random cycles per target.
    pub cycles: u64,
    /// The seed of every target's stimulus.
    pub seed: u64,
    /// Part `part.0` (0-based) of `part.1`.
    pub part: (usize, usize),
}

/// `K/M` as (K, M): part K (0-based) of M parts, K < M.
pub fn parse_part(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--part expects K/M with 0 <= K < M (e.g. 1/3), got `{text}`");
    let (k, m) = text.split_once('/').ok_or_else(bad)?;
    let (k, m): (usize, usize) = (
        k.trim().parse().map_err(|_| bad())?,
        m.trim().parse().map_err(|_| bad())?,
    );
    if k >= m {
        return Err(bad());
    }
    Ok((k, m))
}

/// `$SMRTL_CONFORMANCE_TOOLS_PART` as (K, M), `None` when unset or blank: the part of the
/// external-tool checks and heavy proofs a CI run takes (docs/blocks.md §5, docs/prove.md §4).
/// Panics (in a test) on a malformed value.
pub fn tools_part() -> Option<(usize, usize)> {
    std::env::var("SMRTL_CONFORMANCE_TOOLS_PART")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .map(|v| parse_part(&v).unwrap_or_else(|e| panic!("SMRTL_CONFORMANCE_TOOLS_PART: {e}")))
}

/// The work of a target's random run, estimated from the size of its RTL (the rust-hdl
/// evaluator's cost per cycle grows with it): deterministic, so the parts are the same on every
/// machine.
fn weight(t: &Target) -> u64 {
    smrtl_hdl::rusthdl::emit_verilog(&t.design().module).len() as u64
}

/// `targets` in `parts` parts of about equal estimated work (largest first, each into the
/// lightest part so far; ties by name), each part in registry order. Every target is in exactly
/// one part.
pub fn partition(targets: Vec<Target>, parts: usize) -> Vec<Vec<Target>> {
    let mut by_weight: Vec<(u64, usize, Target)> = targets
        .into_par_iter()
        .enumerate()
        .map(|(i, t)| (weight(&t), i, t))
        .collect();
    by_weight.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then_with(|| stable_hash(&a.2.name()).cmp(&stable_hash(&b.2.name())))
    });
    let mut loads = vec![0u64; parts.max(1)];
    let mut split: Vec<Vec<(usize, Target)>> = vec![vec![]; parts.max(1)];
    for (w, i, t) in by_weight {
        let lightest = (0..loads.len()).min_by_key(|&k| (loads[k], k)).unwrap();
        loads[lightest] += w;
        split[lightest].push((i, t));
    }
    split
        .into_iter()
        .map(|mut p| {
            p.sort_by_key(|(i, _)| *i);
            p.into_iter().map(|(_, t)| t).collect()
        })
        .collect()
}

/// The targets this run soaks.
pub fn plan(o: &Options) -> Result<Vec<Target>, String> {
    let targets = conformance::targets(o.blocks.as_deref())?;
    let (k, m) = o.part;
    Ok(partition(targets, m).swap_remove(k))
}

/// One target's soak.
#[derive(Debug)]
pub struct Outcome {
    /// `block/preset`.
    pub target: String,
    pub cycles: u64,
    pub cases: u64,
    pub seconds: f64,
    /// The failure, on one line with the command that reproduces it.
    pub failure: Option<String>,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verdict = if self.failure.is_some() {
            "FAIL"
        } else {
            "PASS"
        };
        write!(
            f,
            "{verdict} {} on rusthdl: {} cycles in {} cases, {:.1} s",
            self.target, self.cycles, self.cases, self.seconds
        )?;
        if let Some(why) = &self.failure {
            write!(f, ": {why}")?;
        }
        Ok(())
    }
}

/// Soaks one target.
fn soak(t: &Target, cycles: u64, seed: u64) -> Outcome {
    let design = t.design();
    let factory = Backend::Rusthdl
        .factory(&design)
        .expect("rust-hdl needs no tool");
    let run = conformance::random(&design, &factory, cycles, seed);
    let r = run.report;
    let mut failure = r.failure.map(|f| {
        format!(
            "{} (shrunk from {} to {} cycles); reproduce: {}",
            f.mismatch,
            f.original_cycles,
            f.minimal.len(),
            conformance::reproduce(t, Backend::Rusthdl, cycles, seed)
        )
    });
    if failure.is_none() && r.cycles < cycles {
        failure = Some(format!("only {} of {cycles} cycles ran", r.cycles));
    }
    Outcome {
        target: t.name(),
        cycles: r.cycles,
        cases: r.cases,
        seconds: run.seconds,
        failure,
    }
}

/// Soaks `targets` in parallel, calling `report` as each finishes; returns the outcomes in
/// `targets` order.
pub fn run(
    targets: &[Target],
    cycles: u64,
    seed: u64,
    report: impl Fn(&Outcome) + Sync,
) -> Vec<Outcome> {
    let lock = Mutex::new(());
    targets
        .par_iter()
        .map(|t| {
            let o = soak(t, cycles, seed);
            let _one_at_a_time = lock.lock().unwrap_or_else(|e| e.into_inner());
            report(&o);
            o
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_parse() {
        assert_eq!(parse_part("1/3"), Ok((1, 3)));
        assert_eq!(parse_part("0/1"), Ok((0, 1)));
        for bad in ["3/3", "1", "a/3", "1/0", "-1/3"] {
            assert!(parse_part(bad).unwrap_err().contains("K/M"), "{bad}");
        }
    }

    /// Every target is in exactly one part, and no part is empty when there are enough targets.
    #[test]
    fn the_parts_cover_every_target_once() {
        let all = conformance::targets(None).unwrap();
        let names: Vec<String> = all.iter().map(Target::name).collect();
        let parts = partition(all, 3);
        let mut seen: Vec<String> = parts.iter().flatten().map(Target::name).collect();
        assert!(parts.iter().all(|p| !p.is_empty()));
        seen.sort();
        let mut want = names;
        want.sort();
        assert_eq!(seen, want);
    }

    #[test]
    fn a_short_soak_passes_and_counts_its_cycles() {
        let o = Options {
            blocks: Some(vec!["req_counter".into()]),
            cycles: 2_000,
            seed: 3,
            part: (0, 1),
        };
        let plan = plan(&o).unwrap();
        let out = run(&plan, o.cycles, o.seed, |_| {});
        assert_eq!(out.len(), plan.len());
        for x in &out {
            assert!(x.failure.is_none() && x.cycles >= 2_000, "{x}");
        }
    }
}
