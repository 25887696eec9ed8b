//! The Alembic object and property layers over Ogawa (AbcCoreOgawa, Alembic 1.x).
//!
//! ```text
//! root group   = archive version (data, i32) · library version (data, i32)
//!                · top object (group) · archive metadata (data, string)
//!                · time samplings (data) · indexed metadata (data)
//! object group = properties (compound group) · child objects (groups) …
//!                · child object headers (data; its last 32 bytes are hashes)
//! compound     = sub-properties (groups, in header order) · property headers (data)
//! scalar prop  = one data block per stored sample
//! array prop   = data and dimensions (two data blocks) per stored sample
//! sample data  = 16-byte key (hash) · values (little-endian PODs; strings NUL-ended)
//! ```
//! Object header: name size (u32), name, metadata index (u8; 0xff: size u32 and the
//! metadata string follow). Property header: an info word (u32) — bits 0–1 kind
//! (compound, scalar, array), 2–3 the width of the numbers that follow (u8, u16, u32),
//! 4–7 POD type, 8 has a time-sampling index, 9 has first/last changed indices, 11 all
//! samples equal, 12–19 extent, 20–27 metadata index — then the sample count, the
//! first/last changed indices and the time-sampling index when flagged, the name size and
//! name, and the metadata size and string when the index is 0xff. Stored sample `i` of a
//! property with first/last changed indices `f`, `l` is slot 0 for `i < f` (and for a
//! constant property), `l − f + 1` for `i ≥ l`, else `i − f + 1`.
//!
//! Time sampling: per sampling, the max sample count (u32), time per cycle (f64), the
//! number of times per cycle `N` (u32) and `N` times (f64). Sample `i` is at
//! `t₀ + tpc·i` (uniform, `N = 1`), `t_{i mod N} + tpc·⌊i/N⌋` (cyclic) or `t_i` (acyclic,
//! `tpc = f64::MAX / 32`). Metadata strings are `key=value` pairs separated by `;`.
use super::ogawa::{u32_at, Child, Ogawa};
use super::pod::{number, Pod};
use std::collections::HashMap;

/// `tpc` of acyclic time samplings.
const ACYCLIC_TPC: f64 = f64::MAX / 32.0;
/// Newest archive layout version read.
const MAX_ARCHIVE_VERSION: i32 = 1;

/// `key=value;...` metadata.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetaData(HashMap<String, String>);

impl MetaData {
    /// Parses a metadata string.
    pub fn parse(bytes: &[u8]) -> MetaData {
        let text = String::from_utf8_lossy(bytes);
        MetaData(
            text.split(';')
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }
}

/// How an archive maps sample indices to times (s).
#[derive(Debug, Clone, PartialEq)]
pub struct TimeSampling {
    /// Time per cycle (s); [`ACYCLIC_TPC`] for acyclic samplings.
    pub tpc: f64,
    /// The times of the first cycle (all times for acyclic samplings).
    pub times: Vec<f64>,
}

impl TimeSampling {
    /// True if the times are listed one by one.
    pub fn is_acyclic(&self) -> bool {
        self.tpc >= ACYCLIC_TPC
    }

    /// Time (s) of sample `i`; `None` past the listed times of an acyclic sampling.
    pub fn time(&self, i: u32) -> Option<f64> {
        let n = self.times.len();
        if self.is_acyclic() {
            return self.times.get(i as usize).copied();
        }
        let i = i as usize;
        Some(self.times[i % n] + self.tpc * (i / n) as f64)
    }
}

/// The kind of a property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Holds other properties.
    Compound,
    /// One value (of `extent` PODs) per sample.
    Scalar,
    /// An array of values per sample.
    Array,
}

/// A property's header.
#[derive(Debug, Clone)]
pub struct PropertyHeader {
    /// Its name.
    pub name: String,
    /// Compound, scalar or array.
    pub kind: Kind,
    /// Its POD type (compounds: none).
    pub pod: Option<Pod>,
    /// PODs per value.
    pub extent: usize,
    /// Number of samples.
    pub samples: u32,
    /// First sample that differs from sample 0 (0 when constant).
    pub first_changed: u32,
    /// Last sample that differs from the one before.
    pub last_changed: u32,
    /// Index of its time sampling in the archive.
    pub time_sampling: u32,
    /// Its metadata.
    pub meta: MetaData,
}

impl PropertyHeader {
    /// True if every sample equals the first.
    pub fn is_constant(&self) -> bool {
        self.first_changed == 0 && self.last_changed == 0
    }

    /// The stored slot of sample `i` (see the module doc).
    pub fn slot(&self, i: u32) -> usize {
        let (f, l, i) = (
            i64::from(self.first_changed),
            i64::from(self.last_changed),
            i64::from(i),
        );
        if i < f || self.is_constant() {
            0
        } else {
            (i.min(l) - f + 1).max(0) as usize
        }
    }
}

/// A compound property: its headers and the groups of its sub-properties.
#[derive(Debug, Clone, Default)]
pub struct Compound {
    /// Headers in stored order.
    pub headers: Vec<PropertyHeader>,
    children: Vec<Child>,
}

/// A readable Alembic archive.
#[derive(Debug)]
pub struct Archive<'a> {
    og: Ogawa<'a>,
    /// Time samplings by index (index 0 is the identity: t = i s).
    pub time_samplings: Vec<TimeSampling>,
    metadata: Vec<MetaData>,
    /// Archive metadata.
    pub meta: MetaData,
    top: Vec<Child>,
}

/// An object: its name, metadata and group.
#[derive(Debug, Clone)]
pub struct Object {
    /// Its name.
    pub name: String,
    /// Its full path (`/a/b`).
    pub path: String,
    /// Its metadata (`schema=...`).
    pub meta: MetaData,
    children: Vec<Child>,
}

fn i32_of(d: &[u8]) -> Option<i32> {
    (d.len() == 4).then(|| i32::from_le_bytes([d[0], d[1], d[2], d[3]]))
}

fn f64_at(b: &[u8], pos: usize) -> Option<f64> {
    super::ogawa::u64_at(b, pos).map(f64::from_bits)
}

/// Reads a `u8`, `u16` or `u32` (`hint` 0, 1, 2) at `*pos`.
fn uint_with_hint(buf: &[u8], hint: u32, pos: &mut usize) -> Result<u32, String> {
    let width = match hint {
        0 => 1,
        1 => 2,
        2 => 4,
        _ => return Err("a property header has a bad number width".into()),
    };
    let b = buf
        .get(*pos..*pos + width)
        .ok_or("the property headers end in the middle of a header")?;
    *pos += width;
    Ok(match width {
        1 => u32::from(b[0]),
        2 => u32::from(u16::from_le_bytes([b[0], b[1]])),
        _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
    })
}

impl<'a> Archive<'a> {
    /// Opens the archive of `bytes`.
    pub fn open(bytes: &'a [u8]) -> Result<Archive<'a>, String> {
        let og = Ogawa::open(bytes)?;
        let root = og.root()?;
        let shape_ok = root.len() > 5
            && matches!(
                root[..6],
                [
                    Child::Data(_),
                    Child::Data(_),
                    Child::Group(_),
                    Child::Data(_),
                    Child::Data(_),
                    Child::Data(_)
                ]
            );
        if !shape_ok {
            return Err("its root group is not an Alembic archive's".into());
        }
        let version = i32_of(og.child_data(&root, 0, "the archive version")?);
        if !matches!(version, Some(v) if (0..=MAX_ARCHIVE_VERSION).contains(&v)) {
            return Err(format!(
                "archive version {version:?}; drape reads versions 0 to {MAX_ARCHIVE_VERSION}"
            ));
        }
        let time_samplings = read_time_samplings(og.child_data(&root, 4, "the time samplings")?)?;
        let metadata = read_indexed_metadata(og.child_data(&root, 5, "the indexed metadata")?)?;
        let meta = MetaData::parse(og.child_data(&root, 3, "the archive metadata")?);
        let top = og.child_group(&root, 2, "the top object")?;
        Ok(Archive {
            og,
            time_samplings,
            metadata,
            meta,
            top,
        })
    }

    /// The top object (`/`).
    pub fn top(&self) -> Object {
        Object {
            name: String::new(),
            path: String::new(),
            meta: MetaData::default(),
            children: self.top.clone(),
        }
    }

    /// The child objects of `obj`.
    pub fn children(&self, obj: &Object) -> Result<Vec<Object>, String> {
        let n = obj.children.len();
        let Some(&Child::Data(pos)) = obj.children.last() else {
            return Ok(Vec::new());
        };
        let data = self.og.data(pos)?;
        let what = str::to_string;
        if data.len() <= 32 {
            return Ok(Vec::new());
        }
        let buf = &data[..data.len() - 32];
        let mut out = Vec::new();
        let mut p = 0;
        while p < buf.len() {
            let size =
                u32_at(buf, p).ok_or_else(|| what("a child's header is cut short"))? as usize;
            p += 4;
            let name = buf
                .get(p..p.saturating_add(size))
                .filter(|_| size > 0)
                .ok_or_else(|| what("a child's name is cut short"))?;
            let name = String::from_utf8_lossy(name).into_owned();
            p += size;
            let index = *buf
                .get(p)
                .ok_or_else(|| what("a child's header is cut short"))?;
            p += 1;
            let meta = if index == 0xff {
                let size =
                    u32_at(buf, p).ok_or_else(|| what("a child's metadata is cut short"))? as usize;
                p += 4;
                let m = buf
                    .get(p..p.saturating_add(size))
                    .ok_or_else(|| what("a child's metadata is cut short"))?;
                p += size;
                MetaData::parse(m)
            } else {
                self.metadata.get(index as usize).cloned().ok_or_else(|| {
                    what(&format!(
                        "child {name} names metadata {index}, which the archive lacks"
                    ))
                })?
            };
            let k = out.len() + 1;
            let children = match obj.children.get(k) {
                Some(Child::Group(g)) if k < n - 1 => self.og.group(*g)?,
                _ => return Err(what(&format!("child {name} has no group"))),
            };
            out.push(Object {
                path: format!("{}/{name}", obj.path),
                name,
                meta,
                children,
            });
        }
        Ok(out)
    }

    /// The group offset of object `obj`'s child `k` (to detect shared groups).
    pub fn child_offset(&self, obj: &Object, k: usize) -> Option<u64> {
        match obj.children.get(k + 1) {
            Some(Child::Group(g)) => Some(*g),
            _ => None,
        }
    }

    /// The properties of `obj` (its top compound).
    pub fn properties(&self, obj: &Object) -> Result<Compound, String> {
        match obj.children.first() {
            Some(Child::Group(g)) => self.compound(*g),
            _ => Ok(Compound::default()),
        }
    }

    fn compound(&self, pos: u64) -> Result<Compound, String> {
        let children = self.og.group(pos)?;
        let Some(&Child::Data(h)) = children.last() else {
            return Ok(Compound::default());
        };
        let headers = self.property_headers(self.og.data(h)?)?;
        if headers.len() >= children.len() {
            return Err(format!(
                "a compound property lists {} properties but holds {}",
                headers.len(),
                children.len() - 1
            ));
        }
        Ok(Compound { headers, children })
    }

    fn property_headers(&self, buf: &[u8]) -> Result<Vec<PropertyHeader>, String> {
        let mut out = Vec::new();
        let mut p = 0;
        while p < buf.len() {
            let info =
                u32_at(buf, p).ok_or("the property headers end in the middle of a header")?;
            p += 4;
            let kind = match info & 3 {
                0 => Kind::Compound,
                1 => Kind::Scalar,
                _ => Kind::Array,
            };
            let hint = (info >> 2) & 3;
            let mut h = PropertyHeader {
                name: String::new(),
                kind,
                pod: None,
                extent: 0,
                samples: 0,
                first_changed: 0,
                last_changed: 0,
                time_sampling: 0,
                meta: MetaData::default(),
            };
            if kind != Kind::Compound {
                let code = (info >> 4) & 0xf;
                h.pod = Some(Pod::of(code).ok_or(format!("a property has unknown type {code}"))?);
                h.extent = ((info >> 12) & 0xff) as usize;
                h.samples = uint_with_hint(buf, hint, &mut p)?;
                if info & 0x200 != 0 {
                    h.first_changed = uint_with_hint(buf, hint, &mut p)?;
                    h.last_changed = uint_with_hint(buf, hint, &mut p)?;
                } else if info & 0x800 == 0 {
                    h.first_changed = 1;
                    h.last_changed = h.samples.saturating_sub(1);
                }
                if info & 0x100 != 0 {
                    h.time_sampling = uint_with_hint(buf, hint, &mut p)?;
                }
                if h.time_sampling as usize >= self.time_samplings.len() {
                    return Err(format!(
                        "a property uses time sampling {}, which the archive lacks",
                        h.time_sampling
                    ));
                }
            }
            let size = uint_with_hint(buf, hint, &mut p)? as usize;
            let name = buf
                .get(p..p.saturating_add(size))
                .filter(|_| size > 0)
                .ok_or("a property name is cut short")?;
            h.name = String::from_utf8_lossy(name).into_owned();
            p += size;
            let index = (info >> 20) & 0xff;
            h.meta = if index == 0xff {
                let size = uint_with_hint(buf, hint, &mut p)? as usize;
                let m = buf
                    .get(p..p.saturating_add(size))
                    .ok_or("a property's metadata is cut short")?;
                p += size;
                MetaData::parse(m)
            } else {
                self.metadata.get(index as usize).cloned().ok_or(format!(
                    "property {} names metadata {index}, which the archive lacks",
                    h.name
                ))?
            };
            out.push(h);
        }
        Ok(out)
    }

    /// The time sampling of `h`.
    pub fn time_sampling(&self, h: &PropertyHeader) -> &TimeSampling {
        &self.time_samplings[h.time_sampling as usize]
    }

    /// Raw value bytes (key dropped) of sample `i` of the scalar or array property `name`.
    fn sample_bytes(&self, c: &Compound, k: usize, i: u32) -> Result<&'a [u8], String> {
        let h = &c.headers[k];
        if i >= h.samples {
            return Err(format!("property {} has no sample {i}", h.name));
        }
        let group = match c.children.get(k) {
            Some(Child::Group(g)) => self.og.group(*g)?,
            _ => return Err(format!("property {} has no group", h.name)),
        };
        let slot = h.slot(i) * if h.kind == Kind::Array { 2 } else { 1 };
        let data = match group.get(slot) {
            Some(Child::Data(d)) => self.og.data(*d)?,
            _ => return Err(format!("property {}: sample {i} is missing", h.name)),
        };
        match data.len() {
            0 => Ok(&[]),
            1..=15 => Err(format!(
                "property {}: sample {i} is shorter than its key",
                h.name
            )),
            _ => Ok(&data[16..]),
        }
    }
}

impl Compound {
    /// The index and header of the property `name`.
    pub fn find(&self, name: &str) -> Option<(usize, &PropertyHeader)> {
        self.headers
            .iter()
            .enumerate()
            .find(|(_, h)| h.name == name)
    }

    /// The compound sub-property `name`, if it is one.
    pub fn compound(&self, ar: &Archive, name: &str) -> Result<Option<Compound>, String> {
        match self.find(name) {
            Some((k, h)) if h.kind == Kind::Compound => match self.children.get(k) {
                Some(Child::Group(g)) => ar.compound(*g).map(Some),
                _ => Err(format!("compound property {name} has no group")),
            },
            _ => Ok(None),
        }
    }

    /// Sample `i` of property `k` as numbers (strings refused).
    pub fn numbers(&self, ar: &Archive, k: usize, i: u32) -> Result<Vec<f64>, String> {
        let h = &self.headers[k];
        let pod = h
            .pod
            .ok_or(format!("property {} holds no numbers", h.name))?;
        let bytes = ar.sample_bytes(self, k, i)?;
        let size = pod.size();
        if size == 0 {
            return Err(format!("property {} holds strings, not numbers", h.name));
        }
        if bytes.len() % size != 0 {
            return Err(format!(
                "property {}: sample {i} has {} bytes, not a whole number of values",
                h.name,
                bytes.len()
            ));
        }
        Ok(bytes.chunks_exact(size).map(|b| number(pod, b)).collect())
    }

    /// Sample `i` of property `k` as strings.
    pub fn strings(&self, ar: &Archive, k: usize, i: u32) -> Result<Vec<String>, String> {
        let h = &self.headers[k];
        if h.pod != Some(Pod::String) {
            return Err(format!("property {} does not hold strings", h.name));
        }
        let bytes = ar.sample_bytes(self, k, i)?;
        Ok(bytes
            .split(|&b| b == 0)
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .take(bytes.iter().filter(|&&b| b == 0).count())
            .collect())
    }

    /// True if samples `a` and `b` of property `k` are stored in the same bytes.
    pub fn same_sample(&self, ar: &Archive, k: usize, a: u32, b: u32) -> Result<bool, String> {
        Ok(ar.sample_bytes(self, k, a)? == ar.sample_bytes(self, k, b)?)
    }
}

fn read_time_samplings(buf: &[u8]) -> Result<Vec<TimeSampling>, String> {
    let mut out = Vec::new();
    let mut p = 0;
    while p < buf.len() {
        let bad = || "the time samplings are cut short".to_string();
        let tpc = f64_at(buf, p + 4).ok_or_else(bad)?;
        let n = u32_at(buf, p + 12).ok_or_else(bad)? as usize;
        p += 16;
        if n == 0 || n > (buf.len() - p) / 8 {
            return Err(bad());
        }
        let times: Vec<f64> = (0..n)
            .map(|k| f64_at(buf, p + 8 * k).unwrap_or(0.0))
            .collect();
        p += 8 * n;
        if tpc.is_nan() || tpc <= 0.0 || times.iter().any(|t| !t.is_finite()) {
            return Err(format!(
                "time sampling {} has a time per cycle {tpc} or times that are not finite",
                out.len()
            ));
        }
        out.push(TimeSampling { tpc, times });
    }
    if out.is_empty() {
        out.push(TimeSampling {
            tpc: 1.0,
            times: vec![0.0],
        });
    }
    Ok(out)
}

fn read_indexed_metadata(buf: &[u8]) -> Result<Vec<MetaData>, String> {
    let mut out = vec![MetaData::default()];
    let mut p = 0;
    while p < buf.len() {
        let size = buf[p] as usize;
        p += 1;
        let m = buf
            .get(p..p + size)
            .ok_or("the indexed metadata is cut short")?;
        p += size;
        out.push(MetaData::parse(m));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_samplings_give_uniform_cyclic_and_acyclic_times() {
        let uniform = TimeSampling {
            tpc: 0.5,
            times: vec![1.0],
        };
        assert_eq!(uniform.time(4), Some(3.0));
        let cyclic = TimeSampling {
            tpc: 1.0,
            times: vec![0.0, 0.25],
        };
        assert_eq!(cyclic.time(3), Some(1.25));
        let acyclic = TimeSampling {
            tpc: ACYCLIC_TPC,
            times: vec![0.0, 7.0],
        };
        assert_eq!((acyclic.time(1), acyclic.time(2)), (Some(7.0), None));
    }

    #[test]
    fn slots_follow_the_changed_range() {
        let mut h = PropertyHeader {
            name: "P".into(),
            kind: Kind::Array,
            pod: Some(Pod::Float { bytes: 4 }),
            extent: 3,
            samples: 10,
            first_changed: 2,
            last_changed: 5,
            time_sampling: 0,
            meta: MetaData::default(),
        };
        let slots: Vec<usize> = (0..10).map(|i| h.slot(i)).collect();
        assert_eq!(slots, vec![0, 0, 1, 2, 3, 4, 4, 4, 4, 4]);
        h.first_changed = 0;
        h.last_changed = 0;
        assert!((0..10).all(|i| h.slot(i) == 0));
    }

    #[test]
    fn metadata_splits_pairs() {
        let m = MetaData::parse(b"schema=AbcGeom_Xform_v3;geoScope=fvr");
        assert_eq!(m.get("schema"), Some("AbcGeom_Xform_v3"));
        assert_eq!(m.get("geoScope"), Some("fvr"));
        assert_eq!(m.get("x"), None);
    }
}
