//! An entry as issued ([`Entry`], its [`Lanes`]) and inside the pipeline ([`InFlight`]), with its
//! MEM0 service cycles (docs/elastic-pipeline.md §2 "Entry", "Conflict detector"; D6, D7).

use crate::blocks::bank_conflict_detector::{degree_of, Cfg, MAX_LANES};

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use smrtl_hdl::blocks::elastic_pipeline::{Kind, Params};
use std::fmt;
use std::ops::{Deref, DerefMut};

/// One value per lane (L ≤ [`MAX_LANES`], spec §1) in fixed storage: an entry's lane data
/// without a heap allocation. Reads and writes as a slice of length L; builds with `collect`.
#[derive(Clone, Copy)]
pub struct Lanes<T> {
    len: usize,
    values: [T; MAX_LANES],
}

impl<T: Copy + Default> Lanes<T> {
    /// `lanes` copies of `value`.
    pub fn splat(value: T, lanes: usize) -> Lanes<T> {
        std::iter::repeat_n(value, lanes).collect()
    }
}

impl<T> Deref for Lanes<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.values[..self.len]
    }
}

impl<T> DerefMut for Lanes<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.values[..self.len]
    }
}

impl<T: Copy + Default> FromIterator<T> for Lanes<T> {
    /// Panics beyond [`MAX_LANES`] values.
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Lanes<T> {
        let mut lanes = Lanes {
            len: 0,
            values: [T::default(); MAX_LANES],
        };
        for value in iter {
            assert!(lanes.len < MAX_LANES, "more than {MAX_LANES} lanes");
            lanes.values[lanes.len] = value;
            lanes.len += 1;
        }
        lanes
    }
}

impl<T: PartialEq> PartialEq for Lanes<T> {
    fn eq(&self, other: &Lanes<T>) -> bool {
        **self == **other
    }
}

impl<T: Eq> Eq for Lanes<T> {}

impl<T: PartialEq, const N: usize> PartialEq<[T; N]> for Lanes<T> {
    fn eq(&self, other: &[T; N]) -> bool {
        **self == other[..]
    }
}

impl<T: fmt::Debug> fmt::Debug for Lanes<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Serialize> Serialize for Lanes<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de, T: Deserialize<'de> + Copy + Default> Deserialize<'de> for Lanes<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Lanes<T>, D::Error> {
        let values = Vec::<T>::deserialize(d)?;
        if values.len() > MAX_LANES {
            return Err(de::Error::invalid_length(
                values.len(),
                &"at most 32 lane values",
            ));
        }
        Ok(values.into_iter().collect())
    }
}

/// One pipeline entry as issued: one subwarp instruction (spec §2 "Entry"). Trace mode carries
/// no warp, subwarp or PC yet; the tag is the stream index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub tag: u32,
    pub kind: Kind,
    /// `deg_override` (micro tests): the degree d ≥ 1 instead of the detector's.
    pub deg_override: Option<u32>,
    /// Word address per lane (L entries, AW bits each).
    pub addrs: Lanes<u32>,
    /// Active lanes (L entries).
    pub act: Lanes<bool>,
}

impl Entry {
    /// An entry of `kind` with all `lanes` active at word address 0 and no override.
    pub fn new(tag: u32, kind: Kind, lanes: usize) -> Entry {
        Entry {
            tag,
            kind,
            deg_override: None,
            addrs: Lanes::splat(0, lanes),
            act: Lanes::splat(true, lanes),
        }
    }

    /// `S(d)` of the acceptance tables (§9): SMEM with `deg_override` = d.
    pub fn smem_deg(tag: u32, d: u32, lanes: usize) -> Entry {
        Entry {
            deg_override: Some(d),
            ..Entry::new(tag, Kind::Smem, lanes)
        }
    }
}

/// An entry inside the pipeline: what the latches and FIFOs need of an [`Entry`] (spec §2):
/// its tag, its kind and its MEM0 service cycles c (D7). c depends on the entry alone, so it
/// is computed once, when the entry is loaded into F.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InFlight {
    pub tag: u32,
    pub kind: Kind,
    /// Service cycles c in MEM0 (≥ 1).
    pub cycles: u32,
}

impl InFlight {
    pub fn of(cfg: &Cfg, e: &Entry) -> InFlight {
        InFlight {
            tag: e.tag,
            kind: e.kind,
            cycles: service_cycles(cfg, e),
        }
    }
}

/// The detector configuration MEM0 instantiates (spec §2 "Conflict detector"): W = N = M = 4,
/// so a lane's byte address is 4 × its word address.
pub fn detector_cfg(p: &Params) -> Cfg {
    Cfg {
        lanes: p.lanes,
        banks: p.banks,
        layer_bytes: 4,
        mode_bytes: 4,
        elem_bytes: 4,
        ports: p.ports,
        mode: p.broadcast,
    }
}

/// Conflict degree d of an SMEM entry: the override, else the detector's degree over the active
/// lanes (an entry with no active lane has d = 1, D6).
pub fn degree(cfg: &Cfg, e: &Entry) -> u32 {
    e.deg_override.unwrap_or_else(|| {
        let bytes: Lanes<u64> = e.addrs.iter().map(|&w| 4 * w as u64).collect();
        degree_of(cfg, &e.act, &bytes).degree
    })
}

/// Service cycles c in MEM0: ⌈d/P⌉ for SMEM, 1 for every other kind (spec §2, D7).
pub fn service_cycles(cfg: &Cfg, e: &Entry) -> u32 {
    match e.kind {
        Kind::Smem => degree(cfg, e).div_ceil(cfg.ports),
        _ => 1,
    }
}
