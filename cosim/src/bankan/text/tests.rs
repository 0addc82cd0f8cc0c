//! Unit tests of the text form (docs/bank-conflicts.md §3.4, "Text form"): how loops, steps,
//! bounds and comparisons become [`RawLoop`]s and [`RawCond`]s, ranges, declarations, errors.

use super::*;
use crate::bankan::input::Overrides;

/// `text` after a 16 x 16 block and `__shared__ float A[32][33];`.
fn kernel(text: &str) -> Raw {
    let src = format!("block 16 16;\n__shared__ float A[32][33];\n{text}");
    parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"))
}

/// The error of `text` after the same header.
fn error(text: &str) -> String {
    let src = format!("block 16 16;\n__shared__ float A[32][33];\n{text}");
    parse(&src).expect_err(&src)
}

fn cond(tx: i64, ty: i64, i: &[i64], c: i64) -> (i64, i64, Vec<i64>, i64) {
    (tx, ty, i.to_vec(), c)
}

fn conds(a: &RawAccess) -> Vec<(i64, i64, Vec<i64>, i64)> {
    a.conds
        .iter()
        .map(|c| (c.tx, c.ty, c.i.clone(), c.c))
        .collect()
}

fn loops(a: &RawAccess) -> Vec<(u64, [i64; 2])> {
    a.loops.iter().map(|l| (l.trips, l.inc)).collect()
}

#[test]
fn affine_indices() {
    let r = kernel("x = A[ty + 1][2*tx + 3] + A[threadIdx.y][-(tx - 20) * 1];");
    assert_eq!(r.accesses.len(), 2);
    assert_eq!(
        (r.accesses[0].row, r.accesses[0].col),
        ([0, 1, 1], [2, 0, 3])
    );
    assert_eq!(
        (r.accesses[1].row, r.accesses[1].col),
        ([0, 1, 0], [-1, 0, 20])
    );
    let r = kernel("const int P = 4;\nint r = ty + P;\nA[r][(tx + 1) * 2 - P / 2 % 3];");
    assert_eq!(
        (r.accesses[0].row, r.accesses[0].col),
        ([0, 1, 4], [2, 0, 0])
    );
}

#[test]
fn textual_order_write_first() {
    let r = kernel("A[ty][tx] = A[tx][ty] * 2 + A[0][1];");
    let rows: Vec<[i64; 3]> = r.accesses.iter().map(|a| a.row).collect();
    assert_eq!(rows, [[0, 1, 0], [1, 0, 0], [0, 0, 0]]);
}

#[test]
fn loop_steps_and_lower_bounds() {
    let r = kernel("for (int i = 0; i < 7; i += 2) A[i][tx];");
    assert_eq!(
        loops(&r.accesses[0]),
        [(4, [2, 0])],
        "i += 2: ceil(7 / 2) trips"
    );
    let r = kernel("for (int i = 3; i <= 9; i = i + 3) A[ty][i + tx];");
    assert_eq!(loops(&r.accesses[0]), [(3, [0, 3])], "i = 3, 6, 9");
    assert_eq!(r.accesses[0].col, [1, 0, 3], "the lower bound folded in");
    let r = kernel("for (unsigned i = 0; i < 4; ++i) for (int j = 0; j < 2; j++) A[2*i][j];");
    assert_eq!(loops(&r.accesses[0]), [(4, [2, 0]), (2, [0, 1])]);
    assert!(r.accesses[0].conds.is_empty());
}

#[test]
fn bound_in_an_outer_loop_variable() {
    // Rodinia lud_diagonal: for (i = 0; i < 15; i++) for (j = 0; j < i; j++) shadow[tx][j].
    let r = kernel("for (int i = 0; i < 15; i++) for (int j = 0; j < i; j++) A[tx][j];");
    let a = &r.accesses[0];
    assert_eq!(
        loops(a),
        [(15, [0, 0]), (14, [0, 1])],
        "j < i: at most 14 trips"
    );
    assert_eq!(conds(a), [cond(0, 0, &[1, -1], -1)], "i - j - 1 >= 0");
    let r = kernel("for (int i = 0; i < 4; i++) for (int j = 1; j <= i + tx; j += 2) A[j][tx];");
    let a = &r.accesses[0];
    assert_eq!(
        loops(a),
        [(4, [0, 0]), (9, [2, 0])],
        "j = 1, 3, ..., <= 3 + 15"
    );
    assert_eq!(a.row, [0, 0, 1]);
    assert_eq!(
        conds(a),
        [cond(1, 0, &[1, -2], -1)],
        "i + tx - (1 + 2·j') >= 0"
    );
}

#[test]
fn comparisons_as_conditions() {
    let r = kernel("for (int i = 0; i < 16; i++) if (tx > i) A[tx][i];");
    assert_eq!(
        conds(&r.accesses[0]),
        [cond(1, 0, &[-1], -1)],
        "tx - i - 1 >= 0"
    );
    let r = kernel("for (int i = 0; i < 16; i++) if (i <= ty && 2*tx >= i + 1) A[tx][i];");
    assert_eq!(
        conds(&r.accesses[0]),
        [cond(0, 1, &[-1], 0), cond(2, 0, &[-1], -1)]
    );
    let r = kernel("for (int i = 0; i < 16; i++) if ((tx + ty == i)) A[tx][i];");
    assert_eq!(
        conds(&r.accesses[0]),
        [cond(1, 1, &[-1], 0), cond(-1, -1, &[1], 0)],
        "== is two conditions"
    );
}

#[test]
fn thread_only_conditions_become_ranges() {
    let r = kernel("if (tx < 4 && ty >= 2 && 2 > 1) A[ty][tx];\nif (3*tx > 7) A[ty][tx];");
    let (a, b) = (&r.accesses[0], &r.accesses[1]);
    assert_eq!(
        (a.tx, a.ty, a.conds.len()),
        (Some([0, 4]), Some([2, 16]), 0)
    );
    assert_eq!((b.tx, b.ty), (Some([3, 16]), None), "3·tx − 8 ≥ 0: tx ≥ 3");
    let r = kernel("if (tx < 0) A[ty][tx];");
    assert_eq!(conds(&r.accesses[0]), [cond(-1, 0, &[], -1)], "empty: kept");
    let k = kernel("if (tx == 5) A[ty][tx];")
        .validate(Overrides::default())
        .unwrap();
    assert_eq!(k.accesses[0].tx, [5, 6]);
}

#[test]
fn declarations() {
    let r = parse(
        "block 8; banks 16; bank_width 8; layer_bytes 16; lanes 16; mode gpgpusim-limited;\n\
         note \"a\" \" b\";\n\
         __shared__ double D[4][32 + 1] dummy(2) swizzle(1, 0, 1);\n\
         __shared__ volatile float4 V[2 * 8 + 1];\n\
         __shared__ unsigned long long U[3][(8 + 1)];\n\
         D[0][tx]; V[tx]; U[0][0];",
    )
    .unwrap();
    assert_eq!(
        (r.banks, r.bank_width, r.layer_bytes, r.lanes),
        (16, 8, 16, 16)
    );
    assert_eq!(
        (r.mode.as_str(), r.block.clone()),
        ("gpgpusim-limited", vec![8])
    );
    assert_eq!(r.note.as_deref(), Some("a b"));
    let a: Vec<_> = r
        .arrays
        .iter()
        .map(|a| (a.elem_bytes, a.rows, a.cols, a.pad, a.dummy, a.swizzle))
        .collect();
    assert_eq!(
        a,
        [
            (8, 4, 32, 1, 2, Some([1, 0, 1])),
            (16, 1, 16, 1, 0, None),
            (8, 3, 9, 0, 0, None)
        ]
    );
    assert_eq!(
        (r.accesses[1].row, r.accesses[1].col),
        ([0, 0, 0], [1, 0, 0])
    );
    let r = parse("dim3 block(32, 2);\n__global__ void k(float *g) { __shared__ int s[64]; s[tx] = g[tx * ty]; }").unwrap();
    assert_eq!((r.block.clone(), r.accesses.len()), (vec![32, 2], 1));
}

#[test]
fn errors_name_the_place_and_what_is_allowed() {
    let mut bad = vec![];
    for (text, want) in [
        ("A[tz][tx];", "3:3: unknown name `tz`; expected tx, ty"),
        ("A[tx*ty][0];", "3:5: non-affine product `tx*ty`"),
        (
            "for (int i = 0; i < 4; i++) A[i*i][0];",
            "3:32: non-affine product `i*i`",
        ),
        (
            "if (tx < 1 || ty < 1) A[0][0];",
            "3:12: `||` is not supported",
        ),
        ("if (tx != 1) A[0][0];", "3:8: `!=` is not supported"),
        ("if (tx) A[0][0];", "3:5: a condition without a comparison"),
        ("A[0][0]\nA[1][1];", "3:8: missing `;`"),
        ("A[ty];", "3:1: `A` has 2 dimensions; expected A[row][col]"),
        (
            "for (i = 0; i >= 4; i++) A[0][0];",
            "3:13: unsupported loop test",
        ),
        ("for (i = 0; i < 4; i--) A[0][0];", "3:21: unexpected `--`"),
        ("for (i = 0; i < 4; i += 0) A[0][0];", "3:22: step 0"),
        (
            "for (i = tx; i < 4; i++) A[0][0];",
            "3:10: the loop's start is not constant",
        ),
        (
            "for (i = 0; i < 0; i++) A[0][0];",
            "3:17: the loop never runs",
        ),
        (
            "if (tx < 1) A[0][0]; else A[1][1];",
            "3:22: `else` is not supported",
        ),
        (
            "A[0][70000 - 1];",
            "3:6: an index: 69999 is out of range; allowed",
        ),
        ("A[0][9223372036854775807 + 1];", "3:26: integer overflow"),
        ("A[0][1 / 0];", "3:8: division by zero"),
        ("B[0][0];", "3:1: unknown array `B`"),
        (
            "__shared__ short S[4];",
            "3:12: `short` elements are narrower",
        ),
        ("__shared__ float A[4];", "3:18: `A` is already defined"),
        ("/* A[0][0];", "3:1: unterminated comment"),
        (
            "for (int i = 0; i < 2; i++) __shared__ float B[2];",
            "3:29: a __shared__ declaration inside",
        ),
        ("banks 32; banks 16;", "3:11: `banks` is given twice"),
        ("#define N 4", "3:1: preprocessor lines are not supported"),
        (
            "for (int a = 0; a < 2; a++) for (int b = 0; b < 2; b++) for (int c = 0; c < 2; c++)\n\
             for (int d = 0; d < 2; d++) for (int e = 0; e < 2; e++) A[a][e];",
            "4:57: `A` is inside 5 loops; allowed: at most 4",
        ),
    ] {
        let e = error(text);
        if !e.starts_with(want) || e.contains('\n') {
            bad.push(format!("{text}: {e}"));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
    let deep = format!("A[{}0{}][0];", "(".repeat(80), ")".repeat(80));
    assert!(error(&deep).contains("nesting deeper than 64"));
    assert!(parse("__shared__ float A[4];")
        .unwrap_err()
        .starts_with("1:23: no block size"));
}
