//! One writer per output: a bake claims `<out>.partial` before writing a byte of it.
//!
//! The claim is a POSIX record lock (`fcntl(F_SETLK)`, a write lock on the whole file)
//! held on the open partial file for as long as the bake writes it; the kernel drops it
//! when the process ends, however it ends, so a killed bake never leaves a stale lock. A
//! second bake to the same output finds the lock and stops at once, naming the process
//! that holds it (`F_GETLK` reports its pid). Opening never follows a symbolic link
//! (`O_NOFOLLOW`) and never truncates a partial file left by an earlier bake unless the
//! user passed `--force` (with `--force` a symbolic link there is removed, never written
//! through).
use crate::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// What is at a partial path before a bake claims it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// Nothing: the bake may create it.
    Nothing,
    /// A partial file of an earlier bake that no process writes any more.
    Stale,
    /// A symbolic link (never written through).
    Link,
    /// A file another process is writing: its pid (0 if the system does not say).
    Busy(i32),
    /// A directory or another non-file.
    Other,
}

/// Looks at `path` without changing anything.
pub fn inspect(path: &Path) -> Found {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Found::Nothing;
    };
    if meta.file_type().is_symlink() {
        return Found::Link;
    }
    if !meta.is_file() {
        return Found::Other;
    }
    match open_existing(path) {
        Ok(file) => match holder(&file) {
            Some(pid) => Found::Busy(pid),
            None => Found::Stale,
        },
        Err(_) => Found::Stale,
    }
}

/// The error for what was found at `path` when a bake wants it (`None`: it may go ahead).
pub fn refusal(path: &Path, found: Found, force: bool) -> Option<Error> {
    let message = match (found, force) {
        (Found::Nothing, _) | (Found::Stale | Found::Link, true) => return None,
        (Found::Busy(pid), _) => format!(
            "is being written by another drape bake ({}); wait for it to finish or choose \
             another -o path",
            if pid > 0 {
                format!("process {pid}")
            } else {
                "another process".to_string()
            }
        ),
        (Found::Stale, false) => "is the partial cache of an earlier bake; move it away to \
                                  keep its frames, or pass --force to replace it"
            .to_string(),
        (Found::Link, false) => "is a symbolic link, which drape never writes through; \
                                 remove it, or pass --force to replace the link (not its \
                                 target)"
            .to_string(),
        (Found::Other, _) => {
            "exists and is not a file; remove it or choose another -o path".to_string()
        }
    };
    Some(Error::input(path, None, message))
}

/// Creates (or, with `force`, takes over) `path` for reading and writing, holding
/// `contents` and locked by this process; refuses as [`refusal`] says.
///
/// `path` never exists without `contents` (a SIGKILL at any instant leaves either nothing
/// there, the earlier file, or `contents` complete): they are written to a file of this
/// process's own, `<path>.<pid>.new`, locked there, and that file is then linked in as
/// `path` (`link` fails if `path` exists) or, replacing a stale file under `force`,
/// renamed over it. A kill between the two steps can leave only that `.new` file.
pub fn claim(path: &Path, force: bool, contents: &[u8]) -> Result<File> {
    let io = |p: &Path, e: std::io::Error| Error::Output {
        path: p.to_path_buf(),
        source: e,
    };
    let mut new = path.as_os_str().to_owned();
    new.push(format!(".{}.new", std::process::id()));
    let new = std::path::PathBuf::from(new);
    let _ = std::fs::remove_file(&new);
    let prepared = create_new(&new).and_then(|mut f| f.write_all(contents).map(|()| f));
    let file = match prepared {
        Ok(f) => lock(path, f).inspect_err(|_| {
            let _ = std::fs::remove_file(&new);
        })?,
        Err(e) => {
            let _ = std::fs::remove_file(&new);
            return Err(io(path, e));
        }
    };
    let result = put_in_place(path, &new, force);
    let _ = std::fs::remove_file(&new);
    result.map(|()| file)
}

/// Moves the prepared file `new` to `path`: a link if nothing is there, a rename over a
/// stale file (or a symbolic link) with `force`; refuses as [`refusal`] says.
fn put_in_place(path: &Path, new: &Path, force: bool) -> Result<()> {
    let io = |e: std::io::Error| Error::Output {
        path: path.to_path_buf(),
        source: e,
    };
    for _ in 0..2 {
        match std::fs::hard_link(new, path) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io(e)),
        }
        let found = inspect(path);
        if let Some(e) = refusal(path, found, force) {
            return Err(e);
        }
        if found == Found::Link {
            std::fs::remove_file(path).map_err(io)?;
            continue;
        }
        // Hold the earlier file's lock across the rename, so that no other bake takes it
        // over meanwhile.
        let old = match open_existing(path) {
            Ok(old) => Some(lock(path, old)?),
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => return Err(io(e)),
        };
        std::fs::rename(new, path).map_err(io)?;
        drop(old);
        return Ok(());
    }
    Err(Error::input(
        path,
        None,
        "keeps being recreated by another process; choose another -o path",
    ))
}

/// Takes over the partial file an interrupted bake left at `path`, keeping its bytes, to
/// continue it (`--resume`): locked by this process like [`claim`]; refused if another
/// bake writes it, if it is a link or not a file, or if there is none.
pub fn reclaim(path: &Path) -> Result<File> {
    match inspect(path) {
        Found::Stale => {}
        Found::Nothing => {
            return Err(Error::input(
                path,
                None,
                "is missing, so the bake cannot continue from its checkpoint",
            ))
        }
        found => {
            return Err(
                refusal(path, found, false).unwrap_or_else(|| Error::Internal("reclaim".into()))
            )
        }
    }
    let file = open_existing(path).map_err(|e| Error::Output {
        path: path.to_path_buf(),
        source: e,
    })?;
    lock(path, file)
}

/// `path` created new, not following a link.
pub fn create_new(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// An existing `path` opened for reading and writing without truncating it or following
/// a link.
fn open_existing(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// A write lock over the whole file.
fn whole_file(kind: libc::c_int) -> libc::flock {
    // SAFETY: `flock` is a plain C struct for which all-zero bytes are a valid value.
    let mut l: libc::flock = unsafe { std::mem::zeroed() };
    l.l_type = kind as _;
    l.l_whence = libc::SEEK_SET as _;
    l
}

/// `file` with this process's write lock on it, or the error naming who holds it.
fn lock(path: &Path, file: File) -> Result<File> {
    let l = whole_file(libc::F_WRLCK);
    // SAFETY: `fcntl(F_SETLK)` reads the `flock` given by pointer, valid for the call.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &l) } == 0 {
        return Ok(file);
    }
    let pid = holder(&file).unwrap_or(0);
    Err(refusal(path, Found::Busy(pid), true).unwrap_or_else(|| Error::Internal("lock".into())))
}

/// The pid of the process holding a lock on `file` that would block a write lock.
fn holder(file: &File) -> Option<i32> {
    let mut l = whole_file(libc::F_WRLCK);
    // SAFETY: `fcntl(F_GETLK)` fills the `flock` given by pointer, valid for the call.
    let r = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETLK, &mut l) };
    (r == 0 && libc::c_int::from(l.l_type) != libc::F_UNLCK).then_some(l.l_pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_partial_needs_force_and_a_link_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.pc2.partial");
        assert_eq!(inspect(&p), Found::Nothing);
        drop(claim(&p, false, b"").unwrap());
        std::fs::write(&p, b"frames").unwrap();
        assert_eq!(inspect(&p), Found::Stale);
        let e = claim(&p, false, b"").unwrap_err().to_string();
        assert!(e.contains("--force"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"frames", "not truncated");
        drop(claim(&p, true, b"head").unwrap());
        assert_eq!(std::fs::read(&p).unwrap(), b"head");

        let target = dir.path().join("precious");
        std::fs::write(&target, b"keep").unwrap();
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink(&target, &p).unwrap();
        assert_eq!(inspect(&p), Found::Link);
        assert!(claim(&p, false, b"").is_err());
        drop(claim(&p, true, b"").unwrap());
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert!(!std::fs::symlink_metadata(&p).unwrap().is_symlink());
    }

    #[test]
    fn a_claimed_file_holds_its_contents_and_no_helper_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.pc2.partial");
        let held = claim(&p, false, b"POINTCACHE2").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"POINTCACHE2");
        let names = |d: &Path| {
            let mut v: Vec<_> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            v.sort();
            v
        };
        assert_eq!(names(dir.path()), ["c.pc2.partial"]);
        drop(held);
        std::fs::write(&p, b"old frames").unwrap();
        drop(claim(&p, true, b"new header").unwrap());
        assert_eq!(std::fs::read(&p).unwrap(), b"new header");
        assert_eq!(names(dir.path()), ["c.pc2.partial"]);
    }
}
