//! What a run leaves while it works, in one place: child tools (each in its own process group),
//! scratch directories and temporary output files. An error return drops their guards, which
//! kill and reap the children and remove the directories and files; SIGINT / SIGTERM end the
//! process without running destructors, so the signal handler calls [`on_signal`], which does
//! the same for everything still registered (docs/cli.md, "Child tools and interrupts").
//!
//! Every child tool (Yosys, yosys-smtbmc and its solver, nextpnr, Verilator and its `make` /
//! `g++`, iverilog, vvp) is started through [`spawn`] or [`output`]: in a new process group
//! (`setpgid(0, 0)`), so a terminal's Ctrl-C reaches smrtl alone and smrtl kills the whole group,
//! grandchildren included, with `killpg`.

use crate::tools::ToolError;
use std::fs;
use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// Process groups of the live children (each child leads its own group: pgid = pid).
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());
/// Scratch directories not yet removed or kept.
static DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Temporary files not yet renamed or removed.
static FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Set once a signal is being handled: no new child starts, and a thread whose child was
/// killed waits for the process to end instead of reporting the kill as the tool's failure.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether a signal is ending the process.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Blocks this thread for good when the process is ending on a signal (the handler thread exits
/// it): nothing more is started, reported or written.
fn stop_if_interrupted() {
    if interrupted() {
        loop {
            std::thread::park();
        }
    }
}

/// Kills every child process group, reaps the children, removes every scratch directory and
/// temporary file. For the SIGINT / SIGTERM handler, just before the process ends.
pub fn on_signal() {
    let groups: Vec<i32> = {
        let mut groups = lock(&GROUPS);
        INTERRUPTED.store(true, Ordering::SeqCst);
        for &g in groups.iter() {
            // SAFETY: killpg has no memory effects; an empty group is ESRCH, ignored.
            unsafe { libc::killpg(g, libc::SIGKILL) };
        }
        std::mem::take(&mut *groups)
    };
    for g in groups {
        // The leader is our child; another thread may be reaping it already (then ECHILD).
        // SAFETY: waitpid on our own child with a valid status pointer.
        let mut status = 0;
        unsafe { libc::waitpid(g, &mut status, 0) };
    }
    for d in std::mem::take(&mut *lock(&DIRS)) {
        let _ = fs::remove_dir_all(d);
    }
    for f in std::mem::take(&mut *lock(&FILES)) {
        let _ = fs::remove_file(f);
    }
}

/// Registers a temporary file, removed by [`on_signal`] until [`forget_file`].
pub fn track_file(path: &Path) {
    lock(&FILES).push(path.to_path_buf());
}

/// Unregisters a temporary file (renamed into place or removed).
pub fn forget_file(path: &Path) {
    lock(&FILES).retain(|f| f != path);
}

/// A child tool in its own process group: killed (the whole group) and reaped when dropped
/// before it finished, and on a signal.
pub struct Group {
    child: Child,
    pgid: i32,
    reaped: bool,
}

/// Starts `cmd` in a new process group and registers the group.
pub fn spawn(cmd: &mut Command) -> io::Result<Group> {
    cmd.process_group(0);
    let mut groups = lock(&GROUPS);
    if interrupted() {
        drop(groups);
        loop {
            std::thread::park();
        }
    }
    let child = cmd.spawn()?;
    let pgid = child.id() as i32;
    groups.push(pgid);
    Ok(Group {
        child,
        pgid,
        reaped: false,
    })
}

impl Group {
    /// The child (for its pipes and pid).
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Waits for the child to exit; then kills what is left of its group (a grandchild that
    /// outlived it) and reaps it.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        // Wait without reaping, so the group id cannot be reused before `killpg`.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on our own child with a valid siginfo pointer.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                self.pgid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        stop_if_interrupted();
        if r == 0 {
            // SAFETY: see `on_signal`.
            unsafe { libc::killpg(self.pgid, libc::SIGKILL) };
        }
        let status = self.child.wait();
        self.finish();
        stop_if_interrupted();
        status
    }

    /// Whether the child has exited (then reaped as by [`Group::wait`]).
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: as in `wait`; WNOHANG leaves si_pid 0 while the child runs.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                self.pgid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT | libc::WNOHANG,
            )
        };
        stop_if_interrupted();
        if r == 0 && unsafe { info.si_pid() } == 0 {
            return Ok(None);
        }
        self.wait().map(Some)
    }

    /// Kills the whole group and reaps the child.
    pub fn kill(&mut self) {
        if !self.reaped {
            // SAFETY: see `on_signal`; the leader is not reaped, so the id is still ours.
            unsafe { libc::killpg(self.pgid, libc::SIGKILL) };
            let _ = self.child.wait();
            self.finish();
        }
    }

    fn finish(&mut self) {
        self.reaped = true;
        lock(&GROUPS).retain(|&g| g != self.pgid);
    }

    /// Collects standard output and error (when piped) and waits, as
    /// [`Child::wait_with_output`] does; a grandchild that kept the pipes open is killed with
    /// the group when the child exits, so this never waits for it.
    pub fn wait_with_output(mut self) -> io::Result<Output> {
        let drain = |pipe: Option<Box<dyn Read + Send>>| {
            pipe.map(|mut p| {
                std::thread::spawn(move || {
                    let mut buf = Vec::new();
                    let _ = p.read_to_end(&mut buf);
                    buf
                })
            })
        };
        let out = drain(self.child.stdout.take().map(|p| Box::new(p) as _));
        let err = drain(self.child.stderr.take().map(|p| Box::new(p) as _));
        let status = self.wait()?;
        let join = |t: Option<std::thread::JoinHandle<Vec<u8>>>| {
            t.map(|t| t.join().unwrap_or_default()).unwrap_or_default()
        };
        Ok(Output {
            status,
            stdout: join(out),
            stderr: join(err),
        })
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs `cmd` to completion in its own process group, capturing its output (standard input
/// is empty), as [`Command::output`] does.
pub fn output(cmd: &mut Command) -> io::Result<Output> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    spawn(cmd)?.wait_with_output()
}

/// A uniquely named scratch directory, registered for removal on a signal and removed when
/// dropped unless kept.
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
    keep: bool,
}

impl Scratch {
    /// A new directory `<prefix><pid>-<n>-<nanos>` under `parent`; `remedy` says what to do
    /// when it cannot be made.
    pub fn new_in(parent: &Path, prefix: &str, remedy: &str) -> Result<Scratch, ToolError> {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = parent.join(format!("{prefix}{}-{n}-{nanos}", std::process::id()));
        let mut dirs = lock(&DIRS);
        fs::create_dir_all(&path)
            .map_err(|e| ToolError::path("create directory", &path, &e, remedy))?;
        dirs.push(path.clone());
        Ok(Scratch { path, keep: false })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Leaves the directory in place (it has been renamed elsewhere).
    pub fn keep(mut self) {
        self.keep = true;
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_dir_all(&self.path);
        }
        lock(&DIRS).retain(|d| d != &self.path);
    }
}
