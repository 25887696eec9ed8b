//! Buffer views compressed with `EXT_meshopt_compression` / `KHR_meshopt_compression`,
//! decoded by meshoptimizer's codecs (the `meshopt` crate).
//!
//! A compressed view carries, in its extension object, where the compressed bytes are
//! (`buffer`, `byteOffset`, `byteLength`) and what they decode to: `count` elements of
//! `byteStride` bytes, by `mode`
//!
//! ```text
//! ATTRIBUTES  vertex codec, byteStride a multiple of 4 in 4..=256
//! TRIANGLES   index buffer codec, count a multiple of 3, byteStride 2 or 4
//! INDICES     index sequence codec, byteStride 2 or 4
//! ```
//!
//! then an optional `filter` on attributes (`OCTAHEDRAL` byteStride 4 or 8, `QUATERNION` 8,
//! `EXPONENTIAL` a multiple of 4, `COLOR` 4 or 8). The view's own buffer is then a fallback
//! for readers without the extension, often with no data at all, and is not loaded.
//!
//! Budget: a view may decode to at most [`MAX_EXPANSION`] times its compressed size (plus
//! 64 KiB), checked before allocating, so a small file cannot claim gigabytes. Every shape
//! the codecs would assert on is refused first: the C decoders then only see valid sizes,
//! and report corrupt data as an error code.
use serde_json::Value;

/// Largest ratio of decoded to compressed bytes of one view. meshoptimizer's codecs
/// expand by at most a few hundred (long runs of zero bytes); more is a malformed file.
pub(crate) const MAX_EXPANSION: usize = 1024;

/// Extension names, either of which marks a compressed view.
const NAMES: [&str; 2] = ["EXT_meshopt_compression", "KHR_meshopt_compression"];

/// The meshopt extension object of a JSON object (a buffer or buffer view), if any.
fn extension(object: &Value) -> Option<&Value> {
    let ext = object.get("extensions")?;
    NAMES.iter().find_map(|n| ext.get(*n))
}

/// Whether buffer `index` is a meshopt fallback buffer (`"fallback": true`), whose data
/// drape never needs.
pub(crate) fn is_fallback(json: &Value, index: usize) -> bool {
    json.get("buffers")
        .and_then(|b| b.get(index))
        .and_then(extension)
        .and_then(|e| e.get("fallback"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// Decoded bytes of every compressed buffer view (`None` for plain views), from the loaded
/// `buffers`; an error names the view.
pub(crate) fn decode_views(
    json: &Value,
    buffers: &[Vec<u8>],
) -> std::result::Result<Vec<Option<Vec<u8>>>, (usize, String)> {
    let views = json.get("bufferViews").and_then(Value::as_array);
    views
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, view)| match extension(view) {
            Some(ext) => decode(ext, buffers).map(Some).map_err(|why| (i, why)),
            None => Ok(None),
        })
        .collect()
}

/// Decodes one compressed view described by its extension object `ext`.
fn decode(ext: &Value, buffers: &[Vec<u8>]) -> std::result::Result<Vec<u8>, String> {
    let field = |name: &str| -> std::result::Result<usize, String> {
        ext.get(name)
            .and_then(Value::as_u64)
            .and_then(|v| usize::try_from(v).ok())
            .ok_or_else(|| format!("has meshopt compression without a valid '{name}'"))
    };
    let buffer = field("buffer")?;
    let offset = ext
        .get("byteOffset")
        .map_or(Ok(0), |_| field("byteOffset"))?;
    let (length, stride, count) = (field("byteLength")?, field("byteStride")?, field("count")?);
    let mode = ext.get("mode").and_then(Value::as_str).unwrap_or("");
    let filter = ext.get("filter").and_then(Value::as_str).unwrap_or("NONE");
    let data = buffers
        .get(buffer)
        .ok_or_else(|| format!("has meshopt data in buffer {buffer}, which does not exist"))?;
    let src = offset
        .checked_add(length)
        .and_then(|end| data.get(offset..end))
        .ok_or_else(|| {
            format!(
                "has meshopt data at bytes {offset}..{} of buffer {buffer}, which has {} bytes",
                offset.saturating_add(length),
                data.len()
            )
        })?;
    let size = count
        .checked_mul(stride)
        .filter(|&s| s <= MAX_EXPANSION * length + (64 << 10))
        .ok_or_else(|| {
            format!(
                "claims {count} elements of {stride} bytes from {length} compressed bytes, \
                 more than meshopt compression can hold (at most {MAX_EXPANSION}× the \
                 compressed size); the file is malformed, export it again"
            )
        })?;
    let shape_ok = match mode {
        "ATTRIBUTES" => stride.is_multiple_of(4) && (4..=256).contains(&stride),
        "TRIANGLES" => (stride == 2 || stride == 4) && count.is_multiple_of(3),
        "INDICES" => stride == 2 || stride == 4,
        _ => return Err(format!("has an unknown meshopt mode '{mode}'")),
    };
    let filter_ok = match filter {
        "NONE" => true,
        "OCTAHEDRAL" | "COLOR" => mode == "ATTRIBUTES" && (stride == 4 || stride == 8),
        "QUATERNION" => mode == "ATTRIBUTES" && stride == 8,
        "EXPONENTIAL" => mode == "ATTRIBUTES",
        _ => return Err(format!("has an unknown meshopt filter '{filter}'")),
    };
    if !shape_ok || !filter_ok {
        return Err(format!(
            "has meshopt mode {mode}, filter {filter} with {count} elements of {stride} bytes, \
             which that mode does not allow; export the file again"
        ));
    }
    let mut out = vec![0u8; size];
    if count == 0 {
        return Ok(out);
    }
    use meshopt::ffi;
    let dst = out.as_mut_ptr().cast::<std::ffi::c_void>();
    // SAFETY: `out` holds exactly `count × stride` bytes, the decoders write at most that
    // many and read at most `src.len()` bytes of `src`; mode, stride and count were checked
    // above against every precondition the C functions assert.
    let rc = unsafe {
        match mode {
            "ATTRIBUTES" => {
                ffi::meshopt_decodeVertexBuffer(dst, count, stride, src.as_ptr(), src.len())
            }
            "TRIANGLES" => {
                ffi::meshopt_decodeIndexBuffer(dst, count, stride, src.as_ptr(), src.len())
            }
            _ => ffi::meshopt_decodeIndexSequence(dst, count, stride, src.as_ptr(), src.len()),
        }
    };
    if rc != 0 {
        return Err(format!(
            "has meshopt data that does not decode (meshoptimizer error {rc}); the file is \
             damaged, export it again"
        ));
    }
    // SAFETY: as above; the filters rewrite `count` elements of `stride` bytes in place.
    unsafe {
        match filter {
            "OCTAHEDRAL" => ffi::meshopt_decodeFilterOct(dst, count, stride),
            "QUATERNION" => ffi::meshopt_decodeFilterQuat(dst, count, stride),
            "EXPONENTIAL" => ffi::meshopt_decodeFilterExp(dst, count, stride),
            "COLOR" => ffi::meshopt_decodeFilterColor(dst, count, stride),
            _ => {}
        }
    }
    Ok(out)
}
