//! Kernels and their compiler: the instruction-stream kernel the SM models run (`program`),
//! kernels with control flow (`cfg`, its text form `cfg_text`), the relssp pass and the
//! scratchpad-sharing launch calculator.

pub mod cfg;
pub mod cfg_file;
pub mod cfg_text;
pub mod launch;
pub mod program;
pub mod relssp_pass;
