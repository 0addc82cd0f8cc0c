//! smrtl stimulus: the papers' scenarios, random generators and proptest strategies, and the
//! random co-simulation driver that shrinks a failure to a minimal case.

pub mod arg_values;
pub mod blocks;
pub mod check;
pub mod commands;
pub mod conformance;
pub mod coverage;
pub mod design;
pub mod gpgpusim;
pub mod listing;
pub mod output;
pub mod registry;
pub mod soak;
pub mod stimulus_file;
pub mod stimulus_stream;
pub mod studies;
pub mod systems;

pub use design::{Bench, BlockEntry, Case, Design};
pub use registry::{block, blocks};

/// Seconds of CPU time the calling thread has used: rates and costs per CPU second, so other
/// jobs on a busy machine skew neither them nor their ratios (`smrtl bench`, T-f of
/// `smrtl repro stall-inspector`).
pub fn cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec to write; the clock id is a constant the OS knows.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0;
    assert!(ok, "the thread CPU-time clock is unavailable");
    t.tv_sec as f64 + 1e-9 * t.tv_nsec as f64
}

/// Whether tests may use external `tool` (see [`smrtl_hdl::tools::external`]).
pub fn external(tool: &str) -> bool {
    smrtl_hdl::tools::external(&[tool])
}

/// `module` verilated (built once per design and process, and cached on disk across
/// processes), as a fresh instance in its reset state: the SM-level tops' RTL-in-the-loop
/// backend.
pub fn verilated(
    module: &std::sync::Arc<smrtl_hdl::Module>,
) -> Result<Box<dyn smrtl_cosim::Rtl>, smrtl_hdl::tools::ToolError> {
    use smrtl_cosim::harness::backend::verilator::VerilatorLib;
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    static LIBS: Mutex<Option<HashMap<String, Arc<VerilatorLib>>>> = Mutex::new(None);
    let verilog = smrtl_hdl::rusthdl::emit_verilog(module);
    let lib = {
        let mut libs = LIBS.lock().unwrap_or_else(|e| e.into_inner());
        let libs = libs.get_or_insert_with(HashMap::new);
        match libs.get(&verilog) {
            Some(lib) => lib.clone(),
            None => {
                let lib = VerilatorLib::load(module, &verilog)?;
                libs.insert(verilog, lib.clone());
                lib
            }
        }
    };
    Ok(Box::new(lib.instance()?))
}
