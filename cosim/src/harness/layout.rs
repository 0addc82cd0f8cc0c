//! The port layout of the buffers the harness, models and backends exchange: declared with the
//! ports in `smrtl_hdl::layout`, re-exported here for the harness.

pub use smrtl_hdl::layout::*;
