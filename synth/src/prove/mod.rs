//! Solver proofs of a block's invariants on its emitted Verilog (docs/prove.md): a block
//! declares a [`Proof`] (legal-stimulus assumptions, invariants over its ports, outputs that
//! must depend on registers only, and the depths); [`prove`] writes a formal wrapper around the
//! Verilog and runs Yosys's SAT solver for bounded model checking (BMC) from reset and
//! k-induction, and reports each property: proven, failed with a counterexample trace (VCD), or
//! not inductive.
//!
//! The wrapper (`smrtl_prove`, read with `read_verilog -formal`) drives every DUT input from a
//! free input of its own, holds `reset` in the first cycle (`f_init`) and lets it free after,
//! and declares one `wire ok_<name>` per property, checked by an immediate `assume` / `assert`
//! in an `always @*` block from the second cycle on. Expressions are Verilog over the DUT's
//! port names, `reset`, the block's [`Def`] wires, `f_past` (a previous cycle exists) and
//! `past_<x>` (port, `reset` or def `x` in the previous cycle; a register the wrapper adds only
//! for the names an expression uses). Yosys 0.23 allows `$past` only in clocked blocks, hence
//! these registers.
//!
//! Flow (Yosys 0.23; one script per run, each starting with
//! `read_verilog -formal <top>.v; read_verilog -formal prove.sv; prep -flatten -top smrtl_prove;
//! async2sync; dffunmap`):
//!
//! ```text
//! vacuity:   sat -set-assumes -seq <bmc_depth> smrtl_prove          (must find a trace)
//! BMC:       sat -set-assumes -prove-asserts -seq <bmc_depth> -dump_vcd bmc.vcd smrtl_prove
//! induction: sat -set-assumes -prove-asserts -tempinduct -maxsteps <k> -dump_vcd induction.vcd
//! ```
//!
//! Registers start from their `init` values where they have one (`f_init` = 1) and free
//! otherwise, so BMC covers every DUT state the reset cycle can start from. The vacuity run
//! makes contradictory assumptions (which would prove anything) an error, not a pass.
//!
//! The other engine, [`smtbmc`] ([`Engine::Smtbmc`]), checks the same wrapper with
//! `yosys-smtbmc` + z3 (a current z3: Debian's 4.8.12 does not finish several proofs,
//! docs/prove.md §3–§4); the tests require both engines to agree on every proof.
//!
//! A [`Kind::Registered`] property ("output X depends only on registers") is a structural
//! check on the DUT alone: `proc; flatten; memory` (memories become flip-flops), then the
//! combinational input cone of the output (`%cie*`, which stops at flip-flops) must contain no
//! input port. That holds for every state, reachable or not.

use crate::TMP_REMEDY;
use serde::Serialize;
use smrtl_hdl::tools::{require, run, ToolError};
use smrtl_hdl::Port;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

mod smtbmc;
mod wrapper;
pub use smtbmc::{smtbmc, z3_version, SMTBMC_TOOLS, Z3_MIN};
#[cfg(test)]
use wrapper::past_names;
pub use wrapper::{field, pick, wrapper, zext};

/// The wrapper's module name.
pub const WRAPPER: &str = "smrtl_prove";

/// The tools a proof runs.
pub const TOOLS: [&str; 1] = ["yosys"];

/// The solver flow that checks the wrapper (docs/prove.md §3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    /// Yosys's built-in `sat` (MiniSAT): [`prove`].
    #[default]
    Sat,
    /// `yosys-smtbmc -s z3` on `write_smt2` (SymbiYosys's `smtbmc` engine): [`smtbmc`].
    Smtbmc,
}

impl Engine {
    /// The tools the engine runs.
    pub fn tools(self) -> &'static [&'static str] {
        match self {
            Engine::Sat => &TOOLS,
            Engine::Smtbmc => &SMTBMC_TOOLS,
        }
    }
}

/// [`prove`] or [`smtbmc`], per `engine`.
pub fn prove_with(
    engine: Engine,
    verilog: &str,
    top: &str,
    ports: &[Port],
    proof: &Proof,
) -> Result<Report, ToolError> {
    match engine {
        Engine::Sat => prove(verilog, top, ports, proof),
        Engine::Smtbmc => smtbmc(verilog, top, ports, proof),
    }
}

/// What a [`Property`] does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A legal-stimulus rule: the solver only explores cycles where it holds.
    Assume,
    /// An invariant: it must hold in every cycle after the reset cycle.
    Assert,
    /// `expr` names an output port that must depend only on registers (no combinational path
    /// from any input port), checked structurally.
    Registered,
}

/// One property of a block, over its port names (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Property {
    /// A Verilog identifier, unique in the proof; it labels the assertion and names the
    /// `ok_<name>` wire in the counterexample VCD.
    pub name: String,
    pub kind: Kind,
    /// A 1-bit Verilog expression (`Assume`, `Assert`), or an output port name (`Registered`).
    pub expr: String,
}

impl Property {
    pub fn assume(name: impl Into<String>, expr: impl Into<String>) -> Property {
        Property {
            name: name.into(),
            kind: Kind::Assume,
            expr: expr.into(),
        }
    }

    pub fn assert(name: impl Into<String>, expr: impl Into<String>) -> Property {
        Property {
            name: name.into(),
            kind: Kind::Assert,
            expr: expr.into(),
        }
    }

    /// Output `port` depends only on registers.
    pub fn registered(port: &str) -> Property {
        Property {
            name: format!("{port}_registered"),
            kind: Kind::Registered,
            expr: port.into(),
        }
    }
}

/// A helper wire of the wrapper, `wire [width-1:0] name = expr;`, that properties may name.
/// An `expr` that is a hierarchical name below the DUT, `dut.<net>` or `dut.<instance>.<net>`
/// (a register the block's ports only show through an address, e.g. a counter of a read-out
/// map), is a probe: Yosys 0.23 reads no hierarchical reference, so the wrapper declares the
/// wire undriven and the flow connects it to that net after flattening
/// (`connect -set <name> dut.<net>`, docs/prove.md §2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Def {
    pub name: String,
    pub width: usize,
    pub expr: String,
}

impl Def {
    pub fn new(name: impl Into<String>, width: usize, expr: impl Into<String>) -> Def {
        Def {
            name: name.into(),
            width,
            expr: expr.into(),
        }
    }

    /// Whether the def is a probe of a DUT net (see [`Def`]).
    pub fn is_probe(&self) -> bool {
        let mut parts = self.expr.split('.');
        parts.next() == Some("dut")
            && self.expr.contains('.')
            && parts.all(|p| {
                p.chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
    }
}

/// A block's proof at one configuration: helper wires, properties and depths.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Proof {
    /// Helper wires, in dependency order.
    pub defs: Vec<Def>,
    pub properties: Vec<Property>,
    /// Cycles BMC checks from reset (step 0 is the reset cycle).
    pub bmc_depth: u32,
    /// k of the k-induction.
    pub induction_depth: u32,
}

impl Proof {
    /// Properties of `kind`.
    pub fn count(&self, kind: Kind) -> usize {
        self.properties.iter().filter(|p| p.kind == kind).count()
    }
}

/// How one checked property came out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Verdict {
    /// BMC to `bmc_depth` passed and k-induction closed at `k` (the smallest k ≤ the proof's
    /// induction depth that closes): holds in every reachable state.
    Proven { bmc_depth: u32, k: u32 },
    /// Holds in every state: no input port reaches the output combinationally.
    Structural,
    /// A trace from reset under the assumptions breaks it at `step` (a real bug).
    Failed { step: u32 },
    /// The output depends combinationally on these input ports.
    DependsOnInputs { inputs: Vec<String> },
    /// BMC found no failure up to `bmc_depth`, but k-induction failed on it at `k`: the
    /// invariants are not inductive (a strengthening invariant is missing), not a proof.
    NotInductive { bmc_depth: u32, k: u32 },
    /// Held in the cycles checked but not proven: BMC stopped at another property's failure
    /// (`checked_to` = last step checked without failure), or induction failed on another one.
    Unproven { checked_to: u32 },
}

impl Verdict {
    pub fn is_proven(&self) -> bool {
        matches!(self, Verdict::Proven { .. } | Verdict::Structural)
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Proven { bmc_depth, k } => {
                write!(f, "proven (BMC depth {bmc_depth}, induction k {k})")
            }
            Verdict::Structural => write!(f, "proven (no combinational path from an input)"),
            Verdict::Failed { step } => write!(f, "FAILED at step {step} (BMC from reset)"),
            Verdict::DependsOnInputs { inputs } => {
                write!(
                    f,
                    "FAILED: depends combinationally on {}",
                    inputs.join(", ")
                )
            }
            Verdict::NotInductive { bmc_depth, k } => write!(
                f,
                "NOT PROVEN: holds to BMC depth {bmc_depth}, but induction fails at k {k} \
                 (not inductive: add a strengthening invariant or raise k)"
            ),
            Verdict::Unproven { checked_to } => write!(
                f,
                "not proven: held through step {checked_to}, the run stopped on another property"
            ),
        }
    }
}

/// One property's outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Outcome {
    pub name: String,
    pub kind: Kind,
    pub verdict: Verdict,
}

/// Which run produced a counterexample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Run {
    /// BMC from reset: a reachable failure.
    Bmc,
    /// k-induction: a trace from an arbitrary state that satisfies the invariants for k steps
    /// and breaks one in the next; not necessarily reachable.
    Induction,
}

/// A failing run's trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Counterexample {
    pub run: Run,
    /// The step of the failure (the trace's last step).
    pub step: u32,
    /// The assertions that fail there.
    pub properties: Vec<String>,
    /// The VCD `sat -dump_vcd` (or `yosys-smtbmc --dump-vcd`) wrote: every public wire of the flattened wrapper (`ok_<name>`
    /// per property, the ports, the DUT's registers as `dut.<reg>`), one timestep per cycle.
    #[serde(skip)]
    pub vcd: Vec<u8>,
}

/// The result of [`prove`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// The solver flow that produced it.
    pub engine: Engine,
    /// Every assertion and registered-only check, in declaration order.
    pub outcomes: Vec<Outcome>,
    /// Assumptions used.
    pub assumptions: usize,
    pub bmc_depth: u32,
    pub induction_depth: u32,
    /// Wall-clock seconds of Yosys, BMC and induction (0 for a run that did not happen).
    pub yosys_seconds: f64,
    pub bmc_seconds: f64,
    pub induction_seconds: f64,
    /// The first counterexample (BMC's if BMC failed, else induction's).
    pub counterexample: Option<Counterexample>,
}

impl Report {
    /// Every property proven.
    pub fn proven(&self) -> bool {
        self.outcomes.iter().all(|o| o.verdict.is_proven())
    }
}

/// Proves `proof` on `verilog` (top module `top` with `ports`); see the module doc. A tool
/// that is missing or fails, or assumptions that contradict each other, are errors; failing
/// properties are a [`Report`] that is not [`Report::proven`].
///
/// # Panics
/// On a malformed proof (a duplicate or non-identifier name, a `Registered` property that names
/// no output port, a depth of 0): a bug in the block's declaration.
pub fn prove(verilog: &str, top: &str, ports: &[Port], proof: &Proof) -> Result<Report, ToolError> {
    for tool in TOOLS {
        require(tool)?;
    }
    let wrapper = wrapper(top, ports, proof);
    let dir = crate::stage("yosys", verilog, top)?;
    write(dir.path(), "prove.sv", &wrapper)?;
    let registered: Vec<&Property> = proof
        .properties
        .iter()
        .filter(|p| p.kind == Kind::Registered)
        .collect();
    let asserts: Vec<&str> = proof
        .properties
        .iter()
        .filter(|p| p.kind == Kind::Assert)
        .map(|p| p.name.as_str())
        .collect();
    let (d, k) = (proof.bmc_depth, proof.induction_depth);

    let status = |step: &str| {
        smrtl_hdl::progress::status(&format!(
            "prove {top}: {} properties: {step} (yosys)",
            proof.properties.len()
        ))
    };
    let start = Instant::now();
    status("input cones of the registered properties");
    let cones = input_cones(dir.path(), top, &registered)?;
    let yosys_seconds = start.elapsed().as_secs_f64();
    let read_design = read_design(top, proof);
    // The assumptions alone must have a D-step trace from reset, else every proof is vacuous.
    let sat = "sat -set-assumes -show-public";
    let vacuity = format!("{read_design}tee -q -o vacuity.log {sat} -seq {d} {WRAPPER}\n");
    let bmc = format!(
        "{read_design}tee -q -o bmc.log {sat} -prove-asserts -seq {d} -dump_vcd bmc.vcd {WRAPPER}\n"
    );
    let induction = format!(
        "{read_design}tee -q -o induction.log {sat} -prove-asserts -tempinduct -maxsteps {k} \
         -dump_vcd induction.vcd {WRAPPER}\n"
    );
    status(&format!("vacuity check, a {d}-step trace from reset"));
    yosys(dir.path(), "vacuity", &vacuity)?;
    let log = read_text(&dir.path().join("vacuity.log"))?;
    if !log.contains("SAT solving finished - model found") {
        return Err(ToolError::Failed {
            tool: "yosys sat".into(),
            message: format!(
                "the assumptions of {top} admit no {d}-cycle trace from reset: they contradict \
                 each other, so nothing would be proven"
            ),
        });
    }
    let started = Instant::now();
    status(&format!("BMC to depth {d}"));
    yosys(dir.path(), "bmc", &bmc)?;
    let bmc_seconds = started.elapsed().as_secs_f64();
    let bmc_log = read_text(&dir.path().join("bmc.log"))?;
    let (mut induction_seconds, mut counterexample) = (0.0, None);
    let mut failed_names: Vec<String> = vec![];
    let mut bmc_step = None;
    let mut closed_at: Option<u32> = None;
    if bmc_log.contains("model found: FAIL") {
        let vcd = read(&dir.path().join("bmc.vcd"))?;
        let (step, failed) = first_failure(&String::from_utf8_lossy(&vcd), &asserts)
            .ok_or_else(|| unreadable("bmc.vcd", &bmc_log))?;
        bmc_step = Some(step);
        failed_names.clone_from(&failed);
        counterexample = Some(Counterexample {
            run: Run::Bmc,
            step,
            properties: failed,
            vcd,
        });
    } else if !bmc_log.contains("no model found: SUCCESS") {
        return Err(unreadable("bmc.log", &bmc_log));
    } else {
        let started = Instant::now();
        status(&format!("k-induction, k up to {k}"));
        yosys(dir.path(), "induction", &induction)?;
        induction_seconds = started.elapsed().as_secs_f64();
        let ind_log = read_text(&dir.path().join("induction.log"))?;
        if ind_log.contains("Reached maximum number of time steps -> proof failed") {
            let vcd = read(&dir.path().join("induction.vcd"))?;
            let text = String::from_utf8_lossy(&vcd);
            let failed = last_failure(&text, &asserts)
                .ok_or_else(|| unreadable("induction.vcd", &ind_log))?;
            failed_names.clone_from(&failed);
            counterexample = Some(Counterexample {
                run: Run::Induction,
                step: k,
                properties: failed,
                vcd,
            });
        } else if ind_log.contains("Induction step proven: SUCCESS") {
            // The length at which the induction closed (`-tempinduct` tries 1, 2, ..., k).
            closed_at = ind_log
                .lines()
                .filter_map(|l| l.split("induction length ").nth(1))
                .filter_map(|l| l.split_whitespace().next()?.parse().ok())
                .next_back();
        } else {
            return Err(unreadable("induction.log", &ind_log));
        }
    }
    let ends = Ends {
        counterexample: counterexample.as_ref(),
        failed: &failed_names,
        bmc_step,
        closed_at,
    };
    let outcomes = verdicts(proof, &cones, &ends);
    Ok(Report {
        engine: Engine::Sat,
        outcomes,
        assumptions: proof.count(Kind::Assume),
        bmc_depth: d,
        induction_depth: k,
        yosys_seconds,
        bmc_seconds,
        induction_seconds,
        counterexample,
    })
}

/// How the proof runs ended: the counterexample (if any), the properties it fails, the BMC
/// step of the failure and the length at which the induction closed.
struct Ends<'a> {
    counterexample: Option<&'a Counterexample>,
    failed: &'a [String],
    bmc_step: Option<u32>,
    closed_at: Option<u32>,
}

/// Each non-assumption property's verdict from the input cones and how the runs ended.
fn verdicts(proof: &Proof, cones: &[(String, Vec<String>)], ends: &Ends) -> Vec<Outcome> {
    let (d, k) = (proof.bmc_depth, proof.induction_depth);
    let failed = |name: &str| ends.failed.iter().any(|f| f == name);
    proof
        .properties
        .iter()
        .filter(|p| p.kind != Kind::Assume)
        .map(|p| {
            let verdict = match (p.kind, ends.counterexample) {
                (Kind::Registered, _) => {
                    let inputs = cones
                        .iter()
                        .find(|(n, _)| *n == p.name)
                        .map(|(_, i)| i.clone())
                        .unwrap_or_default();
                    if inputs.is_empty() {
                        Verdict::Structural
                    } else {
                        Verdict::DependsOnInputs { inputs }
                    }
                }
                (_, None) => Verdict::Proven {
                    bmc_depth: d,
                    k: ends.closed_at.unwrap_or(k),
                },
                (_, Some(c)) => match (c.run, failed(&p.name)) {
                    (Run::Bmc, true) => Verdict::Failed {
                        step: ends.bmc_step.unwrap_or(c.step),
                    },
                    (Run::Bmc, false) => Verdict::Unproven {
                        checked_to: c.step.saturating_sub(1),
                    },
                    (Run::Induction, true) => Verdict::NotInductive { bmc_depth: d, k },
                    (Run::Induction, false) => Verdict::Unproven { checked_to: d - 1 },
                },
            };
            Outcome {
                name: p.name.clone(),
                kind: p.kind,
                verdict,
            }
        })
        .collect()
}

/// The Yosys commands that load the DUT and the wrapper (`prove.sv`) for a formal run; with
/// probes (see [`Def`]), the design is flattened first and each probe connected to its net.
fn read_design(top: &str, proof: &Proof) -> String {
    let read = format!("read_verilog -formal {top}.v\nread_verilog -formal prove.sv\n");
    let probes: Vec<&Def> = proof.defs.iter().filter(|d| d.is_probe()).collect();
    let mut connect = String::new();
    if !probes.is_empty() {
        connect = format!("hierarchy -top {WRAPPER}\nproc\nflatten\ncd {WRAPPER}\n");
        for d in probes {
            let _ = writeln!(connect, "connect -set {} {}", d.name, d.expr);
        }
        connect += "cd ..\n";
    }
    format!("{read}{connect}prep -flatten -top {WRAPPER}\nasync2sync\ndffunmap\n")
}

fn write(dir: &Path, name: &str, text: &str) -> Result<(), ToolError> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|e| ToolError::path("write", &path, &e, TMP_REMEDY))
}

fn read(path: &Path) -> Result<Vec<u8>, ToolError> {
    std::fs::read(path).map_err(|e| ToolError::path("read", path, &e, TMP_REMEDY))
}

fn read_text(path: &Path) -> Result<String, ToolError> {
    Ok(String::from_utf8_lossy(&read(path)?).into_owned())
}

/// Runs `yosys -q -s <name>.ys` in `dir` with `script`.
fn yosys(dir: &Path, name: &str, script: &str) -> Result<(), ToolError> {
    let file = format!("{name}.ys");
    write(dir, &file, script)?;
    run(
        "yosys",
        Command::new(require("yosys")?)
            .current_dir(dir)
            .args(["-q", "-s", &file]),
    )
    .map(|_| ())
}

fn unreadable(what: &str, log: &str) -> ToolError {
    let lines: Vec<&str> = log.lines().collect();
    ToolError::Failed {
        tool: "yosys sat".into(),
        message: format!(
            "cannot read the outcome from {what}: {}",
            lines[lines.len().saturating_sub(6)..].join("\n")
        ),
    }
}

/// Per `Registered` property, the input ports in the combinational cone of its output.
fn input_cones(
    dir: &Path,
    top: &str,
    registered: &[&Property],
) -> Result<Vec<(String, Vec<String>)>, ToolError> {
    if registered.is_empty() {
        return Ok(vec![]);
    }
    let mut script = format!("read_verilog {top}.v\nhierarchy -top {top}\nproc\nflatten\nmemory\n");
    for (i, p) in registered.iter().enumerate() {
        let _ = writeln!(
            script,
            "tee -q -o cone_{i}.txt select -list {top}/o:{} %cie* {top}/i:* %i",
            p.expr
        );
    }
    yosys(dir, "cones", &script)?;
    registered
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let text = read_text(&dir.join(format!("cone_{i}.txt")))?;
            let prefix = format!("{top}/");
            let inputs = text
                .lines()
                .filter_map(|l| l.trim().strip_prefix(&prefix))
                .map(str::to_string)
                .collect();
            Ok((p.name.clone(), inputs))
        })
        .collect()
}

/// The 1-bit values of the wrapper's `ok_<name>` wires (and `f_init`) per step in a VCD that
/// `sat -dump_vcd` wrote: step 0 at time 0, step s ≥ 1 at time s + 1.
fn ok_steps(vcd: &str, asserts: &[&str]) -> Vec<(u32, Vec<String>)> {
    use std::collections::BTreeMap;
    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    for line in vcd.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() >= 5 && w[0] == "$var" && w[2] == "1" {
            let name = w[4].trim_start_matches('\\');
            if name == "f_init" {
                ids.insert(w[3].to_string(), name.into());
            } else if let Some(p) = name.strip_prefix("ok_") {
                if asserts.contains(&p) {
                    ids.insert(w[3].to_string(), p.into());
                }
            }
        }
    }
    let mut values: BTreeMap<String, char> = BTreeMap::new();
    let mut steps = vec![];
    let mut time: Option<u32> = None;
    let mut flush = |time: Option<u32>, values: &BTreeMap<String, char>| {
        if let Some(t) = time {
            let step = t.saturating_sub(1);
            if values.get("f_init") == Some(&'0') {
                let low: Vec<String> = values
                    .iter()
                    .filter(|(n, v)| n.as_str() != "f_init" && **v == '0')
                    .map(|(n, _)| n.clone())
                    .collect();
                steps.push((step, low));
            }
        }
    };
    for line in vcd.lines() {
        if let Some(t) = line.strip_prefix('#') {
            flush(time, &values);
            time = t.trim().parse().ok();
        } else if let (Some(v), Some(id)) = (line.chars().next(), line.get(1..)) {
            if matches!(v, '0' | '1') {
                if let Some(name) = ids.get(id.trim()) {
                    values.insert(name.clone(), v);
                }
            }
        }
    }
    flush(time, &values);
    steps
}

/// The first step with a failing assertion in a BMC trace, and the assertions failing there.
fn first_failure(vcd: &str, asserts: &[&str]) -> Option<(u32, Vec<String>)> {
    ok_steps(vcd, asserts)
        .into_iter()
        .find(|(_, low)| !low.is_empty())
}

/// The assertions failing at the last step of an induction trace.
fn last_failure(vcd: &str, asserts: &[&str]) -> Option<Vec<String>> {
    ok_steps(vcd, asserts)
        .pop()
        .map(|(_, low)| low)
        .filter(|low| !low.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use smrtl_hdl::Dir;

    #[test]
    fn past_names_are_whole_identifiers() {
        let names = past_names("past_a + x_past_b + (past_reset & past_c[3:0]) | mypast_d");
        let got: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(got, ["a", "c", "reset"]);
    }

    #[test]
    fn vcd_failures_are_found_by_step() {
        let vcd = "$scope module \\smrtl_prove $end\n$var wire 1 v0 \\f_init $end\n\
                   $var wire 1 v1 \\ok_a $end\n$var wire 1 v2 \\ok_b $end\n\
                   $var wire 1 v3 \\ok_c $end\n$var wire 4 v4 \\ok_wide $end\n\
                   $enddefinitions $end\n$dumpvars\n#0\n1v0\n$end\n0v1\n0v2\n1v3\n\
                   #2\n0v0\n1v1\n1v2\n0v3\n#3\n0v1\n0v2\n0v3\n";
        let asserts = ["a", "b"];
        // Step 0 is the reset cycle (f_init = 1): its values do not count; c is no assertion.
        assert_eq!(
            ok_steps(vcd, &asserts),
            vec![(1, vec![]), (2, vec!["a".to_string(), "b".to_string()])]
        );
        assert_eq!(
            first_failure(vcd, &asserts),
            Some((2, vec!["a".to_string(), "b".to_string()]))
        );
        assert_eq!(
            last_failure(vcd, &asserts),
            Some(vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(last_failure(vcd, &["c"]), Some(vec!["c".to_string()]));
        // A trace whose last step breaks none of the given assertions names none.
        assert_eq!(last_failure(vcd, &["d"]), None);
    }

    #[test]
    fn wrapper_connects_every_port_and_gates_the_reset_cycle() {
        let ports = vec![
            Port::new("clock", Dir::In, 1),
            Port::new("reset", Dir::In, 1),
            Port::new("a", Dir::In, 3),
            Port::new("q", Dir::Out, 4),
        ];
        let proof = Proof {
            defs: vec![Def::new("q1", 5, "{1'b0, q} + 5'd1")],
            properties: vec![
                Property::assume("a_small", "a < 3'd5"),
                Property::assert("q_step", "!f_past || past_reset || q >= past_q"),
                Property::registered("q"),
            ],
            bmc_depth: 4,
            induction_depth: 2,
        };
        let v = wrapper("m", &ports, &proof);
        for needle in [
            "input wire reset_in",
            "input wire [2:0] a",
            "wire reset = f_init | reset_in;",
            "wire [3:0] q;",
            ".a(a)",
            ".reset(reset)",
            "reg [3:0] past_q;",
            "reg [0:0] past_reset;",
            "past_q <= q;",
            "wire [4:0] q1 = {1'b0, q} + 5'd1;",
            "a_small: assume (ok_a_small);",
            "q_step: assert (ok_q_step);",
            "if (!f_init) begin",
        ] {
            assert!(v.contains(needle), "{needle} missing in\n{v}");
        }
        assert!(
            !v.contains("q_registered"),
            "structural checks are not in the wrapper"
        );
    }

    #[test]
    fn probes_are_connected_after_flattening() {
        let probe = Def::new("cnt", 4, "dut.bank.cnt_q_0");
        assert!(probe.is_probe());
        for plain in ["q + 1", "dut", "dut.", "dut.a + 1", "x.dut.a", "dut.1a"] {
            assert!(!Def::new("x", 1, plain).is_probe(), "{plain}");
        }
        let proof = Proof {
            defs: vec![probe, Def::new("cnt1", 5, "{1'b0, cnt} + 5'd1")],
            properties: vec![Property::assert("small", "cnt1 != 5'd0")],
            bmc_depth: 2,
            induction_depth: 1,
        };
        let v = wrapper("m", &[], &proof);
        assert!(v.contains("wire [3:0] cnt; // = dut.bank.cnt_q_0"), "{v}");
        let script = read_design("m", &proof);
        assert!(
            script.contains("flatten\ncd smrtl_prove\nconnect -set cnt dut.bank.cnt_q_0\ncd ..\n"),
            "{script}"
        );
    }

    #[test]
    #[should_panic(expected = "not an output port")]
    fn registered_names_an_output() {
        let ports = vec![Port::new("a", Dir::In, 1)];
        let proof = Proof {
            defs: vec![],
            properties: vec![Property::registered("a")],
            bmc_depth: 1,
            induction_depth: 1,
        };
        wrapper("m", &ports, &proof);
    }
}
