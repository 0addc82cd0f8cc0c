//! The text form's declarations and plain statements (docs/bank-conflicts.md §3.4, "Text
//! form"): `__shared__` arrays, named ints, and C expressions whose shared-array references are
//! the accesses.

use super::*;

/// Element bytes of the allowed `__shared__` element types.
pub(super) const TYPES: [(&str, u32); 25] = [
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
pub(super) const NARROW: [&str; 16] = [
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

pub(super) const TYPES_ALLOWED: &str =
    "float, int, unsigned, uint32_t, int32_t, half2 (4 B); double, \
     long long, int64_t, uint64_t, float2, int2, uint2 (8 B); float4, int4, uint4, double2, \
     longlong2 (16 B); double4, longlong4 (32 B)";

/// Words that may start or make up a declaration's type in a plain statement.
pub(super) const TYPE_WORDS: [&str; 36] = [
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
pub(super) const INT_WORDS: [&str; 11] = [
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

// ---------------------------------------------------------------------------------------------
// Declarations.
// ---------------------------------------------------------------------------------------------

impl Parser<'_> {
    /// A name a declaration may take: not a builtin, an array or a name in scope.
    pub(super) fn fresh(&self, name: &str, at: usize) -> Result<()> {
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
    pub(super) fn declaration(&mut self) -> Result<()> {
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
        if self.peek().kind != Kind::Ident && words.len() > 1 {
            return self.unexpected("`[`: __shared__ TYPE NAME[R][C];");
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
            at: start.at,
        });
        Ok(())
    }

    /// Element bytes of type `ty`.
    pub(super) fn elem_bytes(&self, ty: &str, at: usize) -> Result<u32> {
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
    pub(super) fn dim(&mut self) -> Result<(u64, u64)> {
        let (at, start) = (self.peek().at, self.pos);
        let total = self.constant("an array dimension")?;
        let tok = |k: usize| self.toks[self.pos - k].kind;
        let pad = if self.pos < start + 3 {
            0
        } else {
            match (tok(1), tok(2), tok(3)) {
                (Kind::Int(p), Kind::Punct("+"), Kind::Int(_) | Kind::Ident | Kind::Punct(")")) => {
                    p
                }
                _ => 0,
            }
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
    pub(super) fn attributes(&mut self, a: &mut RawArray) -> Result<()> {
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
}

/// Binary operators of plain C expressions (`?:` and `,` are handled apart).
pub(super) const BINOPS: [&str; 29] = [
    "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "+", "-", "*", "/", "%",
    "<", ">", "<=", ">=", "==", "!=", "&&", "||", "&", "|", "^", "<<", ">>",
];

// ---------------------------------------------------------------------------------------------
// Plain statements: named ints, and C expressions whose shared-array references are accesses.
// ---------------------------------------------------------------------------------------------

impl Parser<'_> {
    /// `x = A[ty][tx] + 1;`, `float v = A[i][tx];`, `__syncthreads();`, or a named int
    /// `const int N = 16;` / `int r = ty + 4;` (the latter when its value is affine).
    pub(super) fn simple(&mut self) -> Result<()> {
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
    pub(super) fn named_int(&mut self) -> Result<bool> {
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
    pub(super) fn vexpr(&mut self) -> Result<()> {
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

    pub(super) fn vunary(&mut self) -> Result<()> {
        self.enter()?;
        let r = self.vunary_inner();
        self.depth -= 1;
        r
    }

    /// Prefix operators, an operand, postfix operators; `NAME[...]` of a shared array is an
    /// access, of a kernel parameter global memory (skipped).
    pub(super) fn vunary_inner(&mut self) -> Result<()> {
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
    pub(super) fn postfix(&mut self) -> Result<()> {
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
    pub(super) fn access(&mut self, n: &str, at: usize) -> Result<()> {
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
        if self.loops.len() > MAX_LOOPS {
            return fail(
                at,
                format!(
                    "`{n}` is inside {} loops; allowed: at most {MAX_LOOPS}",
                    self.loops.len()
                ),
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
        self.access_at.push(at);
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
}
