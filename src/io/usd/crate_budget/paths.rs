//! The path tree of a crate file's PATHS section, walked before `openusd` builds it.
//!
//! USD stores the paths as a tree in three coded integer arrays (`crateFile.cpp`,
//! `_BuildDecompressedPathsImpl`): for entry `i`, the index of its path, its element token
//! (negative: a property) and a jump:
//! ```text
//! jump > 0    a child (entry i + 1) and a sibling at i + jump
//! jump = 0    a sibling at i + 1, no child
//! jump = -1   a child (entry i + 1), no sibling
//! jump < -1   neither: the subtree ends
//! ```
//! `openusd` follows the jumps with a stack of pending siblings. A well-formed tree visits
//! every entry once; jumps that send two branches onto the same entries revisit them
//! exponentially often (`jump = 1` everywhere: 2ⁿ visits), and a deep chain of long tokens
//! builds paths whose text grows with the square of the depth. The walk here mirrors the
//! crate's, refuses a second visit, and returns the bytes of the paths' text.
use super::{Bytes, STRING};

/// LZ4 block of a crate file (first byte: 0 for one chunk) decompressed into `size`
/// bytes (at most that; the bytes written).
fn decompress(block: &[u8], size: u64, what: &str) -> Result<Vec<u8>, String> {
    let Some((&0, data)) = block.split_first() else {
        return Err(format!("{what}: a chunked or empty LZ4 block"));
    };
    let mut out = vec![0u8; size as usize];
    let n = lz4_flex::block::decompress_into(data, &mut out)
        .map_err(|e| format!("{what}: damaged LZ4 data ({e})"))?;
    out.truncate(n);
    Ok(out)
}

/// The next LZ4 block at `r` (its u64 size, then the block).
fn block<'a>(r: &mut Bytes<'a>, what: &str) -> Result<&'a [u8], String> {
    let size = r.u64(what)?;
    let start = r.pos as usize;
    r.skip(size, what)?;
    Ok(&r.data[start..r.pos as usize])
}

/// `count` 32-bit integers coded as USD does (`integerCoding.cpp`): a common delta, 2 bits
/// a value saying whether its delta is the common one or an 8-, 16- or 32-bit one that
/// follows, the values the running sums of the deltas.
fn coded_ints(r: &mut Bytes, count: u64, what: &str) -> Result<Vec<i32>, String> {
    if count == 0 {
        block(r, what)?;
        return Ok(Vec::new());
    }
    let codes = count.div_ceil(4) as usize;
    let data = decompress(block(r, what)?, 4 + codes as u64 + 4 * count, what)?;
    let short = || format!("{what}: fewer coded integers than the {count} declared");
    let common = i32::from_le_bytes(data.get(..4).ok_or_else(short)?.try_into().unwrap());
    let (codes, mut deltas) = data[4..].split_at_checked(codes).ok_or_else(short)?;
    let mut out = Vec::with_capacity(count as usize);
    let mut value = 0i32;
    for i in 0..count as usize {
        let width = [0, 1, 2, 4][(codes[i / 4] >> (2 * (i % 4)) & 3) as usize];
        let delta = if width == 0 {
            common
        } else {
            let (d, rest) = deltas.split_at_checked(width).ok_or_else(short)?;
            deltas = rest;
            match width {
                1 => d[0] as i8 as i32,
                2 => i16::from_le_bytes([d[0], d[1]]) as i32,
                _ => i32::from_le_bytes([d[0], d[1], d[2], d[3]]),
            }
        };
        value = value.wrapping_add(delta);
        out.push(value);
    }
    Ok(out)
}

/// Lengths of the tokens of the TOKENS section at `r` (sizes already checked against the
/// file and the budget).
pub(super) fn token_lengths(mut r: Bytes) -> Result<Vec<u64>, String> {
    r.u64("TOKENS")?;
    let size = r.u64("TOKENS")?;
    let text = decompress(block(&mut r, "TOKENS")?, size, "TOKENS")?;
    let text = text.strip_suffix(&[0]).unwrap_or(&text);
    Ok(text.split(|&c| c == 0).map(|t| t.len() as u64).collect())
}

/// Walks the path tree of the PATHS section at `r` as `openusd` will (module doc); the
/// bytes of its paths' text, or why the tree is malformed.
pub(super) fn tree(mut r: Bytes, tokens: &[u64]) -> Result<u64, String> {
    let paths = r.u64("PATHS")?;
    let count = r.u64("PATHS")?;
    let indices = coded_ints(&mut r, count, "PATHS indices")?;
    let elements = coded_ints(&mut r, count, "PATHS tokens")?;
    let jumps = coded_ints(&mut r, count, "PATHS jumps")?;
    if count == 0 {
        return Ok(0);
    }
    let mut memory = 0u64;
    let mut visits = 0u64;
    // (entry, length of its parent's path text; None above the root)
    let mut pending = vec![(0usize, None::<u64>)];
    while let Some((mut next, mut parent)) = pending.pop() {
        loop {
            let i = next;
            next += 1;
            visits += 1;
            if visits > count {
                return Err("PATHS: the path tree reaches entries more than once".to_string());
            }
            if i as u64 >= count || indices[i] as u32 as u64 >= paths {
                return Err(format!("PATHS: entry {i} lies outside the {count} paths"));
            }
            let token = elements[i].unsigned_abs() as usize;
            let len = match parent {
                None => 1,
                Some(p) => {
                    let t = tokens.get(token).ok_or_else(|| {
                        format!("PATHS: entry {i} names token {token} of {}", tokens.len())
                    })?;
                    p + 1 + t
                }
            };
            memory = memory.saturating_add(2 * (STRING + len));
            let jump = jumps[i];
            let (child, sibling) = (jump > 0 || jump == -1, jump >= 0);
            if child {
                if sibling {
                    pending.push((i + jump as usize, parent));
                }
                parent = Some(len);
            }
            if !child && !sibling {
                break;
            }
        }
    }
    Ok(memory)
}
