//! Houdini-style frame fields in file names: `$F` (the frame number) and `$F4` (padded
//! with zeros to 4 digits; any width 1–9), also written `${F}` / `${F4}`. Negative frames
//! keep their sign in front of the padding (`-003` for `$F4` at frame −3), as `printf`'s
//! `%04d` does.
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// A path with one frame field in its file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FramePattern {
    /// Directory part (unchanged by the frame).
    dir: PathBuf,
    /// File name before the field.
    prefix: String,
    /// File name after the field.
    suffix: String,
    /// Zero padding width (0: none).
    width: usize,
}

impl FramePattern {
    /// Finds the frame field in `path`'s file name; an input error if there is none.
    pub fn parse(path: &Path) -> Result<FramePattern> {
        let missing = || {
            Error::input(
                path,
                None,
                "a .geo cache is one file per frame, but the file name has no frame field; \
                 put $F or $F4 in it, e.g. -o 'shirt.$F4.geo' (quote it so the shell keeps $F)",
            )
        };
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(missing)?;
        let (at, field_len, width) = find_field(name).ok_or_else(missing)?;
        Ok(FramePattern {
            dir: path.parent().unwrap_or(Path::new("")).to_path_buf(),
            prefix: name[..at].to_string(),
            suffix: name[at + field_len..].to_string(),
            width,
        })
    }

    /// The file of `frame`.
    pub fn path(&self, frame: i32) -> PathBuf {
        let number = format!("{frame:0w$}", w = self.width);
        self.dir
            .join(format!("{}{number}{}", self.prefix, self.suffix))
    }

    /// The files of this pattern in its directory, with their frame numbers: exactly the
    /// names [`FramePattern::path`] gives for some frame (`s.0007.geo` for `s.$F4.geo`,
    /// not `s.7.geo` or `s.0007.geo.bak`).
    pub fn existing(&self) -> Result<Vec<(i32, PathBuf)>> {
        let dir = match self.dir.as_os_str().is_empty() {
            true => Path::new("."),
            false => self.dir.as_path(),
        };
        let listing = std::fs::read_dir(dir)
            .map_err(|e| Error::input(dir, None, format!("cannot list the directory: {e}")))?;
        let mut found = Vec::new();
        for entry in listing.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let number = name
                .strip_prefix(self.prefix.as_str())
                .and_then(|n| n.strip_suffix(self.suffix.as_str()));
            let Some(frame) = number.and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            let path = self.path(frame);
            if path.file_name() == Some(std::ffi::OsStr::new(name)) {
                found.push((frame, path));
            }
        }
        found.sort();
        Ok(found)
    }
}

/// Byte offset, length and padding width of the first `$F`, `$Fn`, `${F}` or `${Fn}`.
fn find_field(name: &str) -> Option<(usize, usize, usize)> {
    let bytes = name.as_bytes();
    for (i, _) in name.match_indices('$') {
        let rest = &bytes[i + 1..];
        let (braced, body) = match rest.first() {
            Some(b'{') => (true, &rest[1..]),
            _ => (false, rest),
        };
        if body.first() != Some(&b'F') {
            continue;
        }
        let digit = body.get(1).filter(|d| d.is_ascii_digit() && **d != b'0');
        let width = digit.map_or(0, |d| usize::from(d - b'0'));
        let mut len = 2 + usize::from(digit.is_some());
        let next = body.get(1 + usize::from(digit.is_some()));
        if !braced && digit.is_none() && next.is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        {
            continue; // another variable, such as $FPS
        }
        if braced {
            if body.get(1 + usize::from(digit.is_some())) != Some(&b'}') {
                continue;
            }
            len += 2;
        }
        return Some((i, len, width));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_fields_expand_like_houdini() {
        let p = FramePattern::parse(Path::new("out/shirt.$F4.geo")).unwrap();
        assert_eq!(p.path(7), PathBuf::from("out/shirt.0007.geo"));
        assert_eq!(p.path(12345), PathBuf::from("out/shirt.12345.geo"));
        assert_eq!(p.path(-3), PathBuf::from("out/shirt.-003.geo"));
        let p = FramePattern::parse(Path::new("s_$F.geo")).unwrap();
        assert_eq!(p.path(7), PathBuf::from("s_7.geo"));
        let p = FramePattern::parse(Path::new("s.${F3}.geo")).unwrap();
        assert_eq!(p.path(7), PathBuf::from("s.007.geo"));
        let p = FramePattern::parse(Path::new("s.${F}x.geo")).unwrap();
        assert_eq!(p.path(7), PathBuf::from("s.7x.geo"));
    }

    #[test]
    fn a_name_without_frame_field_is_an_input_error_naming_the_fix() {
        for bad in [
            "shirt.geo",
            "$HOME.geo",
            "$FPS.geo",
            "$F4dir/shirt.geo",
            "s.${F4.geo",
        ] {
            let e = FramePattern::parse(Path::new(bad)).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}");
            assert!(e.to_string().contains("$F4"), "{bad}: {e}");
        }
    }
}
