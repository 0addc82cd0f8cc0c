//! The waveform of a run (docs/memory-issue-control.md §5 "VCD signals") and the run loop.

use super::params::{PipeParams, MAX_KERNELS};
use super::stats::{CycleRecord, PipeStats};
use super::workload::Workload;
use super::MemPipeline;
use crate::harness::layout::Layout;
use crate::harness::Trace as WaveRows;
use smrtl_hdl::progress::Counter;
use smrtl_hdl::{Dir, Port};

/// The waveform's signals (docs §5 "VCD signals"): per SM `slot_free`, `lsu_busy`,
/// `l1d_outcome[3:0]`, occupancies, and the control's ports and registers, packed per kernel
/// (kernel 0 lowest).
pub fn wave_layout(p: &PipeParams, n: usize) -> Layout {
    let out = |name: &str, width: usize| Port::new(name, Dir::Out, width);
    // Per kernel: `width` bits each, shown per element as `<name>_<k>` too.
    let per_kernel = |name: &str, width: usize| Port::array(name, Dir::Out, n * width, n);
    let (ib, rb, qb) = (
        p.inflight_bits as usize,
        p.rsfail_bits as usize,
        p.reqcnt_bits as usize,
    );
    let ports = vec![
        out("slot_free", 1),
        out("lsu_busy", 1),
        out("l1d_outcome", 4),
        out("mshr_occupancy", 13),
        out("mq_occupancy", 11),
        out("rq_occupancy", 16),
        per_kernel("mem_req", 1),
        per_kernel("mem_ok", 1),
        per_kernel("grant", 1),
        per_kernel("issue", 1),
        per_kernel("done", 2),
        per_kernel("acc", 1),
        per_kernel("first", 1),
        per_kernel("fail", 1),
        per_kernel("inflight", ib),
        per_kernel("peak", ib),
        per_kernel("rsfail", rb),
        per_kernel("reqcnt", qb),
        per_kernel("mil", ib),
        per_kernel("unl", 1),
    ];
    Layout::new(&ports)
}

/// Appends cycle record `r` to `rows` in the layout of [`wave_layout`].
pub fn push_wave(rows: &mut WaveRows, layout: &Layout, p: &PipeParams, n: usize, r: &CycleRecord) {
    rows.push_with(r.t, false, |row| {
        row.model.resize(layout.out_words, 0);
        let buf = &mut row.model;
        let mut put = |name: &str, v: u64| layout.out_slot(name).set(buf, v);
        put("slot_free", r.slot_free.into());
        put("lsu_busy", r.lsu_busy.into());
        put("l1d_outcome", r.l1d_outcome.into());
        put("mshr_occupancy", r.mshr.into());
        put("mq_occupancy", r.mq.into());
        put("rq_occupancy", r.rq.into());
        put("mem_req", r.mem_req.into());
        put("mem_ok", r.mem_ok.into());
        put("grant", r.grant.into());
        put("issue", r.issue.into());
        put("acc", r.acc.into());
        put("first", r.first.into());
        put("fail", r.fail.into());
        put("unl", r.unl.into());
        let fields: [(&str, usize, &[u32; MAX_KERNELS]); 5] = [
            ("inflight", p.inflight_bits as usize, &r.inflight),
            ("peak", p.inflight_bits as usize, &r.peak),
            ("rsfail", p.rsfail_bits as usize, &r.rsfail),
            ("reqcnt", p.reqcnt_bits as usize, &r.reqcnt),
            ("mil", p.inflight_bits as usize, &r.mil),
        ];
        for (name, bits, v) in fields {
            let slot = layout.out_slot(name);
            for (k, &x) in v.iter().enumerate().take(n) {
                slot.set_field(buf, k * bits, bits, x.into());
            }
        }
        let done = layout.out_slot("done");
        for k in 0..n {
            done.set_field(buf, 2 * k, 2, r.done[k].into());
        }
    });
}

/// Runs workload `w` for its cycles; `each` sees every cycle's record (built only if given);
/// `rows` keeps the waveform if given.
pub fn run(
    w: &Workload,
    each: Option<&mut dyn FnMut(&CycleRecord)>,
    rows: Option<&mut WaveRows>,
) -> Result<PipeStats, String> {
    let mut m = MemPipeline::new(w)?;
    Ok(run_on(&mut m, w, each, rows))
}

/// [`run`] on pipeline `m` (built for `w`, perhaps with a stall probe attached).
pub fn run_on(
    m: &mut MemPipeline,
    w: &Workload,
    mut each: Option<&mut dyn FnMut(&CycleRecord)>,
    mut rows: Option<&mut WaveRows>,
) -> PipeStats {
    let n = w.kernels.len();
    let layout = rows.as_ref().map(|_| wave_layout(&w.params, n));
    let recording = each.is_some() || rows.is_some();
    let mut progress = Counter::watched("mem_sm", w.cycles, "cycles");
    for _ in 0..w.cycles {
        progress.tick();
        m.step();
        if recording {
            let r = m.record();
            if let Some(f) = each.as_deref_mut() {
                f(&r);
            }
            if let (Some(rows), Some(layout)) = (rows.as_deref_mut(), &layout) {
                push_wave(rows, layout, &w.params, n, &r);
            }
        }
    }
    progress.finish();
    m.stats()
}
