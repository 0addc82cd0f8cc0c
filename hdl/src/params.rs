//! What every block's params share: `key=value` overrides through serde, typed range errors,
//! presets, and a printable description for `smrtl list`.

use serde::{de::DeserializeOwned, Serialize};
use thiserror::Error;

/// A parameter problem, phrased for a one-line CLI error.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ParamError {
    #[error("unknown parameter `{key}` for {block}; allowed: {allowed}")]
    Unknown {
        block: String,
        key: String,
        allowed: String,
    },
    #[error("parameter {name} = {value} is out of range; allowed: {allowed}")]
    Range {
        name: String,
        value: String,
        allowed: String,
    },
    #[error("bad value `{value}` for parameter {name}; allowed: {allowed}")]
    Parse {
        name: String,
        value: String,
        allowed: String,
    },
    #[error("unknown preset `{preset}` for {block}; allowed: {allowed}")]
    Preset {
        block: String,
        preset: String,
        allowed: String,
    },
}

/// One parameter as `smrtl list` shows it.
#[derive(Clone, Debug, Serialize)]
pub struct ParamInfo {
    pub name: &'static str,
    pub meaning: &'static str,
    pub allowed: String,
}

/// The contract every block's params struct meets.
pub trait BlockParams: Serialize + DeserializeOwned + Clone + Default {
    /// Block name, as on the command line and as the Verilog top module.
    const BLOCK: &'static str;
    /// Named presets (the first is the default).
    fn presets() -> Vec<(&'static str, Self)>;
    /// Parameters with meaning and allowed values.
    fn describe() -> Vec<ParamInfo>;
    /// Checks ranges and consistency; the one place a block's params are checked.
    fn validate(&self) -> Result<(), ParamError>;

    /// [`BlockParams::resolve`] with overrides as string pairs (tests, examples).
    fn resolve_pairs(preset: Option<&str>, sets: &[(&str, &str)]) -> Result<Self, ParamError> {
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Self::resolve(preset, &sets)
    }

    /// A preset (or the default) with `key=value` overrides applied, validated.
    fn resolve(preset: Option<&str>, sets: &[(String, String)]) -> Result<Self, ParamError> {
        let base = match preset {
            None => Self::default(),
            Some(name) => Self::presets()
                .into_iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, p)| p)
                .ok_or_else(|| ParamError::Preset {
                    block: Self::BLOCK.into(),
                    preset: name.into(),
                    allowed: Self::presets()
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", "),
                })?,
        };
        let mut json = serde_json::to_value(base).expect("params serialize");
        let map = json.as_object_mut().expect("params are a struct");
        for (key, value) in sets {
            let Some(field) = map.keys().find(|k| k.eq_ignore_ascii_case(key)).cloned() else {
                return Err(ParamError::Unknown {
                    block: Self::BLOCK.into(),
                    key: key.clone(),
                    allowed: map.keys().cloned().collect::<Vec<_>>().join(", "),
                });
            };
            let parsed = parse_value(value, &map[&field]);
            map.insert(field.clone(), parsed);
            // Check each override as it lands, so an error names the right parameter.
            if serde_json::from_value::<Self>(serde_json::Value::Object(map.clone())).is_err() {
                let allowed = Self::describe()
                    .into_iter()
                    .find(|i| i.name == field)
                    .map_or_else(String::new, |i| i.allowed);
                return Err(ParamError::Parse {
                    name: field,
                    value: value.clone(),
                    allowed,
                });
            }
        }
        let params: Self = serde_json::from_value(json).expect("checked above");
        params.validate()?;
        Ok(params)
    }
}

/// Reads `text` as the JSON kind of `like` (number, bool or string).
fn parse_value(text: &str, like: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match like {
        Value::Bool(_) => match text {
            "1" | "true" => Value::Bool(true),
            "0" | "false" => Value::Bool(false),
            _ => Value::String(text.into()),
        },
        Value::Number(_) => text
            .parse::<u64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::String(text.into())),
        // A structured parameter (e.g. `gmem_return={"icnt":400}`) is written as JSON.
        Value::Object(_) | Value::Array(_) => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.into()))
        }
        _ => Value::String(text.to_ascii_lowercase().replace('-', "_")),
    }
}

/// The Verilog module name of a block configuration: the block's name for its default params,
/// `<block>_<8 hex digits>` (a hash of the params) for any other, so two configurations can be
/// compiled together and a name always means one design (see `docs/verilog.md`).
pub fn module_name<P: BlockParams + PartialEq>(p: &P) -> String {
    if *p == P::default() {
        P::BLOCK.to_string()
    } else {
        let json = serde_json::to_string(p).expect("params serialize");
        format!("{}_{:08x}", P::BLOCK, fnv1a(json.as_bytes()) as u32)
    }
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
            let value = match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Bool(b) => u8::from(*b).to_string(),
                other => other.to_string(),
            };
            let arg = format!("{k}={value}");
            let plain = arg
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_=.-".contains(c));
            let arg = if plain { arg } else { format!("'{arg}'") };
            ["--set".to_string(), arg]
        })
        .collect()
}

/// Checks that `value` is one of `allowed`.
pub fn one_of<T: PartialEq + std::fmt::Display>(
    name: &str,
    value: T,
    allowed: &[T],
) -> Result<(), ParamError> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(ParamError::Range {
            name: name.into(),
            value: value.to_string(),
            allowed: allowed
                .iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }
}

/// Checks `lo <= value <= hi`.
pub fn in_range(name: &str, value: u32, lo: u32, hi: u32) -> Result<(), ParamError> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(ParamError::Range {
            name: name.into(),
            value: value.to_string(),
            allowed: format!("{lo}..={hi}"),
        })
    }
}

/// log2 of a power of two.
pub fn log2(x: u32) -> u32 {
    debug_assert!(x.is_power_of_two());
    x.trailing_zeros()
}

/// Bits needed to hold the values 0..=max.
pub fn bits_for(max: u64) -> usize {
    (64 - max.leading_zeros()).max(1) as usize
}

/// The header lines of a generated file: the full params and the command that regenerates it
/// (`output`: the file's path), wrapped at about 90 characters with shell continuations.
pub fn header_lines(block: &str, params: &serde_json::Value, output: Option<&str>) -> Vec<String> {
    let pairs: Vec<String> = params
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| match v {
                    serde_json::Value::String(s) => format!("{k}={s}"),
                    v => format!("{k}={v}"),
                })
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
