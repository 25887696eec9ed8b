//! The walk over a crate file's values (the module doc of [`super`]): every field's value
//! representation decoded the way `openusd`'s `CrateFile::value` decodes it, its counts
//! checked against the file and its memory summed, nested values included.
use super::{ty, Bytes, MAX_NESTING, SCALAR, STRING, VALUE};
use openusd::sdf;
use std::collections::{HashMap, HashSet};

/// How an array's elements are stored (`unpack_array_len` of the crate).
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Ints,
    Floats,
    Other,
}

/// The walk over values: the tables they index, and the cost of each value met so far.
pub(super) struct Values<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) version: [u8; 3],
    /// Length of each token.
    pub(super) tokens: Vec<u64>,
    /// Token index of each string.
    pub(super) strings: &'a [usize],
    /// Length of each path.
    pub(super) paths: Vec<u64>,
    /// Memory of each value representation already walked.
    pub(super) memo: HashMap<u64, u64>,
    /// Value representations being walked (a value containing itself is refused).
    pub(super) active: HashSet<u64>,
}

impl Values<'_> {
    fn token(&self, index: u64) -> Result<u64, String> {
        let len = self.tokens.get(index as usize).copied();
        len.map(|l| 2 * (STRING + l) + VALUE).ok_or_else(|| {
            format!(
                "a value names token {index}, but the file has {}",
                self.tokens.len()
            )
        })
    }

    fn string(&self, index: u64) -> Result<u64, String> {
        match self.strings.get(index as usize) {
            Some(&t) => self.token(t as u64),
            None => Err(format!(
                "a value names string {index}, but the file has {}",
                self.strings.len()
            )),
        }
    }

    fn path(&self, index: u64) -> Result<u64, String> {
        let len = self.paths.get(index as usize).copied();
        len.map(|l| STRING + l).ok_or_else(|| {
            format!(
                "a value names path {index}, but the file has {}",
                self.paths.len()
            )
        })
    }

    /// `count` indices (u32) read at `r`, each looked up with `look`.
    fn indexed(
        &self,
        r: &mut Bytes,
        count: u64,
        what: &str,
        look: fn(&Self, u64) -> Result<u64, String>,
    ) -> Result<u64, String> {
        let mut cost = r.raw(count, 4, what)?;
        let mut at = Bytes::at(self.bytes, r.pos - cost);
        for _ in 0..count {
            cost = cost.saturating_add(look(self, at.u32(what)?)?);
        }
        Ok(cost)
    }

    /// The memory one value takes once decoded and converted.
    pub(super) fn cost(&mut self, rep: u64, depth: usize) -> Result<u64, String> {
        if let Some(&c) = self.memo.get(&rep) {
            return Ok(c);
        }
        if depth > MAX_NESTING {
            return Err(format!("values nested deeper than {MAX_NESTING}"));
        }
        if !self.active.insert(rep) {
            return Err(format!(
                "the value at byte {} contains itself",
                payload(rep)
            ));
        }
        let cost = self.walk(rep, depth);
        self.active.remove(&rep);
        let cost = cost?.saturating_add(SCALAR);
        self.memo.insert(rep, cost);
        Ok(cost)
    }

    fn walk(&mut self, rep: u64, depth: usize) -> Result<u64, String> {
        let (t, array) = ((rep >> 48) & 0xff, rep >> 63 == 1);
        if t == 0 || t > ty::LAST {
            return Ok(0);
        }
        let what = "a value";
        // Arrays of numbers: (element size, memory an element takes, storage).
        let numeric = match t {
            ty::BOOL => Some((1, 1 + VALUE + 8, Kind::Other)),
            ty::UCHAR => Some((1, 1 + 8, Kind::Other)),
            ty::INT | ty::UINT => Some((4, 4 + 8, Kind::Ints)),
            ty::INT64 | ty::UINT64 => Some((8, 8 + 8, Kind::Ints)),
            ty::HALF => Some((2, 2 + 8, Kind::Floats)),
            ty::FLOAT => Some((4, 4 + 8, Kind::Floats)),
            ty::DOUBLE | ty::TIME_CODE | ty::DOUBLE_VECTOR => Some((8, 8 + 8, Kind::Floats)),
            // Matrices: a list of row tuples of numbers.
            13 => Some((32, 32 + 7 * VALUE, Kind::Other)),
            14 => Some((72, 72 + 13 * VALUE, Kind::Other)),
            15 => Some((128, 128 + 21 * VALUE, Kind::Other)),
            // Quaternions d, f, h.
            16..=18 => {
                let size = [32, 16, 8][(t - 16) as usize];
                Some((size, size + 32, Kind::Other))
            }
            // Vectors 2, 3, 4 of d, f, h, i.
            19..=30 => {
                let n = 2 + (t - 19) / 4;
                let size = n * [8, 4, 2, 4][((t - 19) % 4) as usize];
                Some((size, size + 8 * n, Kind::Other))
            }
            _ => None,
        };
        let string_like = matches!(t, ty::STRING | ty::ASSET_PATH | ty::PATH_EXPRESSION);
        Ok(match numeric {
            _ if array && t == ty::TOKEN => {
                let (mut r, count, _) = self.array_len(rep, Kind::Other)?;
                self.indexed(&mut r, count, what, Self::token)?
            }
            Some((size, per, kind)) if array || t == ty::DOUBLE_VECTOR => {
                let (mut r, count, compressed) = self.array_len(rep, kind)?;
                let cost = count.saturating_mul(per);
                if count == 0 {
                    0
                } else if compressed && kind == Kind::Floats {
                    let table = match r.take::<1>(what)?[0] {
                        b'i' => 0,
                        b't' => {
                            let n = r.u32(what)?;
                            r.raw(n, size, what)?
                        }
                        code => return Err(format!("array code {code} unknown")),
                    };
                    cost.saturating_add(table + r.coded_ints(count, what)?)
                } else if compressed {
                    cost.saturating_add(r.coded_ints(count, what)?)
                } else {
                    r.raw(count, size, what)?;
                    cost
                }
            }
            _ => self.other(rep, array && string_like, depth)?,
        })
    }

    /// The values that are not arrays of numbers or tokens.
    fn other(&mut self, rep: u64, string_array: bool, depth: usize) -> Result<u64, String> {
        let (t, inlined, at) = ((rep >> 48) & 0xff, rep >> 62 & 1 == 1, payload(rep));
        let mut r = Bytes::at(self.bytes, at);
        let what = "a value";
        Ok(match t {
            _ if string_array || t == 50 => {
                let count = r.u64(what)?;
                self.indexed(&mut r, count, what, Self::string)?
            }
            ty::TOKEN | 53 => {
                let index = match inlined {
                    true => at & 0xffff_ffff,
                    false => r.u64(what)?,
                };
                self.token(index)?
            }
            ty::STRING | ty::ASSET_PATH | ty::PATH_EXPRESSION => {
                let index = match inlined {
                    true => at & 0xffff_ffff,
                    false => r.u32(what)?,
                };
                match inlined && t != ty::STRING {
                    true => self.token(index)?,
                    false => self.string(index)?,
                }
            }
            // Inlined: no allocation (a payload list op is read at its payload even so).
            _ if inlined && t != 55 => 0,
            ty::DICTIONARY => self.dictionary(&mut r, depth)?,
            32..=39 | 54 | 55 => self.list_op(&mut r, t, depth)?,
            40 | 41 => {
                let count = r.u64(what)?;
                let look = if t == 40 { Self::path } else { Self::token };
                self.indexed(&mut r, count, what, look)?
            }
            45 => {
                let count = r.u64(what)?;
                let cost = self.indexed(&mut r, count.saturating_mul(2), what, Self::string)?;
                cost.saturating_add(count.saturating_mul(64))
            }
            ty::TIME_SAMPLES => self.time_samples(&mut r, depth)?,
            47 => self.string(r.u32(what)?)? + self.path(r.u32(what)?)?,
            49 => r.u64(what).and_then(|n| r.raw(n, 16, what))?,
            ty::LAST => {
                let count = r.u64(what)?;
                let cost = self.indexed(&mut r, count.saturating_mul(2), what, Self::path)?;
                cost.saturating_add(count.saturating_mul(2 * STRING))
            }
            _ => 0,
        })
    }

    /// The position after an array's count, the count, and whether it is compressed.
    fn array_len<'b>(&'b self, rep: u64, kind: Kind) -> Result<(Bytes<'b>, u64, bool), String> {
        let mut r = Bytes::at(self.bytes, payload(rep));
        if payload(rep) == 0 {
            return Ok((r, 0, false));
        }
        if self.version < [0, 5, 0] {
            r.u32("an array")?;
        }
        let compressed = rep >> 61 & 1 == 1
            && match kind {
                Kind::Ints => self.version >= [0, 5, 0],
                Kind::Floats => self.version >= [0, 6, 0],
                Kind::Other => false,
            };
        let count = match self.version < [0, 7, 0] {
            true => r.u32("an array count")?,
            false => r.u64("an array count")?,
        };
        Ok((r, count, compressed && count >= 4))
    }

    /// A forward offset (USD's `_RecursiveWrite`): a value written in between, then the
    /// value representation at the offset.
    fn jump(&self, r: &mut Bytes) -> Result<(), String> {
        let at = r.pos;
        let offset = i64::from_le_bytes(r.take("an offset")?);
        if offset < 8 {
            return Err(format!("the offset at byte {at} points backwards"));
        }
        r.pos = at.saturating_add(offset as u64);
        Ok(())
    }

    fn dictionary(&mut self, r: &mut Bytes, depth: usize) -> Result<u64, String> {
        let count = r.u64("a dictionary")?;
        let mut cost = 0u64;
        for _ in 0..count {
            cost = cost.saturating_add(self.string(r.u32("a dictionary key")?)?);
            self.jump(r)?;
            let rep = r.u64("a dictionary value")?;
            cost = cost.saturating_add(self.cost(rep, depth + 1)?);
        }
        Ok(cost)
    }

    fn time_samples(&mut self, r: &mut Bytes, depth: usize) -> Result<u64, String> {
        self.jump(r)?;
        let times = r.u64("time samples")?;
        let (_, count, _) = self.array_len(times, Kind::Floats)?;
        let mut cost = self.cost(times, depth + 1)?;
        self.jump(r)?;
        if r.u64("time samples")? != count {
            return Err("time samples: as many values as times".to_string());
        }
        r.raw(count, 8, "time samples")?;
        let mut reps = Bytes::at(self.bytes, r.pos - 8 * count);
        for _ in 0..count {
            let rep = reps.u64("time samples")?;
            cost = cost.saturating_add(self.cost(rep, depth + 1)?.saturating_add(16));
        }
        Ok(cost)
    }

    fn list_op(&mut self, r: &mut Bytes, t: u64, depth: usize) -> Result<u64, String> {
        let header = r.take::<1>("a list op")?[0];
        let what = "a list op";
        let mut cost = 0u64;
        // explicit, added, prepended, appended, deleted, ordered items (the crate's order).
        for bit in [1, 2, 5, 6, 3, 4] {
            if header & (1 << bit) == 0 {
                continue;
            }
            let count = r.u64(what)?;
            cost = cost.saturating_add(match t {
                32 => self.indexed(r, count, what, Self::token)?,
                33 | 54 => self.indexed(r, count, what, Self::string)?,
                34 => self.indexed(r, count, what, Self::path)?,
                36 | 38 => r.raw(count, 4, what)?,
                37 | 39 => r.raw(count, 8, what)?,
                35 => {
                    // asset, prim path, layer offset, customData (at least its count)
                    r.raw(count, 32, what)?;
                    r.pos -= 32 * count;
                    let mut c = count.saturating_mul(size_of::<sdf::Reference>() as u64);
                    for _ in 0..count {
                        c = c.saturating_add(self.string(r.u32(what)?)?);
                        c = c.saturating_add(self.path(r.u32(what)?)?);
                        r.skip(16, what)?;
                        c = c.saturating_add(self.dictionary(r, depth + 1)?);
                    }
                    c
                }
                _ => {
                    let offset = if self.version >= [0, 8, 0] { 16 } else { 0 };
                    r.raw(count, 8 + offset, what)?;
                    r.pos -= (8 + offset) * count;
                    let mut c = count.saturating_mul(size_of::<sdf::Payload>() as u64);
                    for _ in 0..count {
                        c = c.saturating_add(self.string(r.u32(what)?)?);
                        c = c.saturating_add(self.path(r.u32(what)?)?);
                        r.skip(offset, what)?;
                    }
                    c
                }
            });
        }
        Ok(cost)
    }
}

/// The offset or inlined data of a value representation.
fn payload(rep: u64) -> u64 {
    rep & ((1 << 48) - 1)
}
