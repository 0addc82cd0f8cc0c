//! `sharing_core` (docs/scratchpad-sharing.md §2–§5; Jatala et al., seed 001): the SM-level
//! co-simulation top of scratchpad sharing, the counterpart of `sm_core` for this seed. It
//! instantiates the configuration registers (`share_cfg`), the owner bits and warp classes
//! (`owner_class`), NSCHED warp schedulers (`warp_scheduler`), the access check and address
//! translation (`sp_access_unit`), the lock table (`lock_table`) and the relssp release logic
//! (`relssp_unit`), wired in the spec's in-cycle order (§2.1): class → pick → access check →
//! grant/NACK → relssp/exit events of issued instructions → `done` → release → edge.
//!
//! The testbench (the thread-block-residency SM model) owns the instruction streams, operand
//! readiness, barriers and latencies: it drives each warp's `ready` and `age`, answers each
//! scheduler's pick with the picked instruction's descriptor (`dsc_*`, same cycle, as `sm_core`'s
//! descriptor port), and raises `cpl` when a granted shared-region access completes.

use crate::blocks::sharing::{bus, index_mux, FreeClass, Policy, Rank, Sched, Shape};
use crate::blocks::{
    lock_table, owner_class, relssp_unit, share_cfg, sp_access_unit, warp_scheduler,
};
use crate::netlist::{Expr, Module, Port};
use crate::params::{declared_by, Allowed, BlockParams, ParamError};
use std::sync::Arc;

crate::block_params! {
    /// The core's params: the SM shape and every switch of its blocks, each declared by the
    /// block it belongs to.
    #[derive(Eq)]
    #[serde(deny_unknown_fields)]
    pub struct Params {
        ..shape: Shape;
        policy: Policy = Policy::Transfer, "POLICY", Allowed::As(declared_by::<lock_table::Params>);
        pend_w: u32 = 6, "PEND_W", Allowed::As(declared_by::<lock_table::Params>);
        free_class: FreeClass = FreeClass::Nonowner, "FREE_CLASS", Allowed::As(declared_by::<owner_class::Params>);
        sched: Sched = Sched::Owf, "SCHED", Allowed::As(declared_by::<warp_scheduler::Params>);
        rank: Rank = Rank::Owf3, "RANK", Allowed::As(declared_by::<warp_scheduler::Params>);
        greedy: bool = false, "GREEDY", Allowed::As(declared_by::<warp_scheduler::Params>);
        age_w: u32 = 16, "AGE_W", Allowed::As(declared_by::<warp_scheduler::Params>);
    }
}

impl BlockParams for Params {
    const BLOCK: &'static str = "sharing_core";

    fn presets() -> Vec<(&'static str, Self)> {
        let paper = Params::default();
        vec![
            ("paper", paper.clone()),
            (
                "small",
                Params {
                    shape: Shape::small(),
                    ..paper.clone()
                },
            ),
            (
                "fig5",
                Params {
                    shape: Shape {
                        slots: 3,
                        warps: 4,
                        nsched: 1,
                        ..Shape::default()
                    },
                    ..paper
                },
            ),
        ]
    }

    fn check(&self) -> Result<(), ParamError> {
        self.shape.check()
    }
}

impl Params {
    /// The params of sub-block `P`: the core's values of the parameters `P` declares.
    pub fn child<P: BlockParams>(&self) -> P {
        let all = serde_json::to_value(self).expect("params serialize");
        let names: Vec<&str> = P::declared().iter().map(|d| d.name).collect();
        let own = all
            .as_object()
            .expect("params are a struct")
            .iter()
            .filter(|(k, _)| names.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        serde_json::from_value(serde_json::Value::Object(own))
            .expect("a block's params are a subset of the core's")
    }
}

/// Ports of the core beyond its blocks' (the testbench side).
pub mod port {
    /// Per warp: its next instruction may issue this cycle (operands ready, not at a barrier).
    pub const READY: &str = "ready";
    /// Per warp: its dynamic warp id (launch order; oldest = smallest).
    pub const AGE: &str = "age";
    /// Per scheduler, answering its pick in the same cycle: the instruction is
    /// `ld/st/atom.shared`, relssp, carries the exit flag; its active lanes and byte offsets.
    pub const DSC_SHARED: &str = "dsc_shared";
    pub const DSC_REL: &str = "dsc_rel";
    pub const DSC_EXIT: &str = "dsc_exit";
    pub const DSC_MASK: &str = "dsc_mask";
    pub const DSC_OFF: &str = "dsc_off";
    /// Per scheduler: its pick issued (not NACKed) this cycle.
    pub const ISSUED: &str = "issued";
    /// Per scheduler: the picked warp's slot.
    pub const RQ_SLOT: &str = "rq_slot";
}

/// The testbench-side ports, then every output of every block under its spec name.
pub fn ports(p: &Params) -> Vec<Port> {
    build(p).ports()
}

/// Builds the core from validated params.
pub fn build(p: &Params) -> Module {
    let s = &p.shape;
    let (w, ns, lanes) = (s.warps as usize, s.nsched as usize, s.lanes as usize);
    let (aw, sw, tw, kw, ww) = (s.aw(), s.sw(), s.tw(), s.kw(), s.ww());
    let age_w = p.age_w as usize;
    let mut m = Module::new(&crate::params::module_name(p));
    m.clock_reset();

    m.section("Inputs: configuration (kernel launch)");
    let cfg_in: Vec<(&str, usize)> = vec![
        (share_cfg::port::CFG_SHSM_WE, 1),
        (share_cfg::port::CFG_SHSM, 1),
        (share_cfg::port::CFG_U_WE, 1),
        (share_cfg::port::CFG_U, aw),
        (share_cfg::port::CFG_SLOT_WE, 1),
        (share_cfg::port::CFG_SLOT, sw),
        (share_cfg::port::CFG_PARTNER, tw),
        (share_cfg::port::CFG_BASE, aw),
    ];
    let cfg_in: Vec<(&str, Expr)> = cfg_in
        .into_iter()
        .map(|(n, width)| (n, m.input(n, width)))
        .collect();
    let lock_in: Vec<(&str, Expr)> = [
        (lock_table::port::CFG_LOCK_WE, 1),
        (lock_table::port::CFG_LOCK_K, kw),
        (lock_table::port::CFG_LOCK_VALID, 1),
        (lock_table::port::CFG_LOCK_OWNER, sw),
    ]
    .into_iter()
    .map(|(n, width)| (n, m.input(n, width)))
    .collect();

    m.section("Inputs: warps (the SM model's view)");
    let warp_valid = m.input(relssp_unit::port::WARP_VALID, w);
    let warp_slot = m.input(relssp_unit::port::WARP_SLOT, w * sw);
    let live = m.input(relssp_unit::port::LIVE, w * lanes);
    let warp_launch = m.input(relssp_unit::port::WARP_LAUNCH, w);
    let ready = m.input(port::READY, w);
    let age = m.input(port::AGE, w * age_w);

    m.section("Inputs: the picked instructions, and completions");
    let dsc_shared = m.input(port::DSC_SHARED, ns);
    let dsc_rel = m.input(port::DSC_REL, ns);
    let dsc_exit = m.input(port::DSC_EXIT, ns);
    let dsc_mask = m.input(port::DSC_MASK, ns * lanes);
    let dsc_off = m.input(port::DSC_OFF, ns * lanes * aw);
    let cpl_valid = m.input(lock_table::port::CPL_VALID, ns);
    let cpl_slot = m.input(lock_table::port::CPL_SLOT, ns * sw);

    // --- Blocks -----------------------------------------------------------------------------
    let cfg = m.instance("share_cfg", &Arc::new(share_cfg::build(&p.child())));
    for (n, e) in cfg_in {
        m.assign(&cfg.input(n), e);
    }
    let shsm = cfg.output(share_cfg::port::SHSM);
    let u = cfg.output(share_cfg::port::U);
    let shtb = cfg.output(share_cfg::port::SHTB);
    let base = cfg.output(share_cfg::port::BASE);

    let locks = m.instance("lock_table", &Arc::new(lock_table::build(&p.child())));
    let lock_valid = locks.output(lock_table::port::LOCK_VALID);
    let lock_owner = locks.output(lock_table::port::LOCK_OWNER);

    m.section("Class: owner bits and warp classes from the registered locks (§2.5)");
    let cls = m.instance("owner_class", &Arc::new(owner_class::build(&p.child())));
    for (n, e) in [
        (owner_class::port::WARP_VALID, &warp_valid),
        (owner_class::port::WARP_SLOT, &warp_slot),
        (owner_class::port::SHSM, &shsm),
        (owner_class::port::SHTB, &shtb),
        (owner_class::port::LOCK_VALID, &lock_valid),
        (owner_class::port::LOCK_OWNER, &lock_owner),
    ] {
        m.assign(&cls.input(n), e.clone());
    }
    let warp_class = cls.output(owner_class::port::WARP_CLASS);

    m.section("Pick: one warp scheduler per issue port, warp w on scheduler w mod NSCHED (§4)");
    let sched_mod = Arc::new(warp_scheduler::build(&p.child()));
    let ws = s.ws();
    let (mut iss_valid, mut iss_idx, mut last_valid, mut last_idx) =
        (vec![], vec![], vec![], vec![]);
    let mut rq_slot = vec![];
    for q in 0..ns {
        let sch = m.instance(&format!("warp_scheduler{q}"), &sched_mod);
        let mine = |bus_: &Expr, width: usize| -> Vec<Expr> {
            (0..ws)
                .map(|j| bus_.slice((j * ns + q) * width, width))
                .collect()
        };
        m.assign(
            &sch.input(warp_scheduler::port::READY),
            bus(&mine(&ready, 1)),
        );
        m.assign(
            &sch.input(warp_scheduler::port::CLS),
            bus(&mine(&warp_class, 2)),
        );
        m.assign(
            &sch.input(warp_scheduler::port::AGE),
            bus(&mine(&age, age_w)),
        );
        let v = sch.output(warp_scheduler::port::ISS_VALID);
        let idx = sch.output(warp_scheduler::port::ISS_IDX);
        // The picked warp's slot: warp idx·NSCHED + q.
        let slots: Vec<Expr> = mine(&warp_slot, sw);
        let slot = index_mux(
            &mut m,
            &format!("pick{q}_slot"),
            &idx,
            &slots,
            &Expr::lit(0, sw),
        );
        rq_slot.push(m.wire(&format!("rq_slot{q}"), slot));
        iss_valid.push(v);
        iss_idx.push(idx);
        last_valid.push(sch.output(warp_scheduler::port::LAST_VALID));
        last_idx.push(sch.output(warp_scheduler::port::LAST_IDX));
    }
    let iss_valid = m.wire("iss_valid_bus", bus(&iss_valid));
    let rq_slot = m.wire("rq_slot_bus", bus(&rq_slot));
    let rq_valid = m.wire("rq_valid", &iss_valid & &dsc_shared);

    m.section("Access check and translation (§1.4–1.5, §2.3)");
    let acc = m.instance(
        "sp_access_unit",
        &Arc::new(sp_access_unit::build(&p.child())),
    );
    for (n, e) in [
        (sp_access_unit::port::RQ_VALID, &rq_valid),
        (sp_access_unit::port::RQ_SLOT, &rq_slot),
        (sp_access_unit::port::RQ_MASK, &dsc_mask),
        (sp_access_unit::port::RQ_OFF, &dsc_off),
        (sp_access_unit::port::SHSM, &shsm),
        (sp_access_unit::port::U, &u),
        (sp_access_unit::port::SHTB, &shtb),
        (sp_access_unit::port::BASE, &base),
    ] {
        m.assign(&acc.input(n), e.clone());
    }
    let needs_lock = acc.output(sp_access_unit::port::NEEDS_LOCK);

    m.section("Grant / NACK, release and drain (§2.4)");
    let gnt = locks.output(lock_table::port::GNT);
    // Issued: picked, and granted if it is a shared access.
    let issued = m.wire(
        "issued_bus",
        &iss_valid & &(!rq_valid.clone() | gnt.clone()),
    );
    let rel = m.instance("relssp_unit", &Arc::new(relssp_unit::build(&p.child())));
    let ev_warp: Vec<Expr> = (0..ns)
        .map(|q| {
            // warp = idx·NSCHED + q, in WW bits
            let shift = crate::blocks::sharing::ceil_log2(ns as u32) * (ns > 1) as usize;
            let full = match shift {
                0 => iss_idx[q].clone(),
                _ => crate::netlist::concat(&[iss_idx[q].clone(), Expr::lit(q as u64, shift)]),
            };
            let full = m.wire(&format!("pick{q}_warp"), full);
            let w = if full.width() >= ww {
                full.slice(0, ww)
            } else {
                full.zext(ww)
            };
            m.wire(&format!("ev_warp{q}"), w)
        })
        .collect();
    let ev_valid = m.wire("ev_valid", &issued & &(&dsc_rel | &dsc_exit));
    for (n, e) in [
        (relssp_unit::port::WARP_VALID, warp_valid.clone()),
        (relssp_unit::port::WARP_SLOT, warp_slot.clone()),
        (relssp_unit::port::LIVE, live.clone()),
        (relssp_unit::port::WARP_LAUNCH, warp_launch.clone()),
        (relssp_unit::port::EV_VALID, ev_valid),
        (relssp_unit::port::EV_REL, dsc_rel.clone()),
        (relssp_unit::port::EV_EXIT, dsc_exit.clone()),
        (relssp_unit::port::EV_WARP, bus(&ev_warp)),
        (relssp_unit::port::EV_MASK, dsc_mask.clone()),
    ] {
        m.assign(&rel.input(n), e);
    }
    let done = rel.output(relssp_unit::port::DONE);
    let tb_empty = rel.output(relssp_unit::port::TB_EMPTY);
    for (n, e) in [
        (lock_table::port::RQ_VALID, rq_valid.clone()),
        (lock_table::port::RQ_SLOT, rq_slot.clone()),
        (lock_table::port::NEEDS_LOCK, needs_lock.clone()),
        (lock_table::port::SHSM, shsm.clone()),
        (lock_table::port::SHTB, shtb.clone()),
        (lock_table::port::CPL_VALID, cpl_valid),
        (lock_table::port::CPL_SLOT, cpl_slot),
        (lock_table::port::DONE, done.clone()),
        (lock_table::port::TB_EMPTY, tb_empty.clone()),
    ] {
        m.assign(&locks.input(n), e);
    }
    for (n, e) in lock_in {
        m.assign(&locks.input(n), e);
    }

    m.section("Outputs: every block's ports under their spec names (§2.1)");
    let out = |m: &mut Module, name: &str, e: Expr| {
        let o = m.output(name, e.width());
        m.assign(&o, e);
    };
    out(&mut m, warp_scheduler::port::ISS_VALID, iss_valid);
    out(&mut m, warp_scheduler::port::ISS_IDX, bus(&iss_idx));
    out(&mut m, port::ISSUED, issued);
    out(&mut m, port::RQ_SLOT, rq_slot);
    out(&mut m, warp_scheduler::port::LAST_VALID, bus(&last_valid));
    out(&mut m, warp_scheduler::port::LAST_IDX, bus(&last_idx));
    for name in [
        share_cfg::port::SHSM,
        share_cfg::port::U,
        share_cfg::port::SHTB,
        share_cfg::port::BASE,
        share_cfg::port::ERR_CFG,
    ] {
        let e = cfg.output(name);
        out(&mut m, name, e);
    }
    for name in [owner_class::port::OWNER_BIT, owner_class::port::WARP_CLASS] {
        let e = cls.output(name);
        out(&mut m, name, e);
    }
    for name in [
        sp_access_unit::port::NEEDS_LOCK,
        sp_access_unit::port::PAIR,
        sp_access_unit::port::PHYS,
    ] {
        let e = acc.output(name);
        out(&mut m, name, e);
    }
    for name in [
        lock_table::port::GNT,
        lock_table::port::NACK,
        lock_table::port::ACQ,
        lock_table::port::REL_FIRE,
        lock_table::port::XFER,
        lock_table::port::SLOT_IDLE,
        lock_table::port::LOCK_VALID,
        lock_table::port::LOCK_OWNER,
        lock_table::port::PEND,
        lock_table::port::ERR_PROTO,
        lock_table::port::ERR_PEND,
    ] {
        let e = locks.output(name);
        out(&mut m, name, e);
    }
    out(&mut m, relssp_unit::port::DONE, done);
    out(&mut m, relssp_unit::port::TB_EMPTY, tb_empty);
    let rbits = rel.output(relssp_unit::port::RBITS);
    out(&mut m, relssp_unit::port::RBITS, rbits);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spec §7: 3,553 storage bits at the defaults, every one a register of a block.
    #[test]
    fn presets_build_with_the_section_7_inventory() {
        for (name, p) in Params::presets() {
            let m = build(&p);
            assert!(m.register_bits() > 0, "{name}");
            if name == "paper" {
                assert_eq!(m.register_bits(), 3553);
            }
        }
    }
}
