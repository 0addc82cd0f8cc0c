//! `bankan`, the static bank-conflict analyzer (docs/bank-conflicts.md §3; [002] Chs. 4–5):
//! shared arrays and affine accesses with `for` loops and `if` conditions in ([`input`], JSON, or
//! [`text`], the CUDA-like form), the
//! degree of every warp access from the bank model's function grouped into distinct cases or
//! brute force ([`analysis`]), the report out ([`output`]).

pub mod analysis;
pub mod closed;
pub mod input;
pub mod optimize;
pub mod output;
pub mod swizzle;
pub mod text;

pub use input::{parse_mode, Kernel, Overrides, Raw};
pub use output::Report;

/// Analyses every access of `k`, in input order: grouped into distinct cases, or every warp
/// and iteration with `brute_force`.
pub fn analyze(k: &Kernel, brute_force: bool) -> Report {
    let results: Vec<_> = k
        .accesses
        .iter()
        .map(|a| {
            let r = if brute_force {
                analysis::brute(k, a)
            } else {
                analysis::grouped(k, a)
            };
            let w = analysis::worst(k, a, &r);
            (r, w)
        })
        .collect();
    Report::new(k, &results)
}

/// Parses (either form, [`Raw::read_checked`]), checks (with `o` applied) and analyses a kernel.
pub fn run(text: &str, o: Overrides, brute_force: bool) -> Result<Report, String> {
    let k = Raw::read_checked(text, o)?;
    Ok(analyze(&k, brute_force))
}
