//! The timing wrapper (docs/cli.md "synth"): a block whose logic nextpnr cannot time on its own —
//! purely combinational, or registered only at its boundary (the detector with `REG_OUT`) — is
//! placed inside `<top>_timed`, which registers every input and every output, so each of its
//! paths becomes a register-to-register path of `clock`. The report names the wrapper and the
//! flip-flops it adds.

use std::fmt::Write as _;

/// The wrapper module's name suffix.
pub const SUFFIX: &str = "_timed";
/// The block's instance in the wrapper (critical-path nets inside it start with `dut.`).
pub const INSTANCE: &str = "dut";

/// One port of the top module, as the emitted Verilog declares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopPort {
    pub name: String,
    pub width: u32,
    pub input: bool,
}

/// The ports of module `top` in `verilog`, read from its header (`input  wire [W-1:0] name,`
/// lines, as `smrtl gen` writes them); `None` when the header is not found.
pub fn top_ports(verilog: &str, top: &str) -> Option<Vec<TopPort>> {
    let start = verilog.find(&format!("module {top} ("))?;
    let header = &verilog[start..];
    let end = header.find(");")?;
    let mut ports = vec![];
    for line in header[..end].lines().skip(1) {
        let mut words = line.split_whitespace();
        let input = match words.next() {
            Some("input") => true,
            Some("output") => false,
            _ => continue,
        };
        let rest: Vec<&str> = words.filter(|w| *w != "wire" && *w != "reg").collect();
        let (width, name) = match rest.as_slice() {
            [range, name] if range.starts_with('[') => {
                let hi: u32 = range
                    .trim_start_matches('[')
                    .split(':')
                    .next()?
                    .parse()
                    .ok()?;
                (hi + 1, *name)
            }
            [name] => (1, *name),
            _ => return None,
        };
        ports.push(TopPort {
            name: name.trim_end_matches(',').to_string(),
            width,
            input,
        });
    }
    Some(ports)
}

/// Flip-flops the wrapper adds: one per bit of every port but `clock`.
pub fn extra_flip_flops(ports: &[TopPort]) -> u64 {
    ports
        .iter()
        .filter(|p| p.name != "clock")
        .map(|p| u64::from(p.width))
        .sum()
}

/// The Verilog of `<top>_timed`: every input of `top` (but `clock`) through a register, every
/// output into one.
pub fn wrapper(top: &str, ports: &[TopPort]) -> String {
    let range = |w: u32| {
        if w > 1 {
            format!("[{}:0] ", w - 1)
        } else {
            String::new()
        }
    };
    let mut v = String::new();
    let _ = writeln!(
        v,
        "// Timing wrapper (smrtl, docs/cli.md, synth): every input and output of `{top}` registered."
    );
    let decls: Vec<String> = ports
        .iter()
        .map(|p| {
            let dir = if p.input { "input " } else { "output" };
            format!("    {dir} wire {}{}", range(p.width), p.name)
        })
        .collect();
    let _ = writeln!(v, "module {top}{SUFFIX} (\n{}\n);", decls.join(",\n"));
    let mut conns = vec![];
    for p in ports {
        if p.name == "clock" {
            conns.push("        .clock(clock)".to_string());
            continue;
        }
        let q = format!("{}__q", p.name);
        let _ = writeln!(v, "    reg  {}{q};", range(p.width));
        if p.input {
            let _ = writeln!(v, "    always @(posedge clock) {q} <= {};", p.name);
            conns.push(format!("        .{}({q})", p.name));
        } else {
            let d = format!("{}__d", p.name);
            let _ = writeln!(v, "    wire {}{d};", range(p.width));
            let _ = writeln!(v, "    always @(posedge clock) {q} <= {d};");
            let _ = writeln!(v, "    assign {} = {q};", p.name);
            conns.push(format!("        .{}({d})", p.name));
        }
    }
    let _ = writeln!(v, "    {top} {INSTANCE} (\n{}\n    );", conns.join(",\n"));
    v.push_str("endmodule\n");
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "// x\nmodule det (\n    input  wire         clock,\n    input  wire [31:0]  lane_mask,\n    input  wire         valid,\n    output wire [5:0]   degree,\n    output wire         conflict\n);\nendmodule\n";

    #[test]
    fn reads_the_header_and_registers_every_port() {
        let ports = top_ports(HEADER, "det").unwrap();
        let names: Vec<(&str, u32, bool)> = ports
            .iter()
            .map(|p| (p.name.as_str(), p.width, p.input))
            .collect();
        assert_eq!(
            names,
            [
                ("clock", 1, true),
                ("lane_mask", 32, true),
                ("valid", 1, true),
                ("degree", 6, false),
                ("conflict", 1, false)
            ]
        );
        assert_eq!(extra_flip_flops(&ports), 32 + 1 + 6 + 1);
        let w = wrapper("det", &ports);
        assert!(w.contains("module det_timed ("));
        assert!(w.contains("always @(posedge clock) lane_mask__q <= lane_mask;"));
        assert!(w.contains("always @(posedge clock) degree__q <= degree__d;"));
        assert!(w.contains("assign degree = degree__q;"));
        assert!(w.contains("    det dut ("));
        assert!(top_ports(HEADER, "other").is_none());
    }
}
