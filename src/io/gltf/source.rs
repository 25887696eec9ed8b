//! Opening a glTF file and reading its accessors (glTF 2.0 §3.6) with every bound checked.
//!
//! The `gltf` crate parses and validates the JSON; buffers and accessors are read here
//! rather than through its iterators, so that every malformed file (a `.glb` whose header
//! lies about its length, a buffer view beyond its buffer, an accessor beyond its view, a
//! sparse index beyond the accessor) becomes an input error naming the object, never a
//! panic or a silently short attribute.
//!
//! Accessor values come back as `f64`, `count × components` of them in element order:
//!
//! ```text
//! float                 value as stored
//! normalised unsigned   c / (2ⁿ − 1)            (u8: n = 8, u16: n = 16)
//! normalised signed     max(c / (2ⁿ⁻¹ − 1), −1) (i8, i16)
//! other integers        c
//! ```
//!
//! Matrix columns of 1- and 2-byte components are padded to 4 bytes (§3.6.2.4). A sparse
//! accessor (§3.6.2.3) starts from its buffer view's values, or zeros without one, and
//! replaces the elements its `indices` name by its `values`.
use super::uri::{self, Folders};
use super::{draco, extensions, meshopt};
use crate::error::{Error, Result};
use gltf::accessor::{DataType, Dimensions};
use std::path::{Path, PathBuf};

/// Largest element count of an accessor not backed by a buffer view (16 Mi): such an
/// accessor costs memory without costing file size, so its count must be plausible.
const MAX_UNBACKED_COUNT: usize = 1 << 24;

/// A parsed glTF document with its buffers loaded.
pub(crate) struct Source {
    /// The file (for messages).
    pub path: PathBuf,
    /// The validated document.
    pub doc: gltf::Document,
    buffers: Vec<Vec<u8>>,
    /// Decoded bytes of each meshopt-compressed buffer view (`None` for plain views).
    decoded: Vec<Option<Vec<u8>>>,
    /// Bytes of each accessor decoded from a Draco-compressed primitive, tightly packed
    /// (`None` for the others).
    draco: Vec<Option<Vec<u8>>>,
    /// Extensions the file uses that drape does not apply ([`extensions::check`]).
    pub ignored_extensions: Vec<String>,
}

impl Source {
    /// Reads and parses `path` (`.gltf` with embedded or external buffers, or `.glb`);
    /// external files may come from its folder and the `allowed` folders ([`uri`]).
    pub fn open(path: &Path, allowed: &[PathBuf]) -> Result<Source> {
        let bytes = read_input(path)?;
        let base = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        Source::from_bytes(&bytes, path, Some(&Folders::new(base, allowed)))
    }

    /// Parses glTF or GLB `bytes`; `path` names them in messages and `folders` are where
    /// external files are resolved (`None`: external buffers are an error).
    pub fn from_bytes(bytes: &[u8], path: &Path, folders: Option<&Folders>) -> Result<Source> {
        let unreadable = |reason: String| {
            Error::input(
                path,
                None,
                format!("not a readable glTF file ({reason}); export it again as glTF 2.0"),
            )
        };
        let bytes = if bytes.starts_with(b"glTF") {
            check_glb_header(bytes).map_err(unreadable)?
        } else {
            if let Err(e) = std::str::from_utf8(bytes) {
                return Err(unreadable(format!(
                    "the JSON is not UTF-8 text: invalid byte at offset {}",
                    e.valid_up_to()
                )));
            }
            bytes
        };
        let gltf = gltf::Gltf::from_slice_without_validation(bytes)
            .map_err(|e| unreadable(e.to_string()))?;
        let raw = raw_json(bytes).map_err(unreadable)?;
        let ignored_extensions =
            extensions::check(&raw).map_err(|why| Error::input(path, None, why))?;
        let mut blob = gltf.blob;
        let mut json = gltf.document.into_json();
        // Checked above: what is left is decoded here or only changes appearance.
        json.extensions_required.clear();
        // gltf-json's validation indexes the POSITION accessor before checking the index.
        let accessors = json.accessors.len();
        for (m, mesh) in json.meshes.iter().enumerate() {
            for p in &mesh.primitives {
                let pos = p.attributes.get(&gltf::json::validation::Checked::Valid(
                    gltf::Semantic::Positions,
                ));
                if let Some(i) = pos.filter(|i| i.value() >= accessors) {
                    return Err(unreadable(format!(
                        "mesh {m} uses POSITION accessor {}, but there are {accessors}",
                        i.value()
                    )));
                }
            }
        }
        let doc = validated(json, &draco::accessors(&raw)).map_err(unreadable)?;
        if let Some(folders) = folders {
            check_image_uris(&doc, folders, path)?;
        }
        let mut buffers = Vec::new();
        for buffer in doc.buffers() {
            let data = if meshopt::is_fallback(&raw, buffer.index()) {
                Vec::new()
            } else {
                load_buffer(&buffer, folders, &mut blob).map_err(|why| {
                    Error::input(path, Some(&format!("buffer {}", buffer.index())), why)
                })?
            };
            buffers.push(data);
        }
        let decoded = meshopt::decode_views(&raw, &buffers)
            .map_err(|(view, why)| Error::input(path, Some(&format!("buffer view {view}")), why))?;
        let mut source = Source {
            path: path.to_path_buf(),
            doc,
            buffers,
            decoded,
            draco: Vec::new(),
            ignored_extensions,
        };
        source.draco = draco::decode_accessors(&raw, |i| source.view_bytes_at(i))
            .map_err(|(object, why)| Error::input(path, Some(&object), why))?;
        Ok(source)
    }

    /// An input error about `object` in this file.
    pub fn error(&self, object: &str, message: impl Into<String>) -> Error {
        Error::input(&self.path, Some(object), message)
    }

    /// The values of `acc` as `f64` (`count × components`, element order), for the
    /// attribute or property `what` of `object` (both only name things in errors).
    pub fn read(&self, acc: &gltf::Accessor, object: &str, what: &str) -> Result<Vec<f64>> {
        let fail = |why: String| {
            self.error(
                object,
                format!(
                    "{what} (accessor {}) {why}; export the file again",
                    acc.index()
                ),
            )
        };
        let layout = Layout::of(acc.data_type(), acc.dimensions());
        let count = acc.count();
        let comps = layout.components();
        // (bytes, stride, first byte, what they are for messages)
        let data = match (
            self.draco.get(acc.index()).and_then(Option::as_deref),
            acc.view(),
        ) {
            // Decoded from Draco: tightly packed from byte 0, whatever view the file names.
            (Some(bytes), _) => Some((bytes, layout.element_size(), 0, "its Draco data".into())),
            (None, Some(view)) => Some((
                self.view_bytes(&view).map_err(&fail)?,
                view.stride().unwrap_or(layout.element_size()),
                acc.offset(),
                format!("buffer view {}", view.index()),
            )),
            (None, None) => None,
        };
        let mut out = match data {
            Some((bytes, stride, start, name)) => {
                if stride < layout.element_size() {
                    return Err(fail(format!(
                        "has a byte stride of {stride}, less than its {}-byte elements",
                        layout.element_size()
                    )));
                }
                let need = needed_bytes(start, stride, count, layout.element_size());
                if need.is_none_or(|n| n > bytes.len()) {
                    return Err(fail(format!(
                        "reads {count} elements from byte {start} of {name}, which has only \
                         {} bytes",
                        bytes.len()
                    )));
                }
                let mut out = Vec::with_capacity(count * comps);
                for e in 0..count {
                    layout.decode(&bytes[start + e * stride..], acc.normalized(), &mut out);
                }
                out
            }
            // No buffer view: zeros (§3.6.2.1), usually overridden by sparse values.
            None if count <= MAX_UNBACKED_COUNT => vec![0.0; count * comps],
            None => {
                return Err(fail(format!(
                    "has no buffer view and an implausible count {count}"
                )))
            }
        };
        if let Some(sparse) = acc.sparse() {
            self.apply_sparse(&sparse, layout, count, acc.normalized(), &mut out)
                .map_err(&fail)?;
        }
        Ok(out)
    }

    /// Replaces the elements named by a sparse accessor's indices with its values.
    fn apply_sparse(
        &self,
        sparse: &gltf::accessor::sparse::Sparse,
        layout: Layout,
        count: usize,
        normalized: bool,
        out: &mut [f64],
    ) -> std::result::Result<(), String> {
        use gltf::accessor::sparse::IndexType;
        let n = sparse.count();
        let indices = sparse.indices();
        let index_size = indices.index_type().size();
        let ibytes = self.view_bytes(&indices.view())?;
        let istart = indices.offset();
        if needed_bytes(istart, index_size, n, index_size).is_none_or(|e| e > ibytes.len()) {
            return Err(format!(
                "has {n} sparse indices that do not fit in buffer view {}",
                indices.view().index()
            ));
        }
        let values = sparse.values();
        let vbytes = self.view_bytes(&values.view())?;
        let vstart = values.offset();
        let size = layout.element_size();
        if needed_bytes(vstart, size, n, size).is_none_or(|e| e > vbytes.len()) {
            return Err(format!(
                "has {n} sparse values that do not fit in buffer view {}",
                values.view().index()
            ));
        }
        let comps = layout.components();
        let mut element = Vec::with_capacity(comps);
        for k in 0..n {
            let at = &ibytes[istart + k * index_size..];
            let i = match indices.index_type() {
                IndexType::U8 => usize::from(at[0]),
                IndexType::U16 => usize::from(u16::from_le_bytes([at[0], at[1]])),
                IndexType::U32 => u32::from_le_bytes([at[0], at[1], at[2], at[3]]) as usize,
            };
            if i >= count {
                return Err(format!(
                    "has sparse index {i} beyond its {count} elements (sparse entry {k})"
                ));
            }
            element.clear();
            layout.decode(&vbytes[vstart + k * size..], normalized, &mut element);
            out[i * comps..(i + 1) * comps].copy_from_slice(&element);
        }
        Ok(())
    }

    /// The bytes of buffer view `index` ([`Source::view_bytes`]).
    fn view_bytes_at(&self, index: usize) -> std::result::Result<&[u8], String> {
        let view =
            (self.doc.views().nth(index)).ok_or_else(|| format!("{index} does not exist"))?;
        self.view_bytes(&view)
    }

    /// The bytes of a buffer view, checked against its buffer.
    fn view_bytes(&self, view: &gltf::buffer::View) -> std::result::Result<&[u8], String> {
        if let Some(Some(data)) = self.decoded.get(view.index()) {
            return Ok(data);
        }
        let buffer = view.buffer();
        let data = self
            .buffers
            .get(buffer.index())
            .ok_or_else(|| format!("uses buffer {}, which is not loaded", buffer.index()))?;
        let (start, len) = (view.offset(), view.length());
        start
            .checked_add(len)
            .filter(|&end| end <= data.len())
            .map(|end| &data[start..end])
            .ok_or_else(|| {
                format!(
                    "uses buffer view {} (bytes {start}..{}), beyond the {} bytes of buffer {}",
                    view.index(),
                    start.saturating_add(len),
                    data.len(),
                    buffer.index()
                )
            })
    }
}

/// Bytes needed to read `count` elements of `size` bytes `stride` apart from `start`.
fn needed_bytes(start: usize, stride: usize, count: usize, size: usize) -> Option<usize> {
    match count {
        0 => Some(start),
        _ => stride
            .checked_mul(count - 1)?
            .checked_add(size)?
            .checked_add(start),
    }
}

/// Checks a GLB header (glTF 2.0 §4.4.2) before the `gltf` crate trusts it, and cuts the
/// data to the length it declares.
fn check_glb_header(bytes: &[u8]) -> std::result::Result<&[u8], String> {
    let word = |i: usize| {
        bytes
            .get(4 * i..4 * i + 4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as usize)
    };
    let (Some(version), Some(length)) = (word(1), word(2)) else {
        return Err(format!("truncated .glb: {} bytes", bytes.len()));
    };
    if version != 2 {
        return Err(format!(".glb version {version}, not 2"));
    }
    if length < 20 || length > bytes.len() {
        return Err(format!(
            "truncated .glb: the header declares {length} bytes, the file has {}",
            bytes.len()
        ));
    }
    Ok(&bytes[..length])
}

/// The input file's bytes, refused unless it is a regular file (a FIFO would block).
fn read_input(path: &Path) -> Result<Vec<u8>> {
    let fail = |why: String| Error::input(path, None, why);
    let unreadable = |e: std::io::Error| {
        fail(format!(
            "cannot read the file ({e}); check the path and its permissions"
        ))
    };
    if !std::fs::metadata(path).map_err(unreadable)?.is_file() {
        return Err(fail(
            "is not a regular file (a folder, FIFO or device); give the .gltf or .glb file".into(),
        ));
    }
    std::fs::read(path).map_err(unreadable)
}

/// The document's JSON as a value, for the extension objects the `gltf` crate drops.
fn raw_json(bytes: &[u8]) -> std::result::Result<serde_json::Value, String> {
    let json = if bytes.starts_with(b"glTF") {
        gltf::binary::Glb::from_slice(bytes)
            .map_err(|e| e.to_string())?
            .json
    } else {
        std::borrow::Cow::Borrowed(bytes)
    };
    serde_json::from_slice(&json).map_err(|e| e.to_string())
}

/// `json` validated as `gltf::Document::from_json` does, except that the accessors whose
/// data Draco-compressed primitives supply (`draco`) need no buffer view.
fn validated(
    json: gltf::json::Root,
    draco: &[usize],
) -> std::result::Result<gltf::Document, String> {
    use gltf::json::validation::{Error as Invalid, Validate};
    let mut errors = Vec::new();
    json.validate(&json, gltf::json::Path::new, &mut |path, error| {
        errors.push((path(), error))
    });
    let supplied = |path: &gltf::json::Path| {
        (draco.iter()).any(|i| path.as_str() == format!("accessors[{i}].bufferView"))
    };
    errors.retain(|(path, error)| !(matches!(error, Invalid::Missing) && supplied(path)));
    match errors.is_empty() {
        true => Ok(gltf::Document::from_json_without_validation(json)),
        false => Err(gltf::Error::Validation(errors).to_string()),
    }
}

/// Image URIs obey the same rule as buffers ([`uri`]), although drape reads no images.
fn check_image_uris(doc: &gltf::Document, folders: &Folders, path: &Path) -> Result<()> {
    // From the JSON: `Image::source` panics on an image with neither a URI nor a view.
    for (k, image) in doc.as_json().images.iter().enumerate() {
        if let Some(uri) = image.uri.as_deref().filter(|u| !u.starts_with("data:")) {
            (folders.resolve(uri))
                .map_err(|why| Error::input(path, Some(&format!("image {k}")), why))?;
        }
    }
    Ok(())
}

/// The data of one buffer: the GLB binary chunk, a base64 data URI or an external file.
fn load_buffer(
    buffer: &gltf::Buffer,
    folders: Option<&Folders>,
    blob: &mut Option<Vec<u8>>,
) -> std::result::Result<Vec<u8>, String> {
    let data = match buffer.source() {
        gltf::buffer::Source::Bin => blob.take().ok_or_else(|| {
            "refers to the binary chunk of a .glb, but the file has none; export it again"
                .to_string()
        })?,
        gltf::buffer::Source::Uri(uri) if uri.starts_with("data:") => {
            uri::data_uri(uri).map_err(|e| format!("has a data URI that {e}; export it again"))?
        }
        gltf::buffer::Source::Uri(uri) => {
            let Some(folders) = folders else {
                return Err(format!(
                    "refers to the external file '{uri}', which cannot be resolved here; \
                     embed the buffer or export a .glb"
                ));
            };
            uri::read_regular(&folders.resolve(uri)?, buffer.length())?
        }
    };
    if data.len() < buffer.length() {
        return Err(format!(
            "has {} bytes but declares {}; the file is truncated, export it again",
            data.len(),
            buffer.length()
        ));
    }
    Ok(data)
}

/// Byte layout of an accessor element.
#[derive(Debug, Clone, Copy)]
struct Layout {
    data_type: DataType,
    /// Matrix columns (1 for scalars and vectors).
    columns: usize,
    /// Components per column.
    rows: usize,
}

impl Layout {
    fn of(data_type: DataType, dims: Dimensions) -> Layout {
        let (columns, rows) = match dims {
            Dimensions::Scalar => (1, 1),
            Dimensions::Vec2 => (1, 2),
            Dimensions::Vec3 => (1, 3),
            Dimensions::Vec4 => (1, 4),
            Dimensions::Mat2 => (2, 2),
            Dimensions::Mat3 => (3, 3),
            Dimensions::Mat4 => (4, 4),
        };
        Layout {
            data_type,
            columns,
            rows,
        }
    }

    fn components(self) -> usize {
        self.columns * self.rows
    }

    /// Bytes from one column to the next: padded to 4 bytes for matrices.
    fn column_stride(self) -> usize {
        let bytes = self.rows * self.data_type.size();
        match self.columns {
            1 => bytes,
            _ => bytes.div_ceil(4) * 4,
        }
    }

    fn element_size(self) -> usize {
        self.columns * self.column_stride()
    }

    /// Appends the components of the element at the start of `at` (long enough).
    fn decode(self, at: &[u8], normalized: bool, out: &mut Vec<f64>) {
        let size = self.data_type.size();
        for c in 0..self.columns {
            for r in 0..self.rows {
                let b = &at[c * self.column_stride() + r * size..];
                out.push(component(self.data_type, b, normalized));
            }
        }
    }
}

/// One little-endian component as `f64`, normalised integers mapped to [0, 1] / [−1, 1].
fn component(data_type: DataType, b: &[u8], normalized: bool) -> f64 {
    let scale = |v: f64, max: f64| if normalized { (v / max).max(-1.0) } else { v };
    match data_type {
        DataType::I8 => scale(f64::from(b[0] as i8), 127.0),
        DataType::U8 => scale(f64::from(b[0]), 255.0),
        DataType::I16 => scale(f64::from(i16::from_le_bytes([b[0], b[1]])), 32767.0),
        DataType::U16 => scale(f64::from(u16::from_le_bytes([b[0], b[1]])), 65535.0),
        DataType::U32 => f64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        DataType::F32 => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
    }
}
