//! Behavioral model of the SM pipeline of seed 000 (docs/elastic-pipeline.md §2–4), written from
//! the spec text, independently of the RTL: F → D1..Dk → EXE, then the `Unified`, `Split` or
//! `Elastic` backend, evaluated once per cycle in the order of §3.2.
//!
//! Layers, inside out, one file each:
//! - the entry (`entry.rs`): [`Entry`] as issued, [`InFlight`] inside the pipeline, and the
//!   detector's service cycles;
//! - the components (`components.rs`: [`FrontEnd`], [`PreFifo`], [`MemPath`], [`Nonmem`]),
//!   each owning its latches;
//! - [`Pipeline`] (`pipeline.rs`): the entry-level model, one [`Pipeline::cycle`] per clock,
//!   returning the per-cycle [`Record`] of §3.5 (`record.rs`; the SM model builds on it), or
//!   one [`Pipeline::step_with`] when only fe_hold and the cause are wanted;
//! - [`Model`] (`ports.rs`): the pipeline on the trace-mode ports of
//!   `smrtl_hdl::blocks::elastic_pipeline::ports`, a [`Simulator`](crate::Simulator) like
//!   every RTL backend, with [`record_from_outputs`] / [`encode_record`]: the record ⇄
//!   output-buffer mapping, so model and RTL records come from the same decoder, and
//!   [`Summary`] of a run.
//!
//! Nothing allocates per cycle: latches hold small `Copy` [`InFlight`] entries (no lane data),
//! every latch array and FIFO is allocated once with the pipeline, the ports are resolved once
//! with the [`Model`], and records are built only by the record-returning calls.

mod components;
mod entry;
mod pipeline;
mod ports;
mod record;
#[cfg(test)]
mod tests;

pub use components::{FrontEnd, Latch, MemPath, Nonmem, NonmemFifo, PreFifo, Stall, WbContent};
pub use entry::{degree, detector_cfg, service_cycles, Entry, InFlight, Lanes};
pub use pipeline::Pipeline;
pub use ports::{encode_record, record_from_outputs, Model, RecordPorts};
pub use record::{Record, StallCauses, Summary, SummaryAcc, Wb, WbBubbles};
