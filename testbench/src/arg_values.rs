//! Value parsers of the command line's numeric options: a value out of range, negative or not
//! a number is refused naming the allowed range (`expected an integer in 1..=1024`), and a
//! negative value reaches the check rather than being read as a flag (the CLI allows negative
//! numbers as values, docs/cli.md "Errors").

use std::fmt::Display;

/// A parser of integers of type `T` in `lo..=hi`, for clap's `value_parser`.
pub fn uint<T>(
    lo: u64,
    hi: u64,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: TryFrom<u64> + Display + Clone + Send + Sync + 'static,
{
    move |s: &str| {
        let refuse = || format!("expected an integer in {lo}..={hi}");
        let n: u64 = s.trim().parse().map_err(|_| refuse())?;
        if !(lo..=hi).contains(&n) || s.trim().starts_with('+') {
            return Err(refuse());
        }
        T::try_from(n).map_err(|_| refuse())
    }
}

/// A parser of any integer of type `T` whose error names `lo..=hi`: for an option whose command
/// refuses values outside `lo..=hi` itself, echoing the value (`--align 0 is out of range`).
pub fn uint_named<T>(
    lo: u64,
    hi: u64,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: TryFrom<u64> + Display + Clone + Send + Sync + 'static,
{
    move |s: &str| {
        let n: u64 = s
            .parse()
            .ok()
            .filter(|_| !s.starts_with('+'))
            .ok_or_else(|| format!("expected an integer in {lo}..={hi}"))?;
        T::try_from(n).map_err(|_| format!("expected an integer in {lo}..={hi}"))
    }
}

/// `--waves`: any `u32`, refused naming 1..=256 (0 and larger values are refused, with the
/// value, by the systems' check).
pub fn waves(s: &str) -> Result<u32, String> {
    any_u32(s).map_err(|_| "expected an integer in 1..=256".to_string())
}

/// [`uint`] over the whole of `u64`.
pub fn any_u64(s: &str) -> Result<u64, String> {
    uint::<u64>(0, u64::MAX)(s)
}

/// [`uint`] over the whole of `u32`.
pub fn any_u32(s: &str) -> Result<u32, String> {
    uint::<u32>(0, u32::MAX as u64)(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_named() {
        let p = uint::<u32>(1, 4096);
        assert_eq!(p("4096"), Ok(4096));
        for bad in [
            "0",
            "4097",
            "-1",
            "x",
            "",
            "+5",
            "1.5",
            "99999999999999999999999",
        ] {
            assert_eq!(
                p(bad).unwrap_err(),
                "expected an integer in 1..=4096",
                "{bad}"
            );
        }
        assert_eq!(any_u64("18446744073709551615"), Ok(u64::MAX));
        assert!(any_u32("4294967296").is_err());
    }
}
