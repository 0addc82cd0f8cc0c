//! Synthetic kernels shaped like seed 001's Table 1 (docs/scratchpad-sharing.md §8.1): three-phase
//! programs with loops (a private phase, a shared phase, a post-release phase) whose scratchpad
//! size, block size and variable count are the paper's, and whose phase lengths are derived from
//! the paper's Table 11 gains. `smrtl sim --kernel-profile NAME` runs one; `smrtl repro
//! scratchpad-sharing` runs them all.

use smrtl_cosim::kernel::launch::Ratio;
use std::fmt::Write as _;

/// Which of Table 1's sets a profile belongs to ([001] §8): Set 1 releases the shared region
/// before the kernel ends, Set 2 cannot, Set 3 is limited by threads, registers or blocks and
/// never shares (the controls of trend 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Set {
    #[serde(rename = "1")]
    One,
    #[serde(rename = "2")]
    Two,
    #[serde(rename = "3")]
    Three,
}

/// The per-thread extra instructions of Shared-OWF-OPT over Unshared-LRR ([001] Table 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Extra {
    /// The relssp alone on every path.
    #[serde(rename = "1")]
    One,
    /// relssp plus a kept split block's `bra` on every path.
    #[serde(rename = "2")]
    Two,
    /// Paths differ.
    #[serde(rename = "m")]
    Mixed,
}

impl Extra {
    pub fn label(self) -> &'static str {
        match self {
            Extra::One => "1",
            Extra::Two => "2",
            Extra::Mixed => "m",
        }
    }

    /// Table 4's classification of a measured increase: `extra` thread-instructions over
    /// `threads` threads.
    pub fn classify(extra: u64, threads: u64) -> Extra {
        match extra {
            e if e == threads => Extra::One,
            e if e == 2 * threads => Extra::Two,
            _ => Extra::Mixed,
        }
    }
}

/// One synthetic kernel: Table 1's shape plus the phase lengths derived for it (docs §8.1).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct KernelProfile {
    pub name: &'static str,
    pub set: Set,
    /// `.shared` variables (Table 1 `#vars`).
    pub vars: u32,
    /// Scratchpad bytes per TB (Table 1 `R_tb`).
    pub r_tb: u32,
    /// Threads per TB (Table 1 block size).
    pub threads: u32,
    /// Table 1's resident TBs per SM, unshared and shared (0 for the controls: not in Table 1).
    pub paper_tbs: (u32, u32),
    /// Iterations of each phase; every iteration waits for one global load (§8.1).
    pub private: u32,
    pub shared: u32,
    pub post: u32,
    /// Which warps enter the shared phase (`None`: every warp does). A warp that skips it goes
    /// straight to the post-release phase, which splits an edge for OPT.
    pub touch: Option<Touch>,
    /// Table 11's IPC improvement of Shared-OWF-OPT over Unshared-LRR (0 for the controls).
    pub paper_gain: f64,
    /// Table 4's `extra` column (None for the controls).
    pub paper_extra: Option<Extra>,
}

/// How a profile's warps decide to enter the shared phase (docs/scratchpad-sharing.md §8.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Touch {
    /// A per-warp coin of this probability, seeded (`cbra … p F`).
    Coin(Ratio),
    /// Exactly this fraction of the warps, spread evenly by warp id (`cbra … frac F`): where
    /// a few warps decide the result, a coin over them would decide it instead.
    Spread(Ratio),
}

const fn r(num: u64, den: u64) -> Option<Touch> {
    Some(Touch::Coin(Ratio { num, den }))
}

const fn spread(num: u64, den: u64) -> Option<Touch> {
    Some(Touch::Spread(Ratio { num, den }))
}

/// The 14 kernels of Table 1 in the paper's order, then the two Set-3 controls.
pub const PROFILES: &[KernelProfile] = &[
    p(
        "backprop",
        Set::One,
        2,
        9408,
        256,
        (1, 2),
        [4, 14, 6],
        r(15, 16),
        0.7420,
        Some(Extra::Mixed),
    ),
    p(
        "DCT1",
        Set::One,
        1,
        2112,
        64,
        (7, 14),
        [1, 21, 2],
        None,
        0.1329,
        Some(Extra::One),
    ),
    p(
        "DCT2",
        Set::One,
        1,
        2112,
        64,
        (7, 14),
        [2, 21, 1],
        None,
        0.1479,
        Some(Extra::One),
    ),
    p(
        "DCT3",
        Set::One,
        1,
        2176,
        128,
        (7, 12),
        [2, 19, 3],
        r(15, 16),
        0.1815,
        Some(Extra::Mixed),
    ),
    p(
        "DCT4",
        Set::One,
        1,
        2176,
        128,
        (7, 12),
        [2, 20, 2],
        r(15, 16),
        0.1442,
        Some(Extra::Mixed),
    ),
    p(
        "NQU",
        Set::One,
        5,
        10496,
        64,
        (1, 2),
        [0, 23, 1],
        r(15, 16),
        0.0472,
        Some(Extra::Mixed),
    ),
    p(
        "SRAD1",
        Set::One,
        6,
        13824,
        576,
        (1, 2),
        [1, 21, 2],
        None,
        0.1434,
        Some(Extra::One),
    ),
    p(
        "SRAD2",
        Set::One,
        5,
        11520,
        576,
        (1, 2),
        [2, 21, 1],
        None,
        0.1338,
        Some(Extra::One),
    ),
    p(
        "FDTD3d",
        Set::Two,
        1,
        3840,
        128,
        (4, 6),
        [0, 24, 0],
        None,
        -0.0229,
        Some(Extra::Two),
    ),
    p(
        "heartwall",
        Set::Two,
        8,
        11872,
        128,
        (1, 2),
        [12, 12, 0],
        spread(1, 16),
        0.9217,
        Some(Extra::Two),
    ),
    p(
        "histogram",
        Set::Two,
        1,
        9216,
        192,
        (1, 2),
        [0, 24, 0],
        None,
        -0.0018,
        Some(Extra::Two),
    ),
    p(
        "MC1",
        Set::Two,
        2,
        9216,
        32,
        (1, 2),
        [6, 18, 0],
        None,
        0.3232,
        Some(Extra::Two),
    ),
    p(
        "NW1",
        Set::Two,
        2,
        8452,
        32,
        (1, 2),
        [1, 40, 0],
        None,
        0.0237,
        Some(Extra::One),
    ),
    p(
        "NW2",
        Set::Two,
        2,
        8452,
        32,
        (1, 2),
        [2, 24, 0],
        None,
        0.0831,
        Some(Extra::One),
    ),
    // Set 3 ([001] §8: BFS, b+tree, DCT5, gaussian, NN): limited by threads or TB slots, so
    // the launch never shares (ShSM = 0). Trend 4 runs them.
    p(
        "ctl_threads",
        Set::Three,
        1,
        2048,
        512,
        (0, 0),
        [4, 12, 4],
        None,
        0.0,
        None,
    ),
    p(
        "ctl_slots",
        Set::Three,
        2,
        512,
        64,
        (0, 0),
        [4, 12, 4],
        None,
        0.0,
        None,
    ),
];

#[allow(clippy::too_many_arguments)]
const fn p(
    name: &'static str,
    set: Set,
    vars: u32,
    r_tb: u32,
    threads: u32,
    paper_tbs: (u32, u32),
    [private, shared, post]: [u32; 3],
    touch: Option<Touch>,
    paper_gain: f64,
    paper_extra: Option<Extra>,
) -> KernelProfile {
    KernelProfile {
        name,
        set,
        vars,
        r_tb,
        threads,
        paper_tbs,
        private,
        shared,
        post,
        touch,
        paper_gain,
        paper_extra,
    }
}

/// The names, for messages and `smrtl list`-style help.
pub fn names() -> String {
    PROFILES
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The profile `name` (case-insensitive); the error lists the allowed names.
pub fn profile(name: &str) -> Result<&'static KernelProfile, String> {
    PROFILES
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            format!(
                "unknown kernel profile `{}`; allowed: {}",
                smrtl_hdl::shown(name),
                names()
            )
        })
}

/// TBs in a run: four waves of the shared launch (docs §8.1), so both launches run several
/// waves and the tails weigh little.
pub const WAVES: u32 = 4;

impl KernelProfile {
    /// The variables' sizes: one variable of `R_tb`, or `vars − 1` small ones that fit in the
    /// private bytes `u` at `t = 1/10` (accessed in the private phase) and one large one (the
    /// shared phase's), together `R_tb`.
    pub fn var_sizes(&self) -> Vec<u32> {
        if self.vars == 1 {
            return vec![self.r_tb];
        }
        let small = self.vars - 1;
        // 80 % of u = R_tb / 10, in 4-byte words, spread over the small variables.
        let each = (self.r_tb * 8 / 100 / small) & !3;
        let mut sizes = vec![each; small as usize];
        sizes.push(self.r_tb - each * small);
        sizes
    }

    /// The program in the text form (docs §6.0), `grid` TBs, branch coins seeded `seed`.
    ///
    /// ```text
    /// PRIV:   ld.global; alu; [st.shared small...]; cbra PRIV GATE|SHARED trips private
    /// GATE:   cbra SHARED AFTER p touch             (only with `touch`)
    /// SHARED: ld.shared big; ld.global; alu; st.shared big; [bar]; cbra SHARED SDONE trips shared
    /// SDONE:  st.shared big                         (the last shared-region access)
    /// AFTER:  alu                                   (every path meets here, once)
    /// POST:   ld.global; alu; cbra POST FIN trips post   (Set 1)
    /// FIN:    st.global
    /// ```
    ///
    /// The shared phase opens with its shared-region access, so a TB without a private phase
    /// touches the region at once, and ends with a final write outside the loop, after which
    /// OPT places the relssp (1 extra instruction). `AFTER` is a block every path runs exactly
    /// once, which PostDom needs (§6.5); a warp that skips the shared phase reaches it over a
    /// critical edge, which OPT splits (2 extra on that path: Table 4's mixed pattern). `bar` only where every warp of a TB runs the
    /// shared phase: a barrier that some warps skip would never open.
    pub fn program(&self, grid: u32, seed: u64) -> String {
        let sizes = self.var_sizes();
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# Synthetic {} (seed 001 Table 1, set {:?}): docs/scratchpad-sharing.md §8.1",
            self.name, self.set
        );
        let _ = writeln!(s, "kernel {}", self.name);
        let _ = writeln!(s, "threads {}", self.threads);
        let _ = writeln!(s, "grid {grid}");
        let _ = writeln!(s, "tb_smem {}", self.r_tb);
        let _ = writeln!(s, "t 1/10");
        let _ = writeln!(s, "seed {seed}");
        for (i, b) in sizes.iter().enumerate() {
            let _ = writeln!(s, "shared V{i} {b}");
        }
        let big = format!("V{}", sizes.len() - 1);
        if self.private > 0 {
            let _ = writeln!(s, "PRIV:\n    ld.global -> r1\n    alu r1 -> r2");
            for v in 0..sizes.len() - 1 {
                let _ = writeln!(s, "    st.shared V{v} r2");
            }
            let next = if self.touch.is_some() {
                "GATE"
            } else {
                "SHARED"
            };
            let _ = writeln!(s, "    cbra PRIV {next} trips {}", self.private);
        }
        match self.touch {
            Some(Touch::Coin(t)) => {
                let _ = writeln!(s, "GATE:\n    cbra SHARED AFTER p {t}");
            }
            Some(Touch::Spread(t)) => {
                let _ = writeln!(s, "GATE:\n    cbra SHARED AFTER frac {t}");
            }
            None => {}
        }
        let _ = writeln!(
            s,
            "SHARED:\n    ld.shared {big} -> r3\n    ld.global -> r4\n    alu r3 r4 -> r2\n    st.shared {big} r2"
        );
        if self.touch.is_none() {
            let _ = writeln!(s, "    bar");
        }
        let _ = writeln!(s, "    cbra SHARED SDONE trips {}", self.shared);
        let _ = writeln!(
            s,
            "SDONE:\n    st.shared {big} r2\nAFTER:\n    alu r2 -> r2"
        );
        if self.post > 0 {
            let _ = writeln!(
                s,
                "POST:\n    ld.global -> r5\n    alu r5 r2 -> r2\n    cbra POST FIN trips {}",
                self.post
            );
        }
        let _ = writeln!(s, "FIN:\n    st.global r2");
        s
    }

    /// Whether its program draws a coin (its runs differ between seeds).
    pub fn has_coin(&self) -> bool {
        matches!(self.touch, Some(Touch::Coin(_)))
    }

    /// This profile with the private phase `private` iterations long (trend 1's sweep).
    pub fn with_private(&self, private: u32) -> KernelProfile {
        KernelProfile { private, ..*self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smrtl_cosim::kernel::cfg::Program;

    #[test]
    fn every_profile_parses_and_sums_to_r_tb() {
        for p in PROFILES {
            let prog =
                Program::parse(&p.program(8, 1)).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(prog.tb_smem, p.r_tb, "{}", p.name);
            assert_eq!(prog.vars.len() as u32, p.vars, "{}", p.name);
            assert_eq!(p.var_sizes().iter().sum::<u32>(), p.r_tb, "{}", p.name);
            // The small variables fit in u = ceil(R_tb / 10) (rounded to 4 bytes).
            let small: u32 = p.var_sizes().iter().rev().skip(1).sum();
            assert!(
                small <= p.r_tb.div_ceil(10).next_multiple_of(4),
                "{}",
                p.name
            );
        }
    }

    #[test]
    fn unknown_profile_lists_the_names() {
        let e = profile("nope").unwrap_err();
        assert!(e.contains("heartwall") && e.contains("allowed"), "{e}");
        assert_eq!(profile("HeartWall").unwrap().name, "heartwall");
    }
}
