//! Behavioral model of the `ReqCounter` (docs/memory-issue-control.md §3.3, §5): a kernel's
//! wrapping count of accepted requests; the interval's last request is the `boundary`.

use crate::{BlockModel, Layout, Simulator};
use smrtl_hdl::blocks::req_counter::port::{Inputs, Io, Outputs};
use smrtl_hdl::blocks::req_counter::Params;

/// The counter (spec §3.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReqCounter {
    pub reqcnt: u32,
    /// 2^reqcnt_bits - 1 (1023).
    max: u32,
}

impl ReqCounter {
    /// The reset state (0), for a `reqcnt_bits`-bit counter.
    pub fn new(reqcnt_bits: u32) -> ReqCounter {
        ReqCounter {
            reqcnt: 0,
            max: ((1u64 << reqcnt_bits) - 1) as u32,
        }
    }

    /// Whether an accepted request this cycle is the interval's last (counter all ones).
    pub fn boundary(&self, acc: bool) -> bool {
        acc && self.reqcnt == self.max
    }

    /// The clock edge: one more request, wrapping to 0 after the last.
    pub fn tick(&mut self, acc: bool) {
        self.reqcnt = if self.boundary(acc) {
            0
        } else {
            self.reqcnt + acc as u32
        };
    }
}

/// The counter on its ports.
pub struct Model {
    counter: ReqCounter,
    bits: u32,
    io: Io,
    inputs: Inputs,
    outputs: Outputs,
}

impl BlockModel for Model {
    type Params = Params;
    fn new(p: &Params, layout: &Layout) -> Model {
        Model {
            counter: ReqCounter::new(p.reqcnt_bits),
            bits: p.reqcnt_bits,
            io: Io::new(p, layout),
            inputs: Inputs::new(p),
            outputs: Outputs::new(p),
        }
    }
}

impl Simulator for Model {
    fn name(&self) -> &str {
        "model"
    }

    fn step(&mut self, inputs: &[u64], outputs: &mut [u64]) {
        let (i, o) = (&mut self.inputs, &mut self.outputs);
        self.io.read_inputs(inputs, i);
        o.boundary = self.counter.boundary(i.acc);
        o.reqcnt = u64::from(self.counter.reqcnt);
        self.io.write_outputs(o, outputs);
        if i.reset {
            self.counter = ReqCounter::new(self.bits);
        } else {
            self.counter.tick(i.acc);
        }
    }
}
