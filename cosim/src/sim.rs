//! The one interface a behavioral model and every RTL backend implement.

/// Anything that can be stepped one clock cycle with the same buffers.
pub trait Simulator {
    /// Short name for reports (`model`, `rusthdl`, `verilator`, ...).
    fn name(&self) -> &str;
    /// One cycle: apply `inputs`, let the logic settle, write this cycle's `outputs` (what a
    /// consumer samples at the coming edge), then take the rising clock edge.
    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]);
    /// Internal signals for waveforms: (name, width, words). Empty when not exposed.
    fn internals(&self) -> Vec<(String, usize, Vec<u64>)> {
        vec![]
    }
}

/// An RTL backend that can also settle without a clock edge: for testbenches that answer an
/// output within the same cycle (the `sm_core` descriptor request, spec elastic-pipeline.md §6).
/// `eval` then `edge` is one [`Simulator::step`].
pub trait Rtl: Simulator {
    /// Applies `inputs`, settles and writes `outputs`; no clock edge. May be called again in
    /// the same cycle with changed inputs.
    fn eval(&mut self, inputs: &[u64], outputs: &mut [u64]);
    /// The rising clock edge with the inputs of the last `eval`.
    fn edge(&mut self);
}
