//! What a stall probe needs of one SM in one cycle (docs/stall-inspector.md §10.5; spec §3.1–
//! §3.2): each warp slot's predicates from the state the issue logic used, the load
//! writebacks with their §2.5 source, and the instructions issued. The inspector's own types
//! (`probe.rs` steps the inspector with them).

use crate::blocks::stall_inspector as gsi;

/// §2.5 sources a response carries: the inspector's `src` codes, as the model stores them.
pub mod src {
    use super::gsi::src;
    pub const L1: u8 = src::L1 as u8;
    pub const L1_COAL: u8 = src::L1_COAL as u8;
    pub const L2: u8 = src::L2 as u8;
    pub const REMOTE_L1: u8 = src::REMOTE_L1 as u8;
    pub const MAIN_MEM: u8 = src::MAIN_MEM as u8;
    pub const LOCAL_SPM: u8 = src::LOCAL_SPM as u8;
}

/// §2.6 LSU block reasons: the inspector's `ms_reason` codes, as the model stores them.
pub mod reason {
    use super::gsi::reason;
    pub const NONE: u8 = reason::NONE as u8;
    pub const MSHR_FULL: u8 = reason::MSHR_FULL as u8;
    pub const SB_FULL: u8 = reason::SB_FULL as u8;
    pub const BANK_CONFLICT: u8 = reason::BANK_CONFLICT as u8;
    pub const PENDING_RELEASE: u8 = reason::PENDING_RELEASE as u8;
    pub const PENDING_DMA: u8 = reason::PENDING_DMA as u8;
    pub const OTHER: u8 = reason::OTHER as u8;
}

/// One warp slot in one cycle: the §4.2 predicates, taken where the issue logic reads them
/// (`sync_wait`: an acquire, a release flush, a barrier or an atomic, spec D6; `haz_load`: the
/// head reads or writes a register of a pending load, D7, or without a head loads still
/// pending; `inst_avail` but during a taken branch's fetch redirect, docs §10.4: CONTROL).
pub type WarpView = gsi::WarpPreds;

/// A load writeback: a register released, with the §2.5 source of the part that released it.
pub type Wb = gsi::Writeback;

/// One SM's cycle, as the probe reads it.
#[derive(Clone, Debug, Default)]
pub struct SmView {
    /// One entry per warp slot.
    pub warps: Vec<WarpView>,
    /// This cycle's load writebacks (a register released per entry).
    pub wbs: Vec<Wb>,
    /// Instructions issued (0 or 1).
    pub issued: u8,
}
