//! Part 7 of tests/fuzz_parsers.rs: `smrtl bankan` kernels (docs/bank-conflicts.md §3.4), the
//! CUDA-like text form above all: arbitrary text, token soup of the form's own words (bare and
//! after a valid header), and the shipped `.cu` examples with a few bytes edited, through
//! [`Raw::read`] and [`Raw::validate`].

use super::harness::{config, guard_mem, one_line};
use super::strategies::{any_text, mutated_text, strings};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseError;
use smrtl_cosim::bankan::{Overrides, Raw};

/// Parser 7, a `bankan` kernel, either form (docs/bank-conflicts.md §3.4): read and validated; every
/// refusal is one line, nothing panics, memory stays bounded.
fn check_bankan(text: &str) -> Result<(), TestCaseError> {
    let r = guard_mem("bankan::Raw::read", &text, text.len(), || {
        Raw::read(text).and_then(|r| r.validate(Overrides::default()).map(|_| ()))
    })?;
    match r {
        Ok(()) => Ok(()),
        Err(e) => one_line("bankan::Raw::read", &text, &e),
    }
}

const BANKAN_TEXT: [&str; 4] = [
    include_str!("../../../../../examples/bankan/3dfd.cu"),
    include_str!("../../../../../examples/bankan/lud-dia.cu"),
    include_str!("../../../../../examples/bankan/lud-forif.cu"),
    include_str!("../../../../../examples/bankan/tp-tc.cu"),
];

/// Token soup of the text form: its keywords, names, operators and numbers at random.
fn bankan_tokens() -> BoxedStrategy<String> {
    let words = strings(&[
        "block 16 16;",
        "banks",
        "bank_width",
        "mode",
        "note \"x\"",
        "__shared__",
        "float",
        "short",
        "double",
        "A",
        "B",
        "[",
        "]",
        "[32]",
        "[32 + 1]",
        "for",
        "(",
        ")",
        "int",
        "i",
        "j",
        "=",
        "0",
        "1",
        "16",
        "-1",
        "65536",
        "9223372036854775807",
        ";",
        "<",
        "<=",
        ">",
        "==",
        "!=",
        "&&",
        "||",
        "++",
        "+=",
        "+",
        "-",
        "*",
        "/",
        "%",
        "if",
        "else",
        "{",
        "}",
        "tx",
        "ty",
        "threadIdx",
        ".",
        "x",
        "y",
        "__global__",
        "void",
        "k",
        ",",
        "dummy(4)",
        "swizzle(1, 0, 1)",
        "const",
        "/*",
        "*/",
        "//",
        "\n",
        "?",
        "dim3",
    ]);
    prop::collection::vec(select(words), 0..80)
        .prop_map(|w| w.join(" "))
        .boxed()
}

proptest! {
    #![proptest_config(config(1024))]

    #[test]
    fn bankan_any_text(text in prop_oneof![
        any_text(),
        bankan_tokens(),
        bankan_tokens().prop_map(|t| format!("block 16 16;\n__shared__ float A[32][33];\n{t}")),
    ]) {
        check_bankan(&text)?;
    }

    #[test]
    fn bankan_text_mutated(text in mutated_text(strings(&BANKAN_TEXT))) {
        check_bankan(&text)?;
    }
}
