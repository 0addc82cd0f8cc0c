//! The inspector model's own tests (docs/stall-inspector.md §3).

use super::*;
use smrtl_hdl::BlockParams;

fn ready() -> WarpPreds {
    WarpPreds {
        active: true,
        inst_avail: true,
        ..WarpPreds::default()
    }
}

/// Alg. 1 on all warps at once (the class masks) agrees with the per-warp rule on random
/// predicates, under the paper's order and a reversed one, for NW = 1, 7 and 128.
#[test]
fn class_masks_agree_with_the_per_warp_rule() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut bit = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x & 1 == 1
    };
    for (nw, order) in [
        ("1", "paper"),
        ("7", "paper"),
        (
            "128",
            "comp_struct,comp_data,mem_struct,mem_data,sync,control",
        ),
    ] {
        let p = Params::resolve_pairs(None, &[("NW", nw), ("warp_order", order)]).unwrap();
        let mut g = Gsi::new(&p);
        for _ in 0..200 {
            let warps: Vec<WarpPreds> = (0..p.nw)
                .map(|_| WarpPreds {
                    active: bit() || bit(),
                    inst_avail: bit() || bit(),
                    sync_wait: bit() && bit(),
                    haz_load: bit(),
                    haz_comp: bit(),
                    is_mem: bit(),
                    ms_block: bit(),
                    fu_block: bit() && bit(),
                    ms_reason: 1,
                })
                .collect();
            g.evaluate(&warps, &CycleIn::default());
            for (w, preds) in warps.iter().enumerate() {
                assert_eq!(g.wcls_of(w), g.warp_class(preds), "NW {nw} warp {w}");
                assert_eq!(g.wcls()[w], g.warp_class(preds));
            }
        }
    }
}

/// Spec §3.3's example (NW = 2): blame accumulates on W0, flushes 3 cycles into L2 (the
/// last charged in the flushing cycle), then 2 into MAIN_MEM for W1.
#[test]
fn blame_example() {
    let p = Params::resolve_pairs(None, &[("NW", "2")]).unwrap();
    let mut g = Gsi::new(&p);
    let md = WarpPreds {
        haz_load: true,
        ..ready()
    };
    let cd = WarpPreds {
        haz_comp: true,
        ..ready()
    };
    let wb = |warp, s| {
        Some(Writeback {
            warp,
            src: s as u8,
            is_final: true,
        })
    };
    let rows = [
        ([md, cd], 0, None, Class::MemData, [1, 0]),
        ([md, cd], 0, None, Class::MemData, [2, 0]),
        ([md, ready()], 1, None, Class::NoStall, [2, 0]),
        ([md, md], 0, wb(0, src::L2), Class::MemData, [0, 0]),
        ([ready(), md], 1, None, Class::NoStall, [0, 0]),
        ([cd, md], 0, None, Class::MemData, [0, 1]),
        ([cd, md], 0, wb(1, src::MAIN_MEM), Class::MemData, [0, 0]),
    ];
    for (t, (warps, n, ldwb, cls, blame)) in rows.into_iter().enumerate() {
        let c = CycleIn {
            en: true,
            clear: false,
            n_issued: n,
            ldwb,
        };
        let o = g.step(&warps, &c);
        assert_eq!((o.cls, g.blame()), (cls, &blame[..]), "t = {t}");
    }
    assert_eq!((g.md_sub(src::L2), g.md_sub(src::MAIN_MEM)), (3, 2));
    assert_eq!(g.top(Class::MemData), 5);
    assert_eq!(g.status(), 0);
}
