//! An smrtl block inside a rust-hdl design.
//!
//! `cargo run --release -p smrtl-hdl --example compose -- [-o top.v] [--vcd trace.vcd]`: without
//! `-o` the Verilog goes to stdout and the simulation report to stderr.
//!
//! `ConflictCounter` is an ordinary `#[derive(LogicBlock)]` design: it holds the `ep8`
//! bank-conflict detector (declared for rust-hdl with `smrtl_block!`) and a rust-hdl `DFF` that
//! counts the cycles in which the detector reports a conflict. rust-hdl's `Simulation` runs it
//! on the spec's examples, and rust-hdl's `generate_verilog` writes the design: module `top`
//! instantiating the detector by its stable name, then smrtl's module definitions.

use rust_hdl::prelude::*;
use smrtl_hdl::blocks::bank_conflict_detector as bcd;
use smrtl_hdl::BlockParams;
use std::sync::{Arc, Mutex};

/// Lanes and byte-address bits of a lane in `ep8` (8 lanes × 14 bits = the 112-bit `addr`).
pub const LANES: usize = 8;
pub const LANE_BITS: usize = 14;

/// The `ep8` preset: 8 lanes, 8 banks of 4-byte words, 14-bit addresses, multicast.
pub fn ep8() -> bcd::Params {
    bcd::Params::resolve_pairs(Some("ep8"), &[]).expect("the ep8 preset")
}

smrtl_hdl::smrtl_block! {
    /// The `ep8` bank-conflict detector as a rust-hdl block (combinational; `clock` and `reset`
    /// are part of the detector's uniform interface).
    pub struct Ep8Detector {
        pub clock: Signal<In, Clock>,
        pub reset: Signal<In, Bit>,
        pub valid: Signal<In, Bit>,
        pub lane_mask: Signal<In, Bits<8>>,
        pub addr: Signal<In, Bits<112>>,
        pub degree: Signal<Out, Bits<4>>,
        pub degree_m1: Signal<Out, Bits<3>>,
        pub cycles: Signal<Out, Bits<4>>,
        pub conflict: Signal<Out, Bit>,
        pub any_active: Signal<Out, Bit>,
    }
    module = bcd::build(&ep8());
}

/// The user's design: the detector plus a counter of conflict cycles.
#[derive(LogicBlock)]
pub struct ConflictCounter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub lane_mask: Signal<In, Bits<8>>,
    pub addr: Signal<In, Bits<112>>,
    pub degree: Signal<Out, Bits<4>>,
    pub conflict: Signal<Out, Bit>,
    pub any_active: Signal<Out, Bit>,
    /// Cycles (rising clock edges) at which `conflict` was high.
    pub conflict_cycles: Signal<Out, Bits<16>>,
    det: Ep8Detector,
    count: DFF<Bits<16>>,
    // 16-bit constants keep rust-hdl's Verilog width-exact (a bare literal is 32 bits there).
    zero: Constant<Bits<16>>,
    one: Constant<Bits<16>>,
}

impl Default for ConflictCounter {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            valid: Default::default(),
            lane_mask: Default::default(),
            addr: Default::default(),
            degree: Default::default(),
            conflict: Default::default(),
            any_active: Default::default(),
            conflict_cycles: Default::default(),
            det: Ep8Detector::new(),
            count: Default::default(),
            zero: Constant::new(0.into()),
            one: Constant::new(1.into()),
        }
    }
}

impl Logic for ConflictCounter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, count);
        self.det.clock.next = self.clock.val();
        self.det.reset.next = self.reset.val();
        self.det.valid.next = self.valid.val();
        self.det.lane_mask.next = self.lane_mask.val();
        self.det.addr.next = self.addr.val();
        self.degree.next = self.det.degree.val();
        self.conflict.next = self.det.conflict.val();
        self.any_active.next = self.det.any_active.val();
        if self.reset.val() {
            self.count.d.next = self.zero.val();
        } else if self.det.conflict.val() {
            self.count.d.next = self.count.q.val() + self.one.val();
        }
        self.conflict_cycles.next = self.count.q.val();
    }
}

/// One access: each lane's byte address (`None`: inactive) and the degree the spec gives
/// (docs/bank-conflicts.md §1.5, multicast mode).
#[derive(Clone, Debug)]
pub struct Vector {
    pub name: &'static str,
    pub lanes: [Option<u64>; LANES],
    pub degree: u64,
}

/// The spec's ep8 examples with lanes given as 4-byte word indices.
pub fn vectors() -> Vec<Vector> {
    let words = |name, w: [Option<u64>; LANES], degree| Vector {
        name,
        lanes: w.map(|w| w.map(|w| 4 * w)),
        degree,
    };
    let all = |f: fn(u64) -> u64| std::array::from_fn(|l| Some(f(l as u64)));
    vec![
        words("E1 unit stride", all(|l| l), 1),
        words("E2 stride 2", all(|l| 2 * l), 2),
        words("E3 broadcast", all(|_| 5), 1),
        words(
            "[000] lanes 0 and 4 on bank 0",
            all(|l| [0, 1, 2, 3, 8, 5, 6, 7][l as usize]),
            2,
        ),
        words("stride 8 (one bank)", all(|l| 8 * l), 8),
        words("E6 no active lane", [None; LANES], 1),
    ]
}

impl Vector {
    pub fn lane_mask(&self) -> u64 {
        (0..LANES)
            .filter(|&l| self.lanes[l].is_some())
            .map(|l| 1 << l)
            .sum()
    }

    /// `addr` as little-endian 64-bit words (lane l at bits [14·l +: 14]).
    pub fn addr_words(&self) -> [u64; 2] {
        let mut w = [0u64; 2];
        for (l, a) in self.lanes.iter().enumerate() {
            let a = a.unwrap_or(0) as u128;
            let v = a << (l * LANE_BITS);
            w[0] |= v as u64;
            w[1] |= (v >> 64) as u64;
        }
        w
    }

    pub fn addr(&self) -> Bits<112> {
        let [lo, hi] = self.addr_words();
        Bits::<112>::from(lo) | (Bits::<112>::from(hi) << 64u64)
    }

    pub fn conflicts(&self) -> bool {
        self.degree > 1
    }
}

/// What the simulation saw for one vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    pub name: &'static str,
    pub degree: u64,
    pub conflict: bool,
    pub any_active: bool,
    /// `conflict_cycles` while the vector is applied (conflicts of the vectors before it).
    pub conflict_cycles: u64,
}

/// Clock half period in ps (100 MHz).
const HALF_PERIOD: u64 = 5_000;

/// Runs `ConflictCounter` in rust-hdl's `Simulation`, one vector per clock cycle; returns what
/// it saw per vector and the final conflict count. The testbench halts the simulation (an
/// error) when a degree differs from the spec's. `vcd`: also write a trace.
pub fn simulate(vcd: Option<&std::path::Path>) -> Result<(Vec<Observed>, u64), SimError> {
    let seen = Arc::new(Mutex::new((vec![], 0u64)));
    let mut sim = Simulation::new();
    sim.add_clock(HALF_PERIOD, |x: &mut Box<ConflictCounter>| {
        x.clock.next = !x.clock.val()
    });
    let out = seen.clone();
    sim.add_testbench(move |mut sim: Sim<ConflictCounter>| {
        let mut x = sim.init()?;
        x.reset.next = true;
        wait_clock_cycle!(sim, clock, x);
        x.reset.next = false;
        for v in vectors() {
            x.valid.next = true;
            x.lane_mask.next = v.lane_mask().into();
            x.addr.next = v.addr();
            x = sim.wait(1_000, x)?;
            out.lock().unwrap().0.push(Observed {
                name: v.name,
                degree: x.degree.val().to_u64(),
                conflict: x.conflict.val(),
                any_active: x.any_active.val(),
                conflict_cycles: x.conflict_cycles.val().to_u64(),
            });
            sim_assert_eq!(sim, x.degree.val(), bits::<4>(v.degree), x);
            wait_clock_cycle!(sim, clock, x);
        }
        x.valid.next = false;
        x = sim.wait(1_000, x)?;
        out.lock().unwrap().1 = x.conflict_cycles.val().to_u64();
        sim.done(x)
    });
    let uut = Box::new(ConflictCounter::default());
    let max_time = 2 * HALF_PERIOD * (vectors().len() as u64 + 4);
    match vcd {
        Some(path) => {
            let file = std::fs::File::create(path).expect("create the VCD file");
            sim.run_traced(uut, max_time, std::io::BufWriter::new(file))?
        }
        None => sim.run(uut, max_time)?,
    }
    let seen = seen.lock().unwrap().clone();
    Ok(seen)
}

/// rust-hdl's Verilog of the design (`generate_verilog`, which runs rust-hdl's checks).
pub fn verilog() -> String {
    let mut uut = ConflictCounter::default();
    uut.connect_all();
    generate_verilog(&uut)
}

/// The detector's stable module name (what `top` instantiates).
pub fn detector_module() -> String {
    Ep8Detector::design().module().name.clone()
}

#[allow(dead_code)] // the integration test includes this file as a module
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |f: &str| {
        args.iter()
            .position(|a| a == f)
            .and_then(|i| args.get(i + 1))
            .map(std::path::PathBuf::from)
    };
    let (seen, total) = simulate(flag("--vcd").as_deref()).unwrap_or_else(|e| {
        eprintln!("simulation failed: {e:?}");
        std::process::exit(1)
    });
    // The report goes to stderr when stdout carries the Verilog.
    let out = flag("-o");
    let say = |line: String| match out {
        Some(_) => println!("{line}"),
        None => eprintln!("{line}"),
    };
    for o in &seen {
        say(format!(
            "{:32} degree {} conflict {} (conflict cycles so far {})",
            o.name, o.degree, o.conflict as u8, o.conflict_cycles
        ));
    }
    say(format!("conflict cycles: {total}"));
    let text = verilog();
    match out {
        Some(path) => {
            std::fs::write(&path, &text).expect("write the Verilog");
            println!(
                "wrote {} (top instantiates {})",
                path.display(),
                detector_module()
            );
        }
        None => print!("{text}"),
    }
}
