//! `cargo run -p smrtl-hdl --example emit -- BLOCK PRESET [KEY=VALUE...]`: print a block's
//! Verilog without the CLI (a development aid).
use smrtl_hdl::blocks::{bank_conflict_detector as bcd, elastic_pipeline as ep};
use smrtl_hdl::BlockParams;
use std::sync::Arc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sets: Vec<(String, String)> = args[2..]
        .iter()
        .filter_map(|s| s.split_once('=').map(|(a, b)| (a.into(), b.into())))
        .collect();
    let module = match args[0].as_str() {
        "elastic_pipeline" => ep::build(&ep::Params::resolve(Some(&args[1]), &sets).unwrap()),
        _ => bcd::build(&bcd::Params::resolve(Some(&args[1]), &sets).unwrap()),
    };
    print!("{}", smrtl_hdl::rusthdl::emit_verilog(&Arc::new(module)));
}
