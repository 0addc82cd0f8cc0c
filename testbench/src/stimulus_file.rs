//! Replayable stimulus files: the block, its params and one object per cycle mapping input port
//! names to values (hex strings or numbers). Written for a shrunk failure, read by `--replay`.

use crate::design::Case;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use smrtl_cosim::harness::hex;
use smrtl_cosim::Layout;
use smrtl_hdl::netlist::mask;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StimulusFile {
    pub block: String,
    pub params: Map<String, Value>,
    pub cycles: Vec<Map<String, Value>>,
}

/// The params as `key=value` overrides.
pub fn params_as_sets(params: &Map<String, Value>) -> Vec<(String, String)> {
    params
        .iter()
        .map(|(k, v)| {
            let text = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), text)
        })
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
        self.cycles
            .iter()
            .enumerate()
            .map(|(c, cycle)| {
                let mut buf = vec![0u64; layout.in_words];
                for (name, value) in cycle {
                    let slot = layout.input(name).ok_or_else(|| {
                        let names: Vec<&str> =
                            layout.inputs.iter().map(|s| s.name.as_str()).collect();
                        format!(
                            "cycle {c}: unknown input port `{name}`; allowed: {}",
                            names.join(", ")
                        )
                    })?;
                    let words = parse_words(value, slot.width)
                        .map_err(|e| format!("cycle {c}: port {name}: {e}"))?;
                    slot.of_mut(&mut buf).copy_from_slice(&words);
                }
                Ok(buf)
            })
            .collect()
    }
}

/// A number or hex / decimal string as little-endian words of a `width`-bit port.
fn parse_words(v: &Value, width: usize) -> Result<Vec<u64>, String> {
    let n = smrtl_hdl::netlist::words_for(width);
    let mut words = vec![0u64; n];
    match v {
        Value::Number(x) => words[0] = x.as_u64().ok_or("not an unsigned integer")?,
        Value::Bool(b) => words[0] = *b as u64,
        Value::String(s) => {
            if let Some(h) = s.strip_prefix("0x") {
                let digits: Vec<char> = h.chars().filter(|c| *c != '_').collect();
                for (i, ch) in digits.iter().rev().enumerate() {
                    let d = ch.to_digit(16).ok_or(format!("bad hex digit `{ch}`"))? as u64;
                    if d != 0 && i * 4 >= width {
                        return Err(format!("value wider than {width} bits"));
                    }
                    if i / 16 < n {
                        words[i / 16] |= d << (4 * (i % 16));
                    }
                }
            } else {
                words[0] = s.parse().map_err(|_| format!("bad number `{s}`"))?;
            }
        }
        _ => return Err("expected a number or a hex string".into()),
    }
    let top = width - 64 * (n - 1);
    if words[n - 1] & !mask(top) != 0 {
        return Err(format!("value wider than {width} bits"));
    }
    Ok(words)
}
