//! `smrtl config --from-gpgpusim FILE [NAME]`: what a GPGPU-Sim configuration sets in smrtl —
//! knob → quantity → parameters of every block and system, or knob → parameter → value of one
//! — and every knob it ignores, with the reason (docs/gpgpusim.md §3).

use crate::gpgpusim::{self, knobs, Config, Mapping, Quantity, Value};
use crate::listing::{table, wrap};
use serde_json::json;
use smrtl_hdl::ParamInfo;
use std::path::PathBuf;
use std::process::ExitCode;

/// Show the smrtl parameters a GPGPU-Sim configuration file sets, and the knobs it ignores.
#[derive(clap::Parser)]
#[command(name = "config")]
pub struct ConfigArgs {
    /// A GPGPU-Sim configuration (`gpgpusim.config`), as GPGPU-Sim reads it.
    #[arg(long, value_name = "FILE")]
    pub from_gpgpusim: PathBuf,
    /// One block or system (see `smrtl list`, `smrtl list --systems`): its parameters and the
    /// values the file gives them; without it, every block's and system's.
    pub name: Option<String>,
    #[arg(long)]
    pub json: bool,
}

/// Every block's and system's name with its parameters.
fn targets() -> Vec<(&'static str, Vec<ParamInfo>)> {
    let blocks = crate::blocks().into_iter().map(|b| (b.name, (b.params)()));
    let systems = crate::systems::systems()
        .into_iter()
        .map(|s| (s.name(), s.params()));
    blocks.chain(systems).collect()
}

/// The parameters of block or system `name`.
fn target(name: &str) -> Result<(&'static str, Vec<ParamInfo>), String> {
    let key = name.replace('-', "_");
    targets()
        .into_iter()
        .find(|(n, _)| *n == key)
        .ok_or_else(|| {
            let all: Vec<&str> = targets().iter().map(|(n, _)| *n).collect();
            smrtl_hdl::shown(&format!(
                "unknown block or system `{name}`; allowed: {}",
                all.join(", ")
            ))
        })
}

pub fn run(a: ConfigArgs) -> Result<ExitCode, String> {
    let named = a.name.as_deref().map(target).transpose()?;
    let cfg = Config::read(&a.from_gpgpusim)?;
    let quantities = knobs::quantities(&cfg)?;
    let text = match &named {
        Some((name, params)) => {
            let m = gpgpusim::map(&cfg, name, params, &[])?;
            one(&cfg, name, params, &quantities, &m, a.json)
        }
        None => all(&cfg, &quantities, a.json),
    };
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}

/// A quantity's value in words.
fn shown(v: &Value) -> String {
    match v {
        Value::Num(n) => n.to_string(),
        Value::Name(s) => s.clone(),
        Value::AtMost(n) => format!("at most {n}"),
        Value::Unset(why) => format!("not set ({why})"),
        Value::Refused(why) => format!("none ({why})"),
    }
}

/// Where a quantity comes from, one knob per line.
fn sources(q: &Quantity) -> Vec<String> {
    q.from.iter().map(|u| u.to_string()).collect()
}

/// A long value cut for a table cell (`-gpgpu_mem_addr_mapping`'s runs to 90 characters).
fn clipped(value: &str) -> String {
    const MAX: usize = 36;
    match value.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}...", &value[..at]),
        None => value.to_string(),
    }
}

/// The ignored knobs as rows, and as JSON.
fn ignored_rows(cfg: &Config) -> (Vec<[Vec<String>; 3]>, serde_json::Value) {
    let ignored = gpgpusim::ignored(cfg);
    let rows = ignored
        .iter()
        .map(|(o, why)| {
            [
                vec![format!("line {}", o.line)],
                wrap(&format!("{} {}", o.name, clipped(&o.value)), 40),
                wrap(why, 64),
            ]
        })
        .collect();
    let json = ignored
        .iter()
        .map(|(o, why)| json!({"knob": o.name, "value": o.value, "line": o.line, "reason": why}))
        .collect();
    (rows, json)
}

/// `title` and `rows` as an indented table after a blank line.
fn section<const N: usize>(title: &str, rows: &[[Vec<String>; N]]) -> String {
    let mut out = format!("\n{title}:\n");
    for line in table(rows) {
        out += &format!("  {line}\n");
    }
    out
}

fn header(cfg: &Config) -> String {
    let given = knobs::MAPPED
        .iter()
        .filter(|(k, _)| cfg.get(k).is_some())
        .count();
    format!(
        "{}: {} options; {given} of the {} knobs smrtl maps are given, GPGPU-Sim 4.x's defaults \
         stand in for the others\n",
        cfg.file,
        cfg.effective().len(),
        knobs::MAPPED.len()
    )
}

/// Every quantity with the parameters of every block and system that take it.
fn all(cfg: &Config, quantities: &[Quantity], json: bool) -> String {
    let targets = targets();
    let takers = |q: &Quantity| -> Vec<String> {
        targets
            .iter()
            .flat_map(|(t, ps)| {
                ps.iter()
                    .filter(|p| p.gpgpusim == Some(q.what))
                    .map(move |p| format!("{t}.{}", p.name))
            })
            .collect()
    };
    let (ignored, ignored_json) = ignored_rows(cfg);
    if json {
        let qs: Vec<serde_json::Value> = quantities
            .iter()
            .map(|q| {
                json!({"quantity": knobs::meaning(q.what), "value": shown(&q.value),
                       "from": sources(q), "parameters": takers(q)})
            })
            .collect();
        let v = json!({"file": cfg.file, "quantities": qs, "ignored": ignored_json});
        return format!("{}\n", serde_json::to_string_pretty(&v).expect("JSON"));
    }
    let mut rows = vec![[
        vec!["quantity".to_string()],
        vec!["value".into()],
        vec!["from -> parameters".into()],
    ]];
    for q in quantities {
        let mut from = sources(q);
        from.extend(wrap(&format!("-> {}", takers(q).join(", ")), 64));
        rows.push([
            wrap(knobs::meaning(q.what), 30),
            wrap(&shown(&q.value), 20),
            from,
        ]);
    }
    let mut out = header(cfg);
    out += &section(
        "knob -> quantity -> parameters (`smrtl config --from-gpgpusim FILE NAME` for one)",
        &rows,
    );
    out += &section(&format!("ignored knobs ({})", ignored.len()), &ignored);
    out
}

/// One target: knob → parameter → value, the parameters kept and the knobs ignored.
fn one(
    cfg: &Config,
    name: &str,
    params: &[ParamInfo],
    quantities: &[Quantity],
    m: &Mapping,
    json: bool,
) -> String {
    // The mapped knobs whose quantities this target has no parameter for.
    let unused: Vec<&Quantity> = quantities
        .iter()
        .filter(|q| !params.iter().any(|p| p.gpgpusim == Some(q.what)))
        .collect();
    let (ignored, ignored_json) = ignored_rows(cfg);
    if json {
        let set: Vec<serde_json::Value> = m
            .settings
            .iter()
            .map(|s| {
                json!({"parameter": s.param, "value": s.value, "quantity": knobs::meaning(s.what),
                       "from": s.from.iter().map(|u| u.to_string()).collect::<Vec<_>>()})
            })
            .collect();
        let kept: Vec<serde_json::Value> = m
            .kept
            .iter()
            .map(|(p, why)| json!({"parameter": p, "reason": why}))
            .collect();
        let unused: Vec<serde_json::Value> = unused
            .iter()
            .map(|q| json!({"quantity": knobs::meaning(q.what), "from": sources(q)}))
            .collect();
        let v = json!({"file": cfg.file, "target": name, "settings": set, "kept": kept,
                       "no_parameter": unused, "ignored": ignored_json});
        return format!("{}\n", serde_json::to_string_pretty(&v).expect("JSON"));
    }
    let mut out = header(cfg);
    let mut rows = vec![[
        vec!["knob".to_string()],
        vec!["parameter".into()],
        vec!["value".into()],
    ]];
    for s in &m.settings {
        let from = s.from.iter().map(|u| u.to_string()).collect();
        rows.push([from, vec![s.param.to_string()], vec![s.value.clone()]]);
    }
    out += &section(&format!("knob -> {name} parameter -> value"), &rows);
    if !m.kept.is_empty() {
        out += "\nparameters kept at their preset's value:\n";
        for (p, why) in &m.kept {
            out += &format!("  {p}: {why}\n");
        }
    }
    if !unused.is_empty() {
        // Each knob once, with the quantities it gives that the target has no parameter for.
        let mut by_knob: Vec<(String, Vec<&str>)> = vec![];
        for q in &unused {
            for from in sources(q) {
                match by_knob.iter_mut().find(|(k, _)| *k == from) {
                    Some((_, whats)) => whats.push(knobs::meaning(q.what)),
                    None => by_knob.push((from, vec![knobs::meaning(q.what)])),
                }
            }
        }
        let rows: Vec<[Vec<String>; 2]> = by_knob
            .into_iter()
            .map(|(k, whats)| [vec![k], wrap(&whats.join("; "), 64)])
            .collect();
        out += &section(&format!("mapped knobs {name} has no parameter for"), &rows);
    }
    out += &section(&format!("ignored knobs ({})", ignored.len()), &ignored);
    out
}
