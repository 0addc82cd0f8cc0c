//! Spec §6 `WbMux<M>`: §3.2 step 2's fixed-priority WB select (docs/elastic-pipeline.md §3.2,
//! §6).

use super::entry::{one, part, sub_module};
use super::WbSrc;
use crate::netlist::{Expr, Module};

/// Ports of [`wb_mux`] for source `s` (named as in [`src_name`]): `<s>_valid` (available),
/// `<s>_tag` and, with kinds, `<s>_kind` in (not for ICNT, which carries no entry), `sel_<s>` out
/// (one-hot).
pub(super) mod wb_port {
    /// Some source wins: WB is loaded at this edge.
    pub const VALID: &str = "wb_valid";
    /// The winner as [`super::WbSrc`] (NONE when nothing wins).
    pub const SRC: &str = "wb_src";
    /// The winning entry's tag and (with kinds) kind, 0 for ICNT or none.
    pub const TAG: &str = "wb_tag";
    pub const KIND: &str = "wb_kind";
    /// A pipeline entry (not ICNT data) wins.
    pub const LOAD: &str = "wb_load";

    pub fn valid(src: &str) -> String {
        format!("{src}_valid")
    }
    pub fn tag(src: &str) -> String {
        format!("{src}_tag")
    }
    pub fn kind(src: &str) -> String {
        format!("{src}_kind")
    }
    pub fn sel(src: &str) -> String {
        format!("sel_{src}")
    }
}

/// `icnt`, `mem`, `nq`, `exe`, `nm`.
pub(super) fn src_name(s: WbSrc) -> String {
    format!("{s:?}").to_lowercase()
}

/// `ICNT`, `MEM`, `NQ`, `EXE`, `NM`, as `wb_src` names them.
fn src_label(s: WbSrc) -> String {
    format!("{s:?}").to_uppercase()
}

/// Spec §6 `WbMux<M>`: step 2's fixed-priority select among `order` (highest first, ICNT first)
/// of `tw`-bit tags, with the [`wb_port`] ports: the one-hot selects and the loaded entry's tag,
/// kind (only `with_kind`: the scheduler-mode pipeline reports it) and `wb_src`. Combinational;
/// the WB registers are the parent's.
pub(super) fn wb_mux(order: &[WbSrc], tw: usize, with_kind: bool) -> Module {
    use wb_port as wp;
    assert_eq!(order.first(), Some(&WbSrc::Icnt), "ICNT always wins");
    let names: Vec<String> = order.iter().map(|&s| src_name(s)).collect();
    let priority: Vec<String> = order.iter().map(|&s| src_label(s)).collect();
    let kinds = if with_kind { " and kind" } else { "" };
    let key = format!("WbMux: {}, tag {tw}{kinds}", priority.join(" > "));
    let mut parts = vec![part("O", names.concat()), part("T", tw)];
    if with_kind {
        parts.push(part("K", true));
    }
    let mut m = sub_module("wbmux", &parts, &key);
    let mut avail = vec![];
    // Each source's (tag, kind); ICNT carries no entry.
    let mut entries = vec![];
    for (&src, name) in order.iter().zip(&names) {
        avail.push(m.input(&wp::valid(name), 1));
        entries.push(if src == WbSrc::Icnt {
            (Expr::lit(0, tw), Expr::lit(0, 2))
        } else {
            let tag = m.input(&wp::tag(name), tw);
            let kind = if with_kind {
                m.input(&wp::kind(name), 2)
            } else {
                Expr::lit(0, 2)
            };
            (tag, kind)
        });
    }
    let sel: Vec<Expr> = names.iter().map(|n| m.output(&wp::sel(n), 1)).collect();
    let valid = m.output(wp::VALID, 1);
    let src_o = m.output(wp::SRC, 3);
    let tag_o = m.output(wp::TAG, tw);
    let kind_o = with_kind.then(|| m.output(wp::KIND, 2));
    let load = m.output(wp::LOAD, 1);

    m.section("§3.2 step 2: the first available source in priority order wins");
    let mut taken = one(false);
    for k in 0..order.len() {
        m.assign(&sel[k], &avail[k] & &!taken.clone());
        taken = m.wire(&format!("taken_{}", names[k]), &taken | &sel[k]);
    }
    m.assign(&valid, taken.clone());
    m.assign(&load, &taken & &!sel[0].clone());

    m.section("the winner's tag, kind and wb_src code");
    let mut next_tag = Expr::lit(0, tw);
    let mut next_kind = Expr::lit(0, 2);
    let mut next_src = Expr::lit(WbSrc::None as u64, 3);
    for k in (0..order.len()).rev() {
        let (tag, kind) = &entries[k];
        next_tag = sel[k].mux(tag, &next_tag);
        next_kind = sel[k].mux(kind, &next_kind);
        next_src = sel[k].mux(&Expr::lit(order[k] as u64, 3), &next_src);
    }
    m.assign(&tag_o, next_tag);
    if let Some(kind_o) = kind_o {
        m.assign(&kind_o, next_kind);
    }
    m.assign(&src_o, next_src);
    m
}
