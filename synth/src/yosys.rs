//! Yosys flows on Verilog text, kept hierarchical: technology-independent `synth` (gate counts,
//! flip-flops, latches, logic depth), `synth_ice40` (LUT4, carry, flip-flop and block-RAM counts)
//! and `synth_xilinx` (LUT1..LUT6, LUT-RAM, block RAM and flip-flop counts), each with the totals
//! of the whole design and the figures of every module of the hierarchy ([`ModuleCost`]).
//!
//! Every flow runs this script (checked on Yosys 0.23):
//!
//! ```text
//! read_verilog <top>.v
//! hierarchy -check -top <top>
//! proc
//! delete w:$memwr$* %ci1 t:$dff %i        # see below
//! tee -q -o rtl.json stat -width -json     # the RTL: register bits, memories
//! synth -top <top>                         # or synth_ice40 -noflatten -top <top>,
//!                                          # or synth_xilinx -family xc7 -noiopad -noclkbuf -top <top>
//! tee -q -o stat.json stat -json           # per-module cells after mapping
//! flatten
//! tee -q -o ltp.txt ltp -noff              # longest path across module boundaries
//! ```
//!
//! - No flow flattens before `stat`: `synth` and `synth_xilinx` keep the hierarchy by default,
//!   `synth_ice40` needs `-noflatten`. Each module is therefore synthesized once, whatever its
//!   instance count, and nothing is optimized across module boundaries (a constant on a child's
//!   input port is not propagated into it).
//! - `stat -json` gives one entry per module definition. Its cells include the instances of
//!   child modules (cell type = the child's name); [`ModuleCost`] separates them, and the totals
//!   are the sum over modules of (instances × own figures), computed here. Yosys 0.23 writes
//!   invalid JSON in two cases, both repaired before parsing: a trailing comma when the design
//!   has no top, and the hierarchy tree's text lines inside the JSON (with its `design` section)
//!   when a child module has children of its own.
//! - `proc` turns `always @(posedge clock) if (we) mem[a] <= d;` into a `$memwr_v2` cell plus, in
//!   Yosys 0.23, three dead `$dff` cells on `$memwr$…` wires (address, data, enable) that nothing
//!   reads and `opt_clean` removes later. The `delete` line drops exactly those, so the RTL
//!   register count is that of the Verilog. It is not `opt_clean`, which would also drop
//!   registers the RTL writes but never reads.
//! - Memories are counted in the RTL (`num_memory_bits`: width × depth of every `reg [W-1:0]
//!   mem [0:D-1]`, before any mapping). The generic flow then maps them to flip-flops. The iCE40
//!   flow maps a memory with synchronous read to `SB_RAM40_4K` (with `(* no_rw_check *)` on the
//!   memory no read/write bypass logic is added); an asynchronous read cannot use the iCE40's
//!   block RAM (and the iCE40 has no LUT-RAM), so such a memory becomes flip-flops and LUT
//!   multiplexers. The Xilinx flow maps asynchronous reads to LUT-RAM (`RAM32M`, `RAM64M`,
//!   `RAM128X1D`, …) and synchronous reads to `RAMB18E1` / `RAMB36E1`.
//! - `ltp -noff` on the hierarchical netlist would count a child instance as one step, so the
//!   netlist is flattened (after `stat`) for the logic depth.
//! - `synth_xilinx` gets `-noiopad -noclkbuf`: the cost of the logic, without the I/O and clock
//!   buffers of a chip-level top. Yosys has no timing model for Xilinx parts that includes
//!   routing (`sta` in 0.23 has no arcs for `CARRY4` and no interconnect), so that flow gives no
//!   timing figure; see [`XILINX_TIMING`]. The iCE40 netlist can be placed and routed by
//!   nextpnr for an Fmax ([`crate::nextpnr`]).

use crate::{stage, TMP_REMEDY};
use serde::{Deserialize, Serialize};
use smrtl_hdl::tools::{require, run, ToolError};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const TOOL: &str = "yosys";

/// Why the Xilinx flow reports no timing.
pub const XILINX_TIMING: &str = "no timing for the Xilinx flow: Yosys has no Xilinx timing model \
     with routing (its `sta` has no CARRY4 arcs and no interconnect delays) and nextpnr-xilinx is \
     not packaged";

/// One module definition of the synthesized hierarchy, as one flow maps it. Figures are per
/// instance and exclude the module's child instances (see [`ModuleCost::submodules`]); the whole
/// design is the sum over modules of `instances` × figures. A figure the flow's target does not
/// have (LUTs in the generic flow, LUT-RAM on the iCE40) is 0.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ModuleCost {
    /// Module name as Yosys reports it, without the leading `\`.
    pub name: String,
    /// Instances of the module in the design (1 for the top; the sum over every path from the
    /// top of the product of instance counts).
    pub instances: u64,
    /// Child instances inside one instance, by module name.
    pub submodules: BTreeMap<String, u64>,
    /// Cells of one instance after mapping, child instances excluded.
    pub cells: u64,
    /// Flip-flop bits (generic `$_DFF*` / `$_SDFF*` / …, iCE40 `SB_DFF*`, Xilinx `FD*`).
    pub flip_flops: u64,
    /// LUT cells: `SB_LUT4` (iCE40), `LUT1`..`LUT6` (Xilinx); 0 in the generic flow.
    pub luts: u64,
    /// Block-RAM cells: `SB_RAM40_4K` (iCE40, 4 kbit each), `RAMB18E1` / `RAMB36E1` (Xilinx).
    pub brams: u64,
    /// LUT-RAM cells (Xilinx `RAM32M`, `RAM64M`, `RAM128X1D`, `RAM256X1S`, …).
    pub lut_ram: u64,
    /// Memories (`reg [W-1:0] mem [0:D-1]`) in the RTL of one instance.
    pub memories: u64,
    /// Their bits, width × depth, before mapping.
    pub memory_bits: u64,
    /// Cells of one instance by type, child instances excluded.
    pub cells_by_type: BTreeMap<String, u64>,
}

/// Result of `synth -top <top>` (Yosys's internal gate library), hierarchy kept.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GenericReport {
    /// All cells after synthesis, whole design (every instance counted).
    pub cells: u64,
    /// Flip-flop bits after synthesis (`$_DFF*`, `$_SDFF*`, …; equal registers merged).
    pub flip_flops: u64,
    /// Register bits as written in the RTL (coarse flip-flop cells after `proc`, by width);
    /// memories are not registers here, see `memory_bits`.
    pub rtl_flip_flops: u64,
    /// Memory bits in the RTL (width × depth of every memory, every instance counted). The
    /// generic flow maps them to flip-flops, so they are part of `flip_flops`.
    pub memory_bits: u64,
    /// Latch cells by type (`$_DLATCH*`, `$dlatch`, `$_SR_*`, …); empty for a clean design.
    pub latches: BTreeMap<String, u64>,
    /// Longest topological path in cells (`ltp -noff` on the flattened netlist), if reported.
    pub logic_depth: Option<u64>,
    /// Cell counts by type, whole design.
    pub cells_by_type: BTreeMap<String, u64>,
    /// Coarse cells after `proc`, by type and width (`$eq_13`: 13-bit equality compares).
    pub rtl_cells_by_type: BTreeMap<String, u64>,
    /// Each module of the hierarchy, top first.
    pub modules: Vec<ModuleCost>,
    /// Wall-clock seconds Yosys took.
    pub seconds: f64,
}

/// The design as elaborated (`proc`, no synthesis): what the conformance suite checks on the
/// presets it does not synthesize in CI (docs/blocks.md §5). A latch is made by `proc` or not
/// at all, so `latches` is the synthesized design's.
#[derive(Clone, Debug, PartialEq)]
pub struct ElaboratedReport {
    /// Coarse cells after `proc`, whole design.
    pub cells: u64,
    /// Register bits as written in the RTL (see [`GenericReport::rtl_flip_flops`]).
    pub rtl_flip_flops: u64,
    /// Memory bits in the RTL.
    pub memory_bits: u64,
    /// Latch cells by type (`$dlatch`, `$sr`, …); empty for a clean design.
    pub latches: BTreeMap<String, u64>,
    /// Wall-clock seconds Yosys took.
    pub seconds: f64,
}

/// Elaborates `verilog` (`read_verilog`, `hierarchy`, `proc`) and reports its coarse cells,
/// register and memory bits and latches, in seconds where [`generic`] takes minutes on the
/// largest configurations.
pub fn elaborate(verilog: &str, top: &str) -> Result<ElaboratedReport, ToolError> {
    let staged = stage(TOOL, verilog, top)?;
    let dir = staged.path();
    let seconds = run_flow(dir, &elaboration(top))?;
    let rtl = parse_stat_json(&read(dir, "rtl.json")?, top)?.totals();
    Ok(ElaboratedReport {
        cells: rtl.cells,
        rtl_flip_flops: rtl.register_bits(),
        memory_bits: rtl.memory_bits,
        latches: rtl.latches(),
        seconds,
    })
}

/// The flow's start: read, elaborate (`proc`) and write the RTL statistics to `rtl.json`
/// (memory write ports' enable flip-flops dropped, as they are part of the memory).
fn elaboration(top: &str) -> String {
    format!(
        "read_verilog {top}.v\n\
         hierarchy -check -top {top}\n\
         proc\n\
         delete w:$memwr$* %ci1 t:$dff %i\n\
         tee -q -o rtl.json stat -width -json\n"
    )
}

/// Writes `script` as `flow.ys` in `dir` and runs Yosys on it there; the seconds it took.
fn run_flow(dir: &Path, script: &str) -> Result<f64, ToolError> {
    let yosys = require(TOOL)?;
    let flow = dir.join("flow.ys");
    std::fs::write(&flow, script).map_err(|e| ToolError::path("write", &flow, &e, TMP_REMEDY))?;
    let start = Instant::now();
    run(
        TOOL,
        Command::new(yosys)
            .current_dir(dir)
            .args(["-q", "-l", "yosys.log", "-s", "flow.ys"]),
    )?;
    Ok(start.elapsed().as_secs_f64())
}

/// Result of `synth_ice40 -noflatten -top <top>`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ice40Report {
    /// `SB_LUT4` cells, whole design.
    pub lut4: u64,
    /// `SB_CARRY` cells.
    pub carry: u64,
    /// `SB_DFF*` cells.
    pub flip_flops: u64,
    /// `SB_RAM40_4K` block RAMs (4 kbit each).
    pub brams: u64,
    /// Memory bits in the RTL, before mapping (to `SB_RAM40_4K` when read synchronously, else
    /// to flip-flops).
    pub memory_bits: u64,
    /// All cells.
    pub cells: u64,
    /// Longest topological path in cells (LUTs and carries, `ltp -noff`), if reported.
    pub logic_depth: Option<u64>,
    /// Cell counts by type.
    pub cells_by_type: BTreeMap<String, u64>,
    /// Each module of the hierarchy, top first.
    pub modules: Vec<ModuleCost>,
    /// Wall-clock seconds Yosys took.
    pub seconds: f64,
}

/// Result of `synth_xilinx -family xc7 -noiopad -noclkbuf -top <top>` (7-series cells). No
/// timing: see [`XILINX_TIMING`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct XilinxReport {
    /// Logic LUTs, `LUT1`..`LUT6`, whole design.
    pub luts: u64,
    /// `LUT1`..`LUT6` separately (index 0 is `LUT1`).
    pub luts_by_inputs: [u64; 6],
    /// LUT-RAM cells (`RAM32M`, `RAM64M`, `RAM128X1D`, …).
    pub lut_ram: u64,
    /// LUTs those LUT-RAM cells occupy (`RAM32M`/`RAM64M`/`RAM128X1D`: 4, `RAM64X1D`: 2, …).
    pub lut_ram_luts: u64,
    /// Shift-register LUTs (`SRL16E`, `SRLC32E`).
    pub srl: u64,
    /// `FD*` flip-flops.
    pub flip_flops: u64,
    /// `RAMB18E1` / `RAMB36E1` block RAMs.
    pub brams: u64,
    /// `CARRY4` cells.
    pub carry: u64,
    /// `DSP48E1` cells.
    pub dsp: u64,
    /// Memory bits in the RTL, before mapping.
    pub memory_bits: u64,
    /// All cells.
    pub cells: u64,
    /// Longest topological path in cells (`ltp -noff`), if reported.
    pub logic_depth: Option<u64>,
    /// Cell counts by type.
    pub cells_by_type: BTreeMap<String, u64>,
    /// Each module of the hierarchy, top first.
    pub modules: Vec<ModuleCost>,
    /// Wall-clock seconds Yosys took.
    pub seconds: f64,
}

/// Runs `synth -top <top>` on `verilog` and reports gates, flip-flops, latches and depth.
pub fn generic(verilog: &str, top: &str) -> Result<GenericReport, ToolError> {
    let out = synthesize(verilog, top, Target::Generic, false)?;
    let totals = out.totals();
    let rtl_totals = out.rtl.totals();
    let latches = totals.latches();
    let by_type = totals.cells_by_type;
    Ok(GenericReport {
        cells: totals.cells,
        flip_flops: by_type
            .iter()
            .filter(|(t, _)| is_generic_ff(t))
            .map(|(_, n)| n)
            .sum(),
        rtl_flip_flops: rtl_totals.register_bits(),
        memory_bits: rtl_totals.memory_bits,
        latches,
        logic_depth: out.depth,
        cells_by_type: by_type,
        rtl_cells_by_type: rtl_totals.cells_by_type,
        modules: out.modules(Target::Generic),
        seconds: out.seconds,
    })
}

/// Runs `synth_ice40 -noflatten -top <top>` on `verilog` and reports LUT4, carry, flip-flop
/// and block-RAM counts.
pub fn ice40(verilog: &str, top: &str) -> Result<Ice40Report, ToolError> {
    Ok(ice40_flow(verilog, top, false)?.0)
}

/// Like [`ice40`], also writing the netlist for nextpnr ([`crate::nextpnr::fmax`]).
pub fn ice40_netlist(verilog: &str, top: &str) -> Result<(Ice40Report, PnrNetlist), ToolError> {
    let (report, netlist) = ice40_flow(verilog, top, true)?;
    Ok((report, netlist.expect("netlist written")))
}

/// `synth_ecp5 -top <top>`'s LUT4 / carry / flip-flop / block-RAM counts (`LUT4`, `CCU2C`,
/// `TRELLIS_FF`, `DP16KD`, in the fields of an [`Ice40Report`]) and the out-of-context netlist
/// for nextpnr-ecp5: the flow for blocks that fit no iCE40 ([`crate::nextpnr::ECP5_85K`]).
pub fn ecp5_netlist(verilog: &str, top: &str) -> Result<(Ice40Report, PnrNetlist), ToolError> {
    let (report, netlist) = pnr_flow(verilog, top, Target::Ecp5, true)?;
    Ok((report, netlist.expect("netlist written")))
}

fn ice40_flow(
    verilog: &str,
    top: &str,
    netlist: bool,
) -> Result<(Ice40Report, Option<PnrNetlist>), ToolError> {
    pnr_flow(verilog, top, Target::Ice40, netlist)
}

fn pnr_flow(
    verilog: &str,
    top: &str,
    t: Target,
    netlist: bool,
) -> Result<(Ice40Report, Option<PnrNetlist>), ToolError> {
    let out = synthesize(verilog, top, t, netlist)?;
    let totals = out.totals();
    let count = |f: &dyn Fn(&str) -> bool| count_where(&totals.cells_by_type, f);
    let report = Ice40Report {
        lut4: count(&|c| t.is_lut(c)),
        carry: count(&|c| c == "SB_CARRY" || c == "CCU2C"),
        flip_flops: count(&|c| t.is_ff(c)),
        brams: count(&|c| t.is_bram(c)),
        memory_bits: out.rtl.totals().memory_bits,
        cells: totals.cells,
        logic_depth: out.depth,
        cells_by_type: totals.cells_by_type.clone(),
        modules: out.modules(t),
        seconds: out.seconds,
    };
    let netlist = out.staged.filter(|_| netlist).map(|dir| PnrNetlist {
        dir,
        top: top.to_string(),
    });
    Ok((report, netlist))
}

/// Runs `synth_xilinx -family xc7 -noiopad -noclkbuf -top <top>` on `verilog` and reports
/// LUT, LUT-RAM, block-RAM and flip-flop counts.
pub fn xilinx(verilog: &str, top: &str) -> Result<XilinxReport, ToolError> {
    let out = synthesize(verilog, top, Target::Xilinx, false)?;
    let totals = out.totals();
    let t = Target::Xilinx;
    let by_type = &totals.cells_by_type;
    let count = |f: &dyn Fn(&str) -> bool| count_where(by_type, f);
    let mut luts_by_inputs = [0; 6];
    for (i, n) in luts_by_inputs.iter_mut().enumerate() {
        *n = by_type.get(&format!("LUT{}", i + 1)).copied().unwrap_or(0);
    }
    Ok(XilinxReport {
        luts: count(&|c| t.is_lut(c)),
        luts_by_inputs,
        lut_ram: count(&|c| t.is_lut_ram(c)),
        lut_ram_luts: by_type
            .iter()
            .filter(|(c, _)| t.is_lut_ram(c))
            .map(|(c, n)| n * lut_ram_sites(c))
            .sum(),
        srl: count(&|c| c.starts_with("SRL")),
        flip_flops: count(&|c| t.is_ff(c)),
        brams: count(&|c| t.is_bram(c)),
        carry: count(&|c| c.starts_with("CARRY")),
        dsp: count(&|c| c.starts_with("DSP")),
        memory_bits: out.rtl.totals().memory_bits,
        cells: totals.cells,
        logic_depth: out.depth,
        cells_by_type: totals.cells_by_type.clone(),
        modules: out.modules(t),
        seconds: out.seconds,
    })
}

/// The iCE40 or ECP5 netlist of [`ice40_netlist`] / [`ecp5_netlist`] in a temporary directory
/// (removed when dropped), as nextpnr reads it: flattened, and with every port of the top except `clock` turned into an
/// internal wire ("out of context"), since a block's ports outnumber the pins of any iCE40
/// package (an SG48 UP5K has 39, a CT256 HX8K 206).
#[derive(Debug)]
pub struct PnrNetlist {
    dir: smrtl_hdl::cleanup::Scratch,
    /// The top module.
    pub top: String,
}

impl PnrNetlist {
    /// The directory holding the netlist (nextpnr's outputs go there too).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The JSON netlist.
    pub fn json(&self) -> PathBuf {
        self.dir.path().join(PNR_JSON)
    }
}

const PNR_JSON: &str = "pnr.json";

/// The cell library a flow maps to; classifies its cell types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Generic,
    Ice40,
    Ecp5,
    Xilinx,
}

impl Target {
    fn synth_command(self, top: &str) -> String {
        match self {
            Target::Generic => format!("synth -top {top}"),
            Target::Ice40 => format!("synth_ice40 -noflatten -top {top}"),
            Target::Ecp5 => format!("synth_ecp5 -noflatten -top {top}"),
            Target::Xilinx => format!("synth_xilinx -family xc7 -noiopad -noclkbuf -top {top}"),
        }
    }

    fn is_ff(self, cell: &str) -> bool {
        match self {
            Target::Generic => is_generic_ff(cell),
            Target::Ice40 => cell.starts_with("SB_DFF"),
            Target::Ecp5 => cell == "TRELLIS_FF",
            Target::Xilinx => cell.starts_with("FD"),
        }
    }

    fn is_lut(self, cell: &str) -> bool {
        match self {
            Target::Generic => false,
            Target::Ice40 => cell == "SB_LUT4",
            Target::Ecp5 => cell == "LUT4",
            Target::Xilinx => matches!(cell, "LUT1" | "LUT2" | "LUT3" | "LUT4" | "LUT5" | "LUT6"),
        }
    }

    fn is_bram(self, cell: &str) -> bool {
        match self {
            Target::Generic => false,
            Target::Ice40 => cell.starts_with("SB_RAM40_4K"),
            Target::Ecp5 => cell == "DP16KD",
            Target::Xilinx => cell.starts_with("RAMB"),
        }
    }

    fn is_lut_ram(self, cell: &str) -> bool {
        self == Target::Xilinx && cell.starts_with("RAM") && !cell.starts_with("RAMB")
    }
}

/// LUTs (SLICEM LUT sites) a Xilinx LUT-RAM primitive occupies: the `RAM<depth>X<width><S|D>`
/// primitives take ceil(depth / 64) × width LUTs per port (S: one, D: two), `RAM32M` / `RAM64M`
/// / `RAM32M16` / `RAM64M8` a whole quad (4) or two quads (8).
fn lut_ram_sites(cell: &str) -> u64 {
    match cell {
        "RAM32M" | "RAM64M" => 4,
        "RAM32M16" | "RAM64M8" => 8,
        _ => (|| {
            let rest = cell.strip_prefix("RAM")?;
            let (depth, rest) = rest.split_once('X')?;
            let width: String = rest.chars().take_while(char::is_ascii_digit).collect();
            let ports = match rest[width.len()..].chars().next()? {
                'S' => 1,
                'D' => 2,
                _ => return None,
            };
            let (depth, width): (u64, u64) = (depth.parse().ok()?, width.parse().ok()?);
            Some(depth.div_ceil(64) * width * ports)
        })()
        .unwrap_or(1),
    }
}

fn count_where(by_type: &BTreeMap<String, u64>, f: &dyn Fn(&str) -> bool) -> u64 {
    by_type.iter().filter(|(t, _)| f(t)).map(|(_, n)| n).sum()
}

/// Whether a generic cell type is a flip-flop (fine-grained `$_DFF_P_`, `$_SDFFE_PP0P_`, … or
/// coarse `$dff`, `$adff`, `$sdff`, …).
fn is_generic_ff(cell: &str) -> bool {
    cell.to_ascii_lowercase().contains("dff")
}

/// The width in a `stat -width` type name (`$dff_4` → 4).
fn width_suffix(cell: &str) -> Option<u64> {
    cell.rsplit_once('_')?.1.parse().ok()
}

/// Whether a generic cell type is a latch or set/reset latch.
fn is_latch(cell: &str) -> bool {
    let lower = cell.to_ascii_lowercase();
    lower.contains("dlatch") || lower == "$sr" || lower.starts_with("$_sr_")
}

/// One module of a `stat -json` output: own cells (child instances excluded) and children.
#[derive(Clone, Debug, Default, PartialEq)]
struct StatModule {
    cells: u64,
    cells_by_type: BTreeMap<String, u64>,
    submodules: BTreeMap<String, u64>,
    memories: u64,
    memory_bits: u64,
}

/// Whole-design totals: every module's own figures times its instances.
#[derive(Debug, Default, PartialEq)]
struct Totals {
    cells: u64,
    cells_by_type: BTreeMap<String, u64>,
    memory_bits: u64,
}

impl Totals {
    /// Flip-flop bits of `stat -width` coarse cells (`$dff_4` is 4).
    fn register_bits(&self) -> u64 {
        self.cells_by_type
            .iter()
            .filter(|(t, _)| is_generic_ff(t))
            .map(|(t, n)| n * width_suffix(t).unwrap_or(1))
            .sum()
    }

    /// Latch cells by type.
    fn latches(&self) -> BTreeMap<String, u64> {
        self.cells_by_type
            .iter()
            .filter(|(t, _)| is_latch(t))
            .map(|(t, n)| (t.clone(), *n))
            .collect()
    }
}

/// A `stat -json` output as a hierarchy.
#[derive(Debug, Default, PartialEq)]
struct Hierarchy {
    modules: BTreeMap<String, StatModule>,
    /// Module names, top first, then depth-first (children by name), each once.
    order: Vec<String>,
    instances: BTreeMap<String, u64>,
}

impl Hierarchy {
    /// Builds the hierarchy of `modules` under `top`. Modules no path from `top` reaches count
    /// once each (as roots) if `top` is not among them, and are left out otherwise.
    fn new(modules: BTreeMap<String, StatModule>, top: &str) -> Hierarchy {
        let roots: Vec<String> = if modules.contains_key(top) {
            vec![top.to_string()]
        } else {
            let children: BTreeSet<&String> =
                modules.values().flat_map(|m| m.submodules.keys()).collect();
            modules
                .keys()
                .filter(|m| !children.contains(m))
                .cloned()
                .collect()
        };
        // Listing order: depth-first preorder from the roots, each module once.
        let mut order = vec![];
        let mut seen = BTreeSet::new();
        fn preorder(
            m: &str,
            modules: &BTreeMap<String, StatModule>,
            seen: &mut BTreeSet<String>,
            order: &mut Vec<String>,
        ) {
            if !seen.insert(m.to_string()) {
                return;
            }
            order.push(m.to_string());
            if let Some(sm) = modules.get(m) {
                for child in sm.submodules.keys() {
                    preorder(child, modules, seen, order);
                }
            }
        }
        for r in &roots {
            preorder(r, &modules, &mut seen, &mut order);
        }
        order.retain(|m| modules.contains_key(m));
        // Instance counts: every parent's count must be final before it is passed on to its
        // children, so visit in reverse postorder (a topological order of the DAG).
        let mut post = vec![];
        let mut done = BTreeSet::new();
        fn postorder(
            m: &str,
            modules: &BTreeMap<String, StatModule>,
            done: &mut BTreeSet<String>,
            post: &mut Vec<String>,
        ) {
            if !done.insert(m.to_string()) {
                return;
            }
            if let Some(sm) = modules.get(m) {
                for child in sm.submodules.keys() {
                    postorder(child, modules, done, post);
                }
            }
            post.push(m.to_string());
        }
        for r in &roots {
            postorder(r, &modules, &mut done, &mut post);
        }
        let mut instances: BTreeMap<String, u64> = roots.iter().map(|r| (r.clone(), 1)).collect();
        for m in post.iter().rev() {
            let n = instances.get(m).copied().unwrap_or(0);
            if let Some(sm) = modules.get(m) {
                for (child, k) in &sm.submodules {
                    *instances.entry(child.clone()).or_default() += n * k;
                }
            }
        }
        Hierarchy {
            modules,
            order,
            instances,
        }
    }

    fn instances(&self, m: &str) -> u64 {
        self.instances.get(m).copied().unwrap_or(0)
    }

    fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for m in &self.order {
            let (sm, n) = (&self.modules[m], self.instances(m));
            t.cells += n * sm.cells;
            t.memory_bits += n * sm.memory_bits;
            for (c, k) in &sm.cells_by_type {
                *t.cells_by_type.entry(c.clone()).or_default() += n * k;
            }
        }
        t
    }
}

/// Repairs the two ways Yosys 0.23's `stat -json` is not JSON: text lines of the hierarchy tree
/// (module name and count, not quoted) printed inside the JSON when a child module has children,
/// and the comma left before the closing brace when there is no `design` section.
fn repair_stat_json(text: &str) -> String {
    let kept: String = text
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            t.is_empty() || t.starts_with(['"', '{', '}', '[', ']'])
        })
        .map(|l| format!("{l}\n"))
        .collect();
    // Drop commas followed (after white space) by a closing brace or bracket, outside strings.
    let chars: Vec<char> = kept.chars().collect();
    let mut out = String::with_capacity(kept.len());
    let (mut in_string, mut escaped) = (false, false);
    for (i, &c) in chars.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else if c == ','
            && chars[i + 1..]
                .iter()
                .find(|c| !c.is_whitespace())
                .is_some_and(|c| matches!(c, '}' | ']'))
        {
            continue;
        }
        out.push(c);
    }
    out
}

/// Module names in `stat -json`: `\name` for plain names, `$paramod\name\P=…` for
/// parametrized ones; cell types name them without the leading `\`.
fn module_name(raw: &str) -> String {
    raw.strip_prefix('\\').unwrap_or(raw).to_string()
}

/// Parses `stat -json` (per-module section) into a hierarchy under `top`.
fn parse_stat_json(text: &str, top: &str) -> Result<Hierarchy, ToolError> {
    #[derive(Deserialize)]
    struct Counts {
        #[serde(default)]
        num_cells: u64,
        #[serde(default)]
        num_cells_by_type: BTreeMap<String, u64>,
        #[serde(default)]
        num_memories: u64,
        #[serde(default)]
        num_memory_bits: u64,
    }
    #[derive(Deserialize)]
    struct StatJson {
        #[serde(default)]
        modules: BTreeMap<String, Counts>,
    }
    let json: StatJson =
        serde_json::from_str(&repair_stat_json(text)).map_err(|e| ToolError::Failed {
            tool: TOOL.into(),
            message: format!("unreadable `stat -json` output: {e}"),
        })?;
    let names: BTreeSet<String> = json.modules.keys().map(|k| module_name(k)).collect();
    let modules = json
        .modules
        .into_iter()
        .map(|(raw, c)| {
            let mut m = StatModule {
                memories: c.num_memories,
                memory_bits: c.num_memory_bits,
                ..StatModule::default()
            };
            let mut instances = 0;
            for (t, n) in c.num_cells_by_type {
                if names.contains(&t) {
                    instances += n;
                    m.submodules.insert(t, n);
                } else {
                    m.cells_by_type.insert(t, n);
                }
            }
            m.cells = c.num_cells.saturating_sub(instances);
            (module_name(&raw), m)
        })
        .collect();
    Ok(Hierarchy::new(modules, top))
}

/// What one Yosys run yields.
struct Synthesized {
    /// Cells after the flow.
    stat: Hierarchy,
    /// Coarse cells after `proc`: register bits and memories as written.
    rtl: Hierarchy,
    depth: Option<u64>,
    seconds: f64,
    /// The run's directory, kept when a netlist was written.
    staged: Option<smrtl_hdl::cleanup::Scratch>,
}

impl Synthesized {
    fn totals(&self) -> Totals {
        self.stat.totals()
    }

    /// The per-module figures of `target`, with the RTL's memories.
    fn modules(&self, target: Target) -> Vec<ModuleCost> {
        self.stat
            .order
            .iter()
            .map(|name| {
                let m = &self.stat.modules[name];
                let rtl = self.rtl.modules.get(name);
                let count = |f: &dyn Fn(&str) -> bool| count_where(&m.cells_by_type, f);
                ModuleCost {
                    name: name.clone(),
                    instances: self.stat.instances(name),
                    submodules: m.submodules.clone(),
                    cells: m.cells,
                    flip_flops: count(&|c| target.is_ff(c)),
                    luts: count(&|c| target.is_lut(c)),
                    brams: count(&|c| target.is_bram(c)),
                    lut_ram: count(&|c| target.is_lut_ram(c)),
                    memories: rtl.map_or(0, |r| r.memories),
                    memory_bits: rtl.map_or(0, |r| r.memory_bits),
                    cells_by_type: m.cells_by_type.clone(),
                }
            })
            .collect()
    }
}

/// Runs the flow of `target` (see the module documentation for the script); with `netlist`,
/// also writes the out-of-context nextpnr netlist [`PNR_JSON`] and keeps the directory.
fn synthesize(
    verilog: &str,
    top: &str,
    target: Target,
    netlist: bool,
) -> Result<Synthesized, ToolError> {
    let staged = stage(TOOL, verilog, top)?;
    let dir = staged.path();
    let mut script = format!(
        "{}{}\n\
         tee -q -o stat.json stat -json\n\
         flatten\n\
         tee -q -o ltp.txt ltp -noff\n",
        elaboration(top),
        target.synth_command(top)
    );
    if netlist {
        script += &format!(
            "delete -port {top}/i:* {top}/o:* %u {top}/w:clock %d\nwrite_json {PNR_JSON}\n"
        );
    }
    smrtl_hdl::progress::status(&format!("synth {top}: yosys {}", target.synth_command(top)));
    let seconds = run_flow(dir, &script)?;
    let stat = parse_stat_json(&read(dir, "stat.json")?, top)?;
    let rtl = parse_stat_json(&read(dir, "rtl.json")?, top)?;
    let depth = parse_ltp(&read(dir, "ltp.txt")?);
    Ok(Synthesized {
        stat,
        rtl,
        depth,
        seconds,
        staged: netlist.then_some(staged),
    })
}

/// A file the flow wrote; a missing one means Yosys did not write it.
fn read(dir: &Path, name: &str) -> Result<String, ToolError> {
    let path = dir.join(name);
    std::fs::read_to_string(&path).map_err(|e| ToolError::Failed {
        tool: TOOL.into(),
        message: format!("cannot read its output {}: {e}", path.display()),
    })
}

/// The largest `(length=N)` in `ltp` output (one line per module).
fn parse_ltp(text: &str) -> Option<u64> {
    text.lines()
        .filter_map(|line| {
            let rest = &line[line.find("(length=")? + "(length=".len()..];
            rest[..rest.find(')')?].trim().parse().ok()
        })
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_json_hierarchy() {
        // `stat -json` of Yosys 0.23 on a top with two `adder8` and one `ram` instance.
        let text = r#"{
           "creator": "Yosys 0.23",
           "modules": {
              "\\adder8": { "num_cells": 23, "num_cells_by_type": { "SB_CARRY": 7, "SB_DFF": 8, "SB_LUT4": 8 } },
              "\\ram": { "num_memories": 1, "num_memory_bits": 4096, "num_cells": 2, "num_cells_by_type": { "SB_LUT4": 1, "SB_RAM40_4K": 1 } },
              "\\top": { "num_cells": 4, "num_cells_by_type": { "adder8": 2, "ram": 1, "SB_LUT4": 1 } }
           },
              "design": { "num_cells": 49, "num_cells_by_type": { "SB_LUT4": 18 } }
        }"#;
        let h = parse_stat_json(text, "top").unwrap();
        assert_eq!(h.order, ["top", "adder8", "ram"]);
        assert_eq!(h.instances("adder8"), 2);
        assert_eq!(h.modules["top"].cells, 1);
        assert_eq!(h.modules["top"].submodules["adder8"], 2);
        let t = h.totals();
        assert_eq!(t.cells, 49);
        assert_eq!(t.cells_by_type["SB_LUT4"], 18);
        assert_eq!(t.cells_by_type["SB_CARRY"], 14);
        assert_eq!(t.memory_bits, 4096);
        assert!(!t.cells_by_type.contains_key("adder8"));
    }

    #[test]
    fn repairs_yosys_0_23_stat_json() {
        // No top: a comma before the closing brace.
        let no_top = "{ \"modules\": {\n \"\\\\a\": { \"num_cells\": 2, \"num_cells_by_type\": { \"SB_LUT4\": 2 } },\n \"\\\\b\": { \"num_cells\": 1, \"num_cells_by_type\": { \"SB_LUT4\": 1 } } },\n\n}\n";
        let h = parse_stat_json(no_top, "none").unwrap();
        assert_eq!(h.totals().cells, 3);
        assert_eq!(h.totals().cells_by_type["SB_LUT4"], 3);
        // Nested hierarchy: a line of the hierarchy tree inside the JSON; parametrized names.
        let nested = r#"{
   "modules": {
      "$paramod\\cnt\\W=s32'00000000000000000000000000000010": { "num_cells": 3, "num_cells_by_type": { "$_DFF_P_": 2, "$_XOR_": 1 } },
      "\\mid": { "num_cells": 2, "num_cells_by_type": { "$paramod\\cnt\\W=s32'00000000000000000000000000000010": 2 } },
      "\\ptop": { "num_cells": 3, "num_cells_by_type": { "mid": 3 } }
   },
       $paramod\cnt\W=s32'00000000000000000000000000000010      6
      "design": { "num_cells": 18 }
}"#;
        let h = parse_stat_json(nested, "ptop").unwrap();
        let cnt = "$paramod\\cnt\\W=s32'00000000000000000000000000000010";
        assert_eq!(h.order, ["ptop", "mid", cnt]);
        assert_eq!(h.instances(cnt), 6);
        assert_eq!(h.totals().cells, 18);
        assert_eq!(h.totals().cells_by_type["$_DFF_P_"], 12);
        // Commas inside strings are left alone.
        assert_eq!(repair_stat_json("{\"a,}\": 1}"), "{\"a,}\": 1}\n");
    }

    #[test]
    fn counts_instances_over_every_path() {
        // top has 2 a and 1 b; a has 3 c; b has 1 c: c has 2*3 + 1 = 7 instances.
        let m = |subs: &[(&str, u64)]| StatModule {
            submodules: subs.iter().map(|(s, n)| (s.to_string(), *n)).collect(),
            ..StatModule::default()
        };
        let modules = BTreeMap::from([
            ("top".to_string(), m(&[("a", 2), ("b", 1)])),
            ("a".to_string(), m(&[("c", 3)])),
            ("b".to_string(), m(&[("c", 1)])),
            ("c".to_string(), m(&[])),
        ]);
        let h = Hierarchy::new(modules, "top");
        assert_eq!(h.order, ["top", "a", "c", "b"]);
        assert_eq!(["top", "a", "b", "c"].map(|m| h.instances(m)), [1, 2, 1, 7]);
    }

    #[test]
    fn parses_ltp_length() {
        let text = "\n3. Executing LTP pass (find longest path).\n\nLongest topological path in top (length=46):\n    0: \\addr [110]\n";
        assert_eq!(parse_ltp(text), Some(46));
        assert_eq!(parse_ltp("nothing"), None);
    }

    #[test]
    fn classifies_cells() {
        for ff in [
            "$_DFF_P_",
            "$_SDFF_PP0_",
            "$_DFFE_PN0P_",
            "$dff",
            "$adff",
            "$sdffe",
        ] {
            assert!(is_generic_ff(ff), "{ff}");
            assert!(!is_latch(ff), "{ff}");
        }
        for latch in [
            "$_DLATCH_P_",
            "$dlatch",
            "$adlatch",
            "$_DLATCHSR_PPP_",
            "$sr",
            "$_SR_PP_",
        ] {
            assert!(is_latch(latch), "{latch}");
            assert!(!is_generic_ff(latch), "{latch}");
        }
        assert!(!is_latch("$_XOR_") && !is_generic_ff("$_XOR_"));
        assert_eq!(width_suffix("$sdff_13"), Some(13));
        assert_eq!(width_suffix("$_DFF_P_"), None);
        let (i, x) = (Target::Ice40, Target::Xilinx);
        assert!(i.is_ff("SB_DFFESR") && i.is_lut("SB_LUT4") && i.is_bram("SB_RAM40_4K"));
        assert!(!i.is_lut_ram("SB_RAM40_4K"));
        assert!(x.is_ff("FDRE") && x.is_lut("LUT6") && !x.is_lut("LUT7"));
        assert!(x.is_bram("RAMB18E1") && !x.is_lut_ram("RAMB36E1"));
        for r in ["RAM32M", "RAM64M", "RAM128X1D", "RAM256X1S", "RAM64X1D"] {
            assert!(x.is_lut_ram(r) && !x.is_bram(r), "{r}");
        }
        assert_eq!(
            [
                "RAM32M",
                "RAM64M",
                "RAM128X1D",
                "RAM256X1S",
                "RAM64X1D",
                "RAM32X1S"
            ]
            .map(lut_ram_sites),
            [4, 4, 4, 4, 2, 1]
        );
    }
}
