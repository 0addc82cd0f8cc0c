//! The studies of `smrtl repro stall-inspector` and their report (docs/stall-inspector.md §11;
//! spec §5–§6): which kernel and settings make each bar, and the text, JSON, CSV and SVGs of
//! the measured figures with the targets T-a … T-f.

use super::figures::{Bar, Figure};
use super::targets::{self, label, Measured, Target, MSHR_SWEEP};
use serde_json::{json, Value};
use smrtl_hdl::blocks::stall_inspector::Class;
use std::fmt::Write as _;

/// One bar to measure: a case-study kernel and the settings that make the configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The bar's label (the figure's baseline first).
    pub label: String,
    /// The kernel's file stem under `examples/coh/` (embedded in the binary).
    pub kernel: &'static str,
    /// `KEY=VALUE` settings of the coherent system, after the kernel's header.
    pub sets: Vec<(String, String)>,
}

/// One study: a figure's id, caption and bars to measure.
pub struct Study {
    pub id: &'static str,
    pub title: &'static str,
    pub configs: Vec<Config>,
}

fn config(label: &str, kernel: &'static str, sets: &[(&str, String)]) -> Config {
    Config {
        label: label.to_string(),
        kernel,
        sets: sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    }
}

/// The implicit study's configurations (spec §6): their label and kernel.
const IMPLICIT: [(&str, &str); 3] = [
    (label::SPM, "implicit-spm"),
    (label::DMA, "implicit-dma"),
    (label::STASH, "implicit-stash"),
];

/// The four studies of spec §5's table, in figure order: UTS and UTSD under both protocols,
/// the implicit study on 1 SM under DeNovo, and the MSHR sweep with the store buffer scaled
/// with it.
pub fn studies() -> Vec<Study> {
    let protocols = |kernel: &'static str| {
        vec![
            config(label::GPU, kernel, &[("protocol", "gpu".into())]),
            config(label::DENOVO, kernel, &[("protocol", "denovo".into())]),
        ]
    };
    let implicit = |mshrs: Option<u32>| {
        IMPLICIT
            .iter()
            .map(|&(name, kernel)| {
                let mut sets = vec![("protocol", "denovo".to_string()), ("sms", "1".into())];
                let name = match mshrs {
                    Some(n) => {
                        sets.push(("mshrs", n.to_string()));
                        sets.push(("sb_entries", n.to_string()));
                        label::sweep(name, n)
                    }
                    None => name.to_string(),
                };
                config(&name, kernel, &sets)
            })
            .collect::<Vec<_>>()
    };
    // Fig. 4 groups the MSHR counts per configuration; its baseline is scratchpad at 32.
    let mut sweep = vec![];
    for (i, _) in IMPLICIT.iter().enumerate() {
        for n in MSHR_SWEEP {
            sweep.push(implicit(Some(n)).swap_remove(i));
        }
    }
    vec![
        Study {
            id: "fig1-uts",
            title: "Fig. 1: UTS, one global task queue",
            configs: protocols("uts"),
        },
        Study {
            id: "fig2-utsd",
            title: "Fig. 2: UTSD, per-SM queues",
            configs: protocols("utsd"),
        },
        Study {
            id: "fig3-implicit",
            title: "Fig. 3: implicit data movement (DeNovo)",
            configs: implicit(None),
        },
        Study {
            id: "fig4-mshr",
            title: "Fig. 4: MSHRs 32 to 256, store buffer scaled",
            configs: sweep,
        },
    ]
}

/// The measured study: its figures, the targets and the CPU-time cost behind T-f.
pub struct Report {
    pub figures: Vec<Figure>,
    pub targets: Vec<Target>,
    pub cost: f64,
    /// The settings applied to every configuration (`--set`).
    pub sets: Vec<(String, String)>,
}

impl Report {
    /// The figures measured by `measure` (one bar per configuration, in order) and the targets
    /// on them; `cost` is T-f's measured cost.
    pub fn of(
        studies: &[Study],
        mut measure: impl FnMut(&Config) -> Result<Bar, String>,
        cost: f64,
        sets: Vec<(String, String)>,
    ) -> Result<Report, String> {
        let figures = studies
            .iter()
            .map(|s| {
                Ok(Figure {
                    id: s.id,
                    title: s.title,
                    bars: s
                        .configs
                        .iter()
                        .map(&mut measure)
                        .collect::<Result<_, String>>()?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let fig = |id: &str| figures.iter().find(|f| f.id == id).expect("every study");
        let targets = targets::targets(&Measured {
            uts: fig("fig1-uts"),
            utsd: fig("fig2-utsd"),
            implicit: fig("fig3-implicit"),
            mshr: fig("fig4-mshr"),
            cost,
        })?;
        Ok(Report {
            figures,
            targets,
            cost,
            sets,
        })
    }

    /// The targets whose must fails.
    pub fn failed(&self) -> Vec<String> {
        self.targets
            .iter()
            .filter(|t| !t.must)
            .map(|t| t.id.to_string())
            .collect()
    }

    /// The report as people read it.
    pub fn text(&self) -> String {
        let mut o = String::from(
            "stall inspector (seed 003 §VI–VII, Figs. 1–4): the case studies on the coherent multi-SM model, normalised as spec §5 (docs/stall-inspector.md §11)\n",
        );
        if !self.sets.is_empty() {
            let s: Vec<String> = self.sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let _ = writeln!(o, "settings on every configuration: {}", s.join(" "));
        }
        for f in &self.figures {
            let _ = writeln!(
                o,
                "\n{} (bars: time / {}'s time)",
                f.title, f.bars[0].config
            );
            let _ = write!(
                o,
                "  {:<18} {:>4} {:>10} {:>7}",
                "config", "SMs", "cycles", "time"
            );
            for c in Class::ALL {
                let _ = write!(o, " {:>11}", c.name());
            }
            o.push('\n');
            let base = f.bars[0].total().max(1.0);
            for b in &f.bars {
                let _ = write!(
                    o,
                    "  {:<18} {:>4} {:>10} {:>7.3}",
                    b.config,
                    b.sms.len(),
                    b.cycles,
                    b.total() / base
                );
                for c in Class::ALL {
                    let _ = write!(o, " {:>11.3}", b.class(c) / base);
                }
                o.push('\n');
            }
        }
        let _ = writeln!(o, "\ntrend targets (spec §7.3): must = signs, dominant classes, [D] bounds; should = stated figures within ×2");
        for t in &self.targets {
            let verdict = |b: bool| if b { "PASS" } else { "FAIL" };
            let _ = writeln!(
                o,
                "  {} must {} should {}  {}",
                t.id,
                verdict(t.must),
                verdict(t.should),
                t.claim
            );
            for (what, v) in &t.numbers {
                let _ = writeln!(o, "      {what}: {v:.4}");
            }
            for f in &t.failed {
                let _ = writeln!(o, "      failed {f}");
            }
        }
        o
    }

    /// The report as one JSON object: the figures' bars (cycles, time, normalised stacks) and
    /// the `targets` list (`id`, `must`, `should`, the numbers).
    pub fn json(&self) -> Value {
        let figures: Vec<Value> = self
            .figures
            .iter()
            .map(|f| {
                let base = f.bars[0].total().max(1.0);
                let bars: Vec<Value> = f
                    .bars
                    .iter()
                    .map(|b| {
                        let classes: serde_json::Map<String, Value> = Class::ALL
                            .iter()
                            .map(|&c| (c.name().to_string(), json!(b.class(c) / base)))
                            .collect();
                        let sources: serde_json::Map<String, Value> = super::figures::SOURCES
                            .iter()
                            .map(|(n, _)| (n.to_string(), json!(b.source(n) / base)))
                            .collect();
                        let reasons: serde_json::Map<String, Value> = super::figures::REASONS
                            .iter()
                            .map(|(n, _)| (n.to_string(), json!(b.reason(n) / base)))
                            .collect();
                        json!({"config": b.config, "cycles": b.cycles, "sms": b.sms.len(),
                               "time": b.total() / base, "classes": classes,
                               "mem_data": sources, "mem_struct": reasons})
                    })
                    .collect();
                json!({"id": f.id, "title": f.title, "bars": bars})
            })
            .collect();
        let targets: Vec<Value> = self
            .targets
            .iter()
            .map(|t| {
                let numbers: serde_json::Map<String, Value> = t
                    .numbers
                    .iter()
                    .map(|(k, v)| (k.clone(), json!(v)))
                    .collect();
                json!({"id": t.id, "claim": t.claim, "must": t.must, "should": t.should,
                       "numbers": numbers, "failed": t.failed})
            })
            .collect();
        json!({"experiment": "stall-inspector", "figures": figures, "targets": targets,
               "cost": self.cost})
    }

    /// Spec §5's CSV: every SM's counters and the SMs' mean, normalised.
    pub fn csv(&self) -> String {
        let mut o = String::from("figure,config,sm,stack,category,cycles,normalised\n");
        for f in &self.figures {
            f.csv_rows(&mut o);
        }
        o
    }

    /// One SVG per figure and sub-figure: `fig1-uts-a.svg` … `fig4-mshr-c.svg`.
    pub fn svgs(&self) -> Vec<(String, String)> {
        let mut out = vec![];
        for f in &self.figures {
            for sub in ['a', 'b', 'c'] {
                out.push((format!("{}-{sub}.svg", f.id), f.svg(sub)));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smrtl_cosim::sm::stalls::Snapshot;

    /// Spec §5's table: two protocols for UTS and UTSD, three implicit configurations, and
    /// the sweep with the store buffer scaled with the MSHRs, scratchpad at 32 first.
    #[test]
    fn the_studies_are_the_papers() {
        let s = studies();
        let labels =
            |i: usize| -> Vec<String> { s[i].configs.iter().map(|c| c.label.clone()).collect() };
        assert_eq!(labels(0), ["GPU", "DeNovo"]);
        assert_eq!(labels(2), ["scratchpad", "scratchpad+DMA", "stash"]);
        assert_eq!(s[3].configs.len(), 12);
        assert_eq!(s[3].configs[0].label, "scratchpad 32");
        assert_eq!(s[3].configs[11].label, "stash 256");
        let c = &s[3].configs[5];
        assert_eq!(c.kernel, "implicit-dma");
        assert!(c.sets.contains(&("mshrs".into(), "64".into())));
        assert!(c.sets.contains(&("sb_entries".into(), "64".into())));
    }

    /// Every figure, sub-figure and target reaches the outputs.
    #[test]
    fn the_report_carries_every_figure_and_target() {
        let mut k = 0u64;
        let r = Report::of(
            &studies(),
            |c| {
                k += 1;
                let top = [100 + k, 0, 0, 50, 20, 10, 0, 0];
                Ok(Bar {
                    config: c.label.clone(),
                    cycles: top.iter().sum(),
                    sms: vec![Snapshot {
                        cycle: 0,
                        top,
                        md_sub: [0; 8],
                        ms_sub: [0; 8],
                        fractional: [0.0; 8],
                    }],
                })
            },
            0.05,
            vec![],
        )
        .unwrap();
        assert_eq!(r.targets.len(), 6);
        assert_eq!(r.svgs().len(), 12);
        let j = r.json();
        assert_eq!(j["targets"][5]["id"], "T-f");
        assert_eq!(j["targets"][5]["should"], true);
        assert_eq!(j["figures"][3]["bars"].as_array().unwrap().len(), 12);
        assert!(r.text().contains("T-a must FAIL"), "{}", r.text());
        assert!(r.csv().lines().count() > 20 * 19);
    }
}
