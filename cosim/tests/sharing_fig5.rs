//! Spec §9 A17: the paper's Fig. 5 as exact issue timelines on the SM model, for UWF and OWF
//! and both lock policies (docs/scratchpad-sharing.md §4, §9), from the shipped example files.

use smrtl_cosim::kernel::program::Kernel;
use smrtl_cosim::sm::sharing_sm::{params_for, CycleRecord, Outcome, SharingSm, SmStats};

/// Runs example `file` with `sets`; the issue timeline as `(cycle, "TB:I<n>[ nack]")` and the
/// stats. TBs are named as in the figure: O (slot 0), U (slot 1), N (slot 2).
fn timeline(file: &str, sets: &[(&str, &str)]) -> (Vec<(u64, String)>, SmStats) {
    let path = format!("{}/../examples/sharing/{file}", env!("CARGO_MANIFEST_DIR"));
    let k = Kernel::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let p = params_for(&k, &sets).unwrap();
    let mut out = vec![];
    let mut each = |r: &CycleRecord| {
        for pick in &r.picks {
            let who = ["O", "U", "N"][pick.slot as usize];
            let nack = if pick.outcome == Outcome::Nack {
                " nack"
            } else {
                ""
            };
            out.push((r.cycle, format!("{who}:I{}{nack}", pick.pc + 1)));
        }
    };
    let stats = SharingSm::new(&p, &k)
        .unwrap()
        .run(Some(&mut each))
        .unwrap();
    (out, stats)
}

fn expect(rows: &[(u64, &str)]) -> Vec<(u64, String)> {
    rows.iter().map(|(c, s)| (*c, s.to_string())).collect()
}

fn finishes(s: &SmStats) -> Vec<u64> {
    s.tbs.iter().map(|t| t.finish).collect()
}

#[test]
fn a17_fig5_uwf() {
    for policy in ["TRANSFER", "FREE"] {
        let (t, s) = timeline("fig5-uwf.json", &[("POLICY", policy)]);
        assert_eq!(
            t,
            expect(&[
                (1, "U:I1"),
                (2, "U:I2"),
                (3, "O:I1"),
                (4, "O:I2"),
                (5, "N:I1"),
                (6, "N:I2 nack"),
                (7, "U:I3"),
                (8, "N:I2 nack"),
                (9, "O:I3"),
                (10, "N:I2"),
                (15, "N:I3"),
            ]),
            "{policy}"
        );
        // TBs 0, 1, 2 are O, U, N: U 7, O 9, N 15.
        assert_eq!(finishes(&s), [9, 7, 15], "{policy}");
        assert_eq!(s.cycles, 15);
        assert_eq!(s.nacks, 2);
    }
}

#[test]
fn a17_fig5_owf() {
    for policy in ["TRANSFER", "FREE"] {
        let (t, s) = timeline("fig5-owf.json", &[("POLICY", policy)]);
        assert_eq!(
            t,
            expect(&[
                (1, "O:I1"),
                (2, "O:I2"),
                (3, "U:I1"),
                (4, "U:I2"),
                (5, "N:I1"),
                (6, "N:I2 nack"),
                (7, "O:I3"),
                (8, "N:I2"),
                (9, "U:I3"),
                (13, "N:I3"),
            ]),
            "{policy}"
        );
        assert_eq!(finishes(&s), [7, 9, 13], "{policy}");
        assert_eq!(s.cycles, 13);
        assert_eq!(s.nacks, 1);
        assert_eq!(s.thread_instructions, 9 * 32);
        let r = s.lock_releases;
        let handed = if policy == "TRANSFER" { (0, 1) } else { (1, 0) };
        // O's finish hands the lock over (or frees it); N's finish frees it.
        assert_eq!((r.finish, r.transfer), (handed.0 + 1, handed.1));
    }
}
