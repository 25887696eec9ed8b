//! The JSON layout of Houdini geometry (`.geo`, SideFX "JSON geometry format"), decoded
//! into points, vertices and polygons.
//!
//! A file is a flat key/value array:
//! `["fileversion", "20.0", "pointcount", N, "vertexcount", V, "primitivecount", P,
//!   "topology", ["pointref", ["indices", [point of each vertex ...]]],
//!   "attributes", ["pointattributes", [...], "vertexattributes", [...], "globalattributes", [...]],
//!   "primitives", [[definition, data], ...]]`.
//! Read here:
//! * attributes `[[..., "name", N, "type", "numeric"|"string", ...], [..., "size", k,
//!   "values", [..., "tuples" | "arrays" | "rawpagedata" ...]]]`; paged data with
//!   `pagesize`, `packing` and `constantpageflags` is expanded;
//! * primitives `Polygon_run` (`p_r`; `startvertex`, `nprimitives`, `nvertices_rle`
//!   as (count, repeat) pairs, or `nvertices`), `Poly` (`vertex` list; open ones are
//!   skipped), and `run` with `runtype` `Poly` (`varyingfields` holding `vertex`).
//!   Curves and other primitive types carry no faces and are skipped.
use serde_json::Value;

/// Geometry decoded from one file, in Houdini's own winding.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Geo {
    /// `P` of every point.
    pub points: Vec<[f64; 3]>,
    /// Point of every vertex (`topology.pointref.indices`).
    pub point_of_vertex: Vec<usize>,
    /// Closed polygons as vertex numbers, in file order and winding.
    pub polygons: Vec<Vec<usize>>,
    /// Vertex attribute `uv` (first two components), if present.
    pub vertex_uv: Option<Vec<[f64; 2]>>,
    /// Point attribute `uv`, if present (used when there is no vertex `uv`).
    pub point_uv: Option<Vec<[f64; 2]>>,
    /// Point attribute `pin`, if present.
    pub pin: Option<Vec<f64>>,
    /// Point attribute `key_weight`, if present.
    pub key_weight: Option<Vec<f64>>,
    /// Detail (global) string attribute `drape_role`, if present.
    pub role: Option<String>,
}

/// A key/value array as pairs.
struct Map<'a>(Vec<(&'a str, &'a Value)>);

impl<'a> Map<'a> {
    fn new(v: &'a Value, what: &str) -> Result<Map<'a>, String> {
        let arr = v
            .as_array()
            .ok_or_else(|| format!("{what} is not a key/value array"))?;
        if arr.len() % 2 != 0 {
            return Err(format!("{what} has an odd number of entries"));
        }
        let mut out = Vec::with_capacity(arr.len() / 2);
        for pair in arr.chunks_exact(2) {
            let key = pair[0]
                .as_str()
                .ok_or_else(|| format!("{what} has a key that is not a string"))?;
            out.push((key, &pair[1]));
        }
        Ok(Map(out))
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    fn count(&self, key: &str) -> Result<usize, String> {
        match self.get(key) {
            None => Ok(0),
            Some(v) => as_index(v).ok_or_else(|| format!("{key} is not a non-negative integer")),
        }
    }
}

/// Largest element count or index accepted (2²⁴ ≈ 16.7 million): bounds the memory a
/// hostile file can make the reader allocate.
const MAX_COUNT: u64 = 1 << 24;

fn as_index(v: &Value) -> Option<usize> {
    match v.as_u64() {
        Some(n) if n < MAX_COUNT => Some(n as usize),
        _ => v
            .as_f64()
            .filter(|x| x.fract() == 0.0 && *x >= 0.0 && *x < MAX_COUNT as f64)
            .map(|x| x as usize),
    }
}

fn array<'a>(v: Option<&'a Value>, what: &str) -> Result<&'a Vec<Value>, String> {
    v.and_then(Value::as_array)
        .ok_or_else(|| format!("{what} is missing or not an array"))
}

fn number(v: &Value, what: &str) -> Result<f64, String> {
    match v {
        Value::Bool(b) => Ok(f64::from(u8::from(*b))),
        _ => v
            .as_f64()
            .ok_or_else(|| format!("{what} holds a value that is not a number")),
    }
}

/// Decodes the text of a `.geo` file.
pub fn parse(text: &str) -> Result<Geo, String> {
    let root: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
    let top = Map::new(&root, "the file").map_err(|_| {
        "not Houdini JSON geometry (expected a [\"fileversion\", ..., \"pointcount\", ...] array)"
            .to_string()
    })?;
    if top.get("pointcount").is_none() {
        return Err("not Houdini JSON geometry (no \"pointcount\")".into());
    }
    let n_points = top.count("pointcount")?;
    let n_vertices = top.count("vertexcount")?;
    let mut geo = Geo::default();
    if let Some(t) = top.get("topology") {
        let topo = Map::new(t, "topology")?;
        let pointref = Map::new(
            topo.get("pointref").ok_or("topology has no pointref")?,
            "topology.pointref",
        )?;
        let indices = array(pointref.get("indices"), "topology.pointref.indices")?;
        if indices.len() != n_vertices {
            return Err(format!(
                "topology has {} vertices but vertexcount is {n_vertices}",
                indices.len()
            ));
        }
        for (i, v) in indices.iter().enumerate() {
            match as_index(v) {
                Some(p) if p < n_points => geo.point_of_vertex.push(p),
                _ => {
                    return Err(format!(
                        "vertex {i} refers to point {v}, beyond the {n_points} points"
                    ))
                }
            }
        }
    } else if n_vertices != 0 {
        return Err("has vertices but no topology".into());
    }
    if let Some(a) = top.get("attributes") {
        read_attributes(&Map::new(a, "attributes")?, n_points, n_vertices, &mut geo)?;
    }
    let p = geo.points.len();
    if p != n_points {
        return Err(format!("has {n_points} points but no P attribute for them"));
    }
    if let Some(prims) = top.get("primitives") {
        let prims = prims.as_array().ok_or("primitives is not an array")?;
        for (k, prim) in prims.iter().enumerate() {
            read_primitive(prim, n_vertices, &mut geo.polygons)
                .map_err(|e| format!("primitive record {k}: {e}"))?;
        }
    }
    Ok(geo)
}

fn read_attributes(
    attrs: &Map,
    n_points: usize,
    n_vertices: usize,
    geo: &mut Geo,
) -> Result<(), String> {
    let list = |key: &str| {
        attrs
            .get(key)
            .and_then(Value::as_array)
            .map(|v| v.as_slice())
            .unwrap_or(&[])
    };
    for attr in list("pointattributes") {
        let (name, def, data) = split_attribute(attr)?;
        match name {
            "P" => {
                geo.points = numeric(&def, &data, n_points, "P")?
                    .chunks_exact(3)
                    .map(|c| [c[0], c[1], c[2]])
                    .collect();
                if geo.points.len() != n_points {
                    return Err("P must have 3 components".into());
                }
            }
            "uv" => geo.point_uv = Some(pairs(numeric(&def, &data, n_points, "uv")?, n_points)?),
            "pin" => {
                geo.pin = Some(first_component(
                    numeric(&def, &data, n_points, "pin")?,
                    n_points,
                ))
            }
            "key_weight" => {
                let w = numeric(&def, &data, n_points, "key_weight")?;
                geo.key_weight = Some(first_component(w, n_points));
            }
            _ => {}
        }
    }
    for attr in list("vertexattributes") {
        let (name, def, data) = split_attribute(attr)?;
        if name == "uv" {
            geo.vertex_uv = Some(pairs(numeric(&def, &data, n_vertices, "uv")?, n_vertices)?);
        }
    }
    for attr in list("globalattributes") {
        let (name, def, data) = split_attribute(attr)?;
        if name == "drape_role" && def.get("type").and_then(Value::as_str) == Some("string") {
            geo.role = data
                .get("strings")
                .and_then(Value::as_array)
                .and_then(|s| s.first())
                .and_then(Value::as_str)
                .map(str::to_string);
        }
    }
    Ok(())
}

fn split_attribute(attr: &Value) -> Result<(&str, Map<'_>, Map<'_>), String> {
    let parts = attr
        .as_array()
        .filter(|a| a.len() == 2)
        .ok_or("an attribute is not a [definition, data] pair")?;
    let def = Map::new(&parts[0], "an attribute definition")?;
    let data = Map::new(&parts[1], "an attribute's data")?;
    let name = def
        .get("name")
        .and_then(Value::as_str)
        .ok_or("an attribute has no name")?;
    Ok((name, def, data))
}

fn pairs(values: Vec<f64>, n: usize) -> Result<Vec<[f64; 2]>, String> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let width = values.len() / n;
    if width < 2 {
        return Err("uv needs at least 2 components".into());
    }
    Ok(values.chunks_exact(width).map(|c| [c[0], c[1]]).collect())
}

fn first_component(values: Vec<f64>, n: usize) -> Vec<f64> {
    let width = values.len().checked_div(n).unwrap_or(1).max(1);
    values.chunks_exact(width).map(|c| c[0]).collect()
}

/// The values of a numeric attribute as `count × size` numbers (element-major).
fn numeric(def: &Map, data: &Map, count: usize, name: &str) -> Result<Vec<f64>, String> {
    if def.get("type").and_then(Value::as_str) != Some("numeric") {
        return Err(format!("attribute {name} is not numeric"));
    }
    let size = data.count("size")?;
    if size == 0 || size > 4 {
        return Err(format!("attribute {name} has tuple size {size}"));
    }
    let values = Map::new(
        data.get("values")
            .ok_or(format!("attribute {name} has no values"))?,
        name,
    )?;
    let what = format!("attribute {name}");
    let mut out = Vec::new();
    if let Some(tuples) = values.get("tuples") {
        let tuples = array(Some(tuples), &what)?;
        if tuples.len() != count {
            return Err(format!(
                "{what} has {} tuples for {count} elements",
                tuples.len()
            ));
        }
        out.reserve(count * size);
        for t in tuples {
            let t = t
                .as_array()
                .filter(|t| t.len() == size)
                .ok_or(format!("{what} has a tuple of the wrong size"))?;
            for x in t {
                out.push(number(x, &what)?);
            }
        }
    } else if let Some(arrays) = values.get("arrays") {
        let arrays = array(Some(arrays), &what)?;
        if arrays.len() != size {
            return Err(format!(
                "{what} has {} component arrays for size {size}",
                arrays.len()
            ));
        }
        if arrays
            .iter()
            .any(|a| a.as_array().map(Vec::len) != Some(count))
        {
            return Err(format!("{what}: a component array has the wrong length"));
        }
        out.resize(count * size, 0.0);
        for (c, comp) in arrays.iter().enumerate() {
            let comp = comp.as_array().map(Vec::as_slice).unwrap_or(&[]);
            for (e, x) in comp.iter().enumerate() {
                out[e * size + c] = number(x, &what)?;
            }
        }
    } else if let Some(raw) = values.get("rawpagedata") {
        out = paged(&values, array(Some(raw), &what)?, count, size)
            .map_err(|e| format!("{what}: {e}"))?;
    } else {
        return Err(format!("{what} has no tuples, arrays or rawpagedata"));
    }
    Ok(out)
}

/// Expands `rawpagedata`: elements in pages of `pagesize`; within a page the components
/// are stored pack by pack (`packing`, e.g. `[3]` or `[1, 1, 1]`), a pack flagged constant
/// for the page storing one tuple for the whole page.
fn paged(values: &Map, raw: &[Value], count: usize, size: usize) -> Result<Vec<f64>, String> {
    let page_size = values.count("pagesize")?;
    if page_size == 0 {
        return Err("pagesize must be positive".into());
    }
    let packing: Vec<usize> = match values.get("packing") {
        Some(p) => array(Some(p), "packing")?
            .iter()
            .map(|v| as_index(v).ok_or("packing holds a bad value"))
            .collect::<Result<_, _>>()?,
        None => vec![size],
    };
    if packing.iter().sum::<usize>() != size || packing.contains(&0) {
        return Err(format!(
            "packing {packing:?} does not add up to tuple size {size}"
        ));
    }
    let flags: Vec<Vec<bool>> = match values.get("constantpageflags") {
        Some(f) => array(Some(f), "constantpageflags")?
            .iter()
            .map(|p| {
                p.as_array()
                    .map(|a| {
                        a.iter()
                            .map(|b| b.as_bool().unwrap_or(false) || b.as_i64() == Some(1))
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .collect(),
        None => Vec::new(),
    };
    let mut out = vec![0.0; count * size];
    let mut pos = 0usize;
    let mut page = 0usize;
    let mut done = 0usize;
    while done < count {
        let n = page_size.min(count - done);
        let mut comp = 0usize;
        for (k, &pack) in packing.iter().enumerate() {
            let constant = flags
                .get(k)
                .and_then(|f| f.get(page))
                .copied()
                .unwrap_or(false);
            for i in 0..n {
                let src = if constant { pos } else { pos + i * pack };
                for c in 0..pack {
                    let v = raw
                        .get(src + c)
                        .ok_or("rawpagedata is shorter than its pages")?;
                    out[(done + i) * size + comp + c] = number(v, "rawpagedata")?;
                }
            }
            comp += pack;
            pos += if constant { pack } else { n * pack };
        }
        done += n;
        page += 1;
    }
    Ok(out)
}

fn read_primitive(
    prim: &Value,
    n_vertices: usize,
    out: &mut Vec<Vec<usize>>,
) -> Result<(), String> {
    let parts = prim
        .as_array()
        .filter(|a| a.len() == 2)
        .ok_or("not a [definition, data] pair")?;
    let def = Map::new(&parts[0], "the definition")?;
    let ty = def.get("type").and_then(Value::as_str).ok_or("no type")?;
    let check = |v: usize| {
        if v < n_vertices {
            Ok(v)
        } else {
            Err(format!("vertex {v} is beyond the {n_vertices} vertices"))
        }
    };
    match ty {
        "Polygon_run" | "p_r" => {
            let data = Map::new(&parts[1], "the polygon run")?;
            let key = |long: &str, short: &str| data.get(long).or_else(|| data.get(short));
            let start = key("startvertex", "s_v")
                .and_then(as_index)
                .ok_or("startvertex is missing")?;
            let nprims = key("nprimitives", "n_p")
                .and_then(as_index)
                .ok_or("nprimitives is missing")?;
            let sizes: Vec<usize> = if let Some(rle) = key("nvertices_rle", "r_v") {
                let rle = array(Some(rle), "nvertices_rle")?;
                if rle.len() % 2 != 0 {
                    return Err("nvertices_rle has an odd length".into());
                }
                let mut s = Vec::new();
                for pair in rle.chunks_exact(2) {
                    let (n, k) = (as_index(&pair[0]), as_index(&pair[1]));
                    let (Some(n), Some(k)) = (n, k) else {
                        return Err("nvertices_rle holds a bad value".into());
                    };
                    if s.len() + k > nprims {
                        return Err("nvertices_rle lists more polygons than nprimitives".into());
                    }
                    s.extend(std::iter::repeat_n(n, k));
                }
                s
            } else {
                let nv = array(key("nvertices", "n_v"), "nvertices")?;
                nv.iter()
                    .map(|v| as_index(v).ok_or("nvertices holds a bad value".to_string()))
                    .collect::<Result<_, _>>()?
            };
            if sizes.len() != nprims {
                return Err(format!(
                    "lists {} polygon sizes for nprimitives {nprims}",
                    sizes.len()
                ));
            }
            let mut v = start;
            for n in sizes {
                let end = v
                    .checked_add(n)
                    .filter(|&e| e <= n_vertices)
                    .ok_or("polygons run past the vertex count")?;
                out.push((v..end).collect());
                v = end;
            }
        }
        "Poly" => {
            let data = Map::new(&parts[1], "the polygon")?;
            let closed = data.get("closed").and_then(Value::as_bool).unwrap_or(true);
            let verts = array(data.get("vertex"), "vertex")?;
            let poly = verts
                .iter()
                .map(|v| {
                    as_index(v)
                        .ok_or("bad vertex number".to_string())
                        .and_then(check)
                })
                .collect::<Result<Vec<_>, _>>()?;
            if closed {
                out.push(poly);
            }
        }
        "run" if def.get("runtype").and_then(Value::as_str) == Some("Poly") => {
            let fields = array(def.get("varyingfields"), "varyingfields")?;
            let vi = fields
                .iter()
                .position(|f| f.as_str() == Some("vertex"))
                .ok_or("varyingfields has no vertex")?;
            let ci = fields.iter().position(|f| f.as_str() == Some("closed"));
            let uniform_closed = def
                .get("uniformfields")
                .and_then(|u| u.get("closed"))
                .and_then(Value::as_bool)
                .unwrap_or(true);
            for entry in parts[1].as_array().ok_or("run data is not an array")? {
                let entry = entry.as_array().ok_or("a run entry is not an array")?;
                let verts = array(entry.get(vi), "a run entry's vertex list")?;
                let closed = ci
                    .and_then(|c| entry.get(c))
                    .and_then(Value::as_bool)
                    .unwrap_or(uniform_closed);
                let poly = verts
                    .iter()
                    .map(|v| {
                        as_index(v)
                            .ok_or("bad vertex number".to_string())
                            .and_then(check)
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                if closed {
                    out.push(poly);
                }
            }
        }
        _ => {}
    }
    Ok(())
}
