//! `smrtl relssp`: the relssp compiler pass (docs/scratchpad-sharing.md §6, [001] §6) on a
//! kernel with control flow: the shared-region variables, their layout and the `relssp`
//! placement, and with `-o` the transformed kernel, ready for `smrtl sim --kernel`.

use crate::output::{read_text, Outputs};
use crate::systems::sharing_sm::{check_kernel, MAX_KERNEL_BYTES};
use smrtl_cosim::kernel::cfg::{Program, MAX_BLOCKS};
use smrtl_cosim::kernel::launch::Ratio;
use smrtl_cosim::kernel::program::Branch;
use smrtl_cosim::kernel::relssp_pass::{place, Mode, Options, Placed, Position};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

type Result<T> = std::result::Result<T, String>;

/// Largest `--align` (the SM model's `ALIGN` range).
const MAX_ALIGN: u32 = 4096;

/// Scratchpad sharing's compiler pass (seed 001): the shared-region variables, their
/// layout and the relssp placement (opt, postdom), and with -o the transformed kernel.
#[derive(clap::Parser)]
#[command(name = "relssp")]
pub struct RelsspArgs {
    /// The kernel: the JSON form or the text form (docs/scratchpad-sharing.md §5.1, §6).
    pub file: PathBuf,
    /// Placement: opt (§6.4, critical edges split), postdom (§6.5) or none (layout only).
    #[arg(long, default_value = "opt")]
    pub mode: String,
    /// Print one JSON object: mode, u, selected, layout, cost, relssp, split_blocks, program.
    #[arg(long)]
    pub json: bool,
    /// Write the transformed kernel as JSON (`-` for standard output).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Sharing threshold t when the kernel gives none: a fraction in (0, 1).
    #[arg(long, default_value = "1/10", allow_hyphen_values = true)]
    pub t: String,
    /// Granule of the private bytes u (the SM's ALIGN), 1..=4096.
    #[arg(value_parser = crate::arg_values::uint_named::<u32>(1, MAX_ALIGN as u64), long, default_value_t = 4)]
    pub align: u32,
}

pub fn run(a: RelsspArgs) -> Result<ExitCode> {
    let mode: Mode = a.mode.parse().map_err(|e| format!("--mode: {e}"))?;
    let t: Ratio = a.t.parse().map_err(|e| format!("--t: {e}"))?;
    if !(1..=MAX_ALIGN).contains(&a.align) {
        return Err(format!(
            "--align {} is out of range; allowed: 1..={MAX_ALIGN}",
            a.align
        ));
    }
    let mut outputs = Outputs::new();
    let out = a.output.as_deref().map(|p| outputs.add(p)).transpose()?;
    outputs.input(&a.file)?;
    let name = a.file.display().to_string();
    let text = read_text(&a.file, MAX_KERNEL_BYTES)?;
    let program = Program::parse(&text).map_err(|e| format!("{name}: {e}"))?;
    let placed = place(
        &program,
        &Options {
            mode,
            t,
            align: a.align,
        },
    )
    .map_err(|e| format!("{name}: {e}"))?;
    let json = serde_json::to_string_pretty(&placed.program).map_err(|e| e.to_string())? + "\n";
    consumable(&name, &placed, &json)?;
    if let Some(o) = out {
        outputs.write(o, json.as_bytes())?;
    }
    outputs.commit()?;
    let to_stdout = a.output.as_deref() == Some(std::path::Path::new("-"));
    if a.json {
        println!(
            "{}",
            serde_json::to_string(&placed).map_err(|e| e.to_string())?
        );
    } else if !to_stdout {
        print!("{}", summary(&placed, a.output.as_deref()));
    }
    Ok(ExitCode::SUCCESS)
}

/// Refuses a transformed kernel (`json`, of input `name`) that `smrtl sim --kernel` would
/// refuse, before anything is written: the block limit counts the split blocks, and the
/// kernel's params and locks must be ones the SM takes.
fn consumable(name: &str, placed: &Placed, json: &str) -> Result<()> {
    let blocks = placed.program().blocks.len();
    if blocks > MAX_BLOCKS {
        return Err(format!(
            "{name}: the transformed kernel has {blocks} blocks ({} split block{} added); \
             allowed: 1..={MAX_BLOCKS} blocks, split blocks included",
            placed.split_blocks.len(),
            if placed.split_blocks.len() == 1 {
                ""
            } else {
                "s"
            }
        ));
    }
    check_kernel(json)
        .map_err(|e| format!("{name}: {e} (`smrtl sim --kernel` refuses such a kernel)"))
}

/// The human summary: u, the shared set, the layout, each insertion, the split blocks and the
/// transformed program in the text form (or where `-o` wrote it).
fn summary(r: &Placed, written: Option<&std::path::Path>) -> String {
    let p = r.program();
    let mut s = String::new();
    let t = p.t.map(|t| t.to_string()).unwrap_or_default();
    let _ = writeln!(
        s,
        "mode {}: u = {} of R_tb = {} bytes (t = {t}); shared region [{}, {})",
        r.mode, r.u, p.tb_smem, r.u, p.tb_smem
    );
    let _ = writeln!(
        s,
        "selected: {} (cost {})",
        if r.selected.is_empty() {
            "none".to_string()
        } else {
            r.selected.join(", ")
        },
        r.cost
    );
    let layout: Vec<String> = r
        .layout
        .iter()
        .map(|(v, off)| format!("{v} @ {off}"))
        .collect();
    let _ = writeln!(s, "layout: {}", layout.join(", "));
    if r.relssp.is_empty() {
        let _ = writeln!(s, "relssp: none");
    }
    for i in &r.relssp {
        let _ = match i.position {
            Position::In => writeln!(s, "relssp: in {}", i.block),
            Position::After => writeln!(s, "relssp: {} after instruction {}", i.block, i.index),
        };
    }
    for b in &r.split_blocks {
        let _ = writeln!(s, "split block: {} on {} -> {}", b.name, b.from, b.to);
    }
    if let Some(path) = written {
        let _ = writeln!(s, "program: written to {}", path.display());
        return s;
    }
    let _ = writeln!(s, "program:");
    s + &text_form(p)
}

/// A program in the text form (docs §6.0), as `Program::parse` reads it back; a jump to the
/// next block is left implicit, as it costs no instruction.
fn text_form(p: &Program) -> String {
    let mut s = String::new();
    if !p.name.is_empty() {
        let _ = writeln!(s, "kernel {}", p.name);
    }
    if let Some(th) = p.threads {
        let _ = writeln!(s, "threads {th}");
    }
    if let Some(g) = p.grid {
        let _ = writeln!(s, "grid {g}");
    }
    let _ = writeln!(s, "tb_smem {}", p.tb_smem);
    if let Some(t) = p.t {
        let _ = writeln!(s, "t {t}");
    }
    if p.seed != 0 {
        let _ = writeln!(s, "seed {}", p.seed);
    }
    for v in &p.vars {
        let _ = match v.offset {
            Some(o) => writeln!(s, "shared {} {} @ {o}", v.name, v.bytes),
            None => writeln!(s, "shared {} {}", v.name, v.bytes),
        };
    }
    for (k, v) in &p.params {
        let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
        let _ = writeln!(s, "param {k}={v}");
    }
    for l in &p.locks {
        let _ = writeln!(s, "lock {} {}", l.pair, l.owner);
    }
    for (k, b) in p.blocks.iter().enumerate() {
        let _ = writeln!(s, "{}:", b.name);
        for i in &b.instrs {
            let _ = writeln!(s, "    {}", i.text(&p.vars));
        }
        let name = |t: usize| &p.blocks[t].name;
        let _ = match (&b.next[..], b.branch) {
            ([], _) => writeln!(s, "    exit"),
            // A jump to the next block falls through: no instruction (as lowered).
            ([t], _) if *t == k + 1 => Ok(()),
            ([t], _) => writeln!(s, "    bra {}", name(*t)),
            ([x, y], rule) => {
                let rule = match rule {
                    None => String::new(),
                    Some(Branch::Trips(n)) => format!(" trips {n}"),
                    Some(Branch::P(r)) => format!(" p {r}"),
                    Some(Branch::Frac(r)) => format!(" frac {r}"),
                };
                writeln!(s, "    cbra {} {}{rule}", name(*x), name(*y))
            }
            _ => unreachable!("a block has at most two successors"),
        };
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text form reads back as the same program, for each example and each mode.
    #[test]
    fn text_form_round_trips() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/relssp");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let p = Program::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
            for mode in [Mode::Opt, Mode::PostDom, Mode::None] {
                let o = Options {
                    mode,
                    ..Options::default()
                };
                let q = place(&p, &o).unwrap();
                let back = Program::parse(&text_form(q.program())).unwrap();
                assert_eq!(&back, q.program(), "{} {mode}", path.display());
            }
            n += 1;
        }
        assert!(n >= 4, "the examples are read");
    }
}
