//! The text form's loops, conditions and index expressions (docs/bank-conflicts.md §3.4, "Text
//! form"): affine in tx, ty and the loop variables ([002] §4.3.2), comparisons as `≥ 0`.

use super::*;

impl Parser<'_> {
    /// `for (int i = L; i < U; i++)` (or `<=`, `++i`, `i += S`, `i = i + S`) and its body.
    pub(super) fn for_stmt(&mut self) -> Result<()> {
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
    pub(super) fn step(&mut self, var: &str) -> Result<i64> {
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
    pub(super) fn trips(
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
    pub(super) fn push_conds(&mut self, c: Vec<Aff>, at: usize) -> Result<()> {
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
    pub(super) fn if_stmt(&mut self) -> Result<()> {
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
pub(super) fn arith_of(v: Val, at: usize) -> Result<Aff> {
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
    pub(super) fn arith(&self, v: Option<Aff>, at: usize) -> Result<Aff> {
        v.ok_or(Error {
            at,
            msg: format!(
                "integer overflow; allowed: coefficients and constants within ±{MAX_COEF}"
            ),
        })
    }

    /// `cmp (&& cmp)*`; `||` is refused.
    pub(super) fn expr(&mut self) -> Result<Val> {
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
    pub(super) fn cmp(&mut self) -> Result<Val> {
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
    pub(super) fn sum(&mut self) -> Result<Val> {
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
    pub(super) fn term(&mut self) -> Result<Val> {
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
    pub(super) fn unary(&mut self) -> Result<Val> {
        self.enter()?;
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }

    pub(super) fn unary_inner(&mut self) -> Result<Val> {
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
    pub(super) fn name(&mut self, n: &str, at: usize) -> Result<Aff> {
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
pub(super) fn conds_of(v: Val, at: usize) -> Result<Vec<Aff>> {
    match v {
        Val::Conds(c) => Ok(c),
        Val::Aff(_) => fail(
            at,
            "arithmetic joined by `&&`; expected comparisons (<, <=, >, >=, ==)",
        ),
    }
}
