//! GPGPU-Sim configurations in (docs/gpgpusim.md): `--gpgpusim-config FILE` on `list`, `gen`,
//! `cosim`, `run`, `synth`, `sim` and `sweep`, and `smrtl config --from-gpgpusim FILE`. The file
//! is read as GPGPU-Sim reads it ([`parse`]), its knobs become GPGPU-Sim quantities
//! ([`knobs`]), and every parameter that declares a quantity (`=> Gpgpusim::…` beside it) takes
//! the quantity's value, as a `--set` would; an explicit `--set` of the same parameter wins, as
//! GPGPU-Sim's own command line wins over its configuration file.

pub mod knobs;
pub mod parse;

pub use knobs::{Quantity, Used, Value};
pub use parse::Config;

use smrtl_hdl::params::Gpgpusim;
use smrtl_hdl::ParamInfo;

/// One parameter the configuration sets.
#[derive(Clone, Debug)]
pub struct Setting {
    pub param: &'static str,
    /// As `--set` takes it.
    pub value: String,
    pub what: Gpgpusim,
    pub from: Vec<Used>,
}

/// What the configuration does to one target (a block or a system).
#[derive(Clone, Debug, Default)]
pub struct Mapping {
    pub settings: Vec<Setting>,
    /// Parameters with a quantity that keep their preset's value, and why.
    pub kept: Vec<(&'static str, String)>,
}

/// Whether `key` (a `--set` name) names parameter `param` of `params`: the exact name, else
/// the one that matches in any case (as `--set` resolves it: `T` and `t` are two parameters).
fn names(key: &str, param: &str, params: &[ParamInfo]) -> bool {
    key == param || (key.eq_ignore_ascii_case(param) && !params.iter().any(|p| p.name == key))
}

/// The parameters of `target` (named in messages) that `cfg` sets, skipping those in
/// `overridden` (the user's `--set` names). A value the parameter cannot take is an error that
/// names the knob, its line, the parameter and its allowed values.
pub fn map(
    cfg: &Config,
    target: &str,
    params: &[ParamInfo],
    overridden: &[String],
) -> Result<Mapping, String> {
    let quantities = knobs::quantities(cfg)?;
    let mut m = Mapping::default();
    for p in params {
        let Some(what) = p.gpgpusim else { continue };
        if overridden.iter().any(|k| names(k, p.name, params)) {
            continue;
        }
        let q = quantities
            .iter()
            .find(|q| q.what == what)
            .expect("every quantity is computed");
        let from = || {
            q.from
                .iter()
                .map(|u| match u.line {
                    Some(l) => format!("line {l}: {} {}", u.knob, u.value),
                    None => u.to_string(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let refuse = |value: &str| {
            format!(
                "{} ({}) gives {target}'s {} = {value}; allowed: {} (or give --set {}=VALUE)",
                cfg.file,
                from(),
                p.name,
                p.allowed,
                p.name
            )
        };
        let value = match &q.value {
            Value::Num(n) => n.to_string(),
            Value::AtMost(n) => p.max().map_or(*n, |hi| hi.min(*n)).to_string(),
            Value::Name(name) => match name_in(p, name) {
                Some(v) => v,
                None => return Err(refuse(name)),
            },
            Value::Unset(why) => {
                m.kept.push((p.name, why.clone()));
                continue;
            }
            Value::Refused(why) => {
                return Err(format!(
                    "{} ({}): {target}'s {} ({}) has no value here: {why} (or give --set {}=VALUE)",
                    cfg.file,
                    from(),
                    p.name,
                    knobs::meaning(what),
                    p.name
                ))
            }
        };
        if !p.admits(&value) {
            return Err(refuse(&value));
        }
        m.settings.push(Setting {
            param: p.name,
            value,
            what,
            from: q.from.clone(),
        });
    }
    Ok(m)
}

/// The parameter's own spelling of GPGPU-Sim name `name` (any case; GPGPU-Sim's `lrr` is the
/// `rr` of a block that has no `lrr`).
fn name_in(p: &ParamInfo, name: &str) -> Option<String> {
    let smrtl_hdl::params::Allowed::Names(names) = p.kind else {
        return None;
    };
    names
        .iter()
        .find(|n| n.eq_ignore_ascii_case(name))
        .or_else(|| match name {
            "lrr" => names.iter().find(|n| n.eq_ignore_ascii_case("rr")),
            _ => None,
        })
        .map(|n| n.to_string())
}

/// `sets` (the user's `--set` pairs) after the pairs `cfg` gives `target`, which the user's
/// win over.
pub fn with_sets(
    cfg: &Config,
    target: &str,
    params: &[ParamInfo],
    sets: &[(String, String)],
) -> Result<Vec<(String, String)>, String> {
    let keys: Vec<String> = sets.iter().map(|(k, _)| k.clone()).collect();
    let m = map(cfg, target, params, &keys)?;
    Ok(m.settings
        .into_iter()
        .map(|s| (s.param.to_string(), s.value))
        .chain(sets.iter().cloned())
        .collect())
}

/// Every knob of the file no parameter of any target takes, with the reason (file order, the
/// last occurrence of each).
pub fn ignored(cfg: &Config) -> Vec<(&parse::Opt, &'static str)> {
    cfg.effective()
        .into_iter()
        .filter(|o| !knobs::MAPPED.iter().any(|(k, _)| *k == o.name))
        .map(|o| (o, knobs::ignored_reason(&o.name)))
        .collect()
}
