//! Every file a command writes goes through [`Outputs`] (docs/cli.md, "Output files"):
//!
//! - **checked before any work**: the directory exists and takes a new file (proved by creating
//!   the temporary file there), the path is not a directory, an existing read-only file is
//!   refused unless `--force`, two outputs of one command are never the same file, and no
//!   output is one of the command's inputs (same path or inode; [`Outputs::input`]);
//! - **written whole or not at all**: a regular file is written into a uniquely named temporary
//!   sibling and renamed over the target only when the command succeeds ([`Outputs::commit`]);
//!   a failing command, a dropped `Outputs`, SIGINT or SIGTERM remove every temporary file, so
//!   no command leaves one output when another failed;
//! - **never replacing what is not a file**: `-` is standard output, a device or a FIFO is
//!   written in place, a symbolic link is followed to its target (the link stays).

use smrtl_cosim::harness::Trace;

/// The cycles of a run kept for a waveform.
pub use smrtl_cosim::harness::Trace as WaveRows;
use smrtl_cosim::harness::{gtkw, surfer, vcd_out};
use smrtl_cosim::Layout;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A one-line error (the CLI prints it after `error: ` and exits 2).
type Result<T> = std::result::Result<T, String>;

/// `--force`: replace an existing read-only file.
static FORCE: AtomicBool = AtomicBool::new(false);

/// Sets `--force` for every output of this process.
pub fn set_force(force: bool) {
    FORCE.store(force, Ordering::Relaxed);
}

/// On SIGINT / SIGTERM / SIGHUP: kills every child tool's process group and reaps it, removes
/// the scratch directories and the temporary files ([`smrtl_hdl::cleanup::on_signal`]), then
/// ends the process as that signal would.
pub fn install_signal_cleanup() -> io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            smrtl_hdl::cleanup::on_signal();
            let _ = signal_hook::low_level::emulate_default_handler(sig);
            std::process::exit(128 + sig);
        }
    });
    Ok(())
}

fn forget_temp(path: &Path) {
    smrtl_hdl::cleanup::forget_file(path);
}

/// Reads a text input of at most `limit` bytes (a documented bound, checked before reading).
pub fn read_text(path: &Path, limit: u64) -> Result<String> {
    let cannot = |e: io::Error| format!("cannot read {}: {e}", path.display());
    let file = File::open(path).map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    if meta.is_dir() {
        return Err(format!("cannot read {}: it is a directory", path.display()));
    }
    let too_big = || {
        format!(
            "{}: larger than the input limit of {} MiB",
            path.display(),
            limit >> 20
        )
    };
    if meta.is_file() && meta.len() > limit {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut io::Read::take(file, limit + 1), &mut bytes).map_err(cannot)?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "{}: not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// One output of a command, by its index in [`Outputs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Output(usize);

enum Sink {
    /// `-`.
    Stdout(io::Stdout),
    /// A device or FIFO, opened when first written.
    Direct(Option<BufWriter<File>>),
    /// A regular file: the temporary sibling, renamed over `target` on commit.
    Replace {
        tmp: PathBuf,
        file: BufWriter<File>,
        mode: Option<u32>,
    },
}

struct Item {
    shown: PathBuf,
    /// The path written: symbolic links resolved.
    target: PathBuf,
    /// (device, inode) of an existing target, to tell two names of one file apart.
    id: Option<(u64, u64)>,
    sink: Sink,
    written: bool,
}

/// The output files of one command (see the module doc).
#[derive(Default)]
pub struct Outputs {
    items: Vec<Item>,
    /// The command's input files: each name as given and its (device, inode).
    inputs: Vec<(PathBuf, (u64, u64))>,
}

/// The refusal of output `out`, which is input `input` of the same command.
fn is_input(out: &Path, input: &Path) -> String {
    format!(
        "cannot write {}: it is the same file as {}, an input of this command (no output may be an input)",
        out.display(),
        input.display()
    )
}

impl Outputs {
    pub fn new() -> Outputs {
        Outputs::default()
    }

    /// Declares `path` an input of the command: no output may be the same file (by device and
    /// inode, so a link or another spelling of the path is caught too), whichever is declared
    /// first. `-`, a character device (`/dev/null`, a terminal) and a path that does not exist
    /// (its read fails) are not checked.
    pub fn input(&mut self, path: &Path) -> Result<()> {
        if path.as_os_str() == "-" {
            return Ok(());
        }
        let Ok(m) = fs::metadata(path) else {
            return Ok(());
        };
        if m.file_type().is_char_device() {
            return Ok(());
        }
        let id = (m.dev(), m.ino());
        if let Some(out) = self.items.iter().find(|i| i.id == Some(id)) {
            return Err(is_input(&out.shown, path));
        }
        self.inputs.push((path.to_path_buf(), id));
        Ok(())
    }

    /// [`Outputs::input`] for each of `paths`.
    pub fn inputs<P: AsRef<Path>>(&mut self, paths: &[P]) -> Result<()> {
        paths.iter().try_for_each(|p| self.input(p.as_ref()))
    }

    /// Checks `path` as an output and reserves it.
    pub fn add(&mut self, path: &Path) -> Result<Output> {
        let cannot = |why: String| format!("cannot write {}: {why}", path.display());
        let sink_id = if path.as_os_str() == "-" {
            (Sink::Stdout(io::stdout()), PathBuf::from("-"), None)
        } else {
            // `metadata` follows every link: `/dev/stdout` is whatever standard output is.
            match fs::metadata(path) {
                Ok(m) if m.is_dir() => return Err(cannot("it is a directory".into())),
                Ok(m) if is_direct(&m.file_type()) => (
                    Sink::Direct(None),
                    path.to_path_buf(),
                    Some((m.dev(), m.ino())),
                ),
                Ok(m) if !m.is_file() => {
                    return Err(cannot("not a regular file, device or FIFO".into()))
                }
                Ok(m) => {
                    let mode = m.permissions().mode();
                    if mode & 0o222 == 0 && !FORCE.load(Ordering::Relaxed) {
                        return Err(cannot(
                            "the file is read-only (pass --force to replace it)".into(),
                        ));
                    }
                    let target = fs::canonicalize(path).map_err(|e| cannot(e.to_string()))?;
                    let (tmp, file) = create_temp(&target).map_err(cannot)?;
                    let sink = Sink::Replace {
                        tmp,
                        file,
                        mode: Some(mode & 0o7777),
                    };
                    (sink, target, Some((m.dev(), m.ino())))
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    // A new file, or a dangling link: the file it names is created.
                    let target = resolve_links(path).map_err(|e| cannot(e.to_string()))?;
                    let (tmp, file) = create_temp(&target).map_err(cannot)?;
                    let sink = Sink::Replace {
                        tmp,
                        file,
                        mode: None,
                    };
                    (sink, target, None)
                }
                Err(e) => return Err(cannot(e.to_string())),
            }
        };
        let (sink, target, id) = sink_id;
        if let Some((input, _)) = self.inputs.iter().find(|(_, i)| Some(*i) == id) {
            let msg = is_input(path, input);
            drop_sink(sink);
            return Err(msg);
        }
        // Two outputs may share a character device (`/dev/null` discards both), nothing else.
        let shareable = fs::metadata(&target).is_ok_and(|m| m.file_type().is_char_device());
        let same = |i: &Item| match (&i.sink, &sink) {
            (Sink::Stdout(_), Sink::Stdout(_)) => true,
            _ if shareable => false,
            _ => (id.is_some() && i.id == id) || same_new_file(&i.target, &target),
        };
        if let Some(other) = self.items.iter().find(|i| same(i)) {
            let msg = format!(
                "cannot write {}: it is the same file as {}, another output of this command",
                path.display(),
                other.shown.display()
            );
            drop_sink(sink);
            return Err(msg);
        }
        self.items.push(Item {
            shown: path.to_path_buf(),
            target,
            id,
            sink,
            written: false,
        });
        Ok(Output(self.items.len() - 1))
    }

    /// A VCD at `path`, its GTKWave save file (`path` with extension `.gtkw`) and its Surfer
    /// command file (`.sucl`) beside it; a VCD sent to standard output, a device or a FIFO has
    /// no file for them to open.
    pub fn add_waveform(&mut self, path: &Path) -> Result<Waveform> {
        let save = gtkw::save_path(path);
        let commands = surfer::command_path(path);
        if (save == path || commands == path) && path.as_os_str() != "-" {
            return Err(format!(
                "cannot write {}: a VCD needs another extension than .gtkw or .sucl",
                path.display()
            ));
        }
        let dump_file = path
            .file_name()
            .ok_or_else(|| format!("cannot write {}: not a file path", path.display()))?
            .to_string_lossy()
            .into_owned();
        let vcd = self.add(path)?;
        let (save, surfer) = match self.items[vcd.0].sink {
            Sink::Replace { .. } => (Some(self.add(&save)?), Some(self.add(&commands)?)),
            _ => (None, None),
        };
        Ok(Waveform {
            vcd,
            save,
            surfer,
            dump_file,
        })
    }

    /// The path `out` was given as.
    pub fn path(&self, out: Output) -> &Path {
        &self.items[out.0].shown
    }

    /// A writer for `out` (buffered; errors surface here or at [`Outputs::commit`]).
    pub fn writer(&mut self, out: Output) -> Result<&mut dyn Write> {
        let item = &mut self.items[out.0];
        item.written = true;
        let cannot = |e: io::Error| format!("cannot write {}: {e}", item.shown.display());
        Ok(match &mut item.sink {
            Sink::Stdout(out) => out,
            Sink::Direct(file) => {
                if file.is_none() {
                    let f = OpenOptions::new()
                        .write(true)
                        .open(&item.target)
                        .map_err(cannot)?;
                    *file = Some(BufWriter::new(f));
                }
                file.as_mut().expect("just opened")
            }
            Sink::Replace { file, .. } => file,
        })
    }

    /// Writes all of `bytes` to `out`.
    pub fn write(&mut self, out: Output, bytes: &[u8]) -> Result<()> {
        let shown = self.items[out.0].shown.clone();
        self.writer(out)?
            .write_all(bytes)
            .map_err(|e| format!("cannot write {}: {e}", shown.display()))
    }

    /// Writes the waveforms of a run of block `top`: the VCD, and the GTKWave save file and
    /// Surfer command file that open on the mismatch flag, the model / RTL output pairs and the
    /// inputs, with the marker on the first mismatch.
    pub fn write_waveform(
        &mut self,
        w: &Waveform,
        top: &str,
        layout: &Layout,
        trace: &Trace,
    ) -> Result<()> {
        let shown = self.path(w.vcd).to_path_buf();
        let vcd = self.writer(w.vcd)?;
        vcd_out::write(vcd, top, layout, trace)
            .map_err(|e| format!("cannot write {}: {e}", shown.display()))?;
        let save = gtkw::SaveFile::new(&w.dump_file, top, layout, trace);
        if let Some(out) = w.save {
            self.write(out, save.render().as_bytes())?;
        }
        match w.surfer {
            Some(out) => self.write(out, surfer::command_file(&save).as_bytes()),
            None => Ok(()),
        }
    }

    /// Finishes every written output: flushes, and renames each temporary file over its
    /// target. Outputs never written are removed, leaving what stood at their path untouched.
    pub fn commit(mut self) -> Result<()> {
        // Flush everything first, so a full disk leaves no output renamed.
        for item in &mut self.items {
            let cannot = |e: io::Error| format!("cannot write {}: {e}", item.shown.display());
            match &mut item.sink {
                Sink::Stdout(out) => out.flush().map_err(cannot)?,
                Sink::Direct(Some(f)) => f.flush().map_err(cannot)?,
                Sink::Direct(None) => {}
                Sink::Replace { file, mode, .. } if item.written => {
                    file.flush().map_err(cannot)?;
                    if let Some(mode) = mode {
                        file.get_ref()
                            .set_permissions(fs::Permissions::from_mode(*mode))
                            .map_err(cannot)?;
                    }
                }
                Sink::Replace { .. } => {}
            }
        }
        for item in std::mem::take(&mut self.items) {
            if let Sink::Replace { tmp, file, .. } = item.sink {
                drop(file);
                if item.written {
                    if let Err(e) = fs::rename(&tmp, &item.target) {
                        let _ = fs::remove_file(&tmp);
                        forget_temp(&tmp);
                        return Err(format!("cannot write {}: {e}", item.shown.display()));
                    }
                } else {
                    let _ = fs::remove_file(&tmp);
                }
                forget_temp(&tmp);
            }
        }
        Ok(())
    }
}

impl Drop for Outputs {
    /// A command that did not commit leaves nothing behind.
    fn drop(&mut self) {
        for item in self.items.drain(..) {
            drop_sink(item.sink);
        }
    }
}

/// A VCD output and its GTKWave save file (none beside a device, FIFO or stdout).
pub struct Waveform {
    pub vcd: Output,
    pub save: Option<Output>,
    /// The Surfer command file, beside the save file.
    pub surfer: Option<Output>,
    dump_file: String,
}

fn drop_sink(sink: Sink) {
    if let Sink::Replace { tmp, file, .. } = sink {
        drop(file);
        let _ = fs::remove_file(&tmp);
        forget_temp(&tmp);
    }
}

fn is_direct(t: &fs::FileType) -> bool {
    t.is_char_device() || t.is_block_device() || t.is_fifo()
}

/// `path` with the symbolic links of its last component followed (at most 40, as the OS kernel
/// does): a dangling link resolves to the file it names.
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Whether two paths of files that do not exist yet name the same file.
fn same_new_file(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| {
        let dir = parent(p).canonicalize().ok()?;
        Some(dir.join(p.file_name()?))
    };
    a == b || canon(a).is_some_and(|x| Some(x) == canon(b))
}

fn parent(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Creates a uniquely named temporary file beside `target`, registered for signal cleanup.
fn create_temp(target: &Path) -> std::result::Result<(PathBuf, BufWriter<File>), String> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = parent(target);
    if !dir.is_dir() {
        return Err(format!("directory {} does not exist", dir.display()));
    }
    let name = target
        .file_name()
        .ok_or_else(|| "not a file path".to_string())?
        .to_string_lossy();
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{}.{n}.smrtl-tmp", std::process::id()));
        // Registered first: a signal between creating and registering would leave it.
        smrtl_hdl::cleanup::track_file(&tmp);
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, BufWriter::new(f))),
            Err(e) => {
                // Not ours: another file of that name, which a signal must not remove.
                smrtl_hdl::cleanup::forget_file(&tmp);
                if e.kind() == io::ErrorKind::AlreadyExists {
                    continue;
                }
                return Err(format!("cannot create a file in {}: {e}", dir.display()));
            }
        }
    }
}
