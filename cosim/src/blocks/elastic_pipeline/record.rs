//! The per-cycle record of docs/elastic-pipeline.md §3.5 and the run [`Summary`].

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use smrtl_hdl::blocks::elastic_pipeline::{Cause, WbSrc};
use std::fmt;

/// WB during a cycle: a stream entry's tag, ICNT data, or nothing (a bubble). JSON: the tag
/// number, `"ICNT"` or `"-"` (spec §3.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wb {
    Empty,
    Icnt,
    Entry(u32),
}

impl fmt::Display for Wb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Wb::Empty => f.write_str("-"),
            Wb::Icnt => f.write_str("ICNT"),
            Wb::Entry(tag) => write!(f, "{tag}"),
        }
    }
}

impl Serialize for Wb {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Wb::Entry(tag) => s.serialize_u32(*tag),
            other => s.serialize_str(&other.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for Wb {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Wb, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Tag(u32),
            Text(String),
        }
        match Repr::deserialize(d)? {
            Repr::Tag(tag) => Ok(Wb::Entry(tag)),
            Repr::Text(s) if s == "-" => Ok(Wb::Empty),
            Repr::Text(s) if s == "ICNT" => Ok(Wb::Icnt),
            Repr::Text(s) => Err(de::Error::invalid_value(
                de::Unexpected::Str(&s),
                &"a tag number, \"ICNT\" or \"-\"",
            )),
        }
    }
}

/// One cycle of the trace (spec §3.5): the contents of every latch during cycle `t` and the
/// end-of-cycle outcome.
///
/// JSON, one object per cycle; a latch is its entry's tag (the stream index) or `null` when
/// empty; FIFOs list their entries oldest first; structures the backend lacks are omitted:
///
/// ```json
/// {"t":9,"F":9,"D":[8],"EXE":7,"PRE":[6],"MEM0":5,"rem":1,"MEM":[null],"NQ":[],
///  "WB":"-","wb_src":"NONE","fe_hold":false,"cause":"none"}
/// ```
///
/// - `D`: D1..Dk (`D[0]` is D1); `MEM`: MEM1..MEM(M−1) (`MEM[0]` is MEM1), MEM0 and its `rem`
///   (service cycles left including this one, 0 when empty) are separate fields.
/// - `PRE`, `NQ`: Elastic only; `NM`: Split only (NM0..NM(M−1)).
/// - `WB`: tag, `"ICNT"` or `"-"`; `wb_src`: the source selected at the end of t−1 that filled
///   WB (`NONE`, `ICNT`, `MEM`, `NQ`, `EXE`, `NM`).
/// - `fe_hold`, `cause` (`none`, `bank_conflict`, `other`): about cycle t (§3.2 step 7, §3.3);
///   a stall at t costs the issue slot t+1, where the spec's tables mark it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub t: u64,
    #[serde(rename = "F")]
    pub f: Option<u32>,
    #[serde(rename = "D")]
    pub d: Vec<Option<u32>>,
    #[serde(rename = "EXE")]
    pub exe: Option<u32>,
    #[serde(rename = "PRE", default, skip_serializing_if = "Option::is_none")]
    pub pre: Option<Vec<u32>>,
    #[serde(rename = "MEM0")]
    pub mem0: Option<u32>,
    pub rem: u32,
    #[serde(rename = "MEM")]
    pub mem: Vec<Option<u32>>,
    #[serde(rename = "NQ", default, skip_serializing_if = "Option::is_none")]
    pub nq: Option<Vec<u32>>,
    #[serde(rename = "NM", default, skip_serializing_if = "Option::is_none")]
    pub nm: Option<Vec<Option<u32>>>,
    #[serde(rename = "WB")]
    pub wb: Wb,
    pub wb_src: WbSrc,
    pub fe_hold: bool,
    pub cause: Cause,
}

impl Record {
    /// The fields in record order under their spec §3.5 names (`D1`.., `MEM1`.., `NM0`..; FIFOs
    /// as one array), for reports and for naming the first difference between two records.
    pub fn fields(&self) -> Vec<(String, Value)> {
        fn json<T: Serialize>(x: &T) -> Value {
            serde_json::to_value(x).expect("record fields serialize")
        }
        let mut v = vec![("t".into(), json(&self.t)), ("F".into(), json(&self.f))];
        v.extend(
            self.d
                .iter()
                .enumerate()
                .map(|(k, x)| (format!("D{}", k + 1), json(x))),
        );
        v.push(("EXE".into(), json(&self.exe)));
        if let Some(pre) = &self.pre {
            v.push(("PRE".into(), json(pre)));
        }
        v.push(("MEM0".into(), json(&self.mem0)));
        v.push(("rem".into(), json(&self.rem)));
        v.extend(
            self.mem
                .iter()
                .enumerate()
                .map(|(k, x)| (format!("MEM{}", k + 1), json(x))),
        );
        if let Some(nq) = &self.nq {
            v.push(("NQ".into(), json(nq)));
        }
        if let Some(nm) = &self.nm {
            v.extend(
                nm.iter()
                    .enumerate()
                    .map(|(k, x)| (format!("NM{k}"), json(x))),
            );
        }
        v.push(("WB".into(), json(&self.wb)));
        v.push(("wb_src".into(), json(&self.wb_src)));
        v.push(("fe_hold".into(), json(&self.fe_hold)));
        v.push(("cause".into(), json(&self.cause)));
        v
    }
}

/// Run totals from a record list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub cycles: u64,
    /// Cycles with fe_hold (§3.3).
    pub stalls: u64,
    pub stall_causes: StallCauses,
    /// Cycles with WB empty strictly between the first and the last cycle in which a stream
    /// entry occupies WB (ICNT data is not a bubble).
    pub wb_bubbles: u64,
    /// The last cycle in which a stream entry occupies WB.
    pub last_wb_cycle: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StallCauses {
    pub bank_conflict: u64,
    pub other: u64,
}

impl Summary {
    pub fn of(records: &[Record]) -> Summary {
        let mut acc = SummaryAcc::default();
        for r in records {
            acc.record(r);
        }
        acc.finish()
    }
}

/// WB bubbles (§3.3) counted cycle by cycle: the cycles with WB empty strictly between the
/// first and the last cycle with a stream entry in WB (ICNT data is not a bubble).
#[derive(Clone, Debug, Default)]
pub struct WbBubbles {
    seen_entry: bool,
    /// Empty cycles since the last cycle with a stream entry in WB.
    gap: u64,
    count: u64,
}

impl WbBubbles {
    pub fn add(&mut self, wb: Wb) {
        match wb {
            Wb::Entry(_) => {
                self.count += std::mem::take(&mut self.gap);
                self.seen_entry = true;
            }
            Wb::Empty if self.seen_entry => self.gap += 1,
            _ => {}
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }
}

/// A [`Summary`] accumulated record by record, in cycle order (no record kept).
#[derive(Clone, Debug, Default)]
pub struct SummaryAcc {
    summary: Summary,
    bubbles: WbBubbles,
}

impl SummaryAcc {
    pub fn record(&mut self, r: &Record) {
        let s = &mut self.summary;
        s.cycles += 1;
        s.stalls += r.fe_hold as u64;
        s.stall_causes.bank_conflict += (r.cause == Cause::BankConflict) as u64;
        s.stall_causes.other += (r.cause == Cause::Other) as u64;
        if matches!(r.wb, Wb::Entry(_)) {
            s.last_wb_cycle = Some(r.t);
        }
        self.bubbles.add(r.wb);
    }

    pub fn finish(self) -> Summary {
        Summary {
            wb_bubbles: self.bubbles.count(),
            ..self.summary
        }
    }
}
