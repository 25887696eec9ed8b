//! External files named by a glTF file: buffer and image URIs (glTF 2.0 §3.3.3 URIs).
//!
//! A URI is a relative reference: percent-escapes decoded (RFC 3986 §2.1) and resolved
//! against the folder of the `.gltf` file. It must stay inside that folder, or inside a
//! folder the user allowed (`--allow-paths DIR`):
//!
//! ```text
//! target = canonical(folder / decoded URI)     (symbolic links and `..` resolved;
//!                                               lexically when the file does not exist)
//! accepted  ⇔  target lies under canonical(folder) or under canonical(DIR) for an allowed DIR
//! ```
//!
//! so an absolute path (`/etc/passwd`, `file:///…`) or a `..` escape is refused with the URI
//! named, and a scene file cannot make drape read files its user did not hand it. Files read
//! must be regular files: a FIFO or a device would block or never end. A `data:` URI
//! (RFC 2397) holds its bytes in base64 ([`data_uri`]).
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// The folders external files may come from: the glTF file's own and the allowed ones.
#[derive(Debug, Clone)]
pub(crate) struct Folders {
    /// The glTF file's folder, canonical.
    base: PathBuf,
    /// Canonical `--allow-paths` folders (those that exist).
    allowed: Vec<PathBuf>,
}

impl Folders {
    /// The folders for a glTF file in `base` with the user's `allowed` folders.
    pub fn new(base: &Path, allowed: &[PathBuf]) -> Folders {
        let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        Folders {
            base: canonical(base),
            allowed: allowed.iter().map(|p| canonical(p)).collect(),
        }
    }

    /// The file `uri` names, checked to stay inside the allowed folders; the error names
    /// the URI and what to do.
    pub fn resolve(&self, uri: &str) -> std::result::Result<PathBuf, String> {
        let path = uri
            .strip_prefix("file://")
            .or_else(|| uri.strip_prefix("file:"))
            .unwrap_or(uri);
        if !uri.starts_with("file:") && has_scheme(path) {
            return Err(format!(
                "has URI '{uri}', which is neither a relative file path nor a data URI; keep \
                 the file beside the .gltf or export a .glb"
            ));
        }
        let name = percent_decode(path)
            .ok_or_else(|| format!("has a malformed URI '{uri}'; export it again"))?;
        let joined = self.base.join(&name);
        let target = joined.canonicalize().unwrap_or_else(|_| normalize(&joined));
        let inside =
            target.starts_with(&self.base) || self.allowed.iter().any(|a| target.starts_with(a));
        if !inside {
            return Err(format!(
                "has URI '{uri}', which points outside the folder of the glTF file ({}); keep \
                 external files in that folder or below it, or allow their folder with \
                 --allow-paths DIR",
                self.base.display()
            ));
        }
        Ok(target)
    }
}

/// The bytes of a base64 `data:` URI (`data:[<media type>];base64,<data>`, RFC 2397), as
/// glTF writers embed buffers; the error says what is malformed.
pub(crate) fn data_uri(uri: &str) -> std::result::Result<Vec<u8>, String> {
    let (head, data) = uri
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(','))
        .ok_or("is not of the form data:<type>;base64,<data>")?;
    if !head.ends_with(";base64") {
        return Err("is not base64-encoded".to_string());
    }
    base64::decode(data.trim()).map_err(|e| format!("is not valid base64 ({e})"))
}

/// Whether `s` starts with a URI scheme (`name:`, RFC 3986 §3.1) rather than a path.
fn has_scheme(s: &str) -> bool {
    match s.find(':') {
        Some(i) => {
            let scheme = &s[..i];
            scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        }
        None => false,
    }
}

/// `path` with `.` dropped and each `..` removing the component before it (lexically).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Reads the first `length` bytes of the regular file `path` (never a FIFO or device);
/// shorter files are an error (the buffer is truncated).
pub(crate) fn read_regular(path: &Path, length: usize) -> std::result::Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| {
        format!(
            "cannot read its external file {} ({e}); keep the file beside the .gltf or \
             export a .glb",
            path.display()
        )
    })?;
    if !meta.is_file() {
        return Err(format!(
            "names {}, which is not a regular file (a folder, FIFO or device); point it at \
             the .bin file or export a .glb",
            path.display()
        ));
    }
    if meta.len() < length as u64 {
        return Err(format!(
            "declares {length} bytes but its file {} has {}; the file is truncated, export it \
             again",
            path.display(),
            meta.len()
        ));
    }
    let mut data = Vec::with_capacity(length);
    std::fs::File::open(path)
        .and_then(|f| f.take(length as u64).read_to_end(&mut data))
        .map_err(|e| format!("cannot read its external file {} ({e})", path.display()))?;
    Ok(data)
}

/// `%XX` escapes of a URI path decoded (RFC 3986 §2.1); `None` if not UTF-8 afterwards.
pub(crate) fn percent_decode(uri: &str) -> Option<String> {
    let bytes = uri.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h)? * 16 + hex(l)?) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_resolve_inside_the_folder_or_an_allowed_one() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("scene");
        std::fs::create_dir_all(sub.join("bin")).unwrap();
        let folders = Folders::new(&sub, &[]);
        let base = sub.canonicalize().unwrap();
        assert_eq!(folders.resolve("a%20b.bin").unwrap(), base.join("a b.bin"));
        assert_eq!(folders.resolve("bin/../x.bin").unwrap(), base.join("x.bin"));
        for bad in [
            "../x.bin",
            "/etc/passwd",
            "file:///etc/passwd",
            "bin/../../x.bin",
        ] {
            let msg = folders.resolve(bad).unwrap_err();
            assert!(msg.contains(bad) && msg.contains("--allow-paths"), "{msg}");
        }
        assert!(folders.resolve("http://host/x.bin").is_err());
        let widened = Folders::new(&sub, &[dir.path().to_path_buf()]);
        assert!(widened.resolve("../x.bin").is_ok());
    }
}
