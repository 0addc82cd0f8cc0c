//! The packed entry bus ([`Layout`]), an entry's fields ([`Entry`]) and the pipeline latch, shared
//! by the spec §6 sub-blocks (docs/elastic-pipeline.md §2 "Entry", §6).

use super::{Kind, Params};
use crate::netlist::{concat_wide, Expr, Module};
use crate::params::bits_for;

/// A sub-module named `ep_<stem>` followed by `parts` (everything its text depends on, so equal
/// parts give equal modules and different parts different names), spelled out as a configured
/// block's parameters are ([`crate::params::config_name`]); `key` says the same in words and
/// opens the module as a comment.
pub(super) fn sub_module(stem: &str, parts: &[Part], key: &str) -> Module {
    let mut m = Module::new(&crate::params::config_name(&format!("ep_{stem}"), parts));
    m.cites(crate::blocks::docs::ELASTIC_PIPELINE);
    m.section(key);
    m
}

/// One part of a sub-module's name: a label and its value.
pub(super) type Part = (String, serde_json::Value);

/// The [`Part`] `label` = `value`.
pub(super) fn part(label: &str, value: impl Into<serde_json::Value>) -> Part {
    (label.to_string(), value.into())
}

/// The packed entry bus: how an entry crosses a module port. Fields, least significant first:
///
/// | field  | width                | bits                                  |
/// |--------|----------------------|---------------------------------------|
/// | `tag`  | T = `tag_bits`       | `[0, T)`                              |
/// | `kind` | 2                    | `[T, T+2)`                            |
/// | `deg`  | R = lg(L+1)          | `[T+2, T+2+R)`                        |
/// | `act`  | L, lane 0 lowest     | `[T+2+R, T+2+R+L)`                    |
/// | `addr` | L × AW               | lane l at `T+2+R+L + l·AW`            |
/// | `pc`   | PCW (scheduler mode) | the top PCW bits (absent when PCW = 0) |
///
/// The layout is fixed by (T, L, AW, PCW), which [`Layout::key`] spells out for the names of the
/// sub-modules whose ports carry entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub(super) tag: usize,
    pub(super) lanes: usize,
    pub(super) addr: usize,
    pub(super) pc: usize,
}

impl Layout {
    /// The layout of `p`'s entries, with a `pcw`-bit PC when `pcw` > 0.
    pub fn of(p: &Params, pcw: usize) -> Layout {
        Layout {
            tag: p.tag_bits as usize,
            lanes: p.lanes as usize,
            addr: p.addr_bits as usize,
            pc: pcw,
        }
    }

    /// Bits of `deg` (values up to L), as [`Params::rem_bits`].
    pub fn deg(&self) -> usize {
        bits_for(self.lanes as u64)
    }

    /// EW: the bus width.
    pub fn width(&self) -> usize {
        self.tag + 2 + self.deg() + self.lanes * (1 + self.addr) + self.pc
    }

    /// The part of a sub-module's name the layout fixes: T, L, AW and (when present) PC.
    pub(super) fn parts(&self) -> Vec<Part> {
        let mut p = vec![
            part("T", self.tag),
            part("L", self.lanes),
            part("AW", self.addr),
        ];
        if self.pc > 0 {
            p.push(part("PC", self.pc));
        }
        p
    }

    /// `entry: tag T, L lanes, AW A, PC P`: the part of a sub-module key the layout fixes.
    pub(super) fn key(&self) -> String {
        let pc = if self.pc > 0 {
            format!(", PC {}", self.pc)
        } else {
            String::new()
        };
        format!(
            "entry: tag {}, {} lanes, AW {}{pc}",
            self.tag, self.lanes, self.addr
        )
    }

    /// The fields of a packed bus `bus` (a net or a slice of one), as slices.
    pub(super) fn unpack(&self, bus: &Expr) -> Entry {
        assert_eq!(bus.width(), self.width(), "entry bus width");
        let (t, r, l, aw) = (self.tag, self.deg(), self.lanes, self.addr);
        let act = t + 2 + r;
        let addr = act + l;
        Entry {
            tag: bus.slice(0, t),
            kind: bus.slice(t, 2),
            deg: bus.slice(t + 2, r),
            act: bus.slice(act, l),
            addr: (0..l).map(|k| bus.slice(addr + k * aw, aw)).collect(),
            pc: (self.pc > 0).then(|| bus.slice(addr + l * aw, self.pc)),
        }
    }
}

/// The packed bus of [`Layout`] from its fields; `addr` is most significant lane first (one
/// part per lane, or a single L·AW-bit net holding lane l at `l·AW`).
pub(super) fn pack_fields(
    tag: &Expr,
    kind: &Expr,
    deg: &Expr,
    act: &Expr,
    addr: &[Expr],
    pc: Option<&Expr>,
) -> Expr {
    let mut parts: Vec<Expr> = pc.into_iter().cloned().collect();
    parts.extend(addr.iter().cloned());
    parts.extend([act.clone(), deg.clone(), kind.clone(), tag.clone()]);
    concat_wide(&parts)
}

/// One pipeline entry's fields as nets (spec §2 "Entry"; co-simulation build, D23).
#[derive(Clone)]
pub struct Entry {
    pub tag: Expr,
    pub kind: Expr,
    /// Degree override (0 = the detector computes the degree).
    pub deg: Expr,
    pub act: Expr,
    pub addr: Vec<Expr>,
    /// The instruction's PC (scheduler mode: the history cache's key, §5.3); absent in trace
    /// mode.
    pub pc: Option<Expr>,
}

impl Entry {
    /// The entry as one packed bus (layout in [`Layout`]): the whole value assigned to a bus net
    /// such as a sub-module's entry input.
    pub fn pack(&self) -> Expr {
        let addr: Vec<Expr> = self.addr.iter().rev().cloned().collect();
        pack_fields(
            &self.tag,
            &self.kind,
            &self.deg,
            &self.act,
            &addr,
            self.pc.as_ref(),
        )
    }

    /// The fields of a packed bus net `bus` of `p`'s entries with a `pcw`-bit PC (layout in
    /// [`Layout`]).
    pub fn unpack(bus: &Expr, p: &Params, pcw: usize) -> Entry {
        Layout::of(p, pcw).unpack(bus)
    }

    pub(super) fn fields(&self) -> Vec<&Expr> {
        let mut f = vec![&self.tag, &self.kind, &self.deg, &self.act];
        f.extend(self.addr.iter());
        f.extend(self.pc.iter());
        f
    }

    /// `sel ? a : b`, field by field.
    pub(super) fn mux(sel: &Expr, a: &Entry, b: &Entry) -> Entry {
        let pick = |x: &Expr, y: &Expr| sel.mux(x, y);
        Entry {
            tag: pick(&a.tag, &b.tag),
            kind: pick(&a.kind, &b.kind),
            deg: pick(&a.deg, &b.deg),
            act: pick(&a.act, &b.act),
            addr: a
                .addr
                .iter()
                .zip(&b.addr)
                .map(|(x, y)| pick(x, y))
                .collect(),
            pc: a.pc.as_ref().zip(b.pc.as_ref()).map(|(x, y)| pick(x, y)),
        }
    }

    pub(super) fn is_alu(&self) -> Expr {
        self.kind.equals(&Expr::lit(Kind::Alu as u64, 2))
    }
}

/// The tag as the trace shows it: 0 when the latch is empty.
pub(super) fn shown_tag(valid: &Expr, tag: &Expr) -> Expr {
    valid.mux(tag, &Expr::lit(0, tag.width()))
}

/// A pipeline latch: a valid bit and an entry, all registers.
#[derive(Clone)]
pub(super) struct Latch {
    pub(super) valid: Expr,
    pub(super) e: Entry,
}

impl Latch {
    /// A latch named `stage` (registers `<stage>_<field>_q`) holding entries of `lay`.
    pub(super) fn new(m: &mut Module, lay: Layout, stage: &str) -> Latch {
        let mut reg = |field: &str, width: usize| m.reg(&format!("{stage}_{field}_q"), width, 0);
        Latch {
            valid: reg("valid", 1),
            e: Entry {
                tag: reg("tag", lay.tag),
                kind: reg("kind", 2),
                deg: reg("deg", lay.deg()),
                act: reg("act", lay.lanes),
                addr: (0..lay.lanes)
                    .map(|l| reg(&format!("addr{l}"), lay.addr))
                    .collect(),
                pc: (lay.pc > 0).then(|| reg("pc", lay.pc)),
            },
        }
    }

    /// Next state: `load ? (1, input) : (leave ? (0, held) : held)`.
    pub(super) fn update(&self, m: &mut Module, load: &Expr, input: &Entry, leave: &Expr) {
        let stay = !(load | leave);
        let valid = load | &(&self.valid & &stay);
        m.next(&self.valid, valid);
        let next = Entry::mux(load, input, &self.e);
        for (r, v) in self.e.fields().into_iter().zip(next.fields()) {
            m.next(r, v.clone());
        }
    }

    pub(super) fn shown_tag(&self) -> Expr {
        shown_tag(&self.valid, &self.e.tag)
    }
}

pub(super) fn one(x: bool) -> Expr {
    Expr::lit(x as u64, 1)
}
