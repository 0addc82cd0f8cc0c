//! The SM model's params (`sharing_core`'s and the model-only launch threshold and latencies,
//! docs/scratchpad-sharing.md §1.2, §5) and the kernel file's kernel and params.

use crate::kernel::cfg::{Lowered, Program};
use crate::kernel::launch::{self, Launch, Ratio};
use crate::kernel::program::Kernel;
use smrtl_hdl::blocks::sharing::{FreeClass, Policy, Rank, Sched, Shape};
use smrtl_hdl::blocks::sharing_core::Params as CoreParams;
use smrtl_hdl::params::{declared_by, Allowed, BlockParams, ParamError};

smrtl_hdl::block_params! {
    /// The SM model's parameters: `sharing_core`'s (the SM shape and the lock and scheduling
    /// switches, [C] in the spec) and the model-only launch threshold and latencies (§1.2, §5).
    #[derive(Eq)]
    pub struct SmParams {
        ..shape: Shape;
        policy: Policy = Policy::Transfer, "POLICY", Allowed::As(declared_by::<CoreParams>);
        pend_w: u32 = 6, "PEND_W", Allowed::As(declared_by::<CoreParams>);
        free_class: FreeClass = FreeClass::Nonowner, "FREE_CLASS", Allowed::As(declared_by::<CoreParams>);
        sched: Sched = Sched::Owf, "SCHED", Allowed::As(declared_by::<CoreParams>);
        rank: Rank = Rank::Owf3, "RANK", Allowed::As(declared_by::<CoreParams>);
        greedy: bool = false, "GREEDY", Allowed::As(declared_by::<CoreParams>);
        age_w: u32 = 16, "AGE_W", Allowed::As(declared_by::<CoreParams>);
        tl_active: u32 = 6, "TL_ACTIVE", Allowed::As(declared_by::<CoreParams>);
        /// Sharing threshold: a shared TB's private fraction (§1.1; the paper's evaluation: 1/10).
        t: Ratio = Ratio { num: 1, den: 10 }, "t", Allowed::Json("a fraction in (0, 1): N/D or a decimal"), "e.g. --set t=1/10";
        /// Whether the launch shares scratchpad (§1.2); false launches the unshared baseline
        /// (`base` TBs, ShSM = 0), the paper's Unshared-* configurations.
        share: bool = true, "share", Allowed::Bool;
        /// Granule of the private size u, in bytes (§1.2).
        align: u32 = 4, "ALIGN", Allowed::Range(1, 4096);
        /// TBs the register file allows (0: no limit).
        reg_limit: u32 = 0, "reg_limit", Allowed::Range(0, 1024);
        /// ALU and MOV latency (§5).
        lat_alu: u32 = 1, "lat_alu", Allowed::Range(1, 64);
        /// Scratchpad access latency; a granted shared-region access raises `cpl` in cycle
        /// issue + lat − 1 (§5).
        lat_shared: u32 = 5, "lat_shared", Allowed::Range(2, 64);
        /// Global access latency (§5: mid of the paper's 400–800 range).
        lat_global: u32 = 600, "lat_global", Allowed::Range(1, 100_000);
    }
}

impl BlockParams for SmParams {
    const BLOCK: &'static str = "sharing_core";

    fn presets() -> Vec<(&'static str, Self)> {
        CoreParams::presets()
            .into_iter()
            .map(|(name, core)| (name, SmParams::default().with_core(&core)))
            .collect()
    }

    fn check(&self) -> Result<(), ParamError> {
        self.core().check()
    }
}

impl SmParams {
    /// The params of the `sharing_core` RTL these describe (the block params are
    /// flattened in rather than nested, so `--set` names stay flat).
    pub fn core(&self) -> CoreParams {
        CoreParams {
            shape: self.shape.clone(),
            policy: self.policy,
            pend_w: self.pend_w,
            free_class: self.free_class,
            sched: self.sched,
            rank: self.rank,
            greedy: self.greedy,
            age_w: self.age_w,
            tl_active: self.tl_active,
        }
    }

    /// The launch of TBs of `threads` threads and `tb_smem` bytes on this SM (§1.2), or the
    /// unshared one when `share` is off.
    pub fn launch(&self, tb_smem: u32, threads: u32) -> Launch {
        let s = &self.shape;
        let l = launch::launch(&launch::Inputs {
            smem: s.smem as u64,
            tb_smem: tb_smem as u64,
            tb_threads: (threads.div_ceil(s.lanes) * s.lanes) as u64,
            max_tbs: s.slots as u64,
            max_threads: (s.warps * s.lanes) as u64,
            t: self.t,
            reg_limit: (self.reg_limit > 0).then_some(self.reg_limit as u64),
            align: self.align as u64,
        });
        if self.share {
            l
        } else {
            l.unshared(tb_smem as u64)
        }
    }

    /// These params with `core`'s block params.
    pub fn with_core(mut self, core: &CoreParams) -> SmParams {
        self.shape = core.shape.clone();
        (self.policy, self.pend_w, self.free_class) = (core.policy, core.pend_w, core.free_class);
        (self.sched, self.rank, self.greedy, self.age_w) =
            (core.sched, core.rank, core.greedy, core.age_w);
        self
    }
}

/// A kernel file's kernel and params: the straight-line form ([`Kernel`]) or a program with
/// control flow ([`Program`], JSON with `blocks` or the text form), lowered; a program without `grid` runs one full wave (the launch's TB count).
pub fn load_kernel(
    text: &str,
    sets: &[(String, String)],
) -> Result<(Kernel, SmParams, Option<Lowered>), String> {
    let program = !text.trim_start().starts_with('{')
        || serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(text)
            .is_ok_and(|m| m.contains_key("blocks"));
    if !program {
        let k = Kernel::parse(text).map_err(|e| e.to_string())?;
        let p = params_for(&k, sets).map_err(|e| e.to_string())?;
        return Ok((k, p, None));
    }
    let prog = Program::parse(text).map_err(|e| e.to_string())?;
    let p = params_for(&prog.lower(1).kernel, sets).map_err(|e| e.to_string())?;
    p.validate().map_err(|e| e.to_string())?;
    let threads = prog.threads.unwrap_or(crate::kernel::cfg::DEFAULT_THREADS);
    let n = p.launch(prog.tb_smem, threads).n.max(1) as u32;
    let lowered = prog.lower(n);
    let k = lowered.kernel.clone();
    k.check(p.shape.lanes).map_err(|e| e.to_string())?;
    Ok((k, p, Some(lowered)))
}

/// Kernel `k`'s params: the defaults, then the kernel file's `params`, then `sets` (the
/// command line's `--set`, which wins).
pub fn params_for(k: &Kernel, sets: &[(String, String)]) -> Result<SmParams, ParamError> {
    let mut all: Vec<(String, String)> = k
        .params
        .iter()
        .map(|(key, v)| {
            let text = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (key.clone(), text)
        })
        .collect();
    all.extend_from_slice(sets);
    SmParams::resolve(None, &all)
}
