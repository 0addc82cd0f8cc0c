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

/// One parameter as `smrtl list` shows it (derived from its [`ParamDecl`]).
#[derive(Clone, Debug, Serialize)]
pub struct ParamInfo {
    pub name: &'static str,
    pub meaning: String,
    pub allowed: String,
    pub default: serde_json::Value,
}

/// The values a parameter may take, as declared once beside the field.
#[derive(Clone, Copy, Debug)]
pub enum Allowed {
    /// One of these numbers.
    OneOf(&'static [u64]),
    /// `lo..=hi`.
    Range(u64, u64),
    /// A power of two in `lo..=hi`.
    Pow2(u64, u64),
    /// `0` / `1` (or `false` / `true`).
    Bool,
    /// One of these names (an enum: serde already refuses anything else).
    Names(&'static [&'static str]),
    /// A structured value, in words; the block's [`BlockParams::check`] checks it.
    Json(&'static str),
    /// Declared by another block's params under the same name (a shared parameter).
    As(fn() -> Vec<ParamDecl>),
}

/// One parameter's declaration: the single source of its name, meaning, allowed values and
/// default, from which `smrtl list`, `--set` errors and range validation all come.
#[derive(Clone, Debug)]
pub struct ParamDecl {
    /// The name on the command line, in JSON and in the Verilog header.
    pub name: &'static str,
    /// The field's doc comment.
    pub meaning: &'static str,
    pub allowed: Allowed,
    /// A cross-parameter limit, in words (checked by [`BlockParams::check`]).
    pub note: Option<&'static str>,
    pub default: serde_json::Value,
}

impl ParamDecl {
    /// The declaration with [`Allowed::As`] resolved to the declaring block's.
    pub fn resolved(&self) -> ParamDecl {
        match self.allowed {
            Allowed::As(other) => {
                let d = other()
                    .into_iter()
                    .find(|d| d.name == self.name)
                    .unwrap_or_else(|| panic!("parameter {} is not declared there", self.name))
                    .resolved();
                ParamDecl {
                    meaning: if self.meaning.is_empty() {
                        d.meaning
                    } else {
                        self.meaning
                    },
                    note: self.note.or(d.note),
                    default: self.default.clone(),
                    ..d
                }
            }
            _ => self.clone(),
        }
    }

    /// The allowed values in words, as `smrtl list` and errors show them.
    pub fn allowed_text(&self) -> String {
        let d = self.resolved();
        let text = match d.allowed {
            Allowed::OneOf(v) => join(v.iter()),
            Allowed::Range(lo, hi) => format!("{lo}..={hi}"),
            Allowed::Pow2(lo, hi) => format!("powers of two {lo}..={hi}"),
            Allowed::Bool => "0, 1".into(),
            Allowed::Names(n) => n.join(", "),
            Allowed::Json(text) => text.into(),
            Allowed::As(_) => unreachable!("resolved"),
        };
        match d.note {
            Some(note) => format!("{text} ({note})"),
            None => text,
        }
    }

    /// Checks `value` (the parameter as serialized) against the declared values.
    pub fn check(&self, value: &serde_json::Value) -> Result<(), ParamError> {
        let d = self.resolved();
        let ok = match (d.allowed, value.as_u64()) {
            (Allowed::OneOf(v), Some(x)) => v.contains(&x),
            (Allowed::Range(lo, hi), Some(x)) => (lo..=hi).contains(&x),
            (Allowed::Pow2(lo, hi), Some(x)) => x.is_power_of_two() && (lo..=hi).contains(&x),
            (Allowed::OneOf(_) | Allowed::Range(..) | Allowed::Pow2(..), None) => false,
            _ => true,
        };
        if ok {
            Ok(())
        } else {
            Err(ParamError::Range {
                name: d.name.into(),
                value: value.to_string(),
                allowed: self.allowed_text(),
            })
        }
    }

    pub fn info(&self) -> ParamInfo {
        let d = self.resolved();
        ParamInfo {
            name: d.name,
            meaning: d
                .meaning
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .trim_end_matches('.')
                .to_string(),
            allowed: self.allowed_text(),
            default: self.default.clone(),
        }
    }
}

fn join<T: std::fmt::Display>(items: impl Iterator<Item = T>) -> String {
    items.map(|x| x.to_string()).collect::<Vec<_>>().join(", ")
}

/// The parameter declarations of a params struct (written by [`block_params!`]).
pub trait Declared {
    fn declared() -> Vec<ParamDecl>;
}

/// `P`'s declarations, as a function pointer for [`Allowed::As`].
pub fn declared_by<P: Declared>() -> Vec<ParamDecl> {
    P::declared()
}

/// Declares a block's params struct once: each field with its doc comment (the meaning), its
/// default, its name on the command line and its allowed values (and optionally a note on a
/// cross-parameter limit). Generates the serde struct, `Default` and [`Declared`];
/// [`BlockParams::validate`] checks every declared range, then the block's own
/// [`BlockParams::check`]. A leading `..field: Type;` flattens another block's params in.
///
/// ```ignore
/// block_params! {
///     /// Generator parameters.
///     #[serde(deny_unknown_fields)]
///     pub struct Params {
///         /// Lanes per access.
///         lanes: u32 = 32, "L", Allowed::OneOf(&[8, 16, 32]);
///     }
/// }
/// ```
#[macro_export]
macro_rules! block_params {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(.. $flat:ident : $flat_ty:ty ;)?
            $(
                $(#[doc = $doc:literal])*
                $field:ident : $ty:ty = $default:expr, $pname:literal, $allowed:expr $(, $note:literal)? ;
            )*
        }
    ) => {
        #[derive(Clone, Debug, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
        $(#[$meta])*
        pub struct $name {
            $(
                #[serde(flatten)]
                pub $flat: $flat_ty,
            )?
            $(
                $(#[doc = $doc])*
                #[serde(rename = $pname)]
                pub $field: $ty,
            )*
        }

        impl Default for $name {
            fn default() -> Self {
                $name {
                    $($flat: <$flat_ty>::default(),)?
                    $($field: $default,)*
                }
            }
        }

        impl $crate::params::Declared for $name {
            fn declared() -> Vec<$crate::params::ParamDecl> {
                #[allow(unused_mut)]
                let mut v: Vec<$crate::params::ParamDecl> = vec![];
                $(v.extend(<$flat_ty as $crate::params::Declared>::declared());)?
                let d = <$name as Default>::default();
                $(
                    v.retain(|x| x.name != $pname);
                    v.push($crate::params::ParamDecl {
                        name: $pname,
                        meaning: concat!($($doc, " "),*),
                        allowed: $allowed,
                        note: None $(.or(Some($note)))?,
                        default: ::serde_json::to_value(&d.$field).expect("params serialize"),
                    });
                )*
                v
            }
        }
    };
}

/// The contract every block's params struct meets (declared with [`block_params!`]).
pub trait BlockParams: Serialize + DeserializeOwned + Clone + Default + Declared {
    /// Block name, as on the command line and as the Verilog top module.
    const BLOCK: &'static str;
    /// Named presets (the first is the default).
    fn presets() -> Vec<(&'static str, Self)>;

    /// Cross-parameter limits beyond the declared ranges (e.g. A ≥ log2(B·W) + 1).
    fn check(&self) -> Result<(), ParamError> {
        Ok(())
    }

    /// Parameters with meaning and allowed values, from the declarations.
    fn describe() -> Vec<ParamInfo> {
        Self::declared().iter().map(ParamDecl::info).collect()
    }

    /// Checks every declared range, then [`BlockParams::check`]: the one place a block's params
    /// are checked.
    fn validate(&self) -> Result<(), ParamError> {
        let json = serde_json::to_value(self).expect("params serialize");
        for d in Self::declared() {
            d.check(&json[d.name])?;
        }
        self.check()
    }

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
