//! The Alembic layer on top of Ogawa (AbcCoreOgawa, file version 0): how objects,
//! properties, samples, metadata and time samplings are laid out in groups and data.
//!
//! ```text
//! archive (root group): [ data i32 0 (file version), data i32 library version,
//!                         group top object, data archive metadata,
//!                         data time samplings, data indexed metadata ]
//! object group:   [ group of its properties (a compound), group per child object...,
//!                   data: child object headers + 32 bytes of digests ]
//! compound group: [ group or data per property..., data: property headers ]
//! array property: [ per stored sample: data (16-byte key + values), data dimensions ]
//! scalar property:[ per stored sample: data (16-byte key + value) ]
//! ```
//! A sample's key is [`super::ogawa::murmur3_x64_128`] of its bytes; empty dimensions
//! mean "one dimension, from the data size". Metadata is `key=value` pairs joined by `;`
//! in key order; strings under 256 bytes are listed once in the archive's indexed
//! metadata and referred to by index (0 is the empty metadata, 255 "written inline").
//! A property header starts with a 32-bit info word:
//!
//! ```text
//! bits 0-1   property type: 0 compound, 1 scalar, 2 array (3: array of one-value samples)
//! bits 2-3   size hint of the integers that follow: 0 u8, 1 u16, 2 u32
//! bits 4-7   POD type (Pod)            bit 8   time sampling index follows
//! bit 9      first/last changed sample indices follow
//! bit 10     every sample has the same number of values (homogeneous)
//! bit 11     every sample equals the first (constant)
//! bits 12-19 extent (values per element)  bits 20-27 metadata index
//! ```
//! then (not for compounds) the sample count, [first and last changed], [time sampling
//! index], then the name's length and bytes, then the metadata if its index is 255.
//! Samples before the first changed index read as sample 0, after the last as the last.
//! A time sampling is `u32 max samples, f64 time per cycle, u32 n, n × f64 times`;
//! index 0 is always the identity sampling (1 s per sample from time 0).
use std::collections::HashMap;

/// The value types ("plain old data") of Alembic properties used here, by their code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pod {
    /// `bool_t`, one byte.
    Bool = 0,
    /// `uint32_t`.
    U32 = 5,
    /// `int32_t`.
    I32 = 6,
    /// `float32_t`.
    F32 = 10,
    /// `float64_t`.
    F64 = 11,
}

/// What a property is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A compound of other properties.
    Compound,
    /// One value of `extent` PODs per sample.
    Scalar,
    /// An array of values of `extent` PODs per sample.
    Array,
}

/// `key=value` pairs serialised as Alembic stores metadata: sorted by key, `;` between.
pub fn metadata(pairs: &[(&str, &str)]) -> String {
    let mut sorted = pairs.to_vec();
    sorted.sort();
    sorted
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// The archive's indexed metadata: short strings listed once, referred to by index.
#[derive(Debug, Default, Clone)]
pub struct MetaIndex {
    strings: Vec<String>,
    index: HashMap<String, u8>,
}

/// Metadata index meaning "the string is written in the header itself".
const INLINE: u8 = 255;

impl MetaIndex {
    /// The index of `md`, listing it if it is new: 0 for the empty string, 1..=254 for
    /// a listed string, 255 for one too long (256 bytes or more) or past the 254th.
    pub fn index(&mut self, md: &str) -> u8 {
        if md.is_empty() {
            return 0;
        }
        if let Some(&i) = self.index.get(md) {
            return i;
        }
        if md.len() >= 256 || self.strings.len() >= 254 {
            return INLINE;
        }
        self.strings.push(md.to_string());
        let i = self.strings.len() as u8;
        self.index.insert(md.to_string(), i);
        i
    }

    /// The indexed metadata data: per string, its length (u8) and bytes.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for s in &self.strings {
            out.push(s.len() as u8);
            out.extend_from_slice(s.as_bytes());
        }
        out
    }
}

/// The header of one property as its compound lists it.
#[derive(Debug, Clone)]
pub struct PropertyHeader {
    /// Property name (`P`, `.faceIndices`, ...).
    pub name: String,
    /// Compound, scalar or array.
    pub kind: Kind,
    /// POD type of the values (ignored for compounds).
    pub pod: Pod,
    /// PODs per value: 3 for a point, 2 for a UV, 6 for a box.
    pub extent: u8,
    /// Serialised metadata ([`metadata`]).
    pub metadata: String,
    /// Index of its time sampling in the archive's list.
    pub time_sampling: u32,
    /// Samples the property has (read back by index `0..samples`).
    pub samples: u32,
    /// Stored samples: each of the `samples` is stored (`true`), or the first is stored
    /// and stands for all (`false`: constant).
    pub animated: bool,
    /// Every sample holds one value (an array read as a scalar).
    pub scalar_like: bool,
}

impl PropertyHeader {
    /// A compound property named `name` with `metadata`.
    pub fn compound(name: &str, metadata: String) -> Self {
        PropertyHeader {
            name: name.to_string(),
            kind: Kind::Compound,
            pod: Pod::Bool,
            extent: 0,
            metadata,
            time_sampling: 0,
            samples: 0,
            animated: false,
            scalar_like: false,
        }
    }

    /// Appends the header's encoding (module doc) to `out`.
    pub fn write(&self, out: &mut Vec<u8>, index: &mut MetaIndex) {
        let md_index = index.index(&self.metadata);
        let longest = [
            self.metadata.len() as u64,
            self.name.len() as u64,
            u64::from(self.samples),
            u64::from(self.time_sampling),
        ]
        .into_iter()
        .max()
        .unwrap_or(0);
        let hint: u32 = match longest {
            0..=255 => 0,
            256..=65535 => 1,
            _ => 2,
        };
        let mut info = (hint << 2) | (u32::from(md_index) << 20);
        // First and last changed sample: both 0 when constant, else 1 and the last.
        let constant = !self.animated || self.samples <= 1;
        if self.kind != Kind::Compound {
            info |= match self.kind {
                Kind::Scalar => 1,
                _ => 2 | u32::from(self.scalar_like),
            };
            info |= (self.pod as u32) << 4;
            if self.time_sampling != 0 {
                info |= 0x100;
            }
            if constant {
                info |= 0x800;
            }
            info |= 0x400; // homogeneous: every sample has the same number of values
            info |= u32::from(self.extent) << 12;
            out.extend_from_slice(&info.to_le_bytes());
            push_hinted(out, self.samples, hint);
            if self.time_sampling != 0 {
                push_hinted(out, self.time_sampling, hint);
            }
        } else {
            out.extend_from_slice(&info.to_le_bytes());
        }
        push_hinted(out, self.name.len() as u32, hint);
        out.extend_from_slice(self.name.as_bytes());
        if md_index == INLINE {
            push_hinted(out, self.metadata.len() as u32, hint);
            out.extend_from_slice(self.metadata.as_bytes());
        }
    }
}

/// `v` as 1, 2 or 4 little-endian bytes (size hint 0, 1, 2).
fn push_hinted(out: &mut Vec<u8>, v: u32, hint: u32) {
    let bytes = v.to_le_bytes();
    out.extend_from_slice(&bytes[..[1, 2, 4][hint as usize]]);
}

/// Appends one child object's header: name length (u32) and bytes, metadata index (u8),
/// and the metadata (u32 length and bytes) if it is not indexed.
pub fn write_object_header(out: &mut Vec<u8>, name: &str, md: &str, index: &mut MetaIndex) {
    out.extend_from_slice(&(name.len() as u32).to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    let i = index.index(md);
    out.push(i);
    if i == INLINE {
        out.extend_from_slice(&(md.len() as u32).to_le_bytes());
        out.extend_from_slice(md.as_bytes());
    }
}

/// Appends one uniform time sampling: `max_samples` (samples of its longest property),
/// one sample every `per_sample` seconds from `start` seconds.
pub fn write_time_sampling(out: &mut Vec<u8>, max_samples: u32, per_sample: f64, start: f64) {
    out.extend_from_slice(&max_samples.to_le_bytes());
    out.extend_from_slice(&per_sample.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&start.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_sorted_by_key_and_indexed_once() {
        let md = metadata(&[("interpretation", "point"), ("geoScope", "vtx")]);
        assert_eq!(md, "geoScope=vtx;interpretation=point");
        let mut index = MetaIndex::default();
        assert_eq!(index.index(""), 0);
        assert_eq!(index.index(&md), 1);
        assert_eq!(index.index("a=b"), 2);
        assert_eq!(index.index(&md), 1);
        assert_eq!(index.index(&"x".repeat(300)), INLINE);
        let mut want = vec![md.len() as u8];
        want.extend_from_slice(md.as_bytes());
        want.extend_from_slice(&[3, b'a', b'=', b'b']);
        assert_eq!(index.bytes(), want);
    }

    #[test]
    fn an_animated_point_array_header_has_the_documented_bits() {
        let h = PropertyHeader {
            name: "P".into(),
            kind: Kind::Array,
            pod: Pod::F32,
            extent: 3,
            metadata: "geoScope=vtx;interpretation=point".into(),
            time_sampling: 1,
            samples: 300,
            animated: true,
            scalar_like: false,
        };
        let mut index = MetaIndex::default();
        let mut out = Vec::new();
        h.write(&mut out, &mut index);
        let info = u32::from_le_bytes(out[..4].try_into().unwrap());
        assert_eq!(info & 3, 2, "array");
        assert_eq!((info >> 2) & 3, 1, "300 samples need u16 integers");
        assert_eq!((info >> 4) & 0xf, 10, "float32");
        assert_eq!(info & 0x100, 0x100, "time sampling index follows");
        assert_eq!(
            info & 0xa00,
            0,
            "every sample stored: no first/last, not constant"
        );
        assert_eq!((info >> 12) & 0xff, 3);
        assert_eq!(info >> 20, 1, "first indexed metadata");
        assert_eq!(&out[4..], &[44, 1, 1, 0, 1, 0, b'P']);
    }

    #[test]
    fn a_constant_property_and_a_compound_carry_only_what_they_need() {
        let mut index = MetaIndex::default();
        let mut out = Vec::new();
        let mut h = PropertyHeader::compound(".geom", String::new());
        h.write(&mut out, &mut index);
        assert_eq!(out, [0, 0, 0, 0, 5, b'.', b'g', b'e', b'o', b'm']);
        out.clear();
        h = PropertyHeader {
            kind: Kind::Array,
            pod: Pod::I32,
            extent: 1,
            samples: 4,
            ..PropertyHeader::compound(".faceCounts", String::new())
        };
        h.write(&mut out, &mut index);
        let info = u32::from_le_bytes(out[..4].try_into().unwrap());
        assert_eq!(info, 2 | (6 << 4) | 0x800 | 0x400 | (1 << 12));
        assert_eq!(out[4], 4, "sample count");
        assert_eq!(out[5] as usize, ".faceCounts".len());
    }
}
