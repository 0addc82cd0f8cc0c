//! `smrtl sim`: run the behavioral SM pipeline on a trace, alone or with the pipeline RTL in the
//! loop (lock-step, every per-cycle record compared, spec elastic-pipeline.md §3.5).

use crate::cosim::rtl_factory;
use crate::output::write_atomic;
use crate::{Result, RtlBackend, UsageError};
use smrtl_cosim::elastic_pipeline::{Model, Summary};
use smrtl_cosim::harness::Trace as WaveRows;
use smrtl_cosim::vcd_out;
use smrtl_hdl::elastic_pipeline::Params;
use smrtl_hdl::BlockParams;
use smrtl_testbench::elastic_pipeline::{
    cosim_traced, layout, run_traced, DriveError, ElasticPipeline, Trace, TraceError, TraceFile,
};
use smrtl_testbench::Design;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Where `sim` runs the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// The behavioral model alone.
    Model,
    /// The pipeline RTL in rust-hdl's simulator, beside the model.
    Rusthdl,
    /// The pipeline's Verilog, verilated, beside the model.
    Verilator,
}

/// Cycles kept in a VCD.
const VCD_WINDOW: usize = 100_000;

pub struct Options {
    pub trace: Option<PathBuf>,
    pub workload: Option<PathBuf>,
    pub profile: Option<String>,
    pub seed: u64,
    pub waves: u32,
    pub backend: Backend,
    pub json: bool,
    pub records: Option<PathBuf>,
    pub vcd: Option<PathBuf>,
    pub sets: Vec<String>,
}

/// Reads a trace file, applies `--set` overrides to its params, and checks it.
fn load(path: &Path, sets: &[(String, String)]) -> Result<Trace> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| UsageError(format!("cannot read {}: {e}", path.display())))?;
    let at = |e: &dyn std::fmt::Display| UsageError(format!("{}: {e}", path.display()));
    let mut file: TraceFile =
        serde_json::from_str(&text).map_err(|e| at(&TraceError::Syntax(e.to_string())))?;
    for (key, value) in sets {
        // Numbers stay numbers; the params resolver reads everything else as text.
        let v = value.parse::<u64>().map_or_else(
            |_| serde_json::Value::from(value.as_str()),
            serde_json::Value::from,
        );
        file.params.insert(key.clone(), v);
    }
    Trace::from_file(&file).map_err(|e| at(&e))
}

fn write_vcd(path: &Path, layout: &smrtl_cosim::Layout, rows: &WaveRows) -> Result<()> {
    let mut buf = vec![];
    vcd_out::write(&mut buf, "elastic_pipeline", layout, rows)?;
    write_atomic(path, &buf)
}

/// Scheduler mode (spec §5): a workload file or a synthetic profile on the behavioral SM model,
/// alone or with the `sm_core` RTL in the loop (every cycle's outputs compared).
fn run_workload(o: &Options) -> Result<ExitCode> {
    let (source, mut value) = match (&o.workload, &o.profile) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| UsageError(format!("cannot read {}: {e}", path.display())))?;
            let v: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| UsageError(format!("{}: malformed workload: {e}", path.display())))?;
            (path.display().to_string(), v)
        }
        (None, Some(name)) => {
            let p = smrtl_testbench::profiles::profile(name).map_err(UsageError)?;
            let p_sm = smrtl_testbench::profiles::SUBWARPS;
            let v = p.workload(
                o.seed,
                o.waves.max(1),
                smrtl_testbench::profiles::LANES,
                p_sm,
            );
            (format!("profile {name}"), v)
        }
        (None, None) => unreachable!("clap requires a source"),
    };
    for (key, val) in crate::parse_sets(&o.sets)? {
        let v = serde_json::from_str::<serde_json::Value>(&val)
            .unwrap_or_else(|_| serde_json::Value::from(val.as_str()));
        value["params"][key] = v;
    }
    let workload = smrtl_testbench::sm_core::workload_from_value(&value)
        .map_err(|e| UsageError(format!("{source}: {e}")))?;
    let p = &workload.params;
    let kernels = [workload.warps.clone()];
    let mut rows = o.vcd.as_ref().map(|_| WaveRows::new(VCD_WINDOW));
    let layout = smrtl_testbench::sm_core::layout(p);
    let (name, result) = match o.backend {
        Backend::Model => {
            let run = smrtl_cosim::sm_core::run(&workload)
                .map_err(|e| UsageError(format!("{source}: {e}")))?;
            if let Some(rows) = rows.as_mut() {
                smrtl_testbench::sm_core::model_rows(p, &kernels, std::slice::from_ref(&run), rows);
            }
            ("model", Ok(vec![run]))
        }
        backend => {
            let (name, mut dut) = match backend {
                Backend::Verilator => ("verilator", smrtl_testbench::sm_core::verilator(p)?),
                _ => ("rusthdl", smrtl_testbench::sm_core::rusthdl(p)),
            };
            let r = smrtl_testbench::sm_core::cosim(p, &kernels, dut.as_mut(), rows.as_mut());
            (name, r)
        }
    };
    if let (Some(path), Some(rows)) = (&o.vcd, &rows) {
        let mut buf = vec![];
        vcd_out::write(&mut buf, smrtl_hdl::sm_core::Params::BLOCK, &layout, rows)?;
        write_atomic(path, &buf)?;
    }
    let run = match result {
        Ok(mut runs) => runs.remove(0),
        Err(d) => {
            println!("FAIL sm_core on {name}: {d}");
            println!("model record: {}", serde_json::to_string(&d.model)?);
            if let Some(v) = &o.vcd {
                println!("vcd: {}", v.display());
            }
            return Ok(ExitCode::from(1));
        }
    };
    if let Some(path) = &o.records {
        crate::output::write_json_lines(path, &run.records)?;
    }
    let s = &run.stats;
    if o.json {
        let mut v = serde_json::to_value(s)?;
        v["backend"] = name.into();
        v["source"] = source.into();
        v["params"] = serde_json::to_value(p)?;
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        let agree = if name == "model" {
            String::new()
        } else {
            format!(", sm_core RTL ({name}) agrees on every cycle")
        };
        println!(
            "{source}: {} cycles, {} warp instructions, IPC per lane {:.3}, outcomes {}, {} WB bubbles, history cache {} hits / {} misses{agree}",
            s.cycles,
            s.issued_warp_instructions,
            s.ipc,
            serde_json::to_string(&s.outcomes)?,
            s.wb_bubbles,
            s.hc_hits,
            s.hc_misses
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run(o: Options) -> Result<ExitCode> {
    let Some(trace_path) = o.trace.clone() else {
        return run_workload(&o);
    };
    let trace = load(&trace_path, &crate::parse_sets(&o.sets)?)?;
    let p: &Params = &trace.params;
    let layout = layout(p);
    let limit = trace.cycle_budget();
    let mut rows = o.vcd.as_ref().map(|_| WaveRows::new(VCD_WINDOW));
    let mut model = Model::new(p, &layout);
    let (name, result) = match o.backend {
        Backend::Model => (
            "model",
            run_traced(&mut model, &layout, &trace, limit, rows.as_mut()),
        ),
        rtl => {
            let (name, backend) = match rtl {
                Backend::Rusthdl => ("rusthdl", RtlBackend::Rusthdl),
                _ => ("verilator", RtlBackend::Verilator),
            };
            let design = Design::new::<ElasticPipeline>(p);
            let mut dut = rtl_factory(&design, backend)?();
            let r = cosim_traced(
                &mut model,
                dut.as_mut(),
                &layout,
                &trace,
                limit,
                rows.as_mut(),
            );
            (name, r)
        }
    };
    if let (Some(path), Some(rows)) = (&o.vcd, &rows) {
        write_vcd(path, &layout, rows)?;
    }
    let records = match result {
        Ok(records) => records,
        Err(DriveError::Diverged(d)) => {
            println!("FAIL elastic_pipeline on {name}: {d}");
            println!("model record: {}", serde_json::to_string(&d.model)?);
            println!("rtl record:   {}", serde_json::to_string(&d.rtl)?);
            if let Some(v) = &o.vcd {
                println!("vcd: {}", v.display());
            }
            return Ok(ExitCode::from(1));
        }
        Err(e @ DriveError::CycleLimit { .. }) => {
            println!("FAIL elastic_pipeline on {name}: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    if let Some(path) = &o.records {
        crate::output::write_json_lines(path, &records)?;
    }
    let s = Summary::of(&records);
    if o.json {
        let mut v = serde_json::to_value(&s)?;
        v["backend"] = name.into();
        v["entries"] = trace.stream.len().into();
        v["params"] = serde_json::to_value(p)?;
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        let agree = if name == "model" {
            String::new()
        } else {
            format!(", RTL ({name}) agrees on every record")
        };
        println!(
            "{:?} pipeline, {} entries: {} cycles, {} stalls ({} bank_conflict, {} other), {} WB bubbles, last WB in cycle {}{agree}",
            p.pipe_mode,
            trace.stream.len(),
            s.cycles,
            s.stalls,
            s.stall_causes.bank_conflict,
            s.stall_causes.other,
            s.wb_bubbles,
            s.last_wb_cycle.map_or("-".into(), |c| c.to_string()),
        );
    }
    Ok(ExitCode::SUCCESS)
}
