//! The fuzz tests' harness: allocation counting per thread, panics caught per call, the
//! proptest configuration (tests/fuzz_parsers.rs).

use crate::fuzz_parsers::*;

// ---------------------------------------------------------------------------------------------
// Allocation counting: current and peak bytes per thread (what one parser call allocates), and
// for the whole process.
// ---------------------------------------------------------------------------------------------

pub(crate) struct Counting;

thread_local! {
    static CURRENT: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}
pub(crate) static PROCESS_CURRENT: AtomicUsize = AtomicUsize::new(0);
pub(crate) static PROCESS_PEAK: AtomicUsize = AtomicUsize::new(0);

pub(crate) fn track(delta: isize) {
    let _ = CURRENT.try_with(|c| {
        let now = c.get() + delta;
        c.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
    if delta >= 0 {
        let now = PROCESS_CURRENT.fetch_add(delta as usize, Ordering::Relaxed) + delta as usize;
        PROCESS_PEAK.fetch_max(now, Ordering::Relaxed);
    } else {
        PROCESS_CURRENT.fetch_sub(delta.unsigned_abs(), Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: AllocLayout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: AllocLayout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: AllocLayout) {
        System.dealloc(ptr, layout);
        track(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: AllocLayout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            track(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
pub(crate) static ALLOC: Counting = Counting;

/// Runs `f` on this thread; returns its result and the growth of this thread's peak allocated
/// bytes while it ran (the result included). Not nested.
pub(crate) fn measure<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let start = CURRENT.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let r = f();
    let peak = PEAK.with(Cell::get);
    (r, (peak - start).max(0) as usize)
}

// ---------------------------------------------------------------------------------------------
// Panics: caught per call, reported with their location and the input.
// ---------------------------------------------------------------------------------------------

/// The payload of the deliberate unwind that stops a long run (see [`bounded_cycles`]).
pub(crate) struct RunCap;

thread_local! {
    static LAST_PANIC: RefCell<String> = const { RefCell::new(String::new()) };
}

pub(crate) fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().is::<RunCap>() {
                return;
            }
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let at = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            // The innermost project functions on the stack (the panic may be in a dependency).
            let trace = std::backtrace::Backtrace::force_capture().to_string();
            let frames: Vec<&str> = trace
                .lines()
                .map(str::trim)
                .filter_map(|l| l.split_once(": ").map(|(_, f)| f))
                .filter(|f| f.starts_with("smrtl") && !f.contains("fuzz_parsers"))
                .take(3)
                .collect();
            let _ = LAST_PANIC
                .try_with(|p| *p.borrow_mut() = format!("{at} (in {}): {msg}", frames.join(" < ")));
            previous(info);
        }));
    });
}

/// `f()`, or a test failure naming the call, the panic's location and message, and the input.
pub(crate) fn guard<R>(
    what: &str,
    input: &dyn std::fmt::Debug,
    f: impl FnOnce() -> R,
) -> Result<R, TestCaseError> {
    install_panic_hook();
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| {
        let at = LAST_PANIC.with(|p| p.borrow().clone());
        TestCaseError::fail(format!("{what} panicked at {at}; input: {input:?}"))
    })
}

/// [`guard`] and [`measure`]: also fails if the call allocated more than the bound for `len`
/// input bytes.
pub(crate) fn guard_mem<R>(
    what: &str,
    input: &dyn std::fmt::Debug,
    len: usize,
    f: impl FnOnce() -> R,
) -> Result<R, TestCaseError> {
    let (r, peak) = guard(what, input, || measure(f))?;
    let bound = MEM_PER_BYTE * len + MEM_BASE;
    if peak > bound {
        return Err(TestCaseError::fail(format!(
            "{what} allocated {peak} bytes (peak) for {len} input bytes (bound {bound}); input: {input:?}"
        )));
    }
    Ok(r)
}

/// An error must be one line.
pub(crate) fn one_line(
    what: &str,
    input: &dyn std::fmt::Debug,
    e: &str,
) -> Result<(), TestCaseError> {
    if e.contains(['\n', '\r']) {
        return Err(TestCaseError::fail(format!(
            "{what}: the error is not one line: {e:?}; input: {input:?}"
        )));
    }
    Ok(())
}

/// A fixed seed, so a run is reproduced bit for bit (`PROPTEST_RNG_SEED` overrides it to
/// explore further).
pub(crate) fn config(cases: u32) -> ProptestConfig {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261124);
    ProptestConfig {
        cases,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed),
        max_shrink_iters: 512,
        ..ProptestConfig::default()
    }
}
