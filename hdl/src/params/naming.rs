//! Names of a block configuration: Verilog module names, the `--set` arguments that
//! reproduce params, and the header lines of a generated file (docs/verilog.md "Names").

use super::*;

/// The most characters of parameters a module name spells out (after its stem); a longer list
/// is replaced by a hash (docs/verilog.md "Names").
pub const NAME_PARTS_MAX: usize = 40;

/// The Verilog module name of a block configuration: the block's name for its default params,
/// else the block's name followed by each parameter that differs from the default as
/// `_<KEY><value>` (`bank_conflict_detector_A14_B8_L8_W4`), or by `_h<8 hex digits>` (a hash of
/// the params) where that list passes [`NAME_PARTS_MAX`] characters. Two configurations can be
/// compiled together and a name always means one design (docs/verilog.md "Names").
pub fn module_name<P: BlockParams + PartialEq>(p: &P) -> String {
    if *p == P::default() {
        return P::BLOCK.to_string();
    }
    let (v, d) = (
        serde_json::to_value(p).expect("params serialize"),
        serde_json::to_value(P::default()).expect("params serialize"),
    );
    let parts: Vec<(String, Value)> = v
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, x)| d.get(k.as_str()) != Some(*x))
        .map(|(k, x)| (k.clone(), x.clone()))
        .collect();
    config_name(P::BLOCK, &parts)
}

/// `stem` followed by `_<KEY><value>` for each of `parts` in order (booleans as 1 / 0, text in
/// lower case without its separators), or by `_h<8 hex digits>` (a hash of the parts as JSON)
/// where that would pass [`NAME_PARTS_MAX`] characters or a value has no such spelling. Names
/// of configured modules and of the shape-keyed parts of a block (docs/verilog.md "Names").
pub fn config_name(stem: &str, parts: &[(String, Value)]) -> String {
    let spelled: Option<Vec<String>> = parts
        .iter()
        .map(|(k, v)| name_value(v).map(|v| format!("{k}{v}")))
        .collect();
    match spelled.map(|s| s.join("_")) {
        Some(s) if s.is_empty() => stem.to_string(),
        Some(s) if s.len() <= NAME_PARTS_MAX => format!("{stem}_{s}"),
        _ => {
            let json = serde_json::to_string(parts).expect("parts serialize");
            format!("{stem}_h{:08x}", fnv1a(json.as_bytes()) as u32)
        }
    }
}

/// A parameter value as a module name spells it, if it can: digits, 1 / 0, or lower-case letters
/// and digits.
fn name_value(v: &Value) -> Option<String> {
    let s = match v {
        Value::Bool(b) => u8::from(*b).to_string(),
        Value::Number(n) => n.to_string().replace('-', "m").replace('.', "p"),
        Value::String(s) => s
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase(),
        _ => return None,
    };
    (!s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric())).then_some(s)
}

/// 64-bit FNV-1a: a stable hash (unlike `std`'s, it never changes between releases).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The `--set KEY=VALUE` arguments that reproduce `params` exactly (every parameter, in the
/// order of the serialized struct), shell-quoted where needed.
pub fn set_args(params: &serde_json::Value) -> Vec<String> {
    let Some(map) = params.as_object() else {
        return vec![];
    };
    map.iter()
        .flat_map(|(k, v)| {
            let arg = format!("{k}={}", value_text(v));
            let plain = arg
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_=.-".contains(c));
            let arg = if plain { arg } else { format!("'{arg}'") };
            ["--set".to_string(), arg]
        })
        .collect()
}

/// The header lines of a generated file: the full params and the command that regenerates it
/// (`output`: the file's path), wrapped at about 90 characters with shell continuations.
pub fn header_lines(block: &str, params: &serde_json::Value, output: Option<&str>) -> Vec<String> {
    let pairs: Vec<String> = params
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", value_text(v)))
                .collect()
        })
        .unwrap_or_default();
    let mut lines = vec!["params:".to_string()];
    lines.extend(wrap_words(&pairs, "  ", 90));
    lines.push("regenerate with:".to_string());
    let mut words = vec![format!("smrtl gen {block}")];
    let sets = set_args(params);
    words.extend(sets.chunks(2).map(|c| c.join(" ")));
    if let Some(out) = output {
        words.push(format!("-o {out}"));
    }
    let cmd = wrap_words(&words, "  ", 88);
    let n = cmd.len();
    lines.extend(
        cmd.into_iter()
            .enumerate()
            .map(|(i, l)| if i + 1 < n { format!("{l} \\") } else { l }),
    );
    lines
}

/// `words` joined by spaces into lines of at most `width` characters, each starting with `indent`.
fn wrap_words(words: &[String], indent: &str, width: usize) -> Vec<String> {
    let mut lines = vec![];
    let mut line = String::new();
    for w in words {
        if !line.is_empty() && line.len() + 1 + w.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if line.is_empty() {
            line.push_str(indent);
        } else {
            line.push(' ');
        }
        line.push_str(w);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}
