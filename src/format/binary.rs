//! A plain little-endian binary encoding of simulation state, the body of a bake's
//! checkpoint ([`crate::bake`], docs/reference.md "Checkpoints").
//!
//! Every value is written field by field, with no self-description: the reader must ask
//! for the same types in the same order ([`Persist`]). Numbers are their little-endian
//! bytes (`f64` bit for bit, so a state read back is the state written), `usize` goes as
//! `u64`, a `Vec` or `String` is its length then its items, an `Option` a byte 0/1 then
//! the value. A reader past the end, or finding a length or tag that cannot be, stops
//! with [`Damaged`].
use crate::Vec3;

/// Bytes being written.
#[derive(Debug, Default)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    /// An empty writer.
    pub fn new() -> Self {
        Writer::default()
    }

    /// Appends raw bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// Appends `value`.
    pub fn put<T: Persist>(&mut self, value: &T) {
        value.save(self);
    }

    /// The bytes written.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

/// Bytes being read back, in the order they were written.
#[derive(Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

/// The bytes end early or hold a value that cannot be: the file is damaged or not of
/// this layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Damaged;

impl<'a> Reader<'a> {
    /// A reader over `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    /// The next `n` raw bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], Damaged> {
        let end = self.at.checked_add(n).ok_or(Damaged)?;
        let b = self.bytes.get(self.at..end).ok_or(Damaged)?;
        self.at = end;
        Ok(b)
    }

    /// The next value of type `T`.
    pub fn get<T: Persist>(&mut self) -> Result<T, Damaged> {
        T::load(self)
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }

    /// A length read back, checked against what is left to read (`min_item` bytes per
    /// item at least), so that a damaged length never asks for a huge allocation.
    fn len(&mut self, min_item: usize) -> Result<usize, Damaged> {
        let n = usize::try_from(u64::load(self)?).map_err(|_| Damaged)?;
        if n.saturating_mul(min_item.max(1)) > self.remaining() {
            return Err(Damaged);
        }
        Ok(n)
    }
}

/// A value written to and read back from the binary encoding, bit for bit.
pub trait Persist: Sized {
    /// Appends the value.
    fn save(&self, w: &mut Writer);
    /// Reads the value back.
    fn load(r: &mut Reader) -> Result<Self, Damaged>;
}

macro_rules! numbers {
    ($($t:ty),*) => {$(
        impl Persist for $t {
            fn save(&self, w: &mut Writer) {
                w.bytes(&self.to_le_bytes());
            }
            fn load(r: &mut Reader) -> Result<Self, Damaged> {
                let b = r.bytes(std::mem::size_of::<$t>())?;
                Ok(<$t>::from_le_bytes(b.try_into().map_err(|_| Damaged)?))
            }
        }
    )*};
}
numbers!(u8, u32, u64, i32, i64, f64);

impl Persist for usize {
    fn save(&self, w: &mut Writer) {
        (*self as u64).save(w);
    }
    fn load(r: &mut Reader) -> Result<Self, Damaged> {
        usize::try_from(u64::load(r)?).map_err(|_| Damaged)
    }
}

impl Persist for bool {
    fn save(&self, w: &mut Writer) {
        u8::from(*self).save(w);
    }
    fn load(r: &mut Reader) -> Result<Self, Damaged> {
        match u8::load(r)? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(Damaged),
        }
    }
}

impl Persist for Vec3 {
    fn save(&self, w: &mut Writer) {
        for c in self.iter() {
            c.save(w);
        }
    }
    fn load(r: &mut Reader) -> Result<Self, Damaged> {
        Ok(Vec3::new(r.get()?, r.get()?, r.get()?))
    }
}

impl Persist for String {
    fn save(&self, w: &mut Writer) {
        self.len().save(w);
        w.bytes(self.as_bytes());
    }
    fn load(r: &mut Reader) -> Result<Self, Damaged> {
        let n = r.len(1)?;
        String::from_utf8(r.bytes(n)?.to_vec()).map_err(|_| Damaged)
    }
}

impl<T: Persist> Persist for Vec<T> {
    fn save(&self, w: &mut Writer) {
        self.len().save(w);
        for x in self {
            x.save(w);
        }
    }
    fn load(r: &mut Reader) -> Result<Self, Damaged> {
        let n = r.len(1)?;
        (0..n).map(|_| T::load(r)).collect()
    }
}

impl<T: Persist> Persist for Option<T> {
    fn save(&self, w: &mut Writer) {
        self.is_some().save(w);
        if let Some(x) = self {
            x.save(w);
        }
    }
    fn load(r: &mut Reader) -> Result<Self, Damaged> {
        Ok(if bool::load(r)? {
            Some(T::load(r)?)
        } else {
            None
        })
    }
}

impl<T: Persist, const N: usize> Persist for [T; N] {
    fn save(&self, w: &mut Writer) {
        for x in self {
            x.save(w);
        }
    }
    fn load(r: &mut Reader) -> Result<Self, Damaged> {
        let v: Vec<T> = (0..N).map(|_| T::load(r)).collect::<Result<_, _>>()?;
        v.try_into().map_err(|_| Damaged)
    }
}

impl<A: Persist, B: Persist> Persist for (A, B) {
    fn save(&self, w: &mut Writer) {
        self.0.save(w);
        self.1.save(w);
    }
    fn load(r: &mut Reader) -> Result<Self, Damaged> {
        Ok((r.get()?, r.get()?))
    }
}

impl<A: Persist, B: Persist, C: Persist> Persist for (A, B, C) {
    fn save(&self, w: &mut Writer) {
        self.0.save(w);
        self.1.save(w);
        self.2.save(w);
    }
    fn load(r: &mut Reader) -> Result<Self, Damaged> {
        Ok((r.get()?, r.get()?, r.get()?))
    }
}

/// Implements [`Persist`] for a struct, field by field in the order listed (every field
/// must be listed: the struct is rebuilt from them).
#[macro_export]
macro_rules! persist_fields {
    ($t:ident { $($f:ident),* $(,)? }) => {
        impl $crate::format::binary::Persist for $t {
            fn save(&self, w: &mut $crate::format::binary::Writer) {
                $( w.put(&self.$f); )*
            }
            fn load(
                r: &mut $crate::format::binary::Reader,
            ) -> Result<Self, $crate::format::binary::Damaged> {
                Ok($t { $( $f: r.get()? ),* })
            }
        }
    };
}

/// FNV-1a, 64 bits: a fingerprint of bytes (not a cryptographic hash; it tells inputs
/// apart, it does not resist forgery).
#[derive(Debug, Clone, Copy)]
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Adds `bytes`.
    pub fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// The fingerprint so far.
    pub fn value(&self) -> u64 {
        self.0
    }
}

impl std::fmt::Write for Fnv {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.update(s.as_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct S {
        a: f64,
        b: Vec<Option<(usize, Vec3)>>,
        c: [bool; 2],
        d: String,
    }
    persist_fields!(S { a, b, c, d });

    #[test]
    fn values_read_back_bit_for_bit_and_a_cut_file_is_damaged() {
        let s = S {
            a: -0.1 + 1e-17,
            b: vec![None, Some((7, Vec3::new(f64::MIN_POSITIVE, -0.0, 1e300)))],
            c: [true, false],
            d: "Röck".into(),
        };
        let mut w = Writer::new();
        w.put(&s);
        let bytes = w.into_bytes();
        let back: S = Reader::new(&bytes).get().unwrap();
        assert_eq!(back, s);
        assert_eq!(back.b[1].unwrap().1.y.to_bits(), (-0.0f64).to_bits());
        for cut in [0, 5, bytes.len() - 1] {
            assert_eq!(Reader::new(&bytes[..cut]).get::<S>(), Err(Damaged));
        }
        let mut huge = Writer::new();
        huge.put(&u64::MAX);
        assert_eq!(
            Reader::new(&huge.into_bytes()).get::<Vec<u8>>(),
            Err(Damaged)
        );
    }

    #[test]
    fn fnv_matches_its_reference_values() {
        let mut h = Fnv::default();
        assert_eq!(h.value(), 0xcbf29ce484222325);
        h.update(b"a");
        assert_eq!(h.value(), 0xaf63dc4c8601ec8c);
    }
}
