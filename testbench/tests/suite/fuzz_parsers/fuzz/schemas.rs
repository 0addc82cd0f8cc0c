//! The schemas (field names and values) and valid inputs of each parser the fuzz tests feed
//! (tests/fuzz_parsers.rs).

use crate::fuzz_parsers::*;

// ---------------------------------------------------------------------------------------------
// Schemas and valid inputs of each parser.
// ---------------------------------------------------------------------------------------------

pub(crate) fn block_param_names() -> Vec<String> {
    let mut v: Vec<String> = smrtl_testbench::blocks()
        .iter()
        .flat_map(|b| (b.params)().into_iter().map(|p| p.name.to_string()))
        .collect();
    v.sort();
    v.dedup();
    v
}

pub(crate) fn sm_param_names() -> Vec<String> {
    let v = serde_json::to_value(SmParams::default()).expect("params serialize");
    v.as_object().expect("an object").keys().cloned().collect()
}

pub(crate) fn trace_schema() -> Schema {
    let mut keys = strings(&[
        "params",
        "stream",
        "icnt_valid_cycles",
        "kind",
        "addrs",
        "active",
        "deg",
    ]);
    keys.extend(block_param_names());
    let mut s = strings(&[
        "A",
        "G",
        "GST",
        "S(1)",
        "S(2)",
        "S(8)",
        "S(0)",
        "S(9)",
        "S(33)",
        "S(-1)",
        "S( 2 )",
        "S()",
        "S(99999999999999999999)",
        "alu",
        "smem",
        "gld",
        "gst",
    ]);
    s.extend(strings(&NAMES));
    Schema { keys, strings: s }
}

pub(crate) fn workload_schema() -> Schema {
    let mut keys = strings(&[
        "params",
        "warps",
        "op",
        "pc",
        "degrees",
        "addrs",
        "active",
        "icnt",
        "at_writeback",
    ]);
    keys.extend(sm_param_names());
    let mut s = strings(&["alu", "gld", "gst", "smem", "mul"]);
    s.extend(strings(&NAMES));
    Schema { keys, strings: s }
}

/// Small valid workloads (a profile's is long to run; these are cut short).
pub(crate) fn workloads() -> Vec<Value> {
    let micro = json!({
        "params": {"pipe_mode": "elastic", "M": 2, "N": 1, "Q": 2, "fe_depth": 1, "S": 2, "W": 4,
                   "hc_sets": 16, "gmem_return": "at_writeback", "sched": "bcaws"},
        "warps": [
            [{"op": "alu", "pc": 0}, {"op": "smem", "pc": 1, "degrees": [4, 1]},
             {"op": "smem", "pc": 2, "addrs": [[0, 8, 16, 24, 32, 40, 48, 56], [1, 2, 3, 4, 5, 6, 7, 8]],
              "active": [[true, true, true, true, true, true, true, false],
                         [true, true, true, true, true, true, true, true]]},
             {"op": "gld", "pc": 3}, {"op": "gst", "pc": 4}, {"op": "smem", "pc": 5}],
            [{"op": "alu", "pc": 0}, {"op": "smem", "pc": 1, "degrees": [2, 2]}, {"op": "gld", "pc": 6}]
        ]
    });
    let icnt = json!({
        "params": {"sched": "rr", "pipe_mode": "unified", "W": 2, "gmem_return": {"icnt": 20}},
        "warps": [[{"op": "gld", "pc": 0}, {"op": "smem", "pc": 1, "degrees": [1, 2, 3, 4]}, {"op": "alu", "pc": 2}],
                  [{"op": "gst", "pc": 0}]]
    });
    let mut profile = profiles::profile("transpose")
        .expect("a Table-5 profile")
        .workload(1, 1, profiles::LANES, profiles::SUBWARPS);
    let warps = profile["warps"].as_array_mut().expect("warps");
    warps.truncate(3);
    for w in warps {
        w.as_array_mut().expect("a warp").truncate(12);
    }
    // The smallest workload with something to run (one with nothing is refused, issue 22).
    vec![
        micro,
        icnt,
        profile,
        json!({"warps": [[], [{"op": "alu", "pc": 0}]]}),
    ]
}

/// Every registered block's input ports at its default params.
pub(crate) static LAYOUTS: LazyLock<Vec<(&'static str, smrtl_cosim::Layout)>> =
    LazyLock::new(|| {
        smrtl_testbench::blocks()
            .iter()
            .map(|b| {
                let d = (b.configure)(None, &[]).expect("default params configure");
                (b.name, d.layout.clone())
            })
            .collect()
    });

pub(crate) fn stimulus_schema() -> Schema {
    let mut keys = strings(&["block", "params", "cycles"]);
    for (_, l) in LAYOUTS.iter() {
        keys.extend(l.inputs.iter().map(|s| s.name.clone()));
    }
    keys.extend(block_param_names());
    keys.sort();
    keys.dedup();
    let mut s: Vec<String> = smrtl_testbench::blocks()
        .iter()
        .map(|b| b.name.to_string())
        .collect();
    s.extend(strings(&[
        "0x0",
        "0xff",
        "0x3800c0028008001800400080000",
        "0x_1",
        "0xg",
        "0x1_0000_0000_0000_0000",
        "1",
        "18446744073709551616",
        "-1",
    ]));
    s.extend(strings(&NAMES));
    Schema { keys, strings: s }
}

/// Valid stimulus files: the examples, and a replay file per block.
pub(crate) fn stimuli() -> Vec<String> {
    let mut v = strings(&STIMULI);
    for b in smrtl_testbench::blocks() {
        let d = (b.configure)(None, &[]).expect("default params configure");
        let mut case = vec![vec![0u64; d.layout.in_words]; 3];
        for (c, buf) in case.iter_mut().enumerate() {
            for s in &d.layout.inputs {
                let w = s.width.min(64);
                s.set(
                    buf,
                    (c as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) & smrtl_hdl::netlist::mask(w),
                );
            }
        }
        let file = StimulusFile::new(b.name, &d.params, &d.layout, &case);
        v.push(serde_json::to_string_pretty(&file).expect("serializes"));
    }
    v
}

pub(crate) fn batch_schema() -> Schema {
    Schema {
        keys: strings(&[
            "lanes",
            "banks",
            "layer_bytes",
            "mode_bytes",
            "elem_bytes",
            "ports",
            "mode",
            "addrs",
            "active",
        ]),
        strings: strings(&NAMES),
    }
}

pub(crate) fn sweep_schema() -> Schema {
    let mut keys = strings(&["params", "workloads", "seeds", "waves"]);
    keys.extend(sm_param_names());
    let mut s: Vec<String> = profiles::names().iter().map(|n| n.to_string()).collect();
    s.extend(strings(&["DCT", "fft"]));
    s.extend(strings(&NAMES));
    Schema { keys, strings: s }
}
