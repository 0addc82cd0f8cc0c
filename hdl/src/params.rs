//! What every block's params share: `key=value` overrides through serde, typed range errors,
//! presets, and a printable description for `smrtl list`.

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

mod naming;
pub use naming::*;

/// A parameter problem, phrased for a one-line CLI error.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ParamError {
    #[error("unknown parameter `{}` for {block}; allowed: {allowed}", shown(.key))]
    Unknown {
        block: String,
        key: String,
        allowed: String,
    },
    #[error("parameter {name} = {} is out of range; allowed: {allowed}", shown(.value))]
    Range {
        name: String,
        value: String,
        allowed: String,
    },
    /// A number that is not a non-negative integer in plain digits (`2.5`, `1e3`, `-0`).
    #[error(
        "parameter {name} = {} is not an integer in plain digits; allowed: {allowed}",
        shown(.value)
    )]
    NotDigits {
        name: String,
        value: String,
        allowed: String,
    },
    #[error("bad value `{}` for parameter {name}; allowed: {allowed}", shown(.value))]
    Parse {
        name: String,
        value: String,
        allowed: String,
    },
    #[error("unknown preset `{}` for {block}; allowed: {allowed}", shown(.preset))]
    Preset {
        block: String,
        preset: String,
        allowed: String,
    },
}

/// `text` as a message echoes it: as written, but control characters escaped (`\r` for a
/// carriage return), so an error stays one line.
pub fn shown(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// One parameter as `smrtl list` shows it (derived from its [`ParamDecl`]).
#[derive(Clone, Debug, Serialize)]
pub struct ParamInfo {
    pub name: &'static str,
    pub meaning: String,
    /// The allowed values with the note: "VALUES (NOTE)".
    pub allowed: String,
    pub default: serde_json::Value,
    /// The allowed values alone.
    #[serde(skip)]
    pub values: String,
    /// A cross-parameter limit or the literal `--set` form, in words.
    #[serde(skip)]
    pub note: Option<&'static str>,
    /// The GPGPU-Sim quantity the parameter is, if any (`--gpgpusim-config`).
    #[serde(skip)]
    pub gpgpusim: Option<Gpgpusim>,
    /// The allowed values as declared.
    #[serde(skip)]
    pub kind: Allowed,
}

impl ParamInfo {
    /// Whether `text` (a value as `--set` takes it) is one of the declared values; a
    /// structured value is left to the block's own check.
    /// `v` as the command line spells it: a name as declared (`gpgpusim-limited`, where the
    /// serialized value is `gpgpusim_limited`), anything else as [`value_text`] writes it.
    pub fn shown_value(&self, v: &serde_json::Value) -> String {
        let text = value_text(v);
        match self.kind {
            Allowed::Names(names) => names
                .iter()
                .find(|n| n.replace('-', "_") == text)
                .map_or(text, |n| n.to_string()),
            _ => text,
        }
    }

    pub fn admits(&self, text: &str) -> bool {
        match self.kind {
            Allowed::Bool => matches!(text, "false" | "true"),
            Allowed::Names(n) => n.contains(&text),
            kind => kind.admits_number(text.parse().ok()),
        }
    }

    /// The largest declared number, if the values are numbers.
    pub fn max(&self) -> Option<u64> {
        match self.kind {
            Allowed::OneOf(v) => v.iter().copied().max(),
            Allowed::Range(_, hi) | Allowed::Pow2(_, hi) => Some(hi),
            _ => None,
        }
    }
}

/// The GPGPU-Sim quantity a parameter is (docs/gpgpusim.md): `--gpgpusim-config FILE` sets
/// every parameter so tagged from the knobs that give the quantity. Declared beside the
/// parameter (`=> Gpgpusim::ShmemBanks` in [`block_params!`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gpgpusim {
    /// Shared-memory banks (`-gpgpu_shmem_num_banks`).
    ShmemBanks,
    /// Bytes per bank word (GPGPU-Sim's built-in `WORD_SIZE`, 4).
    ShmemBankBytes,
    /// The broadcast rule as a mode name (`-gpgpu_shmem_limited_broadcast`).
    Broadcast,
    /// Lanes per shared-memory access: warp size / `-gpgpu_shmem_warp_parts`.
    LanesPerAccess,
    /// Parts of a warp's shared-memory access (`-gpgpu_shmem_warp_parts`).
    WarpParts,
    /// Threads per warp (`-gpgpu_shader_core_pipeline`'s second field).
    WarpSize,
    /// Warp slots per SM: threads per SM / warp size.
    WarpSlots,
    /// Threads per SM (`-gpgpu_shader_core_pipeline`'s first field).
    ThreadsPerSm,
    /// Thread-block slots per SM (`-gpgpu_shader_cta`).
    TbSlots,
    /// 32-bit registers per SM (`-gpgpu_shader_registers`).
    Registers,
    /// Shared-memory bytes per SM (`-gpgpu_shmem_size`).
    ShmemBytes,
    /// Warp schedulers per SM (`-gpgpu_num_sched_per_core`).
    Schedulers,
    /// Instructions an SM issues per cycle: schedulers × `-gpgpu_max_insn_issue_per_warp`.
    IssueSlots,
    /// The warp scheduler's policy as a name (`-gpgpu_scheduler`).
    Scheduler,
    /// Active warps of `two_level_active:N` (`-gpgpu_scheduler`).
    TwoLevelActive,
    /// L1D sets, ways, set-index function, MSHR entries, merges per MSHR and miss-queue
    /// entries (`-gpgpu_cache:dl1`).
    L1dSets,
    L1dWays,
    L1dSetIndex,
    L1dMshrs,
    L1dMerge,
    L1dMissQueue,
    /// L1 banks (`-gpgpu_l1_banks`).
    L1Banks,
    /// Kernels an SM runs at once: 1 unless `-gpgpu_concurrent_kernel_sm`, then
    /// `-gpgpu_max_concurrent_kernel` up to the parameter's largest value.
    KernelSlots,
    /// SMs: `-gpgpu_n_clusters` × `-gpgpu_n_cores_per_cluster`.
    Sms,
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
    /// `false` / `true` (`--set` also takes `0` / `1`).
    Bool,
    /// One of these names (an enum: serde already refuses anything else).
    Names(&'static [&'static str]),
    /// A structured value, in words, each form as `--set` takes it (JSON for an object); the
    /// block's [`BlockParams::check`] checks it. Give the literal `--set` example as the note.
    Json(&'static str),
    /// Declared by another block's params under the same name (a shared parameter).
    As(fn() -> Vec<ParamDecl>),
}

impl Allowed {
    /// Whether a number `x` (`None`: not a non-negative integer) is among the declared numbers;
    /// values that are not numbers are the other kinds' to judge (serde or the block's check),
    /// so those kinds admit anything here.
    pub fn admits_number(self, x: Option<u64>) -> bool {
        match (self, x) {
            (Allowed::OneOf(v), Some(x)) => v.contains(&x),
            (Allowed::Range(lo, hi), Some(x)) => (lo..=hi).contains(&x),
            (Allowed::Pow2(lo, hi), Some(x)) => x.is_power_of_two() && (lo..=hi).contains(&x),
            (Allowed::OneOf(_) | Allowed::Range(..) | Allowed::Pow2(..), None) => false,
            _ => true,
        }
    }
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
    /// A cross-parameter limit (checked by [`BlockParams::check`]) or the literal `--set` form
    /// of a structured value, in words.
    pub note: Option<&'static str>,
    pub default: serde_json::Value,
    /// The GPGPU-Sim quantity it is, if any.
    pub gpgpusim: Option<Gpgpusim>,
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
                    gpgpusim: self.gpgpusim.or(d.gpgpusim),
                    ..d
                }
            }
            _ => self.clone(),
        }
    }

    /// The allowed values and the note in words, as errors show them.
    pub fn allowed_text(&self) -> String {
        let d = self.resolved();
        let text = self.values_text();
        match d.note {
            Some(note) => format!("{text} ({note})"),
            None => text,
        }
    }

    /// The allowed values in words, without the note.
    pub fn values_text(&self) -> String {
        let d = self.resolved();
        match d.allowed {
            Allowed::OneOf(v) => join(v.iter()),
            Allowed::Range(lo, hi) => format!("{lo}..={hi}"),
            Allowed::Pow2(lo, hi) => format!("powers of two {lo}..={hi}"),
            Allowed::Bool => "false, true".into(),
            Allowed::Names(n) => n.join(", "),
            Allowed::Json(text) => text.into(),
            Allowed::As(_) => unreachable!("resolved"),
        }
    }

    /// Checks `value` (the parameter as serialized) against the declared values.
    pub fn check(&self, value: &serde_json::Value) -> Result<(), ParamError> {
        let d = self.resolved();
        if d.allowed.admits_number(value.as_u64()) {
            Ok(())
        } else {
            Err(ParamError::Range {
                name: d.name.into(),
                value: value.to_string(),
                allowed: self.allowed_text(),
            })
        }
    }

    /// Whether the parameter is a number (its values are `OneOf`, `Range` or `Pow2`).
    pub fn is_numeric(&self) -> bool {
        matches!(
            self.resolved().allowed,
            Allowed::OneOf(_) | Allowed::Range(..) | Allowed::Pow2(..)
        )
    }

    /// The error for `written` (the value exactly as the user wrote it), a value of this
    /// parameter that does not even have its type: a number out of range, a number not in
    /// plain digits, or a bad value.
    pub fn bad_value(&self, written: &str) -> ParamError {
        let (name, value, allowed) = (
            self.name.to_string(),
            written.to_string(),
            self.allowed_text(),
        );
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        if self.is_numeric() && looks_numeric(written) {
            match written.strip_prefix('-') {
                Some(rest) if digits(rest) && rest.bytes().any(|b| b != b'0') => {
                    ParamError::Range {
                        name,
                        value,
                        allowed,
                    }
                }
                None if digits(written) => ParamError::Range {
                    name,
                    value,
                    allowed,
                },
                _ => ParamError::NotDigits {
                    name,
                    value,
                    allowed,
                },
            }
        } else {
            ParamError::Parse {
                name,
                value,
                allowed,
            }
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
            values: self.values_text(),
            note: d.note,
            gpgpusim: d.gpgpusim,
            kind: d.allowed,
        }
    }
}

fn join<T: std::fmt::Display>(items: impl Iterator<Item = T>) -> String {
    items.map(|x| x.to_string()).collect::<Vec<_>>().join(", ")
}

/// Whether `text` is a number of some spelling (`12`, `-3`, `2.5`, `1e3`, `-0`), not a word
/// such as `inf`.
fn looks_numeric(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_digit() || "+-.".contains(c))
        && text.parse::<f64>().is_ok()
}

/// A parameter value as `--set` takes it and as `smrtl list`, presets and file headers show
/// it: a name or number as is, `false` / `true`, a structured value as compact JSON
/// (`{"icnt":400}`). Numbers keep the spelling they were read with.
pub fn value_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The error, as text, for `value` of parameter `name` of `P`, a value that does not
/// deserialize, echoed as written (see [`ParamDecl::bad_value`]).
fn bad_value_of<P: Declared>(name: &str, value: &serde_json::Value) -> String {
    let written = value_text(value);
    match P::declared().iter().find(|d| d.name == name) {
        Some(d) => d.bad_value(&written).to_string(),
        None => format!("bad value `{written}` for parameter {name}"),
    }
}

/// The allowed values of parameter `name` of `P`, as `smrtl list` shows them (for a block's
/// own [`BlockParams::check`] errors).
pub fn allowed_of<P: Declared>(name: &str) -> String {
    P::declared()
        .iter()
        .find(|d| d.name == name)
        .map_or_else(String::new, ParamDecl::allowed_text)
}

/// Reads a params struct's entries (only `fields`, when the struct is flattened into another)
/// as a JSON object; a parameter given twice is an error.
#[doc(hidden)]
pub struct ParamsVisitor;

impl<'de> serde::de::Visitor<'de> for ParamsVisitor {
    type Value = serde_json::Map<String, serde_json::Value>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object of parameters")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let mut map = serde_json::Map::new();
        while let Some(k) = a.next_key::<String>()? {
            let v = a.next_value::<AnyValue>()?.0;
            if map.contains_key(&k) {
                return Err(serde::de::Error::custom(format!(
                    "parameter {} is given twice; give it once",
                    shown(&k)
                )));
            }
            map.insert(k, v);
        }
        Ok(map)
    }
}

/// A JSON value read from any deserializer, integers beyond 64 bits included (`Value` itself,
/// read from a `Value` with `arbitrary_precision`, rejects those).
struct AnyValue(serde_json::Value);

impl<'de> Deserialize<'de> for AnyValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(AnyValueVisitor).map(AnyValue)
    }
}

struct AnyValueVisitor;

impl<'de> serde::de::Visitor<'de> for AnyValueVisitor {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
        // A JSON number is passed as a u64 when it is one, so an i64 zero was written `-0`.
        if v == 0 {
            return serde_json::from_str("-0").map_err(E::custom);
        }
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<Self::Value, E> {
        serde_json::from_str(&v.to_string()).map_err(E::custom)
    }
    fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Self::Value, E> {
        serde_json::from_str(&v.to_string()).map_err(E::custom)
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        AnyValue::deserialize(d).map(|v| v.0)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let mut items = vec![];
        while let Some(v) = a.next_element::<AnyValue>()? {
            items.push(v.0);
        }
        Ok(items.into())
    }
    /// An object, or a number as `arbitrary_precision` passes it: a one-entry map of its text
    /// under serde_json's private key.
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        const NUMBER_TOKEN: &str = "$serde_json::private::Number";
        let mut map = serde_json::Map::new();
        while let Some(k) = a.next_key::<String>()? {
            if k == NUMBER_TOKEN && map.is_empty() {
                let text = a.next_value::<String>()?;
                return serde_json::from_str(&text).map_err(serde::de::Error::custom);
            }
            let v = a.next_value::<AnyValue>()?.0;
            map.insert(k, v);
        }
        Ok(map.into())
    }
}

/// Deserializes params of `P` from `map` with `derived` (serde's derived code); when that
/// fails, the error names the first parameter whose value `fits` rejects, with the value as
/// written and the allowed values (see [`ParamDecl::bad_value`]).
#[doc(hidden)]
pub fn deserialize_params<P: Declared, E: serde::de::Error>(
    map: serde_json::Map<String, serde_json::Value>,
    derived: impl FnOnce(serde_json::Value) -> Result<P, serde_json::Error>,
    fits: &[(&str, Fits)],
) -> Result<P, E> {
    // Only a u64 in plain digits can be a parameter's value: `-3`, `-0`, `2.5`, `1e3` and
    // integers beyond 64 bits are errors as written (serde would read `-0` as 0, and its
    // buffering for a flattened struct cannot even hold the long ones).
    let odd = |v: &serde_json::Value| v.as_number().is_some_and(|n| n.as_u64().is_none());
    if let Some((name, v)) = map
        .iter()
        .find(|(name, v)| odd(v) && P::declared().iter().any(|d| d.name == name.as_str()))
    {
        return Err(E::custom(bad_value_of::<P>(name, v)));
    }
    let value = serde_json::Value::Object(map);
    derived(value.clone()).map_err(|e| {
        let bad = fits
            .iter()
            .find_map(|(name, fits)| value.get(*name).filter(|v| !fits(v)).map(|v| (name, v)));
        match bad {
            Some((name, v)) => E::custom(bad_value_of::<P>(name, v)),
            None => E::custom(shown(&e.to_string())),
        }
    })
}

/// A parameter's [`fits`] check.
#[doc(hidden)]
pub type Fits = fn(&serde_json::Value) -> bool;

/// Whether `v` deserializes as a `T` (for [`deserialize_params`]).
#[doc(hidden)]
pub fn fits<T: DeserializeOwned>(v: &serde_json::Value) -> bool {
    T::deserialize(v).is_ok()
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
/// cross-parameter limit, and after `=>` the [`Gpgpusim`] quantity it is). Generates the serde
/// struct, `Default` and [`Declared`]; [`BlockParams::validate`] checks every declared range,
/// then the block's own [`BlockParams::check`]. A leading `..field: Type;` flattens another
/// block's params in.
///
/// ```ignore
/// block_params! {
///     /// Generator parameters.
///     #[serde(deny_unknown_fields)]
///     pub struct Params {
///         /// Lanes per access.
///         lanes: u32 = 32, "L", Allowed::OneOf(&[8, 16, 32]) => Gpgpusim::LanesPerAccess;
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
                $field:ident : $ty:ty = $default:expr, $pname:literal, $allowed:expr $(, $note:literal)? $(=> $gpu:expr)? ;
            )*
        }
    ) => {
        // `remote = "Self"`: serde derives the code as inherent functions, which the trait
        // impls below call (deserialization names the parameter a bad value belongs to).
        #[derive(Clone, Debug, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(remote = "Self")]
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

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                $name::serialize(self, s)
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            /// The derived deserialization, with errors that name the parameter, its value as
            /// written and the allowed values. Flattened into another struct, it takes only its
            /// own fields.
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let map = d.deserialize_struct(
                    stringify!($name),
                    &[$($pname),*],
                    $crate::params::ParamsVisitor,
                )?;
                $crate::params::deserialize_params::<Self, D::Error>(
                    map,
                    |v| $name::deserialize(v),
                    &[$(($pname, $crate::params::fits::<$ty>)),*],
                )
            }
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
                        gpgpusim: None $(.or(Some($gpu)))?,
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
        // Each override: its parameter, its text as written and the value read from it.
        let mut applied: Vec<(String, &str, serde_json::Value)> = vec![];
        for (key, value) in sets {
            // The exact name first: scratchpad sharing has both `T` (slots) and `t` (threshold).
            let exact = map.contains_key(key.as_str()).then(|| key.clone());
            let found = exact.or_else(|| map.keys().find(|k| k.eq_ignore_ascii_case(key)).cloned());
            let Some(field) = found else {
                return Err(ParamError::Unknown {
                    block: Self::BLOCK.into(),
                    key: key.clone(),
                    allowed: map.keys().cloned().collect::<Vec<_>>().join(", "),
                });
            };
            let parsed = parse_value(value, &map[&field]);
            map.insert(field.clone(), parsed.clone());
            // Check each override as it lands, so an error names the right parameter.
            if serde_json::from_value::<Self>(serde_json::Value::Object(map.clone())).is_err() {
                return Err(match Self::declared().iter().find(|d| d.name == field) {
                    Some(d) => d.bad_value(value),
                    None => ParamError::Parse {
                        name: field,
                        value: value.clone(),
                        allowed: String::new(),
                    },
                });
            }
            applied.push((field, value, parsed));
        }
        let params: Self = serde_json::from_value(json).expect("checked above");
        params.validate().map_err(|e| match e {
            // The value as the user wrote it (`09`, `{"icnt": 0}`), when it is theirs.
            ParamError::Range {
                name,
                value,
                allowed,
            } => {
                let written = applied
                    .iter()
                    .rev()
                    .find(|(f, _, parsed)| *f == name && value_text(parsed) == value)
                    .map(|(_, w, _)| w.to_string());
                ParamError::Range {
                    name,
                    value: written.unwrap_or(value),
                    allowed,
                }
            }
            e => e,
        })?;
        Ok(params)
    }
}

/// Reads `text` as the JSON kind of `like` (number, bool or string); JSON text (`{...}`,
/// `[...]`) as JSON whatever the current value's kind.
fn parse_value(text: &str, like: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    // A structured parameter (e.g. `gmem_return={"icnt":400}`) is written as JSON.
    if text.starts_with(['{', '[']) {
        if let Ok(v) = serde_json::from_str(text) {
            return v;
        }
    }
    match like {
        Value::Bool(_) => match text.to_ascii_lowercase().as_str() {
            "1" | "true" => Value::Bool(true),
            "0" | "false" => Value::Bool(false),
            _ => Value::String(text.into()),
        },
        // Plain digits only: anything else stays text, for the error to echo as written.
        Value::Number(_) if text.bytes().all(|b| b.is_ascii_digit()) => text
            .parse::<u64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::String(text.into())),
        Value::Number(_) => Value::String(text.into()),
        _ => Value::String(text.to_ascii_lowercase().replace('-', "_")),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(kv: &[(&str, Value)]) -> Vec<(String, Value)> {
        kv.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    #[test]
    fn config_names_spell_out_short_lists_and_hash_long_ones() {
        let short = parts(&[
            ("A", 14.into()),
            ("MODE", "gpgpusim_limited".into()),
            ("REG_OUT", true.into()),
        ]);
        assert_eq!(
            config_name("d", &short),
            "d_A14_MODEgpgpusimlimited_REG_OUT1"
        );
        assert_eq!(config_name("d", &[]), "d");
        let long: Vec<(String, Value)> = (0..12)
            .map(|i| (format!("KEY{i}"), Value::from(i)))
            .collect();
        let hashed = config_name("d", &long);
        assert!(hashed.len() == 11 && hashed.starts_with("d_h"), "{hashed}");
        // A value with no spelling (a list) is hashed too; different lists, different names.
        let a = config_name("d", &parts(&[("S", serde_json::json!([1, 2]))]));
        let b = config_name("d", &parts(&[("S", serde_json::json!([2, 1]))]));
        assert!(a.starts_with("d_h") && a != b);
    }
}
