//! `bankan`'s CUDA-like text input (docs/bank-conflicts.md §3.4, "Text form"): `__shared__`
//! declarations, `for` loops and `if`s around array references, read into the same [`Raw`] as
//! the JSON form, each access the affine map of [002] §4.3.2. A hand-written lexer and
//! recursive-descent parser; every error is `LINE:COL: problem; expected what`, and the parser
//! bounds its own work (nesting depth, conditions in force, accesses, arrays, checked integers).

use super::input::{
    parse_mode, Raw, RawAccess, RawArray, RawCond, RawLoop, MAX_ACCESSES, MAX_ARRAYS, MAX_COEF,
    MAX_FILE_BYTES,
};

/// Deepest nesting of statements, parentheses and unary operators.
pub const MAX_DEPTH: usize = 64;
/// Most conditions in force at one point (enclosing `if`s and loop bounds).
pub const MAX_SCOPE_CONDS: usize = 64;

/// A problem at a byte offset of the text.
#[derive(Debug)]
struct Error {
    at: usize,
    msg: String,
}

type Result<T> = std::result::Result<T, Error>;

fn fail<T>(at: usize, msg: impl Into<String>) -> Result<T> {
    Err(Error {
        at,
        msg: msg.into(),
    })
}

/// `LINE:COL` (1-based, columns in characters) of byte offset `at`.
fn line_col(src: &str, at: usize) -> (usize, usize) {
    let before = &src[..at.min(src.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
}

/// Parses the text form into [`Raw`] (not yet validated); errors are `LINE:COL: ...`.
pub fn parse(src: &str) -> std::result::Result<Raw, String> {
    if src.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "the text has {} bytes; allowed: at most {MAX_FILE_BYTES}",
            src.len()
        ));
    }
    let run = || -> Result<Raw> {
        let toks = lex(src)?;
        let mut p = Parser::new(src, toks);
        p.program()?;
        p.finish()
    };
    run().map_err(|e| {
        let (l, c) = line_col(src, e.at);
        format!("{l}:{c}: {}", e.msg)
    })
}

// ---------------------------------------------------------------------------------------------
// Lexer.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Ident,
    Int(i64),
    Float,
    Str,
    Punct(&'static str),
    Eof,
}

#[derive(Clone, Copy, Debug)]
struct Token {
    kind: Kind,
    at: usize,
    end: usize,
}

/// Operators and punctuation, longest first.
const PUNCTS: [&str; 46] = [
    "<<=", ">>=", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--", "+=", "-=", "*=",
    "/=", "%=", "&=", "|=", "^=", "->", "+", "-", "*", "/", "%", "<", ">", "=", "!", "~", "&", "|",
    "^", "?", ":", ";", ",", ".", "(", ")", "[", "]", "{", "}", "#",
];

fn lex(src: &str) -> Result<Vec<Token>> {
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
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
            continue;
        }
        if rest.starts_with("/*") {
            match rest[2..].find("*/") {
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
fn number_end(b: &[u8], mut i: usize) -> usize {
    let hex = b[i..].starts_with(b"0x") || b[i..].starts_with(b"0X");
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphanumeric() || c == b'.' || c == b'_' {
            i += 1;
        } else if (c == b'+' || c == b'-') && !hex && matches!(b[i - 1], b'e' | b'E') {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// An integer (decimal or hex, `u`/`l` suffixes) or a float literal.
fn number(s: &str, at: usize) -> Result<Kind> {
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
fn string_end(b: &[u8], i: usize) -> Option<usize> {
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
fn unescape(s: &str) -> String {
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

// ---------------------------------------------------------------------------------------------
// Affine values and conditions.
// ---------------------------------------------------------------------------------------------

/// `tx·tx + ty·ty + Σ i[k]·iter_k + c`, iter_k the iteration count of loop k (outermost first).
#[derive(Clone, Debug, Default, PartialEq)]
struct Aff {
    tx: i64,
    ty: i64,
    i: Vec<i64>,
    c: i64,
}

impl Aff {
    fn constant(c: i64) -> Aff {
        Aff {
            c,
            ..Aff::default()
        }
    }

    fn is_const(&self) -> bool {
        self.tx == 0 && self.ty == 0 && self.i.iter().all(|&x| x == 0)
    }

    /// `self + k·o`, `None` on overflow.
    fn add_scaled(&self, o: &Aff, k: i64) -> Option<Aff> {
        let f = |a: i64, b: i64| b.checked_mul(k).and_then(|b| a.checked_add(b));
        let n = self.i.len().max(o.i.len());
        let get = |v: &Vec<i64>, j: usize| v.get(j).copied().unwrap_or(0);
        let i = (0..n)
            .map(|j| f(get(&self.i, j), get(&o.i, j)))
            .collect::<Option<Vec<_>>>()?;
        Some(Aff {
            tx: f(self.tx, o.tx)?,
            ty: f(self.ty, o.ty)?,
            i,
            c: f(self.c, o.c)?,
        })
    }

    fn scale(&self, k: i64) -> Option<Aff> {
        Aff::default().add_scaled(self, k)
    }

    /// The RawCond `self ≥ 0` with one loop coefficient per loop of `loops`.
    fn cond(&self, loops: usize) -> RawCond {
        let mut i = self.i.clone();
        i.resize(loops, 0);
        RawCond {
            tx: self.tx,
            ty: self.ty,
            i,
            c: self.c,
        }
    }
}

/// An expression's value: arithmetic, or comparisons joined by `&&` (each `≥ 0`).
enum Val {
    Aff(Aff),
    Conds(Vec<Aff>),
}

/// Element bytes of the allowed `__shared__` element types.
const TYPES: [(&str, u32); 25] = [
    ("float", 4),
    ("int", 4),
    ("unsigned", 4),
    ("unsigned int", 4),
    ("uint32_t", 4),
    ("int32_t", 4),
    ("half2", 4),
    ("__half2", 4),
    ("double", 8),
    ("long long", 8),
    ("long long int", 8),
    ("unsigned long long", 8),
    ("unsigned long long int", 8),
    ("int64_t", 8),
    ("uint64_t", 8),
    ("float2", 8),
    ("int2", 8),
    ("uint2", 8),
    ("float4", 16),
    ("int4", 16),
    ("uint4", 16),
    ("double2", 16),
    ("longlong2", 16),
    ("double4", 32),
    ("longlong4", 32),
];

/// Types narrower than the model's 4-byte minimum element.
const NARROW: [&str; 16] = [
    "char",
    "signed char",
    "unsigned char",
    "short",
    "short int",
    "unsigned short",
    "unsigned short int",
    "half",
    "__half",
    "bool",
    "int8_t",
    "uint8_t",
    "int16_t",
    "uint16_t",
    "__nv_bfloat16",
    "char2",
];

const TYPES_ALLOWED: &str = "float, int, unsigned, uint32_t, int32_t, half2 (4 B); double, \
     long long, int64_t, uint64_t, float2, int2, uint2 (8 B); float4, int4, uint4, double2, \
     longlong2 (16 B); double4, longlong4 (32 B)";

/// Words that may start or make up a declaration's type in a plain statement.
const TYPE_WORDS: [&str; 36] = [
    "const",
    "constexpr",
    "volatile",
    "static",
    "auto",
    "register",
    "signed",
    "unsigned",
    "int",
    "long",
    "short",
    "char",
    "float",
    "double",
    "bool",
    "size_t",
    "half",
    "__half",
    "half2",
    "__half2",
    "int32_t",
    "uint32_t",
    "int64_t",
    "uint64_t",
    "int8_t",
    "uint8_t",
    "int16_t",
    "uint16_t",
    "float2",
    "float4",
    "int2",
    "int4",
    "uint2",
    "uint4",
    "double2",
    "void",
];

/// Integer types a named value (`const int N = 16;`) may have.
const INT_WORDS: [&str; 11] = [
    "const",
    "constexpr",
    "int",
    "unsigned",
    "long",
    "signed",
    "size_t",
    "int32_t",
    "uint32_t",
    "int64_t",
    "uint64_t",
];

/// Configuration statements (docs/bank-conflicts.md §3.4, the JSON keys).
const CONFIG: [&str; 7] = [
    "banks",
    "bank_width",
    "layer_bytes",
    "lanes",
    "mode",
    "block",
    "note",
];

const UNKNOWN_NAME: &str =
    "expected tx, ty, threadIdx.x, threadIdx.y, a loop variable, a named int or an integer";

// ---------------------------------------------------------------------------------------------
// Parser.
// ---------------------------------------------------------------------------------------------

/// One enclosing `for` (its variable, `lo + step·iter` with iter in 0..trips, is a name).
struct Loop {
    trips: u64,
    name: String,
}

/// An array as declared, with its number of dimensions.
struct Decl {
    raw: RawArray,
    dims: usize,
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
    /// Named affine values in scope: loop variables and `int` names, innermost last.
    names: Vec<(String, Aff)>,
    /// Kernel pointer parameters: global memory, indexed without analysis.
    globals: Vec<String>,
    loops: Vec<Loop>,
    /// Conditions in force, each `≥ 0`.
    conds: Vec<Aff>,
    arrays: Vec<Decl>,
    accesses: Vec<RawAccess>,
    config: Vec<(&'static str, u64)>,
    mode: Option<String>,
    block: Option<Vec<u64>>,
    note: Option<String>,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, toks: Vec<Token>) -> Parser<'a> {
        Parser {
            src,
            toks,
            pos: 0,
            depth: 0,
            names: vec![],
            globals: vec![],
            loops: vec![],
            conds: vec![],
            arrays: vec![],
            accesses: vec![],
            config: vec![],
            mode: None,
            block: None,
            note: None,
        }
    }

    fn peek(&self) -> Token {
        self.toks[self.pos.min(self.toks.len() - 1)]
    }

    fn peek_at(&self, k: usize) -> Token {
        self.toks[(self.pos + k).min(self.toks.len() - 1)]
    }

    fn next(&mut self) -> Token {
        let t = self.peek();
        if t.kind != Kind::Eof {
            self.pos += 1;
        }
        t
    }

    fn text(&self, t: Token) -> &'a str {
        &self.src[t.at..t.end]
    }

    /// End of the last token taken.
    fn prev_end(&self) -> usize {
        self.pos.checked_sub(1).map_or(0, |p| self.toks[p].end)
    }

    fn is(&self, p: &str) -> bool {
        matches!(self.peek().kind, Kind::Punct(q) if q == p) || self.is_word(p)
    }

    fn is_word(&self, w: &str) -> bool {
        let t = self.peek();
        t.kind == Kind::Ident && self.text(t) == w
    }

    fn eat(&mut self, p: &str) -> bool {
        let yes = self.is(p);
        if yes {
            self.next();
        }
        yes
    }

    /// The current token described for an error.
    fn found(&self) -> String {
        match self.peek().kind {
            Kind::Eof => "unexpected end of file".into(),
            _ => format!("unexpected `{}`", self.text(self.peek())),
        }
    }

    fn unexpected<T>(&self, what: &str) -> Result<T> {
        fail(self.peek().at, format!("{}; expected {what}", self.found()))
    }

    fn expect(&mut self, p: &str, what: &str) -> Result<Token> {
        if self.is(p) {
            return Ok(self.next());
        }
        if p == ";" {
            return fail(self.prev_end(), format!("missing `;`; expected {what}"));
        }
        self.unexpected(what)
    }

    fn ident(&mut self, what: &str) -> Result<(String, usize)> {
        let t = self.peek();
        if t.kind != Kind::Ident {
            return self.unexpected(what);
        }
        self.next();
        Ok((self.text(t).to_string(), t.at))
    }

    /// Counts one level of nesting.
    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth -= 1;
            return fail(
                self.peek().at,
                format!("nesting deeper than {MAX_DEPTH} levels; expected at most {MAX_DEPTH}"),
            );
        }
        Ok(())
    }

    fn array(&self, name: &str) -> Option<usize> {
        self.arrays.iter().position(|a| a.raw.name == name)
    }

    fn program(&mut self) -> Result<()> {
        while self.peek().kind != Kind::Eof {
            self.statement(true)?;
        }
        Ok(())
    }

    /// One statement; `top`: outside every `for` and `if` (declarations and settings allowed).
    fn statement(&mut self, top: bool) -> Result<()> {
        self.enter()?;
        let r = self.statement_inner(top);
        self.depth -= 1;
        r
    }

    fn statement_inner(&mut self, top: bool) -> Result<()> {
        let t = self.peek();
        if self.eat(";") {
            return Ok(());
        }
        if self.is("{") {
            return self.compound(top);
        }
        let word = if t.kind == Kind::Ident {
            self.text(t)
        } else {
            ""
        };
        let outer_only = |p: &Self, what: &str| -> Result<()> {
            if top {
                return Ok(());
            }
            fail(
                p.peek().at,
                format!("{what} inside a `for` or `if`; expected it outside every loop and if"),
            )
        };
        match word {
            "for" => self.for_stmt(),
            "if" => self.if_stmt(),
            "else" => fail(
                t.at,
                "`else` is not supported; expected a statement (write the other branch as its \
                 own `if` with the opposite condition)",
            ),
            "while" | "do" | "switch" | "goto" | "return" | "break" | "continue" | "case" => fail(
                t.at,
                format!("`{word}` is not supported; expected for, if, a declaration or an expression statement"),
            ),
            "__shared__" | "extern" => {
                outer_only(self, "a __shared__ declaration")?;
                self.declaration()
            }
            "__constant__" => {
                outer_only(self, "a __constant__ declaration")?;
                self.constant_decl()
            }
            "__global__" | "__device__" => {
                outer_only(self, "a kernel")?;
                self.kernel()
            }
            "dim3" => {
                outer_only(self, "`dim3 block`")?;
                self.dim3()
            }
            w if CONFIG.contains(&w) => {
                outer_only(self, &format!("`{w}`"))?;
                let key = CONFIG.iter().find(|c| **c == w).copied().unwrap_or("banks");
                self.setting(key)
            }
            _ => self.simple(),
        }
    }

    /// `{ statement* }`; names declared inside end with it.
    fn compound(&mut self, top: bool) -> Result<()> {
        self.expect("{", "`{`")?;
        let names = self.names.len();
        while !self.is("}") {
            if self.peek().kind == Kind::Eof {
                return self.unexpected("`}`");
            }
            self.statement(top)?;
        }
        self.next();
        self.names.truncate(names);
        Ok(())
    }

    /// `__constant__ TYPE NAME[...] ...;`: constant memory, indexed without analysis.
    fn constant_decl(&mut self) -> Result<()> {
        self.next();
        let mut last = None;
        while !self.is(";") {
            let t = self.next();
            match t.kind {
                Kind::Eof => return fail(t.at, "unexpected end of file; expected `;`"),
                Kind::Ident if self.is("[") && last.is_none() => last = Some(self.text(t)),
                _ => {}
            }
        }
        self.next();
        self.globals.extend(last.map(str::to_string));
        Ok(())
    }

    /// `__global__ void NAME(params) { ... }`: pointer parameters are global memory.
    fn kernel(&mut self) -> Result<()> {
        self.next();
        while self.peek().kind == Kind::Ident {
            self.next();
        }
        self.expect("(", "`(` and the kernel's parameters")?;
        let mut last: Option<String> = None;
        loop {
            let t = self.next();
            match t.kind {
                Kind::Ident => last = Some(self.text(t).to_string()),
                Kind::Punct(",") | Kind::Punct(")") => {
                    self.globals.extend(last.take());
                    if t.kind == Kind::Punct(")") {
                        break;
                    }
                }
                Kind::Punct("*") | Kind::Punct("&") => {}
                Kind::Eof => return fail(t.at, "unexpected end of file; expected `)`"),
                _ => {
                    return fail(
                        t.at,
                        format!(
                            "unexpected `{}`; expected parameters such as `float *out`",
                            self.text(t)
                        ),
                    )
                }
            }
        }
        while self.peek().kind == Kind::Ident {
            self.next();
        }
        self.compound(true)
    }

    /// `banks 32;`, `bank_width 8;`, `layer_bytes 8;`, `lanes 32;`, `mode multicast;`,
    /// `block 16 16;`, `note "text";`.
    fn setting(&mut self, key: &'static str) -> Result<()> {
        let at = self.next().at;
        let seen = match key {
            "mode" => self.mode.is_some(),
            "block" => self.block.is_some(),
            "note" => self.note.is_some(),
            _ => self.config.iter().any(|(k, _)| *k == key),
        };
        if seen {
            return fail(at, format!("`{key}` is given twice; expected it once"));
        }
        match key {
            "mode" => self.mode_setting()?,
            "note" => {
                let mut s = String::new();
                if self.peek().kind != Kind::Str {
                    return self.unexpected("a string: note \"...\";");
                }
                while self.peek().kind == Kind::Str {
                    let t = self.next();
                    s.push_str(&unescape(self.text(t)));
                }
                self.note = Some(s);
            }
            "block" => {
                let mut dims = vec![self.count("bdx", true)?];
                if !self.is(";") {
                    dims.push(self.count("bdy", true)?);
                }
                self.block = Some(dims);
            }
            _ => {
                let v_at = self.peek().at;
                let v = self.count(key, true)?;
                if v > u32::MAX as u64 {
                    return fail(
                        v_at,
                        format!("{key} = {v} is out of range; expected a small power of two"),
                    );
                }
                self.config.push((key, v));
            }
        }
        self.expect(";", &format!("`;` after `{key}`"))?;
        Ok(())
    }

    /// `mode NAME;` with NAME as in the JSON (`gpgpusim-limited` too).
    fn mode_setting(&mut self) -> Result<()> {
        let at = self.peek().at;
        let mut name = if self.peek().kind == Kind::Str {
            let t = self.next();
            unescape(self.text(t))
        } else {
            self.ident("a mode name")?.0
        };
        while self.eat("-") {
            name.push('-');
            name.push_str(&self.ident("a mode name")?.0);
        }
        parse_mode(&name).map_err(|e| Error {
            at,
            msg: e.replace("; allowed:", "; expected one of"),
        })?;
        self.mode = Some(name);
        Ok(())
    }

    /// `dim3 block(BDX, BDY);` or `dim3 block(BDX);`.
    fn dim3(&mut self) -> Result<()> {
        self.next();
        let (name, at) = self.ident("`block`")?;
        if name != "block" {
            return fail(
                at,
                format!("`dim3 {name}`; expected `dim3 block(BDX, BDY);`"),
            );
        }
        if self.block.is_some() {
            return fail(at, "`block` is given twice; expected it once");
        }
        self.expect("(", "`(`: dim3 block(BDX, BDY);")?;
        let mut dims = vec![self.count("bdx", false)?];
        if self.eat(",") {
            dims.push(self.count("bdy", false)?);
        }
        self.expect(")", "`)`: dim3 block(BDX, BDY);")?;
        self.expect(";", "`;` after `dim3 block(...)`")?;
        self.block = Some(dims);
        Ok(())
    }

    /// A constant ≥ 0 (`unary`: one operand, so that `block 16 16` reads two).
    fn count(&mut self, what: &str, unary: bool) -> Result<u64> {
        let at = self.peek().at;
        let v = if unary { self.unary()? } else { self.expr()? };
        match v {
            Val::Aff(a) if a.is_const() && a.c >= 0 => Ok(a.c as u64),
            _ => fail(
                at,
                format!("{what} is not a constant ≥ 0; expected an integer"),
            ),
        }
    }

    /// A constant expression.
    fn constant(&mut self, what: &str) -> Result<i64> {
        let at = self.peek().at;
        let a = self.affine(what)?;
        if !a.is_const() {
            return fail(at, format!("{what} is not constant; expected a constant"));
        }
        Ok(a.c)
    }

    /// An arithmetic (affine) expression.
    fn affine(&mut self, what: &str) -> Result<Aff> {
        let at = self.peek().at;
        match self.expr()? {
            Val::Aff(a) => Ok(a),
            Val::Conds(_) => fail(
                at,
                format!("a comparison; expected {what}, an arithmetic expression"),
            ),
        }
    }

    /// Checks `a`'s coefficients against ±[`MAX_COEF`].
    fn bounded(&self, a: &Aff, at: usize, what: &str) -> Result<()> {
        let fixed = [a.tx, a.ty, a.c];
        let big = fixed.iter().chain(&a.i).find(|v| v.abs() > MAX_COEF);
        match big {
            Some(v) => fail(
                at,
                format!("{what}: {v} is out of range; allowed: coefficients and constants within ±{MAX_COEF}"),
            ),
            None => Ok(()),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Declarations, loops, conditions.
// ---------------------------------------------------------------------------------------------

impl Parser<'_> {
    /// A name a declaration may take: not a builtin, an array or a name in scope.
    fn fresh(&self, name: &str, at: usize) -> Result<()> {
        let taken = matches!(name, "tx" | "ty" | "threadIdx")
            || CONFIG.contains(&name)
            || self.array(name).is_some()
            || self.names.iter().any(|(n, _)| n == name);
        if taken {
            return fail(
                at,
                format!("`{name}` is already defined; expected a new name"),
            );
        }
        Ok(())
    }

    /// `__shared__ TYPE NAME[R][C (+ P)] [dummy(D)] [swizzle(B, M, S)];`
    fn declaration(&mut self) -> Result<()> {
        let start = self.next();
        if self.text(start) == "extern" {
            return fail(
                start.at,
                "`extern __shared__` has no size; expected `__shared__ TYPE NAME[R][C];`",
            );
        }
        let ty_at = self.peek().at;
        let mut words = vec![];
        while self.peek().kind == Kind::Ident && !self.peek_at(1).kind.eq(&Kind::Punct("[")) {
            let t = self.next();
            let w = self.text(t);
            if !matches!(w, "volatile" | "const" | "static") {
                words.push(w);
            }
        }
        let ty = words.join(" ");
        let elem = self.elem_bytes(&ty, ty_at)?;
        let (name, at) = self.ident("the array's name")?;
        self.fresh(&name, at)?;
        if self.arrays.len() >= MAX_ARRAYS {
            return fail(
                at,
                format!("more than {MAX_ARRAYS} arrays; allowed: at most {MAX_ARRAYS}"),
            );
        }
        let mut dims = vec![];
        while self.is("[") {
            if dims.len() == 2 {
                return fail(
                    self.peek().at,
                    "a third dimension; expected at most two: NAME[R][C]",
                );
            }
            self.next();
            dims.push(self.dim()?);
            self.expect("]", "`]`")?;
        }
        let (rows, (cols, pad)) = match dims[..] {
            [c] => (1, c),
            [(r0, r1), c] => (r0.saturating_add(r1), c),
            _ => return self.unexpected("`[`: NAME[R][C] or NAME[N]"),
        };
        let mut raw = RawArray {
            name,
            elem_bytes: elem,
            rows,
            cols,
            pad,
            dummy: 0,
            swizzle: None,
        };
        self.attributes(&mut raw)?;
        self.expect(";", "`;` after the declaration")?;
        self.arrays.push(Decl {
            raw,
            dims: dims.len(),
        });
        Ok(())
    }

    /// Element bytes of type `ty`.
    fn elem_bytes(&self, ty: &str, at: usize) -> Result<u32> {
        if let Some((_, b)) = TYPES.iter().find(|(n, _)| *n == ty) {
            return Ok(*b);
        }
        if ty.is_empty() {
            return fail(
                at,
                format!(
                    "{}; expected an element type: {TYPES_ALLOWED}",
                    self.found()
                ),
            );
        }
        let why = if NARROW.contains(&ty) {
            format!("`{ty}` elements are narrower than 4 bytes, which the bank model does not take")
        } else {
            format!("unknown element type `{ty}`")
        };
        fail(at, format!("{why}; expected {TYPES_ALLOWED}"))
    }

    /// One dimension: a constant; in the last dimension `C + P` with P an integer literal is C
    /// columns and intra-pad P (`[32][32 + 1]`), any other expression the column count.
    fn dim(&mut self) -> Result<(u64, u64)> {
        let (at, start) = (self.peek().at, self.pos);
        let total = self.constant("an array dimension")?;
        let tok = |k: usize| self.toks[self.pos - k].kind;
        let pad = match (self.pos >= start + 3, tok(1), tok(2)) {
            (true, Kind::Int(p), Kind::Punct("+"))
                if matches!(tok(3), Kind::Int(_) | Kind::Ident | Kind::Punct(")")) =>
            {
                p
            }
            _ => 0,
        };
        match (u64::try_from(total.saturating_sub(pad)), u64::try_from(pad)) {
            (Ok(c), Ok(p)) if c >= 1 => Ok((c, p)),
            _ => fail(
                at,
                "an array dimension must be a constant ≥ 1; expected `[N]` or `[N + PAD]`",
            ),
        }
    }

    /// `dummy(D)` and `swizzle(B, M, S)` after the dimensions.
    fn attributes(&mut self, a: &mut RawArray) -> Result<()> {
        loop {
            if self.eat("dummy") {
                self.expect("(", "`(`: dummy(ELEMENTS)")?;
                a.dummy = self.count("dummy", false)?;
                self.expect(")", "`)`")?;
            } else if self.eat("swizzle") {
                self.expect("(", "`(`: swizzle(B, M, S)")?;
                let mut v = [0u32; 3];
                for (k, x) in v.iter_mut().enumerate() {
                    if k > 0 {
                        self.expect(",", "`,`: swizzle(B, M, S)")?;
                    }
                    let at = self.peek().at;
                    *x = u32::try_from(self.count("a swizzle parameter", false)?).or(fail(
                        at,
                        "a swizzle parameter is out of range; expected B, M, S ≤ 20",
                    ))?;
                }
                self.expect(")", "`)`")?;
                a.swizzle = Some(v);
            } else {
                return Ok(());
            }
        }
    }

    /// `for (int i = L; i < U; i++)` (or `<=`, `++i`, `i += S`, `i = i + S`) and its body.
    fn for_stmt(&mut self) -> Result<()> {
        self.next();
        self.expect("(", "`(`: for (int i = 0; i < N; i++)")?;
        while self.peek().kind == Kind::Ident && INT_WORDS.contains(&self.text(self.peek())) {
            self.next();
        }
        let (var, at) = self.ident("the loop variable: for (int i = 0; i < N; i++)")?;
        if self.loops.iter().any(|l| l.name == var) || self.names.iter().all(|(n, _)| *n != var) {
            self.fresh(&var, at)?;
        }
        self.expect("=", "`=`: for (int i = 0; i < N; i++)")?;
        let lo = self.constant("the loop's start")?;
        self.expect(";", "`;` after the loop's start")?;
        let (v, at2) = self.ident(&format!("`{var} <` or `{var} <=`"))?;
        let incl = match self.peek().kind {
            Kind::Punct("<") if v == var => false,
            Kind::Punct("<=") if v == var => true,
            _ => {
                return fail(
                    at2,
                    format!("unsupported loop test; expected `{var} < BOUND` or `{var} <= BOUND`"),
                )
            }
        };
        self.next();
        let bound_at = self.peek().at;
        let bound = self.affine("the loop's bound")?;
        self.expect(";", "`;` after the loop's test")?;
        let step = self.step(&var)?;
        self.expect(")", "`)` after the loop's step")?;
        let (trips, cond) = self.trips(lo, step, &bound, incl, bound_at)?;
        let d = self.loops.len();
        let mut it = Aff::constant(lo);
        it.i = vec![0; d + 1];
        it.i[d] = step;
        let conds = self.conds.len();
        if let Some(c) = cond {
            let c = self.arith(c.add_scaled(&it, -1), bound_at)?;
            self.push_conds(vec![c], bound_at)?;
        }
        let names = self.names.len();
        self.names.push((var.clone(), it));
        self.loops.push(Loop {
            trips,
            name: var.clone(),
        });
        let r = self.statement(false);
        self.loops.pop();
        self.names.truncate(names);
        self.conds.truncate(conds);
        r
    }

    /// `i++`, `++i`, `i += S` or `i = i + S` with S ≥ 1: S.
    fn step(&mut self, var: &str) -> Result<i64> {
        let what = format!("`{var}++`, `++{var}` or `{var} += STEP`");
        if self.eat("++") {
            let (v, at) = self.ident(&what)?;
            return if v == var {
                Ok(1)
            } else {
                fail(at, format!("unexpected `{v}`; expected {what}"))
            };
        }
        let (v, at) = self.ident(&what)?;
        if v != var {
            return fail(at, format!("unexpected `{v}`; expected {what}"));
        }
        if self.eat("++") {
            return Ok(1);
        }
        let at = self.peek().at;
        let s = if self.eat("+=") {
            self.constant("the loop's step")?
        } else if self.eat("=") {
            let (w, wat) = self.ident(&what)?;
            if w != var {
                return fail(wat, format!("unexpected `{w}`; expected {what}"));
            }
            self.expect("+", &what)?;
            self.constant("the loop's step")?
        } else {
            return self.unexpected(&what);
        };
        if s < 1 {
            return fail(at, format!("step {s}; expected a constant step ≥ 1"));
        }
        Ok(s)
    }

    /// Trip count of `for (v = lo; v < bound; v += step)` (`<=` with `incl`): over the largest
    /// bound the enclosing loops and the block allow; and the condition `bound − v − 1 ≥ 0`
    /// (`bound − v ≥ 0`) when the bound is not constant.
    fn trips(
        &self,
        lo: i64,
        step: i64,
        bound: &Aff,
        incl: bool,
        at: usize,
    ) -> Result<(u64, Option<Aff>)> {
        let mut max = bound.c as i128;
        if bound.tx != 0 || bound.ty != 0 {
            let Some(b) = &self.block else {
                return fail(at, "the bound reads tx or ty before the block size is given; expected `block BDX BDY;` above the loop");
            };
            let (bdx, bdy) = (b[0] as i128, *b.get(1).unwrap_or(&1) as i128);
            max += (bound.tx as i128 * (bdx - 1)).max(0) + (bound.ty as i128 * (bdy - 1)).max(0);
        }
        for (k, l) in bound.i.iter().zip(&self.loops) {
            max += (*k as i128 * (l.trips as i128 - 1)).max(0);
        }
        let n = max - lo as i128 + incl as i128;
        if n <= 0 {
            return fail(at, "the loop never runs; expected a bound above the start");
        }
        let trips = u64::try_from((n + step as i128 - 1) / step as i128).or(fail(
            at,
            "the loop's trip count is out of range; expected a smaller bound",
        ))?;
        let cond = (!bound.is_const()).then(|| {
            let mut c = bound.clone();
            c.c = c.c.saturating_sub(!incl as i64);
            c
        });
        Ok((trips, cond))
    }

    /// Adds conditions to those in force.
    fn push_conds(&mut self, c: Vec<Aff>, at: usize) -> Result<()> {
        for x in &c {
            self.bounded(x, at, "a condition")?;
        }
        if self.conds.len() + c.len() > MAX_SCOPE_CONDS {
            return fail(at, format!("more than {MAX_SCOPE_CONDS} conditions in force; allowed: at most {MAX_SCOPE_CONDS}"));
        }
        self.conds.extend(c);
        Ok(())
    }

    /// `if (A && B ...) statement` (no `else`).
    fn if_stmt(&mut self) -> Result<()> {
        self.next();
        self.expect("(", "`(` after `if`")?;
        let at = self.peek().at;
        let conds = match self.expr()? {
            Val::Conds(c) => c,
            Val::Aff(_) => return fail(at, "a condition without a comparison; expected comparisons (<, <=, >, >=, ==) joined by &&"),
        };
        self.expect(")", "`)` after the condition")?;
        let n = self.conds.len();
        self.push_conds(conds, at)?;
        let r = self.statement(false);
        self.conds.truncate(n);
        r?;
        if self.is_word("else") {
            return fail(self.peek().at, "`else` is not supported; expected a statement (write the other branch as its own `if` with the opposite condition)");
        }
        Ok(())
    }
}

/// The arithmetic value of `v` (a comparison is an error).
fn arith_of(v: Val, at: usize) -> Result<Aff> {
    match v {
        Val::Aff(a) => Ok(a),
        Val::Conds(_) => fail(
            at,
            "a comparison inside arithmetic; expected an arithmetic expression",
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// Index expressions and conditions: affine in tx, ty and the loop variables.
// ---------------------------------------------------------------------------------------------

impl Parser<'_> {
    /// `None` from checked arithmetic as an error at `at`.
    fn arith(&self, v: Option<Aff>, at: usize) -> Result<Aff> {
        v.ok_or(Error {
            at,
            msg: format!(
                "integer overflow; allowed: coefficients and constants within ±{MAX_COEF}"
            ),
        })
    }

    /// `cmp (&& cmp)*`; `||` is refused.
    fn expr(&mut self) -> Result<Val> {
        let at = self.peek().at;
        let mut v = self.cmp()?;
        while self.is("&&") {
            self.next();
            let at2 = self.peek().at;
            let w = self.cmp()?;
            let mut c = conds_of(v, at)?;
            c.extend(conds_of(w, at2)?);
            v = Val::Conds(c);
        }
        if self.is("||") {
            return fail(self.peek().at, "`||` is not supported; expected conditions joined by `&&` (write one `if` per alternative)");
        }
        if self.is("?") {
            return fail(
                self.peek().at,
                "`?:` is not supported; expected an `if` statement",
            );
        }
        Ok(v)
    }

    /// `sum (< | <= | > | >= | == sum)?`, each comparison as conditions `≥ 0` on integers.
    fn cmp(&mut self) -> Result<Val> {
        let at = self.peek().at;
        let a = self.sum()?;
        let op = match self.peek().kind {
            Kind::Punct(p @ ("<" | "<=" | ">" | ">=" | "==")) => p,
            Kind::Punct("!=") => {
                return fail(
                    self.peek().at,
                    "`!=` is not supported; expected <, <=, >, >= or ==",
                )
            }
            _ => return Ok(a),
        };
        let op_at = self.next().at;
        let b_at = self.peek().at;
        let a = arith_of(a, at)?;
        let b = arith_of(self.sum()?, b_at)?;
        let d = |x: &Aff, y: &Aff, k: i64| {
            x.add_scaled(y, -1).and_then(|mut z| {
                z.c = z.c.checked_sub(k)?;
                Some(z)
            })
        };
        let c = match op {
            "<" => vec![d(&b, &a, 1)],
            "<=" => vec![d(&b, &a, 0)],
            ">" => vec![d(&a, &b, 1)],
            ">=" => vec![d(&a, &b, 0)],
            _ => vec![d(&a, &b, 0), d(&b, &a, 0)],
        };
        let c = c
            .into_iter()
            .map(|x| self.arith(x, op_at))
            .collect::<Result<Vec<_>>>()?;
        Ok(Val::Conds(c))
    }

    /// `term ((+ | -) term)*`.
    fn sum(&mut self) -> Result<Val> {
        let at = self.peek().at;
        let mut v = self.term()?;
        while self.is("+") || self.is("-") {
            let op = self.next();
            let k = if op.kind == Kind::Punct("+") { 1 } else { -1 };
            let r_at = self.peek().at;
            let r = arith_of(self.term()?, r_at)?;
            v = Val::Aff(self.arith(arith_of(v, at)?.add_scaled(&r, k), op.at)?);
        }
        Ok(v)
    }

    /// `unary ((* | / | %) unary)*`: a product needs a constant side, `/` and `%` two.
    fn term(&mut self) -> Result<Val> {
        let at = self.peek().at;
        let mut v = self.unary()?;
        while let Kind::Punct(op @ ("*" | "/" | "%")) = self.peek().kind {
            let op_at = self.next().at;
            let r_at = self.peek().at;
            let r = arith_of(self.unary()?, r_at)?;
            let l = arith_of(v, at)?;
            let shown = &self.src[at..self.prev_end()];
            let out = match op {
                "*" if r.is_const() => l.scale(r.c),
                "*" if l.is_const() => r.scale(l.c),
                "*" => return fail(op_at, format!("non-affine product `{shown}`; expected a constant on one side of `*`")),
                _ if !(l.is_const() && r.is_const()) => {
                    return fail(op_at, format!("`{op}` in `{shown}` is not affine; expected +, - and * by a constant (`{op}` only between constants)"))
                }
                _ if r.c == 0 => return fail(op_at, format!("division by zero in `{shown}`; expected a nonzero divisor")),
                "/" => l.c.checked_div(r.c).map(Aff::constant),
                _ => l.c.checked_rem(r.c).map(Aff::constant),
            };
            v = Val::Aff(self.arith(out, op_at)?);
        }
        Ok(v)
    }

    /// `- unary`, `+ unary` or a primary.
    fn unary(&mut self) -> Result<Val> {
        self.enter()?;
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }

    fn unary_inner(&mut self) -> Result<Val> {
        let t = self.peek();
        match t.kind {
            Kind::Punct("-") => {
                self.next();
                let v = arith_of(self.unary()?, self.peek().at)?;
                Ok(Val::Aff(self.arith(v.scale(-1), t.at)?))
            }
            Kind::Punct("+") => {
                self.next();
                self.unary()
            }
            Kind::Punct("!") => fail(
                t.at,
                "`!` is not supported; expected a comparison (<, <=, >, >=, ==)",
            ),
            Kind::Punct("(") => {
                self.next();
                let v = self.expr()?;
                self.expect(")", "`)`")?;
                Ok(v)
            }
            Kind::Int(v) => {
                self.next();
                Ok(Val::Aff(Aff::constant(v)))
            }
            Kind::Ident => {
                self.next();
                self.name(self.text(t), t.at).map(Val::Aff)
            }
            _ => self.unexpected("an expression: tx, ty, a loop variable, an integer or `(`"),
        }
    }

    /// The value of name `n` in an expression.
    fn name(&mut self, n: &str, at: usize) -> Result<Aff> {
        let unit = |x: i64, y: i64| Aff {
            tx: x,
            ty: y,
            ..Aff::default()
        };
        match n {
            "tx" => return Ok(unit(1, 0)),
            "ty" => return Ok(unit(0, 1)),
            "threadIdx" => {
                self.expect(".", "`.x` or `.y` after threadIdx")?;
                let (f, fat) = self.ident("`x` or `y`")?;
                return match f.as_str() {
                    "x" => Ok(unit(1, 0)),
                    "y" => Ok(unit(0, 1)),
                    _ => fail(
                        fat,
                        format!(
                            "`threadIdx.{f}` is not modelled; expected threadIdx.x or threadIdx.y"
                        ),
                    ),
                };
            }
            _ => {}
        }
        if let Some((_, v)) = self.names.iter().rev().find(|(m, _)| m == n) {
            return Ok(v.clone());
        }
        if self.array(n).is_some() {
            return fail(
                at,
                format!("`{n}` is a shared array, not a number; {UNKNOWN_NAME}"),
            );
        }
        fail(at, format!("unknown name `{n}`; {UNKNOWN_NAME}"))
    }
}

/// The conditions of `v` (arithmetic alone is an error).
fn conds_of(v: Val, at: usize) -> Result<Vec<Aff>> {
    match v {
        Val::Conds(c) => Ok(c),
        Val::Aff(_) => fail(
            at,
            "arithmetic joined by `&&`; expected comparisons (<, <=, >, >=, ==)",
        ),
    }
}

/// Binary operators of plain C expressions (`?:` and `,` are handled apart).
const BINOPS: [&str; 29] = [
    "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "+", "-", "*", "/", "%",
    "<", ">", "<=", ">=", "==", "!=", "&&", "||", "&", "|", "^", "<<", ">>",
];

// ---------------------------------------------------------------------------------------------
// Plain statements: named ints, and C expressions whose shared-array references are accesses.
// ---------------------------------------------------------------------------------------------

impl Parser<'_> {
    /// `x = A[ty][tx] + 1;`, `float v = A[i][tx];`, `__syncthreads();`, or a named int
    /// `const int N = 16;` / `int r = ty + 4;` (the latter when its value is affine).
    fn simple(&mut self) -> Result<()> {
        if self.named_int()? {
            return Ok(());
        }
        while self.peek().kind == Kind::Ident
            && TYPE_WORDS.contains(&self.text(self.peek()))
            && matches!(self.peek_at(1).kind, Kind::Ident | Kind::Punct("*"))
        {
            self.next();
        }
        loop {
            self.vexpr()?;
            if !self.eat(",") {
                break;
            }
        }
        self.expect(";", "`;` at the end of the statement")?;
        Ok(())
    }

    /// `[const] INT-TYPE NAME = AFFINE;`: true if read. Without `const`, a value that is not
    /// affine leaves the statement to [`Self::simple`].
    fn named_int(&mut self) -> Result<bool> {
        let start = self.pos;
        let (mut konst, mut typed) = (false, false);
        while self.peek().kind == Kind::Ident && INT_WORDS.contains(&self.text(self.peek())) {
            let t = self.next();
            let w = self.text(t);
            konst |= matches!(w, "const" | "constexpr");
            typed |= !matches!(w, "const" | "constexpr");
        }
        if !typed || self.peek().kind != Kind::Ident || self.peek_at(1).kind != Kind::Punct("=") {
            self.pos = start;
            return Ok(false);
        }
        let (name, at) = self.ident("a name")?;
        self.next();
        let v_at = self.peek().at;
        let r = self
            .affine("a value")
            .and_then(|a| self.expect(";", "`;`").map(|_| a));
        let a = match r {
            Ok(a) => a,
            Err(e) if konst => return Err(e),
            Err(_) => {
                self.pos = start;
                return Ok(false);
            }
        };
        self.bounded(&a, v_at, "a named int")?;
        let builtin = |x: i64, y: i64| {
            a == Aff {
                tx: x,
                ty: y,
                ..Aff::default()
            }
        };
        if (name == "tx" && builtin(1, 0)) || (name == "ty" && builtin(0, 1)) {
            return Ok(true);
        }
        self.fresh(&name, at)?;
        self.names.push((name, a));
        Ok(true)
    }

    /// A C expression, loosely: operands and binary operators.
    fn vexpr(&mut self) -> Result<()> {
        self.vunary()?;
        while let Kind::Punct(p) = self.peek().kind {
            if p == "?" {
                return fail(
                    self.peek().at,
                    "`?:` is not supported; expected an `if` statement",
                );
            }
            if !BINOPS.contains(&p) {
                break;
            }
            self.next();
            self.vunary()?;
        }
        Ok(())
    }

    fn vunary(&mut self) -> Result<()> {
        self.enter()?;
        let r = self.vunary_inner();
        self.depth -= 1;
        r
    }

    /// Prefix operators, an operand, postfix operators; `NAME[...]` of a shared array is an
    /// access, of a kernel parameter global memory (skipped).
    fn vunary_inner(&mut self) -> Result<()> {
        while matches!(
            self.peek().kind,
            Kind::Punct("-" | "+" | "!" | "~" | "*" | "&" | "++" | "--")
        ) {
            self.next();
        }
        let t = self.next();
        match t.kind {
            Kind::Int(_) | Kind::Float | Kind::Str => {}
            Kind::Ident => {
                let n = self.text(t);
                if self.array(n).is_some() {
                    self.access(n, t.at)?;
                } else if self.is("[") && !self.globals.iter().any(|g| g == n) {
                    let names: Vec<&str> =
                        self.arrays.iter().map(|a| a.raw.name.as_str()).collect();
                    return fail(t.at, format!("unknown array `{n}`; expected a __shared__ array declared above ({}) or a kernel pointer parameter", names.join(", ")));
                }
            }
            Kind::Punct("(") => {
                if self.peek().kind == Kind::Ident && TYPE_WORDS.contains(&self.text(self.peek())) {
                    while matches!(self.peek().kind, Kind::Ident | Kind::Punct("*")) {
                        self.next();
                    }
                    self.expect(")", "`)` after the cast's type")?;
                    return self.vunary();
                }
                self.vexpr()?;
                self.expect(")", "`)`")?;
            }
            _ => {
                self.pos -= (t.kind != Kind::Eof) as usize;
                return self.unexpected("an expression");
            }
        }
        self.postfix()
    }

    /// `[...]`, `(args)`, `.field`, `->field`, `++`, `--` after an operand.
    fn postfix(&mut self) -> Result<()> {
        loop {
            if self.eat("[") {
                self.vexpr()?;
                self.expect("]", "`]`")?;
            } else if self.eat("(") {
                if !self.eat(")") {
                    loop {
                        self.vexpr()?;
                        if !self.eat(",") {
                            break;
                        }
                    }
                    self.expect(")", "`)` or `,` in the call")?;
                }
            } else if self.eat(".") || self.eat("->") {
                self.ident("a field name")?;
            } else if !(self.eat("++") || self.eat("--")) {
                return Ok(());
            }
        }
    }

    /// `A[row][col]` or `A[index]` of shared array `n`: one access, with the loops and
    /// conditions in force.
    fn access(&mut self, n: &str, at: usize) -> Result<()> {
        let dims = self.arrays[self.array(n).unwrap_or(0)].dims;
        let shape = if dims == 2 {
            format!("{n}[row][col]")
        } else {
            format!("{n}[index]")
        };
        let plural = if dims == 2 { "s" } else { "" };
        let mut idx = vec![];
        while self.is("[") {
            if idx.len() == dims {
                return fail(
                    self.peek().at,
                    format!("`{n}` has {dims} dimension{plural}; expected {shape}"),
                );
            }
            self.next();
            let i_at = self.peek().at;
            let a = self.affine("an index affine in tx, ty and the loop variables")?;
            self.expect("]", "`]`")?;
            self.bounded(&a, i_at, "an index")?;
            idx.push(a);
        }
        if idx.len() != dims {
            return fail(
                at,
                format!("`{n}` has {dims} dimension{plural}; expected {shape}"),
            );
        }
        if self.accesses.len() >= MAX_ACCESSES {
            return fail(
                at,
                format!("more than {MAX_ACCESSES} accesses; allowed: at most {MAX_ACCESSES}"),
            );
        }
        let col = idx.pop().unwrap_or_default();
        let row = idx.pop().unwrap_or_default();
        let get = |a: &Aff, d: usize| a.i.get(d).copied().unwrap_or(0);
        let loops = self.loops.iter().enumerate();
        let conds = self.conds.iter().filter(|c| !(c.is_const() && c.c >= 0));
        self.accesses.push(RawAccess {
            array: n.to_string(),
            row: [row.tx, row.ty, row.c],
            col: [col.tx, col.ty, col.c],
            tx: None,
            ty: None,
            loops: loops
                .map(|(d, l)| RawLoop {
                    trips: l.trips,
                    inc: [get(&row, d), get(&col, d)],
                })
                .collect(),
            conds: conds.map(|c| c.cond(self.loops.len())).collect(),
        });
        Ok(())
    }

    /// The [`Raw`] read, defaults filled in; conditions on tx (or ty) alone become its range.
    fn finish(mut self) -> Result<Raw> {
        let end = self.peek().at;
        let Some(block) = self.block.take() else {
            return fail(
                end,
                "no block size; expected `block BDX BDY;` or `dim3 block(BDX, BDY);`",
            );
        };
        let bd = [block[0], block.get(1).copied().unwrap_or(1)];
        for a in &mut self.accesses {
            ranges(a, bd);
        }
        let get = |k: &str, d: u32| {
            self.config
                .iter()
                .find(|(n, _)| *n == k)
                .map_or(d, |(_, v)| *v as u32)
        };
        Ok(Raw {
            banks: get("banks", 32),
            bank_width: get("bank_width", 4),
            layer_bytes: get("layer_bytes", 8),
            lanes: get("lanes", 32),
            mode: self.mode.take().unwrap_or_else(|| "multicast".into()),
            block,
            arrays: self.arrays.drain(..).map(|d| d.raw).collect(),
            accesses: std::mem::take(&mut self.accesses),
            note: self.note.take(),
        })
    }
}

/// Moves the conditions of `a` that read tx alone (or ty alone) into its `tx` (`ty`) range in
/// block `bd`, when the range stays non-empty (then they are equivalent).
fn ranges(a: &mut RawAccess, bd: [u64; 2]) {
    let mut r = [[0i128, bd[0] as i128], [0, bd[1] as i128]];
    let single = |c: &RawCond| c.i.iter().all(|&x| x == 0) && ((c.tx == 0) != (c.ty == 0));
    for c in a.conds.iter().filter(|c| single(c)) {
        let (d, k) = if c.tx != 0 {
            (0, c.tx as i128)
        } else {
            (1, c.ty as i128)
        };
        let c0 = c.c as i128;
        if k > 0 {
            r[d][0] = r[d][0].max(-(c0.div_euclid(k)));
        } else {
            r[d][1] = r[d][1].min(c0.div_euclid(-k) + 1);
        }
    }
    if r.iter().any(|[lo, hi]| lo >= hi) {
        return;
    }
    a.conds.retain(|c| !single(c));
    let range = |[lo, hi]: [i128; 2], n: u64| {
        ([lo, hi] != [0, n as i128]).then_some([lo as u64, hi as u64])
    };
    a.tx = range(r[0], bd[0]);
    a.ty = range(r[1], bd[1]);
}
