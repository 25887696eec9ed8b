//! The budget check on the crate fixtures and on hand-made values.
use super::values::Values;
use super::*;
use crate::io::usd::layer::{Layer, Prim};
use crate::io::usd::usdc;

fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/usd");
    std::fs::read(path.join(name)).unwrap()
}

/// Bytes of the numbers drape keeps from a layer (8 a number), read back from the layer.
fn kept_numbers(layer: &Layer) -> u64 {
    fn value(v: &Value) -> u64 {
        match v {
            Value::Numbers(n) => 8 * n.len() as u64,
            Value::List(l) | Value::Tuple(l) => l.iter().map(value).sum(),
            _ => 0,
        }
    }
    fn prim(p: &Prim) -> u64 {
        let attrs = p.attributes.iter().map(|a| {
            let samples = a.time_samples.iter().flatten().map(|(_, v)| value(v));
            a.default.as_ref().map_or(0, value) + samples.sum::<u64>()
        });
        attrs.sum::<u64>() + p.children.iter().map(prim).sum::<u64>()
    }
    layer.prims.iter().map(prim).sum()
}

#[test]
fn the_estimate_covers_what_the_fixtures_decode_to_and_the_budget_bites_above_it() {
    for name in ["sheet_seam.usdc", "body_anim.usdc"] {
        let bytes = fixture(name);
        let estimate = memory(&bytes, MEMORY_BUDGET).unwrap();
        let layer = usdc::parse(&bytes).unwrap();
        let kept = kept_numbers(&layer);
        assert!(kept > 1000, "{name}: {kept}");
        assert!(
            estimate >= kept,
            "{name}: estimate {estimate} < kept {kept}"
        );
        assert!(check(&bytes, estimate).is_ok());
        let err = usdc::parse_within(&bytes, estimate - 1).unwrap_err();
        assert!(err.contains("over the budget"), "{err}");
    }
}

#[test]
fn crate_versions_before_0_4_are_refused() {
    let mut bytes = fixture("sheet_seam.usdc");
    bytes[8..11].copy_from_slice(&[0, 3, 0]);
    let err = check(&bytes, MEMORY_BUDGET).unwrap_err();
    assert!(err.contains("crate version 0.3.0"), "{err}");
}

/// A walk over `bytes` with one token of 4 bytes and one string naming it.
fn walk(bytes: &[u8], rep: u64) -> Result<u64, String> {
    let mut values = Values {
        bytes,
        version: [0, 8, 0],
        tokens: vec![4],
        strings: &[0],
        paths: Vec::new(),
        memo: HashMap::new(),
        active: HashSet::new(),
    };
    values.cost(rep, 0)
}

/// A dictionary value representation at byte `at`.
fn dictionary(at: usize) -> u64 {
    (ty::DICTIONARY << 48) | at as u64
}

/// A dictionary of one entry (key string 0) whose value, written right after its offset
/// of `offset`, is `value`: count, key, offset, value representation (28 bytes).
fn one_entry(offset: i64, value: u64) -> Vec<u8> {
    let mut b = 1u64.to_le_bytes().to_vec();
    b.extend(0u32.to_le_bytes());
    b.extend(offset.to_le_bytes());
    b.extend(value.to_le_bytes());
    b
}

#[test]
fn dictionaries_that_point_backwards_contain_themselves_or_nest_too_deep_are_refused() {
    let inline_int = (3u64 << 48) | (1 << 62) | 7;
    let mut bytes = vec![0u8; 8];
    bytes.extend(one_entry(8, inline_int));
    assert!(walk(&bytes, dictionary(8)).is_ok());
    let mut bytes = vec![0u8; 8];
    bytes.extend(one_entry(-12, inline_int));
    let err = walk(&bytes, dictionary(8)).unwrap_err();
    assert!(err.contains("points backwards"), "{err}");
    let mut bytes = vec![0u8; 8];
    bytes.extend(one_entry(8, dictionary(8)));
    let err = walk(&bytes, dictionary(8)).unwrap_err();
    assert!(err.contains("contains itself"), "{err}");
    // A chain of dictionaries, each the value of the one before.
    let chain = |depth: usize| {
        let mut bytes = vec![0u8; 8];
        for i in 0..depth {
            let next = if i + 1 < depth {
                dictionary(8 + 28 * (i + 1))
            } else {
                inline_int
            };
            bytes.extend(one_entry(8, next));
        }
        walk(&bytes, dictionary(8))
    };
    assert!(chain(MAX_NESTING).is_ok());
    let err = chain(MAX_NESTING + 2).unwrap_err();
    assert!(err.contains("nested deeper than 64"), "{err}");
}

#[test]
fn an_array_count_beyond_the_file_and_a_missing_token_are_refused() {
    // A float[] of 3 elements at byte 8: its u64 count, then 12 bytes.
    let float_array = (ty::FLOAT << 48) | (1 << 63) | 8;
    let mut bytes = vec![0u8; 8];
    bytes.extend(3u64.to_le_bytes());
    bytes.extend([0u8; 12]);
    assert_eq!(walk(&bytes, float_array).unwrap(), 3 * (4 + 8) + SCALAR);
    bytes[8..16].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let err = walk(&bytes, float_array).unwrap_err();
    assert!(err.contains("1099511627776 elements of 4 bytes"), "{err}");
    let token = (ty::TOKEN << 48) | (1 << 62) | 5;
    let err = walk(&bytes, token).unwrap_err();
    assert!(err.contains("names token 5, but the file has 1"), "{err}");
}
