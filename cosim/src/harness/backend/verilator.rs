//! The `verilator` backend: the block's Verilog compiled by Verilator into a shared library that
//! is loaded in process. Per cycle the generated C++ shim copies the flat input buffer into the
//! model, evaluates, copies the outputs back and takes the clock edge; one FFI call covers one
//! cycle ([`Simulator::step`]) or a whole batch of them ([`Simulator::step_many`]).
//!
//! Builds are cached per distinct Verilog text (see [`cache_root`]); a cached build loads in
//! milliseconds. Registers start at their reset values, as in the `rusthdl` backend: the shim
//! pulses `reset` over one clock edge when the model is created.

use crate::harness::layout::{Layout, Slot, CLOCK};
use crate::harness::sim::{batch_strides, Rtl, Simulator};
use smrtl_hdl::cleanup::Scratch;
use smrtl_hdl::netlist::{mask, Module};
use smrtl_hdl::tools::{require, run, ToolError};
use std::ffi::c_void;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

/// The synchronous reset input a clocked block has.
const RESET: &str = "reset";
/// Verilator's class prefix for the model (`Vtop.h`, class `Vtop`).
const PREFIX: &str = "Vtop";
/// Shared library built for the [`Verilator`] backend.
const LIB_NAME: &str = "libsmrtl_model.so";
/// Executable built for [`PlainLoop`].
const LOOP_NAME: &str = "smrtl_plain_loop";
/// Minimum timed duration of the plain loop, in seconds.
const LOOP_SECONDS: f64 = 0.5;

type NewFn = unsafe extern "C" fn() -> *mut c_void;
type DeleteFn = unsafe extern "C" fn(*mut c_void);
type StepFn = unsafe extern "C" fn(*mut c_void, *const u64, *mut u64);
/// `(model, inputs, input stride, outputs, output stride, cycles)`.
type StepManyFn = unsafe extern "C" fn(*mut c_void, *const u64, usize, *mut u64, usize, usize);
type EdgeFn = unsafe extern "C" fn(*mut c_void);

/// A loaded build of one block's Verilated model: create any number of independent
/// [`Verilator`] instances from it cheaply (a load costs tens of milliseconds, an instance none).
pub struct VerilatorLib {
    new_fn: NewFn,
    step_fn: StepFn,
    step_many_fn: StepManyFn,
    eval_fn: StepFn,
    edge_fn: EdgeFn,
    delete_fn: DeleteFn,
    in_words: usize,
    out_words: usize,
    /// Keeps the code behind the function pointers mapped while any instance lives.
    _lib: libloading::Library,
}

// SAFETY: the library holds only immutable code pointers; each instance has its own
// `VerilatedContext`.
unsafe impl Send for VerilatorLib {}
unsafe impl Sync for VerilatorLib {}

impl VerilatorLib {
    /// Verilates `verilog` (whose top module is `module.name`), builds or reuses the cached
    /// library and loads it.
    pub fn load(module: &Module, verilog: &str) -> Result<Arc<VerilatorLib>, ToolError> {
        let layout = Layout::new(&module.ports());
        let shim = shim_source(&layout);
        let lib_path = build_cached(&module.name, verilog, &shim, Artifact::Library)?;
        let fail = |e: libloading::Error| failed(format!("loading {}: {e}", lib_path.display()));
        // SAFETY: the library is our own build of `shim`; loading it runs only the C++ static
        // initializers of Verilator's runtime, and the symbols have the signatures declared there.
        unsafe {
            let lib = libloading::Library::new(&lib_path).map_err(fail)?;
            let new_fn = *lib.get::<NewFn>(b"smrtl_new\0").map_err(fail)?;
            let step_fn = *lib.get::<StepFn>(b"smrtl_step\0").map_err(fail)?;
            let step_many_fn = *lib.get::<StepManyFn>(b"smrtl_step_many\0").map_err(fail)?;
            let eval_fn = *lib.get::<StepFn>(b"smrtl_eval\0").map_err(fail)?;
            let edge_fn = *lib.get::<EdgeFn>(b"smrtl_clock\0").map_err(fail)?;
            let delete_fn = *lib.get::<DeleteFn>(b"smrtl_delete\0").map_err(fail)?;
            Ok(Arc::new(VerilatorLib {
                new_fn,
                step_fn,
                step_many_fn,
                eval_fn,
                edge_fn,
                delete_fn,
                in_words: layout.in_words,
                out_words: layout.out_words,
                _lib: lib,
            }))
        }
    }

    /// A fresh model in its reset state.
    pub fn instance(self: &Arc<Self>) -> Result<Verilator, ToolError> {
        // SAFETY: `new_fn` comes from the loaded library, which `Arc` keeps alive.
        let handle = unsafe { (self.new_fn)() };
        if handle.is_null() {
            return Err(failed("the Verilated model could not be created".into()));
        }
        Ok(Verilator {
            handle,
            lib: self.clone(),
        })
    }
}

/// One Verilated model instance of a block.
pub struct Verilator {
    handle: *mut c_void,
    lib: Arc<VerilatorLib>,
}

// SAFETY: the model has its own `VerilatedContext` and is only touched through `&mut self`, so it
// is never used from two threads at once; Verilator models may move between threads.
unsafe impl Send for Verilator {}

impl Verilator {
    /// Loads (building if needed) the library and creates one instance; see [`VerilatorLib`]
    /// to create many.
    pub fn new(module: &Module, verilog: &str) -> Result<Verilator, ToolError> {
        VerilatorLib::load(module, verilog)?.instance()
    }
}

impl Simulator for Verilator {
    fn name(&self) -> &str {
        "verilator"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        assert!(inputs.len() >= self.lib.in_words, "input buffer too short");
        assert!(
            outputs.len() >= self.lib.out_words,
            "output buffer too short"
        );
        // SAFETY: `handle` is live until drop and the buffers hold at least the words the shim
        // reads and writes (checked above).
        unsafe { (self.lib.step_fn)(self.handle, inputs.as_ptr(), outputs.as_mut_ptr()) }
    }

    /// The whole batch in one FFI call (`smrtl_step_many`).
    fn step_many(&mut self, inputs: &[u64], outputs: &mut [u64], cycles: usize) {
        let Some((iw, ow)) = batch_strides(inputs.len(), outputs.len(), cycles) else {
            return;
        };
        assert!(iw >= self.lib.in_words, "input stride too short");
        assert!(ow >= self.lib.out_words, "output stride too short");
        // SAFETY: `handle` is live until drop; the shim reads `in_words` words at each multiple
        // of `iw` below `cycles * iw` and writes `out_words` at each multiple of `ow` below
        // `cycles * ow`, all inside the buffers (checked above and by `batch_strides`).
        unsafe {
            (self.lib.step_many_fn)(
                self.handle,
                inputs.as_ptr(),
                iw,
                outputs.as_mut_ptr(),
                ow,
                cycles,
            )
        }
    }
}

impl Rtl for Verilator {
    fn eval(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        assert!(inputs.len() >= self.lib.in_words, "input buffer too short");
        assert!(
            outputs.len() >= self.lib.out_words,
            "output buffer too short"
        );
        // SAFETY: as in `step`.
        unsafe { (self.lib.eval_fn)(self.handle, inputs.as_ptr(), outputs.as_mut_ptr()) }
    }

    fn edge(&mut self) {
        // SAFETY: `handle` is live until drop.
        unsafe { (self.lib.edge_fn)(self.handle) }
    }
}

impl Drop for Verilator {
    fn drop(&mut self) {
        // SAFETY: `handle` came from `smrtl_new` of the still-loaded library and is deleted once.
        unsafe { (self.lib.delete_fn)(self.handle) }
    }
}

/// Vectors per second of a plain C++ loop over the Verilated model (no FFI, no Rust): each
/// vector is applied exactly as [`Simulator::step`] does, outputs are folded into a checksum,
/// and the stimulus is repeated until at least half a second of the loop's CPU time has been
/// timed (on an idle machine, wall time; on a busy one, what the loop would do alone). The
/// reference point for the backend's own rate; [`PlainLoop`] times it repeatedly.
pub fn plain_loop_rate(
    module: &Module,
    verilog: &str,
    stimulus: &[Vec<u64>],
) -> Result<f64, ToolError> {
    PlainLoop::new(module, verilog, stimulus)?.rate(LOOP_SECONDS)
}

/// The plain C++ loop of [`plain_loop_rate`] on one stimulus, built and written once, to be
/// timed as often as asked (each time in a fresh process).
pub struct PlainLoop {
    exe: PathBuf,
    stimulus: PathBuf,
    /// Holds the stimulus file until the loop is dropped.
    _scratch: Scratch,
}

impl PlainLoop {
    /// Builds (or finds in the cache) the loop for `module` and writes `stimulus` for it.
    pub fn new(
        module: &Module,
        verilog: &str,
        stimulus: &[Vec<u64>],
    ) -> Result<PlainLoop, ToolError> {
        let layout = Layout::new(&module.ports());
        if stimulus.is_empty() {
            return Err(failed(
                "plain loop needs at least one stimulus vector".into(),
            ));
        }
        let source = plain_loop_source(&layout);
        let exe = build_cached(&module.name, verilog, &source, Artifact::Executable)?;
        let mut bytes = Vec::with_capacity(stimulus.len() * layout.in_words * 8);
        for v in stimulus {
            if v.len() < layout.in_words {
                return Err(failed(
                    "stimulus vector shorter than the input layout".into(),
                ));
            }
            for w in &v[..layout.in_words] {
                bytes.extend_from_slice(&w.to_le_bytes());
            }
        }
        let scratch = scratch("plain-loop")?;
        let path = scratch.path().join("stimulus.bin");
        fs::write(&path, bytes).map_err(|e| ToolError::path("write", &path, &e, TMP_REMEDY))?;
        Ok(PlainLoop {
            exe,
            stimulus: path,
            _scratch: scratch,
        })
    }

    /// Vectors per CPU second over at least `seconds` of timed passes (after one warm-up
    /// pass).
    pub fn rate(&self, seconds: f64) -> Result<f64, ToolError> {
        let out = run(
            "verilator",
            Command::new(&self.exe)
                .arg(&self.stimulus)
                .arg(seconds.to_string()),
        )?;
        let text = String::from_utf8_lossy(&out.stdout);
        text.split_whitespace()
            .next()
            .and_then(|t| t.parse::<f64>().ok())
            .ok_or_else(|| failed(format!("plain loop printed `{}`", text.trim())))
    }
}

/// What to do when the build cache cannot be written.
const CACHE_REMEDY: &str = "set SMRTL_CACHE_DIR to a writable directory";
/// What to do when the temp directory cannot be written.
const TMP_REMEDY: &str = "set TMPDIR to a writable directory";

/// Where builds are cached: `$SMRTL_CACHE_DIR`; else `smrtl-verilator/` in the Cargo target
/// directory (`$CARGO_TARGET_DIR` when absolute, or the nearest ancestor of the running
/// executable holding Cargo's `CACHEDIR.TAG`); else `smrtl-verilator-cache/` in the temp dir.
pub fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("SMRTL_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from) {
        if dir.is_absolute() {
            return dir.join("smrtl-verilator");
        }
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(target) = exe.ancestors().find(|d| d.join("CACHEDIR.TAG").is_file()) {
            return target.join("smrtl-verilator");
        }
    }
    std::env::temp_dir().join("smrtl-verilator-cache")
}

/// What a build produces.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Artifact {
    Library,
    Executable,
}

impl Artifact {
    fn file_name(self) -> &'static str {
        match self {
            Artifact::Library => LIB_NAME,
            Artifact::Executable => LOOP_NAME,
        }
    }
}

/// Serializes builds within the process, so two threads never build the same key at once.
static BUILD_LOCK: Mutex<()> = Mutex::new(());

/// Builds `source` against the Verilated `verilog` unless the cache already holds the result;
/// returns the artifact's path. The build happens in a scratch directory that is renamed into
/// place when complete, so no process ever sees a half-built cache entry.
fn build_cached(
    block: &str,
    verilog: &str,
    source: &str,
    artifact: Artifact,
) -> Result<PathBuf, ToolError> {
    let verilator = require("verilator")?;
    require("make")?;
    require("g++")?;
    let version = verilator_version(&verilator)?;
    let key = fnv1a(&[verilog, &version, source, &build_flags(artifact).join(" ")]);
    let root = cache_root();
    let dir = root.join(format!("{block}-{key:016x}"));
    let target = dir.join(artifact.file_name());

    let _guard = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if target.is_file() {
        if fs::read_to_string(dir.join("design.v")).is_ok_and(|v| v == verilog) {
            return Ok(target);
        }
        return Err(ToolError::Path {
            action: "use the Verilator cache entry".into(),
            path: dir.display().to_string(),
            reason: "it holds another design".into(),
            remedy: "delete that directory".into(),
        });
    }
    fs::create_dir_all(&root)
        .map_err(|e| ToolError::path("create directory", &root, &e, CACHE_REMEDY))?;
    let scratch = scratch_in(&root, block)?;
    let runtime = root.join(format!(
        "runtime-{:016x}",
        fnv1a(&[
            &version,
            &build_flags(artifact).join(" "),
            &MAKE_OPT.join(" ")
        ])
    ));
    build_in(
        scratch.path(),
        &verilator,
        block,
        verilog,
        source,
        artifact,
        &runtime,
    )?;
    match fs::rename(scratch.path(), &dir) {
        Ok(()) => scratch.keep(),
        // Another process finished the same build first; its entry is as good as ours.
        Err(_) if target.is_file() => {}
        Err(e) => {
            return Err(ToolError::path(
                "move the build into",
                &dir,
                &e,
                CACHE_REMEDY,
            ));
        }
    }
    Ok(target)
}

/// Verilator and make options beyond the sources (part of the cache key).
fn build_flags(artifact: Artifact) -> Vec<&'static str> {
    let mut flags = vec![
        "-O3",
        "--x-assign",
        "fast",
        "--x-initial",
        "fast",
        "--noassert",
        "-Wno-fatal",
        "-Wno-lint",
        "-Wno-style",
        "-CFLAGS",
        "-fPIC",
    ];
    if artifact == Artifact::Library {
        flags.extend([
            "-LDFLAGS",
            "-shared -Wl,--no-undefined -Wl,--version-script=../exports.map",
        ]);
    }
    flags
}

/// Make variables: optimize the per-cycle code, spend little time on the one-off code.
const MAKE_OPT: [&str; 3] = ["OPT_FAST=-O2", "OPT_SLOW=-O1", "OPT_GLOBAL=-O2"];

/// One complete build in `dir`: sources, Verilator, make, then only the artifact is kept.
/// Verilator's runtime objects (`verilated*.o`, the same for every design at the same version
/// and flags, most of a small design's compile time) come from `runtime` when an earlier build
/// left them there, and are left there by this build otherwise.
fn build_in(
    dir: &Path,
    verilator: &Path,
    block: &str,
    verilog: &str,
    source: &str,
    artifact: Artifact,
    runtime: &Path,
) -> Result<(), ToolError> {
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        fs::write(&path, text).map_err(|e| ToolError::path("write", &path, &e, CACHE_REMEDY))
    };
    write("design.v", verilog)?;
    write("shim.cpp", source)?;
    write("exports.map", "{ global: smrtl_*; local: *; };\n")?;
    let obj = dir.join("obj");
    let name = artifact.file_name();
    run(
        "verilator",
        Command::new(verilator)
            .current_dir(dir)
            .args(["--cc", "--exe", "design.v"])
            .arg(dir.join("shim.cpp"))
            .args(["--top-module", block, "--prefix", PREFIX, "--Mdir", "obj"])
            .args(["-o", name])
            .args(build_flags(artifact)),
    )?;
    // Copied (not linked) after Verilator ran: make rebuilds objects older than `Vtop.mk`.
    let kept = runtime_objects(runtime);
    let reused = !kept.is_empty()
        && kept
            .iter()
            .all(|(name, path)| fs::copy(path, obj.join(name)).is_ok());
    let make = || {
        run(
            "make",
            Command::new("make")
                .current_dir(&obj)
                .args(["-s", "-j2", "-f", &format!("{PREFIX}.mk")])
                .args(MAKE_OPT),
        )
    };
    match make() {
        Ok(_) => {}
        Err(_) if reused => {
            // Build the runtime afresh rather than trust the kept objects.
            for (name, _) in &kept {
                let _ = fs::remove_file(obj.join(name));
            }
            make()?;
        }
        Err(e) => return Err(e),
    }
    if !reused {
        keep_runtime(&obj, runtime);
    }
    fs::rename(obj.join(name), dir.join(name))
        .map_err(|e| ToolError::path("move", &obj.join(name), &e, CACHE_REMEDY))?;
    fs::remove_dir_all(&obj).map_err(|e| ToolError::path("remove", &obj, &e, CACHE_REMEDY))
}

/// Verilator's runtime objects of a build (`verilated.o`, `verilated_threads.o`, …).
fn is_runtime_object(name: &str) -> bool {
    name.starts_with("verilated") && name.ends_with(".o")
}

/// The runtime objects kept in `runtime` (name, path); empty when there are none yet.
fn runtime_objects(runtime: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = fs::read_dir(runtime) else {
        return vec![];
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            is_runtime_object(&name).then(|| (name, e.path()))
        })
        .collect()
}

/// Leaves the runtime objects of a finished build in `obj` for later builds in `runtime`: a
/// complete set or nothing (the directory appears by rename), and a failure only costs speed.
fn keep_runtime(obj: &Path, runtime: &Path) {
    let Some(parent) = runtime.parent() else {
        return;
    };
    let Ok(staging) = scratch_in(parent, "runtime") else {
        return;
    };
    let copied = fs::read_dir(obj).map(|entries| {
        entries.filter_map(Result::ok).all(|e| {
            let name = e.file_name();
            !name.to_str().is_some_and(is_runtime_object)
                || fs::copy(e.path(), staging.path().join(&name)).is_ok()
        })
    });
    if copied.unwrap_or(false) && !runtime_objects(staging.path()).is_empty() {
        // Another process may have kept its set first; either is as good.
        if fs::rename(staging.path(), runtime).is_ok() {
            staging.keep();
        }
    }
}

/// `verilator --version`, asked once per process.
fn verilator_version(verilator: &Path) -> Result<String, ToolError> {
    static VERSION: OnceLock<String> = OnceLock::new();
    if let Some(v) = VERSION.get() {
        return Ok(v.clone());
    }
    let out = run("verilator", Command::new(verilator).arg("--version"))?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok(VERSION.get_or_init(|| v).clone())
}

/// 64-bit FNV-1a over length-prefixed parts: stable across Rust releases, unlike `DefaultHasher`.
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        let len = (part.len() as u64).to_le_bytes();
        for &b in len.iter().chain(part.as_bytes()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// The C++ type Verilator gives a port of `width` bits (wide ports are `VlWide<N>` arrays of
/// 32-bit words).
fn c_type(width: usize) -> &'static str {
    match width {
        0..=8 => "CData",
        9..=16 => "SData",
        17..=32 => "IData",
        33..=64 => "QData",
        _ => "VlWide",
    }
}

/// C++ statements copying input slot `s` from `in` into the model `t`.
fn set_input(code: &mut String, s: &Slot) {
    let name = &s.name;
    if s.width <= 64 {
        let ty = c_type(s.width);
        let m = mask(s.width);
        let _ = writeln!(
            code,
            "    t->{name} = static_cast<{ty}>(in[{}] & {m:#x}ULL);",
            s.offset
        );
        return;
    }
    for i in 0..s.width.div_ceil(32) {
        let word = format!("in[{}]", s.offset + i / 2);
        let word = if i % 2 == 1 {
            format!("({word} >> 32)")
        } else {
            word
        };
        let bits = (s.width - 32 * i).min(32);
        let m = if bits == 32 {
            String::new()
        } else {
            format!(" & {:#x}U", mask(bits))
        };
        let _ = writeln!(code, "    t->{name}[{i}] = static_cast<EData>({word}){m};");
    }
}

/// C++ statements copying output slot `s` from the model `t` into `out`.
fn get_output(code: &mut String, s: &Slot) {
    let name = &s.name;
    if s.width <= 64 {
        let _ = writeln!(code, "    out[{}] = t->{name};", s.offset);
        return;
    }
    let n32 = s.width.div_ceil(32);
    for j in 0..s.words() {
        let lo = format!("static_cast<uint64_t>(t->{name}[{}])", 2 * j);
        let hi = if 2 * j + 1 < n32 {
            format!(" | (static_cast<uint64_t>(t->{name}[{}]) << 32)", 2 * j + 1)
        } else {
            String::new()
        };
        let _ = writeln!(code, "    out[{}] = {lo}{hi};", s.offset + j);
    }
}

/// The C++ shared by the library shim and the plain loop: one cycle with [`Simulator::step`]'s
/// semantics, and the power-on reset.
fn cycle_source(layout: &Layout) -> String {
    let clocked = layout.has_clock();
    let mut code = String::new();
    let _ = writeln!(
        code,
        "// Generated by smrtl for the verilator backend.\n#include \"{PREFIX}.h\"\n\
         #include \"verilated.h\"\n#include <cstdint>\n\n\
         static const size_t IN_WORDS = {};\nstatic const size_t OUT_WORDS = {};\n",
        layout.in_words.max(1),
        layout.out_words.max(1)
    );
    code += "static inline void smrtl_set_inputs(Vtop* t, const uint64_t* in) {\n";
    layout.inputs.iter().for_each(|s| set_input(&mut code, s));
    code += "}\n\nstatic inline void smrtl_get_outputs(Vtop* t, uint64_t* out) {\n";
    layout.outputs.iter().for_each(|s| get_output(&mut code, s));
    code += "}\n\n/// Rising then falling clock edge (no-op for a combinational block).\n";
    code += "static inline void smrtl_edge(Vtop* t) {\n";
    if clocked {
        let _ = writeln!(
            code,
            "    t->{CLOCK} = 1;\n    t->eval();\n    t->{CLOCK} = 0;\n    t->eval();"
        );
    } else {
        code += "    (void)t;\n";
    }
    code += "}\n\n/// One cycle: inputs, settle, sample outputs, clock edge.\n";
    code += "static inline void smrtl_cycle(Vtop* t, const uint64_t* in, uint64_t* out) {\n";
    code += "    smrtl_set_inputs(t, in);\n    t->eval();\n    smrtl_get_outputs(t, out);\n";
    code += "    smrtl_edge(t);\n}\n\n";
    code += "/// Zero inputs; registers to their reset values over one edge with reset high.\n";
    code += "static void smrtl_power_on(Vtop* t) {\n";
    code += "    static const uint64_t zero[IN_WORDS] = {};\n    smrtl_set_inputs(t, zero);\n";
    if clocked && layout.input(RESET).is_some() {
        let _ = writeln!(
            code,
            "    t->{RESET} = 1;\n    t->eval();\n    smrtl_edge(t);\n    t->{RESET} = 0;"
        );
    }
    code += "    t->eval();\n}\n";
    code
}

/// The library shim with C linkage: `smrtl_new`, `smrtl_step`, `smrtl_step_many`, `smrtl_eval`,
/// `smrtl_clock`, `smrtl_delete`. Its text is part of the build's cache key.
fn shim_source(layout: &Layout) -> String {
    cycle_source(layout)
        + r#"
struct SmrtlModel {
    VerilatedContext ctx;
    Vtop top{&ctx, "TOP"};
};

extern "C" void* smrtl_new() {
    SmrtlModel* m = new SmrtlModel;
    smrtl_power_on(&m->top);
    return m;
}

extern "C" void smrtl_step(void* h, const uint64_t* in, uint64_t* out) {
    smrtl_cycle(&static_cast<SmrtlModel*>(h)->top, in, out);
}

extern "C" void smrtl_step_many(void* h, const uint64_t* in, size_t in_stride, uint64_t* out,
                                size_t out_stride, size_t cycles) {
    Vtop* t = &static_cast<SmrtlModel*>(h)->top;
    for (size_t i = 0; i < cycles; ++i) smrtl_cycle(t, in + i * in_stride, out + i * out_stride);
}

extern "C" void smrtl_eval(void* h, const uint64_t* in, uint64_t* out) {
    Vtop* t = &static_cast<SmrtlModel*>(h)->top;
    smrtl_set_inputs(t, in);
    t->eval();
    smrtl_get_outputs(t, out);
}

extern "C" void smrtl_clock(void* h) {
    smrtl_edge(&static_cast<SmrtlModel*>(h)->top);
}

extern "C" void smrtl_delete(void* h) {
    SmrtlModel* m = static_cast<SmrtlModel*>(h);
    m->top.final();
    delete m;
}
"#
}

/// The plain loop: `smrtl_plain_loop STIMULUS.bin MIN_SECONDS` prints `RATE CHECKSUM`.
fn plain_loop_source(layout: &Layout) -> String {
    cycle_source(layout)
        + r#"
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

/// Seconds of CPU time this thread has used: the machine's other load does not count.
static double cpu_seconds() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char** argv) {
    if (argc != 3) { std::fprintf(stderr, "usage: %s STIMULUS.bin MIN_SECONDS\n", argv[0]); return 2; }
    std::FILE* f = std::fopen(argv[1], "rb");
    if (!f) { std::perror(argv[1]); return 1; }
    std::vector<uint64_t> stim;
    uint64_t w;
    while (std::fread(&w, sizeof w, 1, f) == 1) stim.push_back(w);
    std::fclose(f);
    const size_t n = stim.size() / IN_WORDS;
    if (n == 0) { std::fprintf(stderr, "empty stimulus\n"); return 1; }
    const double min_seconds = std::atof(argv[2]);

    VerilatedContext ctx;
    Vtop top{&ctx, "TOP"};
    smrtl_power_on(&top);
    uint64_t out[OUT_WORDS] = {};
    uint64_t sum = 0;
    auto pass = [&] {
        for (size_t i = 0; i < n; ++i) {
            smrtl_cycle(&top, &stim[i * IN_WORDS], out);
            for (size_t j = 0; j < OUT_WORDS; ++j) sum = sum * 31 + out[j];
        }
    };
    pass();  // warm-up
    const double t0 = cpu_seconds();
    size_t vectors = 0;
    double elapsed = 0;
    do {
        pass();
        vectors += n;
        elapsed = cpu_seconds() - t0;
    } while (elapsed < min_seconds);
    top.final();
    std::printf("%.6e %llu\n", vectors / elapsed, static_cast<unsigned long long>(sum));
    return 0;
}
"#
}

/// A new scratch directory under the system temp dir (removed when dropped and on a signal).
pub(crate) fn scratch(tag: &str) -> Result<Scratch, ToolError> {
    scratch_in(&std::env::temp_dir(), tag)
}

/// A new directory `.smrtl-<tag>-<pid>-<n>-<nanos>` under `parent` (the temp dir or the build
/// cache: the error says which variable to set).
pub(crate) fn scratch_in(parent: &Path, tag: &str) -> Result<Scratch, ToolError> {
    let remedy = if parent == std::env::temp_dir() {
        TMP_REMEDY
    } else {
        CACHE_REMEDY
    };
    Scratch::new_in(parent, &format!(".smrtl-{tag}-"), remedy)
}

fn failed(message: String) -> ToolError {
    ToolError::Failed {
        tool: "verilator".into(),
        message,
    }
}

/// Maps an I/O error to [`ToolError::Io`] for `tool`.
pub(crate) fn io(tool: &str) -> impl Fn(std::io::Error) -> ToolError + '_ {
    move |e| ToolError::Io {
        tool: tool.into(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A build leaves exactly Verilator's runtime objects for the next one, as one set; a
    /// second set for the same key changes nothing.
    #[test]
    fn runtime_objects_are_kept_once_and_found() {
        let root = scratch("runtime-test").unwrap();
        let obj = root.path().join("obj");
        fs::create_dir_all(&obj).unwrap();
        for name in [
            "verilated.o",
            "verilated_threads.o",
            "Vtop__ALL.o",
            "shim.o",
        ] {
            fs::write(obj.join(name), name).unwrap();
        }
        let runtime = root.path().join("runtime-0");
        assert!(runtime_objects(&runtime).is_empty());
        keep_runtime(&obj, &runtime);
        let mut kept: Vec<String> = runtime_objects(&runtime).into_iter().map(|k| k.0).collect();
        kept.sort();
        assert_eq!(kept, ["verilated.o", "verilated_threads.o"]);
        fs::write(obj.join("verilated.o"), "other").unwrap();
        keep_runtime(&obj, &runtime);
        let text = fs::read_to_string(runtime.join("verilated.o")).unwrap();
        assert_eq!(text, "verilated.o");
        // Only the kept set and the build directory remain: no staging directory is left over.
        assert_eq!(fs::read_dir(root.path()).unwrap().count(), 2);
    }
}
