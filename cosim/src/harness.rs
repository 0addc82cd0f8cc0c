//! The block-level co-simulation harness: identical inputs into a model and an RTL backend each
//! cycle, every output compared every cycle; the first difference stops the run.

use crate::layout::Layout;
use crate::sim::Simulator;
use serde::Serialize;
use std::collections::VecDeque;
use std::fmt;

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
#[derive(Clone, Debug)]
pub struct Row {
    pub cycle: u64,
    pub inputs: Vec<u64>,
    pub model: Vec<u64>,
    pub rtl: Vec<u64>,
    pub internals: Vec<(String, usize, Vec<u64>)>,
    pub mismatch: bool,
}

/// The last `window` cycles of a run (a long run keeps only the cycles before a divergence).
#[derive(Clone, Debug)]
pub struct Trace {
    pub window: usize,
    pub rows: VecDeque<Row>,
}

impl Trace {
    pub fn new(window: usize) -> Trace {
        Trace {
            window: window.max(1),
            rows: VecDeque::new(),
        }
    }

    /// Appends a row, dropping the oldest beyond the window.
    pub fn push(&mut self, row: Row) {
        if self.rows.len() == self.window {
            self.rows.pop_front();
        }
        self.rows.push_back(row);
    }
}

/// What a run found.
#[derive(Debug)]
pub struct Outcome {
    pub cycles: u64,
    pub mismatch: Option<Mismatch>,
    pub trace: Option<Trace>,
}

/// Runs `stimulus` (one input buffer per cycle) through `model` and `rtl`, comparing all outputs
/// every cycle. With `record = Some(window)`, keeps the last `window` cycles for a VCD.
pub fn run<'a>(
    layout: &Layout,
    model: &mut dyn Simulator,
    rtl: &mut dyn Simulator,
    stimulus: impl IntoIterator<Item = &'a [u64]>,
    record: Option<usize>,
) -> Outcome {
    let mut expected = vec![0u64; layout.out_words];
    let mut actual = vec![0u64; layout.out_words];
    let mut trace = record.map(Trace::new);
    let mut cycles = 0;
    for inputs in stimulus {
        model.step(inputs, &mut expected);
        rtl.step(inputs, &mut actual);
        let mismatch =
            (expected != actual).then(|| first_difference(layout, cycles, &expected, &actual));
        if let Some(t) = trace.as_mut() {
            t.push(Row {
                cycle: cycles,
                inputs: inputs.to_vec(),
                model: expected.clone(),
                rtl: actual.clone(),
                internals: rtl.internals(),
                mismatch: mismatch.is_some(),
            });
        }
        cycles += 1;
        if mismatch.is_some() {
            return Outcome {
                cycles,
                mismatch,
                trace,
            };
        }
    }
    Outcome {
        cycles,
        mismatch: None,
        trace,
    }
}

fn first_difference(layout: &Layout, cycle: u64, expected: &[u64], actual: &[u64]) -> Mismatch {
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
