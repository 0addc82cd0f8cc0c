//! The fuzz tests' support (tests/fuzz_parsers.rs), one file per part.

pub mod bankan;
pub mod harness;
pub mod schemas;
pub mod strategies;
