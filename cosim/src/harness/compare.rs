//! The block-level co-simulation harness: identical inputs into a model and an RTL backend each
//! cycle, every output compared every cycle; the first difference stops the run. Unrecorded runs
//! go in chunks of cycles, one [`Simulator::step_many`] call per side and chunk.

use crate::harness::layout::Layout;
use crate::harness::sim::Simulator;
use serde::Serialize;
use std::collections::VecDeque;
use std::fmt;
use std::sync::mpsc;

/// The first output that differed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    pub cycle: u64,
    pub port: String,
    pub width: usize,
    pub expected: Vec<u64>,
    pub actual: Vec<u64>,
}

/// Hex text of a little-endian word vector.
pub fn hex(words: &[u64]) -> String {
    let mut s = String::from("0x");
    let mut started = false;
    for (i, w) in words.iter().enumerate().rev() {
        if started {
            s += &format!("{w:016x}");
        } else if *w != 0 || i == 0 {
            s += &format!("{w:x}");
            started = true;
        }
    }
    s
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "mismatch at cycle {}: port {} expected {} actual {}",
            self.cycle,
            self.port,
            hex(&self.expected),
            hex(&self.actual)
        )
    }
}

/// One recorded cycle for waveforms.
#[derive(Clone, Debug, Default)]
pub struct Row {
    pub cycle: u64,
    pub inputs: Vec<u64>,
    pub model: Vec<u64>,
    pub rtl: Vec<u64>,
    /// The RTL's internal nets, [`Trace::nets`] in order, each net's words in turn.
    pub internals: Vec<u64>,
    pub mismatch: bool,
}

impl Row {
    fn words(&self) -> usize {
        self.inputs.len() + self.model.len() + self.rtl.len() + self.internals.len()
    }
}

/// Most bytes of rows a [`Trace`] keeps: its window shrinks below its cycle count for a design
/// with many internal nets, so a recorded run's memory stays bounded whatever the design.
pub const TRACE_BUDGET_BYTES: usize = 48 << 20;

/// The last `window` cycles of a run (a long run keeps only the cycles before a divergence),
/// within [`TRACE_BUDGET_BYTES`].
#[derive(Clone, Debug)]
pub struct Trace {
    pub window: usize,
    pub rows: VecDeque<Row>,
    /// The RTL's internal nets (dotted instance path, width), as the rows hold their values.
    pub nets: Vec<(String, usize)>,
    words: usize,
    budget_words: usize,
}

impl Trace {
    pub fn new(window: usize) -> Trace {
        Trace {
            window: window.max(1),
            rows: VecDeque::new(),
            nets: vec![],
            words: 0,
            budget_words: TRACE_BUDGET_BYTES / 8,
        }
    }

    /// How many rows of `row_words` words each fit the byte budget (at least 1).
    pub fn rows_within_budget(row_words: usize) -> usize {
        (TRACE_BUDGET_BYTES / 8 / row_words.max(1)).max(1)
    }

    /// Every row pushed, without a window or a byte budget (a testbench collecting stimulus).
    pub fn unbounded() -> Trace {
        Trace {
            window: usize::MAX,
            budget_words: usize::MAX,
            ..Trace::new(1)
        }
    }

    /// Appends a row, dropping the oldest beyond the window or the byte budget.
    pub fn push(&mut self, row: Row) {
        self.words += row.words();
        self.rows.push_back(row);
        while self.rows.len() > self.window
            || (self.rows.len() > 1 && self.words > self.budget_words)
        {
            let old = self.rows.pop_front().expect("rows");
            self.words -= old.words();
        }
    }

    /// Appends the row of `cycle` that `fill` writes (its buffers empty; reused from the row
    /// the window drops, so a long recording does not allocate per cycle).
    pub fn push_with(&mut self, cycle: u64, mismatch: bool, fill: impl FnOnce(&mut Row)) {
        let mut row = self.spare();
        row.cycle = cycle;
        row.mismatch = mismatch;
        fill(&mut row);
        self.push(row);
    }

    /// Takes the internal nets' names from `rtl` (once: they do not change during a run).
    pub fn nets_of(&mut self, rtl: &dyn Simulator) {
        if self.nets.is_empty() {
            self.nets = rtl.internal_nets();
        }
    }

    /// An empty row to fill and [`Trace::push`]: when the window is full, the oldest row
    /// (dropped from the trace, its buffers reused); else a new one.
    fn spare(&mut self) -> Row {
        let mut row = if self.rows.len() == self.window {
            let old = self.rows.pop_front().unwrap_or_default();
            self.words -= old.words();
            old
        } else {
            Row::default()
        };
        for buf in [
            &mut row.inputs,
            &mut row.model,
            &mut row.rtl,
            &mut row.internals,
        ] {
            buf.clear();
        }
        row
    }
}

/// What a run found.
#[derive(Debug)]
pub struct Outcome {
    /// Cycles run, up to and including the mismatch if there is one.
    pub cycles: u64,
    pub mismatch: Option<Mismatch>,
    pub trace: Option<Trace>,
}

/// Cycles per batch of an unrecorded run: the model steps the whole chunk, then the RTL, then
/// one compare covers it. Large enough that per-call costs (dynamic dispatch, an FFI crossing)
/// vanish, small enough that the buffers stay in cache.
pub const CHUNK: usize = 1024;

/// Runs whose chunks are at least this long step the model on its own thread beside the RTL
/// (a thread costs tens of microseconds; a chunk this long takes far longer on any backend).
pub const PARALLEL_CHUNK: usize = 256;

/// Runs `stimulus` (one input buffer per cycle) through `model` and `rtl`, comparing all outputs
/// every cycle; the first difference ends the run. With `record = Some(window)`, keeps the last
/// `window` cycles (up to and including a mismatch) for a VCD, stepping cycle by cycle so that
/// each row has the RTL's internals; otherwise the run goes in chunks of [`CHUNK`] cycles
/// through [`Simulator::step_many`], which may step both sides past the mismatch within its
/// chunk (the outcome is the same).
pub fn run<'a>(
    layout: &Layout,
    model: &mut (dyn Simulator + Send),
    rtl: &mut dyn Simulator,
    stimulus: impl IntoIterator<Item = &'a [u64]>,
    record: Option<usize>,
) -> Outcome {
    match record {
        Some(window) => run_recorded(layout, model, rtl, stimulus, window),
        None => run_chunked(layout, model, rtl, stimulus),
    }
}

/// [`run`] without a trace, [`CHUNK`] cycles per step of each side. With chunks of at least
/// [`PARALLEL_CHUNK`] cycles the model steps on one worker thread for the whole run (one
/// thread, not one per chunk) while this thread steps the RTL: the run then goes at the pace
/// of the slower side, not of their sum.
fn run_chunked<'a>(
    layout: &Layout,
    model: &mut (dyn Simulator + Send),
    rtl: &mut dyn Simulator,
    stimulus: impl IntoIterator<Item = &'a [u64]>,
) -> Outcome {
    let mut stimulus = stimulus.into_iter();
    // A short case (the usual random one) needs only buffers of its own length.
    let chunk = stimulus.size_hint().1.map_or(CHUNK, |n| n.clamp(1, CHUNK));
    let mut chunks = Chunks::new(layout, chunk);
    if chunk < PARALLEL_CHUNK {
        return chunks.run(&mut stimulus, |inputs, expected, actual, n| {
            model.step_many(inputs, expected, n);
            rtl.step_many(inputs, actual, n);
        });
    }
    std::thread::scope(|s| {
        let (to_model, work) = mpsc::sync_channel::<(Vec<u64>, Vec<u64>, usize)>(1);
        let (to_main, done) = mpsc::sync_channel::<(Vec<u64>, Vec<u64>)>(1);
        s.spawn(move || {
            for (inputs, mut expected, n) in work {
                model.step_many(&inputs, &mut expected, n);
                if to_main.send((inputs, expected)).is_err() {
                    break;
                }
            }
        });
        // The worker's buffers, handed over and back each chunk (no allocation per chunk).
        let mut spare = Some((Vec::new(), Vec::new()));
        chunks.run(&mut stimulus, |inputs, expected, actual, n| {
            let (mut i, mut e) = spare.take().expect("no chunk in flight");
            refill(&mut i, inputs);
            zero(&mut e, expected.len());
            to_model.send((i, e, n)).expect("the model's worker");
            rtl.step_many(inputs, actual, n);
            let (i, e) = done.recv().expect("the model's chunk");
            expected.copy_from_slice(&e);
            spare = Some((i, e));
        })
    })
}

/// The buffers of a chunked run: one chunk's inputs, the model's outputs and the RTL's.
struct Chunks<'l> {
    layout: &'l Layout,
    chunk: usize,
    inputs: Vec<u64>,
    expected: Vec<u64>,
    actual: Vec<u64>,
}

impl<'l> Chunks<'l> {
    fn new(layout: &'l Layout, chunk: usize) -> Chunks<'l> {
        Chunks {
            layout,
            chunk,
            inputs: Vec::with_capacity(chunk * layout.in_words),
            expected: vec![0; chunk * layout.out_words],
            actual: vec![0; chunk * layout.out_words],
        }
    }

    /// Feeds `stimulus` a chunk at a time to `step(inputs, expected, actual, cycles)`, which
    /// fills the model's and the RTL's outputs; compares them after each chunk.
    fn run<'a>(
        &mut self,
        stimulus: &mut impl Iterator<Item = &'a [u64]>,
        mut step: impl FnMut(&[u64], &mut [u64], &mut [u64], usize),
    ) -> Outcome {
        let (iw, ow) = (self.layout.in_words, self.layout.out_words);
        let mut cycles = 0u64;
        loop {
            self.inputs.clear();
            let mut n = 0;
            for v in stimulus.by_ref().take(self.chunk) {
                assert!(
                    v.len() >= iw,
                    "stimulus vector of {} words; the layout has {iw} input words",
                    v.len()
                );
                self.inputs.extend_from_slice(&v[..iw]);
                n += 1;
            }
            if n == 0 {
                break;
            }
            let (expected, actual) = (&mut self.expected[..n * ow], &mut self.actual[..n * ow]);
            expected.fill(0);
            actual.fill(0);
            step(&self.inputs, expected, actual, n);
            if expected != actual {
                let c = expected
                    .chunks_exact(ow)
                    .zip(actual.chunks_exact(ow))
                    .position(|(e, a)| e != a)
                    .expect("buffers differ in some cycle");
                let cycle = cycles + c as u64;
                let (e, a) = (&expected[c * ow..][..ow], &actual[c * ow..][..ow]);
                return Outcome {
                    cycles: cycle + 1,
                    mismatch: Some(first_difference(self.layout, cycle, e, a)),
                    trace: None,
                };
            }
            cycles += n as u64;
            // Never ask a finished iterator again (it need not be fused).
            if n < self.chunk {
                break;
            }
        }
        Outcome {
            cycles,
            mismatch: None,
            trace: None,
        }
    }
}

/// [`run`] with a trace of the last `window` cycles, one cycle at a time; the rows dropped off
/// the window are reused, so a long recorded run allocates only what the backend's
/// [`Simulator::internal_values`] does.
fn run_recorded<'a>(
    layout: &Layout,
    model: &mut dyn Simulator,
    rtl: &mut dyn Simulator,
    stimulus: impl IntoIterator<Item = &'a [u64]>,
    window: usize,
) -> Outcome {
    let mut trace = Trace::new(window);
    trace.nets_of(rtl);
    let mut cycles = 0;
    for inputs in stimulus {
        let mut row = trace.spare();
        row.cycle = cycles;
        refill(&mut row.inputs, inputs);
        zero(&mut row.model, layout.out_words);
        zero(&mut row.rtl, layout.out_words);
        model.step(inputs, &mut row.model);
        rtl.step(inputs, &mut row.rtl);
        rtl.internal_values(&mut row.internals);
        row.mismatch = row.model != row.rtl;
        let mismatch = row
            .mismatch
            .then(|| first_difference(layout, cycles, &row.model, &row.rtl));
        trace.push(row);
        cycles += 1;
        if mismatch.is_some() {
            return Outcome {
                cycles,
                mismatch,
                trace: Some(trace),
            };
        }
    }
    Outcome {
        cycles,
        mismatch: None,
        trace: Some(trace),
    }
}

/// Makes `buf` a copy of `words`, reusing its allocation.
fn refill(buf: &mut Vec<u64>, words: &[u64]) {
    buf.clear();
    buf.extend_from_slice(words);
}

/// Makes `buf` `n` zero words, reusing its allocation.
fn zero(buf: &mut Vec<u64>, n: usize) {
    buf.clear();
    buf.resize(n, 0);
}

/// The first output port that differs between `expected` and `actual` (which must differ).
pub fn first_difference(layout: &Layout, cycle: u64, expected: &[u64], actual: &[u64]) -> Mismatch {
    let slot = layout
        .outputs
        .iter()
        .find(|s| s.of(expected) != s.of(actual))
        .expect("buffers differ in some port");
    Mismatch {
        cycle,
        port: slot.name.clone(),
        width: slot.width,
        expected: slot.of(expected).to_vec(),
        actual: slot.of(actual).to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smrtl_hdl::netlist::port_list;
    use smrtl_hdl::Dir;

    /// `x` in, `sum` (running total, 1 word) and `wide` (x twice, 2 words) out.
    fn layout() -> Layout {
        Layout::new(&port_list(&[
            ("x", Dir::In, 16),
            ("sum", Dir::Out, 32),
            ("wide", Dir::Out, 128),
        ]))
    }

    /// The reference: a running sum; with `bug_at = Some(c)`, `wide`'s upper word is off at
    /// cycle `c` only.
    struct Adder {
        sum: u64,
        cycle: u64,
        bug_at: Option<u64>,
    }

    impl Adder {
        fn new(bug_at: Option<u64>) -> Adder {
            Adder {
                sum: 0,
                cycle: 0,
                bug_at,
            }
        }
    }

    impl Simulator for Adder {
        fn name(&self) -> &str {
            "adder"
        }

        fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
            self.sum += inputs[0];
            outputs[0] = self.sum;
            outputs[1] = inputs[0];
            outputs[2] = inputs[0] + u64::from(self.bug_at == Some(self.cycle));
            self.cycle += 1;
        }

        fn internal_nets(&self) -> Vec<(String, usize)> {
            vec![("cycle".into(), 64)]
        }

        fn internal_values(&self, words: &mut Vec<u64>) {
            words.push(self.cycle);
        }
    }

    fn stimulus(n: usize) -> Vec<Vec<u64>> {
        (0..n as u64).map(|i| vec![i * 7 % 11]).collect()
    }

    fn run_adder(n: usize, bug_at: Option<u64>, record: Option<usize>) -> Outcome {
        let stim = stimulus(n);
        let (mut model, mut rtl) = (Adder::new(None), Adder::new(bug_at));
        run(
            &layout(),
            &mut model,
            &mut rtl,
            stim.iter().map(|v| v.as_slice()),
            record,
        )
    }

    #[test]
    fn clean_runs_count_every_cycle() {
        for n in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5] {
            for record in [None, Some(10)] {
                let out = run_adder(n, None, record);
                assert_eq!(
                    (out.cycles, out.mismatch),
                    (n as u64, None),
                    "{n} {record:?}"
                );
            }
        }
    }

    #[test]
    fn the_first_mismatch_is_exact_across_chunk_boundaries() {
        let n = 3 * CHUNK + 5;
        for bug in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 7, n - 1] {
            let bug = bug as u64;
            let want = Mismatch {
                cycle: bug,
                port: "wide".into(),
                width: 128,
                expected: vec![bug * 7 % 11, bug * 7 % 11],
                actual: vec![bug * 7 % 11, bug * 7 % 11 + 1],
            };
            for record in [None, Some(1), Some(16)] {
                let out = run_adder(n, Some(bug), record);
                assert_eq!(out.cycles, bug + 1, "bug at {bug}, {record:?}");
                assert_eq!(out.mismatch.as_ref(), Some(&want), "{record:?}");
            }
        }
    }

    #[test]
    fn a_recording_keeps_the_last_window_up_to_the_mismatch() {
        let bug = CHUNK as u64 + 3;
        let trace = run_adder(3 * CHUNK, Some(bug), Some(16))
            .trace
            .expect("recorded");
        let cycles: Vec<u64> = trace.rows.iter().map(|r| r.cycle).collect();
        assert_eq!(cycles, (bug - 15..=bug).collect::<Vec<_>>());
        let last = trace.rows.back().expect("rows");
        assert!(last.mismatch);
        assert!(trace.rows.iter().rev().skip(1).all(|r| !r.mismatch));
        // Each row is its own cycle's: inputs, both outputs and the RTL's internals after it.
        for r in &trace.rows {
            let x = r.cycle * 7 % 11;
            assert_eq!(r.inputs, vec![x]);
            assert_eq!(r.model[1..], [x, x]);
            assert_eq!(r.rtl[2], x + u64::from(r.cycle == bug));
            assert_eq!(r.internals, vec![r.cycle + 1]);
        }
        assert_eq!(trace.nets, vec![("cycle".to_string(), 64)]);
        let short = run_adder(5, None, Some(16)).trace.expect("recorded");
        assert_eq!(short.rows.len(), 5);
    }

    /// The default batched step is the per-cycle step over the flat buffers.
    #[test]
    fn step_many_defaults_to_steps() {
        let (mut a, mut b) = (Adder::new(None), Adder::new(None));
        let stim = stimulus(40);
        let flat: Vec<u64> = stim.concat();
        let mut many = vec![0; 40 * 3];
        a.step_many(&flat, &mut many, 40);
        let mut one = vec![0; 3];
        for (v, want) in stim.iter().zip(many.chunks_exact(3)) {
            b.step(v, &mut one);
            assert_eq!(one, want);
        }
        a.step_many(&[], &mut [], 0);
    }
}
