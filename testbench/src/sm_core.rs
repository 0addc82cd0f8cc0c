//! Scheduler-mode workloads (spec elastic-pipeline.md §5.6; model in
//! [`smrtl_cosim::sm_core`]): JSON parsing with one-line errors naming the field, and small
//! builders for the acceptance tests.
//!
//! JSON shape:
//! ```json
//! {"params": {"pipe_mode": "elastic", "M": 2, "S": 2, "W": 4, "sched": "bcaws", ...},
//!  "warps": [[{"op": "alu", "pc": 0},
//!             {"op": "smem", "pc": 1, "degrees": [4, 1]},
//!             {"op": "smem", "pc": 2, "addrs": [[0, 8, ...], [1, 2, ...]],
//!              "active": [[true, ...], [...]]}],
//!            ...]}
//! ```
//! `params` may be omitted (all defaults, [`SmParams::default`]); unknown keys are errors.
//! `degrees` (S values in 1..=L, default all 1) and `addrs` (S × L word addresses < 2^AW, with
//! optional `active`, S × L booleans) apply to `smem` only and exclude each other.

use serde_json::Value;
use smrtl_cosim::sm_core::{Instr, SmParams, Workload};
use smrtl_hdl::elastic_pipeline::Kind;

fn err(at: &str, msg: impl std::fmt::Display) -> String {
    format!("{at}: {msg}")
}

/// Parses a workload; errors are one line, `field: problem`.
pub fn parse_workload(text: &str) -> Result<Workload, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| err("workload", e))?;
    workload_from_value(&v)
}

pub fn workload_from_value(v: &Value) -> Result<Workload, String> {
    let obj = v
        .as_object()
        .ok_or_else(|| err("workload", "expected an object {\"params\", \"warps\"}"))?;
    if let Some(k) = obj.keys().find(|k| *k != "params" && *k != "warps") {
        return Err(err(k, "unknown field; allowed: \"params\", \"warps\""));
    }
    let params: SmParams = match obj.get("params") {
        None => SmParams::default(),
        Some(p) => serde_json::from_value(p.clone()).map_err(|e| err("params", e))?,
    };
    params.validate().map_err(|e| err("params", e))?;
    let warps = obj
        .get("warps")
        .ok_or_else(|| err("warps", "missing"))?
        .as_array()
        .ok_or_else(|| err("warps", "expected an array of warps"))?;
    if warps.len() > params.warps as usize {
        return Err(err(
            "warps",
            format!("{} warps exceed W = {}", warps.len(), params.warps),
        ));
    }
    let mut out = Vec::new();
    for (i, w) in warps.iter().enumerate() {
        let at = format!("warps[{i}]");
        let list = w
            .as_array()
            .ok_or_else(|| err(&at, "expected an array of instructions"))?;
        let mut prog = Vec::new();
        for (j, ins) in list.iter().enumerate() {
            prog.push(parse_instr(&params, &format!("warps[{i}][{j}]"), ins)?);
        }
        out.push(prog);
    }
    Ok(Workload { params, warps: out })
}

fn uint(at: &str, v: &Value) -> Result<u64, String> {
    v.as_u64()
        .ok_or_else(|| err(at, format!("expected a non-negative integer, got {v}")))
}

fn rows<'a>(at: &str, v: &'a Value, s: usize, l: usize) -> Result<Vec<&'a Value>, String> {
    let outer = v
        .as_array()
        .filter(|a| a.len() == s)
        .ok_or_else(|| err(at, format!("expected {s} arrays (one per subwarp)")))?;
    let mut cells = Vec::new();
    for (k, row) in outer.iter().enumerate() {
        let row = row.as_array().filter(|a| a.len() == l).ok_or_else(|| {
            err(
                &format!("{at}[{k}]"),
                format!("expected {l} values (one per lane)"),
            )
        })?;
        cells.extend(row.iter());
    }
    Ok(cells)
}

fn parse_instr(p: &SmParams, at: &str, v: &Value) -> Result<Instr, String> {
    let obj = v
        .as_object()
        .ok_or_else(|| err(at, "expected an object {\"op\", \"pc\", ...}"))?;
    const KEYS: [&str; 5] = ["op", "pc", "degrees", "addrs", "active"];
    if let Some(k) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(err(
            &format!("{at}.{k}"),
            "unknown field; allowed: \"op\", \"pc\", \"degrees\", \"addrs\", \"active\"",
        ));
    }
    let op_at = format!("{at}.op");
    let op = match obj.get("op").ok_or_else(|| err(&op_at, "missing"))? {
        Value::String(s) => match s.as_str() {
            "alu" => Kind::Alu,
            "gld" => Kind::Gld,
            "gst" => Kind::Gst,
            "smem" => Kind::Smem,
            other => {
                return Err(err(
                    &op_at,
                    format!("unknown op \"{other}\"; allowed: \"alu\", \"gld\", \"gst\", \"smem\""),
                ))
            }
        },
        other => return Err(err(&op_at, format!("expected a string, got {other}"))),
    };
    let pc_at = format!("{at}.pc");
    let pc = uint(&pc_at, obj.get("pc").ok_or_else(|| err(&pc_at, "missing"))?)?;
    let pc_max = 1u64 << p.pc_bits;
    if pc >= pc_max {
        return Err(err(
            &pc_at,
            format!(
                "{pc} out of range; allowed: 0..{pc_max} (PCW = {})",
                p.pc_bits
            ),
        ));
    }
    let mut ins = Instr::of(op, pc as u32);
    let (s, l) = (p.subwarps as usize, p.lanes as usize);
    for key in ["degrees", "addrs", "active"] {
        if op != Kind::Smem && obj.contains_key(key) {
            return Err(err(
                &format!("{at}.{key}"),
                "only smem instructions take this field",
            ));
        }
    }
    if obj.contains_key("degrees") && obj.contains_key("addrs") {
        return Err(err(
            &format!("{at}.degrees"),
            "give either degrees or addrs, not both",
        ));
    }
    if obj.contains_key("active") && !obj.contains_key("addrs") {
        return Err(err(&format!("{at}.active"), "needs addrs"));
    }
    if let Some(d) = obj.get("degrees") {
        let dat = format!("{at}.degrees");
        let arr = d
            .as_array()
            .filter(|a| a.len() == s)
            .ok_or_else(|| err(&dat, format!("expected {s} degrees (one per subwarp)")))?;
        let mut ds = Vec::new();
        for (k, x) in arr.iter().enumerate() {
            let kat = format!("{dat}[{k}]");
            let d = uint(&kat, x)?;
            if !(1..=p.lanes as u64).contains(&d) {
                return Err(err(
                    &kat,
                    format!("{d} out of range; allowed: 1..={} (L)", p.lanes),
                ));
            }
            ds.push(d as u32);
        }
        ins.degrees = Some(ds);
    } else if op == Kind::Smem && !obj.contains_key("addrs") {
        ins.degrees = Some(vec![1; s]);
    }
    if let Some(a) = obj.get("addrs") {
        let aat = format!("{at}.addrs");
        let cells = rows(&aat, a, s, l)?;
        let amax = 1u64 << p.addr_bits;
        let mut out = vec![Vec::new(); s];
        for (n, c) in cells.iter().enumerate() {
            let cat = format!("{aat}[{}][{}]", n / l, n % l);
            let w = uint(&cat, c)?;
            if w >= amax {
                return Err(err(
                    &cat,
                    format!(
                        "{w} out of range; allowed: 0..{amax} (AW = {})",
                        p.addr_bits
                    ),
                ));
            }
            out[n / l].push(w as u32);
        }
        ins.addrs = Some(out);
    }
    if let Some(a) = obj.get("active") {
        let aat = format!("{at}.active");
        let cells = rows(&aat, a, s, l)?;
        let mut out = vec![Vec::new(); s];
        for (n, c) in cells.iter().enumerate() {
            let b = c.as_bool().ok_or_else(|| {
                err(
                    &format!("{aat}[{}][{}]", n / l, n % l),
                    "expected true or false",
                )
            })?;
            out[n / l].push(b);
        }
        ins.active = Some(out);
    }
    Ok(ins)
}
