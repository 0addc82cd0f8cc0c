//! The text form's lexer (docs/bank-conflicts.md §3.4, "Text form"): C tokens, `//` and `/* */`
//! comments skipped.

use super::{fail, Error, Result};

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Kind {
    Ident,
    Int(i64),
    Float,
    Str,
    Punct(&'static str),
    Eof,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Token {
    pub(super) kind: Kind,
    pub(super) at: usize,
    pub(super) end: usize,
}

/// Operators and punctuation, longest first.
const PUNCTS: [&str; 46] = [
    "<<=", ">>=", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--", "+=", "-=", "*=",
    "/=", "%=", "&=", "|=", "^=", "->", "+", "-", "*", "/", "%", "<", ">", "=", "!", "~", "&", "|",
    "^", "?", ":", ";", ",", ".", "(", ")", "[", "]", "{", "}", "#",
];

pub(super) fn lex(src: &str) -> Result<Vec<Token>> {
    let b = src.as_bytes();
    let mut out = vec![];
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let rest = &src[i..];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if i == 0 && rest.starts_with('\u{feff}') {
            i += '\u{feff}'.len_utf8();
            continue;
        }
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
            continue;
        }
        if let Some(body) = rest.strip_prefix("/*") {
            match body.find("*/") {
                Some(k) => i += k + 4,
                None => return fail(i, "unterminated comment; expected `*/`"),
            }
            continue;
        }
        let start = i;
        let kind = if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            Kind::Ident
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            i = number_end(b, i);
            number(&src[start..i], start)?
        } else if c == b'"' {
            i = string_end(b, i).ok_or(Error {
                at: i,
                msg: "unterminated string; expected `\"` before the end of the line".into(),
            })?;
            Kind::Str
        } else if let Some(p) = PUNCTS.iter().find(|p| rest.starts_with(**p)) {
            i += p.len();
            Kind::Punct(p)
        } else {
            let ch = rest.chars().next().unwrap_or(' ');
            return fail(
                i,
                format!("unexpected character `{ch}`; expected names, numbers and C operators"),
            );
        };
        out.push(Token {
            kind,
            at: start,
            end: i,
        });
    }
    out.push(Token {
        kind: Kind::Eof,
        at: b.len(),
        end: b.len(),
    });
    Ok(out)
}

/// End of the number starting at `i` (digits, letters, `.`, an exponent's sign).
pub(super) fn number_end(b: &[u8], mut i: usize) -> usize {
    let hex = b[i..].starts_with(b"0x") || b[i..].starts_with(b"0X");
    while i < b.len() {
        let c = b[i];
        let sign = (c == b'+' || c == b'-') && !hex && matches!(b[i - 1], b'e' | b'E');
        if !(c.is_ascii_alphanumeric() || c == b'.' || c == b'_' || sign) {
            break;
        }
        i += 1;
    }
    i
}

/// An integer (decimal or hex, `u`/`l` suffixes) or a float literal.
pub(super) fn number(s: &str, at: usize) -> Result<Kind> {
    let hex = s.starts_with("0x") || s.starts_with("0X");
    if !hex && (s.contains(['.', 'e', 'E']) || s.ends_with(['f', 'F'])) {
        return Ok(Kind::Float);
    }
    let digits = s.trim_end_matches(['u', 'U', 'l', 'L']);
    let v = if hex {
        u64::from_str_radix(&digits[2..], 16)
    } else {
        digits.parse::<u64>()
    };
    match v {
        Ok(v) => i64::try_from(v).map(Kind::Int).or(fail(
            at,
            format!(
                "integer `{s}` is out of range; allowed: at most {}",
                i64::MAX
            ),
        )),
        Err(_) => fail(at, format!("malformed number `{s}`; expected an integer")),
    }
}

/// End of the string literal starting at `i` (after its closing quote).
pub(super) fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'"' => return Some(j + 1),
            b'\\' => j += 2,
            b'\n' => return None,
            _ => j += 1,
        }
    }
    None
}

/// The value of a string literal's text (quotes included): `\"`, `\\`, `\n`, `\t`.
pub(super) fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut it = s[1..s.len() - 1].chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(c) => out.push(c),
            None => {}
        }
    }
    out
}
