//! Every system smrtl knows: one line per system. Adding a system is its model in `cosim/`,
//! one file in this folder (its [`System`] descriptor) and one line here.

use super::System;

/// Every system, in `smrtl list --systems` order.
pub fn systems() -> Vec<&'static dyn System> {
    vec![
        &super::elastic_sm::ElasticSm,
        &super::sharing_sm::SharingSm,
        &super::mem_sm::MemSm,
        &super::coh_sm::CohSm,
    ]
}

/// The names of every system, for messages.
pub fn names() -> String {
    let names: Vec<&str> = systems().iter().map(|s| s.name()).collect();
    names.join(", ")
}

/// Looks a system up by name (`-` and `_` alike); the error lists the known systems.
pub fn system(name: &str) -> Result<&'static dyn System, String> {
    systems()
        .into_iter()
        .find(|s| s.name() == name.replace('-', "_"))
        .ok_or_else(|| smrtl_hdl::shown(&format!("unknown system `{name}`; allowed: {}", names())))
}

/// A `smrtl sim` flag kept as a deprecated alias, and what it reads.
#[derive(Clone, Copy)]
pub enum Alias {
    /// A file of this kind of this system.
    File(&'static dyn System, &'static super::InputKind),
    /// A profile of this system.
    Profile(&'static dyn System, &'static super::Profiles),
}

impl Alias {
    pub fn system(self) -> &'static dyn System {
        match self {
            Alias::File(s, _) | Alias::Profile(s, _) => s,
        }
    }

    /// The flag (without `--`).
    pub fn flag(self) -> &'static str {
        match self {
            Alias::File(_, k) => k.legacy_flag.unwrap_or_default(),
            Alias::Profile(_, p) => p.legacy_flag.unwrap_or_default(),
        }
    }

    /// The help of the flag.
    pub fn help(self) -> &'static str {
        match self {
            Alias::File(_, k) => k.summary,
            Alias::Profile(_, p) => p.legacy_help,
        }
    }

    /// The `smrtl bench BLOCK --FLAG` form of the alias, if there was one.
    pub fn legacy_bench(self) -> Option<&'static super::LegacyBench> {
        match self {
            Alias::File(_, k) => k.legacy_bench.as_ref(),
            Alias::Profile(_, p) => p.legacy_bench.as_ref(),
        }
    }
}

/// Every deprecated `smrtl sim` alias the systems register, in registry order: each input
/// kind's flag, then each profile set's.
pub fn aliases() -> Vec<Alias> {
    let mut out = vec![];
    for s in systems() {
        out.extend(
            s.inputs()
                .iter()
                .filter(|k| k.legacy_flag.is_some())
                .map(|k| Alias::File(s, k)),
        );
        if let Some(p) = s.profiles().filter(|p| p.legacy_flag.is_some()) {
            out.push(Alias::Profile(s, p));
        }
    }
    out
}

/// The alias `flag` (without `--`), if a system registers it.
pub fn alias(flag: &str) -> Option<Alias> {
    aliases().into_iter().find(|a| a.flag() == flag)
}
