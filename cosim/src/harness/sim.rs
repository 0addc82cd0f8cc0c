//! The one interface a behavioral model and every RTL backend implement.

/// Anything that can be stepped one clock cycle with the same buffers.
pub trait Simulator {
    /// Short name for reports (`model`, `rusthdl`, `verilator`, ...).
    fn name(&self) -> &str;
    /// One cycle: apply `inputs`, let the logic settle, write this cycle's `outputs` (what a
    /// consumer samples at the coming edge), then take the rising clock edge.
    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]);
    /// `cycles` consecutive [`Simulator::step`]s over flat buffers: cycle `c` reads
    /// `inputs[c * iw..][..iw]` and writes `outputs[c * ow..][..ow]`, where the strides are
    /// `iw = inputs.len() / cycles` and `ow = outputs.len() / cycles` (see [`batch_strides`]).
    /// Backends with a per-call cost (an FFI crossing) override it to pay that cost once.
    fn step_many(&mut self, inputs: &[u64], outputs: &mut [u64], cycles: usize) {
        let Some((iw, ow)) = batch_strides(inputs.len(), outputs.len(), cycles) else {
            return;
        };
        for c in 0..cycles {
            self.step(&inputs[c * iw..][..iw], &mut outputs[c * ow..][..ow]);
        }
    }
    /// Internal signals for waveforms: (name, width) of each, in the order of
    /// [`Simulator::internal_values`]. Empty when not exposed.
    fn internal_nets(&self) -> Vec<(String, usize)> {
        vec![]
    }
    /// The internal signals' values now, appended to `words` (each net's words in turn).
    fn internal_values(&self, _words: &mut Vec<u64>) {}
}

/// The per-cycle strides `(input words, output words)` of a [`Simulator::step_many`] batch of
/// `cycles` cycles over buffers of `inputs` and `outputs` words; `None` for an empty batch.
/// Panics unless both buffers hold a whole number of cycles.
pub fn batch_strides(inputs: usize, outputs: usize, cycles: usize) -> Option<(usize, usize)> {
    if cycles == 0 {
        return None;
    }
    assert!(
        inputs.is_multiple_of(cycles) && outputs.is_multiple_of(cycles),
        "step_many: buffers of {inputs} and {outputs} words do not hold {cycles} whole cycles"
    );
    Some((inputs / cycles, outputs / cycles))
}

/// An RTL backend that can also settle without a clock edge: for testbenches that answer an
/// output within the same cycle (the `sm_core` descriptor request, docs/elastic-pipeline.md §6).
/// `eval` then `edge` is one [`Simulator::step`].
pub trait Rtl: Simulator {
    /// Applies `inputs`, settles and writes `outputs`; no clock edge. May be called again in
    /// the same cycle with changed inputs.
    fn eval(&mut self, inputs: &[u64], outputs: &mut [u64]);
    /// The rising clock edge with the inputs of the last `eval`.
    fn edge(&mut self);
}

/// A block's behavioral model on its ports (implemented once per block, in
/// `cosim/src/blocks/<block>.rs`; docs/blocks.md §1): written from the spec, constructed in its
/// reset state for the block's params and the layout of its port buffers.
pub trait BlockModel: Simulator + Send + Sized + 'static {
    /// The block's params.
    type Params: smrtl_hdl::Block;
    /// The model of `p` in its reset state, reading and writing buffers of `layout`.
    fn new(p: &Self::Params, layout: &crate::Layout) -> Self;
}
