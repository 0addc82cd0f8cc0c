//! The proof wrapper `smrtl_prove` (docs/prove.md §2): the DUT instance, the declared
//! definitions and probes, one `ok_<name>` wire per property with its `assert`/`assume`, and
//! the `past_*` registers the properties read; plus the Verilog expression helpers the
//! blocks' proofs use to write them.

use super::{Kind, Proof, Property, WRAPPER};
use smrtl_hdl::{Dir, Port};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Element `i` of a packed bus of `width`-bit elements (element 0 lowest): `bus[hi:lo]`.
pub fn field(bus: &str, i: usize, width: usize) -> String {
    format!("{bus}[{}:{}]", (i + 1) * width - 1, i * width)
}

/// `items[index]` as nested conditionals over the `index` expression (`index_width` bits),
/// `default` when `index` names no item.
pub fn pick(index: &str, index_width: usize, items: &[String], default: &str) -> String {
    let mut e = default.to_string();
    for (i, item) in items.iter().enumerate().rev() {
        if i < 1 << index_width {
            e = format!("({index} == {index_width}'d{i}) ? ({item}) : ({e})");
        }
    }
    e
}

/// `expr` (`from` bits) zero-extended to `to` bits.
pub fn zext(expr: &str, from: usize, to: usize) -> String {
    assert!(to >= from, "zext narrows");
    if to == from {
        format!("({expr})")
    } else {
        format!("{{{}'d0, {expr}}}", to - from)
    }
}

/// Whether `s` is a plain Verilog identifier.
pub(super) fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The identifiers `past_<x>` that `text` names.
pub(super) fn past_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let bytes = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while let Some(at) = text[i..].find("past_") {
        let start = i + at;
        let mut end = start + 5;
        while end < bytes.len() && ident(bytes[end]) {
            end += 1;
        }
        if start == 0 || !ident(bytes[start - 1]) {
            names.insert(text[start + 5..end].to_string());
        }
        i = end;
    }
    names
}

/// The formal wrapper `smrtl_prove` around `top` (see the module doc).
///
/// # Panics
/// On a malformed proof (see [`prove`](super::prove)).
pub fn wrapper(top: &str, ports: &[Port], proof: &Proof) -> String {
    assert!(
        proof.bmc_depth > 0 && proof.induction_depth > 0,
        "depths must be at least 1"
    );
    let reserved = ["f_init", "f_past", "reset_in", "clock", "reset", WRAPPER];
    let mut names: BTreeSet<&str> = ports.iter().map(|p| p.name.as_str()).collect();
    names.extend(reserved);
    for d in &proof.defs {
        assert!(is_ident(&d.name), "def `{}` is not an identifier", d.name);
        assert!(names.insert(&d.name), "def `{}` named twice", d.name);
        assert!(d.width > 0, "def `{}` has width 0", d.name);
    }
    let mut labels = BTreeSet::new();
    for p in &proof.properties {
        assert!(
            is_ident(&p.name),
            "property `{}` is not an identifier",
            p.name
        );
        assert!(labels.insert(&p.name), "property `{}` named twice", p.name);
        assert!(
            !names.contains(format!("ok_{}", p.name).as_str()),
            "property `{}` clashes with a wire",
            p.name
        );
        if p.kind == Kind::Registered {
            assert!(
                ports.iter().any(|x| x.name == p.expr && x.dir == Dir::Out),
                "property `{}`: `{}` is not an output port of {top}",
                p.name,
                p.expr
            );
        }
    }
    let has = |n: &str| ports.iter().any(|p| p.name == n && p.dir == Dir::In);
    // Always a vector, so `x[0]` works on 1-bit ports and defs too.
    let range = |w: usize| format!("[{}:0] ", w - 1);
    // Registers for the `past_<x>` names: ports and `reset`.
    let mut text = String::new();
    for d in &proof.defs {
        text += &d.expr;
        text.push('\n');
    }
    for p in &proof.properties {
        text += &p.expr;
        text.push('\n');
    }
    let pasts: Vec<(String, usize)> = past_names(&text)
        .into_iter()
        .map(|n| {
            let width = if n == "reset" {
                1
            } else {
                ports
                    .iter()
                    .find(|p| p.name == n)
                    .map(|p| p.width)
                    .or_else(|| proof.defs.iter().find(|d| d.name == n).map(|d| d.width))
                    .unwrap_or_else(|| panic!("`past_{n}`: {n} is no port of {top} and no def"))
            };
            (n, width)
        })
        .collect();

    let mut v = String::new();
    let _ = writeln!(
        v,
        "// smrtl prove: formal wrapper of {top} (docs/prove.md). Generated; read with\n\
         // read_verilog -formal. Step 0 holds reset; assertions hold from step 1."
    );
    let mut header = vec!["    input wire clock".to_string()];
    if has("reset") {
        header.push("    input wire reset_in".into());
    }
    for p in ports
        .iter()
        .filter(|p| p.dir == Dir::In && p.name != "clock" && p.name != "reset")
    {
        header.push(format!("    input wire {}{}", range(p.width), p.name));
    }
    let _ = writeln!(v, "module {WRAPPER} (\n{}\n);", header.join(",\n"));
    let _ = writeln!(
        v,
        "    // f_init: the first cycle (reset held); f_past: a previous cycle exists.\n    \
         reg f_init = 1'b1;\n    reg f_past = 1'b0;"
    );
    if has("reset") {
        let _ = writeln!(v, "    wire reset = f_init | reset_in;");
    } else {
        let _ = writeln!(v, "    wire reset = f_init;");
    }
    for p in ports.iter().filter(|p| p.dir == Dir::Out) {
        let _ = writeln!(v, "    wire {}{};", range(p.width), p.name);
    }
    let conns: Vec<String> = ports
        .iter()
        .map(|p| format!("        .{0}({0})", p.name))
        .collect();
    let _ = writeln!(v, "    {top} dut (\n{}\n    );", conns.join(",\n"));
    for (n, w) in &pasts {
        let _ = writeln!(v, "    reg {}past_{n};", range(*w));
    }
    if !proof.defs.is_empty() {
        let _ = writeln!(v, "    // ---- helper wires ----");
    }
    for d in &proof.defs {
        if d.is_probe() {
            let _ = writeln!(
                v,
                "    wire {}{}; // = {}, connected after flattening",
                range(d.width),
                d.name,
                d.expr
            );
        } else {
            let _ = writeln!(v, "    wire {}{} = {};", range(d.width), d.name, d.expr);
        }
    }
    let _ = writeln!(
        v,
        "    always @(posedge clock) begin\n        f_init <= 1'b0;\n        f_past <= 1'b1;"
    );
    for (n, _) in &pasts {
        let _ = writeln!(v, "        past_{n} <= {n};");
    }
    let _ = writeln!(v, "    end");
    let _ = writeln!(v, "    // ---- properties ----");
    let checked: Vec<&Property> = proof
        .properties
        .iter()
        .filter(|p| p.kind != Kind::Registered)
        .collect();
    for p in &checked {
        let _ = writeln!(v, "    wire ok_{} = ({});", p.name, p.expr);
    }
    let _ = writeln!(v, "    always @* begin\n        if (!f_init) begin");
    for p in &checked {
        let verb = match p.kind {
            Kind::Assume => "assume",
            _ => "assert",
        };
        let _ = writeln!(v, "            {}: {verb} (ok_{});", p.name, p.name);
    }
    let _ = writeln!(v, "        end\n    end\nendmodule");
    v
}
