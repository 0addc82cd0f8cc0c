//! Input strategies of the fuzz tests: arbitrary text, JSON values from a schema, edits of
//! valid inputs (tests/fuzz_parsers.rs).

use crate::fuzz_parsers::*;

// ---------------------------------------------------------------------------------------------
// Input strategies.
// ---------------------------------------------------------------------------------------------

/// What a parser reads: its field names and the strings and numbers it gives meaning to.
#[derive(Clone, Debug)]
pub(crate) struct Schema {
    pub(crate) keys: Vec<String>,
    pub(crate) strings: Vec<String>,
}

pub(crate) fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Strings every parser here gives a meaning to (enum names of the params).
pub(crate) const NAMES: [&str; 24] = [
    "unified",
    "split",
    "elastic",
    "mem_first",
    "nonmem_first",
    "literal",
    "multicast",
    "gpgpusim-limited",
    "gpgpusim_limited",
    "gpgpusim4-limited",
    "gpgpusim4_limited",
    "rr",
    "bcaws",
    "strict",
    "issue_if_no_nonmem",
    "load_pred",
    "load_pred_plus_sm1",
    "at_writeback",
    "icnt",
    "true",
    "false",
    "0x",
    "0xff",
    "",
];

/// Numbers at and beyond the edges of what the parsers accept.
pub(crate) fn edge_numbers() -> Vec<Value> {
    let mut v: Vec<Value> = [
        0u64,
        1,
        2,
        3,
        4,
        7,
        8,
        9,
        15,
        16,
        17,
        31,
        32,
        33,
        63,
        64,
        65,
        100,
        255,
        256,
        1023,
        1024,
        1025,
        4096,
        65535,
        65536,
        100_000,
        100_001,
        1 << 20,
        10_000_000,
        u32::MAX as u64,
        1 << 32,
        i64::MAX as u64,
        u64::MAX,
    ]
    .into_iter()
    .map(Value::from)
    .collect();
    v.extend([-1i64, -2, -4294967296, i64::MIN].map(Value::from));
    v.extend([0.5f64, 1.0, 2.0, -0.0, 1e20, 1e300, -1e300, 4294967295.5].map(Value::from));
    v.push(serde_json::from_str("99999999999999999999").expect("a JSON number"));
    v
}

pub(crate) fn number() -> BoxedStrategy<Value> {
    prop_oneof![
        4 => select(edge_numbers()),
        3 => (0u64..70).prop_map(Value::from),
        1 => any::<u64>().prop_map(Value::from),
        1 => any::<i64>().prop_map(Value::from),
        1 => any::<f64>().prop_map(Value::from),
    ]
    .boxed()
}

/// Strings with control characters, quotes and backslashes among the usual ones.
pub(crate) fn wild_string() -> BoxedStrategy<String> {
    prop_oneof![
        "[\\n\\r\\t \"\\\\a-zA-Z0-9(){}_=,.-]{0,12}",
        any::<String>(),
        "[0-9]{0,25}",
        "0x[0-9a-fA-F_]{0,40}",
    ]
    .boxed()
}

pub(crate) fn string(s: &Schema) -> BoxedStrategy<String> {
    prop_oneof![
        4 => select(s.strings.clone()),
        2 => select(s.keys.clone()),
        1 => select(strings(&NAMES)),
        2 => wild_string(),
    ]
    .boxed()
}

pub(crate) fn key(s: &Schema) -> BoxedStrategy<String> {
    prop_oneof![5 => select(s.keys.clone()), 1 => wild_string()].boxed()
}

/// Arbitrary JSON values, keys mostly the schema's.
pub(crate) fn json_value(s: &Schema) -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        4 => number(),
        4 => string(s).prop_map(Value::String),
    ];
    let keys = key(s);
    leaf.prop_recursive(5, 64, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((keys.clone(), inner), 0..8)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
    .boxed()
}

/// Arbitrary JSON objects (the top level of every file here), as text.
pub(crate) fn json_object_text(s: &Schema) -> BoxedStrategy<String> {
    let keys = key(s);
    prop_oneof![
        1 => json_value(s).prop_map(|v| v.to_string()),
        4 => prop::collection::vec((keys, json_value(s)), 0..6)
            .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>()).to_string()),
    ]
    .boxed()
}

/// Arbitrary text: random bytes read as UTF-8 (invalid sequences become U+FFFD), and soup of
/// JSON's own characters.
pub(crate) fn any_text() -> BoxedStrategy<String> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..256)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        "[\\[\\]{}\":,0-9a-zA-Z_ .eE+\\-\\n\\\\]{0,200}",
        any::<String>(),
    ]
    .boxed()
}

/// One edit of a JSON value: at the node reached by following `path` (child `i % len` at each
/// level, stopping at a leaf), replace the node, remove a child, or add a child.
#[derive(Clone, Debug)]
pub(crate) enum Edit {
    Replace(Vec<Index>, Value),
    Remove(Vec<Index>, Index),
    Add(Vec<Index>, String, Value, Index),
}

pub(crate) fn edits(s: &Schema, values: BoxedStrategy<Value>) -> BoxedStrategy<Vec<Edit>> {
    let path = prop::collection::vec(any::<Index>(), 0..7);
    let edit = prop_oneof![
        4 => (path.clone(), values.clone()).prop_map(|(p, v)| Edit::Replace(p, v)),
        1 => (path.clone(), any::<Index>()).prop_map(|(p, i)| Edit::Remove(p, i)),
        2 => (path, key(s), values, any::<Index>()).prop_map(|(p, k, v, i)| Edit::Add(p, k, v, i)),
    ];
    prop::collection::vec(edit, 1..4).boxed()
}

pub(crate) fn walk<'a>(node: &'a mut Value, path: &[Index]) -> &'a mut Value {
    let Some((i, rest)) = path.split_first() else {
        return node;
    };
    let descend = match &*node {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    };
    if !descend {
        return node;
    }
    match node {
        Value::Object(m) => {
            let k = m.keys().nth(i.index(m.len())).expect("in range").clone();
            walk(m.get_mut(&k).expect("present"), rest)
        }
        Value::Array(a) => {
            let n = i.index(a.len());
            walk(&mut a[n], rest)
        }
        _ => unreachable!("checked above"),
    }
}

pub(crate) fn apply(v: &mut Value, edit: &Edit) {
    match edit {
        Edit::Replace(path, x) => *walk(v, path) = x.clone(),
        Edit::Remove(path, i) => match walk(v, path) {
            Value::Object(m) if !m.is_empty() => {
                let k = m.keys().nth(i.index(m.len())).expect("in range").clone();
                m.remove(&k);
            }
            Value::Array(a) if !a.is_empty() => {
                a.remove(i.index(a.len()));
            }
            _ => {}
        },
        Edit::Add(path, k, x, i) => match walk(v, path) {
            Value::Object(m) => {
                m.insert(k.clone(), x.clone());
            }
            Value::Array(a) => a.insert(i.index(a.len() + 1), x.clone()),
            leaf => *leaf = x.clone(),
        },
    }
}

/// Raw text edits of a valid input.
#[derive(Clone, Debug)]
pub(crate) enum TextEdit {
    Insert(Index, String),
    Delete(Index, usize),
    Truncate(Index),
}

pub(crate) const TOKENS: [&str; 24] = [
    "99999999999999999999",
    "-1",
    "1e300",
    "1e999",
    "-0",
    "0.5",
    "4294967295",
    "18446744073709551616",
    "null",
    "true",
    "\"\\n\"",
    "\"\\u0000\"",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\",
    "\n",
    "{}",
    "[]",
    "\u{feff}",
];

pub(crate) fn text_edits() -> BoxedStrategy<Vec<TextEdit>> {
    let edit = prop_oneof![
        3 => (any::<Index>(), prop_oneof![select(strings(&TOKENS)), wild_string()])
            .prop_map(|(i, s)| TextEdit::Insert(i, s)),
        2 => (any::<Index>(), 1usize..8).prop_map(|(i, n)| TextEdit::Delete(i, n)),
        1 => any::<Index>().prop_map(TextEdit::Truncate),
    ];
    prop::collection::vec(edit, 1..4).boxed()
}

pub(crate) fn floor_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

pub(crate) fn apply_text(text: &str, edits: &[TextEdit]) -> String {
    let mut t = text.to_string();
    for e in edits {
        match e {
            TextEdit::Insert(i, s) => {
                let at = floor_boundary(&t, i.index(t.len() + 1));
                t.insert_str(at, s);
            }
            TextEdit::Delete(i, n) => {
                let a = floor_boundary(&t, i.index(t.len() + 1));
                let b = floor_boundary(&t, a + n);
                t.replace_range(a..b, "");
            }
            TextEdit::Truncate(i) => {
                let at = floor_boundary(&t, i.index(t.len() + 1));
                t.truncate(at);
            }
        }
    }
    t
}

/// A valid JSON file of `bases` with one to three fields edited (values from `values`).
pub(crate) fn mutated_json(
    s: &Schema,
    bases: Vec<Value>,
    values: BoxedStrategy<Value>,
) -> BoxedStrategy<String> {
    (select(bases), edits(s, values))
        .prop_map(|(mut v, edits)| {
            for e in &edits {
                apply(&mut v, e);
            }
            v.to_string()
        })
        .boxed()
}

/// A valid JSON-lines file of `bases` with one to three lines edited.
pub(crate) fn mutated_lines(
    s: &Schema,
    bases: Vec<Vec<Value>>,
    values: BoxedStrategy<Value>,
) -> BoxedStrategy<String> {
    let line_edits = prop::collection::vec((any::<Index>(), edits(s, values)), 1..3);
    (select(bases), line_edits)
        .prop_map(|(mut lines, edits)| {
            for (i, es) in &edits {
                if lines.is_empty() {
                    break;
                }
                let n = i.index(lines.len());
                for e in es {
                    apply(&mut lines[n], e);
                }
            }
            lines
                .iter()
                .map(|l| l.to_string() + "\n")
                .collect::<String>()
        })
        .boxed()
}

/// A valid text with a few bytes edited.
pub(crate) fn mutated_text(bases: Vec<String>) -> BoxedStrategy<String> {
    (select(bases), text_edits())
        .prop_map(|(t, e)| apply_text(&t, &e))
        .boxed()
}

pub(crate) fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("a shipped example is JSON")
}

pub(crate) fn parse_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// `--set` style overrides: names mostly from `names`, values from `values` or anything.
pub(crate) fn set_pairs(
    names: Vec<String>,
    values: Vec<String>,
    n: std::ops::Range<usize>,
) -> BoxedStrategy<Vec<(String, String)>> {
    let name = prop_oneof![6 => select(names), 1 => wild_string()];
    let value = prop_oneof![
        5 => select(values),
        2 => number().prop_map(|n| n.to_string()),
        1 => json_value(&value_schema()).prop_map(|v| v.to_string()),
        2 => wild_string(),
    ];
    prop::collection::vec((name, value), n).boxed()
}

/// Values for `--set`: numbers as text, the enum names, structured values.
pub(crate) fn set_values() -> Vec<String> {
    let mut v = strings(&NAMES);
    v.extend(
        [
            "0",
            "1",
            "2",
            "3",
            "4",
            "8",
            "12",
            "16",
            "30",
            "32",
            "33",
            "64",
            "65",
            "256",
            "1024",
            "100000",
            "100001",
            "4294967295",
            "4294967296",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
            "-1",
            "1e300",
            "0.5",
            "+1",
            " 1",
            "0x10",
            "yes",
            "TRUE",
            "Rr",
            "ELASTIC",
            "gpgpusim-Limited",
            "{\"icnt\": 400}",
            "{\"icnt\": 100000}",
            "{\"icnt\": 100001}",
            "{\"icnt\": 0}",
            "{\"icnt\": -1}",
            "{\"icnt\": 1e300}",
            "{\"icnt\": 4294967296}",
            "{\"icnt\": 1, \"x\": 2}",
            "\"at_writeback\"",
            "{\"at_writeback\": null}",
            "{}",
            "[]",
            "[1]",
            "null",
            "\"\"",
            "a\nb",
            "\u{0}",
        ]
        .map(String::from),
    );
    v
}

pub(crate) fn value_schema() -> Schema {
    Schema {
        keys: strings(&["icnt", "at_writeback", "x"]),
        strings: strings(&NAMES),
    }
}
