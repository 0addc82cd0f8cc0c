//! A stimulus text read cycle by cycle (`smrtl run`, docs/cli.md "Limits"): the same two forms
//! as [`crate::stimulus_file`], but no cycle is kept. A caller reads the text once to check every
//! cycle and count them, and once more to run them, so memory is the text (at most the
//! `--stim` limit) and one cycle's objects, whatever the number of cycles.

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use smrtl_cosim::Layout;
use std::fmt;

/// Which form a stimulus text has; the replay form with its block and params.
#[derive(Debug)]
pub enum Form {
    Replay {
        block: String,
        params: Map<String, Value>,
    },
    Lines,
}

/// A cycle handler: the cycle's index and object; its error ends the read unchanged.
pub type OnCycle<'a> = dyn FnMut(usize, &Map<String, Value>) -> Result<(), String> + 'a;

/// The form of `text` (a JSON object with `cycles` is the replay form, anything else JSON
/// lines), and for the replay form its block and params; the cycles are checked for JSON only.
pub fn form(text: &str) -> Result<Form, String> {
    if !is_replay(text) {
        return Ok(Form::Lines);
    }
    let (block, params) = replay(text, &mut |_, _| Ok(()))?;
    Ok(Form::Replay { block, params })
}

/// Calls `f` on every cycle of `text` (of form `form`), in order. Errors name the line (JSON
/// lines) or say the replay file is malformed; `f`'s own errors come back unchanged.
pub fn for_each(text: &str, form: &Form, f: &mut OnCycle) -> Result<(), String> {
    match form {
        Form::Replay { .. } => replay(text, f).map(|_| ()),
        Form::Lines => lines(text, f),
    }
    .map_err(|e| smrtl_hdl::shown(&e))
}

fn lines(text: &str, f: &mut OnCycle) -> Result<(), String> {
    let mut cycle = 0;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        smrtl_cosim::json::repeated_key(line)
            .map_err(|e| format!("line {} (cycle {cycle}): {e}", i + 1))?;
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(map)) => f(cycle, &map)?,
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
        cycle += 1;
    }
    Ok(())
}

/// Whether `text` is one JSON object with a top-level `cycles` key (read without keeping it).
fn is_replay(text: &str) -> bool {
    struct Probe;
    impl<'de> Visitor<'de> for Probe {
        type Value = bool;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let mut cycles = false;
            while let Some(key) = map.next_key::<String>()? {
                cycles |= key == "cycles";
                map.next_value::<IgnoredAny>()?;
            }
            Ok(cycles)
        }
    }
    let trimmed = text.trim_start();
    if !trimmed.starts_with('{') {
        return false;
    }
    let mut de = serde_json::Deserializer::from_str(trimmed);
    de.deserialize_map(Probe).is_ok_and(|c| c) && de.end().is_ok()
}

/// Reads the replay form, calling `f` on each cycle; returns the block and params.
fn replay(text: &str, f: &mut OnCycle) -> Result<(String, Map<String, Value>), String> {
    smrtl_cosim::json::repeated_key(text)?;
    let mut failed = None;
    let mut de = serde_json::Deserializer::from_str(text);
    let file = ReplaySeed {
        f,
        failed: &mut failed,
    };
    let read = file.deserialize(&mut de).and_then(|v| de.end().map(|()| v));
    match (read, failed) {
        (_, Some(e)) => Err(e),
        (Ok(v), None) => Ok(v),
        (Err(e), None) => Err(format!("malformed stimulus file: {e}")),
    }
}

const FIELDS: &[&str] = &["block", "params", "cycles"];

struct ReplaySeed<'a, 'b> {
    f: &'a mut OnCycle<'b>,
    /// The handler's error, kept apart from serde's (which would add a position).
    failed: &'a mut Option<String>,
}

impl<'de> DeserializeSeed<'de> for ReplaySeed<'_, '_> {
    type Value = (String, Map<String, Value>);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ReplaySeed<'_, '_> {
    type Value = (String, Map<String, Value>);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a stimulus file {\"block\", \"params\", \"cycles\"}")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut block, mut params, mut cycles) = (None, None, false);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "block" if block.is_none() => block = Some(map.next_value::<String>()?),
                "params" if params.is_none() => params = Some(map.next_value()?),
                "cycles" if !cycles => {
                    map.next_value_seed(Cycles {
                        f: &mut *self.f,
                        failed: &mut *self.failed,
                    })?;
                    cycles = true;
                }
                "block" | "params" | "cycles" => {
                    return Err(de::Error::custom(format_args!("duplicate field `{key}`")))
                }
                _ => return Err(de::Error::unknown_field(&key, FIELDS)),
            }
        }
        let block = block.ok_or_else(|| de::Error::missing_field("block"))?;
        let params = params.ok_or_else(|| de::Error::missing_field("params"))?;
        if !cycles {
            return Err(de::Error::missing_field("cycles"));
        }
        Ok((block, params))
    }
}

struct Cycles<'a, 'b> {
    f: &'a mut OnCycle<'b>,
    failed: &'a mut Option<String>,
}

impl<'de> DeserializeSeed<'de> for Cycles<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Cycles<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence of cycle objects")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut cycle = 0;
        while let Some(map) = seq.next_element::<Map<String, Value>>()? {
            if let Err(e) = (self.f)(cycle, &map) {
                *self.failed = Some(e);
                return Err(de::Error::custom("stopped"));
            }
            cycle += 1;
        }
        Ok(())
    }
}

/// Turns cycle objects into input buffers one at a time: a port not given keeps its previous
/// value (0 before its first); errors name the cycle and port, as
/// [`crate::stimulus_file::to_case`]'s do.
pub struct Inputs<'a> {
    layout: &'a Layout,
    buf: Vec<u64>,
}

impl<'a> Inputs<'a> {
    pub fn new(layout: &'a Layout) -> Inputs<'a> {
        Inputs {
            layout,
            buf: vec![0; layout.in_words],
        }
    }

    /// The input buffer of cycle `c`, given its object.
    pub fn apply(&mut self, c: usize, cycle: &Map<String, Value>) -> Result<&[u64], String> {
        crate::stimulus_file::apply_cycle(&mut self.buf, self.layout, c, cycle)?;
        Ok(&self.buf)
    }
}
