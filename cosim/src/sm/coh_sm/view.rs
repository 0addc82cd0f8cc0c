//! What a stall probe needs of one SM in one cycle (docs/stall-inspector.md §10.5; spec §3.1–
//! §3.2): each warp slot's predicates from the state the issue logic used, the load
//! writebacks with their §2.5 source, and the instructions issued. Plain data, independent of
//! the probe's API (`probe.rs` converts).

/// §2.5 sources a response carries (the inspector's `src` codes).
pub mod src {
    pub const L1: u8 = 0;
    pub const L1_COAL: u8 = 1;
    pub const L2: u8 = 2;
    pub const REMOTE_L1: u8 = 3;
    pub const MAIN_MEM: u8 = 4;
    pub const LOCAL_SPM: u8 = 5;
}

/// §2.6 LSU block reasons (the inspector's `ms_reason` codes).
pub mod reason {
    pub const NONE: u8 = 0;
    pub const MSHR_FULL: u8 = 1;
    pub const SB_FULL: u8 = 2;
    pub const BANK_CONFLICT: u8 = 3;
    pub const PENDING_RELEASE: u8 = 4;
    pub const PENDING_DMA: u8 = 5;
    pub const OTHER: u8 = 6;
}

/// One warp slot in one cycle: the §4.2 predicates, taken where the issue logic reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WarpView {
    /// Launched and not exited.
    pub active: bool,
    /// The next instruction is available (always, no instruction fetch is modelled).
    pub inst_avail: bool,
    /// Waiting at an acquire, a release flush, a barrier or an atomic (spec D6).
    pub sync_wait: bool,
    /// The head reads or writes a register of a pending load (spec D7); without a head,
    /// loads still pending.
    pub haz_load: bool,
    /// The head depends on a pending compute result.
    pub haz_comp: bool,
    /// The head is a memory instruction (goes through the LSU input register).
    pub is_mem: bool,
    /// A memory head the LSU cannot take this cycle; its reason in `ms_reason`.
    pub ms_block: bool,
    /// A compute head whose pipe is busy.
    pub fu_block: bool,
    /// The §2.6 reason when `ms_block` ([`reason`]).
    pub ms_reason: u8,
}

/// A load writeback: a register released, with the source of the part that released it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wb {
    pub warp: usize,
    /// §2.5 source ([`src`]).
    pub src: u8,
    /// Releasing it clears the warp's load hazard of the cycle (spec §3.2 step 3).
    pub is_final: bool,
}

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
