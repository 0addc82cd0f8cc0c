//! The CLI's integration tests, one module per file, in one binary (docs/blocks.md §5: one
//! binary instead of 28 builds faster and runs the files' tests side by side). Run one file's
//! tests with a filter: `cargo test --release --test suite docs::`.

mod bad_input;
mod bankan_cli;
mod bankan_text;
mod child_tools;
mod cli;
mod cocotb;
#[path = "../common/mod.rs"]
mod common;
mod docs;
mod fusesoc;
mod fuzz_examples;
mod gpgpusim_config;
mod launch;
mod mem_eval_cli;
mod mem_workload_cli;
mod messages;
mod progress;
mod prove;
mod refusals;
mod relssp_cli;
mod repro_bank;
mod repro_mem;
mod repro_sharing;
mod repro_stall;
mod run;
mod sweep;
mod systems;
mod verilog;
mod waveforms;
