//! The GSI taxonomy as parameter values (docs/stall-inspector.md §1, §3.2): the eight classes
//! and their 3-bit codes, the two priority orders (`warp_order`, `cycle_order`) and the
//! classifier scope.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A stall class and its 3-bit code (docs/stall-inspector.md §1.1; codes 1–7 in Alg. 1 order,
/// strongest first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// An instruction issued.
    NoStall = 0,
    /// No active warp to issue from.
    Idle = 1,
    /// The warp's next instruction is unavailable.
    Control = 2,
    /// Blocked by a pending acquire, release or barrier.
    Sync = 3,
    /// Depends on a pending load.
    MemData = 4,
    /// A memory instruction cannot enter the LSU.
    MemStruct = 5,
    /// Depends on a pending compute op.
    CompData = 6,
    /// The needed compute unit is occupied.
    CompStruct = 7,
}

impl Class {
    /// Every class by code.
    pub const ALL: [Class; 8] = [
        Class::NoStall,
        Class::Idle,
        Class::Control,
        Class::Sync,
        Class::MemData,
        Class::MemStruct,
        Class::CompData,
        Class::CompStruct,
    ];

    /// The 3-bit code.
    #[inline]
    pub fn code(self) -> u64 {
        self as u64
    }

    /// The class of a code (its low 3 bits).
    #[inline]
    pub fn of_code(code: u64) -> Class {
        Class::ALL[(code & 7) as usize]
    }

    /// The paper's name, as the docs and the read-out map write it (`MEM_DATA`).
    pub fn name(self) -> &'static str {
        [
            "NO_STALL",
            "IDLE",
            "CONTROL",
            "SYNC",
            "MEM_DATA",
            "MEM_STRUCT",
            "COMP_DATA",
            "COMP_STRUCT",
        ][self as usize]
    }

    /// A class from its name (any case, `-` or `_`) or its code.
    pub fn parse(text: &str) -> Option<Class> {
        let t = text.trim().to_ascii_uppercase().replace('-', "_");
        if let Ok(code) = t.parse::<u64>() {
            return (code < 8).then(|| Class::of_code(code));
        }
        Class::ALL.into_iter().find(|c| c.name() == t)
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Declares an order newtype: a list of classes, `paper` by default, written as `paper` or the
/// class names comma-separated (`--set warp_order=sync,control,...`, or a JSON list).
macro_rules! order_type {
    ($(#[$meta:meta])* $name:ident, $paper:expr, $what:literal) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct $name(pub Vec<Class>);

        impl $name {
            /// The paper's order.
            pub fn paper() -> $name {
                $name($paper.to_vec())
            }

            /// The classes this order must list, each once, in code order.
            pub fn members() -> Vec<Class> {
                let mut m = $paper.to_vec();
                m.sort();
                m
            }

            /// Whether the order lists each of [`Self::members`] exactly once.
            pub fn is_permutation(&self) -> bool {
                let mut got = self.0.clone();
                got.sort();
                got == Self::members()
            }

            /// What the order must be, in words (for errors).
            pub fn allowed() -> String {
                let names: Vec<&str> = Self::members().iter().map(|c| c.name()).collect();
                format!(concat!("paper, or ", $what, " each once: {}"), names.join(", "))
            }
        }

        impl Default for $name {
            fn default() -> $name {
                $name::paper()
            }
        }

        impl fmt::Display for $name {
            /// `paper`, or the names in lower case, comma-separated.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                if *self == $name::paper() {
                    return f.write_str("paper");
                }
                let names: Vec<String> =
                    self.0.iter().map(|c| c.name().to_ascii_lowercase()).collect();
                f.write_str(&names.join(","))
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            /// `paper`, or class names or codes separated by commas or spaces.
            fn from_str(s: &str) -> Result<$name, String> {
                if s.trim().eq_ignore_ascii_case("paper") {
                    return Ok($name::paper());
                }
                s.split(|c: char| c == ',' || c.is_whitespace())
                    .filter(|t| !t.is_empty())
                    .map(|t| {
                        Class::parse(t).ok_or_else(|| {
                            format!("unknown class `{}`; allowed: {}", crate::shown(t), $name::allowed())
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map($name)
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            /// From the text form or a JSON list of names or codes.
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                use serde_json::Value;
                let text = match Value::deserialize(d)? {
                    Value::String(s) => s,
                    Value::Array(items) => items
                        .iter()
                        .map(|v| match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .collect::<Vec<_>>()
                        .join(","),
                    other => other.to_string(),
                };
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

order_type!(
    /// Alg. 1's tests after IDLE, strongest first (docs/stall-inspector.md §1.2, D8): the first
    /// test that holds names the warp's class; IDLE (inactive) stays first, NO_STALL last.
    WarpOrder,
    [
        Class::Control,
        Class::Sync,
        Class::MemData,
        Class::MemStruct,
        Class::CompData,
        Class::CompStruct,
    ],
    "the six warp tests"
);

order_type!(
    /// Alg. 2's rows after NO_STALL (docs/stall-inspector.md §1.2, D8): the cycle takes the
    /// first class of this list that some warp has; NO_STALL (an issue) stays first.
    CycleOrder,
    [
        Class::MemStruct,
        Class::MemData,
        Class::Sync,
        Class::CompStruct,
        Class::CompData,
        Class::Control,
        Class::Idle,
    ],
    "the seven cycle classes"
);

/// One classifier per SM or per warp scheduler (docs/stall-inspector.md §1.2 D1). The block is
/// the same either way; the scope says which warps and which issue count an integration feeds
/// one instance (docs/stall-inspector.md §3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Scope {
    /// One instance per SM: every warp slot, the SM's issue count (the paper's definition).
    #[serde(alias = "persm", alias = "per_sm", alias = "PERSM")]
    PerSm,
    /// One instance per scheduler: that scheduler's warps and its issue count.
    #[serde(
        alias = "perscheduler",
        alias = "per_scheduler",
        alias = "PERSCHEDULER"
    )]
    PerScheduler,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names() {
        for c in Class::ALL {
            assert_eq!(Class::of_code(c.code()), c);
            assert_eq!(Class::parse(c.name()), Some(c));
            assert_eq!(Class::parse(&c.name().to_ascii_lowercase()), Some(c));
            assert_eq!(Class::parse(&c.code().to_string()), Some(c));
        }
        assert_eq!(Class::parse("mem-data"), Some(Class::MemData));
        assert_eq!(Class::parse("8"), None);
    }

    #[test]
    fn orders_round_trip() {
        let w: WarpOrder = "paper".parse().unwrap();
        assert_eq!(w, WarpOrder::paper());
        assert_eq!(serde_json::to_value(&w).unwrap(), "paper");
        let c: CycleOrder = "comp_struct,comp_data,mem_struct,mem_data,sync,control,idle"
            .parse()
            .unwrap();
        assert!(c.is_permutation());
        let text = serde_json::to_value(&c).unwrap();
        assert_eq!(serde_json::from_value::<CycleOrder>(text).unwrap(), c);
        let list: WarpOrder = serde_json::from_str(r#"["SYNC","CONTROL",4,5,6,7]"#).unwrap();
        assert_eq!(list.0[..2], [Class::Sync, Class::Control]);
        assert!(list.is_permutation());
        let short: WarpOrder = "sync,control".parse().unwrap();
        assert!(!short.is_permutation());
        assert!("sync,bogus".parse::<WarpOrder>().is_err());
    }
}
