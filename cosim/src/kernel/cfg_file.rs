//! The file forms of a kernel with control flow (docs/scratchpad-sharing.md §6.0), as read and
//! written: the JSON form's structs, which the text form ([`crate::kernel::cfg_text`]) also
//! produces, and the one-line error both report. [`crate::kernel::cfg`] checks and resolves
//! them into a [`Program`](crate::kernel::cfg::Program).

use crate::kernel::launch::Ratio;
use crate::kernel::program::{Branch, LockPreset};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// A `.shared` variable: its size and, once laid out, its byte offset in the TB's scratchpad.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Var {
    pub name: String,
    pub bytes: u32,
    /// Byte offset; without it, variables are packed in list order from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
}

/// The JSON form, as read and written.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramFile {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default)]
    pub shared: Vec<Var>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tb_smem: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t: Option<Ratio>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<u32>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seed: u64,
    pub blocks: Vec<BlockFile>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locks: Vec<LockPreset>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub params: Map<String, Value>,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

/// A block in the JSON form.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BlockFile {
    pub name: String,
    #[serde(default)]
    pub instrs: Vec<String>,
    #[serde(default)]
    pub next: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<Branch>,
}

/// Why a program is refused: one line naming the place and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CfgError(pub String);

impl fmt::Display for CfgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
