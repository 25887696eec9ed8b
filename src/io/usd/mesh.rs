//! A `UsdGeomMesh` prim: points, polygons triangulated as fans, per-corner UVs from a
//! `texCoord2f[]` primvar and per-point pin weights.
//!
//! * Faces: `faceVertexCounts` (n ≥ 3; smaller faces are skipped) over
//!   `faceVertexIndices`; face `f` with corners `c₀ … c_{n−1}` gives the triangles
//!   `(c₀, c_k, c_{k+1})`, `k = 1 … n−2`. `orientation = "leftHanded"` reverses them.
//! * UVs: `primvars:st`, else `primvars:UVMap` (Blender), else the first `texCoord2f[]`
//!   primvar. Interpolation `faceVarying` (one per corner), `vertex`/`varying` (one per
//!   point), `uniform` (one per face) or `constant`; without the metadata it is inferred
//!   from the count. `primvars:<name>:indices` indexes the values.
//! * Pins: `primvars:pin`, per point; per-corner or per-face weights give each point the
//!   largest weight of its corners.
use super::layer::{Attribute, Prim, Value};
use super::xform::{numbers_at, Blend};
use crate::Vec2;

/// Polygons of a mesh triangulated.
#[derive(Debug, Clone, Default)]
pub struct Topology {
    /// Triangles as point indices.
    pub triangles: Vec<[usize; 3]>,
    /// For each triangle corner, its face-vertex (corner) index.
    pub corners: Vec<[usize; 3]>,
    /// For each triangle, its face.
    pub face_of_triangle: Vec<usize>,
    /// Number of face-vertices (`faceVertexIndices` length).
    pub n_corners: usize,
    /// Number of faces.
    pub n_faces: usize,
    /// Point index of each face-vertex.
    pub point_of_corner: Vec<usize>,
    /// Face of each face-vertex.
    pub face_of_corner: Vec<usize>,
    /// Polygons with at least 3 corners as face-vertex indices, counter-clockwise.
    pub polygons: Vec<Vec<usize>>,
}

/// Largest count or index accepted (2³¹ − 1, USD's `int`).
const MAX_INT: f64 = i32::MAX as f64;

/// Non-negative integers of `attr` at `t` (empty if it has no value).
pub fn ints_at(attr: Option<&Attribute>, t: f64, what: &str) -> Result<Vec<usize>, String> {
    let Some(attr) = attr else {
        return Ok(Vec::new());
    };
    let v = numbers_at(attr, t, Blend::Linear)?.unwrap_or_default();
    v.iter()
        .enumerate()
        .map(|(i, &x)| {
            if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x <= MAX_INT {
                Ok(x as usize)
            } else {
                Err(format!("{what}[{i}] = {x} is not a valid index or count"))
            }
        })
        .collect()
}

/// Triangulates the mesh's faces at time `t`; `n_points` bounds the indices.
pub fn topology(prim: &Prim, t: f64, n_points: usize) -> Result<Topology, String> {
    let counts = ints_at(prim.attribute("faceVertexCounts"), t, "faceVertexCounts")?;
    let indices = ints_at(prim.attribute("faceVertexIndices"), t, "faceVertexIndices")?;
    let total = counts.iter().try_fold(0usize, |a, &c| a.checked_add(c));
    if total != Some(indices.len()) {
        return Err(format!(
            "faceVertexCounts add up to {} but faceVertexIndices has {} entries",
            total.map_or("too many".to_string(), |t| t.to_string()),
            indices.len()
        ));
    }
    if let Some((i, &p)) = indices.iter().enumerate().find(|(_, &p)| p >= n_points) {
        return Err(format!(
            "faceVertexIndices[{i}] = {p} is beyond the {n_points} points"
        ));
    }
    let left = prim
        .attribute("orientation")
        .and_then(|a| a.default.as_ref())
        .and_then(Value::as_str)
        == Some("leftHanded");
    let mut topo = Topology {
        n_corners: indices.len(),
        n_faces: counts.len(),
        point_of_corner: indices.clone(),
        ..Topology::default()
    };
    let mut base = 0;
    for (f, &n) in counts.iter().enumerate() {
        topo.face_of_corner.extend(std::iter::repeat_n(f, n));
        if n >= 3 {
            let mut poly: Vec<usize> = (base..base + n).collect();
            if left {
                poly[1..].reverse();
            }
            topo.polygons.push(poly);
        }
        for k in 1..n.saturating_sub(1) {
            let mut c = [base, base + k, base + k + 1];
            if left {
                c.swap(1, 2);
            }
            topo.triangles.push(c.map(|c| indices[c]));
            topo.corners.push(c);
            topo.face_of_triangle.push(f);
        }
        base += n;
    }
    Ok(topo)
}

/// How a primvar's values map to the mesh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interp {
    Constant,
    Uniform,
    Vertex,
    FaceVarying,
}

/// A primvar resolved at time `t`: `width` numbers per element, indices applied.
struct Primvar {
    interp: Interp,
    values: Vec<f64>,
    width: usize,
}

impl Primvar {
    fn read(
        prim: &Prim,
        attr: &Attribute,
        t: f64,
        width: usize,
        topo: &Topology,
        n_points: usize,
    ) -> Result<Primvar, String> {
        let name = &attr.name;
        let raw =
            numbers_at(attr, t, Blend::Linear)?.ok_or_else(|| format!("'{name}' has no value"))?;
        if raw.len() % width != 0 {
            return Err(format!(
                "'{name}' has {} numbers, not a multiple of {width}",
                raw.len()
            ));
        }
        let indices_attr = prim
            .attribute(&format!("{name}:indices"))
            .filter(|a| !is_blocked(a));
        let values = match indices_attr {
            Some(_) => {
                let idx = ints_at(indices_attr, t, &format!("{name}:indices"))?;
                let n = raw.len() / width;
                let mut out = Vec::with_capacity(idx.len() * width);
                for (i, &k) in idx.iter().enumerate() {
                    if k >= n {
                        return Err(format!(
                            "{name}:indices[{i}] = {k} is beyond the {n} values"
                        ));
                    }
                    out.extend_from_slice(&raw[k * width..(k + 1) * width]);
                }
                out
            }
            None => raw,
        };
        let count = values.len() / width;
        let declared = attr.meta("interpolation").and_then(Value::as_str);
        let interp = match declared {
            Some("faceVarying") => Interp::FaceVarying,
            Some("vertex") | Some("varying") => Interp::Vertex,
            Some("uniform") => Interp::Uniform,
            Some("constant") => Interp::Constant,
            Some(other) => return Err(format!("'{name}' has unknown interpolation '{other}'")),
            None if count == topo.n_corners => Interp::FaceVarying,
            None if count == n_points => Interp::Vertex,
            None if count == topo.n_faces => Interp::Uniform,
            None => Interp::Constant,
        };
        let want = match interp {
            Interp::Constant => 1,
            Interp::Uniform => topo.n_faces,
            Interp::Vertex => n_points,
            Interp::FaceVarying => topo.n_corners,
        };
        if count < want {
            return Err(format!(
                "'{name}' has {count} values but its interpolation needs {want}; export it again"
            ));
        }
        Ok(Primvar {
            interp,
            values,
            width,
        })
    }

    /// Element index of face-vertex `c`.
    fn element(&self, topo: &Topology, c: usize) -> usize {
        match self.interp {
            Interp::Constant => 0,
            Interp::Uniform => topo.face_of_corner[c],
            Interp::Vertex => topo.point_of_corner[c],
            Interp::FaceVarying => c,
        }
    }

    fn get(&self, e: usize) -> &[f64] {
        &self.values[e * self.width..(e + 1) * self.width]
    }
}

/// The UV primvar: `primvars:st`, `primvars:UVMap`, else the first `texCoord2f[]` one.
pub fn uv_attribute(prim: &Prim) -> Option<&Attribute> {
    prim.attribute("primvars:st")
        .or_else(|| prim.attribute("primvars:UVMap"))
        .or_else(|| {
            prim.attributes.iter().find(|a| {
                a.name.starts_with("primvars:")
                    && !a.name.ends_with(":indices")
                    && a.type_name.starts_with("texCoord2")
            })
        })
}

/// True if `attr` has no value: no time samples and no default or a blocked one (`None`),
/// as exporters write `int[] primvars:st:indices = None` for a primvar that is not indexed.
fn is_blocked(attr: &Attribute) -> bool {
    attr.time_samples.is_none()
        && match &attr.default {
            None => true,
            Some(Value::Ident(s)) => s == "None",
            Some(_) => false,
        }
}

/// UV of every face-vertex (`None` if the mesh has no UV primvar).
pub fn uvs_per_corner(
    prim: &Prim,
    t: f64,
    topo: &Topology,
    n_points: usize,
) -> Result<Option<Vec<Vec2>>, String> {
    let Some(attr) = uv_attribute(prim) else {
        return Ok(None);
    };
    let pv = Primvar::read(prim, attr, t, 2, topo, n_points)?;
    Ok(Some(
        (0..topo.n_corners)
            .map(|c| {
                let v = pv.get(pv.element(topo, c));
                Vec2::new(v[0], v[1])
            })
            .collect(),
    ))
}

/// A per-point weight from the primvar `name` (`primvars:pin`, `primvars:key_weight`);
/// `None` if absent. Per-corner or per-face values give each point its largest.
pub fn point_weights(
    prim: &Prim,
    name: &str,
    t: f64,
    topo: &Topology,
    n_points: usize,
) -> Result<Option<Vec<f64>>, String> {
    let Some(attr) = prim.attribute(name) else {
        return Ok(None);
    };
    let pv = Primvar::read(prim, attr, t, 1, topo, n_points)?;
    Ok(Some(match pv.interp {
        Interp::Constant => vec![pv.values[0]; n_points],
        Interp::Vertex => pv.values[..n_points].to_vec(),
        Interp::FaceVarying | Interp::Uniform => {
            let mut w = vec![0.0f64; n_points];
            for (c, &p) in topo.point_of_corner.iter().enumerate() {
                w[p] = w[p].max(pv.get(pv.element(topo, c))[0]);
            }
            w
        }
    }))
}
