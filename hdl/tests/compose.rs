//! smrtl blocks inside rust-hdl designs (`smrtl_block!`, `smrtl_hdl::compose`): the `compose`
//! example simulated by rust-hdl's `Simulation` on the spec's ep8 examples, its Verilog from
//! rust-hdl's `generate_verilog` (instantiation by the stable name, Verilator lint, Icarus compile
//! and run), a clocked smrtl hierarchy seen by rust-hdl's probes as child blocks, two instances
//! of one black box in a file, and the construction-time port checks.

#[path = "../examples/compose.rs"]
mod example;

use example::{ConflictCounter, Ep8Detector, Observed};
use rust_hdl::prelude::*;
use smrtl_hdl::blocks::bank_conflict_detector as bcd;
use smrtl_hdl::tools::{external, require, run};
use smrtl_hdl::{BlockParams, Module};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};

/// Verilator warnings waived for a rust-hdl design holding smrtl blocks (`--lint-only -Wall`).
const WAIVERS: &[(&str, &str)] = &[
    (
        "DECLFILENAME",
        "rust-hdl writes the whole design into one file and names child modules by their path \
         (`top$count`), so no module name can match the file name",
    ),
    (
        "UNUSEDSIGNAL",
        "smrtl's standing waiver (smrtl_synth::checks::LINT_WAIVERS: address bits below the bank \
         field, clock/reset of a combinational block, full-width arithmetic wires), plus block \
         outputs the user's design does not read (rust-hdl declares a stub wire for each)",
    ),
];

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("compose")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `verilator --lint-only -Wall` on `text` written as `<top>.v`, with `waivers`.
fn lint(dir: &std::path::Path, top: &str, text: &str, waivers: &[(&str, &str)]) {
    let file = format!("{top}.v");
    std::fs::write(dir.join(&file), text).unwrap();
    let mut cmd = Command::new(require("verilator").unwrap());
    cmd.current_dir(dir)
        .args(["--lint-only", "-Wall", "-Wno-context", "--top-module", top]);
    for (w, _) in waivers {
        cmd.arg(format!("-Wno-{w}"));
    }
    cmd.arg(&file);
    if let Err(e) = run("verilator", &mut cmd) {
        panic!("Verilator lint of {top}.v failed: {e}");
    }
}

/// `iverilog -g2012 -s <top>` on `files`; returns the compiled image.
fn icarus(dir: &std::path::Path, top: &str, files: &[&str]) -> PathBuf {
    let out = dir.join(format!("{top}.vvp"));
    let mut cmd = Command::new(require("iverilog").unwrap());
    cmd.current_dir(dir)
        .args(["-g2012", "-s", top, "-o"])
        .arg(&out)
        .args(files);
    if let Err(e) = run("iverilog", &mut cmd) {
        panic!("Icarus compile of {files:?} failed: {e}");
    }
    out
}

// ---- The example ---------------------------------------------------------------------------

#[test]
fn example_simulates_the_spec_examples_in_rust_hdl() {
    let (seen, total) = example::simulate(None).expect("the testbench halts on a wrong degree");
    let vectors = example::vectors();
    assert_eq!(seen.len(), vectors.len());
    let mut conflicts = 0;
    for (o, v) in seen.iter().zip(&vectors) {
        let want = Observed {
            name: v.name,
            degree: v.degree,
            conflict: v.degree > 1,
            any_active: v.lane_mask() != 0,
            conflict_cycles: conflicts,
        };
        assert_eq!(o, &want);
        conflicts += u64::from(v.conflicts());
    }
    assert_eq!(total, 3, "E2, [000] and stride 8 conflict");
    assert_eq!(total, conflicts);
}

#[test]
fn example_trace_has_the_detector_scope() {
    let dir = scratch("trace");
    let path = dir.join("compose.vcd");
    example::simulate(Some(&path)).unwrap();
    let vcd = std::fs::read_to_string(&path).unwrap();
    for scope in ["uut", "det", "count"] {
        assert!(
            vcd.contains(&format!("$scope module {scope} $end")),
            "{scope}"
        );
    }
    // The detector's internal nets are atoms of its scope.
    assert!(vcd.contains(" eqg_0_1 $end"), "internal net in the trace");
}

#[test]
fn example_verilog_instantiates_the_detector_by_its_stable_name() {
    let text = example::verilog();
    let name = example::detector_module();
    assert!(name.starts_with("bank_conflict_detector_"), "{name}");
    let top = text.find("module top(").expect("rust-hdl's top module");
    let inst = text
        .find(&format!("    {name} det(\n"))
        .expect("top instantiates the detector by its stable name");
    let def = text
        .find(&format!("module {name} ("))
        .expect("smrtl's definition of the detector");
    assert!(top < inst && inst < def, "top, then smrtl's modules");
    assert!(text.contains(&format!("`ifndef SMRTL_MODULE_{name}\n")));
    // The black box is exactly smrtl's text (the same as `smrtl gen` writes, without header).
    assert!(text.contains(Ep8Detector::design().verilog()));
}

#[test]
fn example_verilog_lints_and_compiles() {
    if !external(&["verilator", "iverilog"]) {
        return;
    }
    let dir = scratch("lint");
    lint(&dir, "top", &example::verilog(), WAIVERS);
    icarus(&dir, "top", &["top.v"]);
    // smrtl's own text needs only the project's standing waiver.
    let name = example::detector_module();
    lint(&dir, &name, Ep8Detector::design().verilog(), &WAIVERS[1..]);
}

/// The Verilog rust-hdl wrote, run in Icarus on the same vectors, gives what rust-hdl's
/// simulation saw.
#[test]
fn example_verilog_runs_in_icarus_like_the_rust_hdl_simulation() {
    if !external(&["iverilog", "vvp"]) {
        return;
    }
    let dir = scratch("icarus");
    std::fs::write(dir.join("top.v"), example::verilog()).unwrap();
    let mut tb = String::from(
        "`timescale 1ns/1ps\nmodule tb;\n\
         reg clock = 0, reset = 1, valid = 0;\n\
         reg [7:0] lane_mask = 0;\n\
         reg [111:0] addr = 0;\n\
         wire [3:0] degree;\n\
         wire conflict, any_active;\n\
         wire [15:0] conflict_cycles;\n\
         top dut(.clock(clock), .reset(reset), .valid(valid), .lane_mask(lane_mask), \
         .addr(addr), .degree(degree), .conflict(conflict), .any_active(any_active), \
         .conflict_cycles(conflict_cycles));\n\
         always #5 clock = ~clock;\n\
         initial begin\n\
         @(posedge clock); #1 reset = 0;\n",
    );
    for v in example::vectors() {
        let [lo, hi] = v.addr_words();
        let addr = (u128::from(hi) << 64) | u128::from(lo);
        tb += &format!(
            "valid = 1; lane_mask = 8'h{:02x}; addr = 112'h{addr:028x};\n\
             #1 $display(\"%0d %0d %0d %0d\", degree, conflict, any_active, conflict_cycles);\n\
             @(posedge clock); #1;\n",
            v.lane_mask()
        );
    }
    tb += "valid = 0; #1 $display(\"total %0d\", conflict_cycles);\n$finish;\nend\nendmodule\n";
    std::fs::write(dir.join("tb.v"), tb).unwrap();
    let image = icarus(&dir, "tb", &["tb.v", "top.v"]);
    let out = run(
        "vvp",
        Command::new(require("vvp").unwrap())
            .current_dir(&dir)
            .arg(&image),
    )
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let (seen, total) = example::simulate(None).unwrap();
    let mut want: Vec<String> = seen
        .iter()
        .map(|o| {
            format!(
                "{} {} {} {}",
                o.degree, o.conflict as u8, o.any_active as u8, o.conflict_cycles
            )
        })
        .collect();
    want.push(format!("total {total}"));
    let got: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.is_empty() && !l.contains("$finish") && !l.starts_with("VCD"))
        .collect();
    assert_eq!(
        got, want,
        "Icarus on rust-hdl's Verilog vs rust-hdl's Simulation"
    );
}

// ---- A clocked smrtl hierarchy inside a rust-hdl design ------------------------------------

/// `ep8` with registered outputs (one cycle of latency).
fn ep8_registered() -> bcd::Params {
    bcd::Params::resolve_pairs(Some("ep8"), &[("REG_OUT", "1")]).unwrap()
}

/// A two-level smrtl hierarchy: two registered detectors (`det_a`, `det_b`) on one lane mask
/// and the worse of their degrees.
fn pair_module() -> Module {
    let det = Arc::new(bcd::build(&ep8_registered()));
    let mut m = Module::new("smrtl_compose_pair");
    m.clock_reset();
    let valid = m.input("valid", 1);
    let mask = m.input("lane_mask", 8);
    let addrs = [m.input("addr_a", 112), m.input("addr_b", 112)];
    let outs = [m.output("degree_a", 4), m.output("degree_b", 4)];
    let worst = m.output("worst", 4);
    let mut degrees = vec![];
    for ((inst, addr), out) in ["det_a", "det_b"].iter().zip(&addrs).zip(&outs) {
        let d = m.instance(inst, &det);
        m.assign(&d.input(bcd::port::VALID), valid.clone());
        m.assign(&d.input(bcd::port::LANE_MASK), mask.clone());
        m.assign(&d.input(bcd::port::ADDR), addr.clone());
        let degree = d.output(bcd::port::DEGREE);
        m.assign(out, degree.clone());
        degrees.push(degree);
    }
    let a_lt_b = degrees[0].lt(&degrees[1]);
    m.assign(&worst, a_lt_b.mux(&degrees[1], &degrees[0]));
    m
}

smrtl_hdl::smrtl_block! {
    /// The pair, for rust-hdl.
    pub struct PairBlock {
        pub clock: Signal<In, Clock>,
        pub reset: Signal<In, Bit>,
        pub valid: Signal<In, Bit>,
        pub lane_mask: Signal<In, Bits<8>>,
        pub addr_a: Signal<In, Bits<112>>,
        pub addr_b: Signal<In, Bits<112>>,
        pub degree_a: Signal<Out, Bits<4>>,
        pub degree_b: Signal<Out, Bits<4>>,
        pub worst: Signal<Out, Bits<4>>,
    }
    module = pair_module();
}

/// A user design with two instances of the pair (the second sees the addresses swapped).
#[derive(LogicBlock, Default)]
pub struct TwoPairs {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub lane_mask: Signal<In, Bits<8>>,
    pub addr_a: Signal<In, Bits<112>>,
    pub addr_b: Signal<In, Bits<112>>,
    pub degree_a: Signal<Out, Bits<4>>,
    pub degree_b: Signal<Out, Bits<4>>,
    pub worst: Signal<Out, Bits<4>>,
    pub agree: Signal<Out, Bit>,
    p0: PairBlock,
    p1: PairBlock,
}

impl Logic for TwoPairs {
    #[hdl_gen]
    fn update(&mut self) {
        self.p0.clock.next = self.clock.val();
        self.p1.clock.next = self.clock.val();
        self.p0.reset.next = self.reset.val();
        self.p1.reset.next = self.reset.val();
        self.p0.valid.next = self.valid.val();
        self.p1.valid.next = self.valid.val();
        self.p0.lane_mask.next = self.lane_mask.val();
        self.p1.lane_mask.next = self.lane_mask.val();
        self.p0.addr_a.next = self.addr_a.val();
        self.p0.addr_b.next = self.addr_b.val();
        self.p1.addr_a.next = self.addr_b.val();
        self.p1.addr_b.next = self.addr_a.val();
        self.degree_a.next = self.p0.degree_a.val();
        self.degree_b.next = self.p1.degree_a.val();
        self.worst.next = self.p0.worst.val();
        self.agree.next = self.p0.worst.val() == self.p1.worst.val();
    }
}

/// Lane byte addresses `4·f(l)` packed as the 112-bit `addr`.
fn addr_of(f: impl Fn(u64) -> u64) -> Bits<112> {
    example::Vector {
        name: "",
        lanes: std::array::from_fn(|l| Some(4 * f(l as u64))),
        degree: 0,
    }
    .addr()
}

/// Records every scope path and the atoms under it.
#[derive(Default)]
struct Scopes {
    path: Vec<String>,
    scopes: Vec<(String, String)>,
    atoms: Vec<String>,
}

impl Probe for Scopes {
    fn visit_start_scope(&mut self, name: &str, node: &dyn Block) {
        self.path.push(name.to_string());
        let module = match node.hdl() {
            Verilog::Blackbox(b) => b.name,
            _ => String::new(),
        };
        self.scopes.push((self.path.join("$"), module));
    }
    fn visit_atom(&mut self, name: &str, _signal: &dyn Atom) {
        self.atoms.push(format!("{}.{name}", self.path.join("$")));
    }
    fn visit_end_scope(&mut self, _name: &str, _node: &dyn Block) {
        self.path.pop();
    }
}

#[test]
fn hierarchy_instances_are_child_blocks_for_rust_hdl() {
    let mut uut = TwoPairs::default();
    uut.connect_all();
    let mut probe = Scopes::default();
    uut.accept("top", &mut probe);
    let det = bcd::build(&ep8_registered()).name;
    let pair = "smrtl_compose_pair".to_string();
    for (path, module) in [
        ("top$p0", &pair),
        ("top$p0$det_a", &det),
        ("top$p0$det_b", &det),
        ("top$p1", &pair),
        ("top$p1$det_b", &det),
    ] {
        assert!(
            probe.scopes.contains(&(path.to_string(), module.clone())),
            "{path} ({module}) in {:?}",
            probe.scopes
        );
    }
    for atom in [
        "top$p0.addr_a",         // a port signal of the wrapper
        "top$p0$det_a.addr",     // a port of the child instance
        "top$p0$det_a.degree_q", // a register inside the child
        "top$p1$det_b.eqg_0_1",  // a wire inside the child
    ] {
        assert!(probe.atoms.iter().any(|a| a == atom), "{atom}");
    }
    // The wrapper's ports are its signals only (no second atom per port from the core).
    let n = probe.atoms.iter().filter(|a| *a == "top$p0.addr_a").count();
    assert_eq!(n, 1);
    check_all(&uut).expect("rust-hdl's checks pass");
}

#[test]
fn clocked_hierarchy_simulates_in_rust_hdl() {
    let seen = Arc::new(Mutex::new(vec![]));
    let out = seen.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5_000, |x: &mut Box<TwoPairs>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<TwoPairs>| {
        let mut x = sim.init()?;
        x.reset.next = true;
        wait_clock_cycle!(sim, clock, x);
        x.reset.next = false;
        let record = |x: &TwoPairs| {
            out.lock().unwrap().push((
                x.degree_a.val().to_u64(),
                x.degree_b.val().to_u64(),
                x.worst.val().to_u64(),
                x.agree.val(),
            ))
        };
        for (a, b) in [
            (addr_of(|l| 2 * l), addr_of(|l| 8 * l)), // degrees 2 and 8
            (
                addr_of(|l| l),
                addr_of(|l| [0, 1, 2, 3, 8, 5, 6, 7][l as usize]),
            ), // 1 and 2
        ] {
            x.valid.next = true;
            x.lane_mask.next = 0xff.into();
            x.addr_a.next = a;
            x.addr_b.next = b;
            x = sim.wait(1_000, x)?;
            record(&x); // before the edge: the registers still hold the previous access
            wait_clock_cycle!(sim, clock, x);
            x = sim.wait(1_000, x)?;
            record(&x);
        }
        sim.done(x)
    });
    sim.run(Box::new(TwoPairs::default()), 200_000).unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            (1, 1, 1, true), // reset values
            (2, 8, 8, true),
            (2, 8, 8, true),
            (1, 2, 2, true),
        ]
    );
}

#[test]
fn two_instances_of_a_hierarchy_share_one_file() {
    let mut uut = TwoPairs::default();
    uut.connect_all();
    let text = generate_verilog(&uut);
    assert!(text.contains("    smrtl_compose_pair p0(\n"));
    assert!(text.contains("    smrtl_compose_pair p1(\n"));
    let det = bcd::build(&ep8_registered()).name;
    // rust-hdl writes the black box once per instance; the guards keep one definition each.
    assert_eq!(text.matches("module smrtl_compose_pair (").count(), 2);
    assert_eq!(
        text.matches("`ifndef SMRTL_MODULE_smrtl_compose_pair\n")
            .count(),
        2
    );
    assert!(text.contains(&format!("    {det} det_a (")));
    if !external(&["verilator", "iverilog"]) {
        return;
    }
    let dir = scratch("pairs");
    lint(&dir, "top", &text, WAIVERS);
    icarus(&dir, "top", &["top.v"]);
}

// ---- Construction-time checks ----------------------------------------------------------------

fn ep8_module() -> Module {
    bcd::build(&example::ep8())
}

smrtl_hdl::smrtl_block! {
    pub struct WrongWidth {
        pub clock: Signal<In, Clock>,
        pub reset: Signal<In, Bit>,
        pub valid: Signal<In, Bit>,
        pub lane_mask: Signal<In, Bits<8>>,
        pub addr: Signal<In, Bits<128>>,
        pub degree: Signal<Out, Bits<4>>,
        pub degree_m1: Signal<Out, Bits<3>>,
        pub cycles: Signal<Out, Bits<4>>,
        pub conflict: Signal<Out, Bit>,
        pub any_active: Signal<Out, Bit>,
    }
    module = ep8_module();
}

smrtl_hdl::smrtl_block! {
    pub struct WrongDirection {
        pub clock: Signal<In, Clock>,
        pub reset: Signal<In, Bit>,
        pub valid: Signal<In, Bit>,
        pub lane_mask: Signal<In, Bits<8>>,
        pub addr: Signal<In, Bits<112>>,
        pub degree: Signal<In, Bits<4>>,
        pub degree_m1: Signal<Out, Bits<3>>,
        pub cycles: Signal<Out, Bits<4>>,
        pub conflict: Signal<Out, Bit>,
        pub any_active: Signal<Out, Bit>,
    }
    module = ep8_module();
}

smrtl_hdl::smrtl_block! {
    pub struct MissingPorts {
        pub clock: Signal<In, Clock>,
        pub reset: Signal<In, Bit>,
        pub valid: Signal<In, Bit>,
        pub lane_mask: Signal<In, Bits<8>>,
        pub addr: Signal<In, Bits<112>>,
        pub degree: Signal<Out, Bits<4>>,
    }
    module = ep8_module();
}

smrtl_hdl::smrtl_block! {
    pub struct UnknownPort {
        pub clock: Signal<In, Clock>,
        pub mode8: Signal<In, Bit>,
    }
    module = ep8_module();
}

#[test]
#[should_panic(
    expected = "WrongWidth.addr is declared Signal<In, Bits<128>> (128 bits) but \
                           port `addr` of bank_conflict_detector_A14_B8_L8_W4 is 112 bits wide"
)]
fn a_width_mismatch_names_the_port() {
    let _ = WrongWidth::new();
}

#[test]
#[should_panic(
    expected = "WrongDirection.degree is declared Signal<In, Bits<4>> but port \
                           `degree` of bank_conflict_detector_A14_B8_L8_W4 is an output"
)]
fn a_direction_mismatch_names_the_port() {
    let _ = WrongDirection::new();
}

#[test]
#[should_panic(expected = "MissingPorts does not declare port(s) \
                           `pub degree_m1: Signal<Out, Bits<3>>`, `pub cycles: Signal<Out, \
                           Bits<4>>`, `pub conflict: Signal<Out, Bit>`, `pub any_active: \
                           Signal<Out, Bit>` of bank_conflict_detector_A14_B8_L8_W4")]
fn a_missing_port_is_named_with_its_declaration() {
    let _ = MissingPorts::new();
}

#[test]
#[should_panic(
    expected = "UnknownPort.mode8: bank_conflict_detector_A14_B8_L8_W4 has no port `mode8`"
)]
fn a_field_that_is_no_port_is_named() {
    let _ = UnknownPort::new();
}

/// `declaration` prints the field list the example declares for ep8.
#[test]
fn declaration_lists_the_fields_of_a_configuration() {
    let text = smrtl_hdl::compose::declaration(&ep8_module());
    let want = [
        "pub clock: Signal<In, Clock>,",
        "pub reset: Signal<In, Bit>,",
        "pub valid: Signal<In, Bit>,",
        "pub lane_mask: Signal<In, Bits<8>>,",
        "pub addr: Signal<In, Bits<112>>,",
        "pub degree: Signal<Out, Bits<4>>,",
        "pub degree_m1: Signal<Out, Bits<3>>,",
        "pub cycles: Signal<Out, Bits<4>>,",
        "pub conflict: Signal<Out, Bit>,",
        "pub any_active: Signal<Out, Bit>,",
    ];
    let got: Vec<&str> = text.lines().map(str::trim).collect();
    assert_eq!(got, want);
    // And the example's wrapper, written from it, constructs.
    let det = ConflictCounter::default();
    let _ = det;
}
