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

use crate::blocks::sharing::{bus, index_mux, Class, FreeClass, Policy, Rank, Sched, Shape};
use crate::blocks::{
    lock_table, owner_class, relssp_unit, share_cfg, sp_access_unit, warp_scheduler,
};
use crate::netlist::{concat, Expr, InstanceRef, Module};
use crate::params::{declared_by, Allowed, BlockParams, ParamError};
use std::collections::HashMap;
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
        tl_active: u32 = 6, "TL_ACTIVE", Allowed::As(declared_by::<warp_scheduler::Params>);
    }
}

impl BlockParams for Params {
    const BLOCK: &'static str = "sharing_core";

    /// The paper's SM, the small shape and Fig. 5's (T 3, W 4, one scheduler); then the small
    /// shape under each switch: FREE with FREE_CLASS = UNSHARED, OWF2 with GREEDY, UWF ranks
    /// with LRR picks and a 2-bit `pend`, GTO on one scheduler with 3-bit ages, TWO_LEVEL on
    /// one scheduler of 16 warps (two groups), TWO_LEVEL_ACTIVE there with 6 active warps.
    fn presets() -> Vec<(&'static str, Self)> {
        let paper = Params::default();
        let small = Params {
            shape: Shape::small(),
            ..paper.clone()
        };
        let one_sched = |warps| Shape {
            warps,
            nsched: 1,
            ..Shape::small()
        };
        vec![
            ("paper", paper.clone()),
            ("small", small.clone()),
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
            (
                "free_unshared",
                Params {
                    policy: Policy::Free,
                    free_class: FreeClass::Unshared,
                    ..small.clone()
                },
            ),
            (
                "owf2_greedy",
                Params {
                    rank: Rank::Owf2,
                    greedy: true,
                    ..small.clone()
                },
            ),
            (
                "uwf_lrr",
                Params {
                    rank: Rank::Uwf,
                    sched: Sched::Lrr,
                    pend_w: 2,
                    ..small.clone()
                },
            ),
            (
                "gto_one_sched",
                Params {
                    shape: one_sched(8),
                    sched: Sched::Gto,
                    age_w: 3,
                    ..small.clone()
                },
            ),
            (
                "two_level",
                Params {
                    shape: one_sched(16),
                    sched: Sched::TwoLevel,
                    ..small.clone()
                },
            ),
            (
                "two_level_active",
                Params {
                    shape: one_sched(16),
                    sched: Sched::TwoLevelActive,
                    tl_active: 6,
                    ..small
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

crate::ports! {
    Params as p;
    let s = &p.shape;
    let (t, w, ns, lanes) = (s.slots as usize, s.warps as usize, s.nsched as usize, s.lanes as usize);
    let (aw, sw, tw, kw, wsw) = (s.aw(), s.sw(), s.tw(), s.kw(), s.wsw());
    inputs {
        /// ShareCfg's configuration writes (kernel launch, §2.2).
        cfg_shsm_we[1]: bool,
        cfg_shsm[1]: bool,
        cfg_u_we[1]: bool,
        cfg_u[aw],
        cfg_slot_we[1]: bool,
        cfg_slot[sw],
        cfg_partner[tw],
        cfg_base[aw],
        /// The lock table's lock preset (§2.4).
        cfg_lock_we[1]: bool,
        cfg_lock_k[kw],
        cfg_lock_valid[1]: bool,
        cfg_lock_owner[sw],
        /// Per warp slot (the SM model's view, §3): valid, TB slot, live lanes, launched now.
        warp_valid[1; w]: bool,
        warp_slot[sw; w],
        live[lanes; w],
        warp_launch[1; w]: bool,
        /// Per warp: its next instruction may issue this cycle (operands ready, not at a
        /// barrier).
        ready[1; w]: bool,
        /// Per warp: its dynamic warp id (launch order; oldest = smallest).
        age[p.age_w as usize; w],
        /// Per warp: waiting (exited, at a barrier or a long-op operand): TWO_LEVEL_ACTIVE's
        /// demotion (§4.1).
        waiting[1; w]: bool,
        /// Per scheduler, answering its pick in the same cycle (§5): the instruction is
        /// `ld/st/atom.shared`, relssp, carries the exit flag; its active lanes and, per lane
        /// (scheduler-major), its byte offsets.
        dsc_shared[1; ns]: bool,
        dsc_rel[1; ns]: bool,
        dsc_exit[1; ns]: bool,
        dsc_mask[lanes; ns],
        dsc_off[aw; ns * lanes],
        /// Per scheduler: a granted shared-region access of `cpl_slot` completes (§2.4).
        cpl_valid[1; ns]: bool,
        cpl_slot[sw; ns],
    }
    outputs {
        /// Per scheduler: its pick (§4), whether it issued (not NACKed) this cycle, the picked
        /// warp's slot, and the scheduler's last pick.
        iss_valid[1; ns]: bool,
        iss_idx[wsw; ns],
        issued[1; ns]: bool,
        rq_slot[sw; ns],
        last_valid[1; ns]: bool,
        last_idx[wsw; ns],
        /// ShareCfg's outputs (§2.2).
        shsm[1]: bool,
        u[aw],
        shtb[tw; t],
        base[aw; t],
        err_cfg[1]: bool,
        /// OwnerClass's outputs (§2.5).
        owner_bit[1; w]: bool,
        warp_class[Class::BITS; w],
        /// SpAccessUnit's outputs (§2.3).
        needs_lock[1; ns]: bool,
        pair[kw; ns],
        phys[aw; ns * lanes],
        /// LockTable's outputs (§2.4).
        gnt[1; ns]: bool,
        nack[1; ns]: bool,
        acq[1; ns]: bool,
        rel_fire[1; t]: bool,
        xfer[1; t]: bool,
        slot_idle[1; t]: bool,
        lock_valid[1; s.kp()]: bool,
        lock_owner[sw; s.kp()],
        pend[p.pend_w as usize; t],
        err_proto[1]: bool,
        err_pend[1]: bool,
        /// RelsspUnit's outputs (§3).
        done[1; t]: bool,
        tb_empty[1; t]: bool,
        rbits[lanes; w],
    }
}

impl crate::Block for Params {
    fn build(&self) -> Module {
        build(self)
    }
    /// The lock table's drain fault, caught at the core's ports (a parent built with a
    /// child's fault planted gets the faulty child).
    #[cfg(feature = "faults")]
    const FAULTS: &'static [crate::faults::Fault] = &[lock_table::faults::RELEASE_IGNORES_DRAIN];
}

/// The core's blocks and the wires between them, as the sections build them.
struct Core {
    inp: HashMap<String, Expr>,
    cfg: InstanceRef,
    locks: InstanceRef,
    cls: InstanceRef,
    acc: Option<InstanceRef>,
    rel: Option<InstanceRef>,
}

impl Core {
    fn i(&self, name: &str) -> Expr {
        self.inp[name].clone()
    }
}

/// What the schedulers pick (§4): per scheduler the pick and the last pick, the picked warps'
/// slots and the shared-access requests.
struct Picks {
    iss_valid: Expr,
    iss_idx: Vec<Expr>,
    last_valid: Vec<Expr>,
    last_idx: Vec<Expr>,
    rq_slot: Expr,
    rq_valid: Expr,
}

/// Builds the core from validated params, one function per section, in the spec's in-cycle
/// order (§2.1).
pub fn build(p: &Params) -> Module {
    let mut m = Module::new(&crate::params::module_name(p));
    m.cites(crate::blocks::docs::SCRATCHPAD_SHARING);
    let (inp, out) = m.declare_ports(&ports(p));
    m.section("Inputs: configuration (kernel launch)");
    m.section("Inputs: warps (the SM model's view)");
    m.section("Inputs: the picked instructions, and completions");
    let cfg = m.instance("share_cfg", &Arc::new(share_cfg::build(&p.child())));
    for n in [
        port::CFG_SHSM_WE,
        port::CFG_SHSM,
        port::CFG_U_WE,
        port::CFG_U,
        port::CFG_SLOT_WE,
        port::CFG_SLOT,
        port::CFG_PARTNER,
        port::CFG_BASE,
    ] {
        m.assign(&cfg.input(n), inp[n].clone());
    }
    let locks = m.instance("lock_table", &Arc::new(lock_table::build(&p.child())));
    let cls = class(&mut m, p, &inp, &cfg, &locks);
    let mut c = Core {
        inp,
        cfg,
        locks,
        cls,
        acc: None,
        rel: None,
    };
    let picks = pick(&mut m, p, &c);
    access(&mut m, p, &mut c, &picks);
    let issued = grant(&mut m, p, &mut c, &picks);
    outputs(&mut m, &c, &out, picks, issued);
    m
}

/// Class: owner bits and warp classes from the registered locks (§2.5).
fn class(
    m: &mut Module,
    p: &Params,
    inp: &HashMap<String, Expr>,
    cfg: &InstanceRef,
    locks: &InstanceRef,
) -> InstanceRef {
    m.section("Class: owner bits and warp classes from the registered locks (§2.5)");
    let cls = m.instance("owner_class", &Arc::new(owner_class::build(&p.child())));
    for (n, e) in [
        (port::WARP_VALID, inp[port::WARP_VALID].clone()),
        (port::WARP_SLOT, inp[port::WARP_SLOT].clone()),
        (port::SHSM, cfg.output(port::SHSM)),
        (port::SHTB, cfg.output(port::SHTB)),
        (port::LOCK_VALID, locks.output(port::LOCK_VALID)),
        (port::LOCK_OWNER, locks.output(port::LOCK_OWNER)),
    ] {
        m.assign(&cls.input(n), e);
    }
    cls
}

/// Pick: one warp scheduler per issue port, warp w on scheduler w mod NSCHED (§4); the picked
/// warp's slot, and its shared-memory request.
fn pick(m: &mut Module, p: &Params, c: &Core) -> Picks {
    m.section("Pick: one warp scheduler per issue port, warp w on scheduler w mod NSCHED (§4)");
    let s = &p.shape;
    let (ns, sw, ws, age_w) = (s.nsched as usize, s.sw(), s.ws(), p.age_w as usize);
    let (ready, age, warp_slot) = (c.i(port::READY), c.i(port::AGE), c.i(port::WARP_SLOT));
    let wait = c.i(port::WAITING);
    let warp_class = c.cls.output(port::WARP_CLASS);
    let sched_mod = Arc::new(warp_scheduler::build(&p.child()));
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
        m.assign(&sch.input(port::READY), bus(&mine(&ready, 1)));
        m.assign(
            &sch.input(warp_scheduler::port::CLS),
            bus(&mine(&warp_class, 2)),
        );
        m.assign(&sch.input(port::AGE), bus(&mine(&age, age_w)));
        m.assign(&sch.input(port::WAITING), bus(&mine(&wait, 1)));
        let v = sch.output(port::ISS_VALID);
        let idx = sch.output(port::ISS_IDX);
        // The picked warp's slot: warp idx·NSCHED + q.
        let slots: Vec<Expr> = mine(&warp_slot, sw);
        let slot = index_mux(m, &format!("pick{q}_slot"), &idx, &slots, &Expr::lit(0, sw));
        rq_slot.push(m.wire(&format!("rq_slot{q}"), slot));
        iss_valid.push(v);
        iss_idx.push(idx);
        last_valid.push(sch.output(port::LAST_VALID));
        last_idx.push(sch.output(port::LAST_IDX));
    }
    let iss_valid = m.wire("iss_valid_bus", bus(&iss_valid));
    let rq_slot = m.wire("rq_slot_bus", bus(&rq_slot));
    let rq_valid = m.wire("rq_valid", &iss_valid & &c.i(port::DSC_SHARED));
    Picks {
        iss_valid,
        iss_idx,
        last_valid,
        last_idx,
        rq_slot,
        rq_valid,
    }
}

/// Access check and translation (§1.4–1.5, §2.3).
fn access(m: &mut Module, p: &Params, c: &mut Core, picks: &Picks) {
    m.section("Access check and translation (§1.4–1.5, §2.3)");
    let acc = m.instance(
        "sp_access_unit",
        &Arc::new(sp_access_unit::build(&p.child())),
    );
    for (n, e) in [
        (sp_access_unit::port::RQ_VALID, picks.rq_valid.clone()),
        (port::RQ_SLOT, picks.rq_slot.clone()),
        (sp_access_unit::port::RQ_MASK, c.i(port::DSC_MASK)),
        (sp_access_unit::port::RQ_OFF, c.i(port::DSC_OFF)),
        (port::SHSM, c.cfg.output(port::SHSM)),
        (port::U, c.cfg.output(port::U)),
        (port::SHTB, c.cfg.output(port::SHTB)),
        (port::BASE, c.cfg.output(port::BASE)),
    ] {
        m.assign(&acc.input(n), e);
    }
    c.acc = Some(acc);
}

/// Grant / NACK, the relssp and exit events of the issued instructions, `done`, release and
/// drain (§2.4, §3). Returns the issued bus.
fn grant(m: &mut Module, p: &Params, c: &mut Core, picks: &Picks) -> Expr {
    m.section("Grant / NACK, release and drain (§2.4)");
    let s = &p.shape;
    let (ns, ww) = (s.nsched as usize, s.ww());
    let acc = c.acc.as_ref().expect("the access section ran");
    let needs_lock = acc.output(port::NEEDS_LOCK);
    let gnt = c.locks.output(port::GNT);
    // Issued: picked, and granted if it is a shared access.
    let issued = m.wire(
        "issued_bus",
        &picks.iss_valid & &(!picks.rq_valid.clone() | gnt.clone()),
    );
    let rel = m.instance("relssp_unit", &Arc::new(relssp_unit::build(&p.child())));
    let ev_warp: Vec<Expr> = (0..ns)
        .map(|q| {
            // warp = idx·NSCHED + q, in WW bits
            let shift = crate::blocks::sharing::ceil_log2(ns as u32) * (ns > 1) as usize;
            let full = match shift {
                0 => picks.iss_idx[q].clone(),
                _ => concat(&[picks.iss_idx[q].clone(), Expr::lit(q as u64, shift)]),
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
    let (dsc_rel, dsc_exit) = (c.i(port::DSC_REL), c.i(port::DSC_EXIT));
    let ev_valid = m.wire("ev_valid", &issued & &(&dsc_rel | &dsc_exit));
    for (n, e) in [
        (port::WARP_VALID, c.i(port::WARP_VALID)),
        (port::WARP_SLOT, c.i(port::WARP_SLOT)),
        (port::LIVE, c.i(port::LIVE)),
        (port::WARP_LAUNCH, c.i(port::WARP_LAUNCH)),
        (relssp_unit::port::EV_VALID, ev_valid),
        (relssp_unit::port::EV_REL, dsc_rel),
        (relssp_unit::port::EV_EXIT, dsc_exit),
        (relssp_unit::port::EV_WARP, bus(&ev_warp)),
        (relssp_unit::port::EV_MASK, c.i(port::DSC_MASK)),
    ] {
        m.assign(&rel.input(n), e);
    }
    for (n, e) in [
        (lock_table::port::RQ_VALID, picks.rq_valid.clone()),
        (port::RQ_SLOT, picks.rq_slot.clone()),
        (port::NEEDS_LOCK, needs_lock),
        (port::SHSM, c.cfg.output(port::SHSM)),
        (port::SHTB, c.cfg.output(port::SHTB)),
        (port::CPL_VALID, c.i(port::CPL_VALID)),
        (port::CPL_SLOT, c.i(port::CPL_SLOT)),
        (port::DONE, rel.output(port::DONE)),
        (port::TB_EMPTY, rel.output(port::TB_EMPTY)),
        (port::CFG_LOCK_WE, c.i(port::CFG_LOCK_WE)),
        (port::CFG_LOCK_K, c.i(port::CFG_LOCK_K)),
        (port::CFG_LOCK_VALID, c.i(port::CFG_LOCK_VALID)),
        (port::CFG_LOCK_OWNER, c.i(port::CFG_LOCK_OWNER)),
    ] {
        m.assign(&c.locks.input(n), e);
    }
    c.rel = Some(rel);
    issued
}

/// Outputs: every block's ports under their spec names (§2.1).
fn outputs(m: &mut Module, c: &Core, out: &HashMap<String, Expr>, picks: Picks, issued: Expr) {
    m.section("Outputs: every block's ports under their spec names (§2.1)");
    let (acc, rel) = (
        c.acc.as_ref().expect("the access section ran"),
        c.rel.as_ref().expect("the grant section ran"),
    );
    let mut assign = |name: &str, e: Expr| m.assign(&out[name], e);
    assign(port::ISS_VALID, picks.iss_valid);
    assign(port::ISS_IDX, bus(&picks.iss_idx));
    assign(port::ISSUED, issued);
    assign(port::RQ_SLOT, picks.rq_slot);
    assign(port::LAST_VALID, bus(&picks.last_valid));
    assign(port::LAST_IDX, bus(&picks.last_idx));
    let from = [
        (
            &c.cfg,
            &[port::SHSM, port::U, port::SHTB, port::BASE, port::ERR_CFG][..],
        ),
        (&c.cls, &[port::OWNER_BIT, port::WARP_CLASS][..]),
        (acc, &[port::NEEDS_LOCK, port::PAIR, port::PHYS][..]),
        (
            &c.locks,
            &[
                port::GNT,
                port::NACK,
                port::ACQ,
                port::REL_FIRE,
                port::XFER,
                port::SLOT_IDLE,
                port::LOCK_VALID,
                port::LOCK_OWNER,
                port::PEND,
                port::ERR_PROTO,
                port::ERR_PEND,
            ][..],
        ),
        (rel, &[port::DONE, port::TB_EMPTY, port::RBITS][..]),
    ];
    for (inst, names) in from {
        for &name in names {
            assign(name, inst.output(name));
        }
    }
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
