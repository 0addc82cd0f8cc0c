//! A system's input on the command line of `smrtl sim` and `smrtl bench`: a `FILE` (its system
//! and kind recognised, [`super::detect`]), `--system NAME --profile P` (with `--waves`), and
//! the deprecated aliases the input kinds and profile sets register (their `legacy_flag`); and
//! the listing of `smrtl list --systems`. The CLI adds [`args`] to its commands and asks
//! [`choose_sim`] / [`choose_bench`] what was given, so it names no system, kind or profile.

use super::registry::{self, Alias};
use super::{check_sets, detect, detect::strip_kind, Input, InputKind, Loaded, System};
use crate::listing::{params_table, wrap, MEANING_WIDTH};
use crate::output::read_text;
use clap::{value_parser, Arg, ArgMatches};
use serde_json::{json, Value};
use std::path::PathBuf;

/// Which command the options are for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum For {
    Sim,
    Bench,
}

const SYSTEM: &str = "system";
const PROFILE: &str = "profile";
const WAVES: &str = "waves";

/// The alias that runs profiles under plain `--profile` (without `--system`), if any.
fn plain_profile_alias() -> Option<Alias> {
    registry::alias(PROFILE)
}

/// The alias of `smrtl bench BLOCK --profile P`, if any.
fn bench_profile_alias() -> Option<Alias> {
    registry::aliases()
        .into_iter()
        .find(|a| matches!(a, Alias::Profile(..)) && a.legacy_bench().is_some())
}

/// The aliases registered as flags of their own on `cmd` (plain `--profile` is an option
/// anyway).
fn flag_aliases(cmd: For) -> Vec<Alias> {
    registry::aliases()
        .into_iter()
        .filter(|a| a.flag() != PROFILE)
        .filter(|a| cmd == For::Sim || a.legacy_bench().is_some())
        .collect()
}

/// What an alias stands for, for its help.
fn replacement(a: Alias, cmd: For) -> String {
    let command = match cmd {
        For::Sim => "smrtl sim",
        For::Bench => "smrtl bench",
    };
    match (a, cmd) {
        (Alias::File(..), For::Sim) => format!("{command} FILE"),
        (Alias::File(s, _), For::Bench) => format!("{command} --system {} FILE", s.name()),
        (Alias::Profile(s, _), _) => {
            format!("{command} --system {} --{PROFILE} NAME", s.name())
        }
    }
}

/// The options that choose a system's input on `cmd`: `--system`, `--profile`, `--waves`, and
/// the deprecated aliases.
pub fn args(cmd: For) -> Vec<Arg> {
    let names = registry::names();
    let waves: Vec<String> = registry::systems()
        .iter()
        .filter_map(|s| s.profiles().map(|p| format!("{}: {}", s.name(), p.waves)))
        .collect();
    let plain = match (cmd, plain_profile_alias(), bench_profile_alias()) {
        (For::Sim, Some(a), _) => format!(
            "; without --system, {}'s (deprecated alias of `{}`)",
            a.system().name(),
            replacement(a, cmd)
        ),
        (For::Bench, _, Some(a)) => format!(
            "; `smrtl bench {} --{PROFILE} NAME` is the deprecated alias of `{}`",
            a.legacy_bench().map_or("", |b| b.block),
            replacement(a, cmd)
        ),
        _ => String::new(),
    };
    let input = match cmd {
        For::Sim => "with --profile, or to read FILE as one of its kinds",
        For::Bench => "bench its FILE or --profile NAME, model alone and RTL in the loop",
    };
    let mut out = vec![
        Arg::new(SYSTEM)
            .long(SYSTEM)
            .value_name("NAME")
            .help(format!(
                "The system ({names}; `smrtl list --systems`): {input}"
            )),
        Arg::new(PROFILE)
            .long(PROFILE)
            .value_name("NAME")
            .help(format!(
                "A built-in profile of the system (`smrtl list --systems`){plain}"
            )),
        Arg::new(WAVES)
            .long(WAVES)
            .value_name("N")
            .value_parser(crate::arg_values::waves)
            .default_value("1")
            .help(format!(
                "Waves of a profile, 1..=256 ({})",
                waves.join("; ")
            )),
    ];
    for a in flag_aliases(cmd) {
        let (value, arg) = match a {
            Alias::File(..) => (
                "FILE",
                Arg::new(a.flag()).value_parser(value_parser!(PathBuf)),
            ),
            Alias::Profile(..) => ("NAME", Arg::new(a.flag())),
        };
        let help = format!(
            "{} [deprecated alias of `{}`]",
            a.help().trim_end_matches('.'),
            replacement(a, cmd)
        );
        out.push(arg.long(a.flag()).value_name(value).help(help));
    }
    out
}

/// An input chosen on the command line, not read yet.
pub enum Chosen {
    /// A file: of `kind` when an alias flag (or a system with one kind) says so, else
    /// recognised among the kinds of `system` (or of every system).
    File {
        path: PathBuf,
        system: Option<&'static dyn System>,
        kind: Option<&'static InputKind>,
        flag: Option<&'static str>,
    },
    /// A built-in profile of `system`.
    Profile {
        system: &'static dyn System,
        name: String,
        waves: u32,
        flag: &'static str,
    },
}

/// The sources given: (what it is, for messages).
fn given(m: &ArgMatches, file: bool, cmd: For) -> Vec<(String, Option<Alias>)> {
    let mut out = vec![];
    if file {
        out.push(("FILE".to_string(), None));
    }
    if m.contains_id(PROFILE) && m.get_one::<String>(PROFILE).is_some() {
        out.push((format!("--{PROFILE}"), None));
    }
    for a in flag_aliases(cmd) {
        let set = match a {
            Alias::File(..) => m.get_one::<PathBuf>(a.flag()).is_some(),
            Alias::Profile(..) => m.get_one::<String>(a.flag()).is_some(),
        };
        if set {
            out.push((format!("--{}", a.flag()), Some(a)));
        }
    }
    out
}

fn system_of(m: &ArgMatches) -> Result<Option<&'static dyn System>, String> {
    m.get_one::<String>(SYSTEM)
        .map(|s| registry::system(s))
        .transpose()
}

fn waves_of(m: &ArgMatches) -> u32 {
    m.get_one::<u32>(WAVES).copied().unwrap_or(1)
}

/// The refusal of `--system NAME` without an input: FILE, or a profile if it has any.
fn needs_input(s: &dyn System) -> String {
    match s.profiles() {
        Some(_) => format!("--system {} needs FILE or --{PROFILE} NAME", s.name()),
        None => format!(
            "--system {} needs FILE (it has no built-in profiles)",
            s.name()
        ),
    }
}

/// What `smrtl sim` runs: exactly one of FILE, `--profile` and the aliases.
pub fn choose_sim(m: &ArgMatches, file: Option<PathBuf>) -> Result<Chosen, String> {
    let system = system_of(m)?;
    let sources = given(m, file.is_some(), For::Sim);
    match &sources[..] {
        [] => Err(match system {
            Some(s) => needs_input(s),
            None => no_input(),
        }),
        [(_, None)] => match file {
            Some(path) => Ok(file_of(path, system)),
            None => profile_of(m, system, plain_profile_alias()),
        },
        [(flag, Some(a))] => alias_of(m, *a, flag, system),
        [a, b, ..] => Err(format!("give one input, not both {} and {}", a.0, b.0)),
    }
}

/// What `smrtl bench` benches at system level, if anything: `--system` with FILE (`target`)
/// or `--profile`, or a deprecated alias with `target` the block the old form named; `None`
/// for a block-level bench.
pub fn choose_bench(
    m: &ArgMatches,
    target: Option<&str>,
    preset: bool,
) -> Result<Option<Chosen>, String> {
    let system = system_of(m)?;
    let profile = m.get_one::<String>(PROFILE).is_some();
    let sources = given(m, false, For::Bench);
    if let Some(system) = system {
        if preset {
            return Err("--preset does not apply with --system: the input sets the params (override them with --set)".into());
        }
        return match (target, &sources[..]) {
            (Some(_), [_, ..]) => Err(format!(
                "give one input, not both FILE and {}",
                sources[0].0
            )),
            (Some(path), []) => Ok(Some(file_of(path.into(), Some(system)))),
            (None, [(_, None)]) => profile_of(m, Some(system), None).map(Some),
            (None, [(flag, Some(a))]) => alias_of(m, *a, flag, Some(system)).map(Some),
            (None, []) => Err(needs_input(system)),
            (None, [a, b, ..]) => Err(format!("give one input, not both {} and {}", a.0, b.0)),
        };
    }
    let alias = match &sources[..] {
        [] => return Ok(None),
        [(_, None)] if profile => bench_profile_alias()
            .ok_or_else(|| format!("--{PROFILE} needs --system NAME ({})", registry::names()))?,
        [(_, Some(a))] => *a,
        [a, b, ..] => return Err(format!("give one input, not both {} and {}", a.0, b.0)),
        [(_, None)] => unreachable!("no FILE among bench's sources"),
    };
    let legacy = alias
        .legacy_bench()
        .expect("bench aliases have a legacy form");
    if let Some(block) = target.filter(|b| b.replace('-', "_") != legacy.block) {
        return Err((legacy.refuse)(block));
    }
    let flag = format!("--{}", alias.flag());
    if preset {
        let what = match alias {
            Alias::File(..) => "file",
            Alias::Profile(..) => "profile",
        };
        return Err(format!(
            "--preset does not apply with {flag}: the {what} sets the params (override them with --set)"
        ));
    }
    alias_of(m, alias, &flag, None).map(Some)
}

/// The refusal of `smrtl bench` with neither a block nor a system's input.
pub fn bench_needs() -> String {
    format!("bench needs a BLOCK, or --system NAME with FILE or --{PROFILE} NAME")
}

fn no_input() -> String {
    let kinds: Vec<&str> = registry::systems()
        .iter()
        .flat_map(|s| s.inputs().iter().map(|k| k.name))
        .collect();
    let aliases: Vec<String> = registry::aliases()
        .iter()
        .map(|a| match a {
            Alias::File(..) => format!("--{} FILE", a.flag()),
            Alias::Profile(..) => format!("--{} NAME", a.flag()),
        })
        .collect();
    let with_profiles: Vec<&str> = registry::systems()
        .iter()
        .filter(|s| s.profiles().is_some())
        .map(|s| s.name())
        .collect();
    format!(
        "no input: give FILE (kinds: {}) or --system NAME --{PROFILE} NAME (systems: {}); deprecated aliases: {}",
        kinds.join(", "),
        with_profiles.join(", "),
        aliases.join(", ")
    )
}

fn file_of(path: PathBuf, system: Option<&'static dyn System>) -> Chosen {
    Chosen::File {
        path,
        system,
        kind: None,
        flag: None,
    }
}

/// File `path` read and recognised (see [`recognise`]), named as given.
pub fn read_input(
    path: &std::path::Path,
    system: Option<&'static dyn System>,
) -> Result<(&'static dyn System, &'static InputKind, String), String> {
    recognise(&path.display().to_string(), path, system)
}

/// The system and kind of file `path` (named `name`), and its text without a `"kind"` field:
/// recognised among every system's kinds; with `--system`, it must be one of that system's,
/// and a file no kind claims is read as the system's only kind, if it has one (its parser
/// then says what is wrong).
fn recognise(
    name: &str,
    path: &std::path::Path,
    system: Option<&'static dyn System>,
) -> Result<(&'static dyn System, &'static InputKind, String), String> {
    let all = registry::systems();
    let limit = all
        .iter()
        .flat_map(|s| s.inputs().iter().map(|k| k.max_bytes))
        .max()
        .unwrap_or(0);
    let text = read_text(path, limit)?;
    let (s, kind) = match (detect(&all, name, &text), system) {
        (Ok(found), _) => found,
        (Err(_), Some(s)) if s.inputs().len() == 1 => (s, &s.inputs()[0]),
        (Err(e), _) => return Err(e),
    };
    if let Some(want) = system.filter(|w| w.name() != s.name()) {
        let kinds: Vec<&str> = want.inputs().iter().map(|k| k.name).collect();
        return Err(format!(
            "{name} is a {} file of {}, not an input of {} (its kinds: {})",
            kind.name,
            s.name(),
            want.name(),
            kinds.join(", ")
        ));
    }
    if text.len() as u64 > kind.max_bytes {
        return Err(format!(
            "{name}: larger than the input limit of {} MiB of a {} file",
            kind.max_bytes >> 20,
            kind.name
        ));
    }
    Ok((s, kind, strip_kind(kind, name, text)?))
}

fn profile_of(
    m: &ArgMatches,
    system: Option<&'static dyn System>,
    plain: Option<Alias>,
) -> Result<Chosen, String> {
    let name = m.get_one::<String>(PROFILE).expect("given").clone();
    let system = match (system, plain) {
        (Some(s), _) => s,
        (None, Some(a)) => a.system(),
        (None, None) => {
            return Err(format!(
                "--{PROFILE} needs --system NAME ({})",
                registry::names()
            ))
        }
    };
    if system.profiles().is_none() {
        return Err(format!("{} has no built-in profiles", system.name()));
    }
    Ok(Chosen::Profile {
        system,
        name,
        waves: waves_of(m),
        flag: PROFILE,
    })
}

fn alias_of(
    m: &ArgMatches,
    a: Alias,
    flag: &str,
    system: Option<&'static dyn System>,
) -> Result<Chosen, String> {
    if let Some(s) = system.filter(|s| s.name() != a.system().name()) {
        return Err(format!(
            "{flag} is an input of {}, not of {}",
            a.system().name(),
            s.name()
        ));
    }
    Ok(match a {
        Alias::File(s, kind) => Chosen::File {
            path: m.get_one::<PathBuf>(a.flag()).expect("given").clone(),
            system: Some(s),
            kind: Some(kind),
            flag: Some(a.flag()),
        },
        Alias::Profile(s, _) => Chosen::Profile {
            system: s,
            name: m.get_one::<String>(a.flag()).expect("given").clone(),
            waves: waves_of(m),
            flag: a.flag(),
        },
    })
}

impl Chosen {
    /// The input file, if it is one.
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Chosen::File { path, .. } => Some(path),
            Chosen::Profile { .. } => None,
        }
    }

    /// How the input was given: `--profile dct`, `--mem-workload PATH`, or the path.
    pub fn label(&self) -> String {
        match self {
            Chosen::File {
                path,
                flag: Some(f),
                ..
            } => format!("--{f} {}", path.display()),
            Chosen::File { path, .. } => path.display().to_string(),
            Chosen::Profile { name, flag, .. } => format!("--{flag} {name}"),
        }
    }

    /// Reads and recognises the input and loads it on its system with the params overridden
    /// by `sets` (each a param of the system); `seed` draws a profile.
    /// With `gpgpusim`, the parameters that configuration maps come first (`sets` win over
    /// them; docs/gpgpusim.md).
    pub fn load(
        &self,
        seed: u64,
        sets: &[(String, String)],
        gpgpusim: Option<&crate::gpgpusim::Config>,
    ) -> Result<(&'static dyn System, Box<dyn Loaded>), String> {
        let with = |system: &'static dyn System| match gpgpusim {
            Some(cfg) => crate::gpgpusim::with_sets(cfg, system.name(), &system.params(), sets),
            None => Ok(sets.to_vec()),
        };
        match self {
            Chosen::Profile {
                system,
                name,
                waves,
                ..
            } => {
                let sets = check_sets(*system, &with(*system)?)?;
                let input = Input::Profile {
                    name,
                    seed,
                    waves: *waves,
                };
                Ok((*system, system.load(input, &sets)?))
            }
            Chosen::File {
                path, system, kind, ..
            } => {
                let name = path.display().to_string();
                let (system, kind, text) = match (system, kind) {
                    (Some(s), Some(k)) => {
                        let text = strip_kind(k, &name, read_text(path, k.max_bytes)?)?;
                        (*s, *k, text)
                    }
                    _ => {
                        let (s, k, text) = recognise(&name, path, *system)?;
                        (s, k, text)
                    }
                };
                let sets = check_sets(system, &with(system)?)?;
                let input = Input::File {
                    kind,
                    name: &name,
                    text: &text,
                };
                Ok((system, system.load(input, &sets)?))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// `smrtl list --systems`
// ---------------------------------------------------------------------------------------------

/// How a kind is recognised, in words.
fn shapes_text(k: &InputKind) -> String {
    let shapes: Vec<String> = k
        .shapes
        .iter()
        .map(|s| match s {
            super::Shape::Json { required, .. } => format!("JSON with {}", required.join(", ")),
            super::Shape::Text { extensions } => {
                let ext: Vec<String> = extensions.iter().map(|e| format!(".{e}")).collect();
                format!("text named {}", ext.join(", "))
            }
        })
        .collect();
    shapes.join("; or ")
}

/// Every system as one JSON value each.
pub fn list_json() -> Value {
    let all: Vec<Value> = registry::systems()
        .iter()
        .map(|s| {
            let inputs: Vec<Value> = s
                .inputs()
                .iter()
                .map(|k| {
                    let shapes: Vec<Value> = k
                        .shapes
                        .iter()
                        .map(|sh| match sh {
                            super::Shape::Json { required, allowed } => {
                                json!({"json": {"required": required, "allowed": allowed}})
                            }
                            super::Shape::Text { extensions } => {
                                json!({"text": {"extensions": extensions}})
                            }
                        })
                        .collect();
                    json!({
                        "kind": k.name,
                        "summary": k.summary,
                        "shapes": shapes,
                        "max_bytes": k.max_bytes,
                        "deprecated_flag": k.legacy_flag.map(|f| format!("--{f}")),
                        "block": k.block,
                        "records": k.records,
                        "vcd": k.vcd,
                        "sweep_metrics": k.metrics.iter().map(|m| m.0).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let profiles = s.profiles().map(|p| {
                json!({
                    "summary": p.summary,
                    "names": (p.names)(),
                    "seed": p.seed,
                    "waves": p.waves,
                    "deprecated_flag": p.legacy_flag.map(|f| format!("--{f}")),
                    "block": p.block,
                })
            });
            json!({
                "system": s.name(),
                "summary": s.summary(),
                "inputs": inputs,
                "params": s.params(),
                "profiles": profiles,
                "backends": super::Backend::ALL.map(super::Backend::name),
                "sweep_metrics": s.sweep_metrics(),
            })
        })
        .collect();
    Value::Array(all)
}

/// Every system as text: summary, input kinds, params table, profiles.
pub fn list_text() -> String {
    let mut o = String::new();
    let mut line = |s: String| {
        o += &s;
        o.push('\n');
    };
    for s in registry::systems() {
        line(s.name().to_string());
        line(format!("  {}", s.summary()));
        line("  inputs (smrtl sim FILE; a \"kind\" field, else the file's shape):".into());
        for k in s.inputs() {
            line(format!(
                "    {}  {}, at most {} MiB{}",
                k.name,
                shapes_text(k),
                k.max_bytes >> 20,
                k.legacy_flag
                    .map_or(String::new(), |f| format!("; deprecated flag --{f}"))
            ));
            for l in wrap(k.summary, MEANING_WIDTH + 40) {
                line(format!("      {l}"));
            }
            line(format!("      RTL in the loop: {}", k.block));
            line(format!("      records: {}", k.records));
            line(format!("      vcd: {}", k.vcd));
            let metrics: Vec<&str> = k.metrics.iter().map(|m| m.0).collect();
            line(format!(
                "      sweep metrics (\"inputs\"): {}",
                metrics.join(", ")
            ));
        }
        line("  parameters (--set KEY=VALUE):".into());
        for l in params_table(&s.params()) {
            line(format!("    {l}"));
        }
        match s.profiles() {
            Some(p) => {
                line(format!(
                    "  profiles (--system {} --{PROFILE} NAME; RTL in the loop: {}):",
                    s.name(),
                    p.block
                ));
                line(format!("    {}", p.summary));
                let names: Vec<String> = (p.names)().iter().map(|n| n.to_string()).collect();
                for l in crate::listing::wrap_words(&names, 92) {
                    line(format!("    {l}"));
                }
                line(format!("    --seed: {}; --waves: {}", p.seed, p.waves));
            }
            None => line("  profiles: none".into()),
        }
        line(format!(
            "  sweep metrics (\"workloads\"): {}",
            s.sweep_metrics().join(", ")
        ));
    }
    o
}
