//! Where each garment's cache goes: the `-o` path with `{garment}` expanded, a scene
//! file's `out`, or `<garment>.pc2` beside the scene (docs/reference.md, "Outputs").
//!
//! Object names come from the scene and are not trusted as file names: [`file_name`]
//! maps each to a single path component. A scene file's `out` must stay inside the scene
//! file's folder; only a path the user writes on the command line (`-o`) may point
//! anywhere.
use crate::error::{Error, Result};
use crate::io::scene_file::GarmentSettings;
use crate::scene::Garment;
use std::path::{Component, Path, PathBuf};

/// Longest file name made from an object name, in bytes (file systems allow 255; room is
/// left for the extension, `.partial` and `.tmp`).
const NAME_MAX: usize = 200;

/// An object name as one safe file-name component: `/`, `\` and control characters
/// become `_`; leading dots become `_` (no `.`, `..` or hidden file); an empty name is
/// `_`; names longer than 200 bytes are cut at a character boundary. Every other
/// character, spaces and non-ASCII letters included, is kept.
pub fn file_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| match c {
            '/' | '\\' => '_',
            c if c.is_control() => '_',
            c => c,
        })
        .collect();
    let dots = s.len() - s.trim_start_matches('.').len();
    s.replace_range(..dots, &"_".repeat(dots));
    if s.is_empty() {
        s.push('_');
    }
    if s.len() > NAME_MAX {
        let mut cut = NAME_MAX;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
    s
}

/// `path` with `.` dropped and `..` applied to the components before it (no file system
/// access); a `..` with nothing before it to remove is kept.
pub(crate) fn lexical(path: &Path) -> PathBuf {
    let mut out: Vec<Component> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out.iter().collect()
}

/// True if `path` lies inside the folder `dir` once `.` and `..` are resolved.
fn inside(path: &Path, dir: &Path) -> bool {
    let (p, d) = (lexical(path), lexical(dir));
    p.starts_with(&d) && p != d && !p.components().any(|c| c == Component::ParentDir)
}

/// One output path per garment: `out` with `{garment}` expanded to [`file_name`] of the
/// garment's name, else the scene file's `out` for that garment (which must lie inside
/// `dir`), else `<file_name>.pc2` in `dir`. An empty `out`, or two garments writing the
/// same path, is a usage error.
pub(super) fn output_paths(
    out: Option<&Path>,
    dir: &Path,
    garments: &[Garment],
    settings: &[GarmentSettings],
) -> Result<Vec<PathBuf>> {
    if out.is_some_and(|o| o.as_os_str().is_empty()) {
        return Err(Error::usage(
            "-o needs a path: a cache file such as shirt.pc2, or leave -o out for \
             <garment>.pc2 beside the scene",
        ));
    }
    let mut paths = Vec::with_capacity(garments.len());
    for (i, g) in garments.iter().enumerate() {
        let name = file_name(&g.name);
        let path = match (out, settings.get(i).and_then(|s| s.out.clone())) {
            (Some(o), _) => PathBuf::from(o.to_string_lossy().replace("{garment}", &name)),
            (None, Some(o)) => {
                if !inside(&o, dir) {
                    return Err(Error::input(
                        &o,
                        Some(&g.name),
                        format!(
                            "the scene file's out path leaves the scene's folder {}; give a \
                             path inside it, or write the cache elsewhere with -o on the \
                             command line",
                            if dir.as_os_str().is_empty() {
                                Path::new(".").display()
                            } else {
                                dir.display()
                            }
                        ),
                    ));
                }
                o
            }
            (None, None) => dir.join(format!("{name}.pc2")),
        };
        paths.push(path);
    }
    for (i, p) in paths.iter().enumerate() {
        if paths[..i].contains(p) {
            return Err(Error::usage(format!(
                "{} garments would write the same cache {}; put {{garment}} in the -o path",
                garments.len(),
                p.display()
            )));
        }
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_names_become_one_file_name_component() {
        assert_eq!(file_name("Shirt"), "Shirt");
        assert_eq!(file_name("Röck 2"), "Röck 2");
        assert_eq!(file_name("../../x"), "___.._x");
        assert_eq!(file_name("/etc/passwd"), "_etc_passwd");
        assert_eq!(file_name(".."), "__");
        assert_eq!(file_name(".hidden"), "_hidden");
        assert_eq!(file_name("a\\b\nc"), "a_b_c");
        assert_eq!(file_name(""), "_");
        assert_eq!(file_name(&"é".repeat(150)).len(), 200);
        for n in ["../../x", "/abs", "..", ".", "a/../../b"] {
            let p = Path::new("dir").join(file_name(n));
            assert!(inside(&p, Path::new("dir")), "{n} → {}", p.display());
        }
    }

    #[test]
    fn paths_inside_a_folder_are_told_lexically() {
        let d = Path::new("/scenes/a");
        assert!(inside(Path::new("/scenes/a/cache/x.pc2"), d));
        assert!(inside(Path::new("/scenes/a/./b/../x.pc2"), d));
        assert!(!inside(Path::new("/scenes/a/../x.pc2"), d));
        assert!(!inside(Path::new("/tmp/x.pc2"), d));
        assert!(!inside(Path::new("/scenes/a"), d));
        assert!(inside(Path::new("cache/x.pc2"), Path::new("")));
        assert!(!inside(Path::new("../x.pc2"), Path::new("")));
    }
}
