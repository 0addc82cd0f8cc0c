//! SMK-W in the pipeline's issue stage (docs/memory-issue-control.md §2, §8.2; spec §7; Dai et
//! al., HPCA 2018, §4): a kernel out of warp-instruction quota issues nothing until every quota
//! is spent (or no kernel with quota left has a live warp), and an empty quota list leaves the
//! pipeline as it was.

use smrtl_cosim::sm::mem_sm::params::PipeParams;
use smrtl_cosim::sm::mem_sm::workload::{bench_named, Workload};
use smrtl_cosim::sm::mem_sm::{run, MemPipeline, PipeStats};

fn workload(quotas: &[u32], cycles: u64) -> Workload {
    Workload {
        kernels: vec![
            bench_named("bp").unwrap().kernel(),
            bench_named("sv").unwrap().kernel(),
        ],
        tbs: vec![6, 8],
        cycles,
        seed: 1,
        params: PipeParams {
            smkw_quota: quotas.to_vec(),
            ..PipeParams::default()
        },
    }
}

fn stats(quotas: &[u32]) -> PipeStats {
    run(&workload(quotas, 100_000), None, None).unwrap()
}

fn share0(s: &PipeStats) -> f64 {
    let (a, b) = (
        s.kernels[0].warp_instructions as f64,
        s.kernels[1].warp_instructions as f64,
    );
    a / (a + b)
}

#[test]
fn quotas_set_each_kernels_share_of_the_issue_slots() {
    let free = stats(&[]);
    let favour0 = stats(&[1000, 10]);
    let favour1 = stats(&[10, 1000]);
    // bp alone issues about 7× as many instructions as sv in this mix; a 100:1 quota takes
    // kernel 0 above its free share, a 1:100 quota below it.
    assert!(
        share0(&favour0) > share0(&free),
        "{} vs {}",
        share0(&favour0),
        share0(&free)
    );
    assert!(
        share0(&favour1) < share0(&free),
        "{} vs {}",
        share0(&favour1),
        share0(&free)
    );
    // Between reloads each kernel issues at most its quota (plus the slots of the cycle it
    // ran out in): kernel 1 holds at most 4 × 10 / 1000 of kernel 0's count under [1000, 10]
    // plus the epochs cut short by the deadlock guard.
    let k = &favour0.kernels;
    assert!(
        (k[1].warp_instructions as f64) < 0.05 * k[0].warp_instructions as f64,
        "{} vs {}",
        k[1].warp_instructions,
        k[0].warp_instructions
    );
}

#[test]
fn equal_quotas_issue_in_lock_step_epochs() {
    // Quota 1 each: no kernel issues a second instruction before the other issued one (or
    // had no live warp), so over a run the counts stay within the reloads of one kernel.
    let w = workload(&[1, 1], 20_000);
    let mut m = MemPipeline::new(&w).unwrap();
    for _ in 0..w.cycles {
        m.step();
    }
    let s = m.stats();
    let (a, b) = (
        s.kernels[0].warp_instructions,
        s.kernels[1].warp_instructions,
    );
    assert!(a > 0 && b > 0);
    // Each epoch gives each kernel at most 4 issues (one per scheduler in the cycle it spends
    // its quota); a kernel can only run ahead in epochs the other had no live warp.
    assert!(
        a <= 4 * b + 4 * s.kernels[1].tbs_completed + 4,
        "{a} vs {b}"
    );
    assert!(
        b <= 4 * a + 4 * s.kernels[0].tbs_completed + 4,
        "{a} vs {b}"
    );
}

#[test]
fn bad_quotas_are_refused() {
    assert!(MemPipeline::new(&workload(&[5], 10))
        .err()
        .unwrap()
        .contains("one quota per kernel"));
    let p = PipeParams {
        smkw_quota: vec![3, 0],
        ..PipeParams::default()
    };
    use smrtl_hdl::BlockParams;
    assert!(p.validate().unwrap_err().to_string().contains("smkw_quota"));
}
