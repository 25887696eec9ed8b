//! Damaged Alembic archives (issue 53): Blender's export of the tube character
//! (fixtures/alembic/tube.abc) cut short, or with an offset or size pointing past its end,
//! is refused with exit 2 and a message naming the file; never a crash, never an
//! allocation the file cannot back.
use crate::common::{code, drape, fixture, s, stderr};

/// `drape inspect` on `bytes` written as `name`: exit code and stderr.
fn inspect(bytes: &[u8], name: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    let out = drape(&["inspect", s(&path)]);
    (code(&out), stderr(&out))
}

fn tube() -> Vec<u8> {
    std::fs::read(fixture("alembic/tube.abc")).unwrap()
}

#[test]
fn a_truncated_archive_is_exit_2_naming_the_file() {
    let bytes = tube();
    for keep in [0, 8, 16, bytes.len() / 3, bytes.len() - 1] {
        let (c, err) = inspect(&bytes[..keep], "cut.abc");
        assert_eq!(c, 2, "{keep} bytes: {err}");
        assert!(err.contains("cut.abc") && err.contains("export"), "{err}");
    }
}

#[test]
fn offsets_and_sizes_past_the_end_are_exit_2() {
    let bytes = tube();
    // The root group's offset, then the first child of the root group (the archive
    // version's data offset), then that data block's size.
    let root = u64::from_le_bytes(bytes[8..16].try_into().unwrap()) as usize;
    let first = root + 8;
    let version =
        (u64::from_le_bytes(bytes[first..first + 8].try_into().unwrap()) & !(1 << 63)) as usize;
    for (at, value) in [
        (8, bytes.len() as u64 + 8),
        (root, u64::MAX / 16),
        (first, (1 << 63) | (bytes.len() as u64 * 2)),
        (version, 1 << 40),
    ] {
        let mut b = bytes.clone();
        b[at..at + 8].copy_from_slice(&value.to_le_bytes());
        let (c, err) = inspect(&b, "offset.abc");
        assert_eq!(c, 2, "word at {at} = {value}: {err}");
        let said = err.contains("past the end") || err.contains("more than the file can hold");
        assert!(err.contains("offset.abc") && said, "{err}");
    }
}

#[test]
fn an_unfinished_archive_says_so() {
    let mut bytes = tube();
    bytes[5] = 0; // the frozen byte Ogawa writers set when they close the file
    let (c, err) = inspect(&bytes, "open.abc");
    assert_eq!(c, 2, "{err}");
    assert!(err.contains("never closed"), "{err}");
}
