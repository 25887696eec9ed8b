//! The Ogawa container: the byte layer of an Alembic archive (Alembic 1.5 and later).
//!
//! ```text
//! offset 0   char[5] "Ogawa"
//!        5   u8      frozen flag: 0xff once the archive is complete, 0x00 while written
//!        6   u8[2]   format version, big-endian: 0x00 0x01
//!        8   u64     position of the root group
//!        16  groups and data, anywhere after the header
//!
//! group:  u64 n, then n u64 child references
//! data:   u64 size, then size bytes
//! child reference: the position of a group, or the position of a data with the top
//!         bit set; 0 is an empty group and 0x8000_0000_0000_0000 an empty data
//! ```
//! Every integer is little-endian. A group's children are ordered; what they mean is
//! the Alembic layer's business ([`super::schema`]). Nothing points backwards or forwards
//! by necessity: a writer may put a group after its children (as Alembic does) or patch a
//! child reference in place, and a reader follows the references from the root only.
//! Bytes no reference reaches are ignored.
//!
//! [`Block`] lays out groups and data to be written at a known file position and hands
//! back their child references; [`murmur3_x64_128`] is the digest Alembic stores in
//! front of every property sample.

/// The header's magic bytes.
pub const MAGIC: &[u8; 5] = b"Ogawa";
/// Header size in bytes; the first group or data starts here.
pub const HEADER_LEN: u64 = 16;
/// Byte offset of the frozen flag.
pub const FROZEN_AT: u64 = 5;
/// Value of the frozen flag of a complete archive (Alembic's reader refuses any other).
pub const FROZEN: u8 = 0xff;
/// Byte offset of the root group's position.
pub const ROOT_AT: u64 = 8;
/// Top bit of a child reference: the child is a data, not a group.
pub const DATA_BIT: u64 = 1 << 63;
/// Child reference of an empty group.
pub const EMPTY_GROUP: u64 = 0;
/// Child reference of an empty data.
pub const EMPTY_DATA: u64 = DATA_BIT;

/// The 16-byte header: magic, frozen flag, version 1, root group position.
pub fn header(frozen: u8, root: u64) -> [u8; 16] {
    let mut h = [0u8; 16];
    h[..5].copy_from_slice(MAGIC);
    h[5] = frozen;
    h[6..8].copy_from_slice(&[0, 1]);
    h[8..].copy_from_slice(&root.to_le_bytes());
    h
}

/// Groups and data laid out for one contiguous write at file position `at`.
#[derive(Debug)]
pub struct Block {
    at: u64,
    /// The bytes to write at `at`.
    pub bytes: Vec<u8>,
}

impl Block {
    /// An empty block to be written at file position `at`.
    pub fn new(at: u64) -> Self {
        Block {
            at,
            bytes: Vec::new(),
        }
    }

    /// File position just after the block.
    pub fn end(&self) -> u64 {
        self.at + self.bytes.len() as u64
    }

    /// Adds a data made of `parts` one after the other; returns its child reference
    /// ([`EMPTY_DATA`] if it holds no byte: nothing is written then).
    pub fn data(&mut self, parts: &[&[u8]]) -> u64 {
        let size: usize = parts.iter().map(|p| p.len()).sum();
        if size == 0 {
            return EMPTY_DATA;
        }
        let at = self.end();
        self.bytes.extend_from_slice(&(size as u64).to_le_bytes());
        for p in parts {
            self.bytes.extend_from_slice(p);
        }
        at | DATA_BIT
    }

    /// Adds a group of `children` (child references); returns its reference
    /// ([`EMPTY_GROUP`] if it has no child: nothing is written then). Child `i`'s
    /// reference lies at [`slot`]`(group, i)`.
    pub fn group(&mut self, children: &[u64]) -> u64 {
        if children.is_empty() {
            return EMPTY_GROUP;
        }
        let at = self.end();
        self.bytes
            .extend_from_slice(&(children.len() as u64).to_le_bytes());
        for c in children {
            self.bytes.extend_from_slice(&c.to_le_bytes());
        }
        at
    }
}

/// File position of child `i`'s reference in the group at `group`.
pub fn slot(group: u64, i: usize) -> u64 {
    group + 8 + 8 * i as u64
}

/// MurmurHash3, x64 128-bit variant, seed 0 (Austin Appleby's public-domain hash): the
/// key Alembic stores in the first 16 bytes of every sample (two little-endian u64,
/// `h1` then `h2`), computed over the sample's bytes as stored.
pub fn murmur3_x64_128(bytes: &[u8]) -> [u8; 16] {
    const C1: u64 = 0x87c3_7b91_1142_53d5;
    const C2: u64 = 0x4cf5_ad43_2745_937f;
    let mix1 = |k: u64| k.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
    let mix2 = |k: u64| k.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
    let fmix = |mut k: u64| {
        k ^= k >> 33;
        k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
        k ^= k >> 33;
        k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        k ^ (k >> 33)
    };
    let (mut h1, mut h2) = (0u64, 0u64);
    let mut blocks = bytes.chunks_exact(16);
    for b in &mut blocks {
        let k1 = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
        let k2 = u64::from_le_bytes(b[8..].try_into().unwrap_or_default());
        h1 ^= mix1(k1);
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        h2 ^= mix2(k2);
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }
    let tail = blocks.remainder();
    let word = |bytes: &[u8]| {
        bytes
            .iter()
            .enumerate()
            .fold(0u64, |k, (i, &b)| k ^ (u64::from(b) << (8 * i)))
    };
    if tail.len() > 8 {
        h2 ^= mix2(word(&tail[8..]));
    }
    if !tail.is_empty() {
        h1 ^= mix1(word(&tail[..tail.len().min(8)]));
    }
    let len = bytes.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix(h1);
    h2 = fmix(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&h1.to_le_bytes());
    out[8..].copy_from_slice(&h2.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_layout_is_magic_flag_version_root() {
        let h = header(FROZEN, 0x0102_0304);
        assert_eq!(&h[..5], b"Ogawa");
        assert_eq!(h[5], 0xff);
        assert_eq!(&h[6..8], &[0, 1]);
        assert_eq!(u64::from_le_bytes(h[8..].try_into().unwrap()), 0x0102_0304);
    }

    #[test]
    fn block_references_point_at_size_prefixed_data_and_counted_groups() {
        let mut b = Block::new(16);
        let d = b.data(&[b"ab", b"c"]);
        assert_eq!(d, 16 | DATA_BIT);
        assert_eq!(b.data(&[]), EMPTY_DATA);
        let g = b.group(&[d, EMPTY_GROUP]);
        assert_eq!(g, 16 + 8 + 3);
        assert_eq!(b.group(&[]), EMPTY_GROUP);
        let at = |p: u64| (p - 16) as usize;
        assert_eq!(&b.bytes[..8], &3u64.to_le_bytes());
        assert_eq!(&b.bytes[8..11], b"abc");
        assert_eq!(&b.bytes[at(g)..at(g) + 8], &2u64.to_le_bytes());
        let s = at(slot(g, 0));
        assert_eq!(&b.bytes[s..s + 8], &d.to_le_bytes());
        assert_eq!(b.end(), 16 + 11 + 24);
    }

    #[test]
    fn murmur3_matches_the_reference_vectors() {
        // Outputs of the reference implementation (seed 0) as 16 bytes, h1 then h2
        // little-endian: the empty input, a tail only, one block + a 9-byte tail, two
        // blocks + an 11-byte tail.
        assert_eq!(murmur3_x64_128(b""), [0; 16]);
        let hex = |d: [u8; 16]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
        assert_eq!(
            hex(murmur3_x64_128(b"hello")),
            "029bbd41b3a7d8cb191dae486a901e5b"
        );
        assert_eq!(
            hex(murmur3_x64_128(b"abcdefghijklmnopqrstuvwxy")),
            "0f96072fa4cbe771dbbd9e398115eeed"
        );
        assert_eq!(
            hex(murmur3_x64_128(
                b"The quick brown fox jumps over the lazy dog"
            )),
            "6c1b07bc7bbc4be347939ac4a93c437a"
        );
    }
}
