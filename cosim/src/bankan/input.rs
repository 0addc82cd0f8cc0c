//! `bankan`'s input, the JSON form (docs/bank-conflicts.md §3.4): shared arrays, the block, and
//! per access the affine map of [002] §4.3.2 with its `for` loops and `if` conditions. Parsing
//! refuses unknown keys; [`Raw::validate`] checks every field against the bank model's ranges
//! (§1.2) and the documented size limits before any analysis, with a one-line error that names
//! the field and the allowed values.

use super::swizzle::Swizzle;
use crate::blocks::bank_conflict_detector::Cfg;
use serde::{de::Error as _, Deserialize, Deserializer};
use smrtl_hdl::blocks::bank_conflict_detector::{Mode, MODE_NAMES};

/// Largest input file (bytes).
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// Most arrays per kernel.
pub const MAX_ARRAYS: usize = 64;
/// Most accesses per kernel.
pub const MAX_ACCESSES: usize = 1024;
/// Most threads per block (CUDA's limit).
pub const MAX_THREADS: u64 = 1024;
/// Deepest loop nest of one access.
pub const MAX_LOOPS: usize = 4;
/// Most iterations of one access's loop nest (the product of its trip counts): bounds the
/// brute-force mode's time.
pub const MAX_ITERATIONS: u64 = 1 << 16;
/// Most `if` conditions per access.
pub const MAX_CONDS: usize = 8;
/// Largest magnitude of a coefficient, constant or increment.
pub const MAX_COEF: i64 = 1 << 16;
/// Largest shared-memory layout: byte addresses fit the model's 32 address bits (§1.2, A).
pub const MAX_LAYOUT_BYTES: u64 = 1 << 32;

/// A deserializer for one field that names the field in its error (serde's own messages say
/// only what was expected).
macro_rules! named {
    ($($f:ident: $t:ty = $name:literal;)*) => {$(
        fn $f<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<$t, D::Error> {
            <$t>::deserialize(d).map_err(|e| D::Error::custom(format!("{}: {e}", $name)))
        }
    )*};
}

named! {
    f_banks: u32 = "banks";
    f_bank_width: u32 = "bank_width";
    f_layer_bytes: u32 = "layer_bytes";
    f_lanes: u32 = "lanes";
    f_mode: String = "mode";
    f_block: Vec<u64> = "block";
    f_name: String = "name";
    f_elem_bytes: u32 = "elem_bytes";
    f_rows: u64 = "rows";
    f_cols: u64 = "cols";
    f_pad: u64 = "pad";
    f_dummy: u64 = "dummy";
    f_swizzle: Option<[u32; 3]> = "swizzle";
    f_array: String = "array";
    f_row: [i64; 3] = "row";
    f_col: [i64; 3] = "col";
    f_tx_range: Option<[u64; 2]> = "tx";
    f_ty_range: Option<[u64; 2]> = "ty";
    f_trips: u64 = "trips";
    f_inc: [i64; 2] = "inc";
    f_tx: i64 = "tx";
    f_ty: i64 = "ty";
    f_i: Vec<i64> = "i";
    f_c: i64 = "c";
}

/// The file as written (defaults filled in, nothing checked yet).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// B.
    #[serde(default = "d32", deserialize_with = "f_banks")]
    pub banks: u32,
    /// N, the bank mode in bytes.
    #[serde(default = "d4", deserialize_with = "f_bank_width")]
    pub bank_width: u32,
    /// W.
    #[serde(default = "d8", deserialize_with = "f_layer_bytes")]
    pub layer_bytes: u32,
    /// L, the warp size.
    #[serde(default = "d32", deserialize_with = "f_lanes")]
    pub lanes: u32,
    #[serde(default = "multicast", deserialize_with = "f_mode")]
    pub mode: String,
    /// [bdx, bdy].
    #[serde(deserialize_with = "f_block")]
    pub block: Vec<u64>,
    pub arrays: Vec<RawArray>,
    pub accesses: Vec<RawAccess>,
    /// Free text: where the kernel comes from and how its accesses were derived (not analysed).
    #[serde(default)]
    pub note: Option<String>,
}

fn d4() -> u32 {
    4
}
fn d8() -> u32 {
    8
}
fn d32() -> u32 {
    32
}
fn multicast() -> String {
    "multicast".into()
}

/// One `__shared__` array.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawArray {
    #[serde(deserialize_with = "f_name")]
    pub name: String,
    #[serde(deserialize_with = "f_elem_bytes")]
    pub elem_bytes: u32,
    #[serde(deserialize_with = "f_rows")]
    pub rows: u64,
    #[serde(deserialize_with = "f_cols")]
    pub cols: u64,
    /// Intra-padding: the row pitch is `cols + pad` elements.
    #[serde(default, deserialize_with = "f_pad")]
    pub pad: u64,
    /// Inter-padding: elements placed before the array.
    #[serde(default, deserialize_with = "f_dummy")]
    pub dummy: u64,
    /// CuTe's `Swizzle<B, M, S>` as `[B, M, S]` on the element offset, or null (§3.6).
    #[serde(default, deserialize_with = "f_swizzle")]
    pub swizzle: Option<[u32; 3]>,
}

/// One access: `array[row][col]`, row and col affine in (tx, ty) and the loop indices.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAccess {
    #[serde(deserialize_with = "f_array")]
    pub array: String,
    /// [coefficient of tx, coefficient of ty, constant].
    #[serde(deserialize_with = "f_row")]
    pub row: [i64; 3],
    #[serde(deserialize_with = "f_col")]
    pub col: [i64; 3],
    /// Half-open range of active tx, or null for all.
    #[serde(default, deserialize_with = "f_tx_range")]
    pub tx: Option<[u64; 2]>,
    #[serde(default, deserialize_with = "f_ty_range")]
    pub ty: Option<[u64; 2]>,
    /// The loop nest, outermost first.
    #[serde(default, rename = "for")]
    pub loops: Vec<RawLoop>,
    /// Conditions, all of which must hold for a lane to be active.
    #[serde(default, rename = "if")]
    pub conds: Vec<RawCond>,
}

/// `for (i = 0; i < trips; i++)`: each iteration adds `inc` = [row, col] to the index.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLoop {
    #[serde(deserialize_with = "f_trips")]
    pub trips: u64,
    #[serde(deserialize_with = "f_inc")]
    pub inc: [i64; 2],
}

/// `tx·tx + ty·ty + Σ i[k]·i_k + c ≥ 0`, with i_k the index of loop k (outermost first).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCond {
    #[serde(default, deserialize_with = "f_tx")]
    pub tx: i64,
    #[serde(default, deserialize_with = "f_ty")]
    pub ty: i64,
    #[serde(default, deserialize_with = "f_i")]
    pub i: Vec<i64>,
    #[serde(default, deserialize_with = "f_c")]
    pub c: i64,
}

/// A checked kernel.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub banks: u32,
    pub bank_width: u32,
    pub layer_bytes: u32,
    pub lanes: u32,
    pub mode: Mode,
    pub bdx: u64,
    pub bdy: u64,
    pub arrays: Vec<Array>,
    pub accesses: Vec<Access>,
}

/// A placed array.
#[derive(Debug, Clone)]
pub struct Array {
    pub name: String,
    pub elem_bytes: u32,
    pub rows: u64,
    pub cols: u64,
    pub pad: u64,
    pub dummy: u64,
    /// Byte address of element [0][0].
    pub base: u64,
    /// The XOR swizzle on element offsets, if any.
    pub swizzle: Option<Swizzle>,
}

impl Array {
    /// Row pitch in elements.
    pub fn pitch(&self) -> u64 {
        self.cols + self.pad
    }
}

/// A checked access.
#[derive(Debug, Clone)]
pub struct Access {
    pub array: usize,
    pub row: [i64; 3],
    pub col: [i64; 3],
    pub tx: [u64; 2],
    pub ty: [u64; 2],
    pub loops: Vec<RawLoop>,
    /// Each condition's `i` has one entry per loop.
    pub conds: Vec<RawCond>,
}

/// Command-line overrides of the file's mode and bank width.
#[derive(Debug, Clone, Copy, Default)]
pub struct Overrides {
    pub mode: Option<Mode>,
    pub bank_width: Option<u32>,
}

type Result<T> = std::result::Result<T, String>;

/// Parses a mode name, as in the file and on the command line (the detector's `MODE` names).
pub fn parse_mode(s: &str) -> Result<Mode> {
    Mode::from_name(s)
        .ok_or_else(|| format!("mode `{s}` is unknown; allowed: {}", MODE_NAMES.join(", ")))
}

impl Raw {
    /// Parses the JSON form (a repeated key refused, as everywhere in the CLI).
    pub fn parse(text: &str) -> Result<Raw> {
        crate::json::repeated_key(text)?;
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    /// Reads either input form: JSON when the first non-blank character is `{`, else the
    /// CUDA-like text form ([`super::text`], errors `LINE:COL: ...`).
    pub fn read(text: &str) -> Result<Raw> {
        if text.trim_start().starts_with('{') {
            Raw::parse(text)
        } else {
            super::text::parse(text)
        }
    }

    /// [`Raw::read`] then [`Raw::validate`]; in the text form an error about an array or an
    /// access starts with its `LINE:COL: `.
    pub fn read_checked(text: &str, o: Overrides) -> Result<Kernel> {
        if text.trim_start().starts_with('{') {
            return Raw::parse(text)?.validate(o);
        }
        let (raw, places) = super::text::parse_placed(text)?;
        raw.validate(o).map_err(|e| places.locate(&e))
    }

    /// Checks every field with `o` applied and lays the arrays out.
    pub fn validate(&self, o: Overrides) -> Result<Kernel> {
        let mode = match o.mode {
            Some(m) => m,
            None => parse_mode(&self.mode)?,
        };
        let bank_width = o.bank_width.unwrap_or(self.bank_width);
        one_of("banks", self.banks as u64, &[8, 16, 32])?;
        one_of("lanes", self.lanes as u64, &[8, 16, 32])?;
        one_of("layer_bytes", self.layer_bytes as u64, &[4, 8, 16, 32])?;
        let up_to_w: Vec<u64> = [4, 8, 16, 32]
            .into_iter()
            .filter(|&x| x <= self.layer_bytes as u64)
            .collect();
        let bw_name = if o.bank_width.is_some() {
            "--bank-width"
        } else {
            "bank_width"
        };
        one_of(bw_name, bank_width as u64, &up_to_w)
            .map_err(|e| format!("{e} (powers of two from 4 to layer_bytes)"))?;
        let [bdx, bdy] = match self.block[..] {
            [x] => [x, 1],
            [x, y] => [x, y],
            _ => {
                return Err(format!(
                    "block has {} entries; allowed: [bdx] or [bdx, bdy]",
                    self.block.len()
                ))
            }
        };
        if bdx == 0 || bdy == 0 || bdx.saturating_mul(bdy) > MAX_THREADS {
            return Err(format!(
                "block [{bdx}, {bdy}] is out of range; allowed: bdx, bdy ≥ 1 and \
                 bdx·bdy ≤ {MAX_THREADS} threads"
            ));
        }
        let arrays = self.layout(&up_to_w)?;
        if self.accesses.len() > MAX_ACCESSES {
            return Err(format!(
                "{} accesses; allowed: at most {MAX_ACCESSES}",
                self.accesses.len()
            ));
        }
        let mut accesses = vec![];
        for (k, a) in self.accesses.iter().enumerate() {
            accesses
                .push(access(a, &arrays, [bdx, bdy]).map_err(|e| format!("accesses[{k}]: {e}"))?);
        }
        Ok(Kernel {
            banks: self.banks,
            bank_width,
            layer_bytes: self.layer_bytes,
            lanes: self.lanes,
            mode,
            bdx,
            bdy,
            arrays,
            accesses,
        })
    }

    /// Places the arrays in declaration order from byte 0, each starting at the next multiple
    /// of its element size, its dummy elements first.
    fn layout(&self, up_to_w: &[u64]) -> Result<Vec<Array>> {
        if self.arrays.is_empty() || self.arrays.len() > MAX_ARRAYS {
            return Err(format!(
                "{} arrays; allowed: 1 to {MAX_ARRAYS}",
                self.arrays.len()
            ));
        }
        let mut next = 0u64;
        let mut out: Vec<Array> = vec![];
        for (k, a) in self.arrays.iter().enumerate() {
            let at = |e: String| format!("arrays[{k}] ({}): {e}", a.name);
            if a.name.is_empty() || out.iter().any(|b| b.name == a.name) {
                return Err(at("name must be non-empty and unique".into()));
            }
            one_of("elem_bytes", a.elem_bytes as u64, up_to_w)
                .map_err(|e| at(format!("{e} (powers of two from 4 to layer_bytes)")))?;
            if a.rows == 0 || a.cols == 0 {
                return Err(at("rows and cols must be at least 1".into()));
            }
            let m = a.elem_bytes as u64;
            let elems = a
                .rows
                .checked_mul(a.cols.saturating_add(a.pad))
                .and_then(|x| x.checked_add(a.dummy));
            let start = next.div_ceil(m) * m;
            let end = elems
                .and_then(|e| e.checked_mul(m))
                .and_then(|b| b.checked_add(start))
                .filter(|&e| e <= MAX_LAYOUT_BYTES)
                .ok_or_else(|| {
                    at(format!(
                        "the layout passes {MAX_LAYOUT_BYTES} bytes; allowed: byte addresses \
                         of at most 32 bits"
                    ))
                })?;
            out.push(Array {
                name: a.name.clone(),
                elem_bytes: a.elem_bytes,
                rows: a.rows,
                cols: a.cols,
                pad: a.pad,
                dummy: a.dummy,
                base: start + a.dummy * m,
                swizzle: swizzled(a).map_err(at)?,
            });
            next = end;
        }
        Ok(out)
    }
}

/// The array's swizzle, checked: its period must divide the array's elements, so swizzled
/// offsets stay inside the array.
fn swizzled(a: &RawArray) -> Result<Option<Swizzle>> {
    let Some(b_m_s) = a.swizzle else {
        return Ok(None);
    };
    let sw = Swizzle::new(b_m_s)?;
    let elems = a.rows.saturating_mul(a.cols.saturating_add(a.pad));
    if !elems.is_multiple_of(sw.period()) {
        return Err(format!(
            "{sw} swizzles blocks of {} elements but the array has {elems} (rows × (cols + \
             pad)); allowed: a swizzle whose 2^(B+M+S) divides the array's elements",
            sw.period()
        ));
    }
    Ok(Some(sw))
}

fn one_of(name: &str, v: u64, allowed: &[u64]) -> Result<()> {
    if allowed.contains(&v) {
        return Ok(());
    }
    let list: Vec<String> = allowed.iter().map(u64::to_string).collect();
    Err(format!(
        "{name} = {v} is out of range; allowed: {}",
        list.join(", ")
    ))
}

fn coef(name: &str, v: i64) -> Result<()> {
    if v.abs() > MAX_COEF {
        return Err(format!(
            "{name} = {v} is out of range; allowed: -{MAX_COEF}..={MAX_COEF}"
        ));
    }
    Ok(())
}

/// Checks access `k` and that its row and col stay inside its array for every thread of its
/// ranges and every iteration (the `if` conditions not considered).
fn access(a: &RawAccess, arrays: &[Array], block: [u64; 2]) -> Result<Access> {
    let array = arrays
        .iter()
        .position(|x| x.name == a.array)
        .ok_or_else(|| {
            let names: Vec<&str> = arrays.iter().map(|x| x.name.as_str()).collect();
            format!(
                "array `{}` is not declared; allowed: {}",
                a.array,
                names.join(", ")
            )
        })?;
    for (name, v) in [("row", a.row), ("col", a.col)] {
        for x in v {
            coef(name, x)?;
        }
    }
    let range = |name: &str, r: Option<[u64; 2]>, dim: u64| -> Result<[u64; 2]> {
        let [lo, hi] = r.unwrap_or([0, dim]);
        if lo >= hi || hi > dim {
            return Err(format!(
                "{name} range [{lo}, {hi}) is out of range; allowed: [lo, hi) with \
                 0 ≤ lo < hi ≤ {dim} (the block)"
            ));
        }
        Ok([lo, hi])
    };
    let tx = range("tx", a.tx, block[0])?;
    let ty = range("ty", a.ty, block[1])?;
    if a.loops.len() > MAX_LOOPS {
        return Err(format!(
            "{} loops; allowed: at most {MAX_LOOPS}",
            a.loops.len()
        ));
    }
    let mut iters = 1u64;
    for (j, l) in a.loops.iter().enumerate() {
        if l.trips == 0 {
            return Err(format!("for[{j}].trips = 0; allowed: at least 1"));
        }
        iters = iters.saturating_mul(l.trips);
        coef("for.inc", l.inc[0])?;
        coef("for.inc", l.inc[1])?;
    }
    if iters > MAX_ITERATIONS {
        return Err(format!(
            "the loop nest runs {iters} iterations; allowed: at most {MAX_ITERATIONS}"
        ));
    }
    if a.conds.len() > MAX_CONDS {
        return Err(format!(
            "{} conditions; allowed: at most {MAX_CONDS}",
            a.conds.len()
        ));
    }
    let mut conds = vec![];
    for (j, c) in a.conds.iter().enumerate() {
        if c.i.len() > a.loops.len() {
            return Err(format!(
                "if[{j}].i has {} coefficients; allowed: at most one per loop ({})",
                c.i.len(),
                a.loops.len()
            ));
        }
        for v in [c.tx, c.ty, c.c].iter().chain(&c.i) {
            coef("if", *v)?;
        }
        let mut c = c.clone();
        c.i.resize(a.loops.len(), 0);
        conds.push(c);
    }
    let acc = Access {
        array,
        row: a.row,
        col: a.col,
        tx,
        ty,
        loops: a.loops.clone(),
        conds,
    };
    let arr = &arrays[array];
    bounds("row", &acc, a.row, 0, arr.rows)?;
    bounds("col", &acc, a.col, 1, arr.cols)?;
    Ok(acc)
}

/// The range of `f` = [ctx, cty, c] + Σ i_j·inc_j[which] over the access's box must lie in
/// [0, limit).
fn bounds(name: &str, a: &Access, f: [i64; 3], which: usize, limit: u64) -> Result<()> {
    let span = |c: i64, lo: i64, hi: i64| (c * lo).min(c * hi)..=(c * lo).max(c * hi);
    let mut terms = vec![
        span(f[0], a.tx[0] as i64, a.tx[1] as i64 - 1),
        span(f[1], a.ty[0] as i64, a.ty[1] as i64 - 1),
    ];
    for l in &a.loops {
        terms.push(span(l.inc[which], 0, l.trips as i64 - 1));
    }
    let lo: i64 = f[2] + terms.iter().map(|r| *r.start()).sum::<i64>();
    let hi: i64 = f[2] + terms.iter().map(|r| *r.end()).sum::<i64>();
    let (lo, hi) = if (lo < 0 || hi >= limit as i64) && !a.conds.is_empty() {
        conditioned_span(a, f, which).unwrap_or((lo, hi))
    } else {
        (lo, hi)
    };
    if lo < 0 || hi >= limit as i64 {
        return Err(format!(
            "{name} index spans {lo}..={hi} over the active threads and iterations; allowed: \
             0..={} (the array's {})",
            limit - 1,
            if which == 0 { "rows" } else { "cols" }
        ));
    }
    Ok(())
}

/// Most (thread, iteration) pairs [`conditioned_span`] enumerates.
const MAX_CONDITIONED_PAIRS: u64 = 1 << 22;

/// The exact range of `f` over the threads and iterations where every `if` condition holds
/// (an access like `temp[m - tx + 1][tx + 1]` under `if (tx <= m)` leaves the array only for
/// threads the condition disables); `None` when that is more pairs than
/// [`MAX_CONDITIONED_PAIRS`]. No active pair: the empty range as (0, 0).
fn conditioned_span(a: &Access, f: [i64; 3], which: usize) -> Option<(i64, i64)> {
    let trips: Vec<u64> = a.loops.iter().map(|l| l.trips).collect();
    let iterations: u64 = trips.iter().product();
    let threads = (a.tx[1] - a.tx[0]) * (a.ty[1] - a.ty[0]);
    if threads.saturating_mul(iterations) > MAX_CONDITIONED_PAIRS {
        return None;
    }
    let mut span: Option<(i64, i64)> = None;
    let mut iv = vec![0i64; trips.len()];
    for n in 0..iterations {
        let mut rest = n;
        for (j, &t) in trips.iter().enumerate().rev() {
            iv[j] = (rest % t) as i64;
            rest /= t;
        }
        let step: i64 = a
            .loops
            .iter()
            .zip(&iv)
            .map(|(l, &i)| l.inc[which] * i)
            .sum();
        for ty in a.ty[0] as i64..a.ty[1] as i64 {
            for tx in a.tx[0] as i64..a.tx[1] as i64 {
                let holds = |c: &RawCond| {
                    let s: i64 = c.i.iter().zip(&iv).map(|(x, &i)| x * i).sum();
                    c.tx * tx + c.ty * ty + s + c.c >= 0
                };
                if a.conds.iter().all(holds) {
                    let v = f[0] * tx + f[1] * ty + f[2] + step;
                    span = Some(span.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))));
                }
            }
        }
    }
    Some(span.unwrap_or((0, 0)))
}

impl Kernel {
    /// The bank-model configuration of an access to `array` (spec §1.2; one port).
    pub fn cfg(&self, array: usize) -> Cfg {
        Cfg {
            lanes: self.lanes,
            banks: self.banks,
            layer_bytes: self.layer_bytes,
            mode_bytes: self.bank_width,
            elem_bytes: self.arrays[array].elem_bytes,
            ports: 1,
            mode: self.mode,
        }
    }

    /// Warps per block.
    pub fn warps(&self) -> u64 {
        (self.bdx * self.bdy).div_ceil(self.lanes as u64)
    }
}

impl Kernel {
    /// Bytes the layout takes: the end of the last array.
    pub fn bytes(&self) -> u64 {
        let last = self.arrays.last().expect("at least one array");
        last.base + last.rows * last.pitch() * last.elem_bytes as u64
    }

    /// The kernel with bank width `n`, intra-pads `pads` and dummies `dummies` (elements, one
    /// per array), laid out again as [`Raw::validate`] does; `None` past the layout limit.
    pub fn relayout(&self, n: u32, pads: &[u64], dummies: &[u64]) -> Option<Kernel> {
        let mut k = self.clone();
        k.bank_width = n;
        let mut next = 0u64;
        for (a, (&pad, &dummy)) in k.arrays.iter_mut().zip(pads.iter().zip(dummies)) {
            let m = a.elem_bytes as u64;
            a.pad = pad;
            a.dummy = dummy;
            let start = next.div_ceil(m) * m;
            a.base = start + dummy * m;
            next = a.base + a.rows * a.pitch() * m;
        }
        (next <= MAX_LAYOUT_BYTES).then_some(k)
    }
}
