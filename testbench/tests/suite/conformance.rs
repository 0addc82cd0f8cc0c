//! The conformance suite (docs/blocks.md "Conformance suite"): every preset of every block in
//! the registry, so a block gets all of it by its registry line; no block is named here.
//!
//! Per block × preset: random co-simulation against the model on rust-hdl and on Verilator, an
//! Icarus batch replay of the first random cycles, `verilator --lint-only -Wall` with the
//! project's waivers, and Yosys's generic flow (no latch; the RTL's flip-flops = the IR's
//! register bits = the block's inventory where it states one). Per planted fault of a block: caught
//! by random co-simulation on rust-hdl, shrunk, replayed from its saved stimulus to the same
//! mismatch, on the fault's port within its cycles; one fault also on Verilator.
//!
//! Each test runs its check on every target (in parallel) and then fails with every failure,
//! each naming block, preset and check, the seed and the command that reproduces it, and the
//! files (replayable stimulus, VCD) of the shrunk case. Budgets and the seed come from the
//! environment ([`Budget`]); tools missing fail the tests under `SMRTL_REQUIRE_TOOLS=1`.

use rayon::prelude::*;
use smrtl_cosim::harness::backend::icarus;
use smrtl_hdl::faults::Fault;
use smrtl_testbench::check::{self, Replayed, RtlFactory};
use smrtl_testbench::conformance::{self, Backend, Target};
use smrtl_testbench::coverage;
use smrtl_testbench::Design;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::Instant;

/// The per-run budgets and seed (environment overrides in brackets).
struct Budget {
    /// Random cycles per target on rust-hdl, and per fault and preset [`SMRTL_CONFORMANCE_CYCLES`].
    cycles: u64,
    /// Random cycles per target on Verilator [`SMRTL_CONFORMANCE_VERILATOR_CYCLES`].
    verilator_cycles: u64,
    /// Cycles of the Icarus replay [`SMRTL_CONFORMANCE_ICARUS_CYCLES`].
    icarus_cycles: usize,
    /// Seed of every random run [`SMRTL_CONFORMANCE_SEED`].
    seed: u64,
    /// Only these blocks [`SMRTL_CONFORMANCE_BLOCKS`, comma-separated].
    blocks: Option<Vec<String>>,
    /// The external tools' part `K/M` [`SMRTL_CONFORMANCE_TOOLS_PART`]: Verilator, Icarus, lint
    /// and Yosys check every block's smallest preset and part K of the other distinct RTLs (CI
    /// rotates K with the commit, so each is checked every M commits); `None`: all of them.
    tools_part: Option<(usize, usize)>,
}

impl Budget {
    fn get() -> Budget {
        let num = |key: &str, default: u64| -> u64 {
            match std::env::var(key) {
                Ok(v) => v
                    .parse()
                    .unwrap_or_else(|_| panic!("{key}={v}: not a number")),
                Err(_) => default,
            }
        };
        let b = Budget {
            cycles: num("SMRTL_CONFORMANCE_CYCLES", 30_000),
            verilator_cycles: num("SMRTL_CONFORMANCE_VERILATOR_CYCLES", 3_000),
            icarus_cycles: num("SMRTL_CONFORMANCE_ICARUS_CYCLES", 2_000) as usize,
            seed: num("SMRTL_CONFORMANCE_SEED", 1),
            blocks: std::env::var("SMRTL_CONFORMANCE_BLOCKS")
                .ok()
                .filter(|v| !v.trim().is_empty())
                .map(|v| v.split(',').map(|s| s.trim().to_string()).collect()),
            tools_part: smrtl_testbench::soak::tools_part(),
        };
        assert!(
            b.cycles > 0 && b.verilator_cycles > 0 && b.icarus_cycles > 0,
            "a budget of no cycles proves nothing"
        );
        b
    }

    fn targets(&self) -> Vec<Target> {
        let t = conformance::targets(self.blocks.as_deref()).unwrap_or_else(|e| panic!("{e}"));
        assert!(!t.is_empty(), "no block × preset to check");
        t
    }

    /// What the external tools check: one target per distinct RTL ([`distinct`]), those of a
    /// block's smallest preset always (the paper-sized ones take Yosys minutes), the others in
    /// [`Budget::tools_part`].
    fn tool_targets(&self) -> Vec<(Target, String)> {
        let all = distinct(self.targets());
        let Some((k, m)) = self.tools_part else {
            return all;
        };
        let smallest = |t: &Target| conformance::smallest_preset(&t.entry) == t.preset;
        let (always, rest): (Vec<_>, Vec<_>) = all.into_iter().partition(|(t, _)| smallest(t));
        let n = always.len() + rest.len();
        let mut chosen = always;
        chosen.extend(
            rest.into_iter()
                .enumerate()
                .filter(|(i, _)| i % m == k)
                .map(|x| x.1),
        );
        println!("tools part {k}/{m}: {} of {n} distinct RTLs", chosen.len());
        chosen
    }
}

/// Where failing cases are written (`$SMRTL_CONFORMANCE_DIR` overrides).
fn out_dir() -> PathBuf {
    conformance::failure_dir(&PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("conformance"))
}

/// Runs `check` on every item in parallel; a panic is that item's failure. Prints each item's
/// line as it finishes, then fails with every failure (each prefixed with its item's name and
/// `what`).
fn each<T: Sync>(
    what: &str,
    items: &[T],
    name: impl Fn(&T) -> String + Sync,
    check: impl Fn(&T) -> Result<String, String> + Sync,
) {
    each_in(true, what, items, name, check);
}

/// [`each`], in parallel or one item after the other (Verilator builds: one at a time in a
/// process, each `make -j2`, so a pool thread would only wait for the build lock).
fn each_in<T: Sync>(
    parallel: bool,
    what: &str,
    items: &[T],
    name: impl Fn(&T) -> String + Sync,
    check: impl Fn(&T) -> Result<String, String> + Sync,
) {
    assert!(!items.is_empty(), "{what}: nothing to check");
    let t0 = Instant::now();
    let one = |item: &T| {
        let t = Instant::now();
        let r = catch_unwind(AssertUnwindSafe(|| check(item)))
            .unwrap_or_else(|p| Err(format!("panicked: {}", panic_text(&p))));
        let secs = t.elapsed().as_secs_f64();
        let n = name(item);
        match &r {
            Ok(line) => println!("ok   {n} {what}: {line} ({secs:.1} s)"),
            Err(e) => println!("FAIL {n} {what}: {e} ({secs:.1} s)"),
        }
        (n, r)
    };
    let results: Vec<(String, Result<String, String>)> = if parallel {
        items.par_iter().map(one).collect()
    } else {
        items.iter().map(one).collect()
    };
    let failures: Vec<String> = results
        .iter()
        .filter_map(|(n, r)| r.as_ref().err().map(|e| format!("{n} {what}: {e}")))
        .collect();
    println!(
        "{what}: {} of {} passed in {:.1} s",
        results.len() - failures.len(),
        results.len(),
        t0.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        results.len(),
        failures.join("\n")
    );
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Random co-simulation of `target` on `backend`: no mismatch in at least `cycles` cycles.
fn random_on(target: &Target, backend: Backend, cycles: u64, seed: u64) -> Result<String, String> {
    let d = target.design();
    let factory = backend.factory(&d).map_err(|e| e.to_string())?;
    let run = conformance::random(&d, &factory, cycles, seed);
    let r = run.report;
    if let Some(f) = r.failure {
        let label = format!("{}-{}", target.name(), backend.name());
        return Err(format!(
            "{} (shrunk from {} to {} cycles); seed {seed}; reproduce: {}; {}",
            f.mismatch,
            f.original_cycles,
            f.minimal.len(),
            conformance::reproduce(target, backend, cycles, seed),
            conformance::save_failure(&out_dir(), &label, &d, &factory, &f.minimal)
        ));
    }
    if r.cycles < cycles {
        return Err(format!("only {} of {cycles} cycles ran", r.cycles));
    }
    Ok(format!("{} cycles in {} cases", r.cycles, r.cases))
}

/// One target per distinct Verilog text (presets that build the same RTL are checked once),
/// with the names of all the targets it stands for.
fn distinct(targets: Vec<Target>) -> Vec<(Target, String)> {
    let texts: Vec<String> = targets
        .par_iter()
        .map(|t| smrtl_hdl::rusthdl::emit_verilog(&t.design().module))
        .collect();
    let mut by_text: BTreeMap<String, (usize, Vec<String>)> = BTreeMap::new();
    for (i, (t, v)) in targets.iter().zip(texts).enumerate() {
        by_text.entry(v).or_insert((i, vec![])).1.push(t.name());
    }
    let mut out: Vec<(usize, String)> = by_text
        .into_values()
        .map(|(i, names)| (i, names.join(" = ")))
        .collect();
    out.sort();
    out.into_iter()
        .map(|(i, names)| (targets[i].clone(), names))
        .collect()
}

/// The block's Verilog as the tools get it, and its top module.
fn verilog(d: &Design) -> (String, String) {
    (
        smrtl_hdl::rusthdl::emit_verilog(&d.module),
        d.module.name.clone(),
    )
}

// ---------------------------------------------------------------------------------------------
// Every block × preset
// ---------------------------------------------------------------------------------------------

/// The registry gives every block at least one preset, every preset configures, and where a
/// block states a register inventory it is the IR's register bits.
#[test]
fn every_block_has_presets_that_configure() {
    let b = Budget::get();
    let targets = b.targets();
    let mut names: Vec<&str> = smrtl_testbench::blocks().iter().map(|e| e.name).collect();
    let n = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), n, "block names are unique");
    for e in smrtl_testbench::blocks() {
        assert!(!(e.presets)().is_empty(), "{}: no preset", e.name);
    }
    each("inventory", &targets, Target::name, |t| {
        let d = t.design();
        let bits = d.module.register_bits();
        match d.inventory {
            Some(inv) if inv != bits => Err(format!(
                "the inventory states {inv} register bits, the IR has {bits}"
            )),
            Some(inv) => Ok(format!("{inv} register bits = the inventory")),
            None => Ok(format!("{bits} register bits (no inventory stated)")),
        }
    });
}

/// The modules of a Verilog file: (name, text from `module` to `endmodule`).
fn modules(v: &str) -> Vec<(String, String)> {
    v.split("\nmodule ")
        .skip(1)
        .map(|rest| {
            let name = rest.split(' ').next().unwrap_or_default().to_string();
            let body = rest.split("\nendmodule").next().unwrap_or_default();
            (name, body.to_string())
        })
        .collect()
}

/// Module names (docs/verilog.md "Names"): over every block × preset, a name always means one
/// module text, and a module whose section comments give § numbers names the one page they
/// refer to (no `spec §`, no page per section).
#[test]
fn every_module_name_means_one_design_and_cites_its_page() {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut checked = 0;
    for t in Budget::get().targets() {
        let v = smrtl_hdl::rusthdl::emit_verilog(&t.design().module);
        for (name, text) in modules(&v) {
            checked += 1;
            let sections: Vec<&str> = text.lines().filter(|l| l.contains("// ---- ")).collect();
            for s in &sections {
                assert!(
                    !s.contains("spec §") && !s.contains(".md §"),
                    "{}: module {name} cites in a section: {s}",
                    t.name()
                );
            }
            if sections.iter().any(|s| s.contains('§')) {
                assert!(
                    text.contains("// Section numbers (§) refer to docs/"),
                    "{}: module {name} gives § numbers without its page",
                    t.name()
                );
            }
            if let Some(other) = seen.insert(name.clone(), text.clone()) {
                assert_eq!(other, text, "{}: two designs named {name}", t.name());
            }
        }
    }
    assert!(checked > 0, "no module checked");
    println!("{checked} modules, {} names", seen.len());
}

/// Random co-simulation on rust-hdl: the model and the RTL agree on every output, every cycle.
#[test]
fn every_preset_matches_its_model_on_rusthdl() {
    let b = Budget::get();
    each("rusthdl random", &b.targets(), Target::name, |t| {
        random_on(t, Backend::Rusthdl, b.cycles, b.seed)
    });
}

/// Functional coverage (docs/coverage.md): the random stimulus of `smrtl cosim` at its
/// default length hits every reachable coverpoint of every preset.
#[test]
fn every_preset_hits_its_coverpoints() {
    let b = Budget::get();
    each("coverage", &b.targets(), Target::name, |t| {
        let c = coverage::measure(&t.design(), check::COSIM_CYCLES, b.seed);
        match (c.points.len(), c.missed().count()) {
            (0, _) => Err("no coverpoints declared (docs/coverage.md)".into()),
            (_, 0) => Ok(c.summary()),
            _ => Err(format!(
                "{}; reproduce: smrtl cosim {} --preset {} --seed {} --coverage",
                c.summary(),
                t.entry.name,
                t.preset,
                b.seed
            )),
        }
    });
}

/// Random co-simulation on Verilator (one build per distinct Verilog, cached on disk).
#[test]
fn every_preset_matches_its_model_on_verilator() {
    if !smrtl_hdl::tools::external(&["verilator", "make", "g++"]) {
        return;
    }
    let b = Budget::get();
    each_in(
        false,
        "verilator random",
        &b.tool_targets(),
        |x| x.1.clone(),
        |(t, _)| random_on(t, Backend::Verilator, b.verilator_cycles, b.seed),
    );
}

/// Icarus replays the first random cycles like the model (its compile is the Icarus check).
#[test]
fn every_preset_replays_on_icarus_like_its_model() {
    if !smrtl_hdl::tools::external(&["iverilog", "vvp"]) {
        return;
    }
    let b = Budget::get();
    each(
        "icarus replay",
        &b.tool_targets(),
        |x| x.1.clone(),
        |(t, _)| {
            let d = t.design();
            let (v, _) = verilog(&d);
            let case = check::first_cycles(&d, b.seed, b.icarus_cycles);
            let run = icarus::run_batch(&d.module, &v, &case).map_err(|e| e.to_string())?;
            let mut replayed = Replayed::new("icarus", run.outputs.clone());
            let compared = check::run_vectors(&d, Some(&mut replayed), &case, None);
            if compared.outputs.len() != case.len() && compared.mismatch.is_none() {
                return Err(format!(
                    "{} of {} cycles compared",
                    compared.outputs.len(),
                    case.len()
                ));
            }
            match compared.mismatch {
                None => Ok(format!("{} cycles", case.len())),
                Some(m) => {
                    let mut again = Replayed::new("icarus", run.outputs);
                    let label = format!("{}-icarus", t.name());
                    let saved = conformance::save_case(&out_dir(), &label, &d, Some(&mut again), &case)
                    .map(|s| format!("stimulus {} (smrtl run {} --preset {} --backend icarus --stim {}), vcd {}",
                        s.stimulus.display(), t.entry.name, t.preset, s.stimulus.display(), s.vcd.display()))
                    .unwrap_or_else(|e| format!("the case could not be saved: {e}"));
                    Err(format!(
                        "{m}; the first {} random cycles of seed {}; {saved}",
                        case.len(),
                        b.seed
                    ))
                }
            }
        },
    );
}

/// `verilator --lint-only -Wall` with the project's waivers ([`smrtl_synth::LINT_WAIVERS`]).
#[test]
fn every_preset_lints_clean() {
    if !smrtl_hdl::tools::external(&["verilator"]) {
        return;
    }
    let b = Budget::get();
    each(
        "lint",
        &b.tool_targets(),
        |x| x.1.clone(),
        |(t, _)| {
            let (v, top) = verilog(&t.design());
            smrtl_synth::lint_verilator(&v, &top).map_err(|e| e.to_string())?;
            Ok("clean".into())
        },
    );
}

/// Yosys: no latch; the RTL's flip-flops and memory bits are the IR's, and the block's
/// inventory where it states one. The generic flow (`synth`) on every target, or in CI
/// ([`Budget::tools_part`]) on each block's smallest preset, the other presets of the part
/// elaborated only (`proc`, where a latch would appear): `synth` takes minutes on the papers'
/// sizes (`relssp_unit/paper` 424 s) for the same verdict.
#[test]
fn every_preset_synthesizes_with_its_registers_and_no_latch() {
    if !smrtl_hdl::tools::external(&["yosys"]) {
        return;
    }
    let b = Budget::get();
    each(
        "yosys",
        &b.tool_targets(),
        |x| x.1.clone(),
        |(t, _)| {
            let d = t.design();
            let (v, top) = verilog(&d);
            let full = b.tools_part.is_none() || conformance::smallest_preset(&t.entry) == t.preset;
            let (flow, cells, rtl_ffs, memory_bits, latches, synth_ffs) = if full {
                let g = smrtl_synth::yosys::generic(&v, &top).map_err(|e| e.to_string())?;
                let ffs = format!(" ({} after synthesis)", g.flip_flops);
                (
                    "synth",
                    g.cells,
                    g.rtl_flip_flops,
                    g.memory_bits,
                    g.latches,
                    ffs,
                )
            } else {
                let e = smrtl_synth::yosys::elaborate(&v, &top).map_err(|e| e.to_string())?;
                let (c, f, m) = (e.cells, e.rtl_flip_flops, e.memory_bits);
                ("proc", c, f, m, e.latches, String::new())
            };
            let (ir, mem) = (d.module.register_bits(), d.module.memory_bits());
            let mut wrong = vec![];
            if !latches.is_empty() {
                wrong.push(format!("latches {latches:?}"));
            }
            if cells == 0 {
                wrong.push("an empty netlist".into());
            }
            if rtl_ffs != ir {
                wrong.push(format!(
                    "Yosys finds {rtl_ffs} flip-flop bits in the RTL, the IR has {ir}"
                ));
            }
            if memory_bits != mem {
                wrong.push(format!(
                    "Yosys finds {memory_bits} memory bits, the IR has {mem}"
                ));
            }
            if let Some(inv) = d.inventory.filter(|&i| i != rtl_ffs) {
                wrong.push(format!(
                    "the inventory states {inv} register bits, Yosys finds {rtl_ffs}"
                ));
            }
            if !wrong.is_empty() {
                return Err(wrong.join("; "));
            }
            Ok(format!(
                "{flow}: {cells} cells, {ir} flip-flop bits in the RTL{}{synth_ffs}, {mem} memory bits, no latch",
                if d.inventory.is_some() { " = the inventory" } else { "" },
            ))
        },
    );
}

// ---------------------------------------------------------------------------------------------
// Planted faults
// ---------------------------------------------------------------------------------------------

/// A fault's random run at one preset that builds it.
struct FaultRun {
    target: Target,
    /// The shrunk failure, if caught.
    caught: Option<check::Failure>,
    /// Whether the minimal case gives the same mismatch on a fresh instance (if caught).
    reproduced: Option<bool>,
}

/// Every (fault, preset) pair whose params build the fault, for the blocks of `b`.
fn fault_targets(b: &Budget) -> Vec<(Fault, Target)> {
    b.targets()
        .into_iter()
        .flat_map(|t| t.entry.faults.iter().map(move |f| (*f, t.clone())))
        .filter(|(f, t)| t.design_with_fault(f).is_some())
        .collect()
}

/// Whether `minimal` reproduces `f` (the same first mismatch) on a fresh faulty instance, from
/// the stimulus file written for it.
fn replays(
    d: &Design,
    factory: &RtlFactory,
    saved: &std::path::Path,
    f: &check::Failure,
) -> Result<(), String> {
    let text = std::fs::read_to_string(saved).map_err(|e| format!("{}: {e}", saved.display()))?;
    let file: smrtl_testbench::stimulus_file::StimulusFile =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", saved.display()))?;
    let case = file.to_case(&d.layout)?;
    if case != f.minimal {
        return Err(format!(
            "{} does not hold the minimal case",
            saved.display()
        ));
    }
    match check::run_case(d, factory, &case, None).mismatch {
        Some(m) if m == f.mismatch => Ok(()),
        other => Err(format!(
            "replaying the minimal case gives {other:?}, not {}",
            f.mismatch
        )),
    }
}

/// The random run of `fault` at `target` on rust-hdl, its catch shrunk and replayed on a fresh
/// instance.
fn fault_run(fault: Fault, target: Target, b: &Budget) -> FaultRun {
    let d = target.design_with_fault(&fault).expect("built");
    let factory = Backend::Rusthdl
        .factory(&d)
        .expect("rust-hdl needs no tool");
    let run = conformance::random(&d, &factory, b.cycles, b.seed);
    let caught = run.report.failure;
    // The shrunk case must reproduce on a fresh instance, bit for bit.
    let reproduced = caught.as_ref().map(|f| {
        check::run_case(&d, &factory, &f.minimal, None)
            .mismatch
            .as_ref()
            == Some(&f.mismatch)
    });
    println!(
        "{} {fault}: {} cycles, caught: {}",
        target.name(),
        run.report.cycles,
        caught.is_some()
    );
    FaultRun {
        target,
        caught,
        reproduced,
    }
}

/// The runs of `fault` at its presets in `pairs`, smallest faulty RTL first (the cheapest
/// co-simulation and shrink), up to the first that shows it on `fault.port` within
/// `fault.within` cycles.
fn fault_runs(fault: Fault, pairs: &[(Fault, Target)], b: &Budget) -> Vec<FaultRun> {
    let mut targets: Vec<Target> = pairs
        .iter()
        .filter(|(f, _)| *f == fault)
        .map(|(_, t)| t.clone())
        .collect();
    targets.sort_by_cached_key(|t| {
        let d = t.design_with_fault(&fault).expect("built");
        (verilog(&d).0.len(), t.name())
    });
    let mut runs = vec![];
    for target in targets {
        let run = fault_run(fault, target, b);
        let shown = run
            .caught
            .as_ref()
            .is_some_and(|f| f.mismatch.port == fault.port && f.minimal.len() <= fault.within);
        runs.push(run);
        if shown {
            break;
        }
    }
    runs
}

/// Judges one fault from its runs at every preset that builds it: caught at one at least;
/// every catch shrunk (shorter than the case that found it) and reproducible; some catch on
/// `fault.port` within `fault.within` cycles, saved (stimulus and VCD) and replayed from the
/// saved stimulus to the same mismatch.
fn judge(fault: &Fault, runs: &[&FaultRun], b: &Budget) -> Result<String, String> {
    let presets = |rs: &mut dyn Iterator<Item = &&FaultRun>| {
        rs.map(|r| r.target.preset).collect::<Vec<_>>().join(", ")
    };
    let caught: Vec<&&FaultRun> = runs.iter().filter(|r| r.caught.is_some()).collect();
    if caught.is_empty() {
        return Err(format!(
            "not caught at {} in {} cycles each on rusthdl, seed {}",
            presets(&mut runs.iter()),
            b.cycles,
            b.seed
        ));
    }
    for r in &caught {
        let f = r.caught.as_ref().unwrap();
        if r.reproduced != Some(true) {
            return Err(format!(
                "{}: the minimal case does not reproduce {} on a fresh instance",
                r.target.preset, f.mismatch
            ));
        }
        if f.minimal.len() >= f.original_cycles && f.original_cycles > 1 {
            return Err(format!(
                "{}: not shrunk ({} cycles)",
                r.target.preset, f.original_cycles
            ));
        }
    }
    let good = caught
        .iter()
        .filter(|r| {
            let f = r.caught.as_ref().unwrap();
            f.mismatch.port == fault.port && f.minimal.len() <= fault.within
        })
        .min_by_key(|r| r.caught.as_ref().unwrap().minimal.len());
    let Some(best) = good else {
        let seen: Vec<String> = caught
            .iter()
            .map(|r| {
                let f = r.caught.as_ref().unwrap();
                format!(
                    "{}: {} in {} cycles",
                    r.target.preset,
                    f.mismatch,
                    f.minimal.len()
                )
            })
            .collect();
        return Err(format!(
            "never on {} within {} cycles: {}; seed {}",
            fault.port,
            fault.within,
            seen.join("; "),
            b.seed
        ));
    };
    let f = best.caught.as_ref().unwrap();
    let d = best.target.design_with_fault(fault).expect("built");
    let factory = Backend::Rusthdl.factory(&d).map_err(|e| e.to_string())?;
    let label = format!("{}-fault-{}", best.target.name(), fault.name);
    let saved = conformance::save_case(
        &out_dir(),
        &label,
        &d,
        Some(factory().as_mut() as _),
        &f.minimal,
    )?;
    replays(&d, &factory, &saved.stimulus, f)?;
    let vcd = std::fs::read_to_string(&saved.vcd).map_err(|e| e.to_string())?;
    if !vcd.contains(fault.port) || !vcd.contains("mismatch") {
        return Err(format!(
            "{} does not show {} and the mismatch flag",
            saved.vcd.display(),
            fault.port
        ));
    }
    Ok(format!(
        "caught at {} of {} tried; at {}: {} (shrunk from {} to {} cycles, replayed), vcd {}",
        presets(&mut caught.iter().copied()),
        presets(&mut runs.iter()),
        best.target.preset,
        f.mismatch,
        f.original_cycles,
        f.minimal.len(),
        saved.vcd.display()
    ))
}

/// Every planted fault of every block is caught by random co-simulation on rust-hdl, shrunk,
/// and shown on its port within its cycles (docs/blocks.md "Conformance suite").
#[test]
fn every_planted_fault_is_caught_and_shrunk_on_rusthdl() {
    let b = Budget::get();
    let pairs = fault_targets(&b);
    let faults: Vec<Fault> = b
        .targets()
        .iter()
        .flat_map(|t| t.entry.faults.iter().copied())
        .fold(vec![], |mut all, f| {
            if !all.contains(&f) {
                all.push(f);
            }
            all
        });
    if faults.is_empty() {
        assert!(
            b.blocks.is_some(),
            "no block of the registry declares a planted fault"
        );
        println!("no block of this run declares a planted fault");
        return;
    }
    each(
        "planted fault",
        &faults,
        |f| f.to_string(),
        |fault| {
            let runs = fault_runs(*fault, &pairs, &b);
            if runs.is_empty() {
                return Err("no preset builds it".into());
            }
            judge(fault, &runs.iter().collect::<Vec<_>>(), &b)
        },
    );
}

/// One planted fault (the smallest faulty RTL) is caught and shrunk on Verilator too.
#[test]
fn a_planted_fault_is_caught_on_verilator() {
    if !smrtl_hdl::tools::external(&["verilator", "make", "g++"]) {
        return;
    }
    let b = Budget::get();
    // The smallest faulty RTL that rust-hdl catches within the budget (milliseconds each).
    let mut pairs: Vec<(usize, Fault, Target)> = fault_targets(&b)
        .into_iter()
        .map(|(f, t)| {
            let v = verilog(&t.design_with_fault(&f).expect("built")).0;
            (v.len(), f, t)
        })
        .collect();
    pairs.sort_by_key(|(len, f, t)| (*len, t.name(), f.name));
    let Some((fault, target)) = pairs.into_iter().find_map(|(_, f, t)| {
        let d = t.design_with_fault(&f).expect("built");
        let factory = Backend::Rusthdl
            .factory(&d)
            .expect("rust-hdl needs no tool");
        let caught = conformance::random(&d, &factory, b.cycles, b.seed)
            .report
            .failure;
        caught.map(|_| (f, t))
    }) else {
        assert!(
            b.blocks.is_some(),
            "no planted fault is caught on rust-hdl to try on Verilator"
        );
        println!("no planted fault of the blocks of this run is caught on rust-hdl");
        return;
    };
    each(
        "planted fault on verilator",
        &[(fault, target)],
        |(f, t)| format!("{} {f}", t.name()),
        |(fault, t)| {
            let d = t.design_with_fault(fault).expect("built");
            let factory = Backend::Verilator.factory(&d).map_err(|e| e.to_string())?;
            let r = conformance::random(&d, &factory, b.cycles, b.seed).report;
            let f = r
                .failure
                .ok_or_else(|| format!("not caught in {} cycles, seed {}", r.cycles, b.seed))?;
            if f.mismatch.port != fault.port {
                return Err(format!(
                    "caught on {}, not {}: {}",
                    f.mismatch.port, fault.port, f.mismatch
                ));
            }
            if f.minimal.len() >= f.original_cycles && f.original_cycles > 1 {
                return Err(format!("not shrunk ({} cycles)", f.original_cycles));
            }
            if check::run_case(&d, &factory, &f.minimal, None)
                .mismatch
                .as_ref()
                != Some(&f.mismatch)
            {
                return Err("the minimal case does not reproduce the mismatch".into());
            }
            Ok(format!(
                "{} (shrunk from {} to {} cycles)",
                f.mismatch,
                f.original_cycles,
                f.minimal.len()
            ))
        },
    );
}
