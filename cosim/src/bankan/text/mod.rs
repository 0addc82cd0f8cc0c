//! `bankan`'s CUDA-like text input (docs/bank-conflicts.md §3.4, "Text form"): `__shared__`
//! declarations, `for` loops and `if`s around array references, read into the same [`Raw`] as
//! the JSON form, each access the affine map of [002] §4.3.2. A hand-written lexer and
//! recursive-descent parser; every error is `LINE:COL: problem; expected what`, and the parser
//! bounds its own work (nesting depth, conditions in force, accesses, arrays, checked integers).
//!
//! ```text
//! block 16 1;                         // settings: banks, bank_width, layer_bytes, lanes, mode, note
//! __shared__ float shadow[16][16];    // [R][C + P]: pad P; dummy(D), swizzle(B, M, S) after
//! for (int i = 0; i < 16; i++)        // RawLoop {trips 16, inc: i's coefficients in row, col}
//!     if (tx > i)                     // RawCond tx - i - 1 >= 0 (tx or ty alone: a range)
//!         shadow[tx][i];              // one access per shared reference, in textual order
//! ```
//!
//! `lex` makes the tokens, `expr` reads loops, `if`s and affine expressions, `decl`
//! declarations and plain statements; this module holds the parser's state and settings.

mod decl;
mod expr;
mod lex;
#[cfg(test)]
mod tests;

use super::input::{
    parse_mode, Raw, RawAccess, RawArray, RawCond, RawLoop, MAX_ACCESSES, MAX_ARRAYS, MAX_COEF,
    MAX_FILE_BYTES, MAX_LOOPS,
};
use decl::INT_WORDS;
use lex::{lex, unescape, Kind, Token};

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
    let mut at = at.min(src.len());
    while !src.is_char_boundary(at) {
        at -= 1;
    }
    let before = &src[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
}

/// Parses the text form into [`Raw`] (not yet validated); errors are `LINE:COL: ...`.
pub fn parse(src: &str) -> std::result::Result<Raw, String> {
    parse_placed(src).map(|(r, _)| r)
}

/// `LINE:COL` of each array's declaration and each access, in [`Raw`]'s order.
#[derive(Debug, Clone, Default)]
pub struct Places {
    pub arrays: Vec<(usize, usize)>,
    pub accesses: Vec<(usize, usize)>,
}

impl Places {
    /// `LINE:COL: e` when `e` is [`Raw::validate`]'s error about `arrays[k]` or `accesses[k]`.
    pub fn locate(&self, e: &str) -> String {
        let place = [("arrays[", &self.arrays), ("accesses[", &self.accesses)]
            .into_iter()
            .find_map(|(key, list)| {
                let k: usize = e.strip_prefix(key)?.split(']').next()?.parse().ok()?;
                list.get(k)
            });
        match place {
            Some((l, c)) => format!("{l}:{c}: {e}"),
            None => e.to_string(),
        }
    }
}

/// `LINE:COL` of the ascending byte offsets `at`, in one pass over the text.
fn line_cols(src: &str, at: &[usize]) -> Vec<(usize, usize)> {
    let (mut out, mut line, mut col) = (vec![], 1, 1);
    let mut chars = src.char_indices().peekable();
    for &a in at {
        while let Some((_, ch)) = chars.next_if(|(i, _)| *i < a) {
            if ch == '\n' {
                (line, col) = (line + 1, 1);
            } else {
                col += 1;
            }
        }
        out.push((line, col));
    }
    out
}

/// [`parse`], and where each array and access is ([`Places`], to place validation errors).
pub fn parse_placed(src: &str) -> std::result::Result<(Raw, Places), String> {
    if src.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "the text has {} bytes; allowed: at most {MAX_FILE_BYTES}",
            src.len()
        ));
    }
    let run = || -> Result<(Raw, Places)> {
        let toks = lex(src)?;
        let mut p = Parser::new(src, toks);
        p.program()?;
        let arrays: Vec<usize> = p.arrays.iter().map(|d| d.at).collect();
        let places = Places {
            arrays: line_cols(src, &arrays),
            accesses: line_cols(src, &p.access_at),
        };
        Ok((p.finish()?, places))
    };
    run().map_err(|e| {
        let (l, c) = line_col(src, e.at);
        format!("{l}:{c}: {}", e.msg)
    })
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
    /// Byte offset of the declaration.
    at: usize,
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
    /// Byte offset of each access.
    access_at: Vec<usize>,
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
            access_at: vec![],
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
        if self.is("#") {
            return fail(
                t.at,
                "preprocessor lines are not supported; expected `const int NAME = VALUE;`",
            );
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

impl Parser<'_> {
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
