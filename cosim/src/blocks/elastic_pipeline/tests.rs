//! Unit tests of the pipeline model: records, entries, the output mapping and the detector.

use super::*;
use crate::harness::layout::Layout;
use crate::harness::sim::{BlockModel, Simulator};
use smrtl_hdl::blocks::bank_conflict_detector::Mode;
use smrtl_hdl::blocks::elastic_pipeline::port::{Inputs, Io};
use smrtl_hdl::blocks::elastic_pipeline::ports;
use smrtl_hdl::blocks::elastic_pipeline::{Kind, Params, PipeMode, WbPriority};

fn micro(mode: PipeMode) -> Params {
    Params {
        pipe_mode: mode,
        mem_stages: 2,
        premem_depth: 1,
        nonmem_depth: 2,
        fe_depth: 1,
        ..Params::default()
    }
}

#[test]
fn record_json_shape() {
    let mut pipe = Pipeline::new(&micro(PipeMode::Elastic));
    let l = 8;
    let s2 = Entry::smem_deg(0, 2, l);
    let r0 = pipe.cycle(Some(&s2), false);
    let json = serde_json::to_string(&r0).unwrap();
    assert_eq!(
        json,
        r#"{"t":0,"F":null,"D":[null],"EXE":null,"PRE":[],"MEM0":null,"rem":0,"MEM":[null],"NQ":[],"WB":"-","wb_src":"NONE","fe_hold":false,"cause":"none"}"#
    );
    let back: Record = serde_json::from_str(&json).unwrap();
    assert_eq!(back, r0);
    let split = Pipeline::new(&micro(PipeMode::Split)).cycle(None, true);
    let json = serde_json::to_string(&split).unwrap();
    assert!(
        json.contains(r#""MEM":[null],"NM":[null,null],"WB":"-""#),
        "{json}"
    );
    assert!(!json.contains("PRE") && !json.contains("NQ"));
    for wb in [Wb::Empty, Wb::Icnt, Wb::Entry(7)] {
        let text = serde_json::to_string(&wb).unwrap();
        assert_eq!(serde_json::from_str::<Wb>(&text).unwrap(), wb);
    }
    assert!(serde_json::from_str::<Wb>(r#""x""#).is_err());
}

#[test]
fn entry_lanes_as_slices_and_json() {
    let e = Entry {
        addrs: (0..8).map(|l| 8 * l).collect(),
        ..Entry::new(3, Kind::Smem, 8)
    };
    assert_eq!(e.addrs.len(), 8);
    assert_eq!(e.addrs[2], 16);
    assert_eq!(e.act, [true; 8]);
    let json = serde_json::to_string(&e).unwrap();
    assert!(
        json.contains(r#""addrs":[0,8,16,24,32,40,48,56]"#),
        "{json}"
    );
    assert_eq!(serde_json::from_str::<Entry>(&json).unwrap(), e);
    let too_many = json.replace("[0,8,", &format!("[{}0,8,", "0,".repeat(32)));
    assert!(serde_json::from_str::<Entry>(&too_many).is_err());
}

#[test]
fn outputs_round_trip() {
    for mode in [PipeMode::Unified, PipeMode::Split, PipeMode::Elastic] {
        let p = micro(mode);
        let layout = Layout::new(&ports(&p));
        let mut pipe = Pipeline::new(&p);
        let stream: Vec<Entry> = (0..12)
            .map(|i| match i % 3 {
                0 => Entry::smem_deg(i, 3, 8),
                1 => Entry::new(i, Kind::Alu, 8),
                _ => Entry::new(i, Kind::Gld, 8),
            })
            .collect();
        let mut next = 0;
        for t in 0..40 {
            let r = pipe.cycle(stream.get(next), t % 7 == 3);
            if !r.fe_hold && next < stream.len() {
                next += 1;
            }
            let mut out = vec![0; layout.out_words];
            encode_record(&p, &layout, &r, &mut out);
            assert_eq!(record_from_outputs(&p, &layout, r.t, &out), r);
        }
        assert!(pipe.is_drained());
    }
}

/// A small deterministic generator (no dependency for one test).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// The port-level [`Model`] (no records) writes exactly the encoded records of
/// [`Pipeline::cycle`], resets included, in every mode.
#[test]
fn model_outputs_are_the_encoded_records() {
    let mut rng = Lcg(1);
    for (mode, m, n, q, ports_p, broadcast, priority, min_age) in [
        (
            PipeMode::Unified,
            4,
            3,
            4,
            1,
            Mode::Multicast,
            WbPriority::MemFirst,
            0,
        ),
        (
            PipeMode::Split,
            2,
            0,
            0,
            2,
            Mode::Literal,
            WbPriority::MemFirst,
            0,
        ),
        (
            PipeMode::Elastic,
            4,
            3,
            4,
            1,
            Mode::Multicast,
            WbPriority::MemFirst,
            0,
        ),
        (
            PipeMode::Elastic,
            1,
            0,
            1,
            1,
            Mode::GpgpusimLimited,
            WbPriority::NonmemFirst,
            0,
        ),
        (
            PipeMode::Elastic,
            2,
            2,
            3,
            2,
            Mode::Literal,
            WbPriority::MemFirst,
            2,
        ),
    ] {
        let p = Params {
            pipe_mode: mode,
            mem_stages: m,
            premem_depth: n,
            nonmem_depth: q,
            fe_depth: 2,
            ports: ports_p,
            broadcast,
            wb_priority: priority,
            nonmem_min_age: min_age,
            ..Params::default()
        };
        let layout = Layout::new(&ports(&p));
        let (mut model, io) = (Model::new(&p, &layout), Io::new(&p, &layout));
        let mut pipe = Pipeline::new(&p);
        let (mut fast, mut encoded) = (vec![0; layout.out_words], vec![0; layout.out_words]);
        for t in 0..3000u64 {
            let e = Entry {
                tag: t as u32 & 0xffff,
                kind: Kind::from_bits(rng.below(4)),
                deg_override: [None, None, Some(1 + rng.below(8) as u32)][rng.below(3) as usize],
                addrs: (0..8)
                    .map(|_| 8 * rng.below(4) as u32 + rng.below(2) as u32)
                    .collect(),
                act: (0..8).map(|_| rng.below(8) != 0).collect(),
            };
            let offer = (rng.below(8) != 0).then_some(&e);
            let (icnt, reset) = (rng.below(8) == 0, rng.below(200) == 0);
            let mut i = Inputs {
                icnt_valid: icnt,
                reset,
                ..Inputs::new(&p)
            };
            if let Some(e) = offer {
                i.in_valid = true;
                i.in_tag = u64::from(e.tag);
                i.in_kind = e.kind as u64;
                i.in_deg = u64::from(e.deg_override.unwrap_or(0));
                i.in_act = e.act.to_vec();
                i.in_addr = e.addrs.iter().map(|&a| u64::from(a)).collect();
            }
            let mut inputs = vec![0; layout.in_words];
            io.write_inputs(&i, &mut inputs);
            model.step(&inputs, &mut fast);
            encode_record(&p, &layout, &pipe.cycle(offer, icnt), &mut encoded);
            if reset {
                pipe = Pipeline::new(&p);
            }
            assert_eq!(fast, encoded, "{mode:?} M={m} N={n} Q={q}, cycle {t}");
        }
    }
}

#[test]
fn detector_degree_and_service() {
    let p = Params {
        ports: 2,
        ..Params::default()
    };
    let cfg = detector_cfg(&p);
    // Stride 4 over 8 banks: two lanes per bank, 4 bank-words per bank.
    let e = Entry {
        addrs: (0..8).map(|l| 4 * l).collect(),
        ..Entry::new(0, Kind::Smem, 8)
    };
    assert_eq!(degree(&cfg, &e), 4);
    assert_eq!(service_cycles(&cfg, &e), 2);
    let none = Entry {
        act: Lanes::splat(false, 8),
        ..e.clone()
    };
    assert_eq!(service_cycles(&cfg, &none), 1);
    let gld = Entry {
        kind: Kind::Gld,
        ..e
    };
    assert_eq!(service_cycles(&cfg, &gld), 1);
}
