//! The testbench's integration tests, one module per file, in one binary: each test binary
//! links and instantiates the whole workspace, so one binary instead of 35 saves CI several
//! minutes of compile (docs/blocks.md §5). Run one file's tests with a filter:
//! `cargo test --release -p smrtl-testbench --test suite rbmi_arb::`. The tests with a counting
//! global allocator (`model_speed_smoke`, `mem_pipeline_speed`, `sm_core_model`) stay binaries
//! of their own.

mod bank_conflict_detector;
mod bank_conflict_gpgpusim4;
mod bankan_rtl;
mod coh_sm;
mod conformance;
mod elastic_pipeline;
mod fuzz_parsers;
mod history_cache;
mod lock_table;
mod mem_eval;
mod mem_issue_ctl;
mod mem_pipeline;
mod mem_sm;
mod mem_smkw;
mod milg;
mod owner_class;
mod profiles;
mod prove;
mod qbmi_arb;
mod rbmi_arb;
mod relssp_unit;
mod repro;
mod req_counter;
mod share_cfg;
mod sharing_core_cosim;
mod sharing_programs;
mod sharing_repro;
mod sharing_scenarios;
mod sharing_sm;
mod sm_core_cosim;
mod sm_stalls;
mod sp_access_unit;
mod stall_inspector;
mod warp_scheduler;
mod waveforms;
