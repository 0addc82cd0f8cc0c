//! Text tables for `smrtl list`: wrapped cells, aligned columns, and the parameter table every
//! block and system shows (name, default, allowed values, meaning), from its declarations.

use smrtl_hdl::params::value_text;
use smrtl_hdl::ParamInfo;

/// Widths the long cells of `smrtl list` wrap at (a cell with a longer word is wider).
pub const ALLOWED_WIDTH: usize = 46;
pub const MEANING_WIDTH: usize = 52;
pub const PRESET_WIDTH: usize = 96;

/// `text` in lines of at most `width` characters, broken at spaces but never inside a
/// `--set KEY=VALUE` example (a longer word gets a line of its own).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut words: Vec<String> = vec![];
    for w in text.split_whitespace() {
        match words.last_mut() {
            Some(last) if last.ends_with("--set") => *last += &format!(" {w}"),
            _ => words.push(w.to_string()),
        }
    }
    let lines = wrap_words(&words, width);
    if lines.is_empty() {
        vec![String::new()]
    } else {
        lines
    }
}

pub fn wrap_words(words: &[String], width: usize) -> Vec<String> {
    let mut lines: Vec<String> = vec![];
    let mut line = String::new();
    for w in words {
        if !line.is_empty() && line.chars().count() + 1 + w.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Rows of multi-line cells as aligned text lines: each column as wide as its widest line,
/// two spaces between columns, the last column unpadded.
pub fn table<const N: usize>(rows: &[[Vec<String>; N]]) -> Vec<String> {
    let width = |c: usize| {
        rows.iter()
            .flat_map(|r| r[c].iter())
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..N).map(width).collect();
    let mut out = vec![];
    for row in rows {
        let height = row.iter().map(Vec::len).max().unwrap_or(1);
        for i in 0..height {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                let text = cell.get(i).map_or("", String::as_str);
                if c + 1 < N {
                    let pad = widths[c] - text.chars().count();
                    line += &format!("{text}{}  ", " ".repeat(pad));
                } else {
                    line += text;
                }
            }
            out.push(line.trim_end().to_string());
        }
    }
    out
}

/// The parameter table of `params`: a header, then one row per parameter (the allowed values,
/// then the note on lines of its own), unindented.
pub fn params_table(params: &[ParamInfo]) -> Vec<String> {
    let mut rows = vec![[
        vec!["name".to_string()],
        vec!["default".to_string()],
        vec!["allowed".to_string()],
        vec!["meaning".to_string()],
    ]];
    for p in params {
        let mut allowed = wrap(&p.values, ALLOWED_WIDTH);
        if let Some(note) = p.note {
            allowed.extend(wrap(&format!("({note})"), ALLOWED_WIDTH));
        }
        rows.push([
            vec![p.name.to_string()],
            vec![value_text(&p.default)],
            allowed,
            wrap(&p.meaning, MEANING_WIDTH),
        ]);
    }
    table(&rows)
}
