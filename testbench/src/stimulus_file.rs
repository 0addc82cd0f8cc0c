//! Stimulus files, in two forms: the replay form (the block, its params and one object per cycle
//! mapping input port names to values, hex strings or numbers; written for a shrunk failure,
//! read by `smrtl cosim --replay` and `smrtl run`) and JSON lines (one `{port: value}` object per
//! cycle, read by `smrtl run`). A port not given in a cycle keeps its previous value (0 before
//! its first); every error names the cycle and the port.

use crate::design::Case;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use smrtl_cosim::harness::hex;
use smrtl_cosim::Layout;
use smrtl_hdl::netlist::mask;

#[derive(Debug, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a stimulus file {\"block\", \"params\", \"cycles\"}"
)]
pub struct StimulusFile {
    pub block: String,
    pub params: Map<String, Value>,
    pub cycles: Vec<Map<String, Value>>,
}

/// The params as `key=value` overrides, each value as `--set` takes it; a number keeps the
/// spelling it has in the file (serde_json's `arbitrary_precision`), so an error echoes
/// `99999999999999999999`, not `1e+20`.
pub fn params_as_sets(params: &Map<String, Value>) -> Vec<(String, String)> {
    params
        .iter()
        .map(|(k, v)| (k.clone(), smrtl_hdl::params::value_text(v)))
        .collect()
}

impl StimulusFile {
    pub fn new(block: &str, params: &Value, layout: &Layout, case: &Case) -> StimulusFile {
        let cycles = case
            .iter()
            .map(|buf| {
                layout
                    .inputs
                    .iter()
                    .map(|s| (s.name.clone(), Value::String(hex(s.of(buf)))))
                    .collect()
            })
            .collect();
        StimulusFile {
            block: block.into(),
            params: params.as_object().cloned().unwrap_or_default(),
            cycles,
        }
    }

    /// The cycles as input buffers; errors name the cycle and port.
    pub fn to_case(&self, layout: &Layout) -> Result<Case, String> {
        to_case(self.cycles.iter(), layout)
    }
}

/// A stimulus as read from a file, before the block's ports are known.
#[derive(Debug)]
pub enum Stimulus {
    /// The replay form, with its block and params.
    Replay(StimulusFile),
    /// JSON lines: one object per cycle.
    Lines(Vec<Map<String, Value>>),
}

impl Stimulus {
    /// Reads either form: a JSON object with `cycles` is the replay form, anything else is read
    /// as JSON lines (blank lines skipped). Errors name the line.
    pub fn parse(text: &str) -> Result<Stimulus, String> {
        Self::parse_raw(text).map_err(|e| smrtl_hdl::shown(&e))
    }

    /// [`Self::parse`] before control characters in echoed text are escaped.
    fn parse_raw(text: &str) -> Result<Stimulus, String> {
        let trimmed = text.trim_start();
        if trimmed.starts_with('{') {
            // The replay form (JSON lines do not parse as one value, and pass).
            smrtl_cosim::json::repeated_key(trimmed)?;
            if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(trimmed) {
                if map.contains_key("cycles") {
                    let file: StimulusFile = serde_json::from_value(Value::Object(map))
                        .map_err(|e| format!("malformed stimulus file: {e}"))?;
                    return Ok(Stimulus::Replay(file));
                }
            }
        }
        let mut cycles = vec![];
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let cycle = cycles.len();
            smrtl_cosim::json::repeated_key(line)
                .map_err(|e| format!("line {} (cycle {cycle}): {e}", i + 1))?;
            match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(map)) => cycles.push(map),
                Ok(_) => {
                    return Err(format!(
                        "line {} (cycle {cycle}): expected an object {{\"port\": value, ...}}",
                        i + 1
                    ))
                }
                Err(e) => {
                    return Err(format!(
                        "line {} (cycle {cycle}): malformed JSON: {e}",
                        i + 1
                    ))
                }
            }
        }
        Ok(Stimulus::Lines(cycles))
    }

    /// The per-cycle objects.
    pub fn cycles(&self) -> &[Map<String, Value>] {
        match self {
            Stimulus::Replay(f) => &f.cycles,
            Stimulus::Lines(c) => c,
        }
    }

    /// The cycles as input buffers (see [`to_case`]).
    pub fn to_case(&self, layout: &Layout) -> Result<Case, String> {
        to_case(self.cycles().iter(), layout)
    }
}

/// Per-cycle `{port: value}` objects as input buffers: a port not given keeps its previous value
/// (0 before its first); an unknown port or a value wider than its port is an error naming the
/// cycle and the port.
pub fn to_case<'a>(
    cycles: impl Iterator<Item = &'a Map<String, Value>>,
    layout: &Layout,
) -> Result<Case, String> {
    let mut buf = vec![0u64; layout.in_words];
    cycles
        .enumerate()
        .map(|(c, cycle)| {
            apply_cycle(&mut buf, layout, c, cycle)?;
            Ok(buf.clone())
        })
        .collect()
}

/// Writes the ports cycle `c` gives into `buf` (the ports it does not give keep their values).
pub fn apply_cycle(
    buf: &mut [u64],
    layout: &Layout,
    c: usize,
    cycle: &Map<String, Value>,
) -> Result<(), String> {
    for (name, value) in cycle {
        let slot = layout
            .find_input(name)
            .map_err(|e| format!("cycle {c}: {e}"))?;
        let words =
            parse_words(value, slot.width).map_err(|e| format!("cycle {c}: port {name}: {e}"))?;
        slot.of_mut(buf).copy_from_slice(&words);
    }
    Ok(())
}

/// What a port value may be, for messages.
const VALUE_FORMS: &str =
    "allowed: an unsigned integer below 2^64 as a JSON number, or a \"0x...\" hex string";

/// A JSON number or a `"0x..."` hex string (at least one digit, `_` separators allowed) as
/// little-endian words of a `width`-bit port; anything else (a decimal or signed string, a
/// boolean, a fraction) is refused, naming the allowed forms.
fn parse_words(v: &Value, width: usize) -> Result<Vec<u64>, String> {
    let n = smrtl_hdl::netlist::words_for(width);
    let mut words = vec![0u64; n];
    match v {
        Value::Number(x) => {
            words[0] = x
                .as_u64()
                .ok_or(format!("{x} is not an unsigned integer; {VALUE_FORMS}"))?
        }
        Value::String(s) => {
            let Some(h) = s.strip_prefix("0x") else {
                return Err(format!(
                    "bad value \"{}\"; {VALUE_FORMS}",
                    smrtl_hdl::shown(s)
                ));
            };
            {
                let digits: Vec<char> = h.chars().filter(|c| *c != '_').collect();
                if digits.is_empty() {
                    return Err(format!(
                        "bad value \"{}\": no hex digits; {VALUE_FORMS}",
                        smrtl_hdl::shown(s)
                    ));
                }
                for (i, ch) in digits.iter().rev().enumerate() {
                    let d = ch
                        .to_digit(16)
                        .ok_or_else(|| format!("bad hex digit `{}`", ch.escape_default()))?
                        as u64;
                    if d != 0 && i * 4 >= width {
                        return Err(format!("value {s} is wider than the port's {width} bits"));
                    }
                    if i / 16 < n {
                        words[i / 16] |= d << (4 * (i % 16));
                    }
                }
            }
        }
        _ => return Err(format!("{v} is not a port value; {VALUE_FORMS}")),
    }
    let top = width - 64 * (n - 1);
    if words[n - 1] & !mask(top) != 0 {
        return Err(format!("value {v} is wider than the port's {width} bits"));
    }
    Ok(words)
}
