//! A table of equal-width entries laid out for indexed reads (docs/verilog.md "Indexed
//! selects"): the net that already holds them when it can, else one packed wire.

use super::expr::array_of;
use super::{concat_wide, Expr, Module};

/// Entries `pitch` bits apart in one net, entry 0 lowest; read with [`Table::read`].
#[derive(Clone, Debug)]
pub struct Table {
    net: Expr,
    width: usize,
    pitch: usize,
}

impl Table {
    /// The table of `items` (equal widths): the net they are consecutive elements of when their
    /// width is a power of two, else a wire `name` packing them a power of two of bits apart
    /// (Yosys maps a power-of-two pitch to a plain multiplexer tree, another to a shifter).
    pub fn new(m: &mut Module, name: &str, items: &[Expr]) -> Table {
        let width = items.first().expect("a table has entries").width();
        assert!(items.iter().all(|x| x.width() == width), "unequal entries");
        let pitch = width.next_power_of_two();
        if pitch == width {
            if let Some(net) = array_of(items) {
                return Table { net, width, pitch };
            }
        }
        let pad = (pitch > width).then(|| Expr::lit(0, pitch - width));
        let parts: Vec<Expr> = items
            .iter()
            .rev()
            .flat_map(|x| pad.iter().cloned().chain([x.clone()]))
            .collect();
        let net = m.wire(name, concat_wide(&parts));
        Table { net, width, pitch }
    }

    /// Entry `index`, `default` past the last entry.
    pub fn read(&self, index: &Expr, default: &Expr) -> Expr {
        self.net.index_pitch(index, self.width, self.pitch, default)
    }
}
