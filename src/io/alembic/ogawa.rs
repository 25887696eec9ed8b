//! The Ogawa container of Alembic files, read from bytes in memory.
//!
//! ```text
//! file    = header · blocks
//! header  = "Ogawa" (5 bytes) · frozen (1 byte, 0xff once the writer closed the file)
//!           · version (2 bytes, big-endian, 1) · root group offset (u64)
//! group   = n (u64) · child₀ … child_{n−1} (u64 each)
//! data    = size (u64) · size bytes
//! child   = offset of a group (top bit clear) or of data (top bit set; the offset is the
//!           rest); offset 0 is the empty group or the empty data
//! ```
//! Every integer is little-endian. Offsets and sizes come from the file, so each is checked
//! against the file's length before it is followed: a group's children and a data block's
//! bytes must lie inside the file, which bounds every allocation by the file size.

/// The data flag of a child offset.
const DATA_BIT: u64 = 1 << 63;
/// Size of the file header.
const HEADER: usize = 16;

/// An Ogawa file held in memory.
#[derive(Debug, Clone, Copy)]
pub struct Ogawa<'a> {
    bytes: &'a [u8],
    root: u64,
}

/// A child of a group: a group or a data block, by offset (0: empty).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Child {
    /// A group at this offset.
    Group(u64),
    /// A data block at this offset (the data flag removed).
    Data(u64),
}

impl Child {
    fn of(raw: u64) -> Child {
        if raw & DATA_BIT != 0 {
            Child::Data(raw & !DATA_BIT)
        } else {
            Child::Group(raw)
        }
    }
}

/// Little-endian `u64` at `pos` of `bytes`, if it lies inside.
pub fn u64_at(bytes: &[u8], pos: usize) -> Option<u64> {
    let b = bytes.get(pos..pos.checked_add(8)?)?;
    Some(u64::from_le_bytes(b.try_into().ok()?))
}

/// Little-endian `u32` at `pos` of `bytes`, if it lies inside.
pub fn u32_at(bytes: &[u8], pos: usize) -> Option<u32> {
    let b = bytes.get(pos..pos.checked_add(4)?)?;
    Some(u32::from_le_bytes(b.try_into().ok()?))
}

impl<'a> Ogawa<'a> {
    /// Checks the header of `bytes`.
    pub fn open(bytes: &'a [u8]) -> Result<Ogawa<'a>, String> {
        if bytes.len() < HEADER || &bytes[..5] != b"Ogawa" {
            return Err("it does not start with the Ogawa signature".into());
        }
        if bytes[5] != 0xff {
            return Err(
                "the program writing it did not finish (the archive was never \
                        closed)"
                    .into(),
            );
        }
        let version = u16::from_be_bytes([bytes[6], bytes[7]]);
        if version != 1 {
            return Err(format!("Ogawa version {version}; drape reads version 1"));
        }
        let root = u64_at(bytes, 8).unwrap_or(0);
        Ok(Ogawa { bytes, root })
    }

    /// The root group.
    pub fn root(&self) -> Result<Vec<Child>, String> {
        self.group(self.root)
    }

    /// Size of the file in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True if the file is empty (never, once opened).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The children of the group at `pos` (none for the empty group 0).
    pub fn group(&self, pos: u64) -> Result<Vec<Child>, String> {
        if pos == 0 {
            return Ok(Vec::new());
        }
        let start = usize::try_from(pos)
            .ok()
            .filter(|&p| p >= HEADER)
            .ok_or_else(|| format!("a group offset {pos} is not a valid offset"))?;
        let n = u64_at(self.bytes, start)
            .ok_or_else(|| format!("a group at byte {pos} lies past the end of the file"))?;
        let room = (self.bytes.len() - start - 8) as u64 / 8;
        if n > room {
            return Err(format!(
                "a group at byte {pos} claims {n} children, more than the file can hold"
            ));
        }
        Ok((0..n as usize)
            .map(|k| Child::of(u64_at(self.bytes, start + 8 + 8 * k).unwrap_or(0)))
            .collect())
    }

    /// The bytes of the data block at `pos` (empty for offset 0).
    pub fn data(&self, pos: u64) -> Result<&'a [u8], String> {
        if pos == 0 {
            return Ok(&[]);
        }
        let start = usize::try_from(pos)
            .ok()
            .filter(|&p| p >= HEADER)
            .ok_or_else(|| format!("a data offset {pos} is not a valid offset"))?;
        let size = u64_at(self.bytes, start)
            .ok_or_else(|| format!("data at byte {pos} lies past the end of the file"))?;
        let begin = start + 8;
        usize::try_from(size)
            .ok()
            .and_then(|s| begin.checked_add(s))
            .and_then(|end| self.bytes.get(begin..end))
            .ok_or_else(|| {
                format!("data at byte {pos} claims {size} bytes, past the end of the file")
            })
    }

    /// The group child `k` of `children`, an error naming `what` if it is not a group.
    pub fn child_group(
        &self,
        children: &[Child],
        k: usize,
        what: &str,
    ) -> Result<Vec<Child>, String> {
        match children.get(k) {
            Some(Child::Group(p)) => self.group(*p),
            _ => Err(format!("{what} is missing (no group at child {k})")),
        }
    }

    /// The data child `k` of `children`, an error naming `what` if it is not data.
    pub fn child_data(&self, children: &[Child], k: usize, what: &str) -> Result<&'a [u8], String> {
        match children.get(k) {
            Some(Child::Data(p)) => self.data(*p),
            _ => Err(format!("{what} is missing (no data at child {k})")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(root: u64, rest: &[u8]) -> Vec<u8> {
        let mut b = b"Ogawa\xff\x00\x01".to_vec();
        b.extend_from_slice(&root.to_le_bytes());
        b.extend_from_slice(rest);
        b
    }

    #[test]
    fn groups_and_data_are_read_and_offsets_past_the_end_are_errors() {
        // root group at 16: two children, data at 40 ("abc") and the empty group.
        let mut rest = Vec::new();
        rest.extend_from_slice(&2u64.to_le_bytes());
        rest.extend_from_slice(&(40u64 | DATA_BIT).to_le_bytes());
        rest.extend_from_slice(&0u64.to_le_bytes());
        rest.extend_from_slice(&3u64.to_le_bytes());
        rest.extend_from_slice(b"abc");
        let bytes = file(16, &rest);
        let o = Ogawa::open(&bytes).unwrap();
        let root = o.root().unwrap();
        assert_eq!(root, vec![Child::Data(40), Child::Group(0)]);
        assert_eq!(o.data(40).unwrap(), b"abc");
        assert!(o.group(0).unwrap().is_empty());
        assert!(o.data(41).is_err());
        assert!(o.data(1 << 40).is_err());
        assert!(o.group(u64::MAX >> 1).is_err());
        // A group claiming more children than the file holds.
        let mut huge = bytes.clone();
        huge[16..24].copy_from_slice(&(1u64 << 60).to_le_bytes());
        assert!(Ogawa::open(&huge)
            .unwrap()
            .root()
            .unwrap_err()
            .contains("claims"));
    }

    #[test]
    fn an_unfinished_or_foreign_file_is_refused() {
        let mut b = file(0, &[]);
        b[5] = 0;
        assert!(Ogawa::open(&b).unwrap_err().contains("never closed"));
        assert!(Ogawa::open(b"\x89HDF\r\n\x1a\n").is_err());
        assert!(Ogawa::open(b"Ogawa").is_err());
    }
}
