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

use crate::harness::gtkw::{Radix, SaveFile, Shown, View};
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

/// A shown row: a divider or a variable.
enum Item<'a> {
    Divider(String),
    Var(&'a Shown, String),
}

impl Item<'_> {
    /// The name Surfer shows the item by in `item_focus` suggestions.
    fn name(&self) -> &str {
        match self {
            Item::Divider(n) | Item::Var(_, n) => n,
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

/// The rows of `view` in display order: a divider above each output's pair, before the inputs
/// and before the internals.
fn items(view: &View) -> Vec<Item<'_>> {
    let var = |v| Item::Var(v, v.path());
    let mut items = vec![var(&view.flag)];
    for (name, pair) in &view.outputs {
        items.push(Item::Divider(name.clone()));
        items.extend(pair.iter().map(var));
    }
    items.push(Item::Divider("inputs".into()));
    items.extend(view.inputs.iter().map(var));
    if !view.internals.is_empty() {
        items.push(Item::Divider("rtl_internals".into()));
        items.extend(view.internals.iter().map(var));
    }
    items
}

/// The command file's text for the save file `s`.
pub fn command_file(s: &SaveFile) -> String {
    let view = s.view();
    let items = items(&view);
    let mut out = String::new();
    let mut line = |l: String| {
        out += &l;
        out.push('\n');
    };
    for item in &items {
        line(match item {
            Item::Divider(n) => format!("divider_add {n}"),
            Item::Var(_, path) => format!("variable_add {path}"),
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
        if let Item::Var(v, _) = item {
            if v.width > 1 {
                line(focus(i));
                line(format!("item_set_format {}", format_name(v.radix())));
            }
        }
    }
    line("item_unfocus".into());
    if let Some(t) = s.mismatch {
        line(format!("marker_set first_mismatch {t}"));
    }
    line(format!("cursor_set {}", s.marker()));
    out
}
