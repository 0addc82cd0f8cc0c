//! The pipeline's interface ([`PipeIn`], [`PipeOut`]) and its tops: the trace-mode
//! `elastic_pipeline` ([`build`]) and the scheduler-mode pipeline of `sm_core`
//! ([`build_with_pc`]) (docs/elastic-pipeline.md §6).

use super::entry::{pack_fields, Entry};
use super::logic::logic;
use super::{port, ports, stage_ports, Params};
use crate::netlist::{Dir, Expr, Module, Port};

/// What drives the pipeline (spec §6 `FrontEnd` `in_*`, `ElasticBackend` `icnt_valid`).
/// `in_valid` may depend on [`PipeOut::in_ready`] (declare it with [`Module::forward`]).
pub struct PipeIn {
    pub in_valid: Expr,
    /// The incoming entry as a packed bus ([`Layout`](super::Layout), see [`Entry::pack`]).
    pub in_entry: Expr,
    pub icnt_valid: Expr,
}

/// The pipeline's nets a surrounding block reads.
pub struct PipeOut {
    pub in_ready: Expr,
    pub fe_hold: Expr,
    pub cause: Expr,
    pub wb_valid: Expr,
    pub wb_icnt: Expr,
    pub wb_tag: Expr,
    pub wb_src: Expr,
    /// `rem` of the MEM0 entry, 0 when MEM0 is empty.
    pub mem0_rem: Expr,
    pub pre_count: Expr,
    pub nq_count: Expr,
    /// Every traced latch: (stage name, valid, tag shown as 0 when empty).
    pub taps: Vec<(String, Expr, Expr)>,
    /// The MEM0 entry leaves MEM0 at this edge (§5.3); `mem0_c` is its service time c.
    pub mem0_leave: Expr,
    pub mem0: Entry,
    pub mem0_c: Expr,
    /// A pipeline entry (not ICNT data) is loaded into WB at this edge, with its tag and kind.
    pub wb_load: Expr,
    pub wb_load_tag: Expr,
    /// Only in the scheduler-mode pipeline (`pcw` > 0): the trace-mode top has no use for it.
    pub wb_load_kind: Option<Expr>,
}

impl PipeOut {
    /// Drives the trace-mode outputs of [`ports`] (present under the same names in every top
    /// that contains the pipeline).
    pub fn drive(&self, m: &mut Module, out: &std::collections::HashMap<String, Expr>) {
        let o = |name: &str| out[name].clone();
        m.assign(&o(port::IN_READY), self.in_ready.clone());
        m.assign(&o(port::FE_HOLD), self.fe_hold.clone());
        m.assign(&o(port::CAUSE), self.cause.clone());
        m.assign(&o(port::WB_VALID), self.wb_valid.clone());
        m.assign(&o(port::WB_ICNT), self.wb_icnt.clone());
        m.assign(&o(port::WB_TAG), self.wb_tag.clone());
        m.assign(&o(port::WB_SRC), self.wb_src.clone());
        m.assign(&o(port::MEM0_REM), self.mem0_rem.clone());
        m.assign(&o(port::PRE_COUNT), self.pre_count.clone());
        m.assign(&o(port::NQ_COUNT), self.nq_count.clone());
        for (stage, valid, tag) in &self.taps {
            let (vn, tn) = stage_ports(stage);
            m.assign(&o(&vn), valid.clone());
            m.assign(&o(&tn), tag.clone());
        }
    }
}

/// Builds the trace-mode top `elastic_pipeline` (front end + backend) from validated params.
pub fn build(p: &Params) -> Module {
    let mut m = Module::new(&crate::params::module_name(p));
    m.cites(crate::blocks::docs::ELASTIC_PIPELINE);
    let (inp, out) = m.declare_ports(&ports(p));
    let io = pipe_in(&inp, None);
    logic(&mut m, p, 0, io).drive(&mut m, &out);
    m
}

/// Extra ports of the scheduler-mode pipeline ([`build_with_pc`]): the entry's PC in, and what
/// the BCAWS accumulator and the issue unit's completion logic read out (spec §6
/// `ElasticBackend` `mem0_leave(_entry)`, the WB load).
pub mod sched_port {
    pub const IN_PC: &str = "in_pc";
    /// The MEM0 entry leaves MEM0 at this edge, with its kind, tag, PC and service time c.
    pub const MEM0_LEAVE: &str = "mem0_leave";
    pub const MEM0_KIND: &str = "mem0_leave_kind";
    pub const MEM0_TAG: &str = "mem0_leave_tag";
    pub const MEM0_PC: &str = "mem0_leave_pc";
    pub const MEM0_C: &str = "mem0_leave_c";
    /// A pipeline entry (not ICNT data) is loaded into WB at this edge, with its tag and kind.
    pub const WB_LOAD: &str = "wb_entry_load";
    pub const WB_TAG: &str = "wb_entry_tag";
    pub const WB_KIND: &str = "wb_entry_kind";
}

/// The pipeline whose entries carry a `pcw`-bit PC, with the [`sched_port`] ports besides the
/// trace-mode ones: the `pipe` instance of `sm_core`.
pub fn build_with_pc(p: &Params, pcw: usize) -> Module {
    use sched_port as sp;
    let mut m = Module::new(&format!("{}_PCW{pcw}", crate::params::module_name(p)));
    m.cites(crate::blocks::docs::ELASTIC_PIPELINE);
    let mut all = ports(p);
    let mut add = |name: &str, dir: Dir, width: usize| all.push(Port::new(name, dir, width));
    add(sp::IN_PC, Dir::In, pcw);
    add(sp::MEM0_LEAVE, Dir::Out, 1);
    add(sp::MEM0_KIND, Dir::Out, 2);
    add(sp::MEM0_TAG, Dir::Out, p.tag_bits as usize);
    add(sp::MEM0_PC, Dir::Out, pcw);
    add(sp::MEM0_C, Dir::Out, p.rem_bits());
    add(sp::WB_LOAD, Dir::Out, 1);
    add(sp::WB_TAG, Dir::Out, p.tag_bits as usize);
    add(sp::WB_KIND, Dir::Out, 2);
    let (inp, out) = m.declare_ports(&all);
    let io = pipe_in(&inp, Some(&inp[sp::IN_PC]));
    let po = logic(&mut m, p, pcw, io);
    po.drive(&mut m, &out);
    let o = |name: &str| out[name].clone();
    m.assign(&o(sp::MEM0_LEAVE), po.mem0_leave);
    m.assign(&o(sp::MEM0_KIND), po.mem0.kind);
    m.assign(&o(sp::MEM0_TAG), po.mem0.tag);
    m.assign(&o(sp::MEM0_PC), po.mem0.pc.expect("entries carry a PC"));
    m.assign(&o(sp::MEM0_C), po.mem0_c);
    m.assign(&o(sp::WB_LOAD), po.wb_load);
    m.assign(&o(sp::WB_TAG), po.wb_load_tag);
    m.assign(
        &o(sp::WB_KIND),
        po.wb_load_kind
            .expect("the scheduler-mode WB reports kinds"),
    );
    m
}

/// The trace-mode inputs of [`ports`] (and the PC, if any) as the pipeline's [`PipeIn`]: the
/// entry ports packed as one bus (`in_addr` already holds lane l at `l·AW`).
fn pipe_in(inp: &std::collections::HashMap<String, Expr>, pc: Option<&Expr>) -> PipeIn {
    let i = |name: &str| inp[name].clone();
    PipeIn {
        in_valid: i(port::IN_VALID),
        in_entry: pack_fields(
            &i(port::IN_TAG),
            &i(port::IN_KIND),
            &i(port::IN_DEG),
            &i(port::IN_ACT),
            &[i(port::IN_ADDR)],
            pc,
        ),
        icnt_valid: i(port::ICNT_VALID),
    }
}
