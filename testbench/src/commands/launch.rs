//! `smrtl launch`: the scratchpad-sharing launch calculator (docs/scratchpad-sharing.md §1.2):
//! thread blocks per SM without and with sharing, for one kernel's block shape.

use smrtl_cosim::kernel::launch::{launch, Inputs, Ratio};
use std::process::ExitCode;

type Result<T> = std::result::Result<T, String>;

/// Largest scratchpad and thread counts accepted (far beyond any GPU; keeps the arithmetic exact).
const MAX_BYTES: u64 = 1 << 30;
const MAX_THREADS: u64 = 1 << 20;
const MAX_SLOTS: u64 = 1024;

/// Scratchpad sharing's launch calculator (seed 001): thread blocks per SM without and
/// with sharing, as pairs and unshared blocks.
#[derive(clap::Parser)]
#[command(name = "launch")]
pub struct LaunchArgs {
    /// Scratchpad bytes per SM (R).
    #[arg(value_parser = crate::arg_values::any_u64, long, value_name = "BYTES")]
    pub smem: u64,
    /// Scratchpad bytes per thread block (R_tb).
    #[arg(value_parser = crate::arg_values::any_u64, long, value_name = "BYTES")]
    pub tb_smem: u64,
    /// Threads per thread block.
    #[arg(value_parser = crate::arg_values::any_u64, long, value_name = "N")]
    pub tb_threads: u64,
    /// Thread-block slots per SM (T).
    #[arg(value_parser = crate::arg_values::any_u64, long, default_value_t = 16)]
    pub max_tbs: u64,
    /// Resident threads per SM.
    #[arg(value_parser = crate::arg_values::any_u64, long, default_value_t = 3072)]
    pub max_threads: u64,
    /// Sharing threshold t, a fraction in (0, 1): 1/10, 109/147 or 0.1.
    #[arg(long, default_value = "1/10", allow_hyphen_values = true)]
    pub t: String,
    /// Thread blocks the register file allows [default: no limit].
    #[arg(value_parser = crate::arg_values::any_u64, long, value_name = "N")]
    pub reg_limit: Option<u64>,
    /// Granule of a shared block's private bytes.
    #[arg(value_parser = crate::arg_values::any_u64, long, default_value_t = 4)]
    pub align: u64,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `value` if it lies in `lo..=hi`; else the one-line error naming the flag.
fn within(flag: &str, value: u64, lo: u64, hi: u64) -> Result<u64> {
    if (lo..=hi).contains(&value) {
        Ok(value)
    } else {
        Err(format!(
            "--{flag} {value} is out of range; allowed: {lo}..={hi}"
        ))
    }
}

pub fn run(a: LaunchArgs) -> Result<ExitCode> {
    let smem = within("smem", a.smem, 1, MAX_BYTES)?;
    let max_threads = within("max-threads", a.max_threads, 1, MAX_THREADS)?;
    let i = Inputs {
        smem,
        tb_smem: within("tb-smem", a.tb_smem, 1, smem)?,
        tb_threads: within("tb-threads", a.tb_threads, 1, max_threads)?,
        max_tbs: within("max-tbs", a.max_tbs, 1, MAX_SLOTS)?,
        max_threads,
        t: a.t.parse::<Ratio>()?,
        reg_limit: a
            .reg_limit
            .map(|r| within("reg-limit", r, 1, MAX_SLOTS))
            .transpose()?,
        align: within("align", a.align, 1, smem)?,
    };
    let l = launch(&i);
    if a.json {
        println!("{}", serde_json::to_string(&l).map_err(|e| e.to_string())?);
    } else {
        println!(
            "R = {} B, R_tb = {} B, {} threads per TB, t = {}: unshared {} TBs (scratchpad {}, other limits {}), {} B unused",
            i.smem, i.tb_smem, i.tb_threads, i.t, l.base, l.m_sp, l.cap, l.unused_bytes_base
        );
        if l.shsm == 1 {
            println!(
                "shared: {} TBs = {} pairs + {} unshared; u = {} private bytes per shared TB; layout {} of {} B",
                l.n, l.pairs, l.unshared, l.u, l.layout_bytes, i.smem
            );
        } else {
            println!("shared: no gain, the SM does not share ({} TBs)", l.n);
        }
    }
    Ok(ExitCode::SUCCESS)
}
