//! The evaluation's workloads (docs/memory-issue-control.md §8.3; spec §8.1; Dai et al., HPCA
//! 2018, §2.3 "all the combinations"): every pair and triple of the 13 Table-2 benchmarks, kernel
//! 0 the first in Table-2 order, and its class from the Type column (C before M).

use smrtl_cosim::sm::mem_sm::workload::{bench_named, bench_names, Bench, BENCHES};

/// A workload: its benchmarks, kernel 0 first.
#[derive(Clone)]
pub struct Mix(pub Vec<&'static Bench>);

impl std::fmt::Debug for Mix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl Mix {
    /// `bp+sv`.
    pub fn name(&self) -> String {
        self.0.iter().map(|b| b.name).collect::<Vec<_>>().join("+")
    }

    /// `C+M`: the kernels' Type labels, C first (spec §8.2 "Workload classes use the Type
    /// column").
    pub fn class(&self) -> String {
        let mut t: Vec<&str> = self
            .0
            .iter()
            .map(|b| if b.memory_bound { "M" } else { "C" })
            .collect();
        t.sort();
        t.join("+")
    }

    /// `bp+sv` (one to three Table-2 names, case-insensitive, distinct); the error is one line.
    pub fn parse(text: &str) -> Result<Mix, String> {
        let names: Vec<&str> = text.split('+').collect();
        if names.is_empty() || names.len() > 3 {
            return Err(format!(
                "workload `{text}` has {} kernels; allowed: 1 to 3 names joined by `+`",
                names.len()
            ));
        }
        let mut out = Vec::with_capacity(names.len());
        for n in names {
            let b = bench_named(n).ok_or_else(|| {
                format!(
                    "unknown benchmark `{}`; allowed: {}",
                    smrtl_hdl::shown(n),
                    bench_names()
                )
            })?;
            if out.iter().any(|o: &&Bench| o.name == b.name) {
                return Err(format!("benchmark `{}` twice in `{text}`", b.name));
            }
            out.push(b);
        }
        Ok(Mix(out))
    }
}

/// Every combination of `n` distinct benchmarks, in Table-2 order (lexicographic by index).
pub fn combinations(n: usize) -> Vec<Mix> {
    let mut out = vec![];
    let mut idx: Vec<usize> = (0..n).collect();
    let m = BENCHES.len();
    if n == 0 || n > m {
        return out;
    }
    loop {
        out.push(Mix(idx.iter().map(|&i| &BENCHES[i]).collect()));
        // Next combination.
        let mut i = n;
        loop {
            if i == 0 {
                return out;
            }
            i -= 1;
            if idx[i] < m - n + i {
                idx[i] += 1;
                for j in i + 1..n {
                    idx[j] = idx[j - 1] + 1;
                }
                break;
            }
        }
    }
}

/// The pairs (78) and triples (286) of spec §8.1.
pub fn pairs() -> Vec<Mix> {
    combinations(2)
}

pub fn triples() -> Vec<Mix> {
    combinations(3)
}

/// Classes in report order.
pub const PAIR_CLASSES: [&str; 3] = ["C+C", "C+M", "M+M"];
pub const TRIPLE_CLASSES: [&str; 4] = ["C+C+C", "C+C+M", "C+M+M", "M+M+M"];

#[cfg(test)]
mod tests {
    use super::*;

    fn count(ws: &[Mix], class: &str) -> usize {
        ws.iter().filter(|w| w.class() == class).count()
    }

    #[test]
    fn seventy_eight_pairs_by_class() {
        let p = pairs();
        assert_eq!(p.len(), 78);
        let by: Vec<usize> = PAIR_CLASSES.iter().map(|c| count(&p, c)).collect();
        assert_eq!(by, [21, 42, 15]);
        assert_eq!(p[0].name(), "cp+hs");
        assert!(p.iter().any(|w| w.name() == "bp+sv" && w.class() == "C+M"));
        assert!(p.iter().any(|w| w.name() == "pf+bp"));
        assert!(p.iter().any(|w| w.name() == "sv+ks" && w.class() == "M+M"));
    }

    #[test]
    fn two_hundred_eighty_six_triples_by_class() {
        let t = triples();
        assert_eq!(t.len(), 286);
        let by: Vec<usize> = TRIPLE_CLASSES.iter().map(|c| count(&t, c)).collect();
        assert_eq!(by, [35, 126, 105, 20]);
        let mut names: Vec<String> = t.iter().map(Mix::name).collect();
        names.dedup();
        assert_eq!(names.len(), 286);
    }

    #[test]
    fn parse_names_and_refuse_bad_ones() {
        let m = Mix::parse("BP+sv").unwrap();
        assert_eq!((m.name(), m.class()), ("bp+sv".into(), "C+M".into()));
        assert_eq!(Mix::parse("ks+cp").unwrap().class(), "C+M");
        assert!(Mix::parse("bp+xx").unwrap_err().contains("allowed: cp, hs"));
        assert!(Mix::parse("bp+bp").unwrap_err().contains("twice"));
        assert!(Mix::parse("cp+hs+dc+pf").unwrap_err().contains("1 to 3"));
    }
}
