//! What a block's RTL layer provides: its params ([`BlockParams`]), its ports declared once
//! ([`HasPorts`], with [`ports!`](crate::ports)), its generator and, for the tests, its planted
//! faults. Implemented once per block, in `hdl/src/blocks/<block>.rs` (docs/blocks.md §1).

use crate::netlist::Module;
use crate::params::BlockParams;
use crate::ports::HasPorts;

/// A block's RTL layer.
pub trait Block: BlockParams + HasPorts {
    /// The block's RTL, from validated params.
    fn build(&self) -> Module;
    /// The deliberate bugs the conformance suite must catch (docs/blocks.md §4).
    #[cfg(feature = "faults")]
    const FAULTS: &'static [crate::faults::Fault] = &[];
}
