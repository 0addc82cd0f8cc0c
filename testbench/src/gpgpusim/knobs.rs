//! The GPGPU-Sim knobs smrtl maps, their GPGPU-Sim 4.x defaults (`gpu-sim.cc`'s
//! `option_parser_register` calls), the [`Gpgpusim`] quantities they give, and why every other
//! knob is ignored (docs/gpgpusim.md §2).

use super::parse::{Config, Opt};
use smrtl_hdl::params::Gpgpusim;

/// A knob's value as it takes effect: from the file (with its line) or GPGPU-Sim's default.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Used {
    pub knob: &'static str,
    pub value: String,
    /// The line it was read from; `None` for GPGPU-Sim's default or a built-in constant.
    pub line: Option<usize>,
}

impl std::fmt::Display for Used {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{} {} (line {l})", self.knob, self.value),
            None if self.knob.starts_with('-') => {
                write!(f, "{} {} (GPGPU-Sim's default)", self.knob, self.value)
            }
            None => write!(f, "{} {}", self.knob, self.value),
        }
    }
}

/// What a quantity comes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Num(u64),
    /// A name, matched against a parameter's names without regard to case.
    Name(String),
    /// A limit: the parameter takes this or its own largest value, whichever is smaller.
    AtMost(u64),
    /// The file gives none, and the parameter keeps its preset's value (the reason).
    Unset(String),
    /// The file describes something no parameter value can be (the reason): an error for a
    /// target that has the parameter.
    Refused(String),
}

/// One quantity of the configuration, with the knobs it came from.
#[derive(Clone, Debug)]
pub struct Quantity {
    pub what: Gpgpusim,
    pub value: Value,
    pub from: Vec<Used>,
}

/// The knobs smrtl maps, with GPGPU-Sim 4.x's defaults (applied when the file omits one, as
/// GPGPU-Sim applies them).
pub const MAPPED: &[(&str, &str)] = &[
    ("-gpgpu_shmem_num_banks", "16"),
    ("-gpgpu_shmem_limited_broadcast", "1"),
    ("-gpgpu_shmem_warp_parts", "2"),
    ("-gpgpu_shader_core_pipeline", "1024:32"),
    ("-gpgpu_shader_cta", "32"),
    ("-gpgpu_shader_registers", "8192"),
    ("-gpgpu_shmem_size", "16384"),
    ("-gpgpu_num_sched_per_core", "1"),
    ("-gpgpu_max_insn_issue_per_warp", "2"),
    ("-gpgpu_scheduler", "gto"),
    ("-gpgpu_cache:dl1", "none"),
    ("-gpgpu_l1_banks", "1"),
    ("-gpgpu_concurrent_kernel_sm", "0"),
    ("-gpgpu_max_concurrent_kernel", "32"),
    ("-gpgpu_n_clusters", "10"),
    ("-gpgpu_n_cores_per_cluster", "3"),
];

/// GPGPU-Sim's shared-memory word (`core_config::WORD_SIZE`): banks are 4 bytes wide, with no
/// knob to change it.
const SHMEM_WORD_BYTES: u64 = 4;

/// The L1 line every smrtl cache model has (mem_sm and coh_sm: 128 B).
const L1_LINE_BYTES: u64 = 128;

/// GPGPU-Sim's schedulers in the order `shader_core_ctx::create_schedulers` looks for them in
/// the `-gpgpu_scheduler` string (the first name found is the scheduler).
const SCHEDULERS: &[&str] = &[
    "lrr",
    "two_level_active",
    "gto",
    "rrr",
    "old",
    "warp_limiting",
];

/// The knob `name` (one of [`MAPPED`]) as it takes effect.
fn used(cfg: &Config, name: &'static str) -> Used {
    let default = MAPPED
        .iter()
        .find(|(k, _)| *k == name)
        .map(|(_, d)| *d)
        .expect("a mapped knob");
    match cfg.get(name) {
        Some(Opt { value, line, .. }) => Used {
            knob: name,
            value: value.clone(),
            line: Some(*line),
        },
        None => Used {
            knob: name,
            value: default.into(),
            line: None,
        },
    }
}

/// Where `u` stands, for a message: the file and line, or GPGPU-Sim's default.
fn at(cfg: &Config, u: &Used) -> String {
    match u.line {
        Some(l) => format!("{} line {l}: {} {}", cfg.file, u.knob, u.value),
        None => format!("{}: {} {} (GPGPU-Sim's default)", cfg.file, u.knob, u.value),
    }
}

/// An unsigned integer as GPGPU-Sim reads one (`0x` hex, a leading `0` octal), but all of it.
fn uint(cfg: &Config, u: &Used) -> Result<u64, String> {
    let text = u.value.as_str();
    let parsed = if let Some(hex) = text.strip_prefix("0x") {
        u64::from_str_radix(hex, 16)
    } else if text.len() > 1 && text.starts_with('0') {
        u64::from_str_radix(&text[1..], 8)
    } else {
        text.parse()
    };
    parsed.map_err(|_| {
        format!(
            "{}: not an unsigned integer; allowed: digits (0x hex, a leading 0 octal)",
            at(cfg, u)
        )
    })
}

/// A 0 / 1 flag (GPGPU-Sim asserts that a boolean is one of them).
fn flag(cfg: &Config, u: &Used) -> Result<bool, String> {
    match u.value.as_str() {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(format!("{}: not a flag; allowed: 0, 1", at(cfg, u))),
    }
}

/// `text` split at `sep` into numbers.
fn fields(text: &str, sep: char) -> Option<Vec<u64>> {
    text.split(sep).map(|f| f.trim().parse().ok()).collect()
}

/// Every quantity the configuration gives, GPGPU-Sim's defaults standing in for the knobs it
/// omits. A knob's value that GPGPU-Sim itself would refuse is an error here.
pub fn quantities(cfg: &Config) -> Result<Vec<Quantity>, String> {
    use Gpgpusim::*;
    let q = |what, value, from: &[&Used]| Quantity {
        what,
        value,
        from: from.iter().map(|u| (*u).clone()).collect(),
    };
    let builtin = |knob: &'static str, value: u64| Used {
        knob,
        value: value.to_string(),
        line: None,
    };
    let mut out = vec![];

    let banks = used(cfg, "-gpgpu_shmem_num_banks");
    out.push(q(ShmemBanks, Value::Num(uint(cfg, &banks)?), &[&banks]));
    let word = builtin(
        "GPGPU-Sim's shared-memory word (WORD_SIZE, built in):",
        SHMEM_WORD_BYTES,
    );
    out.push(q(ShmemBankBytes, Value::Num(SHMEM_WORD_BYTES), &[&word]));
    let limited = used(cfg, "-gpgpu_shmem_limited_broadcast");
    let mode = if flag(cfg, &limited)? {
        "gpgpusim4-limited"
    } else {
        "multicast"
    };
    out.push(q(Broadcast, Value::Name(mode.into()), &[&limited]));

    let pipe = used(cfg, "-gpgpu_shader_core_pipeline");
    let (threads, warp) = match fields(&pipe.value, ':').as_deref() {
        Some(&[t, w]) if w > 0 && t > 0 && t % w == 0 => (t, w),
        _ => {
            return Err(format!(
                "{}: allowed: <threads per SM>:<warp size>, the threads a positive multiple of the \
                 warp size",
                at(cfg, &pipe)
            ))
        }
    };
    out.push(q(ThreadsPerSm, Value::Num(threads), &[&pipe]));
    out.push(q(WarpSize, Value::Num(warp), &[&pipe]));
    out.push(q(WarpSlots, Value::Num(threads / warp), &[&pipe]));
    let parts = used(cfg, "-gpgpu_shmem_warp_parts");
    let p = uint(cfg, &parts)?;
    if p == 0 || warp % p != 0 {
        return Err(format!(
            "{}: allowed: a divisor of the warp size {warp}",
            at(cfg, &parts)
        ));
    }
    out.push(q(WarpParts, Value::Num(p), &[&parts]));
    out.push(q(LanesPerAccess, Value::Num(warp / p), &[&pipe, &parts]));

    for (what, knob) in [
        (TbSlots, "-gpgpu_shader_cta"),
        (Registers, "-gpgpu_shader_registers"),
        (ShmemBytes, "-gpgpu_shmem_size"),
        (Schedulers, "-gpgpu_num_sched_per_core"),
        (L1Banks, "-gpgpu_l1_banks"),
    ] {
        let u = used(cfg, knob);
        out.push(q(what, Value::Num(uint(cfg, &u)?), &[&u]));
    }
    let nsched = used(cfg, "-gpgpu_num_sched_per_core");
    let per_warp = used(cfg, "-gpgpu_max_insn_issue_per_warp");
    let issue = uint(cfg, &nsched)? * uint(cfg, &per_warp)?;
    out.push(q(IssueSlots, Value::Num(issue), &[&nsched, &per_warp]));

    out.extend(scheduler(cfg)?);
    out.extend(l1d(cfg)?);

    let csm = used(cfg, "-gpgpu_concurrent_kernel_sm");
    let max = used(cfg, "-gpgpu_max_concurrent_kernel");
    let kernels = match flag(cfg, &csm)? {
        false => Value::Num(1),
        true => Value::AtMost(uint(cfg, &max)?),
    };
    out.push(q(KernelSlots, kernels, &[&csm, &max]));
    let clusters = used(cfg, "-gpgpu_n_clusters");
    let cores = used(cfg, "-gpgpu_n_cores_per_cluster");
    let sms = uint(cfg, &clusters)? * uint(cfg, &cores)?;
    out.push(q(Sms, Value::Num(sms), &[&clusters, &cores]));
    Ok(out)
}

/// The scheduler and, for `two_level_active:N:…`, its active warps.
fn scheduler(cfg: &Config) -> Result<Vec<Quantity>, String> {
    let u = used(cfg, "-gpgpu_scheduler");
    let Some(name) = SCHEDULERS.iter().find(|s| u.value.contains(*s)) else {
        return Err(format!(
            "{}: no scheduler named; allowed: {}",
            at(cfg, &u),
            SCHEDULERS.join(", ")
        ));
    };
    let active = if *name == "two_level_active" {
        let n = u
            .value
            .split("two_level_active:")
            .nth(1)
            .and_then(|rest| rest.split(':').next())
            .and_then(|n| n.parse::<u64>().ok())
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                format!(
                    "{}: allowed: two_level_active:<active warps>:<inner>:<outer>, the active \
                     warps at least 1",
                    at(cfg, &u)
                )
            })?;
        Value::Num(n)
    } else {
        Value::Unset(format!("the scheduler is {name}, not two_level_active"))
    };
    Ok(vec![
        Quantity {
            what: Gpgpusim::Scheduler,
            value: Value::Name(name.to_string()),
            from: vec![u.clone()],
        },
        Quantity {
            what: Gpgpusim::TwoLevelActive,
            value: active,
            from: vec![u],
        },
    ])
}

/// The L1D quantities from GPGPU-Sim 4.x's cache string
/// `<N|S>:<sets>:<line>:<ways>,<rep>:<wr>:<alloc>:<wr_alloc>:<set_index>,<mshr>:<entries>:<merge>,<mq>…`
/// (`cache_config::init`'s `sscanf`).
fn l1d(cfg: &Config) -> Result<Vec<Quantity>, String> {
    use Gpgpusim::*;
    let u = used(cfg, "-gpgpu_cache:dl1");
    let all = [
        L1dSets,
        L1dWays,
        L1dSetIndex,
        L1dMshrs,
        L1dMerge,
        L1dMissQueue,
    ];
    let each = |value: &dyn Fn(Gpgpusim) -> Value| -> Vec<Quantity> {
        all.iter()
            .map(|&what| Quantity {
                what,
                value: value(what),
                from: vec![u.clone()],
            })
            .collect()
    };
    if u.value == "none" {
        return Ok(each(&|_| {
            Value::Refused("the GPU has no L1 data cache (-gpgpu_cache:dl1 none)".into())
        }));
    }
    let bad = || {
        format!(
            "{}: allowed: GPGPU-Sim 4.x's <N|S>:<sets>:<line>:<ways>,<rep>:<wr>:<alloc>:<wr_alloc>:\
             <set index L|H|P|X|C>,<mshr type>:<entries>:<merge>,<miss queue>[:<fifo>][,<port>] or \
             none",
            at(cfg, &u)
        )
    };
    let groups: Vec<Vec<&str>> = u.value.split(',').map(|g| g.split(':').collect()).collect();
    if groups.len() < 4 || groups[0].len() != 4 || groups[1].len() != 5 || groups[2].len() != 3 {
        return Err(bad());
    }
    let num = |t: &str| t.parse::<u64>().map_err(|_| bad());
    if !matches!(groups[0][0], "N" | "S") {
        return Err(bad());
    }
    let (sets, line, ways) = (num(groups[0][1])?, num(groups[0][2])?, num(groups[0][3])?);
    let index = match groups[1][4] {
        "L" => "linear",
        "H" => "fermi_hash",
        "P" => "ipoly_hash",
        "X" => "bitwise_xor",
        "C" => "custom",
        _ => return Err(bad()),
    };
    let (mshrs, merge) = (num(groups[2][1])?, num(groups[2][2])?);
    let mq = num(groups[3].first().copied().unwrap_or(""))?;
    if line != L1_LINE_BYTES {
        let why =
            format!("its L1D lines are {line} B; smrtl's L1 models have {L1_LINE_BYTES}-B lines");
        return Ok(each(&|_| Value::Refused(why.clone())));
    }
    Ok(each(&|what| match what {
        L1dSets => Value::Num(sets),
        L1dWays => Value::Num(ways),
        L1dSetIndex => Value::Name(index.into()),
        L1dMshrs => Value::Num(mshrs),
        L1dMerge => Value::Num(merge),
        _ => Value::Num(mq),
    }))
}

/// What a quantity is, in words (the `smrtl config` listing).
pub fn meaning(what: Gpgpusim) -> &'static str {
    use Gpgpusim::*;
    match what {
        ShmemBanks => "shared-memory banks",
        ShmemBankBytes => "shared-memory bank width (bytes)",
        Broadcast => "shared-memory broadcast rule",
        LanesPerAccess => "lanes per shared-memory access (warp size / warp parts)",
        WarpParts => "parts of a warp's shared-memory access",
        WarpSize => "threads per warp",
        WarpSlots => "warp slots per SM (threads / warp size)",
        ThreadsPerSm => "threads per SM",
        TbSlots => "thread-block slots per SM",
        Registers => "32-bit registers per SM",
        ShmemBytes => "shared-memory bytes per SM",
        Schedulers => "warp schedulers per SM",
        IssueSlots => "instructions issued per SM cycle (schedulers x per warp)",
        Scheduler => "warp scheduling policy",
        TwoLevelActive => "two_level_active: active warps per scheduler",
        L1dSets => "L1D sets",
        L1dWays => "L1D ways",
        L1dSetIndex => "L1D set-index function",
        L1dMshrs => "L1D MSHR entries",
        L1dMerge => "L1D accesses merged per MSHR entry",
        L1dMissQueue => "L1D miss-queue entries",
        L1Banks => "L1 banks",
        KernelSlots => "kernels per SM (1 unless -gpgpu_concurrent_kernel_sm 1)",
        Sms => "SMs (clusters x cores per cluster)",
    }
}

/// Why knob `name`, which no smrtl parameter takes, is ignored (by its family).
pub fn ignored_reason(name: &str) -> &'static str {
    const FAMILIES: &[(&[&str], &str)] = &[
        (
            &[
                "-gpgpu_ptx_",
                "-ptx_",
                "-gpgpu_compute_capability",
                "-gpgpu_stack_size",
                "-gpgpu_heap_size",
                "-gpgpu_runtime_sync",
                "-gpgpu_runtime_pending",
                "-trace_driven",
                "-gpgpu_ignore_resources",
                "-gpgpu_simd_model",
                "-gpgpu_occupancy_sm_number",
            ],
            "functional simulation and the CUDA runtime: smrtl's models run their own inputs",
        ),
        (
            &["-gpgpu_clock_domains"],
            "clock frequencies: smrtl counts cycles (a clock rate comes from `smrtl synth`'s Fmax)",
        ),
        (
            &[
                "-gpgpu_n_mem",
                "-gpgpu_n_sub_partition",
                "-dram_",
                "-gpgpu_dram_",
                "-gpgpu_mem_addr",
                "-gpgpu_mem_address",
                "-gpgpu_frfcfs",
                "-gpgpu_l2_",
                "-gpgpu_memory_partition",
                "-gpgpu_cache:dl2",
                "-gpgpu_perf_sim_memcpy",
                "-Seperate_Write",
                "-Write_Queue",
            ],
            "memory partitions (L2, DRAM) beyond the SM: smrtl's SM models stand them in by a \
             latency",
        ),
        (
            &[
                "-network_mode",
                "-inter_config_file",
                "-icnt_",
                "-gpgpu_n_cluster_ejection",
            ],
            "the interconnect: smrtl's SM models stand it in by a latency",
        ),
        (
            &["-power_", "-gpuwattch", "-gpgpu_clock_gated"],
            "the power model: smrtl's cost is `smrtl synth`'s cells and Fmax",
        ),
        (
            &[
                "-gpgpu_memlatency_stat",
                "-gpgpu_runtime_stat",
                "-enable_ptx_file_line_stats",
                "-visualizer",
                "-trace_",
                "-gpgpu_flush_l1_cache",
            ],
            "statistics, tracing and between-kernel housekeeping",
        ),
        (
            &[
                "-gpgpu_pipeline_widths",
                "-gpgpu_num_sp_units",
                "-gpgpu_num_sfu_units",
                "-gpgpu_num_dp_units",
                "-gpgpu_num_int_units",
                "-gpgpu_num_tensor",
                "-gpgpu_operand_collector",
                "-gpgpu_num_reg_banks",
                "-gpgpu_reg_file_port",
                "-gpgpu_dual_issue",
                "-gpgpu_inst_fetch",
                "-gpgpu_coalesce_arch",
                "-gpgpu_l1_latency",
                "-gpgpu_smem_latency",
                "-smem_latency",
            ],
            "execution units, operand collectors and latencies: smrtl's models take these from \
             their papers",
        ),
        (
            &["-gpgpu_cache:il1", "-gpgpu_tex_cache", "-gpgpu_const_cache"],
            "instruction, texture and constant caches: not modelled",
        ),
        (
            &[
                "-gpgpu_shmem_sizeDefault",
                "-gpgpu_shmem_size_Pref",
                "-gpgpu_cache:dl1Pref",
                "-gpgpu_adaptive_cache",
                "-gpgpu_unified_l1d",
                "-gpgpu_shmem_option",
                "-gpgpu_shmem_per_block",
            ],
            "carve-outs per kernel preference: smrtl takes -gpgpu_shmem_size and -gpgpu_cache:dl1",
        ),
        (
            &["-gpgpu_gmem_skip_L1D"],
            "smrtl's memory models put every global load through the L1D",
        ),
    ];
    FAMILIES
        .iter()
        .find(|(prefixes, _)| prefixes.iter().any(|p| name.starts_with(p)))
        .map_or("no smrtl parameter models it", |(_, why)| why)
}
