//! Binary USD crate files (`.usdc`, or `.usd` starting with `PXR-USDC`), read with the
//! [`openusd`] crate and converted into our own [`Layer`] so every rule of the `.usda`
//! reader (see the [parent module](super)) applies unchanged.
//!
//! The conversion walks the crate's specs from the pseudo-root along `primChildren` and
//! `propertyChildren`, as Sdf lays a layer out:
//! ```text
//! pseudo-root fields (upAxis, metersPerUnit, ...) -> Layer::metadata
//! prim spec: specifier, typeName, other fields    -> Prim (fields -> Prim::metadata)
//! attribute spec: typeName, default, timeSamples  -> Attribute (other fields -> metadata)
//! relationship spec                               -> Attribute with type "rel", its
//!                                                    targetPaths (list op flattened) as
//!                                                    the default, a list of paths
//! ```
//! Values map to the text model: numbers (and halves) to `Num`, vectors and quaternions
//! (w, x, y, z) to `Tuple`, matrices to a `Tuple` of row `Tuple`s, arrays to `List`,
//! strings and tokens to `Str`, booleans to `true`/`false`, a value block to `None`.
//! Fields with no counterpart in the text subset (list ops, payloads...) are dropped,
//! except that a prim's composition arcs (`references`, `payload`, `inherits`,
//! `specializes`, `variantSetNames`) leave an empty list under the text spelling of their
//! key, so [`compose::has_arcs`](super::compose::has_arcs) sends the file to composition.
//!
//! Before `openusd` sees the file, [`crate_budget::check`] checks every count the crate
//! will allocate from against the file and the memory budget, so a corrupt or hostile
//! file is an error and never an allocation the process cannot survive. `openusd` reports
//! the rest of malformed files as errors; a panic inside it is caught as a last resort
//! and becomes an input error too.
use super::crate_budget;
use super::layer::{Attribute, Layer, Prim, Specifier, Value};
use openusd::sdf::{self, AbstractData};
use openusd::usdc::CrateData;
use std::collections::HashSet;
use std::io::Cursor;

/// The crate magic.
pub const MAGIC: &[u8] = openusd::usdc::MAGIC;

/// Deepest prim nesting accepted (a hostile file cannot exhaust the stack).
const MAX_DEPTH: usize = 256;

/// Prim fields that are structure, not metadata.
const PRIM_STRUCTURE: &[&str] = &[
    "specifier",
    "typeName",
    "primChildren",
    "propertyChildren",
    "properties",
];
/// Prim fields holding composition arcs, with their `.usda` metadata key.
const ARC_FIELDS: &[(&str, &str)] = &[
    ("references", "references"),
    ("payload", "payload"),
    ("inheritPaths", "inherits"),
    ("specializes", "specializes"),
    ("variantSetNames", "variantSets"),
];

/// Attribute fields that are structure, not metadata.
const ATTR_STRUCTURE: &[&str] = &[
    "typeName",
    "default",
    "timeSamples",
    "custom",
    "variability",
];

/// Reads a crate file's bytes into a [`Layer`] within [`crate_budget::MEMORY_BUDGET`];
/// errors say what is malformed.
pub fn parse(bytes: &[u8]) -> Result<Layer, String> {
    parse_within(bytes, crate_budget::MEMORY_BUDGET)
}

/// [`parse`] with a memory budget of `budget` bytes.
pub fn parse_within(bytes: &[u8], budget: u64) -> Result<Layer, String> {
    crate::io::foreign::catch(|| {
        crate_budget::check(bytes, budget)?;
        parse_unguarded(bytes)
    })
    .unwrap_or_else(|| Err("malformed crate data".to_string()))
}

fn parse_unguarded(bytes: &[u8]) -> Result<Layer, String> {
    let data = CrateData::open(Cursor::new(bytes), true).map_err(|e| format!("{e:#}"))?;
    let root = sdf::Path::abs_root();
    let mut metadata = Vec::new();
    for (name, value) in fields(&data, &root, &["primChildren"])? {
        metadata.push((name, value));
    }
    let mut prims = Vec::new();
    for name in children(&data, &root)? {
        let path = sdf::Path::new(&format!("/{name}")).map_err(|e| format!("{e:#}"))?;
        if let Some(p) = prim(&data, &path, &name, 0)? {
            prims.push(p);
        }
    }
    Ok(Layer { metadata, prims })
}

/// A field's value, `None` if absent.
fn field(
    data: &dyn AbstractData,
    path: &sdf::Path,
    name: &str,
) -> Result<Option<sdf::Value>, String> {
    data.try_field(path, name)
        .map(|v| v.map(|v| v.into_owned()))
        .map_err(|e| format!("{}: {e}", path.as_str()))
}

/// The tokens of a token-array field (duplicates dropped, order kept).
fn tokens(data: &dyn AbstractData, path: &sdf::Path, name: &str) -> Result<Vec<String>, String> {
    let mut seen = HashSet::new();
    Ok(match field(data, path, name)? {
        Some(sdf::Value::TokenVec(v)) => v.iter().map(|t| t.as_str().to_string()).collect(),
        Some(sdf::Value::StringVec(v)) => v,
        _ => Vec::new(),
    }
    .into_iter()
    .filter(|n| seen.insert(n.clone()))
    .collect())
}

fn children(data: &dyn AbstractData, path: &sdf::Path) -> Result<Vec<String>, String> {
    tokens(data, path, "primChildren")
}

/// Every field of `path` except `skip`, converted (unconvertible ones dropped).
fn fields(
    data: &dyn AbstractData,
    path: &sdf::Path,
    skip: &[&str],
) -> Result<Vec<(String, Value)>, String> {
    let mut names = data.list_fields(path).unwrap_or_default();
    names.sort();
    let mut out = Vec::new();
    for name in names.into_iter().filter(|n| !skip.contains(&n.as_str())) {
        if let Some(v) = field(data, path, &name)?.as_ref().and_then(convert) {
            out.push((name, v));
        }
    }
    Ok(out)
}

fn prim(
    data: &dyn AbstractData,
    path: &sdf::Path,
    name: &str,
    depth: usize,
) -> Result<Option<Prim>, String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "prims nested deeper than {MAX_DEPTH} at {}",
            path.as_str()
        ));
    }
    if data.spec_type(path) != Some(sdf::SpecType::Prim) {
        return Ok(None);
    }
    let specifier = match field(data, path, "specifier")? {
        Some(sdf::Value::Specifier(sdf::Specifier::Over)) | Some(sdf::Value::Int(1)) => {
            Specifier::Over
        }
        Some(sdf::Value::Specifier(sdf::Specifier::Class)) | Some(sdf::Value::Int(2)) => {
            Specifier::Class
        }
        _ => Specifier::Def,
    };
    let type_name = match field(data, path, "typeName")? {
        Some(sdf::Value::Token(t)) => t.as_str().to_string(),
        Some(sdf::Value::String(s)) => s,
        _ => String::new(),
    };
    let mut attributes = Vec::new();
    let mut props = tokens(data, path, "propertyChildren")?;
    props.extend(tokens(data, path, "properties")?);
    let mut seen = HashSet::new();
    props.retain(|p| seen.insert(p.clone()));
    for prop in props {
        let Ok(p) = path.append_property(prop.as_str()) else {
            continue;
        };
        if let Some(a) = attribute(data, &p, prop)? {
            attributes.push(a);
        }
    }
    let mut kids = Vec::new();
    for child in children(data, path)? {
        let Ok(p) = sdf::Path::new(&format!("{}/{child}", path.as_str())) else {
            continue;
        };
        if let Some(c) = prim(data, &p, &child, depth + 1)? {
            kids.push(c);
        }
    }
    let mut metadata = fields(data, path, PRIM_STRUCTURE)?;
    for (field_name, key) in ARC_FIELDS {
        if field(data, path, field_name)?.is_some() && !metadata.iter().any(|(k, _)| k == key) {
            metadata.push((key.to_string(), Value::List(Vec::new())));
        }
    }
    Ok(Some(Prim {
        specifier,
        type_name,
        name: name.to_string(),
        metadata,
        attributes,
        children: kids,
        line: 0,
    }))
}

fn attribute(
    data: &dyn AbstractData,
    path: &sdf::Path,
    name: String,
) -> Result<Option<Attribute>, String> {
    match data.spec_type(path) {
        Some(sdf::SpecType::Relationship) => {
            let path_value = |p: &sdf::Path| Value::Path(p.as_str().to_string());
            let default = match field(data, path, "targetPaths")? {
                Some(sdf::Value::PathListOp(op)) => {
                    Some(Value::List(op.flatten().iter().map(path_value).collect()))
                }
                Some(sdf::Value::PathVec(v)) => {
                    Some(Value::List(v.iter().map(path_value).collect()))
                }
                _ => None,
            };
            Ok(Some(Attribute {
                name,
                type_name: "rel".to_string(),
                default,
                ..Attribute::default()
            }))
        }
        Some(sdf::SpecType::Attribute) => {
            let type_name = match field(data, path, "typeName")? {
                Some(sdf::Value::Token(t)) => t.as_str().to_string(),
                Some(sdf::Value::String(s)) => s,
                _ => String::new(),
            };
            let default = field(data, path, "default")?.as_ref().and_then(convert);
            let time_samples = match field(data, path, "timeSamples")? {
                Some(sdf::Value::TimeSamples(samples)) => Some(
                    samples
                        .iter()
                        .filter_map(|(t, v)| convert(v).map(|v| (*t, v)))
                        .collect(),
                ),
                _ => None,
            };
            Ok(Some(Attribute {
                name,
                type_name,
                default,
                time_samples,
                metadata: fields(data, path, ATTR_STRUCTURE)?,
            }))
        }
        _ => Ok(None),
    }
}

fn num(x: impl Into<f64>) -> Value {
    Value::Num(x.into())
}

fn tuple<const N: usize, T: Into<f64>>(a: [T; N]) -> Value {
    Value::Tuple(a.into_iter().map(num).collect())
}

fn list<T>(v: &[T], f: impl Fn(&T) -> Value) -> Value {
    Value::List(v.iter().map(f).collect())
}

/// A numeric array, its elements' components flattened ([`Value::Numbers`]).
fn numbers<T, const N: usize, X: Into<f64>>(v: &[T], f: impl Fn(&T) -> [X; N]) -> Value {
    Value::Numbers(v.iter().flat_map(|e| f(e).map(Into::into)).collect())
}

fn quat<T: Into<f64>>(w: T, x: T, y: T, z: T) -> Value {
    tuple([w, x, y, z])
}

fn matrix(m: &[f64], n: usize) -> Value {
    Value::Tuple(m.chunks(n).map(tuple_slice).collect())
}

fn tuple_slice(row: &[f64]) -> Value {
    Value::Tuple(row.iter().map(|&x| Value::Num(x)).collect())
}

/// The text-model value of a crate value (see the module doc); `None` if it has none.
pub(super) fn convert(v: &sdf::Value) -> Option<Value> {
    use sdf::Value as S;
    let bool_ident = |b: bool| Value::Ident(if b { "true" } else { "false" }.to_string());
    Some(match v {
        S::Bool(b) => bool_ident(*b),
        S::BoolVec(v) => list(v, |b| bool_ident(*b)),
        S::Uchar(x) => num(*x),
        S::UcharVec(v) => numbers(v, |x| [*x]),
        S::Int(x) => num(*x),
        S::IntVec(v) => numbers(v, |x| [*x]),
        S::Uint(x) => num(*x),
        S::UintVec(v) => numbers(v, |x| [*x]),
        S::Int64(x) => num(*x as f64),
        S::Int64Vec(v) => numbers(v, |x| [*x as f64]),
        S::Uint64(x) => num(*x as f64),
        S::Uint64Vec(v) => numbers(v, |x| [*x as f64]),
        S::Half(x) => num(*x),
        S::HalfVec(v) => numbers(v, |x| [*x]),
        S::Float(x) => num(*x),
        S::FloatVec(v) => numbers(v, |x| [*x]),
        S::Double(x) => num(*x),
        S::DoubleVec(v) => numbers(v, |x| [*x]),
        S::TimeCode(t) => num(t.0),
        S::TimeCodeVec(v) => numbers(v, |t| [t.0]),
        S::String(s) => Value::Str(s.clone()),
        S::StringVec(v) => list(v, |s| Value::Str(s.clone())),
        S::Token(t) => Value::Str(t.as_str().to_string()),
        S::TokenVec(v) => list(v, |t| Value::Str(t.as_str().to_string())),
        S::AssetPath(a) => Value::Asset(a.authored_path.clone()),
        S::AssetPathVec(v) => list(v, |a| Value::Asset(a.authored_path.clone())),
        S::Quath(q) => quat(q.w, q.x, q.y, q.z),
        S::Quatf(q) => quat(q.w, q.x, q.y, q.z),
        S::Quatd(q) => quat(q.w, q.x, q.y, q.z),
        S::QuathVec(v) => numbers(v, |q| [q.w, q.x, q.y, q.z]),
        S::QuatfVec(v) => numbers(v, |q| [q.w, q.x, q.y, q.z]),
        S::QuatdVec(v) => numbers(v, |q| [q.w, q.x, q.y, q.z]),
        S::Vec2h(a) => tuple([a.x, a.y]),
        S::Vec2f(a) => tuple([a.x, a.y]),
        S::Vec2d(a) => tuple([a.x, a.y]),
        S::Vec2i(a) => tuple([a.x, a.y]),
        S::Vec2hVec(v) => numbers(v, |a| [a.x, a.y]),
        S::Vec2fVec(v) => numbers(v, |a| [a.x, a.y]),
        S::Vec2dVec(v) => numbers(v, |a| [a.x, a.y]),
        S::Vec2iVec(v) => numbers(v, |a| [a.x, a.y]),
        S::Vec3h(a) => tuple([a.x, a.y, a.z]),
        S::Vec3f(a) => tuple([a.x, a.y, a.z]),
        S::Vec3d(a) => tuple([a.x, a.y, a.z]),
        S::Vec3i(a) => tuple([a.x, a.y, a.z]),
        S::Vec3hVec(v) => numbers(v, |a| [a.x, a.y, a.z]),
        S::Vec3fVec(v) => numbers(v, |a| [a.x, a.y, a.z]),
        S::Vec3dVec(v) => numbers(v, |a| [a.x, a.y, a.z]),
        S::Vec3iVec(v) => numbers(v, |a| [a.x, a.y, a.z]),
        S::Vec4h(a) => tuple([a.x, a.y, a.z, a.w]),
        S::Vec4f(a) => tuple([a.x, a.y, a.z, a.w]),
        S::Vec4d(a) => tuple([a.x, a.y, a.z, a.w]),
        S::Vec4i(a) => tuple([a.x, a.y, a.z, a.w]),
        S::Vec4hVec(v) => numbers(v, |a| [a.x, a.y, a.z, a.w]),
        S::Vec4fVec(v) => numbers(v, |a| [a.x, a.y, a.z, a.w]),
        S::Vec4dVec(v) => numbers(v, |a| [a.x, a.y, a.z, a.w]),
        S::Vec4iVec(v) => numbers(v, |a| [a.x, a.y, a.z, a.w]),
        S::Matrix2d(m) => matrix(&m.0, 2),
        S::Matrix3d(m) => matrix(&m.0, 3),
        S::Matrix4d(m) => matrix(&m.0, 4),
        S::Matrix2dVec(v) => list(v, |m| matrix(&m.0, 2)),
        S::Matrix3dVec(v) => list(v, |m| matrix(&m.0, 3)),
        S::Matrix4dVec(v) => list(v, |m| matrix(&m.0, 4)),
        S::Dictionary(d) => {
            let mut entries: Vec<(String, Value)> = d
                .iter()
                .filter_map(|(k, v)| convert(v).map(|v| (k.clone(), v)))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Dict(entries)
        }
        S::ValueBlock => Value::Ident("None".to_string()),
        S::Specifier(s) => Value::Ident(format!("{s:?}").to_lowercase()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_and_truncated_crates_are_errors_not_panics() {
        let mut bytes = b"PXR-USDC".to_vec();
        bytes.extend_from_slice(&[0, 8, 0, 0, 0, 0, 0, 0]);
        assert!(parse(&bytes).is_err());
        assert!(parse(b"PXR-USDC\x00\x00\x08\x00binary").is_err());
        let junk: Vec<u8> = (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect();
        let mut crate_junk = MAGIC.to_vec();
        crate_junk.extend_from_slice(&junk);
        assert!(parse(&crate_junk).is_err());
    }
}
