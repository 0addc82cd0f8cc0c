//! Random co-simulation: proptest cases (each from reset) until the cycle budget is spent; the
//! first failing case is shrunk by proptest to a minimal one, which is what gets saved and shown.

use crate::design::{encode, Bench, Case, Design};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use smrtl_cosim::harness::{self, Mismatch, Outcome};
use smrtl_cosim::Rtl;

/// Builds a fresh RTL backend instance in its reset state.
pub type RtlFactory<'a> = dyn Fn() -> Box<dyn Rtl> + 'a;

/// A failure after shrinking.
#[derive(Debug)]
pub struct Failure {
    pub mismatch: Mismatch,
    /// The minimal failing stimulus (cycle 0 starts from reset).
    pub minimal: Case,
    /// Length of the case before shrinking.
    pub original_cycles: usize,
    pub shrink_steps: u32,
}

#[derive(Debug)]
pub struct Report {
    pub cycles: u64,
    pub cases: u64,
    pub failure: Option<Failure>,
}

/// Most shrink steps tried on a failure.
const MAX_SHRINK_STEPS: u32 = 20_000;

/// A deterministic proptest runner: the same seed gives the same cases, bit for bit.
pub fn runner(seed: u64) -> TestRunner {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

/// Runs one case on a fresh model and RTL instance.
pub fn run_case(design: &Design, rtl: &RtlFactory, case: &Case, record: Option<usize>) -> Outcome {
    let mut model = design.model();
    let mut dut = rtl();
    harness::run(
        &design.layout,
        model.as_mut(),
        dut.as_mut(),
        case.iter().map(|v| v.as_slice()),
        record,
    )
}

/// The waveform rows of one case run with the last `window` cycles kept (for a VCD).
pub fn case_rows(design: &Design, rtl: &RtlFactory, case: &Case, window: usize) -> harness::Trace {
    run_case(design, rtl, case, Some(window))
        .trace
        .expect("recorded")
}

/// The first `n` (at least 1) cycles of the design's random cases drawn with `seed`, back to
/// back: stimulus for a waveform of a passing run, `smrtl bench` and tests.
pub fn first_cycles(design: &Design, seed: u64, n: usize) -> Case {
    let mut runner = runner(seed);
    let strategy = design.cases();
    let mut case = vec![];
    while case.len() < n.max(1) {
        case.extend(strategy.new_tree(&mut runner).expect("case").current());
    }
    case.truncate(n.max(1));
    case
}

/// Random cycles of `smrtl cosim` unless `--cycles` says otherwise: the length at which the
/// stimulus must hit every reachable coverpoint (docs/coverage.md).
pub const COSIM_CYCLES: u64 = 100_000;

/// Co-simulates at least `cycles` random cycles; shrinks the first failure.
pub fn random(design: &Design, rtl: &RtlFactory, cycles: u64, seed: u64) -> Report {
    let mut runner = runner(seed);
    let strategy = design.cases();
    let (mut total, mut cases) = (0, 0);
    while total < cycles {
        let mut tree = strategy.new_tree(&mut runner).expect("case strategy");
        let case = tree.current();
        let out = run_case(design, rtl, &case, None);
        total += out.cycles;
        cases += 1;
        if let Some(mismatch) = out.mismatch {
            let original_cycles = case.len();
            let (minimal, mismatch, shrink_steps) = shrink(design, rtl, &mut tree, case, mismatch);
            return Report {
                cycles: total,
                cases,
                failure: Some(Failure {
                    mismatch,
                    minimal,
                    original_cycles,
                    shrink_steps,
                }),
            };
        }
    }
    Report {
        cycles: total,
        cases,
        failure: None,
    }
}

/// [`random`] on rust-hdl's simulator: at least `cycles` random cycles of `design`, every
/// output compared; panics with the first mismatch (the block-level random tests).
pub fn assert_random_on_rusthdl(design: &Design, cycles: u64, seed: u64) {
    let m = design.module.clone();
    let factory = move || {
        Box::new(smrtl_cosim::harness::backend::rusthdl::RustHdl::new(
            m.clone(),
        )) as Box<dyn Rtl>
    };
    let r = random(design, &factory, cycles, seed);
    assert!(
        r.failure.is_none(),
        "{} {}: {:?}",
        design.module.name,
        design.params,
        r.failure.map(|f| f.mismatch)
    );
    assert!(r.cycles >= cycles);
}

/// proptest's shrink loop: simplify while the value still fails, complicate when it passes.
/// `fails` returns the failure of a value (or `None`); returns the smallest failing value, its
/// failure and the steps taken.
pub fn shrink_tree<T: ValueTree, F>(
    tree: &mut T,
    mut best: (T::Value, F),
    mut fails: impl FnMut(&T::Value) -> Option<F>,
) -> (T::Value, F, u32) {
    let mut steps = 0;
    if !tree.simplify() {
        return (best.0, best.1, steps);
    }
    while steps < MAX_SHRINK_STEPS {
        steps += 1;
        let candidate = tree.current();
        match fails(&candidate) {
            Some(f) => {
                best = (candidate, f);
                if !tree.simplify() {
                    break;
                }
            }
            None => {
                if !tree.complicate() {
                    break;
                }
            }
        }
    }
    (best.0, best.1, steps)
}

fn shrink(
    design: &Design,
    rtl: &RtlFactory,
    tree: &mut impl ValueTree<Value = Case>,
    best: Case,
    mismatch: Mismatch,
) -> (Case, Mismatch, u32) {
    shrink_tree(tree, (best, mismatch), |c| {
        run_case(design, rtl, c, None).mismatch
    })
}

/// Runs typed `cycles` of block `P` from reset on its model and on rust-hdl's simulator,
/// asserts that every output is equal every cycle (panicking with the first difference: cycle,
/// port, expected, actual) and returns the typed outputs: the directed scenarios of the
/// per-block tests.
pub fn directed<P: Bench>(p: &P, cycles: &[P::Inputs]) -> Vec<P::Outputs> {
    let d = Design::new(p);
    let case = encode(p, &d.layout, cycles);
    let mut rtl = smrtl_cosim::harness::backend::rusthdl::RustHdl::new(d.module.clone());
    let run = run_vectors(&d, Some(&mut rtl), &case, None);
    if let Some(m) = run.mismatch {
        panic!("{} {}: model vs rusthdl: {m}", d.name, d.params);
    }
    let io = p.io(&d.layout);
    run.outputs
        .iter()
        .map(|o| {
            let mut out = p.zero_outputs();
            P::read_outputs(&io, o, &mut out);
            out
        })
        .collect()
}

/// A run of user vectors (`smrtl run`): every cycle's outputs, and with an RTL backend the
/// first difference from the model.
#[derive(Debug)]
pub struct VectorRun {
    /// Per cycle, the outputs shown: the RTL's with a backend (equal to the model's up to the
    /// mismatch, which is the last cycle), else the model's.
    pub outputs: Vec<Vec<u64>>,
    pub mismatch: Option<Mismatch>,
    /// The last `record` cycles, for a VCD.
    pub trace: Option<harness::Trace>,
}

impl VectorRun {
    /// The cycles kept for a VCD, if recorded.
    pub fn rows(&self) -> Option<&harness::Trace> {
        self.trace.as_ref()
    }
}

/// Runs `case` through the design's model and, if given, `rtl` beside it, comparing every
/// output every cycle; stops after the first difference. With `record`, keeps the last
/// `record` cycles (model and RTL outputs, RTL internals) for a VCD.
pub fn run_vectors(
    design: &Design,
    rtl: Option<&mut dyn smrtl_cosim::Simulator>,
    case: &Case,
    record: Option<usize>,
) -> VectorRun {
    let mut s = Stepper::new(design, rtl, record);
    let mut outputs = Vec::with_capacity(case.len());
    for inputs in case {
        outputs.push(s.step(inputs).to_vec());
        if s.mismatch().is_some() {
            break;
        }
    }
    let (mismatch, trace) = s.finish();
    VectorRun {
        outputs,
        mismatch,
        trace,
    }
}

/// [`run_vectors`] one cycle at a time, keeping nothing per cycle but the VCD window: the
/// streaming form `smrtl run` uses (memory flat in the number of cycles).
pub struct Stepper<'d, 'r> {
    layout: &'d smrtl_cosim::Layout,
    model: Box<dyn smrtl_cosim::Simulator + Send>,
    rtl: Option<&'r mut dyn smrtl_cosim::Simulator>,
    expected: Vec<u64>,
    actual: Vec<u64>,
    trace: Option<harness::Trace>,
    mismatch: Option<Mismatch>,
    cycle: u64,
}

impl<'d, 'r> Stepper<'d, 'r> {
    pub fn new(
        design: &'d Design,
        rtl: Option<&'r mut dyn smrtl_cosim::Simulator>,
        record: Option<usize>,
    ) -> Stepper<'d, 'r> {
        let layout = &design.layout;
        let mut trace = record.map(harness::Trace::new);
        if let (Some(t), Some(r)) = (trace.as_mut(), rtl.as_deref()) {
            t.nets_of(r);
        }
        Stepper {
            layout,
            model: design.model(),
            rtl,
            expected: vec![0; layout.out_words],
            actual: vec![0; layout.out_words],
            trace,
            mismatch: None,
            cycle: 0,
        }
    }

    /// Runs one cycle; returns the outputs shown (the RTL's with a backend, else the model's).
    /// After the first difference ([`Stepper::mismatch`]) the caller stops.
    pub fn step(&mut self, inputs: &[u64]) -> &[u64] {
        let cycle = self.cycle;
        self.cycle += 1;
        self.model.step(inputs, &mut self.expected);
        let shown = match self.rtl.as_deref_mut() {
            Some(r) => {
                r.step(inputs, &mut self.actual);
                if self.actual != self.expected {
                    self.mismatch = Some(harness::first_difference(
                        self.layout,
                        cycle,
                        &self.expected,
                        &self.actual,
                    ));
                }
                &self.actual
            }
            None => &self.expected,
        };
        if let Some(t) = self.trace.as_mut() {
            let (expected, rtl) = (&self.expected, self.rtl.as_deref());
            t.push_with(cycle, self.mismatch.is_some(), |row| {
                row.inputs.extend_from_slice(inputs);
                row.model.extend_from_slice(expected);
                row.rtl.extend_from_slice(shown);
                if let Some(r) = rtl {
                    r.internal_values(&mut row.internals);
                }
            });
        }
        shown
    }

    pub fn mismatch(&self) -> Option<&Mismatch> {
        self.mismatch.as_ref()
    }

    /// The first difference, if any, and the cycles kept for a VCD.
    pub fn finish(self) -> (Option<Mismatch>, Option<harness::Trace>) {
        (self.mismatch, self.trace)
    }
}

/// A backend that already ran (Icarus's batch replay): plays its recorded outputs back.
pub struct Replayed {
    name: String,
    outputs: std::vec::IntoIter<Vec<u64>>,
}

impl Replayed {
    pub fn new(name: &str, outputs: Vec<Vec<u64>>) -> Replayed {
        Replayed {
            name: name.into(),
            outputs: outputs.into_iter(),
        }
    }
}

impl smrtl_cosim::Simulator for Replayed {
    fn name(&self) -> &str {
        &self.name
    }
    fn step(&mut self, _inputs: &[u64], outputs: &mut [u64]) {
        let next = self.outputs.next().expect("a recorded output per cycle");
        outputs.copy_from_slice(&next);
    }
}
