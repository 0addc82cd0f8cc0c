//! Which system and input kind a file is (`smrtl sim FILE`): its `"kind"` field, else its
//! shape: the top-level keys of a JSON object (each kind requires some and allows a set), or
//! the extension of a text file. A file no kind claims, or that two kinds claim alike, is a
//! one-line error listing the kinds. The `"kind"` field is blanked out (spaces, so line and
//! column numbers in later messages stay right) before the system's parser reads the text.

use super::{InputKind, Shape, System};
use std::path::Path;

/// A file recognised: its system and its kind.
pub type Detected = (&'static dyn System, &'static InputKind);

/// The kinds of `systems`, as `name (system)` for messages.
fn kinds_text(systems: &[&'static dyn System]) -> String {
    let kinds: Vec<String> = systems
        .iter()
        .flat_map(|s| {
            s.inputs()
                .iter()
                .map(|k| format!("{} ({})", k.name, s.name()))
        })
        .collect();
    kinds.join(", ")
}

/// The system and kind of file `name` (its `text`) among `systems`' kinds ([`strip_kind`]
/// then blanks its `"kind"` field out).
pub fn detect(systems: &[&'static dyn System], name: &str, text: &str) -> Result<Detected, String> {
    detect_raw(systems, name, text).map_err(|e| smrtl_hdl::shown(&e))
}

fn detect_raw(systems: &[&'static dyn System], name: &str, text: &str) -> Result<Detected, String> {
    let all = || kinds_text(systems);
    let kinds = systems
        .iter()
        .flat_map(|&s| s.inputs().iter().map(move |k| (s, k)));
    if !text.trim_start().starts_with('{') {
        let ext = Path::new(name)
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let claims = |k: &InputKind| {
            k.shapes.iter().any(|s| match s {
                Shape::Text { extensions } => extensions.contains(&ext.as_str()),
                Shape::Json { .. } => false,
            })
        };
        let found: Vec<_> = kinds.filter(|(_, k)| claims(k)).collect();
        return match found[..] {
            [found] => Ok(found),
            _ => Err(format!(
                "{name}: cannot tell its kind: not a JSON object, and no kind reads text files \
                 named .{ext}; kinds: {}",
                all()
            )),
        };
    }
    smrtl_cosim::json::repeated_key(text).map_err(|e| format!("{name}: {e}"))?;
    let top = members(text).map_err(|e| {
        format!(
            "{name}: cannot tell its kind: {e}; kinds: {} (a \"kind\" field names one)",
            all()
        )
    })?;
    if let Some(m) = top.iter().find(|m| m.key == "kind") {
        let value: Result<String, _> = serde_json::from_str(&text[m.value.clone()]);
        let named = value.ok().and_then(|v| {
            kinds
                .clone()
                .find(|(_, k)| k.name == v)
                .map(|(s, k)| (s, k, v))
        });
        let Some((system, kind, _)) = named else {
            return Err(format!(
                "{name}: unknown \"kind\" {}; allowed: {}",
                &text[m.value.clone()],
                all()
            ));
        };
        return Ok((system, kind));
    }
    let keys: Vec<&str> = top.iter().map(|m| m.key.as_str()).collect();
    // A shape `complete`s a file with all its required keys, and `fits` it when it allows
    // every key the file has. Both at once, else fitting (a required key missing: the kind's
    // parser names it), else complete (a key too many: the parser names it).
    let test = |k: &InputKind, complete: bool, fits: bool| {
        k.shapes.iter().any(|s| match s {
            Shape::Json { required, allowed } => {
                (!complete || required.iter().all(|r| keys.contains(r)))
                    && (!fits || keys.iter().all(|x| allowed.contains(x)))
            }
            Shape::Text { .. } => false,
        })
    };
    let mut found = vec![];
    for (complete, fits) in [(true, true), (false, true), (true, false)] {
        if keys.is_empty() {
            break;
        }
        found = kinds
            .clone()
            .filter(|(_, k)| test(k, complete, fits))
            .collect();
        if found.len() == 1 {
            break;
        }
    }
    match found[..] {
        [found] => Ok(found),
        _ => Err(format!(
            "{name}: cannot tell its kind from its keys ({}); add a \"kind\" field, one of: {}",
            keys.join(", "),
            all()
        )),
    }
}

/// `text` of a file given as `kind` (a deprecated alias flag, or `--system` with one kind):
/// its `"kind"` field, if it has one, must agree, and is blanked out.
pub fn strip_kind(kind: &InputKind, name: &str, mut text: String) -> Result<String, String> {
    if !text.trim_start().starts_with('{') {
        return Ok(text);
    }
    smrtl_cosim::json::repeated_key(&text).map_err(|e| format!("{name}: {e}"))?;
    // Malformed JSON is the kind's parser's to report.
    let Ok(top) = members(&text) else {
        return Ok(text);
    };
    if let Some(m) = top.iter().find(|m| m.key == "kind") {
        let value = &text[m.value.clone()];
        if serde_json::from_str::<String>(value).ok().as_deref() != Some(kind.name) {
            return Err(smrtl_hdl::shown(&format!(
                "{name}: its \"kind\" is {value}, not \"{}\"",
                kind.name
            )));
        }
        blank(&mut text, &top, m);
    }
    Ok(text)
}

/// One member of the top-level object: its key, and the byte ranges of the member (key to
/// value) and of its value.
struct Member {
    key: String,
    member: std::ops::Range<usize>,
    value: std::ops::Range<usize>,
}

/// Replaces member `m` of `top` and the comma that joins it to a neighbour with spaces.
fn blank(text: &mut String, top: &[Member], m: &Member) {
    let i = top
        .iter()
        .position(|x| x.member == m.member)
        .expect("a member");
    let range = if let Some(next) = top.get(i + 1) {
        m.member.start..next.member.start
    } else if i > 0 {
        top[i - 1].value.end..m.member.end
    } else {
        m.member.clone()
    };
    // Keep line breaks: positions in later messages stay right.
    let spaced: String = text[range.clone()]
        .chars()
        .map(|c| if c == '\n' { '\n' } else { ' ' })
        .collect();
    text.replace_range(range, &spaced);
}

/// The members of the JSON object `text` (valid JSON, checked first), in file order, without
/// building its tree.
fn members(text: &str) -> Result<Vec<Member>, String> {
    serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(|e| format!("not JSON ({e})"))?;
    let b = text.as_bytes();
    let ws = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let mut i = ws(0);
    if b.get(i) != Some(&b'{') {
        return Err("not a JSON object".into());
    }
    i = ws(i + 1);
    let mut out = vec![];
    if b.get(i) == Some(&b'}') {
        return Ok(out);
    }
    loop {
        let start = i;
        let key_end = skip_value(b, i);
        let key: String = serde_json::from_str(&text[start..key_end]).map_err(|e| e.to_string())?;
        i = ws(key_end) + 1; // the colon
        let value_start = ws(i);
        let value_end = skip_value(b, value_start);
        out.push(Member {
            key,
            member: start..value_end,
            value: value_start..value_end,
        });
        i = ws(value_end);
        match b.get(i) {
            Some(b',') => i = ws(i + 1),
            _ => return Ok(out),
        }
    }
}

/// The end of the JSON value starting at `i` of valid JSON `b`.
fn skip_value(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    let mut in_string = false;
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => {
                    in_string = false;
                    if depth == 0 {
                        return i + 1;
                    }
                }
                _ => {}
            }
        } else {
            match c {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth == 0 => return i,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return i + 1;
                    }
                }
                b',' if depth == 0 => return i,
                c if depth == 0 && c.is_ascii_whitespace() => return i,
                _ => {}
            }
        }
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::systems::registry::systems;

    /// The kind `detect` gives `text` named `name`, as `kind (system)`, or its error.
    fn kind(name: &str, text: &str) -> Result<String, String> {
        detect(&systems(), name, text).map(|(s, k)| format!("{} ({})", k.name, s.name()))
    }

    #[test]
    fn every_example_is_recognised() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/");
        for (dir, want) in [
            ("traces", "trace (elastic_sm)"),
            ("workloads", "workload (elastic_sm)"),
            ("sharing", "kernel (sharing_sm)"),
            ("sharing/profiles", "kernel (sharing_sm)"),
            ("relssp", "kernel (sharing_sm)"),
            ("mem", "mem-workload (mem_sm)"),
            ("coh", "coh-kernel (coh_sm)"),
        ] {
            let mut n = 0;
            for e in std::fs::read_dir(format!("{root}{dir}")).unwrap() {
                let path = e.unwrap().path();
                if path.is_dir() {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                let name = path.display().to_string();
                assert_eq!(kind(&name, &text).as_deref(), Ok(want), "{name}");
                n += 1;
            }
            assert!(n > 0, "{dir}");
        }
    }

    #[test]
    fn shapes_kind_fields_and_refusals() {
        // A required key missing: the kind whose keys fit, so its parser names the key.
        let k = kind("k.json", r#"{"threads": 32, "warps": [[]]}"#);
        assert_eq!(k.as_deref(), Ok("kernel (sharing_sm)"));
        // A key too many: the kind that finds its required keys.
        let t = kind("t.json", r#"{"stream": ["A"], "bogus": 1}"#);
        assert_eq!(t.as_deref(), Ok("trace (elastic_sm)"));
        let w = kind("w.json", r#"{"kind": "mem-workload", "stream": []}"#);
        assert_eq!(w.as_deref(), Ok("mem-workload (mem_sm)"));
        for (name, text, needle) in [
            (
                "p.json",
                r#"{"params": {}}"#,
                "cannot tell its kind from its keys (params)",
            ),
            ("e.json", "{}", "cannot tell its kind from its keys ()"),
            (
                "x.json",
                r#"{"kind": "vcd"}"#,
                r#"unknown "kind" "vcd"; allowed: trace (elastic_sm)"#,
            ),
            ("x.json", r#"{"kind": 3}"#, r#"unknown "kind" 3"#),
            ("x.json", "{", "not JSON"),
            ("x.csv", "a,b", "no kind reads text files named .csv"),
            ("x.json", "[1]", "not a JSON object"),
        ] {
            let e = kind(name, text).unwrap_err();
            assert!(e.contains(needle) && !e.contains('\n'), "{text}: {e}");
            assert!(
                e.contains("mem-workload (mem_sm)"),
                "the kinds are listed: {e}"
            );
        }
        let trace = &systems()[0].inputs()[0];
        let text = "{\"kind\": \"trace\",\n \"stream\": [\"A\"]}".to_string();
        let stripped = strip_kind(trace, "t.json", text).unwrap();
        assert_eq!(
            stripped,
            format!("{{{}\n \"stream\": [\"A\"]}}", " ".repeat(16))
        );
        let e = strip_kind(trace, "t.json", r#"{"kind": "kernel"}"#.into()).unwrap_err();
        assert_eq!(e, r#"t.json: its "kind" is "kernel", not "trace""#);
    }

    #[test]
    fn members_and_blanking_keep_positions() {
        let text = r#"{"a": [1, {"b": "}"}], "kind": "x\"y", "c": 2}"#;
        let top = members(text).unwrap();
        let keys: Vec<&str> = top.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["a", "kind", "c"]);
        assert_eq!(&text[top[1].value.clone()], r#""x\"y""#);
        let pad = |n: usize| " ".repeat(n);
        for (i, want) in [
            (0, format!(r#"{{{}"kind": "x\"y", "c": 2}}"#, pad(22))),
            (
                1,
                format!(r#"{{"a": [1, {{"b": "}}"}}], {}"c": 2}}"#, pad(16)),
            ),
            (
                2,
                format!(r#"{{"a": [1, {{"b": "}}"}}], "kind": "x\"y"{}}}"#, pad(8)),
            ),
        ] {
            let mut t = text.to_string();
            blank(&mut t, &top, &top[i]);
            assert_eq!(t, want);
            assert_eq!(t.len(), text.len());
            serde_json::from_str::<serde_json::Value>(&t).unwrap();
        }
        let one = r#"{ "kind" : "trace" }"#;
        let top = members(one).unwrap();
        let mut t = one.to_string();
        blank(&mut t, &top, &top[0]);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&t).unwrap(),
            serde_json::json!({})
        );
        assert!(members("[1]").is_err() && members("{").is_err());
        assert!(members("{}").unwrap().is_empty());
        let nums = members(r#"{"n": -1.5e3 , "t": true}"#).unwrap();
        assert_eq!(nums[0].value, 6..12);
    }
}
