use smrtl_hdl::bank_conflict_detector::{build, Params};
use smrtl_hdl::BlockParams;
use std::sync::Arc;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sets: Vec<(String, String)> = args[2..]
        .iter()
        .map(|s| {
            let (a, b) = s.split_once('=').unwrap();
            (a.into(), b.into())
        })
        .collect();
    let p = Params::resolve(Some(&args[1]), &sets).unwrap();
    print!("{}", smrtl_hdl::rusthdl::emit_verilog(&Arc::new(build(&p))));
}
