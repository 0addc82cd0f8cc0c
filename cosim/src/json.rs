//! Strict JSON input: every JSON file or line the CLI reads is checked here first, so a
//! repeated key in any object is refused (serde_json keeps the last one silently) instead of
//! one of its values being dropped.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;

/// Checks that `text` is one JSON value whose objects have no repeated key; the error (with
/// its line and column) is serde_json's, or `duplicate key `K``.
pub fn unique_keys(text: &str) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    Unique.deserialize(&mut de)?;
    de.end()
}

/// [`unique_keys`] with the error as a one-line message.
pub fn check(text: &str) -> Result<(), String> {
    unique_keys(text).map_err(|e| e.to_string())
}

/// The refusal of a repeated key in `text`, if it has one; malformed JSON passes, for the
/// parser that reads `text` to report in its own words.
pub fn repeated_key(text: &str) -> Result<(), String> {
    match unique_keys(text) {
        Err(e) if e.is_data() => Err(e.to_string()),
        _ => Ok(()),
    }
}

/// Walks one value, refusing a repeated key in any object.
#[derive(Clone, Copy)]
struct Unique;

impl<'de> DeserializeSeed<'de> for Unique {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Unique {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!(
                    "duplicate key `{key}` (each key may appear once)"
                )));
            }
            map.next_value_seed(Unique)?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Unique)?.is_some() {}
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_i128<E>(self, _: i128) -> Result<(), E> {
        Ok(())
    }
    fn visit_u128<E>(self, _: u128) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_are_refused_at_any_depth() {
        assert!(check(r#"{"a": 1, "b": [{"c": 2, "d": 3}]}"#).is_ok());
        assert!(check(r#"[1, "x", null, true, 1.5, -2]"#).is_ok());
        let e = check(r#"{"a": 1, "a": 2}"#).unwrap_err();
        assert!(e.contains("duplicate key `a`"), "{e}");
        let e = check(r#"{"a": [{"b": 1, "b": 1}]}"#).unwrap_err();
        assert!(e.contains("duplicate key `b`"), "{e}");
        assert!(check("{} x").is_err());
        assert!(check(r#"{"a": 1,}"#).is_err());
    }
}
