//! Planted faults (docs/blocks.md §4): deliberate bugs in a block's RTL that the conformance
//! suite must catch, shrink and show. Compiled only with the `faults` feature, which the test
//! crates enable; without it [`planted!`](crate::planted) keeps only the correct logic and this
//! module does not exist, so no fault can reach the `smrtl` binary.
//!
//! A generator marks a bug where it builds the logic:
//!
//! ```text
//! let next = planted!(faults::PEAK_NOT_RESTARTED, pmax.clone(), inflight_nx.clone());
//! ```
//!
//! and a test builds the module with the fault in place: [`plant_module`]`(&FAULT, || build(p))`
//! renames it `<name>_fault`, so it never shares a name with the correct one. A parent built
//! with a child's fault planted gets the faulty child (a block's fault caught at its parent's
//! ports).

use std::cell::Cell;

/// One planted fault of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The block whose generator holds the bug.
    pub block: &'static str,
    /// Its name, unique within the block.
    pub name: &'static str,
    /// What the bug breaks, in words (and the spec rule).
    pub what: &'static str,
    /// The output where random co-simulation first sees it.
    pub port: &'static str,
    /// Most cycles of the shrunk failing case.
    pub within: usize,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.block, self.name)
    }
}

thread_local! {
    /// The fault planted on this thread, and whether a generator built it.
    static PLANTED: Cell<(Option<Fault>, bool)> = const { Cell::new((None, false)) };
}

/// Runs `build` with `fault` planted: every generator on this thread that marks `fault` builds
/// the bug instead of the correct logic. Returns what `build` returned and whether any
/// generator built the bug (a fault on a path these params do not build is never hit).
pub fn plant<T>(fault: &Fault, build: impl FnOnce() -> T) -> (T, bool) {
    let before = PLANTED.with(|p| p.replace((Some(*fault), false)));
    let out = build();
    let (_, hit) = PLANTED.with(|p| p.replace(before));
    (out, hit)
}

/// [`plant`] for a module: the faulty module, renamed `<name>_fault`; panics when the
/// generator never built the bug (the fault's declaration and its params disagree).
pub fn plant_module(fault: &Fault, build: impl FnOnce() -> crate::Module) -> crate::Module {
    let (mut m, hit) = plant(fault, build);
    assert!(hit, "fault {fault} is not built at these params");
    m.name = format!("{}_fault", m.name);
    m
}

/// Whether `fault` is planted now (see [`plant`]); a `true` answer counts as built.
pub fn is_planted(fault: &Fault) -> bool {
    PLANTED.with(|p| {
        let (planted, hit) = p.get();
        let yes = planted == Some(*fault);
        p.set((planted, hit || yes));
        yes
    })
}

/// `bug` where `fault` is planted, else `ok` (see the module doc).
#[macro_export]
macro_rules! planted {
    ($fault:expr, $bug:expr, $ok:expr) => {
        if $crate::faults::is_planted(&$fault) {
            $bug
        } else {
            $ok
        }
    };
}
