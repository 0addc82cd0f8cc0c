//! `smrtl bankan` on the CUDA-like text form through the binary (docs/bank-conflicts.md §3.4,
//! "Text form"): every `.cu` twin in examples/bankan gives exactly its JSON's `--json` report
//! (in every mode and bank width), `--optimize` on 3dfd.cu finds ⟨N = 8, pad 0⟩ as on the
//! JSON, and bad inputs exit 2 with one `FILE:LINE:COL:` line and no panic.

use crate::common;

use common::{assert_usage_error, smrtl, stderr, stdout};
use std::path::Path;

const TWINS: [&str; 4] = ["3dfd", "lud-dia", "lud-forif", "tp-tc"];

/// `smrtl bankan FILE extra...`: stdout, exit 0 required.
fn run(file: &str, extra: &[&str]) -> String {
    let mut args = vec!["bankan", file];
    args.extend(extra);
    let o = smrtl(&args);
    assert_eq!(o.status.code(), Some(0), "{file} {extra:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn every_cu_twin_equals_its_json() {
    let mut cu: Vec<String> = std::fs::read_dir("examples/bankan")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    cu.sort();
    assert_eq!(cu, TWINS, "the .cu examples");
    for name in TWINS {
        let (text, json) = (
            format!("examples/bankan/{name}.cu"),
            format!("examples/bankan/{name}.json"),
        );
        assert!(Path::new(&json).exists());
        for extra in [
            &["--json"][..],
            &[][..],
            &["--json", "--brute-force"],
            &["--json", "--mode", "literal", "--bank-width", "8"],
            &["--json", "--mode", "gpgpusim-limited"],
        ] {
            assert_eq!(run(&text, extra), run(&json, extra), "{name} {extra:?}");
        }
    }
}

#[test]
fn optimize_3dfd_text_finds_8b_mode_pad_0() {
    let text = run("examples/bankan/3dfd.cu", &["--optimize", "--json"]);
    assert_eq!(
        text,
        run("examples/bankan/3dfd.json", &["--optimize", "--json"])
    );
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["bank_width"], 8);
    assert_eq!(v["pads"]["s_data"], 0);
    assert_eq!(v["replays_after"], 0);
}

/// A kernel's header: a 16 x 16 block and one 32 x 33 array `A`.
const HEAD: &str = "block 16 16;\n__shared__ float A[32][33];\n";

#[test]
fn bad_inputs_exit_2_with_file_line_col() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("k.cu");
    let f = file.to_str().unwrap();
    let h = HEAD;
    for (text, want) in [
        (
            format!("{h}A[tz][tx];"),
            "3:3: unknown name `tz`; expected tx, ty",
        ),
        (
            format!("{h}x = A[tx * ty][0];"),
            "3:10: non-affine product `tx * ty`",
        ),
        (
            format!("{h}if (tx < 4 || ty < 4)\n  A[ty][tx];"),
            "3:12: `||` is not supported",
        ),
        (
            format!("{h}if (tx != 4) A[ty][tx];"),
            "3:8: `!=` is not supported",
        ),
        (format!("{h}A[ty][tx]\nA[tx][ty];"), "3:10: missing `;`"),
        (
            format!("{h}B[ty][tx] = A[ty][tx];"),
            "3:1: unknown array `B`",
        ),
        (
            "block 32;\n__shared__ short s[64];".into(),
            "2:12: `short` elements are narrower than 4 bytes",
        ),
        (
            format!("{h}/* the end\nA[ty][tx];"),
            "3:1: unterminated comment; expected `*/`",
        ),
        (
            format!("{h}for (int i = 0; i != 4; i++) A[i][tx];"),
            "3:17: unsupported loop test",
        ),
        (
            format!("{h}for (int i = 0, i < 4; i++) A[i][tx];"),
            "3:15: missing `;`",
        ),
        (
            format!("{h}if (tx < 4) A[ty][tx];\nelse A[tx][ty];"),
            "4:1: `else` is not supported",
        ),
        (
            format!("{h}A[ty][tx + 70000];"),
            "3:7: an index: 70000 is out of range; allowed",
        ),
        (format!("{h}A[ty];"), "3:1: `A` has 2 dimensions"),
        (format!("{h}mode fast;"), "3:6: mode `fast` is unknown"),
        (
            "__shared__ float A[4];\nA[tx];\n".into(),
            "3:1: no block size",
        ),
    ] {
        std::fs::write(&file, &text).unwrap();
        let o = smrtl(&["bankan", f]);
        assert_usage_error(&o, &format!("error: {f}:{want}"));
    }
    // Validation errors name the access's or the array's place.
    for (text, want) in [
        (
            format!("{h}A[0][0];\n  A[ty][tx + 20];"),
            "4:3: accesses[1]: col index spans",
        ),
        (
            "block 8;\n__shared__ float4 F[4];\nF[tx];".into(),
            "2:1: arrays[0] (F): elem_bytes = 16",
        ),
        (
            format!("{h}for (int i = 0; i < 300; i++)\n for (int j = 0; j < 300; j++) A[0][0];"),
            "4:32: accesses[0]: the loop nest runs 90000",
        ),
    ] {
        std::fs::write(&file, &text).unwrap();
        assert_usage_error(&smrtl(&["bankan", f]), &format!("error: {f}:{want}"));
    }
    // The JSON form keeps `FILE: `.
    std::fs::write(&file, r#"{"block": [8], "arrays": [], "accesses": []}"#).unwrap();
    assert_usage_error(&smrtl(&["bankan", f]), &format!("error: {f}: 0 arrays"));
}
