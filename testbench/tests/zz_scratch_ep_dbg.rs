use smrtl_cosim::backend::rusthdl::RustHdl;
use smrtl_cosim::elastic_pipeline::record_from_outputs;
use smrtl_cosim::Simulator;
use smrtl_hdl::elastic_pipeline::Params;
use smrtl_hdl::BlockParams;
use smrtl_testbench::check;
use smrtl_testbench::elastic_pipeline::ElasticPipeline;
use smrtl_testbench::Design;

#[test]
fn dbg() {
    let sets: Vec<(String, String)> = std::env::var("SETS")
        .unwrap()
        .split(',')
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (k.into(), v.into())
        })
        .collect();
    let p = Params::resolve(None, &sets).unwrap();
    let d = Design::new::<ElasticPipeline>(&p);
    let m2 = d.module.clone();
    let r = check::random(
        &d,
        &move || Box::new(RustHdl::new(m2.clone())) as Box<dyn Simulator>,
        20_000,
        3,
    );
    let f = r.failure.expect("fails");
    println!("{}", f.mismatch);
    let mut model = d.model();
    let mut rtl = RustHdl::new(d.module.clone());
    let mut a = vec![0; d.layout.out_words];
    let mut b = vec![0; d.layout.out_words];
    for (t, inp) in f.minimal.iter().enumerate() {
        let ins: Vec<String> = d
            .layout
            .inputs
            .iter()
            .map(|s| format!("{}={:x}", s.name, s.of(inp)[0]))
            .collect();
        println!("t={t} in: {}", ins.join(" "));
        model.step(inp, &mut a);
        rtl.step(inp, &mut b);
        let ra = record_from_outputs(&p, &d.layout, t as u64, &a);
        let rb = record_from_outputs(&p, &d.layout, t as u64, &b);
        println!("  model {}", serde_json::to_string(&ra).unwrap());
        if ra != rb || a != b {
            println!("  rtl   {}", serde_json::to_string(&rb).unwrap());
        }
    }
}
