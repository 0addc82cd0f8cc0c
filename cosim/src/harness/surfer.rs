//! Surfer command files (`.sucl`) beside GTKWave's save files, so a dump opens ready to read
//! in Surfer too (docs/cli.md "Waveforms"): `surfer OUT.vcd --command-file OUT.sucl`. The layout
//! is the `.gtkw`'s ([`SaveFile`]): the `mismatch` flag (yellow) first, each compared output as a
//! `model.x` / `rtl.x` pair under a divider named after it, the inputs, the RTL internals, the
//! radix per signal, the cursor and a `first_mismatch` marker on the first mismatch.
//!
//! A command file is one Surfer command a line, each parsed against the view as it stands after
//! the lines before it, with no comments. `variable_add` takes a variable's full hierarchical
//! path (scopes and name joined by dots, no bit range); `item_focus` takes a shown item as
//! `<index>_<path>`, the index in Surfer's letters (`a`..`p` for the hex digits of the item's
//! row, zero-padded to the digits of the item count), so formats and colours are set after every
//! item is added, when the count is final.

use crate::harness::gtkw::{Radix, SaveFile};
use std::path::{Path, PathBuf};

/// Surfer's colour for the mismatch flag (a key of its default theme's `[colors]`).
const FLAG_COLOR: &str = "Yellow";

/// The command file's path for a VCD at `vcd`: the same path with extension `.sucl`.
pub fn command_path(vcd: &Path) -> PathBuf {
    vcd.with_extension("sucl")
}

/// Surfer's name of a radix (its translators' names).
fn format_name(radix: Radix) -> &'static str {
    match radix {
        Radix::Bin => "Binary",
        Radix::Dec => "Unsigned",
        Radix::Hex => "Hexadecimal",
    }
}

/// A shown row: a divider or a variable with the radix it is shown in.
enum Item {
    Divider(String),
    Var {
        path: String,
        width: usize,
        radix: Radix,
    },
}

impl Item {
    fn var(scope: &str, name: &str, width: usize) -> Item {
        Item::Var {
            path: format!("{scope}.{name}"),
            width,
            radix: Radix::of(name, width),
        }
    }

    /// The name Surfer shows the item by in `item_focus` suggestions.
    fn name(&self) -> &str {
        match self {
            Item::Divider(n) | Item::Var { path: n, .. } => n,
        }
    }
}

/// Surfer's letters for row `idx` of `count` items (`uint_idx_to_alpha_idx`).
pub fn alpha_index(idx: usize, count: usize) -> String {
    let digits = count.max(1).ilog(16) as usize + 1;
    format!("{idx:0digits$x}")
        .chars()
        .map(|c| {
            let d = c.to_digit(16).expect("a hex digit") as u8;
            (b'a' + d) as char
        })
        .collect()
}

/// The rows of `s` in display order, as the `.gtkw` lists them.
fn items(s: &SaveFile) -> Vec<Item> {
    let top = &s.top;
    let mut v = vec![Item::var(top, "mismatch", 1)];
    let scopes: &[&str] = if s.rtl { &["model", "rtl"] } else { &["model"] };
    for (name, width) in &s.outputs {
        v.push(Item::Divider(name.clone()));
        for scope in scopes {
            v.push(Item::var(&format!("{top}.{scope}"), name, *width));
        }
    }
    v.push(Item::Divider("inputs".into()));
    v.push(Item::var(top, "clock", 1));
    for (name, width) in &s.inputs {
        v.push(Item::var(&format!("{top}.stim"), name, *width));
    }
    if !s.internals.is_empty() {
        v.push(Item::Divider("rtl_internals".into()));
        for (path, width) in &s.internals {
            v.push(Item::var(&format!("{top}.rtl"), path, *width));
        }
    }
    v
}

/// The command file's text for the save file `s`.
pub fn command_file(s: &SaveFile) -> String {
    let items = items(s);
    let mut out = String::new();
    let mut line = |l: String| {
        out += &l;
        out.push('\n');
    };
    for item in &items {
        line(match item {
            Item::Divider(n) => format!("divider_add {n}"),
            Item::Var { path, .. } => format!("variable_add {path}"),
        });
    }
    let focus = |i: usize| {
        format!(
            "item_focus {}_{}",
            alpha_index(i, items.len()),
            items[i].name()
        )
    };
    line(focus(0));
    line(format!("item_set_color {FLAG_COLOR}"));
    for (i, item) in items.iter().enumerate() {
        // One-bit variables keep Surfer's own `Bit` format.
        if let Item::Var {
            width: 2.., radix, ..
        } = item
        {
            line(focus(i));
            line(format!("item_set_format {}", format_name(*radix)));
        }
    }
    line("item_unfocus".into());
    if let Some(t) = s.mismatch {
        line(format!("marker_set first_mismatch {t}"));
    }
    line(format!("cursor_set {}", s.marker()));
    out
}
