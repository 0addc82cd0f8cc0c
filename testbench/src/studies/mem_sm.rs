//! The SM memory pipeline with the `mem_issue_ctl` RTL in the loop (docs/memory-issue-control.md
//! §1.3 phases 6–7, §2, §5): every cycle the model runs the whole cycle with its own control
//! (it never takes a decision from the RTL), then drives the RTL's inputs with the cycle's
//! [`CtlIn`] and compares `grant` and `mem_ok` before the edge and every register (`inflight`,
//! `peak`, `rsfail`, `reqcnt`, `mil`, `unl`, and `last` / `quota` / `base` / `rpm` / `minst`
//! when the scheme has them) after it with the model control's. The first difference stops the
//! run with its cycle, port, expected and actual values; the waveform shows the SM signals of
//! §5 as stimulus beside the control's ports, model and RTL.

use smrtl_cosim::blocks::mem_issue_ctl::{CtlIn, CtlOut};
use smrtl_cosim::blocks::rbmi_arb::mask;
use smrtl_cosim::harness::{first_difference, Mismatch, Trace as WaveRows};
use smrtl_cosim::sm::mem_sm::workload::Workload;
use smrtl_cosim::sm::mem_sm::{CycleRecord, MemPipeline, PipeStats};
use smrtl_cosim::{Layout, Rtl, Slot};
use smrtl_hdl::blocks::mem_issue_ctl::port::{self, Io};
use smrtl_hdl::blocks::mem_issue_ctl::{build, ports, Params as CtlParams};
use smrtl_hdl::progress::Counter;
use smrtl_hdl::tools::ToolError;
use smrtl_hdl::{Dir, Port};
use std::fmt;
use std::sync::Arc;

/// The per-SM signals (spec §5 "VCD signals") the waveform adds to the control's inputs.
const SM_SIGNALS: [(&str, usize); 5] = [
    ("lsu_busy", 1),
    ("l1d_outcome", 4),
    ("mshr_occupancy", 13),
    ("mq_occupancy", 11),
    ("rq_occupancy", 16),
];

/// The control's RTL for `p` (a test plants a fault around [`build`] itself).
pub fn module(p: &CtlParams) -> Arc<smrtl_hdl::Module> {
    Arc::new(build(p))
}

/// `mem_issue_ctl` of `p` in rust-hdl's simulator.
pub fn rusthdl(p: &CtlParams) -> Box<dyn Rtl> {
    Box::new(smrtl_cosim::harness::backend::rusthdl::RustHdl::new(
        module(p),
    ))
}

/// `mem_issue_ctl` of `p` verilated (cached).
pub fn verilator(p: &CtlParams) -> Result<Box<dyn Rtl>, ToolError> {
    crate::verilated(&module(p))
}

/// The waveform's layout: the control's ports (its inputs first, in the RTL's own buffer
/// places), then the SM signals as further inputs.
pub fn layout(p: &CtlParams) -> Layout {
    let mut ports = ports(p);
    ports.extend(
        SM_SIGNALS
            .iter()
            .map(|&(name, width)| Port::new(name, Dir::In, width)),
    );
    Layout::new(&ports)
}

/// How a run with the RTL in the loop stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemLoopError {
    /// The model refused the workload.
    Model(String),
    /// The RTL differs from the model: `edge` false for `grant` / `mem_ok` of `cycle` before its
    /// edge, true for a register after the edge of `cycle` (`None`: the reset state).
    Diverged {
        cycle: Option<u64>,
        edge: bool,
        m: Box<Mismatch>,
    },
}

impl fmt::Display for MemLoopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemLoopError::Model(e) => write!(f, "{e}"),
            MemLoopError::Diverged { cycle, edge, m } => {
                let when = match (cycle, edge) {
                    (None, _) => "in the reset state".to_string(),
                    (Some(c), false) => format!("cycle {c}, before the edge"),
                    (Some(c), true) => format!("cycle {c}, after the edge"),
                };
                write!(
                    f,
                    "{when}: port {} expected {} (model) actual {} (rtl)",
                    m.port,
                    smrtl_cosim::harness::hex(&m.expected),
                    smrtl_cosim::harness::hex(&m.actual)
                )
            }
        }
    }
}

/// The control's port places in the buffers (its declared [`Io`]) and the SM signals of the
/// waveform.
struct Ports {
    ctl: Io,
    sm: [Slot; 5],
}

impl Ports {
    fn new(p: &CtlParams, l: &Layout) -> Ports {
        Ports {
            ctl: Io::new(p, l),
            sm: SM_SIGNALS.map(|(name, _)| l.in_slot(name).clone()),
        }
    }

    /// The SM signals of the cycle just run (waveform only).
    fn write_sm(&self, m: &MemPipeline, buf: &mut [u64]) {
        let v = [
            u64::from(m.lsu_busy() || m.outcome() != smrtl_cosim::sm::mem_sm::l1d::Outcome::Idle),
            m.outcome() as u64,
            m.l1d().mshrs_used() as u64,
            m.l1d().mq_len() as u64,
            m.rq_len() as u64,
        ];
        for (s, v) in self.sm.iter().zip(v) {
            s.set(buf, v);
        }
    }
}

/// The legal-stimulus rules of spec §5, asserted on every cycle the model drives: at most one
/// L1D outcome (`Σ(acc + fail) ≤ 1`), at most one issue, `issue_k ⇒ mem_ok_k`, `first_k ⇒
/// acc_k`, and `issue = grant` under BMI.
fn legal(t: u64, x: &CtlIn, o: &CtlOut, bmi: bool) -> Result<(), String> {
    let [acc, fail, issue, first] = [&x.acc, &x.fail, &x.issue, &x.first].map(|v| mask(v));
    let (mem_ok, grant) = (mask(&o.mem_ok), mask(&o.grant));
    let bad = |what: &str| Err(format!("illegal control stimulus in cycle {t}: {what}"));
    if (acc | fail).count_ones() > 1 || acc & fail != 0 {
        return bad("more than one L1D outcome");
    }
    if issue.count_ones() > 1 {
        return bad("more than one memory issue");
    }
    if issue & !mem_ok != 0 {
        return bad("issue of a gated kernel");
    }
    if first & !acc != 0 {
        return bad("first without acc");
    }
    if bmi && issue != grant {
        return bad("issue differs from the BMI grant");
    }
    Ok(())
}

/// The control's params of workload `w` (from the pipeline's params, for its kernel count).
pub fn ctl_params(w: &Workload) -> CtlParams {
    w.params.ctl(w.kernels.len())
}

/// Runs workload `w` on the pipeline model with `rtl` (built for [`ctl_params`]) in the loop:
/// after a reset cycle, each model cycle drives the RTL with the cycle's control inputs; `grant`
/// and `mem_ok` are compared before the edge, the registers after it (read at the next cycle's
/// evaluation, and once more after the last edge). `rows` keeps the waveform (per-SM signals
/// and the control's ports, model and RTL); `each` sees every cycle's record.
pub fn cosim_mem(
    w: &Workload,
    rtl: &mut dyn Rtl,
    rows: Option<&mut WaveRows>,
    each: Option<&mut dyn FnMut(&CycleRecord)>,
) -> Result<PipeStats, MemLoopError> {
    let mut m = MemPipeline::new(w).map_err(MemLoopError::Model)?;
    cosim_mem_on(&mut m, w, rtl, rows, each)
}

/// [`cosim_mem`] on pipeline `m` (built for `w`, perhaps carrying a stall probe).
pub fn cosim_mem_on(
    m: &mut MemPipeline,
    w: &Workload,
    rtl: &mut dyn Rtl,
    mut rows: Option<&mut WaveRows>,
    mut each: Option<&mut dyn FnMut(&CycleRecord)>,
) -> Result<PipeStats, MemLoopError> {
    let p = ctl_params(w);
    let wave = layout(&p);
    let rtl_words = Layout::new(&ports(&p)).in_words;
    let ports = Ports::new(&p, &wave);
    let mut inputs = vec![0u64; wave.in_words];
    let (mut expected, mut actual) = (vec![0u64; wave.out_words], vec![0u64; wave.out_words]);
    if let Some(r) = rows.as_deref_mut() {
        r.nets_of(rtl);
    }
    // A reset cycle, so the RTL starts where the model does whatever the backend's power-up.
    let reset = CtlIn {
        reset: true,
        ..CtlIn::new(&p)
    };
    ports.ctl.write_inputs(&reset, &mut inputs);
    rtl.eval(&inputs[..rtl_words], &mut actual);
    rtl.edge();
    // The model's outputs: the cycle's `grant` / `mem_ok`, the registers of the last edge.
    let mut out = CtlOut::new(&p);
    m.ctl().registers(&mut out);
    let mut progress = Counter::watched("mem_sm", w.cycles, "cycles");
    for t in 0..w.cycles {
        progress.tick();
        m.step();
        if let Some(f) = each.as_deref_mut() {
            f(&m.record());
        }
        legal(t, m.events(), m.ctl_out(), p.scheme.has_arbiter()).map_err(MemLoopError::Model)?;
        ports.ctl.write_inputs(m.events(), &mut inputs);
        if rows.is_some() {
            ports.write_sm(m, &mut inputs);
        }
        out.grant.clone_from(&m.ctl_out().grant);
        out.mem_ok.clone_from(&m.ctl_out().mem_ok);
        ports.ctl.write_outputs(&out, &mut expected);
        rtl.eval(&inputs[..rtl_words], &mut actual);
        let differs = expected != actual;
        if let Some(r) = rows.as_deref_mut() {
            r.push_with(t, differs, |row| {
                row.inputs.extend_from_slice(&inputs);
                row.model.extend_from_slice(&expected);
                row.rtl.extend_from_slice(&actual);
                rtl.internal_values(&mut row.internals);
            });
        }
        if differs {
            let d = first_difference(&wave, t, &expected, &actual);
            let comb = d.port == port::GRANT || d.port == port::MEM_OK;
            return Err(MemLoopError::Diverged {
                cycle: if comb { Some(t) } else { t.checked_sub(1) },
                edge: !comb,
                m: Box::new(d),
            });
        }
        rtl.edge();
        m.ctl().registers(&mut out);
    }
    // The last edge's registers.
    ports.ctl.write_outputs(&out, &mut expected);
    rtl.eval(&inputs[..rtl_words], &mut actual);
    let regs = |s: &Slot| s.name != port::GRANT && s.name != port::MEM_OK;
    if let Some(s) = wave
        .outputs
        .iter()
        .filter(|s| regs(s))
        .find(|s| s.of(&expected) != s.of(&actual))
    {
        return Err(MemLoopError::Diverged {
            cycle: w.cycles.checked_sub(1),
            edge: true,
            m: Box::new(Mismatch {
                cycle: w.cycles,
                port: s.name.clone(),
                width: s.width,
                expected: s.of(&expected).to_vec(),
                actual: s.of(&actual).to_vec(),
            }),
        });
    }
    Ok(m.stats())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn illegal_stimulus_is_refused_by_rule() {
        use smrtl_cosim::blocks::rbmi_arb::kernels;
        let p = CtlParams::default();
        let ok = CtlOut {
            grant: kernels(2, 0b01),
            mem_ok: kernels(2, 0b01),
            ..CtlOut::new(&p)
        };
        let x = |issue, acc, fail, first| CtlIn {
            issue: kernels(2, issue),
            acc: kernels(2, acc),
            fail: kernels(2, fail),
            first: kernels(2, first),
            ..CtlIn::new(&p)
        };
        assert_eq!(legal(5, &x(0b01, 0b10, 0, 0b10), &ok, true), Ok(()));
        let err = |c: CtlIn, bmi| legal(5, &c, &ok, bmi).unwrap_err();
        assert!(err(x(0, 0b01, 0b10, 0), false).contains("one L1D outcome"));
        assert!(err(x(0, 0b01, 0b01, 0), false).contains("one L1D outcome"));
        assert!(err(x(0b11, 0, 0, 0), false).contains("one memory issue"));
        assert!(err(x(0b10, 0, 0, 0), false).contains("gated kernel"));
        assert!(err(x(0, 0, 0, 0b01), false).contains("first without acc"));
        assert!(err(x(0, 0, 0, 0), true).contains("BMI grant"));
        assert!(err(x(0, 0, 0, 0), true).starts_with("illegal control stimulus in cycle 5"));
    }
}
