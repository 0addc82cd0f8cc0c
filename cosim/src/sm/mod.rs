//! SM-level models that are systems of their own (the seed-004 memory pipeline).

pub mod elastic_sm;
pub mod mem_sm;
pub mod sharing_sm;
