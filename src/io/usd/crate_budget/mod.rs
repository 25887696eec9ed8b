//! The memory budget of a binary crate file, checked before [`openusd`] reads it.
//!
//! `openusd` sizes its buffers from counts written in the file (`vec![0; count]`,
//! `Vec::with_capacity(count)`) before it reads the elements, and its values repeat: a
//! token is cloned for every array element naming it, a field for every spec that lists
//! it. A corrupt count therefore asks for terabytes, which aborts the process (an
//! allocation failure cannot be caught). So every count the crate will allocate from is
//! checked here first, by walking the file the way the crate will:
//! ```text
//! bootstrap        magic, version >= 0.4.0, table of contents
//! sections         TOKENS STRINGS FIELDS FIELDSETS PATHS SPECS: every count and
//!                  compressed size against the file (below)
//! path tree        decoded and walked as the crate will: every entry reached once
//!                  ([`paths`]), the text of the paths counted
//! values           every field's value, nested ones too (dictionaries, list ops, time
//!                  samples): array counts, string and token indices, forward offsets
//! specs            each spec's fields, at most MAX_SPEC_FIELDS, their values summed
//! ```
//! A count is accepted only if the file can hold what it describes:
//! * raw elements: `count × element size ≤ bytes left in the file`;
//! * LZ4-compressed blocks: `decompressed size ≤ 256 × compressed size` (LZ4 writes at
//!   least one byte per 255 bytes of output), and integer-coded arrays need 2 bits an
//!   element once decompressed (`count ≤ 4 × 256 × compressed size`);
//! * indices name an existing token, string or path; offsets point forward; values nest
//!   at most [`MAX_NESTING`] deep and never contain themselves.
//!
//! What remains is the sum, over every spec, of the memory its values take once decoded
//! by the crate and converted into our [`Value`]s (8 bytes a number, a [`Value`] per list
//! element, every string copy counted); it must stay within [`MEMORY_BUDGET`]
//! (docs/reference.md, "USD budgets").
use super::layer::Value;
use openusd::usdc::CrateFile;
use std::collections::{HashMap, HashSet};
use std::io::Cursor;
use values::Values;

mod paths;
#[cfg(test)]
mod tests;
mod values;

/// Most memory one crate file may decode into, in bytes: 4 GiB (about 170 million points
/// as 3 × f64 once read). Files beyond it are refused before anything is allocated.
pub const MEMORY_BUDGET: u64 = 4 << 30;

/// Most bytes LZ4 decompresses from one compressed byte (its limit is 255).
const LZ4_MAX_RATIO: u64 = 256;
/// Deepest nesting of values (dictionaries in dictionaries, time samples of them).
pub const MAX_NESTING: usize = 64;
/// Most fields one spec may hold (real prims hold tens): the crate looks each field up
/// by walking the spec's whole field set, so the work grows with its square.
pub const MAX_SPEC_FIELDS: usize = 1024;
/// Memory of one decoded value besides its elements: the crate's value and ours.
const SCALAR: u64 = 2 * size_of::<Value>() as u64 + 64;
/// One of our [`Value`]s.
const VALUE: u64 = size_of::<Value>() as u64;
/// A `String` or path, besides its text.
const STRING: u64 = size_of::<String>() as u64;
/// Value types of the crate format (USD `crateDataTypes.h`).
mod ty {
    pub const BOOL: u64 = 1;
    pub const UCHAR: u64 = 2;
    pub const INT: u64 = 3;
    pub const UINT: u64 = 4;
    pub const INT64: u64 = 5;
    pub const UINT64: u64 = 6;
    pub const HALF: u64 = 7;
    pub const FLOAT: u64 = 8;
    pub const DOUBLE: u64 = 9;
    pub const STRING: u64 = 10;
    pub const TOKEN: u64 = 11;
    pub const ASSET_PATH: u64 = 12;
    pub const DICTIONARY: u64 = 31;
    pub const TIME_SAMPLES: u64 = 46;
    pub const DOUBLE_VECTOR: u64 = 48;
    pub const TIME_CODE: u64 = 56;
    pub const PATH_EXPRESSION: u64 = 57;
    pub const LAST: u64 = 58;
}

/// Checks `bytes`, a crate file, against the rules of the module doc and `budget` (bytes;
/// [`MEMORY_BUDGET`] for drape's readers); the error says which count is wrong.
pub fn check(bytes: &[u8], budget: u64) -> Result<(), String> {
    let total = memory(bytes, budget)?;
    if total > budget {
        return Err(format!(
            "it decodes to {} MiB, over the budget of {} MiB for one crate file; split the \
             scene into several files",
            total >> 20,
            budget >> 20
        ));
    }
    Ok(())
}

/// The memory `bytes`, a crate file, decodes to (bytes, module doc), or the count that
/// the file cannot hold; once its sections alone take more than `budget`, their memory.
pub fn memory(bytes: &[u8], budget: u64) -> Result<u64, String> {
    let (version, mut structure, starts) = sections(bytes)?;
    if structure > budget {
        return Ok(structure);
    }
    let start = |name: &[u8]| starts.iter().find(|(n, _)| n == name).map(|(_, s)| *s);
    let tokens = match start(b"TOKENS") {
        Some(at) => paths::token_lengths(Bytes::at(bytes, at))?,
        None => Vec::new(),
    };
    if let Some(at) = start(b"PATHS") {
        structure = structure.saturating_add(paths::tree(Bytes::at(bytes, at), &tokens)?);
    }
    let file = CrateFile::open(Cursor::new(bytes)).map_err(|e| format!("{e:#}"))?;
    file.validate().map_err(|e| format!("{e:#}"))?;
    let mut values = Values {
        bytes,
        version,
        tokens: file.tokens.iter().map(|t| t.len() as u64).collect(),
        strings: &file.strings,
        paths: file.paths.iter().map(|p| p.as_str().len() as u64).collect(),
        memo: HashMap::new(),
        active: HashSet::new(),
    };
    let mut field_cost = Vec::with_capacity(file.fields.len());
    for field in &file.fields {
        field_cost.push(values.cost(field.value_rep.0, 0)?);
    }
    // The cost of the field set starting at each index, summed up to its terminator.
    let mut set_cost = vec![(0u64, 0usize); file.fieldsets.len() + 1];
    for i in (0..file.fieldsets.len()).rev() {
        set_cost[i] = match file.fieldsets[i] {
            None => (0, 0),
            Some(f) => {
                let (cost, n) = set_cost[i + 1];
                (cost.saturating_add(field_cost[f]), n + 1)
            }
        };
    }
    let mut total = structure;
    for (index, spec) in file.specs.iter().enumerate() {
        let (cost, n) = set_cost[spec.fieldset_index];
        if n > MAX_SPEC_FIELDS {
            return Err(format!(
                "spec {index} has {n} fields, more than the {MAX_SPEC_FIELDS} drape reads"
            ));
        }
        total = total.saturating_add(cost).saturating_add(SCALAR);
    }
    Ok(total)
}

/// A position in the file and the reads of the crate format from it; every read past
/// the end is an error naming what was read.
struct Bytes<'a> {
    data: &'a [u8],
    pos: u64,
}

impl<'a> Bytes<'a> {
    fn at(data: &'a [u8], pos: u64) -> Self {
        Bytes { data, pos }
    }

    fn remaining(&self) -> u64 {
        (self.data.len() as u64).saturating_sub(self.pos)
    }

    /// Skips `n` bytes of `what`, which must lie in the file.
    fn skip(&mut self, n: u64, what: &str) -> Result<(), String> {
        if n > self.remaining() {
            return Err(format!(
                "{what} needs {n} bytes at byte {}, but the file ends {} bytes later",
                self.pos,
                self.remaining()
            ));
        }
        self.pos += n;
        Ok(())
    }

    fn take<const N: usize>(&mut self, what: &str) -> Result<[u8; N], String> {
        let start = self.pos;
        self.skip(N as u64, what)?;
        let mut out = [0; N];
        out.copy_from_slice(&self.data[start as usize..self.pos as usize]);
        Ok(out)
    }

    fn u32(&mut self, what: &str) -> Result<u64, String> {
        Ok(u32::from_le_bytes(self.take(what)?) as u64)
    }

    fn u64(&mut self, what: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(what)?))
    }

    /// `count` raw elements of `size` bytes; their bytes.
    fn raw(&mut self, count: u64, size: u64, what: &str) -> Result<u64, String> {
        let n = count.saturating_mul(size);
        if n > self.remaining() {
            return Err(format!(
                "{what} declares {count} elements of {size} bytes at byte {}, but the file \
                 ends {} bytes later",
                self.pos,
                self.remaining()
            ));
        }
        self.pos += n;
        Ok(n)
    }

    /// An LZ4 block (compressed size, then the block) the crate decompresses into
    /// `output` bytes; the bytes both take.
    fn compressed(&mut self, output: u64, what: &str) -> Result<u64, String> {
        let size = self.u64(what)?;
        self.skip(size, what)?;
        if output > LZ4_MAX_RATIO.saturating_mul(size) {
            return Err(format!(
                "{what} declares {output} bytes compressed into {size}, more than LZ4 can \
                 hold"
            ));
        }
        Ok(size + output)
    }

    /// `count` integers coded as USD does (a common value, 2 bits an integer, deltas),
    /// LZ4-compressed; the bytes the crate allocates for them.
    fn coded_ints(&mut self, count: u64, what: &str) -> Result<u64, String> {
        let size = self.u64(what)?;
        self.skip(size, what)?;
        if count == 0 {
            return Ok(size);
        }
        let least = 4 + count.div_ceil(4);
        if least > LZ4_MAX_RATIO.saturating_mul(size) {
            return Err(format!(
                "{what} declares {count} integers compressed into {size} bytes, more than \
                 they can hold"
            ));
        }
        // The crate's output estimate (4 + count/4 + 4 count), then the decoded integers.
        Ok(size + least + 12 * count)
    }
}

/// The sections of a crate file: (name, start), the first of each name.
type Starts = Vec<(Vec<u8>, u64)>;

/// Checks the bootstrap and the structural sections (module doc); the file's version
/// (major, minor, patch), the memory the crate takes for the sections, and where each
/// starts.
fn sections(bytes: &[u8]) -> Result<([u8; 3], u64, Starts), String> {
    let mut r = Bytes::at(bytes, 0);
    if r.take::<8>("the bootstrap")? != *openusd::usdc::MAGIC {
        return Err("no PXR-USDC magic".to_string());
    }
    let v = r.take::<8>("the version")?;
    let version = [v[0], v[1], v[2]];
    if version < [0, 4, 0] {
        return Err(format!(
            "crate version {}.{}.{}, older than 0.4.0, the oldest drape reads; export it \
             again with a current USD",
            v[0], v[1], v[2]
        ));
    }
    let mut r = Bytes::at(bytes, r.u64("the table of contents offset")?);
    let count = r.u64("the section count")?;
    if count == 0 || count >= 64 {
        return Err(format!("the table of contents lists {count} sections"));
    }
    let mut starts: Starts = Vec::new();
    for _ in 0..count {
        let name = r.take::<16>("the table of contents")?;
        let name = name.split(|&c| c == 0).next().unwrap_or(&[]).to_vec();
        let start = r.u64("the table of contents")?;
        r.u64("the table of contents")?;
        if !starts.iter().any(|(n, _)| *n == name) {
            starts.push((name, start));
        }
    }
    let mut memory = 0u64;
    for (name, start) in &starts {
        let mut r = Bytes::at(bytes, *start);
        memory = memory.saturating_add(match name.as_slice() {
            b"TOKENS" => {
                let count = r.u64("TOKENS")?;
                let size = r.u64("TOKENS")?;
                let n = count.min(size.saturating_add(1));
                r.compressed(size, "TOKENS")? + size + n * STRING
            }
            b"STRINGS" => {
                let count = r.u64("STRINGS")?;
                r.raw(count, 4, "STRINGS")? * 3
            }
            b"FIELDS" => {
                let count = r.u64("FIELDS")?;
                r.coded_ints(count, "FIELDS tokens")?
                    + r.compressed(count.saturating_mul(8), "FIELDS values")?
                    + count * 16
            }
            b"FIELDSETS" => {
                let count = r.u64("FIELDSETS")?;
                r.coded_ints(count, "FIELDSETS")? + count * 16
            }
            b"PATHS" => {
                let paths = r.u64("PATHS")?;
                let count = r.u64("PATHS")?;
                // A path table of `paths` empty paths, filled from `count` coded ones.
                let mut n = paths.saturating_mul(STRING);
                for what in ["PATHS indices", "PATHS tokens", "PATHS jumps"] {
                    n = n.saturating_add(r.coded_ints(count, what)?);
                }
                n
            }
            b"SPECS" => {
                let count = r.u64("SPECS")?;
                let mut n = count.saturating_mul(24 + 2 * STRING + 64);
                for what in ["SPECS paths", "SPECS fields", "SPECS types"] {
                    n = n.saturating_add(r.coded_ints(count, what)?);
                }
                n
            }
            _ => 0,
        });
    }
    Ok((version, memory, starts))
}
