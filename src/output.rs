//! Output files are written whole or not at all: into a temporary sibling, then renamed.

use crate::{Result, UsageError};
use smrtl_cosim::harness::Trace;
use smrtl_cosim::{gtkw, vcd_out, Layout};
use std::path::Path;

/// The directory `path` would be written in, if it exists; else a one-line error. Commands
/// that run long call it up front, so a bad output path fails before the work.
pub fn writable_dir(path: &Path) -> Result<&Path> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(UsageError(format!(
            "cannot write {}: directory {} does not exist",
            path.display(),
            dir.display()
        )));
    }
    Ok(dir)
}

/// Writes `bytes` to `path` atomically; on error nothing is left behind.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = writable_dir(path)?;
    let name = path
        .file_name()
        .ok_or_else(|| UsageError(format!("cannot write {}: not a file path", path.display())))?;
    let tmp = dir.join(format!(".{}.smrtl-tmp", name.to_string_lossy()));
    let result = std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, path));
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(UsageError(format!("cannot write {}: {e}", path.display())));
    }
    Ok(())
}

/// Writes one JSON line per record, atomically.
pub fn write_json_lines<T: serde::Serialize>(path: &Path, records: &[T]) -> Result<()> {
    let mut text = String::new();
    for r in records {
        text += &serde_json::to_string(r)?;
        text.push('\n');
    }
    write_atomic(path, text.as_bytes())
}

/// Writes the waveforms of a run of block `top`: the VCD at `path` and, beside it, a GTKWave
/// save file (`path` with extension `.gtkw`) that opens on the mismatch flag, the model / RTL
/// output pairs and the inputs, with the marker on the first mismatch. Each file atomically.
pub fn write_waveform(path: &Path, top: &str, layout: &Layout, trace: &Trace) -> Result<()> {
    let save = gtkw::save_path(path);
    if save == path {
        return Err(UsageError(format!(
            "cannot write {}: a VCD needs another extension than .gtkw",
            path.display()
        )));
    }
    let dump_file = path
        .file_name()
        .ok_or_else(|| UsageError(format!("cannot write {}: not a file path", path.display())))?
        .to_string_lossy();
    let mut vcd = vec![];
    vcd_out::write(&mut vcd, top, layout, trace)?;
    write_atomic(path, &vcd)?;
    write_atomic(
        &save,
        gtkw::save_file(&dump_file, top, layout, trace).as_bytes(),
    )
}
