//! The parts of the conformance suite and the soak (docs/blocks.md "Conformance suite"): every
//! preset of every block in the registry as a [`Target`], random co-simulation on a named RTL
//! backend, and for a failure what reproduces it: the seed, the `smrtl` command, and the shrunk
//! case written as a replayable stimulus file and a VCD.

use crate::check::{self, Report, RtlFactory};
use crate::design::{BlockEntry, Case, Design};
use crate::stimulus_file::StimulusFile;
use smrtl_cosim::harness::backend::{rusthdl::RustHdl, verilator::VerilatorLib};
use smrtl_cosim::harness::{vcd_out, Trace};
use smrtl_cosim::Rtl;
use smrtl_hdl::tools::ToolError;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Most cycles of a failing case kept in its VCD.
const VCD_WINDOW: usize = 10_000;

/// One preset of one block: what every check of the suite runs on.
#[derive(Clone)]
pub struct Target {
    pub entry: BlockEntry,
    pub preset: &'static str,
}

impl Target {
    /// `block/preset`, as every message names it.
    pub fn name(&self) -> String {
        format!("{}/{}", self.entry.name, self.preset)
    }

    /// The block at this preset (panics, naming the target, if the preset does not configure:
    /// a registry bug).
    pub fn design(&self) -> Design {
        (self.entry.configure)(Some(self.preset), &[])
            .unwrap_or_else(|e| panic!("{}: the preset does not configure: {e}", self.name()))
    }

    /// The block at this preset with `fault` planted; `None` when these params do not build it.
    #[cfg(feature = "faults")]
    pub fn design_with_fault(&self, fault: &smrtl_hdl::faults::Fault) -> Option<Design> {
        (self.entry.configure_with_fault)(Some(self.preset), fault)
            .unwrap_or_else(|e| panic!("{}: the preset does not configure: {e}", self.name()))
    }
}

/// Every preset of every block in [`crate::registry`] order, or of the blocks named in `only`
/// (`-` and `_` alike); an unknown name is an error listing the known ones.
pub fn targets(only: Option<&[String]>) -> Result<Vec<Target>, String> {
    let entries = match only {
        None => crate::blocks(),
        Some(names) => names
            .iter()
            .map(|n| crate::block(n.trim()))
            .collect::<Result<_, _>>()?,
    };
    Ok(entries
        .into_iter()
        .flat_map(|entry| {
            (entry.presets)()
                .into_iter()
                .map(move |(preset, _)| Target {
                    entry: entry.clone(),
                    preset,
                })
        })
        .collect())
}

/// The preset of `entry` whose Verilog is the smallest (the first of equals): what the external
/// tools check on every CI run, the others in rotation (docs/blocks.md §5).
pub fn smallest_preset(entry: &BlockEntry) -> &'static str {
    (entry.presets)()
        .into_iter()
        .map(|(preset, _)| {
            let t = Target {
                entry: entry.clone(),
                preset,
            };
            (
                smrtl_hdl::rusthdl::emit_verilog(&t.design().module).len(),
                preset,
            )
        })
        .min_by_key(|&(len, _)| len)
        .expect("a block has presets")
        .1
}

/// The RTL backends random co-simulation runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Rusthdl,
    Verilator,
}

impl Backend {
    /// Its name on the command line (`smrtl cosim --backend`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Rusthdl => "rusthdl",
            Backend::Verilator => "verilator",
        }
    }

    /// Fresh RTL instances of `design` in their reset state. Verilator builds once per
    /// distinct Verilog, cached on disk across processes (`SMRTL_CACHE_DIR`).
    pub fn factory(self, design: &Design) -> Result<Box<RtlFactory<'static>>, ToolError> {
        match self {
            Backend::Rusthdl => {
                let module = design.module.clone();
                Ok(Box::new(move || {
                    Box::new(RustHdl::new(module.clone())) as Box<dyn Rtl>
                }))
            }
            Backend::Verilator => {
                let verilog = smrtl_hdl::rusthdl::emit_verilog(&design.module);
                let lib = VerilatorLib::load(&design.module, &verilog)?;
                lib.instance()?;
                Ok(Box::new(move || {
                    Box::new(lib.instance().expect("a loaded model instantiates")) as Box<dyn Rtl>
                }))
            }
        }
    }
}

/// A random co-simulation of one target on one backend: what ran and what it found.
pub struct RandomRun {
    pub report: Report,
    pub seconds: f64,
}

/// At least `cycles` random cycles of `design` on `factory`'s RTL from `seed`; the first
/// failure shrunk ([`check::random`]).
pub fn random(design: &Design, factory: &RtlFactory, cycles: u64, seed: u64) -> RandomRun {
    let t0 = Instant::now();
    let report = check::random(design, factory, cycles, seed);
    RandomRun {
        report,
        seconds: t0.elapsed().as_secs_f64(),
    }
}

/// The command that reruns a random co-simulation bit for bit (the same seed draws the same
/// cases, so the failing case comes back with any budget at least as long).
pub fn reproduce(target: &Target, backend: Backend, cycles: u64, seed: u64) -> String {
    format!(
        "smrtl cosim {} --preset {} --backend {} --cycles {cycles} --seed {seed}",
        target.entry.name,
        target.preset,
        backend.name()
    )
}

/// Where the suite writes failing cases: `$SMRTL_CONFORMANCE_DIR`, else `dir` (the test's
/// scratch directory).
pub fn failure_dir(dir: &Path) -> PathBuf {
    std::env::var_os("SMRTL_CONFORMANCE_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.to_path_buf())
}

/// The files written for one failing case.
#[derive(Debug)]
pub struct Saved {
    /// The stimulus in the replay form (`smrtl cosim BLOCK --replay FILE`, `smrtl run --stim`).
    pub stimulus: PathBuf,
    /// The case's waveform: inputs, model and RTL outputs, the mismatch flag.
    pub vcd: PathBuf,
}

/// Writes `case` of `design` as `<dir>/<label>.json` (replay form) and `<label>.vcd`, the VCD
/// from a run of the case on `rtl` beside the model (`rtl` is a fresh instance, or a replayed
/// batch run).
pub fn save_case(
    dir: &Path,
    label: &str,
    design: &Design,
    rtl: Option<&mut dyn smrtl_cosim::Simulator>,
    case: &Case,
) -> Result<Saved, String> {
    let io = |what: &str, p: &Path, e: std::io::Error| format!("{what} {}: {e}", p.display());
    std::fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
    let file_name = label.replace(['/', ' '], "-");
    let stimulus = dir.join(format!("{file_name}.json"));
    let file = StimulusFile::new(design.name, &design.params, &design.layout, case);
    let text = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())?;
    std::fs::write(&stimulus, text).map_err(|e| io("write", &stimulus, e))?;
    let run = check::run_vectors(design, rtl, case, Some(VCD_WINDOW.min(case.len().max(1))));
    let trace: Trace = run.trace.expect("recorded");
    let vcd = dir.join(format!("{file_name}.vcd"));
    let out = std::fs::File::create(&vcd).map_err(|e| io("create", &vcd, e))?;
    vcd_out::write(
        std::io::BufWriter::new(out),
        design.name,
        &design.layout,
        &trace,
    )
    .map_err(|e| io("write", &vcd, e))?;
    Ok(Saved { stimulus, vcd })
}

/// [`save_case`] for a case that failed on `factory`'s RTL; the paths, or why they could not
/// be written, as one line for a failure message.
pub fn save_failure(
    dir: &Path,
    label: &str,
    design: &Design,
    factory: &RtlFactory,
    case: &Case,
) -> String {
    let mut rtl = factory();
    match save_case(dir, label, design, Some(rtl.as_mut() as _), case) {
        Ok(s) => format!(
            "stimulus {} (smrtl cosim {} --replay {}), vcd {}",
            s.stimulus.display(),
            design.name,
            s.stimulus.display(),
            s.vcd.display()
        ),
        Err(e) => format!("the failing case could not be saved: {e}"),
    }
}

/// A stable 64-bit hash of `text` (FNV-1a): orders and balances targets the same way on every
/// machine and Rust release.
pub fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_cover_every_preset_and_reject_unknown_blocks() {
        let all = targets(None).unwrap();
        let presets: usize = crate::blocks().iter().map(|e| (e.presets)().len()).sum();
        assert_eq!(all.len(), presets);
        let one = targets(Some(&["req-counter".to_string()])).unwrap();
        assert!(one.iter().all(|t| t.entry.name == "req_counter") && !one.is_empty());
        let err = targets(Some(&["nope".to_string()])).err().unwrap();
        assert!(
            err.contains("unknown block `nope`") && err.contains("milg"),
            "{err}"
        );
    }

    #[test]
    fn the_reproduce_command_names_everything_it_needs() {
        let t = &targets(Some(&["milg".to_string()])).unwrap()[0];
        assert_eq!(
            reproduce(t, Backend::Verilator, 5, 7),
            format!(
                "smrtl cosim milg --preset {} --backend verilator --cycles 5 --seed 7",
                t.preset
            )
        );
    }
}
