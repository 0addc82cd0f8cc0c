//! Kernels with control flow (docs/scratchpad-sharing.md §6.0): both file forms, the lowering to
//! the SM model's kernel, and warps following their branches in the SM model.

use smrtl_cosim::kernel::cfg::{Origin, Program};
use smrtl_cosim::kernel::program::{Branch, Op};
use smrtl_cosim::sm::sharing_sm::{load_kernel, SharingSm, SmStats};

const TEXT: &str = "
# a loop between a private and a post phase
kernel loop3
threads 64
grid 1
t 1/4
shared A 64
shared B 128 @ 64
B1:
    st.shared A
    alu
L:                      # the loop body
    ld.shared B -> r1
    alu r1 -> r2
    cbra L E trips 3
E:
    st.global r2
";

const JSON: &str = r#"{"name": "loop3", "threads": 64, "grid": 1, "t": "1/4",
  "shared": [{"name": "A", "bytes": 64}, {"name": "B", "bytes": 128, "offset": 64}],
  "blocks": [{"name": "B1", "instrs": ["st.shared A", "alu"], "next": ["L"]},
             {"name": "L", "instrs": ["ld.shared B -> r1", "alu r1 -> r2"], "next": ["L", "E"],
              "branch": {"trips": 3}},
             {"name": "E", "instrs": ["st.global r2"]}]}"#;

fn run(text: &str, sets: &[(&str, &str)]) -> SmStats {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let (k, p, _) = load_kernel(text, &sets).unwrap();
    SharingSm::new(&p, &k).unwrap().run(None).unwrap()
}

#[test]
fn text_and_json_forms_are_one_program() {
    let a = Program::parse(TEXT).unwrap();
    let b = Program::parse(JSON).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.tb_smem, 192);
    assert_eq!(a.offsets(), [0, 64]);
    // The JSON form round-trips.
    let again = serde_json::to_string(&a.to_file()).unwrap();
    assert_eq!(Program::parse(&again).unwrap(), a);
}

#[test]
fn lowering_makes_terminators_instructions_except_fall_through() {
    let l = Program::parse(TEXT).unwrap().lower(1);
    let ops: Vec<Op> = l.kernel.warps[0].iter().map(|i| i.op).collect();
    use Op::*;
    // B1 falls through into L (no bra); L's branch and E's exit are instructions.
    assert_eq!(
        ops,
        [StShared, Alu, LdShared, Alu, Cbra, StGlobal, Exit],
        "{:?}",
        l.kernel.warps[0]
    );
    let cbra = &l.kernel.warps[0][4];
    assert_eq!(
        (cbra.to.as_slice(), cbra.branch),
        (&[2, 5][..], Some(Branch::Trips(3)))
    );
    assert_eq!(
        l.origin[4],
        Origin {
            block: 1,
            index: None
        }
    );
    assert_eq!(l.kernel.params["t"], "1/4");
    // A jump that does not fall through is a `bra`.
    let p = Program::parse("tb_smem 4\nA:\n alu\n bra C\nB:\n alu\nC:\n alu\n").unwrap();
    let ops: Vec<Op> = p.lower(1).kernel.warps[0].iter().map(|i| i.op).collect();
    assert_eq!(ops, [Alu, Bra, Alu, Alu, Exit]);
}

#[test]
fn warps_follow_loops_in_the_sm_model() {
    // Per warp: 2 + 3 loop iterations × 3 + 2 = 13 instructions; 2 warps.
    let s = run(TEXT, &[]);
    assert_eq!(s.warp_instructions, 2 * 13);
    assert_eq!(s.thread_instructions, 64 * 13);
    // Nested loops: the inner body runs trips_in × trips_out times.
    let nested = "threads 32\ngrid 1\ntb_smem 64\nO:\n alu\nI:\n alu\n cbra I N trips 4\nN:\n cbra O X trips 3\nX:\n exit\n";
    // O: alu (1), I: alu + cbra (2) × 4, N: cbra (1); × 3; X: exit.
    assert_eq!(run(nested, &[]).warp_instructions, 3 * (1 + 2 * 4 + 1) + 1);
}

#[test]
fn coin_branches_are_per_warp_seeded_and_reproducible() {
    let prog = |seed: u64| {
        format!("threads 1024\ngrid 8\ntb_smem 64\nseed {seed}\nA:\n cbra B C p 1/4\nB:\n alu\n alu\n alu\nC:\n exit\n")
    };
    let s1 = run(&prog(1), &[]);
    assert_eq!(s1, run(&prog(1), &[]), "a seed reproduces the run");
    // 256 warps: A's cbra + (B's 3 ALUs if it goes to B) + the exit.
    let to_b = (s1.warp_instructions - 2 * 256) / 3;
    assert!(
        (40..=90).contains(&to_b),
        "{to_b} of 256 warps took p = 1/4"
    );
    let s2 = run(&prog(2), &[]);
    assert_ne!(s1.warp_instructions, s2.warp_instructions);
}

#[test]
fn frac_branches_send_exactly_their_share_whatever_the_seed() {
    let prog = |seed: u64| {
        format!("threads 1024\ngrid 8\ntb_smem 64\nseed {seed}\nA:\n cbra B C frac 1/16\nB:\n alu\n alu\n alu\nC:\n exit\n")
    };
    let s1 = run(&prog(1), &[]);
    // 256 warps, one visit each: exactly 16 go to B.
    assert_eq!((s1.warp_instructions - 2 * 256) / 3, 16);
    assert_eq!(s1, run(&prog(9), &[]), "no coin: the seed does not matter");
}

#[test]
fn bad_programs_are_one_line_errors() {
    for (text, want) in [
        ("tb_smem 8\nA:\n bra Z\n", "unknown successor `Z`"),
        (
            "tb_smem 8\nA:\n ld.shared V\n",
            "unknown .shared variable `V`",
        ),
        ("tb_smem 8\nA:\n alu r40\n", "allowed: registers r0..r31"),
        ("tb_smem 8\nA:\n mul\n", "unknown op `mul`"),
        ("tb_smem 8\nA:\n bra A\n", "block `A` cannot reach an exit"),
        (
            "tb_smem 8\nA:\n exit\n alu\n",
            "line 4: `alu` follows block `A`'s terminator",
        ),
        ("tb_smem 8\nA:\n cbra A B trips 0\nB:\n", "`trips` 0"),
        (
            "tb_smem 8\nA:\n cbra A B frac 3/2\nB:\n",
            "`3/2`; allowed: a fraction",
        ),
        (
            "shared A 8\ntb_smem 4\nA:\n",
            "tb_smem 4; allowed: at least",
        ),
        ("A:\n alu\n", "no .shared variables and no `tb_smem`"),
        ("frobnicate 3\n", "unknown header `frobnicate`"),
        (r#"{"blocks": []}"#, "0 blocks"),
        (
            r#"{"tb_smem": 4, "blocks": [{"name": "A", "next": ["A", "A", "A"]}]}"#,
            "3 successors",
        ),
    ] {
        let e = Program::parse(text).expect_err(text).to_string();
        assert!(e.contains(want), "{text:?}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
