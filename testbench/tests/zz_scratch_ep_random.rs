use smrtl_cosim::backend::rusthdl::RustHdl;
use smrtl_cosim::Simulator;
use smrtl_hdl::elastic_pipeline::Params;
use smrtl_hdl::BlockParams;
use smrtl_testbench::check;
use smrtl_testbench::elastic_pipeline::ElasticPipeline;
use smrtl_testbench::Design;

#[test]
fn random_sweep() {
    let mut total = 0;
    for mode in ["unified", "split", "elastic"] {
        for (m, n, q, fe) in [
            (1, 0, 0, 1),
            (2, 0, 2, 1),
            (2, 1, 2, 2),
            (4, 3, 4, 1),
            (3, 2, 1, 3),
            (4, 0, 4, 17),
        ] {
            for extra in [
                vec![],
                vec![("wb_priority", "nonmem_first")],
                vec![("nonmem_min_age", "2")],
                vec![("P", "2"), ("broadcast", "literal")],
                vec![("broadcast", "gpgpusim-limited"), ("L", "16"), ("B", "16")],
            ] {
                let mut sets: Vec<(String, String)> = vec![
                    ("pipe_mode".into(), mode.into()),
                    ("M".into(), m.to_string()),
                    ("N".into(), n.to_string()),
                    ("Q".into(), q.to_string()),
                    ("fe_depth".into(), fe.to_string()),
                ];
                sets.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
                let p = Params::resolve(None, &sets).unwrap();
                let d = Design::new::<ElasticPipeline>(&p);
                let m2 = d.module.clone();
                let r = check::random(
                    &d,
                    &move || Box::new(RustHdl::new(m2.clone())) as Box<dyn Simulator>,
                    20_000,
                    3,
                );
                total += r.cycles;
                if let Some(f) = r.failure {
                    panic!(
                        "{sets:?}: {} (minimal {} cycles)",
                        f.mismatch,
                        f.minimal.len()
                    );
                }
            }
        }
    }
    eprintln!("total cycles {total}");
}
