//! The AbcGeom schemas drape reads: `PolyMesh` and `SubD` (the `.geom` compound) and
//! `Xform` (the `.xform` compound), with their values at any time.
//!
//! * Mesh: `P` (float32 × 3 per point), `.faceCounts` and `.faceIndices` (int32), faces
//!   wound clockwise seen from the front (Alembic's convention, the reverse of drape's).
//!   A SubD is read as its control cage.
//! * Geometry parameters (`uv` in `.geom`; `pin`, `key_weight` in `.arbGeomParams`): an
//!   array property, or a compound of `.vals` and `.indices` (uint32) when indexed; the
//!   `geoScope` metadata says how values map to the mesh: `fvr` one per face corner, `vtx`
//!   or `var` one per point, `uni` one per face, `con` one; without it the scope follows
//!   from the count.
//! * Xform: `.ops` (one byte per op: type in the high 4 bits — 0 scale, 1 translate,
//!   2 rotate about an axis, 3 matrix, 4–6 rotate about X, Y, Z — hint in the low 4),
//!   `.vals` (float64 channels of the ops in order: 3, 3, 4 = axis and degrees, 16, 1) and
//!   `.inherits` (bool; false drops the parents' transforms). In column-vector form the
//!   local matrix is the product in op order (the last op applies first):
//!
//! ```text
//! M_local = Op₀ · Op₁ · … · Op_{n−1}        M_world = M_parent_world · M_local
//! matrix op: 16 channels row-major with the translation in the last row (row vectors),
//!            transposed into column form
//! ```
//! Values between samples: numbers are linear between the bracketing samples (arrays only
//! when both have the same length, else the earlier is held), held before the first and
//! after the last; `.inherits` takes the earlier sample.
use super::core::{Archive, Compound, Kind, PropertyHeader};
use crate::Vec2;
use nalgebra::{Matrix4, Rotation3, Unit, Vector3};

/// Most samples drape reads of one property (the glTF reader's frame budget).
pub const MAX_SAMPLES: u32 = crate::io::gltf::MAX_FRAMES as u32;

/// A scalar or array property of a compound and the times of its samples.
#[derive(Debug, Clone)]
pub struct Track {
    compound: Compound,
    k: usize,
    /// Sample times (s), ascending; empty when every sample is the same.
    pub times: Vec<f64>,
}

impl Track {
    /// The property `name` of `c`, with its times; `None` if absent or a compound.
    pub fn of(ar: &Archive, c: &Compound, name: &str) -> Result<Option<Track>, String> {
        let Some((k, h)) = c.find(name) else {
            return Ok(None);
        };
        if h.kind == Kind::Compound {
            return Ok(None);
        }
        Ok(Some(Track {
            compound: c.clone(),
            k,
            times: times_of(ar, h)?,
        }))
    }

    fn header(&self) -> &PropertyHeader {
        &self.compound.headers[self.k]
    }

    /// The property's metadata value of `key`.
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.header().meta.get(key)
    }

    /// Number of samples.
    pub fn samples(&self) -> u32 {
        self.header().samples
    }

    /// The numbers of sample `i`.
    pub fn sample(&self, ar: &Archive, i: u32) -> Result<Vec<f64>, String> {
        self.compound.numbers(ar, self.k, i)
    }

    /// The strings of sample `i`.
    pub fn strings(&self, ar: &Archive, i: u32) -> Result<Vec<String>, String> {
        self.compound.strings(ar, self.k, i)
    }

    /// The numbers at time `t` (see the module doc); empty if it has no samples.
    pub fn at(&self, ar: &Archive, t: f64) -> Result<Vec<f64>, String> {
        if self.samples() == 0 {
            return Ok(Vec::new());
        }
        let (i0, i1, s) = self.bracket(t);
        let a = self.sample(ar, i0)?;
        if s == 0.0 {
            return Ok(a);
        }
        let b = self.sample(ar, i1)?;
        if a.len() != b.len() {
            return Ok(a);
        }
        Ok(a.iter().zip(&b).map(|(x, y)| x + (y - x) * s).collect())
    }

    /// The sample at or before `t` and the one after, with the blend between them.
    pub fn bracket(&self, t: f64) -> (u32, u32, f64) {
        let n = self.times.len();
        if n < 2 || t <= self.times[0] {
            return (0, 0, 0.0);
        }
        if t >= self.times[n - 1] {
            let last = (n - 1) as u32;
            return (last, last, 0.0);
        }
        let k = self.times.partition_point(|&x| x <= t).clamp(1, n - 1);
        let (t0, t1) = (self.times[k - 1], self.times[k]);
        let s = if t1 > t0 { (t - t0) / (t1 - t0) } else { 0.0 };
        ((k - 1) as u32, k as u32, s)
    }
}

/// The times of every sample of `h`, or none when it is constant or has one sample.
fn times_of(ar: &Archive, h: &PropertyHeader) -> Result<Vec<f64>, String> {
    if h.is_constant() || h.samples < 2 {
        return Ok(Vec::new());
    }
    if h.samples > MAX_SAMPLES {
        return Err(format!(
            "property {} has {} samples, more than the {MAX_SAMPLES} drape reads",
            h.name, h.samples
        ));
    }
    let ts = ar.time_sampling(h);
    let mut times = Vec::with_capacity(h.samples as usize);
    for i in 0..h.samples {
        let t = ts
            .time(i)
            .ok_or_else(|| format!("property {} has more samples than times", h.name))?;
        if times.last().is_some_and(|&p: &f64| t <= p) || !t.is_finite() {
            return Err(format!(
                "property {}: its sample times do not increase",
                h.name
            ));
        }
        times.push(t);
    }
    Ok(times)
}

/// How a geometry parameter's values map to the mesh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One value.
    Constant,
    /// One per face.
    Uniform,
    /// One per point.
    Vertex,
    /// One per face corner.
    FaceVarying,
}

/// A geometry parameter: its values (and indices) at the first sample.
#[derive(Debug, Clone)]
pub struct GeomParam {
    /// Values, `width` numbers each, indices applied.
    pub values: Vec<f64>,
    /// Numbers per value.
    pub width: usize,
    /// Declared scope, if any.
    pub scope: Option<Scope>,
}

impl GeomParam {
    /// The parameter `name` of `c` with `width` numbers per value; `None` if absent.
    pub fn read(
        ar: &Archive,
        c: &Compound,
        name: &str,
        width: usize,
    ) -> Result<Option<GeomParam>, String> {
        let Some((_, h)) = c.find(name) else {
            return Ok(None);
        };
        let scope = h.meta.get("geoScope").map(|s| match s {
            "fvr" => Scope::FaceVarying,
            "vtx" | "var" => Scope::Vertex,
            "uni" => Scope::Uniform,
            _ => Scope::Constant,
        });
        let (raw, indices) = if h.kind == Kind::Compound {
            let inner = c.compound(ar, name)?.unwrap_or_default();
            let vals = Track::of(ar, &inner, ".vals")?
                .ok_or(format!("'{name}' has no .vals"))?
                .sample(ar, 0)?;
            let idx = match Track::of(ar, &inner, ".indices")? {
                Some(t) => Some(t.sample(ar, 0)?),
                None => None,
            };
            (vals, idx)
        } else {
            let t = Track::of(ar, c, name)?.ok_or(format!("'{name}' cannot be read"))?;
            (t.sample(ar, 0)?, None)
        };
        if raw.len() % width != 0 {
            return Err(format!(
                "'{name}' has {} numbers, not a multiple of {width}",
                raw.len()
            ));
        }
        let values = match indices {
            None => raw,
            Some(idx) => {
                let n = raw.len() / width;
                let mut out = Vec::with_capacity(idx.len().min(raw.len().max(1) * 64) * width);
                for (i, &k) in idx.iter().enumerate() {
                    let k = k as usize;
                    if k >= n {
                        return Err(format!("'{name}' index {i} = {k} is beyond its {n} values"));
                    }
                    out.extend_from_slice(&raw[k * width..(k + 1) * width]);
                }
                out
            }
        };
        Ok(Some(GeomParam {
            values,
            width,
            scope,
        }))
    }

    /// The value of face corner `c` of `topo`, with the scope checked against the counts.
    pub fn per_corner(&self, name: &str, topo: &Topology) -> Result<Vec<&[f64]>, String> {
        let count = self.values.len() / self.width;
        let scope = self
            .scope
            .unwrap_or(if count == topo.point_of_corner.len() {
                Scope::FaceVarying
            } else if count == topo.n_points {
                Scope::Vertex
            } else if count == topo.counts.len() {
                Scope::Uniform
            } else {
                Scope::Constant
            });
        let need = match scope {
            Scope::Constant => 1,
            Scope::Uniform => topo.counts.len(),
            Scope::Vertex => topo.n_points,
            Scope::FaceVarying => topo.point_of_corner.len(),
        };
        if count < need {
            return Err(format!(
                "'{name}' has {count} values but its scope needs {need}"
            ));
        }
        let mut face = 0;
        let mut left = topo.counts.first().copied().unwrap_or(0);
        let mut out = Vec::with_capacity(topo.point_of_corner.len());
        for (c, &p) in topo.point_of_corner.iter().enumerate() {
            while left == 0 && face + 1 < topo.counts.len() {
                face += 1;
                left = topo.counts[face];
            }
            left = left.saturating_sub(1);
            let e = match scope {
                Scope::Constant => 0,
                Scope::Uniform => face,
                Scope::Vertex => p,
                Scope::FaceVarying => c,
            };
            out.push(&self.values[e * self.width..(e + 1) * self.width]);
        }
        Ok(out)
    }
}

/// A mesh's faces as the file stores them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Topology {
    /// Corner count of each face.
    pub counts: Vec<usize>,
    /// Point of each face corner, face after face, clockwise (file order).
    pub point_of_corner: Vec<usize>,
    /// Number of points.
    pub n_points: usize,
}

/// A `PolyMesh` or `SubD` schema.
#[derive(Debug, Clone)]
pub struct MeshSchema {
    /// The `.geom` compound.
    pub geom: Compound,
    /// `P`.
    pub points: Track,
    counts: Track,
    indices: Track,
}

impl MeshSchema {
    /// The schema of an object's properties `props`.
    pub fn read(ar: &Archive, props: &Compound) -> Result<MeshSchema, String> {
        let geom = props
            .compound(ar, ".geom")?
            .ok_or("its .geom properties are missing")?;
        let need = |name: &str| -> Result<Track, String> {
            Track::of(ar, &geom, name)?.ok_or(format!("it has no {name}"))
        };
        Ok(MeshSchema {
            points: need("P")?,
            counts: need(".faceCounts")?,
            indices: need(".faceIndices")?,
            geom,
        })
    }

    /// Points (object space, file units) at time `t`.
    pub fn points_at(&self, ar: &Archive, t: f64) -> Result<Vec<[f64; 3]>, String> {
        let v = self.points.at(ar, t)?;
        if v.len() % 3 != 0 {
            return Err(format!("P has {} numbers, not a multiple of 3", v.len()));
        }
        if let Some(i) = v.iter().position(|x| !x.is_finite()) {
            return Err(format!("point {} is not finite (NaN or infinity)", i / 3));
        }
        Ok(v.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect())
    }

    /// The faces (the first sample; later samples must store the same), checked against
    /// `n_points`.
    pub fn topology(&self, ar: &Archive, n_points: usize) -> Result<Topology, String> {
        for track in [&self.counts, &self.indices] {
            for i in 1..track.samples().min(MAX_SAMPLES) {
                if track.times.is_empty() {
                    break;
                }
                if !self.same(ar, track, i)? {
                    return Err(format!(
                        "its faces change over time (sample {i} of {} differs from the first); \
                         drape needs the same faces at every frame",
                        track.header().name
                    ));
                }
            }
        }
        let ints = |t: &Track, what: &str| -> Result<Vec<usize>, String> {
            t.sample(ar, 0)?
                .iter()
                .enumerate()
                .map(|(i, &x)| {
                    (x >= 0.0 && x <= f64::from(i32::MAX))
                        .then_some(x as usize)
                        .ok_or(format!("{what}[{i}] = {x} is not a valid index or count"))
                })
                .collect()
        };
        let counts = ints(&self.counts, ".faceCounts")?;
        let indices = ints(&self.indices, ".faceIndices")?;
        let total = counts.iter().try_fold(0usize, |a, &c| a.checked_add(c));
        if total != Some(indices.len()) {
            return Err(format!(
                ".faceCounts add up to {} but .faceIndices has {} entries",
                total.map_or("too many".to_string(), |t| t.to_string()),
                indices.len()
            ));
        }
        if let Some((i, &p)) = indices.iter().enumerate().find(|(_, &p)| p >= n_points) {
            return Err(format!(
                ".faceIndices[{i}] = {p} is beyond the {n_points} points"
            ));
        }
        Ok(Topology {
            counts,
            point_of_corner: indices,
            n_points,
        })
    }

    fn same(&self, ar: &Archive, track: &Track, i: u32) -> Result<bool, String> {
        track.compound.same_sample(ar, track.k, 0, i)
    }

    /// UV of every face corner in file order (`None` without a `uv` parameter).
    pub fn uvs(&self, ar: &Archive, topo: &Topology) -> Result<Option<Vec<Vec2>>, String> {
        let Some(p) = GeomParam::read(ar, &self.geom, "uv", 2)? else {
            return Ok(None);
        };
        Ok(Some(
            p.per_corner("uv", topo)?
                .into_iter()
                .map(|v| Vec2::new(v[0], v[1]))
                .collect(),
        ))
    }

    /// A per-point weight from the `.arbGeomParams` parameter `name`; per-corner or
    /// per-face weights give each point its largest.
    pub fn point_weights(
        &self,
        ar: &Archive,
        name: &str,
        topo: &Topology,
    ) -> Result<Option<Vec<f64>>, String> {
        let Some(arb) = self.geom.compound(ar, ".arbGeomParams")? else {
            return Ok(None);
        };
        let Some(p) = GeomParam::read(ar, &arb, name, 1)? else {
            return Ok(None);
        };
        let mut w = vec![f64::NEG_INFINITY; topo.n_points];
        for (v, &pt) in p.per_corner(name, topo)?.iter().zip(&topo.point_of_corner) {
            w[pt] = w[pt].max(v[0]);
        }
        Ok(Some(
            w.into_iter()
                .map(|x| if x.is_finite() { x } else { 0.0 })
                .collect(),
        ))
    }
}

/// An `Xform` schema.
#[derive(Debug, Clone)]
pub struct XformSchema {
    /// The `.xform` compound.
    pub compound: Compound,
    ops: Vec<u8>,
    vals: Option<Track>,
    inherits: Option<Track>,
    /// `.inherits` is false at every sample: the parents never move it.
    pub resets: bool,
}

/// Channels of op code `op`.
fn channels(op: u8) -> Result<usize, String> {
    match op >> 4 {
        0 | 1 => Ok(3),
        2 => Ok(4),
        3 => Ok(16),
        4..=6 => Ok(1),
        k => Err(format!("transform op type {k} is not an Alembic op")),
    }
}

impl XformSchema {
    /// The schema of an object's properties `props`.
    pub fn read(ar: &Archive, props: &Compound) -> Result<XformSchema, String> {
        let compound = props
            .compound(ar, ".xform")?
            .ok_or("its .xform properties are missing")?;
        let ops = match Track::of(ar, &compound, ".ops")? {
            Some(t) if t.samples() > 0 => t.sample(ar, 0)?.iter().map(|&x| x as u8).collect(),
            _ => Vec::new(),
        };
        let mut n = 0;
        for &op in &ops {
            n += channels(op)?;
        }
        let vals = Track::of(ar, &compound, ".vals")?.filter(|t| t.samples() > 0);
        if let Some(v) = &vals {
            let got = v.sample(ar, 0)?.len();
            if got != n {
                return Err(format!(".vals has {got} numbers but its ops need {n}"));
            }
        }
        let inherits = Track::of(ar, &compound, ".inherits")?.filter(|t| t.samples() > 0);
        let resets = match &inherits {
            Some(t) if t.times.is_empty() => t.sample(ar, 0)?.first() == Some(&0.0),
            _ => false,
        };
        Ok(XformSchema {
            inherits,
            resets,
            compound,
            ops,
            vals,
        })
    }

    /// Sample times (s) of its animated values (empty when static).
    pub fn times(&self) -> Vec<f64> {
        let mut t: Vec<f64> = self
            .vals
            .iter()
            .chain(&self.inherits)
            .flat_map(|x| x.times.clone())
            .collect();
        t.sort_by(f64::total_cmp);
        t.dedup();
        t
    }

    /// The local matrix (column vectors) at `t` and whether it inherits its parents'.
    pub fn at(&self, ar: &Archive, t: f64) -> Result<(Matrix4<f64>, bool), String> {
        let inherits = match &self.inherits {
            Some(tr) => {
                let (i, _, _) = tr.bracket(t);
                tr.sample(ar, i)?.first().is_none_or(|&b| b != 0.0)
            }
            None => true,
        };
        let vals = match &self.vals {
            Some(v) => v.at(ar, t)?,
            None => Vec::new(),
        };
        let mut m = Matrix4::identity();
        let mut c = 0;
        for &op in &self.ops {
            let n = channels(op)?;
            let v: Vec<f64> = (c..c + n)
                .map(|k| vals.get(k).copied().unwrap_or(0.0))
                .collect();
            c += n;
            if let Some(x) = v.iter().find(|x| !x.is_finite()) {
                return Err(format!("a transform value is {x}"));
            }
            let deg = |a: f64| a.to_radians();
            let axis = |x, y, z, a: f64| -> Result<Matrix4<f64>, String> {
                let u = Unit::try_new(Vector3::new(x, y, z), 1e-300)
                    .ok_or("a rotation has a zero axis")?;
                Ok(Rotation3::from_axis_angle(&u, deg(a)).to_homogeneous())
            };
            let op_m = match op >> 4 {
                0 => Matrix4::new_nonuniform_scaling(&Vector3::new(v[0], v[1], v[2])),
                1 => Matrix4::new_translation(&Vector3::new(v[0], v[1], v[2])),
                2 => axis(v[0], v[1], v[2], v[3])?,
                3 => Matrix4::from_column_slice(&v),
                4 => axis(1.0, 0.0, 0.0, v[0])?,
                5 => axis(0.0, 1.0, 0.0, v[0])?,
                _ => axis(0.0, 0.0, 1.0, v[0])?,
            };
            m *= op_m;
        }
        Ok((m, inherits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_corner_maps_every_scope() {
        let topo = Topology {
            counts: vec![3, 4],
            point_of_corner: vec![0, 1, 2, 2, 1, 3, 4],
            n_points: 5,
        };
        let p = |values: Vec<f64>, scope| GeomParam {
            values,
            width: 1,
            scope,
        };
        let get = |g: GeomParam| -> Vec<f64> {
            g.per_corner("x", &topo)
                .unwrap()
                .iter()
                .map(|v| v[0])
                .collect()
        };
        assert_eq!(
            get(p(vec![7.0, 8.0], None)),
            vec![7.0, 7.0, 7.0, 8.0, 8.0, 8.0, 8.0]
        );
        assert_eq!(
            get(p(vec![0.0, 10.0, 20.0, 30.0, 40.0], Some(Scope::Vertex))),
            vec![0.0, 10.0, 20.0, 20.0, 10.0, 30.0, 40.0]
        );
        assert_eq!(
            get(p((0..7).map(f64::from).collect(), None)),
            (0..7).map(f64::from).collect::<Vec<_>>()
        );
        assert!(p(vec![1.0; 3], Some(Scope::FaceVarying))
            .per_corner("x", &topo)
            .is_err());
    }
}
