//! Corrupt binary USD crate files (issue 52): the sheet fixture (fixtures/usd/sheet_seam.usdc)
//! with one count of its table of contents, a structural section or a value array made
//! huge. `openusd` sizes a buffer from each before reading it, so each once aborted drape
//! on an allocation of terabytes (SIGABRT); the budget check refuses them first, with
//! exit 2 and a message naming the file and the count.
use crate::common::{code, drape, fixture, s, stderr};

/// 2⁴⁰: as a count, terabytes of elements.
const HUGE: u64 = 1 << 40;

fn sheet() -> Vec<u8> {
    std::fs::read(fixture("usd/sheet_seam.usdc")).unwrap()
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

/// Where the section `name` starts, from the table of contents (its offset at byte 16;
/// a count, then 32-byte entries: a 16-byte name, start, size).
fn section(bytes: &[u8], name: &str) -> usize {
    let toc = u64_at(bytes, 16) as usize;
    (0..u64_at(bytes, toc) as usize)
        .map(|i| toc + 8 + 32 * i)
        .find(|&e| bytes[e..e + 16].split(|&c| c == 0).next() == Some(name.as_bytes()))
        .map(|e| u64_at(bytes, e + 16) as usize)
        .unwrap_or_else(|| panic!("no {name} section"))
}

/// `drape inspect` on the sheet with the u64 at `at` replaced by `value`: exit code and
/// stderr.
fn inspect_with(at: usize, value: u64) -> (i32, String) {
    let mut bytes = sheet();
    bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hostile.usdc");
    std::fs::write(&path, &bytes).unwrap();
    let out = drape(&["inspect", s(&path)]);
    (code(&out), stderr(&out))
}

fn assert_refused((c, err): (i32, String), words: &[&str]) {
    assert_eq!(c, 2, "{err}");
    assert!(
        err.contains("hostile.usdc") && err.contains("export it again"),
        "{err}"
    );
    for w in words {
        assert!(err.contains(w), "{w:?} not in {err}");
    }
}

#[test]
fn the_untouched_sheet_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sheet.usdc");
    std::fs::write(&path, sheet()).unwrap();
    let out = drape(&["inspect", s(&path)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn a_huge_tokens_size_is_refused_before_allocating() {
    let tokens = section(&sheet(), "TOKENS");
    // count, decompressed size, compressed size
    assert_refused(
        inspect_with(tokens + 8, HUGE),
        &["TOKENS", "more than LZ4 can hold"],
    );
    assert_refused(
        inspect_with(tokens + 16, HUGE),
        &["TOKENS", "the file ends"],
    );
}

#[test]
fn a_huge_strings_count_is_refused_before_allocating() {
    let strings = section(&sheet(), "STRINGS");
    assert_refused(
        inspect_with(strings, 1 << 26),
        &["STRINGS", "67108864 elements"],
    );
}

#[test]
fn huge_counts_of_coded_integers_are_refused_before_allocating() {
    for name in ["FIELDS", "FIELDSETS", "SPECS"] {
        let at = section(&sheet(), name);
        assert_refused(inspect_with(at, HUGE), &[name, "1099511627776 integers"]);
    }
}

#[test]
fn a_huge_path_count_is_over_the_budget() {
    let paths = section(&sheet(), "PATHS");
    assert_refused(inspect_with(paths, HUGE), &["over the budget of 4096 MiB"]);
}

#[test]
fn a_huge_points_count_is_refused_before_allocating() {
    let bytes = sheet();
    // The first point, (-0.5, 1, 0) as f32, follows the array's u64 count (169 points).
    let first: Vec<u8> = [-0.5f32, 1.0, 0.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let at = bytes.windows(12).position(|w| w == first).unwrap() - 8;
    assert_eq!(u64_at(&bytes, at), 169);
    assert_refused(
        inspect_with(at, HUGE),
        &["1099511627776 elements of 12 bytes"],
    );
}

#[test]
fn a_panic_inside_the_crate_reader_is_exit_2_not_an_internal_error() {
    // faceVertexCounts: 288 coded integers, the u64 size of their LZ4 block, the block,
    // whose first byte (0: one chunk) made chunked; openusd has `todo!()` there.
    let bytes = sheet();
    let at = (0..bytes.len() - 17)
        .find(|&p| u64_at(&bytes, p) == 288 && u64_at(&bytes, p + 8) < 64 && bytes[p + 16] == 0)
        .unwrap();
    let mut chunked = bytes[at + 16..at + 24].to_vec();
    chunked[0] = 1;
    let (c, err) = inspect_with(at + 16, u64::from_le_bytes(chunked.try_into().unwrap()));
    assert_eq!(c, 2, "{err}");
    assert!(
        err.contains("hostile.usdc") && err.contains("malformed crate data"),
        "{err}"
    );
    assert!(!err.contains("internal error"), "{err}");
}
